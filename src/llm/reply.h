/*
 * reply.h - turn a model's reply into a candidate program: the directive it
 * states first, then its code as SEARCH/REPLACE edits (diff) or new
 * EVOLVE-BLOCK contents (full rewrite, crossover), applied to the parent only
 * inside EVOLVE-BLOCKs. Every rejection comes with a reason fit for storing.
 *
 * Reply format (docs/llm.md): the directive first, as a line
 *     // cuco-directive: {"backend":"lsa",...}
 * or a ```json fenced object (the directive itself or {"directive": {...}}),
 * then the code:
 *   diff      one or more blocks  <<<<<<< SEARCH / ...old lines... / ======= /
 *             ...new lines... / >>>>>>> REPLACE  (5 to 9 marker characters;
 *             code fences around or inside the blocks are ignored);
 *   rewrite,  one fenced code block per EVOLVE-BLOCK of the parent, in order
 *   crossover (the new contents; echoed markers are dropped), or one fenced
 *             block with the whole file whose text outside the blocks equals
 *             the parent's (its directive line is replaced by the stated one).
 * CRLF and trailing blanks in the reply are tolerated; a SEARCH text that is
 * not found exactly is retried ignoring trailing whitespace, then with all
 * runs of whitespace collapsed (noted in notes).
 */
#ifndef CUCO_LLM_REPLY_H
#define CUCO_LLM_REPLY_H

#include "llm/reply_check.h"
#include "program/directive.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Mutation kinds an LLM operator asks for. */
enum cuco_llm_mode {
	CUCO_LLM_MODE_DIFF = 1,      /* SEARCH/REPLACE blocks */
	CUCO_LLM_MODE_REWRITE = 2,   /* new contents of every EVOLVE-BLOCK */
	CUCO_LLM_MODE_CROSSOVER = 3, /* a rewrite of the first parent informed by a second */
};

/* "diff", "rewrite", "crossover"; NULL when out of range. */
const char *cuco_llm_mode_name(int mode);

/* The mode called name into *mode. CUCO_OK or CUCO_ERR_INVALID. */
int cuco_llm_mode_parse(const char *name, int *mode, struct cuco_err *err);

/*
 * The outcome of applying one reply. Caller-owned: cuco_llm_edit_init()
 * before, cuco_llm_edit_release() after. Strings are malloc'd or NULL.
 */
struct cuco_llm_edit {
	char *code;                      /* the candidate program; NULL when rejected */
	struct cuco_directive directive; /* the stated directive (empty when none was found) */
	char *directive_json;            /* canonical JSON of it; NULL when none */
	int nedits;   /* SEARCH/REPLACE blocks applied, or EVOLVE-BLOCKs rewritten */
	int nfuzzy;   /* edits found only after whitespace normalisation */
	char *notes;  /* how edits were matched, one per line; "" when all exact */
	char *reason; /* why the reply was rejected; NULL when accepted */
	char *flags;  /* where the code contradicts its directive, one per line; NULL if none */
};

/* Empty outcome. */
void cuco_llm_edit_init(struct cuco_llm_edit *e);

/* Free what e owns and re-init it. NULL is allowed. */
void cuco_llm_edit_release(struct cuco_llm_edit *e);

/*
 * Apply reply (mode: enum cuco_llm_mode) to parent, the program text named
 * file in messages, and fill *out (released first). The directive is parsed
 * and, with ds non-NULL, validated (facts may be NULL: see
 * cuco_directive_validate()); it replaces the parent's directive line. The
 * result must pass cuco_blocks_check_edit() against the parent; line endings
 * follow the parent's. Code that contradicts the directive is accepted with
 * out->flags set; code that uses multicast is refused. Returns CUCO_OK, or
 * with out->reason and err set to the same message:
 *   CUCO_ERR_PARSE    - no directive, directive after the code, bad
 *                       directive JSON, no edits, unterminated blocks or
 *                       fences (a truncated reply);
 *   CUCO_ERR_INVALID  - directive outside the design space, SEARCH text not
 *                       found or ambiguous, an edit outside the
 *                       EVOLVE-BLOCKs, lost or added markers, a block count
 *                       that does not match the parent, multicast;
 *   CUCO_ERR_UNSUPPORTED - valid directive this machine cannot run.
 */
int cuco_llm_reply_apply(const char *file, const char *parent, const char *reply, int mode,
                         const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                         struct cuco_llm_edit *out, struct cuco_err *err);

/*
 * Apply a reply that is a whole program (the fast-path agent's whole-file
 * rewrite): the directive first (required when need_directive; validated
 * against ds when ds is non-NULL), then the complete program in one fenced
 * code block (when several code blocks come, the longest is taken and noted
 * in out->notes). A stated directive replaces the program's directive line
 * (or is put on top). Fills out->code (LF endings), out->directive,
 * out->directive_json and out->flags (contradictions, as for
 * cuco_llm_reply_apply()); EVOLVE-BLOCK markers are left to the caller to
 * check. Returns CUCO_OK, or with out->reason and err set alike:
 *   CUCO_ERR_PARSE   - no directive (when needed), directive after the
 *                      code, bad directive JSON, no code block, an
 *                      unclosed fence (a truncated reply);
 *   CUCO_ERR_INVALID - directive outside the design space, multicast;
 *   CUCO_ERR_UNSUPPORTED - valid directive this machine cannot run.
 */
int cuco_llm_reply_program(const char *reply, int need_directive,
                           const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                           struct cuco_llm_edit *out, struct cuco_err *err);

/*
 * Find the directive a reply states and parse it (syntax only) into *d
 * (released on failure). *pos (may be NULL) gets its byte offset in the
 * reply. Returns CUCO_OK, CUCO_ERR_NOT_FOUND (none) or CUCO_ERR_PARSE.
 */
int cuco_llm_reply_directive(const char *reply, struct cuco_directive *d, size_t *pos,
                             struct cuco_err *err);

#endif
