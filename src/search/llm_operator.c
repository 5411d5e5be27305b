/*
 * llm_operator.c - the LLM mutation operator of the slow path (see
 * llm_operator.h): mode schedule, prompt assembly from the store, calls, and
 * their records. Its model bandit is in llm_bandit.c, its settings' JSON in
 * llm_settings.c, the meta-summarizer in llm_summarize.c and the resume in
 * llm_resume.c.
 */
#include "search/llm_ledger.h"
#include "search/llm_operator.h"
#include "search/llm_summarize.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "llm/reply.h"
#include "search/llm_diagnose.h"
#include "store/store.h"
#include "util/array.h"
#include "util/xalloc.h"

#define FAIL_LIMIT 3      /* calls failing in a row (after the client's retries) that end the run */
#define MAX_FEEDBACK 2000 /* bytes of an error or compile log in a prompt */
#define MAX_INSP_CODE 6000 /* bytes of the best inspiration's EVOLVE-BLOCKs */

/* ---- the operator ---- */

static int build_system(struct cuco_llm_operator *op, struct cuco_err *err)
{
	struct cuco_strbuf guide = CUCO_STRBUF_INIT, hw = CUCO_STRBUF_INIT, sys = CUCO_STRBUF_INIT;
	int rc;

	cuco_prompt_hardware(op->cfg.facts, &hw);
	if ((rc = cuco_prompt_load(op->cfg.share_dir, "nccl_guide", &guide, NULL, err)))
		goto out;
	{
		const struct cuco_prompt_var vars[] = {
		    {"design_space", op->cfg.design_space_text ? op->cfg.design_space_text : "{}"},
		    {"hardware", hw.buf},
		    {"nccl_guide", guide.buf},
		    {"workload", op->cfg.workload},
		    {"shape", op->cfg.shape ? op->cfg.shape : "its default shape"},
		    {"description", op->cfg.workload_description && *op->cfg.workload_description
		                        ? op->cfg.workload_description
		                        : "(no description)"},
		};
		if ((rc = cuco_prompt_build(op->cfg.share_dir, "system", vars, 3, &sys, NULL, err)))
			goto out;
		cuco_strbuf_adds(&sys, "\n");
		if ((rc = cuco_prompt_build(op->cfg.share_dir, "workload", vars + 3, 3, &sys, NULL,
		                            err)))
			goto out;
	}
	op->system = cuco_strbuf_detach(&sys, NULL);
out:
	cuco_strbuf_release(&guide);
	cuco_strbuf_release(&hw);
	cuco_strbuf_release(&sys);
	return rc;
}

int cuco_llm_operator_new(const struct cuco_llm_operator_config *cfg,
                          struct cuco_llm_operator **out, struct cuco_err *err)
{
	struct cuco_llm_operator *op = cuco_xcalloc(1, sizeof(*op));
	struct cuco_llm_config lc;
	int rc = CUCO_OK;

	*out = NULL;
	op->cfg = *cfg;
	if (cfg->nmodels < 1 || cfg->nmodels > CUCO_LLM_MAX_MODELS) {
		rc = cuco_err_set(err, CUCO_ERR_USAGE, "llm operator: give 1 to %d models, not %d",
		                  CUCO_LLM_MAX_MODELS, cfg->nmodels);
		goto out;
	}
	for (int i = 0; i < cfg->nmodels; i++)
		if (cfg->llm.budget_cost > 0 &&
		    isnan(cuco_llm_price_cost(&cfg->llm, cfg->models[i], 1, 1))) {
			rc = cuco_err_set(err, CUCO_ERR_USAGE,
			                  "llm: a cost budget is set but model '%s' has no price; "
			                  "add it with --llm-price %s=IN,OUT",
			                  cfg->models[i], cfg->models[i]);
			goto out;
		}
	lc = cfg->llm;
	lc.model = cfg->models[0];
	if ((rc = cuco_llm_client_new(&lc, &op->client, err)) || (rc = build_system(op, err)))
		goto out;
	cuco_bandit_init(&op->bandit, cfg->nmodels);
	cuco_rng_seed_stream(&op->rng, cfg->seed, 0x11a0);
out:
	if (rc) {
		cuco_llm_operator_free(op);
		op = NULL;
	}
	*out = op;
	return rc;
}

