#!/usr/bin/env bash
# reference.sh - the harness with a reference program, on one or two GPUs: a
# workload without a reference of its own whose generator communicates
# (tests/gpu/reference/workload.cu, attached to the harness's communicator),
# and programs built from one source (tests/gpu/reference/program.cu), each
# verified against the outputs of the "good" one run as --reference-program.
# Checks: an inout put back before every verified run (good passes three
# verifications), the exact compare (one ulp off fails it, passes the close
# one), non-finite classes, i8 and f64 tensors, a tensor's own tolerance, the
# run failing without --reference-program and with a reference program that
# fails, both at stage "reference".
#   GPU node: tests/gpu/reference.sh   (writes $OUT/reference/*; exits 1 on any mismatch),
#   or ctest -L gpu (exit 77, skipped, without a GPU)
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${CUCO_BUILD:-build}
gpus=$($B/cuco-harness --count-gpus 2>/dev/null || echo 0)
if [ "$gpus" -lt 1 ]; then
	echo "reference.sh: no CUDA GPU here: skipped"
	exit 77
fi
. scripts/gpu-env.sh
R=$((gpus >= 2 ? 2 : 1))
OUT=${OUT:-$(mktemp -d)}
O=${OUT:?}/reference
mkdir -p "$O"
harness() { # name, harness arguments...: the result line into $O/name.json
	local name=$1
	shift
	timeout 300 $B/cuco-harness --workload-so $B/reftest_workload.so --workload reftest \
		--ranks $R --timeout 60 --warmup 2 --iters 5 --bench-seconds 0.01 --verify-runs 3 \
		--no-samples "$@" >"$O/$name.out" 2>"$O/$name.err"
	echo "## $name: rc $?"
	grep '^{' "$O/$name.out" | tail -1 >"$O/$name.json"
}
progs=()
for p in good ulp nonfinite class stale i8 f64 tol; do
	progs+=(--program "$p=$B/reftest_$p.so")
done
harness exact --shape exact --param n=4096 --param exact=1 --reference-program $B/reftest_good.so "${progs[@]}"
harness close --shape close --param n=4096 --param exact=0 --reference-program $B/reftest_good.so "${progs[@]}"
harness noref --shape close --param n=4096 --param exact=0 --program good=$B/reftest_good.so
harness badref --shape close --param n=4096 --param exact=0 --reference-program $B/reftest_fail.so \
	--program good=$B/reftest_good.so
python3 - "$O" "$R" <<'PY'
import json, sys
out, ranks = sys.argv[1], int(sys.argv[2])
bad = 0
def check(what, ok, got):
    global bad
    bad += not ok
    print("%-44s %s%s" % (what, "ok" if ok else "MISMATCH", "" if ok else "   got: " + str(got)[:160]))
def load(name):
    try:
        return json.load(open("%s/%s.json" % (out, name)))
    except Exception as e:
        return {"error": "no result line: %s" % e}
# (status, a phrase its error must hold, mismatched or None) per program and shape
want = {
    "exact": {
        "good": ("ok", None, 0),
        "ulp": ("wrong", "elements of 'e' not bitwise equal (exact compare)", ranks),
        "nonfinite": ("wrong", "of 'e' not bitwise equal", ranks),
        "class": ("wrong", "of 'e' not bitwise equal", ranks),
        "stale": ("wrong", "of 'acc' (close compare", 0),
        "i8": ("wrong", "elements of 'q' not bitwise equal", ranks),
        "f64": ("wrong", "of 'y' (close compare", 0),
        "tol": ("wrong", "of 'c' (close compare, tolerance 0.001)", 0),
    },
    "close": {
        "good": ("ok", None, 0),
        "ulp": ("ok", None, 0),
        "nonfinite": ("wrong", "of 'e' (close compare", 0),
        "class": ("wrong", "of 'e' (close compare", 0),
        "stale": ("wrong", "of 'acc' (close compare", 0),
        "i8": ("wrong", "elements of 'q' not bitwise equal", ranks),
        "f64": ("wrong", "of 'y' (close compare", 0),
        "tol": ("wrong", "of 'c' (close compare, tolerance 0.001)", 0),
    },
}
for shape, progs in want.items():
    r = load(shape)
    check("%s: result line ok, reference program" % shape,
          r.get("status") == "ok" and r.get("reference") == "program", r)
    seen = {p.get("name"): p for p in r.get("programs", [])}
    for name, (status, phrase, mism) in progs.items():
        p = seen.get(name, {})
        err = p.get("error", "")
        ok = p.get("status") == status and (phrase is None or phrase in err) \
            and p.get("mismatched") == mism
        check("%s: %s" % (shape, name), ok, p)
    if shape == "close":
        nf = seen.get("nonfinite", {})
        check("close: nonfinite counts one element per rank", nf.get("nonfinite") == ranks, nf)
r = load("noref")
check("no reference program: fails at stage reference",
      r.get("status") != "ok" and r.get("stage") == "reference" and r.get("program") == "", r)
r = load("badref")
check("failing reference program: stage reference",
      r.get("status") == "run" and r.get("stage") == "reference"
      and "reference program" in r.get("error", "") and "always fails" in r.get("error", ""), r)
sys.exit(1 if bad else 0)
PY
