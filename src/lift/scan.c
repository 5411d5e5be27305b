/*
 * scan.c - cuco_lift_scan: which sources make the program (the caller's,
 * compile_commands.json's, or every source under the root), the flags
 * clang parses each with, one translation unit after another into the
 * facts, and what only the whole program tells (calls to local functions,
 * the undefined ones).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lift/internal.h"
#include "util/array.h"
#include "util/paths.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Enough for any program someone lifts; a root with more is not a program's folder. */
#define MAX_FILES 20000

/* A translation unit to parse: its file and its own flags (compile_commands.json's). */
struct source {
	char *path;
	char *dir; /* the compile command's folder, NULL for none */
	char **flags;
	size_t nflags, flags_alloc;
	int has_std;
};

struct sources {
	struct source *v;
	size_t n, alloc;
};

/* A growing argument vector, every string owned. */
struct argv {
	char **v;
	size_t n, alloc;
};

static void arg(struct argv *a, const char *s)
{
	*CUCO_ARRAY_PUSH(a->v, a->n, a->alloc) = cuco_xstrdup(s);
}

static void argf(struct argv *a, const char *fmt, const char *s)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	cuco_strbuf_addf(&sb, fmt, s);
	*CUCO_ARRAY_PUSH(a->v, a->n, a->alloc) = cuco_strbuf_detach(&sb, NULL);
}

static void argv_release(struct argv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static void sources_release(struct sources *s)
{
	size_t i, j;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].dir);
		for (j = 0; j < s->v[i].nflags; j++)
			free(s->v[i].flags[j]);
		free(s->v[i].flags);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static const char *ext(const char *path)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	return dot && (!slash || dot > slash) ? dot + 1 : "";
}

static int is_source(const char *path)
{
	const char *e = ext(path);

	return !strcmp(e, "c") || !strcmp(e, "cc") || !strcmp(e, "cpp") || !strcmp(e, "cxx") ||
	       !strcmp(e, "cu");
}

/* A file whose text may need the patches of text.c: sources and headers. */
static int is_text(const char *path)
{
	const char *e = ext(path);

	return is_source(path) || !strcmp(e, "h") || !strcmp(e, "hh") || !strcmp(e, "hpp") ||
	       !strcmp(e, "hxx") || !strcmp(e, "cuh") || !strcmp(e, "inl") || !strcmp(e, "inc");
}

static int is_dir(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static struct source *add_source(struct sources *s, const char *real)
{
	struct source *e;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i].path, real) == 0)
			return NULL;
	e = CUCO_ARRAY_PUSH(s->v, s->n, s->alloc);
	memset(e, 0, sizeof(*e));
	e->path = cuco_xstrdup(real);
	return e;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file under dir (hidden folders skipped) that keep() accepts, sorted, into out. */
static void walk_dir(const char *dir, int (*keep)(const char *), struct argv *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct argv sub = {NULL, 0, 0};
	size_t i;

	if (!d)
		return;
	while ((e = readdir(d)) && out->n + sub.n < MAX_FILES) {
		struct cuco_strbuf p = CUCO_STRBUF_INIT;

		if (e->d_name[0] == '.')
			continue;
		cuco_strbuf_addf(&p, "%s/%s", dir, e->d_name);
		if (is_dir(p.buf) || keep(p.buf))
			arg(&sub, p.buf);
		cuco_strbuf_release(&p);
	}
	closedir(d);
	if (sub.n)
		qsort(sub.v, sub.n, sizeof(sub.v[0]), name_cmp);
	for (i = 0; i < sub.n; i++) {
		if (is_dir(sub.v[i]))
			walk_dir(sub.v[i], keep, out);
		else if (out->n < MAX_FILES)
			arg(out, sub.v[i]);
	}
	argv_release(&sub);
}

/* A compile command's path argument, absolute against its folder. */
static char *absolute(const char *dir, const char *p)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (p[0] == '/' || !dir)
		cuco_strbuf_adds(&sb, p);
	else
		cuco_strbuf_addf(&sb, "%s/%s", dir, p);
	return cuco_strbuf_detach(&sb, NULL);
}

