// wait_probe.cu - how soon does a stream waiting on the GPU for a value
// (cuStreamWaitValue32, GEQ: what device_signal's comm streams do for each
// band) go on once a running kernel writes that value? Stream a runs a kernel
// on every SM that spins `pend` us, stores the flag (with the global timer),
// and spins 300 us more, as a GEMM goes on computing after a band is done.
// Streams b (1 or 4 of them, as a program has 1-4 comm streams), queued
// right after it (as in the program: the GEMM first, then the waits; queued
// the other way round, a wait can hold the kernel behind it in a shared
// hardware queue, and the first version of this probe hung so), wait for the
// flag and then run a one-thread kernel that stamps the global timer. The delay is the latest stamp
// minus the flag's; pend is how long the waits were pending before the flag came. Median, p90 and
// max of `iters` runs, each after 1 ms idle. Usage: wait_probe [iters]
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <cuda.h>

#include "probe_check.h"

__device__ __forceinline__ unsigned long long now_ns()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// Every CTA spins pend_ns; CTA 0 then stores the flag, and all spin after_ns more.
__global__ void producer(unsigned *flag, unsigned v, unsigned long long pend_ns,
                         unsigned long long after_ns, unsigned long long *t_flag)
{
	const unsigned long long t0 = now_ns();
	while (now_ns() - t0 < pend_ns)
		;
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		__threadfence_system();
		*t_flag = now_ns();
		atomicExch(flag, v);
		__threadfence_system();
	}
	const unsigned long long t1 = now_ns();
	while (now_ns() - t1 < after_ns)
		;
}

__global__ void stamp(unsigned long long *t)
{
	*t = now_ns();
}

typedef CUresult (*wait_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 50;
	int sms = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cudaSetDevice(0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	void *f = NULL;
	cudaDriverEntryPointQueryResult q;
	CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &f, 12000, cudaEnableDefault,
	                                    &q));
	if (q != cudaDriverEntryPointSuccess || !f) {
		fprintf(stderr, "wait_probe: cuStreamWaitValue32 not available\n");
		return 1;
	}
	wait_fn wait = (wait_fn)f;
	unsigned *flag;
	unsigned long long *t; // [0] the flag's stamp, [1 + i] waiter i's
	CK(cudaMalloc(&flag, sizeof *flag));
	CK(cudaMemset(flag, 0, sizeof *flag));
	CK(cudaMallocHost(&t, 5 * sizeof *t));
	cudaStream_t a, b[4];
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	for (int i = 0; i < 4; i++)
		CK(cudaStreamCreateWithFlags(&b[i], cudaStreamNonBlocking));
	printf("# wait_probe: cuStreamWaitValue32 on stream b, the flag stored by a %d-CTA kernel "
	       "on stream a "
	       "after pend us; delay from the store to a kernel after the wait, us, %d runs each\n",
	       sms, iters);
	printf("# waiters  pend_us   median      p90      max\n");
	const int pends[] = {0, 5, 20, 50, 100, 200, 400};
	unsigned v = 0;
	for (int c = 0; c < 14; c++) {
		const int nb = c < 7 ? 1 : 4, pend = pends[c % 7];
		std::vector<double> d;
		for (int it = -3; it < iters; it++) {
			std::this_thread::sleep_for(std::chrono::microseconds(1000));
			v++;
			producer<<<sms, 64, 0, a>>>(flag, v, pend * 1000ULL, 300000ULL, t);
			for (int i = 0; i < nb; i++) {
				if (wait((CUstream)b[i], (CUdeviceptr)(uintptr_t)flag, v,
				         CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
					fprintf(stderr, "wait_probe: cuStreamWaitValue32 failed\n");
					return 1;
				}
				stamp<<<1, 1, 0, b[i]>>>(t + 1 + i);
			}
			CK(cudaGetLastError());
			CK(cudaDeviceSynchronize());
			unsigned long long last = 0;
			for (int i = 0; i < nb; i++)
				last = std::max(last, t[1 + i]);
			if (it >= 0)
				d.push_back(((long long)last - (long long)t[0]) / 1e3);
		}
		std::sort(d.begin(), d.end());
		printf("  %7d  %7d %8.1f %8.1f %8.1f\n", nb, pend, d[d.size() / 2],
		       d[d.size() * 9 / 10], d.back());
	}
	return 0;
}
