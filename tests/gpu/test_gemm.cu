// test_gemm: correctness + timing of cuco::gemm_bf16 (device/include/cuco_dev/gemm.cuh)
// against cuBLAS (bf16 in, fp32 compute, bf16 out).
//
//   test_gemm            full table (correctness + timing of every shape)
//   test_gemm --quick    correctness only, small/medium shapes
//   test_gemm --sweep    timing of the tile-order group size per shape
//   test_gemm --group    grouped launches (problems sharing A or B, some gated
//                        on flags their copies set): correct C for every
//                        problem, then the own GEMM alone vs own + peer's
//                        problem, its operand pulled from GPU 1 by the copy
//                        engine
//   test_gemm --push     the bulk-copy push epilogue per tile width and
//                        staging round: correct copies (local, and to GPU 1
//                        when it is a peer), then GEMM alone vs GEMM + push
//                        timed at the per-rank shapes of gemm_allgather
//   test_gemm --chunks   where copy-engine stream overlap's time goes: cuBLAS
//                        whole and in row chunks, alone and with each chunk
//                        copied by the copy engine (locally, pushed to GPU 1,
//                        pulled by GPU 1) as soon as it is computed; the time
//                        to the GEMM's end and to the last copy's end; the
//                        chunks on one stream, or alternating over two (so
//                        that a chunk's CTAs may start while the previous
//                        chunk's last wave drains); push2: each chunk's
//                        push split in two halves on two copy streams
//   test_gemm --split    the split tail (gemm_bf16_plan_split) per tile width
//                        and ways against the unsplit plan: correct C, then
//                        the time, and the MiB of C stored in the kernel's
//                        last 10 and 25 us (from per-tile time stamps)
//   test_gemm --grid     the persistent grid: all SMs against as few CTAs as
//                        keep the waves (every CTA the same tile count), the
//                        GEMM alone and pushing to GPU 1, interleaved
//   --vs                 our GEMM against cuBLAS, fairly: single launches
//                        alternating between the two, operands rotated through
//                        enough sets to defeat L2, at the per-rank shapes of
//                        gemm_allgather; median, p10, p90 per side (not with
//                        --clocks, whose probe would hold an SM cuBLAS needs);
//                        where gemm_bf16's lone rule splits the short last
//                        wave, the split plan too (its tile width negated)
//   --sustained          --vs: every launch queued back to back (no hold, no
//                        gap, one sync at the end), each timed by the events
//                        between it and the next: the card at its power cap,
//                        as cuco bench's sustained timing
//   --iters N, --warm N  timed and untimed launches per series (30, 5)
//   --gap US             idle microseconds after each timed launch (0), so the
//                        card stays under its power cap (burst-like timing)
//   --hold US            a kernel holds the GPU US microseconds before each
//                        timed launch while the host enqueues it, so host
//                        enqueue time is not counted (--vs: 200, else 0)
//   --shape M N K        --push / --group / --chunks / --split / --vs: time this shape only
//   --no-features        --push: the timings only, no feature checks first
//   --clocks             --push: also the mean SM clock over each timed launch
//                        (clock64 against %globaltimer, read by a one-CTA probe
//                        on another stream), median per series, in MHz
//   --pace P[,P...]      --push: time only the GEMM alone and the copying-warp
//                        push, each tile's copy spread over P % of the tile
//                        before it (the epilogue's pace; 0 = unpaced), the
//                        last tile by the warps or by bulk copies (+lb), at
//                        tile_n 256 and 128; staged_us: the tile staged and
//                        handed to the warps, which copy it nowhere
//
// Checks per shape: C poisoned with NaN before the run; relative L2 error
// ||C - ref|| / ||ref|| < 1e-2 against cuBLAS; no NaN/unwritten element;
// #wrong = elements with |C-ref| > 0.05*|ref| + 0.02*rms(ref); 64 sampled
// elements against a float64 host dot product. Also: epilogue hook (each
// tile exactly once, tile visible when the hook runs), max_ctas, start_tile,
// plan_set_A, narrowed tiles (tile_n 128 and 64), the push epilogue (every
// copy equal to C), grouped launches with gated problems, split tails (2 to
// 8 ways: each tile's epilogue once, the arrival counters back at zero after
// every launch), and rejection of bad shapes. Exit status 1 on any failure.
#include <cuco_dev/gemm.cuh>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>
#include <vector>

#define CK(x)                                                                        \
	do {                                                                         \
		cudaError_t e_ = (x);                                                \
		if (e_ != cudaSuccess) {                                             \
			fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, \
			        cudaGetErrorString(e_));                             \
			exit(2);                                                     \
		}                                                                    \
	} while (0)
#define CKB(x)                                                                              \
	do {                                                                                \
		cublasStatus_t s_ = (x);                                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                          \
			fprintf(stderr, "%s:%d: %s -> cublas %d\n", __FILE__, __LINE__, #x, \
			        (int)s_);                                                   \
			exit(2);                                                            \
		}                                                                           \
	} while (0)

static int g_fail = 0;
static int g_warm = 5;           // untimed launches before each timed series (--warm)
static int g_gap_us = 0;         // idle us after each timed launch (--gap)
static std::vector<int> g_paces; // --pace: copying-warp push paces to time, percent
static int g_shape[3] = {0};     // --shape M N K: the only shape of --push / --group timing

__device__ __forceinline__ uint32_t hash32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}
// uniform in [-1, 1), rounded to bf16
__global__ void fill_rand(__nv_bfloat16 *p, size_t n, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32(seed * 0x9E3779B97F4A7C15ULL + i);
		p[i] = __float2bfloat16((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
	}
}
// sum (c-r)^2, sum r^2, #nan, #wrong (needs rms => two passes: pass 1 sums, pass 2 counts)
__global__ void diff_sums(const __nv_bfloat16 *c, const __nv_bfloat16 *r, size_t n, double *out,
                          unsigned long long *nan_count)
{
	double se = 0, sr = 0;
	unsigned long long nn = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float a = __bfloat162float(c[i]), b = __bfloat162float(r[i]);
		if (isnan(a) || isinf(a)) {
			nn++;
			continue;
		}
		double dd = (double)a - b;
		se += dd * dd;
		sr += (double)b * b;
	}
	atomicAdd(&out[0], se);
	atomicAdd(&out[1], sr);
	if (nn)
		atomicAdd(nan_count, nn);
}
__global__ void count_wrong(const __nv_bfloat16 *c, const __nv_bfloat16 *r, size_t n, float rms,
                            unsigned long long *wrong)
{
	unsigned long long w = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float a = __bfloat162float(c[i]), b = __bfloat162float(r[i]);
		if (!(fabsf(a - b) <= 0.05f * fabsf(b) + 0.02f * rms))
			w++;
	}
	if (w)
		atomicAdd(wrong, w);
}

// Epilogue used by the hook test: counts visits per tile and, from the last
// consumer thread, copies the tile's first and last elements (written by
// other warps / the other warpgroup) to probe[].
struct probe_epilogue {
	unsigned *visits;
	__nv_bfloat16 *probe;
	const __nv_bfloat16 *C;
	long long ldc;
	int tiles_n, n; // n: columns of C (the last tile column may overlap the one before)
	__device__ void operator()(int tm, int tn, int rows, int cols) const
	{
		const int tid = threadIdx.x - 128;
		const int tile = tm * tiles_n + tn;
		if (tid == 255) {
			atomicAdd(&visits[tile], 1u);
			const __nv_bfloat16 *t =
			    C + (long long)tm * rows * ldc + cuco::gemm_bf16_tile_col0(tn, cols, n);
			probe[2 * tile] = t[0];
			probe[2 * tile + 1] = t[(long long)(rows - 1) * ldc + cols - 1];
		}
	}
};

struct Shape {
	int M, N, K;
};

// Synchronize with a deadline: a hung kernel (bad barrier phase, bad tensor
// map) must not eat the whole device lease.
static void sync_or_die(cudaStream_t st, double seconds, const char *what)
{
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	CK(cudaEventRecord(ev, st));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			break;
		if (e != cudaErrorNotReady) {
			fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
			exit(2);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec) > seconds) {
			printf("# HANG: %s did not finish in %.0f s\n# result: FAIL\n", what,
			       seconds);
			fflush(stdout);
			_exit(3);
		}
	}
	CK(cudaEventDestroy(ev));
}

// Structured one-tile problems that tell A-operand from B-operand layout bugs.
//   kind 0: A[i][k] = (k == i % K)  -> C[i][n] = B[i % K][n]
//   kind 1: B[k][n] = (k == n % K)  -> C[i][n] = A[i][n % K]
static void run_diag(cudaStream_t st, int M, int N, int K, int kind)
{
	std::vector<__nv_bfloat16> hA((size_t)M * K), hB((size_t)K * N), hC((size_t)M * N);
	for (int i = 0; i < M; ++i)
		for (int k = 0; k < K; ++k)
			hA[(size_t)i * K + k] =
			    __float2bfloat16(kind == 0 ? (k == i % K ? 1.f : 0.f)
			                               : (float)((i * 7 + k * 3) % 17 - 8));
	for (int k = 0; k < K; ++k)
		for (int n = 0; n < N; ++n)
			hB[(size_t)k * N + n] =
			    __float2bfloat16(kind == 1 ? (k == n % K ? 1.f : 0.f)
			                               : (float)((k * 5 + n * 11) % 19 - 9));
	__nv_bfloat16 *A, *B, *C;
	CK(cudaMalloc(&A, hA.size() * 2));
	CK(cudaMalloc(&B, hB.size() * 2));
	CK(cudaMalloc(&C, hC.size() * 2));
	CK(cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
	cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
	// Twice: the plan at its own tile width (256 where N allows), then
	// gemm_bf16, which narrows a GEMM this small to 128.
	for (int alone = 0; alone < 2; alone++) {
		cuco::gemm_bf16_plan p;
		CK(cuco::gemm_bf16_plan_init(&p, a, 0));
		const int bn =
		    alone ? cuco::gemm_bf16_alone_tile_n(p.bn, p.tiles_m * p.tiles_n, p.sms) : p.bn;
		CK(cudaMemset(C, 0xFF, hC.size() * 2));
		CK(alone ? cuco::gemm_bf16(a, st, 0) : cuco::gemm_bf16_run(&p, st));
		sync_or_die(st, 20, "diag gemm");
		CK(cudaMemcpy(hC.data(), C, hC.size() * 2, cudaMemcpyDeviceToHost));
		int bad = 0;
		for (int i = 0; i < M; ++i)
			for (int n = 0; n < N; ++n) {
				double ref = 0;
				for (int k = 0; k < K; ++k)
					ref += (double)__bfloat162float(hA[(size_t)i * K + k]) *
					       __bfloat162float(hB[(size_t)k * N + n]);
				float got = __bfloat162float(hC[(size_t)i * N + n]);
				if (!(fabs(got - ref) <= 1e-2 * fabs(ref) + 1e-2)) {
					if (bad < 6)
						printf(
						    "#   diag%d %dx%dx%d C[%d][%d] = %g, want %g\n",
						    kind, M, N, K, i, n, got, ref);
					bad++;
				}
			}
		printf("# diag%d %dx%dx%d %s, tile_n %d (%s): %d wrong of %d: %s\n", kind, M, N, K,
		       alone ? "gemm_bf16" : "plan", bn,
		       kind == 0 ? "A = selector, tests B path" : "B = selector, tests A path", bad,
		       M * N, bad ? "FAIL" : "ok");
		if (bad)
			g_fail = 1;
	}
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
}

static void cublas_ref(cublasHandle_t h, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                       __nv_bfloat16 *C, int M, int N, int K, cudaStream_t s, long long lda = 0,
                       long long ldb = 0, long long ldc = 0)
{
	// row-major C = A B  <=>  column-major C^T = B^T A^T
	const float one = 1.f, zero = 0.f;
	CKB(cublasSetStream(h, s));
	CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, ldb ? ldb : N,
	                 A, CUDA_R_16BF, lda ? lda : K, &zero, C, CUDA_R_16BF, ldc ? ldc : N,
	                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static double median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

struct CheckResult {
	double rel;
	unsigned long long nan, wrong;
	int host_bad;
};

// --clocks: the SM clock over each timed launch, from one 32-thread probe CTA
// on another stream (on an SM the launch leaves free) that reads clock64 and
// %globaltimer when a mark kernel before the launch and one after it have run.
static bool g_clocks = false;
static double g_last_mhz = 0; // median MHz of launch_us's last series (--clocks)
__global__ void clock_mark(unsigned *flag, unsigned v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(v) : "memory");
}
// Waits until *flag reaches v (wrapping compare); false at the deadline.
__device__ bool flag_wait(const unsigned *flag, unsigned v, unsigned long long deadline)
{
	for (;;) {
		unsigned f;
		asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
		             : "=r"(f)
		             : "l"(flag)
		             : "memory");
		if ((int)(f - v) >= 0)
			return true;
		if (cuco::gemm_detail::globaltimer_ns() > deadline)
			return false;
		__nanosleep(100);
	}
}
// Gives up (out[0] = 0, no sample) after a second without the marks.
__global__ void clock_probe(const unsigned *flag, unsigned start, unsigned long long *out)
{
	if (threadIdx.x)
		return;
	const unsigned long long give_up = cuco::gemm_detail::globaltimer_ns() + 1000000000ull;
	out[0] = 0;
	if (!flag_wait(flag, start, give_up))
		return;
	const unsigned long long t0 = cuco::gemm_detail::globaltimer_ns();
	const long long c0 = clock64();
	if (!flag_wait(flag, start + 1, give_up))
		return;
	const long long c1 = clock64();
	out[0] = cuco::gemm_detail::globaltimer_ns() - t0;
	out[1] = (unsigned long long)(c1 - c0);
}
// The probe's stream, flag and result, made on the first --clocks series.
static struct {
	cudaStream_t ps = nullptr;
	unsigned *flag = nullptr, epoch = 0;
	unsigned long long *out = nullptr;
} g_probe;

