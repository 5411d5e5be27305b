#!/usr/bin/env bash
# swizzle_ab.sh - the copying-warp push with the staging tile swizzled (the
# default, CUCO_GEMM_STAGE_SWIZZLE 1) against plain row-major staging: the
# feature checks, then test_gemm --push --clocks at two shapes, two rounds,
# the two builds alternating, then the shared-memory bank conflicts and
# cycles of each under ncu.
#   here:     bench/probes/swizzle_ab.sh build   (build-dev/test_gemm must be built)
#   GPU node: bench/probes/swizzle_ab.sh run     (writes $OUT/swz.log)
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
if [ "${1:-}" = build ]; then
	mkdir -p "$B/exp"
	exec nvcc -DCUCO_VERSION=\"0.1.0\" -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Iinclude -Idevice/include \
		-O2 -DNDEBUG --generate-code=arch=compute_90a,code=[compute_90a,sm_90a] -DCUCO_GEMM_STAGE_SWIZZLE=0 \
		tests/gpu/test_gemm.cu -o "$B/exp/test_gemm_noswz" -lcublas -lcudart
fi
[ "${1:-}" = run ] || { echo "usage: swizzle_ab.sh build | run" >&2; exit 2; }
. scripts/gpu-env.sh
L=${OUT:?}/swz.log
C="--push --no-features --clocks --pace 0,50 --iters 20 --gap 2000"
echo "# $B/test_gemm: swizzled staging; $B/exp/test_gemm_noswz: -DCUCO_GEMM_STAGE_SWIZZLE=0; commands: each ## line" >"$L"
echo "## $B/test_gemm --push --shape 2048 1024 2048 --pace 0 --iters 3 (feature checks)" >>"$L"
timeout 90 "$B/test_gemm" --push --shape 2048 1024 2048 --pace 0 --iters 3 2>&1 | grep -E "^# feature|result" >>"$L"
for r in 1 2; do
	for sh in "8192 4096 8192" "4096 2048 4096"; do
		for b in "$B/test_gemm" "$B/exp/test_gemm_noswz"; do
			echo "## round $r: $b $C --shape $sh" >>"$L"
			timeout 100 "$b" $C --shape $sh 2>&1 | grep -v "^# window" >>"$L"
		done
	done
done
M=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,sm__cycles_elapsed.avg
for b in "$B/test_gemm" "$B/exp/test_gemm_noswz"; do
	echo "## ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M $b --push --no-features --shape 8192 4096 8192 --pace 0 --iters 1 --warm 0" >>"$L"
	timeout 120 ncu --clock-control none --kernel-name regex:gemm_bf16_kernel --metrics $M "$b" --push --no-features \
		--shape 8192 4096 8192 --pace 0 --iters 1 --warm 0 2>&1 | grep -E "void gemm|bank_conflicts|cycles_elapsed|^ +8192" >>"$L"
done
echo "# done" >>"$L"
