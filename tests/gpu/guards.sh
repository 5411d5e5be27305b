#!/usr/bin/env bash
# guards.sh - the harness's guards on a program's numbers, on ONE GPU: programs
# that try to gain fitness without doing the work (tests/gpu/programs/guard.cuh)
# each run through cuco bench gemm_allgather --ranks 1 beside an honest one, and
# each must get the status, the reason and the failed check docs/sandbox.md
# promises. The persisting-L2 program runs before the honest one, which must
# still verify (the harness puts L2 back between programs) and pass every check.
# The runs are pinned (--warmup 5 --iters 21 --bench-seconds 0) so that the last
# timed run is one every5.cu skips (its header says why). A second bench runs the
# program that forges its results on stdout and on its rank's result pipe (forge.cu)
# beside an honest one: it is refused, and the honest one keeps its result.
#   GPU node: tests/gpu/guards.sh   (writes $OUT/guards/*; exits 1 on any mismatch),
#   or ctest -L gpu (exit 77, skipped, without a GPU)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${CUCO_BUILD:-build-dev}
if [ "$($B/cuco-harness --count-gpus 2>/dev/null || echo 0)" -lt 1 ]; then
	echo "guards.sh: no CUDA GPU here: skipped"
	exit 77
fi
. scripts/gpu-env.sh
OUT=${OUT:-$(mktemp -d)}
export CUCO_STATE=${CUCO_STATE:-/tmp/cuco-guards-state}
O=${OUT:?}/guards
mkdir -p "$O" "$CUCO_STATE"
P=tests/gpu/programs
timeout 600 $B/cuco bench gemm_allgather --ranks 1 --shape ${SHAPE:-2048} --store "$CUCO_STATE/g.db" \
	--warmup 5 --iters 21 --bench-seconds 0 --verify-runs 3 \
	--json "$O/guards.json" --program $P/init_work.cu --program $P/replay.cu \
	--program $P/side_stream.cu --program $P/l2_window.cu --program $P/poison_skip.cu \
	--program $P/stale_recv.cu --program $P/every5.cu --program $P/drop_barrier.cu \
	--program $P/honest.cu >"$O/bench.log" 2>&1
echo "## cuco bench rc $?"
python3 - "$O/guards.json" "$CUCO_STATE/g.db" <<'PY'
import json, sqlite3, sys
# program: (status, a phrase its error must hold, the check that failed)
want = {
    "baseline": ("ok", None, None),
    "init_work.cu": ("wrong", "output differs from the reference", "first"),
    "replay.cu": ("wrong", "repeats an earlier run's", "back_to_back"),
    "side_stream.cu": ("wrong", "stream it does not join", "first"),
    "l2_window.cu": ("run", "persisting-L2 limit", "first"),
    "poison_skip.cu": ("wrong", "outputs were not poisoned first", "unpoisoned"),
    "stale_recv.cu": ("wrong", "the last timed run's output differs", "last_timed"),
    "every5.cu": ("wrong", "the last timed run's output differs", "last_timed"),
    "drop_barrier.cu": ("wrong", "of 4 back-to-back runs differs", "back_to_back"),
    "honest.cu": ("ok", None, None),
}
# checks an honest program passes with --verify-runs 3: first, last_timed, back_to_back,
# two fresh, unpoisoned
ALL_CHECKS = 6
seen, bad = {}, 0
for shape in json.load(open(sys.argv[1]))["shapes"]:
    for h in shape.get("harness", []):
        for p in h.get("programs", []):
            seen.setdefault(p["name"], p)
        if h.get("program") and h.get("status") != "ok":  # the one that took its group down
            seen.setdefault(h["program"], {"status": h["status"], "error": h.get("error", "")})
# the reason as the store keeps it (evaluations.error), beside the result line's
stored = {}
try:
    db = sqlite3.connect(sys.argv[2])
    run = db.execute("select max(run_id) from evaluations").fetchone()[0]
    for name, err in db.execute(
            "select p.name, e.error from evaluations e join programs p on p.id = e.program_id"
            " where e.run_id = ?", (run,)):
        stored[name] = err or ""
except Exception as e:  # a store without these columns: reported, not fatal
    print("store: %s" % e)
print("%-16s %-7s %-7s %-13s %s" % ("program", "want", "got", "check", "error"))
for name, (status, phrase, check) in want.items():
    p = seen.get(name, {})
    err = p.get("error", "")
    ok = p.get("status") == status and (phrase is None or phrase in err) \
        and p.get("failed_check") == check
    if status == "ok":
        ok = ok and p.get("checks") == ALL_CHECKS
    if phrase is not None and stored:
        ok = ok and phrase in stored.get(name, "")
    bad += not ok
    print("%-16s %-7s %-7s %-13s %s%s" % (name, status, p.get("status", "-"),
                                        p.get("failed_check", "-"), err[:150],
                                        "" if ok else "   <- MISMATCH"))
sys.exit(1 if bad else 0)
PY
rc=$?
timeout 300 $B/cuco bench gemm_allgather --ranks 1 --shape ${SHAPE:-2048} --store "$CUCO_STATE/f.db" \
	--warmup 2 --iters 5 --bench-seconds 0 --json "$O/forge.json" --program $P/forge.cu \
	--program $P/honest.cu >"$O/forge.log" 2>&1
echo "## cuco bench (forge) rc $?"
python3 - "$O/forge.json" <<'PY'
import json, sys
want = {"forge.cu": ("run", "result channel"), "honest.cu": ("ok", None)}
seen, bad = {}, 0
for shape in json.load(open(sys.argv[1]))["shapes"]:
    for h in shape.get("harness", []):
        for p in h.get("programs", []):
            seen.setdefault(p["name"], p)
        if h.get("program") and h.get("status") != "ok":  # the one that took its group down
            seen.setdefault(h["program"], {"status": h["status"], "error": h.get("error", "")})
for name, (status, phrase) in want.items():
    p = seen.get(name, {})
    err = p.get("error", "")
    ok = p.get("status") == status and (phrase is None or phrase in err)
    bad += not ok
    print("%-14s %-8s %-8s %s%s" % (name, status, p.get("status", "-"), err[:110], "" if ok else "   <- MISMATCH"))
sys.exit(1 if bad else 0)
PY
rc2=$?
[ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ]
