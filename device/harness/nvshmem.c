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
#include "util/error.h"

int hx_nvshmem_open(struct hx_nvshmem *n, void *dl, const struct cuco_requirements *req, char *err,
                    size_t errlen)
{
	memset(n, 0, sizeof(*n));
	if (req->devcomm || req->lsa_barrier_count || req->gin_context_count) {
		snprintf(err, errlen,
		         "a program may not ask for NVSHMEM and an NCCL device communicator "
		         "together: its tensors live on NVSHMEM's heap, in no NCCL window "
		         "(LSA + NVSHMEM hybrids are not supported)");
		return CUCO_ERR_UNSUPPORTED;
	}
	*(void **)&n->uniqueid = dlsym(dl, "cuco_program_nvshmem_uniqueid");
	*(void **)&n->init = dlsym(dl, "cuco_program_nvshmem_init");
	*(void **)&n->malloc_ = dlsym(dl, "cuco_program_nvshmem_malloc");
	*(void **)&n->free_ = dlsym(dl, "cuco_program_nvshmem_free");
	*(void **)&n->fini = dlsym(dl, "cuco_program_nvshmem_fini");
	if (!n->uniqueid || !n->init || !n->malloc_ || !n->free_ || !n->fini) {
		snprintf(err, errlen,
		         "the program asks for NVSHMEM (requirements.nvshmem) but does not export "
		         "the cuco_program_nvshmem_* hooks: include <cuco_dev/nvshmem.cuh>");
		return CUCO_ERR_RUN;
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

int hx_nvshmem_place(struct hx_nvshmem *n, ncclComm_t comm, cudaStream_t s, int rank, int nranks,
                     int one_node, size_t own_bytes, const size_t *sym_bytes, int ntensors,
                     int nsets, struct cuco_tensor *sets, int stride, struct cuco_tensor *saved,
                     char *err, size_t errlen)
{
	size_t heap = own_bytes;

	for (int k = 0; k < nsets; k++)
		for (int i = 0; i < ntensors; i++)
			heap += (sym_bytes[i] + 4095) & ~(size_t)4095;
	/* NVSHMEM's own allocations (team syncs, collective scratch) come from the same heap */
	heap += heap / 8 + ((size_t)64 << 20);
	if (hx_nvshmem_init(n, comm, s, rank, nranks, one_node, heap, err, errlen))
		return 1;
	for (int k = 0; k < nsets; k++)
		memcpy(saved + (size_t)k * stride, sets + (size_t)k * stride,
		       sizeof(*sets) * (size_t)ntensors);
	for (int k = 0; k < nsets; k++)
		for (int i = 0; i < ntensors; i++) {
			struct cuco_tensor *t = sets + (size_t)k * stride + i;
			size_t b = (sym_bytes[i] + 4095) & ~(size_t)4095;
			void *p = hx_nvshmem_malloc(n, b);
			cudaError_t e = cudaErrorMemoryAllocation;

			if (p)
				e = cudaMemcpy(p, t->ptr, b, cudaMemcpyDeviceToDevice);
			if (e != cudaSuccess) {
				/* same sizes on every rank: every rank stops here */
				snprintf(err, errlen, "%s of %zu bytes for '%s' failed: %s",
				         p ? "copying onto NVSHMEM's heap" : "nvshmem_malloc", b,
				         t->name, cudaGetErrorString(e));
				hx_nvshmem_free(n, p);
				for (int j = k * ntensors + i - 1; j >= 0; j--)
					hx_nvshmem_free(
					    n, sets[(size_t)(j / ntensors) * stride + j % ntensors]
					           .ptr);
				for (int q = 0; q < nsets; q++)
					memcpy(sets + (size_t)q * stride,
					       saved + (size_t)q * stride,
					       sizeof(*sets) * (size_t)ntensors);
				hx_nvshmem_fini(n);
				return 1;
			}
			t->ptr = p;
			t->win = NULL;
			t->win_offset = 0;
		}
	return 0;
}

void hx_nvshmem_unplace(struct hx_nvshmem *n, int ntensors, int nsets, struct cuco_tensor *sets,
                        int stride, const struct cuco_tensor *saved)
{
	for (int k = 0; k < nsets; k++)
		for (int i = 0; i < ntensors; i++)
			hx_nvshmem_free(n, sets[(size_t)k * stride + i].ptr);
	for (int k = 0; k < nsets; k++)
		memcpy(sets + (size_t)k * stride, saved + (size_t)k * stride,
		       sizeof(*sets) * (size_t)ntensors);
	hx_nvshmem_fini(n);
}
