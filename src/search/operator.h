/*
 * operator.h - the built-in design-space operator: mutate a directive's
 * dimensions and knobs within the design space and cross two directives over.
 *
 * Every child it returns passes cuco_directive_validate() against the design
 * space (and the hardware facts when given), is canonical for the template
 * (genes the template ignores under the child's placement, another
 * dimension's value or a knob's value hold their canonical values; frozen
 * genes excepted) and differs from its parent(s).
 * Children are realised (program/realize.h) either from a program template
 * (share/realize/<workload>.cu.in, placeholders {{...}}) or, without a
 * template, from the fast-path seed by rewriting its directive line and its
 * CUCO_SEED_<KNOB> defines; in that mode only the knobs the seed exposes may
 * change.
 */
#ifndef CUCO_SEARCH_OPERATOR_H
#define CUCO_SEARCH_OPERATOR_H

#include "program/directive.h"
#include "program/realize.h"
#include "search/rng.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CUCO_BIAS_MAX_VALUES 16 /* remembered values per dimension or knob */

/* Preference of one knob's values, from the meta-summary. */
struct cuco_knob_bias {
	char name[CUCO_NAME_MAX];
	int n;
	long long values[CUCO_BIAS_MAX_VALUES];
	double weight[CUCO_BIAS_MAX_VALUES]; /* smoothed mean fitness of the value */
};

/*
 * How to bias value choices (exploitation). dim[d][v] weighs value v (index
 * into the design space's values of dimension d); 0 means "no data" and is
 * replaced by the dimension's mean weight. Plain data; zeroed = no bias.
 */
struct cuco_bias {
	int active;
	double dim[CUCO_NDIMS][CUCO_BIAS_MAX_VALUES];
	int nknobs;
	struct cuco_knob_bias knob[CUCO_DIRECTIVE_MAX_KNOBS];
};

/* Everything a mutation or crossover needs. Borrowed pointers. */
struct cuco_op_ctx {
	const struct cuco_design_space *ds;
	const struct cuco_hw_facts *facts; /* NULL: check the design space only */
	const struct cuco_genes *genes;
	const struct cuco_bias *bias; /* NULL or !active: uniform choices */
};

/* Every dimension and every knob of ds may change. */
void cuco_genes_all(struct cuco_genes *g, const struct cuco_design_space *ds);

/* Dimensions frozen, only the named knobs (nknobs of them) may change. */
void cuco_genes_knobs_only(struct cuco_genes *g, const char *const *knobs, int nknobs);

/*
 * Set d's genes that the template ignores under d's placement, dimension
 * values or knob values (op->ds->inert, from the template's cuco-realizes line;
 * knob conditions after the others) to their canonical values, but only the
 * genes op->genes lets change. Returns the number of genes changed.
 */
int cuco_operator_canonicalize(const struct cuco_op_ctx *op, struct cuco_directive *d);

/*
 * Child = parent with nchanges (>= 1) genes changed to other allowed values.
 * inspiration (may be NULL) lends its value to a changed gene now and then;
 * op->bias, when active, makes better-scoring values likelier. Tries random
 * changes; each try is canonicalised (cuco_operator_canonicalize()) and kept
 * once it validates and differs from the canonicalised parent, so a change
 * to genes the template ignores alone is never a child. Returns
 * CUCO_OK with *child filled (release it), or CUCO_ERR_NOT_FOUND when no valid
 * different child exists (e.g. nothing may change); *child is then released.
 */
int cuco_operator_mutate(const struct cuco_op_ctx *op, const struct cuco_directive *parent,
                         const struct cuco_directive *inspiration, int nchanges,
                         struct cuco_rng *rng, struct cuco_directive *child, struct cuco_err *err);

/*
 * Child takes each changeable dimension and knob from a or b at random (the
 * rest from a). Tries until the child, canonicalised, validates and differs
 * from both (canonicalised).
 * Returns CUCO_OK, or CUCO_ERR_NOT_FOUND when a and b give no such child;
 * ownership as for cuco_operator_mutate().
 */
int cuco_operator_crossover(const struct cuco_op_ctx *op, const struct cuco_directive *a,
                            const struct cuco_directive *b, struct cuco_rng *rng,
                            struct cuco_directive *child, struct cuco_err *err);

#endif
