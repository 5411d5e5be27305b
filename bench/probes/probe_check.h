// probe_check.h - the standalone probes' error checks: a failed CUDA or
// cuBLAS call prints where and why, and the probe exits 1.
#ifndef CUCO_PROBE_CHECK_H
#define CUCO_PROBE_CHECK_H

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x)                                                                      \
	do {                                                                       \
		cudaError_t e_ = (x);                                              \
		if (e_ != cudaSuccess) {                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,         \
				cudaGetErrorString(e_));                           \
			exit(1);                                                   \
		}                                                                  \
	} while (0)
#define CB(x)                                                                      \
	do {                                                                       \
		cublasStatus_t s_ = (x);                                           \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                 \
			fprintf(stderr, "%s:%d: cublas %d\n", __FILE__, __LINE__,  \
				(int)s_);                                          \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

#endif
