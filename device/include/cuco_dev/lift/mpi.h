/*
 * mpi.h - cuco's MPI layer for lifted programs (docs/your-own-program.md).
 *
 * A lifted program is the user's own MPI + NCCL program run inside cuco's
 * harness, which owns the ranks and their NCCL communicator: there is no MPI
 * library there. This header stands in for <mpi.h> (the lift rewrites the
 * include); its functions run the program's MPI calls over the harness's NCCL
 * communicator (cuco_dev/lift.cuh defines them): the environment (rank, size,
 * Wtime, Abort), collectives on host buffers (Barrier, Bcast, Reduce,
 * Allreduce, Gather, Allgather, Scatter, Alltoall, Scan, Exscan) and point to
 * point (Send, Recv, Sendrecv, Isend, Irecv, Wait, Waitall) on the world, self
 * and node (shared-memory) communicators. Everything else is declared so that
 * programs compile, and fails at run time with a message naming the call.
 *
 * Handles are pointers to distinct incomplete types, as in Open MPI, so that a
 * program may overload on them; constants encode small integers.
 */
#ifndef CUCO_DEV_LIFT_MPI_H
#define CUCO_DEV_LIFT_MPI_H

#include <stddef.h>
#include <stdint.h>

#define CUCO_LIFT_MPI 1

/* Handles point into these tables (one per program), so that a constant such as MPI_DOUBLE is
 * an address constant, usable in constexpr code as Open MPI's are; the index is the handle's
 * number. */
struct cuco_mpi_comm_s {
	int unused;
};
struct cuco_mpi_type_s {
	int unused;
};
struct cuco_mpi_op_s {
	int unused;
};
struct cuco_mpi_info_s {
	int unused;
};
struct cuco_mpi_win_s {
	int unused;
};
struct cuco_mpi_group_s {
	int unused;
};
struct cuco_mpi_errh_s {
	int unused;
};
typedef struct cuco_mpi_comm_s *MPI_Comm;
typedef struct cuco_mpi_type_s *MPI_Datatype;
typedef struct cuco_mpi_op_s *MPI_Op;
typedef struct cuco_mpi_info_s *MPI_Info;
typedef struct cuco_mpi_win_s *MPI_Win;
typedef struct cuco_mpi_group_s *MPI_Group;
typedef struct cuco_mpi_errh_s *MPI_Errhandler;
#define CUCO_MPI_TYPES 128 /* predefined below 64, MPI_Type_contiguous's from 64 */
static struct cuco_mpi_comm_s cuco_mpi_comms[4] __attribute__((unused));
static struct cuco_mpi_type_s cuco_mpi_types[CUCO_MPI_TYPES] __attribute__((unused));
static struct cuco_mpi_op_s cuco_mpi_ops[16] __attribute__((unused));
static struct cuco_mpi_errh_s cuco_mpi_errhs[3] __attribute__((unused));
/* A handle's number: its index in its table, 0 for the null handle. */
#define CUCO_MPI_ID(h, table) ((h) ? (int)((h) - (table)) : 0)
typedef int MPI_Request; /* an index into the layer's pending operations; 0 is null */
typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef struct {
	int MPI_SOURCE, MPI_TAG, MPI_ERROR;
	size_t cuco_bytes; /* bytes received */
} MPI_Status;

#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD (&cuco_mpi_comms[1])
#define MPI_COMM_SELF (&cuco_mpi_comms[2])
/* 3: the node's ranks (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) */

