// comm_only.cu - the all-gather alone through host NCCL (timing only).
#include "common.cuh"

GA_PROGRAM(0, return ga_allgather_nccl(st, t, s))
