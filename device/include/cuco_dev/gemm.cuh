// cuco_dev/gemm.cuh -- bf16 tensor-core GEMM building block for H100/H200 (sm_90a).
//
//   C[M,N] = A[M,K] * B[K,N]   bf16 inputs, fp32 accumulation, bf16 output.
//   A row-major (lda elements between rows), B row-major (ldb, N contiguous),
//   C row-major (ldc).
//
// Design (see docs/gemm.md for the full write-up and measured numbers):
//   * one persistent kernel, grid = min(#SMs, #tiles, max_ctas), trimmed to
//     as few CTAs as keep the waves (every CTA the same tile count), 384 threads:
//     warpgroup 0 = producer (one thread issues TMA loads, the rest idle,
//     setmaxnreg.dec to 40), warpgroups 1 and 2 = consumers (setmaxnreg.inc to
//     232), each consumer owns 64 rows of the 128-row CTA tile and issues
//     wgmma.m64n{BN}k16 (A and B from shared memory, B "N-major" = tnspB).
//   * CTA tile 128 x BN x 64, BN = 256 when N % 256 == 0, 128 when N % 128
//     == 0, else whichever computes fewer columns (gemm_detail::plan_width); a plan
//     may be narrowed to 128 or 64 (gemm_bf16_plan_narrow) for more tiles;
//     gemm_bf16 (plan + run) narrows to 128 where 256 would idle half the SMs.
//   * TMA (cp.async.bulk.tensor.2d, 128-byte swizzle) into a 4-stage (BN=256),
//     6-stage (BN=128) or 8-stage (BN=64) shared-memory ring, full/empty
//     mbarrier pairs.
//   * static persistent schedule: CTA b handles tiles b, b+grid, b+2*grid...;
//     linear tile index -> (tile_m, tile_n) in groups of `group_m` tile rows
//     (all tile columns of a group before the next group) for L2 reuse, with
//     an optional rotation `start_tile`; optionally (gemm_bf16_plan_split)
//     the last tiles are split along K over several CTAs in stages, so that
//     the last wave's tiles finish a few at a time, not all together.
//   * any M: the last tile row may be partial (TMA zero-fills A's missing
//     rows; their results go to a scratch tile, never to C or its copies).
//     Any K % 8 == 0: TMA zero-fills the last k-block past K. Any N % 8 == 0,
//     N >= 64: the last tile column starts at N - BN, overlapping the one
//     before it (gemm_bf16_tile_col0), so no store needs a column check.
//   * epilogue: fp32 accumulators -> bf16, a 4x4 shuffle transpose inside each
//     lane quad, then 16-byte stores straight from registers to global memory
//     (4-byte stores when C is not 16-byte aligned or ldc % 8 != 0), then the
//     optional per-tile hook. The producer already prefetches the next tile
//     while the consumers store. A push epilogue (gemm_push_epilogue) sends
//     each tile to other copies of C as well; with last_halves the CTA's last
//     tile is computed as two half-width tiles through a ring of half-size
//     stages, so its first half goes out while the second computes.
//
// Requires: compile with -gencode=arch=compute_90a,code=sm_90a; runs on
// compute capability 9.0 only. No libcuda link needed: cuTensorMapEncodeTiled
// is fetched with cudaGetDriverEntryPointByVersion.
#pragma once

// CUCO_GEMM_SPLIT: nonzero (the default) builds the split-tail kernels
// (gemm_bf16_plan_split) beside the plain ones; 0 leaves them out, for a
// translation unit that never splits (~2 s less nvcc time per program on this
// header's users, a third smaller object). A split plan launched without them
// fails with cudaErrorNotSupported. Define it before the first include.
#ifndef CUCO_GEMM_SPLIT
#define CUCO_GEMM_SPLIT 1
#endif

#include <cuda.h>            // CUtensorMap & enums (types only; no libcuda link)
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>
#include <atomic>
#include <type_traits>

