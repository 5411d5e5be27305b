/*
 * shape.c - a workload's shapes: the manifest's params, shapes and
 * shape_rules sections, the rules checked for a rank count, a shape given by
 * its values ("4096x14784x8192", "M=4096,N=14784,K=8192"), and the programs'
 * command line of a shape (the "argv" templates).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "workload/manifest_load.h"
#include "workload/shape.h"

static const char *const rule_fields[] = {"param", "per_rank", "min", "multiple_of", "why"};

/* Whether value v of a shape's parameter meets rule r on `ranks` ranks; else
 * a message (without the position) in msg. */
static int rule_holds(const struct cuco_manifest *m, const struct cuco_shape_rule *r, long long v,
                      int ranks, char *msg, size_t len)
{
	const char *p = m->params[r->param];
	char what[96];

	if (r->per_rank && ranks > 1) {
		if (v % ranks) {
			snprintf(msg, len, "%s = %lld does not divide among %d ranks", p, v, ranks);
			return 0;
		}
		snprintf(what, sizeof(what), "%s = %lld on %d ranks: each rank's %lld", p, v, ranks,
		         v / ranks);
		v /= ranks;
	} else {
		snprintf(what, sizeof(what), "%s = %lld", p, v);
	}
	if (r->min && v < r->min) {
		snprintf(msg, len, "%s is under %lld", what, r->min);
		return 0;
	}
	if (r->multiple && v % r->multiple) {
		snprintf(msg, len, "%s is not a multiple of %lld", what, r->multiple);
		return 0;
	}
	return 1;
}

int cuco_manifest_parse_rules(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *arr = json_object_get(root, "shape_rules"), *obj, *v;
	size_t i;
	int rc;

	if (!arr)
		return CUCO_OK;
	if (!json_is_array(arr))
		return cuco_json_fail_type(&L->src, "shape_rules", "an array of rules", arr);
	m->rules = cuco_xcalloc(json_array_size(arr) + 1, sizeof(*m->rules));
	json_array_foreach(arr, i, obj)
	{
		struct cuco_shape_rule *r = &m->rules[m->nrules];
		char prefix[64], field[96];
		const char *s;
		int j;

		snprintf(prefix, sizeof(prefix), "shape_rules[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(&L->src, prefix, "an object", obj);
		if ((rc = cuco_manifest_check_unknown(L, obj, prefix, rule_fields, 5, "field")))
			return rc;
		snprintf(field, sizeof(field), "%s.param", prefix);
		if ((rc = cuco_manifest_get_string(L, obj, "param", field, 1, &s)))
			return rc;
		r->param = -1;
		for (j = 0; j < m->nparams; j++)
			if (strcmp(m->params[j], s) == 0)
				r->param = j;
		if (r->param < 0)
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "\"%s\" is not one of params", s);
		snprintf(field, sizeof(field), "%s.per_rank", prefix);
		v = json_object_get(obj, "per_rank");
		if (v && !json_is_boolean(v))
			return cuco_json_fail_type(&L->src, field, "true or false", v);
		r->per_rank = v && json_is_true(v);
		for (j = 0; j < 2; j++) {
			const char *key = j ? "multiple_of" : "min";
			snprintf(field, sizeof(field), "%s.%s", prefix, key);
			v = json_object_get(obj, key);
			if (!v)
				continue;
			if (!json_is_integer(v) || json_integer_value(v) < 1)
				return cuco_json_fail_type(&L->src, field, "a positive integer", v);
			*(j ? &r->multiple : &r->min) = json_integer_value(v);
		}
		if (!r->per_rank && !r->min && !r->multiple)
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, prefix, 0,
			                      "a rule needs per_rank, min or multiple_of");
		snprintf(field, sizeof(field), "%s.why", prefix);
		if ((rc = cuco_manifest_get_string(L, obj, "why", field, 0, &s)))
			return rc;
		r->why = cuco_xstrdup(s ? s : "");
		cuco_manifest_position(L, prefix, &r->line, &r->col);
		m->nrules++;
	}
	/* Rules that do not depend on the rank count hold for every shape now. */
	for (int k = 0; k < m->nshapes; k++)
		for (int j = 0; j < m->nrules; j++) {
			const struct cuco_shape_rule *r = &m->rules[j];
			char msg[256], field[96];

			if (r->per_rank ||
			    rule_holds(m, r, m->shapes[k].params[r->param], 1, msg, sizeof(msg)))
				continue;
			snprintf(field, sizeof(field), "shapes[%d].%s", k, m->params[r->param]);
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "%s (shape_rules[%d]%s%s)", msg, j,
			                      r->why[0] ? ": " : "", r->why);
		}
	return CUCO_OK;
}

