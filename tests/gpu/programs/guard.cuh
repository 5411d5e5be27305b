// guard.cuh - shared body of the programs that try to gain fitness without doing
// the work (tests/gpu/guards.sh runs them with --ranks 1 on gemm_allgather: C = A B).
// Each computes the right C somewhere; the harness must refuse each in its own way
// (docs/sandbox.md, "What the harness guarantees").
#ifndef CUCO_TEST_PROGRAMS_GUARD_CUH
#define CUCO_TEST_PROGRAMS_GUARD_CUH
#include <cuco/program.h>
#include <cuco_dev/reference.cuh>
#include <cuco_dev/workload.cuh>

struct gp_state {
	struct cuco_ctx *ctx;
	struct cuco::gemm_dims d;
	__nv_bfloat16 *keep; // a C of the program's own
	int runs;
};

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	(void)req;
	return 0;
}

// C = A B for one rank (the whole product at --ranks 1) on stream s.
static inline void gp_gemm(const struct gp_state *st, const struct cuco_tensor *t, __nv_bfloat16 *C,
			   cudaStream_t s)
{
	dim3 grid((unsigned)((st->d.part + 63) / 64), (unsigned)((st->d.M + 63) / 64));
	cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>((const __nv_bfloat16 *)t[0].ptr,
						       (const __nv_bfloat16 *)t[1].ptr, C, st->d.M,
						       st->d.part, st->d.K, st->d.part);
}

static inline int gp_init(struct cuco_ctx *ctx, struct gp_state *st)
{
	st->ctx = ctx;
	if (cuco::gemm_dims_get(ctx->shape, ctx->nranks, 'N', &st->d, ctx->errbuf, sizeof(ctx->errbuf)))
		return 1;
	return cudaMalloc((void **)&st->keep, (size_t)(st->d.M * st->d.part) * 2) != cudaSuccess;
}

extern "C" void cuco_program_fini(void *p)
{
	cudaFree(((struct gp_state *)p)->keep);
}
#endif
