/*
 * evolve.c - the evolution loop: breed, store, evaluate, select; resume from
 * the store (see evolve.h for the generation protocol).
 */
#include "search/evolve.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/novelty.h"
#include "search/operator.h"
#include "search/population.h"
#include "search/rng.h"
#include "search/summary.h"
#include "store/store.h"
#include "util/proc.h"
#include "util/strbuf.h"

#define NOVELTY_ATTEMPTS 6 /* tries for a novel child before the slot stays empty */
#define MAX_EDGES 16       /* lineage edges of one child */
#define EMPTY_LIMIT 3      /* generations in a row without a new child: space exhausted */
#define OP_ATTEMPTS 2      /* asks of a child operator per slot (each may be a paid LLM call) */

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

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
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
	out->log = dup_or_null(from->log);
	if (n > 1 && bad >= 0) {
		cuco_strbuf_addf(&msg, "at shape %s: %s", shapes[bad],
		                 from->error ? from->error : from->status);
		out->error = cuco_strbuf_detach(&msg, NULL);
		out->fitness = 0;
		out->median_us = out->mean_us = out->p90_us = NAN;
	} else {
		out->error = dup_or_null(from->error);
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
	if ((from->log && !out->log) || (from->error && !out->error) ||
	    (n > 1 && !out->result_json))
		return CUCO_ERR_NOMEM;
	return CUCO_OK;
}

