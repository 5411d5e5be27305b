// common.cuh - what kv_transfer's peer and single-phase programs share: the
// prefill layer on cuco's GEMM (the same steps as host.cu), the copy-engine
// transfer of a layer's K and V into the decode rank's pages (one pitched copy
// per page and per K / V, from the decode rank's LSA address), and the host
// baseline's NCCL transfer (pack, send / receive, scatter) for the comm-alone
// program. Ranks in pairs: 2p prefills, 2p + 1 decodes; one rank does both.
#ifndef KV_TRANSFER_COMMON_CUH
#define KV_TRANSFER_COMMON_CUH

#include <cuda_bf16.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/launch.cuh>
#include <cuco_dev/lsa.cuh>
#include <cuco_dev/overlap.cuh>

#include "kv_table.h"

enum { KV_X, KV_WQKV, KV_WO, KV_WGU, KV_WD, KV_TABLE, KV_HIDDEN, KV_CACHE };

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

/* Copy layer-l K | V of every token (row stride ld) into one contiguous [S, 2KV] buffer. */
static __global__ void kv_pack(const __nv_bfloat16 *qkv, long long ld, long long H, __nv_bfloat16 *out, long long S,
			       long long KV)
{
	const long long nv = 2 * KV / 8;
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < S * nv;
	     e += (long long)gridDim.x * blockDim.x) {
		long long s = e / nv, v = e % nv;
		*(uint4 *)(out + (size_t)s * 2 * KV + v * 8) = *(const uint4 *)(qkv + (size_t)s * ld + H + v * 8);
	}
}

/* Scatter a received [S, 2KV] buffer into layer l's pages of the cache. */
static __global__ void kv_unpack(const __nv_bfloat16 *in, __nv_bfloat16 *cache, const int32_t *table, long long S,
				 long long KV, long long page, long long pool, long long l)
{
	const long long nv = 2 * KV / 8;
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < S * nv;
	     e += (long long)gridDim.x * blockDim.x) {
		long long s = e / nv, c = (e % nv) * 8;
		int kv = c >= KV;
		size_t at = kv_cache_offset(table, pool, page, KV, l, kv, s) + (size_t)(c - kv * KV);
		*(uint4 *)(cache + at) = *(const uint4 *)(in + (size_t)s * 2 * KV + c);
	}
}

/* Per tensor set: the block table on the host and the decode rank's cache (host VA). */
struct kv_set {
	const void *table, *cache;
	int32_t *host_table;
	char *peer_cache;
};

struct kv_state {
	struct cuco_ctx *ctx;
	long long S, L, H, I, KV, page, pages, pool, W; // W = H + 2KV, a QKV row
	int prefill, decode;                             // this rank's roles
	int pre_rank, dec_rank;                          // its pair
	__nv_bfloat16 *a, *o, *gu, *act;                 // activations; o also holds the down projection
	__nv_bfloat16 *qkv;                              // nbuf buffers of [S, W]
	int nbuf;
	__nv_bfloat16 *send, *recv;                      // NCCL staging [S, 2KV] each, in the scratch window
	void *ws;                                        // the lone GEMMs' split workspace
	size_t ws_bytes;
	cudaStream_t side;                               // copy-engine stream of ce_layer
	cudaEvent_t ev_qkv, ev_free[2], ev_join;
	cuco::overlap_cache probe;
	int nsets;
	kv_set sets[CUCO_OVERLAP_MAX_SETS];
};

static inline int kv_fail(struct kv_state *st, const char *what, const char *why)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, why);
	return 1;
}

static inline __nv_bfloat16 *kv_qkv(struct kv_state *st, long long l)
{
	return st->qkv + (size_t)(l % st->nbuf) * st->S * st->W;
}

static inline int kv_gemm(struct kv_state *st, const void *A, long long lda, const void *B, __nv_bfloat16 *C,
			  long long M, long long N, long long K, cudaStream_t s)
{
	cuco::gemm_bf16_args g = {(const __nv_bfloat16 *)A, (const __nv_bfloat16 *)B, C, (int)M, (int)N, (int)K,
				  lda, N, N};
	cudaError_t e = cuco::gemm_bf16(g, s, 0, st->ws, st->ws_bytes);
	return e == cudaSuccess ? 0 : kv_fail(st, "gemm", cudaGetErrorString(e));
}

