/*
 * step.cuh - the step and the coroutine that reaches it: the program's main run until the
 * step, its buffers found and bound to each run's tensors, and the harness's entry points.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_STEP_CUH
#define CUCO_DEV_LIFT_STEP_CUH

/* ---- the step, and the coroutine that reaches it ---- */

namespace cuco_lift
{

/* Where v points into one of the n buffers base[]/bytes[]: its index and offset, or -1. */
static inline int points_into(uintptr_t v, void *const *base, const size_t *bytes, int n,
                              size_t *off)
{
	for (int k = 0; k < n; k++) {
		uintptr_t b = (uintptr_t)base[k];
		if (b && v >= b && v < b + bytes[k]) {
			*off = v - b;
			return k;
		}
	}
	return -1;
}

/* The program's module's writable data (its global variables), where a copy of a buffer's
 * address may be kept; the runtime's own state is left out. */
struct data_range {
	uintptr_t lo, hi;
};
static int module_data(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct data_range *out = (struct data_range *)arg;
	uintptr_t self = (uintptr_t)&R;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && self >= lo && self < hi) {
			for (int j = 0; j < info->dlpi_phnum && out[0].lo == 0; j++) {
				const ElfW(Phdr) *w = &info->dlpi_phdr[j];
				if (w->p_type == PT_LOAD && (w->p_flags & PF_W)) {
					out[0].lo = info->dlpi_addr + w->p_vaddr;
					out[0].hi = out[0].lo + w->p_memsz;
				}
			}
			return 1;
		}
	}
	return 0;
}

static inline int own_state(uintptr_t a);

/* Record a home: a place that holds a copy of tensor k's address (+off) where the program
 * parks. Every run resets every home to the run's tensor, so that every run starts where the
 * first did (a program that swaps two buffers in its step swaps them again each run). */
static inline void add_home(void **where, int greg, int k, size_t off)
{
	for (int i = 0; i < R.nbind; i++)
		if (R.bind[i].slot == where && R.bind[i].greg == greg)
			return;
	if (R.nbind >= CUCO_LIFT_MAX_ALLOCS)
		return;
	R.bind[R.nbind].slot = where;
	R.bind[R.nbind].greg = greg;
	R.bind[R.nbind].tensor = k;
	R.bind[R.nbind++].off = off;
}

/* At the first pass through the step that runs (the shape's visit): the device buffers alive
 * now, allocated by the program's own code, are the tensors. */
static inline void take_tensors(void)
{
	R.ntensors = 0;
	for (int i = 0; i < R.nallocs; i++) {
		struct alloc *a = &R.allocs[i];
		if (!a->live || !a->user || a->kind == HOST)
			continue;
		if (R.ntensors >= CUCO_MAX_TENSORS)
			fail("more than %d device buffers are alive at the step (%s:%d); cuco runs "
			     "at "
			     "most %d tensors",
			     CUCO_MAX_TENSORS, R.step_file, R.step_line, CUCO_MAX_TENSORS);
		R.tensor_alloc[R.ntensors++] = i;
	}
	if (R.ntensors == 0)
		fail("no device buffer allocated by the program is alive when the step is reached "
		     "(%s:%d)",
		     R.step_file, R.step_line);
}

/*
 * Where the parked program keeps the tensors' addresses, read from the harness's side once it
 * first parked: its saved registers, every word of its stack from the parked stack pointer up
 * (the frames of the step's function and its callers; the program always parks through the
 * same calls, so a word's meaning is the same at every park), the variables it allocated into
 * that are not on that stack (a struct on the heap), and its global variables. 0, or 1 with err
 * when a tensor's address is held nowhere cuco can see.
 */