void cuco_evolve_config_default(struct cuco_evolve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
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
static char *config_json(const struct cuco_evolve_config *c, const char *llm_json)
{
	json_t *o = json_object(), *llm = llm_json ? json_loads(llm_json, 0, NULL) : NULL;
	char *s;

	if (!o || (llm_json && !json_is_object(llm))) {
		json_decref(o);
		json_decref(llm);
		return NULL;
	}
	json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
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
	return config_json(c, NULL);
}

static void get_int(json_t *o, const char *k, int *v)
{
	json_t *x = json_object_get(o, k);

	if (json_is_integer(x))
		*v = (int)json_integer_value(x);
}

static void get_real(json_t *o, const char *k, double *v)
{
	json_t *x = json_object_get(o, k);

	if (json_is_number(x))
		*v = json_number_value(x);
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
	x = json_object_get(o, "seed");
	if (json_is_integer(x))
		c->seed = (uint64_t)json_integer_value(x);
	get_int(o, "islands", &c->islands);
	get_int(o, "generations", &c->generations);
	get_int(o, "children_per_island", &c->children_per_island);
	get_int(o, "population_size", &c->population_size);
	get_int(o, "archive_size", &c->archive_size);
	get_int(o, "migration_interval", &c->migration_interval);
	get_real(o, "migration_rate", &c->migration_rate);
	get_real(o, "explore_fraction", &c->explore_fraction);
	get_real(o, "novelty_threshold", &c->novelty_threshold);
	get_int(o, "stagnation_generations", &c->stagnation_generations);
	get_int(o, "summary_interval", &c->summary_interval);
	get_int(o, "top_k", &c->top_k);
	get_int(o, "diverse_k", &c->diverse_k);
	get_int(o, "budget_evals", &c->budget_evals);
	get_real(o, "budget_minutes", &c->budget_minutes);
	x = json_object_get(o, "template");
	if (json_is_string(x))
		snprintf(c->template_path, sizeof(c->template_path), "%s", json_string_value(x));
	x = json_object_get(o, "freeze");
	if (json_is_string(x))
		snprintf(c->freeze, sizeof(c->freeze), "%s", json_string_value(x));
	x = json_object_get(o, "search");
	if (json_is_string(x))
		snprintf(c->search, sizeof(c->search), "%s", json_string_value(x));
	get_real(o, "llm_share", &c->llm_share);
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

/* ---- engine state ---- */

/* A candidate of the current generation, stored or about to be. */
struct pending {
	int64_t program_id;
	int island; /* CUCO_STORE_NO_INT for the initial programs (on every island) */
	char name[48];
	const char *op;
	char *code;
	char *json;
	char *flags; /* programs.flags, or NULL */
	struct cuco_directive d;
	struct cuco_parent edges[MAX_EDGES];
	int nedges;
	int evaluated;
	double fitness, median_us, mean_us;
	int correct;
};

/* The candidates of one generation, in the order they were bred. */
struct pendlist {
	struct pending *a;
	int n, alloc;
};

struct engine {
	const struct cuco_evolve_opts *o;
	struct cuco_evolve_config cfg;
	int64_t run_id;
	struct cuco_population pop;
	struct cuco_novelty nov;
	struct cuco_genes genes;
	struct cuco_bias bias;
	int bias_generation; /* generation the bias was computed at; -1 none */
	struct cuco_schedule sched;
	char *start_code;              /* the fast-path seed */
	struct cuco_directive start_d; /* its directive, completed for the template */
	struct pendlist cur;           /* the generation being evaluated */
	struct pendlist next;          /* pipelined: the one after it, bred and stored ahead */
	struct cuco_evolve_progress prog;
	double t0;
	int op_exhausted;   /* the child operator's budget is spent */
	char *summary_text; /* statistical summary stored by the current batch, for the child op */
};

static void pend_clear(struct pendlist *L)
{
	for (int i = 0; i < L->n; i++) {
		free(L->a[i].code);
		free(L->a[i].json);
		free(L->a[i].flags);
	}
	L->n = 0;
}

static struct pending *pend_new(struct pendlist *L)
{
	struct pending *p;

	if (L->n == L->alloc) {
		int na = L->alloc ? 2 * L->alloc : 32;
		struct pending *np = realloc(L->a, (size_t)na * sizeof(*np));
		if (!np)
			return NULL;
		L->a = np;
		L->alloc = na;
	}
	p = &L->a[L->n++];
	memset(p, 0, sizeof(*p));
	cuco_directive_init(&p->d);
	p->median_us = p->mean_us = NAN;
	return p;
}

static int realize(struct engine *e, const struct cuco_directive *d, struct cuco_strbuf *out,
                   struct cuco_err *err)
{
	if (e->o->template_text)
		return cuco_realize_template(e->o->template_name ? e->o->template_name : "template",
		                             e->o->template_text, d, out, err);
	return cuco_realize_seed(e->start_code, d, out, err);
}

/* Count an outcome into the progress. */
static void tally(struct engine *e, const struct cuco_eval_outcome *out)
{
	struct cuco_evolve_progress *p = &e->prog;

	p->evaluated++;
	if (isfinite(out->baseline_us))
		p->baseline_us = out->baseline_us;
	if (out->code == CUCO_OK) {
		p->correct++;
		return;
	}
	if (!strcmp(out->stage, "compile"))
		p->failed_compile++;
	else if (!strcmp(out->stage, "verify"))
		p->failed_verify++;
	else if (!strcmp(out->stage, "bench"))
		p->failed_bench++;
	else
		p->failed_run++;
	if (!strcmp(out->status, "timeout"))
		p->failed_timeout++;
}

/* A latency by the run's statistic (cuco_evolve_config.statistic): what fitness divides by. */
static double latency_of(const struct engine *e, double median_us, double mean_us)
{
	return !strcmp(e->cfg.statistic, "mean") ? mean_us : median_us;
}

static void note_best(struct engine *e, int64_t id, double fitness, double latency_us)
{
	if (fitness > e->prog.best_fitness) {
		e->prog.best_fitness = fitness;
		e->prog.best_us = latency_us;
		e->prog.best_program = id;
	}
}

/* Members for generation g's candidates L (initial programs go to every island). */
static int add_members(struct engine *e, const struct pendlist *L, int g)
{
	for (int i = 0; i < L->n; i++) {
		const struct pending *p = &L->a[i];
		struct cuco_member m;
		int first = p->island == CUCO_STORE_NO_INT ? 0 : p->island;
		int last = p->island == CUCO_STORE_NO_INT ? e->pop.nislands - 1 : p->island;

		memset(&m, 0, sizeof(m));
		m.program_id = p->program_id;
		m.generation = g;
		m.correct = p->correct;
		m.fitness = p->correct ? p->fitness : 0;
		m.median_us = p->median_us;
		m.d = p->d;
		/* The fast-path seed breeds through the template with every knob the
		 * template needs set: its completed directive. */
		if (p->island == CUCO_STORE_NO_INT && e->o->template_text &&
		    !strcmp(p->name, "seed"))
			m.d = e->start_d;
		for (int isl = first; isl <= last && isl < e->pop.nislands; isl++) {
			m.island = isl;
			if (cuco_population_add(&e->pop, &m) < 0)
				return CUCO_ERR_NOMEM;
		}
	}
	return CUCO_OK;
}

static int refresh_bias(struct engine *e, int g, int store_it, struct cuco_err *err)
{
	struct cuco_summary s;
	char *text = NULL;
	int rc = cuco_summary_compute(e->o->store, e->run_id, g, &s, err);

	if (rc == CUCO_OK) {
		cuco_summary_bias(&s, e->o->ds, 2.0, &e->bias);
		e->bias_generation = g;
		if (store_it) {
			text = cuco_summary_to_json(&s);
			rc = text ? cuco_store_summary_add(e->o->store, e->run_id, g, "statistical",
			                                   text, NULL, err)
			          : cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			if (rc == CUCO_OK && e->o->child_op && e->o->child_op->summarize) {
				free(e->summary_text);
				e->summary_text = text;
				text = NULL;
			}
		}
	}
	free(text);
	cuco_summary_release(&s);
	return rc;
}

static int summary_due(const struct engine *e, int g)
{
	return g > 0 && e->cfg.summary_interval > 0 && g % e->cfg.summary_interval == 0;
}

/* After a generation's members are in: bests, stagnation, trim, migration, bias. */
static int finish_generation(struct engine *e, int g, struct cuco_err *err)
{
	cuco_population_end_generation(&e->pop, g);
	if (g > 0 && e->cfg.migration_interval > 0 && g % e->cfg.migration_interval == 0 &&
	    cuco_population_migrate(&e->pop, e->cfg.migration_rate) < 0)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	if (summary_due(e, g) && e->bias_generation != g)
		return refresh_bias(e, g, 0, err);
	return CUCO_OK;
}

/* Tell the child operator which of its children (in L) were stored as which programs. */
static int op_stored(struct engine *e, const struct pendlist *L, struct cuco_err *err)
{
	const struct cuco_child_operator *op = e->o->child_op;
	const char **names;
	int64_t *ids;
	int n = 0, rc;

	if (!op || !op->stored)
		return CUCO_OK;
	names = calloc((size_t)L->n, sizeof(*names));
	ids = calloc((size_t)L->n, sizeof(*ids));
	if (!names || !ids) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < L->n; i++)
		if (L->a[i].island != CUCO_STORE_NO_INT) {
			names[n] = L->a[i].name;
			ids[n++] = L->a[i].program_id;
		}
	rc = op->stored(op->ctx, names, ids, n, err);
out:
	free(names);
	free(ids);
	return rc;
}

/* Store generation g's candidates L (one transaction). */
static int store_pending(struct engine *e, struct pendlist *L, int g, struct cuco_err *err)
{
	int rc;

	if (!L->n)
		return CUCO_OK;
	if ((rc = cuco_store_begin(e->o->store, err)))
		return rc;
	for (int i = 0; i < L->n; i++) {
		struct pending *p = &L->a[i];
		struct cuco_program_rec rec;

		cuco_program_rec_init(&rec);
		rec.run_id = e->run_id;
		rec.workload = e->o->workload;
		rec.name = p->name;
		rec.origin = "candidate";
		rec.code = p->code;
		rec.directive = p->json;
		rec.island = p->island;
		rec.generation = g;
		rec.operator_ = p->op;
		rec.flags = p->flags;
		rec.parents = p->edges;
		rec.nparents = (size_t)p->nedges;
		if ((rc = cuco_store_program_add(e->o->store, &rec, &p->program_id, err))) {
			cuco_store_rollback(e->o->store, NULL);
			return rc;
		}
	}
	if ((rc = op_stored(e, L, err))) {
		cuco_store_rollback(e->o->store, NULL);
		return rc;
	}
	return cuco_store_commit(e->o->store, err);
}

static int store_outcome(struct engine *e, const struct pending *p,
                         const struct cuco_eval_outcome *out, struct cuco_err *err)
{
	struct cuco_eval_rec ev;
	int64_t id;

	cuco_eval_rec_init(&ev);
	ev.program_id = p->program_id;
	ev.run_id = e->run_id;
	ev.shape = e->o->shape;
	ev.stage_reached = out->stage;
	ev.status = out->status;
	ev.error_code = out->code;
	ev.error = out->error;
	if (out->log)
		ev.compile_log = !strcmp(out->stage, "compile") ? out->log : NULL;
	if (out->log && strcmp(out->stage, "compile"))
		ev.run_log = out->log;
	ev.median_us = out->median_us;
	ev.mean_us = out->mean_us;
	ev.p90_us = out->p90_us;
	ev.rel_err = out->rel_err;
	ev.gpu = out->gpu[0] ? out->gpu : NULL;
	ev.fitness = out->code == CUCO_OK ? out->fitness : 0;
	ev.result_json = out->result_json; /* per-shape details of a run over several shapes */
	return cuco_store_eval_add(e->o->store, &ev, &id, err);
}

static void report(struct engine *e)
{
	if (e->o->progress)
		e->o->progress(e->o->progress_arg, &e->prog);
}

/* Time or evaluation budget spent, or a stop requested: why, else NULL. */
static const char *should_stop(const struct engine *e)
{
	if (e->o->stop && *e->o->stop)
		return "interrupted";
	if (e->cfg.budget_evals > 0 && e->prog.evaluated >= e->cfg.budget_evals)
		return "budget-evals";
	if (e->cfg.budget_minutes > 0 && cuco_now() - e->t0 >= e->cfg.budget_minutes * 60)
		return "budget-minutes";
	return NULL;
}

/*
 * Evaluate the current generation's candidates that have no outcome, a batch at a time;
 * each batch's outcomes (and the summary, after the generation's last batch
 * when one is due) land in one transaction. Stops early, leaving the rest
 * unevaluated, when should_stop() says so.
 */
static int evaluate_pending(struct engine *e, int g, struct cuco_err *err)
{
	const struct cuco_evaluator *ev = &e->o->evaluator;
	int batch = ev->evaluate_batch ? (ev->max_batch > 0 ? ev->max_batch : e->cur.n) : 1;
	struct cuco_candidate *c = calloc((size_t)batch + 1, sizeof(*c));
	struct cuco_eval_outcome *outs = calloc((size_t)batch + 1, sizeof(*outs));
	int *which = calloc((size_t)batch + 1, sizeof(*which)), rc = CUCO_OK;

	if (!c || !outs || !which) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int next = 0;;) {
		int n = 0, left;
		while (next < e->cur.n && n < batch) {
			struct pending *p = &e->cur.a[next];
			if (!p->evaluated) {
				c[n].name = p->name;
				c[n].code = p->code;
				c[n].directive_json = p->json;
				c[n].program_id = p->program_id;
				cuco_eval_outcome_init(&outs[n]);
				which[n++] = next;
			}
			next++;
		}
		if (!n)
			break;
		if (ev->evaluate_batch)
			rc = ev->evaluate_batch(ev->ctx, c, n, outs, err);
		else
			rc = ev->evaluate(ev->ctx, c, outs, err);
		if (rc)
			goto release;
		if ((rc = cuco_store_begin(e->o->store, err)))
			goto release;
		for (int k = 0; k < n && !rc; k++)
			rc = store_outcome(e, &e->cur.a[which[k]], &outs[k], err);
		left = 0;
		for (int i = next; i < e->cur.n; i++)
			left += !e->cur.a[i].evaluated;
		if (!rc && !left && summary_due(e, g))
			rc = refresh_bias(e, g, 1, err);
		if (rc) {
			cuco_store_rollback(e->o->store, NULL);
			e->bias_generation = -1;
			goto release;
		}
		if ((rc = cuco_store_commit(e->o->store, err)))
			goto release;
		for (int k = 0; k < n; k++) {
			struct pending *p = &e->cur.a[which[k]];
			p->evaluated = 1;
			p->correct = outs[k].code == CUCO_OK;
			p->fitness = p->correct ? outs[k].fitness : 0;
			p->median_us = outs[k].median_us;
			p->mean_us = outs[k].mean_us;
			tally(e, &outs[k]);
			if (p->correct)
				note_best(e, p->program_id, p->fitness,
				          latency_of(e, p->median_us, p->mean_us));
			if (e->o->child_op && e->o->child_op->evaluated)
				e->o->child_op->evaluated(e->o->child_op->ctx, p->program_id,
				                          p->correct, p->fitness);
		}
		if (e->summary_text) { /* the LLM meta-summary, outside the transaction */
			rc = e->o->child_op->summarize(e->o->child_op->ctx, e->run_id, g,
			                               e->summary_text, err);
			free(e->summary_text);
			e->summary_text = NULL;
		}
	release:
		for (int k = 0; k < n; k++)
			cuco_eval_outcome_release(&outs[k]);
		if (rc)
			goto out;
		report(e);
		if (should_stop(e))
			break;
	}
out:
	free(c);
	free(outs);
	free(which);
	return rc;
}

