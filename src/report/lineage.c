/*
 * lineage.c - the best program's lineage: the chain of programs from the
 * first ancestor in the run to the best with the directive change per step,
 * its ancestry as a tree (SVG), and each step's directive change and code diff.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/directive.h"
#include "report/internal.h"
#include "report/diff.h"
#include "util/xalloc.h"

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

/* ---- the ancestry as a tree ---- */

#define TREE_MAX 48 /* ancestors drawn; the nearest to the best first */
#define NODE_W 186
#define NODE_H 52
#define GAP_X 18
#define GAP_Y 36

struct tree {
	const struct prog *n[TREE_MAX];
	int lvl[TREE_MAX];  /* longest way down to the best (the best: 0) */
	int path[TREE_MAX]; /* on the parent chain from the first ancestor to the best */
	int row[TREE_MAX], col[TREE_MAX];
	int nn, nrows, ncols, cut; /* cut: ancestors left out past TREE_MAX */
};

static int tree_find(const struct tree *t, int64_t id)
{
	for (int i = 0; i < t->nn; i++)
		if (t->n[i]->id == id)
			return i;
	return -1;
}

static void tree_add(struct tree *t, struct report *r, int64_t id)
{
	const struct prog *p = id ? cuco_report_find_prog(r, id) : NULL;

	if (!p || tree_find(t, id) >= 0)
		return;
	if (t->nn == TREE_MAX) {
		t->cut++;
		return;
	}
	t->n[t->nn++] = p;
}

static void tree_build(struct tree *t, struct report *r, const struct prog *best)
{
	int maxl = 0;

	memset(t, 0, sizeof(*t));
	t->n[t->nn++] = best;
	for (int i = 0; i < t->nn; i++) { /* breadth first: parents, then partners */
		tree_add(t, r, t->n[i]->parent);
		tree_add(t, r, t->n[i]->cross);
	}
	for (int i = 0, k = 0; i >= 0 && k < t->nn; k++) { /* the parent chain */
		t->path[i] = 1;
		i = tree_find(t, t->n[i]->parent);
	}
	/* Levels: a parent sits above every child of it (a DAG: at most nn passes). */
	for (int pass = 0; pass < t->nn; pass++)
		for (int i = 0; i < t->nn; i++) {
			int up[2] = {tree_find(t, t->n[i]->parent), tree_find(t, t->n[i]->cross)};
			for (int k = 0; k < 2; k++)
				if (up[k] >= 0 && t->lvl[up[k]] < t->lvl[i] + 1 &&
				    t->lvl[i] + 1 < t->nn)
					t->lvl[up[k]] = t->lvl[i] + 1;
		}
	for (int i = 0; i < t->nn; i++)
		maxl = t->lvl[i] > maxl ? t->lvl[i] : maxl;
	t->nrows = maxl + 1;
	/* Columns: the chain's node first in its row, then the others by id (n[] is by
	   discovery; ids ascend with age). */
	for (int row = 0; row < t->nrows; row++) {
		int col = 0;
		for (int pass = 0; pass < 2; pass++)
			for (int64_t last = 0;;) {
				int pick = -1;
				for (int i = 0; i < t->nn; i++)
					if (maxl - t->lvl[i] == row && t->path[i] == !pass &&
					    t->n[i]->id > last &&
					    (pick < 0 || t->n[i]->id < t->n[pick]->id))
						pick = i;
				if (pick < 0)
					break;
				t->row[pick] = row;
				t->col[pick] = col++;
				last = t->n[pick]->id;
			}
		t->ncols = col > t->ncols ? col : t->ncols;
	}
}

static void node_xy(const struct tree *t, int i, int *x, int *y)
{
	*x = 20 + t->col[i] * (NODE_W + GAP_X);
	*y = 20 + t->row[i] * (NODE_H + GAP_Y);
}

