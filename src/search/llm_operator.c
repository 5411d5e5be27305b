/*
 * llm_operator.c - the LLM mutation operator and meta-summarizer of the slow
 * path (see llm_operator.h): mode schedule, model bandit, prompt assembly
 * from the store, calls, and their records.
 */
#include "search/llm_operator.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "llm/reply.h"
#include "search/llm_diagnose.h"
#include "store/store.h"

#define FAIL_LIMIT 3      /* calls failing in a row (after the client's retries) that end the run */
#define TOP_PROGRAMS 5    /* best programs shown to the meta-summarizer */
#define MAX_FEEDBACK 2000 /* bytes of an error or compile log in a prompt */
#define MAX_STATS 6000    /* bytes of the statistical summary in a prompt */
#define MAX_INSP_CODE 6000 /* bytes of the best inspiration's EVOLVE-BLOCKs */

/* How stored calls without a program begin their error (read back on resume). */
#define WHY_SUMMARY "meta-summary call failed"
#define WHY_DROPPED "reply dropped"

/* ---- the bandit ---- */

void cuco_bandit_init(struct cuco_bandit *b, int narms)
{
	memset(b, 0, sizeof(*b));
	b->narms = narms < 1 ? 1 : narms > CUCO_LLM_MAX_MODELS ? CUCO_LLM_MAX_MODELS : narms;
}

double cuco_bandit_score(const struct cuco_bandit *b, int arm)
{
	double mean;

	if (arm < 0 || arm >= b->narms)
		return -INFINITY;
	if (b->pulls[arm] == 0)
		return INFINITY;
	mean = b->sum[arm] / (double)b->pulls[arm];
	if (b->max_reward > 0)
		mean /= b->max_reward;
	return mean +
	       sqrt(2.0 * log((double)(b->total > 1 ? b->total : 1)) / (double)b->pulls[arm]);
}

int cuco_bandit_pick(struct cuco_bandit *b, struct cuco_rng *rng)
{
	int best[CUCO_LLM_MAX_MODELS], nbest = 0, arm;
	double top = -INFINITY;

	for (int i = 0; i < b->narms; i++)
		if (b->pulls[i] == 0) {
			arm = i;
			goto out;
		}
	for (int i = 0; i < b->narms; i++) {
		double s = cuco_bandit_score(b, i);
		if (s > top + 1e-12) {
			top = s;
			nbest = 0;
		}
		if (fabs(s - top) <= 1e-12)
			best[nbest++] = i;
	}
	arm = nbest > 1 ? best[cuco_rng_below(rng, (uint64_t)nbest)] : best[0];
out:
	b->pulls[arm]++;
	b->total++;
	return arm;
}

void cuco_bandit_reward(struct cuco_bandit *b, int arm, double gain, double cost)
{
	double r;

	if (arm < 0 || arm >= b->narms)
		return;
	if (!(cost > 0) || !isfinite(cost))
		cost = 1;
	r = isfinite(gain) && gain > 0 ? gain / cost : 0;
	b->sum[arm] += r;
	if (r > b->max_reward)
		b->max_reward = r;
}

/* ---- configuration and its JSON ---- */

void cuco_llm_operator_config_init(struct cuco_llm_operator_config *c)
{
	static const struct cuco_llm_temps temps = {{0.2, 0.5, 0.8}, 0.2, 0.5, 0.3};

	memset(c, 0, sizeof(*c));
	cuco_llm_config_init(&c->llm);
	c->seed = 1;
	c->meta_summaries = 1;
	c->summary_max_tokens = 1024;
	c->diagnose_max_tokens = 400;
	c->temps = temps;
}

