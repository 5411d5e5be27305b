// host.cu - allgather_gemm as users write it today: a host-launched
// ncclAllGather of every rank's row shard of A into a gathered A (a scratch
// buffer: symmetric memory from the harness, so the fast path can replace the
// collective with an LSA kernel), then the workload's own tensor-core GEMM
// C = A_all * B. The baseline, and the fast path's input.
#include <cuda_bf16.h>
#include <nccl.h>
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

struct state {
	struct cuco_ctx *ctx;
	long long M, N, K, Mr;
	void *ws; /* lets the GEMM split a short last wave (gemm_bf16_alone_split) */
	size_t ws_bytes;
};

// The gathered A[M, K] lives in the scratch window.
extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	long long M = cuco_shape_get(ctx->shape, "M", 0), K = cuco_shape_get(ctx->shape, "K", 0);

	req->scratch_bytes = (size_t)(M * K) * sizeof(__nv_bfloat16);
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	struct state *st = (struct state *)calloc(1, sizeof(*st));

	if (!st)
		return 1;
	st->ctx = ctx;
	st->M = cuco_shape_get(ctx->shape, "M", 0);
	st->N = cuco_shape_get(ctx->shape, "N", 0);
	st->K = cuco_shape_get(ctx->shape, "K", 0);
	st->Mr = st->M / ctx->nranks;
	*out = st;
	cudaError_t e = cuco::gemm_bf16_alone_workspace((int)st->M, (int)st->N, (int)st->K, 0, &st->ws,
							&st->ws_bytes);
	if (e != cudaSuccess) {
		snprintf(ctx->errbuf, sizeof(ctx->errbuf), "gemm workspace: %s", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct state *st = (struct state *)p;
	const __nv_bfloat16 *A = (const __nv_bfloat16 *)tensors[0].ptr;
	const __nv_bfloat16 *B = (const __nv_bfloat16 *)tensors[1].ptr;
	__nv_bfloat16 *C = (__nv_bfloat16 *)tensors[2].ptr;
	__nv_bfloat16 *A_all = (__nv_bfloat16 *)st->ctx->scratch;
	size_t shard = (size_t)(st->Mr * st->K);

	NCCLCHECK(ncclAllGather(A, A_all, shard, ncclBfloat16, st->ctx->comm, stream));
	cuco::gemm_bf16_args g = {A_all, B, C, (int)st->M, (int)st->N, (int)st->K, st->K, st->N, st->N};
	cudaError_t e = cuco::gemm_bf16(g, stream, 0, st->ws, st->ws_bytes);

	if (e != cudaSuccess) {
		snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "gemm: %s", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}

extern "C" void cuco_program_fini(void *p)
{
	cudaFree(((struct state *)p)->ws);
	free(p);
}
