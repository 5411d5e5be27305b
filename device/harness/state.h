/*
 * state.h - one rank's state inside cuco-harness, shared by the files of its
 * stages, bottom to top: state.c (failing, agreeing, the inputs' seeds and
 * generation), verify.c (poison, the inputs set for a run, the checks of a
 * program's outputs and the guards on its numbers, docs/sandbox.md),
 * program.c (one program: load, setup, init, timing, result, fini; the
 * reference program's runs) and rank.c (communicator, tensors, references:
 * hx_rank_main, in harness.h).
 */
#ifndef CUCO_HARNESS_STATE_H
#define CUCO_HARNESS_STATE_H

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

#define HX_SEED_NONE UINT64_MAX /* a set holds inputs of no seed the harness knows */

/*
 * The checks after timing run on inputs no earlier run of the program has seen, each from a
 * fresh seed of its own (hx_fresh_seed) with its own expected outputs (st->fresh[k]): the
 * back-to-back check's two sets, the unpoisoned check, then one per further verification
 * (--verify-runs beyond the first, at most HX_MAX_FRESH - HX_FRESH_SINGLE of them).
 */
enum {
	HX_FRESH_B2B_ODD,  /* set 1 of the back-to-back check (its odd runs) */
	HX_FRESH_B2B_LAST, /* set 0 of the back-to-back check (its last run) */
	HX_FRESH_BARE,     /* the unpoisoned check */
	HX_FRESH_SINGLE,   /* the first of the single verifications on fresh inputs */
};
#define HX_MAX_FRESH 16
#define HX_B2B_RUNS 4 /* runs of the back-to-back check: sets 1, 0, 1, 0 */

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
	/* the seed each set's inputs were last generated from, or HX_SEED_NONE */
	uint64_t set_seed[HX_MAX_SETS];
	int has_inout; /* some tensor is CUCO_ROLE_INOUT */
	/* each set's inouts as last generated, put back before every run (NULL: not an inout) */
	void *pristine[HX_MAX_SETS][CUCO_MAX_TENSORS];
	/* outputs and inouts for the inputs of hx_input_seed(st, 0) */
	void *expected[CUCO_MAX_TENSORS];
	int nfresh; /* hx_nfresh(st) */
	/* the same for hx_fresh_seed(st, k), k < nfresh */
	void *fresh[HX_MAX_FRESH][CUCO_MAX_TENSORS];
	/* device scratch for agreement all-reduces: HX_AGREE_MAX doubles */
	double *dagree;
	float *dsamples;
	/* device: per tensor, two comparisons (the runs' end, drained) of each of
	 * HX_MAX_TARGETS sets (verify.c) */
	struct hx_compare *dcmp;
	size_t l2_persist_limit; /* the persisting-L2 limit the rank found at start */
};

#define HX_AGREE_MAX (4 + 8 * CUCO_MAX_TENSORS)
#define HX_MAX_TARGETS 2 /* sets judged after one series of runs (verify.c) */

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

/* --- state.c */
/* All-reduce n (at most HX_AGREE_MAX) doubles in place across ranks (sum or max). */
void hx_agree(struct hx_state *st, double *v, int n, ncclRedOp_t op);
/* The largest code over ranks: every rank takes the same branch. */
int hx_agree_code(struct hx_state *st, int code);
/*
 * Seeds: input set s is generated from hx_input_seed(st, s); a decoy set, what a program's init
 * sees, from hx_decoy_seed(st, s); the inputs of the k-th check after timing, which no run
 * before it has seen, from hx_fresh_seed(st, k). All distinct.
 */
uint64_t hx_input_seed(const struct hx_state *st, int set);
uint64_t hx_decoy_seed(const struct hx_state *st, int set);
uint64_t hx_fresh_seed(const struct hx_state *st, int k);
/* Fill input set s from seed with the workload's generator (on the rank's stream), its
 * inouts kept as generated in st->pristine[s]. */
