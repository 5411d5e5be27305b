/*
 * overlap.cuh - building blocks that overlap a GEMM with the communication of
 * its output: LSA barrier kernels for run entry/exit, host-side peer
 * addresses of a window (for copy-engine pushes), an LSA push kernel for a
 * contiguous range, GEMM epilogues that push a finished tile to peers or
 * publish it through a per-tile / per-chunk counter, the comm kernel of the
 * specialized placement, and a per-tensor-set plan cache.
 *
 * Header-only CUDA C++ (namespace cuco, everything inline / static inline),
 * for programs compiled for sm_90a next to gemm.cuh, lsa.cuh and launch.cuh.
 * docs/overlap.md explains each placement, its ordering argument and the
 * measured numbers. Multicast is never used.
 */
#ifndef CUCO_DEV_OVERLAP_CUH
#define CUCO_DEV_OVERLAP_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda.h> /* CUresult, CUstream (types only; no libcuda link) */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/launch.cuh>
#include <cuco_dev/lsa.cuh>

#define CUCO_OVERLAP_MAX_SETS 16           /* tensor sets (windows) a program caches plans for */
#define CUCO_OVERLAP_MAX_CHUNKS 64         /* the design space's max of knob `chunks` */
#define CUCO_OVERLAP_BARRIER_ENTRY 0       /* LSA barrier index of the run-entry rendezvous */
#define CUCO_OVERLAP_BARRIER_EXIT 1        /* LSA barrier index of the run-exit barrier */
#define CUCO_OVERLAP_BARRIERS 2            /* lsa_barrier_count a program must ask for */
#define CUCO_OVERLAP_WAIT_NS 2000000000ull /* comm kernels give up on a counter after 2 s */