/*
 * The flags of a compile command that change what the parse sees: include
 * folders, macros, forced includes, the language standard. The compiler's
 * other flags (nvcc's -arch, -o, -c) mean nothing to the parse.
 */
static void keep_flags(struct source *s, const char *dir, char **args, size_t n)
{
	static const char *const path_flags[] = {"-I", "-isystem", "-iquote", "-idirafter",
	                                         "-include"};
	size_t i, j;

	for (i = 1; i < n; i++) {
		const char *a = args[i];
		int done = 0;

		for (j = 0; j < sizeof(path_flags) / sizeof(path_flags[0]) && !done; j++) {
			size_t l = strlen(path_flags[j]);
			const char *val = NULL;

			if (strcmp(a, path_flags[j]) == 0 && i + 1 < n)
				val = args[++i];
			else if (strncmp(a, path_flags[j], l) == 0 && a[l] && j == 0)
				val = a + l;
			if (!val)
				continue;
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) =
			    cuco_xstrdup(path_flags[j]);
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) = absolute(dir, val);
			done = 1;
		}
		if (done)
			continue;
		if ((!strcmp(a, "-D") || !strcmp(a, "-U")) && i + 1 < n) {
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) = cuco_xstrdup(a);
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) =
			    cuco_xstrdup(args[++i]);
		} else if (!strncmp(a, "-D", 2) || !strncmp(a, "-U", 2)) {
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) = cuco_xstrdup(a);
		} else if (!strncmp(a, "-std=", 5) || !strncmp(a, "--std=", 6)) {
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) =
			    absolute(NULL, a + (a[1] == '-' ? 1 : 0));
			s->has_std = 1;
		} else if (!strcmp(a, "--std") && i + 1 < n) {
			struct cuco_strbuf sb = CUCO_STRBUF_INIT;

			cuco_strbuf_addf(&sb, "-std=%s", args[++i]);
			*CUCO_ARRAY_PUSH(s->flags, s->nflags, s->flags_alloc) =
			    cuco_strbuf_detach(&sb, NULL);
			s->has_std = 1;
		}
	}
}

/* root/compile_commands.json's C, C++ and CUDA files with their flags (through libclang). */
static int from_compdb(struct lift_scan *S, struct sources *out, struct cuco_err *err)
{
	const struct cuco_lift_clang *C = S->C;
	CXCompilationDatabase_Error e = CXCompilationDatabase_NoError;
	CXCompilationDatabase db = C->clang_CompilationDatabase_fromDirectory(S->root, &e);
	CXCompileCommands cmds;
	unsigned i, n;
	int rc = CUCO_OK;

	if (!db || e != CXCompilationDatabase_NoError) {
		if (db)
			C->clang_CompilationDatabase_dispose(db);
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "%s/compile_commands.json cannot be read as a compilation "
		                    "database: fix it, or pass the sources without it",
		                    S->root);
	}
	cmds = C->clang_CompilationDatabase_getAllCompileCommands(db);
	n = cmds ? C->clang_CompileCommands_getSize(cmds) : 0;
	for (i = 0; i < n; i++) {
		CXCompileCommand cmd = C->clang_CompileCommands_getCommand(cmds, i);
		struct lift_unit U0 = {.C = C};
		char *dir = lift_str(&U0, C->clang_CompileCommand_getDirectory(cmd));
		char *file = lift_str(&U0, C->clang_CompileCommand_getFilename(cmd));
		char *path = absolute(dir, file), real[PATH_MAX];
		struct argv args = {NULL, 0, 0};
		unsigned j, na = C->clang_CompileCommand_getNumArgs(cmd);
		struct source *s;

		for (j = 0; j < na; j++)
			*CUCO_ARRAY_PUSH(args.v, args.n, args.alloc) =
			    lift_str(&U0, C->clang_CompileCommand_getArg(cmd, j));
		if (is_source(path) && realpath(path, real)) {
			s = add_source(out, real);
			if (s) {
				s->dir = cuco_xstrdup(dir);
				keep_flags(s, dir, args.v, args.n);
			}
		}
		argv_release(&args);
		free(dir);
		free(file);
		free(path);
	}
	if (cmds)
		C->clang_CompileCommands_dispose(cmds);
	C->clang_CompilationDatabase_dispose(db);
	if (!out->n)
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "%s/compile_commands.json names no C, C++ or CUDA source",
		                  S->root);
	return rc;
}