static inline int take_homes(char *err, size_t errlen)
{
	void *base[CUCO_MAX_TENSORS];
	size_t bytes[CUCO_MAX_TENSORS], off;
	uintptr_t lo = (uintptr_t)R.user_uc.uc_mcontext.gregs[REG_RSP];
	uintptr_t bottom = (uintptr_t)R.stack, top = bottom + CUCO_LIFT_STACK_BYTES;
	struct data_range data[1] = {{0, 0}};

	R.nbind = 0;
	for (int k = 0; k < R.ntensors; k++) {
		base[k] = R.allocs[R.tensor_alloc[k]].ptr;
		bytes[k] = R.allocs[R.tensor_alloc[k]].bytes;
		R.prev[k] = base[k];
	}
	for (int g = 0; g < NGREG; g++) {
		int k = points_into((uintptr_t)R.user_uc.uc_mcontext.gregs[g], base, bytes,
		                    R.ntensors, &off);
		if (k >= 0 && g != REG_RSP && g != REG_RIP)
			add_home(NULL, g, k, off);
	}
	for (uintptr_t w = (lo + 7) & ~(uintptr_t)7; w + 8 <= top; w += 8) {
		int k = points_into(*(uintptr_t *)w, base, bytes, R.ntensors, &off);
		if (k >= 0)
			add_home((void **)w, -1, k, off);
	}
	for (int i = 0; i < R.nallocs; i++) {
		uintptr_t s = (uintptr_t)R.allocs[i].slot;
		int k;
		if (!s || (s >= bottom && s < top))
			continue; /* on the stack: live ones were read above, the rest are gone */
		k = points_into((uintptr_t)*R.allocs[i].slot, base, bytes, R.ntensors, &off);
		if (k >= 0)
			add_home(R.allocs[i].slot, -1, k, off);
	}
	dl_iterate_phdr(module_data, data);
	for (uintptr_t w = (data[0].lo + 7) & ~(uintptr_t)7; w + 8 <= data[0].hi; w += 8) {
		int k;
		if (own_state(w))
			continue;
		k = points_into(*(uintptr_t *)w, base, bytes, R.ntensors, &off);
		if (k >= 0)
			add_home((void **)w, -1, k, off);
	}
	for (int k = 0; k < R.ntensors; k++) {
		int found = 0;
		for (int i = 0; i < R.nbind; i++)
			found |= R.bind[i].tensor == k;
		if (!found) {
			const struct alloc *a = &R.allocs[R.tensor_alloc[k]];
			snprintf(err, errlen,
			         "buffer %s (allocated at %s:%d) is alive at the step, but cuco "
			         "finds no "
			         "variable of the program that holds its address (only heap memory "
			         "does): it cannot give the step the harness's tensor",
			         a->name, a->file, a->line);
			return 1;
		}
	}
	return 0;
}

/* Before a pass through the step: every home gets its tensor of this run. */
static inline void bind_tensors(const struct cuco_tensor *tensors)
{
	size_t bytes[CUCO_MAX_TENSORS], off;

	if (!tensors)
		return;
	for (int k = 0; k < R.ntensors; k++)
		bytes[k] = R.allocs[R.tensor_alloc[k]].bytes;
	for (int i = 0; i < R.nbind; i++) {
		const struct binding *b = &R.bind[i];
		uintptr_t *w = b->greg >= 0 ? (uintptr_t *)&R.user_uc.uc_mcontext.gregs[b->greg]
		                            : (uintptr_t *)b->slot;
		/* a place that holds something else now (a dead temporary) is left alone */
		if (points_into(*w, R.prev, bytes, R.ntensors, &off) >= 0)
			*w = (uintptr_t)tensors[b->tensor].ptr + b->off;
	}
	for (int k = 0; k < R.ntensors; k++)
		R.prev[k] = tensors[k].ptr;
}

/* The step is reached (CUCO_LIFT_STEP_BEGIN, once per arrival): where, for messages. */
static inline bool step_enter(const char *file, int line)
{
	if (!R.step_file) {
		R.step_file = file;
		R.step_line = line;
	}
	return true;
}

/*
 * The top of every pass through the step (CUCO_LIFT_STEP_BEGIN). Earlier passes than the
 * shape's visit run as part of the setup; at the visit the program parks here for init, and
 * after each run's pass it comes back here and parks until the next run. Not inlined: the
 * program always parks through this one call, so that its frames look the same at every park.
 */
