/* reply_text.c - the lines of a model's reply: line ends, markers, fences, directive lines. */
#include "llm/reply_internal.h"
#include "util/array.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "program/blocks.h"
#include "program/directive.h"

/* Split an LF text into lines; a final line without newline counts, an empty tail does not. */
void cuco_reply_split_lines(const char *s, struct lines *L)
{
	const char *p = s, *nl;
	struct line *l;
	size_t alloc = 0;

	L->v = NULL;
	L->n = 0;
	while (*p) {
		nl = strchr(p, '\n');
		l = CUCO_ARRAY_PUSH(L->v, L->n, alloc);
		l->p = p;
		l->n = nl ? (size_t)(nl - p) : strlen(p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* s with every CRLF (and lone CR) turned into LF. */
void cuco_reply_to_lf(const char *s, struct cuco_strbuf *out)
{
	for (; *s; s++) {
		if (*s == '\r') {
			if (s[1] != '\n')
				cuco_strbuf_addch(out, '\n');
			continue;
		}
		cuco_strbuf_addch(out, *s);
	}
}

int cuco_reply_uses_crlf(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl && nl > s && nl[-1] == '\r';
}

void cuco_reply_to_crlf(const char *s, struct cuco_strbuf *out)
{
	for (; *s; s++) {
		if (*s == '\n')
			cuco_strbuf_addch(out, '\r');
		cuco_strbuf_addch(out, *s);
	}
}

/* Trimmed bounds of a line. */
void cuco_reply_trim(const struct line *l, const char **b, const char **e)
{
	*b = l->p;
	*e = l->p + l->n;
	while (*b < *e && isspace((unsigned char)**b))
		(*b)++;
	while (*e > *b && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

int cuco_reply_is_blank_line(const struct line *l)
{
	const char *b, *e;

	cuco_reply_trim(l, &b, &e);
	return b == e;
}

/* A line of 5..9 copies of c, then (when word is non-NULL) an optional blank and word. */
int cuco_reply_is_marker(const struct line *l, char c, const char *word)
{
	const char *b, *e, *p;
	size_t n;

	cuco_reply_trim(l, &b, &e);
	for (p = b; p < e && *p == c; p++)
		;
	n = (size_t)(p - b);
	if (n < 5 || n > 9)
		return 0;
	if (!word)
		return p == e;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return (size_t)(e - p) == strlen(word) && strncmp(p, word, strlen(word)) == 0;
}

/* A code fence line: ``` followed by an optional language tag. *lang gets the tag (may be empty).
 */
int cuco_reply_is_fence(const struct line *l, const char **lang, size_t *lang_len)
{
	const char *b, *e;

	cuco_reply_trim(l, &b, &e);
	if (e - b < 3 || strncmp(b, "```", 3) != 0)
		return 0;
	b += 3;
	while (b < e && *b == '`')
		b++;
	if (lang) {
		*lang = b;
		*lang_len = (size_t)(e - b);
	}
	return 1;
}

/* "// EVOLVE-BLOCK-START" or -END alone on the line (as evolve.h accepts them). */
int cuco_reply_is_evolve_marker(const struct line *l)
{
	const char *b, *e;
	size_t n;

	cuco_reply_trim(l, &b, &e);
	if (e - b < 2 || b[0] != '/' || b[1] != '/')
		return 0;
	b += 2;
	while (b < e && (*b == ' ' || *b == '\t'))
		b++;
	n = (size_t)(e - b);
	return (n == strlen(CUCO_BLOCK_START) && strncmp(b, CUCO_BLOCK_START, n) == 0) ||
	       (n == strlen(CUCO_BLOCK_END) && strncmp(b, CUCO_BLOCK_END, n) == 0);
}

/* The JSON after "cuco-directive:" when l is a directive line ("//" optional), else NULL. */
const char *cuco_reply_directive_json_on(const struct line *l, size_t *len)
{
	const char *b, *e, *p;
	static const char tag[] = CUCO_DIRECTIVE_TAG;

	cuco_reply_trim(l, &b, &e);
	p = b;
	if (e - p >= 2 && p[0] == '/' && p[1] == '/')
		p += 2;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(e - p) < sizeof(tag) - 1 || strncmp(p, tag, sizeof(tag) - 1) != 0)
		return NULL;
	p += sizeof(tag) - 1;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	*len = (size_t)(e - p);
	return p;
}

int cuco_reply_is_json_lang(const char *lang, size_t n)
{
	return (n == 4 && strncasecmp(lang, "json", 4) == 0) ||
	       (n == 5 && strncasecmp(lang, "jsonc", 5) == 0);
}

void cuco_reply_quote_line(struct cuco_strbuf *sb, const struct line *l)
{
	const char *b, *e;
	size_t n;

	cuco_reply_trim(l, &b, &e);
	n = (size_t)(e - b);
	cuco_strbuf_addch(sb, '\'');
	cuco_strbuf_add(sb, b, n > QUOTE_MAX ? QUOTE_MAX : n);
	if (n > QUOTE_MAX)
		cuco_strbuf_adds(sb, "...");
	cuco_strbuf_addch(sb, '\'');
}

/* Drop leading/trailing blank and fence lines of a part (models fence inside blocks). */
void cuco_reply_tidy_part(struct lines *p)
{
	while (p->n &&
	       (cuco_reply_is_blank_line(&p->v[0]) || cuco_reply_is_fence(&p->v[0], NULL, NULL))) {
		p->v++;
		p->n--;
	}
	while (p->n && (cuco_reply_is_blank_line(&p->v[p->n - 1]) ||
	                cuco_reply_is_fence(&p->v[p->n - 1], NULL, NULL)))
		p->n--;
}

int cuco_reply_block_ranges(const char *file, const char *text, struct range *r, int *n,
                            struct cuco_strbuf *why)
{
	struct cuco_block b[CUCO_BLOCKS_MAX];
	struct cuco_err e;
	int i;

	if (cuco_blocks_find(file, text, b, CUCO_BLOCKS_MAX, n, &e) != CUCO_OK) {
		cuco_strbuf_adds(why, e.msg);
		return -1;
	}
	for (i = 0; i < *n; i++) {
		r[i].lo = b[i].start_line; /* 0-based index of the first content line */
		r[i].hi = b[i].end_line - 1;
	}
	return 0;
}

/* Code fences of L (json and directive-only fences left out). */
int cuco_reply_collect_fences(const struct lines *L, struct fence **out, int *nout,
                              struct cuco_strbuf *why)
{
	const char *lang;
	size_t lang_len, len;
	struct fence *v = NULL;
	size_t alloc = 0;
	int n = 0, i, j, k, only_directive;

	for (i = 0; i < L->n; i++) {
		if (!cuco_reply_is_fence(&L->v[i], &lang, &lang_len))
			continue;
		for (j = i + 1; j < L->n && !cuco_reply_is_fence(&L->v[j], NULL, NULL); j++)
			;
		if (j >= L->n) {
			cuco_strbuf_addf(
			    why,
			    "the code block opened at reply line %d is never closed; the "
			    "reply is truncated or a ``` is missing",
			    i + 1);
			free(v);
			return -1;
		}
		only_directive = 1;
		for (k = i + 1; k < j; k++)
			if (!cuco_reply_is_blank_line(&L->v[k]) &&
			    !cuco_reply_directive_json_on(&L->v[k], &len))
				only_directive = 0;
		if (!cuco_reply_is_json_lang(lang, lang_len) && !only_directive) {
			struct fence *f = CUCO_ARRAY_PUSH(v, n, alloc);

			f->open = i;
			f->body.v = (struct line *)&L->v[i + 1];
			f->body.n = j - i - 1;
			f->nmarkers = 0;
			for (k = i + 1; k < j; k++)
				f->nmarkers += cuco_reply_is_evolve_marker(&L->v[k]);
		}
		i = j;
	}
	*out = v;
	*nout = n;
	return 0;
}

void cuco_reply_add_lines(struct cuco_strbuf *sb, const struct lines *p)
{
	int i;

	for (i = 0; i < p->n; i++) {
		cuco_strbuf_add(sb, p->v[i].p, p->v[i].n);
		cuco_strbuf_addch(sb, '\n');
	}
}

/* Replace the directive line of LF text (or add one on top) with line. */
void cuco_reply_set_directive_line(struct cuco_strbuf *text, const char *line)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	int dl = cuco_directive_find_line(text->buf), i;
	const char *p = text->buf, *nl;

	if (dl <= 0) {
		cuco_strbuf_adds(&out, line);
		cuco_strbuf_addch(&out, '\n');
		cuco_strbuf_add(&out, text->buf, text->len);
	} else {
		for (i = 1; i < dl; i++)
			p = strchr(p, '\n') + 1;
		nl = strchr(p, '\n');
		cuco_strbuf_add(&out, text->buf, (size_t)(p - text->buf));
		cuco_strbuf_adds(&out, line);
		if (nl)
			cuco_strbuf_adds(&out, nl);
	}
	cuco_strbuf_reset(text);
	cuco_strbuf_add(text, out.buf, out.len);
	cuco_strbuf_release(&out);
}

/* The directive line of LF text as a malloc'd string, or NULL. */
char *cuco_reply_get_directive_line(const char *text)
{
	int dl = cuco_directive_find_line(text), i;
	const char *p = text, *nl;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (dl <= 0)
		return NULL;
	for (i = 1; i < dl; i++)
		p = strchr(p, '\n') + 1;
	nl = strchr(p, '\n');
	cuco_strbuf_add(&sb, p, nl ? (size_t)(nl - p) : strlen(p));
	return cuco_strbuf_detach(&sb, NULL);
}
