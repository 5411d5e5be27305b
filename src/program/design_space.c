/* design_space.c - load and check the design space (share/design_space.json). */
#include "program/design_space.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
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

int cuco_dimension_index(const char *name)
{
	int i;

	for (i = 0; i < CUCO_NDIMS; i++)
		if (strcmp(dim_names[i], name) == 0)
			return i;
	return -1;
}

/* Multicast (NVLink SHARP) is off on cuco's machines; it is never a valid choice. */
int cuco_design_space_mentions_multicast(const char *s)
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

int cuco_design_space_value_index(const struct cuco_ds_dimension *dim, const char *value)
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
		d = cuco_dimension_index(json_string_value(name));
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
			if (cuco_design_space_mentions_multicast(s))
				return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0, "%s",
				                      CUCO_MULTICAST_MSG);
			if (cuco_design_space_value_index(dim, s) >= 0)
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

/* A knob's "default": a value the knob itself allows. */
static int knob_default_load(const struct cuco_json_src *L, const char *field,
                             struct cuco_ds_knob *k, const json_t *v)
{
	long long x;

	if (k->type == CUCO_KNOB_BOOL) {
		if (!json_is_boolean(v))
			return cuco_json_fail_type(L, field, "true or false", v);
		k->dflt = json_is_true(v);
		k->has_default = 1;
		return CUCO_OK;
	}
	if (!json_is_integer(v))
		return cuco_json_fail_type(L, field, "an integer", v);
	x = json_integer_value(v);
	if (k->type == CUCO_KNOB_ENUM) {
		if (!cuco_design_space_enum_has(k, x))
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "%lld is not one of the knob's values", x);
	} else if (x < k->min || x > k->max) {
		return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
		                      "%lld is outside the knob's range %lld to %lld", x, k->min,
		                      k->max);
	} else if (x % k->multiple_of) {
		return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
		                      "%lld is not a multiple of %lld", x, k->multiple_of);
	}
	k->dflt = x;
	k->has_default = 1;
	return CUCO_OK;
}

static int ds_knobs(const struct cuco_json_src *L, const json_t *arr, struct cuco_design_space *ds)
{
	static const char *const knob_fields[] = {"name",        "type",   "min",      "max",
	                                          "multiple_of", "values", "max_fact", "doc",
	                                          "searched",    "default"};
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
		const json_t *name, *type, *min, *max, *mult, *vals, *fact, *doc, *searched, *dflt;
		char field[128];
		const char *s;

		snprintf(field, sizeof(field), "knobs[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(L, field, "an object", obj);
		rc = ds_unknown(L, obj, field, knob_fields, 10);
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
		dflt = json_object_get(obj, "default");
		snprintf(field, sizeof(field), "knobs[%zu].name", i);
		if (!json_is_string(name))
			return cuco_json_fail_type(L, field, "a knob name", name);
		s = json_string_value(name);
		if (!s[0] || strlen(s) >= CUCO_NAME_MAX)
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0,
			                      "knob names have 1 to %d characters",
			                      CUCO_NAME_MAX - 1);
		if (cuco_design_space_mentions_multicast(s))
			return cuco_json_fail(L, CUCO_ERR_INVALID, field, 0, "%s",
			                      CUCO_MULTICAST_MSG);
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
		if (dflt) {
			snprintf(field, sizeof(field), "knobs[%zu].default", i);
			rc = knob_default_load(L, field, k, dflt);
			if (rc)
				return rc;
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
		c->dim = cuco_dimension_index(key);
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
			if (cuco_design_space_value_index(&ds->dims[c->dim], json_string_value(e)) <
			    0) {
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

int cuco_design_space_enum_has(const struct cuco_ds_knob *k, long long x)
{
	for (int i = 0; i < k->nvalues; i++)
		if (k->values[i] == x)
			return 1;
	return 0;
}

/* v moved into [lo, hi] onto a multiple of m. */
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

long long cuco_design_space_knob_default(const struct cuco_ds_knob *k)
{
	long long v = k->min;

	if (k->type == CUCO_KNOB_BOOL)
		return k->has_default ? k->dflt : 0;
	if (k->type == CUCO_KNOB_ENUM)
		v = k->nvalues ? k->values[0] : 0;
	if (k->has_default)
		v = k->dflt;
	if (k->type == CUCO_KNOB_ENUM)
		return cuco_design_space_enum_has(k, v) || !k->nvalues ? v : k->values[0];
	return knob_snap(v, k->min, k->max, k->multiple_of);
}
