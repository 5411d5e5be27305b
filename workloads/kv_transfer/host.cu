// host.cu - kv_transfer as users write it today: the prefill rank runs each layer on cuco's
// GEMM; after the layer's QKV projection it packs K | V into one buffer and ncclSends it to
// the decode rank, which ncclRecvs it into a staging buffer and scatters it into the pages of
// its KV cache that the block table names; all on one stream. Ranks in pairs (2p prefills,
// 2p + 1 decodes); with one rank, rank 0 sends to itself. The baseline, and the fast path's
// input: both staging buffers live in the scratch window, and every rank runs the same
// send / receive group once per layer.
#include <cuda_bf16.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>

#define NCCLCHECK(call)                                                                     \
	do {                                                                                \
		ncclResult_t r_ = (call);                                                   \
		if (r_ != ncclSuccess) {                                                    \
			snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", #call,   \
				 ncclGetErrorString(r_));                                   \
			return 1;                                                           \
		}                                                                           \
	} while (0)

#define CUDACHECK(call)                                                                     \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess) {                                                    \
			snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", #call,   \
				 cudaGetErrorString(e_));                                   \
			return 1;                                                           \
		}                                                                           \
	} while (0)

enum { T_X, T_WQKV, T_WO, T_WGU, T_WD, T_TABLE, T_HIDDEN, T_CACHE };

/* ---------------------------------------------------------------- the prefill layer */

#define KV_EPS 1e-5f /* RMSNorm's epsilon (the reference's too) */

/*
 * x_out = x_in + delta (delta null: x_in as it is), rounded to bf16; then, unless
 * a is null, a = rmsnorm(that row). One CTA of 256 threads a row, H % 8 == 0.
 * x_out may be x_in (the residual add in place) or null (nothing stored).
 */
static __global__ void __launch_bounds__(256) kv_add_norm(const __nv_bfloat16 *x_in, const __nv_bfloat16 *delta,
							  __nv_bfloat16 *x_out, __nv_bfloat16 *a, int H)
{
	__shared__ float red[32];
	const size_t row = (size_t)blockIdx.x * H;
	const int nv = H / 8;
	float ss = 0.f;

	for (int v = threadIdx.x; v < nv; v += blockDim.x) {
		uint4 xi = *(const uint4 *)(x_in + row + (size_t)v * 8), di = make_uint4(0, 0, 0, 0);
		__nv_bfloat16 *xb = (__nv_bfloat16 *)&xi;
		const __nv_bfloat16 *db = (const __nv_bfloat16 *)&di;
		if (delta)
			di = *(const uint4 *)(delta + row + (size_t)v * 8);
		for (int k = 0; k < 8; k++) {
			float f = __bfloat162float(xb[k]) + (delta ? __bfloat162float(db[k]) : 0.f);
			xb[k] = __float2bfloat16(f);
			f = __bfloat162float(xb[k]);
			ss += f * f;
		}
		if (x_out)
			*(uint4 *)(x_out + row + (size_t)v * 8) = xi;
	}
	if (!a)
		return;
	for (int off = 16; off > 0; off >>= 1)
		ss += __shfl_xor_sync(0xffffffffu, ss, off);
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = ss;
	__syncthreads();
	if (threadIdx.x < 32) {
		float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
		for (int off = 16; off > 0; off >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, off);
		if (threadIdx.x == 0)
			red[0] = v;
	}
	__syncthreads();
	const float inv = rsqrtf(red[0] / (float)H + KV_EPS);
	for (int v = threadIdx.x; v < nv; v += blockDim.x) {
		// this thread's own vectors: x_out holds the rounded sums it stored above
		uint4 xi = *(const uint4 *)((x_out ? x_out : x_in) + row + (size_t)v * 8), di = make_uint4(0, 0, 0, 0), ai;
		__nv_bfloat16 *xb = (__nv_bfloat16 *)&xi, *ab = (__nv_bfloat16 *)&ai;
		const __nv_bfloat16 *db = (const __nv_bfloat16 *)&di;
		if (delta && !x_out)
			di = *(const uint4 *)(delta + row + (size_t)v * 8);
		for (int k = 0; k < 8; k++) {
			float f = __bfloat162float(
				__float2bfloat16(__bfloat162float(xb[k]) + (delta && !x_out ? __bfloat162float(db[k]) : 0.f)));
			ab[k] = __float2bfloat16(f * inv);
		}
		*(uint4 *)(a + row + (size_t)v * 8) = ai;
	}
}

/* act[s][i] = silu(gu[s][i]) * gu[s][I + i], 8 columns a thread (I % 8 == 0). */
static __global__ void __launch_bounds__(256) kv_swiglu(const __nv_bfloat16 *gu, __nv_bfloat16 *act, long long S, int I)
{
	const long long nv = I / 8;
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < S * nv;
	     e += (long long)gridDim.x * blockDim.x) {
		long long s = e / nv, v = e % nv;
		uint4 g = *(const uint4 *)(gu + (size_t)s * 2 * I + v * 8);
		uint4 u = *(const uint4 *)(gu + (size_t)s * 2 * I + I + v * 8), r;
		const __nv_bfloat16 *gb = (const __nv_bfloat16 *)&g, *ub = (const __nv_bfloat16 *)&u;
		__nv_bfloat16 *rb = (__nv_bfloat16 *)&r;
		for (int k = 0; k < 8; k++) {
			float x = __bfloat162float(gb[k]);
			rb[k] = __float2bfloat16(x / (1.0f + __expf(-x)) * __bfloat162float(ub[k]));
		}
		*(uint4 *)(act + (size_t)s * I + v * 8) = r;
	}
}

/* K | V columns of every token of a QKV output (row stride ld) into one [S, 2KV] buffer. */
static __global__ void pack_kv(const __nv_bfloat16 *qkv, long long ld, long long H, __nv_bfloat16 *out, long long S,
			       long long KV)
{
	const long long nv = 2 * KV / 8;
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < S * nv;
	     e += (long long)gridDim.x * blockDim.x) {
		long long s = e / nv, v = e % nv;
		*(uint4 *)(out + (size_t)s * 2 * KV + v * 8) = *(const uint4 *)(qkv + (size_t)s * ld + H + v * 8);
	}
}

