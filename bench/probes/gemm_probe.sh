#!/bin/sh
# gemm_probe.sh BIN - bf16 GEMM speed by cuBLAS entry point, both GPUs busy at
# once (as in a 2-rank run), then torch.mm at the same shapes for comparison.
# Shapes are the per-rank GEMMs of the workloads: gemm_allgather S^3 runs
# S x S/2 x S per rank, allgather_gemm S^3 runs S x S x S.
BIN=${1:?usage: gemm_probe.sh BIN}
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
probe() {
	echo "== $*"
	CUDA_VISIBLE_DEVICES=1 "$BIN" "$@" >/tmp/probe1.txt 2>&1 &
	CUDA_VISIBLE_DEVICES=0 "$BIN" "$@"
	wait
	echo "-- (GPU 1)"; grep -E '^(gemmex|lt )' /tmp/probe1.txt
}
probe 8192 4096 8192 uniform 1
probe 8192 4096 8192 zero 1
probe 4096 2048 4096 uniform 4
probe 4096 4096 4096 uniform 4
probe 2048 1024 2048 uniform 8
probe 16384 8192 16384 uniform 1
nvidia-smi --query-gpu=index,clocks.sm,power.draw,temperature.gpu --format=csv
python3 - <<'PY'
import torch, statistics, threading
def bench(dev, M, N, K, out):
    torch.cuda.set_device(dev)
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
    for _ in range(5): torch.mm(a, b)
    t = []
    for _ in range(30):
        e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        e0.record(); torch.mm(a, b); e1.record(); e1.synchronize()
        t.append(e0.elapsed_time(e1) * 1000)
    out[dev] = statistics.median(t)
for M, N, K in [(8192, 4096, 8192), (4096, 2048, 4096), (4096, 4096, 4096), (2048, 1024, 2048), (16384, 8192, 16384)]:
    out = {}
    th = [threading.Thread(target=bench, args=(d, M, N, K, out)) for d in (0, 1)]
    [x.start() for x in th]; [x.join() for x in th]
    print(f"torch.mm M={M} N={N} K={K} median us: gpu0 {out[0]:.1f} gpu1 {out[1]:.1f}  {2*M*N*K/out[0]*1e-6:.1f} TFLOP/s")
PY
