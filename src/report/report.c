/*
 * report.c - the HTML and Markdown report of an evolve run: everything read
 * from the store, charts drawn as inline SVG, the best program diffed against
 * the seed with a small LCS line diff. No clock is read: the only times in
 * the report are the run's own.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cascade/cascade.h"
#include "report/report.h"
#include "search/evolve.h"
#include "search/recheck.h"
#include "search/summary.h"
#include "store/store.h"
#include "util/paths.h"

#define MAX_ISLANDS 16

struct prog {
	int64_t id;
	char *name, *origin, *op, *directive, *code;
	char *flags; /* where its code contradicts its directive, one per line; NULL: none */
	int64_t island, generation, parent;
	double fitness, lat_us; /* best correct evaluation; latency by the run's statistic */
	char *result_json;      /* that evaluation's per-shape details; NULL: one shape */
};

struct ev {
	int64_t program_id;
	double lat_us, fitness; /* latency by the run's statistic (median or mean) */
	double base_us; /* the host baseline timed beside it at the run's shape; NaN: unknown */
	int ok;
};

/* A reference latency: host baseline, a peer, compute or comm alone. */
struct ref {
	char label[96];
	double us;
};

struct report {
	struct cuco_store *store;
	struct cuco_run_rec run;
	struct prog *progs;
	int nprogs, aprogs;
	struct ev *evs;
	int nevs, aevs;
	int64_t bench_run;
	const char *timing; /* "sustained" or "burst": the run's, and its bench run's */
	struct ref refs[16];
	int nrefs;
	double compute_us, comm_us; /* the bench run's fastest compute alone and comm alone */
	double base_us;
	double peer_us; /* its fastest peer, named peer */
	char peer[64];
	int nshapes;      /* shapes the fitness covers (the config's "shapes"; 1 when absent) */
	char shapes[160]; /* their names, "4096, 8192" */
	char queues[48];  /* CUDA_DEVICE_MAX_CONNECTIONS the run was timed under, in words */
	int mean;         /* the run ranks by the mean of the timed runs, not the median */
	char gpu[128];    /* from the first evaluation that names one (evolve runs store none) */
	int exploit_from; /* first generation that exploits (the run's schedule); 0: unknown */
};

static char *xdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static struct prog *find_prog(struct report *r, int64_t id)
{
	int lo = 0, hi = r->nprogs - 1;

	while (lo <= hi) { /* ids come oldest first, so ascending */
		int mid = (lo + hi) / 2;
		if (r->progs[mid].id == id)
			return &r->progs[mid];
		if (r->progs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int add_prog(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct report *r = arg;
	struct prog *q;

	if (r->nprogs == r->aprogs) {
		int n = r->aprogs ? 2 * r->aprogs : 64;
		struct prog *np = realloc(r->progs, (size_t)n * sizeof(*np));
		if (!np)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		r->progs = np;
		r->aprogs = n;
	}
	q = &r->progs[r->nprogs++];
	memset(q, 0, sizeof(*q));
	q->id = p->id;
	q->name = xdup(p->name);
	q->origin = xdup(p->origin);
	q->op = xdup(p->operator_);
	q->flags = xdup(p->flags);
	q->directive = xdup(p->directive);
	q->code = xdup(p->code);
	q->island = p->island;
	q->generation = p->generation;
	q->fitness = q->lat_us = NAN;
	for (size_t i = 0; i < p->nparents && !q->parent; i++)
		if (!p->parents[i].kind || !strcmp(p->parents[i].kind, "parent"))
			q->parent = p->parents[i].id;
	if (!q->parent && p->nparents)
		q->parent = p->parents[0].id;
	return 0;
}

/* A number of a JSON object, NaN when absent or null. */
static double num_of(const json_t *o, const char *key)
{
	const json_t *x = json_object_get(o, key);

	return json_is_number(x) ? json_number_value(x) : NAN;
}

/* The primary shape's baseline in an evaluation's per-shape details; NaN when none. */
static double primary_base(const char *result_json)
{
	json_t *o = json_loads(result_json, 0, NULL);
	double us = num_of(json_array_get(json_object_get(o, "shapes"), 0), "baseline_us");

	json_decref(o);
	return us;
}

static int add_ev(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	struct report *r = arg;
	struct ev *v;
	struct prog *p;

	if (r->nevs == r->aevs) {
		int n = r->aevs ? 2 * r->aevs : 64;
		struct ev *nv = realloc(r->evs, (size_t)n * sizeof(*nv));
		if (!nv)
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		r->evs = nv;
		r->aevs = n;
	}
	v = &r->evs[r->nevs++];
	if (!r->gpu[0] && e->gpu && e->gpu[0])
		snprintf(r->gpu, sizeof(r->gpu), "%s", e->gpu);
	v->program_id = e->program_id;
	v->lat_us = r->mean ? e->mean_us : e->median_us;
	v->fitness = e->fitness;
	v->ok = !strcmp(e->status, "ok") && isfinite(v->lat_us) && v->lat_us > 0;
	/* One shape: fitness = base / latency. Several: fitness is a geometric mean, and the
	   primary shape's baseline is in the per-shape details. */
	v->base_us = e->result_json ? primary_base(e->result_json) : v->lat_us * e->fitness;
	p = find_prog(r, e->program_id);
	if (p && v->ok && (isnan(p->fitness) || e->fitness > p->fitness)) {
		p->fitness = e->fitness;
		p->lat_us = v->lat_us;
		free(p->result_json);
		if (e->result_json && !(p->result_json = strdup(e->result_json)))
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	}
	return 0;
}

/* The latest bench run of the same workload with evaluations at the run's shape. */
struct bench_find {
	const char *workload;
	int64_t latest;
};

static int bench_run(const struct cuco_run_rec *run, void *arg, struct cuco_err *err)
{
	struct bench_find *b = arg;

	(void)err;
	if (!strcmp(run->kind, "bench") && run->workload && !strcmp(run->workload, b->workload))
		b->latest = run->id;
	return 0;
}

struct bench_rows {
	struct report *r;
	const char *shape;
	int n;
};

static int bench_row(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	struct bench_rows *b = arg;
	struct report *r = b->r;
	struct cuco_program_rec p;
	const char *o;
	double us;

	if (!e->shape || strcmp(e->shape, b->shape))
		return 0;
	b->n++;
	us = r->mean ? e->mean_us : e->median_us;
	if (strcmp(e->status, "ok") || !isfinite(us) || r->nrefs >= 16)
		return 0;
	cuco_program_rec_init(&p);
	if (cuco_store_program_get(r->store, e->program_id, &p, err))
		return err->code;
	o = p.origin;
	if (!strcmp(o, "baseline") || !strcmp(o, "peer") || !strcmp(o, "compute") ||
	    !strcmp(o, "comm")) {
		struct ref *f = &r->refs[r->nrefs++];
		snprintf(f->label, sizeof(f->label), "%s: %s",
		         !strcmp(o, "baseline")  ? "host baseline"
		         : !strcmp(o, "peer")    ? "peer"
		         : !strcmp(o, "compute") ? "compute alone"
		                                 : "comm alone",
		         p.name ? p.name : "");
		f->us = us;
		if (!strcmp(o, "compute") && !(r->compute_us <= us))
			r->compute_us = us;
		if (!strcmp(o, "comm") && !(r->comm_us <= us))
			r->comm_us = us;
		if (!strcmp(o, "peer") && !(r->peer_us <= us)) {
			r->peer_us = us;
			snprintf(r->peer, sizeof(r->peer), "%s", p.name ? p.name : "");
		}
	}
	cuco_program_rec_release(&p);
	return 0;
}

static int load(struct report *r, int64_t run_id, struct cuco_err *err)
{
	struct bench_find bf;
	double *bases;
	int nb = 0, rc;

	if ((rc = cuco_store_run_get(r->store, run_id, &r->run, err)))
		return rc;
	r->timing = cuco_run_config_timing(r->run.config);
	r->mean = !strcmp(cuco_run_config_statistic(r->run.config), "mean");
	if (strcmp(r->run.kind, "evolve"))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "run %lld is a %s run; the report is of evolve runs",
		                    (long long)run_id, r->run.kind);
	{
		struct cuco_evolve_config cfg;
		struct cuco_err e2;
		cuco_evolve_config_default(&cfg);
		if (r->run.config && cuco_evolve_config_from_json(r->run.config, &cfg, &e2)) {
			cfg.nshapes = 0; /* an unreadable config: the run's shape, as always */
		} else if (r->run.config) {
			struct cuco_schedule sc = cuco_evolve_schedule(&cfg);
			r->exploit_from = cuco_schedule_switch(&sc);
		}
		if (cfg.max_connections[0])
			snprintf(r->queues, sizeof(r->queues), "CUDA_DEVICE_MAX_CONNECTIONS=%s",
			         cfg.max_connections);
		else
			snprintf(r->queues, sizeof(r->queues), "CUDA's default (8)");
		r->nshapes = cfg.nshapes > 1 ? cfg.nshapes : 1;
		for (int k = 0; k < cfg.nshapes && cfg.nshapes > 1; k++)
			snprintf(r->shapes + strlen(r->shapes),
			         sizeof(r->shapes) - strlen(r->shapes), "%s%s", k ? ", " : "",
			         cfg.shapes[k]);
	}
	if ((rc = cuco_store_program_each(r->store, run_id, add_prog, r, err)) ||
	    (rc = cuco_store_eval_each_run(r->store, run_id, add_ev, r, err)))
		return rc;
	/* The host baseline the search measured beside each candidate: fitness = base / median. */
	bases = calloc((size_t)r->nevs + 1, sizeof(*bases));
	if (!bases)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	for (int i = 0; i < r->nevs; i++)
		if (r->evs[i].ok && isfinite(r->evs[i].fitness) && r->evs[i].fitness > 0 &&
		    isfinite(r->evs[i].base_us))
			bases[nb++] = r->evs[i].base_us;
	for (int i = 1; i < nb; i++) /* insertion sort: small, and stable */
		for (int j = i; j > 0 && bases[j - 1] > bases[j]; j--) {
			double t = bases[j];
			bases[j] = bases[j - 1];
			bases[j - 1] = t;
		}
	r->base_us = nb ? bases[nb / 2] : NAN;
	free(bases);
	r->compute_us = r->comm_us = r->peer_us = NAN;
	r->peer[0] = 0;
	bf.workload = r->run.workload ? r->run.workload : "";
	bf.latest = 0;
	if ((rc = cuco_store_run_each(r->store, bench_run, &bf, err)))
		return rc;
	/* Latest first: walk back to the newest bench run that measured this shape. */
	for (int64_t id = bf.latest; id > 0 && r->run.shape; id--) {
		struct cuco_run_rec b;
		struct bench_rows br = {r, r->run.shape, 0};
		cuco_run_rec_init(&b);
		/* Only a bench run timed the same way (sustained or burst) is comparable. */
		if (cuco_store_run_get(r->store, id, &b, err) == CUCO_OK &&
		    !strcmp(b.kind, "bench") && b.workload && !strcmp(b.workload, bf.workload) &&
		    !strcmp(cuco_run_config_timing(b.config), r->timing)) {
			rc = cuco_store_eval_each_run(r->store, id, bench_row, &br, err);
			if (!rc && br.n)
				r->bench_run = id;
		}
		cuco_run_rec_release(&b);
		if (rc)
			return rc;
		if (r->bench_run)
			break;
		r->nrefs = 0;
	}
	return CUCO_OK;
}

static void release(struct report *r)
{
	for (int i = 0; i < r->nprogs; i++) {
		free(r->progs[i].name);
		free(r->progs[i].origin);
		free(r->progs[i].op);
		free(r->progs[i].flags);
		free(r->progs[i].directive);
		free(r->progs[i].code);
		free(r->progs[i].result_json);
	}
	free(r->progs);
	free(r->evs);
	cuco_run_rec_release(&r->run);
}

/* ---- text helpers ---- */

void cuco_report_escape(struct cuco_strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			cuco_strbuf_adds(sb, "&amp;");
			break;
		case '<':
			cuco_strbuf_adds(sb, "&lt;");
			break;
		case '>':
			cuco_strbuf_adds(sb, "&gt;");
			break;
		case '"':
			cuco_strbuf_adds(sb, "&quot;");
			break;
		case '\'':
			cuco_strbuf_adds(sb, "&#39;");
			break;
		default:
			cuco_strbuf_addch(sb, *s);
		}
	}
}