/* A received [S, 2KV] buffer into layer l's pages: cache [L][2][pool][page][KV], token s in
 * page table[s / page], slot s % page. */
static __global__ void scatter_kv(const __nv_bfloat16 *in, __nv_bfloat16 *cache, const int32_t *table, long long S,
				  long long KV, long long page, long long pool, long long l)
{
	const long long nv = 2 * KV / 8;
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < S * nv;
	     e += (long long)gridDim.x * blockDim.x) {
		long long s = e / nv, c = (e % nv) * 8;
		long long kv = c >= KV ? 1 : 0;
		size_t at = (size_t)((((l * 2 + kv) * pool + table[s / page]) * page + s % page) * KV + c - kv * KV);
		*(uint4 *)(cache + at) = *(const uint4 *)(in + (size_t)s * 2 * KV + c);
	}
}

struct state {
	struct cuco_ctx *ctx;
	long long S, L, H, I, KV, page, pool, W; /* W = H + 2KV: a QKV row */
	int prefill, decode, peer_pre, peer_dec;
	__nv_bfloat16 *a, *qkv, *o, *gu, *act; /* o also holds the down projection */
	__nv_bfloat16 *send, *recv;             /* [S, 2KV] each, in the scratch window */
	void *ws;                               /* lets the GEMMs split a short last wave */
	size_t ws_bytes;
};

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	long long S = cuco_shape_get(ctx->shape, "S", 0), KV = cuco_shape_get(ctx->shape, "KV", 0);

	req->scratch_bytes = (size_t)(S * 2 * KV) * sizeof(__nv_bfloat16) * 2;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	struct state *st = (struct state *)calloc(1, sizeof(*st));
	size_t b;

	if (!st)
		return 1;
	*out = st;
	st->ctx = ctx;
	st->S = cuco_shape_get(ctx->shape, "S", 0);
	st->L = cuco_shape_get(ctx->shape, "L", 0);
	st->H = cuco_shape_get(ctx->shape, "H", 0);
	st->I = cuco_shape_get(ctx->shape, "I", 0);
	st->KV = cuco_shape_get(ctx->shape, "KV", 0);
	st->page = cuco_shape_get(ctx->shape, "page", 0);
	st->pool = (st->S + st->page - 1) / st->page;
	st->pool += (st->pool + 3) / 4; /* the pool: a quarter more pages than the request needs */
	st->W = st->H + 2 * st->KV;
	st->prefill = ctx->nranks == 1 || ctx->rank % 2 == 0;
	st->decode = ctx->nranks == 1 || ctx->rank % 2 == 1;
	st->peer_pre = ctx->nranks == 1 ? 0 : ctx->rank & ~1;
	st->peer_dec = ctx->nranks == 1 ? 0 : ctx->rank | 1;
	st->send = (__nv_bfloat16 *)ctx->scratch;
	st->recv = st->send + (size_t)(st->S * 2 * st->KV);
	if (st->prefill) {
		CUDACHECK(cudaMalloc((void **)&st->a, (size_t)(st->S * st->H) * 2));
		CUDACHECK(cudaMalloc((void **)&st->o, (size_t)(st->S * st->H) * 2));
		CUDACHECK(cudaMalloc((void **)&st->qkv, (size_t)(st->S * st->W) * 2));
		CUDACHECK(cudaMalloc((void **)&st->gu, (size_t)(st->S * 2 * st->I) * 2));
		CUDACHECK(cudaMalloc((void **)&st->act, (size_t)(st->S * st->I) * 2));
		st->ws_bytes = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->W, (int)st->H);
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->H, (int)st->H);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)(2 * st->I), (int)st->H);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->H, (int)st->I);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		if (st->ws_bytes) {
			CUDACHECK(cudaMalloc(&st->ws, st->ws_bytes));
			CUDACHECK(cudaMemset(st->ws, 0, st->ws_bytes));
		}
	}
	return 0;
}

