// cuco_dev/gemm_plan.cuh -- the bf16 GEMM's plan: public types, the tile
// configuration the kernels are built from, the tile order, tensor maps and the
// host-side plan functions (gemm_bf16_plan_init, _narrow, _split,
// gemm_bf16_tiles, a lone GEMM's tile width and split). Included by cuco_dev/gemm.cuh, the entry
// point (see its opening comment).
#pragma once

#include <cuda.h> // CUtensorMap & enums (types only; no libcuda link)
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>
#include <atomic>
#include <type_traits>

namespace cuco
{

// ---------------------------------------------------------------- public types

/// Problem description. All counts in elements. Pointers are device pointers.
struct gemm_bf16_args {
	const __nv_bfloat16 *A; ///< [M, K] row-major, row stride lda
	const __nv_bfloat16 *B; ///< [K, N] row-major, row stride ldb
	__nv_bfloat16 *C;       ///< [M, N] row-major, row stride ldc
	int M, N, K;
	long long lda, ldb, ldc;
};

/// Tile geometry of a plan (what gemm_bf16_tiles returns).
struct gemm_bf16_tile_info {
	int tile_m;  ///< rows of C per tile (128)
	int tile_n;  ///< columns of C per tile (64, 128 or 256)
	int tiles_m; ///< ceil(M / tile_m): the last tile row holds M - (tiles_m - 1) * tile_m rows
	int tiles_n; ///< ceil(N / tile_n): the last tile column starts at N - tile_n
	             ///< (gemm_bf16_tile_col0)
	int tiles;   ///< tiles_m * tiles_n
	int ctas;    ///< persistent grid size the plan launches
	int split;   ///< K-split ways of the tail's full stages (0: no split)
	int whole;   ///< tiles computed whole (the rest are split)
};

/// First column of tile column tn in a plan of tile_n-wide tiles over N
/// columns: tn * tile_n, except that the last tile column of an N that is
/// not a multiple of tile_n starts at N - tile_n, overlapping the one
/// before it (both compute the shared columns, with the same operands in
/// the same order, and store the same values there). What an epilogue hook
/// or a consumer of finished tiles must use to locate tile (tm, tn).
__host__ __device__ constexpr int gemm_bf16_tile_col0(int tn, int tile_n, int N)
{
	return (tn + 1) * tile_n > N ? N - tile_n : tn * tile_n;
}

/// A plan: two TMA tensor maps plus launch geometry, built on the host by
/// gemm_bf16_plan_init (host-only, no device work, a few microseconds).
/// The plan is bound to the pointers it was made with; to change A or B
/// (e.g. input rotation) call gemm_bf16_plan_set_A / _set_B (re-encodes one
/// tensor map, ~1-2 us of host time) or simply re-init. C may be changed by
/// assigning plan.C directly (C is a plain kernel argument). The plan is a
/// plain value: copy it freely; gemm_bf16_run takes it by pointer and passes
/// the tensor maps by value as __grid_constant__ kernel parameters, so the
/// plan may be modified or destroyed as soon as gemm_bf16_run returns.
struct gemm_bf16_plan {
	CUtensorMap tmA; ///< A: dims {K, M}, box {64, 128}, 128B swizzle
	CUtensorMap tmB; ///< B: dims {N, K}, box {64, 64},  128B swizzle
	__nv_bfloat16 *C;
	long long ldc;
	int M, N, K;
	int bn; ///< tile_n: 256 or 128 (or 64: gemm_bf16_plan_narrow)
	int tiles_m, tiles_n;
	int ctas;       ///< grid size
	int group_m;    ///< tile rows per L2 group of the tile order (>= 1)
	int start_tile; ///< rotation of the tile order: linear tile t is processed
	                ///< as (t + start_tile) % tiles. 0 by default; may be set
	                ///< by the caller after init to any value in [0, tiles).
	int device;     ///< device the plan was made for
	int sms;        ///< its SM count (read once, by gemm_bf16_plan_init)
	long long lda, ldb;
	const __nv_bfloat16 *A, *B;
	int split;           ///< gemm_bf16_plan_split's ways (0: every tile whole)
	float *split_ws;     ///< its workspace: partial sums, then ...
	unsigned *split_cnt; ///< ... one arrival counter per split tile
};

/// The default (no-op) epilogue. Using it compiles the hook and its
/// fence/barrier out entirely.
struct gemm_no_epilogue {
	__device__ void operator()(int, int, int, int) const {}
};

/// Most copies of C besides the plan's own that gemm_push_epilogue sends to.
constexpr int kGemmPushMax = 7;

/// Epilogue that sends every finished tile to `n` other copies of C as well
/// (dst[i] = element (0,0) of copy i, same ldc as the plan's C; e.g. peers'
/// C through NVLink). Each consumer warp stages its 16 rows of the tile in
/// shared memory, Rows at a time, and Rows of its lanes issue one bulk copy
/// per row and copy (cp.async.bulk, the TMA engine), which then run while the
/// CTA computes its next tile; a warp waits for its previous copies to have
/// read shared memory before it overwrites the staging rows, and for all of
/// them to have completed before the kernel ends. No per-tile fence, barrier
/// or hook call. Rows = 16 (or 0, the default) stages the 16 rows at once,
/// which costs a pipeline stage at tile_n 256 (3 instead of 4); Rows = 8
/// stages them in two rounds (the second waits for the first's copies to
/// have read), which halves the staging area and keeps the 4th stage.
/// Rows = -1 (direct) stages nothing: every consumer thread stores its
/// 16-byte pieces of the tile to each copy from registers, right beside its
/// store to C (st.global, through NVLink for a peer), and fences them at
/// system scope before the kernel ends; the TMA engine then only loads.
/// Rows = -2 (warps) stages the whole tile (as 16) and hands it to the three
/// idle warps of the producer warpgroup, which copy it to every destination
/// with 16-byte loads and stores while the consumers go on (an mbarrier pair
/// per CTA: staged / staging free); neither the consumers nor the TMA
/// engine, which loads the next tiles' operands, issue a byte of the push.
/// Needs 16-byte aligned C copies and ldc % 8 == 0 (else the launch returns
/// cudaErrorInvalidValue). pace (warps only, percent; 0: as fast as the
/// stores go) spreads each tile's copy, in CUCO_GEMM_PACE_STEPS steps, over
/// pace % of the time the CTA took for the tile before it (for its first tile, since the
/// kernel began; %globaltimer), except the CTA's last tile, which nothing
/// follows: all CTAs finish their tiles together, wave after wave, and
/// unpaced their pushes reach NVLink as one burst per wave. Below 100 the
/// copy ends before the next tile is staged, so the consumers never wait
/// for the staging tile on its account. last_bulk (warps only): the CTA's
/// last tile, which no math follows, is sent as with Rows 16 (the consumer
/// warps' lanes issue one bulk copy per row) and the copying warps skip it.
/// last_halves (warps only, tile_n 128 or 256, not with a split tail): the
/// CTA's last tile is computed as two tiles of tile_n / 2 columns, one after
/// the other, each staged and sent as a tile of its own, so the first half
/// goes out while the second computes and only half a tile per CTA is left to
/// send once the math ends (the last wave's tiles otherwise all finish, and
/// go out, together). Its A rows are loaded twice. With pace the first half
/// is paced over half the span a whole tile gets; with last_bulk both halves
/// go by the consumers' bulk copies. Else the launch returns
/// cudaErrorInvalidValue.
///
/// Sync orders the copies against their readers. gemm_push_no_sync leaves
/// that to the caller (e.g. barrier kernels before and after the GEMM).
/// Otherwise Sync provides three device hooks:
///   enter()        one thread of every CTA (threadIdx.x 32, a producer-
///                  warpgroup thread that issues no loads; at most 40
///                  registers), once, at kernel start;
///   wait_entered() every copy-issuing lane (direct: lane 0 of each consumer
///                  warp; warps: lane 0 of each copying warp), before the
///                  CTA's first copy;
///   leave()        one consumer thread (threadIdx.x 128), once, after every
///                  copy of the CTA has completed and the 256 consumer threads
///                  met at named barrier 1.
struct gemm_push_no_sync {
	__device__ void enter() const {}
	__device__ void wait_entered() const {}
	__device__ void leave() const {}
};
template <class Sync = gemm_push_no_sync, int Rows = 0> struct gemm_push_epilogue {
	int n = 0;
	__nv_bfloat16 *dst[kGemmPushMax];
	Sync sync;
	unsigned pace = 0; ///< Rows -2: spread each tile's copy but the last over pace % of the
	                   ///< tile before; 0: no pacing
	unsigned last_bulk =
	    0; ///< Rows -2: the CTA's last tile goes by the consumers' bulk copies, as with Rows 16
	unsigned last_halves = 0; ///< Rows -2, tile_n 128 or 256, unsplit: the CTA's last tile
	                          ///< computed and sent in two halves
	__device__ void operator()(int, int, int, int) const {}
};

/// Most problems one grouped launch computes (gemm_bf16_group), and most
/// gate chunks per problem.
constexpr int kGemmGroupMax = 8;
constexpr int kGemmGateChunksMax = 64;

/// Most ways gemm_bf16_plan_split splits one tile's K range.
constexpr int kGemmSplitMax = 8;

/// Several GEMMs of one shape in one persistent launch: C_i = A_i * B_i for
/// i in [0, n), where every A_i may be the plan's A (problems sharing A, e.g.
/// the column blocks of a column-parallel layer) or every B_i the plan's B
/// (problems sharing B, e.g. the row shards of a gathered A), with the plan's
/// lda, ldb and ldc. Problems are computed whole, one after the other in tile
/// order: `first`, first + 1, ... (mod n), so the CTAs of the first waves work
/// on problem `first` while the later ones' operands may still be arriving. A
/// problem whose gate[i] is not null is gated: before the producer loads
/// k-block kb of one of its tiles it waits until gate[i][c] - epoch >= 0 (as
/// int32) for chunk c = kb * chunks / kblocks, i.e. until K columns
/// [c * K / chunks, (c + 1) * K / chunks) of A_i and K rows of B_i are in
/// place. Whoever fills them (a copy-engine memcpy followed by
/// gemm_gate_set, a kernel...) must make them visible before the flag; the
/// producer reads the flag with acquire at system scope and fences the async
/// proxy before its TMA loads. Built by gemm_bf16_group_init; a plain value
/// passed as one kernel parameter.
struct gemm_bf16_group {
	CUtensorMap tmA[kGemmGroupMax];      ///< A_i (per_a): dims {K, M}, box {64, 128}
	CUtensorMap tmB[kGemmGroupMax];      ///< B_i (per_b): dims {N, K}, box {64, 64}
	__nv_bfloat16 *C[kGemmGroupMax];     ///< C_i, element (0, 0)
	const unsigned *gate[kGemmGroupMax]; ///< null: problem i's operands are ready at launch
	unsigned epoch;                      ///< value a gate flag must reach
	int n, first, chunks, ctas;
	int per_a, per_b; ///< 1: problem i reads tmA[i] / tmB[i], 0: the plan's
};

/// No grouping: the plan's own A, B and C (what gemm_bf16_run launches).
struct gemm_no_group {
};

#ifndef CUCO_GEMM_PACE_STEPS
#define CUCO_GEMM_PACE_STEPS 8 // pace: waits per tile (0: one per round of the copy)
#endif
#ifndef CUCO_GEMM_HALF_STAGES
#define CUCO_GEMM_HALF_STAGES \
	8 // last_halves: most stages in the halves' ring (fewer if they do not fit)
#endif
#ifndef CUCO_GEMM_STAGE_SWIZZLE
#define CUCO_GEMM_STAGE_SWIZZLE \
	1 // Rows -2: staging rows swizzled (0: plain row-major, bank conflicts)
#endif

namespace gemm_detail
{

constexpr int BM = 128;
constexpr int BK = 64;
// k-blocks of a K: the last one partial when K % 64 != 0 (TMA fills A's
// columns and B's rows past K with zeros, which add nothing)
__host__ __device__ constexpr int kblocks_of(int K)
{
	return (K + BK - 1) / BK;
}
constexpr int kThreads = 384; // 3 warpgroups
// PushRows = rows each consumer warp stages per round of gemm_push_epilogue
// (0 = no push; 16 = the warp's whole 16-row share at once; 8 = two rounds of
// 8; -1 = direct stores, no staging; -2 = the whole tile staged for the
// producer warpgroup's copying warps). The staging area (8 warps x PushRows
// rows x BN; -2: the tile) follows the stages; -2 adds the staged / free
// mbarrier pair after the stages' ones, then the halves' ring's (kHStages).
template <int BN, int PushRows = 0> struct cfg {
	static_assert(BN == 64 || BN == 128 || BN == 256, "tile_n is 64, 128 or 256");
	static_assert(PushRows == -2 || PushRows == -1 || PushRows == 0 || PushRows == 8 ||
	                  PushRows == 16,
	              "push: warps (-2), direct (-1), or staging rounds of 8 or 16 rows");
	static constexpr bool kWholeTile =
	    PushRows == 16 || PushRows == -2; // staging holds the whole tile
	static constexpr int kStages = (BN == 256) ? (kWholeTile ? 3 : 4) : (BN == 128 ? 6 : 8);
	static constexpr int kABytes = BM * BK * 2; // 16 KB
	static constexpr int kBBytes = BK * BN * 2; // 32, 16 or 8 KB
	static constexpr int kStageBytes = kABytes + kBBytes;
	static constexpr int kPushBytes = kWholeTile     ? BM * BN * 2
	                                  : PushRows > 0 ? (BM / 16) * PushRows *BN * 2
	                                                 : 0;
	// last_halves (-2, BN >= 128): the halves' k-blocks come through a ring of
	// their own from the same memory as the stages: a half's stage holds half of
	// B's boxes, so more of them fit; as many as the CTA's shared memory holds
	// (the stages' and what the whole tile's ring leaves unused), at most
	// CUCO_GEMM_HALF_STAGES: 5 at BN 256 (4 keep as many bytes in flight as the
	// whole tile's 3 stages), 8 at 128
	static constexpr int kSmemMax = 232448; // an H100/H200 CTA's most dynamic shared memory
	static constexpr int kHalfStageBytes = kABytes + kBBytes / 2;
	static constexpr int kHFit =
	    (kSmemMax - 1024 - kPushBytes - 8 * (2 * kStages + 2 + 2 * CUCO_GEMM_HALF_STAGES)) /
	    kHalfStageBytes;
	static constexpr int kHStages =
	    PushRows == -2 && BN >= 128
	        ? (kHFit < CUCO_GEMM_HALF_STAGES ? kHFit : CUCO_GEMM_HALF_STAGES)
	        : 0;
	static constexpr int kRingBytes =
	    kStages * kStageBytes > kHStages *kHalfStageBytes
	        ? kStages *kStageBytes
	        : kHStages *kHalfStageBytes; // the staging tile follows
	static constexpr int kBars =
	    2 * kStages + (PushRows == -2 ? 2 + 2 * kHStages : 0); // mbarriers
	static constexpr int kSmem = 1024 /*align slack*/ + kRingBytes + kPushBytes + kBars * 8;
	static_assert(kSmem <= kSmemMax, "more shared memory than an H100/H200 CTA may have");
};
template <class Epi> struct is_push_t : std::false_type {
};
template <class Sync, int Rows> struct is_push_t<gemm_push_epilogue<Sync, Rows>> : std::true_type {
};
template <class Epi> struct push_sync_t {
	using type = gemm_push_no_sync;
};
template <class Sync, int Rows> struct push_sync_t<gemm_push_epilogue<Sync, Rows>> {
	using type = Sync;
};
// Staging rows per round: 16 unless the epilogue type asks for 8 (or -1:
// direct stores, no staging; -2: copying warps). Two 8-row rounds keep a 4th pipeline stage at
// BN 256 but measured no faster: the stage count is not what the push costs
// (docs/gemm.md).
template <class Epi, int BN> struct push_rows_t {
	static constexpr int value = 0;
};
template <class Sync, int Rows, int BN> struct push_rows_t<gemm_push_epilogue<Sync, Rows>, BN> {
	static constexpr int value = Rows ? Rows : 16;
};

// Split tail (gemm_bf16_plan_split). Linear tiles [0, whole) are computed
// whole, CTA b taking b, b + ctas, ... (whole is a multiple of ctas, so all
// CTAs end that phase together). The rest, the tail, run in stages: each of
// the first stages - 1 takes n tiles and splits each g ways along K, the last
// takes the n_last left and splits them g_last ways. In stage s, CTA b (when
// b < tiles x ways) computes part b % ways of tail tile s * n + b / ways. One
// part per tile, part s % ways (so the fix-ups rotate over the CTAs), is the
// finisher: it waits for the other parts' fp32 partial sums, adds them and
// runs the epilogue; the others store theirs and move on. So the tail's tiles
// finish stage by stage, a few at a time, instead of in one last wave.
struct split_params {
	int whole;          // tiles computed whole (== tiles when not split)
	int g, n;           // the full stages: n tiles each, g ways
	int g_last, n_last; // the last stage
	int stages;         // 0 when not split
	float *ws;          // partial sums: slot i at ws + i * BM * BN
	unsigned *cnt;      // arrivals per tail tile; zero between launches
};
// One unit of a CTA's work: k-blocks [kb0, kb1) of linear tile t.
struct split_unit {
	int t, kb0, kb1;
	int ways; // 1: the whole tile
	int rank; // 0: the finisher; r > 0 stores partial-sum slot `slot + r - 1`
	int slot; // the tile's first slot (ways - 1 of them)
	int ti;   // tail tile index: its arrival counter
};

struct kparams {
	__nv_bfloat16 *C;
	long long ldc;
	int m; // rows of C: the last tile row's rows >= m come from zero-filled A rows and are
	       // never stored in C
	int n; // columns of C: the last tile column starts at n - BN (gemm_bf16_tile_col0)
	int tiles_m, tiles_n, tiles, kblocks;
	int group_m, start_tile;
	int vec16; // C 16-byte aligned and ldc % 8 == 0: 16-byte epilogue stores
	split_params sp;
};

// The split schedule of `tiles` tiles on `ctas` CTAs, `ways` ways (see
// split_params); returns the partial-sum slots it needs, 0 (and no split:
// every tile whole) when ways < 2, ways > kGemmSplitMax or kblocks, or
// ctas < 2 * ways. The tail is the tiles past the last full wave, or the
// last wave when the tiles fill whole waves. The last stage splits its n_last
// tiles into as many ways as the CTAs allow, between ways and
// min(2 * ways, kGemmSplitMax, kblocks), so a short last stage ends sooner.
__host__ __device__ inline int split_layout(int tiles, int ctas, int kblocks, int ways,
                                            split_params *sp)
{
	sp->whole = tiles;
	sp->g = sp->n = sp->g_last = sp->n_last = sp->stages = 0;
	if (ways < 2 || ways > kGemmSplitMax || ways > kblocks || ctas < 2 * ways || tiles < 1)
		return 0;
	const int rem = tiles % ctas;
	const int tail = rem ? rem : ctas < tiles ? ctas : tiles;
	const int n = ctas / ways;
	const int full = (tail - 1) / n;
	const int n_last = tail - full * n;
	int cap = 2 * ways;
	if (cap > kGemmSplitMax)
		cap = kGemmSplitMax;
	if (cap > kblocks)
		cap = kblocks;
	int gl = ctas / n_last;
	if (gl > cap)
		gl = cap;
	if (gl < ways)
		gl = ways;
	sp->whole = tiles - tail;
	sp->g = ways;
	sp->n = n;
	sp->g_last = gl;
	sp->n_last = n_last;
	sp->stages = full + 1;
	return full * n * (ways - 1) + n_last * (gl - 1);
}
// CTA b's unit in tail stage s; false when b sits that stage out.
__host__ __device__ inline bool split_unit_of(const split_params &sp, int kblocks, int b, int s,
                                              split_unit *u)
{
	const bool last = s == sp.stages - 1;
	const int ways = last ? sp.g_last : sp.g, n = last ? sp.n_last : sp.n;
	if (b >= n * ways)
		return false;
	const int i = b / ways, part = b % ways;
	u->ti = s * sp.n + i;
	u->t = sp.whole + u->ti;
	u->ways = ways;
	u->kb0 = (int)((long long)part * kblocks / ways);
	u->kb1 = (int)((long long)(part + 1) * kblocks / ways);
	u->rank = (part - s % ways + ways) % ways;
	u->slot = s * sp.n * (sp.g - 1) + i * (ways - 1);
	return true;
}
// A CTA's next unit: its whole tiles (w = b, b + ctas, ...), then one per
// tail stage it takes part in (s counts the stages). False when done.
// Split = false (a launch with no split tail): every tile whole, and the
// kernel's loops compile to the plain persistent schedule.
template <bool Split>
__host__ __device__ inline bool next_unit(const kparams &p, int ctas, int b, int &w, int &s,
                                          split_unit &u)
{
	if (!Split) {
		if (w >= p.tiles)
			return false;
		u.t = w;
		w += ctas;
		return true;
	}
	if (w < p.sp.whole) {
		u.t = w;
		u.kb0 = 0;
		u.kb1 = p.kblocks;
		u.ways = 1;
		u.rank = u.slot = u.ti = 0;
		w += ctas;
		return true;
	}
	while (s < p.sp.stages)
		if (split_unit_of(p.sp, p.kblocks, b, s++, &u))
			return true;
	return false;
}

// Linear tile index (already offset by the CTA's persistent loop) -> (tm, tn).
// Order: groups of `group_m` tile rows; inside a group, column-major over
// (row-in-group, tile column), so the CTAs running at one time share a band
// of A rows and a band of B columns in L2.
__host__ __device__ __forceinline__ void tile_coords_in(int t, const kparams &p, int &tm, int &tn)
{
	const int per_group = p.group_m * p.tiles_n;
	const int g = t / per_group;
	const int first_m = g * p.group_m;
	const int rem_m = p.tiles_m - first_m;
	const int gsz = rem_m < p.group_m ? rem_m : p.group_m;
	const int r = t - g * per_group;
	tm = first_m + r % gsz;
	tn = r / gsz;
}
__host__ __device__ __forceinline__ void tile_coords(int t, const kparams &p, int &tm, int &tn)
{
	t += p.start_tile;
	if (t >= p.tiles)
		t -= p.tiles;
	tile_coords_in(t, p, tm, tn);
}
// Grouped launch: linear tile t -> (problem, tm, tn); problems whole, in the
// order first, first + 1, ... (mod n), each in the order above. (Host too:
// tests/devlib_group.sh checks the order.)
__host__ __device__ __forceinline__ void
group_coords(int t, const kparams &p, const gemm_bf16_group &g, int &i, int &tm, int &tn)
{
	const int per = p.tiles_m * p.tiles_n;
	const int j = t / per;
	i = g.first + j;
	if (i >= g.n)
		i -= g.n;
	tile_coords_in(t - j * per, p, tm, tn);
}

// ---------------------------------------------------------------- host side
typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                    const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline encode_tiled_fn get_encode_tiled()
{
	static encode_tiled_fn fn = []() -> encode_tiled_fn {
		void *f = nullptr;
		cudaDriverEntryPointQueryResult q;
		if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
		                                     cudaEnableDefault, &q) != cudaSuccess ||
		    q != cudaDriverEntryPointSuccess)
			return nullptr;
		return reinterpret_cast<encode_tiled_fn>(f);
	}();
	return fn;
}

