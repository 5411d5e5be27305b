#!/usr/bin/env bash
# guards.sh - the harness's guards on a program's numbers, on ONE GPU: programs
# that try to gain fitness without doing the work (tests/gpu/programs/guard.cuh)
# each run through cuco bench gemm_allgather --ranks 1 beside an honest one, and
# each must get the status and the reason docs/sandbox.md promises. The
# persisting-L2 program runs before the honest one, which must still verify (the
# harness puts L2 back between programs); the one that forges its results on stdout
# and on its rank's result pipe (forge.cu) is refused, and the honest ones keep theirs.
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
timeout 300 $B/cuco bench gemm_allgather --ranks 1 --shape ${SHAPE:-2048} --store "$CUCO_STATE/g.db" \
	--json "$O/guards.json" --program $P/init_work.cu --program $P/replay.cu \
	--program $P/side_stream.cu --program $P/l2_window.cu --program $P/forge.cu --program $P/honest.cu \
	>"$O/bench.log" 2>&1
echo "## cuco bench rc $?"
python3 - "$O/guards.json" <<'PY'
import json, sys
want = {  # program: (status, a phrase its error must hold)
    "baseline": ("ok", None),
    "init_work.cu": ("wrong", "output differs from the reference"),
    "replay.cu": ("wrong", "repeats an earlier run's"),
    "side_stream.cu": ("wrong", "stream it does not join"),
    "l2_window.cu": ("run", "persisting-L2 limit"),
    "forge.cu": ("run", "result channel"),
    "honest.cu": ("ok", None),
}
seen, bad = {}, 0
for shape in json.load(open(sys.argv[1]))["shapes"]:
    for h in shape.get("harness", []):
        for p in h.get("programs", []):
            seen.setdefault(p["name"], p)
        if h.get("program") and h.get("status") != "ok":  # the one that took its group down
            seen.setdefault(h["program"], {"status": h["status"], "error": h.get("error", "")})
print("%-14s %-8s %-8s %s" % ("program", "want", "got", "error"))
for name, (status, phrase) in want.items():
    p = seen.get(name, {})
    err = p.get("error", "")
    ok = p.get("status") == status and (phrase is None or phrase in err)
    bad += not ok
    print("%-14s %-8s %-8s %s%s" % (name, status, p.get("status", "-"), err[:110], "" if ok else "   <- MISMATCH"))
sys.exit(1 if bad else 0)
PY
