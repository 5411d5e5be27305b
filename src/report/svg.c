/*
 * svg.c - the report's charts as inline SVG: axes with "nice" ticks, the best
 * latency per island over the run's evaluations and the explore/exploit line.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/diff.h"
#include "util/xalloc.h"

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
	struct prog *p = cuco_report_find_prog(r, r->evs[i].program_id);

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
		struct prog *p = cuco_report_find_prog(r, r->evs[i].program_id);
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
void cuco_report_island_chart(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
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
			    k, cuco_report_island_colour(k), pts.buf);
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
		                 c.w - c.r + 14, c.t + 10 + 18 * k, cuco_report_island_colour(k),
		                 c.w - c.r + 34, c.t + 15 + 18 * k, k,
		                 seen[k] ? "" : " (none correct)");
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

const char *cuco_report_island_colour(int64_t k)
{
	return k < 0 ? "#777777" : palette[k % 8];
}

/* The stages an evaluation can fail at, in cascade order, and the marker of each. */
static const char *const stages[] = {"compile", "run", "verify", "bench"};
#define NSTAGES 4

/* A failure's marker at (x, y): compile a cross, run a triangle, verify a square,
   bench a diamond (and anything else a cross, too). */
static void fail_marker(struct cuco_strbuf *h, int stage, double x, double y, const char *colour)
{
	switch (stage) {
	case 1:
		cuco_strbuf_addf(h, "d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\"", x, y - 5,
		                 x + 5, y + 4, x - 5, y + 4, colour);
		break;
	case 2:
		cuco_strbuf_addf(h, "d=\"M%.1f %.1fh8v8h-8Z\" fill=\"%s\"", x - 4, y - 4, colour);
		break;
	case 3:
		cuco_strbuf_addf(h, "d=\"M%.1f %.1fl5 5l-5 5l-5 -5Z\" fill=\"%s\"", x, y - 5,
		                 colour);
		break;
	default:
		cuco_strbuf_addf(h,
		                 "d=\"M%.1f %.1fl8 8M%.1f %.1fl-8 8\" stroke=\"%s\" "
		                 "stroke-width=\"2\" fill=\"none\"",
		                 x - 4, y - 4, x + 4, y - 4, colour);
	}
}

