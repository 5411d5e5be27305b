#!/usr/bin/env bash
# devlib_wgmma.sh - every GEMM kernel a gemm_allgather program can build keeps
# its wgmma pipeline: realise one directive per GEMM epilogue (none, the
# re-read push, tile counters, the bulk-copy push with and without in-kernel
# sync), compile each for sm_90a with ptxas verbose, and fail on ptxas's C7510
# ("wgmma.mma_async instructions are serialized"), which a call anywhere in the
# kernel (a printf, say) causes and which cost 14 % at 8192^3 when it slipped in.
# The same for allgather_gemm's fused consumers (the grouped, gated GEMM).
# Also checks that the realised bulk-copy programs define what their knobs say,
# the pipeline depth each tile width keeps beside the push's staging rows, and
# the width tile_n 0 picks per shape (both rules).
# Usage: bash tests/devlib_wgmma.sh CUCO   (CUCO_HOME = repo root)
set -euo pipefail
cuco="$1"
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "devlib_wgmma: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
inc=()
[ -n "${CUCO_NCCL_HOME:-}" ] && inc+=(-I"$CUCO_NCCL_HOME/include")
fail=0
for v in sequential_lsa_n128 fused_producer specialized fused_producer_tma fused_producer_tma_sync_n128 \
	fused_producer_tma_sync_n64; do
	"$cuco" realize gemm_allgather --directive-file "workloads/gemm_allgather/variants/$v.json" \
		-o "$tmp/$v.cu" >/dev/null
	"$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude \
		"${inc[@]}" -Xptxas -v -c "$tmp/$v.cu" -o "$tmp/$v.o" >"$tmp/$v.log" 2>&1 ||
		{ echo "devlib_wgmma: $v does not compile:"; tail -20 "$tmp/$v.log"; fail=1; continue; }
	grep -q 'gemm_bf16_kernel' "$tmp/$v.log" ||
		{ echo "devlib_wgmma: $v: no GEMM kernel in ptxas's report"; fail=1; }
	if grep -q C7510 "$tmp/$v.log"; then
		echo "devlib_wgmma: $v: ptxas serialises the wgmma pipeline:"
		grep C7510 "$tmp/$v.log" | head -3
		fail=1
	fi
done
# allgather_gemm's fused consumers: the grouped, gated GEMM (copy engine and
# LSA pull kernel), whose producer polls flags between its TMA loads
for v in fused_consumer_ce fused_consumer; do
	"$cuco" realize allgather_gemm --directive-file "workloads/allgather_gemm/variants/$v.json" \
		-o "$tmp/ag_$v.cu" >/dev/null
	"$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude \
		"${inc[@]}" -Xptxas -v -c "$tmp/ag_$v.cu" -o "$tmp/ag_$v.o" >"$tmp/ag_$v.log" 2>&1 ||
		{ echo "devlib_wgmma: allgather_gemm $v does not compile:"; tail -20 "$tmp/ag_$v.log"; fail=1; continue; }
	grep -q 'gemm_bf16_kernel.*gemm_bf16_group' "$tmp/ag_$v.log" ||
		{ echo "devlib_wgmma: allgather_gemm $v: no grouped GEMM kernel in ptxas's report"; fail=1; }
	if grep -q C7510 "$tmp/ag_$v.log"; then
		echo "devlib_wgmma: allgather_gemm $v: ptxas serialises the wgmma pipeline:"
		grep C7510 "$tmp/ag_$v.log" | head -3
		fail=1
	fi
done
grep -q '^#define CUCO_TMA_PUSH 1' "$tmp/fused_producer_tma.cu" || { echo "devlib_wgmma: tma_push not realised"; fail=1; }
grep -q '^#define CUCO_FUSED_SYNC 0' "$tmp/fused_producer_tma.cu" || { echo "devlib_wgmma: fused_sync default not 0"; fail=1; }
grep -q '^#define CUCO_FUSED_SYNC 1' "$tmp/fused_producer_tma_sync_n128.cu" || { echo "devlib_wgmma: fused_sync not realised"; fail=1; }
# fused_sync without tma_push is refused at compile time, with the reason
sed 's/"tma_push":true/"tma_push":false/' workloads/gemm_allgather/variants/fused_producer_tma_sync.json >"$tmp/bad.json"
"$cuco" realize gemm_allgather --directive-file "$tmp/bad.json" -o "$tmp/bad.cu" >/dev/null
if "$nvcc" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude "${inc[@]}" \
	-c "$tmp/bad.cu" -o "$tmp/bad.o" >"$tmp/bad.log" 2>&1; then
	echo "devlib_wgmma: fused_sync without tma_push compiled"; fail=1
elif ! grep -q 'fused_sync: the in-kernel barriers come with the bulk-copy push' "$tmp/bad.log"; then
	echo "devlib_wgmma: fused_sync without tma_push failed for another reason:"; tail -5 "$tmp/bad.log"; fail=1
