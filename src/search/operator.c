/*
 * operator.c - the built-in design-space operator: mutation and crossover of
 * directives (see operator.h).
 */
#include "search/operator.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_ATTEMPTS 256    /* random tries before giving up on a valid, different child */
#define INSPIRE_PROB 0.3   /* chance a changed gene copies the inspiration's value */
#define WAKE_PROB 0.5      /* chance a gene the change made live gets a fresh value */
#define KNOB_BIAS_PROB 0.5 /* chance a knob change draws from the summary's good values */

/* One changeable gene: a dimension (knob == NULL) or a knob. */
struct gene {
	int dim;
	const struct cuco_ds_knob *knob;
};

void cuco_genes_all(struct cuco_genes *g, const struct cuco_design_space *ds)
{
	memset(g, 0, sizeof(*g));
	for (int d = 0; d < CUCO_NDIMS; d++)
		g->dims[d] = 1;
	for (int k = 0; k < ds->nknobs && g->nknobs < CUCO_DIRECTIVE_MAX_KNOBS; k++)
		snprintf(g->knobs[g->nknobs++], CUCO_NAME_MAX, "%s", ds->knobs[k].name);
}

void cuco_genes_knobs_only(struct cuco_genes *g, const char *const *knobs, int nknobs)
{
	memset(g, 0, sizeof(*g));
	for (int k = 0; k < nknobs && g->nknobs < CUCO_DIRECTIVE_MAX_KNOBS; k++)
		snprintf(g->knobs[g->nknobs++], CUCO_NAME_MAX, "%s", knobs[k]);
}

static int list_genes(const struct cuco_op_ctx *op, struct gene *genes, double *w)
{
	int n = 0;

	for (int d = 0; d < CUCO_NDIMS; d++)
		if (op->genes->dims[d] && op->ds->dims[d].nvalues > 1) {
			genes[n].dim = d;
			genes[n].knob = NULL;
			w[n++] = 2.0; /* design choices matter more than tuning */
		}
	for (int k = 0; k < op->genes->nknobs; k++) {
		const struct cuco_ds_knob *spec =
		    cuco_design_space_knob(op->ds, op->genes->knobs[k]);
		if (!spec)
			continue;
		genes[n].dim = -1;
		genes[n].knob = spec;
		w[n++] = 1.0;
	}
	return n;
}

/* Value index of dimension d in ds, or -1. */
static int value_index(const struct cuco_ds_dimension *dim, const char *v)
{
	for (int i = 0; i < dim->nvalues; i++)
		if (!strcmp(dim->values[i].name, v))
			return i;
	return -1;
}

static void mutate_dim(const struct cuco_op_ctx *op, int d, struct cuco_directive *c,
                       const struct cuco_directive *insp, struct cuco_rng *rng)
{
	const struct cuco_ds_dimension *dim = &op->ds->dims[d];
	double w[CUCO_BIAS_MAX_VALUES] = {0}, mean = 0;
	int cur = value_index(dim, c->dims[d]), nv = dim->nvalues, nknown = 0, pick;

	if (nv > CUCO_BIAS_MAX_VALUES)
		nv = CUCO_BIAS_MAX_VALUES;
	if (insp && strcmp(insp->dims[d], c->dims[d]) && cuco_rng_unit(rng) < INSPIRE_PROB) {
		snprintf(c->dims[d], CUCO_NAME_MAX, "%s", insp->dims[d]);
		return;
	}
	if (op->bias && op->bias->active) {
		for (int v = 0; v < nv; v++)
			if (op->bias->dim[d][v] > 0) {
				mean += op->bias->dim[d][v];
				nknown++;
			}
		mean = nknown ? mean / nknown : 1.0;
		for (int v = 0; v < nv; v++)
			w[v] = op->bias->dim[d][v] > 0 ? op->bias->dim[d][v] : mean;
	} else {
		for (int v = 0; v < nv; v++)
			w[v] = 1.0;
	}
	if (cur >= 0 && cur < nv)
		w[cur] = 0;
	pick = cuco_rng_weighted(rng, w, nv);
	if (pick >= 0)
		snprintf(c->dims[d], CUCO_NAME_MAX, "%s", dim->values[pick].name);
}

static long long knob_hi(const struct cuco_op_ctx *op, const struct cuco_ds_knob *spec)
{
	if (spec->max_fact && op->facts && op->facts->sm_count > 0 &&
	    op->facts->sm_count < spec->max)
		return op->facts->sm_count;
	return spec->max;
}

/* v moved onto the knob's grid: a multiple of multiple_of inside [lo, hi]. */
static long long knob_snap(long long v, long long lo, long long hi, long long m)
{
	if (m < 1)
		m = 1;
	v = v / m * m;
	if (v < lo)
		v = (lo + m - 1) / m * m;
	if (v > hi)
		v = hi / m * m;
	return v;
}

static int knob_in_range(const struct cuco_op_ctx *op, const struct cuco_ds_knob *spec, long long v)
{
	if (spec->type == CUCO_KNOB_BOOL)
		return v == 0 || v == 1;
	if (spec->type == CUCO_KNOB_ENUM) {
		for (int i = 0; i < spec->nvalues; i++)
			if (spec->values[i] == v)
				return 1;
		return 0;
	}
	return v >= spec->min && v <= knob_hi(op, spec) && v % spec->multiple_of == 0;
}

