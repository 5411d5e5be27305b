#!/usr/bin/env bash
# ragged_one_rank.sh - every code path that the partial last tile row
# (M % 128 != 0), a small M or an N that the tile width does not divide
# touches in the realised programs, on ONE GPU: both workloads' baseline,
# peers, seed and a set of variants at the "ragged" (M = 3000), "decode"
# (M = 256) and "odd_n" (N = 32064 or 16032, K = 5120) shapes and 2048, with
# --ranks 1. With one rank nothing is sent (every peer loop is empty), so
# this checks the GEMM plans, chunk rows, bands, tile orders and copies'
# sizes against the reference, not the communication itself, which needs
# the two-rank run.
#   GPU node: bench/probes/ragged_one_rank.sh   (writes $OUT/ragged/*.log, *.json;
#             exits 1 unless every program verified), or scripts/gpu-check.sh one
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
. scripts/gpu-env.sh
O=${OUT:?}/ragged
SHAPES=${SHAPES:---shape ragged --shape decode --shape odd_n --shape 2048}
mkdir -p "$O" "$CUCO_STATE/ragged"
GA="sequential_lsa_n128 sequential_ce_cublas_pull stream_overlap_ce8 stream_overlap_ce_cublas4_t70
 stream_overlap_signal_ce8 stream_overlap_signal_ce8_tail stream_overlap_ce8_signal_pull specialized
 specialized_chunk fused_producer fused_producer_tma_sync_auto fused_producer_tma_sync_n64_warps_pace50_lb
 fused_producer_tma_sync_n256_warps_pace50_lb_lh fused_producer_tma_sync_auto_split2 stream_overlap_signal_ce8_split2"
AG="sequential_lsa stream_overlap_ce4 stream_overlap_lsa fused_consumer fused_consumer_ce_auto"
real() { # workload prefix names...
	local w=$1 p=$2
	shift 2
	progs=()
	for x in "$@"; do
		$B/cuco realize "$w" --directive-file "workloads/$w/variants/$x.json" -o "$CUCO_STATE/ragged/$p$x.cu" &&
			progs+=(--program "$CUCO_STATE/ragged/$p$x.cu")
	done
}
bench() { # workload tag extra...
	local w=$1 t=$2
	shift 2
	echo "## $B/cuco bench $w --ranks 1 $SHAPES --iters 5 --warmup 2 --bench-seconds 0 $* (${#progs[@]} args)"
	timeout 280 $B/cuco bench "$w" --ranks 1 $SHAPES --iters 5 --warmup 2 --bench-seconds 0 \
		--json "$O/$t.json" "$@"
	echo "## rc $?"
}
{
real gemm_allgather "" $(echo $GA | tr ' ' '\n' | head -8)
bench gemm_allgather ga1 "${progs[@]}"
real gemm_allgather "" $(echo $GA | tr ' ' '\n' | tail -n +9)
bench gemm_allgather ga2 --no-seed "${progs[@]}"
real allgather_gemm ag_ $AG
bench allgather_gemm ag "${progs[@]}"
} >"$O/bench.log" 2>&1
echo "# done" >>"$O/bench.log"
# every program of every table verified (status ok), and every bench ran to its end
bad=$(awk '/^# program/ {t = 1; next} /^#/ {t = 0} t && NF >= 3 && $3 != "ok" && $3 != "derived"' "$O/bench.log")
runs=$(grep -c '^## rc 0$' "$O/bench.log")
if [ -n "$bad" ] || [ "$runs" -ne 3 ]; then
	printf 'ragged_one_rank: not verified (%s of 3 benches ran to the end):\n%s\n' "$runs" "$bad" >&2
	exit 1
fi
echo "ragged_one_rank: every program verified ($O/bench.log)"