char *cuco_llm_operator_config_to_json(const struct cuco_llm_operator_config *c)
{
	const struct cuco_llm_config *l = &c->llm;
	json_t *o = json_object(), *models = json_array(), *prices = json_array(),
	       *temps =
	           json_pack("{s:[f,f,f], s:f, s:f, s:f}", "explore", c->temps.explore[0],
	                     c->temps.explore[1], c->temps.explore[2], "exploit", c->temps.exploit,
	                     "crossover", c->temps.crossover, "summary", c->temps.summary);
	char *s = NULL;

	if (!o || !models || !prices || !temps)
		goto out;
	for (int i = 0; i < c->nmodels; i++)
		json_array_append_new(models, json_string(c->models[i] ? c->models[i] : ""));
	for (int i = 0; i < l->nprices; i++)
		json_array_append_new(
		    prices, json_pack("{s:s, s:f, s:f}", "model",
		                      l->prices[i].model ? l->prices[i].model : "", "in",
		                      l->prices[i].in_per_mtok, "out", l->prices[i].out_per_mtok));
	json_object_set_new(
	    o, "api",
	    json_string(cuco_llm_api_name(l->api) ? cuco_llm_api_name(l->api) : "openai"));
	json_object_set_new(o, "base_url", json_string(l->base_url ? l->base_url : ""));
	json_object_set(o, "models", models);
	json_object_set_new(
	    o, "key_env",
	    json_string(l->api_key_env ? l->api_key_env : cuco_llm_api_key_env(l->api)));
	json_object_set_new(o, "max_tokens", json_integer(l->max_tokens));
	json_object_set_new(o, "connect_timeout_ms", json_integer(l->connect_timeout_ms));
	json_object_set_new(o, "timeout_ms", json_integer(l->timeout_ms));
	json_object_set_new(o, "max_retries", json_integer(l->max_retries));
	json_object_set_new(o, "retry_base_ms", json_integer(l->retry_base_ms));
	json_object_set_new(o, "retry_max_ms", json_integer(l->retry_max_ms));
	json_object_set_new(o, "budget_tokens", json_integer(l->budget_tokens));
	json_object_set_new(o, "budget_cost", json_real(l->budget_cost));
	json_object_set(o, "prices", prices);
	json_object_set(o, "temperatures", temps);
	json_object_set_new(o, "meta_summaries", json_boolean(c->meta_summaries));
	json_object_set_new(o, "summary_max_tokens", json_integer(c->summary_max_tokens));
	json_object_set_new(o, "diagnose", json_boolean(c->diagnose));
	json_object_set_new(o, "diagnose_max_tokens", json_integer(c->diagnose_max_tokens));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
out:
	json_decref(o);
	json_decref(models);
	json_decref(prices);
	json_decref(temps);
	return s;
}

/* Field k of o, when present, into *v; a present field of the wrong type is an error. */
static int stored_string(json_t *o, const char *k, const char **v, struct cuco_err *err)
{
	json_t *x = json_object_get(o, k);

	if (!x)
		return CUCO_OK;
	if (!json_is_string(x))
		return cuco_err_set(err, CUCO_ERR_PARSE, "run config: llm.%s: not a string", k);
	*v = json_string_value(x);
	return CUCO_OK;
}

static int stored_number(json_t *o, const char *where, const char *k, double lo, double hi,
                         double *v, struct cuco_err *err)
{
	json_t *x = json_object_get(o, k);

	if (!x)
		return CUCO_OK;
	if (!json_is_number(x) || json_number_value(x) < lo || json_number_value(x) > hi)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: %s.%s: not a number from %g to %g", where, k, lo,
		                    hi);
	*v = json_number_value(x);
	return CUCO_OK;
}

/* The integer fields of the stored settings and where they go. */
static int stored_ints(json_t *o, struct cuco_llm_operator_config *c, struct cuco_err *err)
{
	struct cuco_llm_config *l = &c->llm;
	int rc = CUCO_OK;
	const struct {
		const char *key;
		double hi;
		int is_long, is_i64;
		void *at;
	} f[] = {
	    {"max_tokens", 1e9, 0, 0, &l->max_tokens},
	    {"connect_timeout_ms", 1e9, 1, 0, &l->connect_timeout_ms},
	    {"timeout_ms", 1e9, 1, 0, &l->timeout_ms},
	    {"max_retries", 1000, 0, 0, &l->max_retries},
	    {"retry_base_ms", 1e9, 1, 0, &l->retry_base_ms},
	    {"retry_max_ms", 1e9, 1, 0, &l->retry_max_ms},
	    {"budget_tokens", 1e18, 0, 1, &l->budget_tokens},
	    {"summary_max_tokens", 1e9, 0, 0, &c->summary_max_tokens},
	    {"diagnose_max_tokens", 1e9, 0, 0, &c->diagnose_max_tokens},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && !rc; i++) {
		json_t *x = json_object_get(o, f[i].key);
		if (!x)
			continue;
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    (double)json_integer_value(x) > f[i].hi) {
			rc = cuco_err_set(err, CUCO_ERR_PARSE,
			                  "run config: llm.%s: not an integer from 0 to %g",
			                  f[i].key, f[i].hi);
			break;
		}
		if (f[i].is_i64)
			*(int64_t *)f[i].at = json_integer_value(x);
		else if (f[i].is_long)
			*(long *)f[i].at = (long)json_integer_value(x);
		else
			*(int *)f[i].at = (int)json_integer_value(x);
	}
	return rc;
}

