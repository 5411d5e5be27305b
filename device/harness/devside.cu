// devside.cu - the harness's device side: device communicator, output
// comparison (relative L2 or exact) and the LSA self-test used by `cuco doctor`.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "harness.h"
}

extern "C" int hx_dev_devcomm_create(ncclComm_t comm, const struct cuco_requirements *req,
                                     struct ncclDevComm **out, char *err, size_t errlen)
{
	ncclDevCommRequirements r;
	ncclDevComm *dc = new ncclDevComm;
	ncclResult_t nr;

	memset(&r, 0, sizeof(r));
	r.lsaBarrierCount = req->lsa_barrier_count;
	r.ginContextCount = req->gin_context_count;
	r.ginSignalCount = req->gin_signal_count;
	r.ginCounterCount = req->gin_counter_count;
	r.ginForceEnable = req->gin_context_count > 0;
	r.lsaMultimem = false; /* never: multicast can take the GPUs out of service */
	nr = ncclDevCommCreate(comm, &r, dc);
	if (nr != ncclSuccess) {
		snprintf(err, errlen, "ncclDevCommCreate: %s (%s)", ncclGetErrorString(nr),
		         ncclGetLastError(comm));
		delete dc;
		return 1;
	}
	if (req->gin_context_count > 0 && dc->ginContextCount == 0) {
		snprintf(err, errlen,
		         "program asks for GIN (gin_context_count=%d) but this node has no GIN "
		         "support (no RDMA NIC); see 'cuco doctor'",
		         req->gin_context_count);
		ncclDevCommDestroy(comm, dc);
		delete dc;
		return 2;
	}
	*out = dc;
	return 0;
}

extern "C" void hx_dev_devcomm_destroy(ncclComm_t comm, struct ncclDevComm *dc)
{
	if (!dc)
		return;
	ncclDevCommDestroy(comm, dc);
	delete dc;
}

extern "C" int hx_dev_devcomm_gin_contexts(const struct ncclDevComm *dc)
{
	return dc->ginContextCount;
}

extern "C" int hx_dev_devcomm_lsa_size(const struct ncclDevComm *dc)
{
	return dc->lsaSize;
}

template <typename T> __device__ static inline double load_d(const T *p, size_t i);
template <> __device__ inline double load_d<__nv_bfloat16>(const __nv_bfloat16 *p, size_t i)
{
	return (double)__bfloat162float(p[i]);
}
template <> __device__ inline double load_d<__half>(const __half *p, size_t i)
{
	return (double)__half2float(p[i]);
}
template <> __device__ inline double load_d<float>(const float *p, size_t i)
{
	return (double)p[i];
}
template <> __device__ inline double load_d<double>(const double *p, size_t i)
{
	return p[i];
}

struct dev_compare {
	double diff2, ref2, max_abs;
	unsigned long long nonfinite, checked, mismatched;
};

__device__ static inline void atomic_max_double(double *addr, double v)
{
	unsigned long long *a = (unsigned long long *)addr, old = *a, assumed;

	while (__longlong_as_double(old) < v) {
		assumed = old;
		old = atomicCAS(a, assumed, __double_as_longlong(v));
		if (old == assumed)
			break;
	}
}

/* All bytes 0xff: the poison the harness writes into outputs before a verified run. */
template <typename T> __device__ static inline bool is_poison(const T *p, size_t i)
{
	const unsigned char *b = (const unsigned char *)(p + i);

	for (size_t k = 0; k < sizeof(T); k++)
		if (b[k] != 0xff)
			return false;
	return true;
}

/* 0 finite, 1 NaN, 2 +Inf, 3 -Inf. */
__device__ static inline int fp_class(double x)
{
	if (isnan(x))
		return 1;
	if (isinf(x))
		return x > 0 ? 2 : 3;
	return 0;
}