#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_CHAR (&cuco_mpi_types[1])
#define MPI_SIGNED_CHAR (&cuco_mpi_types[2])
#define MPI_UNSIGNED_CHAR (&cuco_mpi_types[3])
#define MPI_BYTE (&cuco_mpi_types[4])
#define MPI_SHORT (&cuco_mpi_types[5])
#define MPI_UNSIGNED_SHORT (&cuco_mpi_types[6])
#define MPI_INT (&cuco_mpi_types[7])
#define MPI_UNSIGNED (&cuco_mpi_types[8])
#define MPI_LONG (&cuco_mpi_types[9])
#define MPI_UNSIGNED_LONG (&cuco_mpi_types[10])
#define MPI_LONG_LONG (&cuco_mpi_types[11])
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG (&cuco_mpi_types[12])
#define MPI_FLOAT (&cuco_mpi_types[13])
#define MPI_DOUBLE (&cuco_mpi_types[14])
#define MPI_LONG_DOUBLE (&cuco_mpi_types[15])
#define MPI_C_BOOL (&cuco_mpi_types[16])
#define MPI_CXX_BOOL MPI_C_BOOL
#define MPI_INT8_T (&cuco_mpi_types[17])
#define MPI_UINT8_T (&cuco_mpi_types[18])
#define MPI_INT16_T (&cuco_mpi_types[19])
#define MPI_UINT16_T (&cuco_mpi_types[20])
#define MPI_INT32_T (&cuco_mpi_types[21])
#define MPI_UINT32_T (&cuco_mpi_types[22])
#define MPI_INT64_T (&cuco_mpi_types[23])
#define MPI_UINT64_T (&cuco_mpi_types[24])
#define MPI_AINT (&cuco_mpi_types[25])
#define MPI_OFFSET (&cuco_mpi_types[26])
#define MPI_COUNT (&cuco_mpi_types[27])
#define MPI_WCHAR (&cuco_mpi_types[28])
#define MPI_PACKED (&cuco_mpi_types[29])
#define MPI_FLOAT_INT (&cuco_mpi_types[30])
#define MPI_DOUBLE_INT (&cuco_mpi_types[31])
#define MPI_LONG_INT (&cuco_mpi_types[32])
#define MPI_2INT (&cuco_mpi_types[33])
/* 64 and up: contiguous types made by MPI_Type_contiguous */

#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_SUM (&cuco_mpi_ops[1])
#define MPI_PROD (&cuco_mpi_ops[2])
#define MPI_MIN (&cuco_mpi_ops[3])
#define MPI_MAX (&cuco_mpi_ops[4])
#define MPI_LAND (&cuco_mpi_ops[5])
#define MPI_LOR (&cuco_mpi_ops[6])
#define MPI_BAND (&cuco_mpi_ops[7])
#define MPI_BOR (&cuco_mpi_ops[8])
#define MPI_LXOR (&cuco_mpi_ops[9])
#define MPI_BXOR (&cuco_mpi_ops[10])
#define MPI_MAXLOC (&cuco_mpi_ops[11])
#define MPI_MINLOC (&cuco_mpi_ops[12])
#define MPI_REPLACE (&cuco_mpi_ops[13])
#define MPI_NO_OP (&cuco_mpi_ops[14])

#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_ERRORS_ARE_FATAL (&cuco_mpi_errhs[1])
#define MPI_ERRORS_RETURN (&cuco_mpi_errhs[2])
#define MPI_REQUEST_NULL 0

static char cuco_mpi_in_place __attribute__((unused));
#define MPI_IN_PLACE ((void *)&cuco_mpi_in_place)
#define MPI_BOTTOM ((void *)0)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_UNDEFINED (-32766)
#define MPI_COMM_TYPE_SHARED 1
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_OBJECT_NAME 64
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_LOCK_EXCLUSIVE 1
#define MPI_LOCK_SHARED 2
#define MPI_VERSION 3
#define MPI_SUBVERSION 1

#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_OP 10
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_INTERN 16
#define MPI_ERR_OTHER 15
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_LASTCODE 100

/* Defined by cuco_dev/lift.cuh, which includes this header; a parse of the program without the
 * runtime (the lift's analysis) sees declarations only. */
#ifdef CUCO_LIFT_RUNTIME
#define CUCO_MPI_IMPL static
#else
#define CUCO_MPI_IMPL extern
#endif

/* The layer's implementation (cuco_dev/lift.cuh). One entry for the calls cuco runs; every
 * name it does not run goes to cuco_mpi_unsupported, which fails the run naming the call. */