namespace cuco
{

/* ================================================================ device */

/*
 * One-CTA LSA barrier over the LSA team on barrier `index`. acq_rel = 0: a
 * rendezvous (relaxed) - when it returns, every peer has reached the same
 * point of its stream, so everything earlier on the peers' streams (e.g. the
 * harness poisoning their outputs) is complete; use before pushing into
 * peers. acq_rel = 1: release+acquire at system scope - every write this
 * rank's earlier stream work made (to peers included; stream order makes it
 * happen-before this CTA, release is cumulative) is visible to the peers
 * after their matching barrier, and theirs to us; use at run exit.
 */
static __global__ void __launch_bounds__(32)
    overlap_barrier_kernel(ncclDevComm dc, int index, int acq_rel)
{
	cta_barrier bar(dc, (uint32_t)index);
	if (acq_rel)
		bar.sync_acq_rel();
	else
		bar.sync_relaxed();
}

/* peers[p] = LSA address of byte 0 of window w on LSA rank p, p < n. */
static __global__ void overlap_probe_kernel(ncclWindow_t w, int n, void **peers)
{
	int p = threadIdx.x;
	if (p < n)
		peers[p] = lsa_peer(w, 0, p);
}

namespace detail
{

/*
 * Copy a rows x row_bytes block (row_bytes % 16 == 0, all pointers and
 * strides 16-byte aligned) from src (stride sld bytes) to each of ndst
 * destinations (stride dld bytes), thread tid of nth; 4 vectors loaded before
 * they are stored to every destination, so one read feeds all peers.
 */
CUCO_DEV void copy_2d_multi(char *const *dst, int ndst, long long dld, const char *src,
                            long long sld, int rows, int row_bytes, int tid, int nth)
{
	constexpr int U = 4;
	const int vpr = row_bytes >> 4;
	const int n = rows * vpr;
	for (int i0 = tid; i0 < n; i0 += U * nth) {
		uint4 r[U];
#pragma unroll
		for (int u = 0; u < U; u++) {
			int i = i0 + u * nth;
			if (i < n)
				r[u] = *(const uint4 *)(src + (long long)(i / vpr) * sld +
				                        (i % vpr) * 16);
		}
		for (int d = 0; d < ndst; d++) {
#pragma unroll
			for (int u = 0; u < U; u++) {
				int i = i0 + u * nth;
				if (i < n)
					*(uint4 *)(dst[d] + (long long)(i / vpr) * dld +
					           (i % vpr) * 16) = r[u];
			}
		}
	}
}

} /* namespace detail */

/* The directive's issuer, as the comm kernels' template argument (the same
 * numbers as the templates' CUCO_ISSUER_* defines). */
enum overlap_issuer { overlap_issuer_thread = 1, overlap_issuer_warp = 2, overlap_issuer_cta = 3 };

/* Issuer unit of units' slice of [0, bytes): from *b0, *n bytes (0 past the end). */
static __host__ __device__ inline void overlap_issued_slice(size_t bytes, size_t units, size_t unit,
                                                            size_t *b0, size_t *n)
{
	const size_t per = ((bytes + units - 1) / units + 15) & ~(size_t)15;
	*b0 = unit * per < bytes ? unit * per : bytes;
	*n = bytes - *b0 < per ? bytes - *b0 : per;
}

/*
 * This kernel's part of copying [0, bytes) from src to dst when its issuers
 * (every thread, every warp or every CTA of the grid) each take one contiguous
 * slice, in order, and copy it on their own (copy_thread), as a warp
 * (copy_warp) or as a CTA (copy_cta). Slices are whole 16-byte pieces, the last
 * one shorter; issuers past the end copy nothing. Every thread of the grid
 * calls it with the same arguments. The directive's issuer dimension picks I.
 */
template <int I>
static __device__ void overlap_copy_issued(void *dst, const void *src, size_t bytes)
{
	const size_t warps = blockDim.x / 32;
	const size_t units = I == overlap_issuer_thread ? (size_t)gridDim.x * blockDim.x
	                     : I == overlap_issuer_warp ? (size_t)gridDim.x * warps
	                                                : (size_t)gridDim.x;
	const size_t unit =
	    I == overlap_issuer_thread ? (size_t)blockIdx.x * blockDim.x + threadIdx.x
	    : I == overlap_issuer_warp ? (size_t)blockIdx.x * warps + threadIdx.x / 32
	                               : (size_t)blockIdx.x;
	size_t b0, n;
	overlap_issued_slice(bytes, units, unit, &b0, &n);
	if (n == 0 || (I == overlap_issuer_warp && threadIdx.x / 32 >= warps))
		return;
	char *d = (char *)dst + b0;
	const char *s = (const char *)src + b0;
	if (I == overlap_issuer_thread)
		copy_thread(d, s, n);
	else if (I == overlap_issuer_warp)
		copy_warp(d, s, n);
	else
		copy_cta(d, s, n);
}

/*
 * Push bytes [off, off + bytes) of window w from this rank's copy to the same
 * offset of every other LSA peer's copy, split over the grid's issuers I
 * (overlap_copy_issued). Plain weak stores: order them with a later release
 * (the exit barrier kernel).
 */
template <int I = overlap_issuer_cta>
static __global__ void __launch_bounds__(1024)
    overlap_push_kernel(ncclDevComm dc, ncclWindow_t w, size_t off, size_t bytes)
{
	const void *src = lsa_local(w, off);
	for (int i = 1; i < dc.lsaSize; i++) {
		int peer = (dc.lsaRank + i) % dc.lsaSize;
		overlap_copy_issued<I>(lsa_peer(w, off, peer), src, bytes);
	}
}

/*
 * The whole all-gather step of the sequential placement in one kernel (the
 * fast-path seed's shape): CTA b rendezvouses on LSA barrier barrier_base + b
 * (relaxed: the peers' earlier stream work is done), pushes its share of
 * [off, off + bytes) to every other peer, and leaves through an acq_rel
 * barrier, which publishes its stores to the same-index CTAs of the peers and
 * acquires theirs. Needs lsa_barrier_count >= barrier_base + grid.
 */
template <int I = overlap_issuer_cta>
static __global__ void __launch_bounds__(1024)
    overlap_allgather_kernel(ncclDevComm dc, ncclWindow_t w, size_t off, size_t bytes,
                             int barrier_base)
{
	cta_barrier bar(dc, (uint32_t)(barrier_base + blockIdx.x));
	bar.sync_relaxed();
	const void *src = lsa_local(w, off);
	for (int i = 1; i < dc.lsaSize; i++) {
		int peer = (dc.lsaRank + i) % dc.lsaSize;
		overlap_copy_issued<I>(lsa_peer(w, off, peer), src, bytes);
	}
	bar.sync_acq_rel();
}

/*
 * GEMM epilogue of the fused_producer placement: the 256 consumer threads copy
 * the finished tile (already in local C and fenced at GPU scope, see the hook
 * contract in gemm.cuh) into the same place of every other LSA peer's C with
 * 16-byte stores. c_local is the plan's C; win/c_off locate the same element
 * in the window; ldc in elements; m and n the plan's M and N (the last tile
 * row may hold fewer than 128 rows, the last tile column may overlap the one
 * before, gemm_bf16_tile_col0). Requires 16-byte aligned C and ldc % 8 == 0.
 */
struct overlap_push_epilogue {
	const char *c_local;
	ncclWindow_t win;
	size_t c_off;
	long long ldc;
	int m, n;
	int lsa_rank, lsa_size;

