#!/usr/bin/env bash
# devlib_split.sh - the split tail's schedule on the host (cuco_dev/gemm.cuh,
# gemm_bf16_plan_split): the unsplit kernel's units are the plain persistent
# schedule (CTA b: tiles b, b + ctas, ...); for grids, tile counts, k-block counts and ways, the
# units next_unit hands the CTAs cover every (tile, k-block) exactly once;
# whole tiles come first and fill whole waves; each split tile has one
# finisher and one unit per other rank, all in one stage, with partial-sum
# slots and counters of their own inside the sizes split_layout reports; a
# stage's parts differ by at most one k-block; finishers rotate; and a plan
# that cannot split computes every tile whole. And the persistent grid
# (balanced_grid): at most min(SMs, tiles, max_ctas) CTAs, as many waves as
# that many, and as few CTAs as keep them; split plans keep one CTA per SM.
# And any N (plan_width, gemm_bf16_tile_col0): a width the rules allow, and
# tile columns covering [0, N) inside it, only the last overlapping.
# Host code only: compiled by nvcc, runs without a GPU.
# Usage: bash tests/devlib_split.sh [ignored]   (CUCO_HOME = repo root)
set -euo pipefail
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "devlib_split: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/split.cu" <<'CU'
#include <stdio.h>
#include <vector>
#include <cuco_dev/gemm.cuh>
using namespace cuco;
using namespace cuco::gemm_detail;
static int fails;
#define BAD(...)                                                                                     \
	do {                                                                                         \
		printf("tiles %d ctas %d kblocks %d ways %d: ", tiles, ctas, kblocks, ways);         \
		printf(__VA_ARGS__);                                                                 \
		printf("\n");                                                                        \
		fails++;                                                                             \
		return;                                                                              \
	} while (0)
