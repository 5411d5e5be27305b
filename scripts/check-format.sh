#!/usr/bin/env bash
# check-format.sh - fail when host C code, or the CUDA of the device library, the harness,
# the GPU tests and the probes, drifts from .clang-format. Not formatted: the workloads'
# programs, the templates under share/ and the candidate programs of tests/ (tests/gpu/programs,
# tests/fixtures): inputs whose lines are part of their meaning (directive lines, EVOLVE-BLOCK
# markers, positions that messages and tests quote).
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'device/harness/*.c' 'device/harness/*.h' 'tests/unit/*.c' 'tests/hostile/*.c' 'tests/hostile/*.h' \
	'device/*.cu' 'device/*.cuh' 'device/include/*.h' 'tests/gpu/*.cu' 'tests/gpu/*.cuh' 'tests/gpu/*.h' \
	'bench/*.cu' 'bench/*.cuh' 'bench/probes/*.h' | grep -v '^tests/gpu/programs/')
clang-format --dry-run --Werror $files
echo "clang-format: $(echo "$files" | wc -w) files clean"
