#!/usr/bin/env bash
# x2_backlog.sh - the two-rank runs that have not run on two GPUs yet
# (docs/overlap.md, "Left to do"), in one device
# call on nvidia-h200-x2, most wanted first, each through gpu-check.sh with a
# time limit so the whole fits one 10-minute call on a fresh machine:
#   shapes   the ragged (M = 3000), decode (M = 256) and odd_n (N = 32064)
#            shapes on two ranks for the first time (partial last tile row,
#            64-wide tiles, the overlapping last tile column sent to a peer),
#            burst, with the best programs and the peers
#   small    2048³ and 4096³ burst, now that the host baseline and "our GEMM
#            alone" run 128-wide tiles at 2048³ (the 1.2× target there)
#   split16k 16384³ sustained (the default timing), with and without the
#            2-way split tail (the GEMM alone at the power cap fits under the
#            sustained target's allowance only split: docs/gemm.md)
#   ag       allgather_gemm sustained at 4096³ and 8192³ (its sustained
#            4096³ ≤ 200 µs target, last run 2026-11-30 at 1fedbff), no PyTorch peers
#   sus8k    gemm_allgather 8192³ sustained, the best programs
# STEPS picks and orders them (default: all, in this order). Every step's
# logs and JSON go to $WORK/<step>/ (WORK: /tmp/cuco-backlog), archived as
# $OUT/backlog.tgz (one file, so the device tool brings all of it back), and
# the tables are printed last. EXTRA goes to every
# cuco bench after the step's own flags (EXTRA="--ranks 1 --iters 3" rehearses
# the script on a one-GPU node).
#   GPU node (2 GPUs): CUCO_BUILD=build-dev CUCO_COMMIT=<commit> bash bench/probes/x2_backlog.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT}"
O=${WORK:-/tmp/cuco-backlog}
mkdir -p "$O" "$OUT"
BEST="fused_producer_tma_sync_auto_warps_pace50_lb fused_producer_tma_sync_auto
 fused_producer_tma_sync_n64_warps_pace50_lb fused_producer_tma_sync_n256_warps_pace50_lb_lh
 evolved_8192_burst_tail evolved_8192_2048_s18 sequential_lsa_n128"
step() { # name limit_s env...
	local name=$1 limit=$2
	shift 2
	echo "=== $name (limit ${limit}s): $* scripts/gpu-check.sh"
	local t0=$SECONDS
	env BENCH_EXTRA="${EXTRA:-}" "$@" timeout "$limit" bash scripts/gpu-check.sh "${MODE:-bench}" "$O/$name" >"$O/$name.log" 2>&1
	echo "=== $name: rc $? in $((SECONDS - t0)) s"
}
for s in ${STEPS:-shapes small split16k ag sus8k}; do
	case $s in
	shapes) step shapes 170 VARIANTS="$BEST" SHAPES="--shape ragged --shape decode --shape odd_n" \
		BENCH_EXTRA="--timing burst ${EXTRA:-}" ;;
	small) step small 110 VARIANTS="$BEST" SHAPES="--shape 2048 --shape 4096" BENCH_EXTRA="--timing burst ${EXTRA:-}" ;;
	split16k) step split16k 110 VARIANTS="fused_producer_tma_sync_auto_warps_pace50
		fused_producer_tma_sync_auto_warps_pace50_split2 sequential_lsa_n128 sequential_lsa_n128_split2
		evolved_8192_burst_tail" SHAPES="--shape 16384" ;;
	ag) MODE=agbench step ag 90 AG_VARIANTS="fused_consumer_ce_auto fused_consumer stream_overlap_ce4_graph
		sequential_lsa_graph" SHAPES="--shape 4096 --shape 8192" SKIP_TORCH=1 ;;
	sus8k) step sus8k 80 VARIANTS="$BEST" SHAPES="--shape 8192" ;;
	*) echo "x2_backlog: unknown step '$s' (shapes, small, split16k, ag, sus8k)" >&2; exit 2 ;;
	esac
done
tar czf "$OUT/backlog.tgz" -C "$(dirname "$O")" "$(basename "$O")"
for f in "$O"/*.log; do
	echo "### $f"
	grep -E '^(# [a-z_]+, shape |  [A-Za-z_0-9.]+ +(baseline|peer|compute|comm|seed|file|bound) )' "$f" | cut -c1-140
	grep -E '^[a-z_]+ +rc=' "$f"
done