// --hold: before each timed launch a one-thread kernel holds the GPU this many
// us, so that the host enqueues the launch while the GPU is busy and its
// enqueue time (more for cuBLAS than for our GEMM) is not counted, as in
// cuco bench --timing burst; 0: off (every mode but --vs).
static int g_hold_us = -1;
static bool g_sustained = false; // --sustained (--vs only)
__global__ void spin_us(unsigned us);

// One timed launch of launch() on st: its milliseconds between CUDA events,
// and (--clocks) the mean SM clock over it in *mhz (0: no sample); then the
// --gap. launch() enqueues and checks.
static struct {
	cudaEvent_t e0 = nullptr, e1 = nullptr; // time_one's, made on its first launch
} g_events;
template <class F> static float time_one(cudaStream_t st, F launch, float *mhz)
{
	cudaEvent_t &e0 = g_events.e0, &e1 = g_events.e1;
	if (!e0) {
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
	}
	auto &pr = g_probe;
	if (g_clocks && !pr.ps) {
		CK(cudaStreamCreateWithFlags(&pr.ps, cudaStreamNonBlocking));
		CK(cudaMalloc(&pr.flag, sizeof(unsigned)));
		CK(cudaMalloc(&pr.out, 2 * sizeof(unsigned long long)));
		// the streams are non-blocking: a legacy-stream memset need not precede the marks
		CK(cudaMemsetAsync(pr.flag, 0, sizeof(unsigned), st));
		CK(cudaStreamSynchronize(st));
	}
	if (g_hold_us > 0)
		spin_us<<<1, 1, 0, st>>>((unsigned)g_hold_us);
	if (g_clocks) {
		pr.epoch += 2;
		clock_probe<<<1, 32, 0, pr.ps>>>(pr.flag, pr.epoch - 1, pr.out);
		clock_mark<<<1, 1, 0, st>>>(pr.flag, pr.epoch - 1);
	}
	CK(cudaEventRecord(e0, st));
	launch();
	CK(cudaEventRecord(e1, st));
	if (g_clocks)
		clock_mark<<<1, 1, 0, st>>>(pr.flag, pr.epoch);
	CK(cudaEventSynchronize(e1));
	float ms;
	CK(cudaEventElapsedTime(&ms, e0, e1));
	*mhz = 0;
	if (g_clocks) {
		unsigned long long h[2];
		CK(cudaStreamSynchronize(pr.ps));
		CK(cudaMemcpy(h, pr.out, sizeof h, cudaMemcpyDeviceToHost));
		if (h[0])
			*mhz = (float)(1e3 * h[1] / h[0]);
	}
	if (g_gap_us > 0)
		usleep((useconds_t)g_gap_us);
	return ms;
}

// Median microseconds of `iters` single runs of launch() on st (time_one),
// after `warm` untimed ones; g_last_mhz their median clock (--clocks).
template <class F> static double launch_us(cudaStream_t st, int warm, int iters, F launch)
{
	for (int i = 0; i < warm; ++i)
		launch();
	std::vector<float> t, mhz;
	for (int i = 0; i < iters; ++i) {
		float f;
		t.push_back(time_one(st, launch, &f));
		if (f > 0)
			mhz.push_back(f);
	}
	g_last_mhz = mhz.empty() ? 0 : median(mhz);
	return median(t) * 1e3;
}