void hx_fill_inputs(struct hx_state *st, int set, uint64_t seed);
/* The fresh seeds, and their expected outputs, the checks after timing need: 0 when no program
 * is verified, else HX_FRESH_SINGLE + one per verification after the first (capped). */
int hx_nfresh(const struct hx_state *st);

/* --- program.c: one program, stage by stage */
void hx_evaluate_program(struct hx_state *st, int idx);
/*
 * The expected outputs from the reference program (--reference-program): loaded and set up
 * as any program, run once on set 0's inputs into st->expected and once on each fresh seed's
 * into st->fresh[k]; set 0 put back; torn down. Collective. A failure ends the rank (stage
 * "reference").
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

/* The checks of a verified program's outputs, in the order they run (docs/harness.md). */
enum hx_check {
	HX_CHECK_FIRST,      /* one run before timing, on set 0's own inputs */
	HX_CHECK_LAST_TIMED, /* the last timed run, on set 0 */
	HX_CHECK_B2B,        /* HX_B2B_RUNS runs back to back, fresh inputs */
	HX_CHECK_FRESH,      /* one run on fresh inputs, per verification after the first */
	HX_CHECK_UNPOISONED, /* one run on fresh inputs, its outputs not poisoned first */
};
/* The check's name in a result entry ("failed_check"). */
const char *hx_check_name(enum hx_check c);

/* One run on set `set`: 0, or nonzero when the program returned an error or a launch failed. */
int hx_run_once(struct hx_state *st, struct hx_program *p, void *state, int set);
/* Poison the output tensors of set (all-ones bytes); inouts are left alone. */
void hx_poison_outputs(struct hx_state *st, struct cuco_tensor *set);
/* Put set s's inouts back as they were generated (st->pristine). */
void hx_restore_inouts(struct hx_state *st, int set);
/* Make set s hold seed's inputs and inouts as generated: generated again unless it holds
 * them already, else its inouts put back. Collective where the generator is. */
void hx_set_inputs(struct hx_state *st, int set, uint64_t seed);
/* What comes before every run of a program: set s's inouts put back, its outputs poisoned;
 * enqueued on the harness's stream, nothing synchronised. */
void hx_before_run(struct hx_state *st, int set);
/*
 * One verification, check FIRST, FRESH (the k-th, from 0) or UNPOISONED: set 0 made to hold
 * its inputs (hx_input_seed(st, 0); hx_fresh_seed(st, HX_FRESH_SINGLE + k); that of
 * HX_FRESH_BARE), inouts put back, outputs poisoned (UNPOISONED: left as the last run left
 * them), one run, judged against st->expected or the fresh seed's st->fresh: outputs and
 * inouts compared as they are when the run has ended on the harness's stream and again once
 * the whole device has drained; then the persisting-L2 guard. run_err: the program's own
 * message (its ctx errbuf). 0 with *v filled, or a code with err: CUCO_ERR_RUN (the run
 * failed, or it set a persisting L2 window), CUCO_ERR_VERIFY (wrong, or written on a stream
 * the harness does not wait for). Collective: every rank calls it and gets the same code.
 */
int hx_verify(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
              enum hx_check check, int k, struct hx_verdict *v, char *err, size_t errlen);
/* The last timed run judged as hx_verify judges (it ran on set 0 holding hx_input_seed(st, 0)'s
 * inputs, and nothing was enqueued after it). Collective. */
int hx_check_last_timed(struct hx_state *st, struct hx_verdict *v, char *err, size_t errlen);
/*
 * HX_B2B_RUNS runs back to back on sets 1, 0, 1, 0 (set 0 alone when there is one set), each
 * set holding a fresh seed's inputs (HX_FRESH_B2B_ODD, HX_FRESH_B2B_LAST): between the runs
 * only hx_before_run, no synchronisation and no all-reduce; then the last run on each set
 * judged as hx_verify judges. Collective.
 */
int hx_back_to_back(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
                    struct hx_verdict *v, char *err, size_t errlen);
/* Put the device's persisting-L2 state back as the rank found it (after each program). */
void hx_l2_restore(struct hx_state *st);

#endif
