/*
 * test_fastpath_ops.cu - the fast path's seeds on GPUs: the seed that the build writes from
 * tests/gpu/programs/fastpath_ops.cu with `cuco fastpath` (linked into this test) runs every
 * collective the fast path generates - all-reduce, reduce-scatter and reduce, each out of place
 * and in place, broadcast, ncclBcast, all-gather (both forms), all-to-all and a send/recv ring -
 * for every reduction op and NCCL dtype, and every element of every output is compared, bit for
 * bit, with values computed here from the same inputs.
 *
 * One process per rank: as many ranks as visible GPUs (at most 8), or --nranks N. With one GPU
 * (--nranks 1) every collective is a one-rank collective: the average, the reduce to root 0 and
 * the broadcast from 0 must give the input back, the all-to-all and the ring copy it; with more
 * ranks the same code checks the R-rank results. Reductions of fp8 must be refused with a
 * message; fp8 is moved by the copy collectives. This is the harness's part played small: NCCL
 * symmetric windows for the tensors, a devcomm as cuco_program_requirements asks, the ctx.
 *
 * Usage: test_fastpath_ops [--nranks N] [--timeout SECONDS]
 * Prints failures, then "N passed, N failed"; exits 1 on a failure, 77 without a GPU.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cuco/program.h>

#define MAX_RANKS 8
#define EXIT_FATAL 2    /* child: setup or CUDA/NCCL failure */
#define EXIT_WATCHDOG 3 /* child: watchdog fired */
#define POISON 0xa5     /* every output byte before a run */

/* The seed's ABI entry points (C linkage, from the generated seed linked in). */
extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req);
extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **state);
extern "C" int cuco_program_run(void *state, const struct cuco_tensor *tensors,
                                cudaStream_t stream);
extern "C" void cuco_program_fini(void *state);

/* The program's tensors (tests/gpu/programs/fastpath_ops.cu), each nranks * count elements. */
enum tensor { IN, AR, AR_IP, RS, RS_IP, RED, RED_IP, BC, BCAST_IP, AG, AG_IP, A2A, RING, NTENSORS };
static const char *const tensor_names[NTENSORS] = {"in",
                                                   "allreduce",
                                                   "allreduce_inplace",
                                                   "reducescatter",
                                                   "reducescatter_inplace",
                                                   "reduce",
                                                   "reduce_inplace",
                                                   "broadcast",
                                                   "bcast",
                                                   "allgather",
                                                   "allgather_inplace",
                                                   "alltoall",
                                                   "ring"};

static const size_t counts[] = {1, 4099, 65541}; /* odd: scalar heads and tails everywhere */
#define MAX_COUNT 65541

static const ncclDataType_t dtypes[] = {ncclInt8,    ncclUint8,   ncclInt32,      ncclUint32,
                                        ncclInt64,   ncclUint64,  ncclFloat16,    ncclBfloat16,
                                        ncclFloat32, ncclFloat64, ncclFloat8e4m3, ncclFloat8e5m2};
static const char *const dtype_names[] = {"int8", "uint8", "int32", "uint32", "int64",   "uint64",
                                          "f16",  "bf16",  "f32",   "f64",    "fp8e4m3", "fp8e5m2"};
static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg"};

struct env {
	int rank, nranks;
	ncclComm_t comm;
	cudaStream_t st;
	struct cuco_ctx ctx;
	struct cuco_shape shape;
	ncclDevComm dc;
	int have_dc;
	size_t tensor_bytes;
	int *d_sync;
	int passed, failed;
};

static int g_rank = -1;
static const char *volatile g_test = "setup"; /* for the watchdog message */

#define CK_CUDA(call)                                                                      \
	do {                                                                               \
		cudaError_t e_ = (call);                                                   \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "rank %d: %s:%d: %s: %s (%s)\n", g_rank, __FILE__, \
			        __LINE__, #call, cudaGetErrorString(e_), g_test);          \
			_exit(EXIT_FATAL);                                                 \
		}                                                                          \
	} while (0)
