/*
 * evolve_config.c - the evolution's outcomes combined over shapes, and its
 * config: defaults, the explore/exploit schedule, JSON both ways.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/evolve_config.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- outcomes and config ---- */

void cuco_eval_outcome_init(struct cuco_eval_outcome *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->status, sizeof(o->status), "ok");
	snprintf(o->stage, sizeof(o->stage), "bench");
	o->median_us = o->mean_us = o->p90_us = o->baseline_us = o->rel_err = NAN;
}

void cuco_eval_outcome_release(struct cuco_eval_outcome *o)
{
	free(o->error);
	free(o->log);
	free(o->result_json);
	cuco_eval_outcome_init(o);
}

static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* The per-shape details of a combined outcome, as result_json. */
static char *shapes_json(const char *const *shapes, const struct cuco_eval_outcome *per, int n)
{
	json_t *o = json_object(), *a = json_array();
	char *s = NULL;

	if (!o || !a)
		goto out;
	for (int k = 0; k < n; k++) {
		const struct cuco_eval_outcome *q = &per[k];
		int ok = q->code == CUCO_OK;
		json_t *e = json_pack(
		    "{s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "shape", shapes[k], "status", q->status,
		    "stage", q->stage, "median_us", real_or_null(ok ? q->median_us : NAN),
		    "mean_us", real_or_null(ok ? q->mean_us : NAN), "baseline_us",
		    real_or_null(q->baseline_us), "speedup", real_or_null(ok ? q->fitness : NAN));
		if (!e || json_array_append_new(a, e))
			goto out;
	}
	json_object_set_new(o, "shapes", a);
	a = NULL;
	json_object_set_new(o, "fitness", json_string("geomean"));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
out:
	json_decref(a);
	json_decref(o);
	return s;
}

int cuco_eval_outcome_combine(const char *const *shapes, const struct cuco_eval_outcome *per, int n,
                              struct cuco_eval_outcome *out)
{
	const struct cuco_eval_outcome *from = &per[0]; /* the primary, or the first failure */
	struct cuco_strbuf msg = CUCO_STRBUF_INIT;
	double logsum = 0;
	int bad = -1;

	for (int k = 0; k < n && bad < 0; k++)
		if (per[k].code != CUCO_OK)
			bad = k;
	if (n > 1 && bad >= 0)
		from = &per[bad];
	out->code = from->code;
	snprintf(out->status, sizeof(out->status), "%s", from->status);
	snprintf(out->stage, sizeof(out->stage), "%s", from->stage);
	snprintf(out->gpu, sizeof(out->gpu), "%s", per[0].gpu);
	out->fitness = from->fitness;
	out->median_us = from->median_us;
	out->mean_us = from->mean_us;
	out->p90_us = from->p90_us;
	out->baseline_us = per[0].baseline_us;
	out->rel_err = from->rel_err;
	out->log = cuco_xstrdup(from->log);
	if (n > 1 && bad >= 0) {
		cuco_strbuf_addf(&msg, "at shape %s: %s", shapes[bad],
		                 from->error ? from->error : from->status);
		out->error = cuco_strbuf_detach(&msg, NULL);
		out->fitness = 0;
		out->median_us = out->mean_us = out->p90_us = NAN;
	} else {
		out->error = cuco_xstrdup(from->error);
	}
	if (n > 1 && bad < 0) {
		for (int k = 0; k < n; k++) {
			logsum += log(per[k].fitness);
			if (per[k].rel_err > out->rel_err || isnan(out->rel_err))
				out->rel_err = per[k].rel_err;
		}
		out->fitness = exp(logsum / n);
	}
	if (n > 1)
		out->result_json = shapes_json(shapes, per, n);
	if (n > 1 && !out->result_json)
		return CUCO_ERR_NOMEM;
	return CUCO_OK;
}