/* One block's sums into res: warp shuffles, then shared memory, then atomics. */
__device__ static void reduce_into(dev_compare *res, double d2, double r2, double mx,
                                   unsigned long long bad, unsigned long long seen,
                                   unsigned long long mism)
{
	__shared__ double sd2[32], sr2[32], smx[32];
	__shared__ unsigned long long sbad[32], sseen[32], smism[32];

	for (int off = 16; off > 0; off >>= 1) {
		d2 += __shfl_down_sync(0xffffffffu, d2, off);
		r2 += __shfl_down_sync(0xffffffffu, r2, off);
		mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, off));
		bad += __shfl_down_sync(0xffffffffu, bad, off);
		seen += __shfl_down_sync(0xffffffffu, seen, off);
		mism += __shfl_down_sync(0xffffffffu, mism, off);
	}
	int w = threadIdx.x / 32, l = threadIdx.x % 32;
	if (l == 0) {
		sd2[w] = d2;
		sr2[w] = r2;
		smx[w] = mx;
		sbad[w] = bad;
		sseen[w] = seen;
		smism[w] = mism;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int i = 1; i < (int)(blockDim.x / 32); i++) {
			d2 += sd2[i];
			r2 += sr2[i];
			mx = fmax(mx, smx[i]);
			bad += sbad[i];
			seen += sseen[i];
			mism += smism[i];
		}
		atomicAdd(&res->diff2, d2);
		atomicAdd(&res->ref2, r2);
		atomic_max_double(&res->max_abs, mx);
		atomicAdd(&res->nonfinite, bad);
		atomicAdd(&res->checked, seen);
		atomicAdd(&res->mismatched, mism);
	}
}

/*
 * Relative L2 sums, in double, over the elements both sides hold finite. A
 * reference element that holds the poison pattern says "left untouched": the
 * output element must hold it too, bit for bit (a paged cache's pages that the
 * block table does not name); anything else there counts as non-finite. Then
 * an element of another class than the reference's (finite, NaN, +Inf, -Inf)
 * counts as non-finite; two of the same non-finite class are equal.
 */
template <typename T>
__global__ void compare_close_kernel(const T *out, const T *ref, size_t n, dev_compare *res)
{
	double d2 = 0, r2 = 0, mx = 0;
	unsigned long long bad = 0, seen = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		seen++;
		if (is_poison(ref, i)) {
			bad += !is_poison(out, i);
			continue;
		}
		double o = load_d(out, i), r = load_d(ref, i);
		int co = fp_class(o), cr = fp_class(r);
		if (co != cr) {
			bad++;
			continue;
		}
		if (co)
			continue;
		double d = o - r;
		d2 += d * d;
		r2 += r * r;
		if (fabs(d) > mx)
			mx = fabs(d);
	}
	reduce_into(res, d2, r2, mx, bad, seen, 0);
}

/* Exact: elements whose bytes differ (U is the unsigned type of the element's size). */
template <typename U>
__global__ void compare_exact_kernel(const U *out, const U *ref, size_t n, dev_compare *res)
{
	unsigned long long seen = 0, mism = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		seen++;
		mism += out[i] != ref[i];
	}
	reduce_into(res, 0, 0, 0, 0, seen, mism);
}

/* One thread reads the global nanosecond timer until ns have passed. */
__global__ void spin_kernel(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		__nanosleep(1000);
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
}

extern "C" cudaError_t hx_dev_spin(double us, cudaStream_t s)
{
	spin_kernel<<<1, 1, 0, s>>>((unsigned long long)(us * 1e3));
	return cudaPeekAtLastError();
}

/* The comparison into dres (device memory), enqueued on s: no synchronisation. */
extern "C" int hx_dev_compare_start(const void *out, const void *ref, size_t n, int dtype,
                                    int exact, struct hx_compare *dres, cudaStream_t s)
{
	dev_compare *d = (dev_compare *)dres;
	int blocks = 132 * 4;

	static_assert(sizeof(dev_compare) == sizeof(struct hx_compare), "hx_compare layout");
	if (!cuco_dtype_size(dtype))
		return 2;
	if (cudaMemsetAsync(d, 0, sizeof(*d), s) != cudaSuccess)
		return 1;
	if (exact || hx_dtype_is_integer(dtype)) {
		switch (cuco_dtype_size(dtype)) {
		case 1:
			compare_exact_kernel<<<blocks, 256, 0, s>>>((const uint8_t *)out,
			                                            (const uint8_t *)ref, n, d);
			break;
		case 2:
			compare_exact_kernel<<<blocks, 256, 0, s>>>((const uint16_t *)out,
			                                            (const uint16_t *)ref, n, d);
			break;
		case 4:
			compare_exact_kernel<<<blocks, 256, 0, s>>>((const uint32_t *)out,
			                                            (const uint32_t *)ref, n, d);
			break;
		default:
			compare_exact_kernel<<<blocks, 256, 0, s>>>((const uint64_t *)out,
			                                            (const uint64_t *)ref, n, d);
			break;
		}
		return cudaPeekAtLastError() != cudaSuccess;
	}
	switch (dtype) {
	case CUCO_DTYPE_BF16:
		compare_close_kernel<<<blocks, 256, 0, s>>>((const __nv_bfloat16 *)out,
		                                            (const __nv_bfloat16 *)ref, n, d);
		break;
	case CUCO_DTYPE_F16:
		compare_close_kernel<<<blocks, 256, 0, s>>>((const __half *)out,
		                                            (const __half *)ref, n, d);
		break;
	case CUCO_DTYPE_F32:
		compare_close_kernel<<<blocks, 256, 0, s>>>((const float *)out, (const float *)ref,
		                                            n, d);
		break;
	case CUCO_DTYPE_F64:
		compare_close_kernel<<<blocks, 256, 0, s>>>((const double *)out,
		                                            (const double *)ref, n, d);
		break;
	default:
		return 2;
	}
	return cudaPeekAtLastError() != cudaSuccess;
}

