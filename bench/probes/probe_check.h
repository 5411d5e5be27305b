// probe_check.h - the standalone probes' error checks: a failed CUDA or
// cuBLAS call prints where and why, and the probe exits 1.
#ifndef CUCO_PROBE_CHECK_H
#define CUCO_PROBE_CHECK_H

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x)                                                              \
	do {                                                               \
		cudaError_t e_ = (x);                                      \
		if (e_ != cudaSuccess) {                                   \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, \
			        cudaGetErrorString(e_));                   \
			exit(1);                                           \
		}                                                          \
	} while (0)
#define CB(x)                                                                               \
	do {                                                                                \
		cublasStatus_t s_ = (x);                                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                          \
			fprintf(stderr, "%s:%d: cublas %d\n", __FILE__, __LINE__, (int)s_); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

/* GPUs 0 and 1 exist and 0 can reach 1's memory; otherwise says why (as the
 * probe `name`) and returns 0, for the probe to exit quietly. */
static inline int probe_have_peer_pair(const char *name)
{
	int ndev = 0, can = 0;
	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2) {
		printf("# %s: needs 2 GPUs\n", name);
		return 0;
	}
	CK(cudaDeviceCanAccessPeer(&can, 0, 1));
	if (!can)
		printf("# %s: GPU 1 is not a peer of GPU 0\n", name);
	return can;
}

#endif
