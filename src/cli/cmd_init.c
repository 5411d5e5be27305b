/* cmd_init.c - `cuco init`: a new workload package that compiles and
 * verifies as generated. From nothing, around a built-in compute: the files
 * come from share/init/ (placeholders @KEY@, sections kept per collective
 * between `//@if c1 c2` and `//@endif` lines); the manifest is written here.
 * With --from, the user's own program is lifted (init_from.c). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/init_from.h"
#include "program/directive.h"
#include "program/realize.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco init NAME --from FILE|DIR [--args ARGS] [--shape NAME:P=V,...] [--step F:L]\n"
    "                      [--include-dir DIR]... [-D NAME[=VALUE]]... [-o DIR]\n"
    "       cuco init NAME [--collective C] [--params P1,P2,...] [-o DIR]\n"
    "\n"
    "With --from: lift your MPI + NCCL program (one file, or a folder with its headers and\n"
    "compile_commands.json) into a workload package whose baseline is the program's own step\n"
    "(its kernels and collectives), verified against itself, and whose seed makes the step's\n"
    "collectives device-initiated (docs/your-own-program.md). Without: a package around a\n"
    "built-in compute (rows of X -> Y -> the collective -> Z) to fill in.\n";

#define INIT_MAX_PARAMS 8

static const char *const collectives[] = {"allreduce", "allgather", "reducescatter",
                                          "alltoall",  "sendrecv",  NULL};
#define NCOLL ((int)(sizeof(collectives) / sizeof(collectives[0])) - 1)

/* One @KEY@ and its text. */
struct init_var {
	const char *key;
	const char *val;
};

struct init_opts {
	const char *name;
	const char *coll; /* one of collectives[] */
	char params[INIT_MAX_PARAMS][CUCO_NAME_MAX];
	int nparams;
	const char *dir;
};

/* ------------------------------------------------------------ rendering */

/* Whether the `//@if` line (after the marker) names coll. */
static int if_names(const char *list, size_t len, const char *coll)
{
	size_t n = strlen(coll);
	const char *p = list, *end = list + len;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		const char *w = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - w) == n && !strncmp(w, coll, n))
			return 1;
	}
	return 0;
}

/*
 * Render a share/init file: keep the lines of `//@if` sections that name
 * coll, drop the markers, replace every @KEY@ of vars. An unknown @KEY@ or
 * an unbalanced section is an error naming path:line.
 */
static int render(const char *path, const char *text, const char *coll, const struct init_var *vars,
                  int nvars, struct cuco_strbuf *out, struct cuco_err *err)
{
	const char *p = text;
	int line = 0, in_if = 0, keep = 1;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *q = p;

		line++;
		while (q < p + len && (*q == ' ' || *q == '\t'))
			q++;
		if (!strncmp(q, "//@if ", 6)) {
			if (in_if)
				return cuco_err_set(err, CUCO_ERR_PARSE, "%s:%d: nested //@if",
				                    path, line);
			in_if = 1;
			keep = if_names(q + 6, len - (size_t)(q + 6 - p), coll);
		} else if (!strncmp(q, "//@endif", 8)) {
			if (!in_if)
				return cuco_err_set(err, CUCO_ERR_PARSE,
				                    "%s:%d: //@endif without //@if", path, line);
			in_if = 0;
			keep = 1;
		} else if (keep) {
			for (const char *c = p; c < p + len; c++) {
				const char *e;
				int k;

				if (*c != '@' || !isupper((unsigned char)c[1])) {
					cuco_strbuf_addch(out, *c);
					continue;
				}
				e = c + 1;
				while (e < p + len && (isupper((unsigned char)*e) || *e == '_'))
					e++;
				if (e >= p + len || *e != '@') {
					cuco_strbuf_addch(out, *c);
					continue;
				}
				for (k = 0; k < nvars; k++)
					if (strlen(vars[k].key) == (size_t)(e - c - 1) &&
					    !strncmp(vars[k].key, c + 1, (size_t)(e - c - 1)))
						break;
				if (k == nvars)
					return cuco_err_set(err, CUCO_ERR_PARSE,
					                    "%s:%d: unknown placeholder %.*s", path,
					                    line, (int)(e - c + 1), c);
				cuco_strbuf_adds(out, vars[k].val);
				c = e;
			}
			cuco_strbuf_addch(out, '\n');
		}
		p += len + (eol ? 1 : 0);
	}
	if (in_if)
		return cuco_err_set(err, CUCO_ERR_PARSE, "%s: //@if without //@endif", path);
	return CUCO_OK;
}

