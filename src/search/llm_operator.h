/*
 * llm_operator.h - the LLM mutation operator of the slow path: for each child
 * it picks a mutation kind from the phase schedule and a model with a UCB1
 * bandit, builds the prompt from share/prompts/ and the store (parent,
 * evaluation feedback, inspirations, meta-summaries), calls the model and
 * turns the reply into a candidate with cuco_llm_reply_apply(). Every call
 * is stored in llm_calls, linked to the candidate it produced or with the
 * reason it produced none. A reply cut off by finish_reason "length" is a
 * rejected reply; only calls that got no usable answer from the endpoint
 * count towards the failures in a row that end a run. Every K generations it also asks a model for
 * recommendations from the statistical summary (summaries kind 'llm'). With diagnose set, a
 * child that fails or is slower than its parent gets a diagnosis (llm_diagnose.h).
 *
 * It plugs into cuco_evolve_run() as a struct cuco_child_operator, so the
 * loop does not depend on libcurl.
 */
#ifndef CUCO_SEARCH_LLM_OPERATOR_H
#define CUCO_SEARCH_LLM_OPERATOR_H

#include <stdint.h>
#include <stdio.h>

#include "llm/client.h"
#include "program/directive.h"
#include "search/evolve.h"
#include "search/rng.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CUCO_LLM_MAX_MODELS 8 /* models one operator chooses from */

/* What one model did in a run. */
struct cuco_llm_model_stats {
	int64_t calls;    /* calls sent (mutations and summaries) */
	int64_t tokens;   /* tokens charged (usage, or the estimate) */
	double cost;      /* known cost; calls without a price add nothing */
	int64_t accepted; /* replies that became a candidate */
	int64_t improved; /* candidates fitter than their parent */
};

/*
 * UCB1 over models: reward of a mutation = max(0, child fitness - parent
 * fitness) / its cost (the call's cost when priced, else thousands of
 * tokens), scaled by the largest reward seen so far. Plain data.
 */
struct cuco_bandit {
	int narms;
	int64_t pulls[CUCO_LLM_MAX_MODELS]; /* times chosen (counted when chosen) */
	double sum[CUCO_LLM_MAX_MODELS];    /* of unscaled rewards */
	double max_reward;                  /* largest single reward, for scaling */
	int64_t total;                      /* pulls of all arms */
};

/* An empty bandit over narms (1..CUCO_LLM_MAX_MODELS) arms. */
void cuco_bandit_init(struct cuco_bandit *b, int narms);

/*
 * Choose an arm: the first never pulled, else the best mean/max_reward +
 * sqrt(2 ln total / pulls), ties broken by rng. Counts the pull. Returns
 * the arm index.
 */
int cuco_bandit_pick(struct cuco_bandit *b, struct cuco_rng *rng);

/* Credit arm with gain (clipped at 0) per cost (<= 0 or NaN counts as 1). */
void cuco_bandit_reward(struct cuco_bandit *b, int arm, double gain, double cost);

/* Current UCB1 score of arm (INFINITY when never pulled). */
double cuco_bandit_score(const struct cuco_bandit *b, int arm);

/* Temperatures of the operator's calls. */
struct cuco_llm_temps {
	double explore[3]; /* full rewrites while exploring, in rotation: 0.2, 0.5, 0.8 */
	double exploit;    /* diffs and rewrites while exploiting: 0.2 */
	double crossover;  /* crossovers: 0.5 */
	double summary;    /* meta-summaries: 0.3 */
};

/*
 * Operator configuration. Borrowed; everything must outlive the operator.
 * cuco_llm_operator_config_init() sets the defaults noted here.
 */
struct cuco_llm_operator_config {
	struct cuco_llm_config llm; /* endpoint, key variable, timeouts, budgets, prices;
	                               llm.model is ignored: models[] below */
	const char *models[CUCO_LLM_MAX_MODELS];
	int nmodels;
	const char *share_dir;            /* holds prompts/ */
	const char *workload;             /* name */
	const char *workload_description; /* "" when none */
	const char *shape;                /* name, or NULL */
	const char *fitness_shapes;       /* "4096, 8192" when fitness is the geometric mean over
	                                     several shapes (latencies the primary's); NULL: one */
	const struct cuco_design_space *ds;
	const char *design_space_text;     /* share/design_space.json as text */
	const struct cuco_hw_facts *facts; /* NULL: none known */
	struct cuco_store *store;
	uint64_t seed;      /* of mode, temperature and bandit choices */
	int meta_summaries; /* 1 (default): LLM recommendations beside each statistical summary */
	int summary_max_tokens;      /* completion limit of a meta-summary call: 1024 */
	int diagnose;                /* 1: a diagnosis of each failed or regressed LLM child
	                                (--llm-diagnose); 0 (default): none */
	int diagnose_max_tokens;     /* completion limit of a diagnosis call: 400 */
	struct cuco_llm_temps temps; /* defaults above */
};

/* Defaults: those of cuco_llm_config_init() and the fields above; no endpoint or model. */
void cuco_llm_operator_config_init(struct cuco_llm_operator_config *c);