static int stored_lists(json_t *o, struct cuco_llm_operator_config *c, struct cuco_err *err)
{
	json_t *models = json_object_get(o, "models"), *prices = json_object_get(o, "prices"),
	       *t = json_object_get(o, "temperatures"), *x;
	struct cuco_llm_config *l = &c->llm;
	size_t i;
	int rc = CUCO_OK;

	if (models && (!json_is_array(models) || json_array_size(models) < 1 ||
	               json_array_size(models) > CUCO_LLM_MAX_MODELS))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.models: not an array of 1 to %d names",
		                    CUCO_LLM_MAX_MODELS);
	json_array_foreach(models, i, x)
	{
		if (!json_is_string(x))
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "run config: llm.models[%zu]: not a string", i);
		c->models[i] = json_string_value(x);
		c->nmodels = (int)i + 1;
	}
	if (prices && (!json_is_array(prices) || json_array_size(prices) > CUCO_LLM_MAX_PRICES))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.prices: not an array of at most %d prices",
		                    CUCO_LLM_MAX_PRICES);
	json_array_foreach(prices, i, x)
	{
		json_t *m = json_object_get(x, "model"), *in = json_object_get(x, "in"),
		       *out = json_object_get(x, "out");
		if (!json_is_string(m) || !json_is_number(in) || !json_is_number(out))
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "run config: llm.prices[%zu]: not {\"model\", \"in\", "
			                    "\"out\"}",
			                    i);
		l->prices[i].model = json_string_value(m);
		l->prices[i].in_per_mtok = json_number_value(in);
		l->prices[i].out_per_mtok = json_number_value(out);
		l->nprices = (int)i + 1;
	}
	if (!t)
		return CUCO_OK;
	if (!json_is_object(t))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.temperatures: not an object");
	x = json_object_get(t, "explore");
	if (x && (!json_is_array(x) || json_array_size(x) != 3))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.temperatures.explore: not 3 numbers");
	for (i = 0; x && i < 3 && !rc; i++) {
		json_t *v = json_array_get(x, i);
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 2)
			rc = cuco_err_set(err, CUCO_ERR_PARSE,
			                  "run config: llm.temperatures.explore[%zu]: not a number "
			                  "from 0 to 2",
			                  i);
		else
			c->temps.explore[i] = json_number_value(v);
	}
	if (!rc)
		rc = stored_number(t, "llm.temperatures", "exploit", 0, 2, &c->temps.exploit, err);
	if (!rc)
		rc = stored_number(t, "llm.temperatures", "crossover", 0, 2, &c->temps.crossover,
		                   err);
	if (!rc)
		rc = stored_number(t, "llm.temperatures", "summary", 0, 2, &c->temps.summary, err);
	return rc;
}

int cuco_llm_stored_from_json(const char *run_config, struct cuco_llm_stored *out, int *found,
                              struct cuco_err *err)
{
	json_error_t je;
	json_t *root = json_loads(run_config ? run_config : "", 0, &je), *o, *x;
	struct cuco_llm_operator_config *c = &out->cfg;
	int rc;

	memset(out, 0, sizeof(*out));
	cuco_llm_operator_config_init(c);
	*found = 0;
	out->json = root;
	if (!json_is_object(root))
		return cuco_err_set(err, CUCO_ERR_PARSE, "run config: not a JSON object: %s",
		                    je.text);
	o = json_object_get(root, "llm");
	if (!o)
		return CUCO_OK;
	if (!json_is_object(o))
		return cuco_err_set(err, CUCO_ERR_PARSE, "run config: llm: not an object");
	*found = 1;
	x = json_object_get(o, "meta_summaries");
	if (x && !json_is_boolean(x))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.meta_summaries: not true or false");
	if (x)
		c->meta_summaries = json_is_true(x);
	x = json_object_get(o, "diagnose");
	if (x && !json_is_boolean(x))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.diagnose: not true or false");
	if (x)
		c->diagnose = json_is_true(x);
	x = json_object_get(o, "api");
	if (x && (!json_is_string(x) || cuco_llm_api_parse(json_string_value(x)) < 0))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run config: llm.api: not \"openai\" or \"anthropic\"");
	if (x)
		cuco_llm_config_api(&c->llm, cuco_llm_api_parse(json_string_value(x)));
	if ((rc = stored_string(o, "base_url", &c->llm.base_url, err)) ||
	    (rc = stored_string(o, "key_env", &c->llm.api_key_env, err)) ||
	    (rc = stored_number(o, "llm", "budget_cost", 0, 1e12, &c->llm.budget_cost, err)) ||
	    (rc = stored_ints(o, c, err)) || (rc = stored_lists(o, c, err)))
		return rc;
	if (c->llm.base_url && !*c->llm.base_url)
		c->llm.base_url = NULL;
	return CUCO_OK;
}

