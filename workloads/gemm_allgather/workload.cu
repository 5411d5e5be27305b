// workload.cu - gemm_allgather: tensors, inputs and the independent reference.
//
// Column-parallel linear layer. Every rank holds the same A[M,K] and its own
// column block B_r[K, N/R]; it computes C_r = A * B_r (bf16 in, fp32
// accumulate, bf16 out) and all ranks all-gather the blocks, so every rank
// ends with C laid out as ncclAllGather leaves it: R blocks of [M, N/R],
// row-major, block r first at offset r*M*(N/R).
//
// The reference never communicates: it regenerates every rank's B_q from the
// seed and multiplies with a plain fp32 SIMT kernel that shares no code with
// any program's GEMM.
#include <cuda_bf16.h>
#include <stdio.h>

#include <cuco/program.h>
#include <cuco_dev/reference.cuh>
#include <cuco_dev/workload.cuh>

enum { T_A, T_B, T_C, NT };
enum { STREAM_A = 1, STREAM_B = 2 };

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct cuco::gemm_dims d;

	(void)rank;
	if (cuco::gemm_dims_get(shape, nranks, 'N', &d, err, errlen))
		return 1;
	cuco::tensor_bf16(&t[T_A], "A", CUCO_ROLE_INPUT, (size_t)(d.M * d.K));
	cuco::tensor_bf16(&t[T_B], "B", CUCO_ROLE_INPUT, (size_t)(d.K * d.part));
	cuco::tensor_bf16(&t[T_C], "C", CUCO_ROLE_OUTPUT, (size_t)(d.M * d.N));
	*n = NT;
	return 0;
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	(void)shape;
	(void)nranks;
	if (nt != NT)
		return 1;
	cuco::fill_bf16((__nv_bfloat16 *)t[T_A].ptr, t[T_A].elems, seed, STREAM_A, s);
	cuco::fill_bf16((__nv_bfloat16 *)t[T_B].ptr, t[T_B].elems, seed, STREAM_B * 1000 + (uint64_t)rank, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct cuco::gemm_dims d;
	char err[256];
	__nv_bfloat16 *Bq = NULL;

	(void)rank;
	if (nt != NT || cuco::gemm_dims_get(shape, nranks, 'N', &d, err, sizeof(err)))
		return 1;
	if (cudaMallocAsync((void **)&Bq, (size_t)(d.K * d.part) * 2, s) != cudaSuccess)
		return 1;
	for (int q = 0; q < nranks; q++) {
		dim3 grid((unsigned)((d.part + 63) / 64), (unsigned)((d.M + 63) / 64));
		__nv_bfloat16 *Cq = (__nv_bfloat16 *)t[T_C].ptr + (size_t)q * d.M * d.part;

		cuco::fill_bf16(Bq, (size_t)(d.K * d.part), seed, STREAM_B * 1000 + (uint64_t)q, s);
		cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>((const __nv_bfloat16 *)t[T_A].ptr, Bq, Cq, d.M,
						    d.part, d.K, d.part);
	}
	cudaFreeAsync(Bq, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
