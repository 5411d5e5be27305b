/* facts.c - the lift's facts: their life, the first error, look-ups, the enums' names. */
#include "lift/facts.h"

#include <stdlib.h>
#include <string.h>

void cuco_lift_facts_init(struct cuco_lift_facts *f)
{
	memset(f, 0, sizeof(*f));
}

static void args_release(struct cuco_lift_arg *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(a[i].text);
		free(a[i].enumerator);
	}
	free(a);
}

void cuco_lift_facts_release(struct cuco_lift_facts *f)
{
	size_t i, j;

	for (i = 0; i < f->nfiles; i++) {
		free(f->files[i].path);
		free(f->files[i].rel);
	}
	for (i = 0; i < f->nincludes; i++)
		free(f->includes[i].name);
	for (i = 0; i < f->ndiags; i++) {
		free(f->diags[i].message);
		free(f->diags[i].option);
	}
	for (i = 0; i < f->nfunctions; i++) {
		struct cuco_lift_function *fn = &f->functions[i];

		free(fn->name);
		free(fn->qualified);
		free(fn->usr);
		for (j = 0; j < fn->nparams; j++) {
			free(fn->params[j].name);
			free(fn->params[j].type);
		}
		free(fn->params);
	}
	for (i = 0; i < f->ncalls; i++) {
		struct cuco_lift_call *c = &f->calls[i];

		free(c->callee);
		free(c->callee_usr);
		free(c->macro.name);
		args_release(c->args, c->nargs);
		free(c->dest_root);
		free(c->dest_type);
		free(c->dest_pointee);
	}
	for (i = 0; i < f->nlaunches; i++) {
		struct cuco_lift_launch *l = &f->launches[i];

		free(l->kernel);
		free(l->kernel_usr);
		free(l->macro.name);
		for (j = 0; j < 4; j++)
			free(l->config[j]);
		args_release(l->args, l->nargs);
	}
	for (i = 0; i < f->nstmts; i++) {
		free(f->stmts[i].macro);
		free(f->stmts[i].cond_text);
		free(f->stmts[i].induction);
	}
	for (i = 0; i < f->nthreads; i++)
		free(f->threads[i].entry);
	for (i = 0; i < f->nundefined; i++) {
		free(f->undefined[i].name);
		free(f->undefined[i].usr);
	}
	for (i = 0; i < f->nmacros; i++)
		free(f->macros[i].name);
	for (i = 0; i < f->npatches; i++)
		free(f->patches[i].replacement);
	free(f->files);
	free(f->includes);
	free(f->diags);
	free(f->functions);
	free(f->calls);
	free(f->launches);
	free(f->stmts);
	free(f->threads);
	free(f->undefined);
	free(f->macros);
	free(f->patches);
	free(f->root);
	free(f->clang_version);
	memset(f, 0, sizeof(*f));
}

const struct cuco_lift_diag *cuco_lift_first_error(const struct cuco_lift_facts *f)
{
	const struct cuco_lift_diag *any = NULL;
	size_t i;

	for (i = 0; i < f->ndiags; i++) {
		const struct cuco_lift_diag *d = &f->diags[i];

		if (d->severity < CUCO_LIFT_ERROR)
			continue;
		if (d->pos.file >= 0 && f->files[d->pos.file].local)
			return d;
		if (!any)
			any = d;
	}
	return any;
}

static const char *shown(const struct cuco_lift_facts *f, int file)
{
	if (file < 0 || (size_t)file >= f->nfiles)
		return "<no file>";
	return f->files[file].rel ? f->files[file].rel : f->files[file].path;
}

void cuco_lift_diag_format(const struct cuco_lift_facts *f, const struct cuco_lift_diag *d,
                           struct cuco_strbuf *out)
{
	int file = d->pos.file, depth = 0;

	if (file >= 0)
		cuco_strbuf_addf(out, "%s:%u:%u: ", shown(f, file), d->pos.line, d->pos.column);
	cuco_strbuf_addf(out, "%s: %s", cuco_lift_severity_name(d->severity), d->message);
	while (file >= 0 && f->files[file].included_from >= 0 && depth++ < 64) {
		cuco_strbuf_addf(out, "\n  included from %s:%u",
		                 shown(f, f->files[file].included_from),
		                 f->files[file].include_line);
		file = f->files[file].included_from;
	}
}

int cuco_lift_function_find(const struct cuco_lift_facts *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nfunctions; i++)
		if (strcmp(f->functions[i].name, name) == 0 ||
		    strcmp(f->functions[i].qualified, name) == 0)
			return (int)i;
	return -1;
}

int cuco_lift_file_find(const struct cuco_lift_facts *f, const char *path)
{
	size_t i;

	for (i = 0; i < f->nfiles; i++)
		if (strcmp(f->files[i].path, path) == 0 ||
		    (f->files[i].rel && strcmp(f->files[i].rel, path) == 0))
			return (int)i;
	return -1;
}

int cuco_lift_call_is_host_collective(const struct cuco_lift_call *c)
{
	return c->origin == CUCO_LIFT_ORIGIN_NCCL &&
	       (c->nccl == CUCO_LIFT_NCCL_COLLECTIVE || c->nccl == CUCO_LIFT_NCCL_P2P);
}

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n && names[v] ? names[v] : "unknown";
}

#define NAME_OF(names, v) name_of((names), sizeof(names) / sizeof((names)[0]), (v))

const char *cuco_lift_origin_name(int origin)
{
	static const char *const names[] = {"unknown", "nccl",    "nccl_device", "mpi",
	                                    "cuda",    "toolkit", "local",       "system"};

	return NAME_OF(names, origin);
}

const char *cuco_lift_nccl_name(int nccl)
{
	static const char *const names[] = {"none",     "collective", "p2p",   "group", "setup",
	                                    "teardown", "memory",     "query", "redop", "other"};

	return NAME_OF(names, nccl);
}

const char *cuco_lift_fn_kind_name(int kind)
{
	static const char *const names[] = {"host", "kernel", "device", "host_device"};

	return NAME_OF(names, kind);
}

const char *cuco_lift_stmt_kind_name(int kind)
{
	static const char *const names[] = {"other",  "compound", "expr",   "decl",  "if",
	                                    "switch", "for",      "while",  "do",    "range_for",
	                                    "break",  "continue", "return", "lambda"};

	return NAME_OF(names, kind);
}

const char *cuco_lift_thread_kind_name(int kind)
{
	static const char *const names[] = {NULL,      "pthread", "std_thread",
	                                    "jthread", "async",   "emplace"};

	return NAME_OF(names, kind);
}

const char *cuco_lift_severity_name(int severity)
{
	static const char *const names[] = {NULL, NULL, "warning", "error", "fatal error"};

	return NAME_OF(names, severity);
}
