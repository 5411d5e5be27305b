#!/usr/bin/env bash
# packages.sh - scenario test of a package `cuco init` made, used as cuco's own workloads are,
# on a machine without GPUs: a bare name that is a folder here is that package; realize
# renders its fast-path seed's directive through the package's own template; bench stores
# the package's folder with its run (--json written, also with --compile-only); evolve
# takes the package's template without --template, and --resume finds the package from
# another folder; export needs no --workload. Then `cuco cache` shows and cleans the
# compile cache, and misuse gets one exit status and a did-you-mean.
#
#   bash tests/packages.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc (one compile-only bench of the package) and the sqlite3 CLI; exits 77
# (skipped) without them. Prints one line per failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/packages.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
for tool in "${NVCC:-nvcc}" sqlite3 python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "packages: $tool not found: skipped" >&2
		exit 77
	fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-packages.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
# a stand-in harness whose probe finds two GPUs and whose count then finds none: evolve
# stores its run and fails at its first batch (tests/fixtures/cli/cuco-harness)
STANDIN=$HERE/fixtures/cli/cuco-harness
cd "$TMP" || exit 2

. "$HERE/lib/check.sh"

# ---- the package, by a bare name ------------------------------------------------
check "init mywork" 0 "wrote ./mywork" -- "$CUCO" init mywork --collective allreduce --params B,S,H -o ./mywork
check "fastpath mywork (bare name)" 0 "seed written to $TMP/seed.cu" -- \
	"$CUCO" fastpath mywork -o "$TMP/seed.cu" --no-compile
check "realize mywork: the seed's directive" 0 -- \
	"$CUCO" realize mywork --directive-file "$TMP/seed.cu" -o "$TMP/realized.cu"
expect "realize: the program begins with the directive" \
	"$(head -c 19 "$TMP/realized.cu" 2>/dev/null)" = "// cuco-directive: "
check "realize ./mywork: a variant" 0 -- "$CUCO" realize ./mywork \
	--directive-file mywork/variants/stream_overlap_ce.json -o "$TMP/variant.cu"
cmp -s "$TMP/variant.cu" mywork/stream_overlap_ce.cu && pass=$((pass + 1)) ||
	failed "realize ./mywork: a variant" "differs from the program init realized"
check "realize: no such workload" 14 'no workload "nosuch"' -- \
	"$CUCO" realize nosuch --directive-file "$TMP/seed.cu"
# a seed's directive sets only the seed's knobs: those the template uses without a
# default of its own take the design space's, said in one line
check "fastpath gemm_allgather" 0 -- "$CUCO" fastpath gemm_allgather -o "$TMP/ga.cu" --no-compile
check "realize gemm_allgather: the seed's directive" 0 \
	"knobs the directive leaves unset take their defaults: chunks=4" -- \
	"$CUCO" realize gemm_allgather --directive-file "$TMP/ga.cu" -o "$TMP/ga_realized.cu"

# ---- bench: the package's folder kept with the run; --json with --compile-only ------
DB=$TMP/bench.db
check "bench mywork --compile-only --json" 0 "compile stage done for mywork" "compile seed" \
	"compile workload" -- "$CUCO" bench mywork --compile-only --json "$TMP/b.json" --store "$DB"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "done" and d["shapes"] == [], d
names = sorted(c["name"] for c in d["compile"])
assert names == ["baseline", "comm", "compute", "seed"], names
assert all(c["status"] == "ok" for c in d["compile"]), d["compile"]
' "$TMP/b.json" && pass=$((pass + 1)) || failed "bench --json" "not the compile stage of 4 programs"
expect "bench: the run keeps the package's folder" \
	"$(sqlite3 "$DB" 'SELECT package FROM runs WHERE id = 1')" = "$TMP/mywork"
check "show run: the package" 0 "package: $TMP/mywork" "# run " -- "$CUCO" show run 1 --store "$DB"

# ---- export: the stored seed, its package found through its run -------------------
mkdir -p "$TMP/elsewhere"
id=$(sqlite3 "$DB" "SELECT id FROM programs WHERE origin = 'seed' LIMIT 1")
cd "$TMP/elsewhere" && run "$CUCO" export program "$id" -o "$TMP/ex" --store "$DB"; cd "$TMP" || exit 2
if [ "$rc" -eq 0 ] && cmp -s "$TMP/ex/src/workload.cu" mywork/workload.cu; then
	pass=$((pass + 1))
else
	failed "export without --workload, from another folder" "exit $rc or another workload.cu"
fi

# ---- evolve: the package's template without --template; --resume from elsewhere -----
EDB=$TMP/evolve.db
check "evolve mywork (no --template)" 15 "mywork/template.cu.in" "needs 2 CUDA GPUs" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve mywork --budget-evals 2 --store "$EDB"
expect "evolve: the run keeps the package's folder" \
	"$(sqlite3 "$EDB" 'SELECT package FROM runs WHERE id = 1')" = "$TMP/mywork"
cd "$TMP/elsewhere" && run env CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 1 --store "$EDB"; cd "$TMP" || exit 2
if [ "$rc" -eq 15 ] && printf '%s\n' "$err" | grep -qF "$TMP/mywork/template.cu.in"; then
	pass=$((pass + 1))
else
	failed "evolve --resume from another folder" "exit $rc (expected 15) or not the package's template"
fi
# the folder now holds another workload: refused, naming both
mv mywork mywork.kept && "$CUCO" init other -o ./mywork >/dev/null 2>&1
check "evolve --resume: the folder holds another workload" 14 "holds workload other, not mywork" -- \
	env CUCO_HARNESS="$STANDIN" "$CUCO" evolve --resume 1 --store "$EDB"
rm -rf mywork && mv mywork.kept mywork

# ---- cuco cache ----------------------------------------------------------------
check "cache" 0 "cache:    $CUCO_STATE/cache" "entries:" -- "$CUCO" cache
n=$(printf '%s\n' "$out" | sed -n 's/^entries:  \([0-9]*\) .*/\1/p')
expect "cache: the bench's programs are entries" "${n:-0}" -ge 5
check "cache clean --older-than 1: nothing that old" 0 "removed 0 of $n" -- \
	"$CUCO" cache clean --older-than 1
one=$(ls "$CUCO_STATE/cache" | grep '\.so$' | head -n 1)
touch -d '3 days ago' "$CUCO_STATE/cache/${one%.so}".*
check "cache clean --older-than 2: the old entry" 0 "removed 1 of $n" -- \
	"$CUCO" cache clean --older-than 2
expect "cache clean: its files are gone" "$(ls "$CUCO_STATE/cache" | grep -c "^${one%.so}")" -eq 0
check "cache clean" 0 "removed $((n - 1)) of $((n - 1))" "0 left" -- "$CUCO" cache clean
check "cache: empty" 0 "entries:  0 compiled programs" -- "$CUCO" cache
check "cache --older-than without clean" 5 "--older-than is for 'cuco cache clean'" -- \
	"$CUCO" cache --older-than 3
check "cache clean --older-than x" 5 "--older-than x" -- "$CUCO" cache clean --older-than x

# ---- one exit status per kind; did-you-mean -------------------------------------
check "a mistyped command" 5 "'evolv' is not a cuco command. Did you mean 'evolve'?" -- "$CUCO" evolv
check "a mistyped flag" 5 "unknown option --shpe; did you mean --shape?" -- \
	"$CUCO" bench mywork --shpe small
check "cuco --help: the exit status table" 0 "exit status (the same in every command):" \
	"130  interrupted" -- "$CUCO" --help

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