void cuco_evolve_config_default(struct cuco_evolve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->search_seed = 1;
	cfg->islands = 2;
	cfg->generations = 20;
	cfg->children_per_island = 4;
	cfg->population_size = 40;
	cfg->archive_size = 12;
	cfg->migration_interval = 4;
	cfg->migration_rate = 0.15;
	cfg->explore_fraction = 0.4;
	cfg->novelty_threshold = 0.95;
	cfg->stagnation_generations = 4;
	cfg->summary_interval = 4;
	cfg->top_k = 2;
	cfg->diverse_k = 1;
	cfg->pipeline = 1;
	snprintf(cfg->timing, sizeof(cfg->timing), "sustained");
	snprintf(cfg->statistic, sizeof(cfg->statistic), "median");
	snprintf(cfg->selection, sizeof(cfg->selection), "rank");
	cfg->selection_n = 3;
	snprintf(cfg->migration, sizeof(cfg->migration), "ring");
	snprintf(cfg->operator_, sizeof(cfg->operator_), "builtin");
}

struct cuco_schedule cuco_evolve_schedule(const struct cuco_evolve_config *cfg)
{
	struct cuco_schedule s;

	s.generations = cuco_schedule_horizon(cfg->generations, cfg->budget_evals,
	                                      cfg->islands * cfg->children_per_island);
	s.explore_fraction = cfg->explore_fraction;
	return s;
}

/* The config as JSON, with llm_json (may be NULL) as its "llm" object. */
char *cuco_evolve_config_json(const struct cuco_evolve_config *c, const char *llm_json)
{
	json_t *o = json_object(), *llm = llm_json ? json_loads(llm_json, 0, NULL) : NULL;
	char *s;

	if (!o || (llm_json && !json_is_object(llm))) {
		json_decref(o);
		json_decref(llm);
		return NULL;
	}
	json_object_set_new(o, "search_seed", json_integer((json_int_t)c->search_seed));
	json_object_set_new(o, "islands", json_integer(c->islands));
	json_object_set_new(o, "generations", json_integer(c->generations));
	json_object_set_new(o, "children_per_island", json_integer(c->children_per_island));
	json_object_set_new(o, "population_size", json_integer(c->population_size));
	json_object_set_new(o, "archive_size", json_integer(c->archive_size));
	json_object_set_new(o, "migration_interval", json_integer(c->migration_interval));
	json_object_set_new(o, "migration_rate", json_real(c->migration_rate));
	json_object_set_new(o, "explore_fraction", json_real(c->explore_fraction));
	json_object_set_new(o, "novelty_threshold", json_real(c->novelty_threshold));
	json_object_set_new(o, "stagnation_generations", json_integer(c->stagnation_generations));
	json_object_set_new(o, "summary_interval", json_integer(c->summary_interval));
	json_object_set_new(o, "top_k", json_integer(c->top_k));
	json_object_set_new(o, "diverse_k", json_integer(c->diverse_k));
	json_object_set_new(o, "budget_evals", json_integer(c->budget_evals));
	json_object_set_new(o, "budget_minutes", json_real(c->budget_minutes));
	json_object_set_new(o, "template", json_string(c->template_path));
	json_object_set_new(o, "freeze", json_string(c->freeze));
	json_object_set_new(o, "search", json_string(c->search));
	json_object_set_new(o, "operator", json_string(c->operator_));
	json_object_set_new(o, "llm_share", json_real(c->llm_share));
	json_object_set_new(o, "pipeline", json_boolean(c->pipeline));
	json_object_set_new(o, "timing", json_string(c->timing[0] ? c->timing : "sustained"));
	if (!strcmp(c->statistic, "mean")) /* absent: the median, as every run before */
		json_object_set_new(o, "statistic", json_string("mean"));
	if (c->selection[0] &&
	    strcmp(c->selection, "rank")) { /* absent: rank, as every run before */
		json_object_set_new(o, "selection", json_string(c->selection));
		if (!strcmp(c->selection, "best_of_n"))
			json_object_set_new(o, "selection_n", json_integer(c->selection_n));
	}
	if (c->migration[0] && strcmp(c->migration, "ring")) /* absent: the ring */
		json_object_set_new(o, "migration", json_string(c->migration));
	if (c->max_connections[0])
		json_object_set_new(o, "cuda_device_max_connections",
		                    json_string(c->max_connections));
	if (c->nshapes > 0) {
		json_t *a = json_array();
		for (int k = 0; k < c->nshapes; k++)
			json_array_append_new(a, json_string(c->shapes[k]));
		json_object_set_new(o, "shapes", a);
	}
	if (llm)
		json_object_set_new(o, "llm", llm);
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(o);
	return s;
}

