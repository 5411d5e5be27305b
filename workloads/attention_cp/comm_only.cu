// comm_only.cu - the ring's exchange alone through host NCCL (timing only): R - 1
// grouped ncclSend / ncclRecv steps of the K, V blocks, as the baseline sends them.
#include "common.cuh"

CP_PROGRAM(0, return cp_ring(st, t, 1, 0, s))
