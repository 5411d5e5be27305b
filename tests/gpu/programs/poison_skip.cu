// poison_skip.cu - skips its work when its output does not hold the harness's poison: it
// reads the first element of C back and computes C = A B only when that element is all-ones
// bytes (the poison), as a kernel that returns early on a written output would. Were the
// timed runs not poisoned, they would cost next to nothing while every poisoned check passed.
// The harness poisons the outputs before every run, timed ones included, so it does the work
// in every timed run and gains nothing; the unpoisoned check (fresh inputs, C still holding
// the previous run's product) finds it keeping a stale C: status wrong, failed_check
// "unpoisoned".
#include "guard.cuh"

static struct gp_state g;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	return gp_init(ctx, &g);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	unsigned short first = 0;

	if (cudaMemcpyAsync(&first, t[2].ptr, sizeof(first), cudaMemcpyDeviceToHost, s) !=
		cudaSuccess ||
	    cudaStreamSynchronize(s) != cudaSuccess)
		return 1;
	if (first == 0xffffu)
		gp_gemm((struct gp_state *)p, t, (__nv_bfloat16 *)t[2].ptr, s);
	return 0;
}
