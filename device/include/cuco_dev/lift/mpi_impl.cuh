/*
 * mpi_impl.cuh - cuco's MPI layer (cuco_dev/lift/mpi.h) over the harness's NCCL communicator:
 * host buffers staged through the device, one NCCL call per MPI call.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_MPI_IMPL_CUH
#define CUCO_DEV_LIFT_MPI_IMPL_CUH

/* ---- MPI over the harness's communicator (cuco_dev/lift/mpi.h) ---- */

namespace cuco_lift
{

static inline int mpi_base_bytes(int id)
{
	switch (id) {
	case 1:
	case 2:
	case 3:
	case 4:
	case 16:
	case 17:
	case 18:
	case 29:
		return 1;
	case 5:
	case 6:
	case 19:
	case 20:
		return 2;
	case 7:
	case 8:
	case 13:
	case 21:
	case 22:
	case 28:
		return 4;
	case 9:
	case 10:
	case 11:
	case 12:
	case 14:
	case 23:
	case 24:
	case 25:
	case 26:
	case 27:
	case 33:
		return 8;
	case 15:
		return 16;
	case 30:
	case 32:
		return 12;
	case 31:
		return 16;
	}
	return 0;
}

static inline int mpi_bytes(MPI_Datatype t)
{
	int id = CUCO_MPI_ID(t, cuco_mpi_types);
	if (id >= 64 && id - 64 < R.ncontiguous)
		return R.contiguous[id - 64][1] *
		       mpi_bytes(&cuco_mpi_types[R.contiguous[id - 64][0]]);
	return mpi_base_bytes(id);
}

/* The NCCL type an MPI type reduces as; -1 where there is none. */
static inline int mpi_nccl_type(MPI_Datatype t)
{
	switch (CUCO_MPI_ID(t, cuco_mpi_types)) {
	case 1:
	case 2:
	case 17:
		return ncclInt8;
	case 3:
	case 4:
	case 16:
	case 18:
		return ncclUint8;
	case 7:
	case 21:
		return ncclInt32;
	case 8:
	case 22:
		return ncclUint32;
	case 9:
	case 11:
	case 23:
	case 25:
	case 26:
	case 27:
		return ncclInt64;
	case 10:
	case 12:
	case 24:
		return ncclUint64;
	case 13:
		return ncclFloat32;
	case 14:
		return ncclFloat64;
	}
	return -1;
}

static inline int mpi_nccl_op(MPI_Op op)
{
	switch (CUCO_MPI_ID(op, cuco_mpi_ops)) {
	case 1:
		return ncclSum;
	case 2:
		return ncclProd;
	case 3:
		return ncclMin;
	case 4:
		return ncclMax;
	}
	return -1;
}

/* A communicator the layer runs on: the world, or the node when it is the whole world (one
 * node, as cuco's fork mode is); self is handled by each call. */
static inline int mpi_world(MPI_Comm c)
{
	return c == MPI_COMM_WORLD || c == &cuco_mpi_comms[3];
}

static inline int mpi_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int mpi_error(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R.err, sizeof R.err, fmt, ap);
	va_end(ap);
	if (in_user())
		fail("%s", R.err);
	return code;
}

/* Device staging for the layer's host buffers. */
static inline void *mpi_stage(size_t bytes)
{
	if (bytes > R.mpi_bytes) {
		if (R.mpi_buf)
			::cudaFree(R.mpi_buf);
		R.mpi_bytes = bytes < 4096 ? 4096 : bytes;
		if (::cudaMalloc(&R.mpi_buf, R.mpi_bytes) != cudaSuccess) {
			R.mpi_buf = NULL;
			R.mpi_bytes = 0;
		}
	}
	if (!R.mpi_stream)
		::cudaStreamCreateWithFlags(&R.mpi_stream, cudaStreamNonBlocking);
	return R.mpi_buf;
}

static inline int mpi_check(ncclResult_t rc, const char *what)
{
	cudaError_t e;
	if (rc != ncclSuccess)
		return mpi_error(MPI_ERR_INTERN, "%s over NCCL: %s", what, ncclGetErrorString(rc));
	e = ::cudaStreamSynchronize(R.mpi_stream);
	if (e != cudaSuccess)
		return mpi_error(MPI_ERR_INTERN, "%s over NCCL: %s", what, cudaGetErrorString(e));
	return MPI_SUCCESS;
}

} /* namespace cuco_lift */

