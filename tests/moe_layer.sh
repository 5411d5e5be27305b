#!/usr/bin/env bash
# moe_layer.sh - scenario test of the moe_layer workload on a machine without GPUs:
# `cuco workloads` lists it with its shape rules; every shipped variant realises
# through share/realize/moe_layer.cu.in; directives the template does not realise
# stop at its #error with the reason; the fast path turns both host baselines (the
# padded ncclAlltoAll and the grouped ncclSend/ncclRecv) into seeds; `cuco bench
# moe_layer --compile-only` compiles the workload, every manifest program, the seed,
# the send/recv seed and a realised stream-overlap program; shapes against the rules
# and rank counts the manifest does not list are refused before anything compiles.
#
#   bash tests/moe_layer.sh <path-to-cuco>      (CUCO_HOME: the source tree; needs nvcc)
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/moe_layer.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-moe.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null 2>&1 || NVCC=/usr/local/cuda/bin/nvcc
cd "$TMP" || exit 2

pass=0
fail=0
out=

failed() {
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
}

# check NAME WANT [TEXT...] -- CMD...: CMD's exit status must be WANT (or "nonzero")
# and each TEXT must appear in its output.
check() {
	local name=$1 want=$2 rc
	shift 2
	local texts=()
	while [ "$1" != "--" ]; do
		texts+=("$1")
		shift
	done
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ "$want" = nonzero ] && [ $rc -eq 0 ] || [ "$want" != nonzero ] && [ $rc -ne "$want" ]; then
		failed "$name" "exit $rc, want $want"
		return 1
	fi
	for t in "${texts[@]}"; do
		if ! printf '%s\n' "$out" | grep -qF -- "$t"; then
			failed "$name" "missing: $t"
			return 1
		fi
	done
	pass=$((pass + 1))
	return 0
}

# ---- listing -----------------------------------------------------------------
check "workloads lists moe_layer" 0 "moe_layer" "cuco_3to1" "ep8_decode" "H >= 64, multiple of 64" -- \
	"$CUCO" workloads

# ---- every shipped variant realises ---------------------------------------------
n=0
for f in "$CUCO_HOME"/workloads/moe_layer/variants/*.json; do
	v=$(basename "$f" .json)
	if check "realize $v" 0 -- "$CUCO" realize moe_layer --directive-file "$f" -o "$TMP/$v.cu"; then
		n=$((n + 1))
		grep -q '^// cuco-directive: ' "$TMP/$v.cu" && ! grep -q '{{' "$TMP/$v.cu" ||
			failed "realize $v" "placeholder left or no directive line"
	fi
done
[ "$n" -ge 6 ] || failed "variants" "only $n realised"

# ---- directives the template does not realise: realize refuses them (its
# cuco-realizes line), and a program edited to one anyway stops at the #error
refused() { # PLACEMENT
	printf '{"backend":"lsa","placement":"%s",%s}\n' "$1" "$D" >"$TMP/$1.json"
	check "realize refuses $1" nonzero "\"$1\" is not a placement; expected one of sequential, stream_overlap" -- \
		"$CUCO" realize moe_layer --directive-file "$TMP/$1.json" -o "$TMP/$1.cu"
	sed "s/^#define CUCO_PLACEMENT CUCO_PLACEMENT_stream_overlap/#define CUCO_PLACEMENT CUCO_PLACEMENT_$1/" \
		"$TMP/stream_overlap_lsa.cu" >"$TMP/$1-edited.cu"
	check "$1 stops at #error" nonzero "$1" "is not realised" -- \
		"$NVCC" -E -std=c++17 -I"$CUCO_HOME/include" -I"$CUCO_HOME/device/include" "$TMP/$1-edited.cu" -o /dev/null
}
D='"sync_scope":"grid","issuer":"cta","granularity":"tile","knobs":{"comm_ctas":32,"threads":512}'
refused fused_consumer
refused fused_producer
refused specialized

# ---- the fast path takes both host baselines ------------------------------------
check "fastpath moe_layer (padded all-to-all)" 0 "ncclAlltoAll -> cuco_seed_alltoall" "seed written to" -- \
	"$CUCO" fastpath moe_layer -o "$TMP/seed.cu" --no-compile
cp "$CUCO_HOME/workloads/moe_layer/common.cuh" "$TMP/" # the seed keeps host_sendrecv.cu's include
check "fastpath host_sendrecv.cu (send/recv groups)" 0 "ncclSend -> cuco_seed_send" "ncclGroupEnd -> cuco_seed_group_end" -- \
	"$CUCO" fastpath "$CUCO_HOME/workloads/moe_layer/host_sendrecv.cu" -o "$TMP/seed_sendrecv.cu" --no-compile

# ---- refused before anything compiles -------------------------------------------
check "shape against the rules" nonzero "multiple of 64" -- \
	"$CUCO" bench moe_layer --shape T=4096,H=7000,I=2048,EL=1,topk=1,experts=2,zipf=1,hot=3072 --compile-only --store "$TMP/r.db"
check "ranks not in the manifest" nonzero "moe_layer runs on 2, 4 or 8 ranks" -- \
	"$CUCO" bench moe_layer --ranks 3 --compile-only --store "$TMP/r.db"

# ---- everything compiles ------------------------------------------------------------
if check "bench --compile-only" 0 "compile stage done for moe_layer" "compile seed" -- \
	"$CUCO" bench moe_layer --shape cuco_3to1 --compile-only --store "$TMP/db" \
	--program "$TMP/stream_overlap_lsa.cu" --program "$TMP/seed_sendrecv.cu"; then
	if printf '%s\n' "$out" | grep -q 'FAILED\|rejected'; then
		failed "bench --compile-only" "a program did not compile"
	fi
fi

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
