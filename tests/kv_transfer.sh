#!/usr/bin/env bash
# kv_transfer.sh - scenario test of the kv_transfer workload on a machine
# without GPUs: `cuco workloads` lists it; shapes that break its rules and
# rank counts that are not pairs are refused before anything compiles; the
# fast path turns its host baseline (a send / receive group per layer) into a
# seed that compiles; every variant realises through the template as named,
# and directives outside the template's line are refused; `cuco bench
# --compile-only` compiles the baseline, the peers, compute and comm alone,
# the seed and one realised program per code path of the template (copy
# engine, LSA scatter, the fused producer's epilogue, the fused consumer's
# flags, a replayed graph).
#
#   bash tests/kv_transfer.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc. Prints one line per failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/kv_transfer.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
W=$CUCO_HOME/workloads/kv_transfer
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-kv.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

. "$HERE/lib/check.sh"

# ---- listed, with its shapes and rules ------------------------------------
check "workloads" 0 "kv_transfer: Disaggregated prefill to decode" "llama3_8b_32768 S=32768 L=32" \
	"KV >= 8, multiple of 8" "programs: baseline(baseline) ce_layer(peer) ce_bulk(peer)" -- "$CUCO" workloads

# ---- refused before anything compiles --------------------------------------
DB=$TMP/db
check "bench: KV not a multiple of 8" 5 "KV = 100 is not a multiple of 8" "16-byte pieces" -- \
	"$CUCO" bench kv_transfer --shape S=512,L=2,H=4096,I=14336,KV=100,page=16 --compile-only --store "$DB"
check "bench on 3 ranks" 13 "runs on 2, 4 or 8 ranks, not 3" -- \
	"$CUCO" bench kv_transfer --ranks 3 --shape small --compile-only --store "$DB"
if printf '%s\n' "$err" | grep -q 'compile '; then
	failed "bench on 3 ranks" "something compiled before the refusal"
fi

# ---- every variant realises as named; what the line leaves out is refused ----
n=0
for f in "$W"/variants/*.json; do
	v=$(basename "$f" .json)
	if ! run "$CUCO" realize kv_transfer --directive-file "$f" -o "$TMP/$v.cu" || [ "$rc" -ne 0 ]; then
		failed "realize $v" "does not realise"
		continue
	fi
	p=$(sed -n 's/.*"placement":"\([a-z_]*\)".*/\1/p' "$f")
	b=$(sed -n 's/.*"backend":"\([a-z]*\)".*/\1/p' "$f")
	if grep -q '{{' "$TMP/$v.cu" || ! grep -q "^#define CUCO_PLACEMENT CUCO_PLACEMENT_$p\$" "$TMP/$v.cu" ||
		! grep -q "^#define CUCO_BACKEND CUCO_BACKEND_$b\$" "$TMP/$v.cu"; then
		failed "realize $v" "placeholders left, or not the placement and backend it names"
		continue
	fi
	n=$((n + 1))
done
if [ "$n" -ge 10 ]; then pass=$((pass + 1)); else failed "variants" "only $n realised"; fi
grep -q '^#define CUCO_GRANULARITY CUCO_GRANULARITY_whole$' "$TMP/sequential_ce_whole.cu" 2>/dev/null &&
	grep -q '^#define CUCO_GRAPH 1 ' "$TMP/fused_producer_n128_graph.cu" 2>/dev/null &&
	grep -q '^#define CUCO_ISSUER CUCO_ISSUER_thread' "$TMP/stream_overlap_lsa4_thread.cu" 2>/dev/null &&
	pass=$((pass + 1)) || failed "variants" "granularity whole, graph or the thread issuer not rendered"
check "realize specialized" 4 '"specialized" is not a placement' -- "$CUCO" realize kv_transfer --directive \
	'{"backend":"lsa","placement":"specialized","sync_scope":"grid","issuer":"cta","granularity":"chunk"}'
check "realize a cta sync scope" 4 '"cta" is not a sync_scope' -- "$CUCO" realize kv_transfer --directive \
	'{"backend":"lsa","placement":"sequential","sync_scope":"cta","issuer":"cta","granularity":"chunk"}'

# ---- the fast path: one LSA kernel per send / receive group -------------------
check "fastpath" 0 "ncclSend -> cuco_seed_send" "ncclRecv -> cuco_seed_recv" "ncclGroupEnd -> cuco_seed_group_end" -- \
	"$CUCO" fastpath kv_transfer -o "$TMP/seed.cu" --store "$DB"
if grep -v '^\s*//' "$TMP/seed.cu" 2>/dev/null | grep -q 'ncclSend(\|ncclRecv(\|ncclGroupEnd('; then
	failed "fastpath" "a host send, receive or group end is left in the seed"
fi

# ---- compile-only bench: the manifest's programs, the seed and one variant per code path ----
check "bench --compile-only" 0 "compile stage done for kv_transfer" "compile seed" -- \
	"$CUCO" bench kv_transfer --shape cuco_2048_512 --compile-only --store "$DB" \
	--program "$TMP/sequential_ce_whole.cu" --program "$TMP/stream_overlap_lsa4_thread.cu" \
	--program "$TMP/fused_producer_n128_graph.cu" --program "$TMP/fused_consumer_ce4.cu"
if printf '%s\n' "$err" | grep -q 'FAILED\|rejected'; then
	failed "bench --compile-only" "a program did not compile"
fi
for x in baseline ce_layer ce_bulk compute comm comm_nccl seed; do
	printf '%s\n' "$err" | grep -q "compile $x *ok" || failed "bench --compile-only" "no 'compile $x ok'"
done
check "bench without GPUs" 15 "ok (cached)" -- "$CUCO" bench kv_transfer --shape cuco_2048_512 --store "$DB"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
