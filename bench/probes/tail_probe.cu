// tail_probe.cu - how fast can one chunk reach the other GPU once compute has
// ended? GPU 0 sends `mib` MiB to GPU 1 (peer access, NVLink): by the copy
// engine (cudaMemcpyAsync), by a store kernel on every SM (16-byte loads here,
// stores there: what an LSA push kernel does), or by both at once, the copy
// engine taking the first `ce_pct` percent and the kernel the rest on a third
// stream; then the same with an empty one-thread kernel queued after the copy
// (what the exit barrier kernel is to the last chunk), timed to its end.
//
// As in the program, the send waits on another stream for a kernel that holds
// every SM (a ~20 us spin standing for the GEMM's last chunk), and is timed
// from that kernel's end; the last two cases send on the kernel's own stream
// instead ("same"). With `ways` 2, GPU 1 sends the same to GPU 0 at the
// same time, as both ranks do in the program: both GPUs' work is queued behind
// a gate kernel that waits for one host flag, set once everything is queued,
// so the two sides start within a microsecond or two of each other; the time is
// then the slower GPU's. Median of `iters` runs, each after 1 ms idle; GB/s =
// bytes one GPU sends / time.
// Usage: tail_probe [mib] [iters] [ways]
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "probe_check.h"

__global__ void empty_kernel() {}

// Waits until *go is nonzero, or ~1 s of clock has passed (no hang if the host dies).
__global__ void gate_kernel(const volatile int *go)
{
	const long long t0 = clock64();
	while (!*go && clock64() - t0 < 2000000000LL)
		;
}

__global__ void spin_kernel(long long cycles)
{
	const long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
}

__global__ void push_kernel(uint4 *dst, const uint4 *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

struct side {
	void *src, *dst; // src on this GPU, dst on the other
	cudaStream_t a, b, c;
	cudaEvent_t ek, eb, ec, e1;
};

int main(int argc, char **argv)
{
	double mib = argc > 1 ? atof(argv[1]) : 8;
	int iters = argc > 2 ? atoi(argv[2]) : 50;
	int ways = argc > 3 ? atoi(argv[3]) : 1;
	int sms = 0, clk_khz = 0;
	if (!probe_have_peer_pair("tail_probe"))
		return 0;
	if (ways != 1 && ways != 2) {
		fprintf(stderr, "tail_probe: ways is 1 or 2, not %d\n", ways);
		return 2;
	}
	const size_t bytes = (size_t)(mib * 1048576.0) & ~(size_t)15;
	side sd[2];
	for (int d = 0; d < 2; d++) {
		CK(cudaSetDevice(d));
		CK(cudaDeviceEnablePeerAccess(1 - d, 0));
		CK(cudaMalloc(&sd[d].src, bytes));
		CK(cudaMemset(sd[d].src, 3 + d, bytes));
		CK(cudaStreamCreateWithFlags(&sd[d].a, cudaStreamNonBlocking));
		CK(cudaStreamCreateWithFlags(&sd[d].b, cudaStreamNonBlocking));
		CK(cudaStreamCreateWithFlags(&sd[d].c, cudaStreamNonBlocking));
		CK(cudaEventCreate(&sd[d].ek));
		CK(cudaEventCreate(&sd[d].eb));
		CK(cudaEventCreate(&sd[d].ec));
		CK(cudaEventCreate(&sd[d].e1));
	}
	for (int d = 0; d < 2; d++) {
		CK(cudaSetDevice(1 - d));
		CK(cudaMalloc(&sd[d].dst, bytes));
	}
	CK(cudaSetDevice(0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
	int *go;
	CK(cudaHostAlloc(&go, sizeof *go, cudaHostAllocMapped | cudaHostAllocPortable));
	const long long spin = 20LL * clk_khz / 1000; // ~20 us at the top clock
	printf("# tail_probe: %.0f MiB %s, after a %d-CTA spin kernel on another stream; median of "
	       "%d runs\n",
	       mib, ways == 2 ? "each way between GPU 0 and GPU 1 at once" : "from GPU 0 to GPU 1",
	       sms, iters);
	printf("# ce_pct  kernel_ctas  stream  then_kernel        us   GB/s\n");
	const int pcts[] = {100, 0, 0, 50, 20, 100, 0};
	const int ctas[] = {0, sms, 2 * sms, sms, sms, 0, sms};
	const int ncase = sizeof pcts / sizeof pcts[0];
	for (int c = 0; c < 2 * ncase; c++) {
		const int then = c >= ncase, k = c % ncase, same = k >= ncase - 2;
		const size_t ce = (bytes * pcts[k] / 100) & ~(size_t)15, rest = bytes - ce;
		std::vector<double> t;
		for (int it = -3; it < iters; it++) {
			std::this_thread::sleep_for(std::chrono::microseconds(1000));
			*(volatile int *)go = 0;
			for (int d = 0; d < ways; d++) {
				side &s = sd[d];
				CK(cudaSetDevice(d));
				gate_kernel<<<1, 1, 0, s.a>>>(go);
				spin_kernel<<<sms, 128, 0, s.a>>>(spin);
				CK(cudaGetLastError());
				CK(cudaEventRecord(s.ek, s.a));
				// the copy on stream b, the kernel on b too or, beside a copy, on c
				cudaStream_t sb = same ? s.a : s.b, sc = same || !ce ? sb : s.c;
				CK(cudaStreamWaitEvent(sb, s.ek, 0));
				CK(cudaStreamWaitEvent(sc, s.ek, 0));
				if (ce)
					CK(cudaMemcpyAsync(s.dst, s.src, ce, cudaMemcpyDefault,
					                   sb));
				if (rest) {
					push_kernel<<<ctas[k], 512, 0, sc>>>(
					    (uint4 *)((char *)s.dst + ce),
					    (const uint4 *)((const char *)s.src + ce), rest / 16);
					CK(cudaGetLastError());
				}
				CK(cudaEventRecord(s.eb, sb));
				CK(cudaEventRecord(s.ec, sc));
				CK(cudaStreamWaitEvent(s.a, s.eb, 0));
				CK(cudaStreamWaitEvent(s.a, s.ec, 0));
				if (then)
					empty_kernel<<<1, 1, 0, s.a>>>();
				CK(cudaEventRecord(s.e1, s.a));
			}
			*(volatile int *)go = 1;
			double worst = 0;
			for (int d = 0; d < ways; d++) {
				float ms;
				CK(cudaSetDevice(d));
				CK(cudaEventSynchronize(sd[d].e1));
				CK(cudaEventElapsedTime(&ms, sd[d].ek, sd[d].e1));
				worst = std::max(worst, ms * 1e3);
			}
			if (it >= 0)
				t.push_back(worst);
		}
		std::sort(t.begin(), t.end());
		const double us = t[t.size() / 2];
		printf("  %6d  %11d  %6s  %11s %9.1f %6.0f\n", pcts[k], rest ? ctas[k] : 0,
		       same ? "same" : "other", then ? "yes" : "no", us, bytes / (us * 1e3));
	}
	return 0;
}
