#!/usr/bin/env bash
# setup-deps.sh - install what cuco needs to build and test on Debian/Ubuntu,
# or say exactly what to install when we cannot (not root, no apt). chromium:
# the report's rendering check (tests/report_render.sh). libclang-16-dev: the lift's
# parser (its header at build time; its libclang1-16 at run time, for `cuco init --from`).
set -eu
pkgs="cmake make gcc g++ clang pkg-config python3 python3-pip sqlite3 libsqlite3-dev libjansson-dev libcurl4-openssl-dev libssl-dev libcmocka-dev clang-format chromium libclang-16-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "setup-deps: installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	else
		echo "setup-deps: please install:$missing" >&2
		echo "  sudo apt-get install$missing" >&2
		exit 1
	fi
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "setup-deps: the CUDA toolkit (nvcc, 12.9 or newer, with NCCL >= 2.28 headers) is required;" >&2
	echo "  install NVIDIA's cuda-toolkit package and put its bin/ on PATH" >&2
	exit 1
fi
# NVSHMEM (optional; the nvshmem backend's programs need it): the wheel into ~/.cache/cuco-nvshmem
bash "$(dirname "$0")/setup-nvshmem.sh" || echo "setup-deps: NVSHMEM not installed; the nvshmem backend's tests skip" >&2