/* Shape k (sh) against m's rules on `ranks` ranks; with rank_free only the
 * rules that do not depend on the rank count. */
static int check_rules(const struct cuco_manifest *m, const struct cuco_shape *sh, int k, int ranks,
                       int rank_free, struct cuco_err *err)
{
	for (int j = 0; j < m->nrules; j++) {
		const struct cuco_shape_rule *r = &m->rules[j];
		const char *at;
		char msg[256], field[96];
		int line = 0, col = 0;

		if ((rank_free && r->per_rank) ||
		    rule_holds(m, r, sh->params[r->param], ranks, msg, sizeof(msg)))
			continue;
		if (k >= m->nshapes - m->nspec) /* given by its values: no place in the file */
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "shape %s: %s (%s: shape_rules[%d], line %d%s%s)",
			                    sh->name, msg, m->path, j, r->line,
			                    r->why[0] ? ": " : "", r->why);
		/* the place in the file, found now: loading stays linear in the shapes */
		snprintf(field, sizeof(field), "shapes[%d].%s", k, m->params[r->param]);
		at = m->text ? cuco_json_locate(m->text, m->text_len, field, 0) : NULL;
		if (at)
			cuco_json_linecol(m->text, at, &line, &col);
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s:%d:%d: %s: shape %s: %s (shape_rules[%d], line %d%s%s)",
		                    m->path, line, col, field, sh->name, msg, j, r->line,
		                    r->why[0] ? ": " : "", r->why);
	}
	return CUCO_OK;
}

int cuco_manifest_check_shape(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                              struct cuco_err *err)
{
	int k = (int)(sh - m->shapes);

	if (k < 0 || k >= m->nshapes)
		return cuco_err_set(err, CUCO_ERR_INVALID, "shape %s is not one of %s's", sh->name,
		                    m->path);
	return check_rules(m, sh, k, ranks, 0, err);
}

int cuco_manifest_parse_params(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *arr = json_object_get(root, "params"), *v;
	size_t i;
	int j;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return cuco_json_fail_type(&L->src, "params",
		                           "a non-empty array of parameter names", arr);
	if (json_array_size(arr) > CUCO_MAX_PARAMS)
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "params", 0,
		                      "%zu parameters; at most %d are allowed",
		                      json_array_size(arr), CUCO_MAX_PARAMS);
	json_array_foreach(arr, i, v)
	{
		char field[64];
		const char *s;

		snprintf(field, sizeof(field), "params[%zu]", i);
		if (!json_is_string(v))
			return cuco_json_fail_type(&L->src, field, "a parameter name", v);
		s = json_string_value(v);
		if (!cuco_manifest_is_ident(s) || strlen(s) >= CUCO_NAME_MAX ||
		    strcmp(s, "name") == 0 || strcmp(s, "argv") == 0)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a valid parameter name (an identifier of at "
			    "most %d characters, not \"name\" or \"argv\")",
			    s, CUCO_NAME_MAX - 1);
		for (j = 0; j < m->nparams; j++)
			if (strcmp(m->params[j], s) == 0)
				return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
				                      "\"%s\" is listed twice (also params[%d])", s,
				                      j);
		snprintf(m->params[m->nparams++], CUCO_NAME_MAX, "%s", s);
	}
	return CUCO_OK;
}

