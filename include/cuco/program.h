/*
 * program.h - the C ABI between the harness and every program and workload.
 *
 * A *program* is one .cu file (host baseline, fast-path seed, any candidate)
 * built as a shared object that exports the four cuco_program_* functions.
 * A *workload* ships one more .cu file, built the same way, that exports the
 * cuco_workload_* functions: it describes the tensors of a shape, fills the
 * inputs from a seed and computes the expected outputs independently of any
 * program. The harness (device/harness) loads both, owns all memory, checks
 * every output against the reference and times the runs; a program never
 * judges itself. Where the workload has no reference of its own (a user's
 * program lifted into a package), the harness takes the expected outputs
 * from one run of a reference program instead (cuco-harness
 * --reference-program, docs/harness.md).
 *
 * Every tensor lives in an NCCL symmetric window (ncclMemAlloc +
 * ncclCommWindowRegister, same size on every rank), so any program may read
 * or write peers' tensors over LSA; a program that asks for NVSHMEM gets
 * every tensor on NVSHMEM's symmetric heap instead (docs/nvshmem.md).
 * Functions return 0 on success; on failure they return nonzero and leave a
 * message in the ctx->errbuf they were given.
 */
#ifndef CUCO_PROGRAM_H
#define CUCO_PROGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUCO_ABI_VERSION 1
#define CUCO_MAX_PARAMS 16  /* parameters of one shape (M, N, K, ...) */
#define CUCO_MAX_TENSORS 16 /* tensors of one workload */
#define CUCO_NAME_MAX 32    /* tensor and parameter names, NUL included */

enum cuco_dtype {
	CUCO_DTYPE_BF16 = 1,
	CUCO_DTYPE_F16 = 2,
	CUCO_DTYPE_F32 = 3,
	CUCO_DTYPE_I32 = 4,
	CUCO_DTYPE_I64 = 5,
	CUCO_DTYPE_U8 = 6,
	CUCO_DTYPE_F64 = 7,
	CUCO_DTYPE_I8 = 8,
	CUCO_DTYPE_U32 = 9,
	CUCO_DTYPE_U64 = 10,
};

enum cuco_role {
	CUCO_ROLE_INPUT = 1,  /* filled by the workload's generator, read by programs */
	CUCO_ROLE_OUTPUT = 2, /* poisoned before each run, written by programs, verified */
	/* Generated like an input, read and written in place by programs (a user's device
	 * buffer): put back to its generated contents before every verified run, verified
	 * like an output after it, never poisoned. */
	CUCO_ROLE_INOUT = 3,
};

/*
 * How a verified tensor is compared with the expected one. Integer dtypes are
 * always compared exactly. Either way an element that is NaN or Inf where the
 * expected one is finite, finite where it is not, or of another class (NaN,
 * +Inf, -Inf) is wrong; elements of the same non-finite class are equal.
 */
enum cuco_compare {
	CUCO_COMPARE_CLOSE = 0, /* relative L2 error over the tensor within the tolerance */
	CUCO_COMPARE_EXACT = 1, /* every element bitwise equal */
};

/* One named parameter set ("8192": M=8192 N=8192 K=8192). */
struct cuco_shape {
	char name[CUCO_NAME_MAX];
	int nparams;
	char param_names[CUCO_MAX_PARAMS][CUCO_NAME_MAX];
	long long params[CUCO_MAX_PARAMS];
	/* The program's command line for this shape (a lifted package's programs run the
	 * user's main with it; cuco-harness --argv); "" when none. */
	char argv[1024];
};

/* A parameter's value, or dflt when the shape has no such parameter. */
static inline long long cuco_shape_get(const struct cuco_shape *s, const char *name,
				       long long dflt)
{
	for (int i = 0; i < s->nparams; i++)
		if (strcmp(s->param_names[i], name) == 0)
			return s->params[i];
	return dflt;
}

/*
 * One tensor of one rank. The workload fills name..bytes and compare, tolerance
 * (zero: today's rule, the run's tolerance); the harness the rest.
 */
