// peer_cublas_graph.cu - cublas_nccl captured once as a CUDA graph and replayed:
// what a user who graph-captures the step runs today (same GEMM, same collective).
#include "common.cuh"

GA_PROGRAM(1, return cuco::graph_run(st->ctx, &st->graphs, t, 3, s, [&](cudaStream_t gs) {
	return ga_gemm_cublas(st, t, gs) || ga_allgather_nccl(st, t, gs);
}))
