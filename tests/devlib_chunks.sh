#!/usr/bin/env bash
# devlib_chunks.sh - the stream-overlap chunk split (overlap_chunk_rows in
# cuco_dev/overlap.cuh, the taper knob) on the host: fixed cases, then every
# tile count to 128 x every chunk count x tapers 10..100: whole tiles, at
# least one per chunk, never growing below taper 100, covering every row;
# and the tile-row groups the device_signal bands use (overlap_band_group_m)
# keep each band's tiles before the next band's in the GEMM's tile order; and
# the LSA comm kernels' issuer slices (overlap_issued_slice) tile the bytes.
# Host code only: compiled by nvcc, runs without a GPU.
# Usage: bash tests/devlib_chunks.sh [ignored]   (CUCO_HOME = repo root)
set -euo pipefail
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "devlib_chunks: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/chunks.cu" <<'CU'
#include <stdio.h>
#include <cuco_dev/overlap.cuh>
static int fails;
static void expect(int tiles, int chunks, int taper, const int *want)
{
	int row0[CUCO_OVERLAP_MAX_CHUNKS + 1];
	cuco::overlap_chunk_rows(tiles, chunks, taper, row0);
	for (int i = 0; i <= chunks; i++)
		if (row0[i] != want[i] * 128) {
			printf("overlap_chunk_rows(%d, %d, %d): row0[%d] = %d tiles, want %d\n", tiles, chunks,
			       taper, i, row0[i] / 128, want[i]);
			fails++;
			return;
		}
}
int main(void)
{
	const int even[] = {0, 16, 32, 48, 64}, thirds[] = {0, 21, 42, 64}, half[] = {0, 35, 52, 60, 64};
	const int tiny[] = {0, 1, 2, 3}, steep[] = {0, 5, 6, 7, 8};
	expect(64, 4, 100, even);
	expect(64, 3, 100, thirds); /* equal chunks: floor(tiles * i / chunks), as before taper */
	expect(64, 4, 50, half);
	expect(3, 3, 50, tiny);     /* one tile each even when the weights say less */
	expect(8, 4, 10, steep);    /* steep taper: the later chunks still get a tile */
	for (int tiles = 1; tiles <= 128; tiles++)
		for (int chunks = 1; chunks <= tiles && chunks <= CUCO_OVERLAP_MAX_CHUNKS; chunks++)
			for (int taper = 10; taper <= 100; taper += 15) {
				int row0[CUCO_OVERLAP_MAX_CHUNKS + 1];
				cuco::overlap_chunk_rows(tiles, chunks, taper, row0);
				for (int i = 0; i < chunks; i++)
					if (row0[i + 1] - row0[i] < 128 || (i && taper < 100 &&
					    row0[i + 1] - row0[i] > row0[i] - row0[i - 1])) {
						printf("overlap_chunk_rows(%d, %d, %d): chunk %d has %d rows\n", tiles,
						       chunks, taper, i, row0[i + 1] - row0[i]);
						fails++;
						i = chunks;
					}
				if (row0[0] != 0 || row0[chunks] != tiles * 128)
					fails++;
			}
	/* overlap_band_group_m: in the GEMM's tile order every tile of band b comes
	 * before every tile of band b + 1, for every band height and tile grid */
	for (int tiles_m = 1; tiles_m <= 64; tiles_m++)
		for (int band_rows = 1; band_rows <= tiles_m; band_rows++)
			for (int group_m = 8; group_m <= 16; group_m += 8) {
				cuco::gemm_detail::kparams kp = {};
				kp.tiles_m = tiles_m;
				kp.tiles_n = 16;
				kp.tiles = tiles_m * kp.tiles_n;
				kp.group_m = cuco::overlap_band_group_m(group_m, band_rows);
				int band = 0, tm, tn;
				for (int t = 0; t < kp.tiles; t++) {
					cuco::gemm_detail::tile_coords(t, kp, tm, tn);
					if (tm / band_rows < band) {
						printf("overlap_band_group_m(%d, %d) = %d: tile %d of band %d after band %d "
						       "(%d tile rows)\n", group_m, band_rows, kp.group_m, t, tm / band_rows, band,
						       tiles_m);
						fails++;
						t = kp.tiles;
						break;
					}
					band = tm / band_rows;
				}
			}
	static_assert(cuco::overlap_band_group_m(16, 8) == 8 && cuco::overlap_band_group_m(16, 64) == 16 &&
		      cuco::overlap_band_group_m(16, 12) == 12 && cuco::overlap_band_group_m(8, 12) == 6 &&
		      cuco::overlap_band_group_m(16, 7) == 7 && cuco::overlap_band_group_m(16, 1) == 1, "band groups");
	/* overlap_issued_slice: the issuers' slices tile [0, bytes) in order, each
	 * starting on a 16-byte boundary, none longer than the first */
	const size_t sizes[] = {0, 1, 15, 16, 17, 4095, 65536, (4u << 20) + 48, (64u << 20) + 16};
	const size_t unit_counts[] = {1, 7, 32, 513, 16384, 65536};
	for (size_t bytes : sizes)
		for (size_t units : unit_counts) {
			size_t next = 0, first = 0;
			for (size_t u = 0; u < units; u++) {
				size_t b0, n;
				cuco::overlap_issued_slice(bytes, units, u, &b0, &n);
				if (u == 0)
					first = n;
				if ((n && (b0 != next || b0 % 16)) || n > first) {
					printf("overlap_issued_slice(%zu, %zu, %zu) = [%zu, +%zu), expected from %zu\n",
					       bytes, units, u, b0, n, next);
					fails++;
					break;
				}
				next += n;
			}
			if (next != bytes) {
				printf("overlap_issued_slice(%zu bytes, %zu units) covers %zu\n", bytes, units, next);
				fails++;
			}
		}
	printf("chunk rows: %s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
CU
cd "$root"
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -std=c++17 -I include -I device/include \
	"$tmp/chunks.cu" -o "$tmp/chunks"
"$tmp/chunks"
