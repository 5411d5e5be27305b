/*
 * nvshmem.c - the harness's side of the nvshmem backend: bootstrap NVSHMEM
 * in a program's module through its cuco_program_nvshmem_* hooks (the unique
 * id from rank 0's program, broadcast over the harness's communicator), and
 * allocate and free symmetric-heap memory through them. The harness itself
 * never links NVSHMEM: its device state belongs to the program's module.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "harness.h"

int hx_nvshmem_open(struct hx_nvshmem *n, void *dl, char *err, size_t errlen)
{
	memset(n, 0, sizeof(*n));
	*(void **)&n->uniqueid = dlsym(dl, "cuco_program_nvshmem_uniqueid");
	*(void **)&n->init = dlsym(dl, "cuco_program_nvshmem_init");
	*(void **)&n->malloc_ = dlsym(dl, "cuco_program_nvshmem_malloc");
	*(void **)&n->free_ = dlsym(dl, "cuco_program_nvshmem_free");
	*(void **)&n->fini = dlsym(dl, "cuco_program_nvshmem_fini");
	if (!n->uniqueid || !n->init || !n->malloc_ || !n->free_ || !n->fini) {
		snprintf(err, errlen,
		         "the program asks for NVSHMEM (requirements.nvshmem) but does not export "
		         "the cuco_program_nvshmem_* hooks: include <cuco_dev/nvshmem.cuh>");
		return 1;
	}
	return 0;
}

int hx_nvshmem_init(struct hx_nvshmem *n, ncclComm_t comm, cudaStream_t s, int rank, int nranks,
                    int one_node, size_t heap_bytes, char *err, size_t errlen)
{
	unsigned char uid[CUCO_NVSHMEM_UNIQUEID_BYTES];
	void *d = NULL;
	int rc = 1;
	ncclResult_t nr;

	memset(uid, 0, sizeof(uid));
	if (rank == 0 && n->uniqueid(uid, sizeof(uid), err, errlen))
		return 1;
	/* every rank takes part in the broadcast, rank 0's id failed or not: no one waits alone */
	if (cudaMalloc(&d, sizeof(uid)) != cudaSuccess) {
		snprintf(err, errlen, "cudaMalloc for the NVSHMEM unique id failed");
		return 1;
	}
	if (cudaMemcpy(d, uid, sizeof(uid), cudaMemcpyHostToDevice) != cudaSuccess)
		goto out;
	nr = ncclBroadcast(d, d, sizeof(uid), ncclChar, 0, comm, s);
	if (nr != ncclSuccess) {
		snprintf(err, errlen, "broadcasting the NVSHMEM unique id: %s",
		         ncclGetErrorString(nr));
		goto out;
	}
	if (cudaStreamSynchronize(s) != cudaSuccess ||
	    cudaMemcpy(uid, d, sizeof(uid), cudaMemcpyDeviceToHost) != cudaSuccess) {
		snprintf(err, errlen, "receiving the NVSHMEM unique id failed");
		goto out;
	}
	if (n->init(uid, sizeof(uid), rank, nranks, heap_bytes, one_node, err, errlen))
		goto out;
	n->inited = 1;
	rc = 0;
out:
	cudaFree(d);
	return rc;
}

void *hx_nvshmem_malloc(struct hx_nvshmem *n, size_t bytes)
{
	return n->malloc_(bytes);
}

void hx_nvshmem_free(struct hx_nvshmem *n, void *p)
{
	if (p)
		n->free_(p);
}

void hx_nvshmem_fini(struct hx_nvshmem *n)
{
	if (n->inited)
		n->fini();
	n->inited = 0;
}
