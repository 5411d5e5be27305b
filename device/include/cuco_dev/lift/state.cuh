/*
 * state.cuh - the runtime's state: the program's allocations, streams, its coroutine and
 * the buffers it keeps at the step.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_STATE_CUH
#define CUCO_DEV_LIFT_STATE_CUH

namespace cuco_lift
{

enum mode { IDLE, DESCRIBE, GENERATE, PROGRAM, OBSERVE };
enum user { NOT_STARTED, RUNNING, PARKED, RETURNED, FAILED };
enum kind { DEVICE, MANAGED, NCCL_MEM, HOST, ASYNC };

struct alloc {
	void *ptr;
	void **slot; /* where the program keeps the pointer (the argument of its cudaMalloc) */
	size_t bytes;
	int kind, dtype, role, live, user;
	char name[CUCO_NAME_MAX];
	const char *file;
	int line;
};

struct binding {
	void **slot; /* a place that held a tensor's address where the program parks */
	int greg;    /* or a saved register (its index in the ucontext), -1 */
	int tensor;  /* which tensor */
	size_t off;  /* and where in it */
};

struct request {
	int used, send, peer;
	void *buf;
	size_t bytes;
};

struct runtime {
	int mode, user;
	int rank, nranks, local_rank, device;
	ncclComm_t comm; /* the harness's; NULL while describing */
	const struct cuco_ctx *ctx;
	const struct cuco_shape *shape; /* the shape run (its argv and parameters) */
	int (*main_fn)(int, char **);
	char args[1024];
	char *argv[130];
	int argc;
	ucontext_t harness_uc, user_uc;
	void *stack;
	int user_rc, visits, printed;
	int visit; /* the arrival at the step that parks (the shape's "visit"; earlier ones run) */
	char err[1024];
	const char *step_file;
	int step_line;
	struct alloc allocs[CUCO_LIFT_MAX_ALLOCS];
	int nallocs;
	int tensor_alloc[CUCO_MAX_TENSORS]; /* allocation of each tensor, at the step */
	int ntensors;
	struct binding bind[CUCO_LIFT_MAX_ALLOCS];
	int nbind;
	void *prev[CUCO_MAX_TENSORS]; /* the buffers the parked program's addresses point into */
	const struct cuco_tensor *tensors; /* the run's set (program) */
	cudaStream_t hstream;
	cudaStream_t streams[CUCO_LIFT_MAX_STREAMS];
	int nstreams;
	cudaEvent_t fork_ev, join_ev[CUCO_LIFT_MAX_STREAMS + 1];
	cudaEvent_t events[CUCO_LIFT_MAX_STREAMS * 4];
	int nevents;
	ncclComm_t split[CUCO_LIFT_MAX_COMMS];
	int nsplit;
	char peer_comm[CUCO_LIFT_MAX_COMMS]; /* addresses that stand for other ranks' comms */
	char self_comm;                      /* stands for the communicator while describing */
	int virtual_device;                  /* single process: the device the program chose */
	cudaStream_t mpi_stream;
	void *mpi_buf;
	size_t mpi_bytes;
	int contiguous[64][2]; /* MPI_Type_contiguous: base type, count */
	int ncontiguous;
	struct request req[CUCO_LIFT_MAX_REQUESTS];
	double t0;
};

static struct runtime R;

static inline const char *mode_name(void)
{
	return R.mode == DESCRIBE   ? "describing tensors"
	       : R.mode == GENERATE ? "generating inputs"
	       : R.mode == PROGRAM  ? "running"
	                            : "idle";
}

/* Park the program's main (its coroutine) and return to the harness. */
static inline void park(void)
{
	swapcontext(&R.user_uc, &R.harness_uc);
}

/* A failure in the program's coroutine: keep the message, leave main for good. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R.err, sizeof R.err, fmt, ap);
	va_end(ap);
	fprintf(stderr, "cuco lift: %s\n", R.err);
	R.user = FAILED;
	for (;;)
		park();
}

static inline bool in_user(void)
{
	return R.user == RUNNING;
}

static inline int is_user_file(const char *file)
{
	static const char *const files[] = {CUCO_LIFT_USER_FILES};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (files[i][0] && !strcmp(files[i], file))
			return 1;
	return 0;
}

template <class T> struct dtype_of {
	static const int value = CUCO_DTYPE_U8;
};
template <> struct dtype_of<float> {
	static const int value = CUCO_DTYPE_F32;
};
template <> struct dtype_of<double> {
	static const int value = CUCO_DTYPE_F64;
};
template <> struct dtype_of<__half> {
	static const int value = CUCO_DTYPE_F16;
};
template <> struct dtype_of<__nv_bfloat16> {
	static const int value = CUCO_DTYPE_BF16;
};
template <> struct dtype_of<signed char> {
	static const int value = CUCO_DTYPE_I8;
};
template <> struct dtype_of<char> {
	static const int value = CUCO_DTYPE_I8;
};
template <> struct dtype_of<int> {
	static const int value = CUCO_DTYPE_I32;
};
template <> struct dtype_of<unsigned> {
	static const int value = CUCO_DTYPE_U32;
};
template <> struct dtype_of<long> {
	static const int value = CUCO_DTYPE_I64;
};
template <> struct dtype_of<long long> {
	static const int value = CUCO_DTYPE_I64;
};
template <> struct dtype_of<unsigned long> {
	static const int value = CUCO_DTYPE_U64;
};
template <> struct dtype_of<unsigned long long> {
	static const int value = CUCO_DTYPE_U64;
};

/* The buffer's name from the text of the allocation's first argument: "(void**)&a_new" is
 * "a_new". */