CUCO_MPI_IMPL int cuco_mpi_init(int *argc, char ***argv);
CUCO_MPI_IMPL int cuco_mpi_finalize(void);
CUCO_MPI_IMPL int cuco_mpi_abort(MPI_Comm comm, int code);
CUCO_MPI_IMPL int cuco_mpi_comm_rank(MPI_Comm comm, int *rank);
CUCO_MPI_IMPL int cuco_mpi_comm_size(MPI_Comm comm, int *size);
CUCO_MPI_IMPL int cuco_mpi_comm_split_type(MPI_Comm comm, int type, int key, MPI_Comm *out);
CUCO_MPI_IMPL int cuco_mpi_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out);
CUCO_MPI_IMPL int cuco_mpi_comm_dup(MPI_Comm comm, MPI_Comm *out);
CUCO_MPI_IMPL int cuco_mpi_comm_free(MPI_Comm *comm);
CUCO_MPI_IMPL int cuco_mpi_type_size(MPI_Datatype t, int *size);
CUCO_MPI_IMPL int cuco_mpi_type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out);
CUCO_MPI_IMPL int cuco_mpi_barrier(MPI_Comm comm);
CUCO_MPI_IMPL int cuco_mpi_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm);
CUCO_MPI_IMPL int cuco_mpi_reduce(const void *send, void *recv, int count, MPI_Datatype t,
                                  MPI_Op op, int root, MPI_Comm comm, int all);
CUCO_MPI_IMPL int cuco_mpi_scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                                MPI_Comm comm, int exclusive);
CUCO_MPI_IMPL int cuco_mpi_gather(const void *send, int scount, MPI_Datatype st, void *recv,
                                  int rcount, MPI_Datatype rt, int root, MPI_Comm comm, int all);
CUCO_MPI_IMPL int cuco_mpi_scatter(const void *send, int scount, MPI_Datatype st, void *recv,
                                   int rcount, MPI_Datatype rt, int root, MPI_Comm comm);
CUCO_MPI_IMPL int cuco_mpi_alltoall(const void *send, int scount, MPI_Datatype st, void *recv,
                                    int rcount, MPI_Datatype rt, MPI_Comm comm);
CUCO_MPI_IMPL int cuco_mpi_post(int send, void *buf, int count, MPI_Datatype t, int peer, int tag,
                                MPI_Comm comm, MPI_Request *req);
CUCO_MPI_IMPL int cuco_mpi_wait(int n, MPI_Request *reqs, MPI_Status *statuses);
CUCO_MPI_IMPL double cuco_mpi_wtime(void);
CUCO_MPI_IMPL int cuco_mpi_error_string(int code, char *s, int *len);
CUCO_MPI_IMPL int cuco_mpi_unsupported(const char *name);

