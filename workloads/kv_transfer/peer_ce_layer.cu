// peer_ce_layer.cu - what a transfer engine inside a node does (NIXL, Mooncake): each layer's
// K and V go to the decode rank's pages on the copy engine, from a side stream, as soon as the
// layer's QKV projection is done, while the prefill computes on.
#include "common.cuh"

KV_PROGRAM(1, 0, 2, return kv_run_ce_layer(st, t, s))
