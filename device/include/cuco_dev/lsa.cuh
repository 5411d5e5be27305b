/*
 * lsa.cuh - device-side LSA (load/store over NVLink) primitives for cuco programs.
 *
 * Header-only CUDA C++ over the NCCL 2.28 device API: window pointers, one LSA
 * barrier per CTA, vectorised copies, a grid-split reduction and system-scope
 * flags. Every function here is `inline`, so any number of translation units
 * may include it. Multicast / NVLS is never used (it is forbidden on our
 * machines): barriers are always built with multimem = false.
 *
 * Ordering in one sentence: write peers' memory, then release (a release or
 * acq_rel barrier, or a release signal from the same CTA after __syncthreads);
 * the reader acquires (an acquire or acq_rel barrier, or signal_wait_ge) before
 * reading. See docs/device-library.md for the full rules.
 */
#ifndef CUCO_DEV_LSA_CUH
#define CUCO_DEV_LSA_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda/atomic>
#include <cuda_bf16.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cuco/program.h>

#define CUCO_DEV __device__ __forceinline__
#define CUCO_LSA_MAX_PEERS 8 /* NVLink domain we support in fixed-size arrays */

namespace cuco
{

/* ---------------------------------------------------------------- pointers */

/* This rank's address of byte `off` of window w (ncclGetLocalPointer). */
CUCO_DEV void *lsa_local(ncclWindow_t w, size_t off)
{
	return ncclGetLocalPointer(w, off);
}

/*
 * Address of byte `off` of LSA peer `peer`'s copy of window w, directly
 * loadable/storable over NVLink (ncclGetLsaPointer). `peer` is an LSA rank
 * (0..dc.lsaSize-1); peer == dc.lsaRank gives the local copy.
 */
CUCO_DEV void *lsa_peer(ncclWindow_t w, size_t off, int peer)
{
	return ncclGetLsaPointer(w, off, peer);
}

/* This rank's LSA rank and the LSA team size (ranks reachable by load/store). */
CUCO_DEV int lsa_rank(const ncclDevComm &dc)
{
	return dc.lsaRank;
}
CUCO_DEV int lsa_size(const ncclDevComm &dc)
{
	return dc.lsaSize;
}

/* ---------------------------------------------------------------- barrier */

/*
 * One LSA barrier session on barrier `index` of dc.lsaBarrier, over the LSA
 * team, for the whole CTA. Every thread of the CTA must construct it, call
 * every sync together, and reach its destructor (which stores the barrier's
 * epoch back and __syncthreads) - no early return. At most one live
 * cta_barrier per index at a time across the grid (usually index =
 * blockIdx.x), and index < the lsa_barrier_count the program asked for. The
 * devcomm must outlive the object (pass ncclDevComm to the kernel by value and
 * construct from the parameter). Not copyable.
 *
 * A barrier orders only what this CTA did against what the same-index CTAs on
 * the peers do; it says nothing about other CTAs of the grid.
 */
struct cta_barrier {
	ncclLsaBarrierSession<ncclCoopCta> session;

	__device__ cta_barrier(const ncclDevComm &dc, uint32_t index)
	    : session(ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, index,
	              /*multimem=*/false)
	{
	}

	/* Rendezvous only: orders no memory. Use at kernel entry (prior stream work
	 * of every peer is complete once all arrived). */
	__device__ void sync_relaxed()
	{
		session.sync(ncclCoopCta(), cuda::memory_order_relaxed);
	}
	/* This CTA's prior writes (local or to peers) happen-before whatever the
	 * peers' same-index CTAs do after an acquiring sync (or after this kernel
	 * ends). Does not acquire: do not read peer-written data after it within
	 * the same kernel. The NCCL-examples exit barrier. */
	__device__ void sync_release()
	{
		session.sync(ncclCoopCta(), cuda::memory_order_release);
	}
	/* Peers' writes released before their matching sync are visible to this
	 * CTA afterwards; releases nothing of ours. */
	__device__ void sync_acquire()
	{
		session.sync(ncclCoopCta(), cuda::memory_order_acquire);
	}
	/* Both: the mid-kernel exchange barrier, and the safest exit barrier. */
	__device__ void sync_acq_rel()
	{
		session.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
	}

