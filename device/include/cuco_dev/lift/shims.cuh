/*
 * shims.cuh - the program's CUDA and NCCL calls as the harness runs them: allocations
 * recorded, set-up calls given the harness's device and communicator, collectives on it.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_SHIMS_CUH
#define CUCO_DEV_LIFT_SHIMS_CUH

/* ---- the program's view of CUDA ---- */

template <class T>
static inline cudaError_t cuco_lift_cudaMalloc(T **p, const char *text, const char *file, int line,
                                               size_t bytes)
{
	return cuco_lift::alloc_device(p, bytes, cuco_lift::DEVICE, text, file, line);
}
template <class T>
static inline cudaError_t cuco_lift_cudaMallocManaged(T **p, const char *text, const char *file,
                                                      int line, size_t bytes,
                                                      unsigned flags = cudaMemAttachGlobal)
{
	return cuco_lift::alloc_device(p, bytes, cuco_lift::MANAGED, text, file, line, 0, flags);
}
template <class T>
static inline cudaError_t cuco_lift_cudaMallocAsync(T **p, const char *text, const char *file,
                                                    int line, size_t bytes, cudaStream_t s)
{
	return cuco_lift::alloc_device(p, bytes, cuco_lift::ASYNC, text, file, line, s);
}
template <class T>
static inline cudaError_t cuco_lift_cudaMallocHost(T **p, const char *text, const char *file,
                                                   int line, size_t bytes, unsigned flags = 0)
{
	return cuco_lift::alloc_device(p, bytes, cuco_lift::HOST, text, file, line, 0, flags);
}
template <class T>
static inline cudaError_t cuco_lift_cudaMallocPitch(T **p, const char *text, const char *file,
                                                    int line, size_t *pitch, size_t width,
                                                    size_t height)
{
	*pitch = (width + 511) / 512 * 512;
	return cuco_lift::alloc_device(p, *pitch * height, cuco_lift::DEVICE, text, file, line);
}
static inline cudaError_t cuco_lift_cudaFree(void *p)
{
	return cuco_lift::free_any(p, 0);
}
static inline cudaError_t cuco_lift_cudaFreeAsync(void *p, cudaStream_t s)
{
	(void)s;
	return cuco_lift::free_any(p, 0);
}
static inline cudaError_t cuco_lift_cudaFreeHost(void *p)
{
	return cuco_lift::free_any(p, cuco_lift::HOST);
}
static inline ncclResult_t cuco_lift_ncclMemAlloc(void **p, const char *text, const char *file,
                                                  int line, size_t bytes)
{
	return cuco_lift::alloc_device(p, bytes, cuco_lift::NCCL_MEM, text, file, line) ==
	               cudaSuccess
	           ? ncclSuccess
	           : ncclUnhandledCudaError;
}
static inline ncclResult_t cuco_lift_ncclMemFree(void *p)
{
	return cuco_lift::free_any(p, 0) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

static inline cudaError_t cuco_lift_cudaSetDevice(int d)
{
	cuco_lift::R.virtual_device = d;
	return cudaSuccess; /* the harness chose the rank's device */
}
static inline cudaError_t cuco_lift_cudaGetDevice(int *d)
{
	*d = CUCO_LIFT_SINGLE_PROCESS ? cuco_lift::R.virtual_device : cuco_lift::R.device;
	return cudaSuccess;
}
static inline cudaError_t cuco_lift_cudaGetDeviceCount(int *n)
{
	if (CUCO_LIFT_SINGLE_PROCESS)
		*n = cuco_lift::R.nranks;
	else
		return ::cudaGetDeviceCount(n);
	return cudaSuccess;
}
static inline cudaError_t cuco_lift_cudaDeviceReset(void)
{
	return cudaSuccess;
}
static inline cudaError_t cuco_lift_cudaSetDeviceFlags(unsigned f)
{
	(void)f;
	return cudaSuccess;
}
static inline cudaError_t cuco_lift_cudaDeviceEnablePeerAccess(int peer, unsigned f)
{
	(void)peer;
	(void)f;
	return cudaSuccess;
}
static inline cudaError_t cuco_lift_cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
	(void)d;
	return ::cudaGetDeviceProperties(p, cuco_lift::R.device);
}

namespace cuco_lift
{
static inline cudaError_t track_stream(cudaStream_t *s, cudaError_t e)
{
	if (e == cudaSuccess && R.nstreams < CUCO_LIFT_MAX_STREAMS)
		R.streams[R.nstreams++] = *s;
	return e;
}
} /* namespace cuco_lift */