char *cuco_evolve_config_to_json(const struct cuco_evolve_config *c)
{
	return cuco_evolve_config_json(c, NULL);
}

/* o[k] into *v when it is an integer; one outside lo..hi is refused (a damaged config). */
static int get_int(json_t *o, const char *k, int *v, long long lo, long long hi,
                   struct cuco_err *err)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_integer(x))
		return CUCO_OK;
	if (json_integer_value(x) < lo || json_integer_value(x) > hi)
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "evolve config: %s: %lld is out of range (%lld to %lld)", k,
		                    (long long)json_integer_value(x), lo, hi);
	*v = (int)json_integer_value(x);
	return CUCO_OK;
}

/* o[k] into *v when it is a number; one outside lo..hi is refused. */
static int get_real(json_t *o, const char *k, double *v, double lo, double hi, struct cuco_err *err)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_number(x))
		return CUCO_OK;
	if (!(json_number_value(x) >= lo && json_number_value(x) <= hi))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "evolve config: %s: %g is out of range (%g to %g)", k,
		                    json_number_value(x), lo, hi);
	*v = json_number_value(x);
	return CUCO_OK;
}

/* The numbers of a stored config, each in the range the loop can take. */
static int get_numbers(json_t *o, struct cuco_evolve_config *c, struct cuco_err *err)
{
	const long long G = CUCO_EVOLVE_MAX_GENERATIONS, N = 1 << 20;

	if (get_int(o, "islands", &c->islands, 1, CUCO_MAX_ISLANDS, err) ||
	    get_int(o, "generations", &c->generations, 0, G, err) ||
	    get_int(o, "children_per_island", &c->children_per_island, 1, N, err) ||
	    get_int(o, "population_size", &c->population_size, 1, N, err) ||
	    get_int(o, "archive_size", &c->archive_size, 0, N, err) ||
	    get_int(o, "migration_interval", &c->migration_interval, 0, G, err) ||
	    get_real(o, "migration_rate", &c->migration_rate, 0, 1, err) ||
	    get_real(o, "explore_fraction", &c->explore_fraction, 0, 1, err) ||
	    get_real(o, "novelty_threshold", &c->novelty_threshold, 0, 1, err) ||
	    get_int(o, "stagnation_generations", &c->stagnation_generations, 0, G, err) ||
	    get_int(o, "summary_interval", &c->summary_interval, 0, G, err) ||
	    get_int(o, "top_k", &c->top_k, 0, N, err) ||
	    get_int(o, "diverse_k", &c->diverse_k, 0, N, err) ||
	    get_int(o, "budget_evals", &c->budget_evals, 0, INT_MAX, err) ||
	    get_real(o, "budget_minutes", &c->budget_minutes, 0, 1e9, err) ||
	    get_real(o, "llm_share", &c->llm_share, 0, 1, err))
		return err->code;
	return CUCO_OK;
}

/* o[key]: one of two words, the first when absent; anything else refused. */
static int config_word(json_t *o, const char *key, const char *dflt, const char *other, char *out,
                       size_t size, struct cuco_err *err)
{
	json_t *x = json_object_get(o, key);
	const char *v = x && json_is_string(x) ? json_string_value(x) : NULL;

	if (x && (!v || (strcmp(v, dflt) && strcmp(v, other))))
		return cuco_err_set(err, CUCO_ERR_PARSE, "evolve config: %s: not \"%s\" or \"%s\"",
		                    key, dflt, other);
	snprintf(out, size, "%s", v ? v : dflt);
	return CUCO_OK;
}

int cuco_evolve_config_from_json(const char *json, struct cuco_evolve_config *c,
                                 struct cuco_err *err)
{
	json_error_t je;
	json_t *o = json_loads(json ? json : "", 0, &je), *x;

