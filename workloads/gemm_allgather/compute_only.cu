// compute_only.cu - the workload's GEMM alone (timing only: C is not gathered).
#include "common.cuh"

GA_PROGRAM(0, return ga_gemm_cuco(st, t, s))