void cuco_report_tree(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                      struct cuco_strbuf *md)
{
	struct tree t;
	int w, ht;

	if (!best)
		return;
	tree_build(&t, r, best);
	w = 40 + t.ncols * (NODE_W + GAP_X) - GAP_X;
	ht = 40 + t.nrows * (NODE_H + GAP_Y) - GAP_Y + 24;
	if (w < 520)
		w = 520;
	cuco_strbuf_adds(h, "<h3>Ancestry of the best program</h3>\n");
	cuco_strbuf_addf(h,
	                 "<p>%d programs: the best, its parents and crossover partners back to "
	                 "the first ancestors in the run; siblings are left out. The parent "
	                 "chain has a blue frame.%s</p>\n",
	                 t.nn, t.cut ? " Older ancestors past the first 48 are left out." : "");
	cuco_strbuf_addf(h,
	                 "<div class=\"scroll\"><svg class=\"tree\" width=\"%d\" height=\"%d\" "
	                 "viewBox=\"0 0 %d %d\" "
	                 "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"ancestry "
	                 "of the best program\">\n",
	                 w, ht, w, ht);
	for (int i = 0; i < t.nn; i++) {
		int64_t up[2] = {t.n[i]->parent, t.n[i]->cross};
		for (int k = 0; k < 2; k++) {
			int j = up[k] ? tree_find(&t, up[k]) : -1, x0, y0, x1, y1;
			if (j < 0)
				continue;
			node_xy(&t, j, &x0, &y0);
			node_xy(&t, i, &x1, &y1);
			cuco_strbuf_addf(h,
			                 "<line class=\"edge %s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
			                 "y2=\"%d\" stroke=\"%s\" stroke-width=\"1.5\"%s/>\n",
			                 k ? "crossover" : "parent", x0 + NODE_W / 2, y0 + NODE_H,
			                 x1 + NODE_W / 2, y1, k ? "#999" : "#555",
			                 k ? " stroke-dasharray=\"5 4\"" : "");
		}
	}
	for (int i = 0; i < t.nn; i++) {
		const struct prog *p = t.n[i];
		char lat[32], isl[24];
		int x, y;
		node_xy(&t, i, &x, &y);
		cuco_report_fmt_us(lat, sizeof(lat), p->lat_us);
		snprintf(isl, sizeof(isl), p->island >= 0 ? "island %lld" : "no island",
		         (long long)p->island);
		cuco_strbuf_addf(
		    h,
		    "<g class=\"node%s\" data-program=\"%lld\"><rect x=\"%d\" y=\"%d\" "
		    "width=\"%d\" height=\"%d\" rx=\"5\" fill=\"%s\" stroke=\"%s\" "
		    "stroke-width=\"%s\"/>\n<text class=\"tl\" x=\"%d\" y=\"%d\" "
		    "font-weight=\"600\">program %lld",
		    p == best ? " best" : "", (long long)p->id, x, y, NODE_W, NODE_H,
		    p == best ? "#e8f1fb" : "#fafafa", t.path[i] ? "#1f77b4" : "#aaa",
		    t.path[i] ? "2" : "1", x + 8, y + 15, (long long)p->id);
		if (p == best)
			cuco_strbuf_adds(h, " (best)");
		cuco_strbuf_addf(h, "</text>\n<text class=\"tl\" x=\"%d\" y=\"%d\">", x + 8,
		                 y + 30);
		cuco_report_escape(h, p->op ? p->op : "-");
		cuco_strbuf_addf(
		    h, ", %s</text>\n<text class=\"tl\" x=\"%d\" y=\"%d\">%s</text></g>\n", isl,
		    x + 8, y + 45, isfinite(p->lat_us) ? lat : "no correct evaluation");
	}
	cuco_strbuf_addf(h,
	                 "<line x1=\"20\" y1=\"%d\" x2=\"50\" y2=\"%d\" stroke=\"#555\"/>"
	                 "<text class=\"tl\" x=\"56\" y=\"%d\">parent</text>"
	                 "<line x1=\"130\" y1=\"%d\" x2=\"160\" y2=\"%d\" stroke=\"#999\" "
	                 "stroke-dasharray=\"5 4\"/><text class=\"tl\" x=\"166\" y=\"%d\">"
	                 "crossover partner</text>\n</svg></div>\n",
	                 ht - 12, ht - 12, ht - 8, ht - 12, ht - 12, ht - 8);
	cuco_strbuf_addf(md,
	                 "### Ancestry of the best program\n\n%d programs (parents and crossover "
	                 "partners; siblings left out).\n\n| program | parent | crossover partner "
	                 "| operator | island | latency |\n|---|---|---|---|---|---|\n",
	                 t.nn);
	for (int64_t last = 0;;) { /* oldest first */
		const struct prog *p = NULL;
		char lat[32];
		for (int i = 0; i < t.nn; i++)
			if (t.n[i]->id > last && (!p || t.n[i]->id < p->id))
				p = t.n[i];
		if (!p)
			break;
		last = p->id;
		cuco_report_fmt_us(lat, sizeof(lat), p->lat_us);
		cuco_strbuf_addf(md, "| %lld | ", (long long)p->id);
		cuco_strbuf_addf(md, p->parent ? "%lld | " : "- | ", (long long)p->parent);
		cuco_strbuf_addf(md, p->cross ? "%lld | " : "- | ", (long long)p->cross);
		cuco_strbuf_addf(md, "%s | ", p->op ? p->op : "-");
		cuco_strbuf_addf(md, p->island >= 0 ? "%lld | " : "- | ", (long long)p->island);
		cuco_strbuf_addf(md, "%s |\n", lat);
	}
	cuco_strbuf_adds(md, "\n");
}

