/* manifest.c - parse and validate workloads/<name>/manifest.json, with positions in errors. */
#include "workload/manifest.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- manifest --------------------------------------------------------------- */

struct mload {
	struct cuco_json_src src; /* the manifest's text, for errors */
	struct cuco_manifest *m;
};

static int is_ident(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

/* Workload, program and shape names: letters, digits, '_', '-', '.'; not starting with '.'. */
static int is_name(const char *s, int allow_dot)
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
static int get_string(struct mload *L, const json_t *obj, const char *key, const char *field,
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

/* Resolve file against the manifest's directory and check it is a readable regular file. */
static int resolve_file(struct mload *L, const json_t *obj, const char *key, const char *field,
                        char **out)
{
	const char *rel;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct stat st;
	int rc;

	*out = NULL;
	rc = get_string(L, obj, key, field, 1, &rel);
	if (rc)
		return rc;
	if (!rel[0])
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "expected a file name, got \"\"");
	if (rel[0] == '/')
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "\"%s\" is an absolute path; give a path relative to %s", rel,
		                      L->m->dir);
	cuco_strbuf_addf(&sb, "%s/%s", L->m->dir, rel);
	if (stat(sb.buf, &st) != 0) {
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                    "no file \"%s\" next to the manifest (%s: %s)", rel, sb.buf,
		                    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                    "\"%s\" in %s is not a regular file", rel, L->m->dir);
		goto out;
	}
	*out = cuco_strbuf_detach(&sb, NULL);
	rc = CUCO_OK;
out:
	cuco_strbuf_release(&sb);
	return rc;
}

static const char *const top_fields[] = {
    "name",         "description", "abi",    "dtype",         "tolerance",
    "ranks",        "params",      "shapes", "default_shape", "workload",
    "host_program", "programs",    "knobs",  "requires",      "shape_rules",
};
#define NTOP ((int)(sizeof(top_fields) / sizeof(top_fields[0])))

static int check_unknown(struct mload *L, const json_t *obj, const char *prefix,
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
static void position(struct mload *L, const char *field, int *line, int *col)
{
	const char *p = cuco_json_locate(L->src.text, L->src.len, field, 0);

	*line = *col = 0;
	if (p)
		cuco_json_linecol(L->src.text, p, line, col);
}

static int parse_header(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *v;
	const char *s;
	int rc;

	v = json_object_get(root, "abi");
	if (!v)
		return cuco_json_fail(&L->src, CUCO_ERR_PARSE, "abi", 0,
		                      "required field is missing (use %d)", CUCO_ABI_VERSION);
	if (!json_is_integer(v))
		return cuco_json_fail_type(&L->src, "abi", "an integer", v);
	if (json_integer_value(v) != CUCO_ABI_VERSION)
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "abi", 0,
		                      "ABI version %" JSON_INTEGER_FORMAT
		                      " is not supported; this cuco "
		                      "speaks ABI %d",
		                      json_integer_value(v), CUCO_ABI_VERSION);
	m->abi = CUCO_ABI_VERSION;

	rc = get_string(L, root, "name", "name", 1, &s);
	if (rc)
		return rc;
	if (!is_name(s, 0) || strlen(s) >= CUCO_MANIFEST_NAME_MAX)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, "name", 0,
		    "\"%s\" is not a valid workload name (letters, digits, '_' and '-', "
		    "at most %d characters)",
		    s, CUCO_MANIFEST_NAME_MAX - 1);
	m->name = cuco_xstrdup(s);

	rc = get_string(L, root, "description", "description", 0, &s);
	if (rc)
		return rc;
	m->description = cuco_xstrdup(s ? s : "");

	rc = get_string(L, root, "dtype", "dtype", 1, &s);
	if (rc)
		return rc;
	if (strcmp(s, "bf16") == 0)
		m->dtype = CUCO_DTYPE_BF16;
	else if (strcmp(s, "f16") == 0)
		m->dtype = CUCO_DTYPE_F16;
	else if (strcmp(s, "f32") == 0)
		m->dtype = CUCO_DTYPE_F32;
	else
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "dtype", 0,
		                      "\"%s\" is not a dtype; expected one of bf16, f16, f32", s);
	m->dtype_name = cuco_xstrdup(s);

	v = json_object_get(root, "tolerance");
	if (!json_is_number(v))
		return cuco_json_fail_type(&L->src, "tolerance", "a number", v);
	m->tolerance = json_number_value(v);
	if (!(m->tolerance > 0.0 && m->tolerance < 1.0))
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, "tolerance", 0,
		    "%g is out of range; expected a number between 0 and 1 (exclusive)",
		    m->tolerance);
	return CUCO_OK;
}

