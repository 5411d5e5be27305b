// peer_ce_bulk.cu - the whole prefill first, then one bulk transfer of every layer's K and V
// to the decode rank's pages on the copy engine.
#include "common.cuh"

KV_PROGRAM(1, 1, 0, return kv_run_ce_bulk(st, t, s))