/* ---- seed to best, step by step ---- */

#define STEP_DIFF_LINES 300 /* diff lines shown per step; the count covers all */

/* code with its directive line blanked (the step's directive change says it). */
static char *without_directive(const char *code)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	for (const char *l = code ? code : ""; *l;) {
		size_t n = strcspn(l, "\n");
		if (!strncmp(l, "// " CUCO_DIRECTIVE_TAG, strlen("// " CUCO_DIRECTIVE_TAG)))
			cuco_strbuf_adds(&sb, "// " CUCO_DIRECTIVE_TAG " (the directive above)");
		else
			cuco_strbuf_add(&sb, l, n);
		if (l[n] == '\n')
			cuco_strbuf_addch(&sb, '\n');
		l += n + (l[n] == '\n');
	}
	return cuco_strbuf_detach(&sb, NULL);
}

/* Per line of code (1-based, up to n): 1 inside an EVOLVE-BLOCK, 0 outside. */
static char *block_map(const char *code, int *n)
{
	int lines = 1, in = 0, k = 1;
	char *m;

	for (const char *c = code; *c; c++)
		lines += *c == '\n';
	m = cuco_xcalloc((size_t)lines + 2, 1);
	for (const char *l = code; *l; k++) {
		size_t len = strcspn(l, "\n");
		char *line = cuco_xstrndup(l, len);
		if (strstr(line, "EVOLVE-BLOCK-END"))
			in = 0;
		m[k] = (char)in;
		if (strstr(line, "EVOLVE-BLOCK-START"))
			in = 1;
		free(line);
		l += len + (l[len] == '\n');
	}
	*n = lines;
	return m;
}

/* Changed lines of a unified diff inside and outside the EVOLVE-BLOCKs of a and b. */
static void count_changes(const char *diff, const char *a, const char *b, int *inside, int *outside)
{
	int na = 0, nb = 0, la = 0, lb = 0;
	char *ma = block_map(a, &na), *mb = block_map(b, &nb);

	*inside = *outside = 0;
	for (const char *l = diff; ma && mb && *l;) {
		size_t len = strcspn(l, "\n");
		if (*l == '@') {
			if (sscanf(l, "@@ -%d,%*d +%d,", &la, &lb) != 2)
				la = lb = 0;
		} else if (*l == '-') {
			if (la >= 1 && la <= na && ma[la])
				(*inside)++;
			else
				(*outside)++;
			la++;
		} else if (*l == '+') {
			if (lb >= 1 && lb <= nb && mb[lb])
				(*inside)++;
			else
				(*outside)++;
			lb++;
		} else {
			la++;
			lb++;
		}
		l += len + (l[len] == '\n');
	}
	free(ma);
	free(mb);
}

