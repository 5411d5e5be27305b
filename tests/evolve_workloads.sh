#!/usr/bin/env bash
# evolve_workloads.sh - scenario test: `cuco evolve W --ranks 1` on every shipped workload,
# on a machine without GPUs. The harness is a stand-in (tests/fixtures/farm/cuco-harness:
# one H100-like GPU, every program verified, a time derived from its name); nvcc, the
# fast path, the template, the design space and the store are real. So a seed the
# workload's design space refuses, a template that does not realise the search's first
# children, or a one-rank run stored without saying so cannot ship.
#
#   bash tests/evolve_workloads.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc. Prints one line per failure and "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/evolve_workloads.sh <path-to-cuco>" >&2
	exit 2
fi
CUCO=$1
case $CUCO in
/*) ;;
*) CUCO=$PWD/$CUCO ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
export CUCO_HOME=${CUCO_HOME:-$(dirname "$HERE")}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-evw.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export CUCO_STATE=${CUCO_TEST_STATE:-$TMP/state}
export CUCO_HARNESS=$HERE/fixtures/farm/cuco-harness CUDA_VISIBLE_DEVICES=0
cd "$TMP" || exit 2
if ! command -v nvcc >/dev/null; then
	echo "SKIP: nvcc not found"
	exit 77
fi

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

workloads=$("$CUCO" workloads 2>/dev/null | awk -F: '/^[a-z_0-9]+: / { print $1 }')
[ "$(echo "$workloads" | wc -w)" -ge 5 ] && ok || bad "cuco workloads lists $(echo $workloads)"
for w in $workloads; do
	db=$TMP/$w.db
	"$CUCO" evolve "$w" --ranks 1 --budget-evals 2 --no-recheck --store "$db" >"$TMP/$w.out" 2>"$TMP/$w.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$w: evolve --ranks 1 exited $rc: $(tail -3 "$TMP/$w.err")"
		continue
	fi
	ok
	# the seed and one child, both compiled by nvcc, run and verified (by the stand-in)
	got=$(sqlite3 "$db" "SELECT count(*) || ' ' || sum(e.status = 'ok') || ' ' || min(e.ranks) || ' ' || max(e.ranks)
		FROM evaluations e JOIN runs r ON r.id = e.run_id WHERE r.kind = 'evolve'")
	[ "$got" = "2 2 1 1" ] && ok || bad "$w: evaluations (count, ok, ranks) = $got, want 2 2 1 1"
	grep -q "^# 1 rank: communication not measured" "$TMP/$w.out" && ok ||
		bad "$w: the summary does not say the run is one rank's: $(cat "$TMP/$w.out")"
	run=$(sqlite3 "$db" "SELECT id FROM runs WHERE kind = 'evolve'")
	if "$CUCO" report "$run" --store "$db" -o "$TMP/$w-report" >/dev/null 2>"$TMP/$w.rerr"; then
		grep -q "1 rank: communication not measured" "$TMP/$w-report/run-$run.md" && ok ||
			bad "$w: the report does not say the run is one rank's"
	else
		bad "$w: report: $(cat "$TMP/$w.rerr")"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