static CheckResult check(const __nv_bfloat16 *dC, const __nv_bfloat16 *dR, const __nv_bfloat16 *dA,
                         const __nv_bfloat16 *dB, int M, int N, int K)
{
	size_t n = (size_t)M * N;
	double *dsum;
	unsigned long long *dcnt;
	CK(cudaMalloc(&dsum, 2 * sizeof(double)));
	CK(cudaMalloc(&dcnt, 2 * sizeof(unsigned long long)));
	CK(cudaMemset(dsum, 0, 2 * sizeof(double)));
	CK(cudaMemset(dcnt, 0, 2 * sizeof(unsigned long long)));
	diff_sums<<<1024, 256>>>(dC, dR, n, dsum, dcnt);
	CK(cudaGetLastError());
	double hs[2];
	CK(cudaMemcpy(hs, dsum, sizeof hs, cudaMemcpyDeviceToHost));
	float rms = (float)sqrt(hs[1] / (double)n);
	count_wrong<<<1024, 256>>>(dC, dR, n, rms, dcnt + 1);
	CK(cudaGetLastError());
	unsigned long long hc[2];
	CK(cudaMemcpy(hc, dcnt, sizeof hc, cudaMemcpyDeviceToHost));
	CK(cudaFree(dsum));
	CK(cudaFree(dcnt));
	CheckResult r;
	r.rel = hs[1] > 0 ? sqrt(hs[0] / hs[1]) : 1e30;
	r.nan = hc[0];
	r.wrong = hc[1];
	// 64 sampled elements vs a float64 host dot product
	r.host_bad = 0;
	std::vector<__nv_bfloat16> arow(K), bcol(K);
	for (int s = 0; s < 64; ++s) {
		int i = (int)((1103515245u * (unsigned)s + 12345u) % (unsigned)M);
		int j = (int)((2654435761u * (unsigned)s + 97u) % (unsigned)N);
		if (s == 0) {
			i = 0;
			j = 0;
		}
		if (s == 1) {
			i = M - 1;
			j = N - 1;
		}
		CK(cudaMemcpy(arow.data(), dA + (size_t)i * K, K * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy2D(bcol.data(), 2, dB + j, (size_t)N * 2, 2, K,
		                cudaMemcpyDeviceToHost));
		double acc = 0, mag = 0;
		for (int k = 0; k < K; ++k) {
			double p =
			    (double)__bfloat162float(arow[k]) * (double)__bfloat162float(bcol[k]);
			acc += p;
			mag += fabs(p);
		}
		__nv_bfloat16 got;
		CK(cudaMemcpy(&got, dC + (size_t)i * N + j, 2, cudaMemcpyDeviceToHost));
		double g = __bfloat162float(got);
		// bf16 output rounding (2^-8 relative) + fp32 accumulation slack
		if (!(fabs(g - acc) <= 8e-3 * fabs(acc) + 1e-3 * mag / sqrt((double)K) + 1e-2)) {
			if (r.host_bad < 4)
				fprintf(stderr, "  host check C[%d,%d] = %g, fp64 %g\n", i, j, g,
				        acc);
			r.host_bad++;
		}
	}
	return r;
}

// Rows past M that every C (and push copy) of a check has, poisoned with 0xFF
// bytes: a GEMM whose M is not a multiple of 128 must leave them as they were.
constexpr int kGuardRows = 128;
// Everything of X [M + kGuardRows, ldc] outside C's [M, N] still holds the
// poison: rows [M, M + kGuardRows), and columns [N, ldc) of every row.
static bool guard_intact(const __nv_bfloat16 *X, int M, int N, long long ldc = 0)
{
	if (ldc == 0)
		ldc = N;
	std::vector<unsigned char> g((size_t)kGuardRows * ldc * 2);
	CK(cudaMemcpy(g.data(), X + (size_t)M * ldc, g.size(), cudaMemcpyDefault));
	for (size_t i = 0; i < g.size(); ++i)
		if (g[i] != 0xFF) {
			fprintf(stderr, "  guard row %zu (M %d) written at column %zu\n",
			        M + i / (2 * ldc), M, i % (2 * ldc) / 2);
			return false;
		}
	if (ldc == N)
		return true;
	const size_t pad = (size_t)(ldc - N) * 2; // columns [N, ldc) of rows [0, M)
	std::vector<unsigned char> p(pad * M);
	CK(cudaMemcpy2D(p.data(), pad, X + N, ldc * 2, pad, M, cudaMemcpyDefault));
	for (size_t i = 0; i < p.size(); ++i)
		if (p[i] != 0xFF) {
			fprintf(stderr, "  guard column %zu (N %d) written at row %zu\n",
			        N + i % pad / 2, N, i / pad);
			return false;
		}
	return true;
}

// A [M,K] and B [K,N] filled with uniform[-1,1) bf16 from seeds sa and sb, C and R
// [M,N] uninitialised (R, the reference, NaN-poisoned; C with kGuardRows rows
// more, poisoned), all on stream st.
static void operands(cudaStream_t st, int M, int N, int K, uint64_t sa, uint64_t sb,
                     __nv_bfloat16 **A, __nv_bfloat16 **B, __nv_bfloat16 **C, __nv_bfloat16 **R)
{
	CK(cudaMalloc(A, (size_t)M * K * 2));
	CK(cudaMalloc(B, (size_t)K * N * 2));
	CK(cudaMalloc(C, (size_t)(M + kGuardRows) * N * 2));
	CK(cudaMalloc(R, (size_t)M * N * 2));
	fill_rand<<<2048, 256, 0, st>>>(*A, (size_t)M * K, sa);
	fill_rand<<<2048, 256, 0, st>>>(*B, (size_t)K * N, sb);
	CK(cudaGetLastError());
	CK(cudaMemsetAsync(*R, 0xFF, (size_t)M * N * 2, st));
	CK(cudaMemsetAsync(*C, 0xFF, (size_t)(M + kGuardRows) * N * 2, st));
}

static void run_shape(cublasHandle_t h, cudaStream_t st, Shape sh, bool timing, int iters)
{
	const int M = sh.M, N = sh.N, K = sh.K;
	__nv_bfloat16 *A, *B, *C, *R;
	operands(st, M, N, K, 1000 + M + 7ull * K, 2000 + N + 13ull * K, &A, &B, &C, &R);
	cublas_ref(h, A, B, R, M, N, K, st);

	cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
	cuco::gemm_bf16_plan plan;
	CK(cuco::gemm_bf16_plan_init(&plan, a, 0));
	CK(cudaMemsetAsync(C, 0xFF, (size_t)M * N * 2, st)); // NaN poison
	CK(cuco::gemm_bf16_run(&plan, st));
	sync_or_die(st, 30, "gemm");
	CheckResult cr = check(C, R, A, B, M, N, K);
	bool ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0 &&
	          guard_intact(C, M, N);
	if (!ok)
		g_fail = 1;

	double us = 0, us_cb = 0;
	if (timing) {
		us = launch_us(st, g_warm, iters, [&] { CK(cuco::gemm_bf16_run(&plan, st)); });
		us_cb = launch_us(st, g_warm, iters, [&] { cublas_ref(h, A, B, R, M, N, K, st); });
	}
	double fl = 2.0 * M * N * (double)K;
	cuco::gemm_bf16_tile_info ti = cuco::gemm_bf16_tiles(&plan);
	printf("%6d %6d %6d %4dx%-3d %5d %10.1f %8.1f %10.1f %8.1f %9.2e %6llu %4llu %3d  %s\n", M,
	       N, K, ti.tile_m, ti.tile_n, ti.ctas, us, timing ? fl / us * 1e-6 : 0.0, us_cb,
	       timing ? fl / us_cb * 1e-6 : 0.0, cr.rel, cr.wrong, cr.nan, cr.host_bad,
	       ok ? "ok" : "FAIL");
	fflush(stdout);
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
	CK(cudaFree(R));
}

// Epilogue hook, max_ctas, start_tile, plan_set_A, padded strides; at the
// default shape also bad-shape rejection. M a multiple of 128 (the probe reads
// each tile's last row); N and K any the GEMM takes (a last tile column that
// overlaps the one before, a partial last k-block).
static void run_features(cublasHandle_t h, cudaStream_t st, int M = 2048, int N = 1024,
                         int K = 1024)
{
	__nv_bfloat16 *A, *A2, *B, *C, *R, *probe;
	unsigned *visits;
	CK(cudaMalloc(&A, (size_t)M * K * 2));
	CK(cudaMalloc(&A2, (size_t)M * K * 2));
	CK(cudaMalloc(&B, (size_t)K * N * 2));
	CK(cudaMalloc(&C, (size_t)M * N * 2));
	CK(cudaMalloc(&R, (size_t)M * N * 2));
	fill_rand<<<1024, 256, 0, st>>>(A, (size_t)M * K, 11);
	fill_rand<<<1024, 256, 0, st>>>(A2, (size_t)M * K, 12);
	fill_rand<<<1024, 256, 0, st>>>(B, (size_t)K * N, 13);
	CK(cudaGetLastError());
	cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
	cuco::gemm_bf16_plan plan;
	CK(cuco::gemm_bf16_plan_init(&plan, a, 7)); // few CTAs: many tiles per CTA
	cuco::gemm_bf16_tile_info ti = cuco::gemm_bf16_tiles(&plan);
	plan.start_tile = 5;
	CK(cudaMalloc(&visits, ti.tiles * sizeof(unsigned)));
	CK(cudaMalloc(&probe, 2 * ti.tiles * 2));
	CK(cudaMemset(visits, 0, ti.tiles * sizeof(unsigned)));
	CK(cudaMemset(C, 0xFF, (size_t)M * N * 2));
	probe_epilogue ep{visits, probe, C, N, ti.tiles_n, N};
	CK(cuco::gemm_bf16_run_epilogue(&plan, st, ep));
	sync_or_die(st, 30, "gemm with epilogue");
	cublas_ref(h, A, B, R, M, N, K, st);
	CK(cudaStreamSynchronize(st));
	CheckResult cr = check(C, R, A, B, M, N, K);
	std::vector<unsigned> hv(ti.tiles);
	std::vector<__nv_bfloat16> hp(2 * ti.tiles);
	CK(cudaMemcpy(hv.data(), visits, ti.tiles * sizeof(unsigned), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hp.data(), probe, 2 * ti.tiles * 2, cudaMemcpyDeviceToHost));
	int bad_visits = 0, bad_probe = 0;
	for (int t = 0; t < ti.tiles; ++t) {
		if (hv[t] != 1)
			bad_visits++;
		int tm = t / ti.tiles_n, tn = t % ti.tiles_n;
		const size_t c0n = (size_t)cuco::gemm_bf16_tile_col0(tn, ti.tile_n, N);
		__nv_bfloat16 c0, c1;
		CK(cudaMemcpy(&c0, C + (size_t)tm * ti.tile_m * N + c0n, 2,
		              cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(
		    &c1, C + (size_t)(tm * ti.tile_m + ti.tile_m - 1) * N + c0n + ti.tile_n - 1, 2,
		    cudaMemcpyDeviceToHost));
		if (memcmp(&c0, &hp[2 * t], 2) || memcmp(&c1, &hp[2 * t + 1], 2))
			bad_probe++;
	}
	bool ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0 &&
	          !bad_visits && !bad_probe;
	printf("# feature epilogue+max_ctas=7+start_tile=5 (%dx%dx%d, %d tiles of %d columns): "
	       "rel_err %.2e nan %llu "
	       "wrong %llu bad_visits %d bad_probe %d: %s\n",
	       M, N, K, ti.tiles, ti.tile_n, cr.rel, cr.nan, cr.wrong, bad_visits, bad_probe,
	       ok ? "ok" : "FAIL");
	if (!ok)
		g_fail = 1;

	// plan_set_A (input rotation)
	CK(cuco::gemm_bf16_plan_set_A(&plan, A2));
	plan.start_tile = 0;
	CK(cudaMemset(C, 0xFF, (size_t)M * N * 2));
	CK(cuco::gemm_bf16_run(&plan, st));
	cublas_ref(h, A2, B, R, M, N, K, st);
	CK(cudaStreamSynchronize(st));
	cr = check(C, R, A2, B, M, N, K);
	ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0;
	printf("# feature plan_set_A (%dx%dx%d): rel_err %.2e nan %llu wrong %llu: %s\n", M, N, K,
	       cr.rel, cr.nan, cr.wrong, ok ? "ok" : "FAIL");
	if (!ok)
		g_fail = 1;

	// padded strides: lda = K+64, ldb = N+64, ldc = N+2 (ldc % 8 != 0: the
	// 4-byte-store epilogue path), C offset by one bf16x2 from 16-byte alignment
	{
		const long long lda = K + 64, ldb = N + 64, ldc = N + 2;
		__nv_bfloat16 *As, *Bs, *Cs, *Rs, *Cd, *Rd;
		CK(cudaMalloc(&As, (size_t)M * lda * 2));
		CK(cudaMalloc(&Bs, (size_t)K * ldb * 2));
		CK(cudaMalloc(&Cs, (size_t)M * ldc * 2 + 16));
		CK(cudaMalloc(&Rs, (size_t)M * ldc * 2));
		CK(cudaMalloc(&Cd, (size_t)M * N * 2));
		CK(cudaMalloc(&Rd, (size_t)M * N * 2));
		fill_rand<<<1024, 256, 0, st>>>(As, (size_t)M * lda, 21);
		fill_rand<<<1024, 256, 0, st>>>(Bs, (size_t)K * ldb, 22);
		__nv_bfloat16 *Cp = Cs + 2;
		CK(cudaMemsetAsync(Cs, 0xFF, (size_t)M * ldc * 2 + 16, st));
		cuco::gemm_bf16_args as{As, Bs, Cp, M, N, K, lda, ldb, ldc};
		CK(cuco::gemm_bf16(as, st, 0));
		sync_or_die(st, 30, "strided gemm");
		cublas_ref(h, As, Bs, Rs, M, N, K, st, lda, ldb, ldc);
		CK(cudaMemcpy2DAsync(Cd, N * 2, Cp, ldc * 2, N * 2, M, cudaMemcpyDeviceToDevice,
		                     st));
		CK(cudaMemcpy2DAsync(Rd, N * 2, Rs, ldc * 2, N * 2, M, cudaMemcpyDeviceToDevice,
		                     st));
		// dense copies of A and B for the fp64 host samples
		CK(cudaMemcpy2DAsync(A, K * 2, As, lda * 2, K * 2, M, cudaMemcpyDeviceToDevice,
		                     st));
		CK(cudaMemcpy2DAsync(B, N * 2, Bs, ldb * 2, N * 2, K, cudaMemcpyDeviceToDevice,
		                     st));
		CK(cudaStreamSynchronize(st));
		cr = check(Cd, Rd, A, B, M, N, K);
		ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0;
		printf("# feature padded strides lda=K+64 ldb=N+64 ldc=N+2 (%dx%dx%d): rel_err "
		       "%.2e nan %llu wrong %llu: %s\n",
		       M, N, K, cr.rel, cr.nan, cr.wrong, ok ? "ok" : "FAIL");
		if (!ok)
			g_fail = 1;
		CK(cudaFree(As));
		CK(cudaFree(Bs));
		CK(cudaFree(Cs));
		CK(cudaFree(Rs));
		CK(cudaFree(Cd));
		CK(cudaFree(Rd));
	}

	// bad shapes must be rejected (N under 64 or not a multiple of 8, K not a
	// multiple of 8, lda < K or not a multiple of 8, no A)
	int rejected = 0, cases = 0;
	cuco::gemm_bf16_args bad[] = {
	    {A, B, C, 0, N, K, K, N, N},     {A, B, C, M, 196, K, K, 200, 200},
	    {A, B, C, M, 56, K, K, 56, 56},  {A, B, C, M, N, 100, 104, N, N},
	    {A, B, C, M, N, K, K - 1, N, N}, {nullptr, B, C, M, N, K, K, N, N},
	    {A, B, C, M, N, K, K + 4, N, N}};
	for (auto &b : bad) {
		cases++;
		cuco::gemm_bf16_plan pb;
		if (cuco::gemm_bf16_plan_init(&pb, b, 0) == cudaErrorInvalidValue)
			rejected++;
	}
	ok = rejected == cases;
	printf("# feature bad-shape rejection: %d/%d: %s\n", rejected, cases, ok ? "ok" : "FAIL");
	if (!ok)
		g_fail = 1;
	CK(cudaFree(A));
	CK(cudaFree(A2));
	CK(cudaFree(B));
	CK(cudaFree(C));
	CK(cudaFree(R));
	CK(cudaFree(probe));
	CK(cudaFree(visits));
}

// ---------------------------------------------------------------- push
// One GEMM configuration of --push and of the feature checks: tile width tn
// (the plan narrowed to it when narrower), push rows (kNoPush; 0: the
// default, 8 or 16 rows per staging round; kDirect: stores from registers).
enum { kNoPush = -100, kDirectPush = -1, kWarpPush = -2 };
static const char *rows_label(int rows)
{
	return rows == kNoPush       ? "-"
	       : rows == kDirectPush ? "reg"
	       : rows == kWarpPush   ? "warp"
	       : rows == 8           ? "8"
	                             : "16";
}
struct PushCase {
	int tn, rows, pace, lb,
	    lh;       // pace (percent), lb (last_bulk), lh (last_halves): kWarpPush only
	int ctas = 7; // run_push_features' cap on the grid (0: as many as the plan takes)
};
template <int R>
static cudaError_t run_push(const cuco::gemm_bf16_plan *pl, cudaStream_t st,
                            __nv_bfloat16 *const *dst, int ndst, unsigned pace = 0, unsigned lb = 0,
                            unsigned lh = 0)
{
	cuco::gemm_push_epilogue<cuco::gemm_push_no_sync, R> ep{};
	ep.n = ndst;
	ep.pace = pace;
	ep.last_bulk = lb;
	ep.last_halves = lh;
	for (int i = 0; i < ndst; ++i)
		ep.dst[i] = dst[i];
	return cuco::gemm_bf16_run_epilogue(pl, st, ep);
}
static cudaError_t run_case(const cuco::gemm_bf16_plan *pl, cudaStream_t st, PushCase c,
                            __nv_bfloat16 *const *dst, int ndst)
{
	switch (c.rows) {
	case kNoPush:
		return cuco::gemm_bf16_run(pl, st);
	case kDirectPush:
		return run_push<-1>(pl, st, dst, ndst);
	case kWarpPush:
		return run_push<-2>(pl, st, dst, ndst, (unsigned)c.pace, (unsigned)c.lb,
		                    (unsigned)c.lh);
	case 0:
		return run_push<0>(pl, st, dst, ndst, 0, 0, (unsigned)c.lh);
	case 8:
		return run_push<8>(pl, st, dst, ndst);
	default:
		return run_push<16>(pl, st, dst, ndst);
	}
}
static const char *pace_label(const PushCase &c)
{
	static char buf[32];
	if (c.rows != kWarpPush || (c.pace == 0 && !c.lb && !c.lh))
		return "";
	snprintf(buf, sizeof buf, c.pace ? "@%d%%%s%s" : "%.0d%s%s", c.pace, c.lb ? "+lb" : "",
	         c.lh ? "+lh" : "");
	return buf;
}
static bool plan_for(cuco::gemm_bf16_plan *pl, const cuco::gemm_bf16_args &a, int tn, int max_ctas)
{
	CK(cuco::gemm_bf16_plan_init(pl, a, max_ctas));
	if (tn == pl->bn)
		return true;
	return cuco::gemm_bf16_plan_narrow(pl, tn, max_ctas) == cudaSuccess;
}
static bool same_bytes(const __nv_bfloat16 *x, const __nv_bfloat16 *y, size_t n)
{
	std::vector<__nv_bfloat16> hx(n), hy(n);
	CK(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDefault));
	CK(cudaMemcpy(hy.data(), y, n * 2, cudaMemcpyDefault));
	return memcmp(hx.data(), hy.data(), n * 2) == 0;
}
// Feature check: every narrowed width and push round, few CTAs (so each one
// reuses its staging rows many times); C against cuBLAS, both copies = C.
// M not a multiple of 128: the last tile row's rows past M are neither stored
// nor copied (kGuardRows poisoned rows after C and after each copy). N not a
// multiple of the tile width: the last tile column overlaps the one before;
// pad > 0 gives C and the copies pad poisoned columns past N (ldc = N + pad,
// a multiple of 8), which no store may touch. Widths wider than the plan's
// own are skipped.
static void run_push_features(cublasHandle_t h, cudaStream_t st, int M = 2048, int N = 1024,
                              int K = 1024, int pad = 0)
{
	const long long ldc = N + pad;
	const size_t guarded = (size_t)(M + kGuardRows) * ldc * 2;
	__nv_bfloat16 *A, *B, *C, *R, *D[2], *Cd = nullptr;
	CK(cudaMalloc(&A, (size_t)M * K * 2));
	CK(cudaMalloc(&B, (size_t)K * N * 2));
	CK(cudaMalloc(&C, guarded));
	CK(cudaMalloc(&R, (size_t)M * N * 2));
	if (pad)
		CK(cudaMalloc(&Cd, (size_t)M * N * 2)); // C without its padding, for check()
	for (auto &d : D)
		CK(cudaMalloc(&d, guarded));
	fill_rand<<<1024, 256, 0, st>>>(A, (size_t)M * K, 31);
	fill_rand<<<1024, 256, 0, st>>>(B, (size_t)K * N, 32);
	CK(cudaGetLastError());
	cublas_ref(h, A, B, R, M, N, K, st);
	const PushCase cases[] = {{256, kNoPush},
	                          {128, kNoPush},
	                          {64, kNoPush},
	                          {256, 0},
	                          {256, 8},
	                          {128, 0},
	                          {128, 8},
	                          {64, 0},
	                          {64, 8},
	                          {256, kDirectPush},
	                          {128, kDirectPush},
	                          {64, kDirectPush},
	                          {256, kWarpPush},
	                          {128, kWarpPush},
	                          {64, kWarpPush},
	                          {256, kWarpPush, 90},
	                          {128, kWarpPush, 90},
	                          {64, kWarpPush, 50}, // paced
	                          {256, kWarpPush, 90, 1},
	                          {128, kWarpPush, 0, 1},
	                          {64, kWarpPush, 50, 1}, // last_bulk
	                          // last_halves: with and without pace and last_bulk; on 7 CTAs,
	                          // and on one tile a CTA (every tile the CTA's last, as at 2048^3)
	                          {256, kWarpPush, 0, 0, 1},
	                          {128, kWarpPush, 90, 0, 1},
	                          {256, kWarpPush, 50, 1, 1},
	                          {128, kWarpPush, 0, 1, 1},
	                          {256, kWarpPush, 0, 0, 1, 0},
	                          {128, kWarpPush, 50, 1, 1, 0}};
	cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, ldc};
	cuco::gemm_bf16_plan p0;
	CK(cuco::gemm_bf16_plan_init(&p0, a, 0));
	for (const PushCase &c : cases) {
		if (c.tn > p0.bn)
			continue; // a narrow N: the plan's own width and narrower
		cuco::gemm_bf16_plan pl;
		bool planned = plan_for(&pl, a, c.tn, c.ctas);
		CK(cudaMemsetAsync(C, 0xFF, guarded, st));
		for (auto &d : D)
			CK(cudaMemsetAsync(d, 0xFF, guarded, st));
		cudaError_t e = planned ? run_case(&pl, st, c, D, 2) : cudaErrorInvalidValue;
		bool ok = e == cudaSuccess && pl.bn == c.tn;
		if (ok) {
			sync_or_die(st, 30, "push gemm");
			if (pad)
				CK(cudaMemcpy2D(Cd, (size_t)N * 2, C, ldc * 2, (size_t)N * 2, M,
				                cudaMemcpyDeviceToDevice));
			CheckResult cr = check(pad ? Cd : C, R, A, B, M, N, K);
			ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0 &&
			     guard_intact(C, M, N, ldc);
			if (c.rows != kNoPush) // the copies equal C, padding and guard rows too
				ok = ok && same_bytes(C, D[0], guarded / 2) &&
				     same_bytes(C, D[1], guarded / 2);
		}
		printf("# feature tile_n %d push %s%s (%dx%dx%d, ldc %lld, %d CTAs): %s\n", c.tn,
		       c.rows == kNoPush       ? "none"
		       : c.rows == kDirectPush ? "direct"
		       : c.rows == kWarpPush   ? "warps"
		       : c.rows == 8           ? "8 rows"
		                               : "16 rows",
		       pace_label(c), M, N, K, ldc, pl.ctas, ok ? "ok" : "FAIL");
		if (!ok)
			g_fail = 1;
	}
	if (Cd)
		CK(cudaFree(Cd));
	if (M % 128 || N != 1024 || pad) { // the refusals below do not depend on the shape
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
		CK(cudaFree(R));
		for (auto &d : D)
			CK(cudaFree(d));
		return;
	}
	// narrowing is refused for widths other than 128 / 64 and wider than the plan
	cuco::gemm_bf16_plan pl;
	CK(cuco::gemm_bf16_plan_init(&pl, a, 0));
	int refused = (cuco::gemm_bf16_plan_narrow(&pl, 96) == cudaErrorInvalidValue) +
	              (cuco::gemm_bf16_plan_narrow(&pl, 256) == cudaErrorInvalidValue);
	CK(cuco::gemm_bf16_plan_narrow(&pl, 64));
	refused += cuco::gemm_bf16_plan_narrow(&pl, 128) == cudaErrorInvalidValue;
	printf("# feature plan_narrow refusals: %d/3: %s\n", refused, refused == 3 ? "ok" : "FAIL");
	if (refused != 3)
		g_fail = 1;
	// last_halves is refused without the copying warps, at tile_n 64 and with a split tail
	cuco::gemm_bf16_plan pw;
	CK(cuco::gemm_bf16_plan_init(&pw, a, 0));
	refused = (run_case(&pw, st, {256, 0, 0, 0, 1}, D, 2) == cudaErrorInvalidValue) +
	          (run_case(&pl, st, {64, kWarpPush, 0, 0, 1}, D, 2) == cudaErrorInvalidValue);
#if CUCO_GEMM_SPLIT
	const size_t wsb = cuco::gemm_bf16_split_bytes(&pw, 2, 7);
	void *ws = nullptr;
	CK(cudaMalloc(&ws, wsb ? wsb : 256));
	CK(cudaMemset(ws, 0, wsb ? wsb : 256));
	CK(cuco::gemm_bf16_plan_split(&pw, 2, ws, wsb, 7));
	refused += pw.split == 2 &&
	           run_case(&pw, st, {256, kWarpPush, 0, 0, 1}, D, 2) == cudaErrorInvalidValue;
	CK(cudaFree(ws));
#else
	refused += 1;
#endif
	CK(cudaStreamSynchronize(st));
	printf("# feature last_halves refusals: %d/3: %s\n", refused, refused == 3 ? "ok" : "FAIL");
	if (refused != 3)
		g_fail = 1;
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
	CK(cudaFree(R));
	for (auto &d : D)
		CK(cudaFree(d));
}

