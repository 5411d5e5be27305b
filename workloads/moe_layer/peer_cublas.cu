// peer_cublas.cu - the vendor peer: the exact-size NCCL exchange of host_sendrecv.cu
// with cuBLAS's grouped GEMM (cublasGemmGroupedBatchedEx, one group per expert with
// tokens) for the experts.
#include "common.cuh"

MOE_PROGRAM(CUCO_MOE_PACKED, 1, {
	return moe_before_dispatch(st, t, s) || moe_exchange_exact(st, 1, s) || cuco::moe_shuffle(m, 1, s) ||
	       moe_experts_cublas(st, t, s) || cuco::moe_shuffle(m, 0, s) || moe_exchange_exact(st, 0, s) ||
	       cuco::moe_combine(m, t, m->sendb, s);
})