namespace cuco {

// ---------------------------------------------------------------- public types

/// Problem description. All counts in elements. Pointers are device pointers.
struct gemm_bf16_args {
  const __nv_bfloat16 *A;  ///< [M, K] row-major, row stride lda
  const __nv_bfloat16 *B;  ///< [K, N] row-major, row stride ldb
  __nv_bfloat16 *C;        ///< [M, N] row-major, row stride ldc
  int M, N, K;
  long long lda, ldb, ldc;
};

/// Tile geometry of a plan (what gemm_bf16_tiles returns).
struct gemm_bf16_tile_info {
  int tile_m;   ///< rows of C per tile (128)
  int tile_n;   ///< columns of C per tile (64, 128 or 256)
  int tiles_m;  ///< ceil(M / tile_m): the last tile row holds M - (tiles_m - 1) * tile_m rows
  int tiles_n;  ///< ceil(N / tile_n): the last tile column starts at N - tile_n (gemm_bf16_tile_col0)
  int tiles;    ///< tiles_m * tiles_n
  int ctas;     ///< persistent grid size the plan launches
  int split;    ///< K-split ways of the tail's full stages (0: no split)
  int whole;    ///< tiles computed whole (the rest are split)
};

/// First column of tile column tn in a plan of tile_n-wide tiles over N
/// columns: tn * tile_n, except that the last tile column of an N that is
/// not a multiple of tile_n starts at N - tile_n, overlapping the one
/// before it (both compute the shared columns, with the same operands in
/// the same order, and store the same values there). What an epilogue hook
/// or a consumer of finished tiles must use to locate tile (tm, tn).
__host__ __device__ constexpr int gemm_bf16_tile_col0(int tn, int tile_n, int N) {
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
  CUtensorMap tmA;               ///< A: dims {K, M}, box {64, 128}, 128B swizzle
  CUtensorMap tmB;               ///< B: dims {N, K}, box {64, 64},  128B swizzle
  __nv_bfloat16 *C;
  long long ldc;
  int M, N, K;
  int bn;          ///< tile_n: 256 or 128 (or 64: gemm_bf16_plan_narrow)
  int tiles_m, tiles_n;
  int ctas;        ///< grid size
  int group_m;     ///< tile rows per L2 group of the tile order (>= 1)
  int start_tile;  ///< rotation of the tile order: linear tile t is processed
                   ///< as (t + start_tile) % tiles. 0 by default; may be set
                   ///< by the caller after init to any value in [0, tiles).
  int device;      ///< device the plan was made for
  int sms;         ///< its SM count (read once, by gemm_bf16_plan_init)
  long long lda, ldb;
  const __nv_bfloat16 *A, *B;
  int split;            ///< gemm_bf16_plan_split's ways (0: every tile whole)
  float *split_ws;      ///< its workspace: partial sums, then ...
  unsigned *split_cnt;  ///< ... one arrival counter per split tile
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
  unsigned pace = 0;         ///< Rows -2: spread each tile's copy but the last over pace % of the tile before; 0: no pacing
  unsigned last_bulk = 0;    ///< Rows -2: the CTA's last tile goes by the consumers' bulk copies, as with Rows 16
  unsigned last_halves = 0;  ///< Rows -2, tile_n 128 or 256, unsplit: the CTA's last tile computed and sent in two halves
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
  CUtensorMap tmA[kGemmGroupMax];       ///< A_i (per_a): dims {K, M}, box {64, 128}
  CUtensorMap tmB[kGemmGroupMax];       ///< B_i (per_b): dims {N, K}, box {64, 64}
  __nv_bfloat16 *C[kGemmGroupMax];      ///< C_i, element (0, 0)
  const unsigned *gate[kGemmGroupMax];  ///< null: problem i's operands are ready at launch
  unsigned epoch;                       ///< value a gate flag must reach
  int n, first, chunks, ctas;
  int per_a, per_b;                     ///< 1: problem i reads tmA[i] / tmB[i], 0: the plan's
};

/// No grouping: the plan's own A, B and C (what gemm_bf16_run launches).
struct gemm_no_group {};

#ifndef CUCO_GEMM_PACE_STEPS
#define CUCO_GEMM_PACE_STEPS 8  // pace: waits per tile (0: one per round of the copy)
#endif
#ifndef CUCO_GEMM_HALF_STAGES
#define CUCO_GEMM_HALF_STAGES 8  // last_halves: most stages in the halves' ring (fewer if they do not fit)
#endif
#ifndef CUCO_GEMM_STAGE_SWIZZLE
#define CUCO_GEMM_STAGE_SWIZZLE 1  // Rows -2: staging rows swizzled (0: plain row-major, bank conflicts)
#endif

namespace gemm_detail {

constexpr int BM = 128;
constexpr int BK = 64;
// k-blocks of a K: the last one partial when K % 64 != 0 (TMA fills A's
// columns and B's rows past K with zeros, which add nothing)
__host__ __device__ constexpr int kblocks_of(int K) { return (K + BK - 1) / BK; }
constexpr int kThreads = 384;  // 3 warpgroups
// PushRows = rows each consumer warp stages per round of gemm_push_epilogue
// (0 = no push; 16 = the warp's whole 16-row share at once; 8 = two rounds of
// 8; -1 = direct stores, no staging; -2 = the whole tile staged for the
// producer warpgroup's copying warps). The staging area (8 warps x PushRows
// rows x BN; -2: the tile) follows the stages; -2 adds the staged / free
// mbarrier pair after the stages' ones, then the halves' ring's (kHStages).
template <int BN, int PushRows = 0> struct cfg {
  static_assert(BN == 64 || BN == 128 || BN == 256, "tile_n is 64, 128 or 256");
  static_assert(PushRows == -2 || PushRows == -1 || PushRows == 0 || PushRows == 8 || PushRows == 16,
                "push: warps (-2), direct (-1), or staging rounds of 8 or 16 rows");
  static constexpr bool kWholeTile = PushRows == 16 || PushRows == -2;  // staging holds the whole tile
  static constexpr int kStages = (BN == 256) ? (kWholeTile ? 3 : 4) : (BN == 128 ? 6 : 8);
  static constexpr int kABytes = BM * BK * 2;        // 16 KB
  static constexpr int kBBytes = BK * BN * 2;        // 32, 16 or 8 KB
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kPushBytes = kWholeTile ? BM * BN * 2 : PushRows > 0 ? (BM / 16) * PushRows * BN * 2 : 0;
  // last_halves (-2, BN >= 128): the halves' k-blocks come through a ring of
  // their own from the same memory as the stages: a half's stage holds half of
  // B's boxes, so more of them fit; as many as the CTA's shared memory holds
  // (the stages' and what the whole tile's ring leaves unused), at most
  // CUCO_GEMM_HALF_STAGES: 5 at BN 256 (4 keep as many bytes in flight as the
  // whole tile's 3 stages), 8 at 128
  static constexpr int kSmemMax = 232448;  // an H100/H200 CTA's most dynamic shared memory
  static constexpr int kHalfStageBytes = kABytes + kBBytes / 2;
  static constexpr int kHFit =
      (kSmemMax - 1024 - kPushBytes - 8 * (2 * kStages + 2 + 2 * CUCO_GEMM_HALF_STAGES)) / kHalfStageBytes;
  static constexpr int kHStages =
      PushRows == -2 && BN >= 128 ? (kHFit < CUCO_GEMM_HALF_STAGES ? kHFit : CUCO_GEMM_HALF_STAGES) : 0;
  static constexpr int kRingBytes = kStages * kStageBytes > kHStages * kHalfStageBytes
                                        ? kStages * kStageBytes
                                        : kHStages * kHalfStageBytes;  // the staging tile follows
  static constexpr int kBars = 2 * kStages + (PushRows == -2 ? 2 + 2 * kHStages : 0);  // mbarriers
  static constexpr int kSmem = 1024 /*align slack*/ + kRingBytes + kPushBytes + kBars * 8;
  static_assert(kSmem <= kSmemMax, "more shared memory than an H100/H200 CTA may have");
};
template <class Epi> struct is_push_t : std::false_type {};
template <class Sync, int Rows> struct is_push_t<gemm_push_epilogue<Sync, Rows>> : std::true_type {};
template <class Epi> struct push_sync_t { using type = gemm_push_no_sync; };
template <class Sync, int Rows> struct push_sync_t<gemm_push_epilogue<Sync, Rows>> { using type = Sync; };
// Staging rows per round: 16 unless the epilogue type asks for 8 (or -1:
// direct stores, no staging; -2: copying warps). Two 8-row rounds keep a 4th pipeline stage at
// BN 256 but measured no faster: the stage count is not what the push costs
// (docs/gemm.md).
template <class Epi, int BN> struct push_rows_t { static constexpr int value = 0; };
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
  int whole;           // tiles computed whole (== tiles when not split)
  int g, n;            // the full stages: n tiles each, g ways
  int g_last, n_last;  // the last stage
  int stages;          // 0 when not split
  float *ws;           // partial sums: slot i at ws + i * BM * BN
  unsigned *cnt;       // arrivals per tail tile; zero between launches
};
// One unit of a CTA's work: k-blocks [kb0, kb1) of linear tile t.
struct split_unit {
  int t, kb0, kb1;
  int ways;  // 1: the whole tile
  int rank;  // 0: the finisher; r > 0 stores partial-sum slot `slot + r - 1`
  int slot;  // the tile's first slot (ways - 1 of them)
  int ti;    // tail tile index: its arrival counter
};

struct kparams {
  __nv_bfloat16 *C;
  long long ldc;
  int m;  // rows of C: the last tile row's rows >= m come from zero-filled A rows and are never stored in C
  int n;  // columns of C: the last tile column starts at n - BN (gemm_bf16_tile_col0)
  int tiles_m, tiles_n, tiles, kblocks;
  int group_m, start_tile;
  int vec16;  // C 16-byte aligned and ldc % 8 == 0: 16-byte epilogue stores
  split_params sp;
};

// The split schedule of `tiles` tiles on `ctas` CTAs, `ways` ways (see
// split_params); returns the partial-sum slots it needs, 0 (and no split:
// every tile whole) when ways < 2, ways > kGemmSplitMax or kblocks, or
// ctas < 2 * ways. The tail is the tiles past the last full wave, or the
// last wave when the tiles fill whole waves. The last stage splits its n_last
// tiles into as many ways as the CTAs allow, between ways and
// min(2 * ways, kGemmSplitMax, kblocks), so a short last stage ends sooner.
__host__ __device__ inline int split_layout(int tiles, int ctas, int kblocks, int ways, split_params *sp) {
  sp->whole = tiles;
  sp->g = sp->n = sp->g_last = sp->n_last = sp->stages = 0;
  if (ways < 2 || ways > kGemmSplitMax || ways > kblocks || ctas < 2 * ways || tiles < 1) return 0;
  const int rem = tiles % ctas;
  const int tail = rem ? rem : ctas < tiles ? ctas : tiles;
  const int n = ctas / ways;
  const int full = (tail - 1) / n;
  const int n_last = tail - full * n;
  int cap = 2 * ways;
  if (cap > kGemmSplitMax) cap = kGemmSplitMax;
  if (cap > kblocks) cap = kblocks;
  int gl = ctas / n_last;
  if (gl > cap) gl = cap;
  if (gl < ways) gl = ways;
  sp->whole = tiles - tail;
  sp->g = ways;
  sp->n = n;
  sp->g_last = gl;
  sp->n_last = n_last;
  sp->stages = full + 1;
  return full * n * (ways - 1) + n_last * (gl - 1);
}
// CTA b's unit in tail stage s; false when b sits that stage out.
__host__ __device__ inline bool split_unit_of(const split_params &sp, int kblocks, int b, int s, split_unit *u) {
  const bool last = s == sp.stages - 1;
  const int ways = last ? sp.g_last : sp.g, n = last ? sp.n_last : sp.n;
  if (b >= n * ways) return false;
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
__host__ __device__ inline bool next_unit(const kparams &p, int ctas, int b, int &w, int &s, split_unit &u) {
  if (!Split) {
    if (w >= p.tiles) return false;
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
    if (split_unit_of(p.sp, p.kblocks, b, s++, &u)) return true;
  return false;
}

// ---------------------------------------------------------------- PTX helpers
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const CUtensorMap *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int R> __device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// Bulk copy shared -> global (any global address, a peer's through NVLink too).
__device__ __forceinline__ void bulk_s2g(void *dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void named_bar_sync(int id, int nthreads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

// Shared-memory matrix descriptor (sm_90 wgmma), 128-byte swizzle.
//   bits 0-13 start>>4, 16-29 LBO>>4, 32-45 SBO>>4, 62-63 layout (1 = SW128).
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = 0;
  d |= (uint64_t)((saddr & 0x3FFFF) >> 4);
  d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
  d |= (uint64_t)1 << 62;
  return d;
}

// wgmma m64nNk16, A and B from shared memory, A K-major, B N-major (tnspB=1),
// fp32 accumulators; scale_d = 0 overwrites, 1 accumulates.

template <int R>  // the first 128 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n256k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db, int scale_d) {
  static_assert(R >= 128, "m64n256: 128 accumulators a thread");
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(scale_d));
}

template <int R>  // the first 64 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n128k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db, int scale_d) {
  static_assert(R >= 64, "m64n128: 64 accumulators a thread");
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale_d));
}

template <int R>  // the first 32 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n64k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db, int scale_d) {
  static_assert(R >= 32, "m64n64: 32 accumulators a thread");
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}

// Linear tile index (already offset by the CTA's persistent loop) -> (tm, tn).
// Order: groups of `group_m` tile rows; inside a group, column-major over
// (row-in-group, tile column), so the CTAs running at one time share a band
// of A rows and a band of B columns in L2.
__host__ __device__ __forceinline__ void tile_coords_in(int t, const kparams &p, int &tm, int &tn) {
  const int per_group = p.group_m * p.tiles_n;
  const int g = t / per_group;
  const int first_m = g * p.group_m;
  const int rem_m = p.tiles_m - first_m;
  const int gsz = rem_m < p.group_m ? rem_m : p.group_m;
  const int r = t - g * per_group;
  tm = first_m + r % gsz;
  tn = r / gsz;
}
__host__ __device__ __forceinline__ void tile_coords(int t, const kparams &p, int &tm, int &tn) {
  t += p.start_tile;
  if (t >= p.tiles) t -= p.tiles;
  tile_coords_in(t, p, tm, tn);
}
// Grouped launch: linear tile t -> (problem, tm, tn); problems whole, in the
// order first, first + 1, ... (mod n), each in the order above. (Host too:
// tests/devlib_group.sh checks the order.)
__host__ __device__ __forceinline__ void group_coords(int t, const kparams &p, const gemm_bf16_group &g, int &i,
                                                      int &tm, int &tn) {
  const int per = p.tiles_m * p.tiles_n;
  const int j = t / per;
  i = g.first + j;
  if (i >= g.n) i -= g.n;
  tile_coords_in(t - j * per, p, tm, tn);
}
__device__ __forceinline__ __nv_bfloat16 *grp_c(const gemm_bf16_group &g, int i) { return g.C[i]; }
__device__ __forceinline__ __nv_bfloat16 *grp_c(const gemm_no_group &, int) { return nullptr; }
// The gate chunk k-block kb of a gated problem's tile waits for: K columns
// [c K / chunks, (c + 1) K / chunks) hold the block when chunks divides kblocks.
__host__ __device__ __forceinline__ int gate_chunk(int kb, int chunks, int kblocks) { return kb * chunks / kblocks; }
// Gate chunk flag f has reached v (acquire: what was written before it is visible).
__device__ __forceinline__ bool gate_open(const unsigned *f, unsigned v) {
  unsigned x;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(x) : "l"(f) : "memory");
  return (int)(x - v) >= 0;
}
// A gated problem's producer, at chunk c of flags f not yet seen open: waits
// for it, takes every later chunk already open in the same go, and fences the
// async proxy once, before the TMA reads what the flags published.
__device__ __forceinline__ uint64_t gate_wait(const unsigned *f, int c, int chunks, unsigned v, uint64_t open) {
  while (!gate_open(f + c, v)) __nanosleep(64);
  open |= 1ull << c;
  for (int j = c + 1; j < chunks; ++j)
    if (!((open >> j) & 1u) && gate_open(f + j, v)) open |= 1ull << j;
  asm volatile("fence.proxy.async.global;" ::: "memory");
  return open;
}

