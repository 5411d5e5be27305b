/*
 * init_from.c - `cuco init NAME --from FILE|DIR`: the program a user has,
 * lifted into a workload package whose baseline is the program's own step
 * (src/lift: parse, plan, emit). Nothing is written unless the baseline and
 * the workload compile; the seed's compile is reported.
 */
#include "cli/init_from.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "cli/cli.h"
#include "lift/emit.h"
#include "lift/plan.h"
#include "lift/scan.h"
#include "lift/seed.h"
#include "util/paths.h"
#include "util/proc.h"
#include "util/array.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "workload/manifest.h"

static int source_ext(const char *path)
{
	static const char *const exts[] = {".cu", ".cuh", ".cpp", ".cc",  ".cxx", ".c++",
	                                   ".C",  ".c",   ".h",   ".hpp", ".hh",  NULL};
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return 0;
	for (int i = 0; exts[i]; i++)
		if (!strcmp(dot, exts[i]))
			return 1;
	return 0;
}

/* A program file's first problem as a user error, or 0: not a source, empty, binary. */
static int check_file(const char *path, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	if (!source_ext(path))
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "--from %s: not a C, C++ or CUDA source (.cu, .cpp, .cc, .cxx, .c); "
		    "name the program's main file or its folder",
		    path);
	if (cuco_strbuf_read_file(&sb, path))
		return cuco_err_set(err, CUCO_ERR_IO, "--from %s: %s", path, strerror(errno));
	if (sb.len == 0)
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "--from %s: the file is empty", path);
	else if (memchr(sb.buf, 0, sb.len))
		rc = cuco_err_set(err, CUCO_ERR_PARSE,
		                  "--from %s: a binary file, not C, C++ or CUDA source", path);
	cuco_strbuf_release(&sb);
	return rc;
}

/* "NAME:K=V,K=V" into s. */
static int parse_shape(const char *spec, struct cuco_lift_shape *s)
{
	const char *colon = strchr(spec, ':'), *p;
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

	memset(s, 0, sizeof(*s));
	if (!n || n >= sizeof(s->name))
		return cli_usage_error("init", "--shape %s: expected NAME:PARAM=VALUE,...", spec);
	memcpy(s->name, spec, n);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)spec[i]) && spec[i] != '_' && spec[i] != '-')
			return cli_usage_error("init",
			                       "--shape %s: the name takes letters, digits, "
			                       "'_' and '-'",
			                       spec);
	for (p = colon ? colon + 1 : spec + n; *p;) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		char *num_end;
		long long v;
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end || eq == p || (size_t)(eq - p) >= sizeof(s->params[0]) ||
		    s->nparams == 16)
			return cli_usage_error("init", "--shape %s: expected NAME:PARAM=VALUE,...",
			                       spec);
		for (const char *c = p; c < eq; c++)
			if (!isalnum((unsigned char)*c) && *c != '_')
				return cli_usage_error("init",
				                       "--shape %s: '%.*s' is not a parameter name",
				                       spec, (int)(eq - p), p);
		errno = 0;
		v = strtoll(eq + 1, &num_end, 10);
		if (errno || num_end != end || v < 0)
			return cli_usage_error("init",
			                       "--shape %s: '%.*s' is not a non-negative integer",
			                       spec, (int)(end - eq - 1), eq + 1);
		snprintf(s->params[s->nparams], sizeof(s->params[0]), "%.*s", (int)(eq - p), p);
		s->values[s->nparams++] = v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Every {name} of argv must be a parameter of every shape. */
static int check_argv(const char *argv, const struct cuco_lift_shape *shapes, int n)
{
	for (const char *p = argv ? strchr(argv, '{') : NULL; p; p = strchr(p + 1, '{')) {
		const char *close = strchr(p, '}');
		char name[32];
		if (!close || (size_t)(close - p - 1) >= sizeof(name))
			return cli_usage_error("init", "--args %s: an unclosed or long {name}",
			                       argv);
		snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
		if (!strcmp(name, "ranks"))
			continue;
		if (!n)
			return cli_usage_error("init",
			                       "--args uses {%s}: give its value with --shape "
			                       "NAME:%s=VALUE",
			                       name, name);
		for (int s = 0; s < n; s++) {
			int have = 0;
			for (int k = 0; k < shapes[s].nparams; k++)
				have |= !strcmp(shapes[s].params[k], name);
			if (!have)
				return cli_usage_error(
				    "init", "--args uses {%s}, which --shape %s does not give",
				    name, shapes[s].name);
		}
	}
	return 0;
}

