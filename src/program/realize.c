/* realize.c - narrow the design space to a template; realize a directive through it. */
#include "program/realize.h"
#include "util/array.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* --- narrowing to a template ---------------------------------------------------- */

#define REALIZES_TAG "cuco-realizes:"

/* 1 when array holds the string s. */
static int has_string(const json_t *array, const char *s)
{
	size_t i;
	const json_t *v;

	json_array_foreach(array, i, v)
	{
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

/* 1 when array holds the integer x. */
static int has_integer(const json_t *array, long long x)
{
	size_t i;
	const json_t *v;

	json_array_foreach(array, i, v)
	{
		if (json_is_integer(v) && json_integer_value(v) == x)
			return 1;
	}
	return 0;
}

/* Check one narrowing entry against ds (nothing changes yet). */
static int narrow_check(const struct cuco_design_space *ds, const char *key, const json_t *v,
                        const char *where, struct cuco_err *err)
{
	size_t i;
	const json_t *x;
	int d = cuco_dimension_index(key);

	if (d >= 0) {
		if (!json_is_array(v) || json_array_size(v) == 0)
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "%s: %s: expected a non-empty array of values", where,
			                    key);
		json_array_foreach(v, i, x)
		{
			if (!json_is_string(x) ||
			    cuco_design_space_value_index(&ds->dims[d], json_string_value(x)) < 0)
				return cuco_err_set(
				    err, CUCO_ERR_INVALID,
				    "%s: %s[%zu]: not a value of the design space's %s", where, key,
				    i, key);
		}
		return CUCO_OK;
	}
	if (strcmp(key, "knobs") != 0)
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s: %s: neither a dimension, \"knobs\" nor \"inert\"", where,
		                    key);
	if (!json_is_object(v))
		return cuco_err_set(err, CUCO_ERR_PARSE, "%s: knobs: expected an object", where);
	const char *kn;
	json_object_foreach((json_t *)v, kn, x)
	{
		const struct cuco_ds_knob *k = cuco_design_space_knob(ds, kn);
		const json_t *vals = json_object_get(x, "values");
		const json_t *lo = json_object_get(x, "min"), *hi = json_object_get(x, "max");
		size_t j;
		const json_t *e;

		if (!k)
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "%s: knobs.%s: not a knob of the design space", where,
			                    kn);
		if (!json_is_object(x) || json_object_size(x) != (size_t)(!!vals + !!lo + !!hi))
			return cuco_err_set(
			    err, CUCO_ERR_PARSE,
			    "%s: knobs.%s: expected {\"values\": [...]} or {\"min\": N, "
			    "\"max\": N}",
			    where, kn);
		if (vals) {
			if (k->type != CUCO_KNOB_ENUM || !json_is_array(vals) ||
			    json_array_size(vals) == 0)
				return cuco_err_set(
				    err, CUCO_ERR_INVALID,
				    "%s: knobs.%s.values: only for an enum knob, non-empty", where,
				    kn);
			json_array_foreach(vals, j, e)
			{
				if (!json_is_integer(e) ||
				    !cuco_design_space_enum_has(k, json_integer_value(e)))
					return cuco_err_set(
					    err, CUCO_ERR_INVALID,
					    "%s: knobs.%s.values[%zu]: not a value of the knob",
					    where, kn, j);
			}
		} else {
			if (k->type != CUCO_KNOB_INT || !json_is_integer(lo) ||
			    !json_is_integer(hi) ||
			    json_integer_value(lo) > json_integer_value(hi) ||
			    json_integer_value(lo) < k->min || json_integer_value(hi) > k->max)
				return cuco_err_set(
				    err, CUCO_ERR_INVALID,
				    "%s: knobs.%s: min..max must lie in %lld..%lld (an int knob)",
				    where, kn, k->min, k->max);
		}
	}
	return CUCO_OK;
}

/* Apply a checked narrowing entry. */
static void narrow_apply(struct cuco_design_space *ds, const char *key, const json_t *v)
{
	int d = cuco_dimension_index(key), n = 0;

	if (d >= 0) {
		struct cuco_ds_dimension *dim = &ds->dims[d];
		for (int i = 0; i < dim->nvalues; i++)
			if (has_string(v, dim->values[i].name))
				dim->values[n++] = dim->values[i];
		dim->nvalues = n;
		return;
	}
	const char *kn;
	const json_t *x;
	json_object_foreach((json_t *)v, kn, x)
	{
		struct cuco_ds_knob *k = (struct cuco_ds_knob *)cuco_design_space_knob(ds, kn);
		const json_t *vals = json_object_get(x, "values");
		if (vals) {
			n = 0;
			for (int i = 0; i < k->nvalues; i++)
				if (has_integer(vals, k->values[i]))
					k->values[n++] = k->values[i];
			k->nvalues = n;
		} else {
			k->min = json_integer_value(json_object_get(x, "min"));
			k->max = json_integer_value(json_object_get(x, "max"));
		}
	}
}

