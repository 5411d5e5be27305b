// workload.cu - @NAME@: tensors, inputs and the independent reference.
//
// @DESCRIPTION@
//
// The reference never communicates and shares no code with the programs: it
// regenerates any rank's X from the seed (cuco::uniform_pm1 is a pure
// function of seed, stream and index) and computes every element with one
// thread per row in double precision. When you replace compute.cuh's kernel,
// replace ref_row below with the same mathematics, written independently.
#include <math.h>
#include <stdio.h>

#include <cuco/program.h>
#include <cuco_dev/random.cuh>

enum { T_X, T_W, T_Y, T_Z, T_COUNT };
enum { STREAM_W = 1, STREAM_X = 100 }; // X of rank q comes from stream STREAM_X + q

static const char *const params[] = {@PARAMS_LIST@};

struct dims {
	long long rows, width, xrows, zrows;
};

static int dims_get(const struct cuco_shape *s, int nranks, struct dims *d, char *err, size_t errlen)
{
	const int n = (int)(sizeof(params) / sizeof(params[0]));

	d->rows = 1;
	for (int i = 0; i < n; i++) {
		long long v = cuco_shape_get(s, params[i], -1);
		if (v <= 0) {
			snprintf(err, errlen, "shape '%s' needs a positive %s", s->name, params[i]);
			return 1;
		}
		if (i + 1 < n)
			d->rows *= v;
		else
			d->width = v;
	}
	if (nranks < 1) {
		snprintf(err, errlen, "%d ranks", nranks);
		return 1;
	}
//@if allgather reducescatter alltoall
	if (d->rows % nranks) {
		snprintf(err, errlen, "shape '%s': %lld rows do not divide among %d ranks", s->name,
			 d->rows, nranks);
		return 1;
	}
//@endif
//@if allreduce sendrecv alltoall
	d->xrows = d->rows;
	d->zrows = d->rows;
//@endif
//@if allgather
	d->xrows = d->rows / nranks;
	d->zrows = d->rows;
//@endif
//@if reducescatter
	d->xrows = d->rows;
	d->zrows = d->rows / nranks;
//@endif
	return 0;
}

static void describe(struct cuco_tensor *t, const char *name, int role, long long elems)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->role = role;
	t->dtype = CUCO_DTYPE_F32;
	t->elems = (size_t)elems;
	t->bytes = (size_t)elems * sizeof(float);
}

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct dims d;

	(void)rank;
	if (dims_get(shape, nranks, &d, err, errlen))
		return 1;
	describe(&t[T_X], "X", CUCO_ROLE_INPUT, d.xrows * d.width);
	describe(&t[T_W], "W", CUCO_ROLE_INPUT, d.width);
	describe(&t[T_Y], "Y", CUCO_ROLE_OUTPUT, d.xrows * d.width);
	describe(&t[T_Z], "Z", CUCO_ROLE_OUTPUT, d.zrows * d.width);
	*n = T_COUNT;
	return 0;
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	(void)shape;
	(void)nranks;
	if (nt != T_COUNT)
		return 1;
	cuco::fill_uniform_f32<<<264, 256, 0, s>>>((float *)t[T_X].ptr, t[T_X].elems, seed,
						   STREAM_X + (uint64_t)rank);
	cuco::fill_uniform_f32<<<264, 256, 0, s>>>((float *)t[T_W].ptr, t[T_W].elems, seed, STREAM_W);
	return cudaPeekAtLastError() != cudaSuccess;
}

// Row `row` of rank q's Y (xrows x width), from the seed alone, into out (scaled by mul, added).
static __device__ void ref_row(uint64_t seed, int q, long long row, long long width, double mul,
			       float *out, int add)
{
	double ss = 0.0;
	for (long long j = 0; j < width; j++) {
		double x = cuco::uniform_pm1(seed, STREAM_X + (uint64_t)q, (uint64_t)(row * width + j));
		ss += x * x;
	}
	double scale = mul / sqrt(ss / (double)width + 1e-5);
	for (long long j = 0; j < width; j++) {
		double x = cuco::uniform_pm1(seed, STREAM_X + (uint64_t)q, (uint64_t)(row * width + j));
		double w = cuco::uniform_pm1(seed, STREAM_W, (uint64_t)j);
		float v = (float)(x * w * scale);
		out[j] = add ? out[j] + v : v;
	}
}

// One thread per row of Y (this rank's) and of Z (what the @COLL@ leaves on this rank).
static __global__ void reference_kernel(uint64_t seed, int rank, int nranks, struct dims d, float *Y,
					float *Z)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;

	if (i < d.xrows)
		ref_row(seed, rank, i, d.width, 1.0, Y + i * d.width, 0);
	if (i >= d.zrows)
		return;
	float *z = Z + i * d.width;
//@if allreduce
	// Z = the sum over ranks of their Y, row for row.
	for (int q = 0; q < nranks; q++)
		ref_row(seed, q, i, d.width, 1.0, z, q > 0);
//@endif
//@if reducescatter
	// Z = this rank's block of rows of the sum over ranks of their Y.
	for (int q = 0; q < nranks; q++)
		ref_row(seed, q, (long long)rank * d.zrows + i, d.width, 1.0, z, q > 0);
//@endif
//@if allgather
	// Z = every rank's Y, block q = rank q's rows.
	ref_row(seed, (int)(i / d.xrows), i % d.xrows, d.width, 1.0, z, 0);
//@endif
//@if alltoall
	// Z's block p = block `rank` of rank p's Y.
	long long blk = d.rows / nranks;
	ref_row(seed, (int)(i / blk), (long long)rank * blk + i % blk, d.width, 1.0, z, 0);
//@endif
//@if sendrecv
	// Z = the Y of the previous rank (rank r sends to r + 1, around the ring).
	ref_row(seed, (rank + nranks - 1) % nranks, i, d.width, 1.0, z, 0);
//@endif
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct dims d;
	char err[256];
	long long n;

	if (nt != T_COUNT || dims_get(shape, nranks, &d, err, sizeof(err)))
		return 1;
	n = d.xrows > d.zrows ? d.xrows : d.zrows;
	reference_kernel<<<(unsigned)((n + 127) / 128), 128, 0, s>>>(seed, rank, nranks, d,
								 (float *)t[T_Y].ptr,
								 (float *)t[T_Z].ptr);
	return cudaPeekAtLastError() != cudaSuccess;
}