#define CUCO_MPI_NO(name, ...)                      \
	static inline int name(__VA_ARGS__)         \
	{                                           \
		return cuco_mpi_unsupported(#name); \
	}

static inline int MPI_Init(int *argc, char ***argv)
{
	return cuco_mpi_init(argc, argv);
}
static inline int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (provided)
		*provided = required;
	return cuco_mpi_init(argc, argv);
}
static inline int MPI_Initialized(int *flag)
{
	*flag = 1;
	return MPI_SUCCESS;
}
static inline int MPI_Finalized(int *flag)
{
	*flag = 0;
	return MPI_SUCCESS;
}
static inline int MPI_Query_thread(int *provided)
{
	*provided = MPI_THREAD_MULTIPLE;
	return MPI_SUCCESS;
}
static inline int MPI_Finalize(void)
{
	return cuco_mpi_finalize();
}
static inline int MPI_Abort(MPI_Comm comm, int code)
{
	return cuco_mpi_abort(comm, code);
}
static inline int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	return cuco_mpi_comm_rank(comm, rank);
}
static inline int MPI_Comm_size(MPI_Comm comm, int *size)
{
	return cuco_mpi_comm_size(comm, size);
}
static inline int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info,
                                      MPI_Comm *out)
{
	(void)info;
	return cuco_mpi_comm_split_type(comm, type, key, out);
}
static inline int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
	return cuco_mpi_comm_split(comm, color, key, out);
}
static inline int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	return cuco_mpi_comm_dup(comm, out);
}
static inline int MPI_Comm_free(MPI_Comm *comm)
{
	return cuco_mpi_comm_free(comm);
}
static inline int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler h)
{
	(void)comm;
	(void)h;
	return MPI_SUCCESS;
}
static inline int MPI_Get_processor_name(char *name, int *len)
{
	const char n[] = "cuco";
	for (int i = 0; i < (int)sizeof(n); i++)
		name[i] = n[i];
	*len = (int)sizeof(n) - 1;
	return MPI_SUCCESS;
}
static inline int MPI_Error_string(int code, char *s, int *len)
{
	return cuco_mpi_error_string(code, s, len);
}
static inline int MPI_Error_class(int code, int *cls)
{
	*cls = code;
	return MPI_SUCCESS;
}
static inline double MPI_Wtime(void)
{
	return cuco_mpi_wtime();
}
static inline double MPI_Wtick(void)
{
	return 1e-9;
}
static inline int MPI_Type_size(MPI_Datatype t, int *size)
{
	return cuco_mpi_type_size(t, size);
}
static inline int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out)
{
	return cuco_mpi_type_contiguous(count, old, out);
}
static inline int MPI_Type_commit(MPI_Datatype *t)
{
	(void)t;
	return MPI_SUCCESS;
}
static inline int MPI_Type_free(MPI_Datatype *t)
{
	*t = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}
static inline int MPI_Barrier(MPI_Comm comm)
{
	return cuco_mpi_barrier(comm);
}
static inline int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	return cuco_mpi_bcast(buf, count, t, root, comm);
}
static inline int MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                             int root, MPI_Comm comm)
{
	return cuco_mpi_reduce(send, recv, count, t, op, root, comm, 0);
}
static inline int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                                MPI_Comm comm)
{
	return cuco_mpi_reduce(send, recv, count, t, op, 0, comm, 1);
}
static inline int MPI_Scan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                           MPI_Comm comm)
{
	return cuco_mpi_scan(send, recv, count, t, op, comm, 0);
}
static inline int MPI_Exscan(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op,
                             MPI_Comm comm)
{
	return cuco_mpi_scan(send, recv, count, t, op, comm, 1);
}
static inline int MPI_Gather(const void *send, int scount, MPI_Datatype st, void *recv, int rcount,
                             MPI_Datatype rt, int root, MPI_Comm comm)
{
	return cuco_mpi_gather(send, scount, st, recv, rcount, rt, root, comm, 0);
}
static inline int MPI_Allgather(const void *send, int scount, MPI_Datatype st, void *recv,
                                int rcount, MPI_Datatype rt, MPI_Comm comm)
{
	return cuco_mpi_gather(send, scount, st, recv, rcount, rt, 0, comm, 1);
}
static inline int MPI_Scatter(const void *send, int scount, MPI_Datatype st, void *recv, int rcount,
                              MPI_Datatype rt, int root, MPI_Comm comm)
{
	return cuco_mpi_scatter(send, scount, st, recv, rcount, rt, root, comm);
}
static inline int MPI_Alltoall(const void *send, int scount, MPI_Datatype st, void *recv,
                               int rcount, MPI_Datatype rt, MPI_Comm comm)
{
	return cuco_mpi_alltoall(send, scount, st, recv, rcount, rt, comm);
}
static inline int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                           MPI_Comm comm)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = cuco_mpi_post(1, (void *)buf, count, t, dest, tag, comm, &r);
	return rc ? rc : cuco_mpi_wait(1, &r, MPI_STATUS_IGNORE);
}
static inline int MPI_Ssend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                            MPI_Comm comm)
{
	return MPI_Send(buf, count, t, dest, tag, comm);
}
static inline int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                           MPI_Status *status)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = cuco_mpi_post(0, buf, count, t, src, tag, comm, &r);
	return rc ? rc : cuco_mpi_wait(1, &r, status);
}
static inline int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
                            MPI_Comm comm, MPI_Request *req)
{
	return cuco_mpi_post(1, (void *)buf, count, t, dest, tag, comm, req);
}
static inline int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                            MPI_Request *req)
{
	return cuco_mpi_post(0, buf, count, t, src, tag, comm, req);
}
static inline int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag,
                               void *rbuf, int rcount, MPI_Datatype rt, int src, int rtag,
                               MPI_Comm comm, MPI_Status *status)
{
	MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	int rc = cuco_mpi_post(1, (void *)sbuf, scount, st, dest, stag, comm, &r[0]);
	if (!rc)
		rc = cuco_mpi_post(0, rbuf, rcount, rt, src, rtag, comm, &r[1]);
	if (rc)
		return rc;
	MPI_Status s[2];
	rc = cuco_mpi_wait(2, r, s);
	if (status)
		*status = s[1];
	return rc;
}
static inline int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	return cuco_mpi_wait(1, req, status);
}
static inline int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
	return cuco_mpi_wait(n, reqs, statuses);
}
static inline int MPI_Get_count(const MPI_Status *status, MPI_Datatype t, int *count)
{
	int size = 1;
	cuco_mpi_type_size(t, &size);
	*count = size > 0 ? (int)(status->cuco_bytes / (size_t)size) : 0;
	return MPI_SUCCESS;
}
static inline int MPI_Info_create(MPI_Info *info)
{
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
static inline int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	(void)info;
	(void)key;
	(void)value;
	return MPI_SUCCESS;
}
static inline int MPI_Info_free(MPI_Info *info)
{
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}

