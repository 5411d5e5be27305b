// common.cuh - what attention_cp's peer and single-phase programs share: the
// shape, the ring's receive slots and the gathered K, V in the scratch window,
// one ring step's exchange through host NCCL, the attention of the local
// queries against one rank's block with its LSE merge, and the all-gather
// peer's reordering of the gathered blocks into sequence order.
#ifndef ATTENTION_CP_COMMON_CUH
#define ATTENTION_CP_COMMON_CUH

#include <cuda_bf16.h>
#include <math.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/attention.cuh>
#include <cuco_dev/zigzag.cuh>

enum { CP_Q, CP_K, CP_V, CP_O, CP_LSE };

struct cp_state {
	struct cuco_ctx *ctx;
	int B, H, Hkv, D, causal, parts, R, me;
	long long S, Sl;
	size_t kv_elems;           /* one rank's K (or V) block */
	__nv_bfloat16 *slot[2][2]; /* ring: receive slots [step % 2][K, V] in the scratch window */
	__nv_bfloat16 *gk, *gv;    /* all-gather: every rank's K, V blocks, rank-major (scratch) */
	__nv_bfloat16 *fk, *fv;    /* all-gather: K, V [B, Hkv, S, D] in sequence order (scratch) */
	__nv_bfloat16 *o_part;     /* a partial O and LSE before their merge */
	float *lse_part;
};

static inline int cp_fail(struct cp_state *st, const char *what, const char *why)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, why);
	return 1;
}

static inline size_t cp_kv_elems(const struct cuco_ctx *ctx)
{
	return (size_t)(cuco_shape_get(ctx->shape, "B", 0) * cuco_shape_get(ctx->shape, "Hkv", 0) *
			(cuco_shape_get(ctx->shape, "S", 0) / ctx->nranks) * cuco_shape_get(ctx->shape, "D", 0));
}

/* gathered: the all-gather peer's 4 whole-sequence buffers; else the ring's 4 slots. */
static inline int cp_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req, int gathered)
{
	req->scratch_bytes = cp_kv_elems(ctx) * 4 * (gathered ? ctx->nranks : 1) * sizeof(__nv_bfloat16);
	return 0;
}

static inline int cp_init(struct cuco_ctx *ctx, void **out, int gathered)
{
	struct cp_state *st = (struct cp_state *)calloc(1, sizeof(*st));
	__nv_bfloat16 *scr = (__nv_bfloat16 *)ctx->scratch;
	cudaError_t e;

	if (!st)
		return 1;
	*out = st;
	st->ctx = ctx;
	st->B = (int)cuco_shape_get(ctx->shape, "B", 0);
	st->H = (int)cuco_shape_get(ctx->shape, "H", 0);
	st->Hkv = (int)cuco_shape_get(ctx->shape, "Hkv", 0);
	st->S = cuco_shape_get(ctx->shape, "S", 0);
	st->D = (int)cuco_shape_get(ctx->shape, "D", 0);
	st->causal = cuco_shape_get(ctx->shape, "mask", 1) == 2;
	st->parts = (int)cuco_shape_get(ctx->shape, "parts", 1);
	st->R = ctx->nranks;
	st->me = ctx->rank;
	st->Sl = st->S / st->R;
	st->kv_elems = cp_kv_elems(ctx);
	if (!scr)
		return cp_fail(st, "init", "no scratch window");
	if (gathered) {
		size_t all = st->kv_elems * (size_t)st->R;
		st->gk = scr;
		st->gv = scr + all;
		st->fk = scr + 2 * all;
		st->fv = scr + 3 * all;
	} else {
		for (int i = 0; i < 4; i++)
			st->slot[i / 2][i % 2] = scr + (size_t)i * st->kv_elems;
	}
	e = cudaMalloc((void **)&st->o_part, (size_t)st->B * st->H * st->Sl * st->D * sizeof(__nv_bfloat16));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&st->lse_part, (size_t)st->B * st->H * st->Sl * sizeof(float));
	return e == cudaSuccess ? 0 : cp_fail(st, "init: partial O and LSE", cudaGetErrorString(e));
}

static inline void cp_fini(void *p)
{
	struct cp_state *st = (struct cp_state *)p;

	if (!st)
		return;
	cudaFree(st->o_part);
	cudaFree(st->lse_part);
	free(st);
}

/* Arguments of one attention call: local query rows [q_row0, +q_rows) against rows
 * [k_row0, +k_rows) of K and V, whose heads are k_hs apart, into o / lse. */
