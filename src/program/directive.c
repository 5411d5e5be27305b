/* directive.c - find, parse and validate a program's cuco-directive; load the design space. */
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

static const char *const dim_names[CUCO_NDIMS] = {"backend", "placement", "sync_scope", "issuer",
                                                  "granularity"};

const char *cuco_dimension_name(int dim)
{
	if (dim < 0 || dim >= CUCO_NDIMS)
		return NULL;
	return dim_names[dim];
}

static int dim_index(const char *name)
{
	int i;

	for (i = 0; i < CUCO_NDIMS; i++)
		if (strcmp(dim_names[i], name) == 0)
			return i;
	return -1;
}

/* Multicast (NVLink SHARP) is off on cuco's machines; it is never a valid choice. */
static int mentions_multicast(const char *s)
{
	static const char word[] = "multicast";
	size_t n = strlen(word), i, j;

	for (i = 0; s[i]; i++) {
		for (j = 0; j < n && s[i + j]; j++)
			if (tolower((unsigned char)s[i + j]) != word[j])
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

#define MULTICAST_MSG                                                                           \
	"multicast is never a valid choice in cuco (NVLink multicast is off on its machines); " \
	"use lsa, gin or ce"

/* --- design space ------------------------------------------------------------- */

static int ds_unknown(const struct cuco_json_src *L, const json_t *obj, const char *prefix,
                      const char *const *known, int nknown)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		char field[256];
		int i, ok = 0;

		for (i = 0; i < nknown; i++)
			ok |= strcmp(key, known[i]) == 0;
		if (ok)
			continue;
		snprintf(field, sizeof(field), "%s%s%s", prefix, prefix[0] ? "." : "", key);
		return cuco_json_fail(L, CUCO_ERR_PARSE, field, 1, "unknown field");
	}
	return CUCO_OK;
}

static int ds_value_index(const struct cuco_ds_dimension *dim, const char *value)
{
	int i;

	for (i = 0; i < dim->nvalues; i++)
		if (strcmp(dim->values[i].name, value) == 0)
			return i;
	return -1;
}

static int ds_dimensions(const struct cuco_json_src *L, const json_t *arr,
                         struct cuco_design_space *ds)
{
	static const char *const dim_fields[] = {"name", "doc", "values"};
	static const char *const value_fields[] = {"name", "doc"};
	const json_t *obj;
	size_t i;
	int d, rc;

	if (!json_is_array(arr))
		return cuco_json_fail_type(L, "dimensions", "an array", arr);
	json_array_foreach(arr, i, obj)
	{
		char field[128];
		const json_t *name, *doc, *vals, *v;
		struct cuco_ds_dimension *dim;
		size_t k;

		snprintf(field, sizeof(field), "dimensions[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(L, field, "an object", obj);
		rc = ds_unknown(L, obj, field, dim_fields, 3);
		if (rc)
			return rc;
		name = json_object_get(obj, "name");
		doc = json_object_get(obj, "doc");
		vals = json_object_get(obj, "values");
		snprintf(field, sizeof(field), "dimensions[%zu].name", i);
		if (!json_is_string(name))
			return cuco_json_fail_type(L, field, "a dimension name", name);
		d = dim_index(json_string_value(name));
		if (d < 0)
			return cuco_json_fail(
			    L, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a dimension cuco knows (backend, placement, "
			    "sync_scope, issuer, granularity)",
			    json_string_value(name));
		dim = &ds->dims[d];
		if (dim->name)
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "\"%s\" is defined twice", json_string_value(name));
		dim->name = json_string_value(name);
		snprintf(field, sizeof(field), "dimensions[%zu].doc", i);
		if (doc && !json_is_string(doc))
			return cuco_json_fail_type(L, field, "a string", doc);
		dim->doc = doc ? json_string_value(doc) : "";
		snprintf(field, sizeof(field), "dimensions[%zu].values", i);
		if (!json_is_array(vals) || json_array_size(vals) == 0)
			return cuco_json_fail_type(L, field, "a non-empty array of values", vals);
		dim->values = cuco_xcalloc(json_array_size(vals), sizeof(*dim->values));
		json_array_foreach(vals, k, v)
		{
			const json_t *vn, *vd;
			const char *s;

			snprintf(field, sizeof(field), "dimensions[%zu].values[%zu]", i, k);
			if (!json_is_object(v))
				return cuco_json_fail_type(L, field, "an object", v);
			rc = ds_unknown(L, v, field, value_fields, 2);
			if (rc)
				return rc;
			vn = json_object_get(v, "name");
			vd = json_object_get(v, "doc");
			snprintf(field, sizeof(field), "dimensions[%zu].values[%zu].name", i, k);
			if (!json_is_string(vn))
				return cuco_json_fail_type(L, field, "a value name", vn);
			s = json_string_value(vn);
			if (!s[0] || strlen(s) >= CUCO_NAME_MAX)
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
				                      "value names have 1 to %d characters",
				                      CUCO_NAME_MAX - 1);
			if (mentions_multicast(s))
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0, "%s",
				                      MULTICAST_MSG);
			if (ds_value_index(dim, s) >= 0)
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
				                      "\"%s\" is listed twice", s);
			snprintf(field, sizeof(field), "dimensions[%zu].values[%zu].doc", i, k);
			if (vd && !json_is_string(vd))
				return cuco_json_fail_type(L, field, "a string", vd);
			dim->values[dim->nvalues].name = s;
			dim->values[dim->nvalues].doc = vd ? json_string_value(vd) : "";
			dim->nvalues++;
		}
	}
	for (d = 0; d < CUCO_NDIMS; d++)
		if (!ds->dims[d].name)
			return cuco_json_fail(L, CUCO_ERR_INVALID, "dimensions", 0,
			                      "dimension \"%s\" is missing", dim_names[d]);
	return CUCO_OK;
}