/* A shape's name and its index, sorted to find names given twice. */
struct named {
	const char *name;
	int i;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/*
 * The first shape (lowest index) whose string "name" an earlier shape has too:
 * *dup its index, *dup_of the earlier one's; *dup -1 when there is none. Sorted,
 * not pairwise: a manifest of many shapes loads in n log n.
 */
static void first_duplicate(const json_t *arr, int *dup, int *dup_of)
{
	size_t n = json_array_size(arr), k = 0;
	struct named *v = cuco_xcalloc(n ? n : 1, sizeof(*v));

	*dup = *dup_of = -1;
	for (size_t i = 0; i < n; i++) {
		const json_t *name = json_object_get(json_array_get(arr, i), "name");

		if (json_is_string(name)) {
			v[k].name = json_string_value(name);
			v[k++].i = (int)i;
		}
	}
	qsort(v, k, sizeof(*v), cmp_named);
	for (size_t i = 1; i < k; i++) /* the second of each run of equal names */
		if (!strcmp(v[i].name, v[i - 1].name) &&
		    (i < 2 || strcmp(v[i].name, v[i - 2].name)) && (*dup < 0 || v[i].i < *dup)) {
			*dup = v[i].i;
			*dup_of = v[i - 1].i;
		}
	free(v);
}

int cuco_manifest_parse_shapes(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *arr = json_object_get(root, "shapes"), *obj;
	const char *s;
	size_t i;
	int j, rc, dup, dup_of;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return cuco_json_fail_type(&L->src, "shapes", "a non-empty array of shapes", arr);
	first_duplicate(arr, &dup, &dup_of);
	/* room for the shapes a command gives by their values (cuco_manifest_shape_spec) */
	m->shapes =
	    cuco_xcalloc(json_array_size(arr) + CUCO_MANIFEST_SPEC_SHAPES, sizeof(*m->shapes));
	m->shape_argv =
	    cuco_xcalloc(json_array_size(arr) + CUCO_MANIFEST_SPEC_SHAPES, sizeof(*m->shape_argv));
	json_array_foreach(arr, i, obj)
	{
		struct cuco_shape *sh = &m->shapes[m->nshapes];
		char field[128];
		const char *key;
		const json_t *v;

		snprintf(field, sizeof(field), "shapes[%zu]", i);
		if (!json_is_object(obj))
			return cuco_json_fail_type(&L->src, field, "an object", obj);
		snprintf(field, sizeof(field), "shapes[%zu].name", i);
		rc = cuco_manifest_get_string(L, obj, "name", field, 1, &s);
		if (rc)
			return rc;
		if (!cuco_manifest_is_name(s, 1) || strlen(s) >= CUCO_NAME_MAX)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a valid shape name (letters, digits, '_', '-', "
			    "'.', at most %d characters)",
			    s, CUCO_NAME_MAX - 1);
		if ((int)i == dup)
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "shape \"%s\" is defined twice (also shapes[%d])", s,
			                      dup_of);
		snprintf(sh->name, sizeof(sh->name), "%s", s);

		/* Every key is "name", "argv" or a declared parameter ... */
		json_object_foreach((json_t *)obj, key, v)
		{
			int known = strcmp(key, "name") == 0 || strcmp(key, "argv") == 0;

			for (j = 0; j < m->nparams && !known; j++)
				known = strcmp(key, m->params[j]) == 0;
			if (!known) {
				const char *cands[CUCO_MAX_PARAMS];
				struct cuco_strbuf list = CUCO_STRBUF_INIT;
				const char *hint;

				for (j = 0; j < m->nparams; j++) {
					cands[j] = m->params[j];
					cuco_strbuf_addf(&list, "%s%s", j ? ", " : "",
					                 m->params[j]);
				}
				hint = cuco_suggest(key, cands, m->nparams);
				snprintf(field, sizeof(field), "shapes[%zu].%s", i, key);
				rc = cuco_json_fail(&L->src, CUCO_ERR_PARSE, field, 1,
				                    "not a declared parameter%s%s%s; params are %s",
				                    hint ? " (did you mean \"" : "",
				                    hint ? hint : "", hint ? "\"?)" : "", list.buf);
				cuco_strbuf_release(&list);
				return rc;
			}
		}
		/* ... and every declared parameter is set, to a positive integer. */
		sh->nparams = m->nparams;
		for (j = 0; j < m->nparams; j++) {
			snprintf(field, sizeof(field), "shapes[%zu].%s", i, m->params[j]);
			v = json_object_get(obj, m->params[j]);
			if (!v)
				return cuco_json_fail(
				    &L->src, CUCO_ERR_PARSE, field, 0,
				    "missing; every shape sets every parameter in params");
			if (!json_is_integer(v))
				return cuco_json_fail_type(&L->src, field, "a positive integer", v);
			if (json_integer_value(v) <= 0)
				return cuco_json_fail(
				    &L->src, CUCO_ERR_INVALID, field, 0,
				    "expected a positive integer, got %" JSON_INTEGER_FORMAT,
				    json_integer_value(v));
			snprintf(sh->param_names[j], CUCO_NAME_MAX, "%s", m->params[j]);
			sh->params[j] = json_integer_value(v);
		}
		snprintf(field, sizeof(field), "shapes[%zu].argv", i);
		if ((rc = cuco_manifest_get_string(L, obj, "argv", field, 0, &s)))
			return rc;
		m->shape_argv[m->nshapes] = s ? cuco_xstrdup(s) : NULL;
		m->nshapes++;
	}

