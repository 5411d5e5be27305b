/*
 * harness.h - internals of cuco-harness, the one driver that loads a workload
 * and programs, runs them on every rank, verifies every output against the
 * workload's reference, and times them. Host side in C (this header, *.c);
 * the few things that need CUDA C++ (device communicator, poison and compare
 * kernels, probes) sit behind the extern "C" functions of devside.cu.
 */
#ifndef CUCO_HARNESS_H
#define CUCO_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <cuco/program.h>

#include "util/strbuf.h"

#define HX_MAX_PROGRAMS 16

/* Options of one harness invocation, parsed from argv (see usage in main.c). */
struct hx_opts {
	const char *workload_so;
	const char *workload_name;
	struct cuco_shape shape;
	double tolerance;
	int nprograms;
	const char *program_names[HX_MAX_PROGRAMS];
	const char *program_paths[HX_MAX_PROGRAMS];
	int program_verify[HX_MAX_PROGRAMS]; /* 0: timing only (compute-alone, comm-alone) */
	/* --reference-program: the expected outputs come from one run of it; NULL: from the
	 * workload's reference() */
	const char *reference_program;
	int ranks;            /* fork mode: ranks to start; 0 = one per visible GPU */
	int launch_env;       /* 1: ranks come from mpirun/srun/env, not fork */
	double timeout_s;     /* watchdog: longest time any one stage may take */
	int warmup, iters;    /* timed iterations (at least), warm-up runs */
	double bench_seconds; /* stop adding iterations after this much device time */
	int verify_runs;      /* verifications per program (1 before timing, rest after) */
	int rotate;           /* input sets; 0 = enough to defeat L2 */
	int burst;            /* 1: time each run alone after an idle gap (--timing burst) */
	uint64_t seed;
	int probe;               /* doctor mode */
	int samples;             /* print per-iteration samples */
	const char *result_file; /* env launch: ranks append result lines here, not stdout */
	int result_fd; /* fork launch: the result record goes here (-1: stdout); ranks close it */
};

/* Per-rank identity, from fork or the environment. */
struct hx_rank {
	int rank, nranks, local_rank;
	int out_fd; /* where its one JSON result record (and "#program NAME" lines) go */
};

/* --- main.c */
void hx_opts_defaults(struct hx_opts *o);

/* --- launch.c: process groups and bootstrap */
/* Fork o->ranks children, run hx_rank_main in each, watch them; returns exit status. */
int hx_launch_fork(const struct hx_opts *o);
/* Ranks started by mpirun/srun: read identity from the environment, bootstrap over TCP. */
int hx_launch_env(const struct hx_opts *o);

/* --- child.c: a child's pipe, and the GPUs counted in one */
/* CUDA GPUs visible, counted in a child so the caller stays CUDA-free. */
int hx_count_gpus(void);
/* Write all n bytes of buf to fd; -1 on error. */
int hx_write_all(int fd, const void *buf, size_t n);
/* Read exactly n bytes within timeout_s; -1 on EOF, error or timeout. */
int hx_read_all(int fd, void *buf, size_t n, double timeout_s);

/* --- watchdog.c: a rank that stops making progress ends itself */
void hx_watchdog_start(int rank, int out_fd, double timeout_s);
/* Enter a new stage: resets the deadline. name must be a static string. */
void hx_stage(const char *name);
const char *hx_stage_name(void);

/* --- rank.c: what each rank does (its state and the per-program stages: rank.h) */
int hx_rank_main(const struct hx_opts *o, const struct hx_rank *r, const ncclUniqueId *id);

/* --- result.c: the clock and the result line's state */
/* Monotonic seconds. */
double hx_now(void);
/* Sleep the calling thread for us microseconds. */
void hx_sleep_us(double us);
/* The run failure lines name (strings borrowed, must outlive the rank). */
void hx_result_run(const char *workload, const char *shape, int nranks);
/* The rank count failure lines report before hx_rank_main sets it. */
void hx_set_nranks(int n);
/* Name the program in later failure lines (the fork parent, for a dead rank): copied. */
void hx_set_program(const char *name);
/* The program being run, for failure lines (borrowed; "" between programs). */
void hx_result_program(const char *name);
/* Keep one finished program's result entry (a JSON object) for the lines to come. */
void hx_result_add(const char *entry);
/* Append the finished programs' entries, comma-separated, to sb. */
void hx_result_copy(struct cuco_strbuf *sb);
/* Write one JSON failure line {"harness":1,"status":...} to fd, with the results so far. */
void hx_emit_failure(int fd, int rank, int code, const char *stage, const char *msg);
/* s as a JSON string, NULL as ""; v as a JSON number, null when not finite. */
void hx_json_str(struct cuco_strbuf *sb, const char *s);
void hx_json_num(struct cuco_strbuf *sb, double v);

