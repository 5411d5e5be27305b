// common.cuh - what @NAME@'s programs share: the shape's dimensions, the
// program state, and one place that fails with a message. The compute itself
// is in compute.cuh (yours to replace); workload.cu never includes either.
//
// Dimensions: rows = the product of every parameter but the last (@ROWS_DOC@),
// width = the last (@WIDTH@). Tensors, in the order workload.cu describes them:
//   X  input  [xrows, width] f32  this rank's input rows
//   W  input  [width]        f32  the same on every rank
//   Y  output [xrows, width] f32  compute(X, W), this rank's rows
//   Z  output [zrows, width] f32  @COLL_DOC@
#ifndef PKG_COMMON_CUH
#define PKG_COMMON_CUH

#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuco/program.h>

#include "compute.cuh"

enum { T_X, T_W, T_Y, T_Z, T_COUNT };

static const char *const pkg_params[] = {@PARAMS_LIST@};

struct pkg_dims {
	long long rows;  // rows of the whole problem
	long long width; // elements per row
	long long xrows; // rows of X and Y on this rank
	long long zrows; // rows of Z on this rank
};

// The dimensions of shape s on nranks ranks: 0, or 1 with a message in err.
static inline int pkg_dims_get(const struct cuco_shape *s, int nranks, struct pkg_dims *d, char *err,
			       size_t errlen)
{
	const int n = (int)(sizeof(pkg_params) / sizeof(pkg_params[0]));

	d->rows = 1;
	for (int i = 0; i < n; i++) {
		long long v = cuco_shape_get(s, pkg_params[i], -1);
		if (v <= 0) {
			snprintf(err, errlen, "shape '%s' needs a positive %s", s->name, pkg_params[i]);
			return 1;
		}
		if (i + 1 < n)
			d->rows *= v;
		else
			d->width = v;
	}
//@if allgather reducescatter alltoall
	if (nranks < 1 || d->rows % nranks) {
		snprintf(err, errlen, "shape '%s': %lld rows do not divide among %d ranks", s->name,
			 d->rows, nranks);
		return 1;
	}
//@endif
//@if allreduce sendrecv
	(void)nranks;
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
//@if alltoall
	d->xrows = d->rows;
	d->zrows = d->rows;
//@endif
	return 0;
}

struct pkg_state {
	struct cuco_ctx *ctx;
	struct pkg_dims d;
};

// Put a message in ctx->errbuf; returns 1 for `return pkg_fail(...)`.
static inline int pkg_fail(struct pkg_state *st, const char *what, const char *why)
{
	snprintf(st->ctx->errbuf, sizeof(st->ctx->errbuf), "%s: %s", what, why);
	return 1;
}

static inline int pkg_init(struct cuco_ctx *ctx, void **out)
{
	struct pkg_state *st = (struct pkg_state *)calloc(1, sizeof(*st));

	if (!st) {
		snprintf(ctx->errbuf, sizeof(ctx->errbuf), "init: out of memory");
		return 1;
	}
	st->ctx = ctx;
	if (pkg_dims_get(ctx->shape, ctx->nranks, &st->d, ctx->errbuf, sizeof(ctx->errbuf))) {
		free(st);
		return 1;
	}
	*out = st;
	return 0;
}

static inline void pkg_fini(void *p) { free(p); }

// compute(X, W) into Y for all of this rank's rows, on s.
static inline int pkg_compute(struct pkg_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	cudaError_t e = compute_rows((const float *)t[T_X].ptr, (const float *)t[T_W].ptr,
				     (float *)t[T_Y].ptr, 0, st->d.xrows, st->d.width, s);
	return e == cudaSuccess ? 0 : pkg_fail(st, "compute_rows", cudaGetErrorString(e));
}

#define PKG_NCCL(st, call)                                                                         \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess)                                                             \
			return pkg_fail((st), #call, ncclGetErrorString(r_));                      \
	} while (0)

// The programs of this package are one line each: PKG_PROGRAM(requirements body, run body).
#define PKG_PROGRAM(RUN)                                                                           \
	extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx,                       \
						 struct cuco_requirements *req)                    \
	{                                                                                          \
		(void)ctx;                                                                         \
		(void)req;                                                                         \
		return 0;                                                                          \
	}                                                                                          \
	extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out) { return pkg_init(ctx, out); } \
	extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)      \
	{                                                                                          \
		struct pkg_state *st = (struct pkg_state *)p;                                      \
		RUN;                                                                               \
	}                                                                                          \
	extern "C" void cuco_program_fini(void *p) { pkg_fini(p); }

#endif
