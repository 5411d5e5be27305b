/*
 * llm_ledger.h - the LLM operator's state and its ledger (llm_ledger.c): its
 * calls counted and stored, the children awaiting judgement, the budget's
 * end noted. The lowest file the operator's core (llm_operator.c), the
 * meta-summarizer (llm_summarize.c) and the resume (llm_resume.c) share;
 * private to src/search/.
 */
#ifndef CUCO_SEARCH_LLM_LEDGER_H
#define CUCO_SEARCH_LLM_LEDGER_H

#include "llm/client.h"
#include "search/llm_bandit.h"
#include "search/llm_settings.h"
#include "search/rng.h"

/* How stored calls without a program begin their error (read back on resume). */
#define WHY_SUMMARY "meta-summary call failed"
#define WHY_DROPPED "reply dropped"
#define MAX_STATS 6000 /* bytes of the statistical summary in a prompt */

/* A child made by the operator, its call waiting for the loop to store it. */
struct waiting {
	char name[48];
	int64_t run_id;
	int arm;
	double parent_fitness;
	double cost; /* for the bandit */
	struct cuco_llm_result res;
};

/* A stored child awaiting its evaluation. */
struct judged {
	int64_t run_id;
	int64_t program_id;
	int arm;
	double parent_fitness;
	double cost;
};

struct cuco_llm_operator {
	struct cuco_llm_operator_config cfg;
	struct cuco_llm_client *client;
	struct cuco_bandit bandit;
	struct cuco_llm_model_stats stats[CUCO_LLM_MAX_MODELS];
	struct cuco_rng rng;
	char *system; /* rendered system prompt (fixed for the run) */
	char *stat_summary, *llm_summary;
	struct waiting *wait;
	int nwait;
	size_t await;
	struct judged *judged;
	int njudged;
	size_t ajudged;
	int spent_noted; /* the budget's running out is stored (llm_budget.run<N>) */
	int rotation;    /* exploration temperatures rotate */
	int fails;       /* calls failed in a row */
};

/* Count a finished call into its model's statistics. */
void cuco_llm_op_count_call(struct cuco_llm_operator *op, int arm,
                            const struct cuco_llm_result *res);

/* Store res (purpose: "mutation", "summary") for program_id (0: none) with why (may be NULL). */
int cuco_llm_op_store_call(struct cuco_llm_operator *op, int64_t run_id,
                           struct cuco_llm_result *res, int64_t program_id, const char *why,
                           const char *purpose, struct cuco_err *err);

/* Remember a stored child whose evaluation is still to come. */
void cuco_llm_op_add_judged(struct cuco_llm_operator *op, int64_t run_id, int64_t id, int arm,
                            double parent_fitness, double cost);

/*
 * Once the client's budget is spent, store so (meta key llm_budget.run<N>:
 * the budgets it ran out under), once: a resume that does not raise them
 * asks the model nothing more (cuco_llm_operator_resume()). CUCO_OK, or the
 * store's error.
 */
int cuco_llm_op_note_spent(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err);

/*
 * Give the operator the latest meta-summaries for later prompts (either may
 * be NULL to keep the current one). Copies them.
 */
void cuco_llm_operator_set_summary(struct cuco_llm_operator *op, const char *statistical,
                                   const char *llm);

/* The meta key that says run_id's budget ran out, and under which budgets, into key. */
void cuco_llm_op_spent_key(char *key, size_t n, int64_t run_id);

#endif