void cuco_llm_stored_release(struct cuco_llm_stored *s)
{
	if (!s)
		return;
	json_decref(s->json);
	memset(s, 0, sizeof(*s));
}

/* ---- the operator ---- */

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
	int nwait, await;
	struct judged *judged;
	int njudged, ajudged;
	int rotation; /* exploration temperatures rotate */
	int fails;    /* calls failed in a row */
};

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
	struct cuco_llm_operator *op = calloc(1, sizeof(*op));
	struct cuco_llm_config lc;
	int rc = CUCO_OK;

	*out = NULL;
	if (!op)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
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

int cuco_llm_operator_set_summary(struct cuco_llm_operator *op, const char *statistical,
                                  const char *llm, struct cuco_err *err)
{
	if (statistical) {
		char *s = strdup(statistical);
		if (!s)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		free(op->stat_summary);
		op->stat_summary = s;
	}
	if (llm) {
		char *s = strdup(llm);
		if (!s)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		free(op->llm_summary);
		op->llm_summary = s;
	}
	return CUCO_OK;
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
	if (parent_code && !(*parent_code = strdup(parent.code)))
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
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

/* Count a finished call into its model's statistics. */
static void count_call(struct cuco_llm_operator *op, int arm, const struct cuco_llm_result *res)
{
	struct cuco_llm_model_stats *s = &op->stats[arm];

	if (res->attempts > 0)
		s->calls++;
	s->tokens += res->charged_tokens;
	if (isfinite(res->cost))
		s->cost += res->cost;
}

/* What the bandit charges for a call: its price, else thousands of tokens. */
static double call_cost(const struct cuco_llm_result *res)
{
	if (isfinite(res->cost) && res->cost > 0)
		return res->cost;
	return res->charged_tokens > 0 ? (double)res->charged_tokens / 1000.0 : 1.0;
}

/* Store res (purpose: "mutation", "summary") for program_id (0: none) with why (may be NULL). */
static int store_call(struct cuco_llm_operator *op, int64_t run_id, struct cuco_llm_result *res,
                      int64_t program_id, const char *why, const char *purpose,
                      struct cuco_err *err)
{
	res->purpose = purpose;
	return cuco_llm_result_store_why(op->cfg.store, res, run_id, program_id, why, err);
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
	int rc = store_call(op, run_id ? run_id : w->run_id, &w->res, 0,
	                    WHY_DROPPED ": the child was a near-duplicate of an existing candidate",
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
	count_call(op, arm, &res);
	if (rc == CUCO_ERR_UNSUPPORTED) { /* the budget: nothing was sent */
		op->bandit.pulls[arm]--;
		op->bandit.total--;
		cuco_err_set(err, rc, "%s", e2.msg);
		goto out;
	}
	snprintf(why, sizeof(why), "%s call for %s failed", op_name(mode), rq->name);
	if (rc && res.truncated) {
		/* the endpoint works; the reply is unusable: rejected, like any bad reply */
		snprintf(why, sizeof(why), "%s reply for %s rejected", op_name(mode), rq->name);
		op->fails = 0;
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		rc = store_call(op, rq->run_id, &res, 0, why, "mutation", err);
		goto out;
	}
	if (rc) {
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		if ((rc = store_call(op, rq->run_id, &res, 0, why, "mutation", err)))
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
		res.error = strdup(edit.reason ? edit.reason : e2.msg);
		cuco_bandit_reward(&op->bandit, arm, 0, call_cost(&res));
		rc = store_call(op, rq->run_id, &res, 0, why, "mutation", err);
		goto out;
	}
	if (op->nwait == op->await) {
		int na = op->await ? 2 * op->await : 8;
		struct waiting *nw = realloc(op->wait, (size_t)na * sizeof(*nw));
		if (!nw) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		op->wait = nw;
		op->await = na;
	}
	{
		struct waiting *w = &op->wait[op->nwait++];
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

static int add_judged(struct cuco_llm_operator *op, int64_t run_id, int64_t id, int arm,
                      double parent_fitness, double cost, struct cuco_err *err);

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
		if ((rc = store_call(op, w->run_id, &w->res, id, NULL, "mutation", err)))
			break;
		if ((rc = add_judged(op, w->run_id, id, w->arm, w->parent_fitness, w->cost, err)))
			break;
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
	count_call(op, j.arm, &res);
	cuco_llm_result_release(&res);
	return rc;
}

/* ---- the meta-summarizer ---- */

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

static int op_summarize(void *ctx, int64_t run_id, int generation, const char *statistical,
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
	int rc, arm = 0;
	double best = -INFINITY;

	cuco_llm_result_init(&res);
	memset(&t, 0, sizeof(t));
	if ((rc = cuco_llm_operator_set_summary(op, statistical, NULL, err)))
		goto out;
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
	count_call(op, arm, &res);
	if (rc == CUCO_ERR_UNSUPPORTED) { /* budget: the next breed stops the run */
		rc = CUCO_OK;
		goto out;
	}
	if (rc) {
		rc = store_call(op, run_id, &res, 0, WHY_SUMMARY, "summary", err);
		goto out;
	}
	if ((rc = store_call(op, run_id, &res, 0, NULL, "summary", err)) ||
	    (rc = cuco_store_summary_add(op->cfg.store, run_id, generation, "llm", res.reply, NULL,
	                                 err)) ||
	    (rc = cuco_llm_operator_set_summary(op, NULL, res.reply, err)))
		goto out;
out:
	cuco_llm_result_release(&res);
	cuco_strbuf_release(&user);
	cuco_strbuf_release(&tops);
	cuco_strbuf_release(&fails);
	cuco_strbuf_release(&gen);
	return rc;
}

/* ---- binding, statistics ---- */

void cuco_llm_operator_bind(struct cuco_llm_operator *op, double share,
                            struct cuco_child_operator *co)
{
	memset(co, 0, sizeof(*co));
	co->share = share;
	co->breed = op_breed;
	co->stored = op_stored;
	co->evaluated = op_evaluated;
	co->summarize = op_summarize;
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

/* ---- resume: the operator's state from the run's stored history ---- */

/* A program of the run as the loop saw it: its first evaluation and its parent. */
struct seen {
	int64_t id, parent;
	int evaluated, correct;
	double fitness;
};

struct history {
	struct cuco_llm_operator *op;
	struct seen *p; /* ascending ids: programs come oldest first */
	int n, alloc;
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

	if (h->n == h->alloc) {
		int na = h->alloc ? 2 * h->alloc : 64;
		struct seen *np = realloc(h->p, (size_t)na * sizeof(*np));
		if (!np)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		h->p = np;
		h->alloc = na;
	}
	x = &h->p[h->n++];
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

/* Remember a stored child whose evaluation is still to come. */
static int add_judged(struct cuco_llm_operator *op, int64_t run_id, int64_t id, int arm,
                      double parent_fitness, double cost, struct cuco_err *err)
{
	if (op->njudged == op->ajudged) {
		int na = op->ajudged ? 2 * op->ajudged : 16;
		struct judged *nj = realloc(op->judged, (size_t)na * sizeof(*nj));
		if (!nj)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		op->judged = nj;
		op->ajudged = na;
	}
	op->judged[op->njudged].run_id = run_id;
	op->judged[op->njudged].program_id = id;
	op->judged[op->njudged].arm = arm;
	op->judged[op->njudged].parent_fitness = parent_fitness;
	op->judged[op->njudged++].cost = cost;
	return CUCO_OK;
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
	if (!x || !x->evaluated)
		return add_judged(op, c->run_id, c->program_id, arm, pf, cost, err);
	cuco_bandit_reward(&op->bandit, arm, (x->correct ? x->fitness : 0) - pf, cost);
	if (x->correct && x->fitness > pf)
		s->improved++;
	return 0;
}

static int hist_summary(const struct cuco_summary_rec *sum, void *arg, struct cuco_err *err)
{
	struct history *h = arg;
	int stat = !strcmp(sum->kind, "statistical");

	if (!stat && strcmp(sum->kind, "llm"))
		return 0;
	if (stat) {
		h->stat_summaries++;
		h->stat_generation = sum->generation;
	} else {
		h->llm_generation = sum->generation;
	}
	return cuco_llm_operator_set_summary(h->op, stat ? sum->text : NULL,
	                                     stat ? NULL : sum->text, err);
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
	/* Stopped between a statistical summary and its meta-summary: write it now. */
	if (op->cfg.meta_summaries && op->stat_summary && h.stat_summaries > h.summary_calls &&
	    h.llm_generation < h.stat_generation) {
		char *stat = strdup(op->stat_summary);
		rc = stat ? op_summarize(op, run_id, (int)h.stat_generation, stat, err)
		          : cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		free(stat);
	}
out:
	free(h.p);
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