/* Candidates of L without an outcome. */
static int unevaluated(const struct pendlist *L)
{
	int n = 0;

	for (int i = 0; i < L->n; i++)
		n += !L->a[i].evaluated;
	return n;
}

static int all_evaluated(const struct pendlist *L)
{
	return unevaluated(L) == 0;
}

/* Add a lineage edge unless (id, kind) is there already. */
static void add_edge(struct pending *p, int64_t id, const char *kind)
{
	for (int i = 0; i < p->nedges; i++)
		if (p->edges[i].id == id && !strcmp(p->edges[i].kind, kind))
			return;
	if (p->nedges < MAX_EDGES) {
		p->edges[p->nedges].id = id;
		p->edges[p->nedges++].kind = kind;
	}
}

/* A parent for slot on island isl: an archive member when reseeding, else by weight. */
static int pick_parent(struct engine *e, int isl, int slot, const struct cuco_phase_params *pp,
                       struct cuco_rng *rng)
{
	int arch[64], na;

	if (pp->reseed && slot == 0 && (na = cuco_island_archive(&e->pop, isl, arch, 64)) > 0)
		return arch[cuco_rng_below(rng, (uint64_t)na)];
	return cuco_island_pick_parent(&e->pop, isl, pp->lambda, rng);
}

/*
 * Breed one child of generation g on island isl into L. Returns CUCO_OK (a
 * child was added, or none could be found: *made says which) or an error.
 */
