/*
 * rank.h - one rank's state inside cuco-harness, shared by the files of its
 * stages: rank.c (communicator, tensors, inputs, references), program.c (one
 * program: load, setup, init, timing, result, fini) and verify.c (poison,
 * verification and the guards on a program's numbers, docs/sandbox.md).
 */
#ifndef CUCO_HARNESS_RANK_H
#define CUCO_HARNESS_RANK_H

#include "harness.h"
#include "util/error.h"

#define HX_MAX_SETS 8

struct hx_workload {
	void *dl;
	cuco_workload_describe_fn describe;
	cuco_workload_generate_fn generate;
	cuco_workload_reference_fn reference;
	cuco_workload_rank_weight_fn rank_weight; /* optional: NULL when not exported */
};

struct hx_state {
	const struct hx_opts *o;
	const struct hx_rank *r;
	ncclComm_t comm;
	cudaStream_t stream;
	struct cudaDeviceProp prop;
	int device;
	struct hx_workload wl;
	int ntensors;
	size_t sym_bytes[CUCO_MAX_TENSORS]; /* max over ranks */
	struct cuco_tensor layout[CUCO_MAX_TENSORS];
	int nsets;
	struct cuco_tensor sets[HX_MAX_SETS][CUCO_MAX_TENSORS];
	void *expected[CUCO_MAX_TENSORS]; /* outputs for the inputs of hx_input_seed(st, 0) */
	void *fresh[CUCO_MAX_TENSORS];    /* outputs for hx_fresh_seed(st): NULL when unused */
	/* device scratch for agreement all-reduces: HX_AGREE_MAX doubles */
	double *dagree;
	float *dsamples;
	struct hx_compare *dcmp; /* device: two comparisons per tensor (verify.c) */
	size_t l2_persist_limit; /* the persisting-L2 limit the rank found at start */
};

#define HX_AGREE_MAX (4 + 4 * CUCO_MAX_TENSORS)

/* Fatal for this rank: writes a failure line and exits with code. */
_Noreturn void hx_die(struct hx_state *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CUDA_OR_DIE(st, call)                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (call);                                                       \
		if (e_ != cudaSuccess)                                                         \
			hx_die((st), CUCO_ERR_RUN, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
			       cudaGetErrorString(e_));                                        \
	} while (0)
#define NCCL_OR_DIE(st, call)                                                                \
	do {                                                                                 \
		ncclResult_t r_ = (call);                                                    \
		if (r_ != ncclSuccess)                                                       \
			hx_die((st), CUCO_ERR_RUN, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, \
			       #call, ncclGetErrorString(r_), ncclGetLastError((st)->comm)); \
	} while (0)

/* --- rank.c */
/* All-reduce n (at most HX_AGREE_MAX) doubles in place across ranks (sum or max). */
void hx_agree(struct hx_state *st, double *v, int n, ncclRedOp_t op);
/* The largest code over ranks: every rank takes the same branch. */
int hx_agree_code(struct hx_state *st, int code);
/*
 * Seeds: input set s is generated from hx_input_seed(st, s); a decoy set, what a program's init
 * sees, from hx_decoy_seed(st, s); the inputs of the verifications after timing, which no
 * run before them has seen, from hx_fresh_seed(st). All distinct.
 */
uint64_t hx_input_seed(const struct hx_state *st, int set);
uint64_t hx_decoy_seed(const struct hx_state *st, int set);
uint64_t hx_fresh_seed(const struct hx_state *st);
/* Fill input set s from seed with the workload's generator (on the rank's stream). */
void hx_fill_inputs(struct hx_state *st, int set, uint64_t seed);

/* --- program.c: one program, stage by stage */
void hx_evaluate_program(struct hx_state *st, int idx);

/* --- verify.c */
struct hx_program {
	void *dl;
	cuco_program_requirements_fn requirements;
	cuco_program_init_fn init;
	cuco_program_run_fn run;
	cuco_program_fini_fn fini;
};

struct hx_verdict {
	int ok;
	double rel_err, max_abs, nonfinite, checked;
	int worst; /* the output tensor rel_err is of; -1 for none */
};

/* One run on set `set`: 0, or nonzero when the program returned an error or a launch failed. */
int hx_run_once(struct hx_state *st, struct hx_program *p, void *state, int set);
/*
 * One verification: poison set 0's outputs, run, compare them with expected[] as they are when
 * the run has ended on the harness's stream and again once the whole device has drained; then
 * the persisting-L2 guard. run_err: the program's own message (its ctx errbuf). 0 with *v filled,
 * or a code with err: CUCO_ERR_RUN (the run failed, or it set a persisting L2 window),
 * CUCO_ERR_VERIFY (wrong, or written on a stream the harness does not wait for). Collective: every
 * rank calls it and gets the same code.
 */
int hx_verify(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
              void *const *expected, struct hx_verdict *v, char *err, size_t errlen);
/* Put the device's persisting-L2 state back as the rank found it (after each program). */
void hx_l2_restore(struct hx_state *st);

#endif