// 2-D bf16 tensor map: inner dimension contiguous, 128-byte swizzle.
inline cudaError_t encode_2d(CUtensorMap *map, const void *ptr, unsigned long long inner,
                             unsigned long long outer, unsigned long long row_stride_elems,
                             unsigned box_inner, unsigned box_outer)
{
	encode_tiled_fn enc = get_encode_tiled();
	if (!enc)
		return cudaErrorNotSupported;
	cuuint64_t dims[2] = {inner, outer};
	cuuint64_t strides[1] = {row_stride_elems * 2ull};
	cuuint32_t box[2] = {box_inner, box_outer};
	cuuint32_t estr[2] = {1, 1};
	CUresult r =
	    enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims, strides,
	        box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
	        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// The persistent grid for `units` tiles on sms SMs, capped at max_ctas (0: no
// cap): as few CTAs as keep the waves of one CTA per SM, so every CTA takes
// the same number of tiles, give or take one fewer (1024 tiles on 132 SMs:
// 8 waves either way, 128 CTAs of 8 tiles instead of 100 of 8 and 32 of 7).
// The time to the last tile is the same in waves; measured with idle gaps
// between launches (two runs, three rounds each), the GEMM alone took 1-22 us
// less at 8192x4096x8192, 16384x2048x8192 and 4096x8192x4096, and 3-19 us
// less pushing every tile to the other GPU (docs/gemm.md, measured 2026-11-30
// on two H200s at ad9aa2f).
inline int balanced_grid(long long units, int sms, int max_ctas)
{
	int ctas = units < sms ? (int)units : sms;
	if (max_ctas > 0 && max_ctas < ctas)
		ctas = max_ctas;
	if (ctas < 1)
		return 1;
	const long long waves = (units + ctas - 1) / ctas;
	return (int)((units + waves - 1) / waves);
}

// The tile width a plan starts with for N columns: 256 when N % 256 == 0,
// 128 when N % 128 == 0 (measured, and what every shape got before any N was
// supported). Any other N (a multiple of 8) has a last tile column that overlaps
// the one before it (tile_col0); 256 unless rounding N up to 256 computes
// over 5 % more columns than rounding it up to 128 (the 128-wide tile is
// ~3-5 % slower per FLOP at 4096-8192, docs/gemm.md), and never wider than N.
inline int plan_width(int N)
{
	if (N % 256 == 0)
		return 256;
	if (N % 128 == 0 || (N >= 128 && N < 256))
		return 128;
	if (N < 128)
		return 64;
	const long long w256 = (N + 255LL) / 256 * 256, w128 = (N + 127LL) / 128 * 128;
	return w256 * 100 <= w128 * 105 ? 256 : 128;
}

// The shapes a plan takes: any M >= 1, N >= 64 and K in multiples of 8.
inline bool shape_ok(int M, int N, int K)
{
	return M >= 1 && N >= 64 && N % 8 == 0 && K >= 8 && K % 8 == 0;
}

// A plan's launch geometry for tile width bn (tiles_m and N already set):
// tiles_n, group_m and the persistent grid on sms SMs, capped at max_ctas.
inline void plan_geometry(gemm_bf16_plan *p, int bn, int sms, int max_ctas)
{
	p->bn = bn;
	p->tiles_n = (p->N + bn - 1) / bn;
	// group_m tile rows x (ctas/group_m) tile columns are in flight together;
	// pick group_m so that band is roughly square in elements.
	p->group_m = (bn == 256) ? 16 : 8;
	if (p->group_m > p->tiles_m)
		p->group_m = p->tiles_m;
	p->ctas = balanced_grid((long long)p->tiles_m * p->tiles_n, sms, max_ctas);
}

// A plan's shape and geometry on sms SMs (no tensor maps, pointers or device),
// every tile whole: what plan_init sets beside them.
inline void plan_shape(gemm_bf16_plan *p, int M, int N, int K, int sms, int max_ctas)
{
	p->M = M;
	p->N = N;
	p->K = K;
	p->sms = sms;
	p->tiles_m = (M + 127) / 128;
	p->start_tile = 0;
	p->split = 0;
	p->split_ws = nullptr;
	p->split_cnt = nullptr;
	plan_geometry(p, plan_width(N), sms, max_ctas);
}

} // namespace gemm_detail

