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
//
// This header is the entry point: it includes gemm_plan.cuh (types, the plan)
// and wgmma.cuh (the PTX and the kernel's device pieces) and holds the kernel,
// its launch and the run API.
#pragma once

// CUCO_GEMM_SPLIT: nonzero (the default) builds the split-tail kernels
// (gemm_bf16_plan_split) beside the plain ones; 0 leaves them out, for a
// translation unit that never splits (~2 s less nvcc time per program on this
// header's users, a third smaller object). A split plan launched without them
// fails with cudaErrorNotSupported. Define it before the first include.
#ifndef CUCO_GEMM_SPLIT
#define CUCO_GEMM_SPLIT 1
#endif

#include "cuco_dev/gemm_plan.cuh"
#include "cuco_dev/wgmma.cuh"

namespace cuco
{

namespace gemm_detail
{

template <int BN, class Epi, class Grp = gemm_no_group, bool Split = false>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_bf16_kernel(const __grid_constant__ CUtensorMap tmA,
                     const __grid_constant__ CUtensorMap tmB, const kparams p, const Epi epi,
                     const __grid_constant__ Grp grp)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
	constexpr bool kGroup = std::is_same<Grp, gemm_bf16_group>::value;
	constexpr bool kPush = is_push_t<Epi>::value;
	static_assert(!(kGroup && kPush), "a grouped launch has no push epilogue");
	// tile t -> (problem i, tm, tn): the problem picks its A or B map, gate and C
	auto coords = [&](int t, int &i, int &tm, int &tn) {
		if constexpr (kGroup)
			group_coords(t, p, grp, i, tm, tn);
		else {
			i = 0;
			tile_coords(t, p, tm, tn);
		}
	};
	// after the unit before (w, s): does the CTA stage another tile? (split
	// parts that do not finish their tile stage nothing)
	auto stages_more = [&](int w, int s) {
		split_unit u2;
		while (next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u2))
			if (!(Split && u2.ways > 1 && u2.rank > 0))
				return true;
		return false;
	};
	constexpr bool kPushSync =
	    kPush && !std::is_same<typename push_sync_t<Epi>::type, gemm_push_no_sync>::value;
	constexpr int R = push_rows_t<Epi, BN>::value; // staging rows per round (push)
	constexpr bool kStaged = kPush && R > 0;       // bulk copies from shared memory
	constexpr bool kDirect = kPush && R == -1;     // st.global from registers
	constexpr bool kWarps =
	    kPush && R == -2; // the producer warpgroup's warps 1-3 copy the staged tile
	constexpr bool kHalves = kWarps && BN >= 128 && !Split; // last_halves possible
	constexpr int RS = kWarps ? 16 : R; // rows each consumer warp stages per round
	using CF = cfg<BN, R>;
	constexpr int S = CF::kStages;
	extern __shared__ uint8_t smem_raw[];
	const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
	const uint32_t stg = base + CF::kRingBytes; // push: the staging tile
	const uint32_t bars = stg + CF::kPushBytes;
	auto full = [&](int s) { return bars + 8u * s; };
	auto empty = [&](int s) { return bars + 8u * (S + s); };
	const uint32_t staged = bars + 16u * S, stg_free = staged + 8u; // kWarps
	// kHalves: the halves' ring (CF::kHStages stages of CF::kHalfStageBytes from base)
	auto hfull = [&](int j) { return stg_free + 8u + 8u * j; };
	auto hempty = [&](int j) { return stg_free + 8u + 8u * (CF::kHStages + j); };
	constexpr int kCopiers = 96; // kWarps: threads 32-127
	const int wg = threadIdx.x / 128;

