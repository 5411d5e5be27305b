/* manifest.c - parse and validate workloads/<name>/manifest.json, with positions in errors
 * (its shapes, parameters and shape rules in shape.c). */
#include "workload/manifest.h"
#include "util/array.h"
#include "util/xalloc.h"
#include "workload/manifest_load.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- manifest --------------------------------------------------------------- */

/* 1 when rel, normalised ("." and ".." taken), climbs out of the folder it is relative to. */
static int escapes(const char *rel)
{
	long depth = 0;

	while (*rel) {
		size_t n = strcspn(rel, "/");

		if (n == 2 && rel[0] == '.' && rel[1] == '.') {
			if (--depth < 0)
				return 1;
		} else if (n && !(n == 1 && rel[0] == '.')) {
			depth++;
		}
		rel += n;
		rel += *rel == '/';
	}
	return 0;
}

/* 1 when path, its links followed, lies inside dir (its links followed too). */
static int inside(const char *dir, const char *path)
{
	char *d = realpath(dir, NULL), *p = realpath(path, NULL);
	size_t n = d ? strlen(d) : 0;
	int ok = d && p && !strncmp(d, p, n) && (p[n] == '/' || (n == 1 && d[0] == '/'));

	free(d);
	free(p);
	return ok;
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
	rc = cuco_manifest_get_string(L, obj, key, field, 1, &rel);
	if (rc)
		return rc;
	if (!rel[0])
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "expected a file name, got \"\"");
	if (rel[0] == '/')
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                      "\"%s\" is an absolute path; give a path relative to %s", rel,
		                      L->m->dir);
	if (escapes(rel))
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, field, 0,
		    "\"%s\" leads out of the workload's folder \"%s\"; keep the package's "
		    "files inside it",
		    rel, L->m->dir);
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
	if (!inside(L->m->dir, sb.buf)) { /* a link out of the package */
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, field, 0,
		                    "\"%s\" links out of the workload's folder \"%s\"; keep the "
		                    "package's files inside it",
		                    rel, L->m->dir);
		goto out;
	}
	*out = cuco_strbuf_detach(&sb, NULL);
	rc = CUCO_OK;
out:
	cuco_strbuf_release(&sb);
	return rc;
}

static const char *const top_fields[] = {
    "name",   "description", "abi",           "dtype",     "tolerance",    "ranks",
    "params", "shapes",      "default_shape", "workload",  "host_program", "programs",
    "knobs",  "requires",    "shape_rules",   "reference", "argv",
};
#define NTOP ((int)(sizeof(top_fields) / sizeof(top_fields[0])))

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

	rc = cuco_manifest_get_string(L, root, "name", "name", 1, &s);
	if (rc)
		return rc;
	if (!cuco_manifest_is_name(s, 0) || strlen(s) >= CUCO_MANIFEST_NAME_MAX)
		return cuco_json_fail(
		    &L->src, CUCO_ERR_INVALID, "name", 0,
		    "\"%s\" is not a valid workload name (letters, digits, '_' and '-', "
		    "at most %d characters)",
		    s, CUCO_MANIFEST_NAME_MAX - 1);
	m->name = cuco_xstrdup(s);

	rc = cuco_manifest_get_string(L, root, "description", "description", 0, &s);
	if (rc)
		return rc;
	m->description = cuco_xstrdup(s ? s : "");

	rc = cuco_manifest_get_string(L, root, "dtype", "dtype", 1, &s);
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
	rc = cuco_manifest_check_unknown(L, obj, "requires", known, 2, "field");
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
	rc = cuco_manifest_get_string(L, obj, "why", "requires.why", 0, &s);
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
	rc = cuco_manifest_check_unknown(L, obj, prefix, program_fields, 5, "program field");
	if (rc)
		return rc;

	snprintf(field, sizeof(field), "%s.name", prefix);
	rc = cuco_manifest_get_string(L, obj, "name", field, 1, &s);
	if (rc)
		return rc;
	if (!cuco_manifest_is_name(s, 0) || strlen(s) >= CUCO_MANIFEST_NAME_MAX)
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
	rc = cuco_manifest_get_string(L, obj, "role", field, 1, &s);
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
			if (!cuco_manifest_is_name(json_string_value(lib), 1))
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

