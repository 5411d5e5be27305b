// init_work.cu - does run's work in init: computes C from the inputs init was handed
// into a buffer of its own, and run only copies it. The harness hands init decoy
// inputs, so the copy is of the wrong product: status wrong.
#include "guard.cuh"

static struct gp_state g;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	if (gp_init(ctx, &g))
		return 1;
	gp_gemm(&g, ctx->tensors, g.keep, 0);
	return cudaDeviceSynchronize() != cudaSuccess;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gp_state *st = (struct gp_state *)p;
	return cudaMemcpyAsync(t[2].ptr, st->keep, t[2].bytes, cudaMemcpyDeviceToDevice, s) !=
	       cudaSuccess;
}