	/* Split-phase: arrive now (release), do independent work, wait later
	 * (acquire). Each arrive must be followed by exactly one wait. */
	__device__ void arrive_release()
	{
		session.arrive(ncclCoopCta(), cuda::memory_order_release);
	}
	__device__ void arrive_relaxed()
	{
		session.arrive(ncclCoopCta(), cuda::memory_order_relaxed);
	}
	__device__ void wait_acquire()
	{
		session.wait(ncclCoopCta(), cuda::memory_order_acquire);
	}
	__device__ void wait_relaxed()
	{
		session.wait(ncclCoopCta(), cuda::memory_order_relaxed);
	}
};

/* ---------------------------------------------------------------- copies */

namespace detail
{

CUCO_DEV unsigned cta_thread_rank()
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
CUCO_DEV unsigned cta_threads()
{
	return blockDim.x * blockDim.y * blockDim.z;
}
CUCO_DEV unsigned grid_cta_rank()
{
	return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
CUCO_DEV unsigned grid_ctas()
{
	return gridDim.x * gridDim.y * gridDim.z;
}

/* n elements of V, thread `tid` of `nth`; 4 loads in flight before the stores. */
template <typename V> CUCO_DEV void copy_vec(V *d, const V *s, size_t n, size_t tid, size_t nth)
{
	constexpr int U = 4;
	size_t i = tid;
	for (; i + (U - 1) * nth < n; i += U * nth) {
		V r[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			r[u] = s[i + u * nth];
#pragma unroll
		for (int u = 0; u < U; u++)
			d[i + u * nth] = r[u];
	}
	for (; i < n; i += nth)
		d[i] = s[i];
}

/*
 * Copy `bytes` with the widest access both pointers allow: 16 bytes when dst
 * and src agree mod 16, else 8/4/2/1. Unaligned head and tail go bytewise.
 */
CUCO_DEV void copy_range(void *dst, const void *src, size_t bytes, size_t tid, size_t nth)
{
	char *d = (char *)dst;
	const char *s = (const char *)src;
	unsigned mis = (unsigned)(((uintptr_t)d ^ (uintptr_t)s) & 15);
	size_t vw = mis == 0         ? 16
	            : (mis & 7) == 0 ? 8
	            : (mis & 3) == 0 ? 4
	            : (mis & 1) == 0 ? 2
	                             : 1;
	size_t head = (vw - ((uintptr_t)d & (vw - 1))) & (vw - 1);
	if (head > bytes)
		head = bytes;
	size_t nvec = (bytes - head) / vw;
	size_t tail = head + nvec * vw;

	for (size_t i = tid; i < head; i += nth)
		d[i] = s[i];
	switch (vw) {
	case 16:
		copy_vec((uint4 *)(d + head), (const uint4 *)(s + head), nvec, tid, nth);
		break;
	case 8:
		copy_vec((uint2 *)(d + head), (const uint2 *)(s + head), nvec, tid, nth);
		break;
	case 4:
		copy_vec((uint32_t *)(d + head), (const uint32_t *)(s + head), nvec, tid, nth);
		break;
	case 2:
		copy_vec((uint16_t *)(d + head), (const uint16_t *)(s + head), nvec, tid, nth);
		break;
	default:
		copy_vec((uint8_t *)(d + head), (const uint8_t *)(s + head), nvec, tid, nth);
		break;
	}
	for (size_t i = tail + tid; i < bytes; i += nth)
		d[i] = s[i];
}

} /* namespace detail */

/*
 * Copy `bytes` from src to dst (any alignment, no overlap; either may be a
 * local or an LSA peer pointer). Plain weak loads and stores: publish with a
 * release barrier or signal afterwards. The _warp/_cta/_grid forms split the
 * work over the named group and every thread of it must call with the same
 * arguments; copy_warp needs a full, converged warp.
 */
CUCO_DEV void copy_thread(void *dst, const void *src, size_t bytes)
{
	detail::copy_range(dst, src, bytes, 0, 1);
}
CUCO_DEV void copy_warp(void *dst, const void *src, size_t bytes)
{
	detail::copy_range(dst, src, bytes, detail::cta_thread_rank() % 32, 32);
}
CUCO_DEV void copy_cta(void *dst, const void *src, size_t bytes)
{
	detail::copy_range(dst, src, bytes, detail::cta_thread_rank(), detail::cta_threads());
}
/* This CTA's share of a grid-wide copy: every CTA of the grid calls it with the
 * same arguments; together they copy everything. */
CUCO_DEV void copy_grid(void *dst, const void *src, size_t bytes)
{
	size_t nth = (size_t)detail::cta_threads() * detail::grid_ctas();
	size_t tid =
	    (size_t)detail::grid_cta_rank() * detail::cta_threads() + detail::cta_thread_rank();
	detail::copy_range(dst, src, bytes, tid, nth);
}

/* ---------------------------------------------------------------- reduction */

namespace detail
{

template <typename T> struct red_type;
template <> struct red_type<float> {
	static CUCO_DEV float load(float x)
	{
		return x;
	}
	static CUCO_DEV float store(float x)
	{
		return x;
	}
	/* 16 bytes = 4 floats */
	static CUCO_DEV void unpack(uint4 v, float *f)
	{
		f[0] = __uint_as_float(v.x);
		f[1] = __uint_as_float(v.y);
		f[2] = __uint_as_float(v.z);
		f[3] = __uint_as_float(v.w);
	}
	static CUCO_DEV uint4 pack(const float *f)
	{
		return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]),
		                  __float_as_uint(f[2]), __float_as_uint(f[3]));
	}
};
template <> struct red_type<__nv_bfloat16> {
	static CUCO_DEV float load(__nv_bfloat16 x)
	{
		return __bfloat162float(x);
	}
	static CUCO_DEV __nv_bfloat16 store(float x)
	{
		return __float2bfloat16_rn(x);
	}
	/* 16 bytes = 8 bf16 */
	static CUCO_DEV void unpack(uint4 v, float *f)
	{
		uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
		for (int i = 0; i < 4; i++) {
			f[2 * i] = __uint_as_float(w[i] << 16);
			f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
		}
	}
	static CUCO_DEV uint4 pack(const float *f)
	{
		uint32_t w[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			uint32_t lo = __bfloat16_as_ushort(__float2bfloat16_rn(f[2 * i]));
			uint32_t hi = __bfloat16_as_ushort(__float2bfloat16_rn(f[2 * i + 1]));
			w[i] = lo | (hi << 16);
		}
		return make_uint4(w[0], w[1], w[2], w[3]);
	}
};

} /* namespace detail */