	if (threadIdx.x == 0) {
#pragma unroll
		for (int s = 0; s < S; ++s) {
			mbar_init(full(s), 1);  // producer's arrive.expect_tx
			mbar_init(empty(s), 8); // lane 0 of each of the 8 consumer warps
		}
		if constexpr (kWarps) {
			mbar_init(staged, 256);        // every consumer thread, its part staged
			mbar_init(stg_free, kCopiers); // every copying thread, done reading
			for (int j = 0; j < CF::kHStages; ++j) {
				mbar_init(hfull(j), 1);
				mbar_init(hempty(j), 8);
			}
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if constexpr (kGroup) {
			for (int i = 0; i < grp.n; ++i) {
				if (grp.per_a)
					tma_prefetch_desc(&grp.tmA[i]);
				if (grp.per_b)
					tma_prefetch_desc(&grp.tmB[i]);
			}
			if (!grp.per_a)
				tma_prefetch_desc(&tmA);
			if (!grp.per_b)
				tma_prefetch_desc(&tmB);
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
			if (threadIdx.x == 32)
				epi.sync.enter();
		}
		if constexpr (kWarps) {
			if (threadIdx.x >= 32) {
				// copying warps: each tile the consumers stage, 16 bytes a thread
				// at a time, rows in order, to every destination; then free the
				// staging
				const int ct = threadIdx.x - 32;
				unsigned long long staged_at =
				    globaltimer_ns(); // pace: when the previous tile was staged
				uint32_t ph = 0;
				bool first = true;
				split_unit u;
				for (int w = blockIdx.x, s = 0;
				     next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
					if constexpr (Split) {
						if (u.ways > 1 && u.rank > 0)
							continue; // a part: the finisher stages the
							          // tile
					}
					int pi, tm, tn;
					coords(u.t, pi, tm, tn);
					// false: the CTA's last staged tile (looked up only where
					// it matters)
					const bool more = (epi.pace || epi.last_bulk ||
					                   (kHalves && epi.last_halves))
					                      ? stages_more(w, s)
					                      : true;
					if (epi.last_bulk && !more)
						break; // the consumers send it
					const bool halves =
					    kHalves && epi.last_halves &&
					    !more; // the consumers stage it in two halves
					for (int h = 0; h < (halves ? 2 : 1); ++h) {
						mbar_wait(staged, ph);
						ph ^= 1u;
						// paced: spread over span after the tile was
						// staged; never the last, and a first half over
						// half the span (its second half computes in about
						// half a tile's time)
						const unsigned long long now =
						    epi.pace ? globaltimer_ns() : 0;
						const unsigned long long span =
						    (now - staged_at) * epi.pace /
						    (halves ? 200u : 100u);
						const bool paced =
						    epi.pace && (more || (halves && h == 0));
						staged_at = now;
						if (first) {
							if ((threadIdx.x & 31) == 0)
								epi.sync.wait_entered();
							__syncwarp();
							first = false;
						}
						auto copy = [&](auto wc) { // the staged tile, wc
							                   // columns wide
							constexpr int W = decltype(wc)::value;
							constexpr int kRounds =
							    (BM * (W / 8) + kCopiers - 1) /
							    kCopiers;
							constexpr int kPaceSteps =
							    CUCO_GEMM_PACE_STEPS < 1 ||
							            CUCO_GEMM_PACE_STEPS > kRounds
							        ? kRounds
							        : CUCO_GEMM_PACE_STEPS;
							const int col0 =
							    gemm_bf16_tile_col0(tn, BN, p.n) +
							    h * W; // < N
							// the tile's rows in C (fewer than BM only
							// in the last tile row)
							const int pieces =
							    (p.m - tm * BM < BM ? p.m - tm * BM
							                        : BM) *
							    (W / 8);
							for (int i = ct, k = 0; i < pieces;
							     i += kCopiers, ++k) {
								// paced in kPaceSteps steps of
								// rounds, each no sooner than its
								// share of the span; a thread
								// sleeps for what is left of its
								// wait
								if (paced &&
								    (k * kPaceSteps) % kRounds <
								        kPaceSteps) {
									const unsigned long long
									    due = now +
									          span *
									              (k *
									               kPaceSteps /
									               kRounds) /
									              kPaceSteps;
									for (
									    unsigned long long t;
									    (t = globaltimer_ns()) <
									    due;)
										__nanosleep((
										    unsigned)(due - t <
										                      1000000ull
										                  ? due -
										                        t
										                  : 1000000ull));
								}
								warps_copy_piece<W>(epi, stg, p.ldc,
								                    tm, col0, i);
							}
						};
						if constexpr (kHalves) {
							if (halves)
								copy(std::integral_constant<
								     int, BN / 2>{});
							else
								copy(std::integral_constant<int,
								                            BN>{});
						} else {
							copy(std::integral_constant<int, BN>{});
						}
						mbar_arrive(stg_free);
					}
				}
				__threadfence_system(); // this thread's stores, before leave()'s
				                        // release
				named_bar_sync(2, 256 + kCopiers);
			}
		}
		if (threadIdx.x == 0) {
			int stage = 0;
			uint32_t phase = 0;
			int hstage = 0; // kHalves: the halves' ring
			uint32_t hphase = 0;
			// gate chunks this CTA has seen open, per problem: flags only grow during a
			// launch, so each is waited for (and the async proxy fenced) once per CTA
			uint64_t open[kGroup ? kGemmGroupMax : 1] = {};
			split_unit u;
			for (int w = blockIdx.x, s = 0;
			     next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
				int pi, tm, tn;
				coords(u.t, pi, tm, tn);
				const int kb0 = Split ? u.kb0 : 0, kb1 = Split ? u.kb1 : p.kblocks;
				const int m0 = tm * BM, n0 = gemm_bf16_tile_col0(tn, BN, p.n);
				const CUtensorMap *mA = &tmA, *mB = &tmB;
				const unsigned *gate = nullptr;
				if constexpr (kGroup) {
					if (grp.per_a)
						mA = &grp.tmA[pi];
					if (grp.per_b)
						mB = &grp.tmB[pi];
					gate = grp.gate[pi];
				}
				// The unit's k-blocks into the stages, or (hc true: last_halves) in
				// two passes of BN / 2 columns, the B boxes of one half each, into
				// the halves' ring
				auto load = [&](auto hc) {
					constexpr bool kHalf = decltype(hc)::value;
					constexpr int NS = kHalf ? CF::kHStages : S;
					constexpr uint32_t SB =
					    kHalf ? CF::kHalfStageBytes : CF::kStageBytes;
					int &stage_ = kHalf ? hstage : stage;
					uint32_t &phase_ = kHalf ? hphase : phase;
					for (int h = 0; h < (kHalf ? 2 : 1); ++h)
						for (int kb = kb0; kb < kb1; ++kb) {
							if constexpr (kGroup) {
								const int c = gate_chunk(
								    kb, grp.chunks, p.kblocks);
								if (gate && !((open[pi] >> c) & 1u))
									open[pi] = gate_wait(
									    gate, c, grp.chunks,
									    grp.epoch, open[pi]);
							}
							const uint32_t fb =
							    kHalf ? hfull(stage_) : full(stage_);
							mbar_wait(kHalf ? hempty(stage_)
							                : empty(stage_),
							          phase_ ^ 1u);
							const uint32_t sA = base + stage_ * SB;
							mbar_expect_tx(fb, SB);
							tma_load_2d(sA, mA, fb, kb * BK, m0);
#pragma unroll
							for (int i = 0;
							     i < (kHalf ? BN / 128 : BN / 64); ++i)
								tma_load_2d(sA + CF::kABytes +
								                i * (BK * 64 * 2),
								            mB, fb,
								            n0 + h * (BN / 2) +
								                64 * i,
								            kb * BK);
							if (++stage_ == NS) {
								stage_ = 0;
								phase_ ^= 1u;
							}
						}
				};
				if constexpr (kHalves) {
					if (epi.last_halves && !stages_more(w, s)) {
						// the CTA's last tile in halves, once every stage
						// of the tiles before is free (their memory is the
						// halves' ring's)
						for (int j = 0; j < S; ++j) {
							mbar_wait(empty(stage), phase ^ 1u);
							if (++stage == S) {
								stage = 0;
								phase ^= 1u;
							}
						}
						load(std::true_type{});
						continue; // nothing follows the last tile
					}
				}
				load(std::false_type{});
			}
		}
	} else {
		// ------------------------------------------------------------ consumers
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
		const int cw = wg - 1; // which 64-row half of the tile
		const int warp = (threadIdx.x / 32) & 3;
		const int lane = threadIdx.x & 31;
		float d[BN / 2];
		int stage = 0;
		uint32_t phase = 0;
		int hstage = 0; // kHalves: the halves' ring
		uint32_t hphase = 0;
		uint32_t sphase = 0; // kWarps: parity of the staging's next free phase
		bool stored = false; // a tile of this CTA's has been stored (and sent)
		bool bulk_sent =
		    false; // kWarps: this warp's bulk copies of a last tile (or half) are out
		// One tile of W columns (BN, or BN / 2 for each half of a last tile with
		// last_halves) of tile row tm, columns [col0, col0 + W): the main loop
		// into the first W / 2 accumulators, then the epilogue. bulk_tile: kWarps
		// sends it by the consumers' bulk copies (last_bulk). False: a split part
		// that does not finish its tile (nothing stored).
		auto tile = [&](auto wc, const split_unit &u, int pi, int tm, int tn,
		                long long col0, bool bulk_tile) -> bool {
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
			__nv_bfloat16 *const Cp = kGroup ? grp_c(grp, pi) : p.C; // this tile's C
			int prev = 0;
			for (int kb = kb0; kb < kb1; ++kb) {
				mbar_wait(full_(stage_), phase_);
				const uint32_t sA = base + stage_ * SB + cw * (64 * BK * 2);
				const uint32_t sB = base + stage_ * SB + CF::kABytes;
				wgmma_fence();
#pragma unroll
				for (int kk = 0; kk < BK / 16; ++kk) {
					// A: K-major, SW128: rows of 128 B, 8-row groups 1024 B
					// apart (SBO);
					//    k16 step = 32 B inside the swizzled row.
					const uint64_t da = make_desc_sw128(sA + kk * 32, 16, 1024);
					// B: N-major, SW128: boxes of 64 N x 64 K (8 KB) side by
					// side along N
					//    (LBO = 8192), 8-K-row groups 1024 B apart (SBO); k16 =
					//    2048 B.
					const uint64_t db =
					    make_desc_sw128(sB + kk * 2048, 8192, 1024);
					wgmma_tile<W>(d, da, db, (kb > kb0 || kk > 0) ? 1 : 0);
				}
				wgmma_commit();
				if (kb > kb0) {
					wgmma_wait<1>(); // the group of k-block kb-1 is done: free
					                 // its stage
					if (lane == 0)
						mbar_arrive(empty_(prev));
				}
				prev = stage_;
				if (++stage_ == NS) {
					stage_ = 0;
					phase_ ^= 1u;
				}
			}
			wgmma_wait<0>();
			fence_regs(d);
			if (lane == 0)
				mbar_arrive(empty_(prev));
			if constexpr (Split) {
				if (u.ways > 1 && split_fixup<BN>(p.sp, u, d))
					return false; // a part: the finisher stores the tile
			}

			// ---- epilogue: accumulator fragment -> bf16 C (row-major)
			// m64nW fp32 fragment: d[4j+{0,1}] = (row r, cols 8j + 2*(lane%4) + {0,1}),
			// d[4j+{2,3}] = (row r+8, same cols), r = 16*warp + lane/4.
			const long long row0 =
			    (long long)tm * BM + cw * 64 + warp * 16 + (lane >> 2);
			const int q = lane & 3;
			if (p.vec16) {
				// 4x4 transpose of bf16x2 words inside each lane quad (two shfl_xor
				// butterfly steps) so that lane q owns 8 consecutive columns
				// [32*jb + 8*q, +8) of its row: one 16-byte store instead of four
				// 4-byte ones, and every 32-byte sector is written whole.
				__nv_bfloat16 *crow0 = Cp + row0 * p.ldc + col0 + 8 * q;
				const bool b1 = (q & 2) != 0, b0 = (q & 1) != 0;
				// push: this warp's staging rows (R per round, row-major, W wide);
				// round h holds the tile rows r + 8h when R == 8, all 16 when R
				// == 16.
				[[maybe_unused]] const int wrow = cw * 64 + warp * 16;
				const uint32_t swarp =
				    stg + (uint32_t)((cw * 4 + warp) * RS * W) * 2u;
				auto reuse =
				    [&]() { // the staging rows' previous copies are done reading
					    if (lane < R)
						    bulk_wait_read_all();
					    __syncwarp();
				    };
				if constexpr (kStaged)
					reuse();
				if constexpr (kWarps) {
					if (bulk_sent) { // the first half of a last tile went by
						         // bulk copies: they are done reading
						if (lane < 16)
							bulk_wait_read_all();
						__syncwarp();
					} else { // the copying warps are done with the tile before
						mbar_wait(stg_free, sphase ^ 1u);
						sphase ^= 1u;
					}
				}
				if constexpr (kDirect) { // the first tile's stores wait for the
					                 // entry
					if (first && lane == 0)
						epi.sync.wait_entered();
					__syncwarp();
				}
				// kWarps: a tile sent by the consumers' bulk copies (last_bulk)
				// needs its rows contiguous; every other tile is staged swizzled
				[[maybe_unused]] const uint32_t swz =
				    kWarps && CUCO_GEMM_STAGE_SWIZZLE && !bulk_tile
				        ? (uint32_t)(lane & 4)
				        : 0u;
#pragma unroll
				for (int h = 0; h < 2; ++h) {
					// A row past C's m (only in the last tile row; its values
					// are zeros, from TMA's zero fill of A) is stored into the
					// sink instead: one select per row, no branch or predicate
					// per store (either cost the whole kernel 1-6 %,
					// docs/gemm.md)
					const bool in_c = row0 + 8 * h < p.m;
					__nv_bfloat16 *crow =
					    in_c ? crow0 + (h ? 8 * p.ldc : 0)
					         : sink_row(row0 + 8 * h - (long long)tm * BM, q);
					[[maybe_unused]] const uint32_t srow =
					    swarp +
					    (uint32_t)(((lane >> 2) + (RS == 16 ? 8 * h : 0)) * W) *
					        2u;
#pragma unroll
					for (int jb = 0; jb < W / 32; ++jb) {
						uint32_t w[4];
#pragma unroll
						for (int i = 0; i < 4; ++i) {
							__nv_bfloat162 v = __floats2bfloat162_rn(
							    d[4 * (4 * jb + i) + 2 * h],
							    d[4 * (4 * jb + i) + 2 * h + 1]);
							w[i] = *reinterpret_cast<uint32_t *>(&v);
						}
						uint32_t s0 = b1 ? w[0] : w[2],
						         s1 = b1 ? w[1] : w[3];
						uint32_t r0 = __shfl_xor_sync(0xffffffffu, s0, 2),
						         r1 = __shfl_xor_sync(0xffffffffu, s1, 2);
						if (b1) {
							w[0] = r0;
							w[1] = r1;
						} else {
							w[2] = r0;
							w[3] = r1;
						}
						s0 = b0 ? w[0] : w[1];
						s1 = b0 ? w[2] : w[3];
						r0 = __shfl_xor_sync(0xffffffffu, s0, 1);
						r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
						if (b0) {
							w[0] = r0;
							w[2] = r1;
						} else {
							w[1] = r0;
							w[3] = r1;
						}
						*reinterpret_cast<uint4 *>(crow + 32 * jb) =
						    make_uint4(w[0], w[1], w[2], w[3]);
						if constexpr (kDirect) {
							if (in_c) {
								const long long off =
								    crow + 32 * jb - Cp;
								for (int i = 0; i < epi.n; ++i)
									*reinterpret_cast<uint4 *>(
									    epi.dst[i] + off) =
									    make_uint4(w[0], w[1],
									               w[2], w[3]);
							}
						}
						if constexpr (kStaged ||
						              kWarps) // 16-byte chunk q + 4 jb of
						                      // the row (kWarps: swizzled)
							asm volatile(
							    "st.shared.v4.b32 [%0], {%1, %2, %3, "
							    "%4};" ::"r"(
							        srow +
							        (((uint32_t)(q + 4 * jb) ^ swz)
							         << 4)),
							    "r"(w[0]), "r"(w[1]), "r"(w[2]),
							    "r"(w[3])
							    : "memory");
					}
					if constexpr (kStaged) {
						if (R == 16 && h == 0)
							continue;
						// round h's rows to every copy; the tile's first
						// send waits for the entry
						push_send<R, W>(epi, p.ldc, p.m, swarp,
						                (long long)tm * BM + wrow +
						                    (R == 8 ? 8 * h : 0),
						                col0, lane,
						                first && (R == 16 || h == 0));
						if (R == 8 && h == 0)
							reuse();
					}
				}
				if constexpr (kWarps) {
					if (bulk_tile) { // a last tile (or half): the consumers'
						         // bulk copies
						push_send<16, W>(epi, p.ldc, p.m, swarp,
						                 (long long)tm * BM + wrow, col0,
						                 lane, first);
						bulk_sent = true;
					} else {
						mbar_arrive(staged); // this thread's part of the
						                     // tile is staged
					}
				}
			} else {
				// rows past C's m into the sink, as above
				const long long r_in = row0 - (long long)tm * BM;
				__nv_bfloat16 *c0 = row0 < p.m ? Cp + row0 * p.ldc + col0 + q * 2
				                               : sink_row(r_in, 0) + q * 2;
				__nv_bfloat16 *c1 = row0 + 8 < p.m
				                        ? Cp + (row0 + 8) * p.ldc + col0 + q * 2
				                        : sink_row(r_in + 8, 0) + q * 2;
#pragma unroll
				for (int j = 0; j < W / 8; ++j) {
					*reinterpret_cast<__nv_bfloat162 *>(c0 + 8 * j) =
					    __floats2bfloat162_rn(d[4 * j], d[4 * j + 1]);
					*reinterpret_cast<__nv_bfloat162 *>(c1 + 8 * j) =
					    __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
				}
			}
			if constexpr (!std::is_same<Epi, gemm_no_epilogue>::value && !kPush) {
				__threadfence();        // this thread's part of the tile is visible
				                        // device-wide
				named_bar_sync(1, 256); // ... and so is everyone else's
				epi(tm, tn, BM, BN);
			}
			stored = true;
			return true;
		};
		split_unit u;
		for (int w = blockIdx.x, s = 0;
		     next_unit<Split>(p, gridDim.x, blockIdx.x, w, s, u);) {
			int pi, tm, tn;
			coords(u.t, pi, tm, tn);
			// kWarps: the CTA's last tile may go by bulk copies (last_bulk) and be
			// computed in two halves (last_halves)
			bool bulk_tile = false, halves = false;
			if constexpr (kWarps) {
				const bool last = (epi.last_bulk || (kHalves && epi.last_halves)) &&
				                  !stages_more(w, s);
				bulk_tile = last && epi.last_bulk;
				halves = kHalves && last && epi.last_halves;
			}
			const long long col0 = gemm_bf16_tile_col0(tn, BN, p.n);
			if constexpr (kHalves) {
				if (halves) {
					tile(std::integral_constant<int, BN / 2>{}, u, pi, tm, tn,
					     col0, bulk_tile);
					tile(std::integral_constant<int, BN / 2>{}, u, pi, tm, tn,
					     col0 + BN / 2, bulk_tile);
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
		if constexpr (kDirect)
			__threadfence_system(); // this thread's peer stores, before leave()'s
			                        // release
		if constexpr (kWarps) {
			if (bulk_sent && lane < 16) { // the last tile's copies complete
				bulk_wait_all();
				asm volatile("fence.proxy.async.global;" ::: "memory");
			}
			__syncwarp();
			named_bar_sync(2, 256 + kCopiers); // the copying warps' stores are fenced
		}
		if constexpr (kPush) {
			if constexpr (kPushSync) {
				named_bar_sync(1, 256);
				if (threadIdx.x == 128)
					epi.sync.leave();
			}
		}
	}
#else
	__trap(); // built without sm_90a: refuse loudly rather than return garbage
#endif
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
	std::atomic<unsigned long long> devices{0}; // bit d: set on device d
};
constexpr int kKernelReadySlots = 16;

template <int BN, class Epi, class Grp, bool Split> inline cudaError_t kernel_ready()
{
	auto kern = gemm_bf16_kernel<BN, Epi, Grp, Split>;
	const void *fn = reinterpret_cast<const void *>(kern);
	static kernel_ready_slot slots[kKernelReadySlots]; // per instantiation, one per copy
	int dev = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e != cudaSuccess)
		return e;
	const unsigned long long bit = dev < 64 ? 1ull << dev : 0;
	kernel_ready_slot *slot = nullptr;
	for (int i = 0; i < kKernelReadySlots && !slot; ++i) {
		const void *want = nullptr;
		if (slots[i].fn.load(std::memory_order_acquire) == fn ||
		    slots[i].fn.compare_exchange_strong(want, fn, std::memory_order_acq_rel) ||
		    want == fn)
			slot = &slots[i];
	}
	if (slot && (bit & slot->devices.load(std::memory_order_acquire)))
		return cudaSuccess;
	cudaFuncAttributes fa;
	if ((e = cudaFuncGetAttributes(&fa, kern)) != cudaSuccess)
		return e;
	if (fa.ptxVersion != 0 && fa.ptxVersion < 90)
		return cudaErrorNotSupported;
	using CF = cfg<BN, push_rows_t<Epi, BN>::value>;
	if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
	                              CF::kSmem)) == cudaSuccess &&
	    slot)
		slot->devices.fetch_or(bit, std::memory_order_release);
	return e;
}