/* Markdown table cell: no pipes or newlines. */
static void md_cell(struct cuco_strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		if (*s == '|')
			cuco_strbuf_adds(sb, "\\|");
		else if (*s == '\n')
			cuco_strbuf_addch(sb, ' ');
		else
			cuco_strbuf_addch(sb, *s);
}

static void fmt_us(char *buf, size_t n, double us)
{
	if (isfinite(us))
		snprintf(buf, n, "%.1f us", us);
	else
		snprintf(buf, n, "-");
}

static void fmt_x(char *buf, size_t n, double base, double us)
{
	if (isfinite(base) && isfinite(us) && us > 0)
		snprintf(buf, n, "%.3fx", base / us);
	else
		snprintf(buf, n, "-");
}

/* ---- line diff: LCS over lines after trimming the common ends ---- */

struct lines {
	const char **p;
	int *len;
	int n;
};

static int split_lines(const char *s, struct lines *l)
{
	int n = 0, cap = 16;

	l->p = malloc((size_t)cap * sizeof(*l->p));
	l->len = malloc((size_t)cap * sizeof(*l->len));
	if (!l->p || !l->len)
		return -1;
	for (const char *c = s ? s : ""; *c;) {
		const char *nl = strchr(c, '\n');
		int len = nl ? (int)(nl - c) : (int)strlen(c);
		if (n == cap) {
			const char **np;
			int *nlen;
			cap *= 2;
			np = realloc(l->p, (size_t)cap * sizeof(*np));
			if (!np)
				return -1;
			l->p = np;
			nlen = realloc(l->len, (size_t)cap * sizeof(*nlen));
			if (!nlen)
				return -1;
			l->len = nlen;
		}
		l->p[n] = c;
		l->len[n++] = len;
		c += len + (nl ? 1 : 0);
	}
	l->n = n;
	return 0;
}

static int line_eq(const struct lines *a, int i, const struct lines *b, int j)
{
	return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], (size_t)a->len[i]);
}

/* Edit script entry: ' ', '-' (line of a), '+' (line of b). */
struct op {
	char kind;
	int ai, bi;
};

static void emit_hunks(const struct lines *a, const struct lines *b, const struct op *ops, int nops,
                       struct cuco_strbuf *out)
{
	const int ctx = 3;

	for (int i = 0; i < nops;) {
		int start, end, an = 0, bn = 0, a0 = -1, b0 = -1;
		if (ops[i].kind == ' ') {
			i++;
			continue;
		}
		start = i - ctx < 0 ? 0 : i - ctx;
		/* Extend while the next change is within 2*ctx lines. */
		end = i;
		for (int k = i; k < nops; k++) {
			if (ops[k].kind != ' ')
				end = k;
			else if (k - end > 2 * ctx)
				break;
		}
		end = end + ctx >= nops ? nops - 1 : end + ctx;
		for (int k = start; k <= end; k++) {
			if (ops[k].kind != '+') {
				an++;
				if (a0 < 0)
					a0 = ops[k].ai;
			}
			if (ops[k].kind != '-') {
				bn++;
				if (b0 < 0)
					b0 = ops[k].bi;
			}
		}
		cuco_strbuf_addf(out, "@@ -%d,%d +%d,%d @@\n", a0 < 0 ? 0 : a0 + 1, an,
		                 b0 < 0 ? 0 : b0 + 1, bn);
		for (int k = start; k <= end; k++) {
			const struct lines *l = ops[k].kind == '+' ? b : a;
			int idx = ops[k].kind == '+' ? ops[k].bi : ops[k].ai;
			cuco_strbuf_addch(out, ops[k].kind);
			cuco_strbuf_add(out, l->p[idx], (size_t)l->len[idx]);
			cuco_strbuf_addch(out, '\n');
		}
		i = end + 1;
	}
}