// Split tile, after a part's main loop (all 256 consumer threads, uniformly):
// a non-finisher stores its fp32 accumulators as partial-sum slot
// slot + rank - 1 (in fragment order: consumer thread c's float4 j at
// j * 256 + c, so the finisher's same thread reads the same elements) and
// releases the tile's counter once all 256 have stored; returns true (no
// epilogue). The finisher waits (acquire) for ways - 1 arrivals, resets the
// counter for the next launch and adds the partial sums; returns false.
// CTAs wait for each other here: the whole grid must be resident at once.
template <int BN>
__device__ __forceinline__ bool split_fixup(const split_params &sp, const split_unit &u, float (&d)[BN / 2]) {
  constexpr int kSlot = BM * BN / 4;  // float4 per slot
  const int ct = threadIdx.x - 128;
  float4 *ws = reinterpret_cast<float4 *>(sp.ws);
  if (u.rank > 0) {
    float4 *w = ws + (size_t)(u.slot + u.rank - 1) * kSlot + ct;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) __stcg(w + j * 256, make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]));
    named_bar_sync(1, 256);
    if (threadIdx.x == 128) asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sp.cnt + u.ti) : "memory");
    return true;
  }
  if (threadIdx.x == 128) {
    const unsigned want = (unsigned)(u.ways - 1);
    for (;;) {
      unsigned x;
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(x) : "l"(sp.cnt + u.ti) : "memory");
      if (x >= want) break;
      __nanosleep(32);
    }
    sp.cnt[u.ti] = 0;
  }
  named_bar_sync(1, 256);
  for (int r = 1; r < u.ways; ++r) {
    const float4 *w = ws + (size_t)(u.slot + r - 1) * kSlot + ct;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const float4 v = __ldcg(w + j * 256);
      d[4 * j] += v.x;
      d[4 * j + 1] += v.y;
      d[4 * j + 2] += v.z;
      d[4 * j + 3] += v.w;
    }
  }
  return false;
}

// One k16 step of a 64 x W half tile (W = BN, or BN / 2 for a tile computed
// in halves) into the first W / 2 accumulators of d.
template <int W, int R>
__device__ __forceinline__ void wgmma_tile(float (&d)[R], uint64_t da, uint64_t db, int scale_d) {
  if constexpr (W == 256) wgmma_m64n256k16_ss_tb(d, da, db, scale_d);
  else if constexpr (W == 128) wgmma_m64n128k16_ss_tb(d, da, db, scale_d);
  else wgmma_m64n64k16_ss_tb(d, da, db, scale_d);
}

// Where the epilogue stores a tile row that is past C's m rows (the last
// tile row of a GEMM whose M % 128 != 0): one 128 x 256 tile of scratch per
// loaded copy of this header, written by every such tile of every CTA and
// never read (static: a copy per translation unit, so that two of them
// linked with -rdc do not define it twice). Row r of the tile, lane quad q's
// first column.
static __device__ uint4 g_sink[BM * 256 / 8];
__device__ __forceinline__ __nv_bfloat16 *sink_row(long long r, int q) {
  return reinterpret_cast<__nv_bfloat16 *>(g_sink) + r * 256 + 8 * q;
}

// Push epilogue: lanes [0, R) of a warp send its R staged rows (at swarp,
// W wide) to every copy of C: row grow0 + lane, columns [col0, col0 + W).
template <int R, int W, class Epi>
__device__ __forceinline__ void push_send(const Epi &epi, long long ldc, int m, uint32_t swarp, long long grow0,
                                          long long col0, int lane, bool wait_entered) {
  fence_proxy_async_smem();  // the staged rows are visible to the bulk copies
  __syncwarp();
  if (lane < R && grow0 + lane < m) {
    if (wait_entered) epi.sync.wait_entered();
    const uint32_t src = swarp + (uint32_t)(lane * W) * 2u;
    for (int i = 0; i < epi.n; ++i) bulk_s2g(epi.dst[i] + (grow0 + lane) * ldc + col0, src, W * 2);
    bulk_commit();
  }
}

// Push by copying warps: 16-byte piece i of the staged tile (row i / (W / 8),
// in row order; W columns wide, tile row tm, first column col0) from shared
// memory to every destination. The
// consumers stage 16-byte chunk c of tile row r at chunk c ^ 4 (r % 2) of its
// staging row (CUCO_GEMM_STAGE_SWIZZLE): a 16-byte store is served a quarter
// warp at a time, and a quarter warp writes 64 bytes in each of two rows
// BN * 2 bytes apart, a multiple of 128, so unswizzled both halves would fall
// on the same 16 banks (two wavefronts where one does). The copying warps'
// loads read 128 aligned bytes of one row per quarter warp either way.
template <int W, class Epi>
__device__ __forceinline__ void warps_copy_piece(const Epi &epi, uint32_t stg, long long ldc, int tm, long long col0,
                                                 int i) {
  constexpr int kRow = W / 8;  // 16-byte pieces per row
  const int r = i / kRow, c = i - r * kRow;
  const int cs = CUCO_GEMM_STAGE_SWIZZLE ? c ^ ((r & 1) << 2) : c;  // where the consumers staged it
  uint32_t v0, v1, v2, v3;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
               : "r"(stg + (uint32_t)(r * W + 8 * cs) * 2u)
               : "memory");
  const long long off = ((long long)tm * BM + r) * ldc + col0 + 8 * c;
  for (int j = 0; j < epi.n; ++j) *reinterpret_cast<uint4 *>(epi.dst[j] + off) = make_uint4(v0, v1, v2, v3);
}

