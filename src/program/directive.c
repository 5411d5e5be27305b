/* directive.c - find, parse, validate, compare and write a program's cuco-directive. */
#include "program/directive.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/jsonpos.h"
#include "util/strbuf.h"

/* --- finding the directive line ------------------------------------------------ */

struct dscan {
	int first_code;     /* line of the first code, 0 when none */
	int ndirs;          /* directive lines seen */
	int line[2];        /* lines of the first two */
	const char *bol[2]; /* where those lines begin */
	const char *tag[2]; /* just past "cuco-directive" */
	const char *eol[2]; /* at the '\n' or the NUL that ends them */
};

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Classify every line: blank, comment (line or block) or code; note directive lines. */
static void scan_source(const char *src, struct dscan *sc)
{
	static const char tag[] = "cuco-directive";
	const char *p = src;
	int ln = 1, in_block = 0;

	memset(sc, 0, sizeof(*sc));
	while (*p) {
		const char *bol = p, *eol = strchr(p, '\n'), *q = p, *first;

		if (!eol)
			eol = p + strlen(p);
		while (q < eol && is_blank(*q))
			q++;
		first = q;
		while (q < eol) {
			if (in_block) {
				while (q + 1 < eol && !(q[0] == '*' && q[1] == '/'))
					q++;
				if (q + 1 >= eol)
					break;
				q += 2;
				in_block = 0;
			}
			while (q < eol && is_blank(*q))
				q++;
			if (q >= eol)
				break;
			if (q + 1 < eol && q[0] == '/' && q[1] == '/') {
				const char *t = q + 2;

				while (t < eol && is_blank(*t))
					t++;
				if (q == first && (size_t)(eol - t) >= sizeof(tag) - 1 &&
				    strncmp(t, tag, sizeof(tag) - 1) == 0) {
					if (sc->ndirs < 2) {
						sc->line[sc->ndirs] = ln;
						sc->bol[sc->ndirs] = bol;
						sc->tag[sc->ndirs] = t + sizeof(tag) - 1;
						sc->eol[sc->ndirs] = eol;
					}
					sc->ndirs++;
				}
				break;
			}
			if (q + 1 < eol && q[0] == '/' && q[1] == '*') {
				q += 2;
				in_block = 1;
				continue;
			}
			if (!sc->first_code)
				sc->first_code = ln;
			break;
		}
		p = *eol ? eol + 1 : eol;
		ln++;
	}
}

int cuco_directive_find_line(const char *src)
{
	struct dscan sc;

	scan_source(src, &sc);
	return sc.ndirs ? sc.line[0] : 0;
}

/* --- parsing --------------------------------------------------------------------- */

void cuco_directive_init(struct cuco_directive *d)
{
	memset(d, 0, sizeof(*d));
}

void cuco_directive_release(struct cuco_directive *d)
{
	if (!d)
		return;
	free(d->file);
	cuco_directive_init(d);
}

struct dparse {
	const char *file;
	int line;
	const char *json; /* the JSON text on the directive line */
	size_t len;
	int col0; /* column of json[0] minus 1 */
	struct cuco_err *err;
};

static int column_of(const struct dparse *P, const char *field, int key)
{
	const char *p = cuco_json_locate(P->json, P->len, field, key);

	if (!p)
		p = P->json;
	return P->col0 + (int)(p - P->json) + 1;
}

