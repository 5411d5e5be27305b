/*
 * operator.c - the built-in design-space operator: mutation, crossover and
 * realisation of directives (see operator.h).
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

void cuco_directive_copy(struct cuco_directive *dst, const struct cuco_directive *src)
{
	*dst = *src;
	dst->file = NULL;
	dst->line = 0;
	memset(dst->dim_col, 0, sizeof(dst->dim_col));
	for (int i = 0; i < dst->nknobs; i++)
		dst->knobs[i].col = 0;
}

int cuco_directive_equal(const struct cuco_directive *a, const struct cuco_directive *b)
{
	if (a->nknobs != b->nknobs)
		return 0;
	for (int d = 0; d < CUCO_NDIMS; d++)
		if (strcmp(a->dims[d], b->dims[d]))
			return 0;
	for (int i = 0; i < a->nknobs; i++) {
		int found = 0;
		for (int j = 0; j < b->nknobs && !found; j++)
			found = !strcmp(a->knobs[i].name, b->knobs[j].name) &&
			        a->knobs[i].value == b->knobs[j].value &&
			        a->knobs[i].is_bool == b->knobs[j].is_bool;
		if (!found)
			return 0;
	}
	return 1;
}

int cuco_directive_from_json(const char *json, struct cuco_directive *out, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int rc;

	cuco_strbuf_adds(&sb, "// " CUCO_DIRECTIVE_TAG " ");
	for (const char *p = json; *p; p++)
		cuco_strbuf_addch(&sb, *p == '\n' || *p == '\r' ? ' ' : *p);
	cuco_strbuf_addch(&sb, '\n');
	rc = cuco_directive_parse("directive", sb.buf, out, err);
	if (rc == CUCO_OK) {
		free(out->file);
		out->file = NULL;
	}
	cuco_strbuf_release(&sb);
	return rc;
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

/* ---- realisation ---- */

/* One {{NAME[:default]}} placeholder found at text[at]. */
struct placeholder {
	size_t at, len; /* the whole "{{...}}" */
	char name[CUCO_NAME_MAX];
	char dflt[64];
	int has_dflt;
	int line;
};

/* Parse the placeholder starting at s ("{{"); 0 ok, -1 malformed. */
static int parse_placeholder(const char *s, struct placeholder *ph)
{
	const char *p = s + 2, *end = strstr(p, "}}"), *nl = strchr(p, '\n');
	size_t n = 0;

	if (!end || (nl && nl < end))
		return -1;
	while (p < end && (isalnum((unsigned char)*p) || *p == '_')) {
		if (n + 1 >= sizeof(ph->name))
			return -1;
		ph->name[n++] = *p++;
	}
	ph->name[n] = '\0';
	if (!n)
		return -1;
	ph->has_dflt = 0;
	ph->dflt[0] = '\0';
	if (*p == ':') {
		size_t dl = (size_t)(end - p - 1);
		if (dl >= sizeof(ph->dflt))
			return -1;
		memcpy(ph->dflt, p + 1, dl);
		ph->dflt[dl] = '\0';
		ph->has_dflt = 1;
	} else if (p != end) {
		return -1;
	}
	ph->len = (size_t)(end + 2 - s);
	return 0;
}

static int is_upper_name(const char *s)
{
	for (; *s; s++)
		if (islower((unsigned char)*s))
			return 0;
	return 1;
}

static int name_ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

static int dim_of(const char *name)
{
	for (int d = 0; d < CUCO_NDIMS; d++)
		if (name_ieq(name, cuco_dimension_name(d)))
			return d;
	return -1;
}

/* The directive's knob whose name matches in any case, or NULL. */
static const struct cuco_directive_knob *knob_ieq(const struct cuco_directive *d, const char *name)
{
	for (int i = 0; i < d->nknobs; i++)
		if (name_ieq(d->knobs[i].name, name))
			return &d->knobs[i];
	return NULL;
}