	rc = cuco_manifest_get_string(L, root, "default_shape", "default_shape", 1, &s);
	if (rc)
		return rc;
	if (!cuco_manifest_shape(m, s)) {
		struct cuco_strbuf names = CUCO_STRBUF_INIT;

		for (j = 0; j < m->nshapes; j++)
			cuco_strbuf_addf(&names, "%s%s", j ? ", " : "", m->shapes[j].name);
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, "default_shape", 0,
		                    "no shape is named \"%s\" (shapes: %s)", s, names.buf);
		cuco_strbuf_release(&names);
		return rc;
	}
	m->default_shape = cuco_xstrdup(s);
	return CUCO_OK;
}

/* Parse a shape given by its values into vals (m's params order): 0, or -1
 * with err set when it names what is wrong, err->code 0 when it is no such form. */
static int parse_spec(const struct cuco_manifest *m, const char *text, long long *vals,
                      struct cuco_err *err)
{
	const char *p = text;
	int named = strchr(text, '=') != NULL, given[CUCO_MAX_PARAMS] = {0};

	for (int n = 0; *p; n++) {
		char *end;
		int j = n;
		long long v;

		if (named) {
			size_t len = strcspn(p, "=,");
			if (p[len] != '=')
				return -1;
			for (j = 0; j < m->nparams; j++)
				if (strlen(m->params[j]) == len &&
				    strncmp(m->params[j], p, len) == 0)
					break;
			if (j == m->nparams) {
				cuco_err_set(err, CUCO_ERR_USAGE,
				             "shape %s: %.*s is not a parameter of workload %s",
				             text, (int)len, p, m->name);
				return -1;
			}
			if (given[j]) {
				cuco_err_set(err, CUCO_ERR_USAGE, "shape %s: %s is given twice",
				             text, m->params[j]);
				return -1;
			}
			p += len + 1;
		} else if (n >= m->nparams) {
			return -1;
		}
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (errno || v < 1 || v > INT_MAX)
			return -1;
		p = end;
		if (*p) {
			if (*p != (named ? ',' : 'x') || !p[1])
				return -1;
			p++;
		}
		vals[j] = v;
		given[j] = 1;
	}
	for (int j = 0; j < m->nparams; j++)
		if (!given[j]) {
			if (named)
				cuco_err_set(err, CUCO_ERR_USAGE, "shape %s: %s is not given", text,
				             m->params[j]);
			return -1;
		}
	return 0;
}

const struct cuco_shape *cuco_manifest_shape_spec(struct cuco_manifest *m, const char *text,
                                                  struct cuco_err *err)
{
	const struct cuco_shape *found = cuco_manifest_shape(m, text);
	long long vals[CUCO_MAX_PARAMS];
	char name[4 * CUCO_NAME_MAX] = "";
	struct cuco_shape *sh;
	size_t len = 0;

