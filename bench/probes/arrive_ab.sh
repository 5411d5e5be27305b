#!/usr/bin/env bash
# arrive_ab.sh - the copying-warp push's staged / free hand-over with one
# mbarrier arrival per warp (build-dev/test_gemm) against one per thread
# (build-dev/exp/test_gemm_prev, the previous commit's build): feature checks,
# cycles under ncu, test_gemm --push --clocks at two shapes, racecheck.
# GPU node, from the repository root: bench/probes/arrive_ab.sh (writes $OUT/arrive.log)
. scripts/gpu-env.sh
L=${OUT:?}/arrive.log
M=sm__cycles_elapsed.avg,gpc__cycles_elapsed.avg.per_second
echo "# build-dev/test_gemm: an arrival per warp; build-dev/exp/test_gemm_prev: an arrival per thread; commands: each ## line" >"$L"
echo "## build-dev/test_gemm --push --shape 2048 1024 2048 --pace 0 --iters 3 (feature checks)" >>"$L"
timeout 90 build-dev/test_gemm --push --shape 2048 1024 2048 --pace 0 --iters 3 2>&1 | grep -E "FAIL|result" >>"$L"
for b in build-dev/test_gemm build-dev/exp/test_gemm_prev; do
	echo "## ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M $b --push --no-features --shape 8192 4096 8192 --pace 0 --iters 1 --warm 0" >>"$L"
	timeout 100 ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M "$b" --push --no-features \
		--shape 8192 4096 8192 --pace 0 --iters 1 --warm 0 2>&1 | grep -E "void gemm|cycles_elapsed" >>"$L"
done
for sh in "8192 4096 8192" "4096 2048 4096"; do
	for b in build-dev/test_gemm build-dev/exp/test_gemm_prev; do
		echo "## $b --push --no-features --clocks --pace 0,50 --iters 20 --gap 2000 --shape $sh" >>"$L"
		timeout 100 "$b" --push --no-features --clocks --pace 0,50 --iters 20 --gap 2000 --shape $sh 2>&1 | grep -v "^# window" >>"$L"
	done
done
echo "## compute-sanitizer --tool racecheck --racecheck-report all --print-limit 0 build-dev/test_gemm --push --shape 1024 1024 1024 --iters 1 --warm 0 (summary and kernels named)" >>"$L"
timeout 200 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 0 build-dev/test_gemm --push --shape 1024 1024 1024 \
	--iters 1 --warm 0 >"$OUT/racecheck.txt" 2>&1
grep -E "RACECHECK SUMMARY|result" "$OUT/racecheck.txt" >>"$L"
grep "at " "$OUT/racecheck.txt" | sed 's/.* at \([a-zA-Z_0-9]*\).*/\1/' | sort | uniq -c >>"$L"
gzip -9 "$OUT/racecheck.txt"
echo "# done" >>"$L"
