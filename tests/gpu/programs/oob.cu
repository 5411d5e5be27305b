// oob.cu - rank 1 writes one int past the end of a 256-int cudaMalloc buffer:
// the run itself goes on (the output is just wrong), but compute-sanitizer
// memcheck must see the invalid write in the forked rank 1 process. Checks
// that `--wrapper 'compute-sanitizer ... --target-processes all'` (what the
// winner re-check uses) follows the harness's ranks.
#include "common.cuh"

__global__ void oob_kernel(int *p, int n)
{
	if (threadIdx.x == 0)
		p[n] = 1; // one past the end
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct tp_state *st = (struct tp_state *)p;
	static int *buf;
	(void)t;
	if (!buf && cudaMalloc((void **)&buf, 256 * sizeof(int)) != cudaSuccess)
		return 1;
	if (st->ctx->rank == 1)
		oob_kernel<<<1, 32, 0, s>>>(buf, 256);
	return 0;
}
