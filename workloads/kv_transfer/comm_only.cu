// comm_only.cu - every layer's K and V into the decode rank's pages on the copy engine, alone
// (timing only).
#include "common.cuh"

KV_PROGRAM(1, 0, 1, return kv_run_comm_ce(st, t, s))
