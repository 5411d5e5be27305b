/* blocks.c - find EVOLVE-BLOCKs, replace their contents, check an edit kept the rest. */
#include "program/blocks.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum marker { NOT_MARKER = 0, MARK_START = 1, MARK_END = 2, MARK_STRAY = 3 };

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Find needle in [p, end), or NULL. */
static const char *find_in(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; p + n <= end; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

/*
 * Classify the line [bol, eol). *col gets the 1-based column of the marker
 * ("//" of a proper marker, the word of a stray one).
 */
static enum marker classify(const char *bol, const char *eol, int *col)
{
	const char *q = bol, *end = eol, *word, *slash;
	enum marker kind;

	word = find_in(bol, eol, CUCO_BLOCK_START);
	kind = MARK_START;
	if (!word) {
		word = find_in(bol, eol, CUCO_BLOCK_END);
		kind = MARK_END;
	}
	if (!word)
		return NOT_MARKER;
	*col = (int)(word - bol) + 1;
	while (q < end && is_blank(*q))
		q++;
	while (end > q && is_blank(end[-1]))
		end--;
	if (end - q < 2 || q[0] != '/' || q[1] != '/')
		return MARK_STRAY;
	slash = q;
	q += 2;
	while (q < end && is_blank(*q))
		q++;
	if (q != word)
		return MARK_STRAY;
	q += strlen(kind == MARK_START ? CUCO_BLOCK_START : CUCO_BLOCK_END);
	if (q != end)
		return MARK_STRAY;
	*col = (int)(slash - bol) + 1;
	return kind;
}

int cuco_blocks_find(const char *file, const char *src, struct cuco_block *blocks, int max, int *n,
                     struct cuco_err *err)
{
	const char *p = src;
	int ln = 1, open = 0, open_col = 1, count = 0;
	struct cuco_block cur = {0, 0, 0, 0};

	*n = 0;
	if (!file)
		file = "<source>";
	while (*p) {
		const char *bol = p, *eol = strchr(p, '\n');
		int col = 1;
		enum marker m;

		if (!eol)
			eol = p + strlen(p);
		m = classify(bol, eol, &col);
		switch (m) {
		case NOT_MARKER:
			break;
		case MARK_STRAY:
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "%s:%d:%d: %s: an EVOLVE-BLOCK marker must be alone on "
			                    "its line, as `// %s`",
			                    file, ln, col,
			                    find_in(bol, eol, CUCO_BLOCK_START) ? CUCO_BLOCK_START
			                                                        : CUCO_BLOCK_END,
			                    find_in(bol, eol, CUCO_BLOCK_START) ? CUCO_BLOCK_START
			                                                        : CUCO_BLOCK_END);
		case MARK_START:
			if (open)
				return cuco_err_set(
				    err, CUCO_ERR_PARSE,
				    "%s:%d:%d: %s: nested block; the block opened at "
				    "line %d is not closed (blocks do not nest)",
				    file, ln, col, CUCO_BLOCK_START, cur.start_line);
			open = 1;
			open_col = col;
			cur.start_line = ln;
			cur.begin = (size_t)(eol - src) + (*eol ? 1 : 0);
			break;
		case MARK_END:
			if (!open)
				return cuco_err_set(err, CUCO_ERR_PARSE,
				                    "%s:%d:%d: %s: no EVOLVE-BLOCK-START before it",
				                    file, ln, col, CUCO_BLOCK_END);
			if (count == max)
				return cuco_err_set(err, CUCO_ERR_PARSE,
				                    "%s:%d:%d: %s: more than %d evolve blocks",
				                    file, ln, col, CUCO_BLOCK_END, max);
			open = 0;
			cur.end_line = ln;
			cur.end = (size_t)(bol - src);
			blocks[count++] = cur;
			break;
		}
		p = *eol ? eol + 1 : eol;
		ln++;
	}
	if (open)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: %s: the block is never closed; add `// %s` after it",
		                    file, cur.start_line, open_col, CUCO_BLOCK_START,
		                    CUCO_BLOCK_END);
	*n = count;
	return CUCO_OK;
}

int cuco_blocks_replace(const char *src, int block_index, const char *new_contents,
                        struct cuco_strbuf *out, struct cuco_err *err)
{
	struct cuco_block blocks[CUCO_BLOCKS_MAX];
	const struct cuco_block *b;
	size_t len = strlen(new_contents);
	int n, rc;

	rc = cuco_blocks_find("<source>", src, blocks, CUCO_BLOCKS_MAX, &n, err);
	if (rc)
		return rc;
	if (block_index < 0 || block_index >= n)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "evolve block %d does not exist; the program has %d",
		                    block_index, n);
	if (strstr(new_contents, CUCO_BLOCK_START) || strstr(new_contents, CUCO_BLOCK_END))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "the new contents of evolve block %d contain an EVOLVE-BLOCK "
		                    "marker; blocks cannot be added, removed or nested by an edit",
		                    block_index);
	b = &blocks[block_index];
	cuco_strbuf_add(out, src, b->begin);
	cuco_strbuf_add(out, new_contents, len);
	if (len && new_contents[len - 1] != '\n') {
		/* match the START line's ending */
		if (b->begin >= 2 && src[b->begin - 1] == '\n' && src[b->begin - 2] == '\r')
			cuco_strbuf_addch(out, '\r');
		cuco_strbuf_addch(out, '\n');
	}
	cuco_strbuf_adds(out, src + b->end);
	return CUCO_OK;
}