/* --- nvshmem.c: a program's NVSHMEM, bootstrapped through its hooks (docs/nvshmem.md) */
struct hx_nvshmem {
	cuco_program_nvshmem_uniqueid_fn uniqueid;
	cuco_program_nvshmem_init_fn init;
	cuco_program_nvshmem_malloc_fn malloc_;
	cuco_program_nvshmem_free_fn free_;
	cuco_program_nvshmem_fini_fn fini;
	int inited;
};
/* Check req (no NCCL device communicator beside NVSHMEM) and find the hooks in the program's
 * dl: 0, CUCO_ERR_UNSUPPORTED for a hybrid, CUCO_ERR_RUN for missing hooks (err says). */
int hx_nvshmem_open(struct hx_nvshmem *n, void *dl, const struct cuco_requirements *req, char *err,
                    size_t errlen);
/* Collective over comm: rank 0's unique id to every rank, then each rank's init. 0 or 1. */
int hx_nvshmem_init(struct hx_nvshmem *n, ncclComm_t comm, cudaStream_t s, int rank, int nranks,
                    int one_node, size_t heap_bytes, char *err, size_t errlen);
/* Collective: symmetric heap memory (NULL when the heap is full); free it in the same order. */
void *hx_nvshmem_malloc(struct hx_nvshmem *n, size_t bytes);
void hx_nvshmem_free(struct hx_nvshmem *n, void *p);
/* nvshmem_finalize in the program's module, after every free; no-op unless init succeeded. */
void hx_nvshmem_fini(struct hx_nvshmem *n);
/*
 * An NVSHMEM program's tensors: init (heap = every tensor of the nsets sets, own_bytes and a
 * margin), then every tensor of sets (row k at sets + k * stride) moved onto the symmetric
 * heap, copied from where it was, win NULL; the rows as they were kept in saved (same
 * layout) for hx_nvshmem_unplace. 0, or 1 with err and sets and NVSHMEM as before.
 */
int hx_nvshmem_place(struct hx_nvshmem *n, ncclComm_t comm, cudaStream_t s, int rank, int nranks,
                     int one_node, size_t own_bytes, const size_t *sym_bytes, int ntensors,
                     int nsets, struct cuco_tensor *sets, int stride, struct cuco_tensor *saved,
                     char *err, size_t errlen);
/* Free the heap tensors, put saved back into sets, finalise NVSHMEM. */
void hx_nvshmem_unplace(struct hx_nvshmem *n, int ntensors, int nsets, struct cuco_tensor *sets,
                        int stride, const struct cuco_tensor *saved);

/* --- probe.c: `cuco doctor` facts (main.c starts the probe's fork group) */
/* The probe's per-rank part, called from hx_rank_main when o->probe. */
int hx_probe_rank(const struct hx_opts *o, const struct hx_rank *r, ncclComm_t comm);

/* --- devside.cu */
struct hx_compare {
	double diff2, ref2;  /* sums of squared difference and squared reference */
	double max_abs;      /* largest |out - ref| */
	uint64_t nonfinite;  /* non-finite where the reference is not, or of another class */
	uint64_t checked;    /* elements compared */
	uint64_t mismatched; /* exact compare: elements whose bytes differ */
};
int hx_dev_devcomm_create(ncclComm_t comm, const struct cuco_requirements *req,
                          struct ncclDevComm **out, char *err, size_t errlen);
void hx_dev_devcomm_destroy(ncclComm_t comm, struct ncclDevComm *dc);
int hx_dev_devcomm_gin_contexts(const struct ncclDevComm *dc);
int hx_dev_devcomm_lsa_size(const struct ncclDevComm *dc);
/*
 * Enqueue the comparison of out with ref (same dtype and count) on s, its sums into dres
 * (device memory); no synchronisation. exact, or an integer dtype: count the elements whose
 * bytes differ (mismatched); else the relative L2 sums over the finite elements, with the
 * non-finite rule of include/cuco/program.h (enum cuco_compare) and the poison rule
 * (docs/harness.md). 0, 2 for an unknown dtype, 1 for a CUDA error.
 */
int hx_dev_compare_start(const void *out, const void *ref, size_t n, int dtype, int exact,
                         struct hx_compare *dres, cudaStream_t s);
/* 1 for the integer dtypes, which are always compared exactly. */
static inline int hx_dtype_is_integer(int dtype)
{
	return dtype == CUCO_DTYPE_I32 || dtype == CUCO_DTYPE_I64 || dtype == CUCO_DTYPE_U8 ||
	       dtype == CUCO_DTYPE_I8 || dtype == CUCO_DTYPE_U32 || dtype == CUCO_DTYPE_U64;
}
/*
 * Burst timing (--timing burst): the GPU idles for twice the run's time (at
 * least HX_BURST_MIN_GAP_US) before each timed run, so that its power
 * controller never lowers the clock; a one-thread spin of HX_BURST_SPIN_US
 * covers the host's enqueue of the run. docs/harness.md explains.
 */
#define HX_BURST_MIN_GAP_US 100.0
#define HX_BURST_SPIN_US 200.0
/* One thread waits us microseconds of GPU time on stream s. */
cudaError_t hx_dev_spin(double us, cudaStream_t s);
/* LSA smoke test for doctor: every rank writes a pattern to its peers and checks it. */
int hx_dev_lsa_selftest(ncclComm_t comm, int rank, int nranks, char *err, size_t errlen);

#endif
