/* text.c - a local file's text: tokens, line table, the adjusted copy the parse reads. */
#include "lift/text.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* A file larger than this is not a source anyone lifts; the parse reads it as is. */
#define MAX_TEXT (64u << 20)

/* Lexer state: where, and whether the current line is a preprocessor directive. */
struct lexer {
	const char *s;
	size_t len, pos;
	int bol; /* only whitespace since the last newline */
	int pp;
};

static int ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '$';
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* An encoding prefix or R of a string literal: u8"", LR"(...)". */
static int literal_prefix(const char *p, size_t n)
{
	static const char *const prefixes[] = {"R", "u8", "u", "U", "L", "u8R", "uR", "UR", "LR"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strlen(prefixes[i]) == n && memcmp(prefixes[i], p, n) == 0)
			return 1;
	return 0;
}

/* Skip whitespace, comments and line splices; a newline ends a directive. */
static void skip_space(struct lexer *L)
{
	const char *s = L->s;

	while (L->pos < L->len) {
		char c = s[L->pos];

		if (c == '\\' && L->pos + 1 < L->len &&
		    (s[L->pos + 1] == '\n' ||
		     (s[L->pos + 1] == '\r' && L->pos + 2 < L->len && s[L->pos + 2] == '\n'))) {
			L->pos += s[L->pos + 1] == '\n' ? 2 : 3;
		} else if (c == '\n') {
			L->pos++;
			L->bol = 1;
			L->pp = 0;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			L->pos++;
		} else if (c == '/' && L->pos + 1 < L->len && s[L->pos + 1] == '/') {
			while (L->pos < L->len && s[L->pos] != '\n')
				L->pos++;
		} else if (c == '/' && L->pos + 1 < L->len && s[L->pos + 1] == '*') {
			const char *e = NULL;

			if (L->pos + 2 < L->len)
				e = strstr(s + L->pos + 2, "*/");
			L->pos = e && (size_t)(e - s) < L->len ? (size_t)(e - s) + 2 : L->len;
		} else {
			break;
		}
	}
}

/* A quoted literal starting at the quote q (" or '); returns the offset after it. */
static size_t skip_quoted(const char *s, size_t len, size_t q)
{
	char quote = s[q];
	size_t i = q + 1;

	while (i < len && s[i] != quote && s[i] != '\n') {
		if (s[i] == '\\' && i + 1 < len)
			i++;
		i++;
	}
	return i < len ? i + 1 : len;
}

/* A raw string R"delim( ... )delim" whose quote is at q; the offset after it. */
static size_t skip_raw(const char *s, size_t len, size_t q)
{
	char close[24];
	size_t i = q + 1, d = 0;
	const char *e;

	while (i < len && s[i] != '(' && d < 16)
		close[1 + d++] = s[i++];
	if (i >= len || s[i] != '(')
		return skip_quoted(s, len, q);
	close[0] = ')';
	close[1 + d] = '"';
	close[2 + d] = '\0';
	e = strstr(s + i, close);
	return e && (size_t)(e - s) < len ? (size_t)(e - s) + d + 2 : len;
}

static struct lift_tok next(struct lexer *L)
{
	struct lift_tok t = {LIFT_TOK_END, 0, 0, 0};
	const char *s = L->s;
	size_t i;
	int c;

	skip_space(L);
	t.start = t.end = L->pos;
	if (L->pos >= L->len)
		return t;
	i = L->pos;
	c = (unsigned char)s[i];
	if (c == '#' && L->bol)
		L->pp = 1;
	L->bol = 0;
	t.pp = L->pp;
	if (ident_start(c)) {
		while (i < L->len && ident_char((unsigned char)s[i]))
			i++;
		/* an encoding prefix or R glued to a quote makes a literal */
		if (i < L->len && (s[i] == '"' || s[i] == '\'') &&
		    literal_prefix(s + L->pos, i - L->pos)) {
			int raw = s[i - 1] == 'R' && s[i] == '"';

			t.kind = LIFT_TOK_STRING;
			i = raw ? skip_raw(s, L->len, i) : skip_quoted(s, L->len, i);
		} else {
			t.kind = LIFT_TOK_IDENT;
		}
	} else if (isdigit(c) || (c == '.' && i + 1 < L->len && isdigit((unsigned char)s[i + 1]))) {
		t.kind = LIFT_TOK_NUMBER;
		while (i < L->len) {
			int d = (unsigned char)s[i];

			if ((d == '+' || d == '-') && strchr("eEpP", s[i - 1]))
				i++;
			else if (ident_char(d) || d == '.' || d == '\'')
				i++;
			else
				break;
		}
	} else if (c == '"' || c == '\'') {
		t.kind = LIFT_TOK_STRING;
		i = skip_quoted(s, L->len, i);
	} else {
		t.kind = LIFT_TOK_PUNCT;
		if (i + 2 < L->len && ((c == '<' && s[i + 1] == '<' && s[i + 2] == '<') ||
		                       (c == '>' && s[i + 1] == '>' && s[i + 2] == '>')))
			i += 3;
		else
			i++;
	}
	L->pos = i;
	t.end = i;
	return t;
}

