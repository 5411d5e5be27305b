/*
 * diff.c - the report's text: HTML escaping, Markdown cells, latency and
 * speed-up formats, a small LCS line diff, and the change between two
 * directives key by key.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "report/diff.h"
#include "util/array.h"
#include "util/xalloc.h"

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
void cuco_report_md_cell(struct cuco_strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		if (*s == '|')
			cuco_strbuf_adds(sb, "\\|");
		else if (*s == '\n')
			cuco_strbuf_addch(sb, ' ');
		else
			cuco_strbuf_addch(sb, *s);
}

void cuco_report_fmt_us(char *buf, size_t n, double us)
{
	if (isfinite(us))
		snprintf(buf, n, "%.1f us", us);
	else
		snprintf(buf, n, "-");
}

void cuco_report_fmt_x(char *buf, size_t n, double base, double us)
{
	if (isfinite(base) && isfinite(us) && us > 0)
		snprintf(buf, n, "%.3fx", base / us);
	else
		snprintf(buf, n, "-");
}

/* ---- line diff: LCS over lines after trimming the common ends ---- */

/* The lines of a text: v[i].p[0..len) without the newline. */
struct lines {
	struct {
		const char *p;
		int len;
	} * v;
	int n;
	size_t alloc;
};

static void split_lines(const char *s, struct lines *l)
{
	for (const char *c = s ? s : ""; *c;) {
		const char *nl = strchr(c, '\n');
		int len = nl ? (int)(nl - c) : (int)strlen(c);

		CUCO_ARRAY_GROW(l->v, (size_t)l->n + 1, l->alloc);
		l->v[l->n].p = c;
		l->v[l->n++].len = len;
		c += len + (nl ? 1 : 0);
	}
}

static int line_eq(const struct lines *a, int i, const struct lines *b, int j)
{
	return a->v[i].len == b->v[j].len && !memcmp(a->v[i].p, b->v[j].p, (size_t)a->v[i].len);
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
			cuco_strbuf_add(out, l->v[idx].p, (size_t)l->v[idx].len);
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

	split_lines(as, &a);
	split_lines(bs, &b);
	while (pre < a.n && pre < b.n && line_eq(&a, pre, &b, pre))
		pre++;
	while (suf < a.n - pre && suf < b.n - pre && line_eq(&a, a.n - 1 - suf, &b, b.n - 1 - suf))
		suf++;
	n = a.n - pre - suf;
	m = b.n - pre - suf;
	ops = cuco_xcalloc((size_t)(a.n + b.n + 1), sizeof(*ops));
	for (int i = 0; i < pre; i++)
		ops[nops++] = (struct op){' ', i, i};
	if ((double)(n + 1) * (m + 1) <= 16e6)
		dp = cuco_xcalloc((size_t)(n + 1) * (size_t)(m + 1), sizeof(*dp));
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
	free(dp);
	free(ops);
	free(a.v);
	free(b.v);
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
				                   ? cuco_xstrdup(json_string_value(w))
				                   : json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT);
			}
		} else if (n < max) {
			snprintf(out[n].key, sizeof(out[n].key), "%s", k);
			out[n++].val = json_is_string(v)
			                   ? cuco_xstrdup(json_string_value(v))
			                   : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		}
	}
	json_decref(root);
	if (n > 1) /* qsort(NULL, 0) is undefined */
		qsort(out, (size_t)n, sizeof(*out), kv_cmp);
	return n;
}

int cuco_report_directive_changes(const char *a, const char *b, struct cuco_report_change *out,
                                  int max)
{
	struct kv ka[64], kb[64];
	int na = flatten(a, ka, 64), nb = flatten(b, kb, 64), i = 0, j = 0, n = 0;

	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(ka[i].key, kb[j].key);
		const char *key = c <= 0 ? ka[i].key : kb[j].key;
		const char *old = c <= 0 ? ka[i].val : NULL, *after = c >= 0 ? kb[j].val : NULL;
		if ((c || strcmp(old ? old : "", after ? after : "")) && (a || c <= 0) && n < max) {
			snprintf(out[n].key, sizeof(out[n].key), "%s", key);
			out[n].before = cuco_xstrdup(old);
			out[n].after = cuco_xstrdup(after);
			n++;
		}
		i += c <= 0;
		j += c >= 0;
	}
	for (i = 0; i < na; i++)
		free(ka[i].val);
	for (j = 0; j < nb; j++)
		free(kb[j].val);
	return n;
}

void cuco_report_changes_free(struct cuco_report_change *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].before);
		free(c[i].after);
	}
}

void cuco_report_directive_diff(const char *a, const char *b, struct cuco_strbuf *out)
{
	struct cuco_report_change c[64];
	int n = cuco_report_directive_changes(a, b, c, 64);

	for (int i = 0; i < n; i++)
		cuco_strbuf_addf(out, "%s%s: %s -> %s", i ? ", " : "", c[i].key,
		                 c[i].before ? c[i].before : "(none)",
		                 c[i].after ? c[i].after : "(none)");
	if (!n)
		cuco_strbuf_adds(out, a ? "(same directive)" : "-");
	cuco_report_changes_free(c, n);
}

void cuco_report_diff_lines(struct cuco_strbuf *h, const char *diff)
{
	for (const char *l = diff; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char *line = cuco_xstrndup(l, len);
		const char *cls = *l == '+' ? "add" : *l == '-' ? "del" : *l == '@' ? "hunk" : NULL;
		if (cls)
			cuco_strbuf_addf(h, "<span class=\"%s\">", cls);
		cuco_report_escape(h, line);
		cuco_strbuf_adds(h, cls ? "</span>" : "\n");
		free(line);
		l += len + (nl ? 1 : 0);
	}
}