__attribute__((noinline)) static void step_gate(void)
{
	if (R.mode == OBSERVE) {
		observe_gate();
		return;
	}
	if (R.mode == IDLE || R.user != RUNNING)
		return;
	if (++R.visits < R.visit)
		return; /* an earlier pass: part of the setup */
	if (R.visits == R.visit)
		take_tensors();
	R.user = PARKED;
	park();
	R.user = RUNNING;
	if (R.visits == R.visit)
		R.printed = CUCO_LIFT_PRINT_LINES; /* a step prints every run: keep none */
}

/* A pass through the step has ended: once the visit is reached, the next pass (which parks at
 * the gate); before it, the program goes on to its next arrival. */
static inline bool step_next(void)
{
	if (R.mode == OBSERVE) {
		observe_next();
		return false;
	}
	if (R.mode == IDLE || R.user != RUNNING || R.visits < R.visit)
		return false;
	return true;
}

static void trampoline(void)
{
	int rc = 0;
	try {
		rc = R.main_fn(R.argc, R.argv);
	} catch (const std::exception &e) {
		snprintf(R.err, sizeof R.err, "the program threw %s while %s", e.what(),
		         mode_name());
		R.user = FAILED;
		park();
	} catch (...) {
		snprintf(R.err, sizeof R.err, "the program threw an exception while %s",
		         mode_name());
		R.user = FAILED;
		park();
	}
	R.user_rc = rc;
	R.user = RETURNED;
	for (;;)
		park();
}

static inline void split_args(const char *line)
{
	char *p;
	snprintf(R.args, sizeof R.args, "%s", line ? line : "");
	R.argc = 0;
	R.argv[R.argc++] = (char *)"program";
	p = R.args;
	while (*p && R.argc < 128) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		R.argv[R.argc++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = 0;
	}
	R.argv[R.argc] = NULL;
}

/* Free what the program's setup took and forget its coroutine. keep: allocations to keep
 * (the tensors of a program being run: none; they are private copies too). */
static inline void release(void)
{
	if (R.stack) {
		munmap(R.stack, CUCO_LIFT_STACK_BYTES);
		R.stack = NULL;
	}
	::cudaDeviceSynchronize();
	for (int i = 0; i < R.nallocs; i++)
		if (R.allocs[i].live) {
			if (R.allocs[i].kind == HOST)
				::cudaFreeHost(R.allocs[i].ptr);
			else
				::cudaFree(R.allocs[i].ptr);
		}
	for (int i = 0; i < R.nstreams; i++)
		::cudaStreamDestroy(R.streams[i]);
	for (int i = 0; i < R.nevents; i++)
		::cudaEventDestroy(R.events[i]);
	for (int i = 0; i < R.nsplit; i++)
		::ncclCommDestroy(R.split[i]);
	if (R.fork_ev) {
		::cudaEventDestroy(R.fork_ev);
		for (int i = 0; i <= CUCO_LIFT_MAX_STREAMS; i++)
			if (R.join_ev[i])
				::cudaEventDestroy(R.join_ev[i]);
	}
	if (R.mpi_buf)
		::cudaFree(R.mpi_buf);
	if (R.mpi_stream)
		::cudaStreamDestroy(R.mpi_stream);
	memset(&R, 0, sizeof R);
}