int cuco_realize_template(const char *template_name, const char *template_text,
                          const struct cuco_directive *d, struct cuco_strbuf *out,
                          struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char *line = cuco_directive_to_line(d), *json = cuco_directive_to_json(d);
	const char *p = template_text;
	int lineno = 1, rc = CUCO_OK;

	if (!line || !json) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (!strstr(template_text, "{{DIRECTIVE}}")) {
		cuco_strbuf_adds(&sb, line);
		cuco_strbuf_addch(&sb, '\n');
	}
	while (*p) {
		struct placeholder ph;
		const struct cuco_directive_knob *k;
		int dim;

		if (p[0] != '{' || p[1] != '{') {
			lineno += *p == '\n';
			cuco_strbuf_addch(&sb, *p++);
			continue;
		}
		if (parse_placeholder(p, &ph)) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID,
			                  "%s:%d: malformed placeholder (expected {{NAME}} or "
			                  "{{NAME:default}} on one line)",
			                  template_name, lineno);
			goto out;
		}
		dim = dim_of(ph.name);
		if (!strcmp(ph.name, "DIRECTIVE")) {
			cuco_strbuf_adds(&sb, line);
		} else if (!strcmp(ph.name, "DIRECTIVE_JSON")) {
			cuco_strbuf_adds(&sb, json);
		} else if (dim >= 0) {
			for (const char *v = d->dims[dim]; *v; v++)
				cuco_strbuf_addch(
				    &sb, is_upper_name(ph.name) ? toupper((unsigned char)*v) : *v);
		} else if ((k = knob_ieq(d, ph.name))) {
			cuco_strbuf_addf(&sb, "%lld", k->value);
		} else if (ph.has_dflt) {
			cuco_strbuf_adds(&sb, ph.dflt);
		} else {
			rc = cuco_err_set(err, CUCO_ERR_INVALID,
			                  "%s:%d: {{%s}}: the directive sets no such dimension or "
			                  "knob and the placeholder has no default ({{%s:VALUE}})",
			                  template_name, lineno, ph.name, ph.name);
			goto out;
		}
		p += ph.len;
	}
	cuco_strbuf_add(out, sb.buf, sb.len);
out:
	free(line);
	free(json);
	cuco_strbuf_release(&sb);
	return rc;
}

/* A sensible starting value for a knob a template needs but a directive lacks. */
static long long knob_default(const struct cuco_ds_knob *spec)
{
	static const struct {
		const char *name;
		long long v;
	} table[] = {{"comm_ctas", 32}, {"threads", 512}, {"chunks", 4},  {"tile_m", 128},
	             {"tile_n", 256},   {"stages", 2},    {"streams", 2}, {"sm_split", 0}};
	long long v = spec->min;

	if (spec->type == CUCO_KNOB_BOOL)
		return 0;
	if (spec->type == CUCO_KNOB_ENUM)
		v = spec->nvalues ? spec->values[0] : 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, spec->name))
			v = table[i].v;
	if (spec->type == CUCO_KNOB_ENUM) {
		for (int i = 0; i < spec->nvalues; i++)
			if (spec->values[i] == v)
				return v;
		return spec->nvalues ? spec->values[0] : 0;
	}
	return knob_snap(v, spec->min, spec->max, spec->multiple_of);
}