// The other GPU (1, or 0 from GPU 1) when it is a peer of this one, with peer
// access enabled: its memory is what the push timings write through NVLink.
static bool other_is_peer(int dev)
{
	int ndev = 0, peer = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2)
		return false;
	CK(cudaDeviceCanAccessPeer(&peer, dev, dev == 0 ? 1 : 0));
	if (peer) {
		cudaError_t e = cudaDeviceEnablePeerAccess(dev == 0 ? 1 : 0, 0);
		if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
			CK(e);
		cudaGetLastError();
	}
	return peer != 0;
}
// bytes on the other GPU (see other_is_peer), the current device left as it was.
static __nv_bfloat16 *alloc_other(int dev, size_t bytes)
{
	__nv_bfloat16 *p = nullptr;
	CK(cudaSetDevice(dev == 0 ? 1 : 0));
	CK(cudaMalloc(&p, bytes));
	CK(cudaSetDevice(dev));
	return p;
}

// --push: GEMM alone vs GEMM + push to a local copy vs GEMM + push to GPU 1's
// copy (through NVLink when it is a peer), per tile width and staging round.
static void run_push_timing(cublasHandle_t h, cudaStream_t st, int iters)
{
	std::vector<Shape> shapes = {{2048, 1024, 2048}, {4096, 2048, 4096}, {8192, 4096, 8192}};
	if (g_shape[0])
		shapes = {{g_shape[0], g_shape[1], g_shape[2]}};
	std::vector<PushCase> cases = {
	    {256, kNoPush},   {256, 0},       {256, 8}, {256, kDirectPush},
	    {256, kWarpPush}, {128, kNoPush}, {128, 0}, {128, kDirectPush},
	    {128, kWarpPush}, {64, kNoPush},  {64, 0},  {64, kDirectPush},
	    {64, kWarpPush}};
	if (!g_paces.empty()) { // --pace: the copying warps at each pace only
		cases.clear();
		for (int tn : {256, 128}) {
			cases.push_back({tn, kNoPush, 0});
			for (int pc : g_paces)
				for (int lh : {0, 1})
					for (int lb : {0, 1})
						cases.push_back({tn, kWarpPush, pc, lb, lh});
		}
	}
	int dev = 0;
	CK(cudaGetDevice(&dev));
	const bool peer = other_is_peer(dev);
	printf("# push timing: median of %d single launches (CUDA events), 5 warm-up; peer copy on "
	       "GPU %d: %s\n",
	       iters, dev == 0 ? 1 : 0, peer ? "yes" : "no (not a peer)");
	printf("#     M      N      K tile_n rows  ctas   alone_us  local_us   peer_us  "
	       "peer_GB/s_over_alone "
	       "staged_us  status\n");
	for (const Shape &sh : shapes) {
		const int M = sh.M, N = sh.N, K = sh.K;
		__nv_bfloat16 *A, *B, *C, *R, *L, *P = nullptr;
		CK(cudaMalloc(&A, (size_t)M * K * 2));
		CK(cudaMalloc(&B, (size_t)K * N * 2));
		CK(cudaMalloc(&C, (size_t)M * N * 2));
		CK(cudaMalloc(&R, (size_t)M * N * 2));
		CK(cudaMalloc(&L, (size_t)M * N * 2));
		if (peer)
			P = alloc_other(dev, (size_t)M * N * 2);
		fill_rand<<<2048, 256, 0, st>>>(A, (size_t)M * K, 41);
		fill_rand<<<2048, 256, 0, st>>>(B, (size_t)K * N, 42);
		cublas_ref(h, A, B, R, M, N, K, st);
		cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
		// each timed series also prints its wall-clock window, so a GPU sampler
		// running beside (bench/probes/push_clocks.sh) can average clocks over it
		auto time = [&](const cuco::gemm_bf16_plan *pl, PushCase c, __nv_bfloat16 *d,
		                const char *kind) {
			__nv_bfloat16 *dd[1] = {d};
			struct timespec w0, w1;
			clock_gettime(CLOCK_REALTIME, &w0);
			const double us = launch_us(
			    st, g_warm, iters, [&] { CK(run_case(pl, st, c, dd, d ? 1 : 0)); });
			clock_gettime(CLOCK_REALTIME, &w1);
			printf("# window %d %d %d %d %s%s %s %.3f %.3f\n", M, N, K, c.tn,
			       rows_label(c.rows), pace_label(c), kind,
			       w0.tv_sec + w0.tv_nsec * 1e-9, w1.tv_sec + w1.tv_nsec * 1e-9);
			return us;
		};
		double alone = 0;
		for (const PushCase &c : cases) {
			cuco::gemm_bf16_plan pl;
			if (!plan_for(&pl, a, c.tn, 0) || pl.bn != c.tn)
				continue;
			bool ok = true;
			double tl = 0, tp = 0, ta = 0, ts = 0;
			double fa = 0, fl = 0, fp = 0, fs = 0; // --clocks: MHz over each series
			if (c.rows == kNoPush) {
				ta = alone = time(&pl, c, nullptr, "alone");
				fa = g_last_mhz;
				CheckResult cr = check(C, R, A, B, M, N, K);
				ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 &&
				     cr.host_bad == 0;
			} else {
				// --pace: also staged and handed over with no destination
				if (!g_paces.empty())
					ts = time(&pl, c, nullptr, "staged"), fs = g_last_mhz;
				CK(cudaMemset(C, 0xFF, (size_t)M * N * 2));
				CK(cudaMemset(L, 0xFF, (size_t)M * N * 2));
				tl = time(&pl, c, L, "local");
				fl = g_last_mhz;
				CheckResult cr = check(C, R, A, B, M, N, K);
				ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 &&
				     cr.host_bad == 0 && same_bytes(C, L, (size_t)M * N);
				if (P) {
					CK(cudaMemset(P, 0xFF, (size_t)M * N * 2));
					tp = time(&pl, c, P, "peer");
					fp = g_last_mhz;
					ok = ok && same_bytes(C, P, (size_t)M * N);
				}
			}
			const double gbs = (tp > alone && c.rows != kNoPush)
			                       ? (double)M * N * 2 / ((tp - alone) * 1e3)
			                       : 0;
			printf("%7d %6d %6d %6d %4s%s %5d %10.1f %9.1f %9.1f %21.0f %9.1f  %s", M,
			       N, K, c.tn, rows_label(c.rows), pace_label(c), pl.ctas, ta, tl, tp,
			       gbs, ts, ok ? "ok" : "FAIL");
			if (g_clocks)
				printf("  MHz alone/local/peer/staged %.0f/%.0f/%.0f/%.0f", fa, fl,
				       fp, fs);
			printf("\n");
			fflush(stdout);
			if (!ok)
				g_fail = 1;
		}
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
		CK(cudaFree(R));
		CK(cudaFree(L));
		if (P)
			CK(cudaFree(P));
	}
}