/* Run the program's main from the start until it reaches the step. 0, or 1 with err. */
static inline int start(int mode, int (*main_fn)(int, char **), int rank, int nranks,
                        int local_rank, ncclComm_t comm, const struct cuco_shape *shape,
                        const struct cuco_ctx *ctx, char *err, size_t errlen)
{
	const char *argv = shape->argv;

	release();
	R.mode = mode;
	R.shape = shape;
	R.visit = (int)cuco_shape_get(shape, "visit", CUCO_LIFT_STEP_VISIT);
	if (R.visit < 1)
		R.visit = 1;
	R.ctx = ctx;
	R.tensors = ctx ? ctx->tensors : NULL;
	R.main_fn = main_fn;
	R.rank = rank;
	R.nranks = nranks;
	R.local_rank = local_rank;
	R.comm = comm;
	R.virtual_device = rank;
	::cudaGetDevice(&R.device);
	split_args(argv);
	R.stack = mmap(NULL, CUCO_LIFT_STACK_BYTES, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (R.stack == MAP_FAILED) {
		R.stack = NULL;
		snprintf(err, errlen, "cannot map the program's stack");
		return 1;
	}
	mprotect(R.stack, 4096, PROT_NONE); /* a guard page below it */
	getcontext(&R.user_uc);
	R.user_uc.uc_stack.ss_sp = R.stack;
	R.user_uc.uc_stack.ss_size = CUCO_LIFT_STACK_BYTES;
	R.user_uc.uc_link = NULL;
	makecontext(&R.user_uc, trampoline, 0);
	R.user = RUNNING;
	swapcontext(&R.harness_uc, &R.user_uc);
	if (R.user == PARKED)
		return 0;
	if (R.user == RETURNED)
		snprintf(err, errlen,
		         "the program's main returned %d before it reached the step (while %s, "
		         "command line \"%.200s\"): does it need arguments (cuco init --args)?",
		         R.user_rc, mode_name(), argv ? argv : "");
	else
		snprintf(err, errlen, "%s", R.err);
	return 1;
}

} /* namespace cuco_lift */

/* The current run's tensors (the fast path's device-initiated collectives find their buffers
 * in them); the set init was given while the setup runs. */
static inline const struct cuco_tensor *cuco_lift_tensors(void)
{
	return cuco_lift::R.tensors;
}

/* A lifted workload has no reference of its own: its baseline program is (manifest.json's
 * "reference"), which the harness runs with --reference-program. */
static inline int cuco_lift_reference(const struct cuco_shape *shape, int rank, int nranks,
                                      uint64_t seed, struct cuco_tensor *tensors, int ntensors,
                                      cudaStream_t stream)
{
	(void)shape;
	(void)rank;
	(void)nranks;
	(void)seed;
	(void)tensors;
	(void)ntensors;
	(void)stream;
	fprintf(stderr, "cuco lift: this workload's reference is its baseline program; the "
	                "harness runs it with --reference-program (manifest.json \"reference\")\n");
	return 1;
}

/* ---- the harness's entry points (host.cu defines cuco_program_* and cuco_workload_* as
 * one-line calls of these) ---- */

static inline int cuco_lift_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	(void)req;
	return 0;
}

static inline int cuco_lift_init(struct cuco_ctx *ctx, void **state, int (*main_fn)(int, char **))
{
	using namespace cuco_lift;
	*state = &R;
	if (start(PROGRAM, main_fn, ctx->rank, ctx->nranks, ctx->local_rank, ctx->comm, ctx->shape,
	          ctx, ctx->errbuf, sizeof ctx->errbuf))
		return 1;
	if (take_homes(ctx->errbuf, sizeof ctx->errbuf))
		return 1;
	if (R.ntensors != ctx->ntensors) {
		snprintf(ctx->errbuf, sizeof ctx->errbuf,
		         "the setup left %d device buffers alive at the step, the workload "
		         "describes %d tensors",
		         R.ntensors, ctx->ntensors);
		return 1;
	}
	for (int k = 0; k < R.ntensors; k++) {
		const struct alloc *a = &R.allocs[R.tensor_alloc[k]];
		if (a->bytes != ctx->tensors[k].bytes) {
			snprintf(ctx->errbuf, sizeof ctx->errbuf,
			         "buffer %s (%s:%d) has %zu bytes at the step, tensor %s %zu",
			         a->name, a->file, a->line, a->bytes, ctx->tensors[k].name,
			         ctx->tensors[k].bytes);
			return 1;
		}
	}
	::cudaEventCreateWithFlags(&R.fork_ev, cudaEventDisableTiming);
	for (int i = 0; i <= CUCO_LIFT_MAX_STREAMS; i++)
		::cudaEventCreateWithFlags(&R.join_ev[i], cudaEventDisableTiming);
	return 0;
}

static int dumped; /* CUCO_LIFT_DUMP: this process wrote its first run's outputs */