/*
 * dst[i] = srcs[0][i] + srcs[1][i] + ... + srcs[nsrc-1][i] for i < count,
 * accumulated in fp32 in that order and rounded once (bf16: round to nearest
 * even). T is float or __nv_bfloat16. Pointers may be local or LSA peer
 * pointers; srcs itself is read by every thread (a local array in the kernel is
 * fine). Split over the whole grid like copy_grid: every thread of every CTA
 * calls with the same arguments. 16-byte vector path when all pointers share
 * the same offset mod 16; scalar otherwise. nsrc <= 0 writes zeros. dst may
 * equal srcs[j] only when every thread reads and writes the same elements,
 * which holds here (each element is read then written by one thread).
 */
template <typename T>
__device__ inline void reduce_sum_grid(T *dst, const T *const *srcs, int nsrc, size_t count)
{
	using R = detail::red_type<T>;
	constexpr size_t VE = 16 / sizeof(T); /* elements per 16-byte vector */
	size_t nth = (size_t)detail::cta_threads() * detail::grid_ctas();
	size_t tid =
	    (size_t)detail::grid_cta_rank() * detail::cta_threads() + detail::cta_thread_rank();

	unsigned m = (unsigned)((uintptr_t)dst & 15);
	bool same = (m % sizeof(T)) == 0;
	for (int j = 0; j < nsrc; j++)
		same = same && (unsigned)((uintptr_t)srcs[j] & 15) == m;
	size_t head = same ? ((16 - m) & 15) / sizeof(T) : count;
	if (head > count)
		head = count;
	size_t nvec = (count - head) / VE;
	size_t tail = head + nvec * VE;

	/* scalar: head and tail (the whole range when misaligned) */
	size_t nscalar = head + (count - tail);
	for (size_t k = tid; k < nscalar; k += nth) {
		size_t i = k < head ? k : tail + (k - head);
		float acc = nsrc > 0 ? R::load(srcs[0][i]) : 0.0f;
		for (int j = 1; j < nsrc; j++)
			acc += R::load(srcs[j][i]);
		dst[i] = R::store(acc);
	}
	/* vector body */
	for (size_t v = tid; v < nvec; v += nth) {
		size_t e = head + v * VE;
		float acc[VE], f[VE];
		if (nsrc > 0) {
			R::unpack(*(const uint4 *)(srcs[0] + e), acc);
		} else {
#pragma unroll
			for (size_t k = 0; k < VE; k++)
				acc[k] = 0.0f;
		}
		for (int j = 1; j < nsrc; j++) {
			R::unpack(*(const uint4 *)(srcs[j] + e), f);
#pragma unroll
			for (size_t k = 0; k < VE; k++)
				acc[k] += f[k];
		}
		*(uint4 *)(dst + e) = R::pack(acc);
	}
}

