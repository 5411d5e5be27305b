/* reply.c - parse a model's reply (directive, then SEARCH/REPLACE edits or rewritten blocks). */
#include "llm/reply.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "program/blocks.h"

#define QUOTE_MAX 60 /* characters of a line quoted in a reason */

/* One line of an LF text: p[0..n) without the newline. */
struct line {
	const char *p;
	size_t n;
};

struct lines {
	struct line *v;
	int n;
};

/* Split an LF text into lines; a final line without newline counts, an empty tail does not. */
static void split_lines(const char *s, struct lines *L)
{
	const char *p = s, *nl;
	int cap = 0;

	L->v = NULL;
	L->n = 0;
	while (*p) {
		nl = strchr(p, '\n');
		if (L->n == cap) {
			cap = cap ? 2 * cap : 64;
			L->v = cuco_xrealloc(L->v, (size_t)cap * sizeof(*L->v));
		}
		L->v[L->n].p = p;
		L->v[L->n].n = nl ? (size_t)(nl - p) : strlen(p);
		L->n++;
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* s with every CRLF (and lone CR) turned into LF. */
static void to_lf(const char *s, struct cuco_strbuf *out)
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

static int uses_crlf(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl && nl > s && nl[-1] == '\r';
}

static void to_crlf(const char *s, struct cuco_strbuf *out)
{
	for (; *s; s++) {
		if (*s == '\n')
			cuco_strbuf_addch(out, '\r');
		cuco_strbuf_addch(out, *s);
	}
}

/* Trimmed bounds of a line. */
static void trim(const struct line *l, const char **b, const char **e)
{
	*b = l->p;
	*e = l->p + l->n;
	while (*b < *e && isspace((unsigned char)**b))
		(*b)++;
	while (*e > *b && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static int is_blank_line(const struct line *l)
{
	const char *b, *e;

	trim(l, &b, &e);
	return b == e;
}

/* A line of 5..9 copies of c, then (when word is non-NULL) an optional blank and word. */
static int is_marker(const struct line *l, char c, const char *word)
{
	const char *b, *e, *p;
	size_t n;

	trim(l, &b, &e);
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

#define IS_SEARCH(l) is_marker((l), '<', "SEARCH")
#define IS_DIVIDER(l) is_marker((l), '=', NULL)
#define IS_REPLACE(l) is_marker((l), '>', "REPLACE")

/* A code fence line: ``` followed by an optional language tag. *lang gets the tag (may be empty).
 */
static int is_fence(const struct line *l, const char **lang, size_t *lang_len)
{
	const char *b, *e;

	trim(l, &b, &e);
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
static int is_evolve_marker(const struct line *l)
{
	const char *b, *e;
	size_t n;

	trim(l, &b, &e);
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
static const char *directive_json_on(const struct line *l, size_t *len)
{
	const char *b, *e, *p;
	static const char tag[] = CUCO_DIRECTIVE_TAG;

	trim(l, &b, &e);
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

static int is_json_lang(const char *lang, size_t n)
{
	return (n == 4 && strncasecmp(lang, "json", 4) == 0) ||
	       (n == 5 && strncasecmp(lang, "jsonc", 5) == 0);
}

static void quote_line(struct cuco_strbuf *sb, const struct line *l)
{
	const char *b, *e;
	size_t n;

	trim(l, &b, &e);
	n = (size_t)(e - b);
	cuco_strbuf_addch(sb, '\'');
	cuco_strbuf_add(sb, b, n > QUOTE_MAX ? QUOTE_MAX : n);
	if (n > QUOTE_MAX)
		cuco_strbuf_adds(sb, "...");
	cuco_strbuf_addch(sb, '\'');
}

/* --- modes, outcome ------------------------------------------------------------------ */

static const char *const mode_names[] = {NULL, "diff", "rewrite", "crossover"};

const char *cuco_llm_mode_name(int mode)
{
	if (mode < CUCO_LLM_MODE_DIFF || mode > CUCO_LLM_MODE_CROSSOVER)
		return NULL;
	return mode_names[mode];
}

int cuco_llm_mode_parse(const char *name, int *mode, struct cuco_err *err)
{
	int i;

	for (i = CUCO_LLM_MODE_DIFF; i <= CUCO_LLM_MODE_CROSSOVER; i++)
		if (name && strcmp(name, mode_names[i]) == 0) {
			*mode = i;
			return CUCO_OK;
		}
	return cuco_err_set(err, CUCO_ERR_INVALID,
	                    "unknown mutation kind '%s'; use diff, rewrite or crossover",
	                    name ? name : "");
}

void cuco_llm_edit_init(struct cuco_llm_edit *e)
{
	memset(e, 0, sizeof(*e));
	cuco_directive_init(&e->directive);
}

void cuco_llm_edit_release(struct cuco_llm_edit *e)
{
	if (!e)
		return;
	free(e->code);
	cuco_directive_release(&e->directive);
	free(e->directive_json);
	free(e->notes);
	free(e->reason);
	free(e->flags);
	cuco_llm_edit_init(e);
}

/* --- the directive --------------------------------------------------------------------- */

/* Parse "// cuco-directive: <json>" built from text into d. */
static int parse_directive_text(const char *json, size_t len, struct cuco_directive *d,
                                struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int ret;

	cuco_strbuf_adds(&sb, "// " CUCO_DIRECTIVE_TAG " ");
	cuco_strbuf_add(&sb, json, len);
	cuco_strbuf_addch(&sb, '\n');
	ret = cuco_directive_parse("reply", sb.buf, d, err);
	cuco_strbuf_release(&sb);
	return ret;
}

/* A ```json fence's object as directive JSON text (the object or its "directive"), or NULL. */
static char *fence_directive(const char *text, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr), *d;
	char *out = NULL;

	if (!json_is_object(root))
		goto out;
	d = json_object_get(root, "directive");
	if (!json_is_object(d))
		d = root;
	if (!json_object_get(d, "backend"))
		goto out;
	out = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(root);
	return out;
}

/*
 * Directive of an LF reply split into L: the first directive line or ```json
 * directive fence. *line_out gets its index.
 */
static int find_directive(const struct lines *L, struct cuco_directive *d, int *line_out,
                          struct cuco_err *err)
{
	const char *lang, *json;
	size_t lang_len, len;
	int i, j, ret;

	for (i = 0; i < L->n; i++) {
		json = directive_json_on(&L->v[i], &len);
		if (json) {
			*line_out = i;
			return parse_directive_text(json, len, d, err);
		}
		if (is_fence(&L->v[i], &lang, &lang_len) && is_json_lang(lang, lang_len)) {
			const char *b;
			char *dj;

			for (j = i + 1; j < L->n && !is_fence(&L->v[j], NULL, NULL); j++)
				;
			if (j >= L->n)
				break;
			b = i + 1 < j ? L->v[i + 1].p : L->v[j].p;
			dj = fence_directive(b, (size_t)(L->v[j].p - b));
			if (dj) {
				*line_out = i;
				ret = parse_directive_text(dj, strlen(dj), d, err);
				free(dj);
				return ret;
			}
			i = j;
		}
	}
	return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
	                    "no directive in the reply: state it first, as a line `// "
	                    "cuco-directive: {\"backend\":...}` or a ```json block");
}

int cuco_llm_reply_directive(const char *reply, struct cuco_directive *d, size_t *pos,
                             struct cuco_err *err)
{
	struct cuco_strbuf lf = CUCO_STRBUF_INIT;
	struct lines L;
	int line = 0, ret;

	cuco_directive_init(d);
	to_lf(reply, &lf);
	split_lines(lf.buf, &L);
	ret = find_directive(&L, d, &line, err);
	if (ret == CUCO_OK && pos) {
		/* map back to the original text: count line starts */
		const char *p = reply;
		int k;

		for (k = 0; k < line && p; k++) {
			p = strchr(p, '\n');
			if (p)
				p++;
		}
		*pos = p ? (size_t)(p - reply) : 0;
	}
	free(L.v);
	cuco_strbuf_release(&lf);
	return ret;
}

/* Index of the first line of L that is code: a SEARCH marker, an EVOLVE marker, or fenced code. */
static int first_code_line(const struct lines *L)
{
	const char *lang;
	size_t lang_len, len;
	int i, in_fence = 0, json_fence = 0;

	for (i = 0; i < L->n; i++) {
		if (is_fence(&L->v[i], &lang, &lang_len)) {
			in_fence = !in_fence;
			json_fence = in_fence && is_json_lang(lang, lang_len);
			continue;
		}
		if (IS_SEARCH(&L->v[i]) || is_evolve_marker(&L->v[i]))
			return i;
		if (in_fence && !json_fence && !is_blank_line(&L->v[i]) &&
		    !directive_json_on(&L->v[i], &len))
			return i;
	}
	return L->n;
}

/* --- checks of the code against the directive -------------------------------------------- */

/* code without comments and string/char literals (replaced by a blank). */
static void strip_comments(const char *s, struct cuco_strbuf *out)
{
	while (*s) {
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			s += 2;
			while (*s && !(s[0] == '*' && s[1] == '/'))
				s++;
			if (*s)
				s += 2;
			cuco_strbuf_addch(out, ' ');
		} else if (*s == '"' || *s == '\'') {
			char q = *s++;

			while (*s && *s != q && *s != '\n') {
				if (*s == '\\' && s[1])
					s++;
				s++;
			}
			if (*s == q)
				s++;
			cuco_strbuf_addch(out, ' ');
		} else {
			cuco_strbuf_addch(out, *s++);
		}
	}
}

static int has_any(const char *code, const char *const *words)
{
	for (; *words; words++)
		if (strstr(code, *words))
			return 1;
	return 0;
}

static const char *const ce_calls[] = {"cudaMemcpyAsync",
                                       "cudaMemcpyPeerAsync",
                                       "cudaMemcpy2DAsync",
                                       "cudaMemcpy3DAsync",
                                       "cudaMemcpy3DPeerAsync",
                                       "cuMemcpy",
                                       NULL};
static const char *const lsa_calls[] = {"lsa_peer", "ncclGetLsaPointer", "ncclGetPeerPointer",
                                        NULL};
static const char *const gin_calls[] = {"ncclGin", "gin_session", NULL};
static const char *const stream_calls[] = {"cudaStreamCreate", "cuStreamCreate", NULL};

int cuco_llm_directive_check_code(const struct cuco_directive *d, const char *code,
                                  struct cuco_strbuf *flags)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	const char *backend = d->dims[CUCO_DIM_BACKEND], *placement = d->dims[CUCO_DIM_PLACEMENT];
	int n = 0;

	strip_comments(code, &sb);
	if (strcmp(backend, "ce") == 0 && !has_any(sb.buf, ce_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"ce\" but the code has no "
		                        "cudaMemcpy*Async or cuMemcpy* call\n");
		n++;
	}
	if (strcmp(backend, "lsa") == 0 && !has_any(sb.buf, lsa_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"lsa\" but the code takes no peer "
		                        "pointer (lsa_peer, ncclGetLsaPointer)\n");
		n++;
	}
	if (strcmp(backend, "gin") == 0 && !has_any(sb.buf, gin_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"gin\" but the code never uses "
		                        "ncclGin (or cuco::gin_session)\n");
		n++;
	}
	if (strcmp(placement, "sequential") == 0 && has_any(sb.buf, stream_calls)) {
		cuco_strbuf_adds(flags, "directive says placement \"sequential\" but the code "
		                        "creates a second stream (cudaStreamCreate*)\n");
		n++;
	}
	if (strcmp(placement, "stream_overlap") == 0 && !has_any(sb.buf, stream_calls)) {
		cuco_strbuf_adds(flags, "directive says placement \"stream_overlap\" but the code "
		                        "creates no second stream\n");
		n++;
	}
	cuco_strbuf_release(&sb);
	return n;
}

/* 1 when the code (comments aside) uses multicast / NVLS / multimem in any spelling. */
static int uses_multicast(const char *code)
{
	static const char *const words[] = {"multimem", "multicast", "nvls", NULL};
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	size_t i;
	int hit = 0;

	strip_comments(code, &sb);
	for (i = 0; i < sb.len; i++)
		sb.buf[i] = (char)tolower((unsigned char)sb.buf[i]);
	hit = has_any(sb.buf, words);
	cuco_strbuf_release(&sb);
	return hit;
}

/* --- diff mode ----------------------------------------------------------------------- */

struct edit {
	int reply_line; /* 1-based line of the SEARCH marker in the reply */
	struct lines search, replace;
};

/* Drop leading/trailing blank and fence lines of a part (models fence inside blocks). */
static void tidy_part(struct lines *p)
{
	while (p->n && (is_blank_line(&p->v[0]) || is_fence(&p->v[0], NULL, NULL))) {
		p->v++;
		p->n--;
	}
	while (p->n && (is_blank_line(&p->v[p->n - 1]) || is_fence(&p->v[p->n - 1], NULL, NULL)))
		p->n--;
}

/* Parse the SEARCH/REPLACE blocks of reply lines L into edits (pointing into L). */
static int parse_edits(const struct lines *L, struct edit **edits, int *nedits,
                       struct cuco_strbuf *why)
{
	enum { IDLE, SEARCH, REPLACE } st = IDLE;
	struct edit *v = NULL, *cur = NULL;
	int n = 0, i;

	for (i = 0; i < L->n; i++) {
		const struct line *l = &L->v[i];

		if (IS_SEARCH(l)) {
			if (st != IDLE) {
				cuco_strbuf_addf(
				    why,
				    "edit %d (reply line %d): a new <<<<<<< SEARCH at reply "
				    "line %d before %s; close every block with ======= and "
				    ">>>>>>> REPLACE",
				    n, cur->reply_line, i + 1,
				    st == SEARCH ? "=======" : ">>>>>>> REPLACE");
				goto fail;
			}
			v = cuco_xrealloc(v, (size_t)(n + 1) * sizeof(*v));
			cur = &v[n++];
			cur->reply_line = i + 1;
			cur->search.v = (struct line *)&L->v[i + 1];
			cur->search.n = 0;
			cur->replace.v = NULL;
			cur->replace.n = 0;
			st = SEARCH;
		} else if (IS_DIVIDER(l) && st != REPLACE) {
			if (st != SEARCH) {
				cuco_strbuf_addf(
				    why, "reply line %d: ======= outside a SEARCH/REPLACE block",
				    i + 1);
				goto fail;
			}
			cur->replace.v = (struct line *)&L->v[i + 1];
			st = REPLACE;
		} else if (IS_REPLACE(l)) {
			if (st != REPLACE) {
				cuco_strbuf_addf(
				    why,
				    "reply line %d: >>>>>>> REPLACE without a preceding "
				    "<<<<<<< SEARCH and =======",
				    i + 1);
				goto fail;
			}
			st = IDLE;
		} else if (st == SEARCH) {
			cur->search.n++;
		} else if (st == REPLACE) {
			cur->replace.n++;
		}
	}
	if (st != IDLE) {
		cuco_strbuf_addf(why,
		                 "edit %d (reply line %d): the reply ends before %s; the reply is "
		                 "truncated or a marker is missing",
		                 n, cur->reply_line, st == SEARCH ? "=======" : ">>>>>>> REPLACE");
		goto fail;
	}
	if (n == 0) {
		cuco_strbuf_adds(why,
		                 "no SEARCH/REPLACE blocks in the reply; a diff is one or more "
		                 "<<<<<<< SEARCH / ======= / >>>>>>> REPLACE blocks");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		tidy_part(&v[i].search);
		tidy_part(&v[i].replace);
	}
	*edits = v;
	*nedits = n;
	return 0;
fail:
	free(v);
	return -1;
}

/* Compare two lines at a matching level: 0 exact, 1 trailing blanks ignored, 2 blanks collapsed. */
static int line_eq(const struct line *a, const struct line *b, int level)
{
	const char *p, *pe, *q, *qe;

	if (level == 0)
		return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
	if (level == 1) {
		size_t x = a->n, y = b->n;

		while (x && isspace((unsigned char)a->p[x - 1]))
			x--;
		while (y && isspace((unsigned char)b->p[y - 1]))
			y--;
		return x == y && memcmp(a->p, b->p, x) == 0;
	}
	trim(a, &p, &pe);
	trim(b, &q, &qe);
	while (p < pe && q < qe) {
		if (isspace((unsigned char)*p) || isspace((unsigned char)*q)) {
			if (!isspace((unsigned char)*p) || !isspace((unsigned char)*q))
				return 0;
			while (p < pe && isspace((unsigned char)*p))
				p++;
			while (q < qe && isspace((unsigned char)*q))
				q++;
			continue;
		}
		if (*p++ != *q++)
			return 0;
	}
	return p == pe && q == qe;
}

/* Content line range [lo, hi) (0-based) of each block of text. */
struct range {
	int lo, hi;
};

static int block_ranges(const char *file, const char *text, struct range *r, int *n,
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

static void add_block_list(struct cuco_strbuf *sb, const struct range *r, int n)
{
	int i;

	if (n == 0) {
		cuco_strbuf_adds(sb, "the program has no EVOLVE-BLOCKs");
		return;
	}
	cuco_strbuf_adds(sb, "the EVOLVE-BLOCK contents are lines ");
	for (i = 0; i < n; i++)
		cuco_strbuf_addf(sb, "%s%d-%d", i ? ", " : "", r[i].lo + 1, r[i].hi);
}

static int part_has_marker(const struct lines *p)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (is_evolve_marker(&p->v[i]))
			return 1;
	return 0;
}

/* Apply one edit to the LF text in *text (replaced on success). 0, or -1 with why. */
static int apply_edit(const char *file, struct cuco_strbuf *text, const struct edit *ed, int k,
                      struct cuco_strbuf *notes, int *fuzzy, struct cuco_strbuf *why)
{
	static const char *const level_names[] = {"exactly", "ignoring trailing whitespace",
	                                          "after whitespace normalisation"};
	struct range r[CUCO_BLOCKS_MAX];
	struct lines T;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	int nb, level, i, j, nmatch = 0, ninside = 0, at = -1, first_outside = -1, ret = -1;
	int inside_at[4];

	split_lines(text->buf, &T);
	if (ed->search.n == 0) {
		cuco_strbuf_addf(
		    why,
		    "edit %d (reply line %d): empty SEARCH; quote the lines to replace "
		    "from inside an EVOLVE-BLOCK",
		    k, ed->reply_line);
		goto out;
	}
	if (part_has_marker(&ed->search) || part_has_marker(&ed->replace)) {
		cuco_strbuf_addf(
		    why,
		    "edit %d (reply line %d): SEARCH/REPLACE text contains an "
		    "EVOLVE-BLOCK marker; markers must stay, edit only the lines between "
		    "them",
		    k, ed->reply_line);
		goto out;
	}
	if (block_ranges(file, text->buf, r, &nb, why))
		goto out;
	for (level = 0; level < 3 && nmatch == 0; level++) {
		for (i = 0; i + ed->search.n <= T.n; i++) {
			for (j = 0; j < ed->search.n; j++)
				if (!line_eq(&T.v[i + j], &ed->search.v[j], level))
					break;
			if (j < ed->search.n)
				continue;
			nmatch++;
			for (j = 0; j < nb; j++)
				if (i >= r[j].lo && i + ed->search.n <= r[j].hi)
					break;
			if (j < nb) {
				if (ninside < 4)
					inside_at[ninside] = i;
				ninside++;
			} else if (first_outside < 0) {
				first_outside = i;
			}
		}
	}
	level--;
	if (nmatch == 0) {
		cuco_strbuf_addf(
		    why, "edit %d (reply line %d): SEARCH text not found in %s (first line ", k,
		    ed->reply_line, file);
		quote_line(why, &ed->search.v[0]);
		cuco_strbuf_adds(why, "); copy the lines to replace exactly from the program");
		goto out;
	}
	if (ninside == 0) {
		cuco_strbuf_addf(why,
		                 "edit %d (reply line %d): SEARCH text matches %s:%d, outside the "
		                 "EVOLVE-BLOCKs; ",
		                 k, ed->reply_line, file, first_outside + 1);
		add_block_list(why, r, nb);
		cuco_strbuf_adds(why, " and only they may change");
		goto out;
	}
	if (ninside > 1) {
		cuco_strbuf_addf(why,
		                 "edit %d (reply line %d): SEARCH text matches %d places (lines ",
		                 k, ed->reply_line, ninside);
		for (i = 0; i < ninside && i < 4; i++)
			cuco_strbuf_addf(why, "%s%d", i ? ", " : "", inside_at[i] + 1);
		cuco_strbuf_adds(why, "); include more lines to make it unique");
		goto out;
	}
	at = inside_at[0];
	if (level > 0) {
		(*fuzzy)++;
		cuco_strbuf_addf(notes, "edit %d: SEARCH matched %s:%d %s\n", k, file, at + 1,
		                 level_names[level]);
	}
	cuco_strbuf_add(&out, text->buf, (size_t)(T.v[at].p - text->buf));
	for (j = 0; j < ed->replace.n; j++) {
		cuco_strbuf_add(&out, ed->replace.v[j].p, ed->replace.v[j].n);
		cuco_strbuf_addch(&out, '\n');
	}
	i = at + ed->search.n; /* first line after the match (never past the END marker) */
	cuco_strbuf_adds(&out, T.v[i].p);
	cuco_strbuf_reset(text);
	cuco_strbuf_add(text, out.buf, out.len);
	ret = 0;
out:
	free(T.v);
	cuco_strbuf_release(&out);
	return ret;
}

/* --- rewrite / crossover ------------------------------------------------------------- */

struct fence {
	int open;          /* line index of the opening ``` */
	struct lines body; /* lines between the fences */
	int nmarkers;      /* EVOLVE markers inside */
};

/* Code fences of L (json and directive-only fences left out). */
static int collect_fences(const struct lines *L, struct fence **out, int *nout,
                          struct cuco_strbuf *why)
{
	const char *lang;
	size_t lang_len, len;
	struct fence *v = NULL;
	int n = 0, i, j, k, only_directive;

	for (i = 0; i < L->n; i++) {
		if (!is_fence(&L->v[i], &lang, &lang_len))
			continue;
		for (j = i + 1; j < L->n && !is_fence(&L->v[j], NULL, NULL); j++)
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
			if (!is_blank_line(&L->v[k]) && !directive_json_on(&L->v[k], &len))
				only_directive = 0;
		if (!is_json_lang(lang, lang_len) && !only_directive) {
			v = cuco_xrealloc(v, (size_t)(n + 1) * sizeof(*v));
			v[n].open = i;
			v[n].body.v = (struct line *)&L->v[i + 1];
			v[n].body.n = j - i - 1;
			v[n].nmarkers = 0;
			for (k = i + 1; k < j; k++)
				v[n].nmarkers += is_evolve_marker(&L->v[k]);
			n++;
		}
		i = j;
	}
	*out = v;
	*nout = n;
	return 0;
}

static void add_lines(struct cuco_strbuf *sb, const struct lines *p)
{
	int i;

	for (i = 0; i < p->n; i++) {
		cuco_strbuf_add(sb, p->v[i].p, p->v[i].n);
		cuco_strbuf_addch(sb, '\n');
	}
}

/* Replace the directive line of LF text (or add one on top) with line. */
static void set_directive_line(struct cuco_strbuf *text, const char *line)
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
static char *get_directive_line(const char *text)
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

static int apply_rewrite(const char *file, const char *parent, const struct lines *L,
                         struct cuco_strbuf *text, int *nedits, struct cuco_strbuf *why)
{
	struct range r[CUCO_BLOCKS_MAX];
	struct fence *f = NULL;
	struct cuco_strbuf cand = CUCO_STRBUF_INIT;
	struct cuco_err e;
	char *pline = NULL;
	int nf, nb, i, per_block = 1, ret = -1;

	if (block_ranges(file, parent, r, &nb, why))
		goto out;
	if (nb == 0) {
		cuco_strbuf_addf(why, "%s has no EVOLVE-BLOCKs, so nothing may be rewritten", file);
		goto out;
	}
	if (collect_fences(L, &f, &nf, why))
		goto out;
	if (nf == 0) {
		cuco_strbuf_addf(
		    why,
		    "no code blocks in the reply; give the new contents of each of the "
		    "%d EVOLVE-BLOCKs in a ``` fenced block, in order",
		    nb);
		goto out;
	}
	/* per-block fences may echo their own markers: START first and END last, nothing else */
	for (i = 0; i < nf; i++) {
		struct lines *b = &f[i].body;

		if (f[i].nmarkers == 0)
			continue;
		tidy_part(b);
		if (f[i].nmarkers == 2 && b->n >= 2 && is_evolve_marker(&b->v[0]) &&
		    is_evolve_marker(&b->v[b->n - 1]) && nf == nb) {
			b->v++;
			b->n -= 2;
			continue;
		}
		per_block = 0;
	}
	if (!per_block) {
		if (nf != 1) {
			cuco_strbuf_addf(
			    why,
			    "the reply has %d code blocks and some hold EVOLVE-BLOCK "
			    "markers; give either one block per EVOLVE-BLOCK (contents "
			    "only) or exactly one block with the whole file",
			    nf);
			goto out;
		}
		if (f[0].nmarkers != 2 * nb) {
			cuco_strbuf_addf(
			    why,
			    "markers must survive: the rewritten file has %d EVOLVE-BLOCK "
			    "marker lines, the parent %d",
			    f[0].nmarkers, 2 * nb);
			goto out;
		}
		add_lines(&cand, &f[0].body);
		/* the stated directive goes in later; compare the rest with the parent's */
		pline = get_directive_line(parent);
		if (pline) {
			if (cuco_directive_find_line(cand.buf) > 0)
				set_directive_line(&cand, pline);
			else if (cuco_directive_find_line(parent) == 1)
				set_directive_line(&cand, pline);
		}
		if (cuco_blocks_check_edit(file, parent, cand.buf, &e) != CUCO_OK) {
			cuco_strbuf_addf(
			    why, "the rewritten file changes text outside the EVOLVE-BLOCKs: %s",
			    e.msg);
			goto out;
		}
		cuco_strbuf_reset(text);
		cuco_strbuf_add(text, cand.buf, cand.len);
		*nedits = nb;
		ret = 0;
		goto out;
	}
	if (nf != nb) {
		cuco_strbuf_addf(why,
		                 "%s has %d EVOLVE-BLOCKs but the reply has %d code blocks; give "
		                 "one fenced block per EVOLVE-BLOCK, in order",
		                 file, nb, nf);
		goto out;
	}
	cuco_strbuf_reset(text);
	cuco_strbuf_adds(text, parent);
	for (i = 0; i < nb; i++) {
		cuco_strbuf_reset(&cand);
		tidy_part(&f[i].body);
		add_lines(&cand, &f[i].body);
		{
			struct cuco_strbuf next = CUCO_STRBUF_INIT;

			if (cuco_blocks_replace(text->buf, i, cand.buf, &next, &e) != CUCO_OK) {
				cuco_strbuf_addf(why, "code block %d (reply line %d): %s", i + 1,
				                 f[i].open + 1, e.msg);
				cuco_strbuf_release(&next);
				goto out;
			}
			cuco_strbuf_reset(text);
			cuco_strbuf_add(text, next.buf, next.len);
			cuco_strbuf_release(&next);
		}
	}
	*nedits = nb;
	ret = 0;
out:
	free(f);
	free(pline);
	cuco_strbuf_release(&cand);
	return ret;
}

/* --- the whole thing ----------------------------------------------------------------- */

static int reject(struct cuco_llm_edit *out, struct cuco_err *err, int code, const char *why)
{
	free(out->code);
	out->code = NULL;
	free(out->reason);
	out->reason = cuco_xstrdup(why);
	return cuco_err_set(err, code, "%s", why);
}

/*
 * The directive found at reply line dline_idx must come before the code and
 * (with ds) lie in the design space; on success its canonical JSON goes to
 * out->directive_json. Returns CUCO_OK or a rejection (reason in out and err).
 */
static int accept_directive(const struct lines *L, int dline_idx, struct cuco_llm_edit *out,
                            const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                            struct cuco_err *err)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;
	struct cuco_err e;
	int i = first_code_line(L), rc, ret = CUCO_OK;

	if (i < dline_idx) {
		cuco_strbuf_addf(
		    &why,
		    "directive: stated at reply line %d, after the code that starts at "
		    "line %d; state the directive first, then the code",
		    dline_idx + 1, i + 1);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (ds) {
		cuco_err_clear(&e);
		rc = cuco_directive_validate(&out->directive, ds, facts, &e);
		if (rc != CUCO_OK) {
			cuco_strbuf_addf(&why, "directive: %s", e.msg);
			ret = reject(out, err, rc, why.buf);
			goto out;
		}
	}
	out->directive_json = cuco_directive_to_json(&out->directive);
out:
	cuco_strbuf_release(&why);
	return ret;
}

int cuco_llm_reply_apply(const char *file, const char *parent, const char *reply, int mode,
                         const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                         struct cuco_llm_edit *out, struct cuco_err *err)
{
	struct cuco_strbuf rlf = CUCO_STRBUF_INIT, plf = CUCO_STRBUF_INIT, text = CUCO_STRBUF_INIT;
	struct cuco_strbuf why = CUCO_STRBUF_INIT, notes = CUCO_STRBUF_INIT;
	struct cuco_strbuf flags = CUCO_STRBUF_INIT, final = CUCO_STRBUF_INIT;
	struct cuco_directive check;
	struct cuco_err e;
	struct lines L = {NULL, 0};
	struct edit *edits = NULL;
	char *dline = NULL;
	int ret = CUCO_OK, dline_idx = -1, nedits = 0, i, rc;

	cuco_llm_edit_release(out);
	cuco_directive_init(&check);
	if (!file)
		file = "<parent>";
	if (!cuco_llm_mode_name(mode)) {
		ret = reject(out, err, CUCO_ERR_INVALID, "unknown mutation kind");
		goto out;
	}
	to_lf(reply ? reply : "", &rlf);
	to_lf(parent, &plf);
	split_lines(rlf.buf, &L);

	/* 1. the directive, first */
	cuco_err_clear(&e);
	rc = find_directive(&L, &out->directive, &dline_idx, &e);
	if (rc != CUCO_OK) {
		cuco_strbuf_addf(&why, "directive: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	ret = accept_directive(&L, dline_idx, out, ds, facts, err);
	if (ret)
		goto out;

	/* 2. the code */
	if (mode == CUCO_LLM_MODE_DIFF) {
		int nfuzzy = 0;

		if (parse_edits(&L, &edits, &nedits, &why)) {
			ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
			goto out;
		}
		cuco_strbuf_add(&text, plf.buf, plf.len);
		for (i = 0; i < nedits; i++)
			if (apply_edit(file, &text, &edits[i], i + 1, &notes, &nfuzzy, &why)) {
				ret = reject(out, err, CUCO_ERR_INVALID, why.buf);
				goto out;
			}
		out->nfuzzy = nfuzzy;
	} else {
		if (apply_rewrite(file, plf.buf, &L, &text, &nedits, &why)) {
			/* unterminated fences and missing code are a malformed reply */
			ret = reject(out, err,
			             strstr(why.buf, "never closed") ||
			                     strstr(why.buf, "no code blocks")
			                 ? CUCO_ERR_PARSE
			                 : CUCO_ERR_INVALID,
			             why.buf);
			goto out;
		}
	}
	out->nedits = nedits;

	/* 3. belt and braces: nothing outside the blocks moved, markers intact */
	if (cuco_blocks_check_edit(file, plf.buf, text.buf, &e) != CUCO_OK) {
		cuco_strbuf_addf(&why, "the edit changes text outside the EVOLVE-BLOCKs: %s",
		                 e.msg);
		ret = reject(out, err, CUCO_ERR_INVALID, why.buf);
		goto out;
	}
	if (uses_multicast(text.buf)) {
		ret =
		    reject(out, err, CUCO_ERR_INVALID,
		           "the code uses multicast (multimem/NVLS), which is forbidden on cuco's "
		           "machines; use LSA loads and stores or the copy engine");
		goto out;
	}

	/* 4. the stated directive replaces the parent's */
	dline = cuco_directive_to_line(&out->directive);
	set_directive_line(&text, dline);
	rc = cuco_directive_parse(file, text.buf, &check, &e);
	if (rc != CUCO_OK) {
		cuco_strbuf_addf(&why, "the candidate's directive line: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (cuco_llm_directive_check_code(&out->directive, text.buf, &flags) > 0)
		out->flags = cuco_strbuf_detach(&flags, NULL);
	if (uses_crlf(parent))
		to_crlf(text.buf, &final);
	else
		cuco_strbuf_add(&final, text.buf, text.len);
	out->code = cuco_strbuf_detach(&final, NULL);
	out->notes = cuco_strbuf_detach(&notes, NULL);
	cuco_err_clear(err);
out:
	free(L.v);
	free(edits);
	free(dline);
	cuco_directive_release(&check);
	cuco_strbuf_release(&rlf);
	cuco_strbuf_release(&plf);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&why);
	cuco_strbuf_release(&notes);
	cuco_strbuf_release(&flags);
	cuco_strbuf_release(&final);
	return ret;
}

int cuco_llm_reply_program(const char *reply, int need_directive,
                           const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                           struct cuco_llm_edit *out, struct cuco_err *err)
{
	struct cuco_strbuf rlf = CUCO_STRBUF_INIT, text = CUCO_STRBUF_INIT, why = CUCO_STRBUF_INIT;
	struct cuco_strbuf flags = CUCO_STRBUF_INIT, notes = CUCO_STRBUF_INIT;
	struct lines L = {NULL, 0};
	struct fence *f = NULL;
	struct cuco_err e;
	char *dline = NULL;
	int ret = CUCO_OK, dline_idx = -1, nf = 0, best = 0, have_directive = 0, i, rc;

	cuco_llm_edit_release(out);
	to_lf(reply ? reply : "", &rlf);
	split_lines(rlf.buf, &L);

	/* 1. the directive, first (stage A may leave it out) */
	cuco_err_clear(&e);
	rc = find_directive(&L, &out->directive, &dline_idx, &e);
	if (rc == CUCO_OK) {
		have_directive = 1;
	} else if (rc != CUCO_ERR_NOT_FOUND || need_directive) {
		cuco_strbuf_addf(&why, "directive: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (have_directive) {
		ret = accept_directive(&L, dline_idx, out, ds, facts, err);
		if (ret)
			goto out;
	}

	/* 2. the program: one fenced block (the longest when there are several) */
	if (collect_fences(&L, &f, &nf, &why)) {
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (nf == 0) {
		ret = reject(out, err, CUCO_ERR_PARSE,
		             "no code block in the reply; give the complete program in one "
		             "```cuda fenced block");
		goto out;
	}
	for (i = 1; i < nf; i++)
		if (f[i].body.n > f[best].body.n)
			best = i;
	if (nf > 1)
		cuco_strbuf_addf(&notes,
		                 "the reply has %d code blocks; took the longest (reply line %d)\n",
		                 nf, f[best].open + 1);
	add_lines(&text, &f[best].body);
	if (uses_multicast(text.buf)) {
		ret =
		    reject(out, err, CUCO_ERR_INVALID,
		           "the code uses multicast (multimem/NVLS), which is forbidden on cuco's "
		           "machines; use LSA loads and stores or the copy engine");
		goto out;
	}

	/* 3. the stated directive is the program's */
	if (have_directive) {
		dline = cuco_directive_to_line(&out->directive);
		set_directive_line(&text, dline);
		if (cuco_llm_directive_check_code(&out->directive, text.buf, &flags) > 0)
			out->flags = cuco_strbuf_detach(&flags, NULL);
	}
	out->nedits = 1;
	out->code = cuco_strbuf_detach(&text, NULL);
	out->notes = cuco_strbuf_detach(&notes, NULL);
	cuco_err_clear(err);
out:
	free(L.v);
	free(f);
	free(dline);
	cuco_strbuf_release(&rlf);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&why);
	cuco_strbuf_release(&flags);
	cuco_strbuf_release(&notes);
	return ret;
}