/* ------------------------------------------------------------ the package */

/* manifest.json: shapes that meet the rules on 1, 2, 4 and 8 ranks. */
static void write_manifest_text(const struct init_opts *o, struct cuco_strbuf *sb)
{
	static const struct {
		const char *name;
		long long rows, width;
	} shapes[] = {{"small", 1024, 1024}, {"medium", 4096, 4096}, {"large", 16384, 8192}};
	const char *last = o->params[o->nparams - 1];
	int split = strcmp(o->coll, "allreduce") && strcmp(o->coll, "sendrecv");

	cuco_strbuf_addf(sb, "{\n  \"name\": \"%s\",\n", o->name);
	cuco_strbuf_addf(sb,
	                 "  \"description\": \"Each rank computes Y = compute(X, W) on its rows "
	                 "(compute.cuh: an RMS norm of each row scaled by W until you replace "
	                 "it), then %s.\",\n",
	                 !strcmp(o->coll, "allreduce")       ? "all ranks sum their Y into Z"
	                 : !strcmp(o->coll, "allgather")     ? "all ranks gather every Y into Z"
	                 : !strcmp(o->coll, "reducescatter") ? "rank r receives block r of the "
	                                                       "sum of all Y in Z"
	                 : !strcmp(o->coll, "alltoall")      ? "block p of rank r's Y goes to "
	                                                       "block r of rank p's Z"
	                                                : "rank r sends Y to rank r+1 (a ring), "
	                                                  "which keeps it in Z");
	cuco_strbuf_adds(sb, "  \"abi\": 1,\n  \"dtype\": \"f32\",\n  \"tolerance\": 0.001,\n"
	                     "  \"ranks\": [2, 4, 8],\n  \"params\": [");
	for (int i = 0; i < o->nparams; i++)
		cuco_strbuf_addf(sb, "%s\"%s\"", i ? ", " : "", o->params[i]);
	cuco_strbuf_adds(sb, "],\n  \"shapes\": [\n");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		cuco_strbuf_addf(sb, "    {\"name\": \"%s\"", shapes[s].name);
		for (int i = 0; i < o->nparams; i++)
			cuco_strbuf_addf(sb, ", \"%s\": %lld", o->params[i],
			                 i == o->nparams - 1 ? shapes[s].width
			                 : i == 0            ? shapes[s].rows
			                                     : 1LL);
		cuco_strbuf_addf(sb, "}%s\n",
		                 s + 1 < sizeof(shapes) / sizeof(shapes[0]) ? "," : "");
	}
	cuco_strbuf_adds(sb, "  ],\n  \"default_shape\": \"medium\",\n"
	                     "  \"workload\": \"workload.cu\",\n  \"host_program\": \"host.cu\",\n"
	                     "  \"programs\": [\n"
	                     "    {\"name\": \"baseline\", \"role\": \"baseline\", \"file\": "
	                     "\"host.cu\"},\n"
	                     "    {\"name\": \"compute\", \"role\": \"compute\", \"file\": "
	                     "\"compute_only.cu\", \"verify\": false},\n"
	                     "    {\"name\": \"comm\", \"role\": \"comm\", \"file\": "
	                     "\"comm_only.cu\", \"verify\": false}\n  ],\n"
	                     "  \"shape_rules\": [\n");
	if (split && o->nparams > 1)
		cuco_strbuf_addf(sb,
		                 "    {\"param\": \"%s\", \"per_rank\": true, \"min\": 1, \"why\": "
		                 "\"the rows are split among the ranks by %s\"},\n",
		                 o->params[0], o->params[0]);
	cuco_strbuf_addf(sb,
	                 "    {\"param\": \"%s\", \"min\": 4, \"multiple_of\": 4, \"why\": \"rows "
	                 "of 16 bytes: the template moves them in 16-byte vectors\"}\n  ],\n",
	                 last);
	cuco_strbuf_adds(sb, "  \"knobs\": {\n"
	                     "    \"comm_ctas\": {\"type\": \"int\", \"min\": 1, \"max\": 132, "
	                     "\"default\": 32}\n  }\n}\n");
}

static int write_text(const char *dir, const char *file, const struct cuco_strbuf *sb,
                      struct cuco_err *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (cuco_write_file(path, sb->buf, sb->len))
		return cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	return CUCO_OK;
}

