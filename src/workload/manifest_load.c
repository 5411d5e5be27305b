/*
 * manifest_load.c - the field helpers a manifest's loader and its shape and
 * knob parsers share (manifest_load.h): names, strings, unknown members,
 * positions. The lowest file of src/workload.
 */
#include "workload/manifest_load.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* A C identifier: parameter and knob names. */
int cuco_manifest_is_ident(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Workload, program and shape names: letters, digits, '_', '-', '.'; not starting with '.'. */
int cuco_manifest_is_name(const char *s, int allow_dot)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' ||
		      (allow_dot && *s == '.')))
			return 0;
	return 1;
}

/* Required (or optional, *out = NULL when absent) string member. */
int cuco_manifest_get_string(struct mload *L, const json_t *obj, const char *key, const char *field,
                             int required, const char **out)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v && !required)
		return CUCO_OK;
	if (!json_is_string(v))
		return cuco_json_fail_type(&L->src, field, "a string", v);
	*out = json_string_value(v);
	return CUCO_OK;
}

int cuco_manifest_check_unknown(struct mload *L, const json_t *obj, const char *prefix,
                                const char *const *known, int nknown, const char *what)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		char field[256];
		const char *hint;
		int i, ok = 0;

		for (i = 0; i < nknown; i++)
			if (strcmp(key, known[i]) == 0)
				ok = 1;
		if (ok)
			continue;
		snprintf(field, sizeof(field), "%s%s%s", prefix, prefix[0] ? "." : "", key);
		hint = cuco_suggest(key, known, nknown);
		if (hint)
			return cuco_json_fail(&L->src, CUCO_ERR_PARSE, field, 1,
			                      "unknown %s (did you mean \"%s\"?)", what, hint);
		return cuco_json_fail(&L->src, CUCO_ERR_PARSE, field, 1, "unknown %s", what);
	}
	return CUCO_OK;
}

/* Line and column of the value at field (a path such as "shapes[1].K"). */
void cuco_manifest_position(struct mload *L, const char *field, int *line, int *col)
{
	const char *p = cuco_json_locate(L->src.text, L->src.len, field, 0);

	*line = *col = 0;
	if (p)
		cuco_json_linecol(L->src.text, p, line, col);
}
