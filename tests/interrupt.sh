#!/usr/bin/env bash
# interrupt.sh - scenario test of how bench and evolve end, on a machine without GPUs:
# bench's exit status when every program fails to compile (and its --json written all
# the same), SIGINT during bench's compile stage and during an evolve run: each run is
# stored 'interrupted' with why (never left 'running'), cuco exits 130, and the
# interrupted evolve run continues with --resume.
#
#   bash tests/interrupt.sh <path-to-cuco>      (CUCO_HOME: the source tree)
#
# Needs nvcc and the sqlite3 CLI; exits 77 (skipped) without them. A stand-in harness
# (written below) lets evolve evaluate without GPUs. Prints one line per failure and
# "N passed, N failed" last.
set -u

if [ $# -ne 1 ]; then
	echo "usage: bash tests/interrupt.sh <path-to-cuco>" >&2
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
		echo "interrupt: $tool not found: skipped" >&2
		exit 77
	fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuco-interrupt.XXXXXX") || exit 2
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
export CUCO_STATE=$TMP/state
export CUCO_STORE=$TMP/default.db
cd "$TMP" || exit 2

pass=0
fail=0

failed() {
	fail=$((fail + 1))
	printf 'FAIL: %s: %s\n' "$1" "$2"
	[ -s "$TMP/stderr" ] && head -n 20 "$TMP/stderr" | sed 's/^/    stderr: /'
}

expect() {
	local name=$1
	shift
	if [ "$@" ]; then
		pass=$((pass + 1))
	else
		failed "$name" "[ $* ] is false"
	fi
}

# wait_for SQL DB: until the query answers nonempty and not 0 (at most 5 minutes).
wait_for() {
	local i v
	for i in $(seq 1 1500); do
		v=$(sqlite3 "$2" "$1" 2>/dev/null)
		[ -n "$v" ] && [ "$v" != 0 ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

"$CUCO" init mywork --collective allreduce --params B,S,H -o ./mywork >/dev/null 2>&1 ||
	{ echo "interrupt: cuco init failed" >&2; exit 1; }

# ---- bench: nothing compiles -> exit 8, the JSON written all the same --------------
cp -R mywork broken
for f in host.cu compute_only.cu comm_only.cu; do
	printf 'this does not compile\n' >>"broken/$f"
done
"$CUCO" bench ./broken --no-seed --compile-only --json "$TMP/broken.json" --store "$TMP/b.db" \
	>"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
expect "bench: nothing compiled: exit 8" "$rc" -eq 8
grep -q "no program compiled (3 tried)" "$TMP/stderr" && pass=$((pass + 1)) ||
	failed "bench: nothing compiled" "stderr does not say so"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "failed" and "no program compiled" in d["error"], d
assert [c["status"] for c in d["compile"]] == ["compile"] * 3, d["compile"]
' "$TMP/broken.json" && pass=$((pass + 1)) || failed "bench --json: nothing compiled" "not written as failed"
expect "bench: nothing compiled: the run failed" \
	"$(sqlite3 "$TMP/b.db" 'SELECT status FROM runs WHERE id = 1')" = failed

# ---- bench: SIGINT while it compiles ----------------------------------------------
"$CUCO" bench mywork --json "$TMP/i.json" --store "$TMP/i.db" >"$TMP/stdout" 2>"$TMP/stderr" &
pid=$!
if wait_for "SELECT count(*) FROM runs" "$TMP/i.db"; then
	sleep 1
	kill -INT "$pid"
fi
wait "$pid"
rc=$?
pid=
expect "bench SIGINT: exit 130" "$rc" -eq 130
expect "bench SIGINT: the run is interrupted" \
	"$(sqlite3 "$TMP/i.db" 'SELECT status || ": " || error FROM runs WHERE id = 1')" = \
	"interrupted: SIGINT (Ctrl-C) during the compile stage"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "interrupted", d
' "$TMP/i.json" && pass=$((pass + 1)) || failed "bench SIGINT --json" "not written as interrupted"

# ---- evolve: SIGINT between batches; --resume continues --------------------------
# a stand-in harness: its probe and count find two GPUs; each run takes a second and
# fails, so the search goes on evaluating until it is stopped
cat >"$TMP/cuco-harness" <<'EOF'
#!/usr/bin/env bash
case ${1:-} in
--count-gpus) echo 2 ;;
--probe) echo '{"harness":1,"gpus":[{"cc":"9.0","sm_count":132},{"cc":"9.0","sm_count":132}],"gin_contexts":0,"lsa":true}' ;;
*) sleep 1; echo "stand-in harness: runs nothing" >&2; exit 9 ;;
esac
EOF
chmod +x "$TMP/cuco-harness"
EDB=$TMP/e.db
CUCO_HARNESS=$TMP/cuco-harness "$CUCO" evolve mywork --islands 1 --children-per-island 2 --no-pipeline \
	--budget-evals 1000 --store "$EDB" \
	>"$TMP/stdout" 2>"$TMP/stderr" &
pid=$!
wait_for "SELECT count(*) FROM evaluations" "$EDB" && kill -INT "$pid"
wait "$pid"
rc=$?
pid=
expect "evolve SIGINT: exit 130" "$rc" -eq 130
case $(sqlite3 "$EDB" 'SELECT status || ": " || error FROM runs WHERE id = 1') in
"interrupted: stopped by SIGINT (Ctrl-C) after "*" evaluations; --resume continues it") pass=$((pass + 1)) ;;
*) failed "evolve SIGINT: the run" "not stored interrupted with why" ;;
esac
grep -q "# continue with: cuco evolve --resume 1" "$TMP/stdout" && pass=$((pass + 1)) ||
	failed "evolve SIGINT" "stdout does not say how to continue"
grep -q " elapsed" "$TMP/stderr" && pass=$((pass + 1)) ||
	failed "evolve: the live line" "no elapsed time"
before=$(sqlite3 "$EDB" 'SELECT count(*) FROM evaluations')
CUCO_HARNESS=$TMP/cuco-harness "$CUCO" evolve --resume 1 --store "$EDB" \
	>"$TMP/stdout" 2>"$TMP/stderr" &
pid=$!
wait_for "SELECT count(*) > $before FROM evaluations" "$EDB" && kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
expect "evolve --resume, SIGTERM: exit 130" "$rc" -eq 130
expect "evolve --resume: it evaluated more" "$(sqlite3 "$EDB" 'SELECT count(*) FROM evaluations')" -gt "$before"
case $(sqlite3 "$EDB" 'SELECT status || ": " || error FROM runs WHERE id = 1') in
"interrupted: stopped by SIGTERM after "*) pass=$((pass + 1)) ;;
*) failed "evolve --resume, SIGTERM: the run" "not stored interrupted by SIGTERM" ;;
esac

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
