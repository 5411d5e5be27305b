#!/usr/bin/env bash
# copy_wait_ab.sh - the copying warps waiting for a staged tile by spinning
# on mbarrier.try_wait (build-dev/test_gemm) against testing and sleeping N ns
# between tests (build-dev/exp/test_gemm_sleepN, built with
# -DCUCO_GEMM_COPY_WAIT_NS=N, N = 256, 2000): feature checks, test_gemm
# --push --clocks at two shapes, two rounds, then cycles under ncu.
# GPU node, from the repository root: bench/probes/copy_wait_ab.sh (writes $OUT/sleep.log)
. scripts/gpu-env.sh; L=$OUT/sleep.log; C="--push --no-features --clocks --pace 0,50 --iters 20 --gap 2000"
echo "# session 16, one H200, commit 23f9357 plus CUCO_GEMM_COPY_WAIT_NS (uncommitted): build-dev/test_gemm spins (0), build-dev/exp/test_gemm_sleepN sleeps N ns between tests; commands: each ## line" > $L
echo "## build-dev/exp/test_gemm_sleep256 --push --shape 2048 1024 2048 --pace 0 --iters 3 (feature checks)" >> $L
timeout 90 build-dev/exp/test_gemm_sleep256 --push --shape 2048 1024 2048 --pace 0 --iters 3 2>&1 | grep -E "FAIL|result" >> $L
for r in 1 2; do for sh in "8192 4096 8192" "4096 2048 4096"; do for b in build-dev/test_gemm build-dev/exp/test_gemm_sleep256 build-dev/exp/test_gemm_sleep2000; do
echo "## round $r: $b $C --shape $sh" >> $L; timeout 100 $b $C --shape $sh 2>&1 | grep -v "^# window" >> $L; done; done; done
M=sm__cycles_elapsed.avg,gpc__cycles_elapsed.avg.per_second
for b in build-dev/test_gemm build-dev/exp/test_gemm_sleep256 build-dev/exp/test_gemm_sleep2000; do echo "## ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M $b --push --no-features --shape 8192 4096 8192 --pace 0 --iters 1 --warm 0" >> $L
timeout 100 ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M $b --push --no-features --shape 8192 4096 8192 --pace 0 --iters 1 --warm 0 2>&1 | grep -E "void gemm|cycles_elapsed" >> $L; done
echo "# done" >> $L
