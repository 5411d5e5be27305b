// compute_only.cu - compute alone (timing only, not verified): the rank's expert work
// as the baselines do it (slot ranks, permute, gather into expert slots, cuco's grouped
// GEMMs, scatter, combine) with no exchange between ranks.
#include "common.cuh"

MOE_PROGRAM(CUCO_MOE_PACKED, 0, {
	const cuco::moe_set *set = cuco::moe_set_get(m, t);
	return !set || moe_before_dispatch(st, t, s) || cuco::moe_shuffle(m, 1, s) ||
	       cuco::moe_experts(m, set, cuco::moe_rows_all, s) || cuco::moe_shuffle(m, 0, s) ||
	       cuco::moe_combine(m, t, m->sendb, s);
})
