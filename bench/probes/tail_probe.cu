// tail_probe.cu - how fast can one chunk reach the other GPU once compute has
// ended? GPU 0 sends `mib` MiB to GPU 1 (peer access, NVLink) with nothing
// else running: by the copy engine (cudaMemcpyAsync), by a store kernel on
// every SM (16-byte loads here, stores there: what an LSA push kernel does), or
// by both at once, the copy engine taking the first `ce_pct` percent and the
// kernel the rest on another stream; then the same with an empty one-thread
// kernel queued after the copy (what the exit barrier kernel is to the last
// chunk), timed to that kernel's end: how long after a copy the next kernel
// on its stream starts. Median of `iters` runs, each after 1 ms idle, events
// around each; GB/s = bytes / time.
// Usage: tail_probe [mib] [iters]
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "probe_check.h"

__global__ void empty_kernel() {}

__global__ void push_kernel(uint4 *dst, const uint4 *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

int main(int argc, char **argv)
{
	double mib = argc > 1 ? atof(argv[1]) : 8;
	int iters = argc > 2 ? atoi(argv[2]) : 50;
	int sms = 0;
	if (!probe_have_peer_pair("tail_probe"))
		return 0;
	const size_t bytes = (size_t)(mib * 1048576.0) & ~(size_t)15;
	void *far, *near;
	CK(cudaSetDevice(1));
	CK(cudaMalloc(&far, bytes));
	CK(cudaSetDevice(0));
	CK(cudaDeviceEnablePeerAccess(1, 0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&near, bytes));
	CK(cudaMemset(near, 3, bytes));
	cudaStream_t a, b;
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	cudaEvent_t e0, e1, eb;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaEventCreate(&eb));
	printf("# tail_probe: %.0f MiB from GPU 0 to GPU 1, nothing else running; median of %d runs\n", mib, iters);
	printf("# ce_pct  kernel_ctas  then_kernel        us   GB/s\n");
	const int pcts[] = {100, 0, 0, 50, 40, 30, 20};
	const int ctas[] = {0, sms, 2 * sms, sms, sms, sms, sms};
	for (int c = 0; c < 14; c++) {
		const int then = c >= 7, k = c % 7;
		const size_t ce = (bytes * pcts[k] / 100) & ~(size_t)15, rest = bytes - ce;
		std::vector<double> t;
		for (int it = -3; it < iters; it++) {
			std::this_thread::sleep_for(std::chrono::microseconds(1000));
			CK(cudaEventRecord(e0, a));
			CK(cudaStreamWaitEvent(b, e0, 0));
			if (ce)
				CK(cudaMemcpyAsync(far, near, ce, cudaMemcpyDefault, a));
			if (rest) {
				push_kernel<<<ctas[k], 512, 0, b>>>((uint4 *)((char *)far + ce),
								   (const uint4 *)((const char *)near + ce), rest / 16);
				CK(cudaGetLastError());
			}
			CK(cudaEventRecord(eb, b));
			CK(cudaStreamWaitEvent(a, eb, 0));
			if (then)
				empty_kernel<<<1, 1, 0, a>>>();
			CK(cudaEventRecord(e1, a));
			CK(cudaEventSynchronize(e1));
			float ms;
			CK(cudaEventElapsedTime(&ms, e0, e1));
			if (it >= 0)
				t.push_back(ms * 1e3);
		}
		std::sort(t.begin(), t.end());
		const double us = t[t.size() / 2];
		printf("  %6d  %11d  %11s %9.1f %6.0f\n", pcts[k], rest ? ctas[k] : 0, then ? "yes" : "no", us,
		       bytes / (us * 1e3));
	}
	return 0;
}
