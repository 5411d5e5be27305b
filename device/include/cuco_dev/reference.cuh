// reference.cuh - a plain fp32 SIMT GEMM for workload references.
//
// Deliberately nothing like any program's GEMM (no tensor cores, no TMA, no
// shared code with gemm.cuh): a bug in the device library's GEMM cannot hide
// in the reference that judges it. 64x64 tiles, 4x4 outputs per thread,
// 256 threads; 10-20 TFLOP/s, enough to check even 16384^3 in about a second.
#ifndef CUCO_DEV_REFERENCE_CUH
#define CUCO_DEV_REFERENCE_CUH

#include <cuda_bf16.h>

namespace cuco
{

// C[M, Nc] (row stride ldc) = A[M, K] * B[K, Nc], fp32 accumulation. grid =
// (ceil(Nc / 64), ceil(M / 64)), 256 threads.
__global__ void __launch_bounds__(256)
    reference_gemm_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, __nv_bfloat16 *C,
                        long long M, long long Nc, long long K, long long ldc)
{
	__shared__ float As[16][64 + 1], Bs[16][64 + 1];
	int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	long long row0 = blockIdx.y * 64LL, col0 = blockIdx.x * 64LL;
	float acc[4][4] = {};

	for (long long k0 = 0; k0 < K; k0 += 16) {
		for (int i = threadIdx.x; i < 16 * 64; i += 256) {
			int kk = i % 16, rr = i / 16;
			long long r = row0 + rr, k = k0 + kk;
			As[kk][rr] = (r < M && k < K) ? __bfloat162float(A[r * K + k]) : 0.f;
			int cc = i % 64, kb = i / 64;
			long long c = col0 + cc, kr = k0 + kb;
			Bs[kb][cc] = (c < Nc && kr < K) ? __bfloat162float(B[kr * Nc + c]) : 0.f;
		}
		__syncthreads();
		for (int kk = 0; kk < 16; kk++)
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += As[kk][ty * 4 + i] * Bs[kk][tx * 4 + j];
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			long long r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
			if (r < M && c < Nc)
				C[r * ldc + c] = __float2bfloat16(acc[i][j]);
		}
}

} // namespace cuco

#endif
