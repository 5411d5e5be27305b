// common.cuh - what gemm_allgather's peer and single-phase programs share:
// shape, this rank's block of C, and the two GEMMs (cuco's and cuBLAS's).
#ifndef GEMM_ALLGATHER_COMMON_CUH
#define GEMM_ALLGATHER_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/graph.cuh>

struct ga_state {
	struct cuco_ctx *ctx;
	long long M, N, K, Nr;
	cublasHandle_t blas; /* NULL unless the program uses cuBLAS */
	cuco::graph_cache graphs; /* programs that replay their run as a CUDA graph */
	void *ws;                 /* cuco's GEMM splits a short last wave with it */
	size_t ws_bytes;
};

static inline int ga_fail(struct ga_state *st, const char *what, const char *why)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, why);
	return 1;
}

static inline int ga_init(struct cuco_ctx *ctx, void **out, int use_cublas)
{
	struct ga_state *st = (struct ga_state *)calloc(1, sizeof(*st));

	if (!st)
		return 1;
	st->ctx = ctx;
	st->M = cuco_shape_get(ctx->shape, "M", 0);
	st->N = cuco_shape_get(ctx->shape, "N", 0);
	st->K = cuco_shape_get(ctx->shape, "K", 0);
	st->Nr = st->N / ctx->nranks;
	if (use_cublas && cublasCreate(&st->blas) != CUBLAS_STATUS_SUCCESS) {
		free(st);
		snprintf(ctx->errbuf, sizeof(ctx->errbuf), "cublasCreate failed");
		return 1;
	}
	*out = st;
	if (!use_cublas) {
		cudaError_t e = cuco::gemm_bf16_alone_workspace((int)st->M, (int)st->Nr, (int)st->K, 0,
								&st->ws, &st->ws_bytes);
		if (e != cudaSuccess)
			return ga_fail(st, "init: the GEMM's workspace", cudaGetErrorString(e));
	}
	return 0;
}

static inline void ga_fini(void *p)
{
	struct ga_state *st = (struct ga_state *)p;

	if (st->blas)
		cublasDestroy(st->blas);
	cuco::graph_cache_release(&st->graphs);
	cudaFree(st->ws);
	free(st);
}

/* This rank's block of the gathered C. */
static inline __nv_bfloat16 *ga_block(struct ga_state *st, const struct cuco_tensor *t, int rank)
{
	return (__nv_bfloat16 *)t[2].ptr + (size_t)rank * (size_t)(st->M * st->Nr);
}

static inline int ga_gemm_cuco(struct ga_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	cuco::gemm_bf16_args g = {(const __nv_bfloat16 *)t[0].ptr, (const __nv_bfloat16 *)t[1].ptr,
				  ga_block(st, t, st->ctx->rank), (int)st->M, (int)st->Nr,
				  (int)st->K, st->K, st->Nr, st->Nr};
	cudaError_t e = cuco::gemm_bf16(g, s, 0, st->ws, st->ws_bytes);

	return e == cudaSuccess ? 0 : ga_fail(st, "gemm", cudaGetErrorString(e));
}

/* Row-major C_r = A * B_r through column-major cuBLAS: C_r^T = B_r^T * A^T. */
static inline int ga_gemm_cublas(struct ga_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const float one = 1.0f, zero = 0.0f;
	cublasStatus_t r;

	cublasSetStream(st->blas, s);
	r = cublasGemmEx(st->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)st->Nr, (int)st->M, (int)st->K,
			 &one, t[1].ptr, CUDA_R_16BF, (int)st->Nr, t[0].ptr, CUDA_R_16BF,
			 (int)st->K, &zero, ga_block(st, t, st->ctx->rank), CUDA_R_16BF,
			 (int)st->Nr, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	return r == CUBLAS_STATUS_SUCCESS ? 0 : ga_fail(st, "cublasGemmEx", cublasGetStatusString(r));
}

static inline int ga_allgather_nccl(struct ga_state *st, const struct cuco_tensor *t,
				    cudaStream_t s)
{
	size_t chunk = (size_t)(st->M * st->Nr);
	ncclResult_t r = ncclAllGather(ga_block(st, t, st->ctx->rank), t[2].ptr, chunk,
				       ncclBfloat16, st->ctx->comm, s);

	return r == ncclSuccess ? 0 : ga_fail(st, "ncclAllGather", ncclGetErrorString(r));
}

#define GA_PROGRAM(use_cublas, body)                                                        \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                 \
						 struct cuco_requirements *req)              \
	{                                                                                   \
		(void)ctx;                                                                  \
		(void)req;                                                                  \
		return 0;                                                                   \
	}                                                                                   \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)                   \
	{                                                                                   \
		return ga_init(ctx, out, use_cublas);                                       \
	}                                                                                   \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s) \
	{                                                                                   \
		struct ga_state *st = (struct ga_state *)p;                                 \
		body;                                                                       \
	}                                                                                   \
	extern "C" void cuco_program_fini(void *p)                                           \
	{                                                                                   \
		ga_fini(p);                                                                 \
	}

#endif
