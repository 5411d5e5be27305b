#!/usr/bin/env python3
"""attention_vs.py - cuco's attention forward (cuco::attention_fwd_bf16, loaded
from libcuco_attention_vs.so, built from bench/attention_vs.cu) against
PyTorch's scaled_dot_product_attention with its flash and cuDNN backends, on
the same bf16 tensors, launches alternating (cuco, flash, cudnn, cuco, ...),
each timed with CUDA events; median and spread over the iterations.
The output is checked against the fastest PyTorch backend's (relative L2);
a wrong result has no speed. Also loads two copies of the library into this
process (as the harness loads programs) and checks both give the same output.

Launches are queued behind a GPU sleep so that the host's launch overhead
(Python, ctypes) never leaves the GPU idle between the events of a launch.

usage: attention_vs.py LIB [--iters N] [--json FILE] [--only NAME,...] [--paths 3,4,5]
  --paths: also time these kernel choices of cuco's (attention_detail::fwd_path:
           1 simple, 3 hopper serial, 4 hopper overlap, 5 hopper pingpong)
"""
import argparse, ctypes, json, os, shutil, statistics, sys, tempfile

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# name, B, Hq, Hkv, Sq, Sk, D, causal: the per-rank problems of attention_cp's
# shapes (CUCo's: total S 4096/8192 over 4 ranks, a rank's S/4 queries against
# one S/4-key block or the whole S; Llama-3-8B-like: 32 q heads, 8 kv heads)
SHAPES = [
    ("cuco_s4096_d64_block", 1, 32, 32, 1024, 1024, 64, 0),
    ("cuco_s4096_d64_block_causal", 1, 32, 32, 1024, 1024, 64, 1),
    ("cuco_s4096_d64_whole", 1, 32, 32, 1024, 4096, 64, 0),
    ("cuco_s8192_d64_block", 1, 32, 32, 2048, 2048, 64, 0),
    ("cuco_s8192_d64_block_causal", 1, 32, 32, 2048, 2048, 64, 1),
    ("cuco_s8192_d64_whole", 1, 32, 32, 2048, 8192, 64, 0),
    ("cuco_s4096_d32_block", 1, 32, 32, 1024, 1024, 32, 0),
    ("cuco_s4096_d32_whole", 1, 32, 32, 1024, 4096, 32, 0),
    ("cuco_s8192_d32_block", 1, 32, 32, 2048, 2048, 32, 0),
    ("cuco_s8192_d32_whole", 1, 32, 32, 2048, 8192, 32, 0),
    ("llama_s4096", 1, 32, 8, 4096, 4096, 128, 0),
    ("llama_s4096_causal", 1, 32, 8, 4096, 4096, 128, 1),
    ("llama_s65536_r8_block", 1, 32, 8, 8192, 8192, 128, 0),
    ("llama_s65536_r8_block_causal", 1, 32, 8, 8192, 8192, 128, 1),
    ("llama_s16384", 1, 32, 8, 16384, 16384, 128, 0),
    ("llama_s16384_causal", 1, 32, 8, 16384, 16384, 128, 1),
]


def load(path):
    lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
    f = lib.cuco_attention_vs_fwd
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_void_p, ctypes.POINTER(ctypes.c_longlong),
                                         ctypes.POINTER(ctypes.c_int), ctypes.c_float, ctypes.c_int,
                                         ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p]
    return f


def cuco_call(f, q, k, v, o, lse, causal, path=0):
    B, Hq, Sq, D = q.shape
    Hkv, Sk = k.shape[1], k.shape[2]
    st = (ctypes.c_longlong * 10)(q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
                                  o.stride(0), o.stride(1), lse.stride(0), lse.stride(1))
    dims = (ctypes.c_int * 6)(B, Hq, Hkv, Sq, Sk, D)
    s = torch.cuda.current_stream().cuda_stream
    return lambda: f(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), ctypes.c_void_p(lse.data_ptr()), st,
                     dims, D ** -0.5, causal, 0, 0, path, s)


def torch_fn(backend, q, k, v, causal):
    gqa = q.shape[1] != k.shape[1]

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=gqa)
    try:
        run()
        torch.cuda.synchronize()
        return run, "gqa" if gqa else ""
    except Exception:
        pass
    if not gqa:
        return None, ""
    r = q.shape[1] // k.shape[1]  # backend without GQA: k, v repeated beforehand (not timed)
    kr, vr = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)

    def run2():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, kr, vr, is_causal=bool(causal))
    try:
        run2()
        torch.cuda.synchronize()
        return run2, "rep"
    except Exception:
        return None, ""