template <int BN, class Epi, class Grp = gemm_no_group, bool Split = false>
__global__ void __launch_bounds__(kThreads, 1)
gemm_bf16_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 const kparams p, const Epi epi, const __grid_constant__ Grp grp) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kGroup = std::is_same<Grp, gemm_bf16_group>::value;
  constexpr bool kPush = is_push_t<Epi>::value;
  static_assert(!(kGroup && kPush), "a grouped launch has no push epilogue");
  // tile t -> (problem i, tm, tn): the problem picks its A or B map, gate and C
  auto coords = [&](int t, int &i, int &tm, int &tn) {
    if constexpr (kGroup) group_coords(t, p, grp, i, tm, tn);
    else { i = 0; tile_coords(t, p, tm, tn); }
  };
  // after the unit before (w, s): does the CTA stage another tile? (split
  // parts that do not finish their tile stage nothing)
  auto stages_more = [&](int w, int s) {
    split_unit u2;
    while (next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u2))
      if (!(Split && u2.ways > 1 && u2.rank > 0)) return true;
    return false;
  };
  constexpr bool kPushSync = kPush && !std::is_same<typename push_sync_t<Epi>::type, gemm_push_no_sync>::value;
  constexpr int R = push_rows_t<Epi, BN>::value;  // staging rows per round (push)
  constexpr bool kStaged = kPush && R > 0;         // bulk copies from shared memory
  constexpr bool kDirect = kPush && R == -1;       // st.global from registers
  constexpr bool kWarps = kPush && R == -2;        // the producer warpgroup's warps 1-3 copy the staged tile
  constexpr bool kHalves = kWarps && BN >= 128 && !Split;  // last_halves possible
  constexpr int RS = kWarps ? 16 : R;              // rows each consumer warp stages per round
  using CF = cfg<BN, R>;
  constexpr int S = CF::kStages;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t stg = base + CF::kRingBytes;  // push: the staging tile
  const uint32_t bars = stg + CF::kPushBytes;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (S + s); };
  const uint32_t staged = bars + 16u * S, stg_free = staged + 8u;  // kWarps
  // kHalves: the halves' ring (CF::kHStages stages of CF::kHalfStageBytes from base)
  auto hfull = [&](int j) { return stg_free + 8u + 8u * j; };
  auto hempty = [&](int j) { return stg_free + 8u + 8u * (CF::kHStages + j); };
  constexpr int kCopiers = 96;  // kWarps: threads 32-127
  const int wg = threadIdx.x / 128;

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      mbar_init(full(s), 1);   // producer's arrive.expect_tx
      mbar_init(empty(s), 8);  // lane 0 of each of the 8 consumer warps
    }
    if constexpr (kWarps) {
      mbar_init(staged, 256);         // every consumer thread, its part staged
      mbar_init(stg_free, kCopiers);  // every copying thread, done reading
      for (int j = 0; j < CF::kHStages; ++j) {
        mbar_init(hfull(j), 1);
        mbar_init(hempty(j), 8);
      }
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if constexpr (kGroup) {
      for (int i = 0; i < grp.n; ++i) {
        if (grp.per_a) tma_prefetch_desc(&grp.tmA[i]);
        if (grp.per_b) tma_prefetch_desc(&grp.tmB[i]);
      }
      if (!grp.per_a) tma_prefetch_desc(&tmA);
      if (!grp.per_b) tma_prefetch_desc(&tmB);
    } else {
      tma_prefetch_desc(&tmA);
      tma_prefetch_desc(&tmB);
    }
  }
  __syncthreads();

  if (wg == 0) {
    // ------------------------------------------------------------ producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if constexpr (kPushSync) {
      if (threadIdx.x == 32) epi.sync.enter();
    }
    if constexpr (kWarps) {
      if (threadIdx.x >= 32) {
        // copying warps: each tile the consumers stage, 16 bytes a thread at a
        // time, rows in order, to every destination; then free the staging
        const int ct = threadIdx.x - 32;
        unsigned long long staged_at = globaltimer_ns();  // pace: when the previous tile was staged
        uint32_t ph = 0;
        bool first = true;
        split_unit u;
        for (int w = blockIdx.x, s = 0; next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
          if constexpr (Split) {
            if (u.ways > 1 && u.rank > 0) continue;  // a part: the finisher stages the tile
          }
          int pi, tm, tn;
          coords(u.t, pi, tm, tn);
          // false: the CTA's last staged tile (looked up only where it matters)
          const bool more = (epi.pace || epi.last_bulk || (kHalves && epi.last_halves)) ? stages_more(w, s) : true;
          if (epi.last_bulk && !more) break;    // the consumers send it
          const bool halves = kHalves && epi.last_halves && !more;  // the consumers stage it in two halves
          for (int h = 0; h < (halves ? 2 : 1); ++h) {
            mbar_wait(staged, ph);
            ph ^= 1u;
            // paced: spread over span after the tile was staged; never the
            // last, and a first half over half the span (its second half
            // computes in about half a tile's time)
            const unsigned long long now = epi.pace ? globaltimer_ns() : 0;
            const unsigned long long span = (now - staged_at) * epi.pace / (halves ? 200u : 100u);
            const bool paced = epi.pace && (more || (halves && h == 0));
            staged_at = now;
            if (first) {
              if ((threadIdx.x & 31) == 0) epi.sync.wait_entered();
              __syncwarp();
              first = false;
            }
            auto copy = [&](auto wc) {  // the staged tile, wc columns wide
              constexpr int W = decltype(wc)::value;
              constexpr int kRounds = (BM * (W / 8) + kCopiers - 1) / kCopiers;
              constexpr int kPaceSteps =
                  CUCO_GEMM_PACE_STEPS < 1 || CUCO_GEMM_PACE_STEPS > kRounds ? kRounds : CUCO_GEMM_PACE_STEPS;
              const int col0 = gemm_bf16_tile_col0(tn, BN, p.n) + h * W;  // < N
              // the tile's rows in C (fewer than BM only in the last tile row)
              const int pieces = (p.m - tm * BM < BM ? p.m - tm * BM : BM) * (W / 8);
              for (int i = ct, k = 0; i < pieces; i += kCopiers, ++k) {
                // paced in kPaceSteps steps of rounds, each no sooner than its share
                // of the span; a thread sleeps for what is left of its wait
                if (paced && (k * kPaceSteps) % kRounds < kPaceSteps) {
                  const unsigned long long due = now + span * (k * kPaceSteps / kRounds) / kPaceSteps;
                  for (unsigned long long t; (t = globaltimer_ns()) < due;)
                    __nanosleep((unsigned)(due - t < 1000000ull ? due - t : 1000000ull));
                }
                warps_copy_piece<W>(epi, stg, p.ldc, tm, col0, i);
              }
            };
            if constexpr (kHalves) {
              if (halves) copy(std::integral_constant<int, BN / 2>{});
              else copy(std::integral_constant<int, BN>{});
            } else {
              copy(std::integral_constant<int, BN>{});
            }
            mbar_arrive(stg_free);
          }
        }
        __threadfence_system();  // this thread's stores, before leave()'s release
        named_bar_sync(2, 256 + kCopiers);
      }
    }
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      int hstage = 0;  // kHalves: the halves' ring
      uint32_t hphase = 0;
      // gate chunks this CTA has seen open, per problem: flags only grow during a
      // launch, so each is waited for (and the async proxy fenced) once per CTA
      uint64_t open[kGroup ? kGemmGroupMax : 1] = {};
      split_unit u;
      for (int w = blockIdx.x, s = 0; next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
        int pi, tm, tn;
        coords(u.t, pi, tm, tn);
        const int kb0 = Split ? u.kb0 : 0, kb1 = Split ? u.kb1 : p.kblocks;
        const int m0 = tm * BM, n0 = gemm_bf16_tile_col0(tn, BN, p.n);
        const CUtensorMap *mA = &tmA, *mB = &tmB;
        const unsigned *gate = nullptr;
        if constexpr (kGroup) {
          if (grp.per_a) mA = &grp.tmA[pi];
          if (grp.per_b) mB = &grp.tmB[pi];
          gate = grp.gate[pi];
        }
        // The unit's k-blocks into the stages, or (hc true: last_halves) in two
        // passes of BN / 2 columns, the B boxes of one half each, into the
        // halves' ring
        auto load = [&](auto hc) {
          constexpr bool kHalf = decltype(hc)::value;
          constexpr int NS = kHalf ? CF::kHStages : S;
          constexpr uint32_t SB = kHalf ? CF::kHalfStageBytes : CF::kStageBytes;
          int &stage_ = kHalf ? hstage : stage;
          uint32_t &phase_ = kHalf ? hphase : phase;
          for (int h = 0; h < (kHalf ? 2 : 1); ++h)
            for (int kb = kb0; kb < kb1; ++kb) {
              if constexpr (kGroup) {
                const int c = gate_chunk(kb, grp.chunks, p.kblocks);
                if (gate && !((open[pi] >> c) & 1u)) open[pi] = gate_wait(gate, c, grp.chunks, grp.epoch, open[pi]);
              }
              const uint32_t fb = kHalf ? hfull(stage_) : full(stage_);
              mbar_wait(kHalf ? hempty(stage_) : empty(stage_), phase_ ^ 1u);
              const uint32_t sA = base + stage_ * SB;
              mbar_expect_tx(fb, SB);
              tma_load_2d(sA, mA, fb, kb * BK, m0);
#pragma unroll
              for (int i = 0; i < (kHalf ? BN / 128 : BN / 64); ++i)
                tma_load_2d(sA + CF::kABytes + i * (BK * 64 * 2), mB, fb, n0 + h * (BN / 2) + 64 * i, kb * BK);
              if (++stage_ == NS) { stage_ = 0; phase_ ^= 1u; }
            }
        };
        if constexpr (kHalves) {
          if (epi.last_halves && !stages_more(w, s)) {
            // the CTA's last tile in halves, once every stage of the tiles
            // before is free (their memory is the halves' ring's)
            for (int j = 0; j < S; ++j) {
              mbar_wait(empty(stage), phase ^ 1u);
              if (++stage == S) { stage = 0; phase ^= 1u; }
            }
            load(std::true_type{});
            continue;  // nothing follows the last tile
          }
        }
        load(std::false_type{});
      }
    }
  } else {
    // ------------------------------------------------------------ consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int cw = wg - 1;  // which 64-row half of the tile
    const int warp = (threadIdx.x / 32) & 3;
    const int lane = threadIdx.x & 31;
    float d[BN / 2];
    int stage = 0;
    uint32_t phase = 0;
    int hstage = 0;       // kHalves: the halves' ring
    uint32_t hphase = 0;
    uint32_t sphase = 0;  // kWarps: parity of the staging's next free phase
    bool stored = false;  // a tile of this CTA's has been stored (and sent)
    bool bulk_sent = false;  // kWarps: this warp's bulk copies of a last tile (or half) are out
    // One tile of W columns (BN, or BN / 2 for each half of a last tile with
    // last_halves) of tile row tm, columns [col0, col0 + W): the main loop
    // into the first W / 2 accumulators, then the epilogue. bulk_tile: kWarps
    // sends it by the consumers' bulk copies (last_bulk). False: a split part
    // that does not finish its tile (nothing stored).
    auto tile = [&](auto wc, const split_unit &u, int pi, int tm, int tn, long long col0, bool bulk_tile) -> bool {
      constexpr int W = decltype(wc)::value;
      // a half comes through the halves' ring, a whole tile through the stages
      constexpr bool kHalf = W != BN;
      constexpr int NS = kHalf ? CF::kHStages : S;
      constexpr uint32_t SB = kHalf ? CF::kHalfStageBytes : CF::kStageBytes;
      int &stage_ = kHalf ? hstage : stage;
      uint32_t &phase_ = kHalf ? hphase : phase;
      auto full_ = [&](int j) { return kHalf ? hfull(j) : full(j); };
      auto empty_ = [&](int j) { return kHalf ? hempty(j) : empty(j); };
      [[maybe_unused]] const bool first = !stored;
      const int kb0 = Split ? u.kb0 : 0, kb1 = Split ? u.kb1 : p.kblocks;
      __nv_bfloat16 *const Cp = kGroup ? grp_c(grp, pi) : p.C;  // this tile's C
      int prev = 0;
      for (int kb = kb0; kb < kb1; ++kb) {
        mbar_wait(full_(stage_), phase_);
        const uint32_t sA = base + stage_ * SB + cw * (64 * BK * 2);
        const uint32_t sB = base + stage_ * SB + CF::kABytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          // A: K-major, SW128: rows of 128 B, 8-row groups 1024 B apart (SBO);
          //    k16 step = 32 B inside the swizzled row.
          const uint64_t da = make_desc_sw128(sA + kk * 32, 16, 1024);
          // B: N-major, SW128: boxes of 64 N x 64 K (8 KB) side by side along N
          //    (LBO = 8192), 8-K-row groups 1024 B apart (SBO); k16 = 2048 B.
          const uint64_t db = make_desc_sw128(sB + kk * 2048, 8192, 1024);
          wgmma_tile<W>(d, da, db, (kb > kb0 || kk > 0) ? 1 : 0);
        }
        wgmma_commit();
        if (kb > kb0) {
          wgmma_wait<1>();  // the group of k-block kb-1 is done: free its stage
          if (lane == 0) mbar_arrive(empty_(prev));
        }
        prev = stage_;
        if (++stage_ == NS) { stage_ = 0; phase_ ^= 1u; }
      }
      wgmma_wait<0>();
      fence_regs(d);
      if (lane == 0) mbar_arrive(empty_(prev));
      if constexpr (Split) {
        if (u.ways > 1 && split_fixup<BN>(p.sp, u, d)) return false;  // a part: the finisher stores the tile
      }

      // ---- epilogue: accumulator fragment -> bf16 C (row-major)
      // m64nW fp32 fragment: d[4j+{0,1}] = (row r, cols 8j + 2*(lane%4) + {0,1}),
      // d[4j+{2,3}] = (row r+8, same cols), r = 16*warp + lane/4.
      const long long row0 = (long long)tm * BM + cw * 64 + warp * 16 + (lane >> 2);
      const int q = lane & 3;
      if (p.vec16) {
        // 4x4 transpose of bf16x2 words inside each lane quad (two shfl_xor
        // butterfly steps) so that lane q owns 8 consecutive columns
        // [32*jb + 8*q, +8) of its row: one 16-byte store instead of four
        // 4-byte ones, and every 32-byte sector is written whole.
        __nv_bfloat16 *crow0 = Cp + row0 * p.ldc + col0 + 8 * q;
        const bool b1 = (q & 2) != 0, b0 = (q & 1) != 0;
        // push: this warp's staging rows (R per round, row-major, W wide);
        // round h holds the tile rows r + 8h when R == 8, all 16 when R == 16.
        [[maybe_unused]] const int wrow = cw * 64 + warp * 16;
        const uint32_t swarp = stg + (uint32_t)((cw * 4 + warp) * RS * W) * 2u;
        auto reuse = [&]() {  // the staging rows' previous copies are done reading
          if (lane < R) bulk_wait_read_all();
          __syncwarp();
        };
        if constexpr (kStaged) reuse();
        if constexpr (kWarps) {
          if (bulk_sent) {  // the first half of a last tile went by bulk copies: they are done reading
            if (lane < 16) bulk_wait_read_all();
            __syncwarp();
          } else {  // the copying warps are done with the tile before
            mbar_wait(stg_free, sphase ^ 1u);
            sphase ^= 1u;
          }
        }
        if constexpr (kDirect) {  // the first tile's stores wait for the entry
          if (first && lane == 0) epi.sync.wait_entered();
          __syncwarp();
        }
        // kWarps: a tile sent by the consumers' bulk copies (last_bulk) needs its
        // rows contiguous; every other tile is staged swizzled
        [[maybe_unused]] const uint32_t swz = kWarps && CUCO_GEMM_STAGE_SWIZZLE && !bulk_tile ? (uint32_t)(lane & 4) : 0u;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // A row past C's m (only in the last tile row; its values are zeros,
          // from TMA's zero fill of A) is stored into the sink instead: one
          // select per row, no branch or predicate per store (either cost the
          // whole kernel 1-6 %, docs/gemm.md)
          const bool in_c = row0 + 8 * h < p.m;
          __nv_bfloat16 *crow = in_c ? crow0 + (h ? 8 * p.ldc : 0) : sink_row(row0 + 8 * h - (long long)tm * BM, q);
          [[maybe_unused]] const uint32_t srow = swarp + (uint32_t)(((lane >> 2) + (RS == 16 ? 8 * h : 0)) * W) * 2u;
#pragma unroll
          for (int jb = 0; jb < W / 32; ++jb) {
            uint32_t w[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              __nv_bfloat162 v = __floats2bfloat162_rn(d[4 * (4 * jb + i) + 2 * h], d[4 * (4 * jb + i) + 2 * h + 1]);
              w[i] = *reinterpret_cast<uint32_t *>(&v);
            }
            uint32_t s0 = b1 ? w[0] : w[2], s1 = b1 ? w[1] : w[3];
            uint32_t r0 = __shfl_xor_sync(0xffffffffu, s0, 2), r1 = __shfl_xor_sync(0xffffffffu, s1, 2);
            if (b1) { w[0] = r0; w[1] = r1; } else { w[2] = r0; w[3] = r1; }
            s0 = b0 ? w[0] : w[1];
            s1 = b0 ? w[2] : w[3];
            r0 = __shfl_xor_sync(0xffffffffu, s0, 1);
            r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
            if (b0) { w[0] = r0; w[2] = r1; } else { w[1] = r0; w[3] = r1; }
            *reinterpret_cast<uint4 *>(crow + 32 * jb) = make_uint4(w[0], w[1], w[2], w[3]);
            if constexpr (kDirect) {
              if (in_c) {
                const long long off = crow + 32 * jb - Cp;
                for (int i = 0; i < epi.n; ++i)
                  *reinterpret_cast<uint4 *>(epi.dst[i] + off) = make_uint4(w[0], w[1], w[2], w[3]);
              }
            }
            if constexpr (kStaged || kWarps)  // 16-byte chunk q + 4 jb of the row (kWarps: swizzled)
              asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(srow + (((uint32_t)(q + 4 * jb) ^ swz) << 4)),
                           "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                           : "memory");
          }
          if constexpr (kStaged) {
            if (R == 16 && h == 0) continue;
            // round h's rows to every copy; the tile's first send waits for the entry
            push_send<R, W>(epi, p.ldc, p.m, swarp, (long long)tm * BM + wrow + (R == 8 ? 8 * h : 0), col0, lane,
                            first && (R == 16 || h == 0));
            if (R == 8 && h == 0) reuse();
          }
        }
        if constexpr (kWarps) {
          if (bulk_tile) {  // a last tile (or half): the consumers' bulk copies
            push_send<16, W>(epi, p.ldc, p.m, swarp, (long long)tm * BM + wrow, col0, lane, first);
            bulk_sent = true;
          } else {
            mbar_arrive(staged);  // this thread's part of the tile is staged
          }
        }
      } else {
        // rows past C's m into the sink, as above
        const long long r_in = row0 - (long long)tm * BM;
        __nv_bfloat16 *c0 = row0 < p.m ? Cp + row0 * p.ldc + col0 + q * 2 : sink_row(r_in, 0) + q * 2;
        __nv_bfloat16 *c1 = row0 + 8 < p.m ? Cp + (row0 + 8) * p.ldc + col0 + q * 2 : sink_row(r_in + 8, 0) + q * 2;
#pragma unroll
        for (int j = 0; j < W / 8; ++j) {
          *reinterpret_cast<__nv_bfloat162 *>(c0 + 8 * j) = __floats2bfloat162_rn(d[4 * j], d[4 * j + 1]);
          *reinterpret_cast<__nv_bfloat162 *>(c1 + 8 * j) = __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
        }
      }
      if constexpr (!std::is_same<Epi, gemm_no_epilogue>::value && !kPush) {
        __threadfence();          // this thread's part of the tile is visible device-wide
        named_bar_sync(1, 256);   // ... and so is everyone else's
        epi(tm, tn, BM, BN);
      }
      stored = true;
      return true;
    };
    split_unit u;
    for (int w = blockIdx.x, s = 0; next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
      int pi, tm, tn;
      coords(u.t, pi, tm, tn);
      // kWarps: the CTA's last tile may go by bulk copies (last_bulk) and be
      // computed in two halves (last_halves)
      bool bulk_tile = false, halves = false;
      if constexpr (kWarps) {
        const bool last = (epi.last_bulk || (kHalves && epi.last_halves)) && !stages_more(w, s);
        bulk_tile = last && epi.last_bulk;
        halves = kHalves && last && epi.last_halves;
      }
      const long long col0 = gemm_bf16_tile_col0(tn, BN, p.n);
      if constexpr (kHalves) {
        if (halves) {
          tile(std::integral_constant<int, BN / 2>{}, u, pi, tm, tn, col0, bulk_tile);
          tile(std::integral_constant<int, BN / 2>{}, u, pi, tm, tn, col0 + BN / 2, bulk_tile);
          continue;
        }
      }
      tile(std::integral_constant<int, BN>{}, u, pi, tm, tn, col0, bulk_tile);
    }
    if constexpr (kStaged) {
      // Every copy complete (not only read) before the CTA's shared memory goes.
      if (lane < 16) {
        bulk_wait_all();
        asm volatile("fence.proxy.async.global;" ::: "memory");
      }
      __syncwarp();
    }
    if constexpr (kDirect) __threadfence_system();  // this thread's peer stores, before leave()'s release
    if constexpr (kWarps) {
      if (bulk_sent && lane < 16) {  // the last tile's copies complete
        bulk_wait_all();
        asm volatile("fence.proxy.async.global;" ::: "memory");
      }
      __syncwarp();
      named_bar_sync(2, 256 + kCopiers);  // the copying warps' stores are fenced
    }
    if constexpr (kPush) {
      if constexpr (kPushSync) {
        named_bar_sync(1, 256);
        if (threadIdx.x == 128) epi.sync.leave();
      }
    }
  }