#define CK_NCCL(call)                                                                      \
	do {                                                                               \
		ncclResult_t r_ = (call);                                                  \
		if (r_ != ncclSuccess) {                                                   \
			fprintf(stderr, "rank %d: %s:%d: %s: %s (%s)\n", g_rank, __FILE__, \
			        __LINE__, #call, ncclGetErrorString(r_), g_test);          \
			_exit(EXIT_FATAL);                                                 \
		}                                                                          \
	} while (0)

static void on_child_alarm(int sig)
{
	char msg[256];
	(void)sig;
	int n = snprintf(msg, sizeof(msg), "rank %d: watchdog: '%s' did not finish (deadlock?)\n",
	                 g_rank, g_test);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	_exit(EXIT_WATCHDOG);
}

static void host_barrier(struct env *e)
{
	CK_NCCL(ncclAllReduce(e->d_sync, e->d_sync, 1, ncclInt, ncclSum, e->comm, e->st));
	CK_CUDA(cudaStreamSynchronize(e->st));
}

/* ------------------------------------------------------------ values */

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

/*
 * Input element i of rank r: small values that every dtype holds exactly. Integers in -2..2
 * (0..4 unsigned) so products wrap only where the dtype's width says; floats multiples of 0.25
 * in [-1, 1], whose sums and products over 8 ranks are exact in f32: so the order of a sum does
 * not matter here and the seed's result must equal this file's bit for bit.
 */
static double input_value(ncclDataType_t dt, int r, size_t i)
{
	int k = (int)((r * 5u + i * 3u + (i >> 7)) % 9u); /* 0..8 */
	switch (dt) {
	case ncclUint8:
	case ncclUint32:
	case ncclUint64:
		return k % 5;
	case ncclInt8:
	case ncclInt32:
	case ncclInt64:
		return k % 5 - 2;
	default:
		return (k - 4) * 0.25;
	}
}

/* How a dtype is stored and accumulated here: the seed's rules (f16/bf16 in f32). */
template <typename T> struct host_type {
	using acc = T;
	static T from(acc x)
	{
		return x;
	}
	static acc to(T x)
	{
		return x;
	}
};
template <> struct host_type<__half> {
	using acc = float;
	static __half from(float x)
	{
		return __float2half_rn(x);
	}
	static float to(__half x)
	{
		return __half2float(x);
	}
};
template <> struct host_type<__nv_bfloat16> {
	using acc = float;
	static __nv_bfloat16 from(float x)
	{
		return __float2bfloat16_rn(x);
	}
	static float to(__nv_bfloat16 x)
	{
		return __bfloat162float(x);
	}
};

/* a op b as NCCL defines it: integer sums and products wrap. */
template <typename A> static A combine(ncclRedOp_t op, A a, A b)
{
	if constexpr (std::is_integral<A>::value) {
		using U = typename std::make_unsigned<A>::type;
		switch (op) {
		case ncclProd:
			return (A)(U)((U)a * (U)b);
		case ncclMin:
			return a < b ? a : b;
		case ncclMax:
			return a < b ? b : a;
		default:
			return (A)(U)((U)a + (U)b);
		}
	} else {
		switch (op) {
		case ncclProd:
			return a * b;
		case ncclMin:
			return std::fmin(a, b);
		case ncclMax:
			return std::fmax(a, b);
		default:
			return a + b;
		}
	}
}

/* Write element i of every rank's input (as T) combined over ranks 0..R-1 into *out. */
template <typename T>
static void reduce_elem(ncclDataType_t dt, ncclRedOp_t op, int nranks, size_t i, void *out)
{
	using H = host_type<T>;
	using A = typename H::acc;
	A acc = H::to((T)H::from((A)input_value(dt, 0, i)));
	for (int p = 1; p < nranks; p++)
		acc = combine<A>(op, acc, H::to((T)H::from((A)input_value(dt, p, i))));
	if (op == ncclAvg)
		acc = (A)(acc / (A)nranks);
	T v = H::from(acc);
	memcpy(out, &v, sizeof(T));
}

/* Element i of rank r's input in dtype dt, as stored bytes. fp8: a byte pattern of its own. */
static void input_elem(ncclDataType_t dt, int r, size_t i, void *out)
{
	double v = input_value(dt, r, i);
	switch (dt) {
	case ncclInt8: {
		int8_t x = (int8_t)v;
		memcpy(out, &x, 1);
		break;
	}
	case ncclUint8: {
		uint8_t x = (uint8_t)v;
		memcpy(out, &x, 1);
		break;
	}
	case ncclInt32: {
		int32_t x = (int32_t)v;
		memcpy(out, &x, 4);
		break;
	}
	case ncclUint32: {
		uint32_t x = (uint32_t)v;
		memcpy(out, &x, 4);
		break;
	}
	case ncclInt64: {
		int64_t x = (int64_t)v;
		memcpy(out, &x, 8);
		break;
	}
	case ncclUint64: {
		uint64_t x = (uint64_t)v;
		memcpy(out, &x, 8);
		break;
	}
	case ncclFloat16: {
		__half x = __float2half_rn((float)v);
		memcpy(out, &x, 2);
		break;
	}
	case ncclBfloat16: {
		__nv_bfloat16 x = __float2bfloat16_rn((float)v);
		memcpy(out, &x, 2);
		break;
	}
	case ncclFloat32: {
		float x = (float)v;
		memcpy(out, &x, 4);
		break;
	}
	case ncclFloat64:
		memcpy(out, &v, 8);
		break;
	default: { /* fp8: moved only, any bits */
		uint8_t x = (uint8_t)(r * 37 + i * 11 + 1);
		memcpy(out, &x, 1);
		break;
	}
	}
}

static void reduced_elem(ncclDataType_t dt, ncclRedOp_t op, int nranks, size_t i, void *out)
{
	switch (dt) {
	case ncclInt8:
		return reduce_elem<int8_t>(dt, op, nranks, i, out);
	case ncclUint8:
		return reduce_elem<uint8_t>(dt, op, nranks, i, out);
	case ncclInt32:
		return reduce_elem<int32_t>(dt, op, nranks, i, out);
	case ncclUint32:
		return reduce_elem<uint32_t>(dt, op, nranks, i, out);
	case ncclInt64:
		return reduce_elem<int64_t>(dt, op, nranks, i, out);
	case ncclUint64:
		return reduce_elem<uint64_t>(dt, op, nranks, i, out);
	case ncclFloat16:
		return reduce_elem<__half>(dt, op, nranks, i, out);
	case ncclBfloat16:
		return reduce_elem<__nv_bfloat16>(dt, op, nranks, i, out);
	case ncclFloat32:
		return reduce_elem<float>(dt, op, nranks, i, out);
	default:
		return reduce_elem<double>(dt, op, nranks, i, out);
	}
}

/* ------------------------------------------------------------ one case */

struct run_case {
	ncclDataType_t dt;
	ncclRedOp_t op;
	int reduce; /* the program runs the reductions */
	int root;
	size_t n;
	const char *name; /* "f16 avg count 4099 root 0" */
};

/* Rank r's bytes of [lo, hi) elements of its input. */
static void fill_input(const struct run_case *c, int r, size_t lo, size_t hi,
                       std::vector<unsigned char> &buf, size_t at)
{
	size_t esz = elem_bytes(c->dt);
	for (size_t i = lo; i < hi; i++)
		input_elem(c->dt, r, i, &buf[at + (i - lo) * esz]);
}

/* Compare elements [0, n) of got (from its tensor, at element offset at) with want. */
static bool same(struct env *e, const struct run_case *c, int t, const unsigned char *got,
                 const unsigned char *want, size_t n, const char *what)
{
	size_t esz = elem_bytes(c->dt);
	for (size_t i = 0; i < n; i++)
		if (memcmp(got + i * esz, want + i * esz, esz) != 0) {
			unsigned long long g = 0, w = 0;
			memcpy(&g, got + i * esz, esz);
			memcpy(&w, want + i * esz, esz);
			fprintf(stderr,
			        "FAIL rank %d: %s: %s: %s element %zu is 0x%llx, want 0x%llx\n",
			        e->rank, c->name, tensor_names[t], what, i, g, w);
			return false;
		}
	return true;
}

static void check(struct env *e, bool ok)
{
	if (ok)
		e->passed++;
	else
		e->failed++;
}

static void run_one(struct env *e, const struct run_case *c)
{
	const int r = e->rank, R = e->nranks;
	const size_t n = c->n, esz = elem_bytes(c->dt), chunk = n * esz, all = (size_t)R * chunk;
	std::vector<unsigned char> in(all), buf(all), want(all);
	g_test = c->name;

	/* the shape the program reads its arguments from */
	struct cuco_shape *s = &e->shape;
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "case");
	const char *names[] = {"dtype", "op", "root", "count", "reduce"};
	long long vals[] = {c->dt, c->op, c->root, (long long)n, c->reduce};
	for (int k = 0; k < 5; k++) {
		snprintf(s->param_names[k], CUCO_NAME_MAX, "%s", names[k]);
		s->params[k] = vals[k];
	}
	s->nparams = 5;

	/* inputs: IN and the in-place buffers hold this rank's input, every output the poison
	 * (on the program's stream: it is non-blocking, so it orders nothing with stream 0) */
	fill_input(c, r, 0, (size_t)R * n, in, 0);
	for (int t = 0; t < NTENSORS; t++)
		CK_CUDA(cudaMemsetAsync(e->ctx.tensors[t].ptr, POISON, e->tensor_bytes, e->st));
	const int inputs[] = {IN, AR_IP, RS_IP, RED_IP, BCAST_IP};
	for (int t : inputs)
		CK_CUDA(cudaMemcpyAsync(e->ctx.tensors[t].ptr, in.data(),
		                        t == IN || t == RS_IP ? all : chunk, cudaMemcpyHostToDevice,
		                        e->st));
	CK_CUDA(cudaMemcpyAsync((char *)e->ctx.tensors[AG_IP].ptr + (size_t)r * chunk, in.data(),
	                        chunk, cudaMemcpyHostToDevice, e->st));
	host_barrier(e); /* synchronises the stream: every rank's inputs are in place */

	e->ctx.errbuf[0] = 0;
	int rc = cuco_program_run(NULL, e->ctx.tensors, e->st);
	CK_CUDA(cudaStreamSynchronize(e->st));
	bool fp8 = c->dt == ncclFloat8e4m3 || c->dt == ncclFloat8e5m2;
	if (fp8 && c->reduce) {
		/* refused, with the reason, before anything ran */
		bool ok = rc != 0 && strstr(e->ctx.errbuf, "a reduction of fp8") != NULL;
		if (!ok)
			fprintf(
			    stderr,
			    "FAIL rank %d: %s: run gave %d, errbuf '%s'; want the fp8 refusal\n", r,
			    c->name, rc, e->ctx.errbuf);
		check(e, ok);
		host_barrier(e);
		return;
	}
	if (rc != 0) {
		fprintf(stderr, "FAIL rank %d: %s: run failed: %s\n", r, c->name, e->ctx.errbuf);
		check(e, false);
		host_barrier(e);
		return;
	}

	auto got = [&](int t, size_t bytes) {
		CK_CUDA(cudaMemcpyAsync(buf.data(), e->ctx.tensors[t].ptr, bytes,
		                        cudaMemcpyDeviceToHost, e->st));
		CK_CUDA(cudaStreamSynchronize(e->st));
		return buf.data();
	};
	std::vector<unsigned char> poison(all, POISON);
	if (c->reduce) {
		for (size_t i = 0; i < n; i++)
			reduced_elem(c->dt, c->op, R, i, &want[i * esz]);
		check(e, same(e, c, AR, got(AR, chunk), want.data(), n, "recv"));
		check(e, same(e, c, AR_IP, got(AR_IP, chunk), want.data(), n, "buffer"));
		if (r == c->root) {
			check(e, same(e, c, RED, got(RED, chunk), want.data(), n, "root's recv"));
			check(e, same(e, c, RED_IP, got(RED_IP, chunk), want.data(), n,
			              "root's buffer"));
		} else {
			/* off the root recv is not touched; the in-place buffer keeps the input */
			check(e,
			      same(e, c, RED, got(RED, chunk), poison.data(), n, "non-root recv"));
			check(e, same(e, c, RED_IP, got(RED_IP, chunk), in.data(), n,
			              "non-root buffer"));
		}
		for (size_t i = 0; i < n; i++)
			reduced_elem(c->dt, c->op, R, (size_t)r * n + i, &want[i * esz]);
		check(e, same(e, c, RS, got(RS, chunk), want.data(), n, "recv"));
		check(e, same(e, c, RS_IP, got(RS_IP, all) + (size_t)r * chunk, want.data(), n,
		              "own chunk"));
	}
	/* broadcast and ncclBcast: the root's input everywhere */
	fill_input(c, c->root, 0, n, want, 0);
	check(e, same(e, c, BC, got(BC, chunk), want.data(), n, "recv"));
	check(e, same(e, c, BCAST_IP, got(BCAST_IP, chunk), want.data(), n, "buffer"));
	/* all-gather: rank p's first n elements at p * n, both forms */
	for (int p = 0; p < R; p++)
		fill_input(c, p, 0, n, want, (size_t)p * chunk);
	check(e, same(e, c, AG, got(AG, all), want.data(), (size_t)R * n, "recv"));
	check(e, same(e, c, AG_IP, got(AG_IP, all), want.data(), (size_t)R * n, "buffer"));
	/* all-to-all: block p of recv is block r of rank p's input */
	for (int p = 0; p < R; p++)
		fill_input(c, p, (size_t)r * n, (size_t)(r + 1) * n, want, (size_t)p * chunk);
	check(e, same(e, c, A2A, got(A2A, all), want.data(), (size_t)R * n, "recv"));
	/* the ring: the previous rank's first n elements */
	fill_input(c, (r + R - 1) % R, 0, n, want, 0);
	check(e, same(e, c, RING, got(RING, chunk), want.data(), n, "recv"));
	host_barrier(e); /* nobody rewrites its inputs while a peer still checks */
}

