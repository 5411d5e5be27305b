#!/usr/bin/env bash
# bad_input.sh - scenario test of `cuco init NAME --from` on what is not a program it can lift: a
# .txt and a .json, an empty .cu, binary bytes in a .cu, a program without NCCL calls, one that
# does not compile, a --from that does not exist, a folder without sources, a malformed --shape,
# --args with a {param} no shape gives, a --step line without a statement, and a baseline nvcc
# rejects. Each ends in a short message that names the file
# (and line where there is one) or the flag, with the exit status of its CUCO_ERR_* code
# (src/util/error.h), and writes nothing: no package folder, no *.lift-* folder beside it. And
# `cuco fastpath F.cc` on an ordinary program says to run `cuco init NAME --from F.cc`.
#
#   bash tests/lift/bad_input.sh <path-to-cuco>   (CUCO_HOME: the source tree)
#
# Needs libclang (skipped, exit 77, without it); no GPU, and nvcc only for the last case.
# Prints one line per failure and "N passed, N failed"; exits 1 on any failure.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/lift/bad_input.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
FIX=$SRC/tests/fixtures/lift
export CUCO_HOME=${CUCO_HOME:-$SRC}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-liftbad.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

# the exit statuses (one per kind of failure, src/cli/exit.c; bad input, malformed or invalid, is 4)
E_PARSE=4 E_INVALID=4 E_USAGE=5 E_COMPILE=8 E_UNSUPPORTED=13 E_NOT_FOUND=14

# libclang: a program that lifts, without the compile
"$CUCO" init probe --from "$FIX/plan/step_warmup.cu" --no-compile -o "$TMP/probe" >"$TMP/probe.out" 2>&1
if grep -q "libclang" "$TMP/probe.out" && [ ! -d "$TMP/probe" ]; then
	echo "SKIPPED: $(grep -m1 libclang "$TMP/probe.out")"
	exit 77
fi
rm -rf "$TMP/probe"

pass=0
fail=0
: >"$TMP/empty.cu"
printf '\177ELF\002\001\001\000\000\000ncclAllReduce(' >"$TMP/binary.cu"
cp "$FIX/plan/refuse_no_nccl.cu" "$TMP/no_nccl.cu"

# refused NAME WANT_RC MAX_LINES ARGS... -- TEXT...: `cuco init x ARGS -o out/x` exits WANT_RC,
# says each TEXT in at most MAX_LINES lines on stderr and nothing on stdout, and leaves out/
# empty (and the working folder holding only what was there).
refused() {
	local name=$1 want=$2 max=$3 why= t args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	rm -rf "$TMP/out" "$TMP/x"
	mkdir "$TMP/out"
	ls -A "$TMP" >"$TMP/before"
	"$CUCO" init x "${args[@]}" -o "$TMP/out/x" >"$TMP/stdout" 2>"$TMP/stderr"
	local rc=$?
	[ "$rc" -eq "$want" ] || why="exit status $rc, expected $want"
	for t in "$@"; do
		grep -qF -- "$t" "$TMP/stderr" || why="${why:+$why; }no '$t'"
	done
	local n
	n=$(wc -l <"$TMP/stderr")
	[ "$n" -ge 1 ] && [ "$n" -le "$max" ] || why="${why:+$why; }$n lines on stderr, expected 1 to $max"
	[ -s "$TMP/stdout" ] && why="${why:+$why; }output on stdout"
	[ -z "$(ls -A "$TMP/out")" ] || why="${why:+$why; }wrote $(ls -A "$TMP/out" | tr '\n' ' ')"
	ls -A "$TMP" | grep -v '^\(stdout\|stderr\|before\|state\)$' | diff -q - <(grep -v \
		'^\(stdout\|stderr\|before\|state\)$' "$TMP/before") >/dev/null ||
		why="${why:+$why; }the working folder changed"
	if [ -n "$why" ]; then
		fail=$((fail + 1))
		printf 'FAIL: %s: %s\n' "$name" "$why"
		sed 's/^/    /' "$TMP/stdout" "$TMP/stderr" | head -20
	else
		pass=$((pass + 1))
	fi
}