void cuco_llm_operator_free(struct cuco_llm_operator *op)
{
	if (!op)
		return;
	for (int i = 0; i < op->nwait; i++)
		cuco_llm_result_release(&op->wait[i].res);
	free(op->wait);
	free(op->judged);
	free(op->system);
	free(op->stat_summary);
	free(op->llm_summary);
	cuco_llm_client_free(op->client);
	free(op);
}

/* ---- prompt assembly ---- */

/* The latest evaluation of a program, as prompt text. */
struct feedback {
	struct cuco_strbuf *sb;
	int n;
	const char *shapes; /* the run's shapes when fitness covers several; NULL: one */
	int diagnoses;      /* 1: show the evaluation's diagnosis (--llm-diagnose) */
};

static int feedback_one(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct feedback *f = arg;
	struct cuco_strbuf *sb = f->sb;

	(void)err;
	cuco_strbuf_reset(sb); /* keep the latest */
	f->n++;
	cuco_strbuf_addf(sb, "- stage reached: %s, status: %s\n",
	                 ev->stage_reached ? ev->stage_reached : "?", ev->status);
	if (isfinite(ev->median_us) && f->shapes)
		cuco_strbuf_addf(sb, "- median latency at shape %s: %.2f us\n",
		                 ev->shape ? ev->shape : "?", ev->median_us);
	else if (isfinite(ev->median_us))
		cuco_strbuf_addf(sb, "- median latency: %.2f us\n", ev->median_us);
	if (isfinite(ev->fitness) && f->shapes)
		cuco_strbuf_addf(sb,
		                 "- fitness (geometric mean over shapes %s of baseline / latency): "
		                 "%.4f\n",
		                 f->shapes, ev->fitness);
	else if (isfinite(ev->fitness))
		cuco_strbuf_addf(sb, "- fitness (baseline / latency): %.4f\n", ev->fitness);
	if (isfinite(ev->rel_err))
		cuco_strbuf_addf(sb, "- max relative error against the reference: %.3g\n",
		                 ev->rel_err);
	if (ev->error && *ev->error) {
		cuco_strbuf_adds(sb, "- error: ");
		cuco_prompt_add_clipped(sb, ev->error, MAX_FEEDBACK, 0);
		cuco_strbuf_adds(sb, "\n");
	}
	if (ev->compile_log && *ev->compile_log && ev->error_code != CUCO_OK) {
		cuco_strbuf_adds(sb, "- compiler output:\n```\n");
		cuco_prompt_add_clipped(sb, ev->compile_log, MAX_FEEDBACK, 1);
		cuco_strbuf_adds(sb, "\n```\n");
	} else if (ev->run_log && *ev->run_log && ev->error_code != CUCO_OK) {
		cuco_strbuf_adds(sb, "- run output:\n```\n");
		cuco_prompt_add_clipped(sb, ev->run_log, MAX_FEEDBACK, 1);
		cuco_strbuf_adds(sb, "\n```\n");
	}
	if (f->diagnoses && ev->diagnosis && *ev->diagnosis) {
		cuco_strbuf_adds(sb, "- a model's diagnosis of this evaluation, from its log:\n");
		cuco_prompt_add_clipped(sb, ev->diagnosis, CUCO_LLM_DIAGNOSIS_MAX, 0);
		cuco_strbuf_adds(sb, "\n");
	}
	return 0;
}

static int add_feedback(struct cuco_llm_operator *op, int64_t id, struct cuco_strbuf *out,
                        struct cuco_err *err)
{
	struct cuco_strbuf one = CUCO_STRBUF_INIT;
	struct feedback f = {&one, 0, op->cfg.fitness_shapes, op->cfg.diagnose};
	int rc = cuco_store_eval_each_program(op->cfg.store, id, feedback_one, &f, err);

