#!/usr/bin/env bash
# check-format.sh - fail when host C code drifts from .clang-format.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'device/harness/*.c' 'device/harness/*.h' 'tests/unit/*.c' 'tests/hostile/*.c' 'tests/hostile/*.h')
clang-format --dry-run --Werror $files
echo "clang-format: $(echo "$files" | wc -w) files clean"