// ---------------------------------------------------------------- public API

/// Builds a plan for one (A, B, C, shape) set on the current device.
/// Host-only (no device work, no synchronisation, safe during stream capture).
/// Shape rule: any M >= 1, N >= 64 with N % 8 == 0, K % 8 == 0 (N % 256 == 0
/// selects the faster 128x256 tile, N % 128 == 0 128x128, any other N the
/// width gemm_detail::plan_width picks). When M % 128 != 0 the last
/// tile row is partial: TMA fills A's rows past M with zeros, and no store
/// (C, a push epilogue's copies) touches a row >= M. When N is not a multiple
/// of the tile width the last tile column starts at N - tile_n
/// (gemm_bf16_tile_col0) and recomputes the columns it shares with the one
/// before; when K % 64 != 0 TMA fills the last k-block past K with zeros.
/// Layout rule: lda >= K,
/// ldb >= N, ldc >= N; lda and ldb multiples of 8 elements (16-byte row
/// pitch, a TMA rule), ldc even; A and B 16-byte aligned, C 4-byte aligned.
/// max_ctas: upper bound on the persistent grid (0 = one CTA per SM); use it
/// to leave SMs free for a concurrent communication kernel. Within it the
/// grid is as small as keeps the same number of waves, so every CTA takes as
/// many tiles as the others (or one fewer): 1024 tiles on 132 SMs run on 128
/// CTAs (plan.ctas says how many; a caller may set it lower or higher, up to
/// the SM count, before launching an unsplit plan).
/// Returns cudaErrorInvalidValue for shapes/layouts outside these rules,
/// cudaErrorNotSupported if the device is not compute capability 9.x or the
/// driver lacks cuTensorMapEncodeTiled, or the CUDA error of a failed query.
inline cudaError_t gemm_bf16_plan_init(gemm_bf16_plan *p, const gemm_bf16_args &a, int max_ctas = 0)
{
	if (!p || !a.A || !a.B || !a.C)
		return cudaErrorInvalidValue;
	if (!gemm_detail::shape_ok(a.M, a.N, a.K))
		return cudaErrorInvalidValue;
	if (a.lda < a.K || a.ldb < a.N || a.ldc < a.N)
		return cudaErrorInvalidValue;
	if (a.lda % 8 || a.ldb % 8 || a.ldc % 2)
		return cudaErrorInvalidValue;
	if ((reinterpret_cast<uintptr_t>(a.A) & 15) || (reinterpret_cast<uintptr_t>(a.B) & 15) ||
	    (reinterpret_cast<uintptr_t>(a.C) & 3))
		return cudaErrorInvalidValue;
	if (max_ctas < 0)
		return cudaErrorInvalidValue;
	int dev, major = 0, sms = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e != cudaSuccess)
		return e;
	if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) !=
	    cudaSuccess)
		return e;
	if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
		return e;
	if (major != 9)
		return cudaErrorNotSupported;

	gemm_detail::plan_shape(p, a.M, a.N, a.K, sms, max_ctas);
	p->A = a.A;
	p->B = a.B;
	p->C = a.C;
	p->lda = a.lda;
	p->ldb = a.ldb;
	p->ldc = a.ldc;
	p->device = dev;
	if ((e = gemm_detail::encode_2d(&p->tmA, a.A, a.K, a.M, a.lda, 64, 128)) != cudaSuccess)
		return e;
	if ((e = gemm_detail::encode_2d(&p->tmB, a.B, a.N, a.K, a.ldb, 64, 64)) != cudaSuccess)
		return e;
	return cudaSuccess;
}