static int cuco_mpi_init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return MPI_SUCCESS;
}
static int cuco_mpi_finalize(void)
{
	return MPI_SUCCESS;
}
static int cuco_mpi_abort(MPI_Comm comm, int code)
{
	(void)comm;
	cuco_lift::fail("the program called MPI_Abort(%d) while %s", code, cuco_lift::mode_name());
}
static int cuco_mpi_comm_rank(MPI_Comm comm, int *rank)
{
	using namespace cuco_lift;
	if (comm == MPI_COMM_SELF)
		*rank = 0;
	else if (comm == &cuco_mpi_comms[3])
		*rank = R.local_rank;
	else if (comm == MPI_COMM_WORLD)
		*rank = R.rank;
	else
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_Comm_rank: a communicator cuco's MPI layer does not "
		                 "have (split or duplicated communicators are not run)");
	return MPI_SUCCESS;
}
static int cuco_mpi_comm_size(MPI_Comm comm, int *size)
{
	using namespace cuco_lift;
	if (comm == MPI_COMM_SELF)
		*size = 1;
	else if (mpi_world(comm))
		*size = R.nranks;
	else
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_Comm_size: a communicator cuco's MPI layer does not "
		                 "have");
	return MPI_SUCCESS;
}
static int cuco_mpi_comm_split_type(MPI_Comm comm, int type, int key, MPI_Comm *out)
{
	(void)key;
	if (type != MPI_COMM_TYPE_SHARED || !cuco_lift::mpi_world(comm))
		return cuco_lift::mpi_error(MPI_ERR_ARG,
		                            "MPI_Comm_split_type: only the world split by "
		                            "MPI_COMM_TYPE_SHARED is run");
	*out = &cuco_mpi_comms[3];
	return MPI_SUCCESS;
}
static int cuco_mpi_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	(void)key;
	(void)color;
	(void)comm;
	*out = MPI_COMM_NULL;
	return cuco_lift::mpi_error(MPI_ERR_COMM, "MPI_Comm_split is not run by cuco's MPI layer");
}
static int cuco_mpi_comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	*out = comm;
	return MPI_SUCCESS;
}
static int cuco_mpi_comm_free(MPI_Comm *comm)
{
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}
static int cuco_mpi_type_size(MPI_Datatype t, int *size)
{
	*size = cuco_lift::mpi_bytes(t);
	return *size ? MPI_SUCCESS : MPI_ERR_TYPE;
}
static int cuco_mpi_type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out)
{
	using namespace cuco_lift;
	if (R.ncontiguous >= 64)
		return mpi_error(MPI_ERR_TYPE, "MPI_Type_contiguous: more than 64 types");
	R.contiguous[R.ncontiguous][0] = CUCO_MPI_ID(old, cuco_mpi_types);
	R.contiguous[R.ncontiguous][1] = count;
	*out = &cuco_mpi_types[64 + R.ncontiguous++];
	return MPI_SUCCESS;
}
static double cuco_mpi_wtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cuco_mpi_error_string(int code, char *s, int *len)
{
	*len = snprintf(s, MPI_MAX_ERROR_STRING, "MPI error %d (cuco's MPI layer)", code);
	return MPI_SUCCESS;
}
static int cuco_mpi_unsupported(const char *name)
{
	return cuco_lift::mpi_error(MPI_ERR_UNSUPPORTED_OPERATION,
	                            "%s is not run by cuco's MPI layer (docs/your-own-program.md "
	                            "lists what is)",
	                            name);
}

