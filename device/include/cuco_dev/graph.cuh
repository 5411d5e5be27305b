/*
 * graph.cuh - replay a program's run as a CUDA graph.
 *
 * A run that enqueues many small operations (a GEMM launch, an event, a copy
 * per chunk) can cost the host more time than the GPU takes to execute it;
 * the GPU then idles between operations and the run is host-bound. A CUDA
 * graph enqueues the whole run with one call. graph_run keeps one graph per
 * tensor set (the harness rotates input sets): the first call with a set runs
 * the body eagerly, so every cache the body fills (GEMM plans, peer
 * addresses) is filled outside capture, then captures the body once; later
 * calls launch the captured graph.
 *
 * What a body may do: only stream work on s and on streams forked from s by
 * events (the capture follows them), with the same host-side decisions on
 * every call. Host state that changes per run (a counter baked into a kernel
 * argument or a stream wait) is frozen at capture: such a body must reset
 * its device state inside the run instead (gemm_allgather's template memsets
 * its tile counters when the graph knob is on).
 *
 * Header-only C++; host code only.
 */
#ifndef CUCO_DEV_GRAPH_CUH
#define CUCO_DEV_GRAPH_CUH

#include <string.h>

#include <cuda_runtime_api.h>

#include <cuco/program.h>
#include <cuco_dev/launch.cuh>

#define CUCO_GRAPH_MAX_SETS 8    /* tensor sets with a graph each */
#define CUCO_GRAPH_MAX_TENSORS 8 /* tensors whose addresses identify a set */

namespace cuco
{

struct graph_slot {
	const void *ptr[CUCO_GRAPH_MAX_TENSORS];
	cudaGraphExec_t exec;
};

struct graph_cache {
	int n;
	graph_slot slot[CUCO_GRAPH_MAX_SETS];
};

static inline void graph_cache_release(graph_cache *c)
{
	for (int i = 0; i < c->n; i++)
		if (c->slot[i].exec)
			cudaGraphExecDestroy(c->slot[i].exec);
	memset(c, 0, sizeof(*c));
}

/*
 * One run of body(s) (an int(cudaStream_t) callable: 0 or 1 with ctx->errbuf)
 * for the tensor set t[0..ntensors): through the set's graph once it exists.
 * 0 or 1 with ctx->errbuf.
 */
template <class F>
static inline int graph_run(const cuco_ctx *ctx, graph_cache *c, const cuco_tensor *t, int ntensors,
                            cudaStream_t s, F body)
{
	const void *key[CUCO_GRAPH_MAX_TENSORS] = {0};

	if (ntensors > CUCO_GRAPH_MAX_TENSORS)
		ntensors = CUCO_GRAPH_MAX_TENSORS;
	for (int i = 0; i < ntensors; i++)
		key[i] = t[i].ptr;
	for (int i = 0; i < c->n; i++)
		if (!memcmp(c->slot[i].ptr, key, sizeof(key))) {
			CUCO_CUDA_TRY(cudaGraphLaunch(c->slot[i].exec, s), ctx);
			return 0;
		}
	if (c->n >= CUCO_GRAPH_MAX_SETS) {
		CUCO_ERRF(ctx, "graph_run: more than %d tensor sets", CUCO_GRAPH_MAX_SETS);
		return 1;
	}
	/* First run with this set: eagerly (fills the body's caches), then capture. */
	if (body(s))
		return 1;
	CUCO_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), ctx);
	cudaGraph_t g = NULL;
	int rc = body(s);
	cudaError_t e = cudaStreamEndCapture(s, &g);
	if (rc) {
		if (g)
			cudaGraphDestroy(g);
		(void)cudaGetLastError();
		return 1;
	}
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		CUCO_ERRF(ctx, "graph_run: capture failed: %s", cudaGetErrorString(e));
		return 1;
	}
	graph_slot *slot = &c->slot[c->n];
	e = cudaGraphInstantiate(&slot->exec, g, 0);
	cudaGraphDestroy(g);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		CUCO_ERRF(ctx, "graph_run: cudaGraphInstantiate: %s", cudaGetErrorString(e));
		return 1;
	}
	memcpy(slot->ptr, key, sizeof(key));
	c->n++;
	return 0;
}

} /* namespace cuco */

#endif /* CUCO_DEV_GRAPH_CUH */
