// comm_only.cu - @NAME@'s @COLL@ alone through host NCCL (timing only).
#include "common.cuh"

static inline int pkg_comm(struct pkg_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	float *Y = (float *)t[T_Y].ptr;
	float *Z = (float *)t[T_Z].ptr;
	ncclComm_t comm = st->ctx->comm;

//@if allreduce
	PKG_NCCL(st, ncclAllReduce(Y, Z, (size_t)(st->d.xrows * st->d.width), ncclFloat32, ncclSum, comm, s));
//@endif
//@if reducescatter
	PKG_NCCL(st, ncclReduceScatter(Y, Z, (size_t)(st->d.zrows * st->d.width), ncclFloat32, ncclSum,
				       comm, s));
//@endif
//@if allgather
	PKG_NCCL(st, ncclAllGather(Y, Z, (size_t)(st->d.xrows * st->d.width), ncclFloat32, comm, s));
//@endif
//@if alltoall
	PKG_NCCL(st, ncclAlltoAll(Y, Z, (size_t)(st->d.rows / st->ctx->nranks * st->d.width), ncclFloat32,
				  comm, s));
//@endif
//@if sendrecv
	int next = (st->ctx->rank + 1) % st->ctx->nranks;
	int prev = (st->ctx->rank + st->ctx->nranks - 1) % st->ctx->nranks;
	size_t n = (size_t)(st->d.xrows * st->d.width);

	PKG_NCCL(st, ncclGroupStart());
	PKG_NCCL(st, ncclSend(Y, n, ncclFloat32, next, comm, s));
	PKG_NCCL(st, ncclRecv(Z, n, ncclFloat32, prev, comm, s));
	PKG_NCCL(st, ncclGroupEnd());
//@endif
	return 0;
}

PKG_PROGRAM(return pkg_comm(st, t, s))
