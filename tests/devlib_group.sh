#!/usr/bin/env bash
# devlib_group.sh - the grouped GEMM's schedule on the host (cuco_dev/gemm.cuh):
# over every tile index of a launch, group_coords visits each (problem, tile
# row, tile column) exactly once, problems whole and in the order first,
# first + 1, ... (mod n), each in the plan's own tile order; and gate_chunk
# maps every k-block to the one chunk of K whose copy holds it (what
# allgather_gemm's fused consumer copies per flag). Host code only: compiled
# by nvcc, runs without a GPU.
# Usage: bash tests/devlib_group.sh [ignored]   (CUCO_HOME = repo root)
set -euo pipefail
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "devlib_group: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/group.cu" <<'CU'
#include <stdio.h>
#include <vector>
#include <cuco_dev/gemm.cuh>
using namespace cuco;
using namespace cuco::gemm_detail;
static int fails;
static void order(int n, int first, int tiles_m, int tiles_n, int group_m)
{
	kparams p = {};
	p.tiles_m = tiles_m;
	p.tiles_n = tiles_n;
	p.group_m = group_m;
	p.tiles = n * tiles_m * tiles_n;
	gemm_bf16_group g = {};
	g.n = n;
	g.first = first;
	std::vector<int> seen((size_t)p.tiles, 0);
	const int per = tiles_m * tiles_n;
	for (int t = 0; t < p.tiles; t++) {
		int i, tm, tn, tm1, tn1;
		group_coords(t, p, g, i, tm, tn);
		kparams one = p; // the plan's own order for the problem's t-th tile
		one.tiles = per;
		tile_coords(t % per, one, tm1, tn1);
		if (i != (first + t / per) % n || tm != tm1 || tn != tn1 || tm < 0 || tm >= tiles_m || tn < 0 ||
		    tn >= tiles_n) {
			printf("group_coords(n %d, first %d, %dx%d tiles, group_m %d): tile %d -> problem %d (%d, %d)\n",
			       n, first, tiles_m, tiles_n, group_m, t, i, tm, tn);
			fails++;
			return;
		}
		seen[(size_t)i * per + tm * tiles_n + tn]++;
	}
	for (int k = 0; k < p.tiles; k++)
		if (seen[k] != 1) {
			printf("group_coords(n %d, first %d, %dx%d tiles): tile %d visited %d times\n", n, first,
			       tiles_m, tiles_n, k, seen[k]);
			fails++;
			return;
		}
}
int main()
{
	const int ns[] = {1, 2, 3, 8};
	const int dims[][3] = {{1, 1, 1}, {16, 4, 16}, {8, 8, 8}, {32, 32, 16}, {7, 5, 3}, {3, 11, 8}};
	for (int n : ns)
		for (int first = 0; first < n; first++)
			for (const auto &d : dims)
				order(n, first, d[0], d[1], d[2] < d[0] ? d[2] : d[0]);
	// gate chunks: each k-block inside the K columns its chunk's copy moves
	for (int kblocks = 1; kblocks <= 256; kblocks++)
		for (int chunks = 1; chunks <= kGemmGateChunksMax && chunks <= kblocks; chunks++) {
			if (kblocks % chunks)
				continue;
			const int K = 64 * kblocks, width = K / chunks;
			int last = 0;
			for (int kb = 0; kb < kblocks; kb++) {
				const int c = gate_chunk(kb, chunks, kblocks);
				if (c < last || c >= chunks || kb * 64 < c * width || (kb + 1) * 64 > (c + 1) * width) {
					printf("gate_chunk(%d, %d, %d) = %d: columns [%d, %d) not in [%d, %d)\n", kb,
					       chunks, kblocks, c, kb * 64, kb * 64 + 64, c * width, (c + 1) * width);
					fails++;
					break;
				}
				last = c;
			}
		}
	if (fails)
		printf("devlib_group: %d failures\n", fails);
	return fails != 0;
}
CU
cd "$root"
"$nvcc" -std=c++17 -Idevice/include -o "$tmp/group" "$tmp/group.cu" >"$tmp/build.log" 2>&1 ||
	{ echo "devlib_group: does not compile:"; tail -20 "$tmp/build.log"; exit 1; }
"$tmp/group"
echo "devlib_group: ok"
