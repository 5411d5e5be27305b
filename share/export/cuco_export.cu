// cuco_export.cu - the runtime behind cuco_export.h: what cuco's harness
// does for a program, on the caller's communicator and stream, without
// judging the result.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cuco/program.h>

#include "cuco_export.h"
#include "shapes.h"

extern "C" {
int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req);
int cuco_program_init(struct cuco_ctx *ctx, void **state);
int cuco_program_run(void *state, const struct cuco_tensor *tensors, cudaStream_t stream);
void cuco_program_fini(void *state);
int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
			   struct cuco_tensor *tensors, int *ntensors, char *errbuf, size_t errlen);
}

// The manifest's default shape, for callers that take no shape (the Python example reads it).
extern "C" {
const char *cuco_export_default_shape = CUCO_EXPORT_DEFAULT_SHAPE;
}

struct cuco_export {
	struct cuco_ctx ctx;
	struct cuco_shape shape;
	struct ncclDevComm devcomm;
	int have_devcomm;
	void *state;
	int inited;
	char err[1100]; // "run: " and the program's errbuf
};

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return 1;
}

// A named shape of the manifest, or "P1=v1,P2=v2,..." naming every parameter once.
static int shape_parse(const char *text, struct cuco_shape *s, char *err, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->nparams = CUCO_EXPORT_NPARAMS;
	for (int i = 0; i < CUCO_EXPORT_NPARAMS; i++)
		snprintf(s->param_names[i], CUCO_NAME_MAX, "%s", cuco_export_params[i]);
	for (size_t k = 0; k < sizeof(cuco_export_shape_table) / sizeof(cuco_export_shape_table[0]); k++)
		if (!strcmp(text, cuco_export_shape_table[k].name)) {
			snprintf(s->name, sizeof(s->name), "%s", text);
			for (int i = 0; i < CUCO_EXPORT_NPARAMS; i++)
				s->params[i] = cuco_export_shape_table[k].v[i];
			return 0;
		}
	int seen[CUCO_MAX_PARAMS] = {0};
	const char *p = text;
	while (*p) {
		const char *eq = strchr(p, '=');
		char *end;
		int i;
		if (!eq)
			return fail(err, len, "shape '%s': neither a shape of %s nor P=V,... (%s)", text,
				    CUCO_EXPORT_WORKLOAD, cuco_export_shapes());
		for (i = 0; i < CUCO_EXPORT_NPARAMS; i++)
			if (strlen(cuco_export_params[i]) == (size_t)(eq - p) &&
			    !strncmp(p, cuco_export_params[i], (size_t)(eq - p)))
				break;
		if (i == CUCO_EXPORT_NPARAMS || seen[i])
			return fail(err, len, "shape '%s': '%.*s' is not a parameter of %s, or named twice",
				    text, (int)(eq - p), p, CUCO_EXPORT_WORKLOAD);
		long long v = strtoll(eq + 1, &end, 10);
		if (end == eq + 1 || v <= 0 || (*end && *end != ','))
			return fail(err, len, "shape '%s': %s needs a positive integer", text,
				    cuco_export_params[i]);
		s->params[i] = v;
		seen[i] = 1;
		p = *end ? end + 1 : end;
	}
	for (int i = 0; i < CUCO_EXPORT_NPARAMS; i++)
		if (!seen[i])
			return fail(err, len, "shape '%s': no value for %s", text, cuco_export_params[i]);
	snprintf(s->name, sizeof(s->name), "%.*s", (int)sizeof(s->name) - 1, text);
	return 0;
}

#define NCCL_TRY(call)                                                                             \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess) {                                                           \
			fail(err, errlen, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call,        \
			     ncclGetErrorString(r_), ncclGetLastError(comm));                       \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)
#define CUDA_TRY(call)                                                                             \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fail(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call,             \
			     cudaGetErrorString(e_));                                              \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

