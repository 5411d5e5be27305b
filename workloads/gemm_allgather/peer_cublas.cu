// peer_cublas.cu - what most users run today: cuBLAS GEMM, then host ncclAllGather.
#include "common.cuh"

GA_PROGRAM(1, return ga_gemm_cublas(st, t, s) || ga_allgather_nccl(st, t, s))
