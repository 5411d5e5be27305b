#!/usr/bin/env bash
# moe_one_rank.sh - moe_layer on ONE GPU: every manifest program, the fast-path
# seeds (padded all-to-all and send/recv groups) and the realised variants at a
# sample of shapes with --ranks 1 (every expert local: nothing is sent, so this
# checks routing, slot ranks, permutation, the expert-major layout, the grouped
# GEMMs, SwiGLU and the gate-weighted combine against the reference, not the
# exchange), then cuco's grouped GEMM against cuBLAS's grouped GEMM and
# torch._grouped_mm at the expert shapes (bench/probes/moe_gemm_probe.cu).
#   GPU node: bench/probes/moe_one_rank.sh   (writes $OUT/moe/*.log, *.json; exits 1
#             unless every verified program verified)
set -uo pipefail
B=${CUCO_BUILD:-build-dev}
. scripts/gpu-env.sh
export CUCO_STATE=${CUCO_STATE:-/tmp/cuco-moe-state}
O=${OUT:?}/moe
SHAPES=${SHAPES:---shape cuco_3to1 --shape ep8_prefill --shape ep8_skew --shape ep4_decode}
VARIANTS=${VARIANTS:-sequential_lsa sequential_ce stream_overlap_lsa stream_overlap_ce stream_overlap_lsa16 stream_overlap_ce_n128}
mkdir -p "$O" "$CUCO_STATE/moe"
progs=()
for v in $VARIANTS; do
	$B/cuco realize moe_layer --directive-file "workloads/moe_layer/variants/$v.json" -o "$CUCO_STATE/moe/$v.cu" &&
		progs+=(--program "$CUCO_STATE/moe/$v.cu")
done
# the send/recv seed includes host_sendrecv.cu's "common.cuh": it needs the header beside it
cp workloads/moe_layer/common.cuh "$CUCO_STATE/moe/" &&
	$B/cuco fastpath workloads/moe_layer/host_sendrecv.cu -o "$CUCO_STATE/moe/seed_sendrecv.cu" --no-compile &&
	progs+=(--program "$CUCO_STATE/moe/seed_sendrecv.cu")
# compile everything (into the cache) while the probe builds, then time the probe on
# an idle GPU, then the bench (its compiles cached)
$B/cuco bench moe_layer --ranks 1 $SHAPES --compile-only --store "$CUCO_STATE/c.db" "${progs[@]}" \
	>"$O/compile.log" 2>&1 &
cb=$!
nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude -Idevice/include \
	bench/probes/moe_gemm_probe.cu -lcublas -o "$CUCO_STATE/moe_gemm_probe" >"$O/probe-build.log" 2>&1
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
echo "## $CUCO_STATE/moe_gemm_probe 40"
timeout 120 "$CUCO_STATE/moe_gemm_probe" 40
echo "## probe rc $?"
python3 - <<'PY'
import itertools, torch
torch.manual_seed(0)
def timed(f, iters=40):
    for _ in range(5): f()
    t = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); t.append(a.elapsed_time(b) * 1000)
    t.sort()
    return t[len(t) // 2], t[len(t) // 10], t[(len(t) - 1) * 9 // 10]
H, I = 7168, 2048
cases = [("cuco_3to1_heavy_1x6144", [6144]), ("cuco_3to1_light_1x2048", [2048]),
         ("uniform_8x1024", [1024] * 8), ("ragged_8_2048to256", [2048, 1792, 1536, 1280, 1024, 768, 512, 256]),
         ("ep4_prefill_2r_4x1024", [1024] * 4), ("decode_8x32", [32] * 8),
         ("ep8_skew_1rank", [1507, 754, 502, 377, 301, 251, 215, 189])]
print("# torch", torch.__version__, "torch._grouped_mm (same shapes, same value ranges): case gemm experts tokens | med p10 p90 us TFLOP/s")
for name, t in cases:
    for g, (K, N) in enumerate([(H, 2 * I), (I, H)]):
        tot = sum(t)
        a = (torch.rand(tot, K, device="cuda") * 2 - 1).to(torch.bfloat16)
        b = ((torch.rand(len(t), N, K, device="cuda") * 2 - 1) * (3 / K ** 0.5)).to(torch.bfloat16).transpose(-2, -1)
        offs = torch.tensor(list(itertools.accumulate(t)), device="cuda", dtype=torch.int32)
        try:
            m, p10, p90 = timed(lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16))
            print(f"{name} {'down' if g else 'up'} {len(t)} {tot} | {m:.1f} {p10:.1f} {p90:.1f} {2 * tot * N * K / m * 1e-6:.0f}")
        except Exception as e:
            print(f"{name} {'down' if g else 'up'} {len(t)} {tot} | error {e}")
PY
} >"$O/gemm.log" 2>&1
echo "# done" >>"$O/gemm.log"
wait $cb
{
echo "## $B/cuco bench moe_layer --ranks 1 $SHAPES --iters 10 --warmup 3 --bench-seconds 0 ${progs[*]}"
timeout 300 $B/cuco bench moe_layer --ranks 1 $SHAPES --iters 10 --warmup 3 --bench-seconds 0 \
	--json "$O/bench.json" "${progs[@]}"
echo "## rc $?"
} >"$O/bench.log" 2>&1
bad=$(awk '/^# program/ {t = 1; next} /^#/ {t = 0} t && NF >= 3 && $3 != "ok" && $3 != "derived"' "$O/bench.log")
if [ -n "$bad" ] || ! grep -q '^## rc 0$' "$O/bench.log"; then
	printf 'moe_one_rank: not verified:\n%s\n' "$bad" >&2
	exit 1
fi
echo "moe_one_rank: every program verified ($O/bench.log)"
