#!/usr/bin/env bash
# pair_probe.sh - cuco's GEMM in cluster pairs (plan.cluster 2: the pair's
# B loads multicast) against plain CTAs, alone and with the copying warps'
# push to a local buffer, with the SM clock over each launch (test_gemm
# --push --clocks [--cluster]). Runs on a GPU node from the repository root.
# usage: [ROUNDS=2] [SHAPES="8192,4096,8192 ..."] bench/probes/pair_probe.sh OUTDIR
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
out=${1:?usage: pair_probe.sh OUTDIR}
mkdir -p "$out"
. scripts/gpu-env.sh
log="$out/pair_probe.log"
echo "# pair_probe.sh, commit ${CUCO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, $(date -u +%FT%TZ)" >"$log"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader >>"$log"
echo "## $B/test_gemm --push --shape 2048 1024 2048 --pace 0 --iters 3 (feature checks)" >>"$log"
if ! timeout 90 stdbuf -oL "$B/test_gemm" --push --shape 2048 1024 2048 --pace 0 --iters 3 >"$out/features.txt" 2>&1; then
	echo "# feature run failed or timed out" >>"$log"
	grep -v "^# window" "$out/features.txt" | tail -40 >>"$log"
	exit 1
fi
grep -E "^# feature|result" "$out/features.txt" >>"$log"
for round in $(seq 1 "${ROUNDS:-2}"); do
	for shape in ${SHAPES:-"8192,4096,8192" "4096,2048,4096" "2048,1024,2048"}; do
		shape=${shape//,/ }
		for cl in "" "--cluster"; do
			echo "## round $round: $B/test_gemm --push --clocks $cl --shape $shape --pace 0,50 --iters 20 --gap 2000" >>"$log"
			timeout 120 "$B/test_gemm" --push --clocks $cl --shape $shape --pace 0,50 --iters 20 --gap 2000 2>&1 |
				grep -v "^# window\|^# feature" >>"$log"
		done
	done
done
echo "# done" >>"$log"