/* Render share/init/<src> into dir/<dst>. */
static int emit(const char *share, const char *src, const char *dir, const char *dst,
                const char *coll, const struct init_var *vars, int nvars, struct cuco_err *err)
{
	struct cuco_strbuf in = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", share, src);
	if (cuco_strbuf_read_file(&in, path)) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "%s: %s (is CUCO_HOME right?)", path,
		                  strerror(errno));
		goto out;
	}
	rc = render(path, in.buf, coll, vars, nvars, &out, err);
	if (!rc)
		rc = write_text(dir, dst, &out, err);
out:
	cuco_strbuf_release(&in);
	cuco_strbuf_release(&out);
	return rc;
}

/* Directives the package ships realized: one per code path of its template. */
static const char *const variants[][2] = {
    {"sequential_lsa", "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":"
                       "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{"
                       "\"comm_ctas\":32,\"threads\":512}}"},
    {"sequential_ce", "{\"backend\":\"ce\",\"placement\":\"sequential\",\"sync_scope\":"
                      "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{}}"},
    {"stream_overlap_lsa", "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_"
                           "scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                           "\"knobs\":{\"chunks\":4,\"streams\":2,\"comm_ctas\":16,"
                           "\"threads\":512}}"},
    {"stream_overlap_lsa_cta", "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_"
                               "scope\":\"cta\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                               "\"knobs\":{\"chunks\":4,\"streams\":2,\"comm_ctas\":16,"
                               "\"threads\":512}}"},
    {"stream_overlap_ce", "{\"backend\":\"ce\",\"placement\":\"stream_overlap\",\"sync_"
                          "scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                          "\"knobs\":{\"chunks\":4,\"streams\":2}}"},
};

/*
 * Realize the package's template for each of variants[] into
 * DIR/variants/NAME.json (the directive) and DIR/NAME.cu (the program,
 * beside common.cuh, which it includes, as evolve's children are),
 * validated against the design space as `cuco realize` does.
 */
static int realize_variants(const char *dir, struct cuco_err *err)
{
	struct cuco_strbuf tmpl = CUCO_STRBUF_INIT;
	struct cuco_design_space ds;
	const char *dsp = cli_share_dir("design_space.json");
	char path[PATH_MAX], tpath[PATH_MAX];
	int rc;

	snprintf(tpath, sizeof(tpath), "%s/template.cu.in", dir);
	if (cuco_strbuf_read_file(&tmpl, tpath))
		return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", tpath, strerror(errno));
	if (!dsp || (rc = cuco_design_space_load(dsp, &ds, err))) {
		cuco_strbuf_release(&tmpl);
		return dsp ? rc : cuco_err_set(err, CUCO_ERR_NOT_FOUND, "no design_space.json");
	}
	rc = cuco_design_space_narrow(&ds, tpath, tmpl.buf, err);
	snprintf(path, sizeof(path), "%s/variants", dir);
	if (!rc && cuco_mkdir_p(path))
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot create %s: %s", path, strerror(errno));
	for (size_t k = 0; !rc && k < sizeof(variants) / sizeof(variants[0]); k++) {
		struct cuco_strbuf line = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
		struct cuco_directive d;

		cuco_strbuf_addf(&line, "// cuco-directive: %s\n", variants[k][1]);
		rc = cuco_directive_parse(variants[k][0], line.buf, &d, err);
		if (!rc) {
			rc = cuco_directive_validate(&d, &ds, NULL, err);
			if (!rc)
				rc = cuco_realize_template(tpath, tmpl.buf, &d, &out, err);
			cuco_directive_release(&d);
		}
		if (!rc) {
			cuco_strbuf_reset(&line);
			cuco_strbuf_addf(&line, "%s\n", variants[k][1]);
			snprintf(path, sizeof(path), "%s/variants/%s.json", dir, variants[k][0]);
			if (cuco_write_file(path, line.buf, line.len))
				rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s", path);
			snprintf(path, sizeof(path), "%s/%s.cu", dir, variants[k][0]);
			if (!rc && cuco_write_file(path, out.buf, out.len))
				rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s", path);
		}
		cuco_strbuf_release(&line);
		cuco_strbuf_release(&out);
	}
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&tmpl);
	return rc;
}