	if (rc == CUCO_OK) {
		if (f.n)
			cuco_strbuf_adds(out, one.buf);
		else
			cuco_strbuf_adds(out, "- not evaluated yet\n");
	}
	cuco_strbuf_release(&one);
	return rc;
}

static int add_inspirations(struct cuco_llm_operator *op, const int64_t *ids, int n, int64_t skip,
                            struct cuco_strbuf *out, struct cuco_err *err)
{
	int shown = 0, rc = CUCO_OK;

	for (int i = 0; i < n; i++) {
		struct cuco_program_rec p;
		if (ids[i] == skip)
			continue;
		cuco_program_rec_init(&p);
		if ((rc = cuco_store_program_get(op->cfg.store, ids[i], &p, err)))
			return rc;
		cuco_strbuf_addf(out, "## Program %lld (%s)\n", (long long)ids[i],
		                 p.name ? p.name : "?");
		cuco_strbuf_addf(out, "directive: %s\n", p.directive ? p.directive : "(none)");
		rc = add_feedback(op, ids[i], out, err);
		if (rc == CUCO_OK && shown == 0) {
			cuco_strbuf_adds(out, "Its EVOLVE-BLOCKs:\n```cuda\n");
			cuco_llm_add_blocks(out, p.code, MAX_INSP_CODE);
			cuco_strbuf_adds(out, "```\n");
		}
		cuco_program_rec_release(&p);
		if (rc)
			return rc;
		shown++;
	}
	if (!shown)
		cuco_strbuf_adds(out, "None yet.\n");
	return CUCO_OK;
}

static void add_meta(const struct cuco_llm_operator *op, struct cuco_strbuf *out)
{
	if (!op->llm_summary && !op->stat_summary) {
		cuco_strbuf_adds(out, "Nothing yet: this is an early generation.\n");
		return;
	}
	if (op->llm_summary) {
		cuco_strbuf_adds(out, "Recommendations:\n");
		cuco_strbuf_adds(out, op->llm_summary);
		cuco_strbuf_adds(out, "\n");
	}
	if (op->stat_summary) {
		cuco_strbuf_adds(out, "Statistics (JSON: fitness by directive value, failures):\n");
		cuco_prompt_add_clipped(out, op->stat_summary, MAX_STATS, 0);
		cuco_strbuf_adds(out, "\n");
	}
}

int cuco_llm_operator_prompt(struct cuco_llm_operator *op, int mode, int64_t parent_id,
                             int64_t partner_id, const int64_t *inspirations, int ninspirations,
                             struct cuco_strbuf *sys, struct cuco_strbuf *user, char **parent_code,
                             struct cuco_err *err)
{
	struct cuco_strbuf fb = CUCO_STRBUF_INIT, insp = CUCO_STRBUF_INIT, meta = CUCO_STRBUF_INIT,
	                   pb = CUCO_STRBUF_INIT;
	struct cuco_program_rec parent, partner;
	const char *name = cuco_llm_mode_name(mode);
	int rc;