struct lift_tok lift_text_tok(const char *s, size_t len, size_t pos)
{
	struct lexer L = {s, len, pos, 0, 0};

	return next(&L);
}

int lift_tok_is(const char *s, struct lift_tok t, const char *word)
{
	size_t n = strlen(word);

	return t.kind != LIFT_TOK_END && t.end - t.start == n && memcmp(s + t.start, word, n) == 0;
}

/* The closing token of an opening one, NULL when it opens nothing. */
static const char *closer(const char *s, struct lift_tok t)
{
	if (t.kind != LIFT_TOK_PUNCT)
		return NULL;
	if (lift_tok_is(s, t, "<<<"))
		return ">>>";
	if (lift_tok_is(s, t, "("))
		return ")";
	if (lift_tok_is(s, t, "["))
		return "]";
	if (lift_tok_is(s, t, "{"))
		return "}";
	return NULL;
}

int lift_text_split(const char *s, size_t len, size_t open, char sep, struct lift_piece *pieces,
                    int max, size_t *close)
{
	struct lexer L = {s, len, open, 0, 0};
	const char *want[64];
	char sepstr[2] = {sep, '\0'};
	struct lift_tok t = next(&L);
	int depth = 0, n = 0, any = 0;
	size_t first = 0, last = 0;

	want[depth] = closer(s, t);
	if (!want[depth])
		return -1;
	depth = 1;
	for (t = next(&L); t.kind != LIFT_TOK_END; t = next(&L)) {
		const char *c = closer(s, t);

		if (depth == 1 && (lift_tok_is(s, t, want[0]) || lift_tok_is(s, t, sepstr))) {
			if (any || lift_tok_is(s, t, sepstr) || n > 0) {
				if (n < max) {
					pieces[n].start = any ? first : t.start;
					pieces[n].end = any ? last : t.start;
				}
				n++;
			}
			any = 0;
			if (lift_tok_is(s, t, want[0])) {
				*close = t.start;
				return n;
			}
			continue;
		}
		if (c && !lift_tok_is(s, t, "<<<")) {
			if (depth >= (int)(sizeof(want) / sizeof(want[0])))
				return -1;
			want[depth++] = c;
		} else if (depth > 1 && lift_tok_is(s, t, want[depth - 1])) {
			depth--;
		}
		if (!any)
			first = t.start;
		any = 1;
		last = t.end;
	}
	return -1;
}

size_t lift_text_expect(const char *s, size_t len, size_t pos, const char *p, int skip_template)
{
	struct lexer L = {s, len, pos, 0, 0};
	struct lift_tok t = next(&L);

	if (skip_template && lift_tok_is(s, t, "<")) {
		int angle = 1, paren = 0;

		while (angle > 0) {
			t = next(&L);
			if (t.kind == LIFT_TOK_END || lift_tok_is(s, t, ";") ||
			    lift_tok_is(s, t, "{"))
				return (size_t)-1;
			if (lift_tok_is(s, t, "("))
				paren++;
			else if (lift_tok_is(s, t, ")"))
				paren--;
			else if (paren == 0 && lift_tok_is(s, t, "<"))
				angle++;
			else if (paren == 0 && lift_tok_is(s, t, ">"))
				angle--;
			else if (paren == 0 && lift_tok_is(s, t, ">>>"))
				angle -= 3;
		}
		if (angle < 0)
			return (size_t)-1;
		t = next(&L);
	}
	return lift_tok_is(s, t, p) ? t.start : (size_t)-1;
}