static inline cuco::attention_args cp_args(const struct cp_state *st, const struct cuco_tensor *t,
					   const struct cuco_cp_call *c, const __nv_bfloat16 *K,
					   const __nv_bfloat16 *V, long long k_hs, __nv_bfloat16 *o,
					   float *lse)
{
	cuco::attention_args a;
	long long D = st->D;

	a.q = (const __nv_bfloat16 *)t[CP_Q].ptr + c->q_row0 * D;
	a.k = K + c->k_row0 * D;
	a.v = V + c->k_row0 * D;
	a.o = o + c->q_row0 * D;
	a.lse = lse + c->q_row0;
	a.q_bs = a.o_bs = (long long)st->H * st->Sl * D;
	a.q_hs = a.o_hs = st->Sl * D;
	a.k_hs = a.v_hs = k_hs;
	a.k_bs = a.v_bs = (long long)st->Hkv * k_hs;
	a.lse_bs = (long long)st->H * st->Sl;
	a.lse_hs = st->Sl;
	a.B = st->B;
	a.Hq = st->H;
	a.Hkv = st->Hkv;
	a.Sq = (int)c->q_rows;
	a.Sk = (int)c->k_rows;
	a.D = st->D;
	a.scale = 1.0f / sqrtf((float)st->D);
	a.causal = c->causal;
	a.q_pos0 = c->q_pos0;
	a.k_pos0 = c->k_pos0;
	return a;
}

/*
 * Attend the local queries to the block (Kb, Vb) of rank src: the calls of
 * cuco_cp_step_calls, each straight into O and LSE where its query rows have no
 * result yet (written[part]), else into the partials and merged.
 */
static inline int cp_attend(struct cp_state *st, const struct cuco_tensor *t, const __nv_bfloat16 *Kb,
			    const __nv_bfloat16 *Vb, int src, int *written, cudaStream_t s)
{
	struct cuco_cp_call calls[CUCO_CP_MAX_CALLS];
	int n = cuco_cp_step_calls(st->S, st->R, st->parts, st->me, src, st->causal, calls);
	long long L = st->Sl / st->parts;
	__nv_bfloat16 *O = (__nv_bfloat16 *)t[CP_O].ptr;
	float *LSE = (float *)t[CP_LSE].ptr;

	for (int i = 0; i < n; i++) {
		const struct cuco_cp_call *c = &calls[i];
		int p0 = (int)(c->q_row0 / L), p1 = (int)((c->q_row0 + c->q_rows) / L);
		int direct = !written[p0];
		cuco::attention_args a =
		    cp_args(st, t, c, Kb, Vb, st->Sl * st->D, direct ? O : st->o_part, direct ? LSE : st->lse_part);
		cudaError_t e = cuco::attention_fwd_bf16(a, s);
		if (e != cudaSuccess)
			return cp_fail(st, "attention_fwd_bf16", cudaGetErrorString(e));
		if (!direct) {
			a.o = O + c->q_row0 * st->D;
			a.lse = LSE + c->q_row0;
			e = cuco::attention_merge_bf16(a, st->o_part + c->q_row0 * st->D, st->lse_part + c->q_row0, s);
			if (e != cudaSuccess)
				return cp_fail(st, "attention_merge_bf16", cudaGetErrorString(e));
		}
		for (int p = p0; p < p1; p++)
			written[p] = 1;
	}
	return 0;
}

/* Ring step `step`'s exchange: the block (k, v) held to the next rank, the previous
 * rank's into slot step % 2. */
static inline int cp_exchange(struct cp_state *st, int step, const __nv_bfloat16 *k, const __nv_bfloat16 *v,
			      cudaStream_t s)
{
	int next = (st->me + 1) % st->R, prev = (st->me + st->R - 1) % st->R;
	ncclComm_t comm = st->ctx->comm;
	ncclResult_t r = ncclGroupStart();

	if (r == ncclSuccess)
		r = ncclSend(k, st->kv_elems, ncclBfloat16, next, comm, s);
	if (r == ncclSuccess)
		r = ncclSend(v, st->kv_elems, ncclBfloat16, next, comm, s);
	if (r == ncclSuccess)
		r = ncclRecv(st->slot[step % 2][0], st->kv_elems, ncclBfloat16, prev, comm, s);
	if (r == ncclSuccess)
		r = ncclRecv(st->slot[step % 2][1], st->kv_elems, ncclBfloat16, prev, comm, s);
	ncclResult_t g = ncclGroupEnd();
	if (r == ncclSuccess)
		r = g;
	return r == ncclSuccess ? 0 : cp_fail(st, "ring exchange", ncclGetErrorString(r));
}

/* The ring: R - 1 exchanges (exchange = 1) and R attentions (attend = 1), in the
 * baseline's order on one stream. compute alone attends to its own block R times
 * with each step's positions; comm alone only exchanges. */