fi
# pipeline depth beside the push's staging rows: 16-row rounds (the default)
# leave 3 stages at tile_n 256, two 8-row rounds keep 4; every width fits
cat >"$tmp/stages.cu" <<'EOF'
#include <cuco_dev/gemm.cuh>
using namespace cuco;
using namespace cuco::gemm_detail;
static_assert(push_rows_t<gemm_push_epilogue<>, 256>::value == 16, "default push rows");
static_assert(cfg<256, push_rows_t<gemm_push_epilogue<gemm_push_no_sync, 8>, 256>::value>::kStages == 4, "8 rows");
static_assert(cfg<256, 16>::kStages == 3 && cfg<256, 0>::kStages == 4, "stages at 256");
static_assert(cfg<128, push_rows_t<gemm_push_epilogue<>, 128>::value>::kStages == 6, "6 stages at 128");
static_assert(cfg<64, push_rows_t<gemm_push_epilogue<>, 64>::value>::kStages == 8, "8 stages at 64");
int main() { return 0; }
EOF
"$nvcc" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -c "$tmp/stages.cu" -o "$tmp/stages.o" \
	>"$tmp/stages.log" 2>&1 || { echo "devlib_wgmma: pipeline stages:"; grep -m3 error "$tmp/stages.log"; fail=1; }
# tile_n 0's width per shape (gemm_allgather on 2 ranks, 132 SMs: one rank's
# M x N/2 in 128 x 256 tiles): 128 at 2048^3 and 4096^3, 256 from 8192^3 on,
# and never wider than the plan (N/2 % 256 != 0 gives 128-column plans); with
# the SMs it may use, 64 where 128 would leave half of them idle (decode)
cat >"$tmp/auto.cu" <<'EOF'
#include <cuco_dev/overlap.cuh>
static_assert(cuco::overlap_auto_tile_n(256, 16 * 4, 64) == 128, "2048^3: 64 tiles, 1 wave");
static_assert(cuco::overlap_auto_tile_n(256, 32 * 8, 132) == 128, "4096^3: 2 waves");
static_assert(cuco::overlap_auto_tile_n(256, 64 * 16, 132) == 256, "8192^3: 8 waves");
static_assert(cuco::overlap_auto_tile_n(256, 128 * 8, 132) == 256, "16384x4096x8192: 8 waves");
static_assert(cuco::overlap_auto_tile_n(256, 32 * 32, 132) == 256, "4096x16384x4096: 8 waves");
static_assert(cuco::overlap_auto_tile_n(256, 4 * 132, 132) == 256, "exactly 4 waves keeps 256");
static_assert(cuco::overlap_auto_tile_n(128, 8, 8) == 128, "a 128-column plan stays");
// with the SMs the launch may use: one wave at 128 over half of them or fewer narrows to 64
static_assert(cuco::overlap_auto_tile_n(256, 16 * 4, 64, 132) == 128, "2048^3: 128 tiles at 128 fill the SMs");
static_assert(cuco::overlap_auto_tile_n(256, 2 * 16, 32, 132) == 64, "decode, M 256: 64 tiles at 128, 128 at 64");
static_assert(cuco::overlap_auto_tile_n(256, 2 * 16, 32, 100) == 128, "decode on 100 SMs (sm_split): 128");
static_assert(cuco::overlap_auto_tile_n(256, 1 * 16, 16, 132) == 64, "M 128: never below 64");
static_assert(cuco::overlap_auto_tile_n(256, 24 * 16, 128, 132) == 128, "ragged, M 3000: 3 waves at 256");
static_assert(cuco::overlap_auto_tile_n(256, 64 * 16, 128, 132) == 256, "8192^3 with the SMs: 256");
static_assert(cuco::overlap_auto_tile_n(256, 4 * 8, 32, 132) == 64, "a 512-row chunk at 2048^3: 64");
// allgather_gemm (no per-tile push): halved (256, 128, 64) while the tiles idle half the SMs
static_assert(cuco::overlap_auto_tile_n_plain(256, 8 * 8, 132) == 128, "2048^3, one shard: 64 tiles");
static_assert(cuco::overlap_auto_tile_n_plain(256, 2 * 8 * 8, 131) == 256, "2048^3, both shards in one launch");
static_assert(cuco::overlap_auto_tile_n_plain(256, 16 * 16, 132) == 256, "4096^3, one shard: 2 waves");
static_assert(cuco::overlap_auto_tile_n_plain(256, 66, 132) == 128, "exactly half the SMs narrows");
static_assert(cuco::overlap_auto_tile_n_plain(128, 100, 132) == 128, "a 128-column plan with 100 tiles stays");
static_assert(cuco::overlap_auto_tile_n_plain(128, 8, 132) == 64, "a 128-column plan with few tiles halves");
static_assert(cuco::overlap_auto_tile_n_plain(256, 16, 132) == 64, "M = 128 x 4096: 16 tiles of 256, 64 of 64");
static_assert(cuco::overlap_auto_tile_n_plain(256, 32, 132) == 64, "M = 256 x 4096: 128 tiles of 64");
static_assert(cuco::overlap_auto_tile_n_plain(256, 33, 132) == 64, "66 tiles of 128 leave half idle: 132 of 64");
static_assert(cuco::overlap_auto_tile_n_plain(256, 34, 132) == 128, "68 tiles of 128 keep more than half busy");
static_assert(cuco::overlap_auto_tile_n_plain(256, 64, 132) == 128, "M = 512 x 4096: 128 tiles of 128 stay");
int main() { return 0; }
EOF
"$nvcc" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Idevice/include -Iinclude "${inc[@]}" \
	-c "$tmp/auto.cu" -o "$tmp/auto.o" >"$tmp/auto.log" 2>&1 ||
	{ echo "devlib_wgmma: tile_n 0:"; grep -m3 error "$tmp/auto.log"; fail=1; }
[ $fail = 0 ] && echo "devlib_wgmma: ok"
exit $fail