/// Points an existing plan at a new A (same shape and lda). Re-encodes one
/// tensor map on the host (~1-2 us); use for input rotation.
inline cudaError_t gemm_bf16_plan_set_A(gemm_bf16_plan *p, const __nv_bfloat16 *A)
{
	if (!p || !A || (reinterpret_cast<uintptr_t>(A) & 15))
		return cudaErrorInvalidValue;
	cudaError_t e = gemm_detail::encode_2d(&p->tmA, A, p->K, p->M, p->lda, 64, 128);
	if (e == cudaSuccess)
		p->A = A;
	return e;
}

/// Points an existing plan at a new B (same shape and ldb).
inline cudaError_t gemm_bf16_plan_set_B(gemm_bf16_plan *p, const __nv_bfloat16 *B)
{
	if (!p || !B || (reinterpret_cast<uintptr_t>(B) & 15))
		return cudaErrorInvalidValue;
	cudaError_t e = gemm_detail::encode_2d(&p->tmB, B, p->N, p->K, p->ldb, 64, 64);
	if (e == cudaSuccess)
		p->B = B;
	return e;
}

/// Points an existing plan at a new C (same shape and ldc; 4-byte aligned).
inline cudaError_t gemm_bf16_plan_set_C(gemm_bf16_plan *p, __nv_bfloat16 *C)
{
	if (!p || !C || (reinterpret_cast<uintptr_t>(C) & 3))
		return cudaErrorInvalidValue;
	p->C = C;
	return cudaSuccess;
}