	__device__ void operator()(int tm, int tn, int rows, int cols) const
	{
		char *dst[CUCO_LSA_MAX_PEERS];
		int nd = 0;
		size_t toff = ((size_t)tm * rows * ldc + (size_t)gemm_bf16_tile_col0(tn, cols, n)) *
		              sizeof(__nv_bfloat16);
		int have = m - tm * rows < rows ? m - tm * rows : rows;
		for (int i = 1; i < lsa_size; i++)
			dst[nd++] = (char *)lsa_peer(win, c_off + toff, (lsa_rank + i) % lsa_size);
		detail::copy_2d_multi(dst, nd, ldc * 2, c_local + toff, ldc * 2, have,
		                      cols * (int)sizeof(__nv_bfloat16), (int)threadIdx.x - 128,
		                      256);
	}
};

/*
 * The run's entry rendezvous and exit barrier inside the fused_producer GEMM
 * (gemm_push_epilogue<overlap_kernel_sync>, knob fused_sync), instead of two
 * barrier kernels around it. flags[0] ("entered") and flags[1] ("done") are
 * this rank's private counters, never reset: run e (1-based) waits for
 * entered >= e and counts done up to e * grid.
 *   enter(): CTA 0 meets the peers on LSA barrier ENTRY (relaxed: every
 *     peer's earlier stream work on its C is complete), then releases
 *     entered = e. No other CTA waits for it until its first copy, which
 *     comes a whole tile later.
 *   wait_entered(): a copying lane waits (acquire) for entered >= e.
 *   leave(): the CTA's copies are complete; a system-scope fence and an add
 *     to done publish them. The CTA that brings done to e * grid has acquired
 *     every other CTA's copies, and meets the peers on LSA barrier EXIT with
 *     acq_rel: its release covers all of this rank's copies (cumulativity),
 *     its acquire all of the peers'. It is the last CTA of the kernel, so
 *     the kernel ends only after the peers' copies into our C are visible.
 * Deadlock freedom: the only waits are CTA 0's on the peers' kernels
 * (started independently), the lanes' on CTA 0 (resident: grid <= SMs, one
 * CTA per SM, CTA 0 first) and the last CTA's on the peers. A lane that
 * waits longer than CUCO_OVERLAP_WAIT_NS for CTA 0 traps (the run fails
 * instead of hanging the GPU; no printf, see wait_entered); the two LSA
 * barrier waits have no timeout, as in overlap_barrier_kernel.
 */
struct overlap_kernel_sync {
	ncclDevComm dc;
	uint64_t *flags;
	uint64_t epoch;

	__device__ void enter() const
	{
		if (blockIdx.x != 0)
			return;
		ncclLsaBarrierSession<ncclCoopThread> bar(ncclCoopThread(), dc, ncclTeamLsa(dc),
		                                          dc.lsaBarrier, CUCO_OVERLAP_BARRIER_ENTRY,
		                                          false);
		bar.sync(ncclCoopThread(), cuda::memory_order_relaxed);
		signal_store_release(&flags[0], epoch);
	}
	__device__ void wait_entered() const
	{
		/* No printf here: a call anywhere in the GEMM kernel makes ptxas
		 * serialise its wgmma pipeline (C7510, 14 % slower measured). */
		if (!signal_wait_ge_timeout(&flags[0], epoch, CUCO_OVERLAP_WAIT_NS))
			__trap();
	}
	__device__ void leave() const
	{
		__threadfence_system();
		unsigned long long prev = atomicAdd((unsigned long long *)&flags[1], 1ull);
		if (prev + 1 != epoch * gridDim.x)
			return;
		__threadfence_system(); /* acquire side of the other CTAs' adds */
		ncclLsaBarrierSession<ncclCoopThread> bar(ncclCoopThread(), dc, ncclTeamLsa(dc),
		                                          dc.lsaBarrier, CUCO_OVERLAP_BARRIER_EXIT,
		                                          false);
		bar.sync(ncclCoopThread(), cuda::memory_order_acq_rel);
	}
};

/*
 * GEMM epilogue of the specialized placement: publish the finished tile by
 * adding 1 (release, system scope) to its counter. unit_rows_tiles = 0: one
 * counter per tile (index tm * tiles_n + tn); > 0: one counter per band of
 * that many tile rows (index tm / unit_rows_tiles). Counters are never reset:
 * after run e (1-based) a counter holds e * tiles_per_counter.
 */
struct overlap_signal_epilogue {
	uint64_t *flags;
	int tiles_n;
	int unit_rows_tiles;

