#!/usr/bin/env bash
# install_clone.sh - the README's install on a machine without cmocka: the
# source tree is cloned (git clone: what is committed) into a temporary folder
# and configured with the README's line, `cmake -S . -B build
# -DCMAKE_BUILD_TYPE=Release`, while pkg-config cannot see cmocka (a
# pkg-config folder of links to every .pc file but cmocka.pc); the configure
# must pass and say loudly that the tests are off, register no test, and the
# cuco binary must build and run. Skipped (77) where the source tree is not a
# git repository or git, cmake or pkg-config is missing.
#
#   bash tests/install_clone.sh <path-to-cuco>     (CUCO_HOME: the source tree)
set -u
src=${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
for tool in git cmake pkg-config; do
	command -v "$tool" >/dev/null || {
		echo "install_clone: no $tool here: skipped"
		exit 77
	}
done
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || {
	echo "install_clone: $src is not a git repository: skipped"
	exit 77
}
command -v nvcc >/dev/null || PATH=$PATH:/usr/local/cuda/bin
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuco-clone.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { # WHAT [LOG]
	fail=$((fail + 1))
	printf 'FAIL: %s\n' "$1"
	[ -n "${2:-}" ] && [ -f "$2" ] && tail -n 20 "$2" | sed 's/^/    /'
}

# pkg-config without cmocka: every other .pc file of its search path, linked into one folder
mkdir -p "$tmp/pc"
IFS=: read -r -a pcdirs <<<"${PKG_CONFIG_PATH:+$PKG_CONFIG_PATH:}$(pkg-config --variable pc_path pkg-config)"
for d in "${pcdirs[@]}"; do
	for pc in "$d"/*.pc; do
		[ -f "$pc" ] && [ "$(basename "$pc")" != cmocka.pc ] && [ ! -e "$tmp/pc/$(basename "$pc")" ] &&
			ln -s "$pc" "$tmp/pc/"
	done
done
export PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH=
if pkg-config --exists cmocka; then bad "cmocka is still visible to pkg-config"; else ok; fi
pkg-config --exists sqlite3 jansson libcurl && ok || bad "hiding cmocka hid the runtime dependencies too"

if git clone --quiet "$src" "$tmp/cuco" >"$tmp/clone.log" 2>&1; then ok; else
	bad "git clone $src" "$tmp/clone.log"
	echo "$pass passed, $fail failed"
	exit 1
fi
cd "$tmp/cuco" || exit 2
# the README's configure line, as written there
if cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1; then ok; else
	bad "the README's configure line fails without cmocka" "$tmp/configure.log"
	echo "$pass passed, $fail failed"
	exit 1
fi
grep -q "cmocka not found: cuco builds, but its TESTS ARE OFF" "$tmp/configure.log" && ok ||
	bad "configure did not say that the tests are off" "$tmp/configure.log"
grep -q 'CMake Warning' "$tmp/configure.log" && ok || bad "the tests-off message is not a warning" "$tmp/configure.log"
ctest --test-dir build -N >"$tmp/ctest.log" 2>&1
grep -q 'Total Tests: 0' "$tmp/ctest.log" && ok || bad "tests were registered without cmocka" "$tmp/ctest.log"
if cmake --build build -j2 --target cuco >"$tmp/build.log" 2>&1; then ok; else
	bad "cuco does not build without cmocka" "$tmp/build.log"
fi
CUCO_HOME=$tmp/cuco build/cuco --version >"$tmp/version.log" 2>&1 && grep -q '^cuco [0-9]' "$tmp/version.log" && ok ||
	bad "the built cuco does not run" "$tmp/version.log"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
