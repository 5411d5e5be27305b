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
#include <cuco_dev/random.cuh>
#include <cuco_dev/reference.cuh>

enum { T_A, T_B, T_C, NT };
enum { STREAM_A = 1, STREAM_B = 2 };

struct dims {
	long long M, N, K, Nr;
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
	if (d->N % nranks) {
		snprintf(err, len, "shape '%s': N=%lld is not divisible by %d ranks", s->name, d->N,
			 nranks);
		return 1;
	}
	d->Nr = d->N / nranks;
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
	set_tensor(&t[T_A], "A", CUCO_ROLE_INPUT, (size_t)(d.M * d.K));
	set_tensor(&t[T_B], "B", CUCO_ROLE_INPUT, (size_t)(d.K * d.Nr));
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
	fill((__nv_bfloat16 *)t[T_A].ptr, t[T_A].elems, seed, STREAM_A, s);
	fill((__nv_bfloat16 *)t[T_B].ptr, t[T_B].elems, seed, STREAM_B * 1000 + (uint64_t)rank, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct dims d;
	char err[256];
	__nv_bfloat16 *Bq = NULL;

	(void)rank;
	if (nt != NT || get_dims(shape, nranks, &d, err, sizeof(err)))
		return 1;
	if (cudaMallocAsync((void **)&Bq, (size_t)(d.K * d.Nr) * 2, s) != cudaSuccess)
		return 1;
	for (int q = 0; q < nranks; q++) {
		dim3 grid((unsigned)((d.Nr + 63) / 64), (unsigned)((d.M + 63) / 64));
		__nv_bfloat16 *Cq = (__nv_bfloat16 *)t[T_C].ptr + (size_t)q * d.M * d.Nr;

		fill(Bq, (size_t)(d.K * d.Nr), seed, STREAM_B * 1000 + (uint64_t)q, s);
		cuco::reference_gemm_bf16<<<grid, 256, 0, s>>>((const __nv_bfloat16 *)t[T_A].ptr, Bq, Cq, d.M,
						    d.Nr, d.K, d.Nr);
	}
	cudaFreeAsync(Bq, s);
	return cudaPeekAtLastError() != cudaSuccess;
}
