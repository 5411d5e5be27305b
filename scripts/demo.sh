#!/usr/bin/env bash
# demo.sh - cuco's main job end to end on GEMM + AllGather: install and
# build, check the node, turn the host program into a device-initiated seed
# (fast path), then compile, verify and time baseline, peers, compute alone,
# comm alone and the seed at every shape. Without >= 2 GPUs it stops after
# the compile stage and says so.
set -eu
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target cuco cuco-harness >/dev/null
[ -f scripts/gpu-env.sh ] && . scripts/gpu-env.sh
export CUCO_COMMIT=${CUCO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
build/cuco doctor
build/cuco fastpath gemm_allgather
set +e
build/cuco bench gemm_allgather "$@"
rc=$?
set -e
if [ $rc -eq 15 ]; then
	echo "demo: fast path and compile stage done; verification and timing need >= 2 CUDA GPUs."
	exit 0
fi
exit $rc
