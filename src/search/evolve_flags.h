/*
 * evolve_flags.h - what a `cuco evolve` command line asks for, applied to a
 * run's config: a fresh run takes it; a resumed run keeps what defines it
 * (timing, statistic, schedule, shapes, operator) and refuses flags that
 * would change that, may raise its budgets, and takes the LLM endpoint
 * settings given for this process with a note.
 */
#ifndef CUCO_SEARCH_EVOLVE_FLAGS_H
#define CUCO_SEARCH_EVOLVE_FLAGS_H

#include <stdio.h>

#include "llm/client.h"
#include "search/evolve.h"
#include "util/error.h"

struct cuco_llm_stored;
struct cuco_run_rec;

/* The flags of one command line. Strings borrowed. */
struct cuco_evolve_flags {
	const char *workload;      /* the positional workload; NULL: not given */
	long long generations;     /* --generations; < 0: not given (and so on below) */
	long long islands;         /* --islands */
	long long children;        /* --children-per-island */
	long long budget_evals;    /* --budget-evals */
	long long search_seed;     /* --search-seed */
	double budget_minutes;     /* --budget-minutes */
	double explore;            /* --explore */
	const char *statistic;     /* --statistic; NULL: not given (and so on below) */
	const char *selection;     /* --selection */
	const char *migration;     /* --migration */
	long long best_of;         /* --best-of N: best_of_n's members drawn; < 0: not given */
	const char *freeze;        /* --freeze */
	const char *search;        /* --search */
	const char *template_path; /* --template */
	const char *timing;        /* --timing: "sustained" or "burst" */
	const char *operator_;     /* --operator: "builtin", "llm", "mixed" */
	double llm_share;          /* --llm-share; < 0: not given */
	int no_pipeline;           /* --no-pipeline given */
	/* this process's CUDA_DEVICE_MAX_CONNECTIONS; NULL: unset */
	const char *max_connections;
};

/* Nothing given. */
void cuco_evolve_flags_init(struct cuco_evolve_flags *f);

/*
 * Apply f to cfg. Fresh run (stored NULL): cfg starts at
 * cuco_evolve_config_default() and takes every flag given (the operator
 * "builtin" and its share 0 when f gives none; the timing "sustained"). A
 * resumed run (stored: its run row): cfg is read from stored->config; the
 * workload, timing, --statistic, --explore, --operator and --llm-share must
 * equal the stored ones (--operator and --llm-share are not checked for
 * a config stored before the operator was recorded: cfg->operator_ stays
 * "" and the caller decides as for a fresh run); --generations, the
 * budgets and --no-pipeline apply; the stored template is kept unless
 * f->template_path names one (cfg->template_path is what the run uses,
 * "" for none), and is found in the data folder's share/realize only
 * (cuco_evolve_flags_template(): never a path the store names). A resumed run started with other
 * hardware queues than f->max_connections gets a warning on notes (may be NULL). Returns CUCO_OK;
 * CUCO_ERR_USAGE for a flag the run refuses (err says which, what is stored and what to do: "drop
 * --timing"); CUCO_ERR_PARSE for a stored config that does not read; CUCO_ERR_INVALID for a stored
 * run naming no workload.
 */
int cuco_evolve_flags_apply(const struct cuco_evolve_flags *f, const struct cuco_run_rec *stored,
                            struct cuco_evolve_config *cfg, FILE *notes, struct cuco_err *err);

/*
 * The template a resumed run stored as `stored`, found in the data folder
 * realize_dir (share/realize) only: its file name there, which must be a
 * regular file inside that folder (links followed) holding a
 * "// cuco-realizes:" line. The path into out (n bytes; "" on error).
 * Returns CUCO_OK; CUCO_ERR_INVALID naming run, the stored path and what to
 * do (a path elsewhere, no such template, no marker line); CUCO_ERR_IO.
 */
int cuco_evolve_flags_template(const char *stored, const char *realize_dir, long long run,
                               char *out, size_t n, struct cuco_err *err);

/*
 * The shapes of the run into cfg->shapes: a fresh run's from given (names
 * as the manifest stores them; the default shape when ngiven is 0), a
 * resumed run's from its config (stored_shape, its row's shape, when the
 * config has none). A resumed run refuses a given list other than its own
 * (CUCO_ERR_USAGE, err naming both). run is the resumed run's id, 0 fresh.
 */
int cuco_evolve_flags_shapes(const char (*given)[32], int ngiven, const char *default_shape,
                             long long run, const char *stored_shape,
                             struct cuco_evolve_config *cfg, struct cuco_err *err);

/* The LLM endpoint flags of one command line, over a resumed run's stored settings. */
struct cuco_evolve_llm_flags {
	const char *const *models; /* --llm-model, in order */
	int nmodels;
	const char *api; /* NULL: not given (and so on below) */
	const char *base_url;
	const char *key_env;
	int diagnose;            /* --llm-diagnose given */
	long long budget_tokens; /* <= 0: not given (and so on below) */
	double budget_cost;
	double timeout_s;
	int max_tokens;
	const struct cuco_llm_price *prices;
	int nprices;
};

/*
 * A resumed run's LLM operator settings: read from its config JSON into
 * *st (release with cuco_llm_stored_release() in every case) when cfg's
 * operator is not "builtin" (*have 1; 0 otherwise). --llm-model must list
 * the stored models (the bandit's arms; CUCO_ERR_USAGE); --llm-base-url,
 * --llm-key-env, the budgets, --llm-timeout, --llm-max-tokens and
 * --llm-price replace the stored values for this process, each with a note
 * on notes (may be NULL); the stored config is unchanged. Returns CUCO_OK,
 * CUCO_ERR_USAGE, or CUCO_ERR_PARSE (settings missing or unreadable).
 */
int cuco_evolve_llm_resume(const struct cuco_evolve_llm_flags *f,
                           const struct cuco_evolve_config *cfg, const char *config, long long run,
                           struct cuco_llm_stored *st, int *have, FILE *notes,
                           struct cuco_err *err);

#endif