#else
  __trap();  // built without sm_90a: refuse loudly rather than return garbage
#endif
}

// ---------------------------------------------------------------- host side
typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                    const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline encode_tiled_fn get_encode_tiled() {
  static encode_tiled_fn fn = []() -> encode_tiled_fn {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<encode_tiled_fn>(f);
  }();
  return fn;
}

// 2-D bf16 tensor map: inner dimension contiguous, 128-byte swizzle.
inline cudaError_t encode_2d(CUtensorMap *map, const void *ptr, unsigned long long inner,
                             unsigned long long outer, unsigned long long row_stride_elems,
                             unsigned box_inner, unsigned box_outer) {
  encode_tiled_fn enc = get_encode_tiled();
  if (!enc) return cudaErrorNotSupported;
  cuuint64_t dims[2] = {inner, outer};
  cuuint64_t strides[1] = {row_stride_elems * 2ull};
  cuuint32_t box[2] = {box_inner, box_outer};
  cuuint32_t estr[2] = {1, 1};
  CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims, strides, box,
                   estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
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
inline int balanced_grid(long long units, int sms, int max_ctas) {
  int ctas = units < sms ? (int)units : sms;
  if (max_ctas > 0 && max_ctas < ctas) ctas = max_ctas;
  if (ctas < 1) return 1;
  const long long waves = (units + ctas - 1) / ctas;
  return (int)((units + waves - 1) / waves);
}

// The tile width a plan starts with for N columns: 256 when N % 256 == 0,
// 128 when N % 128 == 0 (measured, and what every shape got before any N was
// supported). Any other N (a multiple of 8) has a last tile column that overlaps
// the one before it (tile_col0); 256 unless rounding N up to 256 computes
// over 5 % more columns than rounding it up to 128 (the 128-wide tile is
// ~3-5 % slower per FLOP at 4096-8192, docs/gemm.md), and never wider than N.
inline int plan_width(int N) {
  if (N % 256 == 0) return 256;
  if (N % 128 == 0 || (N >= 128 && N < 256)) return 128;
  if (N < 128) return 64;
  const long long w256 = (N + 255LL) / 256 * 256, w128 = (N + 127LL) / 128 * 128;
  return w256 * 100 <= w128 * 105 ? 256 : 128;
}

// The shapes a plan takes: any M >= 1, N >= 64 and K in multiples of 8.
inline bool shape_ok(int M, int N, int K) { return M >= 1 && N >= 64 && N % 8 == 0 && K >= 8 && K % 8 == 0; }

// A plan's launch geometry for tile width bn (tiles_m and N already set):
// tiles_n, group_m and the persistent grid on sms SMs, capped at max_ctas.
inline void plan_geometry(gemm_bf16_plan *p, int bn, int sms, int max_ctas) {
  p->bn = bn;
  p->tiles_n = (p->N + bn - 1) / bn;
  // group_m tile rows x (ctas/group_m) tile columns are in flight together;
  // pick group_m so that band is roughly square in elements.
  p->group_m = (bn == 256) ? 16 : 8;
  if (p->group_m > p->tiles_m) p->group_m = p->tiles_m;
  p->ctas = balanced_grid((long long)p->tiles_m * p->tiles_n, sms, max_ctas);
}

// A plan's shape and geometry on sms SMs (no tensor maps, pointers or device),
// every tile whole: what plan_init sets beside them.
inline void plan_shape(gemm_bf16_plan *p, int M, int N, int K, int sms, int max_ctas) {
  p->M = M; p->N = N; p->K = K;
  p->sms = sms;
  p->tiles_m = (M + 127) / 128;
  p->start_tile = 0;
  p->split = 0;
  p->split_ws = nullptr;
  p->split_cnt = nullptr;
  plan_geometry(p, plan_width(N), sms, max_ctas);
}

// One kernel instantiation, made ready once per device: refused (instead of
// trapping in the kernel) when this translation unit was not compiled for
// sm_90a, e.g. a build whose CUDA architectures default to an older target
// (its kernel body is empty and would only __trap()); then its shared memory.
// The attribute is set on a device's first launch only: every later launch
// would otherwise pay a runtime call on the host before the kernel is queued,
// which a lone small GEMM's latency counts.
// What is cached is keyed by the kernel's host stub: a process may load
// several shared objects that each carry their own copy of this kernel (the
// harness loads every program it runs), while a function's static variables
// are shared by all of them (GNU unique symbols), and each copy needs the
// attribute set.
struct kernel_ready_slot {
  std::atomic<const void *> fn{nullptr};
  std::atomic<unsigned long long> devices{0};  // bit d: set on device d
};
constexpr int kKernelReadySlots = 16;

template <int BN, class Epi, class Grp, bool Split>
inline cudaError_t kernel_ready() {
  auto kern = gemm_bf16_kernel<BN, Epi, Grp, Split>;
  const void *fn = reinterpret_cast<const void *>(kern);
  static kernel_ready_slot slots[kKernelReadySlots];  // per instantiation, one per copy
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = dev < 64 ? 1ull << dev : 0;
  kernel_ready_slot *slot = nullptr;
  for (int i = 0; i < kKernelReadySlots && !slot; ++i) {
    const void *want = nullptr;
    if (slots[i].fn.load(std::memory_order_acquire) == fn ||
        slots[i].fn.compare_exchange_strong(want, fn, std::memory_order_acq_rel) || want == fn)
      slot = &slots[i];
  }
  if (slot && (bit & slot->devices.load(std::memory_order_acquire))) return cudaSuccess;
  cudaFuncAttributes fa;
  if ((e = cudaFuncGetAttributes(&fa, kern)) != cudaSuccess) return e;
  if (fa.ptxVersion != 0 && fa.ptxVersion < 90) return cudaErrorNotSupported;
  using CF = cfg<BN, push_rows_t<Epi, BN>::value>;
  if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, CF::kSmem)) == cudaSuccess &&
      slot)
    slot->devices.fetch_or(bit, std::memory_order_release);
  return e;
}