static int gemm(struct state *st, const __nv_bfloat16 *A, long long lda, const __nv_bfloat16 *B, __nv_bfloat16 *C,
		long long M, long long N, long long K, cudaStream_t s)
{
	cuco::gemm_bf16_args g = {A, B, C, (int)M, (int)N, (int)K, lda, N, N};

	CUDACHECK(cuco::gemm_bf16(g, s, 0, st->ws, st->ws_bytes));
	return 0;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct state *st = (struct state *)p;
	const __nv_bfloat16 *x0 = (const __nv_bfloat16 *)tensors[T_X].ptr;
	__nv_bfloat16 *x = (__nv_bfloat16 *)tensors[T_HIDDEN].ptr;
	const size_t n = (size_t)(st->S * 2 * st->KV);
	const unsigned rows = (unsigned)st->S;
	const int H = (int)st->H;

	for (long long l = 0; l < st->L; l++) {
		if (st->prefill) {
			/* the residual add of the layer before, RMSNorm, QKV projection, K | V packed */
			if (l == 0)
				kv_add_norm<<<rows, 256, 0, stream>>>(x0, NULL, NULL, st->a, H);
			else
				kv_add_norm<<<rows, 256, 0, stream>>>(x, st->o, x, st->a, H);
			CUDACHECK(cudaGetLastError());
			if (gemm(st, st->a, st->H, (const __nv_bfloat16 *)tensors[T_WQKV].ptr + (size_t)(l * st->H * st->W),
				 st->qkv, st->S, st->W, st->H, stream))
				return 1;
			pack_kv<<<528, 256, 0, stream>>>(st->qkv, st->W, st->H, st->send, st->S, st->KV);
			CUDACHECK(cudaGetLastError());
		}
		NCCLCHECK(ncclGroupStart());
		if (st->prefill)
			NCCLCHECK(ncclSend(st->send, n, ncclBfloat16, st->peer_dec, st->ctx->comm, stream));
		if (st->decode)
			NCCLCHECK(ncclRecv(st->recv, n, ncclBfloat16, st->peer_pre, st->ctx->comm, stream));
		NCCLCHECK(ncclGroupEnd());
		if (st->decode) {
			scatter_kv<<<528, 256, 0, stream>>>(st->recv, (__nv_bfloat16 *)tensors[T_CACHE].ptr,
							    (const int32_t *)tensors[T_TABLE].ptr, st->S, st->KV,
							    st->page, st->pool, l);
			CUDACHECK(cudaGetLastError());
		}
		if (st->prefill) {
			/* O projection of Q (attention left out), residual add, RMSNorm, MLP */
			if (gemm(st, st->qkv, st->W, (const __nv_bfloat16 *)tensors[T_WO].ptr + (size_t)(l * st->H * st->H),
				 st->o, st->S, st->H, st->H, stream))
				return 1;
			kv_add_norm<<<rows, 256, 0, stream>>>(l == 0 ? x0 : x, st->o, x, st->a, H);
			CUDACHECK(cudaGetLastError());
			if (gemm(st, st->a, st->H,
				 (const __nv_bfloat16 *)tensors[T_WGU].ptr + (size_t)(l * st->H * 2 * st->I), st->gu,
				 st->S, 2 * st->I, st->H, stream))
				return 1;
			kv_swiglu<<<1056, 256, 0, stream>>>(st->gu, st->act, st->S, (int)st->I);
			CUDACHECK(cudaGetLastError());
			if (gemm(st, st->act, st->I, (const __nv_bfloat16 *)tensors[T_WD].ptr + (size_t)(l * st->I * st->H),
				 st->o, st->S, st->H, st->I, stream))
				return 1;
		}
	}
	if (st->prefill) {
		kv_add_norm<<<rows, 256, 0, stream>>>(x, st->o, x, NULL, H);
		CUDACHECK(cudaGetLastError());
	}
	return 0;
}

extern "C" void cuco_program_fini(void *p)
{
	struct state *st = (struct state *)p;

	if (!st)
		return;
	cudaFree(st->a);
	cudaFree(st->o);
	cudaFree(st->qkv);
	cudaFree(st->gu);
	cudaFree(st->act);
	cudaFree(st->ws);
	free(st);
}
