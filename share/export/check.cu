// check.cu - the examples' check of an exported program (check.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cuco/program.h>

#include "check.h"
#include "shapes.h"

extern "C" {
int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks, uint64_t seed,
			   struct cuco_tensor *tensors, int ntensors, cudaStream_t stream);
int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks, uint64_t seed,
			    struct cuco_tensor *tensors, int ntensors, cudaStream_t stream);
}

// The runtime's tensors as the workload ABI's array (windows are not needed here).
static int tensors_of(struct cuco_export *x, struct cuco_tensor *t)
{
	int n = cuco_export_ntensors(x);
	memset(t, 0, sizeof(*t) * CUCO_MAX_TENSORS);
	for (int i = 0; i < n; i++) {
		const char *name;
		t[i].ptr = cuco_export_tensor(x, i, &name, &t[i].role, &t[i].dtype, &t[i].bytes);
		snprintf(t[i].name, sizeof(t[i].name), "%s", name);
		t[i].elems = t[i].bytes / cuco_dtype_size(t[i].dtype);
	}
	return n;
}

extern "C" int cuco_check_generate(struct cuco_export *x, uint64_t seed, cudaStream_t stream,
				   char *err, size_t errlen)
{
	struct cuco_tensor t[CUCO_MAX_TENSORS];
	int nranks, rank = cuco_export_rank(x, &nranks), n = tensors_of(x, t);

	if (cuco_workload_generate(cuco_export_shape(x), rank, nranks, seed, t, n, stream)) {
		snprintf(err, errlen, "the workload's generator failed");
		return 1;
	}
	return 0;
}

extern "C" int cuco_check_poison(struct cuco_export *x, cudaStream_t stream)
{
	struct cuco_tensor t[CUCO_MAX_TENSORS];
	int n = tensors_of(x, t);
	for (int i = 0; i < n; i++)
		if (t[i].role == CUCO_ROLE_OUTPUT && cudaMemsetAsync(t[i].ptr, 0xff, t[i].bytes, stream))
			return 1;
	return 0;
}

static double value(const void *p, int dtype, size_t i)
{
	switch (dtype) {
	case CUCO_DTYPE_BF16:
		return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
	case CUCO_DTYPE_F16:
		return __half2float(((const __half *)p)[i]);
	case CUCO_DTYPE_F32:
		return ((const float *)p)[i];
	case CUCO_DTYPE_I32:
		return ((const int32_t *)p)[i];
	case CUCO_DTYPE_I64:
		return (double)((const int64_t *)p)[i];
	default:
		return ((const uint8_t *)p)[i];
	}
}

extern "C" int cuco_check_sums(struct cuco_export *x, uint64_t seed, cudaStream_t stream,
			       double sums[3], char *err, size_t errlen)
{
	struct cuco_tensor t[CUCO_MAX_TENSORS], ref[CUCO_MAX_TENSORS];
	int nranks, rank = cuco_export_rank(x, &nranks), n = tensors_of(x, t), rc = 1;
	void *host_out = NULL, *host_ref = NULL;

	memcpy(ref, t, sizeof(ref));
	for (int i = 0; i < n; i++)
		if (t[i].role == CUCO_ROLE_OUTPUT)
			ref[i].ptr = NULL;
	for (int i = 0; i < n; i++)
		if (t[i].role == CUCO_ROLE_OUTPUT) {
			if (cudaMalloc(&ref[i].ptr, t[i].bytes) != cudaSuccess) {
				snprintf(err, errlen, "cudaMalloc of %zu bytes for the reference", t[i].bytes);
				goto out;
			}
		}
	if (cuco_workload_reference(cuco_export_shape(x), rank, nranks, seed, ref, n, stream) ||
	    cudaStreamSynchronize(stream) != cudaSuccess) {
		snprintf(err, errlen, "the workload's reference failed: %s",
			 cudaGetErrorString(cudaGetLastError()));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (t[i].role != CUCO_ROLE_OUTPUT)
			continue;
		free(host_out);
		free(host_ref);
		host_out = malloc(t[i].bytes);
		host_ref = malloc(t[i].bytes);
		if (!host_out || !host_ref ||
		    cudaMemcpy(host_out, t[i].ptr, t[i].bytes, cudaMemcpyDeviceToHost) != cudaSuccess ||
		    cudaMemcpy(host_ref, ref[i].ptr, t[i].bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
			snprintf(err, errlen, "reading tensor %s back failed", t[i].name);
			goto out;
		}
		for (size_t k = 0; k < t[i].elems; k++) {
			double o = value(host_out, t[i].dtype, k), r = value(host_ref, t[i].dtype, k);
			if (!isfinite(o)) {
				sums[2] += 1;
				continue;
			}
			sums[0] += (o - r) * (o - r);
			sums[1] += r * r;
		}
	}
	rc = 0;
out:
	free(host_out);
	free(host_ref);
	for (int i = 0; i < n; i++)
		if (t[i].role == CUCO_ROLE_OUTPUT && ref[i].ptr)
			cudaFree(ref[i].ptr);
	return rc;
}

extern "C" double cuco_check_tolerance(void) { return CUCO_EXPORT_TOLERANCE; }