static int breed(struct engine *e, struct pendlist *L, int g, int isl, int slot,
                 const struct cuco_phase_params *pp, struct cuco_rng *rng, int *made,
                 struct cuco_err *err)
{
	struct cuco_op_ctx op = {e->o->ds, e->o->facts, &e->genes,
	                         pp->use_bias && e->bias.active ? &e->bias : NULL};
	struct cuco_strbuf code = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	*made = 0;
	for (int attempt = 0; attempt < NOVELTY_ATTEMPTS; attempt++) {
		int parent, insp[8], ninsp, partner = -1, nchanges;
		struct cuco_directive child;
		struct cuco_err e2;
		struct pending *p;
		char *json;
		const char *op_name = "mutate";

		parent = pick_parent(e, isl, slot, pp, rng);
		if (parent < 0)
			goto out;
		ninsp = cuco_island_inspirations(&e->pop, isl, parent, e->cfg.top_k,
		                                 e->cfg.diverse_k, rng, insp, 8);
		nchanges = pp->changes_min;
		if (pp->changes_max > pp->changes_min) {
			if (pp->phase == CUCO_PHASE_EXPLOIT && !pp->reseed)
				nchanges += cuco_rng_unit(rng) < 0.25; /* mostly one change */
			else
				nchanges += (int)cuco_rng_below(
				    rng, (uint64_t)(pp->changes_max - pp->changes_min + 1));
		}
		nchanges += attempt / 2; /* bolder after rejections */
		cuco_err_clear(&e2);
		rc = CUCO_ERR_NOT_FOUND;
		if (ninsp > 0 && cuco_rng_unit(rng) < pp->crossover_rate) {
			partner = insp[cuco_rng_below(rng, (uint64_t)ninsp)];
			rc = cuco_operator_crossover(&op, &e->pop.m[parent].d, &e->pop.m[partner].d,
			                             rng, &child, &e2);
			op_name = "crossover";
		}
		if (rc) {
			partner = -1;
			op_name = "mutate";
			rc = cuco_operator_mutate(&op, &e->pop.m[parent].d,
			                          ninsp ? &e->pop.m[insp[0]].d : NULL, nchanges,
			                          rng, &child, &e2);
		}
		if (rc) { /* nothing valid and new around this parent */
			rc = CUCO_OK;
			continue;
		}
		cuco_strbuf_reset(&code);
		if ((rc = realize(e, &child, &code, err)))
			goto out;
		json = cuco_directive_to_json(&child);
		if (!json) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		if (cuco_novelty_check(&e->nov, code.buf, json, NULL, NULL) != CUCO_NOVEL) {
			e->prog.rejected++;
			free(json);
			continue;
		}
		if (!(p = pend_new(L)) || cuco_novelty_add(&e->nov, code.buf, json, 0)) {
			free(json);
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		p->island = isl;
		snprintf(p->name, sizeof(p->name), "g%d-i%d-c%d", g, isl, slot);
		p->op = op_name;
		p->code = cuco_strbuf_detach(&code, NULL);
		p->json = json;
		p->d = child;
		add_edge(p, e->pop.m[parent].program_id, "parent");
		if (partner >= 0)
			add_edge(p, e->pop.m[partner].program_id, "crossover");
		for (int k = 0; k < ninsp; k++)
			if (insp[k] != partner &&
			    e->pop.m[insp[k]].program_id != e->pop.m[parent].program_id)
				add_edge(p, e->pop.m[insp[k]].program_id, "inspiration");
		e->pop.m[parent].nchildren++;
		*made = 1;
		goto out;
	}
out:
	cuco_strbuf_release(&code);
	return rc;
}

/*
 * Breed one child of generation g on island isl into L with the child
 * operator (up to OP_ATTEMPTS asks). Returns CUCO_OK (*made says whether a
 * child was added; the operator's spent budget sets op_exhausted) or the
 * operator's error.
 */
static int breed_external(struct engine *e, struct pendlist *L, int g, int isl, int slot,
                          const struct cuco_phase_params *pp, struct cuco_rng *rng, int *made,
                          struct cuco_err *err)
{
	const struct cuco_child_operator *op = e->o->child_op;
	int rc = CUCO_OK;

