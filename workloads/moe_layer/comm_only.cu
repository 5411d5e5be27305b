// comm_only.cu - communication alone (timing only, not verified): the two exact-size
// exchanges (dispatch, then combine) of host_sendrecv.cu and nothing else.
#include "common.cuh"

MOE_PROGRAM(CUCO_MOE_PACKED, 0, { return moe_exchange_exact(st, 1, s) || moe_exchange_exact(st, 0, s); })