	if (!json_is_object(o)) {
		json_decref(o);
		return cuco_err_set(err, CUCO_ERR_PARSE, "evolve config: not a JSON object: %s",
		                    je.text);
	}
	x = json_object_get(o, "search_seed");
	if (json_is_integer(x))
		c->search_seed = (uint64_t)json_integer_value(x);
	if (get_numbers(o, c, err)) {
		json_decref(o);
		return err->code;
	}
	x = json_object_get(o, "template");
	if (json_is_string(x))
		snprintf(c->template_path, sizeof(c->template_path), "%s", json_string_value(x));
	x = json_object_get(o, "freeze");
	if (json_is_string(x))
		snprintf(c->freeze, sizeof(c->freeze), "%s", json_string_value(x));
	x = json_object_get(o, "search");
	if (json_is_string(x))
		snprintf(c->search, sizeof(c->search), "%s", json_string_value(x));
	/* absent: a config stored before pipelining was, which ran in the strict order */
	x = json_object_get(o, "pipeline");
	c->pipeline = json_is_boolean(x)   ? json_is_true(x)
	              : json_is_integer(x) ? json_integer_value(x) != 0
	                                   : 0;
	/* absent timing: a config stored before the timing was, which timed back to back;
	   absent statistic: a run ranked by the median, as every run before the choice */
	if (config_word(o, "timing", "sustained", "burst", c->timing, sizeof(c->timing), err) ||
	    config_word(o, "statistic", "median", "mean", c->statistic, sizeof(c->statistic),
	                err)) {
		json_decref(o);
		return err->code;
	}
	x = json_object_get(o, "selection");
	if (x && (!json_is_string(x) || cuco_selection_kind(json_string_value(x)) < 0)) {
		json_decref(o);
		return cuco_err_set(
		    err, CUCO_ERR_PARSE,
		    "evolve config: selection: not rank, power_law, weighted, beam or "
		    "best_of_n");
	}
	snprintf(c->selection, sizeof(c->selection), "%s", x ? json_string_value(x) : "rank");
	x = json_object_get(o, "selection_n");
	if (x &&
	    (!json_is_integer(x) || json_integer_value(x) < 2 || json_integer_value(x) > 1000)) {
		json_decref(o);
		return cuco_err_set(err, CUCO_ERR_PARSE, "evolve config: selection_n: not 2..1000");
	}
	c->selection_n = x ? (int)json_integer_value(x) : 3;
	x = json_object_get(o, "migration");
	if (x && !json_is_string(x)) {
		json_decref(o);
		return cuco_err_set(err, CUCO_ERR_PARSE, "evolve config: migration: not a string");
	}
	snprintf(c->migration, sizeof(c->migration), "%s", x ? json_string_value(x) : "ring");
	x = json_object_get(o, "cuda_device_max_connections");
	if (x && !json_is_string(x)) {
		json_decref(o);
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "evolve config: cuda_device_max_connections: not a string");
	}
	snprintf(c->max_connections, sizeof(c->max_connections), "%s",
	         x ? json_string_value(x) : "");
	x = json_object_get(o, "operator");
	c->operator_[0] = '\0'; /* absent: a config stored before the operator was */
	if (x && (!json_is_string(x) ||
	          (strcmp(json_string_value(x), "builtin") && strcmp(json_string_value(x), "llm") &&
	           strcmp(json_string_value(x), "mixed")))) {
		json_decref(o);
		return cuco_err_set(
		    err, CUCO_ERR_PARSE,
		    "evolve config: operator: not \"builtin\", \"llm\" or \"mixed\"");
	}
	if (x)
		snprintf(c->operator_, sizeof(c->operator_), "%s", json_string_value(x));
	/* absent: a config stored before several shapes could be, which covers the run's */
	x = json_object_get(o, "shapes");
	c->nshapes = 0;
	if (x && (!json_is_array(x) || json_array_size(x) < 1 ||
	          json_array_size(x) > CUCO_EVOLVE_MAX_SHAPES)) {
		json_decref(o);
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "evolve config: shapes: not an array of 1 to %d shape names",
		                    CUCO_EVOLVE_MAX_SHAPES);
	}
	for (size_t k = 0; x && k < json_array_size(x); k++) {
		const char *name = json_string_value(json_array_get(x, k));
		if (!name || !*name || strlen(name) >= sizeof(c->shapes[0])) {
			json_decref(o);
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "evolve config: shapes[%zu]: not a shape name", k);
		}
		snprintf(c->shapes[c->nshapes++], sizeof(c->shapes[0]), "%s", name);
	}
	json_decref(o);
	return CUCO_OK;
}