	cuco_program_rec_init(&parent);
	cuco_program_rec_init(&partner);
	if (!name) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "llm operator: mode %d", mode);
		goto out;
	}
	if ((rc = cuco_store_program_get(op->cfg.store, parent_id, &parent, err)) ||
	    (rc = add_feedback(op, parent_id, &fb, err)) ||
	    (op->cfg.diagnose &&
	     (rc = cuco_llm_diagnoses_of_children(op->cfg.store, parent_id, &fb, err))) ||
	    (rc = add_inspirations(op, inspirations, ninspirations,
	                           mode == CUCO_LLM_MODE_CROSSOVER ? partner_id : 0, &insp, err)))
		goto out;
	add_meta(op, &meta);
	if (mode == CUCO_LLM_MODE_CROSSOVER) {
		if ((rc = cuco_store_program_get(op->cfg.store, partner_id, &partner, err)))
			goto out;
		cuco_strbuf_adds(&pb, partner.code);
		cuco_strbuf_adds(&pb, "\n```\n\nHow program B did:\n");
		if ((rc = add_feedback(op, partner_id, &pb, err)))
			goto out;
		cuco_strbuf_adds(&pb, "```cuda\n// (end of program B)");
	}
	{
		const struct cuco_prompt_var vars[] = {
		    {"workload", op->cfg.workload}, {"parent", parent.code},
		    {"feedback", fb.buf},           {"inspirations", insp.buf},
		    {"meta_summary", meta.buf},     {"parent_b", pb.buf},
		};
		cuco_strbuf_adds(sys, op->system);
		if ((rc = cuco_prompt_build(op->cfg.share_dir, name, vars, 6, user, NULL, err)))
			goto out;
	}
	if (parent_code)
		*parent_code = cuco_xstrdup(parent.code);
out:
	cuco_program_rec_release(&parent);
	cuco_program_rec_release(&partner);
	cuco_strbuf_release(&fb);
	cuco_strbuf_release(&insp);
	cuco_strbuf_release(&meta);
	cuco_strbuf_release(&pb);
	return rc;
}

/* ---- calls and their records ---- */

/* What the bandit charges for a call: its price, else thousands of tokens. */
static double call_cost(const struct cuco_llm_result *res)
{
	if (isfinite(res->cost) && res->cost > 0)
		return res->cost;
	return res->charged_tokens > 0 ? (double)res->charged_tokens / 1000.0 : 1.0;
}

/* Mutation kind and temperature of the next child (the phase schedule). */
static int choose_mode(struct cuco_llm_operator *op, const struct cuco_breed_request *rq,
                       double *temperature)
{
	const struct cuco_llm_temps *t = &op->cfg.temps;
	double u = cuco_rng_unit(&op->rng);

	if (!rq->exploit) { /* mostly full rewrites, bolder and bolder; some crossover */
		if (rq->ninspirations > 0 && u < 0.25) {
			*temperature = t->crossover;
			return CUCO_LLM_MODE_CROSSOVER;
		}
		*temperature = t->explore[op->rotation++ % 3];
		return CUCO_LLM_MODE_REWRITE;
	}
	*temperature = t->exploit; /* exploitation: mostly small diffs */
	if (u < 0.8)
		return CUCO_LLM_MODE_DIFF;
	if (u < 0.9 || rq->ninspirations == 0)
		return CUCO_LLM_MODE_REWRITE;
	return CUCO_LLM_MODE_CROSSOVER;
}

static const char *op_name(int mode)
{
	return mode == CUCO_LLM_MODE_DIFF      ? "llm-diff"
	       : mode == CUCO_LLM_MODE_REWRITE ? "llm-rewrite"
	                                       : "llm-crossover";
}

/* Store the call of a child the loop never stored (a near-duplicate) and forget it. */
static int drop_waiting(struct cuco_llm_operator *op, int i, int64_t run_id, struct cuco_err *err)
{
	struct waiting *w = &op->wait[i];
	int rc = cuco_llm_op_store_call(op, run_id ? run_id : w->run_id, &w->res, 0,
	                                WHY_DROPPED
	                                ": the child was a near-duplicate of an existing candidate",
	                                "mutation", err);

	cuco_bandit_reward(&op->bandit, w->arm, 0, w->cost);
	cuco_llm_result_release(&w->res);
	op->wait[i] = op->wait[--op->nwait];
	return rc;
}

static int op_breed(void *ctx, const struct cuco_breed_request *rq, struct cuco_breed_child *out,
                    struct cuco_err *err)
{
	struct cuco_llm_operator *op = ctx;
	struct cuco_strbuf sys = CUCO_STRBUF_INIT, user = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	struct cuco_llm_edit edit;
	struct cuco_llm_call_opts co;
	struct cuco_llm_message msgs[2];
	struct cuco_err e2;
	char *parent = NULL, why[96];
	int64_t partner = 0;
	double temperature;
	int mode, arm, rc = CUCO_OK;