/* "requires": {"cc": "9.0", "why": "..."}: the GPUs the programs run on. */
static int parse_requires(struct mload *L, const json_t *root)
{
	static const char *const known[] = {"cc", "why"};
	const json_t *obj = json_object_get(root, "requires"), *v;
	const char *s;
	int major, minor, n = 0, rc;

	L->m->requires_why = cuco_xstrdup("");
	if (!obj)
		return CUCO_OK;
	if (!json_is_object(obj))
		return cuco_json_fail_type(&L->src, "requires", "an object", obj);
	rc = check_unknown(L, obj, "requires", known, 2, "field");
	if (rc)
		return rc;
	v = json_object_get(obj, "cc");
	if (!json_is_string(v))
		return cuco_json_fail_type(&L->src, "requires.cc",
		                           "a compute capability string such as \"9.0\"", v);
	s = json_string_value(v);
	if (sscanf(s, "%d.%d%n", &major, &minor, &n) != 2 || s[n] || major < 1 || major > 99 ||
	    minor < 0 || minor > 9)
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "requires.cc", 0,
		                      "\"%s\" is not a compute capability; expected major.minor, "
		                      "e.g. \"9.0\"",
		                      s);
	L->m->requires_cc = 10 * major + minor;
	rc = get_string(L, obj, "why", "requires.why", 0, &s);
	if (rc)
		return rc;
	free(L->m->requires_why);
	L->m->requires_why = cuco_xstrdup(s ? s : "");
	return CUCO_OK;
}

int cuco_manifest_check_cc(const struct cuco_manifest *m, int cc, struct cuco_err *err)
{
	if (!m->requires_cc || !cc || cc == m->requires_cc)
		return CUCO_OK;
	return cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
	                    "workload %s needs GPUs of compute capability %d.%d%s%s%s, and this "
	                    "node's have %d.%d",
	                    m->name, m->requires_cc / 10, m->requires_cc % 10,
	                    m->requires_why[0] ? " (" : "", m->requires_why,
	                    m->requires_why[0] ? ")" : "", cc / 10, cc % 10);
}

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

static int parse_rules(struct mload *L, const json_t *root)
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
		if ((rc = check_unknown(L, obj, prefix, rule_fields, 5, "field")))
			return rc;
		snprintf(field, sizeof(field), "%s.param", prefix);
		if ((rc = get_string(L, obj, "param", field, 1, &s)))
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
		if ((rc = get_string(L, obj, "why", field, 0, &s)))
			return rc;
		r->why = cuco_xstrdup(s ? s : "");
		position(L, prefix, &r->line, &r->col);
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
		const int *pos = m->shape_pos[k][r->param];
		char msg[256];

		if ((rank_free && r->per_rank) ||
		    rule_holds(m, r, sh->params[r->param], ranks, msg, sizeof(msg)))
			continue;
		if (k >= m->nshapes - m->nspec) /* given by its values: no place in the file */
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "shape %s: %s (%s: shape_rules[%d], line %d%s%s)",
			                    sh->name, msg, m->path, j, r->line,
			                    r->why[0] ? ": " : "", r->why);
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "%s:%d:%d: shapes[%d].%s: shape %s: %s (shape_rules[%d], line %d%s%s)", m->path,
		    pos[0], pos[1], k, m->params[r->param], sh->name, msg, j, r->line,
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

