// drop_barrier.cu - a barrier dropped between runs: run computes C = A B into a work buffer
// of the program's own, then copies the buffer into C. The next run clears the buffer first,
// on a side stream that waits for this run's product but not for its copy: the barrier that
// should keep the next run from reusing the buffer before this run has read it is missing.
// (The copy waits 50 us, so that the clear always wins the race.) A run alone is right, and
// so is the last of a series; every run that another follows closely loses its C. Its first
// verification passes and so does the last timed run (nothing follows it); the back-to-back
// check compares run 3 of 4, which run 4 cleared: status wrong, failed_check "back_to_back".
#include "guard.cuh"

static struct gp_state g;
static cudaStream_t side;
static cudaEvent_t computed, cleared;

__global__ void gp_spin(unsigned long long ns)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	if (gp_init(ctx, &g))
		return 1;
	return cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess ||
	       cudaEventCreateWithFlags(&computed, cudaEventDisableTiming) != cudaSuccess ||
	       cudaEventCreateWithFlags(&cleared, cudaEventDisableTiming) != cudaSuccess;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gp_state *st = (struct gp_state *)p;

	// waits for the previous run's product, not for its copy: the dropped barrier
	cudaStreamWaitEvent(side, computed, 0);
	cudaMemsetAsync(st->keep, 0, t[2].bytes, side);
	cudaEventRecord(cleared, side);
	cudaStreamWaitEvent(s, cleared, 0);
	gp_gemm(st, t, st->keep, s);
	cudaEventRecord(computed, s);
	gp_spin<<<1, 1, 0, s>>>(50000ull);
	cudaMemcpyAsync(t[2].ptr, st->keep, t[2].bytes, cudaMemcpyDeviceToDevice, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