// --vs: our GEMM against cuBLAS, fairly. Single launches alternate between
// the two (which goes first swaps every pair), each on the next of `sets`
// operand sets, enough that twice the L2 of other operands passes between
// two uses of one set, so neither side finds its operands in L2 from an
// earlier launch; --warm untimed pairs first (hundreds, for a run at the power
// cap), --gap after each launch, and --hold (200 us by default) before each,
// so that neither side's host enqueue time is counted. Per side: the median,
// 10th and 90th percentile of the launch times. Every set's C from both is
// checked against a float64 sample and each other. Not with --clocks: its
// probe CTA holds an SM, which our GEMM's grid leaves free (128 of 132 at
// these shapes) but cuBLAS's, one CTA on every SM, then waits for (measured:
// cuBLAS ~8 % slower with the probe at 8192x4096x8192, docs/gemm.md).
static void run_vs(cublasHandle_t h, cudaStream_t st, int iters)
{
	// the per-rank GEMMs of gemm_allgather's six shapes (C's columns split over 2 ranks)
	std::vector<Shape> shapes = {{2048, 1024, 2048},   {4096, 2048, 4096},  {8192, 4096, 8192},
	                             {16384, 8192, 16384}, {16384, 2048, 8192}, {4096, 8192, 4096}};
	if (g_shape[0])
		shapes = {{g_shape[0], g_shape[1], g_shape[2]}};
	int dev = 0, l2 = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
	if (g_sustained)
		printf("# vs: ours and cuBLAS alternating, %d timed launches each after %d untimed "
		       "pairs, sustained: all queued "
		       "back to back, one sync at the end; percentiles of single launches (CUDA "
		       "events between them)\n",
		       iters, g_warm);
	else
		printf("# vs: ours and cuBLAS alternating, %d timed launches each after %d untimed "
		       "pairs, gap %d us, hold %d us; "
		       "percentiles of single launches (CUDA events)\n",
		       iters, g_warm, g_gap_us, g_hold_us);
	printf("#     M      N      K tile sets  ours_us   p10    p90  cublas_us   p10    p90  "
	       "ours/cublas "
	       "TFLOP/s_ours TFLOP/s_cublas status\n");
	for (const Shape &sh : shapes) {
		const int M = sh.M, N = sh.N, K = sh.K;
		const size_t bytes =
		    ((size_t)M * K + (size_t)K * N + 2ull * M * N) * 2; // A, B, our C, cuBLAS's C
		const int sets = (int)((2ull * l2 + bytes - 1) / bytes) + 1;
		std::vector<__nv_bfloat16 *> A(sets), B(sets), C(sets), R(sets);
		std::vector<cuco::gemm_bf16_plan> pl(sets);
		for (int i = 0; i < sets; ++i) {
			operands(st, M, N, K, 7000 + 2 * i, 7001 + 2 * i, &A[i], &B[i], &C[i],
			         &R[i]);
			CK(cudaMemsetAsync(C[i], 0xFF, (size_t)M * N * 2, st));
			cuco::gemm_bf16_args a{A[i], B[i], C[i], M, N, K, K, N, N};
			CK(cuco::gemm_bf16_plan_init(&pl[i], a, 0));
		}
		// the plan's tile width; where the lone GEMM's rule splits a short last
		// wave (gemm_bf16 with a workspace), that plan split (listed as -tile_n;
		// one workspace for all sets, whose launches run one at a time on st);
		// then 128 where 256-wide tiles run in fewer than 4 waves (tile_n 0's rule
		// for a fused producer, overlap_auto_tile_n). Widths only narrow, and
		// narrowing clears the split.
		const int tiles = pl[0].tiles_m * pl[0].tiles_n;
		std::vector<int> widths = {pl[0].bn};
		const int ways = cuco::gemm_bf16_alone_split(tiles, pl[0].sms);
		void *ws = nullptr;
		size_t ws_bytes = 0;
		if (ways) {
			ws_bytes = cuco::gemm_bf16_split_bytes(&pl[0], ways, 0);
			CK(cudaMalloc(&ws, ws_bytes));
			CK(cudaMemset(ws, 0, ws_bytes));
			widths.push_back(-pl[0].bn);
		}
		if (pl[0].bn == 256 && (tiles + pl[0].ctas - 1) / pl[0].ctas < 4)
			widths.push_back(128);
		for (int tw : widths) {
			const int tn = tw < 0 ? -tw : tw;
			for (int i = 0; i < sets; ++i) {
				if (tn != pl[i].bn)
					CK(cuco::gemm_bf16_plan_narrow(&pl[i], tn, 0));
				if (tw < 0)
					CK(cuco::gemm_bf16_plan_split(&pl[i], ways, ws, ws_bytes,
					                              0));
			}
			std::vector<float> t[2];
			std::vector<cudaEvent_t>
			    ev; // --sustained: one before each timed launch, one after the last
			std::vector<int> ev_side;
			int set = 0;
			for (int i = -g_warm; i < iters; ++i)
				for (int k = 0; k < 2; ++k) {
					const int side =
					    (i & 1) ^
					    k; // 0 ours, 1 cuBLAS; the first of a pair alternates
					// both of a pair on the same operand set, the next pair on
					// the next: every set is written by both sides whatever the
					// count of sets (each is checked below)
					const int j = set;
					if (k == 1)
						set = (set + 1) % sets;
					auto go = [&] {
						if (side == 0)
							CK(cuco::gemm_bf16_run(&pl[j], st));
						else
							cublas_ref(h, A[j], B[j], R[j], M, N, K,
							           st);
					};
					if (i >= 0 && g_sustained) {
						ev.push_back(nullptr);
						CK(cudaEventCreate(&ev.back()));
						CK(cudaEventRecord(ev.back(), st));
						ev_side.push_back(side);
					}
					if (i < 0 || g_sustained) {
						go();
						continue;
					}
					float mhz;
					t[side].push_back(time_one(st, go, &mhz) * 1e3f);
				}
			if (g_sustained) {
				ev.push_back(nullptr);
				CK(cudaEventCreate(&ev.back()));
				CK(cudaEventRecord(ev.back(), st));
			}
			sync_or_die(st, 60, "vs");
			for (size_t k = 0; k + 1 < ev.size(); ++k) {
				float ms;
				CK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
				t[ev_side[k]].push_back(ms * 1e3f);
			}
			for (cudaEvent_t e : ev)
				CK(cudaEventDestroy(e));
			bool ok = true;
			for (int i = 0; i < sets; ++i) {
				CheckResult cr = check(C[i], R[i], A[i], B[i], M, N, K);
				CheckResult cb = check(R[i], C[i], A[i], B[i], M, N,
				                       K); // cuBLAS's own float64 sample
				ok = ok && cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 &&
				     cr.host_bad == 0 && cb.host_bad == 0 && cb.nan == 0;
				CK(cudaMemsetAsync(C[i], 0xFF, (size_t)M * N * 2,
				                   st)); // the next width writes it again
			}
			auto pct = [](std::vector<float> v, double q) {
				std::sort(v.begin(), v.end());
				return (double)v[(size_t)(q * (v.size() - 1) + 0.5)];
			};
			const double fl = 2.0 * M * N * (double)K;
			const double mo = pct(t[0], 0.5), mc = pct(t[1], 0.5);
			printf("%7d %6d %6d %4d %4d %8.1f %6.1f %6.1f %10.1f %6.1f %6.1f %12.3f "
			       "%12.0f %14.0f %s\n",
			       M, N, K, tw, sets, mo, pct(t[0], 0.1), pct(t[0], 0.9), mc,
			       pct(t[1], 0.1), pct(t[1], 0.9), mo / mc, fl / mo * 1e-6,
			       fl / mc * 1e-6, ok ? "ok" : "FAIL");
			fflush(stdout);
			if (!ok)
				g_fail = 1;
		}
		if (ws)
			CK(cudaFree(ws));
		for (int i = 0; i < sets; ++i) {
			CK(cudaFree(A[i]));
			CK(cudaFree(B[i]));
			CK(cudaFree(C[i]));
			CK(cudaFree(R[i]));
		}
	}
}

// ---------------------------------------------------------------- chunks
// --chunks: C = A B (cuBLAS) in `chunks` row chunks on st, each chunk's rows
// copied right after it is computed on a copy stream (event per chunk), with
// the copy engine: to a local buffer, to GPU 1 (push: GPU 0's engine writes
// over NVLink) or by GPU 1 (pull: GPU 1's engine reads over NVLink). Times per
// run, medians: start to the last GEMM chunk's end (the GEMM, slowed by the
// copies beside it) and start to the last copy's end (what the overlap costs
// in all). Timed like the harness's burst mode: before each run the GPU idles
// twice the last run's time, and a 200 us spin kernel holds it while the host
// enqueues, so the GPU stays below its power cap and host time is not counted.
// Checks every copy against C. cstreams 2: chunk i's GEMM on stream i % 2
// (each with its own cuBLAS handle, so no workspace is shared), so a chunk
// need not wait for the previous one's last wave.
__global__ void spin_us(unsigned us);
enum CopyMode { kNoCopy, kLocal, kPush, kPull, kPush2 };
static const char *copy_label(int m)
{
	return m == kNoCopy  ? "none"
	       : m == kLocal ? "local"
	       : m == kPush  ? "push"
	       : m == kPull  ? "pull"
	                     : "push2";
}
static void run_chunks_timing(cublasHandle_t h, cudaStream_t st, int iters)
{
	const int M = g_shape[0] ? g_shape[0] : 8192, N = g_shape[0] ? g_shape[1] : 4096,
	          K = g_shape[0] ? g_shape[2] : 8192;
	int ndev = 0, peer = 0, dev = 0;
	CK(cudaGetDeviceCount(&ndev));
	CK(cudaGetDevice(&dev));
	const int other = dev == 0 ? 1 : 0;
	if (ndev > 1)
		CK(cudaDeviceCanAccessPeer(&peer, dev, other));
	if (peer) {
		cudaError_t e = cudaDeviceEnablePeerAccess(other, 0);
		if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
			CK(e);
		CK(cudaSetDevice(other));
		e = cudaDeviceEnablePeerAccess(dev, 0);
		if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
			CK(e);
		CK(cudaSetDevice(dev));
		cudaGetLastError();
	}
	__nv_bfloat16 *A, *B, *C, *L, *P = nullptr;
	const size_t cbytes = (size_t)M * N * 2;
	CK(cudaMalloc(&A, (size_t)M * K * 2));
	CK(cudaMalloc(&B, (size_t)K * N * 2));
	CK(cudaMalloc(&C, cbytes));
	CK(cudaMalloc(&L, cbytes));
	cudaStream_t cs, cs2, ps = nullptr; // copy streams here; GPU 1's copy stream (pull)
	CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&cs2, cudaStreamNonBlocking));
	if (peer) {
		CK(cudaSetDevice(other));
		CK(cudaMalloc(&P, cbytes));
		CK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
		CK(cudaSetDevice(dev));
	}
	fill_rand<<<2048, 256, 0, st>>>(A, (size_t)M * K, 41);
	fill_rand<<<2048, 256, 0, st>>>(B, (size_t)K * N, 42);
	CK(cudaStreamSynchronize(st));
	std::vector<cudaEvent_t> ev(65);
	for (auto &e : ev)
		CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	cudaEvent_t e0, eg, e1, ej, ejp = nullptr; // ejp: on GPU 1, for its copy stream
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&eg));
	CK(cudaEventCreate(&e1));
	CK(cudaEventCreateWithFlags(&ej, cudaEventDisableTiming));
	if (peer) {
		CK(cudaSetDevice(other));
		CK(cudaEventCreateWithFlags(&ejp, cudaEventDisableTiming));
		CK(cudaSetDevice(dev));
	}
	printf("# chunks timing: %d x %d x %d (cuBLAS), burst, median of %d runs after %d warm-up; "
	       "copies by the copy engine, "
	       "GPU %d %s\n",
	       M, N, K, iters, g_warm, other,
	       peer ? "is a peer" : "is not a peer (push/pull skipped)");
	printf("# streams chunks copy   gemm_end_us  total_us  GB/s_after_gemm  status\n");
	cublasHandle_t h2;
	CKB(cublasCreate(&h2));
	cudaStream_t st2;
	CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
	cudaEvent_t ef, e2;
	CK(cudaEventCreateWithFlags(&ef, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
	const int chunk_list[] = {1, 4, 8, 16};
	for (int cstreams = 1; cstreams <= 2; ++cstreams)
		for (int chunks : chunk_list) {
			if (M / 128 < chunks || (cstreams == 2 && chunks == 1))
				continue;
			for (int mode = kNoCopy; mode <= kPush2; ++mode) {
				if ((mode == kPush || mode == kPull || mode == kPush2) && !peer)
					continue;
				if (mode == kPush2 && cstreams == 2)
					continue;
				__nv_bfloat16 *dst = mode == kLocal ? L : P;
				if (mode != kNoCopy) {
					if (mode != kLocal)
						CK(cudaSetDevice(other));
					CK(cudaMemset(dst, 0xFF, cbytes));
					CK(cudaDeviceSynchronize());
					CK(cudaSetDevice(dev));
				}
				auto run = [&] {
					cudaStream_t c = mode == kPull ? ps : cs;
					if (cstreams == 2) {
						CK(cudaEventRecord(ef, st));
						CK(cudaStreamWaitEvent(st2, ef, 0));
					}
					for (int i = 0; i < chunks; ++i) {
						const int r0 =
						    (int)((long long)M / 128 * i / chunks) * 128;
						const int r1 =
						    (int)((long long)M / 128 * (i + 1) / chunks) *
						    128;
						cudaStream_t gs = cstreams == 2 && i % 2 ? st2 : st;
						cublas_ref(gs == st2 ? h2 : h, A + (size_t)r0 * K,
						           B, C + (size_t)r0 * N, r1 - r0, N, K,
						           gs);
						if (mode == kNoCopy)
							continue;
						CK(cudaEventRecord(ev[i], gs));
						if (mode == kPull)
							CK(cudaSetDevice(other)); // GPU 1's engine,
							                          // on its stream
						CK(cudaStreamWaitEvent(c, ev[i], 0));
						const size_t at = (size_t)r0 * N,
						             n = (size_t)(r1 - r0) * N,
						             h = mode == kPush2 ? n / 2 : n;
						CK(cudaMemcpyAsync(dst + at, C + at, h * 2,
						                   cudaMemcpyDefault, c));
						if (mode == kPush2) {
							CK(cudaStreamWaitEvent(cs2, ev[i], 0));
							CK(cudaMemcpyAsync(dst + at + h, C + at + h,
							                   (n - h) * 2,
							                   cudaMemcpyDefault, cs2));
						}
						if (mode == kPull)
							CK(cudaSetDevice(dev));
					}
					if (cstreams == 2) {
						CK(cudaEventRecord(e2, st2));
						CK(cudaStreamWaitEvent(st, e2, 0));
					}
					CK(cudaEventRecord(eg, st));
					if (mode != kNoCopy) {
						if (mode == kPull)
							CK(cudaSetDevice(other));
						CK(cudaEventRecord(mode == kPull ? ejp : ej, c));
						if (mode == kPull)
							CK(cudaSetDevice(dev));
						CK(cudaStreamWaitEvent(st, mode == kPull ? ejp : ej,
						                       0));
						if (mode == kPush2) {
							CK(cudaEventRecord(e2, cs2));
							CK(cudaStreamWaitEvent(st, e2, 0));
						}
					}
				};
				for (int i = 0; i < g_warm; ++i)
					run();
				std::vector<float> tg, tt;
				for (int i = 0; i < iters; ++i) {
					usleep(tt.empty() ? 2000
					                  : (useconds_t)(2e3 * tt.back()) + 100);
					spin_us<<<1, 1, 0, st>>>(200);
					CK(cudaEventRecord(e0, st));
					run();
					CK(cudaEventRecord(e1, st));
					sync_or_die(st, 10.0, "chunks timing");
					float a, b;
					CK(cudaEventElapsedTime(&a, e0, eg));
					CK(cudaEventElapsedTime(&b, e0, e1));
					tg.push_back(a);
					tt.push_back(b);
				}
				bool ok = true;
				if (mode != kNoCopy) {
					if (mode != kLocal) {
						CK(cudaSetDevice(other));
						CK(cudaDeviceSynchronize());
						CK(cudaSetDevice(dev));
					}
					ok = same_bytes(C, dst, (size_t)M * N);
				}
				const double g = median(tg) * 1e3, t = median(tt) * 1e3;
				printf("%9d %6d %5s %12.1f %9.1f %16.0f  %s\n", cstreams, chunks,
				       copy_label(mode), g, t,
				       mode != kNoCopy && t > g
				           ? (double)cbytes / chunks / ((t - g) * 1e3)
				           : 0.0,
				       ok ? "ok" : "FAIL");
				fflush(stdout);
				if (!ok)
					g_fail = 1;
			}
		}
	for (auto &e : ev)
		CK(cudaEventDestroy(e));
	CKB(cublasDestroy(h2));
	CK(cudaStreamDestroy(st2));
	CK(cudaEventDestroy(ef));
	CK(cudaEventDestroy(e2));
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(eg));
	CK(cudaEventDestroy(e1));
	CK(cudaEventDestroy(ej));
	CK(cudaStreamDestroy(cs));
	CK(cudaStreamDestroy(cs2));
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
	CK(cudaFree(L));
	if (peer) {
		CK(cudaSetDevice(other));
		CK(cudaStreamDestroy(ps));
		CK(cudaEventDestroy(ejp));
		CK(cudaFree(P));
		CK(cudaSetDevice(dev));
	}
}