/* ---------------------------------------------------------------- flags */

/*
 * Flags are uint64_t words inside a window (local or LSA peer pointer),
 * 8-byte aligned, monotonic: compare with >=, never wrap. All operations are
 * system scope so they order NVLink traffic. The release of one thread covers
 * that thread's prior accesses and, by cumulativity, those of threads that
 * synchronised with it before (e.g. the CTA after __syncthreads); the *_cta
 * forms below do that __syncthreads for you.
 */

/* *flag = v with release semantics (st.release.sys). */
CUCO_DEV void signal_store_release(uint64_t *flag, uint64_t v)
{
	cuda::atomic_ref<uint64_t, cuda::thread_scope_system> a(*flag);
	a.store(v, cuda::memory_order_release);
}

/* *flag += v with release semantics, no return value (red.release.sys.add.u64).
 * Several releasers may add to one flag; an acquirer that reads the sum
 * synchronises with all of them. */
CUCO_DEV void signal_add_release(uint64_t *flag, uint64_t v)
{
	asm volatile(
	    "red.release.sys.global.add.u64 [%0], %1;" ::"l"(__cvta_generic_to_global(flag)), "l"(v)
	    : "memory");
}

/* *flag with acquire semantics (ld.acquire.sys). */
CUCO_DEV uint64_t signal_load_acquire(const uint64_t *flag)
{
	uint64_t v;
	asm volatile("ld.acquire.sys.global.u64 %0, [%1];"
	             : "=l"(v)
	             : "l"(__cvta_generic_to_global(flag))
	             : "memory");
	return v;
}

/* Spin until *flag >= v (acquire). Short busy spin, then __nanosleep backoff
 * up to 1 us. Never times out: pair every wait with a signal that will come. */
CUCO_DEV void signal_wait_ge(const uint64_t *flag, uint64_t v)
{
	unsigned ns = 0;
	for (int spins = 0;; spins++) {
		if (signal_load_acquire(flag) >= v)
			return;
		if (spins >= 64) {
			__nanosleep(ns);
			ns = ns == 0 ? 32 : (ns < 1024 ? ns * 2 : 1024);
		}
	}
}

/* As signal_wait_ge, but gives up after about timeout_ns of %globaltimer;
 * returns true when *flag >= v was seen. For watchdogs and diagnostics. */
CUCO_DEV bool signal_wait_ge_timeout(const uint64_t *flag, uint64_t v, uint64_t timeout_ns)
{
	uint64_t t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	unsigned ns = 0;
	for (int spins = 0;; spins++) {
		if (signal_load_acquire(flag) >= v)
			return true;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 > timeout_ns)
			return false;
		if (spins >= 64) {
			__nanosleep(ns);
			ns = ns == 0 ? 32 : (ns < 1024 ? ns * 2 : 1024);
		}
	}
}

/* Whole-CTA forms: every thread of the CTA calls them. The release forms
 * __syncthreads first so the CTA's prior writes are covered, then one thread
 * signals; the wait form has one thread wait, then __syncthreads so the whole
 * CTA is ordered after the acquire. */
CUCO_DEV void signal_store_release_cta(uint64_t *flag, uint64_t v)
{
	__syncthreads();
	if (detail::cta_thread_rank() == 0)
		signal_store_release(flag, v);
}
CUCO_DEV void signal_add_release_cta(uint64_t *flag, uint64_t v)
{
	__syncthreads();
	if (detail::cta_thread_rank() == 0)
		signal_add_release(flag, v);
}
CUCO_DEV void signal_wait_ge_cta(const uint64_t *flag, uint64_t v)
{
	if (detail::cta_thread_rank() == 0)
		signal_wait_ge(flag, v);
	__syncthreads();
}

} /* namespace cuco */

#endif
