// workload.cu - kv_transfer: tensors, inputs and the independent reference.
//
// A prefill rank runs L Llama-style layers over S prompt tokens; after each
// layer's QKV projection, that layer's K and V (S x KV each) belong in the
// decode rank's paged KV cache. One layer, bf16 stored after every step and
// fp32 inside each (eps 1e-5):
//
//   a   = rmsnorm(x)                    [S, H]
//   qkv = a * Wqkv                      [S, H + 2KV]: Q | K | V
//   cache[l][0] <- K, cache[l][1] <- V  pages of `page` tokens, block table
//   o   = Q * Wo                        attention left out: O projects Q
//   x   = x + o;  a = rmsnorm(x)
//   gu  = a * Wgu                       [S, 2I]: gate | up
//   act = silu(gate) * up               [S, I]
//   x   = x + act * Wd                  [S, H]
//
// Weights are uniform in +-sqrt(3 / fan_in), so every projection keeps unit
// variance and the residual stream grows only linearly over the layers.
//
// Ranks come in pairs: rank 2p prefills, rank 2p + 1 decodes; with one rank,
// rank 0 does both. Both ranks of a pair hold the same inputs (the same
// prompt and model, drawn from the seed and p), so no rank needs another's.
// Outputs on every rank: the final hidden state x [S, H] and the decode
// rank's whole cache pool [L][2][pool][page][KV] (kv_table.h). The reference
// writes the poison pattern (all bytes 0xff) wherever a program must leave
// the output untouched - pool pages the block table does not name, slots of
// the last page past S, the cache of a prefill-only rank, the hidden state of
// a decode-only rank - and the harness then requires that pattern there.
//
// The reference never communicates: it computes every layer on this rank
// with the plain fp32 SIMT GEMM of cuco_dev/reference.cuh and kernels of its
// own, sharing no code with any program.
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/reference.cuh>
#include <cuco_dev/workload.cuh>

#include "kv_table.h"

enum { T_X, T_WQKV, T_WO, T_WGU, T_WD, T_TABLE, T_HIDDEN, T_CACHE, NT };

struct kv_dims {
	long long S, L, H, I, KV, page, pages, pool;
};

static int kv_dims_get(const struct cuco_shape *s, struct kv_dims *d, char *err, size_t len)
{
	d->S = cuco_shape_get(s, "S", -1);
	d->L = cuco_shape_get(s, "L", -1);
	d->H = cuco_shape_get(s, "H", -1);
	d->I = cuco_shape_get(s, "I", -1);
	d->KV = cuco_shape_get(s, "KV", -1);
	d->page = cuco_shape_get(s, "page", -1);
	if (d->S < 1 || d->L < 1 || d->H < 64 || d->I < 64 || d->KV < 8 || d->page < 1) {
		snprintf(err, len, "shape '%s' needs S, L, page >= 1, H, I >= 64 and KV >= 8", s->name);
		return 1;
	}
	if (d->H % 8 || d->I % 8 || d->KV % 8) {
		snprintf(err, len, "shape '%s': H, I and KV must be multiples of 8", s->name);
		return 1;
	}
	d->pages = kv_pages(d->S, d->page);
	d->pool = kv_pool_pages(d->S, d->page);
	return 0;
}

static int kv_pair(int rank, int nranks)
{
	return nranks == 1 ? 0 : rank / 2;
}

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct kv_dims d;

	(void)rank;
	if (kv_dims_get(shape, &d, err, errlen))
		return 1;
	if (nranks != 1 && nranks % 2) {
		snprintf(err, errlen, "kv_transfer runs on ranks in pairs (or on one rank), not on %d", nranks);
		return 1;
	}
	cuco::tensor_bf16(&t[T_X], "x", CUCO_ROLE_INPUT, (size_t)(d.S * d.H));
	cuco::tensor_bf16(&t[T_WQKV], "w_qkv", CUCO_ROLE_INPUT, (size_t)(d.L * d.H * (d.H + 2 * d.KV)));
	cuco::tensor_bf16(&t[T_WO], "w_o", CUCO_ROLE_INPUT, (size_t)(d.L * d.H * d.H));
	cuco::tensor_bf16(&t[T_WGU], "w_gate_up", CUCO_ROLE_INPUT, (size_t)(d.L * d.H * 2 * d.I));
	cuco::tensor_bf16(&t[T_WD], "w_down", CUCO_ROLE_INPUT, (size_t)(d.L * d.I * d.H));
	snprintf(t[T_TABLE].name, sizeof(t[T_TABLE].name), "block_table");
	t[T_TABLE].role = CUCO_ROLE_INPUT;
	t[T_TABLE].dtype = CUCO_DTYPE_I32;
	t[T_TABLE].elems = (size_t)d.pages;
	t[T_TABLE].bytes = (size_t)d.pages * 4;
	cuco::tensor_bf16(&t[T_HIDDEN], "hidden", CUCO_ROLE_OUTPUT, (size_t)(d.S * d.H));
	cuco::tensor_bf16(&t[T_CACHE], "kv_cache", CUCO_ROLE_OUTPUT,
			  (size_t)(d.L * 2 * d.pool * d.page * d.KV));
	*n = NT;
	return 0;
}

