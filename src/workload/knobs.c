/* knobs.c - a workload manifest's "knobs" section: each knob's type, range and default. */
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "workload/manifest_load.h"

static const char *const knob_fields[] = {"type",   "min",         "max", "default",
                                          "values", "multiple_of", "doc"};

static int parse_knob(struct mload *L, const char *name, const json_t *spec)
{
	char prefix[128], field[192];
	const json_t *min, *max, *dflt, *vals, *mult;
	const char *type;
	int rc;

	snprintf(prefix, sizeof(prefix), "knobs.%s", name);
	if (!cuco_manifest_is_ident(name) || strlen(name) >= CUCO_NAME_MAX)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, prefix, 1,
		    "\"%s\" is not a valid knob name (an identifier of at most %d "
		    "characters)",
		    name, CUCO_NAME_MAX - 1);
	if (!json_is_object(spec))
		return cuco_json_fail_type(&L->src, prefix, "a knob spec object", spec);
	rc = cuco_manifest_check_unknown(L, spec, prefix, knob_fields, 7, "knob field");
	if (rc)
		return rc;
	snprintf(field, sizeof(field), "%s.type", prefix);
	rc = cuco_manifest_get_string(L, spec, "type", field, 1, &type);
	if (rc)
		return rc;
	min = json_object_get(spec, "min");
	max = json_object_get(spec, "max");
	dflt = json_object_get(spec, "default");
	vals = json_object_get(spec, "values");
	mult = json_object_get(spec, "multiple_of");
	snprintf(field, sizeof(field), "%s.default", prefix);
	if (!dflt)
		return cuco_json_fail(&L->src, CUCO_ERR_PARSE, field, 0,
		                      "required field is missing");
	if (strcmp(type, "int") == 0) {
		snprintf(field, sizeof(field), "%s.min", prefix);
		if (!json_is_integer(min))
			return cuco_json_fail_type(&L->src, field, "an integer", min);
		snprintf(field, sizeof(field), "%s.max", prefix);
		if (!json_is_integer(max))
			return cuco_json_fail_type(&L->src, field, "an integer", max);
		if (json_integer_value(max) < json_integer_value(min))
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "max is less than min");
		if (mult && (!json_is_integer(mult) || json_integer_value(mult) <= 0)) {
			snprintf(field, sizeof(field), "%s.multiple_of", prefix);
			return cuco_json_fail_type(&L->src, field, "a positive integer", mult);
		}
		snprintf(field, sizeof(field), "%s.default", prefix);
		if (!json_is_integer(dflt))
			return cuco_json_fail_type(&L->src, field, "an integer", dflt);
		if (json_integer_value(dflt) < json_integer_value(min) ||
		    json_integer_value(dflt) > json_integer_value(max))
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "%" JSON_INTEGER_FORMAT
			                      " is out of range %" JSON_INTEGER_FORMAT
			                      "..%" JSON_INTEGER_FORMAT,
			                      json_integer_value(dflt), json_integer_value(min),
			                      json_integer_value(max));
		if (mult && json_integer_value(dflt) % json_integer_value(mult))
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "%" JSON_INTEGER_FORMAT
			                      " is not a multiple of %" JSON_INTEGER_FORMAT,
			                      json_integer_value(dflt), json_integer_value(mult));
	} else if (strcmp(type, "bool") == 0) {
		if (!json_is_boolean(dflt))
			return cuco_json_fail_type(&L->src, field, "true or false", dflt);
	} else if (strcmp(type, "enum") == 0) {
		size_t k;
		const json_t *e;
		int found = 0;

		snprintf(field, sizeof(field), "%s.values", prefix);
		if (!json_is_array(vals) || json_array_size(vals) == 0)
			return cuco_json_fail_type(&L->src, field, "a non-empty array", vals);
		json_array_foreach(vals, k, e)
		{
			if (json_equal((json_t *)e, (json_t *)dflt))
				found = 1;
		}
		snprintf(field, sizeof(field), "%s.default", prefix);
		if (!found)
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "not one of values");
	} else {
		snprintf(field, sizeof(field), "%s.type", prefix);
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "\"%s\" is not a knob type; expected int, bool or enum",
		                      type);
	}
	return CUCO_OK;
}

int cuco_manifest_parse_knobs(struct mload *L, const json_t *root)
{
	const json_t *knobs = json_object_get(root, "knobs"), *spec;
	const char *name;
	int rc;

	if (!knobs) {
		L->m->knobs_json = cuco_xstrdup("{}");
		return CUCO_OK;
	}
	if (!json_is_object(knobs))
		return cuco_json_fail_type(&L->src, "knobs", "an object of knob specs", knobs);
	json_object_foreach((json_t *)knobs, name, spec)
	{
		rc = parse_knob(L, name, spec);
		if (rc)
			return rc;
		L->m->nknobs++;
	}
	L->m->knobs_json = json_dumps(knobs, JSON_COMPACT | JSON_SORT_KEYS);
	if (!L->m->knobs_json)
		return cuco_err_set(L->src.err, CUCO_ERR_NOMEM, "%s: cannot serialise knobs",
		                    L->src.path);
	return CUCO_OK;
}