/* The sources to parse, and the root. */
static int find_sources(struct lift_scan *S, struct sources *out, struct cuco_err *err)
{
	const struct cuco_lift_scan_opts *o = S->opts;
	char real[PATH_MAX];
	size_t i;

	for (i = 0; i < o->nsources; i++) {
		if (!realpath(o->sources[i], real) || is_dir(real))
			return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", o->sources[i],
			                    is_dir(o->sources[i]) ? "a folder, not a source file"
			                                          : strerror(errno));
		add_source(out, real);
	}
	if (o->root) {
		if (!realpath(o->root, real) || !is_dir(real))
			return cuco_err_set(err, CUCO_ERR_IO, "%s: not a readable folder", o->root);
	} else if (out->n) {
		char *slash;

		snprintf(real, sizeof(real), "%s", out->v[0].path);
		slash = strrchr(real, '/');
		if (slash)
			*(slash == real ? slash + 1 : slash) = '\0';
	} else {
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "nothing to scan: name sources or a root");
	}
	S->root = cuco_xstrdup(real);
	if (out->n)
		return CUCO_OK;
	snprintf(real, sizeof(real), "%s/compile_commands.json", S->root);
	if (!o->no_compile_commands && exists(real))
		return from_compdb(S, out, err);
	{
		struct argv files = {NULL, 0, 0};

		walk_dir(S->root, is_source, &files);
		for (i = 0; i < files.n; i++)
			if (realpath(files.v[i], real))
				add_source(out, real);
		argv_release(&files);
	}
	if (!out->n)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "%s holds no C, C++ or CUDA source (.c, .cc, .cpp, .cxx, .cu)",
		                    S->root);
	return CUCO_OK;
}

/*
 * The local files whose parse needs an adjusted copy: read the ones whose
 * text mentions what text.c adjusts.
 */
static void preload_texts(struct lift_scan *S)
{
	struct argv files = {NULL, 0, 0};
	size_t i;

	walk_dir(S->root, is_text, &files);
	for (i = 0; i < files.n; i++) {
		struct lift_text *t = cuco_xcalloc(1, sizeof(*t));

		if (lift_text_load(t, files.v[i]) < 0 ||
		    (!strstr(t->src, "__NVCC__") && !strstr(t->src, "<<<"))) {
			lift_text_release(t);
			free(t);
			continue;
		}
		lift_text_patch(t);
		*CUCO_ARRAY_PUSH(S->texts, S->ntexts, S->texts_alloc) = t;
	}
	argv_release(&files);
}

/* clang's own headers for the loaded version, when the usual Debian folder has them. */
static void resource_dir(const struct cuco_lift_clang *C, struct argv *a)
{
	char dir[PATH_MAX], probe[PATH_MAX + 64];
	DIR *d;
	struct dirent *e;
	int found = 0;

	if (C->major <= 0)
		return;
	snprintf(dir, sizeof(dir), "/usr/lib/llvm-%d/lib/clang", C->major);
	d = opendir(dir);
	if (!d)
		return;
	while (!found && (e = readdir(d))) {
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (v != C->major || (*end && *end != '.'))
			continue;
		snprintf(probe, sizeof(probe), "%s/%s/include/stddef.h", dir, e->d_name);
		if (exists(probe)) {
			snprintf(probe, sizeof(probe), "%s/%s", dir, e->d_name);
			argf(a, "-resource-dir=%s", probe);
			found = 1;
		}
	}
	closedir(d);
}

static const char *toolkit(const struct cuco_lift_scan_opts *o)
{
	const char *env = getenv("CUDA_HOME");

	if (o->cuda_path && *o->cuda_path)
		return o->cuda_path;
	return env && *env ? env : "/usr/local/cuda";
}

