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

#include "search/llm_bandit.h"
#include "search/llm_settings.h"

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

#endif