/* ------------------------------------------------------------ setup */

static void setup(struct env *e, ncclUniqueId id)
{
	struct cuco_requirements req;
	int sms = 0;
	CK_CUDA(cudaSetDevice(e->rank));
	CK_CUDA(cudaStreamCreateWithFlags(&e->st, cudaStreamNonBlocking));
	CK_NCCL(ncclCommInitRank(&e->comm, e->nranks, id, e->rank));
	CK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, e->rank));
	CK_CUDA(cudaMalloc((void **)&e->d_sync, sizeof(int)));
	CK_CUDA(cudaMemset(e->d_sync, 0, sizeof(int)));

	struct cuco_ctx *c = &e->ctx;
	memset(c, 0, sizeof(*c));
	c->abi_version = CUCO_ABI_VERSION;
	c->rank = e->rank;
	c->nranks = e->nranks;
	c->local_rank = e->rank;
	c->device = e->rank;
	c->sm_count = sms;
	c->shape = &e->shape;
	c->comm = e->comm;
	c->ntensors = NTENSORS;
	e->tensor_bytes = (size_t)e->nranks * MAX_COUNT * 8;
	for (int t = 0; t < NTENSORS; t++) {
		struct cuco_tensor *x = &c->tensors[t];
		snprintf(x->name, sizeof(x->name), "%s", tensor_names[t]);
		x->role = t == IN ? CUCO_ROLE_INPUT : CUCO_ROLE_OUTPUT;
		x->dtype = CUCO_DTYPE_U8;
		x->elems = x->bytes = e->tensor_bytes;
		CK_NCCL(ncclMemAlloc(&x->ptr, x->bytes));
		CK_NCCL(ncclCommWindowRegister(e->comm, x->ptr, x->bytes, &x->win,
		                               NCCL_WIN_COLL_SYMMETRIC));
		x->win_offset = 0;
	}

	/* what the seed asks for: a devcomm with its LSA barriers, maybe scratch */
	memset(&req, 0, sizeof(req));
	if (cuco_program_requirements(c, &req) != 0) {
		fprintf(stderr, "rank %d: cuco_program_requirements: %s\n", e->rank, c->errbuf);
		_exit(EXIT_FATAL);
	}
	if (req.devcomm) {
		ncclDevCommRequirements r;
		memset(&r, 0, sizeof(r));
		r.lsaBarrierCount = req.lsa_barrier_count;
		r.lsaMultimem = false; /* never multicast */
		CK_NCCL(ncclDevCommCreate(e->comm, &r, &e->dc));
		e->have_dc = 1;
		c->devcomm = &e->dc;
	}
	if (req.scratch_bytes) {
		CK_NCCL(ncclMemAlloc(&c->scratch, req.scratch_bytes));
		CK_NCCL(ncclCommWindowRegister(e->comm, c->scratch, req.scratch_bytes,
		                               &c->scratch_win, NCCL_WIN_COLL_SYMMETRIC));
		c->scratch_bytes = req.scratch_bytes;
	}
	void *state = NULL;
	if (cuco_program_init(c, &state) != 0) {
		fprintf(stderr, "rank %d: cuco_program_init: %s\n", e->rank, c->errbuf);
		_exit(EXIT_FATAL);
	}
	host_barrier(e);
}

