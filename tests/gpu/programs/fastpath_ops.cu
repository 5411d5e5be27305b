// fastpath_ops.cu - the host program behind tests/gpu/test_fastpath_ops.cu: one run calls every
// collective the fast path transforms, in place and out of place, with the dtype, op, root and
// count that the test puts in the shape (held in variables, so the seed compiles every pair).
// The build turns it into a seed with `cuco fastpath` and links the seed into the test.
#include <cuco/program.h>

#define NCCLCHECK(cmd)                                                                  \
	do {                                                                             \
		if ((cmd) != ncclSuccess)                                                \
			return 1;                                                        \
	} while (0)

// Tensors of the test (tests/gpu/test_fastpath_ops.cu: enum tensor): each R * count elements.
enum { IN, AR, AR_IP, RS, RS_IP, RED, RED_IP, BC, BCAST_IP, AG, AG_IP, A2A, RING, NTENSORS };

static struct cuco_ctx *g_ctx;

static size_t elem_bytes(ncclDataType_t dt)
{
	switch (dt) {
	case ncclInt8:
	case ncclUint8:
	case ncclFloat8e4m3:
	case ncclFloat8e5m2:
		return 1;
	case ncclFloat16:
	case ncclBfloat16:
		return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32:
		return 4;
	default:
		return 8;
	}
}

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	(void)req;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **state)
{
	g_ctx = ctx;
	*state = NULL;
	return 0;
}

extern "C" int cuco_program_run(void *state, const struct cuco_tensor *t, cudaStream_t stream)
{
	const struct cuco_shape *sh = g_ctx->shape;
	ncclComm_t comm = g_ctx->comm;
	int rank = g_ctx->rank, nranks = g_ctx->nranks;
	ncclDataType_t dtype = (ncclDataType_t)cuco_shape_get(sh, "dtype", ncclFloat32);
	ncclRedOp_t op = (ncclRedOp_t)cuco_shape_get(sh, "op", ncclSum);
	int root = (int)cuco_shape_get(sh, "root", 0);
	size_t n = (size_t)cuco_shape_get(sh, "count", 1), esz = elem_bytes(dtype);
	char *b[NTENSORS];
	(void)state;
	for (int k = 0; k < NTENSORS; k++)
		b[k] = (char *)t[k].ptr;
	if (cuco_shape_get(sh, "reduce", 1)) {
		NCCLCHECK(ncclAllReduce(b[IN], b[AR], n, dtype, op, comm, stream));
		NCCLCHECK(ncclAllReduce(b[AR_IP], b[AR_IP], n, dtype, op, comm, stream));
		NCCLCHECK(ncclReduceScatter(b[IN], b[RS], n, dtype, op, comm, stream));
		NCCLCHECK(ncclReduceScatter(b[RS_IP], b[RS_IP] + (size_t)rank * n * esz, n, dtype, op,
					    comm, stream));
		// recv is not used off the root: NULL there
		NCCLCHECK(ncclReduce(b[IN], rank == root ? b[RED] : NULL, n, dtype, op, root, comm,
				     stream));
		NCCLCHECK(ncclReduce(b[RED_IP], b[RED_IP], n, dtype, op, root, comm, stream));
	}
	NCCLCHECK(ncclBroadcast(b[IN], b[BC], n, dtype, root, comm, stream));
	NCCLCHECK(ncclBcast(b[BCAST_IP], n, dtype, root, comm, stream));
	NCCLCHECK(ncclAllGather(b[IN], b[AG], n, dtype, comm, stream));
	NCCLCHECK(ncclAllGather(b[AG_IP] + (size_t)rank * n * esz, b[AG_IP], n, dtype, comm, stream));
	NCCLCHECK(ncclAlltoAll(b[IN], b[A2A], n, dtype, comm, stream));
	NCCLCHECK(ncclGroupStart());
	NCCLCHECK(ncclSend(b[IN], n, dtype, (rank + 1) % nranks, comm, stream));
	NCCLCHECK(ncclRecv(b[RING], n, dtype, (rank + nranks - 1) % nranks, comm, stream));
	NCCLCHECK(ncclGroupEnd());
	return 0;
}

extern "C" void cuco_program_fini(void *state)
{
	(void)state;
}