static int dp_fail(struct dparse *P, const char *field, int key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int dp_fail(struct dparse *P, const char *field, int key, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cuco_err_set(P->err, CUCO_ERR_PARSE, "%s:%d:%d: %s: %s", P->file, P->line,
	                    column_of(P, field, key), field, msg);
}

static int dp_type(struct dparse *P, const char *field, const char *expected, const json_t *v)
{
	struct cuco_strbuf got = CUCO_STRBUF_INIT;
	int rc;

	cuco_json_describe(&got, v);
	rc = dp_fail(P, field, 0, "expected %s, got %s", expected, got.buf);
	cuco_strbuf_release(&got);
	return rc;
}

static int parse_knobs(struct dparse *P, const json_t *knobs, struct cuco_directive *d)
{
	const char *name;
	json_t *v;

	if (!json_is_object(knobs))
		return dp_type(P, "knobs", "an object of knob settings", knobs);
	json_object_foreach((json_t *)knobs, name, v)
	{
		struct cuco_directive_knob *k = &d->knobs[d->nknobs];
		char field[128];

		snprintf(field, sizeof(field), "knobs.%s", name);
		if (!name[0] || strlen(name) >= CUCO_NAME_MAX)
			return dp_fail(P, field, 1, "knob names have 1 to %d characters",
			               CUCO_NAME_MAX - 1);
		if (d->nknobs == CUCO_DIRECTIVE_MAX_KNOBS)
			return dp_fail(P, field, 1, "more than %d knobs", CUCO_DIRECTIVE_MAX_KNOBS);
		if (!json_is_integer(v) && !json_is_boolean(v))
			return dp_type(P, field, "an integer or true/false", v);
		snprintf(k->name, sizeof(k->name), "%s", name);
		k->is_bool = json_is_boolean(v);
		k->value = k->is_bool ? json_is_true(v) : json_integer_value(v);
		k->col = column_of(P, field, 0);
		d->nknobs++;
	}
	return CUCO_OK;
}

static int parse_object(struct dparse *P, const json_t *root, struct cuco_directive *d)
{
	const char *cands[CUCO_NDIMS + 1];
	const char *key;
	json_t *v;
	int i, rc;

	for (i = 0; i < CUCO_NDIMS; i++)
		cands[i] = cuco_dimension_name(i);
	cands[CUCO_NDIMS] = "knobs";
	if (!json_is_object(root))
		return dp_type(P, "directive", "a JSON object", root);
	json_object_foreach((json_t *)root, key, v)
	{
		int dim = cuco_dimension_index(key);
		const char *hint;

		if (strcmp(key, "knobs") == 0) {
			rc = parse_knobs(P, v, d);
			if (rc)
				return rc;
			continue;
		}
		if (dim < 0) {
			hint = cuco_suggest(key, cands, CUCO_NDIMS + 1);
			if (hint)
				return dp_fail(P, key, 1,
				               "unknown dimension (did you mean \"%s\"?)", hint);
			return dp_fail(P, key, 1,
			               "unknown dimension; the dimensions are backend, placement, "
			               "sync_scope, issuer, granularity (and \"knobs\")");
		}
		if (!json_is_string(v))
			return dp_type(P, key, "a string", v);
		if (json_string_length(v) == 0 || json_string_length(v) >= CUCO_NAME_MAX)
			return dp_fail(P, key, 0, "values have 1 to %d characters",
			               CUCO_NAME_MAX - 1);
		snprintf(d->dims[dim], sizeof(d->dims[dim]), "%s", json_string_value(v));
		d->dim_col[dim] = column_of(P, key, 0);
	}
	for (i = 0; i < CUCO_NDIMS; i++)
		if (!d->dims[i][0])
			return dp_fail(P, cuco_dimension_name(i), 0,
			               "missing; a directive names all of backend, placement, "
			               "sync_scope, issuer and granularity");
	return CUCO_OK;
}

int cuco_directive_parse(const char *file_name, const char *source_text, struct cuco_directive *out,
                         struct cuco_err *err)
{
	struct dscan sc;
	struct dparse P;
	json_error_t jerr;
	json_t *root = NULL;
	const char *p, *end;
	int rc;

	cuco_directive_init(out);
	if (!file_name)
		file_name = "<program>";
	scan_source(source_text, &sc);
	if (sc.ndirs == 0)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:1:1: directive: no cuco-directive line; a device-side "
		                    "program begins with `// cuco-directive: {\"backend\":...}` "
		                    "(see docs/formats.md)",
		                    file_name);
	if (sc.first_code && sc.first_code < sc.line[0])
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: directive: the cuco-directive comes after code "
		                    "(line %d); move it above all code (only comments and blank "
		                    "lines may precede it)",
		                    file_name, sc.line[0],
		                    (int)(strstr(sc.bol[0], "//") - sc.bol[0]) + 1, sc.first_code);
	if (sc.ndirs > 1)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: directive: a second cuco-directive (the first is on "
		                    "line %d); a program has exactly one",
		                    file_name, sc.line[1],
		                    (int)(strstr(sc.bol[1], "//") - sc.bol[1]) + 1, sc.line[0]);
	p = sc.tag[0];
	if (p >= sc.eol[0] || *p != ':')
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: directive: expected ':' after cuco-directive",
		                    file_name, sc.line[0], (int)(p - sc.bol[0]) + 1);
	p++;
	while (p < sc.eol[0] && is_blank(*p))
		p++;
	end = sc.eol[0];
	while (end > p && is_blank(end[-1]))
		end--;
	if (p == end)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: directive: expected a JSON object after "
		                    "cuco-directive:",
		                    file_name, sc.line[0], (int)(p - sc.bol[0]) + 1);
	P.file = file_name;
	P.line = sc.line[0];
	P.json = p;
	P.len = (size_t)(end - p);
	P.col0 = (int)(p - sc.bol[0]);
	P.err = err;
	root = json_loadb(p, P.len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "%s:%d:%d: directive: invalid JSON: %s",
		                  file_name, P.line, P.col0 + (jerr.column > 0 ? jerr.column : 1),
		                  jerr.text);
		goto out;
	}
	rc = parse_object(&P, root, out);
	if (rc)
		goto out;
	out->line = P.line;
	out->file = cuco_xstrdup(file_name);
