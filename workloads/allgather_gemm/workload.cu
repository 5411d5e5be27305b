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
#include <cuco_dev/random.cuh>

#include <cuco_dev/reference.cuh>

enum { T_A, T_B, T_C, NT };
// Random streams: shard r of A uses STREAM_A * 1000 + r, so shards differ
// between ranks; B uses one stream, so every rank holds the same B.
enum { STREAM_A = 1, STREAM_B = 2 };

struct dims {
	long long M, N, K, Mr;
};

static int get_dims(const struct cuco_shape *s, int nranks, struct dims *d, char *err, size_t len)
{
	d->M = cuco_shape_get(s, "M", -1);
	d->N = cuco_shape_get(s, "N", -1);
	d->K = cuco_shape_get(s, "K", -1);
	if (d->M <= 0 || d->N <= 0 || d->K <= 0) {
		snprintf(err, len, "shape '%s' needs positive M, N and K", s->name);
		return 1;
	}
	if (d->M % nranks) {
		snprintf(err, len, "shape '%s': M=%lld is not divisible by %d ranks", s->name, d->M,
			 nranks);
		return 1;
	}
	d->Mr = d->M / nranks;
	return 0;
}

static void set_tensor(struct cuco_tensor *t, const char *name, int role, size_t elems)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->role = role;
	t->dtype = CUCO_DTYPE_BF16;
	t->elems = elems;
	t->bytes = elems * 2;
}

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct dims d;

	(void)rank;
	if (get_dims(shape, nranks, &d, err, errlen))
		return 1;
	set_tensor(&t[T_A], "A", CUCO_ROLE_INPUT, (size_t)(d.Mr * d.K));
	set_tensor(&t[T_B], "B", CUCO_ROLE_INPUT, (size_t)(d.K * d.N));
	set_tensor(&t[T_C], "C", CUCO_ROLE_OUTPUT, (size_t)(d.M * d.N));
	*n = NT;
	return 0;
}

static void fill(__nv_bfloat16 *p, size_t n, uint64_t seed, uint64_t stream, cudaStream_t s)
{
	cuco::fill_uniform_bf16<<<528, 256, 0, s>>>(p, n, seed, stream);
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	(void)shape;
	(void)nranks;
	if (nt != NT)
		return 1;
	fill((__nv_bfloat16 *)t[T_A].ptr, t[T_A].elems, seed, STREAM_A * 1000 + (uint64_t)rank, s);
	fill((__nv_bfloat16 *)t[T_B].ptr, t[T_B].elems, seed, STREAM_B, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct dims d;
	char err[256];
	__nv_bfloat16 *Aall = NULL;
	size_t shard = 0;
	dim3 grid;

	(void)rank;
	if (nt != NT || get_dims(shape, nranks, &d, err, sizeof(err)))
		return 1;
	shard = (size_t)(d.Mr * d.K);
	if (cudaMallocAsync((void **)&Aall, shard * (size_t)nranks * 2, s) != cudaSuccess)
		return 1;
	// Every rank's shard from the seed, as generate() makes it on that rank.
	for (int q = 0; q < nranks; q++)
		fill(Aall + (size_t)q * shard, shard, seed, STREAM_A * 1000 + (uint64_t)q, s);
	grid = dim3((unsigned)((d.N + 63) / 64), (unsigned)((d.M + 63) / 64));
	cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>(Aall, (const __nv_bfloat16 *)t[T_B].ptr,
					       (__nv_bfloat16 *)t[T_C].ptr, d.M, d.N, d.K, d.N);
	cudaFreeAsync(Aall, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