/* Layer l up to its QKV projection (into qkv): the residual add of the layer before, RMSNorm, QKV. */
static inline int kv_layer_head(struct kv_state *st, const struct cuco_tensor *t, long long l, __nv_bfloat16 *qkv,
				cudaStream_t s)
{
	__nv_bfloat16 *x = (__nv_bfloat16 *)t[KV_HIDDEN].ptr;
	if (l == 0)
		kv_add_norm<<<(unsigned)st->S, 256, 0, s>>>((const __nv_bfloat16 *)t[KV_X].ptr, NULL, NULL, st->a, (int)st->H);
	else
		kv_add_norm<<<(unsigned)st->S, 256, 0, s>>>(x, st->o, x, st->a, (int)st->H);
	CUCO_LAUNCH_TRY(st->ctx);
	return kv_gemm(st, st->a, st->H, (const __nv_bfloat16 *)t[KV_WQKV].ptr + (size_t)(l * st->H * st->W), qkv, st->S,
		       st->W, st->H, s);
}

/* Layer l after its QKV projection: O projection of Q, residual add, RMSNorm, gate||up, SwiGLU, down (into o). */
static inline int kv_layer_tail(struct kv_state *st, const struct cuco_tensor *t, long long l,
				const __nv_bfloat16 *qkv, cudaStream_t s)
{
	__nv_bfloat16 *x = (__nv_bfloat16 *)t[KV_HIDDEN].ptr;
	const __nv_bfloat16 *xin = l == 0 ? (const __nv_bfloat16 *)t[KV_X].ptr : x;
	if (kv_gemm(st, qkv, st->W, (const __nv_bfloat16 *)t[KV_WO].ptr + (size_t)(l * st->H * st->H), st->o, st->S,
		    st->H, st->H, s))
		return 1;
	kv_add_norm<<<(unsigned)st->S, 256, 0, s>>>(xin, st->o, x, st->a, (int)st->H);
	CUCO_LAUNCH_TRY(st->ctx);
	if (kv_gemm(st, st->a, st->H, (const __nv_bfloat16 *)t[KV_WGU].ptr + (size_t)(l * st->H * 2 * st->I), st->gu,
		    st->S, 2 * st->I, st->H, s))
		return 1;
	kv_swiglu<<<1056, 256, 0, s>>>(st->gu, st->act, st->S, (int)st->I);
	CUCO_LAUNCH_TRY(st->ctx);
	return kv_gemm(st, st->act, st->I, (const __nv_bfloat16 *)t[KV_WD].ptr + (size_t)(l * st->I * st->H), st->o,
		       st->S, st->H, st->I, s);
}

/* The last layer's residual add: hidden += down projection. */
static inline int kv_finish(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	__nv_bfloat16 *x = (__nv_bfloat16 *)t[KV_HIDDEN].ptr;
	kv_add_norm<<<(unsigned)st->S, 256, 0, s>>>(x, st->o, x, NULL, (int)st->H);
	CUCO_LAUNCH_TRY(st->ctx);
	return 0;
}

/* The set of tensor set t: its block table read back to the host (a host wait: in init,
 * or the first run with a new set) and the decode rank's cache as the copy engine sees it. */
static inline kv_set *kv_set_get(struct kv_state *st, const struct cuco_tensor *t)
{
	for (int i = 0; i < st->nsets; i++)
		if (st->sets[i].table == t[KV_TABLE].ptr && st->sets[i].cache == t[KV_CACHE].ptr)
			return &st->sets[i];
	if (st->nsets >= CUCO_OVERLAP_MAX_SETS) {
		CUCO_ERRF(st->ctx, "kv_set_get: more than %d tensor sets", CUCO_OVERLAP_MAX_SETS);
		return NULL;
	}
	kv_set *k = &st->sets[st->nsets];
	char *base[CUCO_LSA_MAX_PEERS];
	k->host_table = (int32_t *)malloc((size_t)st->pages * sizeof(int32_t));
	if (!k->host_table) {
		CUCO_ERRF(st->ctx, "kv_set_get: out of memory");
		return NULL;
	}
	if (cudaMemcpy(k->host_table, t[KV_TABLE].ptr, (size_t)st->pages * sizeof(int32_t), cudaMemcpyDeviceToHost) !=
		    cudaSuccess ||
	    cuco::overlap_window_peers(st->ctx, &st->probe, t[KV_CACHE].win, base)) {
		if (!st->ctx->errbuf[0])
			CUCO_ERRF(st->ctx, "kv_set_get: reading the block table failed");
		free(k->host_table);
		return NULL;
	}
	k->peer_cache = base[st->dec_rank] + t[KV_CACHE].win_offset;
	k->table = t[KV_TABLE].ptr;
	k->cache = t[KV_CACHE].ptr;
	st->nsets++;
	return k;
}

