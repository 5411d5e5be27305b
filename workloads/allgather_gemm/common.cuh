// common.cuh - what allgather_gemm's peer and single-phase programs share:
// shape, the gathered A in the scratch window, the all-gather into it and the
// two GEMMs over it (cuco's and cuBLAS's).
#ifndef ALLGATHER_GEMM_COMMON_CUH
#define ALLGATHER_GEMM_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>

struct ag_state {
	struct cuco_ctx *ctx;
	long long M, N, K, Mr;
	__nv_bfloat16 *A_all; /* [M, K] in ctx->scratch; shard q at rows q*Mr */
	cublasHandle_t blas;  /* NULL unless the program uses cuBLAS */
	void *ws;             /* cuco's GEMM splits a short last wave with it */
	size_t ws_bytes;
};

static inline int ag_fail(struct ag_state *st, const char *what, const char *why)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, why);
	return 1;
}

static inline int ag_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	long long M = cuco_shape_get(ctx->shape, "M", 0), K = cuco_shape_get(ctx->shape, "K", 0);

	req->scratch_bytes = (size_t)(M * K) * sizeof(__nv_bfloat16);
	return 0;
}

/*
 * prefill: copy this rank's shard of input set 0 into every slot of A_all, so
 * a GEMM-only program multiplies real data (an all-zero A lets the tensor
 * cores draw less power and clock higher: the compute bound would be too
 * optimistic). Programs that gather overwrite A_all every run anyway.
 */
static inline int ag_init(struct cuco_ctx *ctx, void **out, int use_cublas, int prefill)
{
	struct ag_state *st = (struct ag_state *)calloc(1, sizeof(*st));

	if (!st)
		return 1;
	*out = st;
	st->ctx = ctx;
	st->M = cuco_shape_get(ctx->shape, "M", 0);
	st->N = cuco_shape_get(ctx->shape, "N", 0);
	st->K = cuco_shape_get(ctx->shape, "K", 0);
	st->Mr = st->M / ctx->nranks;
	st->A_all = (__nv_bfloat16 *)ctx->scratch;
	if (st->A_all == NULL)
		return ag_fail(st, "init", "no scratch window for the gathered A");
	if (use_cublas && cublasCreate(&st->blas) != CUBLAS_STATUS_SUCCESS)
		return ag_fail(st, "init", "cublasCreate failed");
	if (!use_cublas) {
		cudaError_t e = cuco::gemm_bf16_alone_workspace((int)st->M, (int)st->N, (int)st->K, 0,
								&st->ws, &st->ws_bytes);
		if (e != cudaSuccess)
			return ag_fail(st, "init: the GEMM's workspace", cudaGetErrorString(e));
	}
	for (int q = 0; prefill && q < ctx->nranks; q++) {
		size_t bytes = (size_t)(st->Mr * st->K) * sizeof(__nv_bfloat16);
		cudaError_t e = cudaMemcpy((char *)st->A_all + (size_t)q * bytes, ctx->tensors[0].ptr,
					   bytes, cudaMemcpyDeviceToDevice);
		if (e != cudaSuccess)
			return ag_fail(st, "init: prefill A_all", cudaGetErrorString(e));
	}
	return 0;
}

static inline void ag_fini(void *p)
{
	struct ag_state *st = (struct ag_state *)p;

	if (!st)
		return;
	if (st->blas)
		cublasDestroy(st->blas);
	cudaFree(st->ws);
	free(st);
}

static inline int ag_allgather_nccl(struct ag_state *st, const struct cuco_tensor *t,
				    cudaStream_t s)
{
	ncclResult_t r = ncclAllGather(t[0].ptr, st->A_all, (size_t)(st->Mr * st->K), ncclBfloat16,
				       st->ctx->comm, s);

	return r == ncclSuccess ? 0 : ag_fail(st, "ncclAllGather", ncclGetErrorString(r));
}

static inline int ag_gemm_cuco(struct ag_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	cuco::gemm_bf16_args g = {st->A_all, (const __nv_bfloat16 *)t[1].ptr,
				  (__nv_bfloat16 *)t[2].ptr, (int)st->M, (int)st->N, (int)st->K,
				  st->K, st->N, st->N};
	cudaError_t e = cuco::gemm_bf16(g, s, 0, st->ws, st->ws_bytes);

	return e == cudaSuccess ? 0 : ag_fail(st, "gemm", cudaGetErrorString(e));
}

/* Row-major C = A_all * B through column-major cuBLAS: C^T = B^T * A_all^T. */
static inline int ag_gemm_cublas(struct ag_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const float one = 1.0f, zero = 0.0f;
	cublasStatus_t r;

	cublasSetStream(st->blas, s);
	r = cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)st->N, (int)st->M, (int)st->K,
			 &one, t[1].ptr, CUDA_R_16BF, (int)st->N, st->A_all, CUDA_R_16BF,
			 (int)st->K, &zero, t[2].ptr, CUDA_R_16BF, (int)st->N, CUBLAS_COMPUTE_32F,
			 CUBLAS_GEMM_DEFAULT);
	return r == CUBLAS_STATUS_SUCCESS ? 0 : ag_fail(st, "cublasGemmEx", cublasGetStatusString(r));
}

#define AG_PROGRAM(use_cublas, prefill, body)                                               \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                 \
						 struct cuco_requirements *req)              \
	{                                                                                   \
		return ag_requirements(ctx, req);                                           \
	}                                                                                   \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)                   \
	{                                                                                   \
		return ag_init(ctx, out, use_cublas, prefill);                              \
	}                                                                                   \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s) \
	{                                                                                   \
		struct ag_state *st = (struct ag_state *)p;                                 \
		body;                                                                       \
	}                                                                                   \
	extern "C" void cuco_program_fini(void *p)                                           \
	{                                                                                   \
		ag_fini(p);                                                                 \
	}

#endif
