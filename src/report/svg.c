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
#include "report/report.h"

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
