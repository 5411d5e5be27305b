/*
 * rank.h - one rank's state inside cuco-harness, shared by the files of its
 * stages: rank.c (communicator, tensors, inputs, references), program.c (one
 * program: load, setup, init, timing, result, fini; the reference program's
 * run) and verify.c (poison, verification and the guards on a program's
 * numbers, docs/sandbox.md).
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
	cuco_workload_attach_fn attach;           /* optional: NULL when not exported */
};

#define HX_SEED_NONE UINT64_MAX /* set 0 holds inputs of no seed the harness knows */

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
	uint64_t set0_seed; /* the seed set 0's inputs were last generated from, or HX_SEED_NONE */
	int has_inout;      /* some tensor is CUCO_ROLE_INOUT */
	/* outputs and inouts for the inputs of hx_input_seed(st, 0) */
	void *expected[CUCO_MAX_TENSORS];
	void *fresh[CUCO_MAX_TENSORS]; /* the same for hx_fresh_seed(st): NULL when unused */
	/* device scratch for agreement all-reduces: HX_AGREE_MAX doubles */
	double *dagree;
	float *dsamples;
	struct hx_compare *dcmp; /* device: two comparisons per tensor (verify.c) */
	size_t l2_persist_limit; /* the persisting-L2 limit the rank found at start */
};

#define HX_AGREE_MAX (4 + 8 * CUCO_MAX_TENSORS)

/* The roles the harness verifies after a run. */
static inline int hx_role_verified(int role)
{
	return role == CUCO_ROLE_OUTPUT || role == CUCO_ROLE_INOUT;
}

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
/* Make set 0 hold seed's inputs and inouts as generated: generated again unless it holds
 * them already and no inout can have changed. Collective where the generator is. */
void hx_set0_inputs(struct hx_state *st, uint64_t seed);
/* 1 when some program is verified more than once: the fresh set's outputs are needed. */
int hx_needs_fresh(const struct hx_state *st);

/* --- program.c: one program, stage by stage */
void hx_evaluate_program(struct hx_state *st, int idx);
/*
 * The expected outputs from the reference program (--reference-program): loaded and set up
 * as any program, run once on set 0's inputs into st->expected and, when hx_needs_fresh, once
 * on the fresh inputs into st->fresh; set 0 put back; torn down. Collective. A failure ends
 * the rank (stage "reference").
 */
void hx_reference_program(struct hx_state *st);

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
	double mismatched; /* elements not bitwise equal in the tensors compared exactly */
	int worst;         /* the close-compared tensor rel_err is of; -1 for none */
	int failed;        /* the first tensor that failed; -1 for none */
	int failed_exact;  /* 1 when it failed the exact compare, 0 the close one */
	double failed_rel_err, failed_tolerance, failed_mismatched; /* its figures */
};

/* One run on set `set`: 0, or nonzero when the program returned an error or a launch failed. */
int hx_run_once(struct hx_state *st, struct hx_program *p, void *state, int set);
/* Poison the output tensors of set (all-ones bytes); inouts are left alone. */
void hx_poison_outputs(struct hx_state *st, struct cuco_tensor *set);
/*
 * One verification on the inputs of hx_input_seed(st, 0) (fresh 0) or hx_fresh_seed(st)
 * (fresh 1): set 0 made to hold them (hx_set0_inputs: inouts put back), its outputs poisoned,
 * run, outputs and inouts compared with st->expected or st->fresh as they are when the run has
 * ended on the harness's stream and again once the whole device has drained; then the
 * persisting-L2 guard. run_err: the program's own message (its ctx errbuf). 0 with *v filled,
 * or a code with err: CUCO_ERR_RUN (the run failed, or it set a persisting L2 window),
 * CUCO_ERR_VERIFY (wrong, or written on a stream the harness does not wait for). Collective:
 * every rank calls it and gets the same code.
 */
int hx_verify(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
              int fresh, struct hx_verdict *v, char *err, size_t errlen);
/* Put the device's persisting-L2 state back as the rank found it (after each program). */
void hx_l2_restore(struct hx_state *st);

#endif
