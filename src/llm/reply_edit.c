/* reply_edit.c - a diff reply: its SEARCH/REPLACE blocks, each applied inside the EVOLVE-BLOCKs. */
#include "llm/reply_internal.h"
#include "util/array.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "program/blocks.h"

struct edit {
	int reply_line; /* 1-based line of the SEARCH marker in the reply */
	struct lines search, replace;
};

/* Parse the SEARCH/REPLACE blocks of reply lines L into edits (pointing into L). */
static int parse_edits(const struct lines *L, struct edit **edits, int *nedits,
                       struct cuco_strbuf *why)
{
	enum { IDLE, SEARCH, REPLACE } st = IDLE;
	struct edit *v = NULL, *cur = NULL;
	size_t alloc = 0;
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
			cur = CUCO_ARRAY_PUSH(v, n, alloc);
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
		cuco_reply_tidy_part(&v[i].search);
		cuco_reply_tidy_part(&v[i].replace);
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
	cuco_reply_trim(a, &p, &pe);
	cuco_reply_trim(b, &q, &qe);
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
		if (cuco_reply_is_evolve_marker(&p->v[i]))
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

	cuco_reply_split_lines(text->buf, &T);
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
	if (cuco_reply_block_ranges(file, text->buf, r, &nb, why))
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
		cuco_reply_quote_line(why, &ed->search.v[0]);
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

int cuco_reply_diff(const char *file, const struct lines *L, struct cuco_strbuf *text, int *nedits,
                    int *nfuzzy, struct cuco_strbuf *notes, struct cuco_strbuf *why)
{
	struct edit *edits = NULL;
	int n = 0, i, ret = CUCO_OK;

	*nfuzzy = 0;
	if (parse_edits(L, &edits, &n, why))
		return CUCO_ERR_PARSE;
	*nedits = n;
	for (i = 0; i < n; i++)
		if (apply_edit(file, text, &edits[i], i + 1, notes, nfuzzy, why)) {
			ret = CUCO_ERR_INVALID;
			break;
		}
	free(edits);
	return ret;
}
