// compute.cuh - @NAME@'s compute: the kernel you replace with your own.
//
// The entry every program of the package calls, and the one the template
// (template.cu.in) calls once per row chunk:
//
//   compute_rows(X, W, Y, r0, r1, width, stream)
//
// computes rows r0..r1-1 of Y from the same rows of X (each row `width`
// elements, row-major; X and Y point at row 0) and the shared W, on `stream`,
// and touches no other row. Keep that contract and the template can overlap
// your compute with the @COLL@ chunk by chunk. What is here to begin
// with is an RMS norm of each row, scaled by W:
//
//   Y[i][j] = X[i][j] * W[j] / sqrt(mean_j(X[i][j]^2) + 1e-5)
//
// Change workload.cu's reference with it: the harness checks every output
// against the reference, never against this file.
#ifndef PKG_COMPUTE_CUH
#define PKG_COMPUTE_CUH

#include <cuda_runtime.h>

#define PKG_COMPUTE_THREADS 256

static __global__ void __launch_bounds__(PKG_COMPUTE_THREADS)
	pkg_rms_rows_kernel(const float *X, const float *W, float *Y, long long r0, long long width)
{
	__shared__ float part[PKG_COMPUTE_THREADS / 32];
	const long long row = r0 + blockIdx.x;
	const float *x = X + row * width;
	float *y = Y + row * width;
	float ss = 0.0f;

	for (long long j = threadIdx.x; j < width; j += blockDim.x)
		ss += x[j] * x[j];
	for (int o = 16; o > 0; o >>= 1)
		ss += __shfl_xor_sync(0xffffffffu, ss, o);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = ss;
	__syncthreads();
	ss = 0.0f;
	for (int w = 0; w < PKG_COMPUTE_THREADS / 32; w++)
		ss += part[w];
	const float scale = rsqrtf(ss / (float)width + 1e-5f);
	for (long long j = threadIdx.x; j < width; j += blockDim.x)
		y[j] = x[j] * W[j] * scale;
}

static inline cudaError_t compute_rows(const float *X, const float *W, float *Y, long long r0,
				       long long r1, long long width, cudaStream_t stream)
{
	if (r1 <= r0)
		return cudaSuccess;
	pkg_rms_rows_kernel<<<(unsigned)(r1 - r0), PKG_COMPUTE_THREADS, 0, stream>>>(X, W, Y, r0, width);
	return cudaGetLastError();
}

#endif
