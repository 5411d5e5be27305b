#!/usr/bin/env bash
# medge_ab.sh - the GEMM with any M (a partial last tile row) against the
# header before it (commit a2d525b, M % 128 only) at shapes both take: the
# feature checks (odd M with guard rows, every push mode, grouped and split
# launches), the same under compute-sanitizer memcheck, then our GEMM and
# cuBLAS alternating (--vs) and the copying-warp push to a local copy
# (--push --clocks), the two builds alternating, two rounds; then the pushes
# at 2048x1024x2048 alone, more launches, three rounds.
#   here:     bench/probes/medge_ab.sh build   (build-dev/test_gemm must be built)
#   GPU node: bench/probes/medge_ab.sh run     (writes $OUT/medge.log)
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
if [ "${1:-}" = build ]; then
	mkdir -p "$B/exp/base/cuco_dev"
	git show a2d525b:device/include/cuco_dev/gemm.cuh >"$B/exp/base/cuco_dev/gemm.cuh" || exit 1
	for v in base new; do  # the same flags for both; base finds the old header first
		nvcc -DCUCO_VERSION=\"0.1.0\" -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Iinclude \
			$([ $v = base ] && echo -I"$B/exp/base") -Idevice/include -O2 -DNDEBUG \
			--generate-code=arch=compute_90a,code=[compute_90a,sm_90a] tests/gpu/test_gemm.cu \
			-o "$B/exp/test_gemm_$v" -lcublas -lcudart || exit 1
	done
	exit 0
fi
[ "${1:-}" = run ] || { echo "usage: medge_ab.sh build | run" >&2; exit 2; }
. scripts/gpu-env.sh
L=${OUT:?}/medge.log
echo "# $B/exp/test_gemm_new: any M; $B/exp/test_gemm_base: the header of a2d525b (same nvcc flags); commands: each ## line" >"$L"
echo "## $B/test_gemm --quick" >>"$L"
timeout 150 "$B/test_gemm" --quick >>"$L" 2>&1
echo "## compute-sanitizer --tool memcheck $B/test_gemm --quick" >>"$L"
timeout 240 compute-sanitizer --tool memcheck "$B/test_gemm" --quick 2>&1 | grep -E "FAIL|result|ERROR SUMMARY|Invalid|guard" >>"$L"
for r in 1 2; do
	for sh in "8192 4096 8192" "2048 1024 2048"; do
		for b in "$B/exp/test_gemm_new" "$B/exp/test_gemm_base"; do
			echo "## round $r: $b --vs --gap 2000 --iters 40 --shape $sh" >>"$L"
			timeout 100 "$b" --vs --gap 2000 --iters 40 --shape $sh 2>&1 | grep -v "^# window" >>"$L"
			echo "## round $r: $b --push --no-features --clocks --pace 50 --iters 20 --gap 2000 --shape $sh" >>"$L"
			timeout 100 "$b" --push --no-features --clocks --pace 50 --iters 20 --gap 2000 --shape $sh 2>&1 |
				grep -v "^# window" >>"$L"
		done
	done
done
# the pushes at 2048x1024x2048, whose single launches vary by ~2 us: more launches, three rounds
for r in 1 2 3; do
	for b in "$B/exp/test_gemm_new" "$B/exp/test_gemm_base"; do
		echo "## round $r: $b --push --no-features --pace 0,50 --iters 150 --gap 300 --shape 2048 1024 2048" >>"$L"
		timeout 100 "$b" --push --no-features --pace 0,50 --iters 150 --gap 300 --shape 2048 1024 2048 2>&1 |
			grep -v "^# window" >>"$L"
	done
done
echo "# done" >>"$L"
