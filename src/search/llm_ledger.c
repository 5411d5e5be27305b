/*
 * llm_ledger.c - the LLM operator's ledger (llm_ledger.h): each call counted
 * into its model's statistics and stored, the children whose evaluation is
 * still to come, and the budget's end noted in the store for a resume.
 */
#include "search/llm_ledger.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/store.h"
#include "util/array.h"
#include "util/xalloc.h"

/* Count a finished call into its model's statistics. */
void cuco_llm_op_count_call(struct cuco_llm_operator *op, int arm,
                            const struct cuco_llm_result *res)
{
	struct cuco_llm_model_stats *s = &op->stats[arm];

	if (res->attempts > 0)
		s->calls++;
	s->tokens += res->charged_tokens;
	if (isfinite(res->cost))
		s->cost += res->cost;
}

/* Store res (purpose: "mutation", "summary") for program_id (0: none) with why (may be NULL). */
int cuco_llm_op_store_call(struct cuco_llm_operator *op, int64_t run_id,
                           struct cuco_llm_result *res, int64_t program_id, const char *why,
                           const char *purpose, struct cuco_err *err)
{
	res->purpose = purpose;
	return cuco_llm_result_store_why(op->cfg.store, res, run_id, program_id, why, err);
}

/* Remember a stored child whose evaluation is still to come. */
void cuco_llm_op_add_judged(struct cuco_llm_operator *op, int64_t run_id, int64_t id, int arm,
                            double parent_fitness, double cost)
{
	struct judged *j = CUCO_ARRAY_PUSH(op->judged, op->njudged, op->ajudged);

	j->run_id = run_id;
	j->program_id = id;
	j->arm = arm;
	j->parent_fitness = parent_fitness;
	j->cost = cost;
}

/* The meta key that says a run's budget ran out, and under which budgets. */
void cuco_llm_op_spent_key(char *key, size_t n, int64_t run_id)
{
	snprintf(key, n, "llm_budget.run%lld", (long long)run_id);
}

int cuco_llm_op_note_spent(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err)
{
	char key[64], *text;
	json_t *o;
	int rc;

	if (op->spent_noted || !run_id || !cuco_llm_client_budget(op->client)->exhausted)
		return CUCO_OK;
	cuco_llm_op_spent_key(key, sizeof(key), run_id);
	o = json_pack("{s:I, s:f}", "budget_tokens", (json_int_t)op->cfg.llm.budget_tokens,
	              "budget_cost", op->cfg.llm.budget_cost);
	text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	rc = text ? cuco_store_meta_set(op->cfg.store, key, text, err)
	          : cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	op->spent_noted = rc == CUCO_OK;
	json_decref(o);
	free(text);
	return rc;
}

void cuco_llm_operator_set_summary(struct cuco_llm_operator *op, const char *statistical,
                                   const char *llm)
{
	if (statistical) {
		char *s = cuco_xstrdup(statistical);
		free(op->stat_summary);
		op->stat_summary = s;
	}
	if (llm) {
		char *s = cuco_xstrdup(llm);
		free(op->llm_summary);
		op->llm_summary = s;
	}
}
