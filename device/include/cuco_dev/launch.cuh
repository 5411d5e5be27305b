/*
 * launch.cuh - host-side helpers for cuco programs: error-check macros that
 * fill ctx->errbuf, locating a pointer inside the symmetric windows, and the
 * default launch shape of communication kernels.
 *
 * Header-only C++ (compiled by nvcc inside a program's .cu). Everything is
 * `static inline`. The macros `return 1` from the calling function, which is
 * what the cuco_program_* entry points return on failure; use the *_GOTO forms
 * in functions that clean up through one exit label.
 */
#ifndef CUCO_DEV_LAUNCH_CUH
#define CUCO_DEV_LAUNCH_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cuco/program.h>

/* Global and in namespace cuco, so both spellings work. */
constexpr int CUCO_COMM_CTAS_DEFAULT = 32;     /* CTAs of a comm kernel = LSA barriers to ask for */
constexpr int CUCO_COMM_THREADS_DEFAULT = 512; /* threads per comm CTA */

namespace cuco
{

using ::CUCO_COMM_CTAS_DEFAULT;
using ::CUCO_COMM_THREADS_DEFAULT;

/*
 * errbuf of a const or non-const ctx. The harness owns ctx and reads errbuf
 * only after a program function returned nonzero, so writing it through a
 * const pointer (requirements() gets one) is deliberate and safe.
 */
static inline char *ctx_errbuf(const cuco_ctx *ctx)
{
	return const_cast<char *>(ctx->errbuf);
}

} /* namespace cuco */

/* Write "file:line: what: why" into (ctx)->errbuf. */
#define CUCO_ERRF(ctx, ...) snprintf(cuco::ctx_errbuf(ctx), sizeof((ctx)->errbuf), __VA_ARGS__)

/* On a CUDA error: message "file:line: call: cudaGetErrorString" in
 * ctx->errbuf, clear the (non-sticky) error, return 1. */
#define CUCO_CUDA_TRY(call, ctx)                                                   \
	do {                                                                       \
		cudaError_t cuco_err_ = (call);                                    \
		if (cuco_err_ != cudaSuccess) {                                    \
			(void)cudaGetLastError();                                  \
			CUCO_ERRF(ctx, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
			          cudaGetErrorString(cuco_err_));                  \
			return 1;                                                  \
		}                                                                  \
	} while (0)

/* On an NCCL error: message "file:line: call: ncclGetErrorString (last error)"
 * in ctx->errbuf, return 1. */
#define CUCO_NCCL_TRY(call, ctx)                                                          \
	do {                                                                              \
		ncclResult_t cuco_res_ = (call);                                          \
		if (cuco_res_ != ncclSuccess) {                                           \
			CUCO_ERRF(ctx, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,   \
			          ncclGetErrorString(cuco_res_), ncclGetLastError(NULL)); \
			return 1;                                                         \
		}                                                                         \
	} while (0)

/* The same, but set rc = 1 and goto label instead of returning. */
#define CUCO_CUDA_TRY_GOTO(call, ctx, rc, label)                                   \
	do {                                                                       \
		cudaError_t cuco_err_ = (call);                                    \
		if (cuco_err_ != cudaSuccess) {                                    \
			(void)cudaGetLastError();                                  \
			CUCO_ERRF(ctx, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
			          cudaGetErrorString(cuco_err_));                  \
			(rc) = 1;                                                  \
			goto label;                                                \
		}                                                                  \
	} while (0)
#define CUCO_NCCL_TRY_GOTO(call, ctx, rc, label)                                          \
	do {                                                                              \
		ncclResult_t cuco_res_ = (call);                                          \
		if (cuco_res_ != ncclSuccess) {                                           \
			CUCO_ERRF(ctx, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,   \
			          ncclGetErrorString(cuco_res_), ncclGetLastError(NULL)); \
			(rc) = 1;                                                         \
			goto label;                                                       \
		}                                                                         \
	} while (0)

/* After a <<<>>> launch: check the launch itself (not the kernel's run). */
#define CUCO_LAUNCH_TRY(ctx) CUCO_CUDA_TRY(cudaGetLastError(), ctx)

namespace cuco
{

/*
 * Find the symmetric window that holds [ptr, ptr + bytes): searched are
 * tensors[0..ctx->ntensors) (the tensor set run() was given; NULL means
 * ctx->tensors) and then ctx->scratch (window ctx->scratch_win, offset 0).
 * On success sets *win and *offset (the same offset is valid on every rank's
 * copy of the window) and returns 0. Otherwise returns 1 with a message in
 * ctx->errbuf (through ctx_errbuf; see there). bytes may be 0.
 */
static inline int window_find(const cuco_ctx *ctx, const cuco_tensor *tensors, const void *ptr,
                              size_t bytes, ncclWindow_t *win, size_t *offset)
{
	uintptr_t p = (uintptr_t)ptr;
	if (tensors == nullptr)
		tensors = ctx->tensors;
	for (int i = 0; i < ctx->ntensors; i++) {
		const cuco_tensor *t = &tensors[i];
		uintptr_t b = (uintptr_t)t->ptr;
		if (t->ptr == nullptr || p < b || p - b > t->bytes || bytes > t->bytes - (p - b))
			continue;
		*win = t->win;
		*offset = t->win_offset + (size_t)(p - b);
		return 0;
	}
	if (ctx->scratch != nullptr) {
		uintptr_t b = (uintptr_t)ctx->scratch;
		if (p >= b && p - b <= ctx->scratch_bytes &&
		    bytes <= ctx->scratch_bytes - (p - b)) {
			*win = ctx->scratch_win;
			*offset = (size_t)(p - b);
			return 0;
		}
	}
	CUCO_ERRF(ctx,
	          "window_find: [%p, +%zu) is not inside any tensor of this set or the scratch "
	          "buffer; only harness-allocated tensors and ctx->scratch are in symmetric "
	          "windows - ask for scratch_bytes in cuco_program_requirements",
	          ptr, bytes);
	return 1;
}

/* Window and offset of tensor t as a whole (no search needed). */
static inline void window_of(const cuco_tensor *t, ncclWindow_t *win, size_t *offset)
{
	*win = t->win;
	*offset = t->win_offset;
}

/* Ask for a devcomm with `ctas` LSA barriers (one per CTA of the widest comm
 * kernel); keeps a larger count already requested. */
static inline void require_lsa(cuco_requirements *req, int ctas)
{
	req->devcomm = 1;
	if (req->lsa_barrier_count < ctas)
		req->lsa_barrier_count = ctas;
}

} /* namespace cuco */

#endif
