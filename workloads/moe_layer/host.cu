// host.cu - moe_layer as CUCo's baseline writes it: tokens permuted by destination,
// a padded host ncclAlltoAll (every peer's chunk padded to the largest, P rows), the
// received rows gathered per local expert, cuco's grouped expert GEMMs (up, SwiGLU,
// down), the outputs scattered back by source, a second padded ncclAlltoAll and the
// gate-weighted combine, all on one stream. The baseline, and the fast path's input.
#include "common.cuh"

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	return cuco::moe_requirements(ctx, CUCO_MOE_PADDED, req, 0);
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	return moe_state_init(ctx, out, CUCO_MOE_PADDED, 0);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct moe_state *st = (struct moe_state *)p;
	cuco::moe_prog *m = &st->m;
	const cuco::moe_set *set = cuco::moe_set_get(m, tensors);
	size_t chunk = (size_t)m->p.P * m->H; // elements per peer, padded
	ncclResult_t r;

	if (!set || moe_before_dispatch(st, tensors, stream))
		return 1;
	r = ncclAlltoAll(m->sendb, m->recvb, chunk, ncclBfloat16, m->ctx->comm, stream);
	if (r != ncclSuccess) {
		CUCO_ERRF(m->ctx, "dispatch ncclAlltoAll: %s", ncclGetErrorString(r));
		return 1;
	}
	if (cuco::moe_shuffle(m, 1, stream) || cuco::moe_experts(m, set, cuco::moe_rows_all, stream) ||
	    cuco::moe_shuffle(m, 0, stream))
		return 1;
	r = ncclAlltoAll(m->recvb, m->sendb, chunk, ncclBfloat16, m->ctx->comm, stream);
	if (r != ncclSuccess) {
		CUCO_ERRF(m->ctx, "combine ncclAlltoAll: %s", ncclGetErrorString(r));
		return 1;
	}
	return cuco::moe_combine(m, tensors, m->sendb, stream);
}

extern "C" void cuco_program_fini(void *p)
{
	moe_state_fini(p);
}
