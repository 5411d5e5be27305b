// crash.cu - writes through a wild pointer on rank 1: an illegal address that
// breaks the CUDA context. The harness must report `run` or `crash` naming
// the rank, and the next program must still run.
#include "common.cuh"

__global__ void crash_kernel(int *p)
{
	p[threadIdx.x * 1000003] = 1;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct tp_state *st = (struct tp_state *)p;
	(void)t;
	if (st->ctx->rank == 1)
		crash_kernel<<<1, 256, 0, s>>>((int *)0x10);
	return 0;
}
