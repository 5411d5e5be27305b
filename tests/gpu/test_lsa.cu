/*
 * test_lsa.cu - multi-GPU test of the device library's LSA primitives
 * (device/include/cuco_dev/lsa.cuh) on a real NCCL 2.28 device communicator.
 *
 * Forks one process per visible GPU (at most 8; --nranks N to choose). Rank 0
 * makes the ncclUniqueId and hands it to the others through pipes made before
 * fork; the parent process never touches CUDA. Every rank allocates one
 * symmetric window and checks, with random non-zero inputs and poisoned
 * outputs:
 *   (a) all-gather from copy_grid + cta_barrier, many sizes and alignments,
 *       plus a mid-kernel exchange (copy_cta, acq_rel barrier, read back);
 *   (b) reduce_sum_grid as an all-reduce, bf16 and f32, read-all and
 *       reduce-scatter-to-all-peers forms;
 *   (c) signal ping-pong around the ring (store and multi-CTA add forms), data
 *       written before each signal and checked after the wait;
 *   (d) copy_warp / copy_thread / copy_cta on irregular segments.
 * Prints failures, then "N passed, N failed"; exits nonzero on any failure.
 *
 * Usage: test_lsa [--small] [--nranks N] [--timeout SECONDS]
 *   --small     few, small cases and tiny grids (for compute-sanitizer runs)
 *   --timeout   per-process watchdog (default 120 s); a deadlock exits with a
 *               message naming the test instead of hanging.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include <cuco_dev/launch.cuh>
#include <cuco_dev/lsa.cuh>

#define MAX_RANKS CUCO_LSA_MAX_PEERS
#define BARRIERS 32     /* lsaBarrierCount = most CTAs any test kernel uses */
#define GUARD 256       /* poisoned bytes checked past every output */
#define EXIT_FATAL 2    /* child: setup or CUDA/NCCL failure */
#define EXIT_WATCHDOG 3 /* child: watchdog fired */

struct opts {
	int small;
	int nranks;
	int timeout;
};

/* ------------------------------------------------------------ child state */

static int g_rank = -1;
static const char *volatile g_test = "setup"; /* for the watchdog message */

struct env {
	int rank, nranks;
	int ctas, threads;
	ncclComm_t comm;
	ncclDevComm dc;
	char *buf; /* local base of the window */
	size_t buf_bytes;
	ncclWindow_t win;
	cudaStream_t st;
	int *d_err;                                 /* device mismatch counter */
	int *d_sync;                                /* host barrier scratch */
	size_t max_bytes;                           /* largest per-rank payload */
	size_t in_off, out_off, out2_off, flag_off; /* window layout */
	size_t out_cap;
	int passed, failed;
};

