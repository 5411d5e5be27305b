// l2_window.cu - computes C honestly but sets a persisting-L2 carve-out on the way,
// through the limit's number rather than its name (which cuco's source check
// refuses), so lines could stay in L2 between runs. The harness finds the limit
// changed after the run: status run, "refused".
#include "guard.cuh"

static struct gp_state g;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	return gp_init(ctx, &g);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	gp_gemm((struct gp_state *)p, t, (__nv_bfloat16 *)t[2].ptr, s);
	return cudaDeviceSetLimit((cudaLimit)0x06, (size_t)4 << 20) != cudaSuccess;
}