	__device__ void operator()(int tm, int tn, int, int) const
	{
		/* All 256 consumers stored + fenced the tile and met at named barrier 1
		 * before the call, so one thread's release covers the whole tile. */
		if (threadIdx.x == 128) {
			int idx = unit_rows_tiles > 0 ? tm / unit_rows_tiles : tm * tiles_n + tn;
			signal_add_release(&flags[idx], 1);
		}
	}
};

/* What the specialized comm kernel must know of the GEMM's tile order. */
struct overlap_tile_order {
	int tiles_m, tiles_n, tiles, group_m, start_tile;
	int tile_rows, tile_cols;
	int m;               /* rows of C: the last tile row may hold fewer than tile_rows */
	int n;               /* columns of C: the last tile column starts at n - tile_cols when
	                      * tile_cols does not divide n (gemm_bf16_tile_col0) */
	int unit_rows_tiles; /* as overlap_signal_epilogue; 0 = per tile */
	int units;           /* counters: tiles (per tile) or bands (per chunk) */
};

namespace detail
{

/* Whole CTA: wait (acquire) until *flag >= v, like signal_wait_ge_cta, but give
 * up after CUCO_OVERLAP_WAIT_NS with a message: a lost signal then shows as a
 * wrong result and a line on stderr instead of a hung GPU. Returns false on
 * timeout (uniformly for the CTA). */
CUCO_DEV bool wait_or_give_up(const uint64_t *flag, uint64_t v, int what)
{
	__shared__ int ok;
	if (threadIdx.x == 0) {
		ok = signal_wait_ge_timeout(flag, v, CUCO_OVERLAP_WAIT_NS);
		if (!ok)
			printf("cuco overlap: CTA %d gave up waiting for unit %d: counter %llu, "
			       "want %llu\n",
			       (int)blockIdx.x, what, (unsigned long long)signal_load_acquire(flag),
			       (unsigned long long)v);
	}
	__syncthreads();
	bool r = ok != 0;
	__syncthreads(); /* everyone read ok before thread 0 may overwrite it */
	return r;
}

} /* namespace detail */

/*
 * Comm kernel of the specialized placement, run beside the GEMM on another
 * stream: waits for counters the GEMM's overlap_signal_epilogue releases and
 * copies each finished tile (per tile: CTA b takes tiles b, b+grid, ... in the
 * GEMM's own order) or each finished band of rows (per chunk: every CTA copies
 * its share of band u once the band's counter reaches epoch * tiles in it) to
 * every other LSA peer's C. c_local / win / c_off / ldc as for
 * overlap_push_epilogue (whole rows: the band is contiguous when ldc == N).
 * Deadlock-free because the GEMM never waits for it; keep its grid below the
 * SMs the GEMM leaves free so the two run side by side.
 */
static __global__ void __launch_bounds__(1024)
    overlap_tile_comm_kernel(ncclDevComm dc, const char *c_local, ncclWindow_t win, size_t c_off,
                             long long ldc, overlap_tile_order o, const uint64_t *flags,
                             uint64_t epoch)
{
	char *dst[CUCO_LSA_MAX_PEERS];
	int nd = 0;
	const size_t esz = sizeof(__nv_bfloat16);
	if (o.unit_rows_tiles <= 0) {
		gemm_detail::kparams kp;
		kp.tiles_m = o.tiles_m;
		kp.tiles_n = o.tiles_n;
		kp.tiles = o.tiles;
		kp.group_m = o.group_m;
		kp.start_tile = o.start_tile;
		for (int t = blockIdx.x; t < o.tiles; t += gridDim.x) {
			int tm, tn;
			gemm_detail::tile_coords(t, kp, tm, tn);
			if (!detail::wait_or_give_up(&flags[tm * o.tiles_n + tn], epoch, t))
				break;
			size_t toff = ((size_t)tm * o.tile_rows * ldc +
			               (size_t)gemm_bf16_tile_col0(tn, o.tile_cols, o.n)) *
			              esz;
			int rows = o.m - tm * o.tile_rows < o.tile_rows ? o.m - tm * o.tile_rows
			                                                : o.tile_rows;
			nd = 0;
			for (int i = 1; i < dc.lsaSize; i++)
				dst[nd++] = (char *)lsa_peer(win, c_off + toff,
				                             (dc.lsaRank + i) % dc.lsaSize);
			detail::copy_2d_multi(dst, nd, ldc * esz, c_local + toff, ldc * esz, rows,
			                      o.tile_cols * (int)esz, (int)threadIdx.x,
			                      (int)blockDim.x);
		}
	} else {
		for (int u = 0; u < o.units; u++) {
			int tm0 = u * o.unit_rows_tiles;
			int ntm = o.tiles_m - tm0 < o.unit_rows_tiles ? o.tiles_m - tm0
			                                              : o.unit_rows_tiles;
			if (!detail::wait_or_give_up(&flags[u], epoch * (uint64_t)(ntm * o.tiles_n),
			                             u))
				break;
			int r0 = tm0 * o.tile_rows, r1 = (tm0 + ntm) * o.tile_rows;
			size_t boff = (size_t)r0 * ldc * esz;
			size_t bytes = (size_t)((r1 < o.m ? r1 : o.m) - r0) * ldc * esz;
			for (int i = 1; i < dc.lsaSize; i++)
				copy_grid(
				    lsa_peer(win, c_off + boff, (dc.lsaRank + i) % dc.lsaSize),
				    c_local + boff, bytes);
		}
	}
}

/* ================================================================ host */

/* Launch overlap_barrier_kernel on s (see there); 0 or 1 with ctx->errbuf. */
static inline int overlap_barrier(const cuco_ctx *ctx, int index, int acq_rel, cudaStream_t s)
{
	overlap_barrier_kernel<<<1, 32, 0, s>>>(*ctx->devcomm, index, acq_rel);
	CUCO_LAUNCH_TRY(ctx);
	return 0;
}

/*
 * Load every kernel a placement may launch now, while nothing spins on the
 * GPU. With CUDA's lazy module loading (the default), the first launch of a
 * kernel loads it and that can wait for the device to drain; if a comm kernel
 * is already spinning on counters only that kernel will set, it deadlocks
 * (seen on H200: the specialized placement hung until the GEMM was preloaded).
 * Epi is the GEMM epilogue the program uses, I its comm kernels' issuer.
 * 0 or 1 with ctx->errbuf.
 */
template <class Epi, int I = overlap_issuer_cta>
static inline int overlap_preload(const cuco_ctx *ctx)
{
	cudaFuncAttributes fa;
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<256, Epi>), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<128, Epi>), ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<256, gemm_no_epilogue>), ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<128, gemm_no_epilogue>), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<64, Epi>), ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<64, gemm_no_epilogue>), ctx);
#if CUCO_GEMM_SPLIT
	CUCO_CUDA_TRY(cudaFuncGetAttributes(
	                  &fa, gemm_detail::gemm_bf16_kernel<256, Epi, gemm_no_group, true>),
	              ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(
	                  &fa, gemm_detail::gemm_bf16_kernel<128, Epi, gemm_no_group, true>),
	              ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(&fa, gemm_detail::gemm_bf16_kernel<64, Epi, gemm_no_group, true>),
	    ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(
	        &fa, gemm_detail::gemm_bf16_kernel<256, gemm_no_epilogue, gemm_no_group, true>),
	    ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(
	        &fa, gemm_detail::gemm_bf16_kernel<128, gemm_no_epilogue, gemm_no_group, true>),
	    ctx);
	CUCO_CUDA_TRY(
	    cudaFuncGetAttributes(
	        &fa, gemm_detail::gemm_bf16_kernel<64, gemm_no_epilogue, gemm_no_group, true>),
	    ctx);
