// compute_cublas.cu - cuBLAS's GEMM alone (timing only), the peer's compute bound.
#include "common.cuh"

GA_PROGRAM(1, return ga_gemm_cublas(st, t, s))