static int dir_usable(const char *dir, struct cuco_err *err)
{
	struct stat st;
	char probe[PATH_MAX];

	if (stat(dir, &st) != 0)
		return cuco_mkdir_p(dir)
		           ? cuco_err_set(err, CUCO_ERR_IO, "-o %s: cannot create: %s", dir,
		                          strerror(errno))
		           : CUCO_OK;
	if (!S_ISDIR(st.st_mode))
		return cuco_err_set(err, CUCO_ERR_INVALID, "-o %s: exists and is not a directory",
		                    dir);
	snprintf(probe, sizeof(probe), "%s/manifest.json", dir);
	if (cuco_file_exists(probe))
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "-o %s: already holds a workload (manifest.json); choose another "
		    "directory or remove it",
		    dir);
	return CUCO_OK;
}

static int parse_params(const char *list, struct init_opts *o)
{
	const char *p = list;

	o->nparams = 0;
	while (*p) {
		const char *e = p;
		size_t len;

		while (*e && *e != ',')
			e++;
		len = (size_t)(e - p);
		if (!len || len >= CUCO_NAME_MAX || !(isalpha((unsigned char)*p) || *p == '_'))
			return cli_usage_error(
			    "init",
			    "--params %s: '%.*s' is not a parameter name (a letter "
			    "or '_', then letters, digits, '_'; under %d characters)",
			    list, (int)len, p, CUCO_NAME_MAX);
		for (size_t k = 0; k < len; k++)
			if (!isalnum((unsigned char)p[k]) && p[k] != '_')
				return cli_usage_error(
				    "init", "--params %s: '%.*s' is not a parameter name", list,
				    (int)len, p);
		if (o->nparams == INIT_MAX_PARAMS)
			return cli_usage_error("init", "--params %s: at most %d parameters", list,
			                       INIT_MAX_PARAMS);
		snprintf(o->params[o->nparams], CUCO_NAME_MAX, "%.*s", (int)len, p);
		for (int k = 0; k < o->nparams; k++)
			if (!strcmp(o->params[k], o->params[o->nparams]))
				return cli_usage_error("init", "--params %s: %s is named twice",
				                       list, o->params[k]);
		o->nparams++;
		p = *e ? e + 1 : e;
		if (*e && !*p)
			return cli_usage_error("init", "--params %s: a trailing comma", list);
	}
	if (o->nparams < 2)
		return cli_usage_error("init",
		                       "--params %s: give at least two names, the rows (first) and "
		                       "the row width (last), e.g. M,N",
		                       list);
	return 0;
}

struct init_args {
	const char *coll, *params, *from, *dir, *args, *step, *entry;
	const char *shapes[16];
	int nshapes;
	const char *include_dirs[32];
	int ninclude_dirs;
	const char *defines[32];
	int ndefines;
	const char *arg_values[32];
	int nargs_given;
	int no_compile;
	const char *pos[1];
	int npos;
};

static const struct cli_flag init_flags[] = {
    {CLI_ENUM, "--collective", "C",
     "allreduce, allgather, reducescatter, alltoall or sendrecv (default allreduce)",
     CLI_AT(struct init_args, coll), .values = collectives},
    {CLI_STRING, "--params", "LIST",
     "shape parameters, comma-separated (default M,N): rows are the product of all but the "
     "last, the last is the row width",
     CLI_AT(struct init_args, params)},
    {CLI_STRING, "--from", "FILE|DIR",
     "lift this program (its main file, or its folder) into the package",
     CLI_AT(struct init_args, from)},
    {CLI_STRING, "--args", "ARGS",
     "--from: the program's command line; {P} takes a shape's parameter P",
     CLI_AT(struct init_args, args)},
    {CLI_LIST, "--shape", "NAME:P=V,...",
     "--from: a shape: its parameters' values for --args; visit=K runs the K-th pass of the "
     "step (repeatable)",
     CLI_LIST_AT(struct init_args, shapes, nshapes)},
    {CLI_STRING, "--step", "FILE:LINE",
     "--from: the loop (or statement) there is the step (or put `// cuco: step` before it)",
     CLI_AT(struct init_args, step)},
    {CLI_STRING, "--entry", "FUNC",
     "--from: run FUNC as the program's main, or, when it takes other arguments, call it as "
     "the step from a main the lift writes",
     CLI_AT(struct init_args, entry)},
    {CLI_LIST, "--arg", "NAME=EXPR",
     "--entry: a value for FUNC's parameter NAME (a C expression; a pointer's: its bytes) "
     "(repeatable)",
     CLI_LIST_AT(struct init_args, arg_values, nargs_given)},
    {CLI_LIST, "--include-dir", "DIR", "--from: an include folder of the program (repeatable)",
     CLI_LIST_AT(struct init_args, include_dirs, ninclude_dirs)},
    {CLI_LIST, "--define", "NAME[=VALUE]",
     "--from: a macro the program is built with, as -D (repeatable)",
     CLI_LIST_AT(struct init_args, defines, ndefines)},
    {CLI_LIST, "-D", "NAME[=VALUE]", "", CLI_LIST_AT(struct init_args, defines, ndefines),
     .hidden = 1},
    {CLI_BOOL, "--no-compile", NULL, "--from: skip the compile check (no nvcc here)",
     CLI_AT(struct init_args, no_compile)},
    {CLI_STRING, "-o", "DIR", "where to write (default ./NAME); must not exist or be empty",
     CLI_AT(struct init_args, dir)},
    {CLI_TEXT, .help = "Then: cuco bench DIR --ranks 1 (one GPU) or cuco bench DIR (2+ GPUs); a\n"
                       "DIR names a package when it holds a '/' (./NAME).\n"},
    {CLI_END},
};