/// Narrows a plan's CTA tile to tile_n columns (128 or 64, no wider than the
/// plan's own nor than N), for more tiles than 128 x 256 gives: e.g. a GEMM whose tiles
/// would leave SMs idle, or one whose finished tiles should arrive in more
/// waves. Only the launch geometry changes (B is loaded as 64-column boxes,
/// BN/64 per stage, so the tensor maps stay); max_ctas as for init.
/// Returns cudaErrorInvalidValue for any other tile_n.
inline cudaError_t gemm_bf16_plan_narrow(gemm_bf16_plan *p, int tile_n, int max_ctas = 0)
{
	if (!p || (tile_n != 128 && tile_n != 64) || tile_n > p->bn || tile_n > p->N ||
	    max_ctas < 0)
		return cudaErrorInvalidValue;
	gemm_detail::plan_geometry(p, tile_n, p->sms, max_ctas);
	p->split = 0; // its workspace was sized for the old tiles
	p->split_ws = nullptr;
	p->split_cnt = nullptr;
	return cudaSuccess;
}

namespace gemm_detail
{
// The grid a split plan launches: one CTA per SM, or per tile part when fewer
// (its tail stages want every SM); unsplit (ways <= 1), the plan's balanced grid.
inline int split_ctas(const gemm_bf16_plan *p, int ways, int sms, int max_ctas)
{
	const long long parts = (long long)p->tiles_m * p->tiles_n * (ways > 1 ? ways : 1);
	if (ways <= 1)
		return balanced_grid(parts, sms, max_ctas);
	int ctas = parts < sms ? (int)parts : sms;
	if (max_ctas > 0 && max_ctas < ctas)
		ctas = max_ctas;
	return ctas;
}
// Workspace layout: the counters (one per tail tile), then the slots at a
// 256-byte boundary. Bytes in all, 0 when the plan would not split.
inline size_t split_bytes(const gemm_bf16_plan *p, int ways, int ctas, size_t *cnt_bytes)
{
	split_params sp;
	const int slots = split_layout(p->tiles_m * p->tiles_n, ctas, kblocks_of(p->K), ways, &sp);
	if (sp.stages == 0)
		return 0;
	const size_t cb =
	    ((size_t)(p->tiles_m * p->tiles_n - sp.whole) * sizeof(unsigned) + 255) & ~(size_t)255;
	if (cnt_bytes)
		*cnt_bytes = cb;
	return cb + (size_t)slots * BM * p->bn * sizeof(float);
}
} // namespace gemm_detail

