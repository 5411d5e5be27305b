#!/usr/bin/env bash
# attention_cp.sh - scenario test of the attention_cp workload on a machine
# without GPUs: `cuco workloads` lists it with its shape rules; the fast path
# turns its host ring (grouped ncclSend/ncclRecv) into a seed that compiles;
# `cuco bench --compile-only` compiles the baseline, the all-gather peer,
# compute alone, comm alone and the seed; a shape against the rules is refused
# before anything compiles; every shipped variant realises through the
# template, one of them (stream overlap per key chunk over the copy engine,
# graph on) compiles for sm_90a with host warnings as errors, and the
# placements the template does not realise stop at their #error.
#
#   bash tests/attention_cp.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc. Prints one line per failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/attention_cp.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-attention-cp.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null 2>&1 || nvcc=/usr/local/cuda/bin/nvcc
cd "$TMP" || exit 2

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	printf 'FAIL: %s\n' "$1"
	[ -f "$TMP/log" ] && tail -n 15 "$TMP/log" | sed 's/^/    /'
}
# has NAME TEXT: the last command's output (TMP/log) holds TEXT
has() { if grep -qF -- "$2" "$TMP/log"; then ok; else bad "$1: no '$2'"; fi; }

"$CUCO" workloads >"$TMP/log" 2>&1 && ok || bad "cuco workloads"
has "workloads" "attention_cp: Flash attention forward with context parallelism"
has "workloads" "S/ranks (S divides by the rank count) multiple of 128"
has "workloads" "programs: baseline(baseline) allgather_kv(peer) compute(compute) comm(comm)"

# the fast path: one send/recv group, the seed compiles
if "$CUCO" fastpath attention_cp -o "$TMP/seed.cu" >"$TMP/log" 2>&1; then ok; else bad "fastpath attention_cp"; fi
has "fastpath" "ncclGroupEnd -> cuco_seed_group_end"
has "fastpath" "compile stage: ok"
grep -q '^// cuco-directive: {"backend":"lsa","placement":"sequential"' "$TMP/seed.cu" && ok ||
	bad "the seed does not begin with its directive"
if grep -v '^\s*//' "$TMP/seed.cu" | grep -q 'ncclSend(\|ncclRecv('; then bad "a host ncclSend/ncclRecv is left in the seed"; else ok; fi

# bench --compile-only: every program of the manifest and the seed (the seed cached)
if "$CUCO" bench attention_cp --shape 4096_d32_causal --compile-only >"$TMP/log" 2>&1; then ok; else
	bad "bench --compile-only"; fi
has "bench --compile-only" "compile stage done for attention_cp"
for p in baseline allgather_kv compute comm seed; do has "bench --compile-only" "compile $p"; done
if grep -q 'FAILED\|rejected' "$TMP/log"; then bad "bench --compile-only: a program did not compile"; else ok; fi

# the shape rules, before anything compiles: 8 ranks of 1536 tokens are 192 each
if "$CUCO" bench attention_cp --ranks 8 --shape 1x32x8x1536x64x2x2 --compile-only >"$TMP/log" 2>&1; then
	bad "a shape against the rules was taken"
else
	has "shape rules" "multiple of 128"
fi

# every shipped variant realises; one compiles; the fused placements stop at #error
n=0
for f in "$CUCO_HOME"/workloads/attention_cp/variants/*.json; do
	v=$(basename "$f" .json)
	if "$CUCO" realize attention_cp --directive-file "$f" -o "$TMP/$v.cu" >"$TMP/log" 2>&1; then
		n=$((n + 1))
	else
		bad "variant $v does not realise"
	fi
done
[ "$n" -ge 8 ] && ok || bad "only $n variants realised"
inc=()
[ -n "${CUCO_NCCL_HOME:-}" ] && inc+=(-I"$CUCO_NCCL_HOME/include")
sample=stream_overlap_ce_graph_chunk
sed 's/"chunks":1,/"chunks":4,/' "$CUCO_HOME/workloads/attention_cp/variants/stream_overlap_ce_graph.json" >"$TMP/$sample.json"
"$CUCO" realize attention_cp --directive-file "$TMP/$sample.json" -o "$TMP/$sample.cu" >"$TMP/log" 2>&1 || bad "realise $sample"
grep -q '^#define CUCO_CHUNKS 4 ' "$TMP/$sample.cu" && grep -q '^#define CUCO_GRAPH 1 ' "$TMP/$sample.cu" && ok ||
	bad "$sample lacks its knobs"
if "$nvcc" -std=c++17 -O1 -gencode=arch=compute_90a,code=sm_90a -I"$CUCO_HOME/device/include" \
	-I"$CUCO_HOME/include" "${inc[@]}" -Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-Werror \
	-c "$TMP/$sample.cu" -o "$TMP/$sample.o" >"$TMP/log" 2>&1; then ok; else bad "$sample does not compile"; fi
for pl in fused_consumer specialized; do
	printf '%s\n' "{\"backend\":\"lsa\",\"placement\":\"$pl\",\"sync_scope\":\"cta\",\"issuer\":\"cta\",\"granularity\":\"tile\",\"knobs\":{\"comm_ctas\":32,\"threads\":512}}" >"$TMP/$pl.json"
	"$CUCO" realize attention_cp --directive-file "$TMP/$pl.json" -o "$TMP/$pl.cu" >"$TMP/log" 2>&1 || true
	if [ -f "$TMP/$pl.cu" ] && "$nvcc" -std=c++17 -E -I"$CUCO_HOME/device/include" -I"$CUCO_HOME/include" \
		"${inc[@]}" -x cu "$TMP/$pl.cu" -o /dev/null >"$TMP/log" 2>&1; then
		bad "$pl preprocesses without its #error"
	elif [ -f "$TMP/$pl.cu" ]; then
		has "$pl" "$pl is not realised for attention_cp"
	else
		has "$pl" "$pl"
	fi
done

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