/* The flags of one unit, in clang's order of search: overlay, user, toolkit. */
static int unit_args(struct lift_scan *S, const struct source *src, int cuda, struct argv *a,
                     struct cuco_err *err)
{
	const struct cuco_lift_scan_opts *o = S->opts;
	const char *tk = toolkit(o), *nccl = cuco_nccl_home(), *e = ext(src->path);
	struct cuco_strbuf p = CUCO_STRBUF_INIT;
	size_t i;

	resource_dir(S->C, a);
	if (cuda) {
		const char *home = cuco_home(err);

		if (!home)
			return err ? err->code : CUCO_ERR_NOT_FOUND;
		arg(a, "-x");
		arg(a, "cuda");
		arg(a, "--cuda-host-only");
		arg(a, "-nocudalib");
		argf(a, "--cuda-path=%s", tk);
		arg(a, "--cuda-gpu-arch=sm_90");
		arg(a, "-Wno-unknown-cuda-version");
		/* CCCL's host-device helpers are variadic; nvcc accepts them, clang needs asking */
		arg(a, "-Xclang");
		arg(a, "-fcuda-allow-variadic-functions");
		cuco_strbuf_addf(&p, "%s/share/clang/cuda_compat.h", home);
		if (!exists(p.buf)) {
			int rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
			                      "%s is missing: cuco's share/ folder is incomplete "
			                      "(reinstall cuco or set CUCO_HOME)",
			                      p.buf);

			cuco_strbuf_release(&p);
			return rc;
		}
		arg(a, "-include");
		arg(a, p.buf);
		cuco_strbuf_reset(&p);
		/* CUDA 13 has no texture_fetch_functions.h, which clang 16's wrapper includes */
		cuco_strbuf_addf(&p, "%s/include/texture_fetch_functions.h", tk);
		if (!exists(p.buf)) {
			cuco_strbuf_reset(&p);
			cuco_strbuf_addf(&p, "%s/share/clang/include", home);
			arg(a, "-isystem");
			arg(a, p.buf);
		}
		cuco_strbuf_reset(&p);
		cuco_strbuf_addf(&p, "%s/include/cccl", tk);
		if (is_dir(p.buf)) {
			arg(a, "-isystem");
			arg(a, p.buf);
		}
	} else {
		arg(a, "-x");
		arg(a, !strcmp(e, "c") ? "c" : "c++");
	}
	cuco_strbuf_release(&p);
	if (!src->has_std && strcmp(e, "c") != 0)
		arg(a, "-std=c++17");
	if (o->overlay_dir) {
		arg(a, "-I");
		arg(a, o->overlay_dir);
	}
	for (i = 0; i < o->ninclude_dirs; i++) {
		arg(a, "-I");
		arg(a, o->include_dirs[i]);
	}
	for (i = 0; i < src->nflags; i++)
		arg(a, src->flags[i]);
	for (i = 0; i < o->ndefines; i++)
		argf(a, "-D%s", o->defines[i]);
	if (nccl) {
		arg(a, "-isystem");
		argf(a, "%s/include", nccl);
	}
	if (!cuda) {
		arg(a, "-isystem");
		argf(a, "%s/include", tk);
	}
	if (src->dir)
		argf(a, "-working-directory=%s", src->dir);
	return CUCO_OK;
}

static void unit_release(struct lift_unit *U)
{
	size_t i;

	for (i = 0; i < U->nexps; i++)
		free(U->exps[i].name);
	free(U->exps);
	free(U->incs);
	free(U->files);
	free(U->exits);
}

static void parse_failed(struct lift_scan *S, const char *path, int code)
{
	struct cuco_lift_facts *f = S->facts;
	struct cuco_lift_diag *d = CUCO_ARRAY_PUSH(f->diags, f->ndiags, f->diags_alloc);
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	memset(d, 0, sizeof(*d));
	d->severity = CUCO_LIFT_FATAL;
	d->pos.file = -1;
	d->unit = -1;
	cuco_strbuf_addf(&sb, "%s: libclang could not parse this file (CXErrorCode %d)", path,
	                 code);
	d->message = cuco_strbuf_detach(&sb, NULL);
}

