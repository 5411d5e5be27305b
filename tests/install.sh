#!/usr/bin/env bash
# install.sh - `cmake --install` of the build that holds CUCO into a temporary
# prefix, then the installed cuco run from another directory with CUCO_HOME
# unset: it finds its data in PREFIX/share/cuco and its harness in
# PREFIX/libexec/cuco, lists the shipped workloads, realises a shipped
# directive through an installed template, prints its version, and still
# obeys CUCO_HOME when set (a wrong one is refused by name); cuco-gpu-env.sh
# is installed beside cuco and, like scripts/gpu-env.sh, can be sourced.
#
#   bash tests/install.sh <path-to-cuco>      (its folder must be a CMake build tree)
set -u
if [ $# -ne 1 ]; then
	echo "usage: bash tests/install.sh <path-to-cuco>" >&2
	exit 2
fi
build=$(cd "$(dirname "$1")" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuco-install.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	printf 'FAIL: %s\n' "$1"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -n 15
}

if ! cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/out" 2>&1; then
	bad "cmake --install $build"
	# scripts/gpu-env.sh, installed beside cuco, sourced from elsewhere (and from the source tree)
for env_sh in "$p/bin/cuco-gpu-env.sh" "$src/scripts/gpu-env.sh"; do
	(unset NCCL_NVLS_ENABLE NVSHMEM_DISABLE_NVLS && . "$env_sh" && [ "$NCCL_NVLS_ENABLE" = 0 ] &&
		[ "$NVSHMEM_DISABLE_NVLS" = 1 ]) >"$tmp/out" 2>&1 && ok || bad ". $env_sh"
done

echo "$pass passed, $fail failed"
	exit 1
fi
p=$tmp/prefix
for f in bin/cuco libexec/cuco/cuco-harness share/cuco/include/cuco/program.h \
	share/cuco/device/include/cuco_dev/gemm.cuh share/cuco/share/design_space.json \
	share/cuco/workloads/gemm_allgather/manifest.json share/cuco/share/cmake/CucoFindNccl.cmake \
	share/doc/cuco/LICENSE bin/cuco-gpu-env.sh; do
	[ -e "$p/$f" ] && ok || bad "installed tree lacks $f"
done

# Run from a directory that is neither the source nor the build tree.
mkdir -p "$tmp/elsewhere" && cd "$tmp/elsewhere" || exit 2
export CUCO_STATE=$tmp/state CUCO_STORE=$tmp/store.db
unset CUCO_HOME CUCO_HARNESS

env "$p/bin/cuco" --version >"$tmp/out" 2>&1 && grep -q '^cuco [0-9]' "$tmp/out" && ok ||
	bad "installed cuco --version"
"$p/bin/cuco" workloads >"$tmp/out" 2>&1 && grep -q '^gemm_allgather: ' "$tmp/out" && ok ||
	bad "installed cuco workloads lists gemm_allgather"
"$p/bin/cuco" realize gemm_allgather \
	--directive-file="$src/workloads/gemm_allgather/variants/stream_overlap_lsa.json" \
	-o "$tmp/real.cu" >"$tmp/out" 2>&1 && grep -q '^// cuco-directive: ' "$tmp/real.cu" && ok ||
	bad "installed cuco realize (an installed template, --flag=value)"
"$p/bin/cuco" doctor >"$tmp/out" 2>&1
grep -q "harness" "$tmp/out" && grep -q "$p/libexec/cuco/cuco-harness" "$tmp/out" && ok ||
	bad "installed cuco doctor names the installed harness"
CUCO_HOME=$tmp/nowhere "$p/bin/cuco" workloads >"$tmp/out" 2>&1
[ $? -ne 0 ] && grep -q "CUCO_HOME=$tmp/nowhere" "$tmp/out" && ok ||
	bad "CUCO_HOME still overrides the installed data (a wrong one is refused)"

# scripts/gpu-env.sh, installed beside cuco, sourced from elsewhere (and from the source tree)
for env_sh in "$p/bin/cuco-gpu-env.sh" "$src/scripts/gpu-env.sh"; do
	(unset NCCL_NVLS_ENABLE NVSHMEM_DISABLE_NVLS && . "$env_sh" && [ "$NCCL_NVLS_ENABLE" = 0 ] &&
		[ "$NVSHMEM_DISABLE_NVLS" = 1 ]) >"$tmp/out" 2>&1 && ok || bad ". $env_sh"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