/* A value from the summary's good values of this knob, other than cur; 0 when none. */
static int knob_from_bias(const struct cuco_op_ctx *op, const struct cuco_ds_knob *spec, int has,
                          long long cur, struct cuco_rng *rng, long long *out)
{
	const struct cuco_knob_bias *kb = NULL;
	double w[CUCO_BIAS_MAX_VALUES];
	int pick;

	if (!op->bias || !op->bias->active)
		return 0;
	for (int i = 0; i < op->bias->nknobs; i++)
		if (!strcmp(op->bias->knob[i].name, spec->name))
			kb = &op->bias->knob[i];
	if (!kb)
		return 0;
	for (int i = 0; i < kb->n; i++)
		w[i] = (has && kb->values[i] == cur) || !knob_in_range(op, spec, kb->values[i])
		           ? 0
		           : kb->weight[i];
	pick = cuco_rng_weighted(rng, w, kb->n);
	if (pick < 0)
		return 0;
	*out = kb->values[pick];
	return 1;
}

static void mutate_knob(const struct cuco_op_ctx *op, const struct cuco_ds_knob *spec,
                        struct cuco_directive *c, const struct cuco_directive *insp,
                        struct cuco_rng *rng)
{
	long long cur = cuco_directive_knob(c, spec->name, -1), v = cur;
	long long lo = spec->min, hi = knob_hi(op, spec), m = spec->multiple_of;
	int has = cur != -1 || cuco_directive_knob(c, spec->name, -2) != -2;

	if (insp) {
		long long iv = cuco_directive_knob(insp, spec->name, -1);
		int ihas = iv != -1 || cuco_directive_knob(insp, spec->name, -2) != -2;
		if (ihas && (!has || iv != cur) && knob_in_range(op, spec, iv) &&
		    cuco_rng_unit(rng) < INSPIRE_PROB) {
			cuco_directive_set_knob(c, spec->name, iv, spec->type == CUCO_KNOB_BOOL);
			return;
		}
	}
	if (cuco_rng_unit(rng) < KNOB_BIAS_PROB && knob_from_bias(op, spec, has, cur, rng, &v)) {
		cuco_directive_set_knob(c, spec->name, v, spec->type == CUCO_KNOB_BOOL);
		return;
	}
	for (int tries = 0; tries < 8 && (!has || v == cur); tries++) {
		double r = cuco_rng_unit(rng);
		switch (spec->type) {
		case CUCO_KNOB_BOOL:
			v = has ? !cur : (long long)cuco_rng_below(rng, 2);
			break;
		case CUCO_KNOB_ENUM:
			v = spec->values[cuco_rng_below(rng, (uint64_t)spec->nvalues)];
			break;
		default:
			if (has && r < 0.4) /* scale: the natural move for counts and sizes */
				v = cuco_rng_below(rng, 2) ? cur * 2 : cur / 2;
			else if (has && r < 0.7) /* small step on the knob's grid */
				v = cur + (cuco_rng_below(rng, 2) ? 1 : -1) * m *
				              (long long)(1 + cuco_rng_below(rng, 2));
			else
				v = lo + (long long)cuco_rng_below(rng, (uint64_t)(hi - lo + 1));
			v = knob_snap(v, lo, hi, m);
			break;
		}
		if (!has)
			break;
	}
	cuco_directive_set_knob(c, spec->name, v, spec->type == CUCO_KNOB_BOOL);
}

static int valid(const struct cuco_op_ctx *op, const struct cuco_directive *d)
{
	struct cuco_err e;

	return cuco_directive_validate(d, op->ds, op->facts, &e) == CUCO_OK;
}

/* 1 when the gene called name (a dimension or a knob) may change. */
static int gene_free(const struct cuco_genes *g, int dim, const char *name)
{
	if (dim >= 0)
		return g->dims[dim];
	for (int k = 0; k < g->nknobs; k++)
		if (!strcmp(g->knobs[k], name))
			return 1;
	return 0;
}

/* 1 when an inert rule of op's space pins gene g (a dimension or a knob) under d as it is. */
static int gene_inert(const struct cuco_op_ctx *op, const struct cuco_directive *d,
                      const struct gene *g)
{
	for (int i = 0; i < op->ds->ninert; i++) {
		const struct cuco_ds_inert *in = &op->ds->inert[i];
		if (g->knob ? in->dim >= 0 || strcmp(in->name, g->knob->name) : in->dim != g->dim)
			continue;
		if (in->when_dim >= 0 && !strcmp(d->dims[in->when_dim], in->when_value))
			return 1;
		if (in->when_dim < 0 &&
		    cuco_directive_knob(d, in->when_knob, LLONG_MIN) == in->when_knob_value)
			return 1;
	}
	return 0;
}