static int cuco_mpi_reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                           int root, MPI_Comm comm, int all)
{
	using namespace cuco_lift;
	size_t bytes = (size_t)count * (size_t)mpi_bytes(t);
	const void *src = send == MPI_IN_PLACE ? recv : send;
	int nt = mpi_nccl_type(t), no = mpi_nccl_op(op);

	if (comm == MPI_COMM_SELF || !R.comm || R.nranks == 1) {
		if (recv && src != recv && (all || R.rank == root || comm == MPI_COMM_SELF))
			memmove(recv, src, bytes);
		return MPI_SUCCESS;
	}
	if (!mpi_world(comm))
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_%s: a communicator cuco's MPI layer does not have",
		                 all ? "Allreduce" : "Reduce");
	if (nt < 0 || no < 0)
		return mpi_error(MPI_ERR_OP,
		                 "MPI_%s: cuco's MPI layer reduces sum, prod, min and max of "
		                 "integer, float and double types",
		                 all ? "Allreduce" : "Reduce");
	void *d = mpi_stage(bytes);
	if (!d)
		return mpi_error(MPI_ERR_INTERN, "MPI staging of %zu bytes failed", bytes);
	::cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, R.mpi_stream);
	int rc = mpi_check(::ncclAllReduce(d, d, (size_t)count, (ncclDataType_t)nt, (ncclRedOp_t)no,
	                                   R.comm, R.mpi_stream),
	                   "MPI_Allreduce");
	if (!rc && (all || R.rank == root)) {
		::cudaMemcpyAsync(recv, d, bytes, cudaMemcpyDeviceToHost, R.mpi_stream);
		rc = mpi_check(ncclSuccess, "MPI_Allreduce");
	}
	return rc;
}

static int cuco_mpi_scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                         MPI_Comm comm, int exclusive)
{
	(void)send;
	(void)recv;
	(void)count;
	(void)t;
	(void)op;
	(void)comm;
	return cuco_mpi_unsupported(exclusive ? "MPI_Exscan" : "MPI_Scan");
}

static int cuco_mpi_barrier(MPI_Comm comm)
{
	int one = 1, out = 0;
	if (!cuco_lift::R.comm || comm == MPI_COMM_SELF)
		return MPI_SUCCESS;
	return cuco_mpi_reduce(&one, &out, 1, MPI_INT, MPI_SUM, 0, comm, 1);
}

static int cuco_mpi_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	using namespace cuco_lift;
	size_t bytes = (size_t)count * (size_t)mpi_bytes(t);

	if (comm == MPI_COMM_SELF || !R.comm || R.nranks == 1 || !bytes)
		return MPI_SUCCESS;
	if (!mpi_world(comm))
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_Bcast: a communicator cuco's MPI layer does not have");
	void *d = mpi_stage(bytes);
	if (!d)
		return mpi_error(MPI_ERR_INTERN, "MPI staging of %zu bytes failed", bytes);
	if (R.rank == root)
		::cudaMemcpyAsync(d, buf, bytes, cudaMemcpyHostToDevice, R.mpi_stream);
	int rc = mpi_check(::ncclBroadcast(d, d, bytes, ncclUint8, root, R.comm, R.mpi_stream),
	                   "MPI_Bcast");
	if (!rc && R.rank != root) {
		::cudaMemcpyAsync(buf, d, bytes, cudaMemcpyDeviceToHost, R.mpi_stream);
		rc = mpi_check(ncclSuccess, "MPI_Bcast");
	}
	return rc;
}

static int cuco_mpi_gather(const void *send, int scount, MPI_Datatype st, void *recv, int rcount,
                           MPI_Datatype rt, int root, MPI_Comm comm, int all)
{
	using namespace cuco_lift;
	size_t sb = (size_t)scount * (size_t)mpi_bytes(st),
	       rb = (size_t)rcount * (size_t)mpi_bytes(rt);
	int n = R.nranks;

	if (comm == MPI_COMM_SELF || !R.comm || n == 1) {
		if (send != MPI_IN_PLACE && recv && (all || R.rank == root))
			memmove((char *)recv + (size_t)R.rank * rb, send, sb);
		return MPI_SUCCESS;
	}
	if (!mpi_world(comm))
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_%s: a communicator cuco's MPI layer does not have",
		                 all ? "Allgather" : "Gather");
	const void *src = send == MPI_IN_PLACE ? (const char *)recv + (size_t)R.rank * rb : send;
	char *d = (char *)mpi_stage(rb * (size_t)(n + 1));
	if (!d)
		return mpi_error(MPI_ERR_INTERN, "MPI staging failed");
	::cudaMemcpyAsync(d, src, rb, cudaMemcpyHostToDevice, R.mpi_stream);
	int rc = mpi_check(::ncclAllGather(d, d + rb, rb, ncclUint8, R.comm, R.mpi_stream),
	                   "MPI_Allgather");
	if (!rc && (all || R.rank == root)) {
		::cudaMemcpyAsync(recv, d + rb, rb * (size_t)n, cudaMemcpyDeviceToHost,
		                  R.mpi_stream);
		rc = mpi_check(ncclSuccess, "MPI_Allgather");
	}
	return rc;
}