int cuco_realize_template_knobs(const char *template_text, const struct cuco_design_space *ds,
                                struct cuco_genes *g, struct cuco_directive *d,
                                struct cuco_err *err)
{
	for (const char *p = strstr(template_text, "{{"); p; p = strstr(p + 2, "{{")) {
		struct placeholder ph;
		const struct cuco_ds_knob *spec = NULL;
		int known = 0;

		if (parse_placeholder(p, &ph) || !strcmp(ph.name, "DIRECTIVE") ||
		    !strcmp(ph.name, "DIRECTIVE_JSON") || dim_of(ph.name) >= 0)
			continue;
		for (int k = 0; k < ds->nknobs; k++)
			if (name_ieq(ds->knobs[k].name, ph.name))
				spec = &ds->knobs[k];
		if (!spec)
			return cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    "template placeholder {{%s}} is neither a dimension nor a "
			    "knob of the design space",
			    ph.name);
		for (int k = 0; k < g->nknobs; k++)
			known |= !strcmp(g->knobs[k], spec->name);
		if (!known) {
			if (g->nknobs == CUCO_DIRECTIVE_MAX_KNOBS)
				return cuco_err_set(err, CUCO_ERR_INVALID,
				                    "template uses too many knobs");
			snprintf(g->knobs[g->nknobs++], CUCO_NAME_MAX, "%s", spec->name);
		}
		if (d && !knob_ieq(d, spec->name)) {
			long long v = knob_default(spec);
			char *end;
			if (ph.has_dflt) {
				errno = 0;
				v = strtoll(ph.dflt, &end, 10);
				if (errno || *end || end == ph.dflt)
					v = knob_default(spec);
			}
			if (cuco_directive_set_knob(d, spec->name, v, spec->type == CUCO_KNOB_BOOL))
				return cuco_err_set(err, CUCO_ERR_INVALID,
				                    "directive has too many knobs");
		}
	}
	return CUCO_OK;
}

/* If line [s, e) is "#define CUCO_SEED_<NAME> ...", put the lower-case NAME in name. */
static int seed_define(const char *s, const char *e, char name[CUCO_NAME_MAX])
{
	static const char pfx[] = "#define CUCO_SEED_";
	size_t n = 0;

	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(e - s) < sizeof(pfx) || strncmp(s, pfx, sizeof(pfx) - 1))
		return 0;
	s += sizeof(pfx) - 1;
	while (s < e && (isalnum((unsigned char)*s) || *s == '_') && n + 1 < CUCO_NAME_MAX)
		name[n++] = (char)tolower((unsigned char)*s++);
	name[n] = '\0';
	return n > 0 && s < e && (*s == ' ' || *s == '\t');
}

int cuco_realize_seed(const char *seed_code, const struct cuco_directive *d,
                      struct cuco_strbuf *out, struct cuco_err *err)
{
	int dline = cuco_directive_find_line(seed_code), lineno = 0;
	char *line = NULL;
	const char *p = seed_code;
	int rc = CUCO_OK;

	if (!dline)
		return cuco_err_set(err, CUCO_ERR_PARSE, "the seed has no cuco-directive line");
	line = cuco_directive_to_line(d);
	if (!line)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	while (*p) {
		const char *e = strchr(p, '\n');
		char name[CUCO_NAME_MAX];
		const struct cuco_directive_knob *k;

		if (!e)
			e = p + strlen(p);
		lineno++;
		if (lineno == dline) {
			cuco_strbuf_adds(out, line);
		} else if (seed_define(p, e, name) && (k = knob_ieq(d, name))) {
			cuco_strbuf_add(out, p, (size_t)(strstr(p, "CUCO_SEED_") - p));
			cuco_strbuf_adds(out, "CUCO_SEED_");
			for (const char *c = name; *c; c++)
				cuco_strbuf_addch(out, toupper((unsigned char)*c));
			cuco_strbuf_addf(out, " %lld", k->value);
		} else {
			cuco_strbuf_add(out, p, (size_t)(e - p));
		}
		if (!*e)
			break;
		cuco_strbuf_addch(out, '\n');
		p = e + 1;
	}
	free(line);
	return rc;
}

void cuco_realize_seed_knobs(const char *seed_code, const struct cuco_design_space *ds,
                             char names[][CUCO_NAME_MAX], int max, int *n)
{
	const char *p = seed_code;

	*n = 0;
	while (*p && *n < max) {
		const char *e = strchr(p, '\n');
		char name[CUCO_NAME_MAX];

		if (!e)
			e = p + strlen(p);
		if (seed_define(p, e, name) && cuco_design_space_knob(ds, name)) {
			int dup = 0;
			for (int i = 0; i < *n; i++)
				dup |= !strcmp(names[i], name);
			if (!dup)
				snprintf(names[(*n)++], CUCO_NAME_MAX, "%s", name);
		}
		if (!*e)
			break;
		p = e + 1;
	}
}