static int ds_knobs(const struct cuco_json_src *L, const json_t *arr, struct cuco_design_space *ds)
{
	static const char *const knob_fields[] = {
	    "name", "type", "min", "max", "multiple_of", "values", "max_fact", "doc", "searched"};
	const json_t *obj;
	size_t i;
	int rc;

	if (!json_is_array(arr))
		return cuco_json_fail_type(L, "knobs", "an array", arr);
	ds->knobs = cuco_xcalloc(json_array_size(arr), sizeof(*ds->knobs));
	ds->knobs_cap = (int)json_array_size(arr);
	json_array_foreach(arr, i, obj)
	{
		struct cuco_ds_knob *k = &ds->knobs[ds->nknobs];
		const json_t *name, *type, *min, *max, *mult, *vals, *fact, *doc, *searched;
		char field[128];
		const char *s;

		snprintf(field, sizeof(field), "knobs[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(L, field, "an object", obj);
		rc = ds_unknown(L, obj, field, knob_fields, 9);
		if (rc)
			return rc;
		name = json_object_get(obj, "name");
		type = json_object_get(obj, "type");
		min = json_object_get(obj, "min");
		max = json_object_get(obj, "max");
		mult = json_object_get(obj, "multiple_of");
		vals = json_object_get(obj, "values");
		fact = json_object_get(obj, "max_fact");
		doc = json_object_get(obj, "doc");
		searched = json_object_get(obj, "searched");
		snprintf(field, sizeof(field), "knobs[%zu].name", i);
		if (!json_is_string(name))
			return cuco_json_fail_type(L, field, "a knob name", name);
		s = json_string_value(name);
		if (!s[0] || strlen(s) >= CUCO_NAME_MAX)
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "knob names have 1 to %d characters",
			                      CUCO_NAME_MAX - 1);
		if (mentions_multicast(s))
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0, "%s", MULTICAST_MSG);
		if (cuco_design_space_knob(ds, s))
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "knob \"%s\" is listed twice", s);
		k->name = s;
		k->doc = json_is_string(doc) ? json_string_value(doc) : "";
		k->multiple_of = 1;
		snprintf(field, sizeof(field), "knobs[%zu].type", i);
		if (!json_is_string(type))
			return cuco_json_fail_type(L, field, "int, bool or enum", type);
		s = json_string_value(type);
		if (strcmp(s, "int") == 0) {
			k->type = CUCO_KNOB_INT;
			snprintf(field, sizeof(field), "knobs[%zu].min", i);
			if (!json_is_integer(min))
				return cuco_json_fail_type(L, field, "an integer", min);
			snprintf(field, sizeof(field), "knobs[%zu].max", i);
			if (!json_is_integer(max))
				return cuco_json_fail_type(L, field, "an integer", max);
			k->min = json_integer_value(min);
			k->max = json_integer_value(max);
			if (k->max < k->min)
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
				                      "max %lld is less than min %lld", k->max,
				                      k->min);
			if (mult) {
				snprintf(field, sizeof(field), "knobs[%zu].multiple_of", i);
				if (!json_is_integer(mult) || json_integer_value(mult) <= 0)
					return cuco_json_fail_type(L, field, "a positive integer",
					                           mult);
				k->multiple_of = json_integer_value(mult);
			}
		} else if (strcmp(s, "bool") == 0) {
			k->type = CUCO_KNOB_BOOL;
			k->min = 0;
			k->max = 1;
		} else if (strcmp(s, "enum") == 0) {
			size_t j;
			const json_t *e;

			k->type = CUCO_KNOB_ENUM;
			snprintf(field, sizeof(field), "knobs[%zu].values", i);
			if (!json_is_array(vals) || json_array_size(vals) == 0)
				return cuco_json_fail_type(L, field,
				                           "a non-empty array of integers", vals);
			k->values = cuco_xcalloc(json_array_size(vals), sizeof(*k->values));
			json_array_foreach(vals, j, e)
			{
				snprintf(field, sizeof(field), "knobs[%zu].values[%zu]", i, j);
				if (!json_is_integer(e))
					return cuco_json_fail_type(L, field, "an integer", e);
				k->values[k->nvalues++] = json_integer_value(e);
			}
		} else {
			return cuco_json_fail(
			    L, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a knob type; expected int, bool or enum", s);
		}
		if (fact) {
			snprintf(field, sizeof(field), "knobs[%zu].max_fact", i);
			if (!json_is_string(fact) ||
			    strcmp(json_string_value(fact), "sm_count") != 0)
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
				                      "the only fact a knob may be bounded by is "
				                      "\"sm_count\"");
			k->max_fact = json_string_value(fact);
		}
		k->searched = 1;
		if (searched) {
			snprintf(field, sizeof(field), "knobs[%zu].searched", i);
			if (!json_is_boolean(searched))
				return cuco_json_fail_type(L, field, "true or false", searched);
			k->searched = json_is_true(searched);
		}
		ds->nknobs++;
	}
	return CUCO_OK;
}