/* "reference": absent or "workload" (the workload's reference()), or {"program": NAME}: a
 * verified program of the manifest whose outputs are the expected ones. */
static int parse_reference(struct mload *L, const json_t *root)
{
	static const char *const known[] = {"program"};
	const char *want = "\"workload\" or {\"program\": NAME}";
	const json_t *v = json_object_get(root, "reference");
	const struct cuco_manifest_program *p;
	const char *s;
	int rc;

	if (!v)
		return CUCO_OK;
	if (json_is_string(v)) {
		if (!strcmp(json_string_value(v), "workload"))
			return CUCO_OK;
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "reference", 0,
		                      "\"%s\" is not a reference; expected %s",
		                      json_string_value(v), want);
	}
	if (!json_is_object(v))
		return cuco_json_fail_type(&L->src, "reference", want, v);
	if ((rc = cuco_manifest_check_unknown(L, v, "reference", known, 1, "field")))
		return rc;
	if ((rc = cuco_manifest_get_string(L, v, "program", "reference.program", 1, &s)))
		return rc;
	p = cuco_manifest_program(L->m, s);
	if (!p) {
		struct cuco_strbuf names = CUCO_STRBUF_INIT;

		for (int i = 0; i < L->m->nprograms; i++)
			cuco_strbuf_addf(&names, "%s%s", i ? ", " : "", L->m->programs[i].name);
		rc = cuco_json_fail(&L->src, CUCO_ERR_INVALID, "reference.program", 0,
		                    "no program is named \"%s\" (programs: %s)", s,
		                    names.len ? names.buf : "none");
		cuco_strbuf_release(&names);
		return rc;
	}
	if (!p->verify)
		return cuco_json_fail(&L->src, CUCO_ERR_INVALID, "reference.program", 0,
		                      "program \"%s\" is timing only (\"verify\": false); the "
		                      "reference is a verified program, as a rule the baseline",
		                      s);
	L->m->reference_program = cuco_xstrdup(s);
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
		rc = cuco_manifest_check_unknown(&L, root, "", top_fields, NTOP, "field");
	if (!rc)
		rc = parse_header(&L, root);
	if (!rc && expect_name && strcmp(m->name, expect_name) != 0)
		rc = cuco_json_fail(&L.src, CUCO_ERR_INVALID, "name", 0,
		                    "\"%s\" differs from its directory \"%s\"; they must match",
		                    m->name, expect_name);
	if (!rc)
		rc = parse_ranks(&L, root);
	if (!rc)
		rc = cuco_manifest_parse_params(&L, root);
	if (!rc)
		rc = cuco_manifest_parse_shapes(&L, root);
	if (!rc)
		rc = resolve_file(&L, root, "workload", "workload", &m->workload);
	if (!rc)
		rc = resolve_file(&L, root, "host_program", "host_program", &m->host_program);
	if (!rc)
		rc = parse_programs(&L, root);
	if (!rc)
		rc = parse_reference(&L, root);
	if (!rc)
		rc = cuco_manifest_parse_argv(&L, root);
	if (!rc)
		rc = cuco_manifest_parse_knobs(&L, root);
	if (!rc)
		rc = parse_requires(&L, root);
	if (!rc)
		rc = cuco_manifest_parse_rules(&L, root);
	if (!rc) /* kept for the positions of shape errors found later (check_shape) */
		m->text = cuco_strbuf_detach(&text, &m->text_len);
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
	for (i = 0; m->shape_argv && i < m->nshapes; i++)
		free(m->shape_argv[i]);
	free(m->shape_argv);
	free(m->shapes);
	free(m->reference_program);
	free(m->argv);
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
	free(m->text);
	memset(m, 0, sizeof(*m));
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
	int count = 0, rc = CUCO_OK;
	size_t alloc = 0;
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
		*CUCO_ARRAY_PUSH(list, count, alloc) = cuco_xstrdup(de->d_name);
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
	if (!cuco_manifest_is_name(name, 0))
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