	*made = 0;
	for (int attempt = 0; attempt < OP_ATTEMPTS; attempt++) {
		int parent, insp[8], ninsp;
		int64_t ids[8];
		struct cuco_breed_request rq;
		struct cuco_breed_child child;
		struct cuco_directive d;
		struct cuco_err e2;
		struct pending *p;
		char name[48];

		if ((parent = pick_parent(e, isl, slot, pp, rng)) < 0)
			return CUCO_OK;
		ninsp = cuco_island_inspirations(&e->pop, isl, parent, e->cfg.top_k,
		                                 e->cfg.diverse_k, rng, insp, 8);
		for (int k = 0; k < ninsp; k++)
			ids[k] = e->pop.m[insp[k]].program_id;
		snprintf(name, sizeof(name), "g%d-i%d-c%d", g, isl, slot);
		memset(&rq, 0, sizeof(rq));
		rq.run_id = e->run_id;
		rq.generation = g;
		rq.island = isl;
		rq.name = name;
		rq.exploit = pp->phase == CUCO_PHASE_EXPLOIT && !pp->reseed;
		rq.parent_id = e->pop.m[parent].program_id;
		rq.parent_fitness = e->pop.m[parent].correct ? e->pop.m[parent].fitness : 0;
		rq.inspirations = ids;
		rq.ninspirations = ninsp;
		memset(&child, 0, sizeof(child));
		rc = op->breed(op->ctx, &rq, &child, err);
		if (rc == CUCO_ERR_UNSUPPORTED) {
			e->op_exhausted = 1;
			rc = CUCO_OK;
		}
		cuco_err_clear(&e2);
		if (rc || e->op_exhausted || !child.code || !child.directive_json ||
		    cuco_directive_from_json(child.directive_json, &d, &e2)) {
			free(child.code);
			free(child.directive_json);
			free(child.flags);
			if (rc || e->op_exhausted)
				return rc;
			continue;
		}
		if (cuco_novelty_check(&e->nov, child.code, child.directive_json, NULL, NULL) !=
		    CUCO_NOVEL) {
			e->prog.rejected++;
			cuco_directive_release(&d);
			free(child.code);
			free(child.directive_json);
			free(child.flags);
			continue;
		}
		/* Members breed through the built-in operator too (mixed): complete the
		 * knobs the template needs, as for the seed. */
		if (e->o->template_text) {
			struct cuco_genes tg;
			memset(&tg, 0, sizeof(tg));
			cuco_realize_template_knobs(e->o->template_text, e->o->ds, &tg, &d, NULL);
		}
		if (!(p = pend_new(L)) ||
		    cuco_novelty_add(&e->nov, child.code, child.directive_json, 0)) {
			cuco_directive_release(&d);
			free(child.code);
			free(child.directive_json);
			free(child.flags);
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		}
		p->island = isl;
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->op = child.op_name ? child.op_name : "external";
		p->code = child.code;
		p->json = child.directive_json;
		p->flags = child.flags;
		p->d = d;
		add_edge(p, rq.parent_id, "parent");
		if (child.partner_id && child.partner_id != rq.parent_id)
			add_edge(p, child.partner_id, "crossover");
		for (int k = 0; k < ninsp; k++)
			if (ids[k] != child.partner_id && ids[k] != rq.parent_id)
				add_edge(p, ids[k], "inspiration");
		e->pop.m[parent].nchildren++;
		*made = 1;
		return CUCO_OK;
	}
	return rc;
}

/*
 * Breed generation g into L (empty). With an evaluation budget, the
 * candidates bred never exceed what is left of it, counting those of the
 * current generation still waiting for evaluation when L is the next one.
 */
static int breed_generation(struct engine *e, struct pendlist *L, int g, struct cuco_err *err)
{
	struct cuco_rng rng;
	int rc, waiting = L == &e->cur ? 0 : unevaluated(&e->cur);

	cuco_rng_seed_stream(&rng, e->cfg.seed, (uint64_t)g);
	for (int isl = 0; isl < e->pop.nislands; isl++) {
		struct cuco_phase_params pp;
		cuco_schedule_params(
		    &e->sched, g,
		    cuco_island_stagnating(&e->pop, isl, e->cfg.stagnation_generations), &pp);
		for (int slot = 0; slot < e->cfg.children_per_island; slot++) {
			const struct cuco_child_operator *op = e->o->child_op;
			int made, use_op;
			if (e->cfg.budget_evals > 0 &&
			    e->prog.evaluated + waiting + L->n >= e->cfg.budget_evals)
				return CUCO_OK;
			/* No draw without a child operator: built-in runs breed as before. */
			use_op =
			    op && op->breed &&
			    (op->share >= 1 || (op->share > 0 && cuco_rng_unit(&rng) < op->share));
			rc = use_op ? breed_external(e, L, g, isl, slot, &pp, &rng, &made, err)
			            : breed(e, L, g, isl, slot, &pp, &rng, &made, err);
			if (rc)
				return rc;
			if (e->op_exhausted)
				return CUCO_OK;
		}
	}
	return CUCO_OK;
}

/* The initial programs (generation 0, into cur): the seed and, with a template, its rendering. */
static int initial_programs(struct engine *e, struct cuco_err *err)
{
	struct pending *p = pend_new(&e->cur);
	struct cuco_strbuf code = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	if (!p)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	p->island = CUCO_STORE_NO_INT;
	snprintf(p->name, sizeof(p->name), "seed");
	p->op = "init";
	p->code = strdup(e->start_code);
	if ((rc = cuco_directive_parse("seed", e->start_code, &p->d, err)))
		return rc;
	free(p->d.file);
	p->d.file = NULL;
	p->json = cuco_directive_to_json(&p->d);
	if (!p->code || !p->json)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	if (e->o->template_text) {
		if ((rc = realize(e, &e->start_d, &code, err)))
			goto out;
		if (strcmp(code.buf, e->start_code)) {
			if (!(p = pend_new(&e->cur))) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto out;
			}
			p->island = CUCO_STORE_NO_INT;
			snprintf(p->name, sizeof(p->name), "seed-realized");
			p->op = "init";
			p->code = cuco_strbuf_detach(&code, NULL);
			p->json = cuco_directive_to_json(&e->start_d);
			cuco_directive_copy(&p->d, &e->start_d);
			if (!p->json) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto out;
			}
		}
	}
	for (int i = 0; i < e->cur.n; i++)
		if (cuco_novelty_add(&e->nov, e->cur.a[i].code, e->cur.a[i].json, 0)) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
out:
	cuco_strbuf_release(&code);
	return rc;
}

/*
 * The next name of a comma- (or space-) separated list at *p into name: 1, 0 at
 * the end, -1 for a name of CUCO_NAME_MAX characters or more (left in name, cut).
 */
static int next_name(const char **p, char *name)
{
	size_t n;

	while (**p == ',' || **p == ' ')
		(*p)++;
	if (!**p)
		return 0;
	n = strcspn(*p, ", ");
	snprintf(name, CUCO_NAME_MAX, "%.*s", (int)n, *p);
	*p += n;
	return n < CUCO_NAME_MAX ? 1 : -1;
}

/* Whether the comma-separated list holds name. */
static int list_has(const char *list, const char *name)
{
	char one[CUCO_NAME_MAX];
	int r;

	while ((r = next_name(&list, one)) != 0)
		if (r > 0 && !strcmp(one, name))
			return 1;
	return 0;
}

/*
 * Take the config's frozen dimensions and knobs out of the genes, and the knobs
 * the design space holds ("searched": false) unless the config's search list
 * names them.
 */
static int apply_freeze(struct engine *e, struct cuco_err *err)
{
	const char *p = e->cfg.search;
	char name[CUCO_NAME_MAX];
	int r;

	while ((r = next_name(&p, name)) != 0)
		if (r < 0 || !cuco_design_space_knob(e->o->ds, name))
			return cuco_err_set(err, CUCO_ERR_INVALID, "search: %s%s is not a knob",
			                    name, r < 0 ? "..." : "");
	for (int k = 0; k < e->genes.nknobs;) {
		const struct cuco_ds_knob *spec =
		    cuco_design_space_knob(e->o->ds, e->genes.knobs[k]);
		if (spec && !spec->searched && !list_has(e->cfg.search, spec->name)) {
			memmove(e->genes.knobs[k], e->genes.knobs[k + 1],
			        (size_t)(e->genes.nknobs - k - 1) * sizeof(e->genes.knobs[0]));
			e->genes.nknobs--;
		} else
			k++;
	}
	p = e->cfg.freeze;
	while ((r = next_name(&p, name)) != 0) {
		int found = 0;

		if (r < 0)
			return cuco_err_set(err, CUCO_ERR_INVALID, "freeze: name too long: %s...",
			                    name);
		for (int d = 0; d < CUCO_NDIMS; d++)
			if (!strcmp(cuco_dimension_name(d), name)) {
				e->genes.dims[d] = 0;
				found = 1;
			}
		for (int k = 0; k < e->genes.nknobs; k++)
			if (!strcmp(e->genes.knobs[k], name)) {
				memmove(e->genes.knobs[k], e->genes.knobs[k + 1],
				        (size_t)(e->genes.nknobs - k - 1) *
				            sizeof(e->genes.knobs[0]));
				e->genes.nknobs--;
				found = 1;
				break;
			}
		if (!found && !cuco_design_space_knob(e->o->ds, name))
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "freeze: %s is neither a dimension nor a knob", name);
	}
	return CUCO_OK;
}

/* What the operator may change, and the start directive completed for the template. */
static int setup_genes(struct engine *e, struct cuco_err *err)
{
	int rc;

	if ((rc = cuco_directive_parse("seed", e->start_code, &e->start_d, err)))
		return rc;
	free(e->start_d.file);
	e->start_d.file = NULL;
	if (e->o->template_text) {
		memset(&e->genes, 0, sizeof(e->genes));
		for (int d = 0; d < CUCO_NDIMS; d++)
			e->genes.dims[d] = 1;
		rc = cuco_realize_template_knobs(e->o->template_text, e->o->ds, &e->genes,
		                                 &e->start_d, err);
	} else {
		char names[CUCO_DIRECTIVE_MAX_KNOBS][CUCO_NAME_MAX];
		const char *ptrs[CUCO_DIRECTIVE_MAX_KNOBS];
		int n;
		cuco_realize_seed_knobs(e->start_code, e->o->ds, names, CUCO_DIRECTIVE_MAX_KNOBS,
		                        &n);
		for (int i = 0; i < n; i++)
			ptrs[i] = names[i];
		cuco_genes_knobs_only(&e->genes, ptrs, n);
	}
	if (rc || (rc = apply_freeze(e, err)))
		return rc;
	if (e->o->template_text) {
		/* The seed's rendering (seed-realized) with the genes the template ignores
		 * canonical, as every child will be; kept as it is if that is not valid. */
		struct cuco_op_ctx op = {e->o->ds, e->o->facts, &e->genes, NULL};
		struct cuco_directive c;
		struct cuco_err e2;
		cuco_directive_copy(&c, &e->start_d);
		if (cuco_operator_canonicalize(&op, &c) &&
		    cuco_directive_validate(&c, e->o->ds, e->o->facts, &e2) == CUCO_OK)
			cuco_directive_copy(&e->start_d, &c);
	}
	if ((rc = cuco_directive_validate(&e->start_d, e->o->ds, e->o->facts, err)))
		cuco_err_prefix(err, "the seed's directive: ");
	return rc;
}

/* ---- resume ---- */

/* A stored candidate of the run, as loaded for the rebuild. */
struct loaded {
	int64_t id;
	int island, generation;
	char *name, *code, *json, *op;
	int64_t parent_ids[MAX_EDGES];
	char parent_kind[MAX_EDGES][16];
	int nparents;
	int evaluated, correct;
	double fitness, median_us, mean_us;
};

struct loader {
	struct loaded *a;
	int n, alloc;
	struct engine *e;
};

static int load_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct loader *L = arg;
	struct loaded *x;

	if (strcmp(p->origin, "candidate") || p->generation < 0)
		return 0;
	if (L->n == L->alloc) {
		int na = L->alloc ? 2 * L->alloc : 128;
		struct loaded *nx = realloc(L->a, (size_t)na * sizeof(*nx));
		if (!nx)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		L->a = nx;
		L->alloc = na;
	}
	x = &L->a[L->n++];
	memset(x, 0, sizeof(*x));
	x->id = p->id;
	x->island = (int)p->island;
	x->generation = (int)p->generation;
	x->name = strdup(p->name ? p->name : "");
	x->code = strdup(p->code);
	x->json = p->directive ? strdup(p->directive) : NULL;
	x->op = strdup(p->operator_ ? p->operator_ : "");
	x->median_us = x->mean_us = NAN;
	for (size_t i = 0; i < p->nparents && x->nparents < MAX_EDGES; i++) {
		x->parent_ids[x->nparents] = p->parents[i].id;
		snprintf(x->parent_kind[x->nparents++], 16, "%s",
		         p->parents[i].kind ? p->parents[i].kind : "parent");
	}
	if (!x->name || !x->code || !x->op)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	return 0;
}