/* The first n lines of diff (all when it has fewer). */
static size_t head_lines(const char *diff, int n)
{
	const char *l = diff;

	for (int k = 0; k < n && *l; k++)
		l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');
	return (size_t)(l - diff);
}

/*
 * Step a -> b. Its code diff is taken from base's code (a's, or the seed's
 * rendering through the template when a is the fast-path seed: the template's
 * region changed, not the seed's own code swapped for the template).
 */
static void one_step(const struct prog *a, const struct prog *b, const struct prog *base, int step,
                     struct cuco_strbuf *h, struct cuco_strbuf *md)
{
	struct cuco_report_change c[64];
	struct cuco_strbuf d = CUCO_STRBUF_INIT;
	char *ca = without_directive(base->code), *cb = without_directive(b->code);
	int nc = cuco_report_directive_changes(a->directive, b->directive, c, 64), in = 0, out = 0;
	int cut;
	char la[32], lb[32];
	size_t shown;

	cuco_report_fmt_us(la, sizeof(la), a->lat_us);
	cuco_report_fmt_us(lb, sizeof(lb), b->lat_us);
	cuco_strbuf_addf(h,
	                 "<div class=\"step\" data-step=\"%d\">\n<h3>Step %d: program %lld "
	                 "&rarr; program %lld (",
	                 step, step, (long long)a->id, (long long)b->id);
	cuco_report_escape(h, b->op ? b->op : "-");
	cuco_strbuf_addf(h, ")</h3>\n<p>Latency %s &rarr; %s.</p>\n", la, lb);
	cuco_strbuf_addf(md,
	                 "### Step %d: program %lld -> program %lld (%s)\n\nLatency %s -> %s.\n\n",
	                 step, (long long)a->id, (long long)b->id, b->op ? b->op : "-", la, lb);
	if (nc) {
		cuco_strbuf_adds(h, "<table class=\"dchange\"><tr><th>dimension or knob</th>"
		                    "<th>before</th><th>after</th></tr>\n");
		cuco_strbuf_adds(md, "| dimension or knob | before | after |\n|---|---|---|\n");
	} else {
		cuco_strbuf_adds(h, "<p>The same directive.</p>\n");
		cuco_strbuf_adds(md, "The same directive.\n\n");
	}
	for (int i = 0; i < nc; i++) {
		const char *key = c[i].key, *kind = "dimension";
		if (!strncmp(key, "knobs.", 6)) {
			key += 6;
			kind = "knob";
		}
		cuco_strbuf_addf(h, "<tr class=\"%s\"><td>", kind);
		cuco_report_escape(h, key);
		cuco_strbuf_addf(h, "%s</td><td>", *kind == 'k' ? " (knob)" : "");
		cuco_report_escape(h, c[i].before ? c[i].before : "(none)");
		cuco_strbuf_adds(h, "</td><td>");
		cuco_report_escape(h, c[i].after ? c[i].after : "(none)");
		cuco_strbuf_adds(h, "</td></tr>\n");
		cuco_strbuf_addf(md, "| %s%s | ", key, *kind == 'k' ? " (knob)" : "");
		cuco_report_md_cell(md, c[i].before ? c[i].before : "(none)");
		cuco_strbuf_adds(md, " | ");
		cuco_report_md_cell(md, c[i].after ? c[i].after : "(none)");
		cuco_strbuf_adds(md, " |\n");
	}
	if (nc) {
		cuco_strbuf_adds(h, "</table>\n");
		cuco_strbuf_adds(md, "\n");
	}
	if (base != a) {
		cuco_strbuf_addf(
		    h,
		    "<p>Code against program %lld (seed-realized: the seed's directive "
		    "through the template), so the diff is the template's, not the "
		    "seed's own code.</p>\n",
		    (long long)base->id);
		cuco_strbuf_addf(md,
		                 "Code against program %lld (seed-realized: the seed's directive "
		                 "through the template).\n\n",
		                 (long long)base->id);
	}
	if (ca && cb)
		cuco_report_diff(ca, cb, &d);
	if (!d.len) {
		cuco_strbuf_adds(h, "<p>The code is the same but for its directive line.</p>\n");
		cuco_strbuf_adds(md, "The code is the same but for its directive line.\n\n");
		goto out;
	}
	count_changes(d.buf, ca, cb, &in, &out);
	shown = head_lines(d.buf, STEP_DIFF_LINES);
	cut = shown < d.len;
	cuco_strbuf_addf(h,
	                 "<p class=\"dcount\" data-inside=\"%d\" data-outside=\"%d\">Code: %d "
	                 "lines changed inside the EVOLVE-BLOCKs, %d outside them (where the "
	                 "template places the directive's values).%s</p>\n<pre class=\"diff\">",
	                 in, out, in, out, cut ? " The diff is cut after 300 lines." : "");
	cuco_strbuf_addf(md,
	                 "Code: %d lines changed inside the EVOLVE-BLOCKs, %d outside them.\n\n"
	                 "```diff\n",
	                 in, out);
	cuco_strbuf_setlen(&d, shown);
	cuco_report_diff_lines(h, d.buf);
	cuco_strbuf_adds(h, "</pre>\n");
	cuco_strbuf_adds(md, d.buf);
	cuco_strbuf_adds(md, "```\n\n");
out:
	cuco_strbuf_adds(h, "</div>\n");
	cuco_report_changes_free(c, nc);
	cuco_strbuf_release(&d);
	free(ca);
	free(cb);
}