/* {"dim": "value"} or {"dim": ["v1", "v2"]} into clauses. */
static int ds_clauses(const struct cuco_json_src *L, const json_t *obj, const char *prefix,
                      const struct cuco_design_space *ds, struct cuco_ds_clause **out, int *n)
{
	const char *key;
	json_t *v;
	int rc;

	if (!json_is_object(obj) || json_object_size(obj) == 0)
		return cuco_json_fail_type(L, prefix, "an object of dimension: value(s)", obj);
	*out = cuco_xcalloc(json_object_size(obj), sizeof(**out));
	json_object_foreach((json_t *)obj, key, v)
	{
		struct cuco_ds_clause *c = &(*out)[*n];
		char field[192];
		size_t j, count = json_is_array(v) ? json_array_size(v) : 1;

		snprintf(field, sizeof(field), "%s.%s", prefix, key);
		c->dim = dim_index(key);
		if (c->dim < 0)
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 1, "unknown dimension");
		if (!json_is_string(v) && !(json_is_array(v) && count > 0))
			return cuco_json_fail_type(L, field,
			                           "a value or a non-empty array of values", v);
		c->values = cuco_xcalloc(count, sizeof(*c->values));
		(*n)++;
		for (j = 0; j < count; j++) {
			const json_t *e = json_is_array(v) ? json_array_get(v, j) : v;

			if (json_is_array(v))
				snprintf(field, sizeof(field), "%s.%s[%zu]", prefix, key, j);
			if (!json_is_string(e))
				return cuco_json_fail_type(L, field, "a value name", e);
			if (ds_value_index(&ds->dims[c->dim], json_string_value(e)) < 0) {
				rc = cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
				                    "\"%s\" is not a value of %s",
				                    json_string_value(e), key);
				return rc;
			}
			c->values[c->nvalues++] = json_string_value(e);
		}
	}
	return CUCO_OK;
}

static int ds_constraints(const struct cuco_json_src *L, const json_t *arr,
                          struct cuco_design_space *ds)
{
	static const char *const fields[] = {"if", "then", "requires", "why"};
	const json_t *obj;
	size_t i;
	int rc;