template <int BN, class Epi, class Grp = gemm_no_group>
inline cudaError_t launch(const gemm_bf16_plan *pl, cudaStream_t s, const Epi &epi,
                          const Grp &grp = Grp{})
{
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
			if (reinterpret_cast<uintptr_t>(grp.C[i]) & 15)
				kp.vec16 = 0;
		ctas = grp.ctas;
	}
	// split tail: the plan's ways on this launch's grid (a grouped launch: none)
	split_layout(kp.tiles, ctas, kp.kblocks, kGroup ? 0 : pl->split, &kp.sp);
	kp.sp.cnt = pl->split_cnt;
	kp.sp.ws = pl->split_ws;
	if (kp.sp.stages > 0 && (!kp.sp.cnt || !kp.sp.ws))
		return cudaErrorInvalidValue;
	if constexpr (is_push_t<Epi>::value) {
		if (!kp.vec16 || epi.n < 0 || epi.n > kGemmPushMax)
			return cudaErrorInvalidValue;
		// last_halves: the copying warps' push, tiles of 128 or 256 columns, no split tail
		if (epi.last_halves &&
		    (push_rows_t<Epi, BN>::value != -2 || BN < 128 || kp.sp.stages > 0))
			return cudaErrorInvalidValue;
		for (int i = 0; i < epi.n; ++i)
			if (reinterpret_cast<uintptr_t>(epi.dst[i]) & 15)
				return cudaErrorInvalidValue;
	}
	cudaError_t e;
	if (kp.sp.stages > 0) { // its own instantiation: the unsplit kernel stays the plain one
		if constexpr (!kGroup && CUCO_GEMM_SPLIT) {
			if ((e = kernel_ready<BN, Epi, Grp, true>()) != cudaSuccess)
				return e;
			gemm_bf16_kernel<BN, Epi, Grp, true>
			    <<<ctas, kThreads, CF::kSmem, s>>>(pl->tmA, pl->tmB, kp, epi, grp);
			return cudaGetLastError();
		}
		return cudaErrorNotSupported; // built with CUCO_GEMM_SPLIT 0
	}
	if ((e = kernel_ready<BN, Epi, Grp, false>()) != cudaSuccess)
		return e;
	gemm_bf16_kernel<BN, Epi, Grp, false>
	    <<<ctas, kThreads, CF::kSmem, s>>>(pl->tmA, pl->tmB, kp, epi, grp);
	return cudaGetLastError();
}

} // namespace gemm_detail

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
inline cudaError_t gemm_bf16_run_epilogue(const gemm_bf16_plan *p, cudaStream_t s, const Epi &epi)
{
	if (!p || p->tiles_m <= 0 || p->tiles_n <= 0 || p->ctas <= 0)
		return cudaErrorInvalidValue;
	if (p->bn == 256)
		return gemm_detail::launch<256, Epi>(p, s, epi);
	if (p->bn == 128)
		return gemm_detail::launch<128, Epi>(p, s, epi);
	if (p->bn == 64)
		return gemm_detail::launch<64, Epi>(p, s, epi);
	return cudaErrorInvalidValue;
}