extern "C" int cuco_export_init(ncclComm_t comm, const char *shape, struct cuco_export **out,
				char *err, size_t errlen)
{
	struct cuco_export *x = (struct cuco_export *)calloc(1, sizeof(*x));
	struct cuco_requirements req;
	struct cuco_tensor t[CUCO_MAX_TENSORS];
	size_t maxb[CUCO_MAX_TENSORS] = {0}; // each tensor's largest size over ranks
	int rc = 1, nt = 0, dev = 0;

	*out = NULL;
	if (!x)
		return fail(err, errlen, "out of memory");
	if (shape_parse(shape, &x->shape, err, errlen)) {
		free(x);
		return 1;
	}
	x->ctx.abi_version = CUCO_ABI_VERSION;
	x->ctx.comm = comm;
	x->ctx.shape = &x->shape;
	NCCL_TRY(ncclCommUserRank(comm, &x->ctx.rank));
	NCCL_TRY(ncclCommCount(comm, &x->ctx.nranks));
	NCCL_TRY(ncclCommCuDevice(comm, &dev));
	CUDA_TRY(cudaSetDevice(dev));
	x->ctx.device = dev;
	x->ctx.local_rank = dev; // one rank per GPU of a node: the device ordinal
	CUDA_TRY(cudaDeviceGetAttribute(&x->ctx.sm_count, cudaDevAttrMultiProcessorCount, dev));

	// Every rank's layout, so each window gets the largest size over ranks.
	for (int r = 0; r < x->ctx.nranks; r++) {
		int n = 0;
		memset(t, 0, sizeof(t));
		if (cuco_workload_describe(&x->shape, r, x->ctx.nranks, t, &n, err, errlen))
			goto out;
		if (n < 1 || n > CUCO_MAX_TENSORS) {
			fail(err, errlen, "describe: %d tensors", n);
			goto out;
		}
		if (r == 0)
			nt = n;
		for (int i = 0; i < n; i++) {
			if (r == x->ctx.rank) {
				memcpy(x->ctx.tensors[i].name, t[i].name, CUCO_NAME_MAX);
				x->ctx.tensors[i].role = t[i].role;
				x->ctx.tensors[i].dtype = t[i].dtype;
				x->ctx.tensors[i].elems = t[i].elems;
				x->ctx.tensors[i].bytes = t[i].bytes;
			}
			if (t[i].bytes > maxb[i])
				maxb[i] = t[i].bytes;
		}
	}
	for (int i = 0; i < nt; i++) {
		struct cuco_tensor *ti = &x->ctx.tensors[i];
		size_t b = (maxb[i] + 4095) & ~(size_t)4095;
		NCCL_TRY(ncclMemAlloc(&ti->ptr, b));
		x->ctx.ntensors = i + 1;
		NCCL_TRY(ncclCommWindowRegister(comm, ti->ptr, b, &ti->win, NCCL_WIN_COLL_SYMMETRIC));
	}

	memset(&req, 0, sizeof(req));
	if (cuco_program_requirements(&x->ctx, &req)) {
		fail(err, errlen, "requirements: %s", x->ctx.errbuf);
		goto out;
	}
	if (req.gin_context_count > 0) {
		fail(err, errlen, "the program asks for GIN; this runtime builds LSA device communicators only");
		goto out;
	}
	if (req.scratch_bytes) {
		size_t b = (req.scratch_bytes + 4095) & ~(size_t)4095;
		NCCL_TRY(ncclMemAlloc(&x->ctx.scratch, b));
		CUDA_TRY(cudaMemset(x->ctx.scratch, 0, b));
		NCCL_TRY(ncclCommWindowRegister(comm, x->ctx.scratch, b, &x->ctx.scratch_win,
						NCCL_WIN_COLL_SYMMETRIC));
		x->ctx.scratch_bytes = req.scratch_bytes;
	}
	if (req.devcomm || req.lsa_barrier_count) {
		ncclDevCommRequirements r;
		memset(&r, 0, sizeof(r));
		r.lsaBarrierCount = req.lsa_barrier_count;
		r.lsaMultimem = false; // never NVLink multicast
		NCCL_TRY(ncclDevCommCreate(comm, &r, &x->devcomm));
		x->have_devcomm = 1;
		x->ctx.devcomm = &x->devcomm;
	}
	if (cuco_program_init(&x->ctx, &x->state)) {
		fail(err, errlen, "init: %s", x->ctx.errbuf);
		goto out;
	}
	x->inited = 1;
	CUDA_TRY(cudaDeviceSynchronize());
	rc = 0;
out:
	if (rc) {
		cuco_export_fini(x);
		return 1;
	}
	*out = x;
	return 0;
}

extern "C" int cuco_export_ntensors(const struct cuco_export *x) { return x->ctx.ntensors; }

extern "C" void *cuco_export_tensor(struct cuco_export *x, int i, const char **name, int *role,
				    int *dtype, size_t *bytes)
{
	if (i < 0 || i >= x->ctx.ntensors)
		return NULL;
	if (name)
		*name = x->ctx.tensors[i].name;
	if (role)
		*role = x->ctx.tensors[i].role;
	if (dtype)
		*dtype = x->ctx.tensors[i].dtype;
	if (bytes)
		*bytes = x->ctx.tensors[i].bytes;
	return x->ctx.tensors[i].ptr;
}

extern "C" int cuco_export_tensor_index(const struct cuco_export *x, const char *name)
{
	for (int i = 0; i < x->ctx.ntensors; i++)
		if (!strcmp(x->ctx.tensors[i].name, name))
			return i;
	return -1;
}

extern "C" int cuco_export_run(struct cuco_export *x, cudaStream_t stream)
{
	x->ctx.errbuf[0] = '\0';
	if (cuco_program_run(x->state, x->ctx.tensors, stream)) {
		snprintf(x->err, sizeof(x->err), "run: %s", x->ctx.errbuf[0] ? x->ctx.errbuf : "failed");
		return 1;
	}
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		snprintf(x->err, sizeof(x->err), "run: %s", cudaGetErrorString(e));
		return 1;
	}
	x->err[0] = '\0';
	return 0;
}

extern "C" const char *cuco_export_error(const struct cuco_export *x) { return x->err; }

extern "C" void cuco_export_fini(struct cuco_export *x)
{
	if (!x)
		return;
	cudaDeviceSynchronize();
	if (x->inited)
		cuco_program_fini(x->state);
	if (x->have_devcomm)
		ncclDevCommDestroy(x->ctx.comm, &x->devcomm);
	if (x->ctx.scratch) {
		if (x->ctx.scratch_win)
			ncclCommWindowDeregister(x->ctx.comm, x->ctx.scratch_win);
		ncclMemFree(x->ctx.scratch);
	}
	for (int i = 0; i < x->ctx.ntensors; i++) {
		if (x->ctx.tensors[i].win)
			ncclCommWindowDeregister(x->ctx.comm, x->ctx.tensors[i].win);
		if (x->ctx.tensors[i].ptr)
			ncclMemFree(x->ctx.tensors[i].ptr);
	}
	free(x);
}

extern "C" const struct cuco_shape *cuco_export_shape(const struct cuco_export *x) { return &x->shape; }

extern "C" int cuco_export_rank(const struct cuco_export *x, int *nranks)
{
	if (nranks)
		*nranks = x->ctx.nranks;
	return x->ctx.rank;
}

extern "C" const char *cuco_export_shapes(void) { return cuco_export_shapes_text; }