static inline int cuco_lift_run(void *state, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	using namespace cuco_lift;
	char *errbuf = R.ctx ? (char *)R.ctx->errbuf : NULL;
	int n;

	(void)state;
	if (R.user != PARKED) {
		if (errbuf)
			snprintf(errbuf, 1024, "the program is not at its step: %.900s",
			         R.err[0] ? R.err : "it ended");
		return 1;
	}
	R.tensors = tensors;
	R.hstream = stream;
	bind_tensors(tensors);
	n = R.nstreams;
	/* the program's streams (and the legacy default one) start after the harness's */
	::cudaEventRecord(R.fork_ev, stream);
	for (int i = 0; i < n; i++)
		::cudaStreamWaitEvent(R.streams[i], R.fork_ev, 0);
	::cudaStreamWaitEvent(cudaStreamLegacy, R.fork_ev, 0);
	swapcontext(&R.harness_uc, &R.user_uc);
	/* and the harness's ends after them */
	n = R.nstreams < CUCO_LIFT_MAX_STREAMS ? R.nstreams : CUCO_LIFT_MAX_STREAMS;
	for (int i = 0; i < n; i++) {
		::cudaEventRecord(R.join_ev[i], R.streams[i]);
		::cudaStreamWaitEvent(stream, R.join_ev[i], 0);
	}
	::cudaEventRecord(R.join_ev[CUCO_LIFT_MAX_STREAMS], cudaStreamLegacy);
	::cudaStreamWaitEvent(stream, R.join_ev[CUCO_LIFT_MAX_STREAMS], 0);
	if (R.user == PARKED && getenv("CUCO_LIFT_DUMP") && !dumped) {
		/* the outputs of this process's first run, for scripts/lift-check.sh */
		dumped = 1;
		::cudaStreamSynchronize(stream);
		for (int k = 0; k < R.ntensors; k++)
			dump_buffer(getenv("CUCO_LIFT_DUMP"), "out", R.rank, k, tensors[k].ptr,
			            tensors[k].bytes, R.allocs[R.tensor_alloc[k]].name,
			            R.allocs[R.tensor_alloc[k]].dtype);
	}
	if (R.user != PARKED) {
		if (errbuf)
			snprintf(errbuf, 1024, "%.1000s",
			         R.user == RETURNED ? "the program's main returned during the step"
			                            : R.err);
		return 1;
	}
	return 0;
}

static inline void cuco_lift_fini(void *state)
{
	(void)state;
	cuco_lift::release();
}

/* Workload side: the tensors of rank `rank` are the program's device buffers alive at the step
 * (its setup run as that rank, communicating nothing). */
static inline int cuco_lift_describe(int (*main_fn)(int, char **), const struct cuco_shape *shape,
                                     int rank, int nranks, struct cuco_tensor *tensors,
                                     int *ntensors, char *errbuf, size_t errlen)
{
	using namespace cuco_lift;
	int rc = start(DESCRIBE, main_fn, rank, nranks, rank, NULL, shape, NULL, errbuf, errlen);
	if (!rc) {
		for (int k = 0; k < R.ntensors; k++) {
			const struct alloc *a = &R.allocs[R.tensor_alloc[k]];
			struct cuco_tensor *t = &tensors[k];
			size_t esz = cuco_dtype_size(a->dtype);
			memset(t, 0, sizeof *t);
			snprintf(t->name, sizeof t->name, "%s", a->name);
			for (int j = 0; j < k; j++)
				if (!strcmp(tensors[j].name, t->name))
					snprintf(t->name, sizeof t->name, "%.24s#%d", a->name, k);
			t->role = a->role;
			t->dtype = a->bytes % esz ? CUCO_DTYPE_U8 : a->dtype;
			t->elems = a->bytes / cuco_dtype_size(t->dtype);
			t->bytes = a->bytes;
			if (t->dtype == CUCO_DTYPE_F32 || t->dtype == CUCO_DTYPE_F64 ||
			    t->dtype == CUCO_DTYPE_F16 || t->dtype == CUCO_DTYPE_BF16)
				t->compare = CUCO_LIFT_FLOAT_REDUCTION ? CUCO_COMPARE_CLOSE
				                                       : CUCO_COMPARE_EXACT;
			else
				t->compare = CUCO_COMPARE_EXACT;
			t->tolerance = t->dtype == CUCO_DTYPE_F64   ? 1e-12
			               : t->dtype == CUCO_DTYPE_F32 ? 1e-5
			               : t->dtype == CUCO_DTYPE_F16 ? 4e-3
			                                            : 2e-2;
		}
		*ntensors = R.ntensors;
	}
	release();
	return rc;
}

