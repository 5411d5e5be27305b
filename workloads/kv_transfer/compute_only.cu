// compute_only.cu - the prefill's layers alone on cuco's GEMM (timing only: nothing is sent).
#include "common.cuh"

KV_PROGRAM(0, 0, 1, return kv_run_compute(st, t, s))
