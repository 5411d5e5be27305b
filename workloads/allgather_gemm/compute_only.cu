// compute_only.cu - the workload's GEMM over an already gathered A alone (timing only);
// the ideal bound of any overlapped program using this GEMM.
#include "common.cuh"

AG_PROGRAM(0, 1, return ag_gemm_cuco(st, t, s))