// ---------------------------------------------------------------- group
// Busy-waits ~us microseconds on one SM: holds a copy stream back so that a
// gated GEMM launched after it really has to wait for its flags.
__global__ void spin_us(unsigned us)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < us * 1000ull);
}

// Fills dst from src in `chunks` row chunks of K rows x N columns on stream c,
// each followed by its gate flag set to v: what a program does to feed a
// gated problem of a grouped GEMM.
static void copy_gated(cudaStream_t c, __nv_bfloat16 *dst, const __nv_bfloat16 *src, int K, int N,
                       int chunks, const unsigned *flags, unsigned v)
{
	const size_t rows = (size_t)K / chunks;
	for (int i = 0; i < chunks; ++i) {
		CK(cudaMemcpyAsync(dst + i * rows * N, src + i * rows * N, rows * N * 2,
		                   cudaMemcpyDefault, c));
		CK(cuco::gemm_gate_set(c, flags + i, v));
	}
}

// The same for A [M, K]: chunk i is K columns [i K / chunks, +K / chunks) of
// every row, a 2-D copy.
static void copy_gated_cols(cudaStream_t c, __nv_bfloat16 *dst, const __nv_bfloat16 *src, int M,
                            int K, int chunks, const unsigned *flags, unsigned v)
{
	const size_t cols = (size_t)K / chunks;
	for (int i = 0; i < chunks; ++i) {
		CK(cudaMemcpy2DAsync(dst + i * cols, (size_t)K * 2, src + i * cols, (size_t)K * 2,
		                     cols * 2, M, cudaMemcpyDefault, c));
		CK(cuco::gemm_gate_set(c, flags + i, v));
	}
}

// Feature check of grouped launches: n problems sharing A (each its own B)
// or sharing B (each its own A), problem `first` computed first, the others
// gated on flags their (delayed) copies set, K chunk by K chunk; every C_i
// against cuBLAS. Two epochs, so a flag left from the first run must not
// open the second's gates. Also the argument checks.
// (M not a multiple of 128: every problem's last tile row partial, guard rows after each C)
static void run_group_features(cublasHandle_t h, cudaStream_t st, int M = 1024, int N = 512)
{
	const int K = 1024, n = 3, chunks = 4;
	cudaStream_t c;
	CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	__nv_bfloat16 *Asrc[n], *Adst[n], *Bsrc[n], *Bdst[n], *C[n], *R[n];
	unsigned *flags;
	CK(cudaMalloc(&flags, n * chunks * sizeof(unsigned)));
	CK(cudaMemset(flags, 0, n * chunks * sizeof(unsigned)));
	for (int i = 0; i < n; ++i) {
		CK(cudaMalloc(&Asrc[i], (size_t)M * K * 2));
		CK(cudaMalloc(&Adst[i], (size_t)M * K * 2));
		CK(cudaMalloc(&Bsrc[i], (size_t)K * N * 2));
		CK(cudaMalloc(&Bdst[i], (size_t)K * N * 2));
		CK(cudaMalloc(&C[i], (size_t)(M + kGuardRows) * N * 2));
		CK(cudaMalloc(&R[i], (size_t)M * N * 2));
		fill_rand<<<1024, 256, 0, st>>>(Asrc[i], (size_t)M * K, 51 + i);
		fill_rand<<<1024, 256, 0, st>>>(Bsrc[i], (size_t)K * N, 55 + i);
	}
	CK(cudaGetLastError());
	const int first = 1; // problem 1 reads its sources in place; 2 and 0 are gated
	unsigned epoch = 0;
	const int widths[] = {256, 128, 64};
	// All SMs but one, or 5: the gated copies may need an SM, since a copy
	// between two buffers of one GPU can run as a kernel (measured: at M 1024,
	// N 1024, tile_n 64, the launch on all 132 SMs never saw its gates open;
	// on 131 it did)
	int dev = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	const int ctas[] = {sms - 1, 5};
	for (int share_b = 0; share_b < 2; ++share_b) {
		// references: sharing A, C_i = A_1 * B_i; sharing B, C_i = A_i * B_1
		for (int i = 0; i < n; ++i)
			cublas_ref(h, share_b ? Asrc[i] : Asrc[first],
			           share_b ? Bsrc[first] : Bsrc[i], R[i], M, N, K, st);
		for (int tn : widths)
			for (int mc : ctas) {
				cuco::gemm_bf16_args a{Asrc[first], Bsrc[first], C[first], M, N,
				                       K,           K,           N,        N};
				cuco::gemm_bf16_plan pl;
				bool ok = plan_for(&pl, a, tn, mc) && pl.bn == tn;
				const __nv_bfloat16
				    *X[n]; // the per-problem operand: B_i (sharing A) or A_i
				const unsigned *gate[n];
				for (int i = 0; i < n; ++i) {
					X[i] = i == first ? (share_b ? Asrc[i] : Bsrc[i])
					                  : (share_b ? Adst[i] : Bdst[i]);
					gate[i] = i == first ? nullptr : flags + i * chunks;
				}
				cuco::gemm_bf16_group g;
				if (ok)
					CK(cuco::gemm_bf16_group_init(
					    &g, &pl, n, share_b ? X : nullptr,
					    share_b ? nullptr : X, C, gate, chunks, first, mc));
				for (int run = 0; ok && run < 2; ++run) {
					g.epoch = ++epoch; // flags only grow: each run's gates open
					                   // at a new value
					for (int i = 0; i < n; ++i) {
						CK(cudaMemsetAsync(C[i], 0xFF,
						                   (size_t)(M + kGuardRows) * N * 2,
						                   st));
						if (i != first) // NaN until copied
							CK(cudaMemsetAsync(
							    share_b ? Adst[i] : Bdst[i], 0xFF,
							    (size_t)(share_b ? M : N) * K * 2, st));
					}
					CK(cudaStreamSynchronize(st));
					spin_us<<<1, 1, 0, c>>>(300);
					CK(cudaGetLastError());
					for (int i = 0; i < n; ++i) {
						if (i == first)
							continue;
						if (share_b) // K columns of A_i per chunk: a 2-D
						             // copy
							copy_gated_cols(c, Adst[i], Asrc[i], M, K,
							                chunks, gate[i], g.epoch);
						else
							copy_gated(c, Bdst[i], Bsrc[i], K, N,
							           chunks, gate[i], g.epoch);
					}
					CK(cuco::gemm_bf16_run_group(&pl, &g, st));
					sync_or_die(st, 30, "grouped gemm");
					sync_or_die(c, 30, "gated copies");
					for (int i = 0; i < n; ++i) {
						CheckResult cr = check(
						    C[i], R[i], share_b ? Asrc[i] : Asrc[first],
						    share_b ? Bsrc[first] : Bsrc[i], M, N, K);
						ok = ok && cr.rel < 1e-2 && cr.nan == 0 &&
						     cr.wrong == 0 && cr.host_bad == 0 &&
						     guard_intact(C[i], M, N);
					}
				}
				printf("# feature group of %d sharing %s, tile_n %d, %s CTAs, "
				       "gated copies in %d chunks, 2 epochs, M %d N %d: "
				       "%s\n",
				       n, share_b ? "B" : "A", tn, mc == 5 ? "5" : "all but one",
				       chunks, M, N, ok ? "ok" : "FAIL");
				if (!ok)
					g_fail = 1;
			}
	}
	// refusals: chunks not dividing K/64, first out of range, too many problems
	if (M % 128 == 0 && N == 512) {
		cuco::gemm_bf16_args a{Asrc[0], Bsrc[0], C[0], M, N, K, K, N, N};
		cuco::gemm_bf16_plan pl;
		CK(cuco::gemm_bf16_plan_init(&pl, a, 0));
		const __nv_bfloat16 *B[cuco::kGemmGroupMax + 1];
		__nv_bfloat16 *CC[cuco::kGemmGroupMax + 1];
		for (int i = 0; i <= cuco::kGemmGroupMax; ++i) {
			B[i] = Bsrc[0];
			CC[i] = C[0];
		}
		cuco::gemm_bf16_group g;
		int refused =
		    (cuco::gemm_bf16_group_init(&g, &pl, 2, nullptr, B, CC, nullptr, 3, 0) ==
		     cudaErrorInvalidValue) +
		    (cuco::gemm_bf16_group_init(&g, &pl, 2, nullptr, B, CC, nullptr, 1, 2) ==
		     cudaErrorInvalidValue) +
		    (cuco::gemm_bf16_group_init(&g, &pl, cuco::kGemmGroupMax + 1, nullptr, B, CC,
		                                nullptr, 1, 0) == cudaErrorInvalidValue);
		printf("# feature group_init refusals: %d/3: %s\n", refused,
		       refused == 3 ? "ok" : "FAIL");
		if (refused != 3)
			g_fail = 1;
	}
	CK(cudaFree(flags));
	for (int i = 0; i < n; ++i) {
		CK(cudaFree(Asrc[i]));
		CK(cudaFree(Adst[i]));
		CK(cudaFree(Bsrc[i]));
		CK(cudaFree(Bdst[i]));
		CK(cudaFree(C[i]));
		CK(cudaFree(R[i]));
	}
	CK(cudaStreamDestroy(c));
}

// --group: one rank computing two problems of one grouped launch, the second
// one's operand pulled from GPU 1 (over NVLink when it is a peer) by the
// copy engine. Sharing A: gemm_allgather's rank computing its peer's block
// too from the peer's B. Sharing B: allgather_gemm's fused consumer, the
// peer's rows of A. Per tile width and chunk count: the own GEMM alone, both
// problems as two launches and as one grouped launch (operand already
// local), the copy then the grouped launch, and the grouped launch with the
// peer's problem gated on the copy's chunks.
static void run_group_timing(cublasHandle_t h, cudaStream_t st, int iters)
{
	struct Case {
		Shape sh;
		int share_b;
	};
	std::vector<Case> cases = {{{2048, 1024, 2048}, 0},
	                           {{4096, 2048, 4096}, 0},
	                           {{2048, 4096, 4096}, 1},
	                           {{4096, 8192, 8192}, 1}};
	if (g_shape[0])
		cases = {{{g_shape[0], g_shape[1], g_shape[2]}, 0},
		         {{g_shape[0], g_shape[1], g_shape[2]}, 1}};
	const int widths[] = {256, 128, 64};
	const int chunk_counts[] = {1, 4, 8};
	int ndev = 0, peer = 0, dev = 0, other = 0, sms = 0;
	CK(cudaGetDeviceCount(&ndev));
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	other = dev == 0 ? 1 : 0;
	if (ndev > 1) {
		CK(cudaDeviceCanAccessPeer(&peer, dev, other));
		if (peer) {
			cudaError_t e = cudaDeviceEnablePeerAccess(other, 0);
			if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
				CK(e);
			cudaGetLastError();
		}
	}
	cudaStream_t c;
	CK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	cudaEvent_t fork, join;
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
	printf("# group timing: median of %d launches (CUDA events), %d warm-up; peer operand on "
	       "GPU %d: %s\n",
	       iters, g_warm, other, peer ? "yes" : "no (local copy)");
	printf("#     M      N      K share tile_n chunks ctas  own_us  2launch_us  group_us  "
	       "copy+group_us  gated_us  "
	       "status\n");
	unsigned epoch = 0;
	for (const Case &cs : cases) {
		const int M = cs.sh.M, N = cs.sh.N, K = cs.sh.K, sb = cs.share_b;
		const size_t xn =
		    sb ? (size_t)M * K : (size_t)K * N; // elements of the per-problem operand
		__nv_bfloat16 *A, *B, *X1, *Xp, *C0, *C1, *R1;
		unsigned *flags;
		CK(cudaMalloc(&A, (size_t)M * K * 2));
		CK(cudaMalloc(&B, (size_t)K * N * 2));
		CK(cudaMalloc(&X1, xn * 2));
		CK(cudaMalloc(&C0, (size_t)M * N * 2));
		CK(cudaMalloc(&C1, (size_t)M * N * 2));
		CK(cudaMalloc(&R1, (size_t)M * N * 2));
		CK(cudaMalloc(&flags, 64 * sizeof(unsigned)));
		CK(cudaMemset(flags, 0, 64 * sizeof(unsigned)));
		if (peer)
			CK(cudaSetDevice(other));
		CK(cudaMalloc(&Xp, xn * 2));
		fill_rand<<<1024, 256>>>(Xp, xn, 62);
		CK(cudaDeviceSynchronize());
		if (peer)
			CK(cudaSetDevice(dev));
		fill_rand<<<1024, 256, 0, st>>>(A, (size_t)M * K, 60);
		fill_rand<<<1024, 256, 0, st>>>(B, (size_t)K * N, 61);
		CK(cudaGetLastError());
		CK(cudaMemcpyAsync(X1, Xp, xn * 2, cudaMemcpyDefault, st));
		const __nv_bfloat16 *A1 = sb ? X1 : A, *B1 = sb ? B : X1; // problem 1's operands
		cublas_ref(h, A1, B1, R1, M, N, K, st);
		auto copy = [&](int ch, unsigned v) {
			if (sb)
				copy_gated_cols(c, X1, Xp, M, K, ch, flags, v);
			else
				copy_gated(c, X1, Xp, K, N, ch, flags, v);
		};
		cuco::gemm_bf16_args a{A, B, C0, M, N, K, K, N, N};
		for (int tn : widths) {
			cuco::gemm_bf16_plan pl, pl1;
			if (!plan_for(&pl, a, tn, 0) || pl.bn != tn)
				continue;
			cuco::gemm_bf16_args a1{A1, B1, C1, M, N, K, K, N, N};
			if (!plan_for(&pl1, a1, tn, 0))
				continue;
			const __nv_bfloat16 *X[2] = {sb ? A : B, X1};
			__nv_bfloat16 *C[2] = {C0, C1};
			cuco::gemm_bf16_group both;
			CK(cuco::gemm_bf16_group_init(&both, &pl, 2, sb ? X : nullptr,
			                              sb ? nullptr : X, C, nullptr, 1, 0));
			const double own =
			    launch_us(st, g_warm, iters, [&] { CK(cuco::gemm_bf16_run(&pl, st)); });
			const double two_launch = launch_us(st, g_warm, iters, [&] {
				CK(cuco::gemm_bf16_run(&pl, st));
				CK(cuco::gemm_bf16_run(&pl1, st));
			});
			const double two = launch_us(st, g_warm, iters, [&] {
				CK(cuco::gemm_bf16_run_group(&pl, &both, st));
			});
			const double serial = launch_us(st, g_warm, iters, [&] {
				CK(cudaMemcpyAsync(X1, Xp, xn * 2, cudaMemcpyDefault, st));
				CK(cuco::gemm_bf16_run_group(&pl, &both, st));
			});
			for (int ch : chunk_counts) {
				const unsigned *gate[2] = {nullptr, flags};
				cuco::gemm_bf16_group g;
				// with no peer the copy is a device-to-device memcpy, which may run
				// as a kernel: leave it SMs (a gated launch on all of them waited
				// forever at tile_n 64 on one H200)
				CK(cuco::gemm_bf16_group_init(&g, &pl, 2, sb ? X : nullptr,
				                              sb ? nullptr : X, C, gate, ch, 0,
				                              peer ? 0 : sms - 4));
				CK(cudaMemsetAsync(C1, 0xFF, (size_t)M * N * 2, st));
				const double gated = launch_us(st, g_warm, iters, [&] {
					g.epoch = ++epoch;
					CK(cudaEventRecord(fork, st));
					CK(cudaStreamWaitEvent(c, fork, 0));
					copy(ch, g.epoch);
					CK(cuco::gemm_bf16_run_group(&pl, &g, st));
					CK(cudaEventRecord(join, c));
					CK(cudaStreamWaitEvent(st, join, 0));
				});
				CheckResult cr = check(C1, R1, A1, B1, M, N, K);
				const bool ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 &&
				                cr.host_bad == 0;
				printf("%7d %6d %6d     %c %6d %6d %4d %7.1f %11.1f %9.1f %14.1f "
				       "%9.1f  %s\n",
				       M, N, K, sb ? 'B' : 'A', tn, ch, g.ctas, own, two_launch,
				       two, serial, gated, ok ? "ok" : "FAIL");
				fflush(stdout);
				if (!ok)
					g_fail = 1;
			}
		}
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(X1));
		CK(cudaFree(C0));
		CK(cudaFree(C1));
		CK(cudaFree(R1));
		CK(cudaFree(flags));
		if (peer)
			CK(cudaSetDevice(other));
		CK(cudaFree(Xp));
		if (peer)
			CK(cudaSetDevice(dev));
	}
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(join));
	CK(cudaStreamDestroy(c));
}