#define CK_CUDA(call)                                                                           \
	do {                                                                                    \
		cudaError_t e_ = (call);                                                        \
		if (e_ != cudaSuccess) {                                                        \
			fprintf(stderr, "rank %d: %s:%d: %s: %s (test %s)\n", g_rank, __FILE__, \
			        __LINE__, #call, cudaGetErrorString(e_), g_test);               \
			fflush(stderr);                                                         \
			_exit(EXIT_FATAL);                                                      \
		}                                                                               \
	} while (0)

#define CK_NCCL(call)                                                                             \
	do {                                                                                      \
		ncclResult_t r_ = (call);                                                         \
		if (r_ != ncclSuccess) {                                                          \
			fprintf(stderr, "rank %d: %s:%d: %s: %s (%s)\n", g_rank, __FILE__,        \
			        __LINE__, #call, ncclGetErrorString(r_), ncclGetLastError(NULL)); \
			fflush(stderr);                                                           \
			_exit(EXIT_FATAL);                                                        \
		}                                                                                 \
	} while (0)

static void on_child_alarm(int sig)
{
	char msg[256];
	int n =
	    snprintf(msg, sizeof(msg), "rank %d: watchdog: test '%s' did not finish (deadlock?)\n",
	             g_rank, g_test);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	_exit(EXIT_WATCHDOG);
}

static void check(struct env *e, bool ok, const char *what)
{
	if (ok) {
		e->passed++;
	} else {
		e->failed++;
		fprintf(stderr, "rank %d: FAIL %s\n", e->rank, what);
	}
}

/* ------------------------------------------------------------ host data */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Random non-zero bytes, a function of (rank, test case). */
static void gen_bytes(std::vector<unsigned char> &v, size_t n, int rank, int tcase)
{
	uint64_t s = 0x1234567ull * (uint64_t)(rank + 1) + 0x9876543ull * (uint64_t)(tcase + 1);
	v.resize(n);
	for (size_t i = 0; i < n; i++)
		v[i] = (unsigned char)(1 + splitmix(&s) % 255);
}

static uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fc0;
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Element i of rank's reduce input, as float (already representable in T). */
static float gen_val(int rank, int tcase, size_t i, bool bf16)
{
	uint64_t s = (uint64_t)rank * 0x10001ull + (uint64_t)tcase * 0x7777ull + i * 0x3ull + 11;
	float f = (float)((int)(splitmix(&s) % 2001) - 1000) / 128.0f;
	if (f == 0.0f)
		f = 0.5f; /* never zero */
	return bf16 ? bf2f(f2bf(f)) : f;
}

static void host_barrier(struct env *e)
{
	CK_NCCL(ncclAllReduce(e->d_sync, e->d_sync, 1, ncclInt, ncclSum, e->comm, e->st));
	CK_CUDA(cudaStreamSynchronize(e->st));
}

/* ------------------------------------------------------------ kernels */

enum ag_mode { AG_GRID = 0, AG_WARP = 1, AG_THREAD = 2, AG_CTA = 3 };

/*
 * All-gather: my bytes at in_off go to every rank's out_off + rank*bytes.
 * AG_GRID: copy_grid, exit barrier release (the NCCL-examples pattern).
 * Others: segments of seg bytes handed to warps / threads / CTAs, exit acq_rel.
 */
__global__ void __launch_bounds__(512) ag_kernel(ncclDevComm dc, ncclWindow_t win, size_t in_off,
                                                 size_t out_off, size_t bytes, int mode, size_t seg)
{
	cuco::cta_barrier bar(dc, blockIdx.x);
	bar.sync_relaxed();
	const char *src = (const char *)cuco::lsa_local(win, in_off);
	int me = cuco::lsa_rank(dc), n = cuco::lsa_size(dc);
	size_t nseg = seg ? (bytes + seg - 1) / seg : 0;
	for (int i = 0; i < n; i++) {
		int p = (me + i) % n;
		char *dst = (char *)cuco::lsa_peer(win, out_off + (size_t)me * bytes, p);
		if (mode == AG_GRID) {
			cuco::copy_grid(dst, src, bytes);
		} else if (mode == AG_WARP) {
			size_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
			size_t nw = (size_t)gridDim.x * blockDim.x / 32;
			for (size_t s = w; s < nseg; s += nw) {
				size_t len = bytes - s * seg < seg ? bytes - s * seg : seg;
				cuco::copy_warp(dst + s * seg, src + s * seg, len);
			}
		} else if (mode == AG_THREAD) {
			size_t t = blockIdx.x * blockDim.x + threadIdx.x;
			size_t nt = (size_t)gridDim.x * blockDim.x;
			for (size_t s = t; s < nseg; s += nt) {
				size_t len = bytes - s * seg < seg ? bytes - s * seg : seg;
				cuco::copy_thread(dst + s * seg, src + s * seg, len);
			}
		} else {
			for (size_t s = blockIdx.x; s < nseg; s += gridDim.x) {
				size_t len = bytes - s * seg < seg ? bytes - s * seg : seg;
				cuco::copy_cta(dst + s * seg, src + s * seg, len);
			}
		}
	}
	if (mode == AG_GRID)
		bar.sync_release();
	else
		bar.sync_acq_rel();
}

/*
 * Mid-kernel exchange: CTA b pushes its part of my input into every peer's
 * out, acq_rel barrier, then reads what the peers' CTA b pushed into my out
 * and copies it to out2. Catches a barrier that does not acquire.
 */
__global__ void __launch_bounds__(512) xchg_kernel(ncclDevComm dc, ncclWindow_t win, size_t in_off,
                                                   size_t out_off, size_t out2_off, size_t bytes)
{
	cuco::cta_barrier bar(dc, blockIdx.x);
	bar.sync_relaxed();
	int me = cuco::lsa_rank(dc), n = cuco::lsa_size(dc);
	size_t part = (bytes + gridDim.x - 1) / gridDim.x;
	size_t lo = part * blockIdx.x < bytes ? part * blockIdx.x : bytes;
	size_t hi = lo + part < bytes ? lo + part : bytes;
	const char *src = (const char *)cuco::lsa_local(win, in_off);
	for (int i = 0; i < n; i++) {
		int p = (me + i) % n;
		char *dst = (char *)cuco::lsa_peer(win, out_off + (size_t)me * bytes, p);
		cuco::copy_cta(dst + lo, src + lo, hi - lo);
	}
	bar.sync_acq_rel();
	char *out = (char *)cuco::lsa_local(win, out_off);
	char *out2 = (char *)cuco::lsa_local(win, out2_off);
	for (int p = 0; p < n; p++)
		cuco::copy_cta(out2 + (size_t)p * bytes + lo, out + (size_t)p * bytes + lo,
		               hi - lo);
	bar.sync_acq_rel();
}

/*
 * All-reduce of count elements of T at in_off into out_off on every rank.
 * split == 0: every rank reads all peers' inputs and writes its own output.
 * split == 1: rank r reduces chunk r and writes it into every peer's output.
 */
template <typename T>
__global__ void __launch_bounds__(512) ar_kernel(ncclDevComm dc, ncclWindow_t win, size_t in_off,
                                                 size_t out_off, size_t count, int split)
{
	cuco::cta_barrier bar(dc, blockIdx.x);
	bar.sync_relaxed();
	int me = cuco::lsa_rank(dc), n = cuco::lsa_size(dc);
	const T *srcs[CUCO_LSA_MAX_PEERS];
	if (!split) {
		for (int p = 0; p < n; p++)
			srcs[p] = (const T *)cuco::lsa_peer(win, in_off, p);
		cuco::reduce_sum_grid<T>((T *)cuco::lsa_local(win, out_off), srcs, n, count);
	} else {
		size_t chunk = (count + n - 1) / n;
		size_t lo = chunk * me < count ? chunk * me : count;
		size_t hi = lo + chunk < count ? lo + chunk : count;
		for (int p = 0; p < n; p++)
			srcs[p] = (const T *)cuco::lsa_peer(win, in_off + lo * sizeof(T), p);
		for (int i = 0; i < n; i++) {
			int p = (me + i) % n;
			T *dst = (T *)cuco::lsa_peer(win, out_off + lo * sizeof(T), p);
			cuco::reduce_sum_grid<T>(dst, srcs, n, hi - lo);
		}
	}
	bar.sync_acq_rel();
}

__device__ __forceinline__ uint64_t pp_val(uint64_t it, int src, size_t k)
{
	return (it << 40) ^ ((uint64_t)(src + 1) << 32) ^ (k * 2654435761ull + 1);
}

/*
 * Token ring: rank r waits for iteration i from r-1, checks the payload, then
 * writes payload i into r+1's buffer and signals. use_add: every CTA writes
 * its slice and adds 1 (wait for gridDim.x * i); else one CTA stores i.
 */
__global__ void __launch_bounds__(512)
    pingpong_kernel(ncclDevComm dc, ncclWindow_t win, size_t data_off, size_t flag_off, int iters,
                    size_t words, int use_add, int *err)
{
	int me = cuco::lsa_rank(dc), n = cuco::lsa_size(dc);
	int next = (me + 1) % n, prev = (me + n - 1) % n;
	uint64_t *myflag = (uint64_t *)cuco::lsa_local(win, flag_off);
	uint64_t *nextflag = (uint64_t *)cuco::lsa_peer(win, flag_off, next);
	const uint64_t *mybuf = (const uint64_t *)cuco::lsa_local(win, data_off);
	uint64_t *nextbuf = (uint64_t *)cuco::lsa_peer(win, data_off, next);
	uint64_t unit = use_add ? gridDim.x : 1;
	size_t total = words * gridDim.x;
	int bad = 0;

	for (int i = 1; i <= iters + 1; i++) {
		uint64_t expect = me != 0 ? (uint64_t)i : (uint64_t)(i - 1);
		if (expect >= 1 && expect <= (uint64_t)iters) {
			cuco::signal_wait_ge_cta(myflag, unit * expect);
			for (size_t k = threadIdx.x; k < total; k += blockDim.x)
				bad += mybuf[k] != pp_val(expect, prev, k);
		}
		if (i > iters)
			break;
		for (size_t k = threadIdx.x; k < words; k += blockDim.x) {
			size_t g = blockIdx.x * words + k;
			nextbuf[g] = pp_val((uint64_t)i, me, g);
		}
		if (use_add)
			cuco::signal_add_release_cta(nextflag, 1);
		else
			cuco::signal_store_release_cta(nextflag, (uint64_t)i);
	}
	if (threadIdx.x == 0 && cuco::signal_load_acquire(myflag) != unit * (uint64_t)iters)
		bad += 1000000;
	if (bad)
		atomicAdd(err, bad);
}

/* ------------------------------------------------------------ tests */

static void put_input(struct env *e, size_t off, const void *h, size_t n)
{
	CK_CUDA(cudaMemcpyAsync(e->buf + off, h, n, cudaMemcpyHostToDevice, e->st));
}

/* Poison out (and out2) with zeros; inputs are never zero bytes. */
static void poison_out(struct env *e, int byte)
{
	CK_CUDA(cudaMemsetAsync(e->buf + e->out_off, byte, e->out_cap, e->st));
	CK_CUDA(cudaMemsetAsync(e->buf + e->out2_off, byte, e->out_cap, e->st));
}

/* Check out region: [0, shift) and past n*bytes poisoned, rank segments = inputs. */
static bool check_gather(struct env *e, size_t region_off, size_t shift, size_t bytes, int tcase,
                         char *why, size_t whylen)
{
	size_t span = shift + (size_t)e->nranks * bytes + GUARD;
	std::vector<unsigned char> h(span), ref;
	CK_CUDA(cudaMemcpy(h.data(), e->buf + region_off, span, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < shift; i++)
		if (h[i] != 0) {
			snprintf(why, whylen, "byte %zu before the output was overwritten", i);
			return false;
		}
	for (int r = 0; r < e->nranks; r++) {
		gen_bytes(ref, bytes, r, tcase);
		const unsigned char *seg = h.data() + shift + (size_t)r * bytes;
		for (size_t j = 0; j < bytes; j++)
			if (seg[j] != ref[j]) {
				snprintf(why, whylen, "segment of rank %d byte %zu: got %u want %u",
				         r, j, seg[j], ref[j]);
				return false;
			}
	}
	for (size_t i = shift + (size_t)e->nranks * bytes; i < span; i++)
		if (h[i] != 0) {
			snprintf(why, whylen, "guard byte %zu past the output was overwritten",
			         i - shift - (size_t)e->nranks * bytes);
			return false;
		}
	return true;
}

static int g_case; /* test case counter: seeds the data */

static void test_allgather(struct env *e, int mode, size_t bytes, size_t src_shift,
                           size_t dst_shift, size_t seg)
{
	static const char *names[] = {"allgather copy_grid", "copy_warp", "copy_thread",
	                              "copy_cta"};
	char what[256], why[160];
	int tcase = ++g_case;
	std::vector<unsigned char> in;
	g_test = names[mode];
	gen_bytes(in, bytes, e->rank, tcase);
	put_input(e, e->in_off + src_shift, in.data(), bytes);
	poison_out(e, 0);
	CK_CUDA(cudaStreamSynchronize(e->st));
	host_barrier(e);
	ag_kernel<<<e->ctas, e->threads, 0, e->st>>>(e->dc, e->win, e->in_off + src_shift,
	                                             e->out_off + dst_shift, bytes, mode, seg);
	CK_CUDA(cudaGetLastError());
	CK_CUDA(cudaStreamSynchronize(e->st));
	bool ok = check_gather(e, e->out_off, dst_shift, bytes, tcase, why, sizeof(why));
	snprintf(what, sizeof(what), "%s bytes=%zu src+%zu dst+%zu seg=%zu: %s", names[mode], bytes,
	         src_shift, dst_shift, seg, ok ? "ok" : why);
	check(e, ok, what);
	host_barrier(e); /* nobody starts the next case while a peer still checks */
}

static void test_xchg(struct env *e, size_t bytes)
{
	char what[256], why[160];
	int tcase = ++g_case;
	std::vector<unsigned char> in;
	g_test = "mid-kernel exchange";
	gen_bytes(in, bytes, e->rank, tcase);
	put_input(e, e->in_off, in.data(), bytes);
	poison_out(e, 0);
	CK_CUDA(cudaStreamSynchronize(e->st));
	host_barrier(e);
	xchg_kernel<<<e->ctas, e->threads, 0, e->st>>>(e->dc, e->win, e->in_off, e->out_off,
	                                               e->out2_off, bytes);
	CK_CUDA(cudaGetLastError());
	CK_CUDA(cudaStreamSynchronize(e->st));
	bool ok = check_gather(e, e->out2_off, 0, bytes, tcase, why, sizeof(why));
	snprintf(what, sizeof(what), "mid-kernel exchange (acq_rel) bytes=%zu: %s", bytes,
	         ok ? "ok" : why);
	check(e, ok, what);
	host_barrier(e);
}

template <typename T>
static void test_allreduce(struct env *e, size_t count, size_t in_shift, size_t out_shift,
                           int split)
{
	const bool bf = sizeof(T) == 2;
	char what[256];
	int tcase = ++g_case;
	g_test = bf ? "allreduce bf16" : "allreduce f32";
	std::vector<unsigned char> in(count * sizeof(T)); /* raw T elements */
	for (size_t i = 0; i < count; i++) {
		float f = gen_val(e->rank, tcase, i, bf);
		if (bf) {
			uint16_t b = f2bf(f);
			memcpy(&in[i * 2], &b, 2);
		} else {
			memcpy(&in[i * 4], &f, 4);
		}
	}
	size_t in_off = e->in_off + in_shift * sizeof(T);
	size_t out_off = e->out_off + out_shift * sizeof(T);
	put_input(e, in_off, in.data(), count * sizeof(T));
	poison_out(e, 0xff); /* NaN in both types */
	CK_CUDA(cudaStreamSynchronize(e->st));
	host_barrier(e);
	ar_kernel<T>
	    <<<e->ctas, e->threads, 0, e->st>>>(e->dc, e->win, in_off, out_off, count, split);
	CK_CUDA(cudaGetLastError());
	CK_CUDA(cudaStreamSynchronize(e->st));

	size_t span = count + 16 / sizeof(T);
	std::vector<unsigned char> out(span * sizeof(T));
	CK_CUDA(cudaMemcpy(out.data(), e->buf + out_off, span * sizeof(T), cudaMemcpyDeviceToHost));
	size_t bad = 0, first = 0;
	float got0 = 0, want0 = 0;
	for (size_t i = 0; i < count; i++) {
		float acc = gen_val(0, tcase, i, bf);
		for (int r = 1; r < e->nranks; r++)
			acc += gen_val(r, tcase, i, bf);
		float want, got;
		if (bf) {
			uint16_t b;
			memcpy(&b, &out[i * 2], 2);
			got = bf2f(b);
			want = bf2f(f2bf(acc));
		} else {
			memcpy(&got, &out[i * 4], 4);
			want = acc;
		}
		float tol = bf ? fabsf(want) * (1.0f / 128) : fabsf(want) * 1e-6f;
		if (!(fabsf(got - want) <= tol)) {
			if (bad++ == 0) {
				first = i;
				got0 = got;
				want0 = want;
			}
		}
	}
	for (size_t i = count; i < span; i++) {
		for (size_t k = 0; k < sizeof(T); k++)
			if (out[i * sizeof(T) + k] != 0xff) {
				if (bad++ == 0) {
					first = i;
					got0 = 0;
					want0 = 0;
				}
				break;
			}
	}
	char why[128];
	if (bad)
		snprintf(why, sizeof(why), "%zu wrong, first [%zu] got %g want %g%s", bad, first,
		         got0, want0, first >= count ? " (guard overwritten)" : "");
	snprintf(what, sizeof(what), "%s %s count=%zu in+%zu out+%zu: %s",
	         bf ? "reduce_sum_grid bf16" : "reduce_sum_grid f32",
	         split ? "scatter-to-peers" : "read-all", count, in_shift, out_shift,
	         bad ? why : "ok");
	check(e, bad == 0, what);
	host_barrier(e);
}

static void test_pingpong(struct env *e, int use_add, int ctas, int iters, size_t words)
{
	char what[256];
	int herr = 0;
	g_test = use_add ? "ping-pong signal_add_release" : "ping-pong signal_store_release";
	CK_CUDA(cudaMemsetAsync(e->buf + e->flag_off, 0, 64, e->st));
	CK_CUDA(cudaMemsetAsync(e->buf + e->out_off, 0, words * ctas * 8, e->st));
	CK_CUDA(cudaMemsetAsync(e->d_err, 0, sizeof(int), e->st));
	CK_CUDA(cudaStreamSynchronize(e->st));
	host_barrier(e); /* every flag is zero before anyone signals */
	pingpong_kernel<<<ctas, e->threads, 0, e->st>>>(e->dc, e->win, e->out_off, e->flag_off,
	                                                iters, words, use_add, e->d_err);
	CK_CUDA(cudaGetLastError());
	CK_CUDA(cudaStreamSynchronize(e->st));
	CK_CUDA(cudaMemcpy(&herr, e->d_err, sizeof(int), cudaMemcpyDeviceToHost));
	snprintf(what, sizeof(what), "%s ctas=%d iters=%d words=%zu: %s%d", g_test, ctas, iters,
	         words, herr ? "mismatches (+1000000 = bad final flag) " : "ok", herr);
	if (!herr)
		snprintf(what, sizeof(what), "%s ctas=%d iters=%d words=%zu: ok", g_test, ctas,
		         iters, words);
	check(e, herr == 0, what);
	host_barrier(e);
}

static void run_tests(struct env *e, const struct opts *o)
{
	static const size_t sizes_full[] = {1,   2,    3,    15,        16,           17,     31,
	                                    255, 4096, 4099, 65536 + 5, 1048576 + 13, 4194304};
	static const size_t sizes_small[] = {1, 3, 16, 17, 255, 4099};
	static const size_t shifts[][2] = {{1, 1}, {3, 8}, {8, 0}, {5, 2}, {0, 7}};
	const size_t *sizes = o->small ? sizes_small : sizes_full;
	size_t nsizes = o->small ? sizeof(sizes_small) / sizeof(sizes_small[0])
	                         : sizeof(sizes_full) / sizeof(sizes_full[0]);

	/* (a) all-gather, copy_grid */
	for (size_t i = 0; i < nsizes; i++) {
		test_allgather(e, AG_GRID, sizes[i], 0, 0, 0);
		test_allgather(e, AG_GRID, sizes[i], shifts[i % 5][0], shifts[i % 5][1], 0);
	}
	test_xchg(e, o->small ? 4099 : 1048576 + 3);
	test_xchg(e, 17);

	/* (b) all-reduce */
	static const size_t counts_full[] = {1, 7, 8, 1003, 65536 + 5, 1048576 + 1};
	static const size_t counts_small[] = {1, 7, 8, 1003};
	static const size_t eshift[][2] = {{0, 0}, {1, 1}, {1, 0}};
	const size_t *counts = o->small ? counts_small : counts_full;
	size_t ncounts = o->small ? 4 : 6;
	for (size_t i = 0; i < ncounts; i++)
		for (int s = 0; s < 3; s++)
			for (int split = 0; split < 2; split++) {
				test_allreduce<__nv_bfloat16>(e, counts[i], eshift[s][0],
				                              eshift[s][1], split);
				test_allreduce<float>(e, counts[i], eshift[s][0], eshift[s][1],
				                      split);
			}

	/* (c) signals */
	test_pingpong(e, 0, 1, o->small ? 8 : 1000, o->small ? 64 : 2048);
	test_pingpong(e, 1, e->ctas, o->small ? 8 : 500, o->small ? 32 : 1024);

	/* (d) narrower copies on irregular segments */
	static const size_t seg_sizes_full[] = {1, 33, 4099, 65536 + 7};
	static const size_t seg_sizes_small[] = {1, 33, 4099};
	static const size_t segs[] = {37, 1000, 4096 + 3};
	const size_t *ss = o->small ? seg_sizes_small : seg_sizes_full;
	size_t nss = o->small ? 3 : 4;
	for (int mode = AG_WARP; mode <= AG_CTA; mode++)
		for (size_t i = 0; i < nss; i++)
			test_allgather(e, mode, ss[i], i % 3, (i * 5) % 16, segs[i % 3]);
}

/* ------------------------------------------------------------ processes */

static int child_main(int rank, int nranks, const struct opts *o, const int *id_rd,
                      const int *id_wr, int res_wr)
{
	struct env e;
	memset(&e, 0, sizeof(e));
	g_rank = rank;
	e.rank = rank;
	e.nranks = nranks;
	signal(SIGALRM, on_child_alarm);
	alarm((unsigned)o->timeout);

	ncclUniqueId id;
	if (rank == 0) {
		CK_NCCL(ncclGetUniqueId(&id));
		for (int r = 1; r < nranks; r++)
			if (write(id_wr[r], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
				fprintf(stderr, "rank 0: write id: %s\n", strerror(errno));
				_exit(EXIT_FATAL);
			}
	} else {
		size_t got = 0;
		while (got < sizeof(id)) {
			ssize_t k = read(id_rd[rank], (char *)&id + got, sizeof(id) - got);
			if (k <= 0) {
				fprintf(stderr, "rank %d: read id: %s\n", rank,
				        k == 0 ? "rank 0 exited" : strerror(errno));
				_exit(EXIT_FATAL);
			}
			got += (size_t)k;
		}
	}

	CK_CUDA(cudaSetDevice(rank));
	CK_CUDA(cudaStreamCreateWithFlags(&e.st, cudaStreamNonBlocking));
	CK_NCCL(ncclCommInitRank(&e.comm, nranks, id, rank));

	e.ctas = o->small ? 4 : BARRIERS;
	e.threads = o->small ? 128 : 512;
	e.max_bytes = o->small ? 8192 : 4194304 + 64;
	size_t in_cap = e.max_bytes + 64;
	e.out_cap = (size_t)nranks * e.max_bytes + 64 + GUARD;
	e.in_off = 0;
	e.out_off = (in_cap + 4095) & ~(size_t)4095;
	e.out2_off = (e.out_off + e.out_cap + 4095) & ~(size_t)4095;
	e.flag_off = (e.out2_off + e.out_cap + 4095) & ~(size_t)4095;
	e.buf_bytes = e.flag_off + 4096;

	void *p = NULL;
	CK_NCCL(ncclMemAlloc(&p, e.buf_bytes));
	e.buf = (char *)p;
	CK_CUDA(cudaMemset(e.buf, 0, e.buf_bytes));
	CK_NCCL(
	    ncclCommWindowRegister(e.comm, e.buf, e.buf_bytes, &e.win, NCCL_WIN_COLL_SYMMETRIC));
	ncclDevCommRequirements req;
	memset(&req, 0, sizeof(req));
	req.lsaBarrierCount = BARRIERS;
	CK_NCCL(ncclDevCommCreate(e.comm, &req, &e.dc));
	CK_CUDA(cudaMalloc((void **)&e.d_err, sizeof(int)));
	CK_CUDA(cudaMalloc((void **)&e.d_sync, sizeof(int)));
	CK_CUDA(cudaMemset(e.d_sync, 0, sizeof(int)));
	if (e.dc.lsaSize != nranks || e.dc.lsaRank != rank) {
		fprintf(stderr,
		        "rank %d: LSA team is %d ranks (lsaRank %d), need all %d on NVLink\n", rank,
		        e.dc.lsaSize, e.dc.lsaRank, nranks);
		_exit(EXIT_FATAL);
	}
	if (e.dc.lsaSize > MAX_RANKS) {
		fprintf(stderr, "rank %d: more than %d LSA ranks\n", rank, MAX_RANKS);
		_exit(EXIT_FATAL);
	}
	host_barrier(&e);

	run_tests(&e, o);

	g_test = "teardown";
	CK_CUDA(cudaStreamSynchronize(e.st));
	host_barrier(&e);
	CK_NCCL(ncclDevCommDestroy(e.comm, &e.dc));
	CK_NCCL(ncclCommWindowDeregister(e.comm, e.win));
	CK_NCCL(ncclMemFree(e.buf));
	CK_CUDA(cudaFree(e.d_err));
	CK_CUDA(cudaFree(e.d_sync));
	CK_NCCL(ncclCommFinalize(e.comm));
	CK_NCCL(ncclCommDestroy(e.comm));
	CK_CUDA(cudaStreamDestroy(e.st));

	int res[2] = {e.passed, e.failed};
	if (write(res_wr, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(EXIT_FATAL);
	alarm(0);
	return 0;
}

static int probe_devices(void)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int n = 0;
		close(fd[0]);
		if (cudaGetDeviceCount(&n) != cudaSuccess)
			n = -1;
		(void)!write(fd[1], &n, sizeof(n));
		_exit(0);
	}
	close(fd[1]);
	int n = -1;
	if (read(fd[0], &n, sizeof(n)) != (ssize_t)sizeof(n))
		n = -1;
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return n;
}

/* Host-only checks of launch.cuh's window_find (no CUDA calls). */
static void test_window_find(int *passed, int *failed)
{
	static cuco_ctx ctx;
	static char fake[4096];
	ncclWindow_t w = NULL, tw = (ncclWindow_t)(uintptr_t)0x1000,
	             sw = (ncclWindow_t)(uintptr_t)0x2000;
	size_t off = 0;
	memset(&ctx, 0, sizeof(ctx));
	ctx.ntensors = 1;
	ctx.tensors[0].ptr = fake + 1024;
	ctx.tensors[0].bytes = 512;
	ctx.tensors[0].win = tw;
	ctx.tensors[0].win_offset = 4096;
	ctx.scratch = fake;
	ctx.scratch_bytes = 1024;
	ctx.scratch_win = sw;
	struct {
		const void *p;
		size_t n;
		int rc;
		ncclWindow_t w;
		size_t off;
	} cases[] = {
	    {fake + 1024 + 16, 100, 0, tw, 4096 + 16},
	    {fake + 1024, 512, 0, tw, 4096},
	    {fake + 1024 + 500, 13, 1, NULL, 0},
	    {fake + 8, 8, 0, sw, 8},
	    {fake + 2000, 1, 1, NULL, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ctx.errbuf[0] = 0;
		int rc = cuco::window_find(&ctx, NULL, cases[i].p, cases[i].n, &w, &off);
		bool ok = rc == cases[i].rc &&
		          (rc ? ctx.errbuf[0] != 0 : (w == cases[i].w && off == cases[i].off));
		if (ok) {
			(*passed)++;
		} else {
			(*failed)++;
			fprintf(stderr, "FAIL window_find case %zu: rc %d off %zu msg '%s'\n", i,
			        rc, off, ctx.errbuf);
		}
	}
}

static volatile sig_atomic_t g_parent_alarm;
static void on_parent_alarm(int sig)
{
	g_parent_alarm = 1;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return 1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {0, 0, 120};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--small") == 0) {
			o.small = 1;
		} else if (strcmp(argv[i], "--nranks") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 2, MAX_RANKS, &o.nranks)) {
				fprintf(stderr, "test_lsa: --nranks wants 2..%d\n", MAX_RANKS);
				return 2;
			}
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			if (parse_int(argv[++i], 1, 86400, &o.timeout)) {
				fprintf(stderr, "test_lsa: --timeout wants seconds 1..86400\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: test_lsa [--small] [--nranks N] [--timeout S]\n");
			return 2;
		}
	}
	int passed = 0, failed = 0;
	test_window_find(&passed, &failed);

	int ndev = probe_devices();
	if (ndev < 0) {
		fprintf(stderr, "test_lsa: cannot count CUDA devices\n");
		printf("%d passed, %d failed\n", passed, failed + 1);
		return 1;
	}
	int n = o.nranks ? o.nranks : (ndev < MAX_RANKS ? ndev : MAX_RANKS);
	if (n < 2 || n > ndev) {
		printf("test_lsa: SKIP: needs 2 GPUs for %d ranks, %d visible\n", n < 2 ? 2 : n,
		       ndev);
		printf("%d passed, %d failed\n", passed, failed);
		return failed ? 1 : 77; /* ctest: skipped, not passed */
	}
	printf("test_lsa: %d ranks%s\n", n, o.small ? " (small)" : "");
	fflush(stdout);

	int id_pipe[MAX_RANKS][2], res_pipe[MAX_RANKS][2];
	int id_rd[MAX_RANKS], id_wr[MAX_RANKS];
	for (int r = 0; r < n; r++) {
		if (pipe(id_pipe[r]) != 0 || pipe(res_pipe[r]) != 0) {
			perror("test_lsa: pipe");
			return 1;
		}
		id_rd[r] = id_pipe[r][0];
		id_wr[r] = id_pipe[r][1];
	}
	pid_t pids[MAX_RANKS];
	for (int r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("test_lsa: fork");
			for (int k = 0; k < r; k++)
				kill(pids[k], SIGKILL);
			return 1;
		}
		if (pids[r] == 0) {
			/* keep only this rank's pipe ends */
			for (int k = 0; k < n; k++) {
				close(res_pipe[k][0]);
				if (k != r)
					close(res_pipe[k][1]);
				if (k != r || r == 0)
					close(id_pipe[k][0]);
				if (r != 0)
					close(id_pipe[k][1]);
			}
			int rc = child_main(r, n, &o, id_rd, id_wr, res_pipe[r][1]);
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

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_parent_alarm; /* no SA_RESTART: waitpid returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)o.timeout + 30);

	int alive = n, killed = 0;
	while (alive > 0) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR && g_parent_alarm && !killed) {
				fprintf(stderr,
				        "test_lsa: children still running after %d s, killing\n",
				        o.timeout + 30);
				for (int r = 0; r < n; r++)
					if (pids[r] > 0)
						kill(pids[r], SIGKILL);
				killed = 1;
				continue;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		int r = 0;
		while (r < n && pids[r] != pid)
			r++;
		if (r == n)
			continue;
		pids[r] = -1;
		alive--;
		bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		int res[2] = {0, 0};
		if (clean && read(res_pipe[r][0], res, sizeof(res)) == (ssize_t)sizeof(res)) {
			passed += res[0];
			failed += res[1];
		} else {
			failed++;
			if (WIFEXITED(st))
				fprintf(stderr, "test_lsa: rank %d exited with %d%s\n", r,
				        WEXITSTATUS(st),
				        WEXITSTATUS(st) == EXIT_WATCHDOG ? " (watchdog)" : "");
			else if (WIFSIGNALED(st))
				fprintf(stderr, "test_lsa: rank %d killed by signal %d\n", r,
				        WTERMSIG(st));
			else
				fprintf(stderr, "test_lsa: rank %d sent no results\n", r);
			/* the others would wait for it forever */
			for (int k = 0; k < n; k++)
				if (pids[k] > 0)
					kill(pids[k], SIGKILL);
		}
		close(res_pipe[r][0]);
	}
	alarm(0);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
