#!/usr/bin/env python3
"""lift_compare.py - the last table of bench/probes/lift_programs.sh: for every lifted program,
its outputs after one pass through the step, run natively (OBS/<name>/native/r0-<k>.out) and by
the harness as the package's baseline on the same inputs (OBS/<name>/cuco/r0-<k>.out), tensor by
tensor; and from `cuco bench --json` (RESULTS/<name>.bench.json) the baseline's and the seed's
verification and median time.

usage: lift_compare.py OBS RESULTS
"""
import json
import os
import sys

import numpy as np

DTYPES = {1: None, 2: np.float16, 3: np.float32, 4: np.int32, 5: np.int64, 6: np.uint8,
          7: np.float64, 8: np.int8, 9: np.uint32, 10: np.uint64}


def index(path):
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path):
        k, name, dtype, nbytes = line.split()
        rows.append((int(k), name, int(dtype), int(nbytes)))
    return rows


def as_float(raw, dtype):
    if dtype == 1:  # bf16: the high half of an f32
        u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).astype(np.float64)
    t = DTYPES.get(dtype) or np.uint8
    return np.frombuffer(raw, dtype=t).astype(np.float64)


def compare(native, cuco, dtype):
    a, b = open(native, "rb").read(), open(cuco, "rb").read()
    if len(a) != len(b):
        return "size %d vs %d" % (len(a), len(b)), False
    if a == b:
        return "bitwise", True
    x, y = as_float(a, dtype), as_float(b, dtype)
    fin = np.isfinite(x) & np.isfinite(y)
    same_nonfinite = np.sum(~np.isfinite(x) & ~np.isfinite(y))
    bad = np.sum(np.isfinite(x) != np.isfinite(y))
    ref = np.linalg.norm(x[fin]) or 1.0
    rel = np.linalg.norm(x[fin] - y[fin]) / ref
    return "rel_err %.2e%s" % (rel, ", %d nonfinite differ" % bad if bad else ""), \
        bad == 0 and rel <= 1e-5 and same_nonfinite >= 0


def bench(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return {}
    out = {}
    for s in d.get("shapes", []):
        for h in s.get("harness", []):
            for p in h.get("programs", []):
                out[p["name"]] = p
    return out


def main():
    obs, results = sys.argv[1], sys.argv[2]
    rows = []
    for name in sorted(os.listdir(obs)):
        nat, run = os.path.join(obs, name, "native"), os.path.join(obs, name, "cuco")
        ins, outs, mine = index(nat + "/r0.in"), index(nat + "/r0.out"), index(run + "/r0.out")
        b = bench(os.path.join(results, name + ".bench.json"))
        base, seed = b.get("baseline", {}), b.get("seed", {})
        same = []
        ok = bool(outs) and len(outs) == len(mine)
        for k, tname, dtype, _ in outs:
            what, good = compare("%s/r0-%d.out" % (nat, k), "%s/r0-%d.out" % (run, k), dtype) \
                if os.path.exists("%s/r0-%d.out" % (run, k)) else ("missing", False)
            ok &= good
            same.append("%s: %s" % (tname, what))
        rows.append((name, len(ins), "equal" if ok else "DIFFER", base.get("verified"),
                     base.get("median_us"), seed.get("verified"), seed.get("rel_err"),
                     seed.get("median_us"), "; ".join(same)))
    print("program | tensors | native vs cuco outputs | baseline verified | baseline us | "
          "seed verified | seed rel_err | seed us | per tensor")
    for r in rows:
        print(" | ".join("-" if v is None else str(v) for v in r))


if __name__ == "__main__":
    main()