// --sweep: time the tile-order group size (plan.group_m) per shape.
// Epilogue of the split probe: counts visits per tile and stamps the time the
// tile was stored (%globaltimer, ns) from one consumer thread.
struct stamp_epilogue {
	unsigned *visits;
	unsigned long long *stamp;
	int tiles_n;
	__device__ void operator()(int tm, int tn, int, int) const
	{
		if (threadIdx.x == 128) {
			unsigned long long t;
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
			atomicAdd(&visits[tm * tiles_n + tn], 1u);
			stamp[tm * tiles_n + tn] = t;
		}
	}
};

// One split case (gemm_bf16_plan_split, tile width tn, `ways`; 0 = unsplit):
// two checked launches (NaN-poisoned C against cuBLAS's R; the second shows
// the counters were left at zero), every tile's epilogue run exactly once, the
// counters zero afterwards. With timing, also the median time and, from
// per-tile store stamps of one more launch, the MiB of C stored in the last 10
// and 25 us of the kernel: what a copy started per finished tile or band could
// not hide. Prints one row; false when the plan would not split (skipped).
static bool split_case(cudaStream_t st, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                       __nv_bfloat16 *C, const __nv_bfloat16 *R, int M, int N, int K, int tn,
                       int ways, bool timing, int iters)
{
	cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
	cuco::gemm_bf16_plan pl;
	CK(cuco::gemm_bf16_plan_init(&pl, a, 0));
	if (tn != pl.bn)
		CK(cuco::gemm_bf16_plan_narrow(&pl, tn, 0));
	const size_t bytes = cuco::gemm_bf16_split_bytes(&pl, ways);
	if (ways && !bytes)
		return false; // would not split: the same as ways 0
	void *ws = nullptr;
	if (bytes) {
		CK(cudaMalloc(&ws, bytes));
		CK(cudaMemset(ws, 0, bytes));
	}
	CK(cuco::gemm_bf16_plan_split(&pl, ways, ws, bytes));
	const cuco::gemm_bf16_tile_info ti = cuco::gemm_bf16_tiles(&pl);
	unsigned *visits;
	unsigned long long *stamp;
	CK(cudaMalloc(&visits, ti.tiles * sizeof(unsigned)));
	CK(cudaMalloc(&stamp, ti.tiles * sizeof(unsigned long long)));
	stamp_epilogue epi{visits, stamp, ti.tiles_n};
	bool ok = (ways >= 2) == (ti.split >= 2);
	CheckResult cr{};
	for (int rep = 0; rep < 2; ++rep) {
		CK(cudaMemsetAsync(C, 0xFF, (size_t)(M + kGuardRows) * N * 2,
		                   st)); // NaN poison, guard rows too
		CK(cudaMemsetAsync(visits, 0, ti.tiles * sizeof(unsigned), st));
		CK(cuco::gemm_bf16_run_epilogue(&pl, st, epi));
		sync_or_die(st, 30, "split gemm");
		cr = check(C, R, A, B, M, N, K);
		std::vector<unsigned> v(ti.tiles);
		CK(cudaMemcpy(v.data(), visits, ti.tiles * sizeof(unsigned),
		              cudaMemcpyDeviceToHost));
		for (int t = 0; t < ti.tiles; ++t)
			if (v[t] != 1) {
				fprintf(stderr, "  split %d: tile %d's epilogue ran %u times\n",
				        ways, t, v[t]);
				ok = false;
				break;
			}
		ok = ok && cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0 &&
		     guard_intact(C, M, N);
	}
	if (bytes) { // every counter back at zero
		const int tail = ti.tiles - ti.whole;
		std::vector<unsigned> cnt(tail);
		CK(cudaMemcpy(cnt.data(), ws, tail * sizeof(unsigned), cudaMemcpyDeviceToHost));
		for (int i = 0; i < tail; ++i)
			if (cnt[i]) {
				fprintf(stderr, "  split %d: counter %d left at %u\n", ways, i,
				        cnt[i]);
				ok = false;
				break;
			}
	}
	if (!ok)
		g_fail = 1;
	double us = 0, t10 = 0, t25 = 0;
	if (timing) {
		us = launch_us(st, g_warm, iters, [&] { CK(cuco::gemm_bf16_run(&pl, st)); });
		CK(cuco::gemm_bf16_run_epilogue(&pl, st,
		                                epi)); // stamps of one launch, after the timed ones
		sync_or_die(st, 30, "split gemm");
		std::vector<unsigned long long> ts(ti.tiles);
		CK(cudaMemcpy(ts.data(), stamp, ti.tiles * sizeof(unsigned long long),
		              cudaMemcpyDeviceToHost));
		const unsigned long long end = *std::max_element(ts.begin(), ts.end());
		const double tile_mib = 128.0 * ti.tile_n * 2 / (1024.0 * 1024.0);
		for (unsigned long long x : ts) {
			if (end - x <= 10000)
				t10 += tile_mib;
			if (end - x <= 25000)
				t25 += tile_mib;
		}
	}
	printf("%7d %6d %6d %6d %4d %4d %5d %6.1f %6.1f %7.2f %7.2f %8.1e %s\n", M, N, K, ti.tile_n,
	       ti.split, ti.ctas, ti.whole, us, timing ? 2.0 * M * N * K / us * 1e-6 : 0.0, t10,
	       t25, cr.rel, ok ? "ok" : "FAIL");
	fflush(stdout);
	CK(cudaFree(visits));
	CK(cudaFree(stamp));
	if (ws)
		CK(cudaFree(ws));
	return true;
}

// gemm_bf16_plan_split against the unsplit plan, per shape, tile width and
// ways (split_case). timing: the --split probe (its shapes, or --shape);
// otherwise the correctness cases of the default and --quick runs.
static void run_split(cublasHandle_t h, cudaStream_t st, bool timing, int iters)
{
	// (M not a multiple of 128: a partial last tile row, in the split tail too;
	// N not a multiple of the width, K not of 64: an overlapping last tile
	// column, a partial last k-block)
	std::vector<Shape> shapes = {{256, 256, 64},     {1024, 384, 512}, {8192, 512, 8192},
	                             {2048, 1024, 2048}, {1000, 384, 512}, {8100, 512, 2048},
	                             {1000, 1000, 1000}, {300, 200, 520}};
	if (timing)
		shapes.insert(shapes.end(), {{4096, 2048, 4096}, {8192, 4096, 8192}});
	if (timing && g_shape[0])
		shapes = {{g_shape[0], g_shape[1], g_shape[2]}};
	if (timing)
		printf("# split: %d warm-up, median of %d; tail = MiB of C stored in the kernel's "
		       "last 10 / 25 us\n",
		       g_warm, iters);
	else
		printf("# split: correctness (two launches each, epilogue visits, counters left at "
		       "zero)\n");
	printf("#     M      N      K tile_n ways ctas whole     us   TF/s  tail10  tail25  "
	       "rel_err status\n");
	for (const Shape &sh : shapes) {
		const int M = sh.M, N = sh.N, K = sh.K;
		__nv_bfloat16 *A, *B, *C, *R;
		operands(st, M, N, K, 31 + M + 7ull * K, 37 + N + 13ull * K, &A, &B, &C, &R);
		cublas_ref(h, A, B, R, M, N, K, st);
		if (timing) {
			const double us_cb = launch_us(
			    st, g_warm, iters, [&] { cublas_ref(h, A, B, R, M, N, K, st); });
			printf("%7d %6d %6d cuBLAS    -    -     - %6.1f %6.1f\n", M, N, K, us_cb,
			       2.0 * M * N * K / us_cb * 1e-6);
		}
		const int tns[3] = {cuco::gemm_detail::plan_width(N), 128, 64};
		for (int w = 0; w < 3; ++w) {
			if ((w == 1 && tns[0] == 128) || tns[w] > tns[0])
				continue;
			for (int ways : {0, 2, 3, 4, 8})
				split_case(st, A, B, C, R, M, N, K, tns[w], ways, timing, iters);
		}
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
		CK(cudaFree(R));
	}
}

// gemm_bf16 with its workspace (gemm_bf16_alone_workspace): a shape with a
// short last wave splits its tail (2048 x 2304 x 520: 144 tiles of 128 x 256
// on 132 SMs, 12 left: 4 ways), twice on one workspace, against cuBLAS, the
// guard rows untouched; a shape in whole waves needs no workspace.
static void run_alone_split(cublasHandle_t h, cudaStream_t st)
{
	const int M = 2048, N = 2304, K = 520;
	__nv_bfloat16 *A, *B, *C, *R;
	void *ws = nullptr;
	size_t bytes = 0;
	operands(st, M, N, K, 71, 73, &A, &B, &C, &R);
	cublas_ref(h, A, B, R, M, N, K, st);
	CK(cuco::gemm_bf16_alone_workspace(M, N, K, 0, &ws, &bytes));
	bool ok = ws && bytes > 0 && cuco::gemm_bf16_alone_bytes(2048, 2048, 2048) == 0;
	for (int rep = 0; ok && rep < 2; ++rep) {
		CK(cudaMemsetAsync(C, 0xFF, (size_t)(M + kGuardRows) * N * 2, st));
		cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
		CK(cuco::gemm_bf16(a, st, 0, ws, bytes));
		sync_or_die(st, 30, "gemm_bf16 split");
		CheckResult cr = check(C, R, A, B, M, N, K);
		ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 && cr.host_bad == 0 &&
		     guard_intact(C, M, N);
	}
	int dev = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	printf("# feature gemm_bf16 with a workspace (%dx%dx%d, %zu bytes: the tail split %d "
	       "ways): %s\n",
	       M, N, K, bytes, cuco::gemm_bf16_alone_split(16 * 9, sms), ok ? "ok" : "FAIL");
	if (!ok)
		g_fail = 1;
	CK(cudaFree(ws));
	CK(cudaFree(A));
	CK(cudaFree(B));
	CK(cudaFree(C));
	CK(cudaFree(R));
}

