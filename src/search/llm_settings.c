/*
 * llm_settings.c - the LLM operator's configuration: its defaults, and its
 * JSON in a run's stored config, written and read back for a resume (see
 * llm_operator.h).
 */
#include "search/llm_settings.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/secret.h"

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
	/* the key out of the environment before a resumed run starts any child */
	(void)cuco_secret_env(c->llm.api_key_env ? c->llm.api_key_env
	                                         : cuco_llm_api_key_env(c->llm.api));
	return CUCO_OK;
}

void cuco_llm_stored_release(struct cuco_llm_stored *s)
{
	if (!s)
		return;
	json_decref(s->json);
	memset(s, 0, sizeof(*s));
}
