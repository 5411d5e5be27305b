// compute_cublas.cu - cuBLAS's GEMM over an already gathered A alone (timing only),
// the peer's compute bound.
#include "common.cuh"

AG_PROGRAM(1, 1, return ag_gemm_cublas(st, t, s))