static void schedule(int tiles, int ctas, int kblocks, int ways)
{
	kparams p = {};
	p.tiles = tiles;
	p.kblocks = kblocks;
	const int slots = split_layout(tiles, ctas, kblocks, ways, &p.sp);
	const bool can = ways >= 2 && ways <= kGemmSplitMax && ways <= kblocks && ctas >= 2 * ways;
	if (!can) {
		if (p.sp.stages || p.sp.whole != tiles || slots)
			BAD("splits (%d stages, %d whole) though it cannot", p.sp.stages, p.sp.whole);
		return;
	}
	if (!p.sp.stages || p.sp.whole % ctas || p.sp.whole >= tiles)
		BAD("whole %d, stages %d", p.sp.whole, p.sp.stages);
	const int tail = tiles - p.sp.whole;
	if (tail > ctas || (tiles % ctas && tail != tiles % ctas))
		BAD("tail %d is not the tiles past the last full wave", tail);
	std::vector<int> cover((size_t)tiles * kblocks, 0), slot_use(slots, 0), fin(tail, 0), parts(tail, 0),
		stage_of(tail, -1), ways_of(tail, 0);
	for (int b = 0; b < ctas; b++) {
		split_unit u;
		int last_t = -1, n = 0;
		for (int w = b, s = 0; next_unit<true>(p, ctas, b, w, s, u);) {
			if (++n > tiles + p.sp.stages)
				BAD("CTA %d: no end", b);
			if (u.t < 0 || u.t >= tiles || u.kb0 < 0 || u.kb1 > kblocks || u.kb0 >= u.kb1)
				BAD("CTA %d: unit tile %d k [%d, %d)", b, u.t, u.kb0, u.kb1);
			if (u.t <= last_t && u.ways == 1)
				BAD("CTA %d: whole tiles out of order", b);
			last_t = u.t;
			for (int kb = u.kb0; kb < u.kb1; kb++)
				cover[(size_t)u.t * kblocks + kb]++;
			if (u.ways == 1) {
				if (u.t >= p.sp.whole)
					BAD("CTA %d: tail tile %d computed whole", b, u.t);
				continue;
			}
			if (u.t < p.sp.whole || u.ti != u.t - p.sp.whole || u.ti >= tail)
				BAD("CTA %d: split unit of tile %d (ti %d)", b, u.t, u.ti);
			const int len = u.kb1 - u.kb0, even = kblocks / u.ways;
			if (len < even || len > even + 1)
				BAD("CTA %d: part of %d k-blocks, %d ways of %d", b, len, u.ways, kblocks);
			if (u.rank < 0 || u.rank >= u.ways)
				BAD("CTA %d: rank %d of %d", b, u.rank, u.ways);
			if (ways_of[u.ti] && ways_of[u.ti] != u.ways)
				BAD("tile %d split %d and %d ways", u.t, ways_of[u.ti], u.ways);
			ways_of[u.ti] = u.ways;
			parts[u.ti]++;
			if (u.rank == 0)
				fin[u.ti]++;
			else {
				const int sl = u.slot + u.rank - 1;
				if (sl < 0 || sl >= slots)
					BAD("tile %d: slot %d of %d", u.t, sl, slots);
				slot_use[sl]++;
			}
			const int st = s - 1; // next_unit advanced past this unit's stage
			if (stage_of[u.ti] >= 0 && stage_of[u.ti] != st)
				BAD("tile %d in stages %d and %d", u.t, stage_of[u.ti], st);
			stage_of[u.ti] = st;
			const int part = (u.kb0 * u.ways + kblocks - 1) / kblocks; // kb0 = part * kblocks / ways
			if (u.rank == 0 && part != st % u.ways)
				BAD("tile %d: finisher part %d in stage %d", u.t, part, st);
		}
	}
	for (int t = 0; t < tiles; t++)
		for (int kb = 0; kb < kblocks; kb++)
			if (cover[(size_t)t * kblocks + kb] != 1)
				BAD("tile %d k-block %d computed %d times", t, kb, cover[(size_t)t * kblocks + kb]);
	for (int i = 0; i < tail; i++)
		if (fin[i] != 1 || parts[i] != ways_of[i] || ways_of[i] < ways)
			BAD("tail tile %d: %d finishers, %d parts of %d ways", i, fin[i], parts[i], ways_of[i]);
	for (int i = 0; i < slots; i++)
		if (slot_use[i] != 1)
			BAD("slot %d used %d times", i, slot_use[i]);
}
int main()
{
	const int ctas_set[] = {1, 3, 4, 7, 16, 64, 100, 128, 131, 132};
	const int tiles_set[] = {1, 2, 5, 16, 63, 64, 100, 128, 132, 133, 256, 264, 1024, 1000};
	const int kb_set[] = {1, 2, 3, 8, 32, 64, 127, 128};
	for (int ctas : ctas_set)
		for (int tiles : tiles_set)
			for (int kblocks : kb_set)
				for (int ways = 0; ways <= kGemmSplitMax + 1; ways++)
					schedule(tiles, ctas, kblocks, ways);
	// the unsplit kernel's schedule (next_unit<false>): CTA b takes b, b + ctas, ...
	for (int ctas : ctas_set)
		for (int tiles : tiles_set) {
			kparams p = {};
			p.tiles = tiles;
			for (int b = 0; b < ctas; b++) {
				split_unit u;
				int want = b;
				for (int w = b, s = 0; next_unit<false>(p, ctas, b, w, s, u); want += ctas)
					if (u.t != want || want >= tiles) {
						printf("unsplit: tiles %d ctas %d CTA %d: tile %d, want %d\n", tiles, ctas,
						       b, u.t, want);
						fails++;
						break;
					}
				if (want < tiles) {
					printf("unsplit: tiles %d ctas %d CTA %d stops before tile %d\n", tiles, ctas, b,
					       want);
					fails++;
				}
			}
		}
	// the shapes the workloads run: 8192x4096x8192 at 128x256 on 132 SMs, 3 ways:
	// 7 whole waves, then 44 + 44 tiles 3 ways and the last 12 split further
	split_params sp;
	split_layout(1024, 132, 128, 3, &sp);
	if (sp.whole != 924 || sp.n != 44 || sp.stages != 3 || sp.n_last != 12 || sp.g_last != 6) {
		printf("8192: whole %d, n %d, stages %d, n_last %d, g_last %d\n", sp.whole, sp.n, sp.stages,
		       sp.n_last, sp.g_last);
		fails++;
	}
	// the persistent grid: as few CTAs as keep the waves of min(SMs, tiles, max_ctas)
	for (int units = 1; units <= 2100; units += units < 300 ? 1 : 37)
		for (int sms : {1, 7, 100, 128, 131, 132})
			for (int cap : {0, 1, 5, 64, 128, 131, 200}) {
				int base = units < sms ? units : sms;
				if (cap > 0 && cap < base)
					base = cap;
				const int c = balanced_grid(units, sms, cap);
				auto waves = [&](int x) { return (units + x - 1) / x; };
				if (c < 1 || c > base || waves(c) != waves(base) || (c > 1 && waves(c - 1) == waves(base))) {
					printf("grid: %d tiles, %d SMs, cap %d: %d CTAs (%d waves), from %d CTAs (%d waves)\n",
					       units, sms, cap, c, waves(c), base, waves(base));
					fails++;
				}
			}
	{
		const int want[][4] = {{1024, 132, 0, 128}, {512, 132, 0, 128}, {256, 132, 0, 128},
		                       {128, 132, 0, 128},  {64, 132, 0, 64},   {1000, 132, 0, 125},
		                       {1024, 132, 131, 128}, {1024, 132, 100, 94}, {2048, 132, 0, 128}};
		for (const auto &w : want)
			if (balanced_grid(w[0], w[1], w[2]) != w[3]) {
				printf("grid: %d tiles, %d SMs, cap %d: %d CTAs, want %d\n", w[0], w[1], w[2],
				       balanced_grid(w[0], w[1], w[2]), w[3]);
				fails++;
			}
		gemm_bf16_plan pl = {};
		pl.tiles_m = 64;
		pl.tiles_n = 16; // 8192x4096 at 128x256
		if (split_ctas(&pl, 1, 132, 0) != 128 || split_ctas(&pl, 2, 132, 0) != 132) {
			printf("split_ctas: unsplit %d (want 128), 2 ways %d (want 132)\n", split_ctas(&pl, 1, 132, 0),
			       split_ctas(&pl, 2, 132, 0));
			fails++;
		}
	}
	// any N: the plan's width, and tile columns that cover [0, N)
	// exactly, each inside it, only the last one overlapping the one before
	for (int N = 64; N <= 33000; N += N < 1200 ? 8 : 136) {
		const int bn = plan_width(N);
		if (bn != 64 && bn != 128 && bn != 256) {
			printf("width: N %d: %d\n", N, bn);
			fails++;
			continue;
		}
		if (bn > N || (N % 256 == 0 && bn != 256) || (N % 256 && N % 128 == 0 && bn != 128)) {
			printf("width: N %d: %d\n", N, bn);
			fails++;
		}
		for (int w = bn; w >= 64; w /= 2) { // the plan's width and every narrowing
			const int tiles_n = (N + w - 1) / w;
			int next = 0; // first column not yet covered
			for (int tn = 0; tn < tiles_n; tn++) {
				const int c0 = gemm_bf16_tile_col0(tn, w, N);
				const bool last = tn == tiles_n - 1;
				if (c0 < 0 || c0 + w > N || c0 > next || (!last && c0 != tn * w) ||
				    (last && c0 + w != N)) {
					printf("columns: N %d width %d: tile %d starts at %d\n", N, w, tn, c0);
					fails++;
					break;
				}
				next = c0 + w;
			}
		}
	}
	{
		const int want[][2] = {{14784, 256}, {16032, 256}, {1000, 256}, {200, 128}, {72, 64},
		                       {3696, 256}, {1152, 128}, {1160, 256}, {1040, 128}, {8192, 256}, {640, 128}};
		for (const auto &w : want)
			if (plan_width(w[0]) != w[1]) {
				printf("width: N %d: %d, want %d\n", w[0], plan_width(w[0]), w[1]);
				fails++;
			}
		// a lone GEMM's split (gemm_bf16_alone_split): 2 ways with at most 45 % of
		// a wave left, none past that, for whole waves or one wave
		const int split_want[][2] = {{1856, 2}, {4096, 2}, {8192, 2}, {2016, 2}, {1376, 2},
		                             {1920, 0}, {1024, 0}, {2112, 0}, {128, 0},  {133, 2}};
		for (const auto &w : split_want)
			if (gemm_bf16_alone_split(w[0], 132) != w[1]) {
				printf("alone split: %d tiles: %d ways, want %d\n", w[0],
				       gemm_bf16_alone_split(w[0], 132), w[1]);
				fails++;
			}
		if (kblocks_of(1000) != 16 || kblocks_of(1024) != 16 || kblocks_of(8) != 1) {
			printf("kblocks_of: %d %d %d\n", kblocks_of(1000), kblocks_of(1024), kblocks_of(8));
			fails++;
		}
	}
	if (fails)
		printf("devlib_split: %d failures\n", fails);
	return fails != 0;
}
CU
cd "$root"
"$nvcc" -std=c++17 -Idevice/include -o "$tmp/split" "$tmp/split.cu" >"$tmp/build.log" 2>&1 ||
	{ echo "devlib_split: does not compile:"; tail -20 "$tmp/build.log"; exit 1; }
"$tmp/split"
echo "devlib_split: ok"
