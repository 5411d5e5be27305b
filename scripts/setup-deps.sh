#!/usr/bin/env bash
# setup-deps.sh - install what cuco needs on Debian/Ubuntu, or say exactly what
# to install when we cannot (not root, no apt).
#   scripts/setup-deps.sh          build and run cuco: what scripts/demo.sh needs
#   scripts/setup-deps.sh --test   and what scripts/test.sh needs: cmocka (the unit tests), clang
#                                  (the fuzz targets), clang-format, the sqlite3 CLI, chromium
#                                  (the report's rendering check, tests/report_render.sh),
#                                  libclang-16-dev (the lift's parser: `cuco init --from`) and
#                                  NVSHMEM (the nvshmem backend's compile tests)
set -eu
pkgs="cmake make gcc g++ pkg-config python3 libsqlite3-dev libjansson-dev libcurl4-openssl-dev libssl-dev"
test_pkgs="clang python3-pip sqlite3 libcmocka-dev clang-format chromium libclang-16-dev"
tests=0
case "${1:-}" in
--test) tests=1 ;;
"") ;;
*)
	echo "usage: scripts/setup-deps.sh [--test]" >&2
	exit 2
	;;
esac
[ $tests = 1 ] && pkgs="$pkgs $test_pkgs"
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
	echo "setup-deps: the CUDA toolkit (nvcc, CUDA 13.0 or newer, with NCCL >= 2.28 headers) is required;" >&2
	echo "  install NVIDIA's cuda-toolkit package and put its bin/ on PATH" >&2
	exit 1
fi
# NVSHMEM (optional; the nvshmem backend's programs need it): the wheel into ~/.cache/cuco-nvshmem
if [ $tests = 1 ]; then
	bash "$(dirname "$0")/setup-nvshmem.sh" || echo "setup-deps: NVSHMEM not installed; the nvshmem backend's tests skip" >&2
fi
