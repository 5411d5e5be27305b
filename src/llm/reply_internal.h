/*
 * reply_internal.h - what the reply parser's files share: a reply as lines,
 * the markers and fences found on them, and the two ways code comes (diff
 * edits, rewritten blocks). Not a public header: src/llm/reply*.c only.
 */
#ifndef CUCO_LLM_REPLY_INTERNAL_H
#define CUCO_LLM_REPLY_INTERNAL_H

#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

#define QUOTE_MAX 60 /* characters of a line quoted in a reason */

/* One line of an LF text: p[0..n) without the newline. */
struct line {
	const char *p;
	size_t n;
};

/* Lines of a text (or a part of them: v then points into another lines' array). */
struct lines {
	struct line *v;
	int n;
};

/* Content line range [lo, hi) (0-based) of each block of text. */
struct range {
	int lo, hi;
};

/* A code fence of a reply. */
struct fence {
	int open;          /* line index of the opening ``` */
	struct lines body; /* lines between the fences */
	int nmarkers;      /* EVOLVE markers inside */
};

/* ---- text (reply_text.c) ---- */

/*
 * Split an LF text into lines (pointing into s; the caller frees L->v); a final
 * line without newline counts, an empty tail does not.
 */
void cuco_reply_split_lines(const char *s, struct lines *L);
/* s with every CRLF (and lone CR) turned into LF, appended to out. */
void cuco_reply_to_lf(const char *s, struct cuco_strbuf *out);
/* Whether s's first line ends in CRLF. */
int cuco_reply_uses_crlf(const char *s);
/* LF text s with CRLF line ends, appended to out. */
void cuco_reply_to_crlf(const char *s, struct cuco_strbuf *out);
/* Trimmed bounds of a line. */
void cuco_reply_trim(const struct line *l, const char **b, const char **e);
int cuco_reply_is_blank_line(const struct line *l);
/* A line of 5..9 copies of c, then (when word is non-NULL) an optional blank and word. */
int cuco_reply_is_marker(const struct line *l, char c, const char *word);
#define IS_SEARCH(l) cuco_reply_is_marker((l), '<', "SEARCH")
#define IS_DIVIDER(l) cuco_reply_is_marker((l), '=', NULL)
#define IS_REPLACE(l) cuco_reply_is_marker((l), '>', "REPLACE")
/* A code fence line: ``` then an optional language tag, in *lang (may be empty; lang may be NULL).
 */
int cuco_reply_is_fence(const struct line *l, const char **lang, size_t *lang_len);
/* "// EVOLVE-BLOCK-START" or -END alone on the line (as program/blocks.h accepts them). */
int cuco_reply_is_evolve_marker(const struct line *l);
/* The JSON after "cuco-directive:" when l is a directive line ("//" optional), else NULL. */
const char *cuco_reply_directive_json_on(const struct line *l, size_t *len);
/* Whether a fence's language tag is json or jsonc. */
int cuco_reply_is_json_lang(const char *lang, size_t n);
/* l, trimmed and cut at QUOTE_MAX characters, in quotes. */
void cuco_reply_quote_line(struct cuco_strbuf *sb, const struct line *l);
/* Drop leading/trailing blank and fence lines of a part (models fence inside blocks). */
void cuco_reply_tidy_part(struct lines *p);
/* The content line range of each EVOLVE-BLOCK of text into r, *n of them; -1 with why. */
int cuco_reply_block_ranges(const char *file, const char *text, struct range *r, int *n,
                            struct cuco_strbuf *why);
/*
 * Code fences of L (json and directive-only fences left out) into *out (the
 * caller frees it), *nout of them; -1 with why when one is never closed.
 */
int cuco_reply_collect_fences(const struct lines *L, struct fence **out, int *nout,
                              struct cuco_strbuf *why);
/* The lines of p, each with its newline, appended to sb. */
void cuco_reply_add_lines(struct cuco_strbuf *sb, const struct lines *p);
/* Replace the directive line of LF text (or add one on top) with line. */
void cuco_reply_set_directive_line(struct cuco_strbuf *text, const char *line);
/* The directive line of LF text as a malloc'd string, or NULL. */
char *cuco_reply_get_directive_line(const char *text);

/* ---- the code (reply_edit.c, reply_rewrite.c; the checks: reply_check.h) ---- */

/*
 * Apply the SEARCH/REPLACE blocks of reply lines L to the LF text in *text (the
 * parent; replaced edit by edit). *nedits gets the number of blocks, *nfuzzy
 * those matched only after whitespace normalisation (how, in notes). Returns
 * CUCO_OK, CUCO_ERR_PARSE (malformed blocks) or CUCO_ERR_INVALID (an edit that
 * does not apply), with why.
 */
int cuco_reply_diff(const char *file, const struct lines *L, struct cuco_strbuf *text, int *nedits,
                    int *nfuzzy, struct cuco_strbuf *notes, struct cuco_strbuf *why);

/*
 * The new EVOLVE-BLOCK contents of reply lines L (one fence per block, or one
 * with the whole file) applied to the LF parent into *text; *nedits gets the
 * number of blocks. 0, or -1 with why.
 */
int cuco_reply_rewrite(const char *file, const char *parent, const struct lines *L,
                       struct cuco_strbuf *text, int *nedits, struct cuco_strbuf *why);

#endif
