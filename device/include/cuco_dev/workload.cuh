// workload.cuh - small helpers for writing a workload's describe / generate /
// reference functions (include/cuco/program.h): GEMM shape parameters,
// tensor descriptions and seeded input fills.
#ifndef CUCO_DEV_WORKLOAD_CUH
#define CUCO_DEV_WORKLOAD_CUH

#include <cuda_bf16.h>
#include <stdio.h>

#include <cuco/program.h>
#include <cuco_dev/random.cuh>

namespace cuco
{

// M, N, K of a GEMM shape and the per-rank part of the dimension split across ranks.
struct gemm_dims {
	long long M, N, K;
	long long part; // split / nranks
};

// Read M, N, K from shape; split names the dimension divided among ranks ('M' or 'N').
// Returns 0, or 1 with a message naming the shape in err.
static inline int gemm_dims_get(const struct cuco_shape *s, int nranks, char split,
                                struct gemm_dims *d, char *err, size_t len)
{
	long long whole;

	d->M = cuco_shape_get(s, "M", -1);
	d->N = cuco_shape_get(s, "N", -1);
	d->K = cuco_shape_get(s, "K", -1);
	if (d->M <= 0 || d->N <= 0 || d->K <= 0) {
		snprintf(err, len, "shape '%s' needs positive M, N and K", s->name);
		return 1;
	}
	if (nranks < 1) {
		snprintf(err, len, "shape '%s': %d ranks; need at least 1", s->name, nranks);
		return 1;
	}
	whole = split == 'M' ? d->M : d->N;
	if (whole % nranks) {
		snprintf(err, len, "shape '%s': %c=%lld is not divisible by %d ranks", s->name,
		         split, whole, nranks);
		return 1;
	}
	d->part = whole / nranks;
	return 0;
}

// Describe a bf16 tensor of elems elements.
static inline void tensor_bf16(struct cuco_tensor *t, const char *name, int role, size_t elems)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->role = role;
	t->dtype = CUCO_DTYPE_BF16;
	t->elems = elems;
	t->bytes = elems * 2;
}

// Fill n bf16 values from (seed, stream) on s: the same values on any rank.
static inline void fill_bf16(__nv_bfloat16 *p, size_t n, uint64_t seed, uint64_t stream,
                             cudaStream_t s)
{
	fill_uniform_bf16<<<528, 256, 0, s>>>(p, n, seed, stream);
}

} // namespace cuco

#endif
