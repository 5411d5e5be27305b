// host.cu - attention_cp as users write it today: ring attention on one
// stream. R - 1 ring steps, each a grouped ncclSend (the K, V block held ->
// the next rank) / ncclRecv (<- the previous rank) into a receive slot in the
// scratch window, then the attention of the local queries against the block
// held and an online-softmax (LSE) merge into O; a last attention without
// exchange. Two receive slots alternate, so a step never receives into the
// block it reads. The baseline, and the fast path's input (the receive slots
// are symmetric memory from the harness, so its LSA kernel can write them).
#include <cuda_bf16.h>
#include <math.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/attention.cuh>
#include <cuco_dev/zigzag.cuh>

#define NCCLCHECK(call)                                                                     \
	do {                                                                                \
		ncclResult_t r_ = (call);                                                   \
		if (r_ != ncclSuccess) {                                                    \
			snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", #call,   \
				 ncclGetErrorString(r_));                                   \
			return 1;                                                           \
		}                                                                           \
	} while (0)

struct state {
	struct cuco_ctx *ctx;
	int B, H, Hkv, D, causal, parts, R, me;
	long long S, Sl;
	size_t kv_elems;            /* one rank's K (or V) block */
	__nv_bfloat16 *slot[2][2];  /* receive slots [step % 2][K, V] in the scratch window */
	__nv_bfloat16 *o_part;      /* a partial O and LSE before their merge */
	float *lse_part;
};

static int fail(struct state *st, const char *what, cudaError_t e)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, cudaGetErrorString(e));
	return 1;
}

// Two receive slots of K and V.
extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	long long kv = cuco_shape_get(ctx->shape, "B", 0) * cuco_shape_get(ctx->shape, "Hkv", 0) *
		       cuco_shape_get(ctx->shape, "S", 0) / ctx->nranks * cuco_shape_get(ctx->shape, "D", 0);

	req->scratch_bytes = (size_t)kv * 4 * sizeof(__nv_bfloat16);
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	struct state *st = (struct state *)calloc(1, sizeof(*st));
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
	st->kv_elems = (size_t)st->B * st->Hkv * st->Sl * st->D;
	for (int i = 0; i < 4; i++)
		st->slot[i / 2][i % 2] = (__nv_bfloat16 *)ctx->scratch + (size_t)i * st->kv_elems;
	e = cudaMalloc((void **)&st->o_part, (size_t)st->B * st->H * st->Sl * st->D * sizeof(__nv_bfloat16));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&st->lse_part, (size_t)st->B * st->H * st->Sl * sizeof(float));
	return e == cudaSuccess ? 0 : fail(st, "init: partial O and LSE", e);
}

/*
 * Attend the local queries to the block (Kb, Vb) of rank src: the calls of
 * cuco_cp_step_calls, each straight into O and LSE where its query rows have
 * no result yet (written[part]), else into the partials and merged.
 */
static int attend(struct state *st, const struct cuco_tensor *t, const __nv_bfloat16 *Kb,
		  const __nv_bfloat16 *Vb, int src, int *written, cudaStream_t s)
{
	struct cuco_cp_call calls[CUCO_CP_MAX_CALLS];
	int n = cuco_cp_step_calls(st->S, st->R, st->parts, st->me, src, st->causal, calls);
	long long L = st->Sl / st->parts, D = st->D;
	__nv_bfloat16 *O = (__nv_bfloat16 *)t[3].ptr;
	float *LSE = (float *)t[4].ptr;

	for (int i = 0; i < n; i++) {
		const struct cuco_cp_call *c = &calls[i];
		int p0 = (int)(c->q_row0 / L), p1 = (int)((c->q_row0 + c->q_rows) / L);
		int direct = !written[p0];
		cuco::attention_args a;
		a.q = (const __nv_bfloat16 *)t[0].ptr + c->q_row0 * D;
		a.k = Kb + c->k_row0 * D;
		a.v = Vb + c->k_row0 * D;
		a.o = (direct ? O : st->o_part) + c->q_row0 * D;
		a.lse = (direct ? LSE : st->lse_part) + c->q_row0;
		a.q_bs = a.o_bs = (long long)st->H * st->Sl * D;
		a.q_hs = a.o_hs = a.k_hs = a.v_hs = st->Sl * D;
		a.k_bs = a.v_bs = (long long)st->Hkv * st->Sl * D;
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
		cudaError_t e = cuco::attention_fwd_bf16(a, s);
		if (e != cudaSuccess)
			return fail(st, "attention_fwd_bf16", e);
		if (!direct) {
			a.o = O + c->q_row0 * D;
			a.lse = LSE + c->q_row0;
			e = cuco::attention_merge_bf16(a, st->o_part + c->q_row0 * D, st->lse_part + c->q_row0, s);
			if (e != cudaSuccess)
				return fail(st, "attention_merge_bf16", e);
		}
		for (int p = p0; p < p1; p++)
			written[p] = 1;
	}
	return 0;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct state *st = (struct state *)p;
	const __nv_bfloat16 *k = (const __nv_bfloat16 *)tensors[1].ptr;
	const __nv_bfloat16 *v = (const __nv_bfloat16 *)tensors[2].ptr;
	int next = (st->me + 1) % st->R, prev = (st->me + st->R - 1) % st->R;
	int written[2] = {0, 0};

	for (int step = 0; step < st->R; step++) {
		__nv_bfloat16 *rk = st->slot[step % 2][0], *rv = st->slot[step % 2][1];
		if (step < st->R - 1) {
			NCCLCHECK(ncclGroupStart());
			NCCLCHECK(ncclSend(k, st->kv_elems, ncclBfloat16, next, st->ctx->comm, stream));
			NCCLCHECK(ncclSend(v, st->kv_elems, ncclBfloat16, next, st->ctx->comm, stream));
			NCCLCHECK(ncclRecv(rk, st->kv_elems, ncclBfloat16, prev, st->ctx->comm, stream));
			NCCLCHECK(ncclRecv(rv, st->kv_elems, ncclBfloat16, prev, st->ctx->comm, stream));
			NCCLCHECK(ncclGroupEnd());
		}
		// the block held came from rank me - step
		if (attend(st, tensors, k, v, (st->me + st->R - step) % st->R, written, stream))
			return 1;
		k = rk;
		v = rv;
	}
	return 0;
}

extern "C" void cuco_program_fini(void *p)
{
	struct state *st = (struct state *)p;

	cudaFree(st->o_part);
	cudaFree(st->lse_part);
	free(st);
}