int cuco_manifest_check_ranks(const struct cuco_manifest *m, int ranks, int allow_one,
                              struct cuco_err *err)
{
	char list[96] = "";
	size_t n = 0;

	if (allow_one && ranks == 1)
		return CUCO_OK;
	for (int i = 0; i < m->nranks; i++) {
		if (m->ranks[i] == ranks)
			return CUCO_OK;
		if (n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%d",
			                      i == 0               ? ""
			                      : i == m->nranks - 1 ? " or "
			                                           : ", ",
			                      m->ranks[i]);
	}
	return cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
	                    "%s: ranks: workload %s runs on %s ranks, not %d%s", m->path, m->name,
	                    list, ranks,
	                    allow_one ? " (or on 1, to check its compute side on one GPU)" : "");
}

static int parse_ranks(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *arr = json_object_get(root, "ranks"), *v;
	size_t i, j;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return cuco_json_fail_type(&L->src, "ranks", "a non-empty array of rank counts",
		                           arr);
	m->ranks = cuco_xcalloc(json_array_size(arr), sizeof(*m->ranks));
	json_array_foreach(arr, i, v)
	{
		char field[64];

		snprintf(field, sizeof(field), "ranks[%zu]", i);
		if (!json_is_integer(v))
			return cuco_json_fail_type(&L->src, field, "an integer >= 2", v);
		if (json_integer_value(v) < 2 || json_integer_value(v) > 1 << 20)
			return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
			                      "expected an integer >= 2, got %" JSON_INTEGER_FORMAT,
			                      json_integer_value(v));
		for (j = 0; j < i; j++)
			if (m->ranks[j] == json_integer_value(v))
				return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
				                      "%d is listed twice (also ranks[%zu])",
				                      m->ranks[j], j);
		m->ranks[m->nranks++] = (int)json_integer_value(v);
	}
	return CUCO_OK;
}

static int parse_params(struct mload *L, const json_t *root)
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
		if (!is_ident(s) || strlen(s) >= CUCO_NAME_MAX || strcmp(s, "name") == 0)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a valid parameter name (an identifier of at "
			    "most %d characters, not \"name\")",
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

static int parse_shapes(struct mload *L, const json_t *root)
{
	struct cuco_manifest *m = L->m;
	const json_t *arr = json_object_get(root, "shapes"), *obj;
	const char *s;
	size_t i;
	int j, rc;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return cuco_json_fail_type(&L->src, "shapes", "a non-empty array of shapes", arr);
	/* room for the shapes a command gives by their values (cuco_manifest_shape_spec) */
	m->shapes =
	    cuco_xcalloc(json_array_size(arr) + CUCO_MANIFEST_SPEC_SHAPES, sizeof(*m->shapes));
	m->shape_pos =
	    cuco_xcalloc(json_array_size(arr) + CUCO_MANIFEST_SPEC_SHAPES, sizeof(*m->shape_pos));
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
		rc = get_string(L, obj, "name", field, 1, &s);
		if (rc)
			return rc;
		if (!is_name(s, 1) || strlen(s) >= CUCO_NAME_MAX)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "\"%s\" is not a valid shape name (letters, digits, '_', '-', "
			    "'.', at most %d characters)",
			    s, CUCO_NAME_MAX - 1);
		for (j = 0; j < m->nshapes; j++)
			if (strcmp(m->shapes[j].name, s) == 0)
				return cuco_json_fail(
				    &L->src, CUCO_ERR_INVALID, field, 0,
				    "shape \"%s\" is defined twice (also shapes[%d])", s, j);
		snprintf(sh->name, sizeof(sh->name), "%s", s);

		/* Every key is "name" or a declared parameter ... */
		json_object_foreach((json_t *)obj, key, v)
		{
			int known = strcmp(key, "name") == 0;

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
			position(L, field, &m->shape_pos[m->nshapes][j][0],
			         &m->shape_pos[m->nshapes][j][1]);
		}
		m->nshapes++;
	}

	rc = get_string(L, root, "default_shape", "default_shape", 1, &s);
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