void cuco_report_steps(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                       struct cuco_strbuf *md)
{
	const struct prog *chain[512], *realized = NULL;
	int n = 0;

	if (!best)
		return;
	for (int i = 0; i < r->nprogs && !realized; i++)
		if (r->progs[i].name && !strcmp(r->progs[i].name, "seed-realized"))
			realized = &r->progs[i];
	for (const struct prog *p = best; p && n < 512;
	     p = p->parent ? cuco_report_find_prog(r, p->parent) : NULL)
		chain[n++] = p;
	cuco_strbuf_adds(h, "<h2>Seed to best, step by step</h2>\n");
	cuco_strbuf_adds(md, "## Seed to best, step by step\n\n");
	if (n < 2) {
		cuco_strbuf_adds(h, "<p>The best program is the first of its line: no step.</p>\n");
		cuco_strbuf_adds(md, "The best program is the first of its line: no step.\n\n");
		return;
	}
	cuco_strbuf_addf(h, "<p>%d steps from program %lld (", n - 1, (long long)chain[n - 1]->id);
	cuco_report_escape(h, chain[n - 1]->name);
	cuco_strbuf_adds(h, ") to the best, each from its parent: which dimensions and knobs of "
	                    "the directive changed, and the code's diff (its directive line "
	                    "aside).</p>\n");
	cuco_strbuf_addf(
	    md, "%d steps from program %lld (%s) to the best, each from its parent.\n\n", n - 1,
	    (long long)chain[n - 1]->id, chain[n - 1]->name ? chain[n - 1]->name : "");
	for (int k = n - 2, step = 1; k >= 0; k--, step++) {
		const struct prog *a = chain[k + 1], *base = a;
		if (realized && realized != chain[k] && a->name && !strcmp(a->name, "seed"))
			base = realized;
		one_step(a, chain[k], base, step, h, md);
	}
}
