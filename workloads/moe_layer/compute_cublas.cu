// compute_cublas.cu - compute alone with cuBLAS's grouped GEMM (timing only, not
// verified): as compute_only.cu, the experts by cublasGemmGroupedBatchedEx.
#include "common.cuh"

MOE_PROGRAM(CUCO_MOE_PACKED, 1, {
	return moe_before_dispatch(st, t, s) || cuco::moe_shuffle(m, 1, s) || moe_experts_cublas(st, t, s) ||
	       cuco::moe_shuffle(m, 0, s) || cuco::moe_combine(m, t, m->sendb, s);
})
