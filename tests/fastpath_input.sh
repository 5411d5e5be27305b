#!/usr/bin/env bash
# fastpath_input.sh - scenario test of `cuco fastpath FILE`'s front door: a
# C, C++ or CUDA file without cuco_program_run (a .cc, a .cpp, a .cu without
# the ABI), an empty file and binary bytes each end in one message that says
# what the file is and the next step (cuco init NAME --from FILE), never in a
# manifest's "invalid JSON" or the transformation's "no definition of
# cuco_program_run"; a manifest .json, a package directory and a cuco program
# file still give seeds.
#
#   bash tests/fastpath_input.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# No GPU and no nvcc needed (--no-compile). Prints one line per failure and
# "N passed, N failed" last; exits 1 on any failure.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/fastpath_input.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures/fastpath
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-fpin.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

pass=0
fail=0

# door NAME WANT_RC FILE TEXT...: cuco fastpath FILE must exit WANT_RC (or
# "nonzero"), print each TEXT on stderr as one "cuco: " line, print neither
# "invalid JSON" nor "no definition of cuco_program_run" nor an --llm hint,
# and write no seed.
door() {
	local name=$1 want=$2 file=$3 t why=
	shift 3
	rm -f "$TMP/seed.cu"
	"$CUCO" fastpath "$file" --no-compile -o "$TMP/seed.cu" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$want" = nonzero ] && [ "$rc" -eq 0 ]; then
		why="exit status 0, expected nonzero"
	elif [ "$want" != nonzero ] && [ "$rc" -ne "$want" ]; then
		why="exit status $rc, expected $want"
	fi
	for t in "$@"; do
		grep -qF -- "$t" "$TMP/err" || why="${why:+$why; }no '$t'"
	done
	grep -q 'invalid JSON\|no definition of cuco_program_run\|--llm' "$TMP/err" &&
		why="${why:+$why; }the manifest reader or the transformation answered"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || why="${why:+$why; }not one line on stderr"
	[ -e "$TMP/seed.cu" ] && why="${why:+$why; }a seed was written"
	if [ -n "$why" ]; then
		fail=$((fail + 1))
		printf 'FAIL: %s: %s\n' "$name" "$why"
		sed 's/^/    /' "$TMP/out" "$TMP/err" | head -20
	else
		pass=$((pass + 1))
	fi
}

# seed NAME ARG: cuco fastpath ARG writes a seed that opens with the directive.
seed() {
	local name=$1 arg=$2
	rm -f "$TMP/seed.cu"
	if "$CUCO" fastpath "$arg" --no-compile -o "$TMP/seed.cu" >"$TMP/out" 2>"$TMP/err" &&
		head -1 "$TMP/seed.cu" | grep -q '^// cuco-directive: '; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL: %s: no seed\n' "$name"
		sed 's/^/    /' "$TMP/out" "$TMP/err" | head -20
	fi
}

NEXT="Make it a workload package first: cuco init NAME --from"
door "a .cc program" 13 "$FIX/input/allreduce_mpi.cc" \
	"allreduce_mpi.cc is an ordinary program, not a cuco program (it defines no cuco_program_run): 4 NCCL calls found at" \
	"allreduce_mpi.cc:21 (ncclAllReduce)" "$NEXT $FIX/input/allreduce_mpi.cc (then cuco fastpath ./NAME)"
door "a .cpp program" 13 "$FIX/input/trainer.cpp" "4 NCCL calls found at" "trainer.cpp:20 (ncclBroadcast)" \
	"$NEXT $FIX/input/trainer.cpp"
door "a .cu program without the ABI" 13 "$FIX/input/kernel_only.cu" "1 NCCL call found at" \
	"kernel_only.cu:14 (ncclAllGather)" "$NEXT $FIX/input/kernel_only.cu"
# a copy beside us, named without a directory: still a file, not a workload name
cp "$FIX/input/trainer.cpp" "$TMP/trainer.cpp"
door "a .cpp program by a bare name" 13 trainer.cpp "trainer.cpp is an ordinary program" "$NEXT trainer.cpp"
: >"$TMP/empty.cu"
door "an empty file" 13 "$TMP/empty.cu" "empty.cu is empty: there is no program in it to transform"
printf '\177ELF\002\001\001\000\000\000ncclAllReduce(' >"$TMP/a.out"
door "binary bytes" 4 "$TMP/a.out" "a.out is not C, C++ or CUDA source: it holds binary data"
cp "$TMP/a.out" "$TMP/prog.cu"
door "binary bytes in a .cu" 4 "$TMP/prog.cu" "prog.cu is not C, C++ or CUDA source"
door "a program of no NCCL" 13 "$CUCO_HOME/tests/gpu/modules/gemm_module.cu" "and no NCCL call was found in it"

seed "a manifest .json" "$CUCO_HOME/workloads/gemm_allgather/manifest.json"
seed "a package directory" "$CUCO_HOME/workloads/moe_layer"
seed "a workload name" gemm_allgather
seed "a cuco program file" "$FIX/ops.cu"
cp "$FIX/allgather.cu" "$TMP/allgather.cc"
seed "a cuco program in a .cc" "$TMP/allgather.cc"

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