def rel_l2(a, b):
    a, b = a.float(), b.float()
    return ((a - b).norm() / b.norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--paths", default="")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cuco-attn-vs-")
    copies = [os.path.join(tmp, "m%d.so" % i) for i in range(2)]
    for c in copies:
        shutil.copy(args.lib, c)
    fns = [load(c) for c in copies]
    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    print("# cuco attention_fwd_bf16 vs torch %s sdpa (flash, cudnn) on %s; median of %d alternating launches"
          % (torch.__version__, dev, args.iters))
    print("# %-30s %5s %5s %3s %3s %1s %9s %9s %9s %7s %7s %7s %8s %7s %s" % (
        "shape", "Sq", "Sk", "Hkv", "D", "c", "cuco_us", "flash_us", "cudnn_us", "cuco_TF", "flsh_TF", "cdnn_TF",
        "vs_best", "relL2", "notes"))
    rows = []
    wrong = 0
    for name, B, Hq, Hkv, Sq, Sk, D, causal in SHAPES:
        if args.only and name not in args.only.split(","):
            continue
        q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16)
        o = torch.full((B, Hq, Sq, D), float("nan"), device="cuda", dtype=torch.bfloat16)
        o2 = torch.full_like(o, float("nan"))
        lse = torch.empty(B, Hq, Sq, device="cuda", dtype=torch.float32)
        lse2 = torch.empty_like(lse)
        cu = cuco_call(fns[0], q, k, v, o, lse, causal)
        cu2 = cuco_call(fns[1], q, k, v, o2, lse2, causal)
        rc = cu()
        rc2 = cu2()
        torch.cuda.synchronize()
        notes = []
        if rc or rc2:
            print("  %-30s cuco launch failed: %d %d" % (name, rc, rc2))
            wrong += 1
            continue
        if not torch.equal(o, o2):
            notes.append("MODULES-DIFFER")
            wrong += 1
        contenders = {"cuco": cu}
        for pth in [int(x) for x in args.paths.split(",") if x]:
            ox = torch.full_like(o, float("nan"))
            lx = torch.empty_like(lse)
            fx = cuco_call(fns[0], q, k, v, ox, lx, causal, pth)
            if fx() == 0:
                torch.cuda.synchronize()
                if rel_l2(ox, o) > 2e-2:
                    notes.append("p%d-WRONG" % pth)
                    wrong += 1
                contenders["p%d" % pth] = fx
        for bname, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            fn, how = torch_fn(be, q, k, v, causal)
            if fn:
                contenders[bname] = fn
                if how:
                    notes.append("%s:%s" % (bname, how))
            else:
                notes.append("%s:n/a" % bname)
        times = {n: [] for n in contenders}
        flops = 4.0 * B * Hq * Sq * Sk * D * (0.5 if causal else 1.0)
        for n, fn in contenders.items():  # warm up
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        ev = []
        batch = 5
        for i in range(0, args.iters, batch):
            # cover the host's queueing of the batch (~0.2 ms a launch at most) with margin
            torch.cuda._sleep(int(2e6 * (0.5 + 0.3 * batch * len(contenders))))
            for _ in range(min(batch, args.iters - i)):
                for n, fn in contenders.items():
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    fn()
                    e1.record()
                    ev.append((n, e0, e1))
            torch.cuda.synchronize()
        for n, e0, e1 in ev:
            times[n].append(e0.elapsed_time(e1) * 1000.0)
        med = {n: statistics.median(t) for n, t in times.items()}
        spread = {n: (min(t), max(t)) for n, t in times.items()}
        best = min((n for n in med if n in ("flash", "cudnn")), key=lambda n: med[n], default=None)
        for n in med:
            if n.startswith("p"):
                notes.append("%s=%.1fus" % (n, med[n]))
        err = float("nan")
        if best:
            ref = contenders[best]()
            torch.cuda.synchronize()
            err = rel_l2(o, ref)
            if not (err < 2e-2):
                notes.append("WRONG")
                wrong += 1
        tf = {n: flops / med[n] / 1e6 for n in med}
        ratio = med[best] / med["cuco"] if best else float("nan")
        g = lambda d, n, f: (f % d[n]) if n in d else "-"
        print("  %-30s %5d %5d %3d %3d %1d %9s %9s %9s %7s %7s %7s %8.3f %7.1e %s" % (
            name, Sq, Sk, Hkv, D, causal, g(med, "cuco", "%.1f"), g(med, "flash", "%.1f"), g(med, "cudnn", "%.1f"),
            g(tf, "cuco", "%.0f"), g(tf, "flash", "%.0f"), g(tf, "cudnn", "%.0f"), ratio, err, " ".join(notes)))
        sys.stdout.flush()
        rows.append(dict(shape=name, B=B, Hq=Hq, Hkv=Hkv, Sq=Sq, Sk=Sk, D=D, causal=causal, median_us=med,
                         min_max_us=spread, tflops=tf, best_torch=best, cuco_speed_vs_best=ratio, rel_l2=err,
                         notes=notes))
        del q, k, v, o, o2
        torch.cuda.empty_cache()
    print("# vs_best = best torch time / cuco time (> 1: cuco faster); #wrong %d" % wrong)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(device=dev, torch=torch.__version__, iters=args.iters, rows=rows, wrong=wrong), fh, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
