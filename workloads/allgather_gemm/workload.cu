// workload.cu - allgather_gemm: tensors, inputs and the independent reference.
//
// Sequence-parallel linear layer, the input side of PyTorch async-TP
// (fused_all_gather_matmul) and Flux's AG+GEMM. Rank r holds the row shard
// A_r = rows [r*M/R, (r+1)*M/R) of A[M, K] and the whole B[K, N] (the same on
// every rank); every rank must end with C[M, N] = A * B, row-major (bf16 in,
// fp32 accumulate, bf16 out). The gathered A is deliberately not an output:
// a fused consumer may feed its GEMM straight from the peers' shards and
// never materialise it (docs/workloads.md).
//
// The reference never communicates: it regenerates every rank's shard from
// the seed into one [M, K] buffer and multiplies with a plain fp32 SIMT kernel
// that shares no code with any program's GEMM.
#include <cuda_bf16.h>
#include <stdio.h>

#include <cuco/program.h>

#include <cuco_dev/reference.cuh>
#include <cuco_dev/workload.cuh>

enum { T_A, T_B, T_C, NT };
// Random streams: shard r of A uses STREAM_A * 1000 + r, so shards differ
// between ranks; B uses one stream, so every rank holds the same B.
enum { STREAM_A = 1, STREAM_B = 2 };

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct cuco::gemm_dims d;

	(void)rank;
	if (cuco::gemm_dims_get(shape, nranks, 'M', &d, err, errlen))
		return 1;
	cuco::tensor_bf16(&t[T_A], "A", CUCO_ROLE_INPUT, (size_t)(d.part * d.K));
	cuco::tensor_bf16(&t[T_B], "B", CUCO_ROLE_INPUT, (size_t)(d.K * d.N));
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
	cuco::fill_bf16((__nv_bfloat16 *)t[T_A].ptr, t[T_A].elems, seed, STREAM_A * 1000 + (uint64_t)rank, s);
	cuco::fill_bf16((__nv_bfloat16 *)t[T_B].ptr, t[T_B].elems, seed, STREAM_B, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct cuco::gemm_dims d;
	char err[256];
	__nv_bfloat16 *Aall = NULL;
	size_t shard = 0;
	dim3 grid;

	(void)rank;
	if (nt != NT || cuco::gemm_dims_get(shape, nranks, 'M', &d, err, sizeof(err)))
		return 1;
	shard = (size_t)(d.part * d.K);
	if (cudaMallocAsync((void **)&Aall, shard * (size_t)nranks * 2, s) != cudaSuccess)
		return 1;
	// Every rank's shard from the seed, as generate() makes it on that rank.
	for (int q = 0; q < nranks; q++)
		cuco::fill_bf16(Aall + (size_t)q * shard, shard, seed, STREAM_A * 1000 + (uint64_t)q, s);
	grid = dim3((unsigned)((d.N + 63) / 64), (unsigned)((d.M + 63) / 64));
	cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>(Aall, (const __nv_bfloat16 *)t[T_B].ptr,
					       (__nv_bfloat16 *)t[T_C].ptr, d.M, d.N, d.K, d.N);
	cudaFreeAsync(Aall, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
