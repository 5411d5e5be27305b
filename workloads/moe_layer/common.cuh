// common.cuh - what moe_layer's baselines, peer and single-phase programs share:
// the program state (cuco_dev/moe.cuh's moe_prog), cuBLAS's grouped GEMM for the
// peer, and the exact-size exchange as one NCCL group of sends and receives.
#ifndef MOE_LAYER_COMMON_CUH
#define MOE_LAYER_COMMON_CUH

#define CUCO_GEMM_SPLIT 0 // grouped launches only: the GEMM's split kernels stay out of the build
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/launch.cuh>
#include <cuco_dev/moe.cuh>

struct moe_state {
	cuco::moe_prog m;
	cublasHandle_t blas; // NULL unless the program computes with cuBLAS
	// cuBLAS grouped GEMM: per tensor set, device arrays of the problems' pointers
	int nblas;
	struct {
		const void *wgu;
		void **dev; // [6][EL]: up A, B, C, down A, B, C
	} bsets[CUCO_MOE_MAX_SETS];
};

static inline int moe_state_init(struct cuco_ctx *ctx, void **out, int layout, int use_cublas)
{
	struct moe_state *st = (struct moe_state *)calloc(1, sizeof(*st));

	if (!st)
		return 1;
	*out = st;
	if (cuco::moe_prog_init(ctx, &st->m, layout))
		return 1;
	if (use_cublas && cublasCreate(&st->blas) != CUBLAS_STATUS_SUCCESS) {
		CUCO_ERRF(ctx, "cublasCreate failed");
		return 1;
	}
	return 0;
}

static inline void moe_state_fini(void *p)
{
	struct moe_state *st = (struct moe_state *)p;

	if (!st)
		return;
	if (st->blas)
		cublasDestroy(st->blas);
	for (int i = 0; i < st->nblas; i++)
		cudaFree(st->bsets[i].dev);
	cuco::moe_prog_release(&st->m);
	free(st);
}

/*
 * cuBLAS's grouped GEMM (cublasGemmGroupedBatchedEx) over every local expert's whole
 * slot, up, SwiGLU, down: one group per expert with tokens, row-major through
 * column-major (C^T = B^T A^T), fp32 accumulation. The peer's compute.
 */
static inline int moe_experts_cublas(struct moe_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	cuco::moe_prog *m = &st->m;
	int EL = m->EL, n = 0, idx = -1;
	int mm[CUCO_MOE_MAX_LOCAL], nn[2][CUCO_MOE_MAX_LOCAL], kk[2][CUCO_MOE_MAX_LOCAL], one[CUCO_MOE_MAX_LOCAL];
	float alpha[CUCO_MOE_MAX_LOCAL], beta[CUCO_MOE_MAX_LOCAL];
	cublasOperation_t op[CUCO_MOE_MAX_LOCAL];
	cuco::moe_segs sg;

	for (int i = 0; i < st->nblas; i++)
		if (st->bsets[i].wgu == t[3].ptr)
			idx = i;
	if (idx < 0) { // the problems' pointers, experts with tokens only, in device memory
		void *h[6 * CUCO_MOE_MAX_LOCAL];
		if (st->nblas >= CUCO_MOE_MAX_SETS) {
			CUCO_ERRF(m->ctx, "moe_layer: more than %d tensor sets", CUCO_MOE_MAX_SETS);
			return 1;
		}
		for (int le = 0, j = 0; le < EL; le++) {
			if (m->p.m[le] == 0)
				continue;
			h[0 * EL + j] = (void *)((const __nv_bfloat16 *)t[3].ptr + (size_t)le * m->H * 2 * m->I);
			h[1 * EL + j] = cuco::moe_slot_row(m, m->X, m->H, le, 0);
			h[2 * EL + j] = cuco::moe_slot_row(m, m->G, 2 * m->I, le, 0);
			h[3 * EL + j] = (void *)((const __nv_bfloat16 *)t[4].ptr + (size_t)le * m->I * m->H);
			h[4 * EL + j] = cuco::moe_slot_row(m, m->Hb, m->I, le, 0);
			h[5 * EL + j] = cuco::moe_slot_row(m, m->Y, m->H, le, 0);
			j++;
		}
		idx = st->nblas;
		st->bsets[idx].wgu = t[3].ptr;
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->bsets[idx].dev, sizeof(void *) * 6 * EL), m->ctx);
		CUCO_CUDA_TRY(cudaMemcpy(st->bsets[idx].dev, h, sizeof(void *) * 6 * EL, cudaMemcpyHostToDevice),
			      m->ctx);
		st->nblas++;
	}
	void **d = st->bsets[idx].dev;
	sg.n = 0;
	for (int le = 0; le < EL; le++) {
		if (m->p.m[le] == 0)
			continue;
		mm[n] = m->p.m[le];
		nn[0][n] = 2 * m->I; // up: N = 2I, K = H
		kk[0][n] = m->H;
		nn[1][n] = m->H; // down: N = H, K = I
		kk[1][n] = m->I;
		one[n] = 1;
		alpha[n] = 1.f;
		beta[n] = 0.f;
		op[n] = CUBLAS_OP_N;
		cuco::moe_segs_add(&sg, cuco::moe_slot_row(m, m->G, 2 * m->I, le, 0),
				   cuco::moe_slot_row(m, m->Hb, m->I, le, 0), mm[n]);
		n++;
	}
	if (n == 0)
		return 0;
	cublasSetStream(st->blas, s);
	for (int g = 0; g < 2; g++) {
		cublasStatus_t r = cublasGemmGroupedBatchedEx(
			st->blas, op, op, nn[g], mm, kk[g], alpha, (const void *const *)(d + (3 * g + 0) * EL),
			CUDA_R_16BF, nn[g], (const void *const *)(d + (3 * g + 1) * EL), CUDA_R_16BF, kk[g], beta,
			d + (3 * g + 2) * EL, CUDA_R_16BF, nn[g], n, one, CUBLAS_COMPUTE_32F);
		if (r != CUBLAS_STATUS_SUCCESS) {
			CUCO_ERRF(m->ctx, "cublasGemmGroupedBatchedEx: %s", cublasGetStatusString(r));
			return 1;
		}
		if (g == 0) {
			cuco::moe_swiglu_kernel<<<dim3(264 / sg.n + 1, sg.n), 512, 0, s>>>(sg, m->I);
			CUCO_LAUNCH_TRY(m->ctx);
		}
	}
	return 0;
}