static const char *const program_fields[] = {"name", "role", "file", "libs", "verify"};

static int parse_program(struct mload *L, const json_t *obj, size_t i)
{
	struct cuco_manifest *m = L->m;
	struct cuco_manifest_program *p = &m->programs[m->nprograms];
	char prefix[64], field[128];
	const json_t *v;
	const char *s;
	int j, rc;

	snprintf(prefix, sizeof(prefix), "programs[%zu]", i);
	if (!json_is_object(obj))
		return cuco_json_fail_type(&L->src, prefix, "an object", obj);
	rc = check_unknown(L, obj, prefix, program_fields, 5, "program field");
	if (rc)
		return rc;

	snprintf(field, sizeof(field), "%s.name", prefix);
	rc = get_string(L, obj, "name", field, 1, &s);
	if (rc)
		return rc;
	if (!is_name(s, 0) || strlen(s) >= CUCO_MANIFEST_NAME_MAX)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, field, 0,
		    "\"%s\" is not a valid program name (letters, digits, '_' and '-', "
		    "at most %d characters)",
		    s, CUCO_MANIFEST_NAME_MAX - 1);
	if (cuco_manifest_program(m, s))
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "program \"%s\" is defined twice", s);
	p->name = cuco_xstrdup(s);
	m->nprograms++; /* from here on release() frees it */

	snprintf(field, sizeof(field), "%s.role", prefix);
	rc = get_string(L, obj, "role", field, 1, &s);
	if (rc)
		return rc;
	for (j = CUCO_PROGRAM_BASELINE; j <= CUCO_PROGRAM_COMM; j++)
		if (strcmp(s, cuco_program_role_name(j)) == 0)
			p->role = j;
	if (!p->role)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, field, 0,
		    "\"%s\" is not a role; expected one of baseline, peer, compute, comm", s);
	for (j = 0; j < m->nprograms - 1; j++)
		if (p->role == CUCO_PROGRAM_BASELINE &&
		    m->programs[j].role == CUCO_PROGRAM_BASELINE)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "a second baseline (\"%s\" is one already); a workload has one",
			    m->programs[j].name);

	snprintf(field, sizeof(field), "%s.file", prefix);
	rc = resolve_file(L, obj, "file", field, &p->file);
	if (rc)
		return rc;

	v = json_object_get(obj, "libs");
	if (v) {
		size_t k;
		const json_t *lib;

		snprintf(field, sizeof(field), "%s.libs", prefix);
		if (!json_is_array(v))
			return cuco_json_fail_type(&L->src, field, "an array of library names", v);
		p->libs = cuco_xcalloc(json_array_size(v), sizeof(*p->libs));
		json_array_foreach(v, k, lib)
		{
			snprintf(field, sizeof(field), "%s.libs[%zu]", prefix, k);
			if (!json_is_string(lib))
				return cuco_json_fail_type(&L->src, field, "a library name", lib);
			if (!is_name(json_string_value(lib), 1))
				return cuco_json_fail(
				    &L->src, CUCO_ERR_INVALID, field, 0,
				    "\"%s\" is not a library name (as in -l<name>)",
				    json_string_value(lib));
			p->libs[p->nlibs++] = cuco_xstrdup(json_string_value(lib));
		}
	}

	p->verify = 1;
	v = json_object_get(obj, "verify");
	if (v) {
		snprintf(field, sizeof(field), "%s.verify", prefix);
		if (!json_is_boolean(v))
			return cuco_json_fail_type(&L->src, field, "true or false", v);
		p->verify = json_is_true(v);
		if (!p->verify && p->role == CUCO_PROGRAM_BASELINE)
			return cuco_json_fail(
			    &L->src, CUCO_ERR_INVALID, field, 0,
			    "the baseline defines the right answer and is always verified");
	}
	return CUCO_OK;
}