static int write_file(const char *dir, const char *name, const char *text, struct cuco_err *err)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) != 0)
		return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", path, strerror(errno));
	return CUCO_OK;
}

/* The first error line of an nvcc log (or its first line). */
static void first_error(const struct cuco_strbuf *log, char *out, size_t len)
{
	const char *s = log->buf ? strstr(log->buf, "error") : NULL;
	const char *start = s, *end;

	if (!s) {
		snprintf(out, len, "%.*s", (int)strcspn(log->buf ? log->buf : "", "\n"),
		         log->buf ? log->buf : "");
		return;
	}
	while (start > log->buf && start[-1] != '\n')
		start--;
	end = strchr(s, '\n');
	snprintf(out, len, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
}

/* Compile the package's baseline, workload and seed where they were written (dir). */
static int compile_check(const char *dir, const char *host, const char *seed, int *seed_ok,
                         char *seed_error, size_t errlen, char *host_so, size_t solen,
                         struct cuco_err *err)
{
	struct cuco_compile_opts co;
	struct cuco_compile_job jobs[3];
	char hpath[PATH_MAX], wpath[PATH_MAX], spath[PATH_MAX];
	struct cuco_strbuf wl = CUCO_STRBUF_INIT;
	int rc, n = seed ? 3 : 2;

	cuco_lift_emit_workload(host, &wl);
	if ((rc = cuco_compile_opts_default(&co, err)))
		return rc;
	snprintf(hpath, sizeof(hpath), "%s/host.cu", dir);
	snprintf(wpath, sizeof(wpath), "%s/workload.cu", dir);
	snprintf(spath, sizeof(spath), "%s/seed.cu", dir);
	cuco_compile_job_init(&jobs[0], "baseline", hpath, host);
	cuco_compile_job_init(&jobs[1], "workload", wpath, wl.buf);
	jobs[0].trusted = jobs[1].trusted = 1;
	if (seed) {
		cuco_compile_job_init(&jobs[2], "seed", spath, seed);
		jobs[2].trusted = 1;
	}
	rc = cuco_compile_many(&co, jobs, n, err);
	for (int i = 0; !rc && i < 2; i++)
		if (jobs[i].code) {
			char line[600];
			first_error(&jobs[i].log, line, sizeof(line));
			rc = cuco_err_set(err, CUCO_ERR_COMPILE,
			                  "the lifted %s does not compile: %s (nvcc: %s)",
			                  jobs[i].name, line, cuco_nvcc_version());
		}
	if (!rc)
		snprintf(host_so, solen, "%s", jobs[0].so_path);
	*seed_ok = seed && !rc && jobs[2].code == CUCO_OK;
	if (seed && !rc && jobs[2].code && !seed_error[0])
		first_error(&jobs[2].log, seed_error, errlen);
	for (int i = 0; i < n; i++)
		cuco_compile_job_release(&jobs[i]);
	cuco_strbuf_release(&wl);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines of a command's output, first words only, appended to v. */
static void command_words(const char *cmd, char ***v, size_t *n, size_t *alloc)
{
	FILE *p = popen(cmd, "r");
	char line[4096];

	while (p && fgets(line, sizeof(line), p)) {
		size_t k = strcspn(line, " \t\n");
		if (k)
			*CUCO_ARRAY_PUSH(*v, *n, *alloc) = cuco_xstrndup(line, k);
	}
	if (p)
		pclose(p);
}

/*
 * The symbols so needs that neither it nor the libraries it loads define: the program's own
 * functions and variables that no file given defines (a plug-in's driver, say). The lift
 * refused those the step reaches; the rest become weak (null), so that the program loads.
 */
static void unresolved(const char *so, struct cuco_strbuf *weak)
{
	char **need = NULL, **have = NULL, **libs = NULL, cmd[PATH_MAX * 2];
	size_t nneed = 0, aneed = 0, nhave = 0, ahave = 0, nlibs = 0, alibs = 0;
	struct cuco_strbuf q = CUCO_STRBUF_INIT;

	cuco_strbuf_add_shell_quoted(&q, so);
	snprintf(
	    cmd, sizeof(cmd),
	    "nm -D --undefined-only --format=posix %s 2>/dev/null | awk '$2 == \"U\" { print $1 }'",
	    q.buf);
	command_words(cmd, &need, &nneed, &aneed);
	snprintf(cmd, sizeof(cmd), "ldd %s 2>/dev/null | awk '$3 ~ /^\\// { print $3 }'", q.buf);
	command_words(cmd, &libs, &nlibs, &alibs);
	for (size_t i = 0; i < nlibs; i++) {
		struct cuco_strbuf l = CUCO_STRBUF_INIT;
		cuco_strbuf_add_shell_quoted(&l, libs[i]);
		snprintf(cmd, sizeof(cmd),
		         "nm -D --defined-only --format=posix %s 2>/dev/null | awk '{ print $1 }'",
		         l.buf);
		command_words(cmd, &have, &nhave, &ahave);
		cuco_strbuf_release(&l);
	}
	if (nhave)
		qsort(have, nhave, sizeof(*have), cmp_str);
	for (size_t i = 0; i < nneed; i++) {
		char *at = strchr(need[i], '@');
		if (at)
			continue; /* versioned: a library's */
		if (nhave && bsearch(&need[i], have, nhave, sizeof(*have), cmp_str))
			continue;
		cuco_strbuf_addf(weak, "__asm__(\".weak %s\");\n", need[i]);
	}
	for (size_t i = 0; i < nneed; i++)
		free(need[i]);
	for (size_t i = 0; i < nhave; i++)
		free(have[i]);
	for (size_t i = 0; i < nlibs; i++)
		free(libs[i]);
	free(need);
	free(have);
	free(libs);
	cuco_strbuf_release(&q);
}

static void print_report(const struct cuco_lift_facts *f, const struct cuco_lift_plan *p,
                         const char *dir, const char *name, int seed_ok, const char *seed_error,
                         int nseed)
{
	size_t todo = 0;
	const char *dot = strchr(dir, '/') ? "" : "./";

	printf("wrote %s: workload %s lifted from %zu file%s (libclang: %s)\n", dir, name,
	       (size_t)p->nunits, p->nunits == 1 ? "" : "s",
	       f->clang_version ? f->clang_version : "?");
	if (p->driver)
		printf("  step: a call of %s from the main the lift wrote\n",
		       f->functions[p->entry].name);
	else
		printf("  step: %s:%u-%u in %s (%s)\n",
		       f->files[p->step.file].rel ? f->files[p->step.file].rel : "?", p->step.line,
		       p->step.end_line, f->functions[p->step_fn].name,
		       p->step_loop >= 0 ? "a loop's body" : "statements");
	printf("  NCCL calls the seed makes device-initiated: %zu", (size_t)p->nstep_calls);
	for (size_t i = 0; i < p->nstep_calls && i < 8; i++) {
		const struct cuco_lift_call *c = &f->calls[p->step_calls[i]];
		printf("%s%s (%s:%u)", i ? ", " : ": ", c->callee,
		       f->files[c->name.file].rel ? f->files[c->name.file].rel : "?", c->name.line);
	}
	printf("%s\n", p->nstep_calls > 8 ? ", ..." : "");
	printf("  buffers allocated: %zu sites; tensors are those alive at the step\n",
	       (size_t)p->nsites);
	printf("  seed: %s", seed_ok ? "compiles" : "does not compile");
	if (!seed_ok && seed_error && seed_error[0])
		printf(" (%s)", seed_error);
	printf(", %d call%s transformed\n", nseed, nseed == 1 ? "" : "s");
	for (size_t i = 0; i < p->nnotes; i++) {
		const struct cuco_lift_note *n = &p->notes[i];
		const char *kind = n->kind == CUCO_LIFT_NOTE_TODO ? "to do" : "note";
		todo += n->kind == CUCO_LIFT_NOTE_TODO;
		if (n->file >= 0)
			printf("  %s: %s:%u: %s\n", kind,
			       f->files[n->file].rel ? f->files[n->file].rel : "?", n->line,
			       n->text);
		else
			printf("  %s: %s\n", kind, n->text);
	}
	printf("  %zu item%s left to finish by hand\n", todo + !seed_ok,
	       todo + !seed_ok == 1 ? "" : "s");
	printf("next:\n  cuco bench %s%s --ranks 1    (one GPU: the program's step, verified "
	       "against itself)\n  cuco fastpath %s%s            (the device-initiated seed)\n"
	       "  cuco bench %s%s              (2, 4 or 8 GPUs)\n",
	       dot, dir, dot, dir, dot, dir);
}

int cli_init_from(const struct init_from_opts *o)
{
	struct cuco_lift_scan_opts so;
	struct cuco_lift_facts f;
	struct cuco_lift_plan p;
	struct cuco_lift_plan_opts po = {o->step, o->entry};
	struct cuco_lift_emit_opts eo;
	struct cuco_lift_shape shapes[16];
	struct cuco_strbuf host = CUCO_STRBUF_INIT, man = CUCO_STRBUF_INIT, rep = CUCO_STRBUF_INIT,
	                   seed = CUCO_STRBUF_INIT, wlt = CUCO_STRBUF_INIT;
	struct cuco_err err;
	struct stat st;
	char overlay[PATH_MAX], root[PATH_MAX], tmp[PATH_MAX], seed_error[600] = "", path[PATH_MAX];
	const char *home = cuco_home(NULL), *src[1];
	int rc, nshapes = 0, seed_ok = 0, nseed = 0, made_tmp = 0;

	cuco_err_clear(&err);
	cuco_lift_facts_init(&f);
	cuco_lift_plan_init(&p);
	memset(&so, 0, sizeof(so));
	for (int i = 0; i < o->nshapes; i++)
		if ((rc = parse_shape(o->shapes[i], &shapes[nshapes++])))
			goto out_quiet;
	if ((rc = check_argv(o->args, shapes, nshapes)))
		goto out_quiet;
	if (stat(o->from, &st) != 0) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND, "--from %s: %s", o->from,
		                  strerror(errno));
		goto fail;
	}
	if (!home) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND, "cuco home not found; set CUCO_HOME");
		goto fail;
	}
	snprintf(overlay, sizeof(overlay), "%s/device/include/cuco_dev/lift", home);
	if (S_ISDIR(st.st_mode)) {
		snprintf(root, sizeof(root), "%s", o->from);
	} else {
		const char *slash;
		if ((rc = check_file(o->from, &err)))
			goto fail;
		slash = strrchr(o->from, '/');
		snprintf(root, sizeof(root), "%.*s", slash ? (int)(slash - o->from) : 1,
		         slash ? o->from : ".");
		src[0] = o->from;
		so.sources = src;
		so.nsources = 1;
	}
	so.root = root;
	so.include_dirs = o->include_dirs;
	so.ninclude_dirs = (size_t)o->ninclude_dirs;
	so.defines = o->defines;
	so.ndefines = (size_t)o->ndefines;
	so.overlay_dir = overlay;
	if ((rc = cuco_lift_scan(&so, &f, &err)))
		goto fail;
	if ((rc = cuco_lift_plan_make(&f, &po, &p, &err)))
		goto fail;
	memset(&eo, 0, sizeof(eo));
	eo.name = o->name;
	eo.argv = o->args ? o->args : "";
	eo.shapes = shapes;
	eo.nshapes = nshapes;
	eo.defines = o->defines;
	eo.ndefines = (size_t)o->ndefines;
	eo.from = o->from;
	eo.include_dirs = o->include_dirs;
	eo.ninclude_dirs = (size_t)o->ninclude_dirs;
	{
		static struct cuco_lift_arg_value av[32];
		for (int i = 0; i < o->nargs_given; i++) {
			const char *eq = strchr(o->arg_values[i], '=');
			static char names[32][64];
			if (!eq || eq == o->arg_values[i] ||
			    (size_t)(eq - o->arg_values[i]) >= 64) {
				rc = cli_usage_error("init", "--arg %s: expected NAME=EXPR",
				                     o->arg_values[i]);
				goto out_quiet;
			}
			snprintf(names[i], 64, "%.*s", (int)(eq - o->arg_values[i]),
			         o->arg_values[i]);
			av[i].name = names[i];
			av[i].expr = eq + 1;
		}
		eo.args = av;
		eo.nargs = (size_t)o->nargs_given;
	}
	if ((rc = cuco_lift_emit_host(&f, &p, &eo, &host, &err)))
		goto fail;
	cuco_lift_emit_manifest(&f, &p, &eo, &man);
	if ((rc = cuco_lift_emit_report(&f, &p, &eo, &rep, &err)))
		goto fail;
	if (cuco_lift_seed("host.cu", host.buf, cli_share_dir("fastpath"), &seed, &nseed, &err)) {
		snprintf(seed_error, sizeof(seed_error), "%s", err.msg);
		cuco_err_clear(&err);
		cuco_strbuf_reset(&seed);
	}
	/* written beside the final folder, compiled there, then moved into place */
	if (stat(o->dir, &st) == 0) {
		snprintf(path, sizeof(path), "%s/manifest.json", o->dir);
		if (cuco_file_exists(path)) {
			rc = cuco_err_set(&err, CUCO_ERR_INVALID,
			                  "-o %s: already holds a workload (manifest.json); choose "
			                  "another directory or remove it",
			                  o->dir);
			goto fail;
		}
	}
	snprintf(tmp, sizeof(tmp), "%s.lift-XXXXXX", o->dir);
	if (!mkdtemp(tmp)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "-o %s: cannot create a folder beside it: %s",
		                  o->dir, strerror(errno));
		goto fail;
	}
	made_tmp = 1;
	chmod(tmp, 0755);
	cuco_lift_emit_workload(host.buf, &wlt);
	if ((rc = write_file(tmp, "host.cu", host.buf, &err)) ||
	    (rc = write_file(tmp, "workload.cu", wlt.buf, &err)) ||
	    (rc = write_file(tmp, "manifest.json", man.buf, &err)) ||
	    (rc = write_file(tmp, "lift.json", rep.buf, &err)))
		goto fail;
	if (!o->no_compile) {
		int seed_compiles = 0;
		char host_so[PATH_MAX] = "";
		struct cuco_strbuf weak = CUCO_STRBUF_INIT;
		if ((rc = compile_check(tmp, host.buf, seed.len ? seed.buf : NULL, &seed_compiles,
		                        seed_error, sizeof(seed_error), host_so, sizeof(host_so),
		                        &err)))
			goto fail;
		unresolved(host_so, &weak);
		if (weak.len) {
			/* the program's symbols no file defines: weak, then everything again */
			cuco_strbuf_adds(
			    &host, "\n// The program's own symbols that no file given defines "
			           "(the step reaches none of them):\n// weak, so that the "
			           "program loads.\n");
			cuco_strbuf_add(&host, weak.buf, weak.len);
			cuco_strbuf_reset(&seed);
			seed_error[0] = 0;
			if (cuco_lift_seed("host.cu", host.buf, cli_share_dir("fastpath"), &seed,
			                   &nseed, &err)) {
				snprintf(seed_error, sizeof(seed_error), "%s", err.msg);
				cuco_err_clear(&err);
				cuco_strbuf_reset(&seed);
			}
			cuco_strbuf_reset(&wlt);
			cuco_lift_emit_workload(host.buf, &wlt);
			if ((rc = write_file(tmp, "host.cu", host.buf, &err)) ||
			    (rc = write_file(tmp, "workload.cu", wlt.buf, &err)) ||
			    (rc = compile_check(tmp, host.buf, seed.len ? seed.buf : NULL,
			                        &seed_compiles, seed_error, sizeof(seed_error),
			                        host_so, sizeof(host_so), &err))) {
				cuco_strbuf_release(&weak);
				goto fail;
			}
			cuco_lift_plan_note(
			    &p, CUCO_LIFT_NOTE_INFO, -1, 0,
			    "symbols the program declares and no file given defines are "
			    "weak in host.cu (the step reaches none of them)");
		}
		cuco_strbuf_release(&weak);
		seed_ok = seed_compiles;
	} else {
		seed_ok = seed.len > 0;
	}
	if (stat(o->dir, &st) == 0 && rmdir(o->dir) != 0) {
		rc = cuco_err_set(&err, CUCO_ERR_INVALID, "-o %s: exists and is not empty", o->dir);
		goto fail;
	}
	if (rename(tmp, o->dir) != 0) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "-o %s: %s", o->dir, strerror(errno));
		goto fail;
	}
	made_tmp = 0;
	print_report(&f, &p, o->dir, o->name, seed_ok, seed_error, nseed);
	rc = CUCO_OK;
	goto out;
fail:
	cli_fail(&err);
out:
	if (made_tmp)
		cuco_proc_remove_tree(tmp);
out_quiet:
	cuco_strbuf_release(&host);
	cuco_strbuf_release(&man);
	cuco_strbuf_release(&rep);
	cuco_strbuf_release(&seed);
	cuco_strbuf_release(&wlt);
	cuco_lift_plan_release(&p);
	cuco_lift_facts_release(&f);
	return rc;
}