out:
	json_decref(root);
	if (rc)
		cuco_directive_release(out);
	return rc;
}

/* --- validation ---------------------------------------------------------------- */

static int dv_fail(const struct cuco_directive *d, struct cuco_err *err, int code, int col,
                   const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int dv_fail(const struct cuco_directive *d, struct cuco_err *err, int code, int col,
                   const char *field, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cuco_err_set(err, code, "%s:%d:%d: %s: %s", d->file ? d->file : "<directive>",
	                    d->line, col > 0 ? col : 1, field, msg);
}

static int check_values(const struct cuco_directive *d, const struct cuco_design_space *ds,
                        struct cuco_err *err)
{
	int i, j;

	for (i = 0; i < CUCO_NDIMS; i++) {
		const struct cuco_ds_dimension *dim = &ds->dims[i];
		struct cuco_strbuf list = CUCO_STRBUF_INIT;
		const char *hint, **names;
		int rc;

		if (cuco_design_space_value_index(dim, d->dims[i]) >= 0)
			continue;
		if (cuco_design_space_mentions_multicast(d->dims[i]))
			return dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[i],
			               cuco_dimension_name(i), "\"%s\": " CUCO_MULTICAST_MSG,
			               d->dims[i]);
		names = cuco_xcalloc((size_t)dim->nvalues, sizeof(*names));
		for (j = 0; j < dim->nvalues; j++) {
			names[j] = dim->values[j].name;
			cuco_strbuf_addf(&list, "%s%s", j ? ", " : "", names[j]);
		}
		hint = cuco_suggest(d->dims[i], names, dim->nvalues);
		free(names);
		rc = dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[i], cuco_dimension_name(i),
		             "\"%s\" is not a %s%s%s%s; expected one of %s", d->dims[i],
		             cuco_dimension_name(i), hint ? " (did you mean \"" : "",
		             hint ? hint : "", hint ? "\"?)" : "", list.buf);
		cuco_strbuf_release(&list);
		return rc;
	}
	return CUCO_OK;
}

