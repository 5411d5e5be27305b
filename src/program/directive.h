/*
 * directive.h - the cuco-directive line of a device-side program: find,
 * parse, validate against the design space, compare and write it.
 *
 * Every device-side program opens (before any code; only comments and blank
 * lines may come first) with one line
 *
 *   // cuco-directive: {"backend":"lsa","placement":"sequential","sync_scope":"grid",
 *                       "issuer":"cta","granularity":"whole","knobs":{"comm_ctas":32}}
 *
 * (on one line) that says which point of the design space it implements. The
 * dimensions, their values, the knobs and the constraints between them are
 * data: share/design_space.json (program/design_space.h). Errors read `file:line:column: field:
 * message`, with the column of the offending value on the directive line.
 */
#ifndef CUCO_DIRECTIVE_H
#define CUCO_DIRECTIVE_H

#include "program/design_space.h"
#include "util/error.h"

#define CUCO_DIRECTIVE_MAX_KNOBS 24          /* knob settings in one directive */
#define CUCO_DIRECTIVE_TAG "cuco-directive:" /* follows "//" on the directive line */

/* One knob setting of a directive. */
struct cuco_directive_knob {
	char name[CUCO_NAME_MAX];
	long long value; /* bools are 0 or 1 */
	int is_bool;     /* written as true/false in the directive */
	int col;         /* column of the value on the directive line, 0 when unknown */
};

/*
 * A parsed directive. Caller-owned: cuco_directive_init() or a successful
 * parse fills it, cuco_directive_release() frees file.
 */
struct cuco_directive {
	char *file; /* program file name for messages (malloc'd; may be NULL) */
	int line;   /* line of the directive in the program, 0 when built in code */
	char dims[CUCO_NDIMS][CUCO_NAME_MAX]; /* value of each enum cuco_dimension */
	int dim_col[CUCO_NDIMS];              /* column of each value, 0 when unknown */
	int nknobs;
	struct cuco_directive_knob knobs[CUCO_DIRECTIVE_MAX_KNOBS];
};

/* Which genes of a directive may change: dimensions and named knobs. Plain data. */
struct cuco_genes {
	int dims[CUCO_NDIMS]; /* 1: the dimension may change */
	int nknobs;
	char knobs[CUCO_DIRECTIVE_MAX_KNOBS][CUCO_NAME_MAX]; /* knobs that may change */
};

/*
 * 1-based line of the first line of src that is a directive line (leading
 * whitespace, "//", optional blanks, "cuco-directive"), wherever it is; 0
 * when there is none.
 */
int cuco_directive_find_line(const char *src);

/* Empty directive (no values, no knobs, no file). */
void cuco_directive_init(struct cuco_directive *d);

/*
 * Find the directive in a program's source text and parse it into *out
 * (which need not be initialised). Checks the syntax and structure only:
 * the JSON, the five dimensions present as strings, knobs as integers or
 * booleans; values are checked by cuco_directive_validate(). Returns
 * CUCO_OK, or CUCO_ERR_PARSE with `file:line:column: field: message` in err
 * for: no directive, a directive after code, two directives, bad JSON, an
 * unknown or missing dimension, a bad knob. On failure *out is released.
 */
int cuco_directive_parse(const char *file_name, const char *source_text, struct cuco_directive *out,
                         struct cuco_err *err);

/*
 * Check d against the design space: every value allowed, every knob known
 * and in range, every constraint met; with facts (NULL skips them) also the
 * hardware requirements and fact-bounded knobs. Returns CUCO_OK,
 * CUCO_ERR_INVALID (not in the design space) or CUCO_ERR_UNSUPPORTED (valid,
 * but this machine cannot run it), with the first problem in err.
 */
int cuco_directive_validate(const struct cuco_directive *d, const struct cuco_design_space *ds,
                            const struct cuco_hw_facts *facts, struct cuco_err *err);

/* A knob's value, or dflt when the directive does not set it. */
long long cuco_directive_knob(const struct cuco_directive *d, const char *name, long long dflt);

/*
 * Set (or add) a knob. Returns CUCO_OK, or CUCO_ERR_INVALID when the name is
 * too long or there are already CUCO_DIRECTIVE_MAX_KNOBS knobs.
 */
int cuco_directive_set_knob(struct cuco_directive *d, const char *name, long long value,
                            int is_bool);

/*
 * The directive as canonical JSON: the five dimensions in enum order, then
 * "knobs" with names sorted, compact. The same directive always gives the
 * same bytes (the store keys on them). malloc'd; NULL only if out of memory.
 */
char *cuco_directive_to_json(const struct cuco_directive *d);

/* "// cuco-directive: <canonical JSON>" without a newline; malloc'd, NULL if out of memory. */
char *cuco_directive_to_line(const struct cuco_directive *d);

/*
 * Set one inert gene of d to its canonical value when d meets in's condition:
 * d's dimension in->when_dim has the value in->when_value or, for a knob
 * condition (when_dim -1), d sets knob in->when_knob to in->when_knob_value (a
 * directive without that knob does not meet it). A knob that d lacks is added
 * only when d already sets some knob (a directive completed for a template); a
 * directive without knobs stays without. Returns 1 when d changed, else 0.
 */
int cuco_directive_apply_inert(struct cuco_directive *d, const struct cuco_ds_inert *in);

/*
 * Canonicalise d for the template that narrowed ds: every inert gene whose
 * condition d meets (ds->inert) set as cuco_directive_apply_inert() does, so that
 * directives that realise the same program are equal. The entries conditioned
 * on a placement or dimension=value are applied first, then those conditioned
 * on knob=value (each group in line order), so a knob condition sees the knob
 * as the other entries leave it, whatever the order of the line's JSON keys.
 * Returns the number of genes changed. The result is not re-validated.
 */
int cuco_directive_canonicalize(struct cuco_directive *d, const struct cuco_design_space *ds);

/* Free what d owns and re-initialise it. */

/* Free what d owns and re-initialise it. */
void cuco_directive_release(struct cuco_directive *d);

/* Copy a directive without its file name (dst need not be initialised; release it later). */
void cuco_directive_copy(struct cuco_directive *dst, const struct cuco_directive *src);

/* 1 when a and b name the same design point (same values, same knob settings). */
int cuco_directive_equal(const struct cuco_directive *a, const struct cuco_directive *b);

/*
 * Parse canonical directive JSON (as stored in programs.directive) into *out.
 * Returns CUCO_OK or CUCO_ERR_PARSE with err set; *out is released on failure.
 */
int cuco_directive_from_json(const char *json, struct cuco_directive *out, struct cuco_err *err);

/* Genes (dimensions and knob settings) in which two directives differ. */
int cuco_directive_distance(const struct cuco_directive *a, const struct cuco_directive *b);

#endif
