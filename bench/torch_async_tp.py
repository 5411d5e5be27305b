#!/usr/bin/env python3
"""torch_async_tp.py - the PyTorch peers of cuco's allgather_gemm workload.

Times, in one run and on the same inputs, for every shape of
workloads/allgather_gemm/manifest.json (bf16, one process per GPU):

  allgather   dist.all_gather_into_tensor of the row shards A_r[M/R, K] alone
  matmul      torch.matmul(A_all[M, K], B[K, N]) alone (cuBLAS), the ideal bound
  sequential  all-gather, then matmul (what most users run)
  async_tp    torch.ops.symm_mem.fused_all_gather_matmul (PyTorch async-TP:
              copy-engine chunks, matmul per arrived chunk)

and checks async-TP's C (and its gathered A) against the sequential result:
a shape whose result differs gets no speed (nccl-tests' discipline). Latency
per shape = median over timed iterations on each rank, then the slower rank
(as cuco-harness reports). Prints a '#'-commented table and one JSON line.

Run on the GPU machine:
  python3 bench/torch_async_tp.py [--ranks 2] [--shape 8192 ...] [--json out.json]
  torchrun --nproc-per-node 2 bench/torch_async_tp.py ...
Multicast (NVLS) is never used: TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and
NCCL_NVLS_ENABLE=0 are forced before torch is imported; a caller asking for
anything else is refused.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

# Before torch (and NCCL) read them: multicast is forbidden on our machines.
for _var in ("TORCH_SYMM_MEM_DISABLE_MULTICAST",):
    if os.environ.get(_var, "1") != "1":
        sys.exit(f"torch_async_tp.py: {_var}={os.environ[_var]} would allow multicast; "
                 "unset it or set it to 1")
    os.environ[_var] = "1"
if os.environ.get("NCCL_NVLS_ENABLE", "0") != "0":
    sys.exit("torch_async_tp.py: NCCL_NVLS_ENABLE must be 0 (no NVLink multicast)")
os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "workloads", "allgather_gemm", "manifest.json")
TOLERANCE = 0.01  # the workload's tolerance (relative L2 error)
L2_BYTES = 50 * 1024 * 1024  # H200; inputs are rotated so a timed run never finds them all in L2


def load_shapes(names):
    with open(MANIFEST) as f:
        m = json.load(f)
    shapes = m["shapes"]
    if names:
        known = {s["name"]: s for s in shapes}
        missing = [n for n in names if n not in known]
        if missing:
            sys.exit(f"torch_async_tp.py: unknown shape(s) {missing}; known: {sorted(known)}")
        shapes = [known[n] for n in names]
    return shapes


def time_op(fn, sets, warmup, iters, timing="barrier"):
    """Per-iteration latency in microseconds, the op bracketed by CUDA events
    on the current stream, rotating over the input sets so consecutive
    iterations do not reuse cached operands. timing (as cuco-harness --timing):
      barrier    ranks meet at a barrier and synchronize before every iteration
                 (session 2's method; the GPU idles briefly between runs)
      sustained  iterations back to back, no gap: the GPU runs at its power cap
      burst      each iteration alone: an idle gap of twice the op's time, a
                 barrier, a 200 us GPU spin while the host enqueues, then the op
    """
    for i in range(warmup):
        fn(sets[i % len(sets)])
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    if timing == "sustained":
        for i, (start, end) in enumerate(events):
            start.record()
            fn(sets[i % len(sets)])
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1000.0 for s, e in events]
    gap_s = 0.0
    if timing == "burst":  # the op's time from one back-to-back pass, agreed by all ranks
        s0, e0 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s0.record()
        for i in range(3):
            fn(sets[i % len(sets)])
        e0.record()
        torch.cuda.synchronize()
        t = torch.tensor([s0.elapsed_time(e0) / 3 * 1e-3], dtype=torch.float64, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        gap_s = max(2 * t.item(), 100e-6)
        spin_cycles = 400_000  # about 200 us at the H200 top clock (1980 MHz); longer when slower
    for i, (start, end) in enumerate(events):
        torch.cuda.synchronize()
        if timing == "burst":
            time.sleep(gap_s)
        dist.barrier()
        if timing == "burst":
            torch.cuda._sleep(spin_cycles)
        else:
            torch.cuda.synchronize()
        start.record()
        fn(sets[i % len(sets)])
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in events]


def summarize(samples):
    """Median and spread of this rank, then the slower rank's median (max over ranks)."""
    xs = sorted(samples)
    med = statistics.median(xs)
    p10 = xs[int(0.1 * (len(xs) - 1))]
    p90 = xs[int(0.9 * (len(xs) - 1))]
    t = torch.tensor([med, p10, p90], dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return {"median_us": t[0].item(), "p10_us": t[1].item(), "p90_us": t[2].item()}


def compare(got, want):
    """Relative L2 error, non-finite count and elements off by more than
    TOLERANCE of the reference's RMS (the '#wrong' count), over all ranks."""
    g = got.float()
    w = want.float()
    d = g - w
    rms = w.pow(2).mean().sqrt()
    t = torch.stack([d.pow(2).sum(), w.pow(2).sum(),
                     (~torch.isfinite(g)).sum().double(),
                     (d.abs() > TOLERANCE * rms).sum().double()]).double()
    dist.all_reduce(t)
    rel = math.sqrt(t[0].item() / t[1].item()) if t[1].item() > 0 else float("inf")
    return rel, int(t[2].item()), int(t[3].item())


def run_shape(shape, rank, world, group_name, args):
    M, N, K = shape["M"], shape["N"], shape["K"]
    if M % world:
        return {"shape": shape["name"], "status": "invalid", "error": f"M={M} not divisible by {world}"}
    Mr = M // world
    dev = torch.device("cuda", torch.cuda.current_device())
    set_bytes = (Mr * K + K * N + M * K + M * N) * 2
    nsets = max(1, min(8, math.ceil(3 * L2_BYTES / set_bytes)))
    gen = torch.Generator(device=dev)
    sets = []
    for s in range(nsets):
        # Shards differ between ranks; B is the same on every rank (same seed).
        gen.manual_seed(args.seed + 7919 * s + 1000 + rank)
        a = torch.rand(Mr, K, generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1)
        gen.manual_seed(args.seed + 7919 * s + 2)
        b = torch.rand(K, N, generator=gen, device=dev, dtype=torch.float32).mul_(2).sub_(1)
        sets.append({"A": a.to(torch.bfloat16), "B": b.to(torch.bfloat16),
                     "A_all": torch.empty(M, K, device=dev, dtype=torch.bfloat16),
                     "C": torch.empty(M, N, device=dev, dtype=torch.bfloat16)})
        del a, b

    def allgather(x):
        dist.all_gather_into_tensor(x["A_all"], x["A"])

    def matmul(x):
        torch.matmul(x["A_all"], x["B"], out=x["C"])

    def sequential(x):
        allgather(x)
        matmul(x)

    def async_tp(x):
        return torch.ops.symm_mem.fused_all_gather_matmul(x["A"], [x["B"]], 0, group_name)

    out = {"shape": shape["name"], "M": M, "N": N, "K": K, "ranks": world, "dtype": "bf16",
           "sets": nsets, "iters": args.iters, "status": "ok"}

    # Correctness first: a program whose output differs gets no time.
    x = sets[0]
    sequential(x)
    try:
        ag, cs = async_tp(x)
        torch.cuda.synchronize()
    except (RuntimeError, AttributeError) as e:  # op missing, or refused on this setup
        out["status"] = "run"
        out["error"] = f"fused_all_gather_matmul: {e}"
        ag, cs = None, None
    if cs is not None:
        rel, nonfinite, wrong = compare(cs[0], x["C"])
        out.update({"rel_err": rel, "nonfinite": nonfinite, "wrong": wrong})
        if ag is not None:
            arel, _, awrong = compare(ag, x["A_all"])
            out.update({"a_all_rel_err": arel, "a_all_wrong": awrong})
            wrong += awrong
        if not (rel <= TOLERANCE) or nonfinite or wrong:
            out["status"] = "wrong"
        del ag, cs

    for name, fn in (("allgather", allgather), ("matmul", matmul), ("sequential", sequential)):
        out[name] = summarize(time_op(fn, sets, args.warmup, args.iters, args.timing))
    if out["status"] == "ok":
        out["async_tp"] = summarize(time_op(async_tp, sets, args.warmup, args.iters,
                                                   args.timing))
    seq = out["sequential"]["median_us"]
    ideal = out["matmul"]["median_us"]
    out["ideal_us"] = ideal
    if "async_tp" in out:
        best = out["async_tp"]["median_us"]
        out["async_tp_speedup_vs_sequential"] = seq / best
        out["async_tp_hidden_fraction"] = (seq - best) / (seq - ideal) if seq > ideal else None
    return out


def worker(local_rank, world, args):
    if "RANK" not in os.environ:  # mp.spawn: we are the launcher
        os.environ.update({"RANK": str(local_rank), "WORLD_SIZE": str(world),
                           "LOCAL_RANK": str(local_rank)})
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", local_rank))
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    group = dist.group.WORLD
    group_name = group.group_name
    try:
        import torch.distributed._symmetric_memory as symm_mem
        # Needed up to torch 2.7; later versions enable it on first use and may warn.
        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(group_name)
    except ImportError as e:
        if rank == 0:
            print(f"# symmetric memory unavailable: {e}", file=sys.stderr)

    results = []
    for shape in load_shapes(args.shape):
        r = run_shape(shape, rank, world, group_name, args)
        results.append(r)
        torch.cuda.empty_cache()
        if rank == 0:
            print(f"# done {shape['name']}: {r['status']}", file=sys.stderr, flush=True)

    if rank == 0:
        report(results, args)
    dist.barrier()
    dist.destroy_process_group()


def fmt(r, key):
    v = r.get(key)
    return f"{v['median_us']:10.1f}" if isinstance(v, dict) else "%10s" % "n/a"


def report(results, args):
    props = torch.cuda.get_device_properties(0)
    head = {"bench": "torch_async_tp", "workload": "allgather_gemm", "gpu": props.name,
            "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "multicast": False, "warmup": args.warmup, "iters": args.iters, "seed": args.seed,
            "timing": args.timing,
            "tolerance": TOLERANCE, "results": results}
    print("# allgather_gemm PyTorch peers, bf16, median us of the slower rank "
          f"({props.name}, torch {torch.__version__}, {args.iters} iters, {args.timing} timing, "
          "multicast off)")
    print(f"# {'shape':>16} {'allgather':>10} {'matmul':>10} {'sequential':>10} "
          f"{'async_tp':>10} {'seq/atp':>8} {'rel_err':>9} {'#wrong':>7} status")
    for r in results:
        sp = r.get("async_tp_speedup_vs_sequential")
        rel = r.get("rel_err")
        sp_s = f"{sp:8.3f}" if sp else "%8s" % "n/a"
        rel_s = f"{rel:9.2e}" if rel is not None else "%9s" % "n/a"
        wrong_s = str(r.get("wrong", "n/a"))
        print(f"  {r['shape']:>16} {fmt(r, 'allgather')} {fmt(r, 'matmul')} "
              f"{fmt(r, 'sequential')} {fmt(r, 'async_tp')} {sp_s} {rel_s} "
              f"{wrong_s:>7} {r['status']}")
    line = json.dumps(head)
    print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2, help="processes to spawn (ignored under torchrun)")
    ap.add_argument("--shape", action="append", help="manifest shape name (repeatable; default all)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timing", choices=("barrier", "sustained", "burst"), default="barrier",
                    help="barrier: a barrier and a sync before each iteration (default); "
                         "sustained: back to back; burst: an idle gap, then each alone")
    ap.add_argument("--json", help="also write the JSON line to this file")
    args = ap.parse_args()
    if args.iters < 1 or args.warmup < 0 or args.ranks < 1:
        ap.error("--iters >= 1, --warmup >= 0, --ranks >= 1")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun
        worker(int(os.environ.get("LOCAL_RANK", 0)), int(os.environ["WORLD_SIZE"]), args)
        return
    if torch.cuda.device_count() < args.ranks:
        sys.exit(f"torch_async_tp.py: {args.ranks} ranks need {args.ranks} GPUs, "
                 f"found {torch.cuda.device_count()}")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    mp.spawn(worker, args=(args.ranks, args), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
