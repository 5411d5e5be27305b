#!/usr/bin/env bash
# demo.sh - cuco's main job end to end on GEMM + AllGather: install and
# build, check the node, turn the host program into a device-initiated seed
# (fast path), then compile, verify and time baseline, peers, compute alone,
# comm alone and the seed at every shape. With one GPU it verifies every
# program's compute side with one rank (--ranks 1: nothing sent); without
# GPUs it stops after the compile stage. Either way it says so.
set -eu
cd "$(dirname "$0")/.."
scripts/setup-deps.sh # what cuco needs to build and run; the tests' tools come with --test
export PATH="$PATH:/usr/local/cuda/bin"
# the demo builds cuco and its harness alone (scripts/test.sh turns the tests on again)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
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
	gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
	case " $* " in *" --ranks"*) gpus=0 ;; esac
	if [ "${gpus:-0}" -eq 1 ]; then
		# One GPU: every program's compute side, verified with one rank (nothing
		# is sent, so its times are not the workload's; docs/harness.md)
		echo "demo: one GPU: verifying every program with --ranks 1 (the compute side; nothing is sent)"
		set +e
		build/cuco bench gemm_allgather --ranks 1 "$@"
		rc=$?
		set -e
		[ $rc -eq 0 ] && echo "demo: fast path, compile and one-rank verification done; the workload's timings need >= 2 CUDA GPUs."
		exit $rc
	fi
	echo "demo: fast path and compile stage done; verification and timing need >= 2 CUDA GPUs."
	exit 0
fi
exit $rc