/* One line outside the blocks, or the placeholder for one block's contents. */
struct outline {
	const char *text; /* NULL for a block's contents */
	size_t len;       /* without "\r\n" / "\n" */
	int line;         /* 1-based line in its source (the START line for a placeholder) */
	int newline;      /* the line ended with a newline */
	int marker;       /* it is a marker line */
};

/* The outside lines of src, in order. Returns the count; *out is malloc'd. */
static int outside_lines(const char *src, const struct cuco_block *blocks, int nblocks,
                         struct outline **out)
{
	const char *p;
	int cap = 1 + nblocks, ln = 1, bi = 0, n = 0;
	struct outline *v;

	for (p = src; *p; p++)
		cap += *p == '\n';
	v = cuco_xcalloc((size_t)cap + 1, sizeof(*v));
	for (p = src; *p; ln++) {
		const char *eol = strchr(p, '\n');
		size_t len;

		if (!eol)
			eol = p + strlen(p);
		len = (size_t)(eol - p);
		if (len && p[len - 1] == '\r')
			len--;
		if (bi < nblocks && ln > blocks[bi].start_line && ln < blocks[bi].end_line) {
			p = *eol ? eol + 1 : eol;
			continue;
		}
		v[n].text = p;
		v[n].len = len;
		v[n].line = ln;
		v[n].newline = *eol == '\n';
		v[n].marker =
		    bi < nblocks && (ln == blocks[bi].start_line || ln == blocks[bi].end_line);
		n++;
		if (bi < nblocks && ln == blocks[bi].start_line) {
			v[n].text = NULL;
			v[n].line = ln;
			n++;
		}
		if (bi < nblocks && ln == blocks[bi].end_line)
			bi++;
		p = *eol ? eol + 1 : eol;
	}
	*out = v;
	return n;
}

static int same(const struct outline *a, const struct outline *b)
{
	if (!a->text || !b->text)
		return !a->text && !b->text;
	return a->len == b->len && a->newline == b->newline &&
	       memcmp(a->text, b->text, a->len) == 0;
}

static int count_lines(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '\n' && s[1];
	return n;
}

int cuco_blocks_check_edit(const char *file, const char *old_src, const char *new_src,
                           struct cuco_err *err)
{
	struct cuco_block ob[CUCO_BLOCKS_MAX], nb[CUCO_BLOCKS_MAX];
	struct outline *ol = NULL, *nl = NULL;
	int on, nn, olen, nlen, i, rc;

	if (!file)
		file = "<source>";
	rc = cuco_blocks_find(file, old_src, ob, CUCO_BLOCKS_MAX, &on, err);
	if (rc) {
		cuco_err_prefix(err, "in the original program: ");
		return rc;
	}
	rc = cuco_blocks_find(file, new_src, nb, CUCO_BLOCKS_MAX, &nn, err);
	if (rc)
		return rc;
	olen = outside_lines(old_src, ob, on, &ol);
	nlen = outside_lines(new_src, nb, nn, &nl);
	for (i = 0; i < olen && i < nlen; i++) {
		const struct outline *o = &ol[i], *w = &nl[i];

		if (same(o, w))
			continue;
		if (o->marker || !o->text) {
			const char *marker = !o->text ? "EVOLVE-BLOCK"
			                     : find_in(o->text, o->text + o->len, CUCO_BLOCK_START)
			                         ? CUCO_BLOCK_START
			                         : CUCO_BLOCK_END;

			rc = cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    "%s:%d:1: %s: the edit lost the %s marker of line %d of the "
			    "original; markers and everything outside the blocks must "
			    "stay as they were",
			    file, w->line, marker, marker, o->line);
			goto out;
		}
		if (!w->text) {
			rc = cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    "%s:%d:1: marker: the edit added an evolve block where line "
			    "%d of the original was (\"%.*s\"); blocks cannot be added",
			    file, w->line, o->line, (int)(o->len > 60 ? 60 : o->len), o->text);
			goto out;
		}
		rc = cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "%s:%d:1: outside EVOLVE-BLOCK: the edit changed a line outside the "
		    "evolve blocks (expected line %d of the original, \"%.*s\"%s, found "
		    "\"%.*s\"%s); only lines between EVOLVE-BLOCK-START and "
		    "EVOLVE-BLOCK-END may change",
		    file, w->line, o->line, (int)(o->len > 60 ? 60 : o->len), o->text,
		    o->newline ? "" : " without a final newline", (int)(w->len > 60 ? 60 : w->len),
		    w->text, w->newline ? "" : " without a final newline");
		goto out;
	}
	if (i < olen) {
		const struct outline *o = &ol[i];

		rc = cuco_err_set(err, CUCO_ERR_INVALID,
		                  "%s:%d:1: outside EVOLVE-BLOCK: the edit removed line %d of the "
		                  "original (\"%.*s\"); only lines between EVOLVE-BLOCK-START and "
		                  "EVOLVE-BLOCK-END may change",
		                  file, count_lines(new_src), o->line,
		                  o->text ? (int)(o->len > 60 ? 60 : o->len) : 0,
		                  o->text ? o->text : "");
		goto out;
	}
	if (i < nlen) {
		const struct outline *w = &nl[i];

		rc = cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "%s:%d:1: outside EVOLVE-BLOCK: the edit added this line after the "
		    "end of the original (\"%.*s\"); only lines between "
		    "EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change",
		    file, w->line, w->text ? (int)(w->len > 60 ? 60 : w->len) : 0,
		    w->text ? w->text : "");
		goto out;
	}
	rc = CUCO_OK;
out:
	free(ol);
	free(nl);
	return rc;
}
