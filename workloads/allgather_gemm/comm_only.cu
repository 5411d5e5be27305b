// comm_only.cu - the all-gather of A's row shards alone through host NCCL (timing only).
#include "common.cuh"

AG_PROGRAM(0, 0, return ag_allgather_nccl(st, t, s))
