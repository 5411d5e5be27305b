// stale_recv.cu - a consumer that reads its receive buffer before the data lands. The
// producer computes A B into a buffer of the program's own on a side stream; the consumer
// copies that buffer into C on the harness's stream; the side stream is joined to the
// harness's at the end of the run, so no work is left outside it. The consumer waits for the
// producer only when the program's previous run had finished by the time run was called (an
// idle device, as before every check that starts from a drained device, where such a race
// tends not to show); when runs come back to back it reads the buffer as the previous run
// left it: the previous run's product. Its first verification passes. The timed runs come
// back to back and the last one (on set 0, the run before it on set 1) gets set 1's product:
// status wrong, failed_check "last_timed". With burst timing (each timed run alone) the
// back-to-back check catches it instead: run 3 gets run 2's product, of other inputs.
#include "guard.cuh"

static struct gp_state g;
static cudaStream_t side;
static cudaEvent_t started, produced, ended;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	if (gp_init(ctx, &g))
		return 1;
	return cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess ||
	       cudaEventCreateWithFlags(&started, cudaEventDisableTiming) != cudaSuccess ||
	       cudaEventCreateWithFlags(&produced, cudaEventDisableTiming) != cudaSuccess ||
	       cudaEventCreateWithFlags(&ended, cudaEventDisableTiming) != cudaSuccess;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gp_state *st = (struct gp_state *)p;
	// an event never recorded counts as complete: the first run waits
	int idle = cudaEventQuery(ended) == cudaSuccess;

	cudaEventRecord(started, s);
	cudaStreamWaitEvent(side, started, 0); // the inputs are ready
	gp_gemm(st, t, st->keep, side);        // the producer
	cudaEventRecord(produced, side);
	if (idle)
		cudaStreamWaitEvent(s, produced, 0);
	// the consumer
	cudaMemcpyAsync(t[2].ptr, st->keep, t[2].bytes, cudaMemcpyDeviceToDevice, s);
	cudaStreamWaitEvent(s, produced, 0); // the side stream joined: all work inside the run
	cudaEventRecord(ended, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