/*
 * The settings of c that a run keeps, as a JSON object (malloc'd; NULL out
 * of memory): api, endpoint, models, key variable (its name only: the key itself
 * is never in c), max_tokens, timeouts, retries, budgets, prices,
 * temperatures, meta-summary and diagnosis settings. cuco evolve stores it as the run
 * config's "llm".
 */
char *cuco_llm_operator_config_to_json(const struct cuco_llm_operator_config *c);

/* Operator settings read back from a run config; owns the strings cfg points to. */
struct cuco_llm_stored {
	struct cuco_llm_operator_config cfg; /* the stored settings over the defaults */
	void *json;                          /* the parsed config (owner of the strings) */
};

/*
 * Read the "llm" object of a run config (JSON text) into *out: the stored
 * settings over cuco_llm_operator_config_init()'s defaults (store, share_dir,
 * workload, ... stay unset). *found is 0 when the config has no "llm" (a
 * builtin run, or one made before settings were stored); *out is then just
 * the defaults. Errors: CUCO_ERR_PARSE naming the field ("llm.models[1]: not
 * a string"). Release *out with cuco_llm_stored_release() in every case.
 */
int cuco_llm_stored_from_json(const char *run_config, struct cuco_llm_stored *out, int *found,
                              struct cuco_err *err);

/* Free what cuco_llm_stored_from_json() kept; NULL is allowed. */
void cuco_llm_stored_release(struct cuco_llm_stored *s);

struct cuco_llm_operator;

/*
 * Create an operator (free with cuco_llm_operator_free()) with one client for
 * the endpoint; the models share its budget. Errors: CUCO_ERR_USAGE (no
 * model, a model without a price under a cost budget, and those of
 * cuco_llm_client_new()), CUCO_ERR_IO/CUCO_ERR_PARSE (a prompt file),
 * CUCO_ERR_NOMEM. *out is NULL on error.
 */
int cuco_llm_operator_new(const struct cuco_llm_operator_config *cfg,
                          struct cuco_llm_operator **out, struct cuco_err *err);

/* Free the operator (children not yet stored are forgotten); NULL is allowed. */
void cuco_llm_operator_free(struct cuco_llm_operator *op);

/* Fill co with the operator's callbacks for cuco_evolve_run(), making share of the children. */
void cuco_llm_operator_bind(struct cuco_llm_operator *op, double share,
                            struct cuco_child_operator *co);

/*
 * End of a run: store the calls of children that were never stored (dropped
 * as near-duplicates) and the per-model statistics as meta key
 * "llm_models.run<run_id>" (JSON). Errors: CUCO_ERR_STORE.
 */
int cuco_llm_operator_finish(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err);

/* Models and their statistics (owned by the operator); returns how many. */
int cuco_llm_operator_stats(const struct cuco_llm_operator *op, const char *const **models,
                            const struct cuco_llm_model_stats **stats);

/* Print the per-model statistics as a '#' table to f. */
void cuco_llm_operator_print_stats(const struct cuco_llm_operator *op, FILE *f);

/*
 * Resume run_id: rebuild from the store what the operator had learnt, as if
 * it had not stopped: per-model statistics and the bandit from the run's
 * llm_calls and the evaluations of the children they became (children
 * stored but not yet evaluated are credited when they are), the budget
 * spent (diagnosis calls included; they are no bandit pulls), the client's
 * call index (so sampling seeds do not repeat) and each
 * model's prompt bytes per token (from the calls' usage), and the latest
 * statistical and LLM meta-summaries. A run stopped
 * between a statistical summary and its meta-summary gets the meta-summary
 * now (one call). Call before cuco_evolve_run(). Calls whose reply had no
 * usage are counted at the client's estimate from the stored prompt and
 * reply. Errors: those of the store, CUCO_ERR_NOMEM, and a meta-summary's.
 */
int cuco_llm_operator_resume(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err);

/* The model bandit (owned by the operator). */
const struct cuco_bandit *cuco_llm_operator_bandit(const struct cuco_llm_operator *op);

/* The latest meta-summaries the operator puts into prompts (owned by it; NULL: none yet). */
void cuco_llm_operator_summaries(const struct cuco_llm_operator *op, const char **statistical,
                                 const char **llm);

/*
 * Build the two messages of one mutation (mode: enum cuco_llm_mode) of
 * parent_id with partner_id (crossover; 0 otherwise) and inspirations, from
 * the store: the system prompt (design space, hardware, NCCL guide, the
 * workload) into sys, the user prompt (parent program, its latest evaluation
 * - stage, status, error, timings; with diagnose, its diagnosis and the
 * latest diagnoses of its earlier children - inspirations, the latest
 * meta-summaries) into user. The parent's code goes into *parent_code (malloc'd) when
 * parent_code is non-NULL. Errors: those of the store and the prompts.
 */
int cuco_llm_operator_prompt(struct cuco_llm_operator *op, int mode, int64_t parent_id,
                             int64_t partner_id, const int64_t *inspirations, int ninspirations,
                             struct cuco_strbuf *sys, struct cuco_strbuf *user, char **parent_code,
                             struct cuco_err *err);

/*
 * Give the operator the latest meta-summaries for later prompts (either may
 * be NULL to keep the current one). Copies them.
 */
void cuco_llm_operator_set_summary(struct cuco_llm_operator *op, const char *statistical,
                                   const char *llm);

#endif