static int stage_index(const char *s)
{
	for (int k = 0; k < NSTAGES; k++)
		if (!strcmp(s, stages[k]))
			return k;
	return 0;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The median latency of the run's correct evaluations; infinity when none. */
static double median_ok(const struct report *r)
{
	double *v = cuco_xcalloc((size_t)r->nevs + 1, sizeof(*v)), m = INFINITY;
	int n = 0;

	for (int i = 0; i < r->nevs; i++)
		if (r->evs[i].ok)
			v[n++] = r->evs[i].lat_us;
	if (n) {
		qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
		m = v[n / 2];
	}
	free(v);
	return m;
}

void cuco_report_scatter(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	double lo = INFINITY, hi = -INFINITY;
	int nfail[NSTAGES] = {0}, row[NSTAGES], nrows = 0, nok = 0, nisl = 0, seed = 0;
	int band = 16; /* px per failure row */
	int nover = 0; /* correct ones beyond the axis */
	double cap;
	struct chart c = {0.5, 2, 0, 1, 900, 0, 100, 170, 0, 46};

	for (int i = 0; i < r->nevs; i++) {
		struct prog *p = cuco_report_find_prog(r, r->evs[i].program_id);
		if (p && p->island >= 0 && p->island < MAX_ISLANDS && p->island + 1 > nisl)
			nisl = (int)p->island + 1;
		seed |= !p || p->island < 0;
		if (r->evs[i].ok) {
			lo = fmin(lo, r->evs[i].lat_us);
			hi = fmax(hi, r->evs[i].lat_us);
			nok++;
		} else {
			nfail[stage_index(r->evs[i].stage)]++;
		}
	}
	for (int k = 0; k < NSTAGES; k++)
		row[k] = nfail[k] ? nrows++ : -1;
	cuco_strbuf_adds(h, "<h2>Every evaluation</h2>\n");
	cuco_strbuf_adds(md, "## Every evaluation\n\n");
	if (!r->nevs) {
		cuco_strbuf_adds(h, "<p class=\"missing\">No evaluation stored.</p>\n");
		cuco_strbuf_adds(md, "No evaluation stored.\n\n");
		return;
	}
	cuco_strbuf_addf(h,
	                 "<p>%d evaluations in run order: %d correct (a dot at their %s "
	                 "latency), %d failed (marked in the band above the plot, in the row of "
	                 "the stage they failed at).</p>\n",
	                 r->nevs, nok, r->mean ? "mean" : "median", r->nevs - nok);
	cuco_strbuf_addf(md,
	                 "%d evaluations in run order: %d correct, %d failed.\n\n| failed at "
	                 "| evaluations |\n|---|---|\n",
	                 r->nevs, nok, r->nevs - nok);
	for (int k = 0; k < NSTAGES; k++)
		cuco_strbuf_addf(md, "| %s | %d |\n", stages[k], nfail[k]);
	cuco_strbuf_adds(md, "\n");
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	/* One candidate many times slower than the rest must not flatten them all: the axis
	   ends at 3x the median correct latency, and slower ones sit on its top edge. */
	cap = 3 * median_ok(r);
	if (hi > cap && cap > lo)
		hi = cap;
	if (hi - lo < 1e-9 * hi + 1e-9)
		hi = lo + 1;
	c.y0 = lo - 0.05 * (hi - lo);
	c.y1 = hi + 0.05 * (hi - lo);
	c.x1 = r->nevs + 0.5;
	for (int i = 0; i < r->nevs; i++)
		nover += r->evs[i].ok && r->evs[i].lat_us > c.y1;
	c.t = 12 + nrows * band + (nrows ? 10 : 0);
	c.h = c.t + 300 + c.b;
	cuco_strbuf_addf(h,
	                 "<svg class=\"chart scatter\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
	                 "%d %d\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
	                 "aria-label=\"every evaluation\">\n",
	                 c.w, c.h, c.w, c.h);
	axes(h, &c, "evaluation (run order)",
	     r->mean ? "mean latency (us)" : "median latency (us)");
	for (int k = 0; k < NSTAGES; k++)
		if (row[k] >= 0)
			cuco_strbuf_addf(h,
			                 "<rect class=\"band\" x=\"%d\" y=\"%d\" width=\"%d\" "
			                 "height=\"%d\" fill=\"%s\"/><text class=\"tl\" x=\"%d\" "
			                 "y=\"%d\" text-anchor=\"end\">failed at %s</text>\n",
			                 c.l, 10 + row[k] * band, c.w - c.l - c.r, band,
			                 row[k] % 2 ? "#f6f6f6" : "#fbecec", c.l - 6,
			                 10 + row[k] * band + 12, stages[k]);
	for (int i = 0; i < r->nevs; i++) {
		const struct ev *v = &r->evs[i];
		struct prog *p = cuco_report_find_prog(r, v->program_id);
		int64_t isl = p ? p->island : -1;
		const char *col = cuco_report_island_colour(isl < MAX_ISLANDS ? isl : -1);
		double x = cx(&c, i + 1);
		if (v->ok && v->lat_us > c.y1) {
			cuco_strbuf_addf(
			    h,
			    "<path class=\"ev ok over\" data-island=\"%lld\" "
			    "d=\"M%.1f %dl5 8h-10Z\" fill=\"%s\"><title>evaluation %d: "
			    "program %lld, %.1f us (beyond the axis)</title></path>\n",
			    (long long)isl, x, c.t, col, i + 1, (long long)v->program_id,
			    v->lat_us);
		} else if (v->ok) {
			cuco_strbuf_addf(h,
			                 "<circle class=\"ev ok\" data-island=\"%lld\" cx=\"%.1f\" "
			                 "cy=\"%.1f\" r=\"3.5\" fill=\"%s\" fill-opacity=\"0.8\">"
			                 "<title>evaluation %d: program %lld, %.1f us</title>"
			                 "</circle>\n",
			                 (long long)isl, x, cy(&c, v->lat_us), col, i + 1,
			                 (long long)v->program_id, v->lat_us);
		} else {
			int k = stage_index(v->stage);
			cuco_strbuf_addf(h,
			                 "<path class=\"ev fail\" data-island=\"%lld\" "
			                 "data-stage=\"%s\" ",
			                 (long long)isl, stages[k]);
			fail_marker(h, k, x, 10 + row[k] * band + band / 2.0, col);
			cuco_strbuf_addf(h, "><title>evaluation %d: program %lld failed at ", i + 1,
			                 (long long)v->program_id);
			cuco_report_escape(h, v->stage);
			cuco_strbuf_adds(h, " (");
			cuco_report_escape(h, v->status);
			cuco_strbuf_adds(h, ")</title></path>\n");
		}
	}
	/* The legend: islands by colour, then the stages by marker. */
	{
		int y = c.t + 8, lx = c.w - c.r + 16;
		for (int k = -1; k < nisl; k++) {
			if (k < 0 && !seed)
				continue;
			cuco_strbuf_addf(h,
			                 "<g class=\"legend\"><circle cx=\"%d\" cy=\"%d\" r=\"4\" "
			                 "fill=\"%s\"/><text class=\"tl\" x=\"%d\" y=\"%d\">",
			                 lx, y, cuco_report_island_colour(k), lx + 10, y + 4);
			if (k < 0)
				cuco_strbuf_adds(h, "seed (no island)");
			else
				cuco_strbuf_addf(h, "island %d", k);
			cuco_strbuf_adds(h, "</text></g>\n");
			y += 18;
		}
		y += 8;
		for (int k = 0; k < NSTAGES; k++) {
			if (!nfail[k])
				continue;
			cuco_strbuf_adds(h, "<g class=\"legend\"><path ");
			fail_marker(h, k, lx, y, "#444");
			cuco_strbuf_addf(h,
			                 "/><text class=\"tl\" x=\"%d\" y=\"%d\">failed at %s "
			                 "(%d)</text></g>\n",
			                 lx + 10, y + 4, stages[k], nfail[k]);
			y += 18;
		}
	}
	cuco_strbuf_adds(h, "</svg>\n");
	if (nover) {
		cuco_strbuf_addf(
		    h,
		    "<p>%d correct evaluations slower than the axis's top, %.1f us, sit "
		    "on the top edge as triangles.</p>\n",
		    nover, c.y1);
		cuco_strbuf_addf(
		    md,
		    "%d correct evaluations slower than the axis's top, %.1f us, sit on "
		    "the chart's top edge.\n\n",
		    nover, c.y1);
	}
}