#endif
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, overlap_barrier_kernel), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, overlap_probe_kernel), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, overlap_push_kernel<I>), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, overlap_allgather_kernel<I>), ctx);
	CUCO_CUDA_TRY(cudaFuncGetAttributes(&fa, overlap_tile_comm_kernel), ctx);
	return 0;
}

/*
 * Make stream s wait (on the GPU, no host involvement) until the 32-bit word
 * at counter reaches v: cuStreamWaitValue32 with CU_STREAM_WAIT_VALUE_GEQ, whose
 * test is (int32_t)(*addr - v) >= 0, so a counter that never resets may wrap.
 * The counter is either a uint64_t bumped by overlap_signal_epilogue
 * (red.release.sys after the tile's stores and a gpu-scope fence; the
 * overload below), so work queued on s after the wait - a copy-engine memcpy
 * or a kernel - sees the tiles counted, or a 32-bit flag that a peer's stream
 * write sets (gemm_allgather's pull). Fetched through the runtime (no libcuda
 * link), like the GEMM's tensor-map encoder. The stream-overlap placement's
 * device_signal knob uses it: one GEMM launch instead of one per chunk, each
 * chunk's copies triggered by the GEMM itself.
 */
typedef CUresult (*overlap_wait_value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

static inline int overlap_stream_wait_ge(const cuco_ctx *ctx, cudaStream_t s, const void *counter,
                                         uint32_t v)
{
	static overlap_wait_value32_fn fn;
	if (!fn) {
		void *f = NULL;
		cudaDriverEntryPointQueryResult q;
		if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &f, 12000,
		                                     cudaEnableDefault, &q) != cudaSuccess ||
		    q != cudaDriverEntryPointSuccess || !f) {
			CUCO_ERRF(ctx, "cuStreamWaitValue32: not available from this driver");
			return 1;
		}
		fn = (overlap_wait_value32_fn)f;
	}
	CUresult r = fn((CUstream)s, (CUdeviceptr)(uintptr_t)counter, (cuuint32_t)v,
	                CU_STREAM_WAIT_VALUE_GEQ);
	if (r != CUDA_SUCCESS) {
		CUCO_ERRF(ctx, "cuStreamWaitValue32: CUresult %d", (int)r);
		return 1;
	}
	return 0;
}

/* The same for a 64-bit counter (its low 32 bits, little-endian). */
static inline int overlap_stream_wait_ge(const cuco_ctx *ctx, cudaStream_t s,
                                         const uint64_t *counter, uint64_t v)
{
	return overlap_stream_wait_ge(ctx, s, (const void *)counter, (uint32_t)v);
}

