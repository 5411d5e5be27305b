// host.cu - @NAME@ as a host program: the compute (compute.cuh) on this
// rank's rows, then @COLL_CALL@ from the host. The baseline,
// and the fast path's input (`cuco fastpath` replaces the NCCL call with a
// device-initiated kernel).
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>

#include "common.cuh"

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	(void)req;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out) { return pkg_init(ctx, out); }

@LIFTED_CALLS@extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	struct pkg_state *st = (struct pkg_state *)p;
	float *Y = (float *)tensors[T_Y].ptr;
	float *Z = (float *)tensors[T_Z].ptr;
	ncclComm_t comm = st->ctx->comm;

	if (pkg_compute(st, tensors, stream))
		return 1;
//@if allreduce
	PKG_NCCL(st, ncclAllReduce(Y, Z, (size_t)(st->d.xrows * st->d.width), ncclFloat32, ncclSum, comm,
				   stream));
//@endif
//@if reducescatter
	PKG_NCCL(st, ncclReduceScatter(Y, Z, (size_t)(st->d.zrows * st->d.width), ncclFloat32, ncclSum,
				       comm, stream));
//@endif
//@if allgather
	PKG_NCCL(st, ncclAllGather(Y, Z, (size_t)(st->d.xrows * st->d.width), ncclFloat32, comm, stream));
//@endif
//@if alltoall
	PKG_NCCL(st, ncclAlltoAll(Y, Z, (size_t)(st->d.rows / st->ctx->nranks * st->d.width), ncclFloat32,
				  comm, stream));
//@endif
//@if sendrecv
	int next = (st->ctx->rank + 1) % st->ctx->nranks;
	int prev = (st->ctx->rank + st->ctx->nranks - 1) % st->ctx->nranks;
	size_t n = (size_t)(st->d.xrows * st->d.width);

	PKG_NCCL(st, ncclGroupStart());
	PKG_NCCL(st, ncclSend(Y, n, ncclFloat32, next, comm, stream));
	PKG_NCCL(st, ncclRecv(Z, n, ncclFloat32, prev, comm, stream));
	PKG_NCCL(st, ncclGroupEnd());
//@endif
	return 0;
}

extern "C" void cuco_program_fini(void *p) { pkg_fini(p); }