	if (!json_is_array(arr))
		return cuco_json_fail_type(L, "constraints", "an array", arr);
	ds->constraints = cuco_xcalloc(json_array_size(arr), sizeof(*ds->constraints));
	json_array_foreach(arr, i, obj)
	{
		struct cuco_ds_constraint *c = &ds->constraints[ds->nconstraints];
		const json_t *when, *then, *req, *why;
		char field[128];

		snprintf(field, sizeof(field), "constraints[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(L, field, "an object", obj);
		rc = ds_unknown(L, obj, field, fields, 4);
		if (rc)
			return rc;
		ds->nconstraints++;
		when = json_object_get(obj, "if");
		then = json_object_get(obj, "then");
		req = json_object_get(obj, "requires");
		why = json_object_get(obj, "why");
		snprintf(field, sizeof(field), "constraints[%zu].if", i);
		rc = ds_clauses(L, when, field, ds, &c->when, &c->nwhen);
		if (rc)
			return rc;
		if (then) {
			snprintf(field, sizeof(field), "constraints[%zu].then", i);
			rc = ds_clauses(L, then, field, ds, &c->then, &c->nthen);
			if (rc)
				return rc;
		}
		if (req) {
			snprintf(field, sizeof(field), "constraints[%zu].requires", i);
			if (!json_is_string(req))
				return cuco_json_fail_type(L, field, "a hardware fact", req);
			if (strcmp(json_string_value(req), "gin_capable_network") == 0)
			c->requires = CUCO_REQ_GIN_CAPABLE_NETWORK;
			else if (strcmp(json_string_value(req), "all_ranks_lsa_reachable") == 0)
			    c->requires = CUCO_REQ_ALL_RANKS_LSA_REACHABLE;
			else if (strcmp(json_string_value(req), "nvshmem_transport") == 0)
			    c->requires = CUCO_REQ_NVSHMEM_TRANSPORT;
			else return cuco_json_fail(
			    L, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a fact cuco knows; expected "
			    "gin_capable_network, all_ranks_lsa_reachable or "
			    "nvshmem_transport",
			    json_string_value(req));
		}
		if (!then && !req)
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "a constraint needs \"then\" or \"requires\"");
		snprintf(field, sizeof(field), "constraints[%zu].why", i);
		if (why && !json_is_string(why))
			return cuco_json_fail_type(L, field, "a string", why);
		c->why = why ? json_string_value(why) : "";
	}
	return CUCO_OK;
}

int cuco_design_space_load(const char *path, struct cuco_design_space *out, struct cuco_err *err)
{
	static const char *const top[] = {"version", "doc", "dimensions", "constraints", "knobs"};
	struct cuco_strbuf text = CUCO_STRBUF_INIT;
	struct cuco_json_src L;
	json_t *root;
	const json_t *v;
	int rc;

	memset(out, 0, sizeof(*out));
	if (cuco_strbuf_read_file(&text, path) != 0) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the design space: %s", path,
		                  strerror(errno));
		goto out;
	}
	L.path = path;
	L.text = text.buf;
	L.len = text.len;
	L.err = err;
	rc = cuco_json_parse_object(&L, &root);
	if (rc)
		goto out;
	out->root = root;
	rc = ds_unknown(&L, root, "", top, 5);
	if (rc)
		goto out;
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		rc = v ? cuco_json_fail(&L, CUCO_ERR_INVALID, "version", 0,
		                        "this cuco reads design space version 1")
		       : cuco_json_fail_type(&L, "version", "1", v);
		goto out;
	}
	rc = ds_dimensions(&L, json_object_get(root, "dimensions"), out);
	if (!rc)
		rc = ds_knobs(&L, json_object_get(root, "knobs"), out);
	if (!rc)
		rc = ds_constraints(&L, json_object_get(root, "constraints"), out);
out:
	cuco_strbuf_release(&text);
	if (rc)
		cuco_design_space_release(out);
	return rc;
}

static void clauses_free(struct cuco_ds_clause *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(c[i].values);
	free(c);
}

void cuco_design_space_release(struct cuco_design_space *ds)
{
	int i;

	if (!ds)
		return;
	for (i = 0; i < CUCO_NDIMS; i++)
		free(ds->dims[i].values);
	for (i = 0; i < ds->knobs_cap; i++)
		free(ds->knobs[i].values);
	free(ds->knobs);
	for (i = 0; i < ds->nconstraints; i++) {
		clauses_free(ds->constraints[i].when, ds->constraints[i].nwhen);
		clauses_free(ds->constraints[i].then, ds->constraints[i].nthen);
	}
	free(ds->constraints);
	free(ds->inert);
	json_decref(ds->root);
	memset(ds, 0, sizeof(*ds));
}

const struct cuco_ds_knob *cuco_design_space_knob(const struct cuco_design_space *ds,
                                                  const char *name)
{
	int i;

	for (i = 0; i < ds->nknobs; i++)
		if (ds->knobs[i].name && strcmp(ds->knobs[i].name, name) == 0)
			return &ds->knobs[i];
	return NULL;
}

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

/* 1 when x is one of enum knob k's values. */
static int enum_has(const struct cuco_ds_knob *k, long long x)
{
	for (int i = 0; i < k->nvalues; i++)
		if (k->values[i] == x)
			return 1;
	return 0;
}

