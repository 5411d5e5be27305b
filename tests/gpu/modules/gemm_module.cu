/*
 * gemm_module.cu - a shared object that runs one GEMM through the device
 * library (cuco::gemm_bf16_run) and checks it against a plain fp32 kernel.
 * test_gemm_modules loads two copies of it into one process, the way the
 * harness loads programs, each with its own copy of the GEMM kernel.
 */
#include <cuco_dev/gemm.cuh>

#include <stdio.h>

static __global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed * 40503u;
		h ^= h >> 13;
		p[i] = __float2bfloat16((float)(h % 17) / 8.0f - 1.0f);
	}
}

static __global__ void reference(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *R, int M,
                                 int N, int K)
{
	int m = blockIdx.y, n = blockIdx.x * blockDim.x + threadIdx.x;
	if (n >= N)
		return;
	float s = 0;
	for (int k = 0; k < K; k++)
		s +=
		    __bfloat162float(A[(size_t)m * K + k]) * __bfloat162float(B[(size_t)k * N + n]);
	R[(size_t)m * N + n] = s;
}

static __global__ void max_diff(const __nv_bfloat16 *C, const float *R, size_t n, float *out)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float d = fabsf(__bfloat162float(C[i]) - R[i]);
		if (!(d <= 1e30f))
			d = 1e30f; /* NaN or never written */
		atomicMax((int *)out, __float_as_int(d));
	}
}

/*
 * One M x N x K GEMM (the plan's tile rules apply) on the current device; 0 and
 * the largest |C - reference| in *err, or the CUDA error, named in msg.
 */
extern "C" int cuco_module_gemm(int M, int N, int K, float *err, char *msg, size_t msg_size)
{
	__nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr;
	float *R = nullptr, *D = nullptr;
	const char *step = "cudaMalloc";
	cudaError_t e;
	cuco::gemm_bf16_plan plan;

	if ((e = cudaMalloc(&A, (size_t)M * K * 2)) || (e = cudaMalloc(&B, (size_t)K * N * 2)) ||
	    (e = cudaMalloc(&C, (size_t)M * N * 2)) || (e = cudaMalloc(&R, (size_t)M * N * 4)) ||
	    (e = cudaMalloc(&D, 4)))
		goto out;
	step = "fill";
	fill<<<64, 256>>>(A, (size_t)M * K, 1);
	fill<<<64, 256>>>(B, (size_t)K * N, 2);
	if ((e = cudaMemset(C, 0xff, (size_t)M * N * 2)) || (e = cudaMemset(D, 0, 4)) ||
	    (e = cudaGetLastError()))
		goto out;
	step = "gemm_bf16_plan_init";
	{
		cuco::gemm_bf16_args a{A, B, C, M, N, K, K, N, N};
		if ((e = cuco::gemm_bf16_plan_init(&plan, a, 0)))
			goto out;
	}
	step = "gemm_bf16_run";
	if ((e = cuco::gemm_bf16_run(&plan, 0)))
		goto out;
	step = "reference";
	reference<<<dim3((N + 127) / 128, M), 128>>>(A, B, R, M, N, K);
	max_diff<<<64, 256>>>(C, R, (size_t)M * N, D);
	if ((e = cudaGetLastError()) || (e = cudaDeviceSynchronize()) ||
	    (e = cudaMemcpy(err, D, 4, cudaMemcpyDeviceToHost)))
		goto out;
out:
	if (e)
		snprintf(msg, msg_size, "%s: %s", step, cudaGetErrorString(e));
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaFree(R);
	cudaFree(D);
	return (int)e;
}