/* dst[i] = uniform(-1, 1) * scale from (seed, stream, i). */
static __global__ void kv_fill_scaled(__nv_bfloat16 *dst, size_t n, uint64_t seed, uint64_t stream, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __float2bfloat16(cuco::uniform_pm1(seed, stream, i) * scale);
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	struct kv_dims d;
	char err[256];
	int pair = kv_pair(rank, nranks);
	uint64_t base = 1000 * (uint64_t)(pair + 1);
	int32_t *perm;
	cudaError_t e;

	if (nt != NT || kv_dims_get(shape, &d, err, sizeof(err)))
		return 1;
	kv_fill_scaled<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_X].ptr, t[T_X].elems, seed, base + 1, 1.0f);
	kv_fill_scaled<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_WQKV].ptr, t[T_WQKV].elems, seed, base + 2,
					   sqrtf(3.0f / (float)d.H));
	kv_fill_scaled<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_WO].ptr, t[T_WO].elems, seed, base + 3,
					   sqrtf(3.0f / (float)d.H));
	kv_fill_scaled<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_WGU].ptr, t[T_WGU].elems, seed, base + 4,
					   sqrtf(3.0f / (float)d.H));
	kv_fill_scaled<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_WD].ptr, t[T_WD].elems, seed, base + 5,
					   sqrtf(3.0f / (float)d.I));
	perm = (int32_t *)malloc((size_t)d.pool * sizeof(int32_t));
	if (!perm)
		return 1;
	kv_permutation(perm, d.pool, KV_TABLE_SEED, kv_table_stream(pair));
	e = cudaMemcpyAsync(t[T_TABLE].ptr, perm, (size_t)d.pages * sizeof(int32_t), cudaMemcpyHostToDevice, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	free(perm);
	return e != cudaSuccess || cudaPeekAtLastError() != cudaSuccess;
}

/* ---------------------------------------------------------------- reference kernels */

/* a = x / sqrt(mean(x^2) + 1e-5), row by row (one CTA a row, sums in double). */
static __global__ void ref_rmsnorm(const __nv_bfloat16 *x, __nv_bfloat16 *a, long long H)
{
	__shared__ double part[256];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * H;
	double ss = 0;

	for (long long j = threadIdx.x; j < H; j += blockDim.x) {
		double v = (double)__bfloat162float(row[j]);
		ss += v * v;
	}
	part[threadIdx.x] = ss;
	__syncthreads();
	if (threadIdx.x == 0) {
		double tot = 0;
		for (int k = 0; k < (int)blockDim.x; k++)
			tot += part[k];
		part[0] = 1.0 / sqrt(tot / (double)H + 1e-5);
	}
	__syncthreads();
	double inv = part[0];
	for (long long j = threadIdx.x; j < H; j += blockDim.x)
		a[(size_t)blockIdx.x * H + j] = __float2bfloat16((float)((double)__bfloat162float(row[j]) * inv));
}

/* x = x + y elementwise (both bf16, the sum rounded once). */
static __global__ void ref_add(__nv_bfloat16 *x, const __nv_bfloat16 *y, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(y[i]));
}

/* act[s][i] = silu(gu[s][i]) * gu[s][I + i]. */
static __global__ void ref_swiglu(const __nv_bfloat16 *gu, __nv_bfloat16 *act, long long S, long long I)
{
	for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < (size_t)(S * I);
	     e += (size_t)gridDim.x * blockDim.x) {
		size_t s = e / I, i = e % I;
		float g = __bfloat162float(gu[s * 2 * I + i]), u = __bfloat162float(gu[s * 2 * I + I + i]);
		act[e] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
	}
}

/* dst[s][c] = src[s][c0 + c] for c < w (src row stride ld). */
static __global__ void ref_columns(const __nv_bfloat16 *src, long long ld, long long c0, __nv_bfloat16 *dst,
				   long long S, long long w)
{
	for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < (size_t)(S * w);
	     e += (size_t)gridDim.x * blockDim.x)
		dst[e] = src[(e / w) * ld + c0 + e % w];
}

/* Layer l's K and V of every token into its page and slot, one element a thread. */
static __global__ void ref_pages(const __nv_bfloat16 *qkv, __nv_bfloat16 *cache, const int32_t *table,
				 struct kv_dims d, long long l)
{
	const long long ld = d.H + 2 * d.KV;
	for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < (size_t)(d.S * 2 * d.KV);
	     e += (size_t)gridDim.x * blockDim.x) {
		long long t = (long long)(e / (2 * d.KV)), c = (long long)(e % (2 * d.KV));
		int kv = c >= d.KV;
		size_t at = kv_cache_offset(table, d.pool, d.page, d.KV, l, kv, t) + (size_t)(c - kv * d.KV);
		cache[at] = qkv[t * ld + d.H + c];
	}
}