struct cuco_tensor {
	char name[CUCO_NAME_MAX];
	int role;          /* enum cuco_role */
	int dtype;         /* enum cuco_dtype */
	size_t elems;      /* this rank's element count (may differ between ranks) */
	size_t bytes;      /* this rank's bytes = elems * size of dtype */
	void *ptr;         /* device pointer, inside win (NVSHMEM: a symmetric heap address) */
	ncclWindow_t win;  /* symmetric window that holds ptr; NULL for NVSHMEM programs */
	size_t win_offset; /* offset of ptr inside win (same on every rank) */
	int compare;       /* enum cuco_compare, for outputs and inouts; the same on every rank */
	double tolerance;  /* CLOSE: 0 takes the run's --tolerance, > 0 is this tensor's */
};

/* What a program asks of the harness before init. Zeroed by the harness. */
struct cuco_requirements {
	size_t scratch_bytes;  /* symmetric scratch window on every rank; 0 for none */
	int devcomm;           /* 1: build an ncclDevComm with the counts below */
	int lsa_barrier_count; /* LSA barriers (one per CTA that synchronises) */
	int gin_context_count; /* > 0 asks for GIN; refused where the node has none */
	int gin_signal_count;
	int gin_counter_count;
	/* 1 asks for NVSHMEM: the harness bootstraps it in the program's module through the
	 * cuco_program_nvshmem_* hooks (cuco_dev/nvshmem.cuh) and places every tensor on its
	 * symmetric heap. Not with devcomm, LSA barriers or GIN (no NCCL window then). */
	int nvshmem;
	size_t nvshmem_heap_bytes; /* symmetric heap the program allocates itself (signals) */
};

/* Everything a program may use. Owned by the harness; valid from init to fini. */
struct cuco_ctx {
	int abi_version;      /* CUCO_ABI_VERSION of the harness */
	int rank, nranks;     /* in the communicator */
	int local_rank;       /* on this node */
	int device;           /* CUDA device ordinal in use */
	int sm_count;         /* multiprocessors of that device */
	const struct cuco_shape *shape;
	ncclComm_t comm;
	const struct ncclDevComm *devcomm; /* NULL unless requirements.devcomm */
	void *scratch;                     /* NULL unless requirements.scratch_bytes */
	ncclWindow_t scratch_win;
	size_t scratch_bytes;
	int ntensors;
	/* Tensor layout of input set 0; run() receives the set to use each time. */
	struct cuco_tensor tensors[CUCO_MAX_TENSORS];
	char errbuf[1024]; /* the program's failure message */
};

/*
 * Program side. Defined in the program's .cu file with C linkage.
 *
 * cuco_program_requirements(): fill *req (already zeroed); no CUDA work.
 * cuco_program_init():         allocate private state (streams, events,
 *                              buffers); *state is passed back to run/fini.
 * cuco_program_run():          enqueue one complete execution on stream; every
 *                              output tensor of `tensors` must be fully written
 *                              when work on stream is done. Must not
 *                              synchronise the device or the host. Called many
 *                              times, with different tensor sets.
 * cuco_program_fini():         release what init took.
 */
typedef int (*cuco_program_requirements_fn)(const struct cuco_ctx *ctx,
					    struct cuco_requirements *req);
typedef int (*cuco_program_init_fn)(struct cuco_ctx *ctx, void **state);
typedef int (*cuco_program_run_fn)(void *state, const struct cuco_tensor *tensors,
				   cudaStream_t stream);
typedef void (*cuco_program_fini_fn)(void *state);

/*
 * Workload side. Defined in the workload's workload.cu with C linkage.
 *
 * cuco_workload_describe():  fill tensors[0..*ntensors) (name, role, dtype,
 *                            elems, bytes) for `rank`; called by every rank
 *                            for every rank so windows can be sized alike.
 *                            Reject a shape it cannot run (message in errbuf).
 * cuco_workload_generate():  fill this rank's input and inout tensors from
 *                            seed, deterministically (same seed, same data),
 *                            never all zeros. Every rank calls it with the
 *                            same seeds in the same order (the input sets,
 *                            the fresh set, the decoys before each program's
 *                            init, an inout's restore before a verified run),
 *                            so a workload that exports cuco_workload_attach
 *                            may communicate on its comm inside it.
 * cuco_workload_reference(): write the expected value of this rank's output
 *                            tensors into tensors[i].ptr for output roles;
 *                            an inout's ptr holds its generated contents, to
 *                            be turned into the expected ones in place
 *                            (inputs in the array are this rank's inputs for
 *                            the same seed, already generated). Must not use
 *                            communication: regenerate other ranks' inputs
 *                            from the seed instead. Not called when the
 *                            harness has a reference program; a workload
 *                            without a reference may return nonzero.
 */
