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
#include "util/array.h"
#include "util/paths.h"
#include "util/xalloc.h"

#include "report/internal.h"

static int add_prog(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct report *r = arg;
	struct prog *q;

	(void)err;
	q = CUCO_ARRAY_PUSH(r->progs, r->nprogs, r->aprogs);
	memset(q, 0, sizeof(*q));
	q->id = p->id;
	q->name = cuco_xstrdup(p->name);
	q->origin = cuco_xstrdup(p->origin);
	q->op = cuco_xstrdup(p->operator_);
	q->flags = cuco_xstrdup(p->flags);
	q->directive = cuco_xstrdup(p->directive);
	q->code = cuco_xstrdup(p->code);
	q->island = p->island;
	q->generation = p->generation;
	q->fitness = q->lat_us = NAN;
	for (size_t i = 0; i < p->nparents && !q->parent; i++)
		if (!p->parents[i].kind || !strcmp(p->parents[i].kind, "parent"))
			q->parent = p->parents[i].id;
	if (!q->parent && p->nparents)
		q->parent = p->parents[0].id;
	for (size_t i = 0; i < p->nparents && !q->cross; i++)
		if (p->parents[i].kind && !strcmp(p->parents[i].kind, "crossover"))
			q->cross = p->parents[i].id;
	return 0;
}

/* The primary shape's baseline in an evaluation's per-shape details; NaN when none. */
static double primary_base(const char *result_json)
{
	json_t *o = json_loads(result_json, 0, NULL);
	double us =
	    cuco_report_num_of(json_array_get(json_object_get(o, "shapes"), 0), "baseline_us");

	json_decref(o);
	return us;
}

static int add_ev(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	struct report *r = arg;
	struct ev *v;
	struct prog *p;

	(void)err;
	v = CUCO_ARRAY_PUSH(r->evs, r->nevs, r->aevs);
	if (!r->gpu[0] && e->gpu && e->gpu[0])
		snprintf(r->gpu, sizeof(r->gpu), "%s", e->gpu);
	v->program_id = e->program_id;
	if (e->ranks == 1)
		r->one_rank = 1;
	v->lat_us = r->mean ? e->mean_us : e->median_us;
	v->fitness = e->fitness;
	v->ok = !strcmp(e->status, "ok") && isfinite(v->lat_us) && v->lat_us > 0;
	snprintf(v->stage, sizeof(v->stage), "%s", e->stage_reached ? e->stage_reached : "-");
	snprintf(v->status, sizeof(v->status), "%s", e->status);
	/* One shape: fitness = base / latency. Several: fitness is a geometric mean, and the
	   primary shape's baseline is in the per-shape details. */
	v->base_us = e->result_json ? primary_base(e->result_json) : v->lat_us * e->fitness;
	p = cuco_report_find_prog(r, e->program_id);
	if (p && v->ok && (isnan(p->fitness) || e->fitness > p->fitness)) {
		p->fitness = e->fitness;
		p->lat_us = v->lat_us;
		free(p->result_json);
		p->result_json = cuco_xstrdup(e->result_json);
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
	bases = cuco_xcalloc((size_t)r->nevs + 1, sizeof(*bases));
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
	       ".scroll{overflow-x:auto}\n"
	       ".meta td{overflow-wrap:anywhere}.meta "
	       "td:first-child{font-weight:600;white-space:nowrap}\n"
	       "</style>\n</head>\n<body>\n<h1>");
	cuco_report_escape(h, title);
	cuco_strbuf_adds(h, "</h1>\n");
	cuco_strbuf_addf(md, "# %s\n\n", title);
	if (r->one_rank) {
		static const char why[] =
		    "1 rank: communication not measured. Every program ran on one GPU, nothing was "
		    "sent: the figures time the compute side, not the workload.";
		cuco_strbuf_adds(h, "<p class=\"fail one-rank\">");
		cuco_report_escape(h, why);
		cuco_strbuf_adds(h, "</p>\n");
		cuco_strbuf_addf(md, "**%s**\n\n", why);
	}
	if (!strcmp(r->run.status, "failed")) {
		/* why, first: everything below is what the run stored before it failed */
		cuco_strbuf_adds(h, "<p class=\"fail run-error\">The run failed: ");
		cuco_report_escape(h, r->run.error ? r->run.error
		                                   : "the store keeps no reason (a run stored by "
		                                     "a cuco before store schema 4)");
		cuco_strbuf_adds(h, "</p>\n");
		cuco_strbuf_addf(md, "**The run failed:** %s\n\n",
		                 r->run.error ? r->run.error
		                              : "the store keeps no reason (a run stored by a cuco "
		                                "before store schema 4)");
	}
	cuco_strbuf_adds(h, "<table class=\"meta\">\n");
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
	best = best_id ? cuco_report_find_prog(&r, best_id) : NULL;
	section_head(&r, html, md);
	cuco_report_summary(&r, best, html, md);
	cuco_report_island_chart(&r, html, md);
	cuco_report_scatter(&r, html, md);
	cuco_report_lineage(&r, best, html, md);
	cuco_report_tree(&r, best, html, md);
	cuco_report_steps(&r, best, html, md);
	cuco_report_flags(&r, html, md);
	if ((rc = cuco_report_stats(&r, html, md, err)) ||
	    (rc = cuco_report_recheck(&r, html, md, err)))
		goto out;
	cuco_report_code(&r, best, html, md);
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