int lift_text_load(struct lift_text *t, const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char real[PATH_MAX];
	size_t i, alloc = 0;

	memset(t, 0, sizeof(*t));
	if (!realpath(path, real))
		return -1;
	if (cuco_strbuf_read_file(&sb, real) < 0) {
		cuco_strbuf_release(&sb);
		return -1;
	}
	if (sb.len > MAX_TEXT) {
		cuco_strbuf_release(&sb);
		errno = EFBIG;
		return -1;
	}
	t->path = cuco_xstrdup(real);
	t->src = cuco_strbuf_detach(&sb, &t->len);
	*CUCO_ARRAY_PUSH(t->lines, t->nlines, alloc) = 0;
	for (i = 0; i < t->len; i++)
		if (t->src[i] == '\n')
			*CUCO_ARRAY_PUSH(t->lines, t->nlines, alloc) = i + 1;
	return 0;
}

void lift_text_release(struct lift_text *t)
{
	free(t->path);
	free(t->src);
	free(t->lines);
	free(t->edits);
	free(t->patched);
	memset(t, 0, sizeof(*t));
}

void lift_text_linecol(const struct lift_text *t, size_t off, unsigned *line, unsigned *col)
{
	size_t lo = 0, hi = t->nlines;

	if (off > t->len)
		off = t->len;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->lines[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	*line = (unsigned)(lo + 1);
	*col = (unsigned)(off - t->lines[lo] + 1);
}

static void add_edit(struct lift_text *t, size_t off, size_t old_len, const char *text)
{
	struct lift_edit *e = CUCO_ARRAY_PUSH(t->edits, t->nedits, t->edits_alloc);

	e->off = off;
	e->old_len = old_len;
	e->new_len = strlen(text);
	e->text = text;
}

/* <<<{x, y}, ...>>>: the first two braced configurations become dim3(...). */
static void patch_launch(struct lift_text *t, size_t open)
{
	struct lift_piece p[4];
	size_t close;
	int n = lift_text_split(t->src, t->len, open, ',', p, 4, &close), i;

	for (i = 0; i < n && i < 2; i++) {
		struct lift_piece q[1];
		size_t brace_close;

		if (p[i].end <= p[i].start || t->src[p[i].start] != '{')
			continue;
		if (lift_text_split(t->src, t->len, p[i].start, ',', q, 1, &brace_close) < 0 ||
		    brace_close + 1 != p[i].end)
			continue;
		add_edit(t, p[i].start, 1, "dim3(");
		add_edit(t, brace_close, 1, ")");
	}
}

static int edit_cmp(const void *a, const void *b)
{
	const struct lift_edit *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

void lift_text_patch(struct lift_text *t)
{
	struct lexer L = {t->src, t->len, 0, 1, 0};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct lift_tok tok;
	int cond = 0; /* inside #if, #ifdef, #ifndef, #elif */
	size_t i, at = 0;

	for (tok = next(&L); tok.kind != LIFT_TOK_END; tok = next(&L)) {
		if (!tok.pp) {
			cond = 0;
			if (lift_tok_is(t->src, tok, "<<<"))
				patch_launch(t, tok.start);
			continue;
		}
		if (lift_tok_is(t->src, tok, "#")) {
			struct lift_tok d = lift_text_tok(t->src, t->len, tok.end);

			cond = d.kind == LIFT_TOK_IDENT &&
			       (lift_tok_is(t->src, d, "if") || lift_tok_is(t->src, d, "ifdef") ||
			        lift_tok_is(t->src, d, "ifndef") || lift_tok_is(t->src, d, "elif"));
			continue;
		}
		/* the same length: lines and offsets stay where they were */
		if (cond && lift_tok_is(t->src, tok, "__NVCC__"))
			add_edit(t, tok.start, tok.end - tok.start, "__CUCONV");
	}
	if (!t->nedits)
		return;
	qsort(t->edits, t->nedits, sizeof(t->edits[0]), edit_cmp);
	for (i = 0; i < t->nedits; i++) {
		cuco_strbuf_add(&out, t->src + at, t->edits[i].off - at);
		cuco_strbuf_adds(&out, t->edits[i].text);
		at = t->edits[i].off + t->edits[i].old_len;
	}
	cuco_strbuf_add(&out, t->src + at, t->len - at);
	t->patched = cuco_strbuf_detach(&out, &t->patched_len);
}

size_t lift_text_unpatch(const struct lift_text *t, size_t off)
{
	size_t i;
	long long delta = 0;

	for (i = 0; i < t->nedits; i++) {
		const struct lift_edit *e = &t->edits[i];
		long long start = (long long)e->off + delta;

		if ((long long)off < start)
			break;
		if ((long long)off < start + (long long)e->new_len)
			return e->off;
		delta += (long long)e->new_len - (long long)e->old_len;
	}
	return (size_t)((long long)off - delta);
}