/// Launches the planned GEMM on stream s (asynchronous).
inline cudaError_t gemm_bf16_run(const gemm_bf16_plan *p, cudaStream_t s)
{
	return gemm_bf16_run_epilogue(p, s, gemm_no_epilogue{});
}

/// Builds a grouped launch (see gemm_bf16_group) over n problems of plan p's
/// shape and tile width: problem i multiplies A[i] (or the plan's A when A is
/// null) by B[i] (or the plan's B when B is null) into C[i], with the plan's
/// lda, ldb and ldc; gate null, or gate[i] null or a device array of
/// `chunks` flags; computed in the order first, first + 1, ... (mod n) on
/// min(SMs, n x tiles, max_ctas) CTAs (0 = no cap). chunks must divide
/// ceil(K / 64) and be at most kGemmGateChunksMax. Narrow the plan (gemm_bf16_plan_narrow) before,
/// not after. Host-only. Returns cudaErrorInvalidValue for arguments outside these rules, with
/// gemm_bf16_plan_init's alignment rules for A, B and C.
inline cudaError_t gemm_bf16_group_init(gemm_bf16_group *g, const gemm_bf16_plan *p, int n,
                                        const __nv_bfloat16 *const *A,
                                        const __nv_bfloat16 *const *B, __nv_bfloat16 *const *C,
                                        const unsigned *const *gate, int chunks, int first,
                                        int max_ctas = 0)
{
	if (!g || !p || !C || n < 1 || n > kGemmGroupMax || first < 0 || first >= n || max_ctas < 0)
		return cudaErrorInvalidValue;
	const int kblocks = gemm_detail::kblocks_of(p->K);
	if (chunks < 1 || chunks > kGemmGateChunksMax || kblocks % chunks)
		return cudaErrorInvalidValue;
	const int sms = p->sms;
	cudaError_t e;
	memset(g, 0, sizeof(*g));
	g->per_a = A != nullptr;
	g->per_b = B != nullptr;
	for (int i = 0; i < n; ++i) {
		if (!C[i] || (reinterpret_cast<uintptr_t>(C[i]) & 3))
			return cudaErrorInvalidValue;
		if (A && (!A[i] || (reinterpret_cast<uintptr_t>(A[i]) & 15)))
			return cudaErrorInvalidValue;
		if (B && (!B[i] || (reinterpret_cast<uintptr_t>(B[i]) & 15)))
			return cudaErrorInvalidValue;
		if (A && (e = gemm_detail::encode_2d(&g->tmA[i], A[i], p->K, p->M, p->lda, 64,
		                                     128)) != cudaSuccess)
			return e;
		if (B && (e = gemm_detail::encode_2d(&g->tmB[i], B[i], p->N, p->K, p->ldb, 64,
		                                     64)) != cudaSuccess)
			return e;
		g->C[i] = C[i];
		g->gate[i] = gate ? gate[i] : nullptr;
	}
	const long long tiles = (long long)n * p->tiles_m * p->tiles_n;
	g->n = n;
	g->first = first;
	g->chunks = chunks;
	g->epoch = 1;
	g->ctas = tiles < sms ? (int)tiles : sms;
	if (max_ctas > 0 && max_ctas < g->ctas)
		g->ctas = max_ctas;
	return cudaSuccess;
}

