#!/usr/bin/env bash
# init_export.sh - scenario test of `cuco init` and `cuco export` on a machine
# without GPUs: misuse is refused with the flag, file and line; a package of
# every collective is written, loads, names its template's realised programs
# and, for a pull (allreduce) and a push (allgather) collective, compiles as
# generated (the manifest's programs, the fast-path seed and realised
# programs of both backends, both placements and both sync scopes); evolve
# accepts the package's template and seed; --from on examples/mpi_nccl_rmsnorm.cu
# lifts its kernel and its ncclAllReduce and reports with file:line what it
# did not place (its ncclBroadcast); a stored program is exported and its
# CMake project, configured without NCCL_HOME, finds the NCCL cuco's own build
# found (the shared CucoFindNccl.cmake) and builds with nvcc; with NCCL_HOME
# set, the copy there is the one taken.
#
#   bash tests/init_export.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc and cmake. Prints one line per failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/init_export.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
BUILD_DIR=$(dirname "$CUCO") # cuco's CMake build: the NCCL it found
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-init.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

. "$HERE/lib/check.sh"

# ---- misuse: refused, with what and where -----------------------------------
check "init without a name" 5 "which name?" -- "$CUCO" init
check "init a bad name" 5 "NAME a/b: only letters" -- "$CUCO" init a/b
check "init a bad collective" 5 "--collective broadcast: expected allreduce" -- "$CUCO" init x --collective broadcast
check "init one parameter" 5 "--params M: give at least two names" -- "$CUCO" init x --params M
check "init a bad parameter" 5 "'2N' is not a parameter name" -- "$CUCO" init x --params M,2N
check "init a parameter twice" 5 "M is named twice" -- "$CUCO" init x --params M,N,M
check "init --from a missing file" 14 "--from $TMP/none.cu" -- "$CUCO" init x --from "$TMP/none.cu"
printf '__global__ void k(float *y) { y[0] = 1; }\nint main() { return 0; }\n' >"$TMP/nocoll.cu"
check "init --from without a collective" 14 "no NCCL collective" -- \
	"$CUCO" init x --from "$TMP/nocoll.cu" -o "$TMP/nocoll"
[ ! -e "$TMP/nocoll" ] && pass=$((pass + 1)) || failed "init --from without a collective" "it wrote $TMP/nocoll"
mkdir -p "$TMP/taken" && echo '{}' >"$TMP/taken/manifest.json"
check "init over a package" 4 "already holds a workload" -- "$CUCO" init x -o "$TMP/taken"
check "export without -o" 5 "-o DIR" -- "$CUCO" export program 1
check "export a file without --workload" 5 "needs --workload" -- "$CUCO" export p.cu -o "$TMP/e0"
check "export a bad id" 5 "program x: expected an integer" -- "$CUCO" export program x -o "$TMP/e0"
check "export without a store" 14 "no store at $TMP/none.db" -- "$CUCO" export run 1 -o "$TMP/e0" --store "$TMP/none.db"