static int cuco_mpi_scatter(const void *send, int scount, MPI_Datatype st, void *recv, int rcount,
                            MPI_Datatype rt, int root, MPI_Comm comm)
{
	using namespace cuco_lift;
	size_t sb = (size_t)scount * (size_t)mpi_bytes(st),
	       rb = (size_t)rcount * (size_t)mpi_bytes(rt);
	int n = R.nranks;

	if (comm == MPI_COMM_SELF || !R.comm || n == 1) {
		if (recv != MPI_IN_PLACE && send)
			memmove(recv, (const char *)send + (size_t)R.rank * sb, rb);
		return MPI_SUCCESS;
	}
	if (!mpi_world(comm))
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_Scatter: a communicator cuco's MPI layer does not "
		                 "have");
	char *d = (char *)mpi_stage(sb * (size_t)n);
	if (!d)
		return mpi_error(MPI_ERR_INTERN, "MPI staging failed");
	if (R.rank == root)
		::cudaMemcpyAsync(d, send, sb * (size_t)n, cudaMemcpyHostToDevice, R.mpi_stream);
	int rc =
	    mpi_check(::ncclBroadcast(d, d, sb * (size_t)n, ncclUint8, root, R.comm, R.mpi_stream),
	              "MPI_Scatter");
	if (!rc && recv != MPI_IN_PLACE) {
		::cudaMemcpyAsync(recv, d + (size_t)R.rank * sb, rb, cudaMemcpyDeviceToHost,
		                  R.mpi_stream);
		rc = mpi_check(ncclSuccess, "MPI_Scatter");
	}
	return rc;
}

static int cuco_mpi_alltoall(const void *send, int scount, MPI_Datatype st, void *recv, int rcount,
                             MPI_Datatype rt, MPI_Comm comm)
{
	using namespace cuco_lift;
	size_t sb = (size_t)scount * (size_t)mpi_bytes(st),
	       rb = (size_t)rcount * (size_t)mpi_bytes(rt);
	int n = R.nranks;

	if (comm == MPI_COMM_SELF || !R.comm || n == 1) {
		if (send != MPI_IN_PLACE)
			memmove(recv, send, rb);
		return MPI_SUCCESS;
	}
	if (!mpi_world(comm))
		return mpi_error(MPI_ERR_COMM,
		                 "MPI_Alltoall: a communicator cuco's MPI layer does not "
		                 "have");
	char *d = (char *)mpi_stage(sb * (size_t)n + rb * (size_t)n);
	if (!d)
		return mpi_error(MPI_ERR_INTERN, "MPI staging failed");
	::cudaMemcpyAsync(d, send == MPI_IN_PLACE ? recv : send, sb * (size_t)n,
	                  cudaMemcpyHostToDevice, R.mpi_stream);
	::ncclGroupStart();
	for (int p = 0; p < n; p++) {
		::ncclSend(d + (size_t)p * sb, sb, ncclUint8, p, R.comm, R.mpi_stream);
		::ncclRecv(d + sb * (size_t)n + (size_t)p * rb, rb, ncclUint8, p, R.comm,
		           R.mpi_stream);
	}
	int rc = mpi_check(::ncclGroupEnd(), "MPI_Alltoall");
	if (!rc) {
		::cudaMemcpyAsync(recv, d + sb * (size_t)n, rb * (size_t)n, cudaMemcpyDeviceToHost,
		                  R.mpi_stream);
		rc = mpi_check(ncclSuccess, "MPI_Alltoall");
	}
	return rc;
}

