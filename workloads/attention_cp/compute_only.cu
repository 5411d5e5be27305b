// compute_only.cu - the ring's attention alone (timing only): R attentions of the
// local queries, each against the local K, V block at the positions of the block
// that ring step would hold, with the same calls and merges as the baseline;
// nothing is exchanged. The compute term of the ideal bound.
#include "common.cuh"

CP_PROGRAM(0, return cp_ring(st, t, 0, 1, s))