template <int BN, class Epi, class Grp = gemm_no_group>
inline cudaError_t launch(const gemm_bf16_plan *pl, cudaStream_t s, const Epi &epi, const Grp &grp = Grp{}) {
  constexpr bool kGroup = std::is_same<Grp, gemm_bf16_group>::value;
  using CF = cfg<BN, push_rows_t<Epi, BN>::value>;
  kparams kp;
  kp.C = pl->C;
  kp.ldc = pl->ldc;
  kp.m = pl->M;
  kp.n = pl->N;
  kp.tiles_m = pl->tiles_m;
  kp.tiles_n = pl->tiles_n;
  kp.tiles = pl->tiles_m * pl->tiles_n;
  kp.kblocks = kblocks_of(pl->K);
  kp.group_m = pl->group_m < 1 ? 1 : pl->group_m;
  kp.start_tile = (pl->start_tile % kp.tiles + kp.tiles) % kp.tiles;
  kp.vec16 = (pl->ldc % 8 == 0) && ((reinterpret_cast<uintptr_t>(pl->C) & 15) == 0);
  int ctas = pl->ctas;
  if constexpr (kGroup) {
    kp.tiles *= grp.n;
    kp.start_tile = 0;
    kp.vec16 = pl->ldc % 8 == 0;
    for (int i = 0; i < grp.n; ++i)
      if (reinterpret_cast<uintptr_t>(grp.C[i]) & 15) kp.vec16 = 0;
    ctas = grp.ctas;
  }
  // split tail: the plan's ways on this launch's grid (a grouped launch: none)
  split_layout(kp.tiles, ctas, kp.kblocks, kGroup ? 0 : pl->split, &kp.sp);
  kp.sp.cnt = pl->split_cnt;
  kp.sp.ws = pl->split_ws;
  if (kp.sp.stages > 0 && (!kp.sp.cnt || !kp.sp.ws)) return cudaErrorInvalidValue;
  if constexpr (is_push_t<Epi>::value) {
    if (!kp.vec16 || epi.n < 0 || epi.n > kGemmPushMax) return cudaErrorInvalidValue;
    // last_halves: the copying warps' push, tiles of 128 or 256 columns, no split tail
    if (epi.last_halves && (push_rows_t<Epi, BN>::value != -2 || BN < 128 || kp.sp.stages > 0))
      return cudaErrorInvalidValue;
    for (int i = 0; i < epi.n; ++i)
      if (reinterpret_cast<uintptr_t>(epi.dst[i]) & 15) return cudaErrorInvalidValue;
  }
  cudaError_t e;
  if (kp.sp.stages > 0) {  // its own instantiation: the unsplit kernel stays the plain one
    if constexpr (!kGroup && CUCO_GEMM_SPLIT) {
      if ((e = kernel_ready<BN, Epi, Grp, true>()) != cudaSuccess) return e;
      gemm_bf16_kernel<BN, Epi, Grp, true><<<ctas, kThreads, CF::kSmem, s>>>(pl->tmA, pl->tmB, kp, epi, grp);
      return cudaGetLastError();
    }
    return cudaErrorNotSupported;  // built with CUCO_GEMM_SPLIT 0
  }
  if ((e = kernel_ready<BN, Epi, Grp, false>()) != cudaSuccess) return e;
  gemm_bf16_kernel<BN, Epi, Grp, false><<<ctas, kThreads, CF::kSmem, s>>>(pl->tmA, pl->tmB, kp, epi, grp);
  return cudaGetLastError();
}

}  // namespace gemm_detail

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
inline cudaError_t gemm_bf16_plan_init(gemm_bf16_plan *p, const gemm_bf16_args &a, int max_ctas = 0) {
  if (!p || !a.A || !a.B || !a.C) return cudaErrorInvalidValue;
  if (!gemm_detail::shape_ok(a.M, a.N, a.K)) return cudaErrorInvalidValue;
  if (a.lda < a.K || a.ldb < a.N || a.ldc < a.N) return cudaErrorInvalidValue;
  if (a.lda % 8 || a.ldb % 8 || a.ldc % 2) return cudaErrorInvalidValue;
  if ((reinterpret_cast<uintptr_t>(a.A) & 15) || (reinterpret_cast<uintptr_t>(a.B) & 15) ||
      (reinterpret_cast<uintptr_t>(a.C) & 3))
    return cudaErrorInvalidValue;
  if (max_ctas < 0) return cudaErrorInvalidValue;
  int dev, major = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess) return e;
  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return e;
  if (major != 9) return cudaErrorNotSupported;

  gemm_detail::plan_shape(p, a.M, a.N, a.K, sms, max_ctas);
  p->A = a.A; p->B = a.B; p->C = a.C;
  p->lda = a.lda; p->ldb = a.ldb; p->ldc = a.ldc;
  p->device = dev;
  if ((e = gemm_detail::encode_2d(&p->tmA, a.A, a.K, a.M, a.lda, 64, 128)) != cudaSuccess) return e;
  if ((e = gemm_detail::encode_2d(&p->tmB, a.B, a.N, a.K, a.ldb, 64, 64)) != cudaSuccess) return e;
  return cudaSuccess;
}