static void teardown(struct env *e)
{
	g_test = "teardown";
	cuco_program_fini(NULL);
	host_barrier(e);
	if (e->have_dc)
		CK_NCCL(ncclDevCommDestroy(e->comm, &e->dc));
	for (int t = 0; t < NTENSORS; t++) {
		CK_NCCL(ncclCommWindowDeregister(e->comm, e->ctx.tensors[t].win));
		CK_NCCL(ncclMemFree(e->ctx.tensors[t].ptr));
	}
	if (e->ctx.scratch) {
		CK_NCCL(ncclCommWindowDeregister(e->comm, e->ctx.scratch_win));
		CK_NCCL(ncclMemFree(e->ctx.scratch));
	}
	CK_CUDA(cudaFree(e->d_sync));
	CK_NCCL(ncclCommFinalize(e->comm));
	CK_NCCL(ncclCommDestroy(e->comm));
	CK_CUDA(cudaStreamDestroy(e->st));
}

static int child_main(int rank, int nranks, int timeout, int id_rd, const int *id_wr, int res_wr)
{
	struct env e;
	ncclUniqueId id;
	memset(&e, 0, sizeof(e));
	g_rank = e.rank = rank;
	e.nranks = nranks;
	signal(SIGALRM, on_child_alarm);
	alarm((unsigned)timeout);
	if (rank == 0) {
		CK_NCCL(ncclGetUniqueId(&id));
		for (int r = 1; r < nranks; r++)
			if (write(id_wr[r], &id, sizeof(id)) != (ssize_t)sizeof(id))
				_exit(EXIT_FATAL);
	} else {
		size_t got = 0;
		while (got < sizeof(id)) {
			ssize_t k = read(id_rd, (char *)&id + got, sizeof(id) - got);
			if (k <= 0)
				_exit(EXIT_FATAL);
			got += (size_t)k;
		}
	}
	setup(&e, id);

	/* every dtype and op; fp8: one reduction (refused), then the copy collectives alone */
	char name[96];
	int nc = 0;
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
		for (size_t di = 0; di < sizeof(dtypes) / sizeof(dtypes[0]); di++) {
			bool fp8 = dtypes[di] == ncclFloat8e4m3 || dtypes[di] == ncclFloat8e5m2;
			size_t nops = fp8 ? 2 : sizeof(ops) / sizeof(ops[0]);
			for (size_t oi = 0; oi < nops; oi++) {
				struct run_case c;
				c.dt = dtypes[di];
				c.op = ops[fp8 ? 0 : oi];
				c.reduce = !fp8 || oi == 0;
				c.n = counts[ci];
				c.root = nc++ % nranks;
				snprintf(name, sizeof(name), "%s %s count %zu root %d",
				         dtype_names[di],
				         c.reduce ? op_names[fp8 ? 0 : oi] : "copies", c.n, c.root);
				c.name = name;
				run_one(&e, &c);
			}
		}
	teardown(&e);
	int res[2] = {e.passed, e.failed};
	if (write(res_wr, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(EXIT_FATAL);
	alarm(0);
	return 0;
}

/* ------------------------------------------------------------ processes */

static int probe_devices(void)
{
	int fd[2], n = -1;
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) { /* the parent never touches CUDA: the children fork from it */
		int k = 0;
		close(fd[0]);
		if (cudaGetDeviceCount(&k) != cudaSuccess)
			k = 0;
		(void)!write(fd[1], &k, sizeof(k));
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
		n = -1;
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return n;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	int nranks = 0, timeout = 300;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--nranks") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 1, MAX_RANKS, &nranks)) {
				fprintf(stderr, "test_fastpath_ops: --nranks wants 1..%d\n",
				        MAX_RANKS);
				return 2;
			}
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 86400, &timeout)) {
				fprintf(stderr,
				        "test_fastpath_ops: --timeout wants seconds 1..86400\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: test_fastpath_ops [--nranks N] [--timeout S]\n");
			return 2;
		}
	}
	int ndev = probe_devices();
	int n = nranks ? nranks : (ndev < MAX_RANKS ? ndev : MAX_RANKS);
	if (ndev < 1 || n > ndev) {
		printf("test_fastpath_ops: SKIP: %d ranks need as many GPUs, %d visible\n",
		       n < 1 ? 1 : n, ndev < 0 ? 0 : ndev);
		return 77;
	}
	printf("test_fastpath_ops: %d rank%s\n", n, n == 1 ? "" : "s");
	fflush(stdout);

	int id_pipe[MAX_RANKS][2], res_pipe[MAX_RANKS][2], id_wr[MAX_RANKS];
	pid_t pids[MAX_RANKS];
	for (int r = 0; r < n; r++) {
		if (pipe(id_pipe[r]) != 0 || pipe(res_pipe[r]) != 0) {
			perror("test_fastpath_ops: pipe");
			return 1;
		}
		id_wr[r] = id_pipe[r][1];
	}
	for (int r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("test_fastpath_ops: fork");
			for (int k = 0; k < r; k++)
				kill(pids[k], SIGKILL);
			return 1;
		}
		if (pids[r] == 0) {
			for (int k = 0; k < n; k++) {
				close(res_pipe[k][0]);
				if (k != r)
					close(res_pipe[k][1]);
				if (k != r || r == 0)
					close(id_pipe[k][0]);
				if (r != 0)
					close(id_pipe[k][1]);
			}
			int rc = child_main(r, n, timeout, id_pipe[r][0], id_wr, res_pipe[r][1]);
			fflush(stdout);
			fflush(stderr);
			_exit(rc);
		}
	}
	for (int r = 0; r < n; r++) {
		close(id_pipe[r][0]);
		close(id_pipe[r][1]);
		close(res_pipe[r][1]);
	}
	int passed = 0, failed = 0;
	for (int done = 0; done < n; done++) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR) {
				done--;
				continue;
			}
			break;
		}
		int r = 0;
		while (r < n && pids[r] != pid)
			r++;
		if (r == n) {
			done--;
			continue;
		}
		pids[r] = -1;
		int res[2] = {0, 0};
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
		    read(res_pipe[r][0], res, sizeof(res)) == (ssize_t)sizeof(res)) {
			passed += res[0];
			failed += res[1];
		} else {
			failed++;
			fprintf(stderr, "test_fastpath_ops: rank %d %s %d%s\n", r,
			        WIFSIGNALED(st) ? "killed by signal" : "exited with",
			        WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			        WIFEXITED(st) && WEXITSTATUS(st) == EXIT_WATCHDOG ? " (watchdog)"
			                                                          : "");
			for (int k = 0; k < n; k++) /* the others would wait for it forever */
				if (pids[k] > 0)
					kill(pids[k], SIGKILL);
		}
		close(res_pipe[r][0]);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