static int check_knobs(const struct cuco_directive *d, const struct cuco_design_space *ds,
                       const struct cuco_hw_facts *facts, struct cuco_err *err)
{
	int i, j;

	for (i = 0; i < d->nknobs; i++) {
		const struct cuco_directive_knob *k = &d->knobs[i];
		const struct cuco_ds_knob *spec = cuco_design_space_knob(ds, k->name);
		char field[CUCO_NAME_MAX + 8];

		snprintf(field, sizeof(field), "knobs.%s", k->name);
		if (!spec) {
			struct cuco_strbuf list = CUCO_STRBUF_INIT;
			const char *hint, **names;
			int rc;

			if (cuco_design_space_mentions_multicast(k->name))
				return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field, "%s",
				               CUCO_MULTICAST_MSG);
			names = cuco_xcalloc((size_t)ds->nknobs, sizeof(*names));
			for (j = 0; j < ds->nknobs; j++) {
				names[j] = ds->knobs[j].name;
				cuco_strbuf_addf(&list, "%s%s", j ? ", " : "", names[j]);
			}
			hint = cuco_suggest(k->name, names, ds->nknobs);
			free(names);
			rc = dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
			             "unknown knob%s%s%s; the knobs are %s",
			             hint ? " (did you mean \"" : "", hint ? hint : "",
			             hint ? "\"?)" : "", list.buf);
			cuco_strbuf_release(&list);
			return rc;
		}
		if (spec->type == CUCO_KNOB_BOOL) {
			if (!k->is_bool)
				return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
				               "expected true or false, got %lld", k->value);
			continue;
		}
		if (k->is_bool)
			return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
			               "expected an integer, got %s", k->value ? "true" : "false");
		if (spec->type == CUCO_KNOB_ENUM) {
			struct cuco_strbuf list = CUCO_STRBUF_INIT;
			int rc;

			if (cuco_design_space_enum_has(spec, k->value))
				continue;
			for (j = 0; j < spec->nvalues; j++)
				cuco_strbuf_addf(&list, "%s%lld", j ? ", " : "", spec->values[j]);
			rc = dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
			             "%lld is not allowed; expected one of %s", k->value, list.buf);
			cuco_strbuf_release(&list);
			return rc;
		}
		if (k->value < spec->min || k->value > spec->max)
			return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
			               "%lld is out of range %lld..%lld", k->value, spec->min,
			               spec->max);
		if (k->value % spec->multiple_of)
			return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field,
			               "%lld is not a multiple of %lld", k->value,
			               spec->multiple_of);
		if (facts && spec->max_fact && facts->sm_count > 0 && k->value > facts->sm_count)
			return dv_fail(d, err, CUCO_ERR_UNSUPPORTED, k->col, field,
			               "%lld exceeds the %d SMs of this GPU", k->value,
			               facts->sm_count);
	}
	return CUCO_OK;
}

static int clause_holds(const struct cuco_directive *d, const struct cuco_ds_clause *c)
{
	int i;

	for (i = 0; i < c->nvalues; i++)
		if (strcmp(d->dims[c->dim], c->values[i]) == 0)
			return 1;
	return 0;
}

/* `issuer "cta"`, or `backend "ce" and placement "x"`; just `"cta"` with short set. */
static void describe_when(struct cuco_strbuf *sb, const struct cuco_directive *d,
                          const struct cuco_ds_constraint *c, int short_form)
{
	int i;

	if (short_form && c->nwhen == 1) {
		cuco_strbuf_addf(sb, "\"%s\"", d->dims[c->when[0].dim]);
		return;
	}
	for (i = 0; i < c->nwhen; i++)
		cuco_strbuf_addf(sb, "%s%s \"%s\"", i ? " and " : "",
		                 cuco_dimension_name(c->when[i].dim), d->dims[c->when[i].dim]);
}

