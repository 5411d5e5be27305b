/* jsonpos.c - find values in JSON text by path; errors that point at them. */
#include "util/jsonpos.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * jansson reports positions only for syntax errors, so to point at a value
 * we rescan the (already validated) text, building the path of each value
 * as we go, and stop at the first one whose path matches.
 */
struct jscan {
	const char *p, *end;
	const char *target;
	int key;
	const char *found;
	struct cuco_strbuf path;
	int depth;
};

static void js_ws(struct jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* s->p at the opening quote; decode into out (may be NULL); leave p past the closing quote. */
static void js_string(struct jscan *s, struct cuco_strbuf *out)
{
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		char c = *s->p++;

		if (c == '\\' && s->p < s->end) {
			char e = *s->p++;

			switch (e) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u': {
				int v = 0, i;

				for (i = 0; i < 4 && s->p < s->end && hexval(*s->p) >= 0; i++)
					v = v * 16 + hexval(*s->p++);
				c = v > 0 && v < 0x80 ? (char)v : '?';
				break;
			}
			default:
				c = e;
			}
		}
		if (out)
			cuco_strbuf_addch(out, c);
	}
	if (s->p < s->end)
		s->p++;
}

static void js_value(struct jscan *s);

/*
 * Inside an object or array: skip blanks, then say whether it is over, at the
 * end of the text or at its closing bracket (which is consumed).
 */
static int js_closed(struct jscan *s, char close)
{
	js_ws(s);
	if (s->p >= s->end)
		return 1;
	if (*s->p == close) {
		s->p++;
		return 1;
	}
	return 0;
}

/*
 * Scan the member or element whose path the path buffer now holds. 1 when
 * the target was found; else 0, with the path cut back to mark.
 */
static int js_child(struct jscan *s, size_t mark)
{
	s->depth++;
	js_value(s);
	s->depth--;
	if (s->found)
		return 1;
	cuco_strbuf_setlen(&s->path, mark);
	return 0;
}

static void js_value(struct jscan *s)
{
	size_t mark = s->path.len;

	js_ws(s);
	if (s->found || s->p >= s->end)
		return;
	if (!s->key && strcmp(s->path.buf, s->target) == 0) {
		s->found = s->p;
		return;
	}
	if (s->depth > 256) {
		s->p = s->end;
		return;
	}
	if (*s->p == '{') {
		s->p++;
		while (!js_closed(s, '}')) {
			const char *kstart;

			if (*s->p != '"') {
				s->p++; /* ',' or junk: be lenient */
				continue;
			}
			kstart = s->p;
			if (mark)
				cuco_strbuf_addch(&s->path, '.');
			js_string(s, &s->path);
			if (s->key && strcmp(s->path.buf, s->target) == 0) {
				s->found = kstart;
				return;
			}
			js_ws(s);
			if (s->p < s->end && *s->p == ':')
				s->p++;
			if (js_child(s, mark))
				return;
		}
	} else if (*s->p == '[') {
		int idx = 0;

		s->p++;
		while (!js_closed(s, ']')) {
			const char *before;

			if (*s->p == ',') {
				s->p++;
				idx++;
				continue;
			}
			before = s->p;
			cuco_strbuf_addf(&s->path, "[%d]", idx);
			if (js_child(s, mark))
				return;
			if (s->p == before)
				s->p++;
		}
	} else if (*s->p == '"') {
		js_string(s, NULL);
	} else {
		while (s->p < s->end && *s->p != ',' && *s->p != ']' && *s->p != '}' &&
		       *s->p != ' ' && *s->p != '\t' && *s->p != '\n' && *s->p != '\r')
			s->p++;
	}
}

const char *cuco_json_locate(const char *text, size_t len, const char *path, int key)
{
	struct jscan s;

	s.p = text;
	s.end = text + len;
	s.target = path;
	s.key = key;
	s.found = NULL;
	s.depth = 0;
	cuco_strbuf_init(&s.path, 64);
	js_value(&s);
	cuco_strbuf_release(&s.path);
	return s.found;
}