static inline cudaError_t cuco_lift_cudaStreamCreate(cudaStream_t *s)
{
	return cuco_lift::track_stream(s, ::cudaStreamCreate(s));
}
static inline cudaError_t cuco_lift_cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
	return cuco_lift::track_stream(s, ::cudaStreamCreateWithFlags(s, f));
}
static inline cudaError_t cuco_lift_cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f,
                                                                 int prio)
{
	return cuco_lift::track_stream(s, ::cudaStreamCreateWithPriority(s, f, prio));
}
static inline cudaError_t cuco_lift_cudaStreamDestroy(cudaStream_t s)
{
	using namespace cuco_lift;
	for (int i = 0; i < R.nstreams; i++)
		if (R.streams[i] == s) {
			R.streams[i] = R.streams[--R.nstreams];
			break;
		}
	return ::cudaStreamDestroy(s);
}
static inline cudaError_t cuco_lift_cudaEventCreate(cudaEvent_t *e)
{
	cudaError_t rc = ::cudaEventCreate(e);
	if (rc == cudaSuccess && cuco_lift::R.nevents < CUCO_LIFT_MAX_STREAMS * 4)
		cuco_lift::R.events[cuco_lift::R.nevents++] = *e;
	return rc;
}
static inline cudaError_t cuco_lift_cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f)
{
	cudaError_t rc = ::cudaEventCreateWithFlags(e, f);
	if (rc == cudaSuccess && cuco_lift::R.nevents < CUCO_LIFT_MAX_STREAMS * 4)
		cuco_lift::R.events[cuco_lift::R.nevents++] = *e;
	return rc;
}
static inline cudaError_t cuco_lift_cudaEventDestroy(cudaEvent_t e)
{
	using namespace cuco_lift;
	for (int i = 0; i < R.nevents; i++)
		if (R.events[i] == e) {
			R.events[i] = R.events[--R.nevents];
			break;
		}
	return ::cudaEventDestroy(e);
}

/* exit(), abort() and MPI_Abort in the program end its main, never the harness. */
[[noreturn]] static inline void cuco_lift_exit(int code)
{
	cuco_lift::R.user_rc = code;
	cuco_lift::fail("the program called exit(%d) while %s", code, cuco_lift::mode_name());
}
[[noreturn]] static inline void cuco_lift_abort(void)
{
	cuco_lift::fail("the program called abort() while %s", cuco_lift::mode_name());
}
static inline int cuco_lift_setenv(const char *name, const char *value, int overwrite)
{
	(void)overwrite;
	fprintf(stderr, "cuco lift: setenv(%s=%s) ignored: the harness set up NCCL and CUDA\n",
	        name, value);
	return 0;
}

static inline int cuco_lift_putenv(char *s)
{
	fprintf(stderr, "cuco lift: putenv(%s) ignored: the harness set up NCCL and CUDA\n", s);
	return 0;
}
static inline int cuco_lift_unsetenv(const char *name)
{
	fprintf(stderr, "cuco lift: unsetenv(%s) ignored\n", name);
	return 0;
}

/* The program's printf while the harness runs it: the first lines of each mode, then nothing
 * (a step that prints would print thousands of times). */
static inline int cuco_lift_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int cuco_lift_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cuco_lift::R.printed++ >= CUCO_LIFT_PRINT_LINES)
		return 0;
	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

/* ---- the program's view of NCCL ---- */

namespace cuco_lift
{
/* The communicator a program's set-up call gets: the harness's, or a stand-in while describing. */
static inline ncclComm_t own_comm(void)
{
	return R.comm ? R.comm : (ncclComm_t)&R.self_comm;
}
static inline int is_peer_comm(ncclComm_t c)
{
	return (char *)c >= R.peer_comm && (char *)c < R.peer_comm + CUCO_LIFT_MAX_COMMS;
}
/* Whether a call on c communicates: not while describing, not on another rank's comm. */
static inline int live_comm(ncclComm_t c)
{
	if (is_peer_comm(c) || c == (ncclComm_t)&R.self_comm || !c)
		return 0;
	return R.comm != NULL;
}
} /* namespace cuco_lift */