/* Layer l's K and V of tokens [t0, t1) (a whole number of pages, or up to S) from qkv into the
 * decode rank's pages: one pitched copy-engine copy per page and per K / V, on stream c. */
static inline int kv_ce_pages(struct kv_state *st, const kv_set *k, const __nv_bfloat16 *qkv, long long l,
			      long long t0, long long t1, cudaStream_t c)
{
	const size_t pitch = (size_t)st->W * 2, row = (size_t)st->KV * 2;
	for (long long p = t0 / st->page; p * st->page < t1; p++) {
		long long rows = st->S - p * st->page < st->page ? st->S - p * st->page : st->page;
		for (int kv = 0; kv < 2; kv++) {
			const char *src = (const char *)(qkv + (size_t)(p * st->page) * st->W + st->H + kv * st->KV);
			char *dst = k->peer_cache + kv_cache_offset(k->host_table, st->pool, st->page, st->KV, l, kv,
								     p * st->page) * 2;
			CUCO_CUDA_TRY(cudaMemcpy2DAsync(dst, row, src, pitch, row, (size_t)rows, cudaMemcpyDeviceToDevice, c),
				      st->ctx);
		}
	}
	return 0;
}

/* The host baseline's transfer of layer l (qkv: its QKV output): pack K | V, one send / receive
 * group, scatter into the pages; what comm_nccl times alone. */
static inline int kv_nccl_layer(struct kv_state *st, const struct cuco_tensor *t, const __nv_bfloat16 *qkv,
				long long l, cudaStream_t s)
{
	const size_t n = (size_t)(st->S * 2 * st->KV);
	ncclResult_t r;
	if (st->prefill) {
		kv_pack<<<528, 256, 0, s>>>(qkv, st->W, st->H, st->send, st->S, st->KV);
		CUCO_LAUNCH_TRY(st->ctx);
	}
	if ((r = ncclGroupStart()) != ncclSuccess)
		return kv_fail(st, "ncclGroupStart", ncclGetErrorString(r));
	if (st->prefill && (r = ncclSend(st->send, n, ncclBfloat16, st->dec_rank, st->ctx->comm, s)) != ncclSuccess)
		return kv_fail(st, "ncclSend", ncclGetErrorString(r));
	if (st->decode && (r = ncclRecv(st->recv, n, ncclBfloat16, st->pre_rank, st->ctx->comm, s)) != ncclSuccess)
		return kv_fail(st, "ncclRecv", ncclGetErrorString(r));
	if ((r = ncclGroupEnd()) != ncclSuccess)
		return kv_fail(st, "ncclGroupEnd", ncclGetErrorString(r));
	if (st->decode) {
		kv_unpack<<<528, 256, 0, s>>>(st->recv, (__nv_bfloat16 *)t[KV_CACHE].ptr, (const int32_t *)t[KV_TABLE].ptr,
					      st->S, st->KV, st->page, st->pool, l);
		CUCO_LAUNCH_TRY(st->ctx);
	}
	return 0;
}

/* Scratch of the NCCL staging buffers: [S, 2KV] to send and [S, 2KV] to receive. */
static inline size_t kv_staging_bytes(const struct cuco_ctx *ctx)
{
	long long S = cuco_shape_get(ctx->shape, "S", 0), KV = cuco_shape_get(ctx->shape, "KV", 0);
	return (size_t)(S * 2 * KV) * 2 * 2;
}