void cuco_json_linecol(const char *text, const char *p, int *line, int *col)
{
	const char *q, *bol = text;
	int ln = 1;

	for (q = text; q < p && *q; q++) {
		if (*q == '\n') {
			ln++;
			bol = q + 1;
		}
	}
	*line = ln;
	*col = (int)(q - bol) + 1;
}

void cuco_json_describe(struct cuco_strbuf *sb, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: {
		size_t n = json_string_length(v);

		if (n > 40)
			cuco_strbuf_addf(sb, "\"%.37s...\"", json_string_value(v));
		else
			cuco_strbuf_addf(sb, "\"%s\"", json_string_value(v));
		break;
	}
	case JSON_INTEGER:
		cuco_strbuf_addf(sb, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		cuco_strbuf_addf(sb, "%g", json_real_value(v));
		break;
	case JSON_TRUE:
		cuco_strbuf_adds(sb, "true");
		break;
	case JSON_FALSE:
		cuco_strbuf_adds(sb, "false");
		break;
	case JSON_NULL:
		cuco_strbuf_adds(sb, "null");
		break;
	case JSON_OBJECT:
		cuco_strbuf_adds(sb, "an object");
		break;
	case JSON_ARRAY:
		cuco_strbuf_adds(sb, "an array");
		break;
	}
}

static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	int row[65], i, j;

	if (la > 64 || lb > 64)
		return 1000;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int up = row[j];
			int cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *cuco_suggest(const char *word, const char *const *candidates, int n)
{
	const char *best = NULL;
	int bestd = 3, i;

	for (i = 0; i < n; i++) {
		int d = edit_distance(word, candidates[i]);

		if (d < bestd && d < (int)strlen(candidates[i])) {
			bestd = d;
			best = candidates[i];
		}
	}
	return best;
}

int cuco_json_parse_object(const struct cuco_json_src *src, json_t **root)
{
	json_error_t jerr;
	int rc;

	*root = json_loadb(src->text, src->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*root)
		return cuco_err_set(src->err, CUCO_ERR_PARSE, "%s:%d:%d: invalid JSON: %s",
		                    src->path, jerr.line > 0 ? jerr.line : 1,
		                    jerr.column > 0 ? jerr.column : 1, jerr.text);
	if (json_is_object(*root))
		return CUCO_OK;
	rc = cuco_json_fail_type(src, "", "an object", *root);
	json_decref(*root);
	*root = NULL;
	return rc;
}

int cuco_json_fail(const struct cuco_json_src *src, int code, const char *field, int key,
                   const char *fmt, ...)
{
	char msg[1024], where[256];
	const char *p = NULL;
	int line = 1, col = 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Missing field: drop its last ".member" or "[index]" until something is there. */
	snprintf(where, sizeof(where), "%s", field);
	for (;;) {
		char *dot, *br;

		p = cuco_json_locate(src->text, src->len, where, key);
		if (p || !where[0])
			break;
		key = 0;
		dot = strrchr(where, '.');
		br = strrchr(where, '[');
		if (br && (!dot || br > dot))
			*br = '\0';
		else if (dot)
			*dot = '\0';
		else
			where[0] = '\0';
	}
	if (p)
		cuco_json_linecol(src->text, p, &line, &col);
	return cuco_err_set(src->err, code, "%s:%d:%d: %s: %s", src->path, line, col,
	                    field[0] ? field : "(document)", msg);
}

int cuco_json_fail_type(const struct cuco_json_src *src, const char *field, const char *expected,
                        const json_t *v)
{
	struct cuco_strbuf got = CUCO_STRBUF_INIT;
	int rc;

	if (!v)
		return cuco_json_fail(src, CUCO_ERR_PARSE, field, 0, "required field is missing");
	cuco_json_describe(&got, v);
	rc =
	    cuco_json_fail(src, CUCO_ERR_PARSE, field, 0, "expected %s, got %s", expected, got.buf);
	cuco_strbuf_release(&got);
	return rc;
}