/* 1 when dimension d's value s is in ds and in the line's narrowing of d (root). */
static int inert_dim_ok(const struct cuco_design_space *ds, const json_t *root, int d,
                        const char *s)
{
	const json_t *nar = json_object_get(root, cuco_dimension_name(d));

	return cuco_design_space_value_index(&ds->dims[d], s) >= 0 && (!nar || has_string(nar, s));
}

/* 1 when v is a value of knob k in ds and in the line's narrowing of the knob (nar, may be NULL).
 */
static int inert_knob_ok(const struct cuco_ds_knob *k, const json_t *nar, long long v)
{
	const json_t *vals = json_object_get(nar, "values");
	const json_t *lo = json_object_get(nar, "min"), *hi = json_object_get(nar, "max");

	if (k->type == CUCO_KNOB_BOOL)
		return v == 0 || v == 1;
	if (k->type == CUCO_KNOB_ENUM)
		return cuco_design_space_enum_has(k, v) && (!vals || has_integer(vals, v));
	if (v < k->min || v > k->max || v % k->multiple_of)
		return 0;
	return !lo || (v >= json_integer_value(lo) && v <= json_integer_value(hi));
}

/*
 * The value s of the condition "KNOB=s" (key, for messages) for knob k: true or
 * false for a bool knob, a decimal integer otherwise, allowed by ds and by the
 * line's narrowing of the knob (root). Sets *v (bools 0 or 1).
 */
static int inert_when_knob(const struct cuco_ds_knob *k, const json_t *root, const char *s,
                           const char *where, const char *key, long long *v, struct cuco_err *err)
{
	const json_t *nar = json_object_get(json_object_get(root, "knobs"), k->name);
	char *end;

	if (k->type == CUCO_KNOB_BOOL) {
		if (strcmp(s, "true") && strcmp(s, "false"))
			return cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    "%s: inert.%s: expected %s=true or %s=false (a bool knob)", where, key,
			    k->name, k->name);
		*v = !strcmp(s, "true");
		return CUCO_OK;
	}
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (!*s || *end || errno || isspace((unsigned char)*s))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s: inert.%s: expected %s=N with N an integer", where, key,
		                    k->name);
	if (!inert_knob_ok(k, nar, *v))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s: inert.%s: %lld is not a value of the knob that this "
		                    "template realizes",
		                    where, key, *v);
	return CUCO_OK;
}

/*
 * Parse the line's "inert" member (v) into a malloc'd array (*out, *n), checked
 * against ds and the line's own narrowing (root). On error *out is NULL.
 */