/// Bytes of device memory gemm_bf16_plan_split needs to split plan p's tail
/// `ways` ways on at most max_ctas CTAs (0: one per SM); 0 when it would not
/// split (ways < 2 or > kGemmSplitMax, more ways than ceil(K / 64) k-blocks, or a
/// grid under 2 x ways CTAs). Call it after any gemm_bf16_plan_narrow.
inline size_t gemm_bf16_split_bytes(const gemm_bf16_plan *p, int ways, int max_ctas = 0)
{
	if (!p || max_ctas < 0)
		return 0;
	return gemm_detail::split_bytes(p, ways, gemm_detail::split_ctas(p, ways, p->sms, max_ctas),
	                                nullptr);
}

/// Splits the plan's last tiles along K (see split_params in gemm_detail):
/// the tiles past the last full wave (or the last wave, when the tiles fill
/// whole waves) run in stages of `ways`-way parts on all CTAs, so they finish
/// a stage at a time instead of together at the end, and a short last wave no
/// longer leaves SMs idle. The grid becomes one CTA per SM, or per tile part
/// when there are fewer (max_ctas caps it as for init). ws: device memory of
/// at least gemm_bf16_split_bytes(p, ways, max_ctas) bytes, ZEROED before the
/// first launch (cudaMemset); every launch leaves its counters at zero again.
/// One launch at a time may use a workspace. The grid's CTAs wait for each
/// other, so all of them must be resident together: nothing else may hold
/// the SMs it needs while it runs. ways 0 or 1 (or a plan that would not
/// split, see gemm_bf16_split_bytes) computes every tile whole and needs no
/// workspace. Re-split after gemm_bf16_plan_narrow, which clears it.
inline cudaError_t gemm_bf16_plan_split(gemm_bf16_plan *p, int ways, void *ws, size_t bytes,
                                        int max_ctas = 0)
{
	if (!p || ways < 0 || ways > kGemmSplitMax || max_ctas < 0)
		return cudaErrorInvalidValue;
	const int ctas = gemm_detail::split_ctas(p, ways, p->sms, max_ctas);
	size_t cnt_bytes = 0;
	const size_t need = gemm_detail::split_bytes(p, ways, ctas, &cnt_bytes);
	if (need == 0) { // every tile whole
		p->split = 0;
		p->split_ws = nullptr;
		p->split_cnt = nullptr;
		p->ctas = gemm_detail::split_ctas(p, 1, p->sms, max_ctas);
		return cudaSuccess;
	}
	if (!ws || bytes < need || (reinterpret_cast<uintptr_t>(ws) & 255))
		return cudaErrorInvalidValue;
	p->split = ways;
	p->split_cnt = static_cast<unsigned *>(ws);
	p->split_ws = reinterpret_cast<float *>(static_cast<char *>(ws) + cnt_bytes);
	p->ctas = ctas;
	return cudaSuccess;
}