/* Check one narrowing entry against ds (nothing changes yet). */
static int narrow_check(const struct cuco_design_space *ds, const char *key, const json_t *v,
                        const char *where, struct cuco_err *err)
{
	size_t i;
	const json_t *x;
	int d = dim_index(key);

	if (d >= 0) {
		if (!json_is_array(v) || json_array_size(v) == 0)
			return cuco_err_set(err, CUCO_ERR_PARSE,
			                    "%s: %s: expected a non-empty array of values", where,
			                    key);
		json_array_foreach(v, i, x)
		{
			if (!json_is_string(x) ||
			    ds_value_index(&ds->dims[d], json_string_value(x)) < 0)
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
				if (!json_is_integer(e) || !enum_has(k, json_integer_value(e)))
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
	int d = dim_index(key), n = 0;

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
	const json_t *nar = json_object_get(root, dim_names[d]);

	return ds_value_index(&ds->dims[d], s) >= 0 && (!nar || has_string(nar, s));
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
		return enum_has(k, v) && (!vals || has_integer(vals, v));
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
		                    "template realises",
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
			wd = dim_index(dname);
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
			         "template realises"
			       : "%s: inert.%s: not a placement this template realises",
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
			int d = dim_index(field);

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
					    "this template realises",
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
					    "knob that this template realises",
					    where, pl, field, in.knob_value);
					goto out;
				}
			}
			*out = cuco_xrealloc(*out, (size_t)(*n + 1) * sizeof(**out));
			(*out)[(*n)++] = in;
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
		cands[i] = dim_names[i];
	cands[CUCO_NDIMS] = "knobs";
	if (!json_is_object(root))
		return dp_type(P, "directive", "a JSON object", root);
	json_object_foreach((json_t *)root, key, v)
	{
		int dim = dim_index(key);
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
			return dp_fail(P, dim_names[i], 0,
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
	out->file = strdup(file_name);
	if (!out->file)
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
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

		if (ds_value_index(dim, d->dims[i]) >= 0)
			continue;
		if (mentions_multicast(d->dims[i]))
			return dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[i], dim_names[i],
			               "\"%s\": " MULTICAST_MSG, d->dims[i]);
		names = cuco_xcalloc((size_t)dim->nvalues, sizeof(*names));
		for (j = 0; j < dim->nvalues; j++) {
			names[j] = dim->values[j].name;
			cuco_strbuf_addf(&list, "%s%s", j ? ", " : "", names[j]);
		}
		hint = cuco_suggest(d->dims[i], names, dim->nvalues);
		free(names);
		rc = dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[i], dim_names[i],
		             "\"%s\" is not a %s%s%s%s; expected one of %s", d->dims[i],
		             dim_names[i], hint ? " (did you mean \"" : "", hint ? hint : "",
		             hint ? "\"?)" : "", list.buf);
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

			if (mentions_multicast(k->name))
				return dv_fail(d, err, CUCO_ERR_INVALID, k->col, field, "%s",
				               MULTICAST_MSG);
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

			if (enum_has(spec, k->value))
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
		cuco_strbuf_addf(sb, "%s%s \"%s\"", i ? " and " : "", dim_names[c->when[i].dim],
		                 d->dims[c->when[i].dim]);
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
			rc =
			    dv_fail(d, err, CUCO_ERR_INVALID, d->dim_col[t->dim], dim_names[t->dim],
			            "\"%s\" is not allowed with %s (allowed: %s): %s",
			            d->dims[t->dim], when.buf, allowed.buf, c->why);
		}
		dim0 = c->when[0].dim;
		cuco_strbuf_reset(&when);
		describe_when(&when, d, c, 1);
		if (!rc && facts && c->requires == CUCO_REQ_GIN_CAPABLE_NETWORK &&
		    !facts->gin_capable)
			rc = dv_fail(
			    d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0], dim_names[dim0],
			    "%s needs a GIN-capable network, and this machine has none (%s)",
			    when.buf, c->why);
		if (!rc && facts && c->requires == CUCO_REQ_ALL_RANKS_LSA_REACHABLE &&
		    !facts->lsa_all_reachable)
			rc =
			    dv_fail(d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0], dim_names[dim0],
			            "%s needs every rank reachable by load/store, and here some "
			            "of the %d ranks are not (%s)",
			            when.buf, facts->nranks, c->why);
		if (!rc && facts && c->requires == CUCO_REQ_NVSHMEM_TRANSPORT &&
		    !facts->lsa_all_reachable && !facts->gin_capable)
			rc =
			    dv_fail(d, err, CUCO_ERR_UNSUPPORTED, d->dim_col[dim0], dim_names[dim0],
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
		fail |= json_object_set_new(root, dim_names[i], json_string(d->dims[i])) != 0;
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
