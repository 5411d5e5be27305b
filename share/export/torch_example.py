"""torch_example.py - an exported cuco program inside a torch.distributed NCCL
process group: the program runs on the group's own communicator and on torch's
current stream, and its tensors (symmetric NCCL windows the runtime allocated)
are torch tensors. The outputs are checked against the workload's reference.

    torchrun --nproc-per-node N torch_example.py [--shape S] [--seed N]
    python torch_example.py                      (one rank)

Needs the libraries the CMake project builds (build/ by default) and the
libnccl.so.2 that torch loads to be the NCCL the runtime was built against
(2.28 or newer: the device API).
"""
import argparse
import ctypes
import math
import os

import torch
import torch.distributed as dist

DTYPES = {1: torch.bfloat16, 2: torch.float16, 3: torch.float32, 4: torch.int32, 5: torch.int64,
          6: torch.uint8}


class _Window:
    """A device pointer as an object torch.as_tensor accepts (the CUDA array interface)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("--shape", default=None)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    one = torch.ones(1, device=dev)
    dist.all_reduce(one)  # the group's communicator exists from here on
    comm = dist.group.WORLD._get_backend(dev)._comm_ptr()

    rt = ctypes.CDLL(os.path.join(args.build, "libcuco_export.so"), mode=ctypes.RTLD_GLOBAL)
    chk = ctypes.CDLL(os.path.join(args.build, "libcuco_export_check.so"))
    rt.cuco_export_init.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.c_char_p, ctypes.c_size_t]
    rt.cuco_export_tensor.restype = ctypes.c_void_p
    rt.cuco_export_tensor.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                      ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(ctypes.c_size_t)]
    rt.cuco_export_ntensors.argtypes = [ctypes.c_void_p]
    rt.cuco_export_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    rt.cuco_export_error.restype = ctypes.c_char_p
    rt.cuco_export_error.argtypes = [ctypes.c_void_p]
    rt.cuco_export_fini.argtypes = [ctypes.c_void_p]
    chk.cuco_check_generate.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_char_p,
                                        ctypes.c_size_t]
    chk.cuco_check_poison.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    chk.cuco_check_sums.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                    ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_size_t]
    chk.cuco_check_tolerance.restype = ctypes.c_double

    shape = args.shape or ctypes.c_char_p.in_dll(rt, "cuco_export_default_shape").value.decode()
    err = ctypes.create_string_buffer(1024)
    x = ctypes.c_void_p()
    if rt.cuco_export_init(ctypes.c_void_p(comm), shape.encode(), ctypes.byref(x), err, len(err)):
        raise SystemExit("rank %d: cuco_export_init: %s" % (rank, err.value.decode()))

    # The program's tensors, as torch tensors over the symmetric windows.
    tensors = {}
    for i in range(rt.cuco_export_ntensors(x)):
        name, role, dtype, nbytes = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
        ptr = rt.cuco_export_tensor(x, i, ctypes.byref(name), ctypes.byref(role), ctypes.byref(dtype),
                                    ctypes.byref(nbytes))
        raw = torch.as_tensor(_Window(ptr, nbytes.value), device=dev)
        tensors[name.value.decode()] = (raw.view(DTYPES[dtype.value]), role.value)

    stream = torch.cuda.current_stream(dev)
    if chk.cuco_check_generate(x, args.seed, ctypes.c_void_p(stream.cuda_stream), err, len(err)):
        raise SystemExit("rank %d: %s" % (rank, err.value.decode()))
    for _ in range(5):  # the application's loop
        if rt.cuco_export_run(x, ctypes.c_void_p(stream.cuda_stream)):
            raise SystemExit("rank %d: %s" % (rank, rt.cuco_export_error(x).decode()))
    # Poison the outputs through torch (NaN bytes), run once more, check.
    for t, role in tensors.values():
        if role == 2:
            t.view(torch.uint8).fill_(0xFF)
    if rt.cuco_export_run(x, ctypes.c_void_p(stream.cuda_stream)):
        raise SystemExit("rank %d: %s" % (rank, rt.cuco_export_error(x).decode()))
    stream.synchronize()
    sums = (ctypes.c_double * 3)(0, 0, 0)
    if chk.cuco_check_sums(x, args.seed, ctypes.c_void_p(stream.cuda_stream), sums, err, len(err)):
        raise SystemExit("rank %d: %s" % (rank, err.value.decode()))
    total = torch.tensor(list(sums), dtype=torch.float64, device=dev)
    dist.all_reduce(total)
    d2, r2, bad = total.tolist()
    rel = math.sqrt(d2 / r2) if r2 > 0 else math.sqrt(d2)
    ok = bad == 0 and rel <= chk.cuco_check_tolerance()
    outs = ", ".join("%s %s %s finite %s" % (n, tuple(t.shape), t.dtype, bool(torch.isfinite(t.float()).all()))
                     for n, (t, role) in tensors.items() if role == 2)
    if rank == 0:
        print("torch %s, NCCL %s, %d rank(s), shape %s: outputs as torch tensors: %s; rel_err %.3e "
              "(tolerance %g), non-finite %d: %s" % (torch.__version__, ".".join(map(str, torch.cuda.nccl.version())),
                                                    world, shape, outs, rel, chk.cuco_check_tolerance(), bad,
                                                    "verified" if ok else "WRONG"))
    tensors.clear()
    rt.cuco_export_fini(x)
    dist.destroy_process_group()
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