/// Tile geometry of a plan: tile size, tile counts and grid size.
inline gemm_bf16_tile_info gemm_bf16_tiles(const gemm_bf16_plan *p)
{
	gemm_bf16_tile_info t;
	t.tile_m = 128;
	t.tile_n = p->bn;
	t.tiles_m = p->tiles_m;
	t.tiles_n = p->tiles_n;
	t.tiles = p->tiles_m * p->tiles_n;
	t.ctas = p->ctas;
	gemm_detail::split_params sp;
	gemm_detail::split_layout(t.tiles, t.ctas, gemm_detail::kblocks_of(p->K), p->split, &sp);
	t.split = sp.stages ? sp.g : 0;
	t.whole = sp.whole;
	return t;
}

/// Launches the planned GEMM on stream s with a per-tile epilogue hook
/// (asynchronous; returns the launch error). Must be called with the plan's
/// device current. Graph-capturable. Returns cudaErrorNotSupported if the
/// calling translation unit was not compiled for sm_90a (see file header).
///

/// The tile width for a GEMM that runs alone (nothing sent tile by tile): the
/// plan's bn-column tiles, halved (256 -> 128 -> 64) while `tiles` of the
/// current width would leave at least half of `ctas` CTAs idle. (Measured, one
/// H200, test_gemm --group: 64 tiles of 128 x 256 for 132 SMs take 27.8 us,
/// 128 tiles of 128 x 128 19.0; but two such problems in one launch, 128
/// tiles, take 30.6 at 256 against 35.1 at 128, and 512 tiles 178.8 against
/// 216.6. Small M, test_gemm --split, 4096 x 8192 per rank: M = 128 takes 84.0
/// at 256, 46.8 at 128, 34.0 at 64, cuBLAS 35.3; M = 256 83.4, 46.7, 33.7,
/// cuBLAS 42.3; M = 512 83.6, 49.2, 59.3; docs/gemm.md.)
constexpr int gemm_bf16_alone_tile_n(int bn, int tiles, int ctas)
{
	return bn > 64 && 2 * tiles <= ctas ? gemm_bf16_alone_tile_n(bn / 2, 2 * tiles, ctas) : bn;
}

/// Ways to split the tail of a GEMM that runs alone (gemm_bf16_plan_split),
/// `tiles` tiles on `sms` SMs; 0: none. Where the tiles leave a short last
/// wave the balanced grid runs a whole wave more on fewer CTAs, and splitting
/// the leftover tiles over every SM pays: 2 ways where at most 45 % of a wave
/// is left; none past that, nor for whole waves or a single one. Measured,
/// one H200, our GEMM alone (test_gemm --split, docs/gemm.md), unsplit
/// against 2 ways: 4096 x 14848 x 8192 (8 tiles left of 132) 1298.2 and
/// 1256.4 us; 16384 x 8192 x 16384 (4 left) 5752.7 and 5588.1; 16384^3 (8
/// left) 12097.5 and 11909.1; 4096 x 11008 x 4096 (56 left) 484.0 and 478.0;
/// 4096 x 15360 x 8192 (72 left) 1294.3 and 1303.4. 4 ways gained up to 0.9 %
/// more at three shapes and lost 0.3 % at 16384^3.
constexpr int gemm_bf16_alone_split(int tiles, int sms)
{
	return tiles > sms && tiles % sms != 0 && (tiles % sms) * 20 <= sms * 9 ? 2 : 0;
}

} // namespace cuco