static inline void name_from_text(char *out, size_t len, const char *text)
{
	const char *s = text;
	size_t n;

	for (;;) {
		while (*s == ' ' || *s == '&' || *s == '(')
			s++;
		if (!strncmp(s, "void", 4) || !strncmp(s, "reinterpret_cast", 16) ||
		    !strncmp(s, "static_cast", 11)) {
			/* a cast: skip to the end of its type */
			const char *c = strpbrk(s, ")>");
			if (!c)
				break;
			s = c + 1;
			continue;
		}
		break;
	}
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ')' || s[n - 1] == ' '))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = 0;
	if (!out[0])
		snprintf(out, len, "buffer");
}

/* The lift's table of allocation sites (CUCO_LIFT_SITES, entries of struct cuco_lift_site). */
#ifndef CUCO_LIFT_SITES
#define CUCO_LIFT_SITES
#endif
static const struct cuco_lift_site sites[] = {CUCO_LIFT_SITES{NULL, 0, NULL, 0, 0}};

/* The site of an allocation: the lift's entry for its file and line, else the only entry of its
 * file whose buffer text is the same (a call spread over lines names another line). */
static inline const struct cuco_lift_site *site_of(const char *file, int line, const char *name)
{
	const struct cuco_lift_site *only = NULL;
	int n = 0;

	for (const struct cuco_lift_site *s = sites; s->file; s++) {
		if (strcmp(s->file, file))
			continue;
		if (s->line == line)
			return s;
		if (!strcmp(s->text, name)) {
			only = s;
			n++;
		}
	}
	return n == 1 ? only : NULL;
}

/* Record a device allocation the program made. */
static inline void record(void *ptr, void **slot, size_t bytes, int kind, int dtype,
                          const char *text, const char *file, int line)
{
	struct alloc *a;
	const struct cuco_lift_site *site;
	char name[CUCO_NAME_MAX];

	if (R.nallocs >= CUCO_LIFT_MAX_ALLOCS) {
		if (in_user())
			fail("more than %d allocations", CUCO_LIFT_MAX_ALLOCS);
		return;
	}
	name_from_text(name, sizeof name, text);
	site = site_of(file, line, name);
	a = &R.allocs[R.nallocs++];
	memset(a, 0, sizeof *a);
	a->ptr = ptr;
	a->slot = slot;
	a->bytes = bytes;
	a->kind = kind;
	a->dtype = dtype;
	if (site && site->dtype && (dtype == CUCO_DTYPE_U8 || !dtype))
		a->dtype = site->dtype;
	if (!a->dtype)
		a->dtype = CUCO_DTYPE_U8;
	a->role = site && site->role ? site->role : CUCO_ROLE_INOUT;
	a->live = 1;
	a->user = is_user_file(file) && kind != HOST;
	a->file = file;
	a->line = line;
	memcpy(a->name, name, sizeof name);
}

static inline struct alloc *find_alloc(const void *p)
{
	for (int i = R.nallocs - 1; i >= 0; i--)
		if (R.allocs[i].live && R.allocs[i].ptr == p)
			return &R.allocs[i];
	return NULL;
}

static inline int is_tensor_ptr(const void *p)
{
	if (R.mode != PROGRAM || !R.tensors)
		return 0;
	for (int k = 0; k < R.ntensors; k++)
		if (R.tensors[k].ptr == p)
			return 1;
	return 0;
}

template <class T>
static cudaError_t alloc_device(T **p, size_t bytes, int kind, const char *text, const char *file,
                                int line, cudaStream_t stream = 0, unsigned flags = 0)
{
	void *ptr = NULL;
	cudaError_t e;

	switch (kind) {
	case MANAGED:
		e = ::cudaMallocManaged(&ptr, bytes, flags ? flags : cudaMemAttachGlobal);
		break;
	case HOST:
		e = ::cudaHostAlloc(&ptr, bytes, flags);
		break;
	case ASYNC:
		e = ::cudaMallocAsync(&ptr, bytes, stream);
		break;
	default:
		e = ::cudaMalloc(&ptr, bytes);
		break;
	}
	if (e != cudaSuccess)
		return e;
	if (kind != HOST && bytes)
		::cudaMemset(ptr, 0, bytes); /* deterministic where the program writes nothing */
	*p = (T *)ptr;
	record(ptr, (void **)p, bytes, kind, dtype_of<T>::value, text, file, line);
	return cudaSuccess;
}

static inline cudaError_t free_any(void *p, int kind_hint)
{
	struct alloc *a;

	if (!p)
		return cudaSuccess;
	if (is_tensor_ptr(p))
		return cudaSuccess; /* the harness owns the run's tensors */
	a = find_alloc(p);
	if (a) {
		a->live = 0;
		kind_hint = a->kind;
	}
	switch (kind_hint) {
	case HOST:
		return ::cudaFreeHost(p);
	default:
		return ::cudaFree(p);
	}
}

} /* namespace cuco_lift */

#endif
