/* reply_rewrite.c - a rewrite or crossover reply: new EVOLVE-BLOCK contents, or the whole file. */
#include "llm/reply_internal.h"

#include <stdlib.h>

#include "program/blocks.h"
#include "program/directive.h"

int cuco_reply_rewrite(const char *file, const char *parent, const struct lines *L,
                       struct cuco_strbuf *text, int *nedits, struct cuco_strbuf *why)
{
	struct range r[CUCO_BLOCKS_MAX];
	struct fence *f = NULL;
	struct cuco_strbuf cand = CUCO_STRBUF_INIT;
	struct cuco_err e;
	char *pline = NULL;
	int nf, nb, i, per_block = 1, ret = -1;

	if (cuco_reply_block_ranges(file, parent, r, &nb, why))
		goto out;
	if (nb == 0) {
		cuco_strbuf_addf(why, "%s has no EVOLVE-BLOCKs, so nothing may be rewritten", file);
		goto out;
	}
	if (cuco_reply_collect_fences(L, &f, &nf, why))
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
		cuco_reply_tidy_part(b);
		if (f[i].nmarkers == 2 && b->n >= 2 && cuco_reply_is_evolve_marker(&b->v[0]) &&
		    cuco_reply_is_evolve_marker(&b->v[b->n - 1]) && nf == nb) {
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
		cuco_reply_add_lines(&cand, &f[0].body);
		/* the stated directive goes in later; compare the rest with the parent's */
		pline = cuco_reply_get_directive_line(parent);
		if (pline) {
			if (cuco_directive_find_line(cand.buf) > 0)
				cuco_reply_set_directive_line(&cand, pline);
			else if (cuco_directive_find_line(parent) == 1)
				cuco_reply_set_directive_line(&cand, pline);
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
		cuco_reply_tidy_part(&f[i].body);
		cuco_reply_add_lines(&cand, &f[i].body);
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