	if (found)
		return found;
	err->code = 0;
	if (parse_spec(m, text, vals, err)) {
		struct cuco_strbuf names = CUCO_STRBUF_INIT, forms = CUCO_STRBUF_INIT;

		if (err->code)
			return NULL;
		for (int j = 0; j < m->nparams; j++)
			cuco_strbuf_addf(&forms, "%s%s", j ? "x" : "", m->params[j]);
		for (int j = 0; j < m->nshapes - m->nspec; j++)
			cuco_strbuf_addf(&names, "%s%s", j ? ", " : "", m->shapes[j].name);
		cuco_err_set(err, CUCO_ERR_USAGE,
		             "shape %s: workload %s has no such shape (%s) and this is no shape "
		             "given by its values (%s, or %s=...,...)",
		             text, m->name, names.buf, forms.buf, m->params[0]);
		cuco_strbuf_release(&names);
		cuco_strbuf_release(&forms);
		return NULL;
	}
	/* the values of a shape m already has: that shape, under its own name */
	for (int k = 0; k < m->nshapes; k++) {
		int same = 1;
		for (int j = 0; j < m->nparams && same; j++)
			same = m->shapes[k].params[j] == vals[j];
		if (same)
			return &m->shapes[k];
	}
	for (int j = 0; j < m->nparams && len < sizeof(name); j++)
		len += (size_t)snprintf(name + len, sizeof(name) - len, "%s%lld", j ? "x" : "",
		                        vals[j]);
	if ((found = cuco_manifest_shape(m, name))) {
		for (int j = 0; j < m->nparams && found; j++)
			if (found->params[j] != vals[j])
				found = NULL;
		if (!found)
			cuco_err_set(err, CUCO_ERR_USAGE,
			             "shape %s: %s is the name of another of %s's shapes", text,
			             name, m->path);
		return found;
	}
	if (len >= CUCO_NAME_MAX) {
		cuco_err_set(
		    err, CUCO_ERR_USAGE,
		    "shape %s: its name %s would be longer than %d characters; add it to %s", text,
		    name, CUCO_NAME_MAX - 1, m->path);
		return NULL;
	}
	if (m->nspec >= CUCO_MANIFEST_SPEC_SHAPES) {
		cuco_err_set(err, CUCO_ERR_USAGE,
		             "shape %s: more than %d shapes given by their values; add them to %s",
		             text, CUCO_MANIFEST_SPEC_SHAPES, m->path);
		return NULL;
	}
	sh = &m->shapes[m->nshapes];
	memset(sh, 0, sizeof(*sh));
	snprintf(sh->name, sizeof(sh->name), "%s", name);
	sh->nparams = m->nparams;
	for (int j = 0; j < m->nparams; j++) {
		snprintf(sh->param_names[j], CUCO_NAME_MAX, "%s", m->params[j]);
		sh->params[j] = vals[j];
	}
	m->nshapes++;
	m->nspec++;
	/* The rules that hold on any rank count now; per_rank ones wait for it. */
	if (check_rules(m, sh, m->nshapes - 1, 1, 1, err)) {
		m->nshapes--;
		m->nspec--;
		return NULL;
	}
	return sh;
}

const struct cuco_shape *cuco_manifest_shape(const struct cuco_manifest *m, const char *name)
{
	int i;

	for (i = 0; i < m->nshapes; i++)
		if (strcmp(m->shapes[i].name, name) == 0)
			return &m->shapes[i];
	return NULL;
}

int cuco_manifest_argv_expand(const char *tmpl, const struct cuco_shape *sh, int ranks,
                              struct cuco_strbuf *out, char *bad, size_t badlen)
{
	const char *p = tmpl;

