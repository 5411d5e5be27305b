#!/usr/bin/env bash
# setup-nvshmem.sh - put NVSHMEM (the nvidia-nvshmem-cu13 wheel, the version the
# GPU nodes carry in their Python site-packages) under ~/.cache/cuco-nvshmem,
# where CMake and cuco find it: ~/.cache/cuco-nvshmem/nvidia/nvshmem/{include,lib}.
# Optional: cuco builds and tests without it; NVSHMEM programs then say
# "NVSHMEM not found". CUCO_NVSHMEM_VERSION picks another version.
set -eu
version="${CUCO_NVSHMEM_VERSION:-3.4.5}"
cache="${CUCO_NVSHMEM_CACHE:-$HOME/.cache/cuco-nvshmem}"
home="$cache/nvidia/nvshmem"
if [ -f "$home/lib/libnvshmem_device.a" ] && [ -f "$cache/.version" ] &&
	[ "$(cat "$cache/.version")" = "$version" ]; then
	echo "setup-nvshmem: NVSHMEM $version already in $home"
	exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
	echo "setup-nvshmem: python3 -m pip is needed to fetch the nvidia-nvshmem-cu13 wheel;" >&2
	echo "  install python3-pip, or point NVSHMEM_HOME at an NVSHMEM installation" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --dest "$tmp" "nvidia-nvshmem-cu13==$version"
whl=$(ls "$tmp"/nvidia_nvshmem_cu13-*.whl)
rm -rf "$cache/nvidia"
mkdir -p "$cache"
python3 -m zipfile -e "$whl" "$cache" >/dev/null
echo "$version" >"$cache/.version"
echo "setup-nvshmem: NVSHMEM $version in $home"