	cuco_llm_result_init(&res);
	cuco_llm_edit_init(&edit);
	cuco_err_clear(&e2);
	/* A retry of the same slot: its earlier child was a near-duplicate. */
	for (int i = 0; i < op->nwait; i++)
		if (!strcmp(op->wait[i].name, rq->name)) {
			if ((rc = drop_waiting(op, i, rq->run_id, err)))
				goto out;
			break;
		}
	if (cuco_llm_client_budget(op->client)->exhausted) {
		rc = cuco_err_set(err, CUCO_ERR_UNSUPPORTED, "llm budget exhausted");
		goto out;
	}
	mode = choose_mode(op, rq, &temperature);
	if (mode == CUCO_LLM_MODE_CROSSOVER)
		partner = rq->inspirations[cuco_rng_below(&op->rng, (uint64_t)rq->ninspirations)];
	if ((rc = cuco_llm_operator_prompt(op, mode, rq->parent_id, partner, rq->inspirations,
	                                   rq->ninspirations, &sys, &user, &parent, err)))
		goto out;
	arm = cuco_bandit_pick(&op->bandit, &op->rng);
	msgs[0].role = "system";
	msgs[0].content = sys.buf;
	msgs[1].role = "user";
	msgs[1].content = user.buf;
	co.temperature = temperature;
	co.max_tokens = -1;
	co.model = op->cfg.models[arm];
	rc = cuco_llm_chat(op->client, msgs, 2, &co, &res, &e2);
	cuco_llm_op_count_call(op, arm, &res);
	if (rc == CUCO_ERR_UNSUPPORTED) { /* the budget: nothing was sent */
		op->bandit.pulls[arm]--;
		op->bandit.total--;
		if (cuco_llm_op_note_spent(op, rq->run_id, err) == CUCO_OK)
			cuco_err_set(err, rc, "%s", e2.msg);
		else
			rc = err->code;
		goto out;
	}
	snprintf(why, sizeof(why), "%s call for %s failed", op_name(mode), rq->name);
	if (rc && res.truncated) {
		/* the endpoint works; the reply is unusable: rejected, like any bad reply */
		snprintf(why, sizeof(why), "%s reply for %s rejected", op_name(mode), rq->name);
		op->fails = 0;
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		rc = cuco_llm_op_store_call(op, rq->run_id, &res, 0, why, "mutation", err);
		goto out;
	}
	if (rc) {
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		if ((rc = cuco_llm_op_store_call(op, rq->run_id, &res, 0, why, "mutation", err)))
			goto out;
		if (++op->fails >= FAIL_LIMIT) {
			rc = cuco_err_set(err, e2.code,
			                  "llm: %d calls in a row failed, the last: %s; check the "
			                  "endpoint (--llm-base-url) and the model (--llm-model)",
			                  op->fails, e2.msg);
			goto out;
		}
		goto out; /* no child this attempt */
	}
	op->fails = 0;
	if (cuco_llm_reply_apply("parent.cu", parent, res.reply, mode, op->cfg.ds, op->cfg.facts,
	                         &edit, &e2)) {
		snprintf(why, sizeof(why), "%s reply for %s rejected", op_name(mode), rq->name);
		free(res.error);
		res.error = cuco_xstrdup(edit.reason ? edit.reason : e2.msg);
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		rc = cuco_llm_op_store_call(op, rq->run_id, &res, 0, why, "mutation", err);
		goto out;
	}
	{
		struct waiting *w = CUCO_ARRAY_PUSH(op->wait, op->nwait, op->await);
		snprintf(w->name, sizeof(w->name), "%s", rq->name);
		w->run_id = rq->run_id;
		w->arm = arm;
		w->parent_fitness = rq->parent_fitness;
		w->cost = call_cost(&res);
		w->res = res; /* moved */
		cuco_llm_result_init(&res);
	}
	op->stats[arm].accepted++;
	out->code = edit.code;
	out->directive_json = edit.directive_json;
	out->flags = edit.flags;
	edit.code = edit.directive_json = edit.flags = NULL;
	out->op_name = op_name(mode);
	out->partner_id = partner;
out:
	cuco_llm_result_release(&res);
	cuco_llm_edit_release(&edit);
	cuco_strbuf_release(&sys);
	cuco_strbuf_release(&user);
	free(parent);
	return rc;
}