static int parse_programs(struct mload *L, const json_t *root)
{
	const json_t *arr = json_object_get(root, "programs"), *obj;
	size_t i;
	int rc;

	if (!json_is_array(arr))
		return cuco_json_fail_type(&L->src, "programs", "an array of programs", arr);
	L->m->programs = cuco_xcalloc(json_array_size(arr), sizeof(*L->m->programs));
	json_array_foreach(arr, i, obj)
	{
		rc = parse_program(L, obj, i);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

static const char *const knob_fields[] = {"type",   "min",         "max", "default",
                                          "values", "multiple_of", "doc"};

static int parse_knob(struct mload *L, const char *name, const json_t *spec)
{
	char prefix[128], field[192];
	const json_t *min, *max, *dflt, *vals, *mult;
	const char *type;
	int rc;

	snprintf(prefix, sizeof(prefix), "knobs.%s", name);
	if (!is_ident(name) || strlen(name) >= CUCO_NAME_MAX)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, prefix, 1,
		    "\"%s\" is not a valid knob name (an identifier of at most %d "
		    "characters)",
		    name, CUCO_NAME_MAX - 1);
	if (!json_is_object(spec))
		return cuco_json_fail_type(&L->src, prefix, "a knob spec object", spec);
	rc = check_unknown(L, spec, prefix, knob_fields, 7, "knob field");
	if (rc)
		return rc;
	snprintf(field, sizeof(field), "%s.type", prefix);
	rc = get_string(L, spec, "type", field, 1, &type);
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

static int parse_knobs(struct mload *L, const json_t *root)
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

static int load(const char *path, const char *expect_name, struct cuco_manifest *m,
                struct cuco_err *err)
{
	struct cuco_strbuf text = CUCO_STRBUF_INIT;
	struct mload L;
	json_t *root = NULL;
	const char *slash;
	int rc;

	memset(m, 0, sizeof(*m));
	m->path = cuco_xstrdup(path);
	slash = strrchr(path, '/');
	if (!slash)
		m->dir = cuco_xstrdup(".");
	else if (slash == path)
		m->dir = cuco_xstrdup("/");
	else
		m->dir = strndup(path, (size_t)(slash - path));
	if (!m->dir)
		abort();
	if (cuco_strbuf_read_file(&text, path) != 0) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the manifest: %s", path,
		                  strerror(errno));
		goto out;
	}
	L.src.path = path;
	L.src.text = text.buf;
	L.src.len = text.len;
	L.src.err = err;
	L.m = m;
	rc = cuco_json_parse_object(&L.src, &root);
	if (!rc)
		rc = check_unknown(&L, root, "", top_fields, NTOP, "field");
	if (!rc)
		rc = parse_header(&L, root);
	if (!rc && expect_name && strcmp(m->name, expect_name) != 0)
		rc = cuco_json_fail(&L.src, CUCO_ERR_INVALID, "name", 0,
		                    "\"%s\" differs from its directory \"%s\"; they must match",
		                    m->name, expect_name);
	if (!rc)
		rc = parse_ranks(&L, root);
	if (!rc)
		rc = parse_params(&L, root);
	if (!rc)
		rc = parse_shapes(&L, root);
	if (!rc)
		rc = resolve_file(&L, root, "workload", "workload", &m->workload);
	if (!rc)
		rc = resolve_file(&L, root, "host_program", "host_program", &m->host_program);
	if (!rc)
		rc = parse_programs(&L, root);
	if (!rc)
		rc = parse_knobs(&L, root);
	if (!rc)
		rc = parse_requires(&L, root);
	if (!rc)
		rc = parse_rules(&L, root);
out:
	json_decref(root);
	cuco_strbuf_release(&text);
	if (rc)
		cuco_manifest_release(m);
	return rc;
}

int cuco_manifest_load(const char *path, struct cuco_manifest *out, struct cuco_err *err)
{
	return load(path, NULL, out, err);
}

