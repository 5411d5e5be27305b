/*
 * cuco_export.h - run one cuco program inside your own NCCL application.
 *
 * The runtime does for you what cuco's harness does for a program: it takes
 * your communicator, allocates the workload's tensors in symmetric windows
 * (ncclMemAlloc + ncclCommWindowRegister, the same size on every rank),
 * builds the device communicator and scratch window the program asks for, and
 * enqueues the program on your stream. It never checks results; the examples
 * do, against the workload's reference.
 *
 * Every call is collective where NCCL's are (init and fini register and
 * deregister windows): call them on every rank of the communicator.
 * Functions return 0 on success, nonzero on failure with a message that
 * cuco_export_error() (or err, for init) holds.
 */
#ifndef CUCO_EXPORT_H
#define CUCO_EXPORT_H

#include <stddef.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cuco_export; /* opaque; owned by the runtime from init to fini */

/*
 * Set up the program on comm (which the caller keeps owning and must keep
 * alive until fini) for one shape: a name the workload's manifest gives
 * (cuco_export_shapes lists them) or every parameter by value, "M=4096,N=4096".
 * The CUDA device is the communicator's. On failure returns nonzero, writes
 * a message into err and leaves *out NULL.
 */
int cuco_export_init(ncclComm_t comm, const char *shape, struct cuco_export **out, char *err,
		     size_t errlen);

/* The workload's tensors: how many, and one by index (0..n-1). */
int cuco_export_ntensors(const struct cuco_export *x);

/*
 * Tensor i: its name, role (1 input, 2 output, as cuco/program.h), dtype
 * (cuco/program.h's enum) and bytes on this rank; returns its device pointer
 * inside a symmetric window, or NULL for an index out of range. Write the
 * inputs before run; read the outputs after the stream has run it. Pointers
 * stay valid until fini.
 */
void *cuco_export_tensor(struct cuco_export *x, int i, const char **name, int *role, int *dtype,
			 size_t *bytes);

/* Index of the tensor called name, or -1. */
int cuco_export_tensor_index(const struct cuco_export *x, const char *name);

/* Enqueue one complete execution on stream (no host or device synchronisation). */
int cuco_export_run(struct cuco_export *x, cudaStream_t stream);

/* The last failure's message ("" when none). */
const char *cuco_export_error(const struct cuco_export *x);

/* Release everything init took (collective). NULL is fine. */
void cuco_export_fini(struct cuco_export *x);

/* The shape init was given (cuco/program.h), valid until fini. */
struct cuco_shape;
const struct cuco_shape *cuco_export_shape(const struct cuco_export *x);

/* This rank in the communicator, and the rank count into *nranks (may be NULL). */
int cuco_export_rank(const struct cuco_export *x, int *nranks);

/* The named shapes of the workload, one per line ("name P1=v1 P2=v2 ..."); static text. */
const char *cuco_export_shapes(void);

#ifdef __cplusplus
}
#endif

#endif