/*
 * The GEMM's tile order walks groups of group_m tile rows column by column
 * (gemm.cuh, tile_coords_in), so a group that spans two bands of band_rows
 * tile rows finishes both together: with the default 16-row groups and 8-row
 * bands, 8 bands complete in pairs and the last copy doubles. The largest
 * divisor of band_rows that is at most group_m keeps every band's tiles before
 * the next band's in the order (tests/devlib_chunks.sh checks it).
 */
static constexpr int overlap_band_group_m(int group_m, int band_rows)
{
	int g = group_m < band_rows ? group_m : band_rows;
	while (g > 1 && band_rows % g)
		g--;
	return g < 1 ? 1 : g;
}

/* tile_n 0 narrows 256-column tiles to 128 below this many waves over the grid */
#define CUCO_OVERLAP_AUTO_WAVES 4

/*
 * tile_n 0's width for a plan of bn-column tiles: tiles of them on ctas CTAs
 * (the plan's grid), 128 where 256 would make fewer than
 * CUCO_OVERLAP_AUTO_WAVES waves; then, given avail (the SMs the launch may
 * use; 0: skip this), halved down to 64 while the tiles would leave half of
 * them idle, as for a lone GEMM (gemm_bf16_alone_tile_n). Such tiles are one
 * wave at either width, so they finish, and are sent, together either way,
 * and the narrower tiles finish sooner (a decode step: 256 x 4096 x 8192 took
 * 46.7 us at 128 columns, 33.7 at 64, one H200, docs/gemm.md).
 */
static constexpr int overlap_auto_tile_n(int bn, int tiles, int ctas, int avail = 0)
{
	return bn == 256 && (tiles + ctas - 1) / ctas < CUCO_OVERLAP_AUTO_WAVES
	           ? gemm_bf16_alone_tile_n(128, 2 * tiles, avail)
	           : gemm_bf16_alone_tile_n(bn, tiles, avail);
}

/*
 * tile_n 0's width for a GEMM launch that sends nothing per tile (its output or
 * operands move before or after it, not tile by tile): more waves buy nothing
 * there, so the width is a lone GEMM's (gemm_bf16_alone_tile_n).
 */
static constexpr int overlap_auto_tile_n_plain(int bn, int tiles, int ctas)
{
	return gemm_bf16_alone_tile_n(bn, tiles, ctas);
}

/*
 * Narrow a plan's CTA tile to tile_n columns (the tile_n knob: 128 or 64; 256
 * keeps the plan's own width). Worth it when 128x256 tiles leave SMs idle
 * (2048^3 on 2 ranks: 64 tiles for 132 SMs) or when a fused producer wants
 * its finished tiles in more waves. No-op unless tile_n is narrower.
 * tile_n 0 picks per shape: 128 where 256-column tiles would run in fewer than
 * CUCO_OVERLAP_AUTO_WAVES waves, else the plan's own; and 64 where even 128
 * would leave half the SMs (or max_ctas) idle (overlap_auto_tile_n).
 * (Measured, 2 x H200, fused producer: 128 wins at 2048^3 and 4096^3 - 1 and 2
 * waves at 256 - and 256 from 8192^3 on - 8 waves and more; docs/overlap.md.)
 */
static inline cudaError_t overlap_plan_tile_n(gemm_bf16_plan *p, int tile_n, int max_ctas)
{
	if (tile_n == 0)
		tile_n = overlap_auto_tile_n(p->bn, p->tiles_m * p->tiles_n, p->ctas,
		                             max_ctas > 0 ? max_ctas : p->sms);
	if (tile_n >= p->bn)
		return cudaSuccess;
	return gemm_bf16_plan_narrow(p, tile_n, max_ctas);
}

/*
 * Per-program cache: for each tensor set (keyed by its A, B, C pointers) the
 * GEMM plans of its row chunks, C's window/offset and - when asked - the host
 * addresses of every LSA peer's copy of C (for copy-engine pushes).
 * Caller-owned, zero-initialised by overlap_cache_init, released by
 * overlap_cache_release.
 */
struct overlap_set {
	const void *A, *B;
	void *C;
	ncclWindow_t cwin;
	size_t coff;                      /* window offset of this rank's block of C */
	char *peer_c[CUCO_LSA_MAX_PEERS]; /* host-usable VA of byte coff on each LSA rank */
	gemm_bf16_plan plan[CUCO_OVERLAP_MAX_CHUNKS];
	int chunk_row0[CUCO_OVERLAP_MAX_CHUNKS + 1]; /* first row of chunk i; [chunks] = M */
};

