// pace_probe.cu - does NVLink traffic beside a GEMM cost it per byte, or more
// when the bytes come in bursts? GPU 0 runs cuBLAS C = A B (row-major,
// M x N x K, bf16, fp32 compute) on one stream while its copy engine moves
// `mib` MiB between GPU 0 and GPU 1 on another, in pieces of `piece` MiB:
//   push  GPU 0's memory -> GPU 1 (what gemm_allgather's ce stream_overlap sends)
//   pull  GPU 1's memory -> GPU 0 (what it receives: writes into GPU 0's memory)
// The host issues piece i at t0 + i * period (t0: just after the GEMM is
// queued), so the copies average `rate` GB/s; rate 0 queues them all at once
// (the copy engine's full rate, one burst at the start). "bursts B" sends the
// bytes in B equal bursts spread over the GEMM's time alone, each at full
// rate (a chunked stream overlap's pattern). Every case: `iters` runs, each
// after 2 ms of idle GPU (burst timing), medians of the GEMM's time (events
// on its stream) and of the time to the last copy's end.
// Usage: pace_probe [M N K] [mib] [iters]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "cuco_dev/random.cuh"

#include "probe_check.h"

typedef std::chrono::steady_clock clk;

struct Case {
	const char *dir; /* "none", "push", "pull" */
	int gemm;        /* 1: the GEMM runs */
	double mib;      /* bytes to move */
	double rate;     /* GB/s; 0: all at once */
	int bursts;      /* > 0: that many full-rate bursts over the GEMM's time */
};

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char **argv)
{
	int M = 8192, N = 4096, K = 8192, iters = 30;
	double mib = 64, piece = 2;
	if (argc >= 4) {
		M = atoi(argv[1]);
		N = atoi(argv[2]);
		K = atoi(argv[3]);
	}
	if (argc >= 5)
		mib = atof(argv[4]);
	if (argc >= 6)
		iters = atoi(argv[5]);
	if (!probe_have_peer_pair("pace_probe"))
		return 0;
	const size_t bytes = (size_t)(mib * 1048576.0), pbytes = (size_t)(piece * 1048576.0);
	void *far, *near;
	CK(cudaSetDevice(1));
	CK(cudaMalloc(&far, bytes));
	CK(cudaMemset(far, 1, bytes));
	CK(cudaDeviceEnablePeerAccess(0, 0));
	CK(cudaSetDevice(0));
	CK(cudaDeviceEnablePeerAccess(1, 0));
	CK(cudaMalloc(&near, bytes));
	CK(cudaMemset(near, 2, bytes));
	__nv_bfloat16 *A, *B, *C;
	CK(cudaMalloc(&A, (size_t)M * K * 2));
	CK(cudaMalloc(&B, (size_t)K * N * 2));
	CK(cudaMalloc(&C, (size_t)M * N * 2));
	cudaStream_t cs, ms;
	int lo, hi;
	CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
	CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithPriority(&ms, cudaStreamNonBlocking, hi));
	cuco::fill_uniform_bf16<<<1024, 256, 0, cs>>>(A, (size_t)M * K, 11, 1);
	cuco::fill_uniform_bf16<<<1024, 256, 0, cs>>>(B, (size_t)K * N, 11, 2);
	CK(cudaStreamSynchronize(cs));
	cublasHandle_t h;
	CB(cublasCreate(&h));
	CB(cublasSetStream(h, cs));
	const float one = 1.f, zero = 0.f;
	auto gemm = [&] {
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, N, A,
		                CUDA_R_16BF, K, &zero, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
		                CUBLAS_GEMM_DEFAULT));
	};
	cudaEvent_t e0, e1, e2;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventCreate(&e2));
	/* the GEMM alone, for the bursts' spacing */
	for (int i = 0; i < 5; i++)
		gemm();
	CK(cudaStreamSynchronize(cs));
	double gemm_alone_us = 0;
	{
		std::vector<double> t;
		for (int i = 0; i < iters; i++) {
			std::this_thread::sleep_for(std::chrono::microseconds(2000));
			CK(cudaEventRecord(e0, cs));
			gemm();
			CK(cudaEventRecord(e1, cs));
			CK(cudaEventSynchronize(e1));
			float ms1;
			CK(cudaEventElapsedTime(&ms1, e0, e1));
			t.push_back(ms1 * 1e3);
		}
		gemm_alone_us = median(t);
	}
	std::vector<Case> cases = {
	    {"none", 1, 0, 0, 0},
	    {"push", 0, mib, 0, 0},
	    {"push", 1, mib, 0, 0},
	    {"push", 1, mib / 2, 0, 0},
	    {"push", 1, mib, 200, 0},
	    {"push", 1, mib, 130, 0},
	    {"push", 1, mib, mib * 1.048576 / (gemm_alone_us * 1e-3) * 0.95, 0},
	    {"push", 1, mib, 0, 8},
	    {"push", 1, mib, 0, 4},
	    {"pull", 0, mib, 0, 0},
	    {"pull", 1, mib, 0, 0},
	    {"pull", 1, mib, 0, 8},
	    {"pull", 1, mib, mib * 1.048576 / (gemm_alone_us * 1e-3) * 0.95, 0},
	};
	printf(
	    "# pace_probe: GPU 0 cuBLAS %dx%dx%d bf16 (alone %.1f us) beside copy-engine copies of "
	    "%.0f MiB between GPU 0 and GPU 1 in %.0f MiB pieces; median of %d runs, each after 2 "
	    "ms idle\n",
	    M, N, K, gemm_alone_us, mib, piece, iters);
	printf("# dir   gemm    MiB   rate_GB/s bursts   gemm_us  gemm_slowdown_us  comm_end_us  "
	       "comm_GB/s\n");
	for (const Case &c : cases) {
		const bool copy = c.mib > 0;
		const size_t cb = (size_t)(c.mib * 1048576.0);
		const int pieces = copy ? (int)((cb + pbytes - 1) / pbytes) : 0;
		const bool push = strcmp(c.dir, "push") == 0; /* push: GPU 0 -> GPU 1 */
		void *dst = push ? far : near, *src = push ? near : far;
		std::vector<double> tg, tc;
		for (int it = -3; it < iters; it++) {
			std::this_thread::sleep_for(std::chrono::microseconds(2000));
			CK(cudaEventRecord(e0, cs));
			CK(cudaStreamWaitEvent(ms, e0, 0));
			if (c.gemm)
				gemm();
			CK(cudaEventRecord(e1, cs));
			/* pacing: piece i leaves at t0 + offset(i) */
			const clk::time_point t0 = clk::now();
			for (int i = 0; i < pieces; i++) {
				double at_us = 0;
				if (c.rate > 0)
					at_us = i * (piece * 1.048576e-3 / c.rate) * 1e6;
				else if (c.bursts > 0) {
					const int per = (pieces + c.bursts - 1) / c.bursts;
					at_us = (i / per) * (gemm_alone_us / c.bursts);
				}
				while (std::chrono::duration<double, std::micro>(clk::now() - t0)
				           .count() < at_us)
					;
				const size_t off = (size_t)i * pbytes,
				             n = std::min(pbytes, cb - off);
				CK(cudaMemcpyAsync((char *)dst + off, (char *)src + off, n,
				                   cudaMemcpyDefault, ms));
			}
			CK(cudaEventRecord(e2, ms));
			CK(cudaEventSynchronize(e1));
			CK(cudaEventSynchronize(e2));
			float a, b;
			CK(cudaEventElapsedTime(&a, e0, e1));
			CK(cudaEventElapsedTime(&b, e0, e2));
			if (it >= 0) {
				tg.push_back(a * 1e3);
				tc.push_back(b * 1e3);
			}
		}
		const double g = median(tg), e = median(tc);
		printf("  %-5s %4d %6.0f %11.0f %6d %9.1f %17.1f %12.1f %10.0f\n", c.dir, c.gemm,
		       c.mib, c.rate, c.bursts, c.gemm ? g : 0.0, c.gemm ? g - gemm_alone_us : 0.0,
		       copy ? e : 0.0, copy && e > 0 ? c.mib * 1.048576 / (e * 1e-3) : 0.0);
		fflush(stdout);
	}
	return 0;
}