/// Enqueues on stream s: set gate flag *flag = v once all work before it on s
/// is complete and visible (cuStreamWriteValue32 with its default memory
/// barrier; fetched through the runtime, no libcuda link). What a copy that
/// fills a gated problem's B follows with. Graph-capturable.
inline cudaError_t gemm_gate_set(cudaStream_t s, const unsigned *flag, unsigned v)
{
	typedef CUresult (*write_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
	static write_fn fn = []() -> write_fn {
		void *f = nullptr;
		cudaDriverEntryPointQueryResult q;
		if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &f, 12000,
		                                     cudaEnableDefault, &q) != cudaSuccess ||
		    q != cudaDriverEntryPointSuccess)
			return nullptr;
		return reinterpret_cast<write_fn>(f);
	}();
	if (!fn)
		return cudaErrorNotSupported;
	return fn((CUstream)s, (CUdeviceptr)(uintptr_t)flag, v, 0) == CUDA_SUCCESS
	           ? cudaSuccess
	           : cudaErrorUnknown;
}

/// Launches a grouped GEMM on stream s (asynchronous; graph-capturable).
/// Its gated problems wait on the GPU for their flags, so whatever sets them,
/// and every kernel queued before that on its stream, must be able to run
/// beside it: the copy engine and stream memory operations need no SM, any
/// kernel does, so leave SMs free (max_ctas) or the launch never finishes.
/// (A cudaMemcpyAsync between two buffers of one GPU can be such a kernel:
/// test_gemm's gated copies left the launch on all 132 SMs waiting forever
/// at one shape, not on 131.)
inline cudaError_t gemm_bf16_run_group(const gemm_bf16_plan *p, const gemm_bf16_group *g,
                                       cudaStream_t s)
{
	if (!p || !g || p->tiles_m <= 0 || p->tiles_n <= 0 || g->n < 1 || g->ctas <= 0)
		return cudaErrorInvalidValue;
	if (p->bn == 256)
		return gemm_detail::launch<256>(p, s, gemm_no_epilogue{}, *g);
	if (p->bn == 128)
		return gemm_detail::launch<128>(p, s, gemm_no_epilogue{}, *g);
	if (p->bn == 64)
		return gemm_detail::launch<64>(p, s, gemm_no_epilogue{}, *g);
	return cudaErrorInvalidValue;
}