refused "a .txt file" $E_INVALID 1 --from "$FIX/bad/notes.txt" -- \
	"cuco: --from $FIX/bad/notes.txt: not a C, C++ or CUDA source" \
	"name the program's main file or its folder"
refused "a .json file" $E_INVALID 1 --from "$FIX/bad/config.json" -- \
	"cuco: --from $FIX/bad/config.json: not a C, C++ or CUDA source"
refused "an empty .cu" $E_INVALID 1 --from empty.cu -- "cuco: --from empty.cu: the file is empty"
refused "binary bytes in a .cu" $E_PARSE 1 --from binary.cu -- \
	"cuco: --from binary.cu: a binary file, not C, C++ or CUDA source"
refused "a program without NCCL calls" $E_NOT_FOUND 1 --from no_nccl.cu -- \
	"cuco: no_nccl.cu: no NCCL collective or send/receive in the program"
refused "a program that does not compile" $E_COMPILE 2 --from "$FIX/bad/undeclared.cu" -- \
	"cuco: undeclared.cu:$(grep -n 'stream);' "$FIX/bad/undeclared.cu" | cut -d: -f1):58: error: use of undeclared identifier 'stream'" \
	"the program does not compile as given: pass its include folders"
refused "a --from that does not exist" $E_NOT_FOUND 1 --from "$TMP/nothere.cu" -- \
	"cuco: --from $TMP/nothere.cu: No such file or directory"
refused "a folder without sources" $E_NOT_FOUND 1 --from "$TMP/out" -- \
	"cuco: $TMP/out holds no C, C++ or CUDA source (.c, .cc, .cpp, .cxx, .cu)"
refused "--shape without a value" $E_USAGE 2 --from "$FIX/plan/step_warmup.cu" --shape small:nx -- \
	"cuco init: --shape small:nx: expected NAME:PARAM=VALUE,..." "(see 'cuco init --help')"
refused "--shape with a value not a number" $E_USAGE 2 --from "$FIX/plan/step_warmup.cu" \
	--shape small:nx=abc -- "--shape small:nx=abc: 'abc' is not a non-negative integer"
refused "--shape with a bad name" $E_USAGE 2 --from "$FIX/plan/step_warmup.cu" \
	--shape 'sm all:nx=1' -- "--shape sm all:nx=1: the name takes letters, digits"
refused "--args {n} without a shape" $E_USAGE 2 --from "$FIX/plan/step_warmup.cu" \
	--args '-n {n}' -- "cuco init: --args uses {n}: give its value with --shape NAME:n=VALUE"
refused "--args {n} that the shape does not give" $E_USAGE 2 --from "$FIX/plan/step_warmup.cu" \
	--args '-n {n}' --shape small:m=3 -- "cuco init: --args uses {n}, which --shape small does not give"
refused "--step naming no statement" $E_INVALID 1 --from "$FIX/plan/step_warmup.cu" \
	--step step_warmup.cu:1 -- "cuco: step_warmup.cu:1: --step names no statement that starts on this line"
# a failure after the package was written beside -o: its folder is removed
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
	PATH=$PATH:/usr/local/cuda/bin CUCO_ARCH=sm_1 refused "a baseline nvcc rejects" $E_COMPILE 1 \
		--from "$FIX/plan/step_warmup.cu" -- "cuco: the lifted baseline does not compile"
fi

# cuco fastpath on an ordinary program sends it to cuco init --from
"$CUCO" fastpath "$FIX/bad/ordinary.cc" --no-compile -o "$TMP/seed.cu" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
why=
[ "$rc" -eq "$E_UNSUPPORTED" ] || why="exit status $rc, expected $E_UNSUPPORTED"
grep -qF "cuco init NAME --from $FIX/bad/ordinary.cc (then cuco fastpath ./NAME)" "$TMP/stderr" ||
	why="${why:+$why; }no 'cuco init NAME --from'"
[ -e "$TMP/seed.cu" ] && why="${why:+$why; }a seed was written"
if [ -n "$why" ]; then
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "cuco fastpath on an ordinary .cc" "$why"
	sed 's/^/    /' "$TMP/stderr" | head -5
else
	pass=$((pass + 1))
fi

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