typedef int (*cuco_workload_describe_fn)(const struct cuco_shape *shape, int rank, int nranks,
					 struct cuco_tensor *tensors, int *ntensors,
					 char *errbuf, size_t errlen);
typedef int (*cuco_workload_generate_fn)(const struct cuco_shape *shape, int rank, int nranks,
					 uint64_t seed, struct cuco_tensor *tensors,
					 int ntensors, cudaStream_t stream);
typedef int (*cuco_workload_reference_fn)(const struct cuco_shape *shape, int rank,
					  int nranks, uint64_t seed,
					  struct cuco_tensor *tensors, int ntensors,
					  cudaStream_t stream);

/*
 * Optional: cuco_workload_attach() is called once on every rank after the
 * workload is loaded and before describe, with the harness's communicator
 * (valid until the harness ends), the rank, the rank count and the CUDA
 * device in use. A workload may keep comm and use it, collectively, in
 * generate(). Return 0, or nonzero with a message in errbuf.
 */
typedef int (*cuco_workload_attach_fn)(ncclComm_t comm, int rank, int nranks, int device,
				       char *errbuf, size_t errlen);

/*
 * Optional: cuco_workload_rank_weight() weighs a rank's time (e.g. by the
 * tokens it computes) for the weighted mean of the ranks' times that the
 * harness reports as weighted_us beside the slowest rank's (CUCo's MoE figure;
 * a layer still ends with its slowest rank). Negative: not weighed.
 */
typedef double (*cuco_workload_rank_weight_fn)(const struct cuco_shape *shape, int rank,
					       int nranks);

/*
 * NVSHMEM hooks, exported by a program that asks for NVSHMEM (defined by
 * cuco_dev/nvshmem.cuh). The harness calls uniqueid on rank 0, broadcasts
 * the id over its communicator, then on every rank init, malloc for every
 * tensor (collective, same order everywhere), and after the program's fini
 * free and fini. Return 0 on success, else nonzero with a message in err.
 */
#define CUCO_NVSHMEM_UNIQUEID_BYTES 128 /* sizeof(nvshmemx_uniqueid_t) in NVSHMEM 3 */
typedef int (*cuco_program_nvshmem_uniqueid_fn)(void *uid, size_t len, char *err,
						size_t errlen);
typedef int (*cuco_program_nvshmem_init_fn)(const void *uid, size_t len, int rank, int nranks,
					    size_t heap_bytes, int one_node, char *err,
					    size_t errlen);
typedef void *(*cuco_program_nvshmem_malloc_fn)(size_t bytes);
typedef void (*cuco_program_nvshmem_free_fn)(void *p);
typedef void (*cuco_program_nvshmem_fini_fn)(void);

#define CUCO_PROGRAM_SYMBOLS                                                             \
	"cuco_program_requirements", "cuco_program_init", "cuco_program_run",             \
		"cuco_program_fini"
#define CUCO_WORKLOAD_SYMBOLS                                                            \
	"cuco_workload_describe", "cuco_workload_generate", "cuco_workload_reference"

/* Bytes of one element of dtype, 0 for an unknown dtype. */
static inline size_t cuco_dtype_size(int dtype)
{
	switch (dtype) {
	case CUCO_DTYPE_BF16:
	case CUCO_DTYPE_F16:
		return 2;
	case CUCO_DTYPE_F32:
	case CUCO_DTYPE_I32:
	case CUCO_DTYPE_U32:
		return 4;
	case CUCO_DTYPE_I64:
	case CUCO_DTYPE_U64:
	case CUCO_DTYPE_F64:
		return 8;
	case CUCO_DTYPE_U8:
	case CUCO_DTYPE_I8:
		return 1;
	}
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif
