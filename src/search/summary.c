/* summary.c - statistical meta-summary of a run from the store (see summary.h). */
#include "search/summary.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/operator.h"
#include "store/store.h"
#include "util/array.h"
#include "util/xalloc.h"

/* One candidate as the summary sees it. */
struct row {
	int64_t id;
	char *directive;
	int evaluated, correct;
	double fitness;
};

struct collect {
	int max_generation;
	struct row *rows;
	int n;
	size_t alloc;
	struct cuco_summary *s;
};

static int collect_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct collect *c = arg;
	struct row *r;

	(void)err;
	if (strcmp(p->origin, "candidate") || p->generation > c->max_generation)
		return 0;
	r = CUCO_ARRAY_PUSH(c->rows, c->n, c->alloc);
	memset(r, 0, sizeof(*r));
	r->id = p->id;
	r->directive = cuco_xstrdup(p->directive);
	return 0;
}

static struct row *find_row(struct collect *c, int64_t id)
{
	int lo = 0, hi = c->n - 1;

	while (lo <= hi) { /* rows come oldest first: ids ascend */
		int mid = (lo + hi) / 2;
		if (c->rows[mid].id == id)
			return &c->rows[mid];
		if (c->rows[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static void count(struct cuco_summary_count *a, int *n, int max, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(a[i].name, name)) {
			a[i].n++;
			return;
		}
	if (*n < max) {
		snprintf(a[*n].name, sizeof(a[*n].name), "%s", name);
		a[(*n)++].n = 1;
	}
}

/* Error prefixes: every distinct one counted, the most common kept at the end. */
struct prefixes {
	struct cuco_summary_count *a;
	int n;
	size_t alloc;
};

static void error_prefix(const char *error, char *out, size_t size)
{
	size_t n = 0;

	for (const char *p = error; *p && *p != '\n' && n + 1 < size && n < CUCO_SUMMARY_PREFIX;
	     p++)
		out[n++] = isdigit((unsigned char)*p) ? '#' : *p;
	out[n] = '\0';
}

static int collect_eval(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct collect *c = arg;
	struct cuco_summary *s = c->s;
	struct row *r = find_row(c, ev->program_id);
	int ok = !strcmp(ev->status, "ok") && isfinite(ev->fitness);

	if (!r || r->evaluated)
		return 0; /* not a candidate in range, or a second evaluation */
	r->evaluated = 1;
	r->correct = ok;
	r->fitness = ok ? ev->fitness : 0;
	s->nevaluated++;
	if (ok) {
		s->ncorrect++;
		if (r->fitness > s->best_fitness) {
			s->best_fitness = r->fitness;
			s->best_program = r->id;
		}
		return 0;
	}
	count(s->stages, &s->nstages, 8, ev->stage_reached ? ev->stage_reached : "unknown");
	count(s->statuses, &s->nstatuses, 16, ev->status);
	return 0;
}

/* Second pass over evaluations for error prefixes (kept apart to keep collect_eval simple). */
struct errwalk {
	struct collect *c;
	struct prefixes px;
};

static int collect_error(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct errwalk *w = arg;
	struct row *r = find_row(w->c, ev->program_id);
	char pre[CUCO_SUMMARY_PREFIX + 8];
	struct cuco_summary_count *pc;

	(void)err;
	if (!r || r->correct || !ev->error || !*ev->error || !strcmp(ev->status, "ok"))
		return 0;
	error_prefix(ev->error, pre, sizeof(pre));
	for (int i = 0; i < w->px.n; i++)
		if (!strcmp(w->px.a[i].name, pre)) {
			w->px.a[i].n++;
			return 0;
		}
	pc = CUCO_ARRAY_PUSH(w->px.a, w->px.n, w->px.alloc);
	snprintf(pc->name, sizeof(pc->name), "%s", pre);
	pc->n = 1;
	return 0;
}

static void add_stat(struct cuco_summary *s, size_t *alloc, const char *key, const char *value,
                     const struct row *r)
{
	struct cuco_summary_stat *st = NULL;

	for (int i = 0; i < s->nstats && !st; i++)
		if (!strcmp(s->stats[i].key, key) && !strcmp(s->stats[i].value, value))
			st = &s->stats[i];
	if (!st) {
		st = CUCO_ARRAY_PUSH(s->stats, s->nstats, *alloc);
		memset(st, 0, sizeof(*st));
		snprintf(st->key, sizeof(st->key), "%s", key);
		snprintf(st->value, sizeof(st->value), "%s", value);
	}
	st->n++;
	st->ncorrect += r->correct;
	st->sum += r->fitness;
	if (r->fitness > st->best)
		st->best = r->fitness;
}

static int cmp_count(const void *a, const void *b)
{
	const struct cuco_summary_count *x = a, *y = b;

	if (x->n != y->n)
		return y->n - x->n;
	return strcmp(x->name, y->name);
}

int cuco_summary_compute(struct cuco_store *store, int64_t run_id, int max_generation,
                         struct cuco_summary *out, struct cuco_err *err)
{
	struct collect c;
	struct errwalk w;
	size_t alloc = 0;
	int rc;
	double total = 0;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	memset(&w, 0, sizeof(w));
	out->generation = max_generation;
	c.max_generation = max_generation;
	c.s = out;
	w.c = &c;
	if ((rc = cuco_store_program_each(store, run_id, collect_program, &c, err)))
		goto out;
	out->nprograms = c.n;
	if ((rc = cuco_store_eval_each_run(store, run_id, collect_eval, &c, err)))
		goto out;
	if ((rc = cuco_store_eval_each_run(store, run_id, collect_error, &w, err)))
		goto out;
	if (w.px.n)
		if (w.px.n > 1) /* qsort(NULL, 0) is undefined */
			qsort(w.px.a, (size_t)w.px.n, sizeof(*w.px.a), cmp_count);
	for (int i = 0; i < w.px.n && i < CUCO_SUMMARY_MAX_ERRORS; i++)
		out->errors[out->nerrors++] = w.px.a[i];
	for (int i = 0; i < c.n; i++) {
		struct row *r = &c.rows[i];
		struct cuco_directive d;
		struct cuco_err e;
		char key[CUCO_NAME_MAX], val[CUCO_NAME_MAX];

		if (!r->evaluated)
			continue;
		total += r->fitness;
		if (!r->directive || cuco_directive_from_json(r->directive, &d, &e))
			continue;
		for (int k = 0; k < CUCO_NDIMS; k++)
			add_stat(out, &alloc, cuco_dimension_name(k), d.dims[k], r);
		for (int k = 0; k < d.nknobs; k++) {
			snprintf(key, sizeof(key), "knobs.%s", d.knobs[k].name);
			snprintf(val, sizeof(val), "%lld", d.knobs[k].value);
			add_stat(out, &alloc, key, val, r);
		}
		cuco_directive_release(&d);
	}
	out->mean_fitness = out->nevaluated ? total / out->nevaluated : 0;
	if (out->nstages > 1) /* none (NULL) in a run without evaluations */
		qsort(out->stages, (size_t)out->nstages, sizeof(out->stages[0]), cmp_count);
	if (out->nstatuses > 1)
		qsort(out->statuses, (size_t)out->nstatuses, sizeof(out->statuses[0]), cmp_count);
out:
	for (int i = 0; i < c.n; i++)
		free(c.rows[i].directive);
	free(c.rows);
	free(w.px.a);
	return rc;
}

void cuco_summary_release(struct cuco_summary *s)
{
	free(s->stats);
	memset(s, 0, sizeof(*s));
}

const struct cuco_summary_stat *cuco_summary_find(const struct cuco_summary *s, const char *key,
                                                  const char *value)
{
	for (int i = 0; i < s->nstats; i++)
		if (!strcmp(s->stats[i].key, key) && !strcmp(s->stats[i].value, value))
			return &s->stats[i];
	return NULL;
}

static json_t *counts_json(const struct cuco_summary_count *a, int n)
{
	json_t *o = json_object();

	for (int i = 0; o && i < n; i++)
		json_object_set_new(o, a[i].name, json_integer(a[i].n));
	return o;
}

char *cuco_summary_to_json(const struct cuco_summary *s)
{
	json_t *root = json_object(), *values = json_object(), *errors = json_array();
	char *text = NULL;

	if (!root || !values || !errors)
		goto out;
	json_object_set_new(root, "generation", json_integer(s->generation));
	json_object_set_new(root, "programs", json_integer(s->nprograms));
	json_object_set_new(root, "evaluated", json_integer(s->nevaluated));
	json_object_set_new(root, "correct", json_integer(s->ncorrect));
	json_object_set_new(root, "best_fitness", json_real(s->best_fitness));
	json_object_set_new(root, "best_program",
	                    s->best_program ? json_integer(s->best_program) : json_null());
	json_object_set_new(root, "mean_fitness", json_real(s->mean_fitness));
	for (int i = 0; i < s->nstats; i++) {
		const struct cuco_summary_stat *st = &s->stats[i];
		json_t *dim = json_object_get(values, st->key), *v = json_object();
		if (!dim) {
			dim = json_object();
			json_object_set_new(values, st->key, dim);
		}
		json_object_set_new(v, "n", json_integer(st->n));
		json_object_set_new(v, "correct", json_integer(st->ncorrect));
		json_object_set_new(v, "mean_fitness", json_real(st->n ? st->sum / st->n : 0));
		json_object_set_new(v, "best_fitness", json_real(st->best));
		json_object_set_new(dim, st->value, v);
	}
	json_object_set_new(root, "values", values);
	values = NULL;
	json_object_set_new(root, "failed_by_stage", counts_json(s->stages, s->nstages));
	json_object_set_new(root, "failed_by_status", counts_json(s->statuses, s->nstatuses));
	for (int i = 0; i < s->nerrors; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "prefix", json_string(s->errors[i].name));
		json_object_set_new(e, "count", json_integer(s->errors[i].n));
		json_array_append_new(errors, e);
	}
	json_object_set_new(root, "errors", errors);
	errors = NULL;
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
out:
	json_decref(root);
	json_decref(values);
	json_decref(errors);
	return text;
}

void cuco_summary_bias(const struct cuco_summary *s, const struct cuco_design_space *ds, double m,
                       struct cuco_bias *out)
{
	double mu = s->mean_fitness, floor_w = 0.05 * (mu > 0 ? mu : 1) + 1e-6;

	memset(out, 0, sizeof(*out));
	if (s->nevaluated == 0)
		return;
	out->active = 1;
	for (int i = 0; i < s->nstats; i++) {
		const struct cuco_summary_stat *st = &s->stats[i];
		double w = (st->sum + m * mu) / (st->n + m);
		if (w < floor_w)
			w = floor_w;
		if (!strncmp(st->key, "knobs.", 6)) {
			struct cuco_knob_bias *kb = NULL;
			char *end;
			long long v = strtoll(st->value, &end, 10);
			for (int k = 0; k < out->nknobs && !kb; k++)
				if (!strcmp(out->knob[k].name, st->key + 6))
					kb = &out->knob[k];
			if (!kb) {
				if (out->nknobs == CUCO_DIRECTIVE_MAX_KNOBS)
					continue;
				kb = &out->knob[out->nknobs++];
				snprintf(kb->name, sizeof(kb->name), "%s", st->key + 6);
			}
			if (kb->n < CUCO_BIAS_MAX_VALUES) {
				kb->values[kb->n] = v;
				kb->weight[kb->n++] = w;
			} else { /* full: replace the weakest value if this one is better */
				int lo = 0;
				for (int j = 1; j < kb->n; j++)
					if (kb->weight[j] < kb->weight[lo])
						lo = j;
				if (w > kb->weight[lo]) {
					kb->values[lo] = v;
					kb->weight[lo] = w;
				}
			}
			continue;
		}
		for (int d = 0; d < CUCO_NDIMS; d++) {
			if (strcmp(st->key, cuco_dimension_name(d)))
				continue;
			for (int v = 0; v < ds->dims[d].nvalues && v < CUCO_BIAS_MAX_VALUES; v++)
				if (!strcmp(ds->dims[d].values[v].name, st->value))
					out->dim[d][v] = w;
		}
	}
}
