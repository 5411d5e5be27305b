// workload.cu - the workload of tests/gpu/reference.sh, a lifted package in
// miniature: it has no reference of its own (cuco_workload_reference fails),
// so only a reference program (cuco-harness --reference-program) can verify
// anything. Its generator communicates (cuco_workload_attach gives it the
// harness's communicator): every input holds a value all-reduced over the
// ranks. Tensors: x (input, f32), acc (inout, f32, acc += x in place), y
// (f64), q (i8: compared exactly), e (f32, exact when the shape's "exact" is
// 1, with NaN, +Inf and -Inf among its values) and c (f32, its own tolerance
// 1e-3). Shape parameters: n (elements per tensor), exact (0 or 1).
#include <stdio.h>

#include <cuco/program.h>
#include <cuco_dev/random.cuh>

enum { T_X, T_ACC, T_Y, T_Q, T_E, T_C, T_COUNT };

static ncclComm_t g_comm; // from cuco_workload_attach
static float *g_shared;   // device scalar the generator all-reduces

extern "C" int cuco_workload_attach(ncclComm_t comm, int rank, int nranks, int device, char *errbuf,
                                    size_t errlen)
{
	(void)rank;
	(void)nranks;
	(void)device;
	g_comm = comm;
	if (cudaMalloc((void **)&g_shared, sizeof(float)) != cudaSuccess) {
		snprintf(errbuf, errlen, "reftest: cudaMalloc failed");
		return 1;
	}
	return 0;
}

static void tensor(struct cuco_tensor *t, const char *name, int role, int dtype, size_t n)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->role = role;
	t->dtype = dtype;
	t->elems = n;
	t->bytes = n * cuco_dtype_size(dtype);
}

extern "C" int cuco_workload_describe(const struct cuco_shape *s, int rank, int nranks,
                                      struct cuco_tensor *t, int *nt, char *errbuf, size_t errlen)
{
	long long n = cuco_shape_get(s, "n", -1), exact = cuco_shape_get(s, "exact", 0);

	(void)rank;
	(void)nranks;
	if (n < 16 || *nt < T_COUNT) {
		snprintf(errbuf, errlen, "reftest: shape %s needs n >= 16", s->name);
		return 1;
	}
	tensor(&t[T_X], "x", CUCO_ROLE_INPUT, CUCO_DTYPE_F32, (size_t)n);
	tensor(&t[T_ACC], "acc", CUCO_ROLE_INOUT, CUCO_DTYPE_F32, (size_t)n);
	tensor(&t[T_Y], "y", CUCO_ROLE_OUTPUT, CUCO_DTYPE_F64, (size_t)n);
	tensor(&t[T_Q], "q", CUCO_ROLE_OUTPUT, CUCO_DTYPE_I8, (size_t)n);
	tensor(&t[T_E], "e", CUCO_ROLE_OUTPUT, CUCO_DTYPE_F32, (size_t)n);
	t[T_E].compare = exact ? CUCO_COMPARE_EXACT : CUCO_COMPARE_CLOSE;
	tensor(&t[T_C], "c", CUCO_ROLE_OUTPUT, CUCO_DTYPE_F32, (size_t)n);
	t[T_C].tolerance = 1e-3;
	*nt = T_COUNT;
	return 0;
}

__global__ void reftest_set(float *p, float v)
{
	*p = v;
}

__global__ void reftest_fill(float *x, float *acc, size_t n, uint64_t seed, int rank,
                             const float *shared)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		x[i] = cuco::uniform_pm1(seed, 2 * (uint64_t)rank, i) + *shared;
		acc[i] = cuco::uniform_pm1(seed, 2 * (uint64_t)rank + 1, i);
	}
}

extern "C" int cuco_workload_generate(const struct cuco_shape *s, int rank, int nranks,
                                      uint64_t seed, struct cuco_tensor *t, int nt,
                                      cudaStream_t stream)
{
	(void)s;
	(void)nranks;
	if (!g_comm || nt < T_COUNT)
		return 1; /* the harness did not attach the workload */
	/* every rank's share of the offset, summed over the ranks: a collective */
	reftest_set<<<1, 1, 0, stream>>>(g_shared, (float)(seed % 97 + (uint64_t)rank) / 1000.0f);
	if (ncclAllReduce(g_shared, g_shared, 1, ncclFloat32, ncclSum, g_comm, stream) !=
	    ncclSuccess)
		return 1;
	reftest_fill<<<64, 256, 0, stream>>>((float *)t[T_X].ptr, (float *)t[T_ACC].ptr,
	                                     t[T_X].elems, seed, rank, g_shared);
	return cudaPeekAtLastError() != cudaSuccess;
}

/* No reference of its own: the harness must take a reference program's outputs. */
extern "C" int cuco_workload_reference(const struct cuco_shape *s, int rank, int nranks,
                                       uint64_t seed, struct cuco_tensor *t, int nt,
                                       cudaStream_t stream)
{
	(void)s;
	(void)rank;
	(void)nranks;
	(void)seed;
	(void)t;
	(void)nt;
	(void)stream;
	return 1;
}