/* Declared so that programs compile; each fails the run, naming itself, if it is called. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
CUCO_MPI_NO(MPI_Iallgather, const void *s, int sc, MPI_Datatype st, void *r, int rc,
            MPI_Datatype rt, MPI_Comm c, MPI_Request *q)
CUCO_MPI_NO(MPI_Iallreduce, const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
            MPI_Request *q)
CUCO_MPI_NO(MPI_Ibcast, void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q)
CUCO_MPI_NO(MPI_Ibarrier, MPI_Comm c, MPI_Request *q)
CUCO_MPI_NO(MPI_Test, MPI_Request *q, int *flag, MPI_Status *s)
CUCO_MPI_NO(MPI_Testall, int n, MPI_Request *q, int *flag, MPI_Status *s)
CUCO_MPI_NO(MPI_Waitany, int n, MPI_Request *q, int *index, MPI_Status *s)
CUCO_MPI_NO(MPI_Probe, int src, int tag, MPI_Comm c, MPI_Status *s)
CUCO_MPI_NO(MPI_Iprobe, int src, int tag, MPI_Comm c, int *flag, MPI_Status *s)
CUCO_MPI_NO(MPI_Gatherv, const void *s, int sc, MPI_Datatype st, void *r, const int *rcs,
            const int *displs, MPI_Datatype rt, int root, MPI_Comm c)
CUCO_MPI_NO(MPI_Allgatherv, const void *s, int sc, MPI_Datatype st, void *r, const int *rcs,
            const int *displs, MPI_Datatype rt, MPI_Comm c)
CUCO_MPI_NO(MPI_Scatterv, const void *s, const int *scs, const int *displs, MPI_Datatype st,
            void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c)
CUCO_MPI_NO(MPI_Alltoallv, const void *s, const int *scs, const int *sd, MPI_Datatype st, void *r,
            const int *rcs, const int *rd, MPI_Datatype rt, MPI_Comm c)
CUCO_MPI_NO(MPI_Reduce_scatter, const void *s, void *r, const int *rcs, MPI_Datatype t, MPI_Op o,
            MPI_Comm c)
CUCO_MPI_NO(MPI_Reduce_scatter_block, const void *s, void *r, int rc, MPI_Datatype t, MPI_Op o,
            MPI_Comm c)
CUCO_MPI_NO(MPI_Win_create, void *base, MPI_Aint size, int disp, MPI_Info i, MPI_Comm c, MPI_Win *w)
CUCO_MPI_NO(MPI_Win_allocate, MPI_Aint size, int disp, MPI_Info i, MPI_Comm c, void *base,
            MPI_Win *w)
CUCO_MPI_NO(MPI_Win_allocate_shared, MPI_Aint size, int disp, MPI_Info i, MPI_Comm c, void *base,
            MPI_Win *w)
CUCO_MPI_NO(MPI_Win_shared_query, MPI_Win w, int rank, MPI_Aint *size, int *disp, void *base)
CUCO_MPI_NO(MPI_Win_free, MPI_Win *w)
CUCO_MPI_NO(MPI_Win_fence, int assert_, MPI_Win w)
CUCO_MPI_NO(MPI_Win_lock, int type, int rank, int assert_, MPI_Win w)
CUCO_MPI_NO(MPI_Win_unlock, int rank, MPI_Win w)
CUCO_MPI_NO(MPI_Win_lock_all, int assert_, MPI_Win w)
CUCO_MPI_NO(MPI_Win_unlock_all, MPI_Win w)
CUCO_MPI_NO(MPI_Win_flush, int rank, MPI_Win w)
CUCO_MPI_NO(MPI_Win_flush_all, MPI_Win w)
CUCO_MPI_NO(MPI_Win_flush_local, int rank, MPI_Win w)
CUCO_MPI_NO(MPI_Win_sync, MPI_Win w)
CUCO_MPI_NO(MPI_Put, const void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp, int tc,
            MPI_Datatype tt, MPI_Win w)
CUCO_MPI_NO(MPI_Get, void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp, int tc,
            MPI_Datatype tt, MPI_Win w)
CUCO_MPI_NO(MPI_Accumulate, const void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp, int tc,
            MPI_Datatype tt, MPI_Op op, MPI_Win w)
CUCO_MPI_NO(MPI_Rput, const void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp, int tc,
            MPI_Datatype tt, MPI_Win w, MPI_Request *q)
CUCO_MPI_NO(MPI_Rget, void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp, int tc,
            MPI_Datatype tt, MPI_Win w, MPI_Request *q)
CUCO_MPI_NO(MPI_Raccumulate, const void *o, int oc, MPI_Datatype ot, int rank, MPI_Aint disp,
            int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w, MPI_Request *q)
CUCO_MPI_NO(MPI_Comm_group, MPI_Comm c, MPI_Group *g)
CUCO_MPI_NO(MPI_Comm_create, MPI_Comm c, MPI_Group g, MPI_Comm *out)
CUCO_MPI_NO(MPI_Group_incl, MPI_Group g, int n, const int *ranks, MPI_Group *out)
CUCO_MPI_NO(MPI_Group_free, MPI_Group *g)
CUCO_MPI_NO(MPI_Cart_create, MPI_Comm c, int nd, const int *dims, const int *periods, int reorder,
            MPI_Comm *out)
CUCO_MPI_NO(MPI_Cart_shift, MPI_Comm c, int dir, int disp, int *src, int *dst)
CUCO_MPI_NO(MPI_Cart_coords, MPI_Comm c, int rank, int maxdims, int *coords)
CUCO_MPI_NO(MPI_Dims_create, int n, int nd, int *dims)
CUCO_MPI_NO(MPI_Type_vector, int count, int blen, int stride, MPI_Datatype old, MPI_Datatype *out)
CUCO_MPI_NO(MPI_Op_create, void *fn, int commute, MPI_Op *op)
CUCO_MPI_NO(MPI_Op_free, MPI_Op *op)
CUCO_MPI_NO(MPI_Alloc_mem, MPI_Aint size, MPI_Info i, void *base)
CUCO_MPI_NO(MPI_Free_mem, void *base)

#pragma GCC diagnostic pop
#undef CUCO_MPI_NO

#endif
