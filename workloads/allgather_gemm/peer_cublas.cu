// peer_cublas.cu - what most users run today: host ncclAllGather of A's row shards, then cuBLAS.
#include "common.cuh"

AG_PROGRAM(1, 0, return ag_allgather_nccl(st, t, s) || ag_gemm_cublas(st, t, s))