static int load_eval(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct loader *L = arg;
	struct cuco_eval_outcome out;
	int lo = 0, hi = L->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		struct loaded *x = &L->a[mid];
		if (x->id == ev->program_id) {
			if (x->evaluated)
				return 0;
			x->evaluated = 1;
			x->correct = ev->error_code == CUCO_OK && !strcmp(ev->status, "ok");
			x->fitness = x->correct && isfinite(ev->fitness) ? ev->fitness : 0;
			x->median_us = ev->median_us;
			x->mean_us = ev->mean_us;
			cuco_eval_outcome_init(&out);
			out.code = ev->error_code;
			snprintf(out.status, sizeof(out.status), "%s", ev->status);
			snprintf(out.stage, sizeof(out.stage), "%s",
			         ev->stage_reached ? ev->stage_reached : "run");
			tally(L->e, &out);
			if (x->correct)
				note_best(L->e, x->id, x->fitness,
				          latency_of(L->e, x->median_us, x->mean_us));
			return 0;
		}
		if (x->id < ev->program_id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static void loader_free(struct loader *L)
{
	for (int i = 0; i < L->n; i++) {
		free(L->a[i].name);
		free(L->a[i].code);
		free(L->a[i].json);
		free(L->a[i].op);
	}
	free(L->a);
}

/*
 * Rebuild the islands from the run's stored candidates, generation by
 * generation, exactly as the live loop built them, up to the current
 * generation: the first one with a candidate lacking an evaluation, or, in a
 * pipelined run, the last stored one (the live loop bred the generation
 * after it before adding it to the islands). The current generation is left
 * in cur (*open = 1, *last_g = it); a pipelined run killed with two
 * generations stored but not evaluated has the later one in next
 * (*next_stored = 1). With nothing open, *last_g gets the last stored
 * generation, -1 when the run has none yet.
 */
static int rebuild(struct engine *e, int *last_g, int *open, int *next_stored, struct cuco_err *err)
{
	struct loader L;
	int rc, gmax = -1, gopen = -1, gcur, i = 0;

	memset(&L, 0, sizeof(L));
	L.e = e;
	*open = *next_stored = 0;
	if ((rc = cuco_store_program_each(e->o->store, e->run_id, load_program, &L, err)))
		goto out;
	if ((rc = cuco_store_eval_each_run(e->o->store, e->run_id, load_eval, &L, err)))
		goto out;
	for (int k = 0; k < L.n; k++) {
		if (L.a[k].generation > gmax)
			gmax = L.a[k].generation;
		if (!L.a[k].evaluated && (gopen < 0 || L.a[k].generation < gopen))
			gopen = L.a[k].generation;
		if (L.a[k].generation == 0 && !strcmp(L.a[k].op, "init") &&
		    !strcmp(L.a[k].name, "seed") && !e->start_code)
			e->start_code = strdup(L.a[k].code);
	}
	if (!e->start_code && gmax < 0 && e->o->seed_code) {
		/* Killed before generation 0 was stored: start over from the seed. */
		*last_g = -1;
		goto out;
	}
	if (!e->start_code) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "run %lld has no stored seed (generation 0); start a new run",
		                  (long long)e->run_id);
		goto out;
	}
	if (gopen >= 0 && gmax > gopen + 1) {
		rc = cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld: generation %d has candidates without an evaluation, but "
		    "generation %d is stored too (at most the next one can be); it "
		    "cannot be resumed",
		    (long long)e->run_id, gopen, gmax);
		goto out;
	}
	gcur = gopen >= 0 ? gopen : e->cfg.pipeline && gmax >= 1 ? gmax : gmax + 1;
	if ((rc = setup_genes(e, err)))
		goto out;
	for (int g = 0; g <= gmax; g++) {
		struct pendlist *T = g > gcur ? &e->next : &e->cur;
		pend_clear(T);
		/* Programs come oldest first, generation by generation. */
		for (; i < L.n && L.a[i].generation <= g; i++) {
			struct loaded *x = &L.a[i];
			struct pending *p;
			if (x->generation < g)
				continue;
			if (!(p = pend_new(T))) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto out;
			}
			p->program_id = x->id;
			p->island = x->island;
			snprintf(p->name, sizeof(p->name), "%s", x->name);
			p->op = "";
			p->code = x->code;
			p->json = x->json;
			x->code = x->json = NULL;
			p->evaluated = x->evaluated;
			p->correct = x->correct;
			p->fitness = x->fitness;
			p->median_us = x->median_us;
			p->mean_us = x->mean_us;
			if (p->json && cuco_directive_from_json(p->json, &p->d, err) != CUCO_OK) {
				rc = err->code;
				cuco_err_prefix(err, "program %lld: ", (long long)x->id);
				goto out;
			}
			if (cuco_novelty_add(&e->nov, p->code, p->json, p->program_id)) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto out;
			}
			for (int k = 0; k < x->nparents; k++) {
				int at;
				if (strcmp(x->parent_kind[k], "parent"))
					continue;
				at = cuco_population_find(&e->pop, x->island, x->parent_ids[k]);
				if (at >= 0)
					e->pop.m[at].nchildren++;
			}
		}
		if (g >= gcur)
			continue; /* cur (and next) stay pending */
		if ((rc = add_members(e, T, g)) || (rc = finish_generation(e, g, err)))
			goto out;
		pend_clear(T);
	}
	*open = gcur <= gmax;
	*last_g = *open ? gcur : gmax;
	*next_stored = gmax == gcur + 1;
out:
	loader_free(&L);
	return rc;
}

/* ---- the loop ---- */

/* Hand L (stored) to the evaluator's prefetch, when it has one. */
static int prefetch(struct engine *e, const struct pendlist *L, struct cuco_err *err)
{
	const struct cuco_evaluator *ev = &e->o->evaluator;
	struct cuco_candidate *c;
	int n = 0, rc;

	if (!ev->prefetch || !unevaluated(L))
		return CUCO_OK;
	if (!(c = calloc((size_t)L->n, sizeof(*c))))
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	for (int i = 0; i < L->n; i++)
		if (!L->a[i].evaluated) {
			c[n].name = L->a[i].name;
			c[n].code = L->a[i].code;
			c[n].directive_json = L->a[i].json;
			c[n++].program_id = L->a[i].program_id;
		}
	rc = ev->prefetch(ev->ctx, c, n, err);
	free(c);
	return rc;
}

/*
 * Pipelined, whether generation g+1 is bred now, before g is evaluated: from
 * generation 1 on (the islands are empty before generation 0 is judged),
 * within the generations, and only when the run goes on (no stop asked, the
 * budgets and the child operator not spent by what is already bred).
 */
static int lag_due(const struct engine *e, int g)
{
	if (!e->cfg.pipeline || g < 1 || g + 1 > e->cfg.generations || e->op_exhausted ||
	    should_stop(e))
		return 0;
	return !(e->cfg.budget_evals > 0 &&
	         e->prog.evaluated + unevaluated(&e->cur) >= e->cfg.budget_evals);
}

int cuco_evolve_run(const struct cuco_evolve_opts *o, const struct cuco_evolve_config *cfg,
                    int64_t resume_run, int64_t *run_id, struct cuco_evolve_progress *final,
                    struct cuco_err *err)
{
	struct engine e;
	/* open: cur holds generation g, stored; lagged: it was bred ahead by the pipeline;
	 * have_next: next holds generation g+1, stored (prefetched once next_sent) */
	int rc = CUCO_OK, g = 0, open = 0, lagged = 0, have_next = 0, next_sent = 0, empty = 0;
	char *config = NULL;
	const char *why = NULL;

