#!/usr/bin/env bash
# push_fromc.sh - the copying warps' push (test_gemm --push --pace) with the
# tile staged in shared memory (warp) against read back from C (warpc), and
# with streaming (.cs) stores for the copies and for C. Runs on a GPU node
# from the repository root; the .cs builds are made here by
# `bench/probes/push_fromc.sh build` (build-dev/exp/).
# usage: bench/probes/push_fromc.sh build | run OUTDIR
set -euo pipefail
B=${CUCO_BUILD:-build-dev}
if [ "${1:-}" = build ]; then
	mkdir -p "$B/exp"
	for v in "pcs -DCUCO_GEMM_PUSH_STORE=1" "ccs -DCUCO_GEMM_PUSH_STORE=1 -DCUCO_GEMM_C_STORE=1"; do
		set -- $v
		n=$1; shift
		nvcc -DCUCO_VERSION=\"0.1.0\" -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Iinclude -Idevice/include \
			-O2 -g -DNDEBUG --generate-code=arch=compute_90a,code=[compute_90a,sm_90a] "$@" \
			tests/gpu/test_gemm.cu -o "$B/exp/test_gemm_$n" -lcublas -lcudart &
	done
	wait
	exit 0
fi
out=${2:?usage: push_fromc.sh run OUTDIR}
mkdir -p "$out"
. scripts/gpu-env.sh
log="$out/push_fromc.log"
echo "# push_fromc.sh run, commit ${CUCO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, $(date -u +%FT%TZ)" >"$log"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader >>"$log"
echo "## $B/test_gemm --quick (tail)" >>"$log"
"$B/test_gemm" --quick 2>&1 | grep -E "feature|result|FAIL" >>"$log" || true
for shape in "8192 4096 8192" "4096 2048 4096" "2048 1024 2048"; do
	for bin in test_gemm exp/test_gemm_pcs exp/test_gemm_ccs; do
		[ -x "$B/$bin" ] || continue
		echo "## $B/$bin --push --shape $shape --pace 0,50 --iters 20 --gap 2000" >>"$log"
		"$B/$bin" --push --shape $shape --pace 0,50 --iters 20 --gap 2000 2>&1 | grep -v "^# window" >>"$log"
	done
done
echo "# done" >>"$log"
