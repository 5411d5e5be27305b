// hang.cu - only rank 0 enters the LSA barrier: its peers never arrive, so
// rank 0 spins forever. The harness's watchdog must report `timeout`.
#include "common.cuh"

__global__ void hang_kernel(ncclDevComm dc)
{
	cuco::cta_barrier bar(dc, 0);
	bar.sync_relaxed();
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct tp_state *st = (struct tp_state *)p;
	(void)t;
	if (st->ctx->rank == 0)
		hang_kernel<<<1, 128, 0, s>>>(*st->ctx->devcomm);
	return 0;
}