/* Each rank writes rank-tagged words into slot [rank] of every peer's window,
 * then after a release/acquire barrier checks slot [peer] for every peer. */
__global__ void lsa_selftest_kernel(ncclDevComm dc, ncclWindow_t win, int words, int *bad)
{
	ncclLsaBarrierSession<ncclCoopCta> bar(ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier,
	                                       blockIdx.x);
	bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
	for (int p = 0; p < dc.lsaSize; p++) {
		unsigned *dst = (unsigned *)ncclGetLsaPointer(win, 0, p) + dc.lsaRank * words;
		for (int i = threadIdx.x; i < words; i += blockDim.x)
			dst[i] = 0x9e3779b9u * (unsigned)(dc.lsaRank + 1) + (unsigned)i;
	}
	bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
	const unsigned *mine = (const unsigned *)ncclGetLocalPointer(win, 0);
	for (int p = 0; p < dc.lsaSize; p++)
		for (int i = threadIdx.x; i < words; i += blockDim.x)
			if (mine[p * words + i] != 0x9e3779b9u * (unsigned)(p + 1) + (unsigned)i)
				atomicAdd(bad, 1);
	bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
}

extern "C" int hx_dev_lsa_selftest(ncclComm_t comm, int rank, int nranks, char *err, size_t errlen)
{
	const int words = 4096;
	size_t bytes = (size_t)words * 4 * nranks;
	void *buf = NULL;
	ncclWindow_t win = NULL;
	struct cuco_requirements req;
	struct ncclDevComm *dc = NULL;
	int *dbad = NULL, bad = -1, rc = 1;
	cudaStream_t s = NULL;

	bytes = (bytes + 4095) / 4096 * 4096;
	memset(&req, 0, sizeof(req));
	req.devcomm = 1;
	req.lsa_barrier_count = 1;
	if (ncclMemAlloc(&buf, bytes) != ncclSuccess ||
	    ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_COLL_SYMMETRIC) !=
	        ncclSuccess) {
		snprintf(err, errlen, "window registration failed: %s", ncclGetLastError(comm));
		goto out;
	}
	if (hx_dev_devcomm_create(comm, &req, &dc, err, errlen))
		goto out;
	if (dc->lsaSize != nranks) {
		snprintf(err, errlen,
		         "LSA team has %d of %d ranks: not every rank is peer-reachable",
		         dc->lsaSize, nranks);
		goto out;
	}
	cudaStreamCreate(&s);
	cudaMalloc((void **)&dbad, sizeof(int));
	cudaMemsetAsync(dbad, 0, sizeof(int), s);
	lsa_selftest_kernel<<<1, 512, 0, s>>>(*dc, win, words, dbad);
	cudaMemcpyAsync(&bad, dbad, sizeof(int), cudaMemcpyDeviceToHost, s);
	if (cudaStreamSynchronize(s) != cudaSuccess) {
		snprintf(err, errlen, "LSA self-test kernel failed: %s",
		         cudaGetErrorString(cudaGetLastError()));
		goto out;
	}
	if (bad) {
		snprintf(err, errlen, "LSA self-test: %d words wrong on rank %d", bad, rank);
		goto out;
	}
	rc = 0;
out:
	if (dbad)
		cudaFree(dbad);
	if (s)
		cudaStreamDestroy(s);
	hx_dev_devcomm_destroy(comm, dc);
	if (win)
		ncclCommWindowDeregister(comm, win);
	if (buf)
		ncclMemFree(buf);
	return rc;
}