static int parse_unit(struct lift_scan *S, CXIndex index, const struct source *src,
                      struct cuco_err *err)
{
	const struct cuco_lift_clang *C = S->C;
	int cuda = !strcmp(ext(src->path), "cu"), rc;
	struct argv a = {NULL, 0, 0};
	struct CXUnsavedFile *unsaved = NULL;
	size_t nunsaved = 0, unsaved_alloc = 0, i;
	struct lift_unit U;
	CXTranslationUnit tu = NULL;
	enum CXErrorCode ce;

	rc = unit_args(S, src, cuda, &a, err);
	if (rc != CUCO_OK)
		goto out;
	for (i = 0; cuda && i < S->ntexts; i++) {
		struct CXUnsavedFile *u;

		if (!S->texts[i]->patched)
			continue;
		u = CUCO_ARRAY_PUSH(unsaved, nunsaved, unsaved_alloc);
		u->Filename = S->texts[i]->path;
		u->Contents = S->texts[i]->patched;
		u->Length = (unsigned long)S->texts[i]->patched_len;
	}
	ce = C->clang_parseTranslationUnit2(
	    index, src->path, (const char *const *)a.v, (int)a.n, unsaved, (unsigned)nunsaved,
	    CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_KeepGoing, &tu);
	if (ce != CXError_Success || !tu) {
		parse_failed(S, src->path, (int)ce);
		goto out;
	}
	memset(&U, 0, sizeof(U));
	U.S = S;
	U.C = C;
	U.tu = tu;
	U.cuda = cuda;
	U.unit = -1;
	lift_unit_preprocessor(&U);
	{
		struct lift_unit_file *uf = lift_unit_file(&U, C->clang_getFile(tu, src->path));

		if (uf) {
			U.unit = uf->index;
			S->facts->files[uf->index].parsed = 1;
			S->facts->files[uf->index].included_from = -1;
		}
	}
	lift_unit_diagnostics(&U);
	lift_walk_unit(&U);
	unit_release(&U);
	C->clang_disposeTranslationUnit(tu);
out:
	free(unsaved);
	argv_release(&a);
	return rc;
}

int cuco_lift_scan(const struct cuco_lift_scan_opts *opts, struct cuco_lift_facts *facts,
                   struct cuco_err *err)
{
	struct lift_scan S;
	struct sources src = {NULL, 0, 0};
	CXIndex index = NULL;
	char real[PATH_MAX];
	size_t i;
	int rc = cuco_lift_clang_load(err);

	memset(&S, 0, sizeof(S));
	if (rc != CUCO_OK)
		return rc;
	S.C = cuco_lift_clang();
	S.opts = opts;
	S.facts = facts;
	rc = find_sources(&S, &src, err);
	if (rc != CUCO_OK)
		goto out;
	free(facts->root);
	facts->root = cuco_xstrdup(S.root);
	free(facts->clang_version);
	facts->clang_version = cuco_xstrdup(cuco_lift_clang_version());
	{
		char inc[PATH_MAX];

		snprintf(inc, sizeof(inc), "%s/include", toolkit(opts));
		if (realpath(inc, real))
			S.toolkit_inc = cuco_xstrdup(real);
	}
	preload_texts(&S);
	index = S.C->clang_createIndex(0, 0);
	for (i = 0; i < src.n && rc == CUCO_OK; i++)
		rc = parse_unit(&S, index, &src.v[i], err);
	lift_resolve(facts);
out:
	if (index)
		S.C->clang_disposeIndex(index);
	for (i = 0; i < S.ntexts; i++) {
		lift_text_release(S.texts[i]);
		free(S.texts[i]);
	}
	free(S.texts);
	free(S.file_text);
	free(S.walked);
	free(S.root);
	free(S.toolkit_inc);
	sources_release(&src);
	return rc;
}