void cuco_manifest_release(struct cuco_manifest *m)
{
	int i, j;

	if (!m)
		return;
	free(m->path);
	free(m->dir);
	free(m->name);
	free(m->description);
	free(m->dtype_name);
	free(m->ranks);
	free(m->shapes);
	free(m->default_shape);
	free(m->workload);
	free(m->host_program);
	for (i = 0; i < m->nprograms; i++) {
		free(m->programs[i].name);
		free(m->programs[i].file);
		for (j = 0; j < m->programs[i].nlibs; j++)
			free(m->programs[i].libs[j]);
		free(m->programs[i].libs);
	}
	free(m->programs);
	free(m->knobs_json);
	free(m->requires_why);
	for (i = 0; i < m->nrules; i++)
		free(m->rules[i].why);
	free(m->rules);
	free(m->shape_pos);
	memset(m, 0, sizeof(*m));
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
	memset(m->shape_pos[m->nshapes], 0, sizeof(m->shape_pos[0]));
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

const struct cuco_manifest_program *cuco_manifest_program(const struct cuco_manifest *m,
                                                          const char *name)
{
	int i;

	for (i = 0; i < m->nprograms; i++)
		if (m->programs[i].name && strcmp(m->programs[i].name, name) == 0)
			return &m->programs[i];
	return NULL;
}

const char *cuco_program_role_name(int role)
{
	switch (role) {
	case CUCO_PROGRAM_BASELINE:
		return "baseline";
	case CUCO_PROGRAM_PEER:
		return "peer";
	case CUCO_PROGRAM_COMPUTE:
		return "compute";
	case CUCO_PROGRAM_COMM:
		return "comm";
	}
	return "?";
}

/* --- workload discovery ------------------------------------------------------ */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cuco_workloads_list(const char *workloads_dir, char ***names, int *n, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct dirent *de;
	char **list = NULL;
	int count = 0, cap = 0, rc = CUCO_OK;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(workloads_dir);
	if (!d)
		return cuco_err_set(err, errno == ENOENT ? CUCO_ERR_NOT_FOUND : CUCO_ERR_IO,
		                    "%s: cannot open the workloads directory: %s", workloads_dir,
		                    strerror(errno));
	for (;;) {
		struct stat st;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read directory: %s",
				                  workloads_dir, strerror(errno));
				goto out;
			}
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		cuco_strbuf_reset(&sb);
		cuco_strbuf_addf(&sb, "%s/%s/manifest.json", workloads_dir, de->d_name);
		if (stat(sb.buf, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (count == cap) {
			char **grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(list, (size_t)cap * sizeof(*list));
			if (!grown)
				abort();
			list = grown;
		}
		list[count++] = cuco_xstrdup(de->d_name);
	}
	if (count)
		qsort(list, (size_t)count, sizeof(*list), cmp_names);
	*names = list;
	*n = count;
	list = NULL;
	count = 0;
out:
	cuco_workloads_list_free(list, count);
	cuco_strbuf_release(&sb);
	closedir(d);
	return rc;
}

void cuco_workloads_list_free(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int cuco_workload_find(const char *workloads_dir, const char *name, struct cuco_manifest *out,
                       struct cuco_err *err)
{
	struct cuco_strbuf path = CUCO_STRBUF_INIT;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!is_name(name, 0))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "\"%s\" is not a workload name (letters, digits, '_', '-')",
		                    name);
	cuco_strbuf_addf(&path, "%s/%s/manifest.json", workloads_dir, name);
	if (stat(path.buf, &st) != 0) {
		struct cuco_strbuf avail = CUCO_STRBUF_INIT;
		struct cuco_err lerr;
		char **names;
		int n, i;

		cuco_err_clear(&lerr);
		if (cuco_workloads_list(workloads_dir, &names, &n, &lerr) == CUCO_OK) {
			for (i = 0; i < n; i++)
				cuco_strbuf_addf(&avail, "%s%s", i ? ", " : "", names[i]);
			cuco_workloads_list_free(names, n);
		}
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "no workload \"%s\" in %s (available: %s); `cuco workloads` "
		                  "lists them",
		                  name, workloads_dir, avail.len ? avail.buf : "none");
		cuco_strbuf_release(&avail);
		goto out;
	}
	rc = load(path.buf, name, out, err);
out:
	cuco_strbuf_release(&path);
	return rc;
}