static void ref_gemm(const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C, long long M, long long N,
		     long long K, cudaStream_t s)
{
	dim3 grid((unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64));
	cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>(A, B, C, M, N, K, N);
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct kv_dims d;
	char err[256];
	const int prefill = nranks == 1 || rank % 2 == 0, decode = nranks == 1 || rank % 2 == 1;
	__nv_bfloat16 *x = NULL, *a = NULL, *qkv = NULL, *q = NULL, *o = NULL, *gu = NULL, *act = NULL;
	__nv_bfloat16 *cache = (__nv_bfloat16 *)t[T_CACHE].ptr;
	const int32_t *table = (const int32_t *)t[T_TABLE].ptr;
	int rc = 1;

	(void)seed;
	if (nt != NT || kv_dims_get(shape, &d, err, sizeof(err)))
		return 1;
	const long long ld = d.H + 2 * d.KV;
	const size_t SH = (size_t)(d.S * d.H);
	if (cudaMemsetAsync(cache, 0xff, t[T_CACHE].bytes, s) != cudaSuccess)
		return 1;
	if (!prefill && cudaMemsetAsync(t[T_HIDDEN].ptr, 0xff, t[T_HIDDEN].bytes, s) != cudaSuccess)
		return 1;
	// The residual stream: the hidden-state output itself on a prefill rank.
	if (prefill)
		x = (__nv_bfloat16 *)t[T_HIDDEN].ptr;
	else if (cudaMallocAsync((void **)&x, SH * 2, s) != cudaSuccess)
		return 1;
	if (cudaMallocAsync((void **)&a, SH * 2, s) != cudaSuccess ||
	    cudaMallocAsync((void **)&qkv, (size_t)(d.S * ld) * 2, s) != cudaSuccess ||
	    cudaMallocAsync((void **)&q, SH * 2, s) != cudaSuccess || cudaMallocAsync((void **)&o, SH * 2, s) != cudaSuccess ||
	    cudaMallocAsync((void **)&gu, (size_t)(d.S * 2 * d.I) * 2, s) != cudaSuccess ||
	    cudaMallocAsync((void **)&act, (size_t)(d.S * d.I) * 2, s) != cudaSuccess)
		goto out;
	if (cudaMemcpyAsync(x, t[T_X].ptr, SH * 2, cudaMemcpyDeviceToDevice, s) != cudaSuccess)
		goto out;
	for (long long l = 0; l < d.L; l++) {
		const __nv_bfloat16 *wqkv = (const __nv_bfloat16 *)t[T_WQKV].ptr + (size_t)(l * d.H * ld);
		const __nv_bfloat16 *wo = (const __nv_bfloat16 *)t[T_WO].ptr + (size_t)(l * d.H * d.H);
		const __nv_bfloat16 *wgu = (const __nv_bfloat16 *)t[T_WGU].ptr + (size_t)(l * d.H * 2 * d.I);
		const __nv_bfloat16 *wd = (const __nv_bfloat16 *)t[T_WD].ptr + (size_t)(l * d.I * d.H);

		ref_rmsnorm<<<(unsigned)d.S, 256, 0, s>>>(x, a, d.H);
		ref_gemm(a, wqkv, qkv, d.S, ld, d.H, s);
		if (decode)
			ref_pages<<<528, 256, 0, s>>>(qkv, cache, table, d, l);
		ref_columns<<<528, 256, 0, s>>>(qkv, ld, 0, q, d.S, d.H);
		ref_gemm(q, wo, o, d.S, d.H, d.H, s);
		ref_add<<<528, 256, 0, s>>>(x, o, SH);
		ref_rmsnorm<<<(unsigned)d.S, 256, 0, s>>>(x, a, d.H);
		ref_gemm(a, wgu, gu, d.S, 2 * d.I, d.H, s);
		ref_swiglu<<<528, 256, 0, s>>>(gu, act, d.S, d.I);
		ref_gemm(act, wd, o, d.S, d.H, d.I, s);
		ref_add<<<528, 256, 0, s>>>(x, o, SH);
	}
	rc = cudaPeekAtLastError() != cudaSuccess;
out:
	cudaFreeAsync(a, s);
	cudaFreeAsync(qkv, s);
	cudaFreeAsync(q, s);
	cudaFreeAsync(o, s);
	cudaFreeAsync(gu, s);
	cudaFreeAsync(act, s);
	if (!prefill)
		cudaFreeAsync(x, s);
	return rc;
}
