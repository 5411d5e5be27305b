/*
 * sections.c - the report's tables: the best against seed, baseline, peers
 * and the ideal bound; code that contradicts its directive; directive
 * statistics and failures; the re-check; the best code and its diff.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "report/internal.h"
#include "report/diff.h"
#include "search/summary.h"

static void add_bar_row(struct cuco_strbuf *h, struct cuco_strbuf *md, const char *label, double us,
                        double base, const char *note)
{
	char a[32], b[32];

	cuco_report_fmt_us(a, sizeof(a), us);
	cuco_report_fmt_x(b, sizeof(b), base, us);
	cuco_strbuf_adds(h, "<tr><td>");
	cuco_report_escape(h, label);
	cuco_strbuf_addf(h, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>", a, b);
	cuco_report_escape(h, note);
	cuco_strbuf_adds(h, "</td></tr>\n");
	cuco_strbuf_adds(md, "| ");
	cuco_report_md_cell(md, label);
	cuco_strbuf_addf(md, " | %s | %s | ", a, b);
	cuco_report_md_cell(md, note);
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
		double us = cuco_report_num_of(e, r->mean ? "mean_us" : "median_us"),
		       base = cuco_report_num_of(e, "baseline_us");
		char lat[32], bl[32], x[32];
		cuco_report_fmt_us(lat, sizeof(lat), us);
		cuco_report_fmt_us(bl, sizeof(bl), base);
		cuco_report_fmt_x(x, sizeof(x), base, us);
		cuco_strbuf_adds(h, "<tr><td>");
		cuco_report_escape(h, name ? name : "?");
		cuco_strbuf_addf(h,
		                 "</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
		                 "class=\"num\">%s</td></tr>\n",
		                 lat, bl, x);
		cuco_strbuf_adds(md, "| ");
		cuco_report_md_cell(md, name ? name : "?");
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

void cuco_report_summary(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                         struct cuco_strbuf *md)
{
	const struct prog *seed = cuco_report_seed_prog(r);
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

void cuco_report_flags(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
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
		cuco_report_md_cell(md, p->name);
		cuco_strbuf_addf(md, " | %s | %s | ", p->op ? p->op : "-", fit);
		cuco_report_md_cell(md, p->flags);
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

int cuco_report_stats(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
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
	if (s.nstats) /* no candidate judged: no array to sort */
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
		cuco_report_md_cell(md, t->key);
		cuco_strbuf_adds(md, " | ");
		cuco_report_md_cell(md, t->value);
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
			cuco_report_md_cell(md, c[i].name);
			cuco_strbuf_addf(md, " | %d |\n", c[i].n);
		}
		cuco_strbuf_adds(h, "</table>\n");
		cuco_strbuf_adds(md, "\n");
	}
out:
	cuco_summary_release(&s);
	return rc;
}

int cuco_report_recheck(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
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
		cuco_report_fmt_us(lat, sizeof(lat), ev.median_us);
		cuco_report_fmt_us(p90, sizeof(p90), ev.p90_us);
		cuco_report_fmt_us(mean, sizeof(mean), ev.mean_us);
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
		cuco_report_md_cell(md, ev.error ? ev.error : "");
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

void cuco_report_code(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                      struct cuco_strbuf *md)
{
	const struct prog *seed = cuco_report_seed_prog(r);
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
		cuco_report_diff_lines(h, d.buf);
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
