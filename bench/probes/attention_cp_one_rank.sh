#!/usr/bin/env bash
# attention_cp_one_rank.sh - attention_cp on ONE GPU: what one rank can check.
#
# 1. The ring's compute side for 2 and 4 ranks without communication
#    (bench/probes/attention_cp_ring.cu, built beside cuco as
#    $PROBES/attention_cp_ring_host and ..._tmpl): rank 0 and rank R-1 attend to
#    every rank's K, V block in ring order with the attention code of host.cu and
#    of a realised stream_overlap template with key chunks, checked against the
#    workload's reference for that rank; the reference itself checked on a few
#    rows against a double-precision host loop.
# 2. `cuco bench attention_cp --ranks 1`: the baseline, the all-gather peer,
#    compute alone, comm alone, the fast-path seed and a sample of realised
#    variants, every verified program against the reference. With one rank
#    there is no ring: every program attends the local queries to the local
#    block (the split, the masked pairs, the merges of a zigzag causal step, the
#    LSE output); nothing is sent, so the exchange itself is not checked, and
#    the times are one GPU's, not figures of the workload.
#   GPU node: bench/probes/attention_cp_one_rank.sh   (writes $OUT/attention_cp/*.log,
#             *.json; exits 1 unless every case and program verified)
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
PROBES=${PROBES:-build-cpprobe}
. scripts/gpu-env.sh
O=${OUT:?}/attention_cp
SHAPES=${SHAPES:---shape 4096_d32 --shape 4096_d32_causal --shape 1x32x8x4096x128x2x2 --shape 1x32x8x4096x128x1x1 --shape 1x32x32x2048x64x2x1}
VARIANTS=${VARIANTS:-sequential_lsa sequential_ce stream_overlap_ce stream_overlap_lsa_chunk4 stream_overlap_ce_graph}
export CUCO_STATE=${CUCO_STATE:-/tmp/cuco-attention-cp-state}
mkdir -p "$O" "$CUCO_STATE/attention_cp"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader >"$O/gpu.log" 2>&1
ring=0
for p in host tmpl; do
	echo "## $PROBES/attention_cp_ring_$p" >>"$O/ring.log"
	timeout 150 "$PROBES/attention_cp_ring_$p" $([ $p = tmpl ] && echo 4) >>"$O/ring.log" 2>&1
	rc=$?
	echo "## rc $rc" >>"$O/ring.log"
	[ $rc -eq 0 ] && ring=$((ring + 1))
done
progs=()
for v in $VARIANTS; do
	$B/cuco realize attention_cp --directive-file "workloads/attention_cp/variants/$v.json" \
		-o "$CUCO_STATE/attention_cp/$v.cu" && progs+=(--program "$CUCO_STATE/attention_cp/$v.cu")
done
{
	echo "## $B/cuco bench attention_cp --ranks 1 $SHAPES --iters 5 --warmup 2 --bench-seconds 0 --timeout 120 ${progs[*]}"
	timeout 420 $B/cuco bench attention_cp --ranks 1 $SHAPES --iters 5 --warmup 2 --bench-seconds 0 \
		--timeout 120 --json "$O/bench.json" "${progs[@]}"
	echo "## rc $?"
} >"$O/bench.log" 2>&1
bad=$(awk '/^# program/ {t = 1; next} /^#/ {t = 0} t && NF >= 3 && $3 != "ok" && $3 != "derived"' "$O/bench.log")
if [ -n "$bad" ] || ! grep -q '^## rc 0$' "$O/bench.log" || [ $ring -ne 2 ]; then
	printf 'attention_cp_one_rank: not verified (ring probes passed: %s of 2):\n%s\n' "$ring" "$bad" >&2
	exit 1
fi
echo "attention_cp_one_rank: every case and program verified ($O)"