static inline ncclResult_t cuco_lift_ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof *id);
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int r)
{
	(void)id;
	(void)n;
	if (CUCO_LIFT_SINGLE_PROCESS && r != cuco_lift::R.rank && r >= 0 &&
	    r < CUCO_LIFT_MAX_COMMS) {
		*c = (ncclComm_t)&cuco_lift::R.peer_comm[r];
		return ncclSuccess;
	}
	*c = cuco_lift::own_comm();
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommInitRankConfig(ncclComm_t *c, int n, ncclUniqueId id,
                                                            int r, ncclConfig_t *cfg)
{
	(void)cfg;
	return cuco_lift_ncclCommInitRank(c, n, id, r);
}
static inline ncclResult_t cuco_lift_ncclCommInitRankScalable(ncclComm_t *c, int n, int r, int nid,
                                                              ncclUniqueId *ids, ncclConfig_t *cfg)
{
	(void)nid;
	(void)cfg;
	return cuco_lift_ncclCommInitRank(c, n, ids[0], r);
}
static inline ncclResult_t cuco_lift_ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devs)
{
	(void)devs;
	for (int i = 0; i < ndev; i++)
		comms[i] = i == cuco_lift::R.rank    ? cuco_lift::own_comm()
		           : i < CUCO_LIFT_MAX_COMMS ? (ncclComm_t)&cuco_lift::R.peer_comm[i]
		                                     : (ncclComm_t)NULL;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommSplit(ncclComm_t c, int color, int key,
                                                   ncclComm_t *out, ncclConfig_t *cfg)
{
	using namespace cuco_lift;
	if (!live_comm(c)) {
		*out = c;
		return ncclSuccess;
	}
	ncclResult_t rc = ::ncclCommSplit(c, color, key, out, cfg);
	if (rc == ncclSuccess && *out && R.nsplit < CUCO_LIFT_MAX_COMMS)
		R.split[R.nsplit++] = *out;
	return rc;
}
static inline ncclResult_t cuco_lift_ncclCommDestroy(ncclComm_t c)
{
	(void)c;
	return ncclSuccess; /* the harness's, or a split the runtime frees at fini */
}
static inline ncclResult_t cuco_lift_ncclCommFinalize(ncclComm_t c)
{
	(void)c;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommAbort(ncclComm_t c)
{
	(void)c;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommCount(const ncclComm_t c, int *n)
{
	if (cuco_lift::live_comm(c))
		return ::ncclCommCount(c, n);
	*n = cuco_lift::R.nranks;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommUserRank(const ncclComm_t c, int *r)
{
	using namespace cuco_lift;
	if (live_comm(c))
		return ::ncclCommUserRank(c, r);
	*r = is_peer_comm(c) ? (int)((char *)c - R.peer_comm) : R.rank;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommCuDevice(const ncclComm_t c, int *d)
{
	int r = 0;
	cuco_lift_ncclCommUserRank(c, &r);
	*d = CUCO_LIFT_SINGLE_PROCESS ? r : cuco_lift::R.device;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *e)
{
	if (cuco_lift::live_comm(c))
		return ::ncclCommGetAsyncError(c, e);
	*e = ncclSuccess;
	return ncclSuccess;
}
static inline const char *cuco_lift_ncclGetLastError(ncclComm_t c)
{
	return cuco_lift::live_comm(c) ? ::ncclGetLastError(c) : "";
}
static inline ncclResult_t cuco_lift_ncclCommRegister(const ncclComm_t c, void *buf, size_t n,
                                                      void **handle)
{
	(void)c;
	(void)buf;
	(void)n;
	*handle = (void *)&cuco_lift::R.self_comm; /* tensors are in the harness's windows */
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommDeregister(const ncclComm_t c, void *handle)
{
	(void)c;
	(void)handle;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommWindowRegister(ncclComm_t c, void *buf, size_t n,
                                                            ncclWindow_t *win, int flags)
{
	(void)c;
	(void)buf;
	(void)n;
	(void)flags;
	*win = NULL; /* tensors are in the harness's windows */
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclCommWindowDeregister(ncclComm_t c, ncclWindow_t win)
{
	(void)c;
	(void)win;
	return ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclGroupStart(void)
{
	return cuco_lift::R.comm ? ::ncclGroupStart() : ncclSuccess;
}
static inline ncclResult_t cuco_lift_ncclGroupEnd(void)
{
	return cuco_lift::R.comm ? ::ncclGroupEnd() : ncclSuccess;
}

/* The collectives: the program's own, on the harness's communicator (nothing while describing,
 * nothing on the communicator of a device another rank plays). */
#define CUCO_LIFT_COLL(name, params, args, comm)           \
	static inline ncclResult_t cuco_lift_##name params \
	{                                                  \
		if (!cuco_lift::live_comm(comm))           \
			return ncclSuccess;                \
		return ::name args;                        \
	}
CUCO_LIFT_COLL(ncclAllReduce,
               (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o, ncclComm_t c,
                cudaStream_t st),
               (s, r, n, t, o, c, st), c)
CUCO_LIFT_COLL(ncclBroadcast,
               (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                cudaStream_t st),
               (s, r, n, t, root, c, st), c)
CUCO_LIFT_COLL(ncclBcast,
               (void *b, size_t n, ncclDataType_t t, int root, ncclComm_t c, cudaStream_t st),
               (b, n, t, root, c, st), c)
CUCO_LIFT_COLL(ncclReduce,
               (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o, int root,
                ncclComm_t c, cudaStream_t st),
               (s, r, n, t, o, root, c, st), c)
CUCO_LIFT_COLL(ncclAllGather,
               (const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st),
               (s, r, n, t, c, st), c)
CUCO_LIFT_COLL(ncclReduceScatter,
               (const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o, ncclComm_t c,
                cudaStream_t st),
               (s, r, n, t, o, c, st), c)
CUCO_LIFT_COLL(ncclAlltoAll,
               (const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c, cudaStream_t st),
               (s, r, n, t, c, st), c)
CUCO_LIFT_COLL(ncclGather,
               (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                cudaStream_t st),
               (s, r, n, t, root, c, st), c)
CUCO_LIFT_COLL(ncclScatter,
               (const void *s, void *r, size_t n, ncclDataType_t t, int root, ncclComm_t c,
                cudaStream_t st),
               (s, r, n, t, root, c, st), c)
CUCO_LIFT_COLL(ncclSend,
               (const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st),
               (s, n, t, peer, c, st), c)
CUCO_LIFT_COLL(ncclRecv,
               (void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t c, cudaStream_t st),
               (r, n, t, peer, c, st), c)
#undef CUCO_LIFT_COLL

#endif