void cuco_report_diff(const char *as, const char *bs, struct cuco_strbuf *out)
{
	struct lines a = {0}, b = {0};
	struct op *ops = NULL;
	int *dp = NULL, pre = 0, suf = 0, n, m, nops = 0;

	if (split_lines(as, &a) || split_lines(bs, &b))
		goto out;
	while (pre < a.n && pre < b.n && line_eq(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre && line_eq(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	n = a.n - pre - suf;
	m = b.n - pre - suf;
	ops = malloc((size_t)(a.n + b.n + 1) * sizeof(*ops));
	if (!ops)
		goto out;
	for (int i = 0; i < pre; i++)
		ops[nops++] = (struct op){' ', i, i};
	if ((double)(n + 1) * (m + 1) <= 16e6)
		dp = calloc((size_t)(n + 1) * (size_t)(m + 1), sizeof(*dp));
	if (dp) {
		/* dp[i][j]: LCS length of a[pre+i..] and b[pre+j..]. */
		for (int i = n - 1; i >= 0; i--)
			for (int j = m - 1; j >= 0; j--)
				dp[i * (m + 1) + j] =
				    line_eq(&a, pre + i, &b, pre + j)
				        ? dp[(i + 1) * (m + 1) + j + 1] + 1
				    : dp[(i + 1) * (m + 1) + j] >= dp[i * (m + 1) + j + 1]
				        ? dp[(i + 1) * (m + 1) + j]
				        : dp[i * (m + 1) + j + 1];
		for (int i = 0, j = 0; i < n || j < m;) {
			if (i < n && j < m && line_eq(&a, pre + i, &b, pre + j)) {
				ops[nops++] = (struct op){' ', pre + i++, pre + j++};
			} else if (i < n && (j == m || dp[(i + 1) * (m + 1) + j] >=
			                                   dp[i * (m + 1) + j + 1])) {
				ops[nops++] =
				    (struct op){'-', pre + i++, pre + j}; /* '-' before '+' */
			} else {
				ops[nops++] = (struct op){'+', pre + i, pre + j++};
			}
		}
	} else { /* too large for the table: replace the middle wholesale */
		for (int i = 0; i < n; i++)
			ops[nops++] = (struct op){'-', pre + i, pre};
		for (int j = 0; j < m; j++)
			ops[nops++] = (struct op){'+', pre + n, pre + j};
	}
	for (int i = 0; i < suf; i++)
		ops[nops++] = (struct op){' ', pre + n + i, pre + m + i};
	emit_hunks(&a, &b, ops, nops, out);
out:
	free(dp);
	free(ops);
	free(a.p);
	free(a.len);
	free(b.p);
	free(b.len);
}

/* ---- directive diff: flattened keys ("placement", "knobs.chunks") ---- */

struct kv {
	char key[96];
	char *val;
};

static int kv_cmp(const void *x, const void *y)
{
	return strcmp(((const struct kv *)x)->key, ((const struct kv *)y)->key);
}

static int flatten(const char *json, struct kv *out, int max)
{
	json_t *root = json ? json_loads(json, 0, NULL) : NULL, *v, *w;
	const char *k, *k2;
	int n = 0;

	if (!json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	json_object_foreach(root, k, v)
	{
		if (json_is_object(v)) {
			json_object_foreach(v, k2, w)
			{
				if (n >= max)
					break;
				snprintf(out[n].key, sizeof(out[n].key), "%s.%s", k, k2);
				out[n++].val = json_is_string(w)
				                   ? strdup(json_string_value(w))
				                   : json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT);
			}
		} else if (n < max) {
			snprintf(out[n].key, sizeof(out[n].key), "%s", k);
			out[n++].val = json_is_string(v)
			                   ? strdup(json_string_value(v))
			                   : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		}
	}
	json_decref(root);
	if (n > 1) /* qsort(NULL, 0) is undefined */
		qsort(out, (size_t)n, sizeof(*out), kv_cmp);
	return n;
}

/* "key: old -> new, ..." for the keys that differ (or all of b when a is NULL). */
static void directive_diff(const char *a, const char *b, struct cuco_strbuf *out)
{
	struct kv ka[64], kb[64];
	int na = flatten(a, ka, 64), nb = flatten(b, kb, 64), i = 0, j = 0, first = 1;

	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(ka[i].key, kb[j].key);
		const char *sep = first ? "" : ", ";
		if (c == 0) {
			if (strcmp(ka[i].val ? ka[i].val : "", kb[j].val ? kb[j].val : ""))
				cuco_strbuf_addf(out, "%s%s: %s -> %s", sep, ka[i].key, ka[i].val,
				                 kb[j].val);
			else
				sep = NULL;
			i++;
			j++;
		} else if (c < 0) {
			cuco_strbuf_addf(out, "%s%s: %s -> (none)", sep, ka[i].key, ka[i].val);
			i++;
		} else {
			if (a)
				cuco_strbuf_addf(out, "%s%s: (none) -> %s", sep, kb[j].key,
				                 kb[j].val);
			else
				sep = NULL;
			j++;
		}
		if (sep)
			first = 0;
	}
	if (first)
		cuco_strbuf_adds(out, a ? "(same directive)" : "-");
	for (i = 0; i < na; i++)
		free(ka[i].val);
	for (j = 0; j < nb; j++)
		free(kb[j].val);
}

/* ---- SVG ---- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

/* A "nice" tick step for a span, about n ticks. */
static double nice_step(double span, int n)
{
	double raw = span / n, mag, f;

	if (!(raw > 0))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

struct chart {
	double x0, x1, y0, y1; /* data domain */
	int w, h, l, r, t, b;  /* size and margins in px */
};

static double cx(const struct chart *c, double x)
{
	return c->l + (x - c->x0) / (c->x1 - c->x0) * (c->w - c->l - c->r);
}

static double cy(const struct chart *c, double y)
{
	return c->h - c->b - (y - c->y0) / (c->y1 - c->y0) * (c->h - c->t - c->b);
}

static void axes(struct cuco_strbuf *h, const struct chart *c, const char *xlabel,
                 const char *ylabel)
{
	double sx = nice_step(c->x1 - c->x0, 8), sy = nice_step(c->y1 - c->y0, 6);

	cuco_strbuf_addf(h,
	                 "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
	                 "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
	                 c->l, c->h - c->b, c->w - c->r, c->h - c->b, c->l, c->t, c->l,
	                 c->h - c->b);
	if (sx < 1)
		sx = 1;
	for (double x = ceil(c->x0 / sx) * sx; x <= c->x1 + 1e-9; x += sx)
		cuco_strbuf_addf(
		    h,
		    "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		    "<text class=\"tl\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
		    cx(c, x), c->h - c->b, cx(c, x), c->h - c->b + 5, cx(c, x), c->h - c->b + 18,
		    x);
	for (double y = ceil(c->y0 / sy) * sy; y <= c->y1 + 1e-9; y += sy)
		cuco_strbuf_addf(
		    h,
		    "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		    "<text class=\"tl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
		    c->l, cy(c, y), c->w - c->r, cy(c, y), c->l - 6, cy(c, y) + 4, y);
	cuco_strbuf_addf(h,
	                 "<text class=\"al\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
	                 "<text class=\"al\" transform=\"translate(16,%d) rotate(-90)\" "
	                 "text-anchor=\"middle\">%s</text>\n",
	                 (c->l + c->w - c->r) / 2, c->h - 6, xlabel, (c->t + c->h - c->b) / 2,
	                 ylabel);
}

/* Evaluation i counts for island k: correct, and of a program of island k or of none
   (the seed belongs to every island). */
static int on_island(struct report *r, int i, int k)
{
	struct prog *p = find_prog(r, r->evs[i].program_id);

	return p && r->evs[i].ok && (p->island < 0 || p->island == k);
}

/*
 * Where the schedule turned from exploring to exploiting: a dashed line before
 * the first evaluation of a generation >= exploit_from, and a sentence.
 */
static void phase_line(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
                       const struct chart *c)
{
	int at = 0;
	double x;

	if (r->exploit_from < 1)
		return;
	for (int i = 0; i < r->nevs && !at; i++) {
		struct prog *p = find_prog(r, r->evs[i].program_id);
		if (p && p->generation >= r->exploit_from)
			at = i + 1;
	}
	if (!at) {
		cuco_strbuf_addf(
		    md,
		    "The run explored throughout: it ended before generation %d, where "
		    "its schedule turns to exploiting.\n\n",
		    r->exploit_from);
		return;
	}
	x = at > 1 ? at - 0.5 : c->x0;
	cuco_strbuf_addf(h,
	                 "<line class=\"phase\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
	                 "stroke=\"#888\" stroke-dasharray=\"5 4\"/>"
	                 "<text class=\"tl\" x=\"%.1f\" y=\"%d\" text-anchor=\"end\">explore</text>"
	                 "<text class=\"tl\" x=\"%.1f\" y=\"%d\">exploit</text>\n",
	                 cx(c, x), c->t, cx(c, x), c->h - c->b, cx(c, x) - 4, c->t + 12,
	                 cx(c, x) + 4, c->t + 12);
	cuco_strbuf_addf(
	    md,
	    "Schedule: evaluations 1-%d explore (generations up to %d), from evaluation "
	    "%d on the run exploits (generation %d on).\n\n",
	    at - 1, r->exploit_from - 1, at, r->exploit_from);
}

/* Best latency so far per island over the run's evaluations; one polyline per island. */
static void island_chart(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	double best[MAX_ISLANDS], lo = INFINITY, hi = -INFINITY;
	int nisl = 0, seen[MAX_ISLANDS] = {0};
	struct chart c = {1, 2, 0, 1, 900, 360, 70, 130, 20, 46};

	for (int i = 0; i < r->nprogs; i++)
		if (r->progs[i].island >= 0 && r->progs[i].island < MAX_ISLANDS &&
		    r->progs[i].island + 1 > nisl)
			nisl = (int)r->progs[i].island + 1;
	for (int k = 0; k < MAX_ISLANDS; k++)
		best[k] = INFINITY;
	/* The y axis spans the curves, not every evaluation: a curve starts at its island's
	   first correct latency and only falls, so one slow candidate later on must not
	   flatten them all against the floor. */
	for (int k = 0; k < nisl; k++) {
		int first = 1;
		for (int i = 0; i < r->nevs; i++)
			if (on_island(r, i, k)) {
				if (first)
					hi = fmax(hi, r->evs[i].lat_us);
				first = 0;
				lo = fmin(lo, r->evs[i].lat_us);
			}
	}
	cuco_strbuf_adds(h, "<h2>Best latency per island</h2>\n");
	cuco_strbuf_adds(md, "## Best latency per island\n\n");
	if (!nisl || !isfinite(lo)) {
		cuco_strbuf_adds(h,
		                 "<p class=\"missing\">No correct evaluation on any island.</p>\n");
		cuco_strbuf_adds(md, "No correct evaluation on any island.\n\n");
		return;
	}
	if (hi - lo < 1e-9 * hi + 1e-9)
		hi = lo + 1;
	c.y0 = lo - 0.05 * (hi - lo);
	c.y1 = hi + 0.05 * (hi - lo);
	c.x1 = r->nevs > 1 ? r->nevs : 2;
	cuco_strbuf_addf(h,
	                 "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	                 "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"best "
	                 "latency per island\">\n",
	                 c.w, c.h, c.w, c.h);
	axes(h, &c, "evaluation (run order)", "best latency (us)");
	phase_line(r, h, md, &c);
	cuco_strbuf_adds(md, "| island | first correct at evaluation | best latency | reached at "
	                     "evaluation |\n|---|---|---|---|\n");
	for (int k = 0; k < nisl; k++) {
		struct cuco_strbuf pts = CUCO_STRBUF_INIT;
		int first = 0, at = 0;
		best[k] = INFINITY;
		for (int i = 0; i < r->nevs; i++) {
			if (!on_island(r, i, k))
				continue;
			if (r->evs[i].lat_us < best[k]) {
				if (isfinite(best[k]))
					cuco_strbuf_addf(&pts, "%.1f,%.1f ", cx(&c, i + 1),
					                 cy(&c, best[k]));
				best[k] = r->evs[i].lat_us;
				cuco_strbuf_addf(&pts, "%.1f,%.1f ", cx(&c, i + 1),
				                 cy(&c, best[k]));
				if (!first)
					first = i + 1;
				at = i + 1;
			}
		}
		if (isfinite(best[k])) {
			seen[k] = 1;
			cuco_strbuf_addf(&pts, "%.1f,%.1f", cx(&c, r->nevs), cy(&c, best[k]));
			cuco_strbuf_addf(
			    h,
			    "<polyline class=\"island\" data-island=\"%d\" fill=\"none\" "
			    "stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n",
			    k, palette[k % 8], pts.buf);
			cuco_strbuf_addf(md, "| %d | %d | %.1f us | %d |\n", k, first, best[k], at);
		} else {
			cuco_strbuf_addf(md, "| %d | - | - | - |\n", k);
		}
		cuco_strbuf_release(&pts);
	}
	for (int k = 0; k < nisl; k++)
		cuco_strbuf_addf(h,
		                 "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>"
		                 "<text class=\"tl\" x=\"%d\" y=\"%d\">island %d%s</text>\n",
		                 c.w - c.r + 14, c.t + 10 + 18 * k, palette[k % 8], c.w - c.r + 34,
		                 c.t + 15 + 18 * k, k, seen[k] ? "" : " (none correct)");
	cuco_strbuf_adds(h, "</svg>\n");
	cuco_strbuf_adds(md, "\n");
	if (r->nshapes > 1) {
		char what[400];
		snprintf(what, sizeof(what),
		         "Latencies at %s, the primary shape. The run ranks by the geometric mean "
		         "over shapes %s, so its best program need not be the lowest line here.",
		         r->run.shape ? r->run.shape : "?", r->shapes);
		cuco_strbuf_adds(h, "<p>");
		cuco_report_escape(h, what);
		cuco_strbuf_adds(h, "</p>\n");
		cuco_strbuf_addf(md, "%s\n\n", what);
	}
}

/* ---- sections ---- */

static void section_head(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	int nok = 0;
	char title[256];

	for (int i = 0; i < r->nevs; i++)
		nok += r->evs[i].ok;
	snprintf(title, sizeof(title), "cuco evolve run %lld: %s at %s", (long long)r->run.id,
	         r->run.workload ? r->run.workload : "?", r->run.shape ? r->run.shape : "?");
	cuco_strbuf_adds(h,
	                 "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	                 "<title>");
	cuco_report_escape(h, title);
	cuco_strbuf_adds(
	    h, "</title>\n<style>\n"
	       "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px "
	       "auto;max-width:1300px;color:#222;padding:0 16px}\n"
	       "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid "
	       "#ddd;padding-bottom:4px}\n"
	       "table{border-collapse:collapse;margin:8px 0;font-size:13px}\n"
	       "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\n"
	       "th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	       "pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;overflow-x:auto;"
	       "font-size:12px;line-height:1.35}\n"
	       ".add{color:#116611;background:#e6ffe6;display:block}.del{color:#991111;"
	       "background:#ffe6e6;display:block}.hunk{color:#555;background:#eef;display:block}\n"
	       ".missing{color:#a60}.pass{color:#116611;font-weight:600}.fail{color:#b00;"
	       "font-weight:600}\n"
	       ".axis{stroke:#333;stroke-width:1}.tick{stroke:#333}.grid{stroke:#e4e4e4}\n"
	       ".tl{font-size:11px;fill:#333}.al{font-size:12px;fill:#222}\n"
	       ".meta td{overflow-wrap:anywhere}.meta "
	       "td:first-child{font-weight:600;white-space:nowrap}\n"
	       "</style>\n</head>\n<body>\n<h1>");
	cuco_report_escape(h, title);
	cuco_strbuf_adds(h, "</h1>\n<table class=\"meta\">\n");
	cuco_strbuf_addf(md, "# %s\n\n", title);
	{
		const char *rows[][2] = {
		    {"status", r->run.status},
		    {"started", r->run.created_at},
		    {"finished", r->run.finished_at},
		    {"GPU", r->run.gpu ? r->run.gpu : (r->gpu[0] ? r->gpu : NULL)},
		    {"cuco", r->run.cuco_version},
		    {"timing", r->timing},
		    {"latency", r->mean ? "mean of the timed runs (--statistic mean)"
		                        : "median of the timed runs"},
		    {"hardware queues", r->queues},
		    {"config", r->run.config}};
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			cuco_strbuf_addf(h, "<tr><td>%s</td><td>", rows[i][0]);
			cuco_report_escape(h, rows[i][1] ? rows[i][1] : "-");
			cuco_strbuf_adds(h, "</td></tr>\n");
			cuco_strbuf_addf(md, "- %s: ", rows[i][0]);
			if (!strcmp(rows[i][0], "config"))
				cuco_strbuf_addf(md, "`%s`", rows[i][1] ? rows[i][1] : "-");
			else
				cuco_strbuf_adds(md, rows[i][1] ? rows[i][1] : "-");
			cuco_strbuf_adds(md, "\n");
		}
	}
	if (r->nshapes > 1) {
		char what[320];
		snprintf(what, sizeof(what),
		         "geometric mean over shapes %s of baseline / latency (latencies at %s, "
		         "the primary shape)",
		         r->shapes, r->run.shape ? r->run.shape : "?");
		cuco_strbuf_adds(h, "<tr><td>fitness</td><td>");
		cuco_report_escape(h, what);
		cuco_strbuf_adds(h, "</td></tr>\n");
		cuco_strbuf_addf(md, "- fitness: %s\n", what);
	}
	cuco_strbuf_addf(h,
	                 "<tr><td>programs</td><td>%d</td></tr>\n<tr><td>evaluations</td><td>%d "
	                 "(%d correct)</td></tr>\n</table>\n",
	                 r->nprogs, r->nevs, nok);
	cuco_strbuf_addf(md, "- programs: %d\n- evaluations: %d (%d correct)\n\n", r->nprogs,
	                 r->nevs, nok);
}

static struct prog *seed_prog(struct report *r)
{
	for (int i = 0; i < r->nprogs; i++)
		if (r->progs[i].name && !strcmp(r->progs[i].name, "seed"))
			return &r->progs[i];
	return r->nprogs ? &r->progs[0] : NULL;
}

static void add_bar_row(struct cuco_strbuf *h, struct cuco_strbuf *md, const char *label, double us,
                        double base, const char *note)
{
	char a[32], b[32];

	fmt_us(a, sizeof(a), us);
	fmt_x(b, sizeof(b), base, us);
	cuco_strbuf_adds(h, "<tr><td>");
	cuco_report_escape(h, label);
	cuco_strbuf_addf(h, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>", a, b);
	cuco_report_escape(h, note);
	cuco_strbuf_adds(h, "</td></tr>\n");
	cuco_strbuf_adds(md, "| ");
	md_cell(md, label);
	cuco_strbuf_addf(md, " | %s | %s | ", a, b);
	md_cell(md, note);
	cuco_strbuf_adds(md, " |\n");
}

/* A run over several shapes: the best program at each, from its per-shape details. */
static void best_per_shape(const struct report *r, const struct prog *best, struct cuco_strbuf *h,
                           struct cuco_strbuf *md)
{
	json_t *o, *a;

	if (r->nshapes < 2 || !best || !best->result_json)
		return;
	o = json_loads(best->result_json, 0, NULL);
	a = json_object_get(o, "shapes");
	cuco_strbuf_addf(h,
	                 "<p>Fitness %.3f is the geometric mean of the speed-ups at the run's "
	                 "shapes:</p>\n<table class=\"shapes\"><tr><th>shape</th><th>latency</th>"
	                 "<th>baseline latency</th><th>speed-up</th></tr>\n",
	                 best->fitness);
	cuco_strbuf_addf(md,
	                 "Fitness %.3f is the geometric mean of the speed-ups at the run's "
	                 "shapes:\n\n| shape | latency | baseline latency | speed-up |\n"
	                 "|---|---|---|---|\n",
	                 best->fitness);
	for (size_t k = 0; k < json_array_size(a); k++) {
		const json_t *e = json_array_get(a, k);
		const char *name = json_string_value(json_object_get(e, "shape"));
		double us = num_of(e, r->mean ? "mean_us" : "median_us"),
		       base = num_of(e, "baseline_us");
		char lat[32], bl[32], x[32];
		fmt_us(lat, sizeof(lat), us);
		fmt_us(bl, sizeof(bl), base);
		fmt_x(x, sizeof(x), base, us);
		cuco_strbuf_adds(h, "<tr><td>");
		cuco_report_escape(h, name ? name : "?");
		cuco_strbuf_addf(h,
		                 "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
		                 "class=\"num\">%s</td></tr>\n",
		                 lat, bl, x);
		cuco_strbuf_adds(md, "| ");
		md_cell(md, name ? name : "?");
		cuco_strbuf_addf(md, " | %s | %s | %s |\n", lat, bl, x);
	}
	cuco_strbuf_adds(h, "</table>\n");
	cuco_strbuf_adds(md, "\n");
	json_decref(o);
}

/* The best against the fastest peer of the bench run: speed-up and hidden fraction. */
static void against_peer(const struct report *r, const struct prog *best, double ideal,
                         struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	double hid;
	char line[400];
	int k;

	if (!best || !isfinite(best->lat_us) || !isfinite(r->peer_us))
		return;
	hid = cuco_hidden_fraction(r->peer_us, ideal, best->lat_us);
	k = snprintf(line, sizeof(line), "against the fastest peer, %s (%.1f us): %.3fx", r->peer,
	             r->peer_us, r->peer_us / best->lat_us);
	if (isfinite(hid) && k > 0 && (size_t)k < sizeof(line))
		snprintf(line + k, sizeof(line) - (size_t)k,
		         "; hidden fraction %.2f (peer - best) / (peer - ideal bound)", hid);
	cuco_strbuf_adds(h, "<p>Best ");
	cuco_report_escape(h, line);
	cuco_strbuf_adds(h, ".</p>\n");
	cuco_strbuf_addf(md, "Best %s.\n\n", line);
}

static void section_summary(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                            struct cuco_strbuf *md)
{
	const struct prog *seed = seed_prog(r);
	struct ref rows[24];
	int n = 0;
	double base = r->base_us, ideal = NAN, hi = 0;
	char note[160];

	cuco_strbuf_adds(h, "<h2>Best against seed, baseline, peers and the ideal bound</h2>\n");
	cuco_strbuf_adds(md, "## Best against seed, baseline, peers and the ideal bound\n\n");
	if (best) {
		snprintf(note, sizeof(note), "program %lld (%s)", (long long)best->id,
		         best->name ? best->name : "");
		cuco_strbuf_addf(h, "<p>Best program: <b>%lld</b> (", (long long)best->id);
		cuco_report_escape(h, best->name);
		cuco_strbuf_addf(h, "), <b>%.1f us</b>, fitness %.3f.</p>\n", best->lat_us,
		                 best->fitness);
		cuco_strbuf_addf(md, "Best program: **%lld** (%s), **%.1f us**, fitness %.3f.\n\n",
		                 (long long)best->id, best->name ? best->name : "", best->lat_us,
		                 best->fitness);
		best_per_shape(r, best, h, md);
	} else {
		cuco_strbuf_adds(h, "<p class=\"missing\">No correct program in this run.</p>\n");
		cuco_strbuf_adds(md, "No correct program in this run.\n\n");
	}
	cuco_strbuf_addf(h,
	                 "<table><tr><th>program</th><th>%s latency</th><th>speed-up vs "
	                 "host baseline</th><th>note</th></tr>\n",
	                 r->mean ? "mean" : "median");
	cuco_strbuf_addf(md,
	                 "| program | %s latency | speed-up vs host baseline | note |\n"
	                 "|---|---|---|---|\n",
	                 r->mean ? "mean" : "median");
	if (best) {
		snprintf(rows[n].label, sizeof(rows[n].label), "best (program %lld)",
		         (long long)best->id);
		rows[n++].us = best->lat_us;
	}
	add_bar_row(h, md, "best", best ? best->lat_us : NAN, base, best ? note : "none correct");
	add_bar_row(h, md, "seed (fast path)", seed ? seed->lat_us : NAN, base,
	            seed && isfinite(seed->lat_us) ? "" : "seed did not pass");
	if (seed && isfinite(seed->lat_us)) {
		snprintf(rows[n].label, sizeof(rows[n].label), "seed");
		rows[n++].us = seed->lat_us;
	}
	add_bar_row(h, md, "host baseline (beside the candidates)", base, base,
	            r->mean ? "median of the baseline's mean latencies the search took"
	                    : "median of baseline timings the search took");
	if (isfinite(base)) {
		snprintf(rows[n].label, sizeof(rows[n].label), "host baseline");
		rows[n++].us = base;
	}
	if (!r->bench_run) {
		cuco_strbuf_adds(
		    h, "</table>\n<p class=\"missing\">No bench run of this workload at "
		       "this shape with the same timing in the store: peers (cuBLAS), "
		       "compute-alone, comm-alone "
		       "and the ideal bound are missing. Run <code>cuco bench</code>.</p>\n");
		cuco_strbuf_adds(
		    md,
		    "\n*No bench run of this workload at this shape with the same timing in "
		    "the store: peers (cuBLAS), compute-alone, comm-alone and the ideal bound are "
		    "missing. Run `cuco bench`.*\n\n");
	} else {
		snprintf(note, sizeof(note), "bench run %lld (%s timing)", (long long)r->bench_run,
		         r->timing);
		for (int i = 0; i < r->nrefs; i++) {
			add_bar_row(h, md, r->refs[i].label, r->refs[i].us, base, note);
			if (n < 20 && strncmp(r->refs[i].label, "host", 4))
				rows[n++] = r->refs[i];
		}
		ideal = cuco_ideal_bound(r->compute_us, r->comm_us);
		add_bar_row(h, md, "ideal bound: max(fastest compute alone, comm alone)", ideal,
		            base,
		            isfinite(ideal) ? "perfect overlap" : "compute or comm alone missing");
		if (isfinite(ideal)) {
			snprintf(rows[n].label, sizeof(rows[n].label), "ideal bound");
			rows[n++].us = ideal;
		}
		cuco_strbuf_adds(h, "</table>\n");
		cuco_strbuf_adds(md, "\n");
		against_peer(r, best, ideal, h, md);
	}
	/* Horizontal bars, latency on a common scale. */
	for (int i = 0; i < n; i++)
		hi = fmax(hi, rows[i].us);
	if (n && hi > 0) {
		int w = 900, l = 220, bh = 22, H = 30 + n * (bh + 8);
		cuco_strbuf_addf(
		    h,
		    "<svg class=\"bars\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		    "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
		    "aria-label=\"latency comparison\">\n",
		    w, H, w, H);
		for (int i = 0; i < n; i++) {
			double bw = rows[i].us / hi * (w - l - 110);
			int y = 10 + i * (bh + 8);
			cuco_strbuf_addf(
			    h, "<text class=\"tl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", l - 8,
			    y + 15);
			cuco_report_escape(h, rows[i].label);
			cuco_strbuf_addf(
			    h,
			    "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			    "fill=\"%s\"/><text class=\"tl\" x=\"%.1f\" y=\"%d\">%.1f "
			    "us</text>\n",
			    l, y, bw, bh, i == 0 && best ? "#1f77b4" : "#9aa9b8", l + bw + 6,
			    y + 15, rows[i].us);
		}
		cuco_strbuf_adds(h, "</svg>\n");
	}
}

static void section_lineage(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                            struct cuco_strbuf *md)
{
	const struct prog *chain[512];
	int n = 0;

	cuco_strbuf_adds(h, "<h2>Lineage of the best program</h2>\n");
	cuco_strbuf_adds(md, "## Lineage of the best program\n\n");
	if (!best) {
		cuco_strbuf_adds(h, "<p class=\"missing\">No best program.</p>\n");
		cuco_strbuf_adds(md, "No best program.\n\n");
		return;
	}
	for (const struct prog *p = best; p && n < 512;
	     p = p->parent ? find_prog(r, p->parent) : NULL)
		chain[n++] = p;
	cuco_strbuf_addf(h,
	                 "<p>%d programs from the first ancestor in this run to the best.</p>\n"
	                 "<table class=\"lineage\"><tr><th>step</th><th>program</th><th>generation"
	                 "</th><th>island</th><th>operator</th><th>directive change</th><th>"
	                 "latency</th><th>fitness</th></tr>\n",
	                 n);
	cuco_strbuf_addf(md,
	                 "%d programs from the first ancestor in this run to the best.\n\n"
	                 "| step | program | generation | island | operator | directive change | "
	                 "latency | fitness |\n|---|---|---|---|---|---|---|---|\n",
	                 n);
	for (int k = n - 1, step = 0; k >= 0; k--, step++) {
		const struct prog *p = chain[k], *prev = k + 1 < n ? chain[k + 1] : NULL;
		struct cuco_strbuf d = CUCO_STRBUF_INIT;
		char lat[32], fit[32], isl[24], gen[24];
		directive_diff(prev ? prev->directive : NULL, p->directive, &d);
		fmt_us(lat, sizeof(lat), p->lat_us);
		if (isfinite(p->fitness))
			snprintf(fit, sizeof(fit), "%.3f", p->fitness);
		else
			snprintf(fit, sizeof(fit), "-");
		snprintf(isl, sizeof(isl), p->island >= 0 ? "%lld" : "-", (long long)p->island);
		snprintf(gen, sizeof(gen), p->generation >= 0 ? "%lld" : "-",
		         (long long)p->generation);
		cuco_strbuf_addf(h, "<tr><td class=\"num\">%d</td><td>%lld ", step,
		                 (long long)p->id);
		cuco_report_escape(h, p->name);
		cuco_strbuf_addf(h, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>",
		                 gen, isl);
		cuco_report_escape(h, p->op ? p->op : "-");
		cuco_strbuf_adds(h, "</td><td>");
		cuco_report_escape(h, d.buf);
		cuco_strbuf_addf(
		    h, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n", lat, fit);
		cuco_strbuf_addf(md, "| %d | %lld ", step, (long long)p->id);
		md_cell(md, p->name);
		cuco_strbuf_addf(md, " | %s | %s | %s | ", gen, isl, p->op ? p->op : "-");
		md_cell(md, d.buf);
		cuco_strbuf_addf(md, " | %s | %s |\n", lat, fit);
		cuco_strbuf_release(&d);
	}
	cuco_strbuf_adds(h, "</table>\n");
	cuco_strbuf_adds(md, "\n");
}

/* The programs whose code contradicts its directive (LLM replies), with what contradicts it. */
static void section_flags(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	int n = 0;

	for (int i = 0; i < r->nprogs; i++)
		n += r->progs[i].flags && *r->progs[i].flags;
	cuco_strbuf_adds(h, "<h2>Code that contradicts its directive</h2>\n");
	cuco_strbuf_adds(md, "## Code that contradicts its directive\n\n");
	if (!n) {
		cuco_strbuf_adds(h, "<p>None flagged.</p>\n");
		cuco_strbuf_adds(md, "None flagged.\n\n");
		return;
	}
	cuco_strbuf_addf(h,
	                 "<p>%d programs were accepted with code that does not do what their "
	                 "directive says.</p>\n<table><tr><th>program</th><th>operator</th>"
	                 "<th>fitness</th><th>flags</th></tr>\n",
	                 n);
	cuco_strbuf_addf(md,
	                 "%d programs were accepted with code that does not do what their "
	                 "directive says.\n\n| program | operator | fitness | flags |\n"
	                 "|---|---|---|---|\n",
	                 n);
	for (int i = 0; i < r->nprogs; i++) {
		const struct prog *p = &r->progs[i];
		char fit[32];
		if (!p->flags || !*p->flags)
			continue;
		if (isfinite(p->fitness))
			snprintf(fit, sizeof(fit), "%.3f", p->fitness);
		else
			snprintf(fit, sizeof(fit), "-");
		cuco_strbuf_addf(h, "<tr><td>%lld ", (long long)p->id);
		cuco_report_escape(h, p->name);
		cuco_strbuf_adds(h, "</td><td>");
		cuco_report_escape(h, p->op ? p->op : "-");
		cuco_strbuf_addf(h, "</td><td class=\"num\">%s</td><td>", fit);
		cuco_report_escape(h, p->flags);
		cuco_strbuf_adds(h, "</td></tr>\n");
		cuco_strbuf_addf(md, "| %lld ", (long long)p->id);
		md_cell(md, p->name);
		cuco_strbuf_addf(md, " | %s | %s | ", p->op ? p->op : "-", fit);
		md_cell(md, p->flags);
		cuco_strbuf_adds(md, " |\n");
	}
	cuco_strbuf_adds(h, "</table>\n");
	cuco_strbuf_adds(md, "\n");
}

/* By dimension, then best mean fitness first, then value: a stable, readable order. */
static int stat_cmp(const void *x, const void *y)
{
	const struct cuco_summary_stat *a = x, *b = y;
	double ma = a->n ? a->sum / a->n : 0, mb = b->n ? b->sum / b->n : 0;
	int c = strcmp(a->key, b->key);

	if (c)
		return c;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->value, b->value);
}

static int section_stats(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
                         struct cuco_err *err)
{
	struct cuco_summary s;
	int rc = cuco_summary_compute(r->store, r->run.id, INT_MAX, &s, err);

	if (rc)
		goto out;
	cuco_strbuf_adds(h, "<h2>Directive values</h2>\n");
	cuco_strbuf_adds(md, "## Directive values\n\n");
	cuco_strbuf_addf(
	    h,
	    "<p>%d candidates evaluated, %d correct; mean fitness %.3f (failures count "
	    "0).</p>\n<table><tr><th>dimension</th><th>value</th><th>count</th><th>"
	    "failures</th><th>mean fitness</th><th>best fitness</th></tr>\n",
	    s.nevaluated, s.ncorrect, s.mean_fitness);
	cuco_strbuf_addf(md,
	                 "%d candidates evaluated, %d correct; mean fitness %.3f (failures count "
	                 "0).\n\n| dimension | value | count | failures | mean fitness | best "
	                 "fitness |\n|---|---|---|---|---|---|\n",
	                 s.nevaluated, s.ncorrect, s.mean_fitness);
	if (s.nstats > 1) /* a run without evaluations has no stats (NULL) */
		qsort(s.stats, (size_t)s.nstats, sizeof(*s.stats), stat_cmp);
	for (int i = 0; i < s.nstats; i++) {
		const struct cuco_summary_stat *t = &s.stats[i];
		double mean = t->n ? t->sum / t->n : NAN;
		cuco_strbuf_adds(h, "<tr><td>");
		cuco_report_escape(h, t->key);
		cuco_strbuf_adds(h, "</td><td>");
		cuco_report_escape(h, t->value);
		cuco_strbuf_addf(h,
		                 "</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td "
		                 "class=\"num\">%.3f</td><td class=\"num\">%.3f</td></tr>\n",
		                 t->n, t->n - t->ncorrect, mean, t->ncorrect ? t->best : 0.0);
		cuco_strbuf_adds(md, "| ");
		md_cell(md, t->key);
		cuco_strbuf_adds(md, " | ");
		md_cell(md, t->value);
		cuco_strbuf_addf(md, " | %d | %d | %.3f | %.3f |\n", t->n, t->n - t->ncorrect, mean,
		                 t->ncorrect ? t->best : 0.0);
	}
	cuco_strbuf_adds(h, "</table>\n<h2>Failures</h2>\n");
	cuco_strbuf_adds(md, "\n## Failures\n\n");
	if (!s.nstages && !s.nstatuses) {
		cuco_strbuf_adds(h, "<p>No candidate failed.</p>\n");
		cuco_strbuf_adds(md, "No candidate failed.\n\n");
	}
	for (int pass = 0; pass < 3; pass++) {
		const struct cuco_summary_count *c = pass == 0   ? s.stages
		                                     : pass == 1 ? s.statuses
		                                                 : s.errors;
		int nc = pass == 0 ? s.nstages : pass == 1 ? s.nstatuses : s.nerrors;
		const char *what = pass == 0 ? "stage reached" : pass == 1 ? "status" : "error";
		if (!nc)
			continue;
		cuco_strbuf_addf(h, "<table><tr><th>%s</th><th>failures</th></tr>\n", what);
		cuco_strbuf_addf(md, "| %s | failures |\n|---|---|\n", what);
		for (int i = 0; i < nc; i++) {
			cuco_strbuf_adds(h, "<tr><td>");
			cuco_report_escape(h, c[i].name);
			cuco_strbuf_addf(h, "</td><td class=\"num\">%d</td></tr>\n", c[i].n);
			cuco_strbuf_adds(md, "| ");
			md_cell(md, c[i].name);
			cuco_strbuf_addf(md, " | %d |\n", c[i].n);
		}
		cuco_strbuf_adds(h, "</table>\n");
		cuco_strbuf_adds(md, "\n");
	}
out:
	cuco_summary_release(&s);
	return rc;
}

static int section_recheck(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
                           struct cuco_err *err)
{
	char key[64], *text = NULL;
	json_t *root = NULL, *c;
	size_t i;
	int rc;

	cuco_strbuf_adds(h, "<h2>Re-check of the best program</h2>\n");
	cuco_strbuf_adds(md, "## Re-check of the best program\n\n");
	snprintf(key, sizeof(key), "run.%lld.recheck", (long long)r->run.id);
	if ((rc = cuco_store_meta_get(r->store, key, &text, err)))
		return rc;
	root = text ? json_loads(text, 0, NULL) : NULL;
	if (!json_is_object(root)) {
		cuco_strbuf_addf(h,
		                 "<p class=\"missing\">Not re-checked yet: <code>cuco recheck "
		                 "%lld</code>.</p>\n",
		                 (long long)r->run.id);
		cuco_strbuf_addf(md, "Not re-checked yet: `cuco recheck %lld`.\n\n",
		                 (long long)r->run.id);
		goto out;
	}
	{
		int passed = json_is_true(json_object_get(root, "passed"));
		long long prog = (long long)json_integer_value(json_object_get(root, "program"));
		long long seed = (long long)json_integer_value(json_object_get(root, "seed"));
		cuco_strbuf_addf(
		    h,
		    "<p>Program %lld at every shape with input seed %lld%s: <span "
		    "class=\"%s\">%s</span>.</p>\n<table><tr><th>check</th><th>shape</th>"
		    "<th>status</th><th>median</th><th>p90</th><th>mean</th><th>fitness</th>"
		    "<th>error or note</th></tr>\n",
		    prog, seed,
		    json_is_true(json_object_get(root, "sanitized"))
		        ? ", then under memcheck and racecheck"
		        : "",
		    passed ? "pass" : "fail", passed ? "passed" : "FAILED");
		cuco_strbuf_addf(
		    md,
		    "Program %lld at every shape with input seed %lld%s: **%s**.\n\n| "
		    "check | shape | status | median | p90 | mean | fitness | error or "
		    "note |\n|---|---|---|---|---|---|---|---|\n",
		    prog, seed,
		    json_is_true(json_object_get(root, "sanitized"))
		        ? ", then under memcheck and racecheck"
		        : "",
		    passed ? "passed" : "FAILED");
	}
	json_array_foreach(json_object_get(root, "checks"), i, c)
	{
		struct cuco_eval_rec ev;
		const char *check = json_string_value(json_object_get(c, "check"));
		char lat[32], p90[32], mean[32], fit[32];
		cuco_eval_rec_init(&ev);
		if (cuco_store_eval_get(
		        r->store, json_integer_value(json_object_get(c, "evaluation")), &ev, err))
			continue;
		/* p90 and mean beside the median: runs that are slow now and then (a
		 * device-signal program's every 8th, docs/overlap.md) show there */
		fmt_us(lat, sizeof(lat), ev.median_us);
		fmt_us(p90, sizeof(p90), ev.p90_us);
		fmt_us(mean, sizeof(mean), ev.mean_us);
		if (isfinite(ev.fitness))
			snprintf(fit, sizeof(fit), "%.3f", ev.fitness);
		else
			snprintf(fit, sizeof(fit), "-");
		cuco_strbuf_adds(h, "<tr><td>");
		cuco_report_escape(h, check ? check : "?");
		cuco_strbuf_adds(h, "</td><td>");
		cuco_report_escape(h, ev.shape ? ev.shape : "-");
		cuco_strbuf_addf(h, "</td><td class=\"%s\">",
		                 strcmp(ev.status, "ok") ? "fail" : "pass");
		cuco_report_escape(h, ev.status);
		cuco_strbuf_addf(h,
		                 "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
		                 "class=\"num\">%s</td><td class=\"num\">%s</td><td>",
		                 lat, p90, mean, fit);
		if (ev.error) {
			cuco_strbuf_adds(h, "<pre>");
			cuco_report_escape(h, ev.error);
			cuco_strbuf_adds(h, "</pre>");
		}
		cuco_strbuf_adds(h, "</td></tr>\n");
		cuco_strbuf_addf(md, "| %s | %s | %s | %s | %s | %s | %s | ", check ? check : "?",
		                 ev.shape ? ev.shape : "-", ev.status, lat, p90, mean, fit);
		md_cell(md, ev.error ? ev.error : "");
		cuco_strbuf_adds(md, " |\n");
		cuco_eval_rec_release(&ev);
	}
	cuco_strbuf_adds(h, "</table>\n");
	cuco_strbuf_adds(md, "\n");
out:
	json_decref(root);
	free(text);
	return CUCO_OK;
}

static void section_code(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                         struct cuco_strbuf *md)
{
	const struct prog *seed = seed_prog(r);
	struct cuco_strbuf d = CUCO_STRBUF_INIT;

	if (!best)
		return;
	cuco_strbuf_addf(h, "<h2>Best program %lld against the seed</h2>\n", (long long)best->id);
	cuco_strbuf_addf(md, "## Best program %lld against the seed\n\n", (long long)best->id);
	if (seed && seed != best)
		cuco_report_diff(seed->code, best->code, &d);
	if (!d.len) {
		cuco_strbuf_adds(h, "<p>The best program is the seed.</p>\n");
		cuco_strbuf_adds(md, "The best program is the seed.\n\n");
	} else {
		cuco_strbuf_addf(
		    h, "<p>Unified diff, seed (program %lld) to best.</p>\n<pre class=\"diff\">",
		    (long long)seed->id);
		cuco_strbuf_addf(md, "Unified diff, seed (program %lld) to best.\n\n```diff\n",
		                 (long long)seed->id);
		for (const char *l = d.buf; *l;) {
			const char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) : strlen(l);
			char *line = strndup(l, len);
			const char *cls = *l == '+'   ? "add"
			                  : *l == '-' ? "del"
			                  : *l == '@' ? "hunk"
			                              : NULL;
			if (cls)
				cuco_strbuf_addf(h, "<span class=\"%s\">", cls);
			cuco_report_escape(h, line ? line : "");
			cuco_strbuf_adds(h, cls ? "</span>" : "\n");
			free(line);
			l += len + (nl ? 1 : 0);
		}
		cuco_strbuf_adds(h, "</pre>\n");
		cuco_strbuf_add(md, d.buf, d.len);
		cuco_strbuf_adds(md, "```\n\n");
	}
	cuco_strbuf_adds(h, "<h2>Code of the best program</h2>\n<pre class=\"code\">");
	cuco_report_escape(h, best->code);
	cuco_strbuf_adds(h, "</pre>\n");
	cuco_strbuf_adds(md, "## Code of the best program\n\n```cuda\n");
	cuco_strbuf_adds(md, best->code ? best->code : "");
	if (best->code && *best->code && best->code[strlen(best->code) - 1] != '\n')
		cuco_strbuf_addch(md, '\n');
	cuco_strbuf_adds(md, "```\n");
	cuco_strbuf_release(&d);
}

int cuco_report_build(struct cuco_store *store, int64_t run_id, struct cuco_strbuf *html,
                      struct cuco_strbuf *md, struct cuco_err *err)
{
	struct report r;
	const struct prog *best = NULL;
	int64_t best_id = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	r.store = store;
	cuco_run_rec_init(&r.run);
	if ((rc = load(&r, run_id, err)))
		goto out;
	if ((rc = cuco_recheck_best(store, run_id, &best_id, NULL, NULL, err)))
		goto out;
	best = best_id ? find_prog(&r, best_id) : NULL;
	section_head(&r, html, md);
	section_summary(&r, best, html, md);
	island_chart(&r, html, md);
	section_lineage(&r, best, html, md);
	section_flags(&r, html, md);
	if ((rc = section_stats(&r, html, md, err)) || (rc = section_recheck(&r, html, md, err)))
		goto out;
	section_code(&r, best, html, md);
	cuco_strbuf_addf(html,
	                 "<p style=\"color:#777;font-size:12px\">Regenerate: <code>cuco report "
	                 "%lld</code></p>\n</body>\n</html>\n",
	                 (long long)run_id);
	cuco_strbuf_addf(md, "\nRegenerate: `cuco report %lld`\n", (long long)run_id);
out:
	release(&r);
	return rc;
}

static int write_file(const char *path, const struct cuco_strbuf *sb, struct cuco_err *err)
{
	FILE *f = fopen(path, "w");
	int rc = CUCO_OK;

	if (!f)
		return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", path, strerror(errno));
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len)
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: %s", path, strerror(errno));
	if (fclose(f) && !rc)
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: %s", path, strerror(errno));
	return rc;
}

int cuco_report_write(struct cuco_store *store, int64_t run_id, const char *dir, char *html_path,
                      size_t html_size, char *md_path, size_t md_size, struct cuco_err *err)
{
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT;
	char hp[PATH_MAX], mp[PATH_MAX];
	int rc;

	if ((rc = cuco_report_build(store, run_id, &h, &m, err)))
		goto out;
	if (cuco_mkdir_p(dir)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot create the directory: %s", dir,
		                  strerror(errno));
		goto out;
	}
	snprintf(hp, sizeof(hp), "%s/run-%lld.html", dir, (long long)run_id);
	snprintf(mp, sizeof(mp), "%s/run-%lld.md", dir, (long long)run_id);
	if ((rc = write_file(hp, &h, err)) || (rc = write_file(mp, &m, err)))
		goto out;
	if (html_path)
		snprintf(html_path, html_size, "%s", hp);
	if (md_path)
		snprintf(md_path, md_size, "%s", mp);
out:
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	return rc;
}
