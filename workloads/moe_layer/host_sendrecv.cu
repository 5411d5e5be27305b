// host_sendrecv.cu - moe_layer's second baseline: the same program as host.cu, but
// each exchange moves exact sizes (all-to-all-v) as one NCCL group of ncclSend and
// ncclRecv per peer, so no padding crosses the links. Also a fast-path input.
#include "common.cuh"

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	return cuco::moe_requirements(ctx, CUCO_MOE_PACKED, req, 0);
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	return moe_state_init(ctx, out, CUCO_MOE_PACKED, 0);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct moe_state *st = (struct moe_state *)p;
	cuco::moe_prog *m = &st->m;
	const cuco::moe_set *set = cuco::moe_set_get(m, tensors);
	ncclComm_t comm = m->ctx->comm;
	size_t rb = m->row_bytes, mine = (size_t)m->p.region_rows[m->me];

	if (!set || moe_before_dispatch(st, tensors, stream))
		return 1;
	// dispatch: region q of sendb (rows for rank q) -> block me of q's recvb
	ncclGroupStart();
	for (int q = 0; q < m->R; q++) {
		ncclSend(m->sendb + (size_t)m->p.region_off[q] * rb, (size_t)m->p.region_rows[q] * m->H,
			 ncclBfloat16, q, comm, stream);
		ncclRecv(m->recvb + (size_t)q * mine * rb, mine * m->H, ncclBfloat16, q, comm, stream);
	}
	if (ncclGroupEnd() != ncclSuccess) {
		CUCO_ERRF(m->ctx, "dispatch group: %s", ncclGetLastError(comm));
		return 1;
	}
	if (cuco::moe_shuffle(m, 1, stream) || cuco::moe_experts(m, set, cuco::moe_rows_all, stream) ||
	    cuco::moe_shuffle(m, 0, stream))
		return 1;
	// combine: block q of recvb (outputs of q's tokens) -> region me of q's sendb
	ncclGroupStart();
	for (int q = 0; q < m->R; q++) {
		ncclSend(m->recvb + (size_t)q * mine * rb, mine * m->H, ncclBfloat16, q, comm, stream);
		ncclRecv(m->sendb + (size_t)m->p.region_off[q] * rb, (size_t)m->p.region_rows[q] * m->H,
			 ncclBfloat16, q, comm, stream);
	}
	if (ncclGroupEnd() != ncclSuccess) {
		CUCO_ERRF(m->ctx, "combine group: %s", ncclGetLastError(comm));
		return 1;
	}
	return cuco::moe_combine(m, tensors, m->sendb, stream);
}

extern "C" void cuco_program_fini(void *p)
{
	moe_state_fini(p);
}
