/*
 * llm_resume.c - a resumed run's LLM operator: its bandit, statistics, budget
 * and meta-summaries rebuilt from the run's stored history, as the live
 * operator left them.
 */
#include "search/llm_ledger.h"
#include "search/llm_operator.h"
#include "search/llm_summarize.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/llm_diagnose.h"
#include "store/store.h"
#include "util/array.h"
#include "util/xalloc.h"

/* A program of the run as the loop saw it: its first evaluation and its parent. */
struct seen {
	int64_t id, parent;
	int evaluated, correct;
	double fitness;
};

struct history {
	struct cuco_llm_operator *op;
	struct seen *p; /* ascending ids: programs come oldest first */
	int n;
	size_t alloc;
	int summary_calls, stat_summaries;
	int64_t calls; /* stored calls: the client's next call index */
	int64_t stat_generation, llm_generation;
	int64_t tokens;
	double cost;
};

static struct seen *seen_find(struct history *h, int64_t id)
{
	int lo = 0, hi = h->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (h->p[mid].id == id)
			return &h->p[mid];
		if (h->p[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int hist_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct history *h = arg;
	struct seen *x;

	(void)err;
	x = CUCO_ARRAY_PUSH(h->p, h->n, h->alloc);
	memset(x, 0, sizeof(*x));
	x->id = p->id;
	for (size_t i = 0; i < p->nparents && !x->parent; i++)
		if (!p->parents[i].kind || !strcmp(p->parents[i].kind, "parent"))
			x->parent = p->parents[i].id;
	return 0;
}

static int hist_eval(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct seen *x = seen_find(arg, ev->program_id);

	(void)err;
	if (!x || x->evaluated) /* the loop keeps a program's first evaluation */
		return 0;
	x->evaluated = 1;
	x->correct = ev->error_code == CUCO_OK && !strcmp(ev->status, "ok");
	x->fitness = x->correct && isfinite(ev->fitness) ? ev->fitness : 0;
	return 0;
}

/* One stored call, counted as the live operator counted it. */
static int hist_call(const struct cuco_llm_call_rec *c, void *arg, struct cuco_err *err)
{
	struct history *h = arg;
	struct cuco_llm_operator *op = h->op;
	struct cuco_llm_model_stats *s;
	struct seen *x, *parent;
	int64_t tokens;
	double cost, pf;
	int arm = -1;

	(void)err;
	h->calls++;
	if (c->tokens_in >= 0 && c->tokens_out >= 0)
		tokens = c->tokens_in + c->tokens_out;
	else /* no usage: the client's estimate, from what was stored */
		tokens = cuco_llm_estimate_call(c->prompt, c->reply);
	if (c->tokens_in > 0)
		cuco_llm_client_learn(op->client, c->model, c->prompt, c->tokens_in);
	h->tokens += tokens;
	if (isfinite(c->cost))
		h->cost += c->cost;
	for (int i = 0; i < op->cfg.nmodels && arm < 0; i++)
		if (c->model && !strcmp(c->model, op->cfg.models[i]))
			arm = i;
	if (arm < 0)
		return 0;
	s = &op->stats[arm];
	s->calls++;
	s->tokens += tokens;
	if (isfinite(c->cost))
		s->cost += c->cost;
	if (c->purpose && !strcmp(c->purpose, CUCO_LLM_DIAGNOSIS_PURPOSE))
		return 0; /* counted above; its text is in the evaluation */
	if ((c->purpose && !strcmp(c->purpose, "summary")) ||
	    (!c->purpose && !c->program_id &&
	     (!c->error || !strncmp(c->error, WHY_SUMMARY, strlen(WHY_SUMMARY))))) {
		h->summary_calls++;
		return 0;
	}
	/* a mutation: the pull, then its reward as the live run gave it */
	op->bandit.pulls[arm]++;
	op->bandit.total++;
	cost = isfinite(c->cost) && c->cost > 0 ? c->cost
	       : tokens > 0                     ? (double)tokens / 1000.0
	                                        : 1.0;
	if (!c->program_id) {
		if (c->error && !strncmp(c->error, WHY_DROPPED, strlen(WHY_DROPPED)))
			s->accepted++;
		cuco_bandit_reward(&op->bandit, arm, 0, cost);
		return 0;
	}
	s->accepted++;
	x = seen_find(h, c->program_id);
	parent = x ? seen_find(h, x->parent) : NULL;
	pf = parent && parent->correct ? parent->fitness : 0;
	if (!x || !x->evaluated) {
		cuco_llm_op_add_judged(op, c->run_id, c->program_id, arm, pf, cost);
		return 0;
	}
	cuco_bandit_reward(&op->bandit, arm, (x->correct ? x->fitness : 0) - pf, cost);
	if (x->correct && x->fitness > pf)
		s->improved++;
	return 0;
}

static int hist_summary(const struct cuco_summary_rec *sum, void *arg, struct cuco_err *err)
{
	struct history *h = arg;
	int stat = !strcmp(sum->kind, "statistical");

	(void)err;
	if (!stat && strcmp(sum->kind, "llm"))
		return 0;
	if (stat) {
		h->stat_summaries++;
		h->stat_generation = sum->generation;
	} else {
		h->llm_generation = sum->generation;
	}
	cuco_llm_operator_set_summary(h->op, stat ? sum->text : NULL, stat ? NULL : sum->text);
	return 0;
}

/* A budget raised over the one a run ran out under (0: none, the highest). */
static int raised(double now, double then)
{
	return (now <= 0 && then > 0) || (then > 0 && now > then);
}

/*
 * The run's budget ran out under budgets this process has not raised: the
 * client starts spent, and the resumed run asks the model nothing more.
 */
static int restore_spent(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err)
{
	char key[64], *text = NULL;
	json_t *o = NULL;
	int rc;

	cuco_llm_op_spent_key(key, sizeof(key), run_id);
	if ((rc = cuco_store_meta_get(op->cfg.store, key, &text, err)) || !text)
		goto out;
	o = json_loads(text, 0, NULL);
	if (!json_is_number(json_object_get(o, "budget_tokens")) ||
	    !json_is_number(json_object_get(o, "budget_cost"))) {
		rc = cuco_err_set(
		    err, CUCO_ERR_PARSE,
		    "run %lld: meta %s: not {\"budget_tokens\": N, \"budget_cost\": X}",
		    (long long)run_id, key);
		goto out;
	}
	if (!raised((double)op->cfg.llm.budget_tokens,
	            json_number_value(json_object_get(o, "budget_tokens"))) &&
	    !raised(op->cfg.llm.budget_cost,
	            json_number_value(json_object_get(o, "budget_cost")))) {
		cuco_llm_client_exhaust(op->client);
		op->spent_noted = 1;
	}
out:
	json_decref(o);
	free(text);
	return rc;
}

int cuco_llm_operator_resume(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err)
{
	struct history h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.op = op;
	h.stat_generation = h.llm_generation = -1;
	if ((rc = cuco_store_program_each(op->cfg.store, run_id, hist_program, &h, err)) ||
	    (rc = cuco_store_eval_each_run(op->cfg.store, run_id, hist_eval, &h, err)) ||
	    (rc = cuco_store_llm_call_each_run(op->cfg.store, run_id, hist_call, &h, err)) ||
	    (rc = cuco_store_summary_each_run(op->cfg.store, run_id, hist_summary, &h, err)))
		goto out;
	cuco_llm_client_charge(op->client, h.tokens, h.cost);
	cuco_llm_client_set_calls(op->client, h.calls);
	if ((rc = restore_spent(op, run_id, err)))
		goto out;
	/* Stopped between a statistical summary and its meta-summary: write it now. */
	if (op->cfg.meta_summaries && op->stat_summary && h.stat_summaries > h.summary_calls &&
	    h.llm_generation < h.stat_generation) {
		char *stat = cuco_xstrdup(op->stat_summary);
		rc = cuco_llm_op_summarize(op, run_id, (int)h.stat_generation, stat, err);
		free(stat);
	}
out:
	free(h.p);
	return rc;
}