/*
 * Genes that the parent left inert (their value only the canonical
 * placeholder) and the child's changes made live get a fresh value, each with
 * WAKE_PROB: a child that moves to fused_producer would otherwise always start
 * from its plainest corner (no tma_push, so no fused_sync). Rounds follow
 * cascades (tma_push woken to true wakes fused_sync). changed[g] marks genes
 * already changed; woken ones are marked too.
 */
static void wake_genes(const struct cuco_op_ctx *op, const struct cuco_directive *parent,
                       struct cuco_directive *child, const struct gene *genes, int ngenes,
                       int *changed, struct cuco_rng *rng)
{
	for (int round = 0; round < 3; round++) {
		int woke = 0;
		for (int g = 0; g < ngenes; g++) {
			if (changed[g] || !gene_inert(op, parent, &genes[g]) ||
			    gene_inert(op, child, &genes[g]))
				continue;
			changed[g] = 1;
			if (cuco_rng_unit(rng) >= WAKE_PROB)
				continue;
			if (genes[g].knob)
				mutate_knob(op, genes[g].knob, child, NULL, rng);
			else
				mutate_dim(op, genes[g].dim, child, NULL, rng);
			woke++;
		}
		if (!woke)
			break;
	}
}

int cuco_operator_canonicalize(const struct cuco_op_ctx *op, struct cuco_directive *d)
{
	int n = 0;

	/* in cuco_directive_canonicalize()'s order: dimension conditions, then knob conditions */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < op->ds->ninert; i++) {
			const struct cuco_ds_inert *in = &op->ds->inert[i];
			if ((in->when_dim < 0) == pass && gene_free(op->genes, in->dim, in->name))
				n += cuco_directive_apply_inert(d, in);
		}
	return n;
}

int cuco_operator_mutate(const struct cuco_op_ctx *op, const struct cuco_directive *parent,
                         const struct cuco_directive *inspiration, int nchanges,
                         struct cuco_rng *rng, struct cuco_directive *child, struct cuco_err *err)
{
	struct gene genes[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS];
	double w0[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS], w[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS];
	int ngenes = list_genes(op, genes, w0);
	struct cuco_directive canon;

	if (nchanges < 1)
		nchanges = 1;
	if (nchanges > ngenes)
		nchanges = ngenes;
	/* A child that differs only in genes the template ignores is the parent's program. */
	cuco_directive_copy(&canon, parent);
	cuco_operator_canonicalize(op, &canon);
	for (int attempt = 0; ngenes > 0 && attempt < OP_ATTEMPTS; attempt++) {
		int changed[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS] = {0};
		cuco_directive_copy(child, parent);
		memcpy(w, w0, sizeof(w));
		for (int c = 0; c < nchanges; c++) {
			int g = cuco_rng_weighted(rng, w, ngenes);
			if (g < 0)
				break;
			w[g] = 0; /* without replacement: nchanges distinct genes */
			changed[g] = 1;
			if (genes[g].knob)
				mutate_knob(op, genes[g].knob, child, inspiration, rng);
			else
				mutate_dim(op, genes[g].dim, child, inspiration, rng);
		}
		wake_genes(op, parent, child, genes, ngenes, changed, rng);
		cuco_operator_canonicalize(op, child);
		if (!cuco_directive_equal(child, &canon) && valid(op, child))
			return CUCO_OK;
	}
	cuco_directive_init(child);
	return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
	                    "no valid directive differs from the parent in %d change(s)", nchanges);
}

int cuco_operator_crossover(const struct cuco_op_ctx *op, const struct cuco_directive *a,
                            const struct cuco_directive *b, struct cuco_rng *rng,
                            struct cuco_directive *child, struct cuco_err *err)
{
	struct gene genes[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS];
	double w[CUCO_NDIMS + CUCO_DIRECTIVE_MAX_KNOBS];
	int ngenes = list_genes(op, genes, w);
	struct cuco_directive ca, cb;

	cuco_directive_copy(&ca, a);
	cuco_directive_copy(&cb, b);
	cuco_operator_canonicalize(op, &ca);
	cuco_operator_canonicalize(op, &cb);
	for (int attempt = 0; ngenes > 0 && attempt < OP_ATTEMPTS; attempt++) {
		cuco_directive_copy(child, a);
		for (int g = 0; g < ngenes; g++) {
			if (!cuco_rng_below(rng, 2))
				continue;
			if (!genes[g].knob) {
				snprintf(child->dims[genes[g].dim], CUCO_NAME_MAX, "%s",
				         b->dims[genes[g].dim]);
			} else {
				const char *name = genes[g].knob->name;
				long long bv = cuco_directive_knob(b, name, -1);
				int bhas = bv != -1 || cuco_directive_knob(b, name, -2) != -2;
				if (bhas)
					cuco_directive_set_knob(
					    child, name, bv, genes[g].knob->type == CUCO_KNOB_BOOL);
			}
		}
		cuco_operator_canonicalize(op, child);
		if (!cuco_directive_equal(child, &ca) && !cuco_directive_equal(child, &cb) &&
		    valid(op, child))
			return CUCO_OK;
	}
	cuco_directive_init(child);
	return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
	                    "crossover of these two directives gives no new valid directive");
}