/* nbuf QKV buffers; lsa: a devcomm is needed (copy-engine programs: peer addresses, barriers). */
static inline int kv_init(struct cuco_ctx *ctx, void **out, int nbuf_all_layers, int nbuf)
{
	struct kv_state *st = (struct kv_state *)calloc(1, sizeof(*st));
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
	st->pages = kv_pages(st->S, st->page);
	st->pool = kv_pool_pages(st->S, st->page);
	st->W = st->H + 2 * st->KV;
	st->prefill = ctx->nranks == 1 || ctx->rank % 2 == 0;
	st->decode = ctx->nranks == 1 || ctx->rank % 2 == 1;
	st->pre_rank = ctx->nranks == 1 ? 0 : ctx->rank & ~1;
	st->dec_rank = ctx->nranks == 1 ? 0 : ctx->rank | 1;
	st->nbuf = nbuf_all_layers ? (int)st->L : nbuf;
	if (ctx->devcomm && (ctx->devcomm->lsaSize != ctx->nranks || ctx->nranks > CUCO_LSA_MAX_PEERS))
		return kv_fail(st, "init", "needs every rank in one LSA team");
	if (ctx->scratch) {
		st->send = (__nv_bfloat16 *)ctx->scratch;
		st->recv = st->send + (size_t)(st->S * 2 * st->KV);
	}
	if (st->prefill) {
		const size_t SH = (size_t)(st->S * st->H);
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->a, SH * 2), ctx);
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->o, SH * 2), ctx);
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->gu, (size_t)(st->S * 2 * st->I) * 2), ctx);
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->act, (size_t)(st->S * st->I) * 2), ctx);
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->qkv, (size_t)st->nbuf * st->S * st->W * 2), ctx);
		// one split workspace for the four GEMM shapes (one launch at a time on the stream)
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->W, (int)st->H);
		st->ws_bytes = b;
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->H, (int)st->H);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)(2 * st->I), (int)st->H);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		b = cuco::gemm_bf16_alone_bytes((int)st->S, (int)st->H, (int)st->I);
		st->ws_bytes = b > st->ws_bytes ? b : st->ws_bytes;
		if (st->ws_bytes) {
			CUCO_CUDA_TRY(cudaMalloc(&st->ws, st->ws_bytes), ctx);
			CUCO_CUDA_TRY(cudaMemset(st->ws, 0, st->ws_bytes), ctx);
		}
	}
	CUCO_CUDA_TRY(cudaStreamCreateWithFlags(&st->side, cudaStreamNonBlocking), ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_qkv, cudaEventDisableTiming), ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_free[0], cudaEventDisableTiming), ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_free[1], cudaEventDisableTiming), ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_join, cudaEventDisableTiming), ctx);
	if (ctx->devcomm) {
		if (cuco::overlap_cache_init(ctx, &st->probe))
			return 1;
		if (!kv_set_get(st, ctx->tensors))
			return 1;
	}
	return 0;
}

static inline void kv_fini(void *p)
{
	struct kv_state *st = (struct kv_state *)p;

	if (!st)
		return;
	cudaDeviceSynchronize();
	cudaFree(st->a);
	cudaFree(st->o);
	cudaFree(st->gu);
	cudaFree(st->act);
	cudaFree(st->qkv);
	cudaFree(st->ws);
	if (st->side)
		cudaStreamDestroy(st->side);
	if (st->ev_qkv)
		cudaEventDestroy(st->ev_qkv);
	for (int i = 0; i < 2; i++)
		if (st->ev_free[i])
			cudaEventDestroy(st->ev_free[i]);
	if (st->ev_join)
		cudaEventDestroy(st->ev_join);
	for (int i = 0; i < st->nsets; i++)
		free(st->sets[i].host_table);
	if (st->probe.sets)
		cuco::overlap_cache_release(&st->probe);
	free(st);
}

/* The run-entry rendezvous (before anything is written into a peer's cache) and the exit
 * barrier (every copy into this rank's cache has landed), on every rank. */
static inline int kv_enter(struct kv_state *st, cudaStream_t s)
{
	return cuco::overlap_barrier(st->ctx, CUCO_OVERLAP_BARRIER_ENTRY, 0, s);
}

static inline int kv_leave(struct kv_state *st, cudaStream_t s)
{
	return cuco::overlap_barrier(st->ctx, CUCO_OVERLAP_BARRIER_EXIT, 1, s);
}

/* ce_layer: layer l's K and V leave on the copy engine (a side stream) right after its QKV
 * projection, while the prefill computes on; two QKV buffers in turn. */