# ---- every collective: a package that loads, with its template realised ----
for c in allreduce allgather reducescatter alltoall sendrecv; do
	check "init $c" 0 "wrote ./p_$c: workload p_$c ($c; params B,S,H; f32)" -- \
		"$CUCO" init "p_$c" --collective "$c" --params B,S,H -o "./p_$c" || continue
	for f in manifest.json workload.cu host.cu common.cuh compute.cuh compute_only.cu comm_only.cu \
		template.cu.in sequential_lsa.cu sequential_ce.cu stream_overlap_lsa.cu stream_overlap_ce.cu \
		stream_overlap_lsa_cta.cu variants/stream_overlap_ce.json; do
		[ -s "p_$c/$f" ] || failed "init $c" "no $f"
	done
	if grep -q '@[A-Z_]*@\|//@if\|//@endif' p_$c/*.cu p_$c/*.cuh p_$c/template.cu.in ||
		grep -q '{{' p_$c/stream_overlap_ce.cu; then
		failed "init $c" "a placeholder or section marker is left"
	fi
	grep -q '^#define CUCO_PLACEMENT CUCO_PLACEMENT_stream_overlap$' "p_$c/stream_overlap_lsa.cu" &&
		grep -q '^#define CUCO_BACKEND CUCO_BACKEND_ce$' "p_$c/sequential_ce.cu" &&
		grep -q '^#define CUCO_SYNC_SCOPE CUCO_SYNC_SCOPE_cta ' "p_$c/stream_overlap_lsa_cta.cu" ||
		failed "init $c" "the realised programs are not the ones they are named after"
	check "bench ./p_$c loads it" 5 "workload p_$c has no such shape (small, medium, large)" -- \
		"$CUCO" bench "./p_$c" --shape nosuch --compile-only
done
check "shape rule: rows split among ranks" 4 "B = 3 does not divide among 2 ranks" "the rows are split among the ranks" -- \
	"$CUCO" bench ./p_allgather --shape B=3,S=1,H=1024 --ranks 2 --compile-only
check "shape rule: row width" 5 "H = 6 is not a multiple of 4" -- \
	"$CUCO" bench ./p_allreduce --shape B=8,S=1,H=6 --compile-only

# ---- --from: the program lifted (docs/your-own-program.md) ------------------
EX=$CUCO_HOME/examples/mpi_nccl_rmsnorm.cu
check "init --from" 0 "step: mpi_nccl_rmsnorm.cu:82-85 in main (statements)" \
	"ncclBroadcast (mpi_nccl_rmsnorm.cu:82), ncclAllReduce (mpi_nccl_rmsnorm.cu:85)" \
	"seed: compiles, 2 calls transformed" -- \
	"$CUCO" init rms --from "$EX" --args "{rows} {width}" --shape small:rows=256,width=1024 -o ./rms
grep -q '^#line 27 "mpi_nccl_rmsnorm.cu"' rms/host.cu && grep -q "__global__ void rmsnorm_rows" rms/host.cu &&
	grep -q "rmsnorm_rows<<<rows, 256, 0, s>>>(x, w, y, width);" rms/host.cu &&
	grep -q "/\*cuco:step\*/ncclAllReduce(y, z, n, ncclFloat32, ncclSum, comm, s)" rms/host.cu &&
	grep -q '"reference": {' rms/manifest.json &&
	pass=$((pass + 1)) || failed "init --from" "the kernel, its launch or the step's NCCL call is not in the package"
sed 's/ncclFloat32, ncclSum/ncclBfloat16, ncclMax/' "$EX" >"$TMP/bf16max.cu"
check "init --from: a bf16 max" 0 "seed: compiles, 2 calls transformed" -- \
	"$CUCO" init bm --from "$TMP/bf16max.cu" -o ./bm

# ---- compiles as generated: a pull and a push collective, the lifted package --
for c in allreduce allgather; do
	check "bench ./p_$c --compile-only" 0 "compile stage done for p_$c" -- \
		"$CUCO" bench "./p_$c" --compile-only --program "p_$c/sequential_ce.cu" \
		--program "p_$c/stream_overlap_lsa.cu" --program "p_$c/stream_overlap_lsa_cta.cu"
	for x in baseline compute comm seed sequential_ce.cu stream_overlap_lsa.cu stream_overlap_lsa_cta.cu; do
		printf '%s\n' "$err" | grep -q "compile $x *ok" || failed "bench ./p_$c --compile-only" "no 'compile $x ok'"
	done
done
check "bench ./rms --compile-only (lifted)" 0 "compile stage done for rms" -- \
	"$CUCO" bench ./rms --compile-only
printf '%s\n' "$err" | grep -q "compile baseline *ok" && printf '%s\n' "$err" | grep -q "compile seed *ok" ||
	failed "bench ./rms" "the lifted package or its seed does not compile"

# ---- evolve takes the package's template and its fast-path seed (no GPU here: it stops there;
# a stand-in harness finds two GPUs for evolve's check, then none for the run) ----
if ! nvidia-smi -L >/dev/null 2>&1; then
	check "evolve with the package's template" 15 "./p_allreduce/template.cu.in" "needs 2 CUDA GPUs" -- \
		env CUCO_HARNESS="$HERE/fixtures/cli/cuco-harness" "$CUCO" evolve ./p_allreduce --template ./p_allreduce/template.cu.in --generations 1 \
		--store "$TMP/evolve.db"
fi

# ---- export: a stored program, its CMake project built with nvcc -------------
id=$(sqlite3 "$CUCO_STORE" "select id from programs where workload = 'p_allreduce' and origin = 'seed' limit 1" 2>/dev/null)
if [ -z "$id" ]; then
	failed "export" "no stored seed of p_allreduce (sqlite3 missing?)"