/*
 * First row of each of chunks chunks over tiles_m 128-row tiles, row0[chunks]
 * = tiles_m * 128. Chunk i gets a share of the tiles proportional to
 * (taper / 100)^i, at least one tile: 100 gives equal chunks; below 100 the
 * first chunk is the largest (an efficient GEMM) and the last the smallest
 * (little copy left once the GEMM is done). Needs 1 <= chunks <= tiles_m.
 */
static inline void overlap_chunk_rows(int tiles_m, int chunks, int taper, int *row0)
{
	int size[CUCO_OVERLAP_MAX_CHUNKS], sum = 0;
	double w = 1, total = 0, r = (taper < 1 ? 1 : taper) / 100.0;

	if (taper >= 100) { /* equal chunks, as even as whole tiles allow */
		for (int i = 0; i <= chunks; i++)
			row0[i] = (int)((long long)tiles_m * i / chunks) * 128;
		return;
	}
	for (int i = 0; i < chunks; i++, w *= r)
		total += w;
	/* Whole tiles, never increasing: floors (at least 1), then the tiles left
	 * over one each to the first chunks, or the ones over taken from the end
	 * of the largest chunks' run. */
	w = 1;
	for (int i = 0; i < chunks; i++, w *= r) {
		size[i] = (int)(tiles_m * w / total);
		if (size[i] < 1)
			size[i] = 1;
		sum += size[i];
	}
	for (int i = 0; sum < tiles_m; i = (i + 1) % chunks, sum++)
		size[i]++;
	while (sum > tiles_m) {
		int j = 0;
		while (j + 1 < chunks && size[j + 1] == size[0])
			j++;
		size[j]--;
		sum--;
	}
	row0[0] = 0;
	for (int i = 0; i < chunks; i++)
		row0[i + 1] = row0[i] + size[i] * 128;
}

struct overlap_cache {
	int nsets;
	int chunks;
	overlap_set *sets; /* CUCO_OVERLAP_MAX_SETS entries */
	void **probe_dev;  /* CUCO_LSA_MAX_PEERS device words for overlap_probe_kernel */
	cudaStream_t probe_stream;
	void *split_ws;     /* the split plans' workspace: one for every set and chunk, */
	size_t split_bytes; /* since a program's GEMM launches are ordered on its stream */
};

static inline int overlap_cache_init(const cuco_ctx *ctx, overlap_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->sets = (overlap_set *)calloc(CUCO_OVERLAP_MAX_SETS, sizeof(overlap_set));
	if (!c->sets) {
		CUCO_ERRF(ctx, "overlap_cache_init: out of memory");
		return 1;
	}
	CUCO_CUDA_TRY(cudaMalloc((void **)&c->probe_dev, sizeof(void *) * CUCO_LSA_MAX_PEERS), ctx);
	CUCO_CUDA_TRY(cudaStreamCreateWithFlags(&c->probe_stream, cudaStreamNonBlocking), ctx);
	return 0;
}

static inline void overlap_cache_release(overlap_cache *c)
{
	if (c->probe_dev)
		cudaFree(c->probe_dev);
	if (c->probe_stream)
		cudaStreamDestroy(c->probe_stream);
	if (c->split_ws)
		cudaFree(c->split_ws);
	free(c->sets);
	memset(c, 0, sizeof(*c));
}

/*
 * Host-usable addresses of byte 0 of window w on every LSA rank (the LSA
 * mapping is in this process's address space, so the copy engine can use
 * them). No host API exposes them in NCCL 2.28, so a one-thread kernel reads
 * them on a private stream and the host waits for it: call only where a
 * short host wait is acceptable (init, or the first run with a new window).
 */
static inline int overlap_window_peers(const cuco_ctx *ctx, overlap_cache *c, ncclWindow_t w,
                                       char **out)
{
	int n = ctx->devcomm->lsaSize;
	void *h[CUCO_LSA_MAX_PEERS];
	overlap_probe_kernel<<<1, 32, 0, c->probe_stream>>>(w, n, c->probe_dev);
	CUCO_LAUNCH_TRY(ctx);
	CUCO_CUDA_TRY(cudaMemcpyAsync(h, c->probe_dev, sizeof(void *) * n, cudaMemcpyDeviceToHost,
	                              c->probe_stream),
	              ctx);
	CUCO_CUDA_TRY(cudaStreamSynchronize(c->probe_stream), ctx);
	for (int p = 0; p < n; p++)
		out[p] = (char *)h[p];
	return 0;
}

/*
 * The cached set for (A, B, C) of gemm_allgather: C_r = A[M,K] B_r[K,Nr] into
 * this rank's block (block_C, row stride Nr), split into `chunks` row chunks
 * of whole 128-row tiles (sized by overlap_chunk_rows with taper; chunks is
 * clamped to ceil(M/128); the last chunk ends at row M, so when M % 128 != 0
 * its last tile row is partial),
 * each with its own plan capped at max_ctas CTAs and tile width tile_n (see
 * overlap_plan_tile_n), and its tail split `split` ways along K
 * (gemm_bf16_plan_split; 0: every tile whole) with the cache's one workspace,
 * allocated and zeroed with the first set (every set of a program has the same
 * shape, so the same size). want_peers: also resolve peer_c. Returns NULL with
 * ctx->errbuf set on failure.
 */
