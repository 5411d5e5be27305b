// replay.cu - computes C in its first run, keeps it, and replays the copy in every
// later run. The verifications after timing use inputs no earlier run has seen, so
// the replay is of another product: status wrong.
#include "guard.cuh"

static struct gp_state g;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	return gp_init(ctx, &g);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gp_state *st = (struct gp_state *)p;
	if (st->runs++ == 0)
		gp_gemm(st, t, st->keep, s);
	return cudaMemcpyAsync(t[2].ptr, st->keep, t[2].bytes, cudaMemcpyDeviceToDevice, s) !=
	       cudaSuccess;
}