/// Points an existing plan at a new A (same shape and lda). Re-encodes one
/// tensor map on the host (~1-2 us); use for input rotation.
inline cudaError_t gemm_bf16_plan_set_A(gemm_bf16_plan *p, const __nv_bfloat16 *A) {
  if (!p || !A || (reinterpret_cast<uintptr_t>(A) & 15)) return cudaErrorInvalidValue;
  cudaError_t e = gemm_detail::encode_2d(&p->tmA, A, p->K, p->M, p->lda, 64, 128);
  if (e == cudaSuccess) p->A = A;
  return e;
}

/// Points an existing plan at a new B (same shape and ldb).
inline cudaError_t gemm_bf16_plan_set_B(gemm_bf16_plan *p, const __nv_bfloat16 *B) {
  if (!p || !B || (reinterpret_cast<uintptr_t>(B) & 15)) return cudaErrorInvalidValue;
  cudaError_t e = gemm_detail::encode_2d(&p->tmB, B, p->N, p->K, p->ldb, 64, 64);
  if (e == cudaSuccess) p->B = B;
  return e;
}

/// Points an existing plan at a new C (same shape and ldc; 4-byte aligned).
inline cudaError_t gemm_bf16_plan_set_C(gemm_bf16_plan *p, __nv_bfloat16 *C) {
  if (!p || !C || (reinterpret_cast<uintptr_t>(C) & 3)) return cudaErrorInvalidValue;
  p->C = C;
  return cudaSuccess;
}

/// Narrows a plan's CTA tile to tile_n columns (128 or 64, no wider than the
/// plan's own nor than N), for more tiles than 128 x 256 gives: e.g. a GEMM whose tiles
/// would leave SMs idle, or one whose finished tiles should arrive in more
/// waves. Only the launch geometry changes (B is loaded as 64-column boxes,
/// BN/64 per stage, so the tensor maps stay); max_ctas as for init.
/// Returns cudaErrorInvalidValue for any other tile_n.
inline cudaError_t gemm_bf16_plan_narrow(gemm_bf16_plan *p, int tile_n, int max_ctas = 0) {
  if (!p || (tile_n != 128 && tile_n != 64) || tile_n > p->bn || tile_n > p->N || max_ctas < 0)
    return cudaErrorInvalidValue;
  gemm_detail::plan_geometry(p, tile_n, p->sms, max_ctas);
  p->split = 0;  // its workspace was sized for the old tiles
  p->split_ws = nullptr;
  p->split_cnt = nullptr;
  return cudaSuccess;
}

namespace gemm_detail {
// The grid a split plan launches: one CTA per SM, or per tile part when fewer
// (its tail stages want every SM); unsplit (ways <= 1), the plan's balanced grid.
inline int split_ctas(const gemm_bf16_plan *p, int ways, int sms, int max_ctas) {
  const long long parts = (long long)p->tiles_m * p->tiles_n * (ways > 1 ? ways : 1);
  if (ways <= 1) return balanced_grid(parts, sms, max_ctas);
  int ctas = parts < sms ? (int)parts : sms;
  if (max_ctas > 0 && max_ctas < ctas) ctas = max_ctas;
  return ctas;
}
// Workspace layout: the counters (one per tail tile), then the slots at a
// 256-byte boundary. Bytes in all, 0 when the plan would not split.
inline size_t split_bytes(const gemm_bf16_plan *p, int ways, int ctas, size_t *cnt_bytes) {
  split_params sp;
  const int slots = split_layout(p->tiles_m * p->tiles_n, ctas, kblocks_of(p->K), ways, &sp);
  if (sp.stages == 0) return 0;
  const size_t cb = ((size_t)(p->tiles_m * p->tiles_n - sp.whole) * sizeof(unsigned) + 255) & ~(size_t)255;
  if (cnt_bytes) *cnt_bytes = cb;
  return cb + (size_t)slots * BM * p->bn * sizeof(float);
}
}  // namespace gemm_detail