const struct cli_spec cmd_init_spec = {
    .name = "init",
    .usage = usage,
    .flags = init_flags,
    .args_size = sizeof(struct init_args),
    .pos = offsetof(struct init_args, pos),
    .npos = offsetof(struct init_args, npos),
    .max_pos = 1,
};

int cmd_init(int argc, char **argv)
{
	struct init_opts o;
	struct cuco_err err;
	struct cuco_strbuf text = CUCO_STRBUF_INIT, plist = CUCO_STRBUF_INIT,
	                   rowsdoc = CUCO_STRBUF_INIT;
	struct cuco_manifest m;
	const char *params = "M,N", *share;
	char dirbuf[PATH_MAX], path[PATH_MAX];
	struct init_args a = {0};
	int rc;

	memset(&o, 0, sizeof(o));
	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_init_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	o.name = a.npos ? a.pos[0] : NULL;
	o.coll = a.coll;
	o.dir = a.dir;
	if (a.params)
		params = a.params;
	if (!o.name)
		return cli_usage_error("init", "which name? (cuco init NAME)");
	if (!*o.name || strlen(o.name) >= CUCO_MANIFEST_NAME_MAX)
		return cli_usage_error("init", "NAME %s: 1 to %d characters", o.name,
		                       CUCO_MANIFEST_NAME_MAX - 1);
	for (const char *c = o.name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return cli_usage_error(
			    "init",
			    "NAME %s: only letters, digits, '_' and '-' (it names "
			    "the workload in the store and in file names)",
			    o.name);
	if (a.from) {
		struct init_from_opts fo;
		if (a.coll || a.params)
			return cli_usage_error("init",
			                       "--from lifts the program as it is: --collective "
			                       "and --params are for a package around the "
			                       "built-in compute");
		memset(&fo, 0, sizeof(fo));
		fo.name = o.name;
		fo.from = a.from;
		fo.dir = o.dir ? o.dir : o.name;
		fo.args = a.args;
		fo.step = a.step;
		fo.entry = a.entry;
		fo.no_compile = a.no_compile;
		fo.nshapes = a.nshapes;
		memcpy(fo.shapes, a.shapes, sizeof(fo.shapes));
		fo.ninclude_dirs = a.ninclude_dirs;
		memcpy(fo.include_dirs, a.include_dirs, sizeof(fo.include_dirs));
		fo.ndefines = a.ndefines;
		memcpy(fo.defines, a.defines, sizeof(fo.defines));
		fo.nargs_given = a.nargs_given;
		memcpy(fo.arg_values, a.arg_values, sizeof(fo.arg_values));
		return cli_init_from(&fo);
	}
	if (a.args || a.nshapes || a.step || a.entry || a.ninclude_dirs || a.ndefines ||
	    a.nargs_given || a.no_compile)
		return cli_usage_error("init",
		                       "--args, --shape, --step, --entry, --include-dir, -D "
		                       "and --no-compile go with --from");
	if (parse_params(params, &o))
		return CUCO_ERR_USAGE;
	if (!o.coll)
		o.coll = "allreduce";
	if (!o.dir) {
		snprintf(dirbuf, sizeof(dirbuf), "%s", o.name);
		o.dir = dirbuf;
	}
	if ((rc = dir_usable(o.dir, &err)))
		goto fail;
	share = cli_share_dir("init");
	if (!share) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND, "cuco home not found; set CUCO_HOME");
		goto fail;
	}
	for (int i = 0; i < o.nparams; i++) {
		cuco_strbuf_addf(&plist, "%s\"%s\"", i ? ", " : "", o.params[i]);
		if (i + 1 < o.nparams)
			cuco_strbuf_addf(&rowsdoc, "%s%s", i ? " x " : "", o.params[i]);
	}
	{
		const char *call = !strcmp(o.coll, "allreduce")       ? "ncclAllReduce(Y -> Z)"
		                   : !strcmp(o.coll, "allgather")     ? "ncclAllGather(Y -> Z)"
		                   : !strcmp(o.coll, "reducescatter") ? "ncclReduceScatter(Y -> Z)"
		                   : !strcmp(o.coll, "alltoall")      ? "ncclAlltoAll(Y -> Z)"
		                                                      : "ncclSend(Y) / ncclRecv(Z)";
		const char *doc =
		    !strcmp(o.coll, "allreduce")       ? "the sum over ranks of Y"
		    : !strcmp(o.coll, "allgather")     ? "every rank's Y, rank q's at rows q*xrows"
		    : !strcmp(o.coll, "reducescatter") ? "rows r*zrows.. of the sum over ranks of Y"
		    : !strcmp(o.coll, "alltoall") ? "block p (rows/R rows) = block r of rank p's Y"
		                                  : "the Y of rank r-1 (a ring: r sends to r+1)";
		struct cuco_strbuf desc = CUCO_STRBUF_INIT;
		cuco_strbuf_addf(&desc,
		                 "Workload %s, made by cuco init: X -> compute -> Y -> %s -> Z.",
		                 o.name, o.coll);
		const struct init_var vars[] = {
		    {"NAME", o.name},
		    {"COLL", o.coll},
		    {"COLL_CALL", call},
		    {"COLL_DOC", doc},
		    {"PARAMS_LIST", plist.buf},
		    {"ROWS_DOC", rowsdoc.buf},
		    {"WIDTH", o.params[o.nparams - 1]},
		    {"DESCRIPTION", desc.buf},
		    {"LIFTED_CALLS", ""},
		};
		const int nv = (int)(sizeof(vars) / sizeof(vars[0]));
		static const char *const files[][2] = {
		    {"common.cuh", "common.cuh"},     {"workload.cu", "workload.cu"},
		    {"host.cu", "host.cu"},           {"compute_only.cu", "compute_only.cu"},
		    {"comm_only.cu", "comm_only.cu"}, {"template.cu.in", "template.cu.in"},
		};

		rc = CUCO_OK;
		for (size_t k = 0; !rc && k < sizeof(files) / sizeof(files[0]); k++)
			rc = emit(share, files[k][0], o.dir, files[k][1], o.coll, vars, nv, &err);
		if (!rc)
			rc = emit(share, "compute.cuh", o.dir, "compute.cuh", o.coll, vars, nv,
			          &err);
		cuco_strbuf_release(&desc);
		if (rc)
			goto fail;
	}
	write_manifest_text(&o, &text);
	if ((rc = write_text(o.dir, "manifest.json", &text, &err)))
		goto fail;
	/* What was written must load as any workload does. */
	snprintf(path, sizeof(path), "%s/manifest.json", o.dir);
	if ((rc = cuco_manifest_load(path, &m, &err))) {
		cuco_err_prefix(&err, "the generated manifest does not load (a cuco bug): ");
		goto fail;
	}
	cuco_manifest_release(&m);
	if ((rc = realize_variants(o.dir, &err))) {
		cuco_err_prefix(&err, "realizing the package's template: ");
		goto fail;
	}
	printf("wrote %s: workload %s (%s; params %s; f32)\n", o.dir, o.name, o.coll, params);
	printf("  manifest.json workload.cu host.cu common.cuh compute.cuh compute_only.cu "
	       "comm_only.cu template.cu.in\n");
	{
		const char *dot = strchr(o.dir, '/') ? "" : "./";
		printf("next:\n  cuco bench %s%s --ranks 1    (one GPU: the compute side)\n"
		       "  cuco bench %s%s              (2, 4 or 8 GPUs)\n"
		       "  cuco evolve %s%s\n",
		       dot, o.dir, dot, o.dir, dot, o.dir);
	}
	rc = CUCO_OK;
	goto out;
fail:
	cli_fail(&err);
out:
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&plist);
	cuco_strbuf_release(&rowsdoc);
	return rc;
}
