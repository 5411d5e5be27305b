/*
 * llm_summarize.c - the meta-summarizer: every few generations the model
 * turns the statistical summary, the best programs and the common failures
 * into recommendations for later prompts.
 */
#include "search/llm_ledger.h"
#include "search/llm_summarize.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "store/store.h"

#define TOP_PROGRAMS 5 /* best programs shown to the meta-summarizer */

struct top {
	int64_t id[TOP_PROGRAMS];
	double fitness[TOP_PROGRAMS];
	int n;
};

static int top_one(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct top *t = arg;
	int at;

	(void)err;
	if (ev->error_code != CUCO_OK || !isfinite(ev->fitness) || ev->fitness <= 0)
		return 0;
	for (int i = 0; i < t->n; i++)
		if (t->id[i] == ev->program_id)
			return 0;
	at = t->n < TOP_PROGRAMS ? t->n++ : TOP_PROGRAMS - 1;
	if (at == TOP_PROGRAMS - 1 && t->n == TOP_PROGRAMS && t->fitness[at] >= ev->fitness &&
	    t->id[at])
		return 0;
	t->id[at] = ev->program_id;
	t->fitness[at] = ev->fitness;
	for (; at > 0 && t->fitness[at] > t->fitness[at - 1]; at--) {
		int64_t ti = t->id[at];
		double tf = t->fitness[at];
		t->id[at] = t->id[at - 1];
		t->fitness[at] = t->fitness[at - 1];
		t->id[at - 1] = ti;
		t->fitness[at - 1] = tf;
	}
	return 0;
}

/* The failures of the statistical summary JSON, one line each. */
static void failures_text(const char *statistical, struct cuco_strbuf *out)
{
	json_t *o = json_loads(statistical, 0, NULL), *a;
	size_t i;
	json_t *x;

	a = json_object_get(o, "errors");
	if (json_is_array(a) && json_array_size(a)) {
		json_array_foreach(a, i, x)
		{
			char *s = json_dumps(x, JSON_COMPACT | JSON_ENCODE_ANY);
			if (s)
				cuco_strbuf_addf(out, "- %s\n", s);
			free(s);
		}
	} else {
		cuco_strbuf_adds(out, "None recorded.\n");
	}
	json_decref(o);
}

int cuco_llm_op_summarize(void *ctx, int64_t run_id, int generation, const char *statistical,
                          struct cuco_err *err)
{
	struct cuco_llm_operator *op = ctx;
	struct cuco_strbuf user = CUCO_STRBUF_INIT, tops = CUCO_STRBUF_INIT,
	                   fails = CUCO_STRBUF_INIT, gen = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	struct cuco_llm_message msg;
	struct cuco_llm_call_opts co = {op->cfg.temps.summary, op->cfg.summary_max_tokens, NULL};
	struct cuco_err e2;
	struct top t;
	int rc = CUCO_OK, arm = 0;
	double best = -INFINITY;

	cuco_llm_result_init(&res);
	memset(&t, 0, sizeof(t));
	cuco_llm_operator_set_summary(op, statistical, NULL);
	if (!op->cfg.meta_summaries || cuco_llm_client_budget(op->client)->exhausted)
		goto out;
	if ((rc = cuco_store_eval_each_run(op->cfg.store, run_id, top_one, &t, err)))
		goto out;
	for (int i = 0; i < t.n; i++) {
		struct cuco_program_rec p;
		cuco_program_rec_init(&p);
		if ((rc = cuco_store_program_get(op->cfg.store, t.id[i], &p, err)))
			goto out;
		cuco_strbuf_addf(&tops, "- program %lld (%s, %s), fitness %.4f: %s\n",
		                 (long long)t.id[i], p.name ? p.name : "?",
		                 p.operator_ ? p.operator_ : "?", t.fitness[i],
		                 p.directive ? p.directive : "(no directive)");
		cuco_program_rec_release(&p);
	}
	if (!t.n)
		cuco_strbuf_adds(&tops, "None correct yet.\n");
	failures_text(statistical, &fails);
	cuco_strbuf_addf(&gen, "%d", generation);
	{
		struct cuco_strbuf stat = CUCO_STRBUF_INIT;
		cuco_prompt_add_clipped(&stat, statistical, MAX_STATS, 0);
		const struct cuco_prompt_var vars[] = {
		    {"workload", op->cfg.workload}, {"generation", gen.buf},
		    {"statistical", stat.buf},      {"top_programs", tops.buf},
		    {"failures", fails.buf},
		};
		rc = cuco_prompt_build(op->cfg.share_dir, "summarize", vars, 5, &user, NULL, err);
		cuco_strbuf_release(&stat);
		if (rc)
			goto out;
	}
	/* The model with the best mean reward so far writes the summary. */
	for (int i = 0; i < op->bandit.narms; i++) {
		double m =
		    op->bandit.pulls[i] ? op->bandit.sum[i] / (double)op->bandit.pulls[i] : 0;
		if (m > best) {
			best = m;
			arm = i;
		}
	}
	msg.role = "user";
	msg.content = user.buf;
	co.model = op->cfg.models[arm];
	cuco_err_clear(&e2);
	rc = cuco_llm_chat(op->client, &msg, 1, &co, &res, &e2);
	cuco_llm_op_count_call(op, arm, &res);
	if (rc == CUCO_ERR_UNSUPPORTED) { /* budget: the next breed stops the run */
		rc = cuco_llm_op_note_spent(op, run_id, err);
		goto out;
	}
	if (rc) {
		rc = cuco_llm_op_store_call(op, run_id, &res, 0, WHY_SUMMARY, "summary", err);
		goto out;
	}
	if ((rc = cuco_llm_op_store_call(op, run_id, &res, 0, NULL, "summary", err)) ||
	    (rc = cuco_store_summary_add(op->cfg.store, run_id, generation, "llm", res.reply, NULL,
	                                 err)))
		goto out;
	cuco_llm_operator_set_summary(op, NULL, res.reply);
out:
	cuco_llm_result_release(&res);
	cuco_strbuf_release(&user);
	cuco_strbuf_release(&tops);
	cuco_strbuf_release(&fails);
	cuco_strbuf_release(&gen);
	return rc;
}