/* Point to point: posted, then run together (one NCCL group) when waited for. */
static int cuco_mpi_post(int send, void *buf, int count, MPI_Datatype t, int peer, int tag,
                         MPI_Comm comm, MPI_Request *req)
{
	using namespace cuco_lift;
	(void)tag;
	*req = MPI_REQUEST_NULL;
	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (peer == MPI_ANY_SOURCE)
		return mpi_error(MPI_ERR_RANK, "MPI_ANY_SOURCE is not run by cuco's MPI layer");
	if (!mpi_world(comm) && comm != MPI_COMM_SELF)
		return mpi_error(MPI_ERR_COMM,
		                 "point-to-point MPI on a communicator cuco's MPI layer "
		                 "does not have");
	for (int i = 1; i < CUCO_LIFT_MAX_REQUESTS; i++)
		if (!R.req[i].used) {
			R.req[i].used = 1;
			R.req[i].send = send;
			R.req[i].peer = comm == MPI_COMM_SELF ? R.rank : peer;
			R.req[i].buf = buf;
			R.req[i].bytes = (size_t)count * (size_t)mpi_bytes(t);
			*req = i;
			return MPI_SUCCESS;
		}
	return mpi_error(MPI_ERR_REQUEST, "more than %d MPI requests pending",
	                 CUCO_LIFT_MAX_REQUESTS - 1);
}

static int cuco_mpi_wait(int n, MPI_Request *reqs, MPI_Status *statuses)
{
	using namespace cuco_lift;
	size_t total = 0, off = 0;
	int rc = MPI_SUCCESS;

	for (int i = 0; i < n; i++)
		if (reqs[i] > 0 && reqs[i] < CUCO_LIFT_MAX_REQUESTS && R.req[reqs[i]].used)
			total += (R.req[reqs[i]].bytes + 255) / 256 * 256;
	if (total && R.comm) {
		char *d = (char *)mpi_stage(total);
		if (!d)
			return mpi_error(MPI_ERR_INTERN, "MPI staging failed");
		::ncclGroupStart();
		for (int i = 0; i < n; i++) {
			struct request *q;
			if (reqs[i] <= 0 || reqs[i] >= CUCO_LIFT_MAX_REQUESTS ||
			    !R.req[reqs[i]].used)
				continue;
			q = &R.req[reqs[i]];
			if (q->send) {
				::cudaMemcpyAsync(d + off, q->buf, q->bytes, cudaMemcpyHostToDevice,
				                  R.mpi_stream);
				::ncclSend(d + off, q->bytes, ncclUint8, q->peer, R.comm,
				           R.mpi_stream);
			} else {
				::ncclRecv(d + off, q->bytes, ncclUint8, q->peer, R.comm,
				           R.mpi_stream);
			}
			off += (q->bytes + 255) / 256 * 256;
		}
		rc = mpi_check(::ncclGroupEnd(), "MPI point-to-point");
		off = 0;
		for (int i = 0; i < n && !rc; i++) {
			struct request *q;
			if (reqs[i] <= 0 || reqs[i] >= CUCO_LIFT_MAX_REQUESTS ||
			    !R.req[reqs[i]].used)
				continue;
			q = &R.req[reqs[i]];
			if (!q->send)
				::cudaMemcpyAsync(q->buf, d + off, q->bytes, cudaMemcpyDeviceToHost,
				                  R.mpi_stream);
			off += (q->bytes + 255) / 256 * 256;
		}
		if (!rc)
			rc = mpi_check(ncclSuccess, "MPI point-to-point");
	}
	for (int i = 0; i < n; i++) {
		if (statuses) {
			statuses[i].MPI_SOURCE = reqs[i] > 0 ? R.req[reqs[i]].peer : MPI_PROC_NULL;
			statuses[i].MPI_TAG = 0;
			statuses[i].MPI_ERROR = rc;
			statuses[i].cuco_bytes = reqs[i] > 0 ? R.req[reqs[i]].bytes : 0;
		}
		if (reqs[i] > 0 && reqs[i] < CUCO_LIFT_MAX_REQUESTS)
			R.req[reqs[i]].used = 0;
		reqs[i] = MPI_REQUEST_NULL;
	}
	return rc;
}

#endif
