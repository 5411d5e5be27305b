#!/usr/bin/env bash
# test.sh - install dependencies (and the Slurm and llama.cpp servers the
# scenario tests start), build, and pass every test that needs no GPU: unit
# and scenario tests, then the unit tests again under ASan+UBSan,
# the clang-format and narration checks, the fuzz targets (15 s each), and
# the import graph's layers (scripts/check-layers.sh).
# GPU tests: ctest -L gpu on a GPU node.
set -eu
cd "$(dirname "$0")/.."
scripts/setup-deps.sh --test
# Real components the scenario tests start (never mocked where the real one fits here):
scripts/setup-slurm.sh               # a one-node Slurm cluster (tests/slurm_farm.sh)
bash scripts/setup-llm-server.sh >/dev/null  # llama.cpp's server (tests/llm_real_server.sh); ~6 min the first time
export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUCO_WERROR=ON -DBUILD_TESTING=ON >/dev/null
cmake --build build -j"$jobs"
# --no-tests=error: a build whose tests are off (no cmocka) fails here instead of passing empty
ctest --test-dir build -L 'unit|scenario' --output-on-failure -j"$jobs" --no-tests=error
# A user's Release build (-O3 finds warnings -O2 does not): the host code, warnings as errors
# (the harness's host code without its device code: nvcc's part was built above).
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DCUCO_WERROR=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-release -j"$jobs" --target cuco cuco_harness_host
cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DCUCO_SANITIZE=ON -DCUCO_WERROR=ON -DBUILD_TESTING=ON >/dev/null
cmake --build build-san -j"$jobs" --target cuco_core cuco cuco-harness $(cd build-san && ctest -N -L unit | awk '/Test *#/ {print $3}')
# The unit tests under ASan+UBSan; the seeds they hand to nvcc alone (another process, the same
# text) were compiled in the first pass: CUCO_TEST_NO_NVCC skips that compile here.
CUCO_TEST_NO_NVCC=1 ctest --test-dir build-san -L unit --output-on-failure -j"$jobs" --no-tests=error
scripts/check-format.sh
bash scripts/check-narration.sh
bash scripts/check-docs.sh          # links, anchors; no dates or commits outside the measurement log
scripts/fuzz.sh 15
bash scripts/check-source.sh
bash scripts/check-layers.sh build