static void run_sweep(cudaStream_t st, int iters)
{
	Shape shapes[] = {{4096, 4096, 4096},
	                  {8192, 8192, 8192},
	                  {8192, 1024, 8192},
	                  {8192, 8192, 1024},
	                  {16384, 4096, 8192}};
	printf("# sweep: our_us (median of %d) by plan.group_m\n#     M      N      K", iters);
	const int gms[] = {1, 2, 4, 8, 16, 32, 64};
	for (int g : gms)
		printf("   gm=%-4d", g);
	printf("\n");
	for (auto sh : shapes) {
		__nv_bfloat16 *A, *B, *C;
		CK(cudaMalloc(&A, (size_t)sh.M * sh.K * 2));
		CK(cudaMalloc(&B, (size_t)sh.K * sh.N * 2));
		CK(cudaMalloc(&C, (size_t)sh.M * sh.N * 2));
		fill_rand<<<2048, 256, 0, st>>>(A, (size_t)sh.M * sh.K, 5);
		fill_rand<<<2048, 256, 0, st>>>(B, (size_t)sh.K * sh.N, 6);
		cuco::gemm_bf16_args a{A, B, C, sh.M, sh.N, sh.K, sh.K, sh.N, sh.N};
		cuco::gemm_bf16_plan plan;
		CK(cuco::gemm_bf16_plan_init(&plan, a, 0));
		printf("%7d %6d %6d", sh.M, sh.N, sh.K);
		for (int g : gms) {
			plan.group_m = g;
			printf(" %9.1f", launch_us(st, 3, iters,
			                           [&] { CK(cuco::gemm_bf16_run(&plan, st)); }));
		}
		printf("\n");
		fflush(stdout);
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
	}
}

// --grid: the persistent grid's size. A plan takes min(SMs, tiles) CTAs; when
// the tiles are more than the SMs, as few CTAs as keep the same number of
// waves (ceil(tiles / ceil(tiles / SMs))) give every CTA the same count of
// tiles. Times the GEMM alone and pushing every tile to GPU 1 (bulk copies)
// at both grids, three interleaved rounds, at the per-rank shapes of
// gemm_allgather (or --shape); C and the peer copy checked once per grid.
static void run_grid(cublasHandle_t h, cudaStream_t st, int iters)
{
	std::vector<Shape> shapes = {{2048, 1024, 2048},
	                             {4096, 2048, 4096},
	                             {8192, 4096, 8192},
	                             {16384, 2048, 8192},
	                             {4096, 8192, 4096}};
	if (g_shape[0])
		shapes = {{g_shape[0], g_shape[1], g_shape[2]}};
	int dev = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	const bool peer = other_is_peer(dev);
	printf("# grid: median of %d single launches (CUDA events) per series, 3 interleaved "
	       "rounds; push = bulk "
	       "copies of every tile to GPU %d (%s)\n",
	       iters, dev == 0 ? 1 : 0, peer ? "a peer" : "not a peer: skipped");
	printf("#     M      N      K tile_n tiles  ctas round   alone_us   push_us  status\n");
	for (const Shape &sh : shapes) {
		const int M = sh.M, N = sh.N, K = sh.K;
		__nv_bfloat16 *A, *B, *C, *R, *P = nullptr;
		CK(cudaMalloc(&A, (size_t)M * K * 2));
		CK(cudaMalloc(&B, (size_t)K * N * 2));
		CK(cudaMalloc(&C, (size_t)M * N * 2));
		CK(cudaMalloc(&R, (size_t)M * N * 2));
		if (peer)
			P = alloc_other(dev, (size_t)M * N * 2);
		fill_rand<<<2048, 256, 0, st>>>(A, (size_t)M * K, 51);
		fill_rand<<<2048, 256, 0, st>>>(B, (size_t)K * N, 52);
		cublas_ref(h, A, B, R, M, N, K, st);
		cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
		cuco::gemm_bf16_plan full;
		CK(cuco::gemm_bf16_plan_init(&full, a, 0)); // the balanced grid (plan_init's own)
		const int tiles = full.tiles_m * full.tiles_n, waves = (tiles + sms - 1) / sms;
		const int grids[2] = {tiles < sms ? tiles : sms, (tiles + waves - 1) / waves};
		if (full.ctas != grids[1]) {
			printf(
			    "# grid %dx%dx%d: plan_init chose %d CTAs, not the balanced %d: FAIL\n",
			    M, N, K, full.ctas, grids[1]);
			g_fail = 1;
		}
		for (int round = 0; round < 3; ++round)
			for (int g = 0; g < 2; ++g) {
				if (g == 1 && grids[1] == grids[0])
					continue;
				cuco::gemm_bf16_plan pl = full;
				pl.ctas = grids[g];
				__nv_bfloat16 *dd[1] = {P};
				const double alone = launch_us(
				    st, g_warm, iters, [&] { CK(cuco::gemm_bf16_run(&pl, st)); });
				bool ok = true;
				if (round == 0) {
					CheckResult cr = check(C, R, A, B, M, N, K);
					ok = cr.rel < 1e-2 && cr.nan == 0 && cr.wrong == 0 &&
					     cr.host_bad == 0;
				}
				double pushed = 0;
				if (P) {
					if (round == 0)
						CK(cudaMemset(P, 0xFF, (size_t)M * N * 2));
					pushed = launch_us(st, g_warm, iters, [&] {
						CK(run_push<0>(&pl, st, dd, 1));
					});
					if (round == 0)
						ok = ok && same_bytes(C, P, (size_t)M * N);
				}
				printf("%7d %6d %6d %6d %5d %5d %5d %10.1f %9.1f  %s\n", M, N, K,
				       pl.bn, tiles, pl.ctas, round, alone, pushed,
				       ok ? "ok" : "FAIL");
				fflush(stdout);
				if (!ok)
					g_fail = 1;
			}
		CK(cudaFree(A));
		CK(cudaFree(B));
		CK(cudaFree(C));
		CK(cudaFree(R));
		if (P)
			CK(cudaFree(P));
	}
}

// The integer a flag takes: the whole of s, else a message naming the flag and exit 2.
static int int_arg(const char *flag, const char *s)
{
	char *end = nullptr;
	errno = 0;
	const long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < INT_MIN || v > INT_MAX) {
		fprintf(stderr, "test_gemm: %s: '%s' is not an integer\n", flag, s);
		exit(2);
	}
	return (int)v;
}

int main(int argc, char **argv)
{
	bool no_features = false; // --push: timings only (e.g. under a profiler)
	bool quick = false, sweep = false, push = false, group = false, chunks = false,
	     split = false, grid = false, vs = false;
	int iters = 30;
	for (int i = 1; i < argc; ++i) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--sweep"))
			sweep = true;
		else if (!strcmp(argv[i], "--push"))
			push = true;
		else if (!strcmp(argv[i], "--group"))
			group = true;
		else if (!strcmp(argv[i], "--chunks"))
			chunks = true;
		else if (!strcmp(argv[i], "--split"))
			split = true;
		else if (!strcmp(argv[i], "--grid"))
			grid = true;
		else if (!strcmp(argv[i], "--vs"))
			vs = true;
		else if (!strcmp(argv[i], "--sustained"))
			g_sustained = true;
		else if (!strcmp(argv[i], "--clocks"))
			g_clocks = true;
		else if (!strcmp(argv[i], "--no-features"))
			no_features = true;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = int_arg("--iters", argv[++i]);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			g_warm = int_arg("--warm", argv[++i]);
		else if (!strcmp(argv[i], "--gap") && i + 1 < argc)
			g_gap_us = int_arg("--gap", argv[++i]);
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			g_hold_us = int_arg("--hold", argv[++i]);
		else if (!strcmp(argv[i], "--pace") && i + 1 < argc) {
			std::string list = argv[++i]; // P[,P...]
			for (size_t a = 0, b; a <= list.size(); a = b + 1) {
				b = list.find(',', a);
				if (b == std::string::npos)
					b = list.size();
				g_paces.push_back(int_arg("--pace", list.substr(a, b - a).c_str()));
			}
		} else if (!strcmp(argv[i], "--shape") && i + 3 < argc) {
			for (int j = 0; j < 3; ++j)
				g_shape[j] = int_arg("--shape", argv[++i]);
		} else {
			fprintf(stderr,
			        "usage: %s [--quick] [--sweep] [--push] [--group] [--chunks] "
			        "[--split] [--grid] [--vs] [--iters N] [--warm N] "
			        "[--sustained] [--gap US] [--hold US] [--shape M N K] [--pace "
			        "P[,P...]] [--clocks] [--no-features]\n",
			        argv[0]);
			return 2;
		}
	}
	for (int pc : g_paces)
		if (pc < 0 || pc > 100) {
			fprintf(stderr, "test_gemm: --pace: percentages 0..100\n");
			return 2;
		}
	if (g_sustained && (!vs || g_hold_us > 0 || g_gap_us > 0)) {
		fprintf(stderr,
		        "test_gemm: --sustained goes with --vs, and without --hold or --gap\n");
		return 2;
	}
	if (g_hold_us < 0)
		g_hold_us = vs && !g_sustained ? 200 : 0;
	if (vs && g_clocks) { // the probe CTA holds an SM that cuBLAS's full grid then waits for
		fprintf(stderr, "test_gemm: --vs times cuBLAS, whose grid takes every SM; --clocks "
		                "would hold one for its probe\n");
		return 2;
	}
	if (iters < 1 || g_warm < 0 ||
	    (g_shape[0] && (g_shape[0] < 1 || g_shape[1] < 64 || g_shape[1] % 8 || g_shape[2] < 8 ||
	                    g_shape[2] % 8))) {
		fprintf(stderr, "test_gemm: --iters >= 1, --warm >= 0, --shape M N K with M >= 1, "
		                "N >= 64 and K multiples of 8\n");
		return 2;
	}
	int dev = 0, major = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, dev));
	printf("# test_gemm: device %d %s, %d SMs, cc %d.%d; cuco::gemm_bf16 vs cublasGemmEx(bf16, "
	       "COMPUTE_32F)\n",
	       dev, prop.name, prop.multiProcessorCount, prop.major, prop.minor);
	if (major != 9) {
		printf("# SKIP: needs compute capability 9.x (sm_90a)\n");
		return 77; // ctest: skipped, not passed
	}
	cublasHandle_t h;
	CKB(cublasCreate(&h));
	cudaStream_t st;
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

	// release the handle and stream, say the result
	auto finish = [&]() {
		CKB(cublasDestroy(h));
		CK(cudaStreamDestroy(st));
		printf("# result: %s\n", g_fail ? "FAIL" : "PASS");
		return g_fail;
	};
	if (push) {
		if (!no_features)
			run_push_features(h, st);
		run_push_timing(h, st, iters);
		return finish();
	}
	if (vs) {
		run_vs(h, st, iters);
		return finish();
	}
	if (grid) {
		run_grid(h, st, iters);
		return finish();
	}
	if (chunks) {
		run_chunks_timing(h, st, iters);
		return finish();
	}
	if (split) {
		run_split(h, st, true, iters);
		return finish();
	}
	if (group) {
		run_group_features(h, st);
		run_group_timing(h, st, iters);
		return finish();
	}
	if (sweep) {
		run_sweep(st, iters);
		return finish();
	}
	run_diag(st, 128, 256, 64, 0);
	run_diag(st, 128, 256, 64, 1);
	run_diag(st, 128, 128, 128, 0);
	run_diag(st, 256, 512, 256, 1);
	std::vector<Shape> shapes;
	if (quick)
		shapes = {{256, 256, 64},     {128, 384, 192},    {1024, 384, 512},
		          {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 512, 8192},
		          {1, 256, 64},       {1000, 384, 512},   {4000, 4096, 4096},
		          {1000, 1000, 1000}, {300, 200, 520},    {256, 72, 64},
		          {2048, 3696, 1032}};
	else // the last two: an N of 14784 (Qwen2.5-72B's FFN on 2 ranks), 256-wide tiles
	     // overlapping by 64
		shapes = {{2048, 2048, 2048},  {4096, 4096, 4096},  {8192, 8192, 8192},
		          {16384, 8192, 8192}, {8192, 1024, 8192},  {4096, 4096, 16384},
		          {16384, 4096, 8192}, {8192, 512, 8192},   {1024, 384, 512},
		          {8192, 8192, 1024},  {4096, 14784, 8192}, {4096, 14848, 8192}};
	printf("# timing: CUDA events around each launch, %d warm-up, median of %d; inputs "
	       "uniform[-1,1) bf16\n",
	       5, iters);
	printf("#     M      N      K tile      ctas    our_us  our_TF/s  cublas_us cub_TF/s   "
	       "rel_err  #wrong #nan "
	       "host status\n");
	for (auto &s : shapes)
		run_shape(h, st, s, !quick, iters);
	run_features(h, st);
	run_features(h, st, 1024, 1000,
	             1000); // the last tile column overlapping by 24, a 40-column last k-block
	run_push_features(h, st);
	run_push_features(h, st, 1000); // a partial last tile row of 104 rows
	run_push_features(h, st, 37);   // one tile row, 37 rows
	// N and K edges, padded C: the last tile column overlapping the one before
	// by 24 columns at every width, K's last k-block 40 columns; then 128-wide
	// tiles overlapping by 56 and an 8-column last k-block; 64-wide by 56
	run_push_features(h, st, 1000, 1000, 1000, 64);
	run_push_features(h, st, 300, 200, 520, 8);
	run_push_features(h, st, 256, 72, 64, 8);
	run_group_features(h, st);
	run_group_features(h, st, 1000);
	run_group_features(h, st, 1000, 1000);
	run_split(h, st, false, 0);
	run_alone_split(h, st);
	return finish();
}