	memset(&e, 0, sizeof(e));
	e.o = o;
	e.cfg = *cfg;
	e.bias_generation = -1;
	e.t0 = cuco_now();
	e.prog.best_us = e.prog.baseline_us = NAN;
	e.sched = cuco_evolve_schedule(cfg);
	/* Pipelining needs a prefetch to gain anything; a fresh run stores the order it uses. */
	if (!o->evaluator.prefetch)
		e.cfg.pipeline = 0;
	cuco_novelty_init(&e.nov, cfg->novelty_threshold);
	if (!o->evaluator.evaluate && !o->evaluator.evaluate_batch) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: no evaluator");
		goto out;
	}
	if (cuco_population_init(&e.pop, cfg->islands, cfg->population_size, cfg->archive_size)) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: islands must be 1..%d",
		                  CUCO_MAX_ISLANDS);
		goto out;
	}
	if (resume_run) {
		struct cuco_run_rec run;
		cuco_run_rec_init(&run);
		if ((rc = cuco_store_run_get(o->store, resume_run, &run, err)))
			goto out;
		if (strcmp(run.kind, "evolve")) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID,
			                  "run %lld is a '%s' run, not an evolve run",
			                  (long long)resume_run, run.kind);
			cuco_run_rec_release(&run);
			goto out;
		}
		cuco_run_rec_release(&run);
		e.run_id = resume_run;
		if (run_id)
			*run_id = e.run_id;
		e.prog.run_id = e.run_id;
		g = 0;
		if ((rc = cuco_store_run_finish(o->store, e.run_id, "running", err)) ||
		    (rc = rebuild(&e, &g, &open, &have_next, err)))
			goto fail;
		if (g < 0) {
			e.start_code = strdup(o->seed_code);
			if (!e.start_code) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto fail;
			}
			if ((rc = setup_genes(&e, err)) || (rc = initial_programs(&e, err)) ||
			    (rc = store_pending(&e, &e.cur, 0, err)))
				goto fail;
			g = 0;
			open = 1;
		} else if (!open) {
			g++;
		} else {
			e.prog.resumed_evals = unevaluated(&e.cur) + unevaluated(&e.next);
		}
	} else {
		struct cuco_run_rec run;
		if (!o->seed_code) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: no seed program");
			goto out;
		}
		e.start_code = strdup(o->seed_code);
		config = config_json(&e.cfg, o->llm_json);
		if (!e.start_code || !config) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		cuco_run_rec_init(&run);
		run.kind = "evolve";
		run.workload = o->workload;
		run.shape = o->shape;
		run.config = config;
		run.gpu = o->gpu;
		run.cuco_version = CUCO_VERSION;
		if ((rc = cuco_store_run_begin(o->store, &run, &e.run_id, err)))
			goto out;
		if (run_id)
			*run_id = e.run_id;
		e.prog.run_id = e.run_id;
		if ((rc = setup_genes(&e, err)) || (rc = initial_programs(&e, err)) ||
		    (rc = store_pending(&e, &e.cur, 0, err)))
			goto fail;
		open = 1;
		g = 0;
	}
	e.prog.generations = cfg->generations;
	for (;; g++) {
		e.prog.generation = g;
		e.prog.phase = cuco_phase_name(cuco_schedule_phase(&e.sched, g < 1 ? 1 : g));
		if (!open) {
			if (g > cfg->generations) {
				why = "generations";
				break;
			}
			if ((why = should_stop(&e)))
				break;
			if (e.op_exhausted) { /* after the bred children were judged */
				why = "budget-llm";
				break;
			}
			pend_clear(&e.cur);
			if ((rc = breed_generation(&e, &e.cur, g, err)) ||
			    (rc = store_pending(&e, &e.cur, g, err)))
				goto fail;
			empty = e.cur.n ? 0 : empty + 1;
			if (empty >= EMPTY_LIMIT) {
				why = "exhausted";
				break;
			}
		} else if (lagged) {
			/* Bred ahead: the checks the strict order makes before breeding it. It
			 * stays stored, unevaluated, for --resume. */
			if ((why = should_stop(&e)))
				break;
			if (empty >= EMPTY_LIMIT) {
				why = "exhausted";
				break;
			}
		}
		open = lagged = 0;
		if (have_next && !next_sent) {
			/* Resumed with g+1 stored too: compile it while g runs. */
			if ((rc = prefetch(&e, &e.next, err)))
				goto fail;
			next_sent = 1;
		} else if (!have_next && lag_due(&e, g)) {
			pend_clear(&e.next);
			if ((rc = breed_generation(&e, &e.next, g + 1, err)) ||
			    (rc = store_pending(&e, &e.next, g + 1, err)) ||
			    (rc = prefetch(&e, &e.next, err)))
				goto fail;
			empty = e.next.n ? 0 : empty + 1;
			have_next = next_sent = 1;
		}
		if ((rc = evaluate_pending(&e, g, err)))
			goto fail;
		if (!all_evaluated(&e.cur)) {
			why = should_stop(&e);
			break;
		}
		if ((rc = add_members(&e, &e.cur, g)) || (rc = finish_generation(&e, g, err)))
			goto fail;
		report(&e);
		if (have_next) {
			struct pendlist t = e.cur;
			e.cur = e.next;
			e.next = t;
			open = lagged = 1;
			have_next = next_sent = 0;
		}
		pend_clear(&e.next);
	}
	e.prog.stop_reason = why ? why : "generations";
	e.prog.interrupted = why && !strcmp(why, "interrupted");
	rc = cuco_store_run_finish(o->store, e.run_id, e.prog.interrupted ? "interrupted" : "done",
	                           err);
	goto out;
fail:
	if (e.run_id) /* the reason stays with the run: its report and `show run` say it */
		cuco_store_run_fail(o->store, e.run_id, err ? err->msg : NULL, NULL);
out:
	/* Nothing compiles on behind the caller (a generation bred ahead stays stored). */
	if (o->evaluator.prefetch_cancel)
		o->evaluator.prefetch_cancel(o->evaluator.ctx);
	if (final)
		*final = e.prog;
	pend_clear(&e.cur);
	pend_clear(&e.next);
	free(e.cur.a);
	free(e.next.a);
	free(e.start_code);
	free(e.summary_text);
	free(config);
	cuco_population_release(&e.pop);
	cuco_novelty_release(&e.nov);
	return rc;
}