namespace gemm_detail
{
// A lone GEMM's plan (plan_init done): the width gemm_bf16_alone_tile_n picks;
// returns the ways gemm_bf16_alone_split picks for it (0 in a translation unit
// built without the split kernels, CUCO_GEMM_SPLIT 0).
inline int alone_plan(gemm_bf16_plan *p, int max_ctas)
{
	const int avail = max_ctas > 0 ? max_ctas : p->sms;
	const int tile_n = gemm_bf16_alone_tile_n(p->bn, p->tiles_m * p->tiles_n, avail);
	if (tile_n < p->bn)
		plan_geometry(p, tile_n, p->sms, max_ctas);
	return CUCO_GEMM_SPLIT ? gemm_bf16_alone_split(p->tiles_m * p->tiles_n, avail) : 0;
}
} // namespace gemm_detail

/// Bytes of the workspace with which gemm_bf16 (below) splits the tail of an
/// M x N x K GEMM on the current device (max_ctas as there); 0 when it would
/// compute every tile whole (see gemm_bf16_alone_split). Host-only.
inline size_t gemm_bf16_alone_bytes(int M, int N, int K, int max_ctas = 0)
{
	gemm_bf16_plan p;
	int dev = 0, sms = 0;
	if (!gemm_detail::shape_ok(M, N, K) || max_ctas < 0 || cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
		return 0;
	memset(&p, 0, sizeof(p));
	gemm_detail::plan_shape(&p, M, N, K, sms, max_ctas);
	const int ways = gemm_detail::alone_plan(&p, max_ctas);
	return ways ? gemm_detail::split_bytes(
	                  &p, ways, gemm_detail::split_ctas(&p, ways, sms, max_ctas), nullptr)
	            : 0;
}

/// That workspace, allocated and zeroed on the current device (cudaMalloc and
/// cudaMemset: not while a stream is being captured); *ws null and *bytes 0
/// when the shape needs none. Free it with cudaFree.
inline cudaError_t gemm_bf16_alone_workspace(int M, int N, int K, int max_ctas, void **ws,
                                             size_t *bytes)
{
	cudaError_t e = cudaSuccess;
	*ws = nullptr;
	*bytes = gemm_bf16_alone_bytes(M, N, K, max_ctas);
	if (*bytes && (e = cudaMalloc(ws, *bytes)) == cudaSuccess &&
	    (e = cudaMemset(*ws, 0, *bytes)) != cudaSuccess) {
		cudaFree(*ws);
		*ws = nullptr;
	}
	if (e != cudaSuccess)
		*bytes = 0;
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
inline cudaError_t gemm_bf16(const gemm_bf16_args &a, cudaStream_t s, int max_ctas = 0,
                             void *ws = nullptr, size_t ws_bytes = 0)
{
	gemm_bf16_plan p;
	cudaError_t e = gemm_bf16_plan_init(&p, a, max_ctas);
	if (e != cudaSuccess)
		return e;
	const int ways = gemm_detail::alone_plan(&p, max_ctas);
	if (ways && ws && ws_bytes >= gemm_bf16_split_bytes(&p, ways, max_ctas) &&
	    (e = gemm_bf16_plan_split(&p, ways, ws, ws_bytes, max_ctas)) != cudaSuccess)
		return e;
	return gemm_bf16_run(&p, s);
}

} // namespace cuco