static inline overlap_set *overlap_cache_get(const cuco_ctx *ctx, overlap_cache *c,
                                             const cuco_tensor *t, const __nv_bfloat16 *A,
                                             const __nv_bfloat16 *B, __nv_bfloat16 *block_C, int M,
                                             int Nr, int K, int chunks, int max_ctas,
                                             int want_peers, int tile_n = 256, int taper = 100,
                                             int split = 0)
{
	for (int i = 0; i < c->nsets; i++)
		if (c->sets[i].A == A && c->sets[i].B == B && c->sets[i].C == block_C)
			return &c->sets[i];
	if (c->nsets >= CUCO_OVERLAP_MAX_SETS) {
		CUCO_ERRF(ctx, "overlap_cache_get: more than %d tensor sets",
		          CUCO_OVERLAP_MAX_SETS);
		return NULL;
	}
	overlap_set *s = &c->sets[c->nsets];
	memset(s, 0, sizeof(*s));
	int tiles_m = (M + 127) / 128;
	if (chunks < 1)
		chunks = 1;
	if (chunks > tiles_m)
		chunks = tiles_m;
	if (chunks > CUCO_OVERLAP_MAX_CHUNKS)
		chunks = CUCO_OVERLAP_MAX_CHUNKS;
	c->chunks = chunks;
	if (window_find(ctx, t, block_C, (size_t)M * Nr * sizeof(__nv_bfloat16), &s->cwin,
	                &s->coff))
		return NULL;
	overlap_chunk_rows(tiles_m, chunks, taper, s->chunk_row0);
	s->chunk_row0[chunks] = M; /* a partial last tile row ends the last chunk */
	for (int i = 0; i < chunks; i++) {
		int r0 = s->chunk_row0[i], rows = s->chunk_row0[i + 1] - r0;
		gemm_bf16_args g = {
		    A + (size_t)r0 * K, B, block_C + (size_t)r0 * Nr, rows, Nr, K, K, Nr, Nr};
		cudaError_t e = gemm_bf16_plan_init(&s->plan[i], g, max_ctas);
		if (e != cudaSuccess) {
			CUCO_ERRF(ctx, "gemm_bf16_plan_init (chunk %d, %dx%dx%d): %s", i, rows, Nr,
			          K, cudaGetErrorString(e));
			return NULL;
		}
		e = overlap_plan_tile_n(&s->plan[i], tile_n, max_ctas);
		if (e != cudaSuccess) {
			CUCO_ERRF(ctx, "gemm_bf16_plan_narrow (chunk %d, tile_n %d): %s", i, tile_n,
			          cudaGetErrorString(e));
			return NULL;
		}
	}
	size_t need = 0;
	for (int i = 0; i < chunks && split > 1; i++) {
		size_t b = gemm_bf16_split_bytes(&s->plan[i], split, max_ctas);
		if (b > need)
			need = b;
	}
	if (need && !c->split_ws) {
		cudaError_t e = cudaMalloc(&c->split_ws, need);
		if (e == cudaSuccess)
			e = cudaMemset(c->split_ws, 0, need);
		if (e == cudaSuccess)
			e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			CUCO_ERRF(ctx, "overlap_cache_get: split workspace of %zu bytes: %s", need,
			          cudaGetErrorString(e));
			return NULL;
		}
		c->split_bytes = need;
	}
	if (need > c->split_bytes) {
		CUCO_ERRF(
		    ctx, "overlap_cache_get: split %d needs %zu workspace bytes, the cache has %zu",
		    split, need, c->split_bytes);
		return NULL;
	}
	for (int i = 0; i < chunks && need; i++) {
		cudaError_t e =
		    gemm_bf16_plan_split(&s->plan[i], split, c->split_ws, c->split_bytes, max_ctas);
		if (e != cudaSuccess) {
			CUCO_ERRF(ctx, "gemm_bf16_plan_split (chunk %d, %d ways): %s", i, split,
			          cudaGetErrorString(e));
			return NULL;
		}
	}
	if (want_peers) {
		char *base[CUCO_LSA_MAX_PEERS];
		if (overlap_window_peers(ctx, c, s->cwin, base))
			return NULL;
		for (int p = 0; p < ctx->devcomm->lsaSize; p++)
			s->peer_c[p] = base[p] + s->coff;
	}
	s->A = A;
	s->B = B;
	s->C = block_C;
	c->nsets++;
	return s;
}

} /* namespace cuco */

#endif