namespace cuco_lift
{
/* The inputs of the last setup the workload ran: one copy per tensor, for every set. */
struct snapshot {
	char shape[CUCO_NAME_MAX], argv[1024];
	int rank, nranks, ntensors;
	void *data[CUCO_MAX_TENSORS];
	size_t bytes[CUCO_MAX_TENSORS];
};
static struct snapshot S;
static ncclComm_t attached_comm;

static inline int own_state(uintptr_t a)
{
	return (a >= (uintptr_t)&R && a < (uintptr_t)(&R + 1)) ||
	       (a >= (uintptr_t)&S && a < (uintptr_t)(&S + 1)) || a == (uintptr_t)&attached_comm;
}
} /* namespace cuco_lift */

static inline int cuco_lift_attach(ncclComm_t comm, int rank, int nranks, int device, char *errbuf,
                                   size_t errlen)
{
	(void)rank;
	(void)nranks;
	(void)device;
	(void)errbuf;
	(void)errlen;
	cuco_lift::attached_comm = comm;
	return 0;
}

/* Inputs: the program's own data where the step is reached, its setup run once (communicating
 * over the harness's communicator when attached: every rank generates in the same order). */
static inline int cuco_lift_generate(int (*main_fn)(int, char **), const struct cuco_shape *shape,
                                     int rank, int nranks, struct cuco_tensor *tensors,
                                     int ntensors, cudaStream_t stream)
{
	using namespace cuco_lift;
	char err[1024];

	if (strcmp(S.shape, shape->name) || strcmp(S.argv, shape->argv) || S.rank != rank ||
	    S.nranks != nranks) {
		for (int k = 0; k < S.ntensors; k++)
			::cudaFree(S.data[k]);
		memset(&S, 0, sizeof S);
		if (start(GENERATE, main_fn, rank, nranks, rank, attached_comm, shape, NULL, err,
		          sizeof err)) {
			fprintf(stderr, "cuco lift: generating inputs: %s\n", err);
			release();
			return 1;
		}
		::cudaDeviceSynchronize();
		if (R.ntensors != ntensors) {
			fprintf(stderr,
			        "cuco lift: generating inputs: %d device buffers at the step, %d "
			        "described\n",
			        R.ntensors, ntensors);
			release();
			return 1;
		}
		for (int k = 0; k < ntensors; k++) {
			const struct alloc *a = &R.allocs[R.tensor_alloc[k]];
			S.bytes[k] = a->bytes;
			if (::cudaMalloc(&S.data[k], a->bytes) != cudaSuccess ||
			    ::cudaMemcpy(S.data[k], a->ptr, a->bytes, cudaMemcpyDeviceToDevice) !=
			        cudaSuccess) {
				fprintf(stderr, "cuco lift: keeping the inputs of %s failed\n",
				        a->name);
				release();
				return 1;
			}
		}
		S.ntensors = ntensors;
		snprintf(S.shape, sizeof S.shape, "%s", shape->name);
		snprintf(S.argv, sizeof S.argv, "%s", shape->argv);
		S.rank = rank;
		S.nranks = nranks;
		release();
	}
	if (getenv("CUCO_LIFT_INPUTS")) {
		/* the inputs an observing run of the program wrote (scripts/lift-check.sh) */
		for (int k = 0; k < ntensors; k++)
			if (load_buffer(getenv("CUCO_LIFT_INPUTS"), "in", rank, k, tensors[k].ptr,
			                tensors[k].bytes))
				return 1;
		return 0;
	}
	for (int k = 0; k < ntensors && k < S.ntensors; k++)
		if (::cudaMemcpyAsync(tensors[k].ptr, S.data[k],
		                      S.bytes[k] < tensors[k].bytes ? S.bytes[k] : tensors[k].bytes,
		                      cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
			return 1;
	return 0;
}

#endif