static inline int kv_run_ce_layer(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const kv_set *k = kv_set_get(st, t);
	if (!k || kv_enter(st, s))
		return 1;
	if (st->prefill) {
		for (long long l = 0; l < st->L; l++) {
			__nv_bfloat16 *buf = kv_qkv(st, l);
			if (l >= 2) // the copies out of this buffer two layers ago are done
				CUCO_CUDA_TRY(cudaStreamWaitEvent(s, st->ev_free[l % 2], 0), st->ctx);
			if (kv_layer_head(st, t, l, buf, s))
				return 1;
			CUCO_CUDA_TRY(cudaEventRecord(st->ev_qkv, s), st->ctx);
			CUCO_CUDA_TRY(cudaStreamWaitEvent(st->side, st->ev_qkv, 0), st->ctx);
			if (kv_ce_pages(st, k, buf, l, 0, st->S, st->side))
				return 1;
			CUCO_CUDA_TRY(cudaEventRecord(st->ev_free[l % 2], st->side), st->ctx);
			if (kv_layer_tail(st, t, l, buf, s))
				return 1;
		}
		if (kv_finish(st, t, s))
			return 1;
		CUCO_CUDA_TRY(cudaEventRecord(st->ev_join, st->side), st->ctx);
		CUCO_CUDA_TRY(cudaStreamWaitEvent(s, st->ev_join, 0), st->ctx);
	}
	return kv_leave(st, s);
}

/* ce_bulk: every layer first (each layer's QKV output kept), then one transfer of every
 * layer's pages on the copy engine. */
static inline int kv_run_ce_bulk(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const kv_set *k = kv_set_get(st, t);
	if (!k || kv_enter(st, s))
		return 1;
	if (st->prefill) {
		for (long long l = 0; l < st->L; l++)
			if (kv_layer_head(st, t, l, kv_qkv(st, l), s) || kv_layer_tail(st, t, l, kv_qkv(st, l), s))
				return 1;
		if (kv_finish(st, t, s))
			return 1;
		for (long long l = 0; l < st->L; l++)
			if (kv_ce_pages(st, k, kv_qkv(st, l), l, 0, st->S, s))
				return 1;
	}
	return kv_leave(st, s);
}

/* compute alone: the prefill's layers, nothing sent (timing only). */
static inline int kv_run_compute(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	if (!st->prefill)
		return 0;
	for (long long l = 0; l < st->L; l++)
		if (kv_layer_head(st, t, l, st->qkv, s) || kv_layer_tail(st, t, l, st->qkv, s))
			return 1;
	return kv_finish(st, t, s);
}

/* comm alone on the copy engine: every layer's pages from one QKV buffer (timing only). */
static inline int kv_run_comm_ce(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const kv_set *k = kv_set_get(st, t);
	if (!k || kv_enter(st, s))
		return 1;
	for (long long l = 0; st->prefill && l < st->L; l++)
		if (kv_ce_pages(st, k, st->qkv, l, 0, st->S, s))
			return 1;
	return kv_leave(st, s);
}

/* comm alone as the host baseline moves it: pack, send / receive, scatter per layer (timing only). */
static inline int kv_run_comm_nccl(struct kv_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	for (long long l = 0; l < st->L; l++)
		if (kv_nccl_layer(st, t, st->qkv, l, s))
			return 1;
	return 0;
}

/*
 * One program: REQ is 0 (nothing), 1 (a devcomm: LSA barriers and peer addresses) or
 * 2 (the NCCL staging buffers in the scratch window); ALL 1 keeps every layer's QKV
 * output (else NBUF buffers).
 */
#define KV_PROGRAM(REQ, ALL, NBUF, body)                                                    \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                 \
						 struct cuco_requirements *req)              \
	{                                                                                   \
		if ((REQ) == 1)                                                             \
			cuco::require_lsa(req, CUCO_OVERLAP_BARRIERS);                      \
		if ((REQ) == 2)                                                             \
			req->scratch_bytes = kv_staging_bytes(ctx);                         \
		return 0;                                                                   \
	}                                                                                   \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)                   \
	{                                                                                   \
		return kv_init(ctx, out, ALL, NBUF);                                        \
	}                                                                                   \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s) \
	{                                                                                   \
		struct kv_state *st = (struct kv_state *)p;                                 \
		body;                                                                       \
	}                                                                                   \
	extern "C" void cuco_program_fini(void *p)                                           \
	{                                                                                   \
		kv_fini(p);                                                                 \
	}

#endif