	while (*p) {
		size_t n = 0;
		int j;

		if (*p != '{' || !(isalpha((unsigned char)p[1]) || p[1] == '_')) {
			cuco_strbuf_addch(out, *p++);
			continue;
		}
		while (isalnum((unsigned char)p[1 + n]) || p[1 + n] == '_')
			n++;
		if (p[1 + n] != '}') { /* not a placeholder: kept as it is */
			cuco_strbuf_add(out, p, n + 1);
			p += n + 1;
			continue;
		}
		if (n == 5 && !strncmp(p + 1, "ranks", 5)) {
			cuco_strbuf_addf(out, "%d", ranks);
			p += n + 2;
			continue;
		}
		for (j = 0; j < sh->nparams; j++)
			if (strlen(sh->param_names[j]) == n &&
			    !strncmp(sh->param_names[j], p + 1, n))
				break;
		if (j == sh->nparams) {
			snprintf(bad, badlen, "%.*s", (int)n, p + 1);
			return -1;
		}
		cuco_strbuf_addf(out, "%lld", sh->params[j]);
		p += n + 2;
	}
	return 0;
}

/* Shape k's template: its own, else the manifest's; NULL for none. */
static const char *argv_template(const struct cuco_manifest *m, int k)
{
	if (k >= 0 && k < m->nshapes && m->shape_argv && m->shape_argv[k])
		return m->shape_argv[k];
	return m->argv;
}

int cuco_manifest_argv(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                       struct cuco_strbuf *out, struct cuco_err *err)
{
	const char *tmpl = argv_template(m, (int)(sh - m->shapes));
	char bad[CUCO_NAME_MAX + 8];

	cuco_strbuf_reset(out);
	if (!tmpl)
		return CUCO_OK;
	if (cuco_manifest_argv_expand(tmpl, sh, ranks, out, bad, sizeof(bad)))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s: argv of shape %s: {%s} names no parameter of the shape",
		                    m->path, sh->name, bad);
	if (out->len >= sizeof(sh->argv))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s: argv of shape %s on %d ranks is %zu characters long; at "
		                    "most %zu fit",
		                    m->path, sh->name, ranks, out->len, sizeof(sh->argv) - 1);
	return CUCO_OK;
}

/* Template tmpl (at field) against shape k: its names known, and on the largest rank count
 * the manifest lists, the command line short enough. */
static int check_template(struct mload *L, const char *tmpl, const char *field, int k)
{
	struct cuco_manifest *m = L->m;
	const struct cuco_shape *sh = &m->shapes[k];
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char bad[CUCO_NAME_MAX + 8];
	int ranks = 1, rc = CUCO_OK;

	for (int r = 0; r < m->nranks; r++)
		if (m->ranks[r] > ranks)
			ranks = m->ranks[r];
	if (cuco_manifest_argv_expand(tmpl, sh, ranks, &sb, bad, sizeof(bad))) {
		struct cuco_strbuf list = CUCO_STRBUF_INIT;

		for (int j = 0; j < m->nparams; j++)
			cuco_strbuf_addf(&list, "%s{%s}", j ? ", " : "", m->params[j]);
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                    "{%s} names no parameter (the template may use %s and "
		                    "{ranks}, the rank count)",
		                    bad, list.buf);
		cuco_strbuf_release(&list);
	} else if (sb.len >= sizeof(sh->argv)) {
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                    "shape %s on %d ranks gives a command line of %zu characters; "
		                    "at most %zu fit",
		                    sh->name, ranks, sb.len, sizeof(sh->argv) - 1);
	}
	cuco_strbuf_release(&sb);
	return rc;
}

int cuco_manifest_parse_argv(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const char *s;
	int rc;

	if ((rc = cuco_manifest_get_string(L, root, "argv", "argv", 0, &s)))
		return rc;
	m->argv = s ? cuco_xstrdup(s) : NULL;
	for (int k = 0; k < m->nshapes; k++) {
		char field[64];

		if (m->shape_argv[k])
			snprintf(field, sizeof(field), "shapes[%d].argv", k);
		else
			snprintf(field, sizeof(field), "argv");
		if (argv_template(m, k) && (rc = check_template(L, argv_template(m, k), field, k)))
			return rc;
	}
	return CUCO_OK;
}