static int inert_parse(const struct cuco_design_space *ds, const json_t *root, const json_t *v,
                       const char *where, struct cuco_ds_inert **out, int *n, struct cuco_err *err)
{
	const char *pl, *field;
	const json_t *genes, *x;
	size_t alloc = 0;
	int rc = CUCO_OK;

	*out = NULL;
	*n = 0;
	if (!json_is_object(v))
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s: inert: expected an object {condition: {dimension or knob: "
		                    "value}}",
		                    where);
	json_object_foreach((json_t *)v, pl, genes)
	{
		/* "placement", "dimension=value" or "knob=value" */
		const char *eq = strchr(pl, '=');
		char dname[CUCO_NAME_MAX];
		int wd = CUCO_DIM_PLACEMENT;
		const char *wv = pl;
		const struct cuco_ds_knob *wk = NULL; /* the condition's knob */
		long long wkv = 0;

		if (eq) {
			if ((size_t)(eq - pl) >= sizeof(dname)) {
				rc = cuco_err_set(err, CUCO_ERR_INVALID,
				                  "%s: inert.%s: name too long", where, pl);
				goto out;
			}
			snprintf(dname, sizeof(dname), "%.*s", (int)(eq - pl), pl);
			wd = cuco_dimension_index(dname);
			wv = eq + 1;
			if (wd < 0)
				wk = cuco_design_space_knob(ds, dname);
			if (wd < 0 && !wk) {
				rc = cuco_err_set(err, CUCO_ERR_INVALID,
				                  "%s: inert.%s: %s is neither a dimension nor a "
				                  "knob of the design space",
				                  where, pl, dname);
				goto out;
			}
		}
		if (wk) {
			rc = inert_when_knob(wk, root, wv, where, pl, &wkv, err);
			if (rc)
				goto out;
		} else if (!inert_dim_ok(ds, root, wd, wv)) {
			rc = cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    eq ? "%s: inert.%s: not dimension=value with a value this "
			         "template realizes"
			       : "%s: inert.%s: not a placement this template realizes",
			    where, pl);
			goto out;
		}
		if (!json_is_object(genes)) {
			rc = cuco_err_set(
			    err, CUCO_ERR_PARSE,
			    "%s: inert.%s: expected an object {dimension or knob: value}", where,
			    pl);
			goto out;
		}
		json_object_foreach((json_t *)genes, field, x)
		{
			struct cuco_ds_inert in;
			const struct cuco_ds_knob *k = cuco_design_space_knob(ds, field);
			int d = cuco_dimension_index(field);

			memset(&in, 0, sizeof(in));
			if ((!wk && strlen(wv) >= sizeof(in.when_value)) ||
			    strlen(field) >= sizeof(in.name)) {
				rc = cuco_err_set(err, CUCO_ERR_INVALID,
				                  "%s: inert.%s.%s: name too long", where, pl,
				                  field);
				goto out;
			}
			if (wk) {
				in.when_dim = -1;
				snprintf(in.when_knob, sizeof(in.when_knob), "%s", wk->name);
				in.when_knob_value = wkv;
			} else {
				in.when_dim = wd;
				snprintf(in.when_value, sizeof(in.when_value), "%s", wv);
			}
			snprintf(in.name, sizeof(in.name), "%s", field);
			in.dim = d;
			if (d == CUCO_DIM_PLACEMENT || (!wk && d == wd)) {
				rc = cuco_err_set(err, CUCO_ERR_INVALID,
				                  d == CUCO_DIM_PLACEMENT
				                      ? "%s: inert.%s.%s: the placement picks the "
				                        "code path, so it "
				                        "cannot be inert"
				                      : "%s: inert.%s.%s: the condition's own "
				                        "dimension cannot be inert",
				                  where, pl, field);
				goto out;
			} else if (wk && k == wk) {
				rc =
				    cuco_err_set(err, CUCO_ERR_INVALID,
				                 "%s: inert.%s.%s: the condition's own knob cannot "
				                 "be inert",
				                 where, pl, field);
				goto out;
			} else if (d >= 0) {
				if (!json_is_string(x) ||
				    !inert_dim_ok(ds, root, d, json_string_value(x))) {
					rc = cuco_err_set(
					    err, CUCO_ERR_INVALID,
					    "%s: inert.%s.%s: expected a value of %s that "
					    "this template realizes",
					    where, pl, field, field);
					goto out;
				}
				snprintf(in.value, sizeof(in.value), "%s", json_string_value(x));
			} else if (!k) {
				rc = cuco_err_set(
				    err, CUCO_ERR_INVALID,
				    "%s: inert.%s.%s: neither a dimension nor a knob of the "
				    "design space",
				    where, pl, field);
				goto out;
			} else {
				const json_t *nar =
				    json_object_get(json_object_get(root, "knobs"), field);
				in.is_bool = k->type == CUCO_KNOB_BOOL;
				if (in.is_bool ? !json_is_boolean(x) : !json_is_integer(x)) {
					rc = cuco_err_set(
					    err, CUCO_ERR_INVALID, "%s: inert.%s.%s: expected %s",
					    where, pl, field,
					    in.is_bool ? "true or false" : "an integer");
					goto out;
				}
				in.knob_value =
				    in.is_bool ? json_is_true(x) : json_integer_value(x);
				if (!inert_knob_ok(k, nar, in.knob_value)) {
					rc = cuco_err_set(
					    err, CUCO_ERR_INVALID,
					    "%s: inert.%s.%s: %lld is not a value of the "
					    "knob that this template realizes",
					    where, pl, field, in.knob_value);
					goto out;
				}
			}
			*CUCO_ARRAY_PUSH(*out, *n, alloc) = in;
		}
	}
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int cuco_design_space_narrow(struct cuco_design_space *ds, const char *name, const char *text,
                             struct cuco_err *err)
{
	const char *tag = strstr(text, REALIZES_TAG), *eol;
	char where[1024];
	json_error_t je;
	json_t *root;
	const char *key;
	json_t *v;
	struct cuco_ds_inert *inert = NULL;
	int line = 1, rc = CUCO_OK, ninert = 0;

	if (!tag)
		return CUCO_OK;
	for (const char *c = text; c < tag; c++)
		line += *c == '\n';
	snprintf(where, sizeof(where), "%s:%d: cuco-realizes", name, line);
	tag += strlen(REALIZES_TAG);
	eol = strchr(tag, '\n');
	root =
	    json_loadb(tag, eol ? (size_t)(eol - tag) : strlen(tag), JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(root)) {
		json_decref(root);
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s column %d: expected one JSON object (%s)", where, je.column,
		                    root ? "not an object" : je.text);
	}
	json_object_foreach(root, key, v)
	{
		if (!strcmp(key, "inert"))
			rc = inert_parse(ds, root, v, where, &inert, &ninert, err);
		else
			rc = narrow_check(ds, key, v, where, err);
		if (rc)
			break;
	}
	if (!rc) {
		json_object_foreach(root, key, v) if (strcmp(key, "inert"))
		    narrow_apply(ds, key, v);
		if (json_object_get(root, "inert")) {
			free(ds->inert);
			ds->inert = inert;
			ds->ninert = ninert;
			inert = NULL;
		}
	}
	free(inert);
	json_decref(root);
	return rc;
}

/* --- filling a template or the seed ------------------------------------------- */

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
			long long v = cuco_design_space_knob_default(spec);
			char *end;
			if (ph.has_dflt) {
				errno = 0;
				v = strtoll(ph.dflt, &end, 10);
				if (errno || *end || end == ph.dflt)
					v = cuco_design_space_knob_default(spec);
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