/* Everything before the dispatch: slot ranks, then the tokens permuted into sendb. */
static inline int moe_before_dispatch(struct moe_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	cuco::moe_prog *m = &st->m;

	if (cuco::moe_ranks(m, t, s))
		return 1;
	return cuco::moe_permute(m, t, cuco::moe_send_bases(m, m->sendb), 264, s);
}

/*
 * The exact-size exchange (all-to-all-v) as one group: send buffer `from` in send
 * layout (combine: by source) to `to`. dispatch 1: from sendb to recvb; 0: the combine,
 * recvb (rows by source) back to sendb (rows by destination).
 */
static inline int moe_exchange_exact(struct moe_state *st, int dispatch, cudaStream_t s)
{
	cuco::moe_prog *m = &st->m;
	const cuco_moe_plan *p = &m->p;
	size_t rb = m->row_bytes, mine = (size_t)p->region_rows[m->me];

	CUCO_NCCL_TRY(ncclGroupStart(), m->ctx);
	for (int q = 0; q < m->R; q++) {
		size_t theirs = (size_t)p->region_rows[q];
		char *by_dst = m->sendb + (size_t)p->region_off[q] * rb; // region for rank q
		char *by_src = m->recvb + (size_t)q * mine * rb;          // block from rank q
		if (dispatch) {
			CUCO_NCCL_TRY(ncclSend(by_dst, theirs * m->H, ncclBfloat16, q, m->ctx->comm, s), m->ctx);
			CUCO_NCCL_TRY(ncclRecv(by_src, mine * m->H, ncclBfloat16, q, m->ctx->comm, s), m->ctx);
		} else {
			CUCO_NCCL_TRY(ncclSend(by_src, mine * m->H, ncclBfloat16, q, m->ctx->comm, s), m->ctx);
			CUCO_NCCL_TRY(ncclRecv(by_dst, theirs * m->H, ncclBfloat16, q, m->ctx->comm, s), m->ctx);
		}
	}
	CUCO_NCCL_TRY(ncclGroupEnd(), m->ctx);
	return 0;
}

#define MOE_PROGRAM(layout, use_cublas, body)                                                \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                  \
						 struct cuco_requirements *req)               \
	{                                                                                    \
		return cuco::moe_requirements(ctx, layout, req, 0);                          \
	}                                                                                    \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)                    \
	{                                                                                    \
		return moe_state_init(ctx, out, layout, use_cublas);                         \
	}                                                                                    \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s) \
	{                                                                                    \
		struct moe_state *st = (struct moe_state *)p;                                \
		cuco::moe_prog *m = &st->m;                                                  \
		if (!m->ctx)                                                                 \
			return 1;                                                            \
		body;                                                                        \
	}                                                                                    \
	extern "C" void cuco_program_fini(void *p)                                            \
	{                                                                                    \
		moe_state_fini(p);                                                           \
	}

#endif
