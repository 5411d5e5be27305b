// comm_nccl.cu - the host baseline's transfer alone: per layer pack K | V, ncclSend / ncclRecv,
// scatter into the pages (timing only).
#include "common.cuh"

KV_PROGRAM(2, 0, 1, return kv_run_comm_nccl(st, t, s))