static int op_stored(void *ctx, const char *const *names, const int64_t *ids, int n,
                     struct cuco_err *err)
{
	struct cuco_llm_operator *op = ctx;
	int rc = CUCO_OK;

	for (int i = op->nwait - 1; i >= 0 && !rc; i--) {
		struct waiting *w = &op->wait[i];
		int64_t id = 0;
		for (int k = 0; k < n && !id; k++)
			if (!strcmp(names[k], w->name))
				id = ids[k];
		if (!id) {
			rc = drop_waiting(op, i, 0, err);
			continue;
		}
		if ((rc =
		         cuco_llm_op_store_call(op, w->run_id, &w->res, id, NULL, "mutation", err)))
			break;
		cuco_llm_op_add_judged(op, w->run_id, id, w->arm, w->parent_fitness, w->cost);
		cuco_llm_result_release(&w->res);
		op->wait[i] = op->wait[--op->nwait];
	}
	return rc;
}

static int op_evaluated(void *ctx, int64_t program_id, int correct, double fitness,
                        struct cuco_err *err)
{
	struct cuco_llm_operator *op = ctx;
	struct cuco_llm_diagnose_args a;
	struct cuco_llm_result res;
	struct judged j;
	int i, rc;

	for (i = 0; i < op->njudged && op->judged[i].program_id != program_id; i++)
		;
	if (i == op->njudged) /* not a child of this operator */
		return CUCO_OK;
	j = op->judged[i];
	op->judged[i] = op->judged[--op->njudged];
	cuco_bandit_reward(&op->bandit, j.arm, (correct ? fitness : 0) - j.parent_fitness, j.cost);
	if (correct && fitness > j.parent_fitness)
		op->stats[j.arm].improved++;
	if (!op->cfg.diagnose || !cuco_llm_diagnosis_due(correct, fitness, j.parent_fitness))
		return CUCO_OK;
	memset(&a, 0, sizeof(a));
	a.store = op->cfg.store;
	a.client = op->client;
	a.share_dir = op->cfg.share_dir;
	a.workload = op->cfg.workload;
	a.model = op->cfg.models[j.arm]; /* the model that wrote the child */
	a.temperature = op->cfg.temps.summary;
	a.max_tokens = op->cfg.diagnose_max_tokens;
	a.run_id = j.run_id;
	a.program_id = program_id;
	a.parent_fitness = j.parent_fitness;
	a.correct = correct;
	a.fitness = fitness;
	cuco_llm_result_init(&res);
	rc = cuco_llm_diagnose(&a, &res, err);
	cuco_llm_op_count_call(op, j.arm, &res);
	cuco_llm_result_release(&res);
	if (rc == CUCO_OK) /* a diagnosis the budget refused */
		rc = cuco_llm_op_note_spent(op, j.run_id, err);
	return rc;
}

/* ---- binding, statistics ---- */

/*
 * The run ended: with not one reply of the model's made into a child, the
 * run did not do what it was asked (CUCO_ERR_RUN, the run fails saying so).
 */