else
	run_id=$(sqlite3 "$CUCO_STORE" "select run_id from programs where id = $id")
	check "export a run nothing was timed in" 14 "run $run_id has no verified, timed program" -- \
		"$CUCO" export run "$run_id" -o "$TMP/ex0"
	# the run that stored it keeps the package's folder: no --workload again
	check "export a program of a package outside cuco" 0 "exported program $id (seed, seed) of workload p_allreduce" -- \
		"$CUCO" export program "$id" -o "$TMP/ex0"
	check "export program $id" 0 "exported program $id (seed, seed) of workload p_allreduce" -- \
		"$CUCO" export program "$id" --workload ./p_allreduce -o "$TMP/ex"
	check "export into a used directory" 4 "not empty" -- \
		"$CUCO" export program "$id" --workload ./p_allreduce -o "$TMP/ex"
	for f in src/program.cu src/workload.cu src/common.cuh runtime/cuco_export.h runtime/cuco_export.cu \
		runtime/shapes.h examples/mpi_example.cu examples/torch_example.py include/cuco/program.h \
		include/cuco_dev/lsa.cuh CMakeLists.txt; do
		[ -s "$TMP/ex/$f" ] || failed "export" "no $f"
	done
	cmp -s "$TMP/ex/src/workload.cu" p_allreduce/workload.cu || failed "export" "workload.cu differs"
	grep -q '{"medium", {4096, 1, 4096}}' "$TMP/ex/runtime/shapes.h" || failed "export" "shapes.h lacks the shapes"
	[ -s "$TMP/ex/CucoFindNccl.cmake" ] && cmp -s "$TMP/ex/CucoFindNccl.cmake" "$CUCO_HOME/share/cmake/CucoFindNccl.cmake" ||
		failed "export" "no CucoFindNccl.cmake, or not cuco's own"
	# configured as the README says, no NCCL_HOME: it finds the NCCL cuco's own build found
	if env -u NCCL_HOME cmake -S "$TMP/ex" -B "$TMP/ex/build" >"$TMP/cmake.log" 2>&1 &&
		cmake --build "$TMP/ex/build" -j2 >>"$TMP/cmake.log" 2>&1 &&
		[ -f "$TMP/ex/build/libcuco_export.so" ] && [ -f "$TMP/ex/build/libcuco_export_check.so" ] &&
		nm -D "$TMP/ex/build/libcuco_export.so" | grep -q ' T cuco_export_run$'; then
		pass=$((pass + 1))
	else
		out=$(tail -n 20 "$TMP/cmake.log")
		failed "export: the CMake project builds" "cmake or the build failed"
	fi
	cache_var() { sed -n "s|^$2:[A-Z]*=||p" "$1/CMakeCache.txt"; }
	if [ -f "$BUILD_DIR/CMakeCache.txt" ] && [ -f "$TMP/ex/build/CMakeCache.txt" ]; then
		[ -n "$(cache_var "$BUILD_DIR" NCCL_LIBRARY)" ] &&
			[ "$(cache_var "$TMP/ex/build" NCCL_INCLUDE_DIR)" = "$(cache_var "$BUILD_DIR" NCCL_INCLUDE_DIR)" ] &&
			[ "$(cache_var "$TMP/ex/build" NCCL_LIBRARY)" = "$(cache_var "$BUILD_DIR" NCCL_LIBRARY)" ] &&
			pass=$((pass + 1)) ||
			failed "export: NCCL as cuco's build found it" \
				"the export took $(cache_var "$TMP/ex/build" NCCL_LIBRARY), cuco $(cache_var "$BUILD_DIR" NCCL_LIBRARY)"
	fi
	# NCCL_HOME first: a copy there is taken before the toolkit's (configure only)
	mkdir -p "$TMP/nccl/include" "$TMP/nccl/lib"
	cp "$(cache_var "$TMP/ex/build" NCCL_INCLUDE_DIR)"/nccl*.h "$TMP/nccl/include/" 2>/dev/null
	: >"$TMP/nccl/lib/libnccl.so"
	if NCCL_HOME=$TMP/nccl cmake -S "$TMP/ex" -B "$TMP/ex/build-home" >"$TMP/cmake-home.log" 2>&1 &&
		[ "$(cache_var "$TMP/ex/build-home" NCCL_INCLUDE_DIR)" = "$TMP/nccl/include" ] &&
		[ "$(cache_var "$TMP/ex/build-home" NCCL_LIBRARY)" = "$TMP/nccl/lib/libnccl.so" ]; then
		pass=$((pass + 1))
	else
		out=$(tail -n 20 "$TMP/cmake-home.log")
		failed "export: NCCL_HOME" "the NCCL in NCCL_HOME was not the one taken"
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
