/*
 * lineage.c - the best program's lineage: the chain of programs from the
 * first ancestor in the run to the best, with the directive change per step.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

void cuco_report_lineage(struct report *r, const struct prog *best, struct cuco_strbuf *h,
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
	     p = p->parent ? cuco_report_find_prog(r, p->parent) : NULL)
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
		cuco_report_directive_diff(prev ? prev->directive : NULL, p->directive, &d);
		cuco_report_fmt_us(lat, sizeof(lat), p->lat_us);
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
		cuco_report_md_cell(md, p->name);
		cuco_strbuf_addf(md, " | %s | %s | %s | ", gen, isl, p->op ? p->op : "-");
		cuco_report_md_cell(md, d.buf);
		cuco_strbuf_addf(md, " | %s | %s |\n", lat, fit);
		cuco_strbuf_release(&d);
	}
	cuco_strbuf_adds(h, "</table>\n");
	cuco_strbuf_adds(md, "\n");
}

/* The programs whose code contradicts its directive (LLM replies), with what contradicts it. */