/// Bytes of device memory gemm_bf16_plan_split needs to split plan p's tail
/// `ways` ways on at most max_ctas CTAs (0: one per SM); 0 when it would not
/// split (ways < 2 or > kGemmSplitMax, more ways than ceil(K / 64) k-blocks, or a
/// grid under 2 x ways CTAs). Call it after any gemm_bf16_plan_narrow.
inline size_t gemm_bf16_split_bytes(const gemm_bf16_plan *p, int ways, int max_ctas = 0) {
  if (!p || max_ctas < 0) return 0;
  return gemm_detail::split_bytes(p, ways, gemm_detail::split_ctas(p, ways, p->sms, max_ctas), nullptr);
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
inline cudaError_t gemm_bf16_plan_split(gemm_bf16_plan *p, int ways, void *ws, size_t bytes, int max_ctas = 0) {
  if (!p || ways < 0 || ways > kGemmSplitMax || max_ctas < 0) return cudaErrorInvalidValue;
  const int ctas = gemm_detail::split_ctas(p, ways, p->sms, max_ctas);
  size_t cnt_bytes = 0;
  const size_t need = gemm_detail::split_bytes(p, ways, ctas, &cnt_bytes);
  if (need == 0) {  // every tile whole
    p->split = 0;
    p->split_ws = nullptr;
    p->split_cnt = nullptr;
    p->ctas = gemm_detail::split_ctas(p, 1, p->sms, max_ctas);
    return cudaSuccess;
  }
  if (!ws || bytes < need || (reinterpret_cast<uintptr_t>(ws) & 255)) return cudaErrorInvalidValue;
  p->split = ways;
  p->split_cnt = static_cast<unsigned *>(ws);
  p->split_ws = reinterpret_cast<float *>(static_cast<char *>(ws) + cnt_bytes);
  p->ctas = ctas;
  return cudaSuccess;
}

/// Tile geometry of a plan: tile size, tile counts and grid size.
inline gemm_bf16_tile_info gemm_bf16_tiles(const gemm_bf16_plan *p) {
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
/// Epilogue contract. Epi is a copyable functor type with
///   __device__ void operator()(int tile_m, int tile_n, int tile_rows, int tile_cols) const;
/// It is passed by value as a kernel parameter. For every tile of C
/// (tile_m in [0, tiles_m), tile_n in [0, tiles_n), covering rows
/// [tile_m*tile_rows, +tile_rows) and columns [c0, c0 + tile_cols) with
/// c0 = gemm_bf16_tile_col0(tile_n, tile_cols, N), which is tile_n*tile_cols
/// except in the last tile column of an N that tile_cols does not divide;
/// tile_rows = 128, tile_cols = the plan's tile_n) it is invoked exactly once per
/// calling thread, by ALL 256 threads of the two consumer warpgroups of the
/// CTA that computed the tile (threadIdx.x in [128, 384); threadIdx.x - 128
/// is a dense consumer index, warps 4..11), uniformly (no divergence at
/// entry), after:
///   1. every consumer thread has stored its share of the tile to C with
///      ordinary st.global,
///   2. each of them has executed __threadfence() (fence.sc.gpu), and
///   3. all 256 have passed named barrier 1 (bar.sync 1, 256).
/// When the plan's M is not a multiple of 128, the last tile row's tiles
/// (tile_m == tiles_m - 1) still come with tile_rows = 128, but only their
/// first M - tile_m * 128 rows exist in C: a hook that reads or copies C must
/// clip to the plan's M (it is not passed; the hook is built knowing it, and
/// N likewise).
/// Hence, inside the hook, the whole tile is in global memory and visible at
/// device (gpu) scope: any calling thread may read it, copy it (e.g. NCCL
/// device-API put / LSA stores to a peer window) or publish a per-tile flag
/// (use a release store / atomic, e.g. st.release.gpu or atomicAdd after the
/// fence already done). For system / peer-GPU visibility of C itself use
/// __threadfence_system() in the hook before the flag. The hook may use
/// named barrier ids >= 2 over the 256 consumer threads but not id 0
/// (__syncthreads: the producer warpgroup does not take part) or id 1.
/// Tiles of one CTA are processed in order; the next tile's main loop starts
/// when the hook returns (the producer is already prefetching it), so a slow
/// hook delays only that CTA. No ordering between CTAs is implied.
/// The hook and its fence/barrier are compiled out for gemm_no_epilogue.
template <class Epi>
inline cudaError_t gemm_bf16_run_epilogue(const gemm_bf16_plan *p, cudaStream_t s, const Epi &epi) {
  if (!p || p->tiles_m <= 0 || p->tiles_n <= 0 || p->ctas <= 0) return cudaErrorInvalidValue;
  if (p->bn == 256) return gemm_detail::launch<256, Epi>(p, s, epi);
  if (p->bn == 128) return gemm_detail::launch<128, Epi>(p, s, epi);
  if (p->bn == 64) return gemm_detail::launch<64, Epi>(p, s, epi);
  return cudaErrorInvalidValue;
}

/// Launches the planned GEMM on stream s (asynchronous).
inline cudaError_t gemm_bf16_run(const gemm_bf16_plan *p, cudaStream_t s) {
  return gemm_bf16_run_epilogue(p, s, gemm_no_epilogue{});
}

/// Builds a grouped launch (see gemm_bf16_group) over n problems of plan p's
/// shape and tile width: problem i multiplies A[i] (or the plan's A when A is
/// null) by B[i] (or the plan's B when B is null) into C[i], with the plan's
/// lda, ldb and ldc; gate null, or gate[i] null or a device array of
/// `chunks` flags; computed in the order first, first + 1, ... (mod n) on
/// min(SMs, n x tiles, max_ctas) CTAs (0 = no cap). chunks must divide
/// ceil(K / 64) and be at most kGemmGateChunksMax. Narrow the plan (gemm_bf16_plan_narrow) before, not after.
/// Host-only. Returns cudaErrorInvalidValue for arguments outside these
/// rules, with gemm_bf16_plan_init's alignment rules for A, B and C.
inline cudaError_t gemm_bf16_group_init(gemm_bf16_group *g, const gemm_bf16_plan *p, int n,
                                        const __nv_bfloat16 *const *A, const __nv_bfloat16 *const *B,
                                        __nv_bfloat16 *const *C, const unsigned *const *gate, int chunks, int first,
                                        int max_ctas = 0) {
  if (!g || !p || !C || n < 1 || n > kGemmGroupMax || first < 0 || first >= n || max_ctas < 0)
    return cudaErrorInvalidValue;
  const int kblocks = gemm_detail::kblocks_of(p->K);
  if (chunks < 1 || chunks > kGemmGateChunksMax || kblocks % chunks) return cudaErrorInvalidValue;
  const int sms = p->sms;
  cudaError_t e;
  memset(g, 0, sizeof(*g));
  g->per_a = A != nullptr;
  g->per_b = B != nullptr;
  for (int i = 0; i < n; ++i) {
    if (!C[i] || (reinterpret_cast<uintptr_t>(C[i]) & 3)) return cudaErrorInvalidValue;
    if (A && (!A[i] || (reinterpret_cast<uintptr_t>(A[i]) & 15))) return cudaErrorInvalidValue;
    if (B && (!B[i] || (reinterpret_cast<uintptr_t>(B[i]) & 15))) return cudaErrorInvalidValue;
    if (A && (e = gemm_detail::encode_2d(&g->tmA[i], A[i], p->K, p->M, p->lda, 64, 128)) != cudaSuccess) return e;
    if (B && (e = gemm_detail::encode_2d(&g->tmB[i], B[i], p->N, p->K, p->ldb, 64, 64)) != cudaSuccess) return e;
    g->C[i] = C[i];
    g->gate[i] = gate ? gate[i] : nullptr;
  }
  const long long tiles = (long long)n * p->tiles_m * p->tiles_n;
  g->n = n;
  g->first = first;
  g->chunks = chunks;
  g->epoch = 1;
  g->ctas = tiles < sms ? (int)tiles : sms;
  if (max_ctas > 0 && max_ctas < g->ctas) g->ctas = max_ctas;
  return cudaSuccess;
}

/// Enqueues on stream s: set gate flag *flag = v once all work before it on s
/// is complete and visible (cuStreamWriteValue32 with its default memory
/// barrier; fetched through the runtime, no libcuda link). What a copy that
/// fills a gated problem's B follows with. Graph-capturable.
inline cudaError_t gemm_gate_set(cudaStream_t s, const unsigned *flag, unsigned v) {
  typedef CUresult (*write_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
  static write_fn fn = []() -> write_fn {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &f, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<write_fn>(f);
  }();
  if (!fn) return cudaErrorNotSupported;
  return fn((CUstream)s, (CUdeviceptr)(uintptr_t)flag, v, 0) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

/// Launches a grouped GEMM on stream s (asynchronous; graph-capturable).
/// Its gated problems wait on the GPU for their flags, so whatever sets them,
/// and every kernel queued before that on its stream, must be able to run
/// beside it: the copy engine and stream memory operations need no SM, any
/// kernel does, so leave SMs free (max_ctas) or the launch never finishes.
/// (A cudaMemcpyAsync between two buffers of one GPU can be such a kernel:
/// test_gemm's gated copies left the launch on all 132 SMs waiting forever
/// at one shape, not on 131.)
inline cudaError_t gemm_bf16_run_group(const gemm_bf16_plan *p, const gemm_bf16_group *g, cudaStream_t s) {
  if (!p || !g || p->tiles_m <= 0 || p->tiles_n <= 0 || g->n < 1 || g->ctas <= 0) return cudaErrorInvalidValue;
  if (p->bn == 256) return gemm_detail::launch<256>(p, s, gemm_no_epilogue{}, *g);
  if (p->bn == 128) return gemm_detail::launch<128>(p, s, gemm_no_epilogue{}, *g);
  if (p->bn == 64) return gemm_detail::launch<64>(p, s, gemm_no_epilogue{}, *g);
  return cudaErrorInvalidValue;
}

/// The tile width for a GEMM that runs alone (nothing sent tile by tile): the
/// plan's bn-column tiles, halved (256 -> 128 -> 64) while `tiles` of the
/// current width would leave at least half of `ctas` CTAs idle. (Measured, one
/// H200, test_gemm --group: 64 tiles of 128 x 256 for 132 SMs take 27.8 us,
/// 128 tiles of 128 x 128 19.0; but two such problems in one launch, 128
/// tiles, take 30.6 at 256 against 35.1 at 128, and 512 tiles 178.8 against
/// 216.6. Small M, test_gemm --split, 4096 x 8192 per rank: M = 128 takes 84.0
/// at 256, 46.8 at 128, 34.0 at 64, cuBLAS 35.3; M = 256 83.4, 46.7, 33.7,
/// cuBLAS 42.3; M = 512 83.6, 49.2, 59.3; docs/gemm.md.)
constexpr int gemm_bf16_alone_tile_n(int bn, int tiles, int ctas) {
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
constexpr int gemm_bf16_alone_split(int tiles, int sms) {
  return tiles > sms && tiles % sms != 0 && (tiles % sms) * 20 <= sms * 9 ? 2 : 0;
}

namespace gemm_detail {
// A lone GEMM's plan (plan_init done): the width gemm_bf16_alone_tile_n picks;
// returns the ways gemm_bf16_alone_split picks for it (0 in a translation unit
// built without the split kernels, CUCO_GEMM_SPLIT 0).
inline int alone_plan(gemm_bf16_plan *p, int max_ctas) {
  const int avail = max_ctas > 0 ? max_ctas : p->sms;
  const int tile_n = gemm_bf16_alone_tile_n(p->bn, p->tiles_m * p->tiles_n, avail);
  if (tile_n < p->bn) plan_geometry(p, tile_n, p->sms, max_ctas);
  return CUCO_GEMM_SPLIT ? gemm_bf16_alone_split(p->tiles_m * p->tiles_n, avail) : 0;
}
}  // namespace gemm_detail

/// Bytes of the workspace with which gemm_bf16 (below) splits the tail of an
/// M x N x K GEMM on the current device (max_ctas as there); 0 when it would
/// compute every tile whole (see gemm_bf16_alone_split). Host-only.
inline size_t gemm_bf16_alone_bytes(int M, int N, int K, int max_ctas = 0) {
  gemm_bf16_plan p;
  int dev = 0, sms = 0;
  if (!gemm_detail::shape_ok(M, N, K) || max_ctas < 0 || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 0;
  memset(&p, 0, sizeof(p));
  gemm_detail::plan_shape(&p, M, N, K, sms, max_ctas);
  const int ways = gemm_detail::alone_plan(&p, max_ctas);
  return ways ? gemm_detail::split_bytes(&p, ways, gemm_detail::split_ctas(&p, ways, sms, max_ctas), nullptr) : 0;
}

/// That workspace, allocated and zeroed on the current device (cudaMalloc and
/// cudaMemset: not while a stream is being captured); *ws null and *bytes 0
/// when the shape needs none. Free it with cudaFree.
inline cudaError_t gemm_bf16_alone_workspace(int M, int N, int K, int max_ctas, void **ws, size_t *bytes) {
  cudaError_t e = cudaSuccess;
  *ws = nullptr;
  *bytes = gemm_bf16_alone_bytes(M, N, K, max_ctas);
  if (*bytes && (e = cudaMalloc(ws, *bytes)) == cudaSuccess && (e = cudaMemset(*ws, 0, *bytes)) != cudaSuccess) {
    cudaFree(*ws);
    *ws = nullptr;
  }
  if (e != cudaSuccess) *bytes = 0;
  return e;
}

/// Convenience: plan + run (pays the host-side plan cost, ~2-4 us, per call),
/// with the tile width gemm_bf16_alone_tile_n picks for the plan's tiles on
/// the SMs (or max_ctas). With a workspace ws of ws_bytes (256-byte aligned,
/// zeroed before its first use, at least gemm_bf16_alone_bytes for the shape,
/// one launch at a time) the tail is also split where gemm_bf16_alone_split
/// says so; the split grid's CTAs wait for each other, so nothing else may
/// hold the SMs it needs while it runs (a GEMM between other kernels on one
/// stream is fine). Without one (or too small), every tile is whole.
inline cudaError_t gemm_bf16(const gemm_bf16_args &a, cudaStream_t s, int max_ctas = 0, void *ws = nullptr,
                             size_t ws_bytes = 0) {
  gemm_bf16_plan p;
  cudaError_t e = gemm_bf16_plan_init(&p, a, max_ctas);
  if (e != cudaSuccess) return e;
  const int ways = gemm_detail::alone_plan(&p, max_ctas);
  if (ways && ws && ws_bytes >= gemm_bf16_split_bytes(&p, ways, max_ctas) &&
      (e = gemm_bf16_plan_split(&p, ways, ws, ws_bytes, max_ctas)) != cudaSuccess)
    return e;
  return gemm_bf16_run(&p, s);
}

}  // namespace cuco
