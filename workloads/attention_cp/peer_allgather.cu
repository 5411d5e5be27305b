// peer_allgather.cu - TransformerEngine's all-gather context parallelism: host
// ncclAllGather of every rank's K and V, a reorder into sequence order, then the
// local queries against the whole sequence (one attention call; causal: one per
// query chunk against the keys up to its end).
#include "common.cuh"

CP_PROGRAM(1, return cp_allgather_attend(st, t, s))