static int check_constraints(const struct cuco_directive *d, const struct cuco_design_space *ds,
                             const struct cuco_hw_facts *facts, struct cuco_err *err)
{
	int i, j, k;

	for (i = 0; i < ds->nconstraints; i++) {
		const struct cuco_ds_constraint *c = &ds->constraints[i];
		struct cuco_strbuf when = CUCO_STRBUF_INIT, allowed = CUCO_STRBUF_INIT;
		int holds = 1, rc = CUCO_OK, dim0;

		for (j = 0; j < c->nwhen; j++)
			holds &= clause_holds(d, &c->when[j]);
		if (!holds)
			continue;
		describe_when(&when, d, c, 0);
		for (j = 0; j < c->nthen && !rc; j++) {
			const struct cuco_ds_clause *t = &c->then[j];

			if (clause_holds(d, t))
				continue;
			for (k = 0; k < t->nvalues; k++)
				cuco_strbuf_addf(&allowed, "%s%s", k ? ", " : "", t->values[k]);
			rc = dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[t->dim],
			             cuco_dimension_name(t->dim),
			             "\"%s\" is not allowed with %s (allowed: %s): %s",
			             d->dims[t->dim], when.buf, allowed.buf, c->why);
		}
		dim0 = c->when[0].dim;
		cuco_strbuf_reset(&when);
		describe_when(&when, d, c, 1);
		if (!rc && facts && c->requires == CUCO_REQ_GIN_CAPABLE_NETWORK &&
		    !facts->gin_capable)
			rc = dv_fail(
			    d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0],
			    cuco_dimension_name(dim0),
			    "%s needs a GIN-capable network, and this machine has none (%s)",
			    when.buf, c->why);
		if (!rc && facts && c->requires == CUCO_REQ_ALL_RANKS_LSA_REACHABLE &&
		    !facts->lsa_all_reachable)
			rc = dv_fail(d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0],
			             cuco_dimension_name(dim0),
			             "%s needs every rank reachable by load/store, and here some "
			             "of the %d ranks are not (%s)",
			             when.buf, facts->nranks, c->why);
		if (!rc && facts && c->requires == CUCO_REQ_NVSHMEM_TRANSPORT &&
		    !facts->lsa_all_reachable && !facts->gin_capable)
			rc =
			    dv_fail(d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0],
			            cuco_dimension_name(dim0),
			            "%s needs every rank reachable over NVLink peer-to-peer or an "
			            "IB/RoCE network between the nodes, and here the %d ranks have "
			            "neither (%s)",
			            when.buf, facts->nranks, c->why);
		cuco_strbuf_release(&when);
		cuco_strbuf_release(&allowed);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

int cuco_directive_validate(const struct cuco_directive *d, const struct cuco_design_space *ds,
                            const struct cuco_hw_facts *facts, struct cuco_err *err)
{
	int rc = check_values(d, ds, err);

	if (!rc)
		rc = check_knobs(d, ds, facts, err);
	if (!rc)
		rc = check_constraints(d, ds, facts, err);
	return rc;
}

long long cuco_directive_knob(const struct cuco_directive *d, const char *name, long long dflt)
{
	int i;

	for (i = 0; i < d->nknobs; i++)
		if (strcmp(d->knobs[i].name, name) == 0)
			return d->knobs[i].value;
	return dflt;
}

int cuco_directive_set_knob(struct cuco_directive *d, const char *name, long long value,
                            int is_bool)
{
	struct cuco_directive_knob *k = NULL;
	int i;

	if (!name[0] || strlen(name) >= CUCO_NAME_MAX)
		return CUCO_ERR_INVALID;
	for (i = 0; i < d->nknobs; i++)
		if (strcmp(d->knobs[i].name, name) == 0)
			k = &d->knobs[i];
	if (!k) {
		if (d->nknobs == CUCO_DIRECTIVE_MAX_KNOBS)
			return CUCO_ERR_INVALID;
		k = &d->knobs[d->nknobs++];
		memset(k, 0, sizeof(*k));
		snprintf(k->name, sizeof(k->name), "%s", name);
	}
	k->value = is_bool ? !!value : value;
	k->is_bool = is_bool;
	return CUCO_OK;
}