static int op_finished(void *ctx, int64_t run_id, struct cuco_err *err)
{
	struct cuco_llm_operator *op = ctx;
	long long calls = 0, accepted = 0;

	for (int i = 0; i < op->cfg.nmodels; i++) {
		calls += op->stats[i].calls;
		accepted += op->stats[i].accepted;
	}
	if (accepted > 0)
		return CUCO_OK;
	if (!calls)
		return cuco_err_set(
		    err, CUCO_ERR_RUN,
		    "llm: run %lld asked the model nothing (its budget allowed no "
		    "call), so no candidate is the model's; raise --llm-budget-tokens "
		    "or --llm-budget-cost and resume it",
		    (long long)run_id);
	return cuco_err_set(err, CUCO_ERR_RUN,
	                    "llm: none of the model's %lld replies in run %lld was accepted: no "
	                    "candidate is the model's (each call's error is stored in "
	                    "llm_calls.error); check the endpoint, the model and its replies",
	                    calls, (long long)run_id);
}

void cuco_llm_operator_bind(struct cuco_llm_operator *op, double share,
                            struct cuco_child_operator *co)
{
	memset(co, 0, sizeof(*co));
	co->share = share;
	co->breed = op_breed;
	co->stored = op_stored;
	co->evaluated = op_evaluated;
	co->summarize = cuco_llm_op_summarize;
	co->finished = op_finished;
	co->ctx = op;
}

int cuco_llm_operator_stats(const struct cuco_llm_operator *op, const char *const **models,
                            const struct cuco_llm_model_stats **stats)
{
	*models = op->cfg.models;
	*stats = op->stats;
	return op->cfg.nmodels;
}

void cuco_llm_operator_print_stats(const struct cuco_llm_operator *op, FILE *f)
{
	const struct cuco_llm_budget *b = cuco_llm_client_budget(op->client);

	fprintf(f, "# %-32s %7s %10s %10s %8s %8s %8s\n", "model", "calls", "tokens", "cost",
	        "accepted", "improved", "ucb");
	for (int i = 0; i < op->cfg.nmodels; i++) {
		const struct cuco_llm_model_stats *s = &op->stats[i];
		double u = cuco_bandit_score(&op->bandit, i);
		fprintf(f, "# %-32s %7lld %10lld %10.4f %8lld %8lld %8.3f\n", op->cfg.models[i],
		        (long long)s->calls, (long long)s->tokens, s->cost, (long long)s->accepted,
		        (long long)s->improved, isfinite(u) ? u : 0.0);
	}
	fprintf(f, "# llm budget: %lld tokens, cost %.4f used%s\n", (long long)b->tokens_used,
	        b->cost_used, b->exhausted ? " (exhausted)" : "");
}

int cuco_llm_operator_finish(struct cuco_llm_operator *op, int64_t run_id, struct cuco_err *err)
{
	json_t *o = json_object(), *arr = json_array();
	char key[64], *text = NULL;
	int rc = CUCO_OK;

	while (op->nwait > 0 && !rc)
		rc = drop_waiting(op, op->nwait - 1, run_id, err);
	if (rc)
		goto out;
	if (!o || !arr) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < op->cfg.nmodels; i++) {
		const struct cuco_llm_model_stats *s = &op->stats[i];
		json_array_append_new(
		    arr, json_pack("{s:s, s:I, s:I, s:f, s:I, s:I}", "model", op->cfg.models[i],
		                   "calls", (json_int_t)s->calls, "tokens", (json_int_t)s->tokens,
		                   "cost", s->cost, "accepted", (json_int_t)s->accepted, "improved",
		                   (json_int_t)s->improved));
	}
	json_object_set(o, "models", arr);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	snprintf(key, sizeof(key), "llm_models.run%lld", (long long)run_id);
	rc = text ? cuco_store_meta_set(op->cfg.store, key, text, err)
	          : cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
out:
	json_decref(arr);
	json_decref(o);
	free(text);
	return rc;
}

const struct cuco_bandit *cuco_llm_operator_bandit(const struct cuco_llm_operator *op)
{
	return &op->bandit;
}

void cuco_llm_operator_summaries(const struct cuco_llm_operator *op, const char **statistical,
                                 const char **llm)
{
	*statistical = op->stat_summary;
	*llm = op->llm_summary;
}