static inline int cp_ring(struct cp_state *st, const struct cuco_tensor *t, int exchange, int attend,
			  cudaStream_t s)
{
	const __nv_bfloat16 *k = (const __nv_bfloat16 *)t[CP_K].ptr, *v = (const __nv_bfloat16 *)t[CP_V].ptr;
	int written[2] = {0, 0};

	for (int step = 0; step < st->R; step++) {
		if (exchange && step < st->R - 1 && cp_exchange(st, step, k, v, s))
			return 1;
		if (attend && cp_attend(st, t, k, v, (st->me + st->R - step) % st->R, written, s))
			return 1;
		if (exchange) {
			k = st->slot[step % 2][0];
			v = st->slot[step % 2][1];
		}
	}
	return 0;
}

/* Gathered rank-major blocks [R][B][Hkv][Sl][D] -> [B][Hkv][S][D] in sequence order,
 * 16 bytes per thread. */
static __global__ void cp_reorder_kernel(const __nv_bfloat16 *g, __nv_bfloat16 *f, int B, int Hkv, long long S,
					 int R, int parts, int D)
{
	const long long Sl = S / R, vec = D / 8, n = (long long)R * B * Hkv * Sl * vec;

	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n;
	     e += (long long)gridDim.x * blockDim.x) {
		long long c = e % vec, row = (e / vec) % Sl, bh = (e / vec / Sl) % ((long long)B * Hkv);
		int q = (int)(e / vec / Sl / ((long long)B * Hkv));
		long long pos = cuco_cp_pos(S, R, parts, q, row);
		((uint4 *)f)[(bh * S + pos) * vec + c] = ((const uint4 *)g)[e];
	}
}

/*
 * The all-gather peer (TransformerEngine's all-gather context parallelism): gather
 * every rank's K and V, put them in sequence order, then attend the local queries
 * to the whole sequence at once: one call without a mask; causal, one call per
 * query chunk against the keys up to its end.
 */
static inline int cp_allgather_attend(struct cp_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	ncclComm_t comm = st->ctx->comm;
	ncclResult_t r = ncclGroupStart();

	if (r == ncclSuccess)
		r = ncclAllGather(t[CP_K].ptr, st->gk, st->kv_elems, ncclBfloat16, comm, s);
	if (r == ncclSuccess)
		r = ncclAllGather(t[CP_V].ptr, st->gv, st->kv_elems, ncclBfloat16, comm, s);
	ncclResult_t g = ncclGroupEnd();
	if (r == ncclSuccess)
		r = g;
	if (r != ncclSuccess)
		return cp_fail(st, "ncclAllGather", ncclGetErrorString(r));
	cp_reorder_kernel<<<1056, 256, 0, s>>>(st->gk, st->fk, st->B, st->Hkv, st->S, st->R, st->parts, st->D);
	cp_reorder_kernel<<<1056, 256, 0, s>>>(st->gv, st->fv, st->B, st->Hkv, st->S, st->R, st->parts, st->D);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return cp_fail(st, "reorder", cudaGetErrorString(e));
	long long L = st->Sl / st->parts;
	int ncall = st->causal ? st->parts : 1;
	for (int a = 0; a < ncall; a++) {
		long long q0 = cuco_cp_pos0(st->S, st->R, st->parts, st->me, a);
		struct cuco_cp_call c = {st->causal ? a * L : 0, st->causal ? L : st->Sl, 0,
					 st->causal ? q0 + L : st->S, q0, 0, st->causal};
		cuco::attention_args x = cp_args(st, t, &c, st->fk, st->fv, st->S * st->D,
						 (__nv_bfloat16 *)t[CP_O].ptr, (float *)t[CP_LSE].ptr);
		e = cuco::attention_fwd_bf16(x, s);
		if (e != cudaSuccess)
			return cp_fail(st, "attention_fwd_bf16", cudaGetErrorString(e));
	}
	return 0;
}

#define CP_PROGRAM(gathered, body)                                                          \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                 \
						 struct cuco_requirements *req)              \
	{                                                                                   \
		return cp_requirements(ctx, req, gathered);                                 \
	}                                                                                   \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)                   \
	{                                                                                   \
		return cp_init(ctx, out, gathered);                                         \
	}                                                                                   \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s) \
	{                                                                                   \
		struct cp_state *st = (struct cp_state *)p;                                 \
		body;                                                                       \
	}                                                                                   \
	extern "C" void cuco_program_fini(void *p)                                           \
	{                                                                                   \
		cp_fini(p);                                                                 \
	}

#endif