int cuco_directive_apply_inert(struct cuco_directive *d, const struct cuco_ds_inert *in)
{
	int i;

	if (in->when_dim < 0) { /* a directive without the knob does not meet it */
		if (cuco_directive_knob(d, in->when_knob, LLONG_MIN) != in->when_knob_value)
			return 0;
	} else if (strcmp(d->dims[in->when_dim], in->when_value)) {
		return 0;
	}
	if (in->dim >= 0) {
		if (!strcmp(d->dims[in->dim], in->value))
			return 0;
		snprintf(d->dims[in->dim], CUCO_NAME_MAX, "%s", in->value);
		return 1;
	}
	for (i = 0; i < d->nknobs; i++)
		if (!strcmp(d->knobs[i].name, in->name))
			break;
	if (i == d->nknobs && d->nknobs == 0)
		return 0; /* a bare directive stays bare */
	if (i < d->nknobs && d->knobs[i].value == in->knob_value &&
	    d->knobs[i].is_bool == in->is_bool)
		return 0;
	return cuco_directive_set_knob(d, in->name, in->knob_value, in->is_bool) == CUCO_OK;
}

int cuco_directive_canonicalize(struct cuco_directive *d, const struct cuco_design_space *ds)
{
	int n = 0;

	/* dimension conditions first, knob conditions second: independent of the key order */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ds->ninert; i++)
			if ((ds->inert[i].when_dim < 0) == pass)
				n += cuco_directive_apply_inert(d, &ds->inert[i]);
	return n;
}

char *cuco_directive_to_json(const struct cuco_directive *d)
{
	json_t *root = json_object(), *knobs = json_object();
	int order[CUCO_DIRECTIVE_MAX_KNOBS];
	char *res = NULL;
	int i, j, fail = !root || !knobs;

	for (i = 0; i < CUCO_NDIMS && !fail; i++)
		fail |=
		    json_object_set_new(root, cuco_dimension_name(i), json_string(d->dims[i])) != 0;
	/* insertion sort of knob indices by name: jansson keeps insertion order */
	for (i = 0; i < d->nknobs; i++) {
		for (j = i; j > 0 && strcmp(d->knobs[order[j - 1]].name, d->knobs[i].name) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; i < d->nknobs && !fail; i++) {
		const struct cuco_directive_knob *k = &d->knobs[order[i]];

		fail |= json_object_set_new(knobs, k->name,
		                            k->is_bool ? json_boolean(k->value)
		                                       : json_integer(k->value)) != 0;
	}
	if (!fail && json_object_set(root, "knobs", knobs) == 0)
		res = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(knobs);
	json_decref(root);
	return res;
}

char *cuco_directive_to_line(const struct cuco_directive *d)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char *json = cuco_directive_to_json(d);

	if (!json)
		return NULL;
	cuco_strbuf_addf(&sb, "// %s %s", CUCO_DIRECTIVE_TAG, json);
	free(json);
	return cuco_strbuf_detach(&sb, NULL);
}

/* --- copying and comparing ----------------------------------------------------- */

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

int cuco_directive_distance(const struct cuco_directive *a, const struct cuco_directive *b)
{
	int d = 0;

	for (int i = 0; i < CUCO_NDIMS; i++)
		d += strcmp(a->dims[i], b->dims[i]) != 0;
	for (int i = 0; i < a->nknobs; i++)
		d += cuco_directive_knob(b, a->knobs[i].name, -1) != a->knobs[i].value;
	for (int i = 0; i < b->nknobs; i++) /* knobs only b sets */
		d += cuco_directive_knob(a, b->knobs[i].name, -1) == -1 && b->knobs[i].value != -1;
	return d;
}
