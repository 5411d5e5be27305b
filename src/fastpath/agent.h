/*
 * agent.h - the LLM fast-path agent (`cuco fastpath --llm`): a model turns a
 * host program the rule-based fast path cannot handle into a seed, in two
 * stages, each a whole-file rewrite that is checked, compiled, run and judged,
 * with the outcome fed back, up to K attempts per stage:
 *   stage A  device infrastructure: devcomm, windows, scratch through
 *            cuco_program_requirements(); the host collectives stay;
 *   stage B  every host collective replaced with device-initiated code, the
 *            code evolution may change marked with EVOLVE-BLOCKs, a directive.
 * Every call is stored in llm_calls; the seed is stored as origin 'seed',
 * operator 'llm-fastpath'. Without GPUs each stage is only compile-checked and
 * the seed is stored unverified (an evaluation row with status 'no_gpu').
 */
#ifndef CUCO_FASTPATH_AGENT_H
#define CUCO_FASTPATH_AGENT_H

#include <stdint.h>
#include <stdio.h>

#include "cascade/cascade.h"
#include "llm/client.h"
#include "program/directive.h"
#include "store/store.h"
#include "util/error.h"
#include "workload/manifest.h"

#define CUCO_FASTPATH_AGENT_ITERATIONS 3      /* attempts per stage by default */
#define CUCO_FASTPATH_OPERATOR "llm-fastpath" /* programs.operator of the seed */

/* The stages. */
enum cuco_fastpath_stage {
	CUCO_FASTPATH_STAGE_A = 0, /* device infrastructure, host collectives kept */
	CUCO_FASTPATH_STAGE_B = 1, /* collectives replaced with device-initiated code */
};

/* What the run stage made of one compiled attempt. Plain data. */
struct cuco_fastpath_verdict {
	int code; /* CUCO_OK: correct on the GPUs; CUCO_ERR_NO_GPU or CUCO_ERR_UNSUPPORTED:
	             cannot be run here (accepted unverified); anything else: it failed */
	char message[4096]; /* why (fed back to the model); "" when correct */
	double median_us;   /* NaN when not timed */
	double baseline_us; /* NaN when unknown */
	double rel_err;     /* NaN when not checked */
};

/*
 * The run stage: verify (and time) the program code (file path names it)
 * of stage (enum cuco_fastpath_stage), already compiled, filling *v. Returns
 * CUCO_OK when *v is the verdict, another code (err set) when the cascade
 * itself broke, which ends the agent.
 */
typedef int (*cuco_fastpath_judge_fn)(void *arg, int stage, const char *path, const char *code,
                                      struct cuco_fastpath_verdict *v, struct cuco_err *err);

/* Configuration. Borrowed; everything must outlive cuco_fastpath_agent_run(). */
struct cuco_fastpath_agent_config {
	struct cuco_llm_config llm;       /* endpoint, model, key variable, timeouts, budgets */
	const char *share_dir;            /* holds prompts/ */
	const char *abi_header;           /* text of cuco/program.h; NULL: read from cuco's home */
	const char *file;                 /* the host program's path (messages, include dir) */
	const char *host_code;            /* its text */
	const char *workload;             /* name stored with the seed; required with a store */
	const char *workload_description; /* NULL or "": none */
	const char *shape;                /* shape name for the prompt, or NULL */
	const struct cuco_design_space *ds; /* stage B's directive is validated against it */
	const char *design_space_text;      /* share/design_space.json as text */
	const struct cuco_hw_facts *facts;  /* NULL: unknown */
	const char *libs[4];                /* extra libraries to link, NULL-terminated */
	struct cuco_store *store;           /* NULL: nothing stored */
	int64_t run_id;                     /* store run (kind 'fastpath') the calls belong to */
	int iterations;                     /* attempts per stage; <= 0: the default (3) */
	int ranks;                          /* GPUs a verification needs (for messages) */
	cuco_fastpath_judge_fn judge;       /* the run stage; NULL: compile checks only */
	void *judge_arg;
	FILE *progress; /* one line per step; NULL: quiet */
};

/* Defaults: llm defaults, iterations 3, ranks 2, everything else empty. */
void cuco_fastpath_agent_config_init(struct cuco_fastpath_agent_config *cfg);

/* Outcome. Caller-owned: _init() before, _release() after; strings malloc'd or NULL. */
struct cuco_fastpath_agent_result {
	char *stage_a;        /* stage A's accepted program */
	char *seed;           /* stage B's accepted program: the seed */
	char *directive_json; /* the seed's directive, canonical */
	char *flags;          /* where the seed's code contradicts its directive, or NULL */
	int verified;         /* 1: the seed was verified on GPUs; 0: compile-checked only */
	int attempts[2];      /* attempts used per stage */
	int calls;            /* model calls made (stored ones) */
	int64_t program_id;   /* the stored seed; 0 when not stored */
	char note[1024];      /* why the seed is unverified, "" when verified */
};

void cuco_fastpath_agent_result_init(struct cuco_fastpath_agent_result *r);
void cuco_fastpath_agent_result_release(struct cuco_fastpath_agent_result *r);

/*
 * Run both stages (see the top of this file) and fill *out. Returns CUCO_OK
 * with out->seed set (verified or not: out->verified), or with err set:
 *   CUCO_ERR_INVALID     - a stage found no acceptable program in K attempts
 *                          (the message names the stage and the last failure);
 *   CUCO_ERR_UNSUPPORTED - the LLM budget ran out;
 *   CUCO_ERR_USAGE       - a bad configuration (client, missing fields);
 *   others               - the store, the prompts, the compiler or the judge broke.
 * Whatever was learnt (stage A's program, calls) is kept in out and the store.
 */
int cuco_fastpath_agent_run(const struct cuco_fastpath_agent_config *cfg,
                            struct cuco_fastpath_agent_result *out, struct cuco_err *err);

/* The run stage through cuco_evaluate(): the candidate beside the workload's baseline. */
struct cuco_fastpath_cascade {
	const struct cuco_manifest *m; /* NULL: no workload, so nothing to verify against */
	const struct cuco_shape *shape;
	struct cuco_run_opts run;
};

/*
 * A cuco_fastpath_judge_fn (arg: struct cuco_fastpath_cascade) that runs
 * code beside the workload's baseline at one shape and verifies it. With
 * fewer GPUs than run.ranks (and no launcher) the verdict is CUCO_ERR_NO_GPU
 * without anything compiled; without a workload CUCO_ERR_UNSUPPORTED.
 */
int cuco_fastpath_judge_cascade(void *arg, int stage, const char *path, const char *code,
                                struct cuco_fastpath_verdict *v, struct cuco_err *err);

#endif
