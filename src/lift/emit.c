/*
 * emit.c - a lifted package's files from a plan (emit.h). host.cu keeps the
 * program's text: every file gets the plan's edits (which never remove a line
 * of the user's), local headers are inlined where they are included, and
 * `#line` directives keep every line numbered as in the user's file, so
 * compile errors and the runtime's messages name the user's file and line.
 */
#include "lift/emit.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <cuco/program.h>

#include "util/array.h"
#include "util/xalloc.h"

#define STEP_TAG "/*cuco:step*/"

struct piece {
	unsigned begin, end;
	int order; /* at one offset: lines (0), edits (1 + seq) */
	const char *text;
	int include; /* >= 0: inline this file here */
	int resync;  /* the text holds newlines: number the rest of the line again */
};

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static unsigned line_of(const char *t, unsigned off)
{
	unsigned line = 1;
	for (unsigned i = 0; i < off && t[i]; i++)
		line += t[i] == '\n';
	return line;
}

static unsigned line_start(const char *t, unsigned line)
{
	unsigned off = 0;
	for (unsigned l = 1; l < line && t[off]; off++)
		if (t[off] == '\n')
			l++;
	return off;
}

static const char *relname(const struct cuco_lift_facts *f, int file)
{
	return f->files[file].rel ? f->files[file].rel : f->files[file].path;
}

/* The include folders whose headers are the program's own (set by cuco_lift_emit_host). */
static const struct cuco_lift_emit_opts *own_dirs;

static int in_own_dir(const char *path)
{
	for (size_t i = 0; own_dirs && i < own_dirs->ninclude_dirs; i++) {
		char dir[PATH_MAX];
		size_t n;
		if (!realpath(own_dirs->include_dirs[i], dir))
			continue;
		n = strlen(dir);
		if (!strncmp(path, dir, n) && path[n] == '/')
			return 1;
	}
	return 0;
}

static int is_local_include(const struct cuco_lift_facts *f, const struct cuco_lift_include *in)
{
	const char *base = strrchr(in->name, '/');
	base = base ? base + 1 : in->name;
	return in->resolved >= 0 && strcmp(base, "mpi.h") != 0 &&
	       (f->files[in->resolved].local || in_own_dir(f->files[in->resolved].path));
}

struct emitter {
	const struct cuco_lift_facts *f;
	struct cuco_lift_plan *p;
	int *once; /* per file: inlined already, and it says #pragma once */
	int depth;
	struct cuco_err *err;
};

static int emit_file(struct emitter *e, int file, struct cuco_strbuf *out);

static void add_line_directive(struct cuco_strbuf *out, unsigned line, const char *name)
{
	if (out->len && out->buf[out->len - 1] != '\n')
		cuco_strbuf_addch(out, '\n');
	cuco_strbuf_addf(out, "#line %u \"%s\"\n", line, name);
}

static int emit_file(struct emitter *e, int file, struct cuco_strbuf *out)
{
	const struct cuco_lift_facts *f = e->f;
	struct cuco_lift_plan *p = e->p;
	const char *t = cuco_lift_plan_text(p, f, file);
	const char *name = relname(f, file);
	struct piece *v = NULL;
	size_t n = 0, alloc = 0;
	unsigned pos = 0;
	int rc = CUCO_OK;

	if (!t)
		return cuco_err_set(e->err, CUCO_ERR_IO, "%s: cannot read it", f->files[file].path);
	if (++e->depth > 64) {
		e->depth--;
		return cuco_err_set(e->err, CUCO_ERR_UNSUPPORTED,
		                    "%s: local headers include each other more than 64 deep", name);
	}
	for (size_t i = 0; i < p->ninserts; i++) {
		const struct cuco_lift_insert *in = &p->inserts[i];
		struct piece *q;
		if (in->file != file)
			continue;
		q = CUCO_ARRAY_PUSH(v, n, alloc);
		memset(q, 0, sizeof(*q));
		q->begin = q->end = line_start(t, in->line);
		/* at one line: a block's end, the step's end, what closes the step's block, the
		 * step's start, a block's start */
		q->order = strstr(in->text, "EVOLVE-BLOCK-END")       ? -5
		           : strstr(in->text, "CUCO_LIFT_STEP_END")   ? -4
		           : !strncmp(in->text, "#if 0", 5)           ? -3
		           : strstr(in->text, "CUCO_LIFT_STEP_BEGIN") ? -2
		                                                      : -1;
		q->text = in->text;
		q->include = -1;
		q->resync = 1;
	}
	for (size_t i = 0; i < p->nedits; i++) {
		const struct cuco_lift_edit *ed = &p->edits[i];
		struct piece *q;
		if (ed->file != file)
			continue;
		q = CUCO_ARRAY_PUSH(v, n, alloc);
		memset(q, 0, sizeof(*q));
		q->begin = ed->begin;
		q->end = ed->end;
		q->order = 1 + ed->seq;
		q->text = ed->text;
		q->include = -1;
		q->resync = strchr(ed->text, '\n') != NULL;
	}
	for (size_t i = 0; i < p->nstep_calls; i++) {
		const struct cuco_lift_call *c = &f->calls[p->step_calls[i]];
		struct piece *q;
		if (c->name.file != file)
			continue;
		q = CUCO_ARRAY_PUSH(v, n, alloc);
		memset(q, 0, sizeof(*q));
		q->begin = q->end = c->name.offset;
		q->order = 1 << 20;
		q->text = STEP_TAG;
		q->include = -1;
	}
	/* an inlined header's #pragma once has done its work (inlined once): out of the text,
	 * where the compiler would warn of it in a main file */
	for (const char *o = e->depth > 1 ? strstr(t, "#pragma once") : NULL; o;
	     o = strstr(o + 1, "#pragma once")) {
		struct piece *q;
		const char *b = o;
		while (b > t && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > t && b[-1] != '\n')
			continue;
		q = CUCO_ARRAY_PUSH(v, n, alloc);
		memset(q, 0, sizeof(*q));
		q->begin = (unsigned)(o - t);
		q->end = q->begin + (unsigned)strlen("#pragma once");
		q->order = 1;
		q->text = "/* #pragma once: cuco inlines it once */";
		q->include = -1;
	}
	for (size_t i = 0; i < f->nincludes; i++) {
		const struct cuco_lift_include *in = &f->includes[i];
		struct piece *q;
		if (in->file != file || !is_local_include(f, in))
			continue;
		q = CUCO_ARRAY_PUSH(v, n, alloc);
		memset(q, 0, sizeof(*q));
		q->begin = in->extent.begin;
		q->end = in->extent.end;
		q->include = in->resolved;
	}
	if (n)
		qsort(v, n, sizeof(*v), piece_cmp);
	for (size_t i = 0; i < n && !rc; i++) {
		struct piece *q = &v[i];
		if (q->begin < pos) {
			rc =
			    cuco_err_set(e->err, CUCO_ERR_UNSUPPORTED,
			                 "%s:%u: two of the lift's edits overlap here (a cuco bug; "
			                 "please report it with the program)",
			                 name, line_of(t, q->begin));
			break;
		}
		cuco_strbuf_add(out, t + pos, q->begin - pos);
		pos = q->end;
		if (q->include >= 0) {
			int h = q->include;
			if (e->once[h])
				continue; /* a #pragma once header, inlined already */
			{
				const char *ht = cuco_lift_plan_text(p, f, h);
				if (ht && strstr(ht, "#pragma once"))
					e->once[h] = 1;
			}
			add_line_directive(out, 1, relname(f, h));
			rc = emit_file(e, h, out);
			add_line_directive(out, line_of(t, q->end), name);
			continue;
		}
		cuco_strbuf_adds(out, q->text);
		if (q->resync)
			add_line_directive(out, line_of(t, q->end), name);
	}
	if (!rc)
		cuco_strbuf_adds(out, t + pos);
	free(v);
	e->depth--;
	return rc;
}

/* Units that another unit includes are inlined there, not emitted twice. */
static int included_by_other(const struct cuco_lift_facts *f, int unit)
{
	for (size_t i = 0; i < f->nincludes; i++)
		if (f->includes[i].resolved == unit && f->includes[i].file != unit &&
		    is_local_include(f, &f->includes[i]))
			return 1;
	return 0;
}

static void main_adapter(const struct cuco_lift_facts *f, struct cuco_lift_plan *p,
                         struct cuco_strbuf *out)
{
	const struct cuco_lift_function *m = &f->functions[p->entry];
	const char *t = cuco_lift_plan_text(p, f, m->extent.file);
	const char *callee = p->driver || m->is_main ? "cuco_lift_user_main" : m->name;
	int is_void = 0, nparams = p->driver ? 2 : (int)m->nparams;

	if (t && !p->driver) {
		char head[256];
		size_t len = m->name_pos.offset - m->extent.begin;
		if (len >= sizeof(head))
			len = sizeof(head) - 1;
		memcpy(head, t + m->extent.begin, len);
		head[len] = 0;
		is_void = strstr(head, "void") != NULL;
	}
	cuco_strbuf_adds(out, "static int cuco_lift_main(int argc, char **argv)\n{\n");
	if (nparams == 0)
		cuco_strbuf_adds(out, "\t(void)argc;\n\t(void)argv;\n");
	cuco_strbuf_addf(out, "\t%s%s(%s);%s\n", is_void ? "" : "return ", callee,
	                 nparams == 0   ? ""
	                 : nparams == 2 ? "argc, argv"
	                                : "argc, argv, environ",
	                 is_void ? "\n\treturn 0;" : "");
	cuco_strbuf_adds(out, "}\n");
}

static const char abi_text[] =
    "\n#if defined(CUCO_LIFT_OBSERVE)\n"
    "/* the program run natively, one rank, its buffers written at the step (lift.cuh) */\n"
    "int main(int argc, char **argv)\n{\n\treturn cuco_lift_observe(argc, argv, "
    "cuco_lift_main);\n}\n"
    "#elif !defined(CUCO_LIFT_WORKLOAD)\n"
    "extern \"C\" int cuco_program_requirements(const struct cuco_ctx *ctx,\n"
    "                                           struct cuco_requirements *req)\n"
    "{\n\treturn cuco_lift_requirements(ctx, req);\n}\n"
    "extern \"C\" int cuco_program_init(struct cuco_ctx *ctx, void **state)\n"
    "{\n\treturn cuco_lift_init(ctx, state, cuco_lift_main);\n}\n"
    "extern \"C\" int cuco_program_run(void *state, const struct cuco_tensor *tensors,\n"
    "                                  cudaStream_t stream)\n"
    "{\n\treturn cuco_lift_run(state, tensors, stream);\n}\n"
    "extern \"C\" void cuco_program_fini(void *state)\n{\n\tcuco_lift_fini(state);\n}\n"
    "#else\n"
    "extern \"C\" int cuco_workload_attach(ncclComm_t comm, int rank, int nranks, int device,\n"
    "                                      char *errbuf, size_t errlen)\n"
    "{\n\treturn cuco_lift_attach(comm, rank, nranks, device, errbuf, errlen);\n}\n"
    "extern \"C\" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int "
    "nranks,\n"
    "                                        struct cuco_tensor *tensors, int *ntensors,\n"
    "                                        char *errbuf, size_t errlen)\n"
    "{\n\treturn cuco_lift_describe(cuco_lift_main, shape, rank, nranks, tensors, ntensors,\n"
    "\t                          errbuf, errlen);\n}\n"
    "extern \"C\" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int "
    "nranks,\n"
    "                                        uint64_t seed, struct cuco_tensor *tensors,\n"
    "                                        int ntensors, cudaStream_t stream)\n"
    "{\n\t(void)seed; /* the program's own inputs */\n"
    "\treturn cuco_lift_generate(cuco_lift_main, shape, rank, nranks, tensors, ntensors, "
    "stream);\n}\n"
    "extern \"C\" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int "
    "nranks,\n"
    "                                         uint64_t seed, struct cuco_tensor *tensors,\n"
    "                                         int ntensors, cudaStream_t stream)\n"
    "{\n\treturn cuco_lift_reference(shape, rank, nranks, seed, tensors, ntensors, stream);\n}\n"
    "#endif\n";

static void c_string(struct cuco_strbuf *out, const char *s)
{
	cuco_strbuf_addch(out, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			cuco_strbuf_addch(out, '\\');
		if ((unsigned char)*s < 0x20)
			cuco_strbuf_addf(out, "\\%03o", (unsigned char)*s);
		else
			cuco_strbuf_addch(out, *s);
	}
	cuco_strbuf_addch(out, '"');
}

int cuco_lift_emit_host(const struct cuco_lift_facts *f, struct cuco_lift_plan *p,
                        const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out,
                        struct cuco_err *err)
{
	struct emitter e = {f, p, cuco_xcalloc(f->nfiles + 1, sizeof(int)), 0, err};
	int rc = CUCO_OK;
	size_t nunits = 0;

	own_dirs = o;
	cuco_strbuf_addf(out,
	                 "// %s: lifted by `cuco init` from %s (docs/your-own-program.md).\n"
	                 "// The program's own code below; cuco_dev/lift.cuh runs its main up to "
	                 "the step\n// and each run of the harness through the step once.\n",
	                 o->name, o->from);
	for (size_t i = 0; i < o->ndefines; i++) {
		const char *eq = strchr(o->defines[i], '=');
		if (eq)
			cuco_strbuf_addf(out, "#define %.*s %s\n", (int)(eq - o->defines[i]),
			                 o->defines[i], eq + 1);
		else
			cuco_strbuf_addf(out, "#define %s 1\n", o->defines[i]);
	}
	cuco_strbuf_adds(out, "#define CUCO_LIFT_USER_FILES ");
	if (p->driver)
		cuco_strbuf_adds(out, "\"host.cu\", "); /* the driver's buffers are the tensors */
	for (size_t i = 0, k = 0; i < f->nfiles; i++)
		if (f->files[i].local) {
			cuco_strbuf_adds(out, k++ ? ", " : "");
			c_string(out, relname(f, (int)i));
		}
	cuco_strbuf_adds(out, "\n#define CUCO_LIFT_SITES");
	for (size_t i = 0; i < p->nsites; i++) {
		const struct cuco_lift_alloc_site *s = &p->sites[i];
		cuco_strbuf_adds(out, " \\\n\t{");
		c_string(out, relname(f, s->file));
		cuco_strbuf_addf(out, ", %u, ", s->line);
		c_string(out, s->text);
		cuco_strbuf_addf(out, ", %d, %d},", s->dtype, s->role);
	}
	cuco_strbuf_addf(out, "\n#define CUCO_LIFT_SINGLE_PROCESS %d\n", p->single_process);
	cuco_strbuf_addf(out, "#define CUCO_LIFT_FLOAT_REDUCTION %d\n", p->float_reduction);
	cuco_strbuf_adds(out, "#include <cuco_dev/lift.cuh>\n");
	/* the first line of code: the fast path puts its own code before it, outside the
	 * program's EVOLVE-BLOCKs */
	cuco_strbuf_adds(out, "struct cuco_lift_program;\n");
	for (size_t u = 0; u < p->nunits && !rc; u++) {
		int file = p->units[u];
		if (included_by_other(f, file))
			continue;
		add_line_directive(out, 1, relname(f, file));
		rc = emit_file(&e, file, out);
		if (out->len && out->buf[out->len - 1] != '\n')
			cuco_strbuf_addch(out, '\n');
		/* the next unit starts without this one's macros, as it would compile alone */
		if (u + 1 < p->nunits)
			for (size_t i = 0; i < f->nmacros; i++)
				if (f->macros[i].extent.file == file)
					cuco_strbuf_addf(out, "#undef %s\n", f->macros[i].name);
		nunits++;
	}
	if (!rc) {
		unsigned line = 2;
		for (size_t i = 0; i < out->len; i++)
			line += out->buf[i] == '\n';
		cuco_strbuf_addf(out, "#line %u \"host.cu\"\n", line);
		if (p->driver)
			rc = cuco_lift_driver(f, p, p->entry, o->args, o->nargs, out, err);
		main_adapter(f, p, out);
		cuco_strbuf_adds(out, abi_text);
	}
	free(e.once);
	(void)nunits;
	return rc;
}

void cuco_lift_emit_workload(const char *host, struct cuco_strbuf *out)
{
	/* host.cu's text itself, not an #include of it: the compile cache hashes a program's text
	 * and the headers beside it, and every lifted package's workload.cu would look alike */
	cuco_strbuf_adds(out,
	                 "// The workload of a lifted program: its tensors are the device buffers "
	                 "the\n// program's own setup leaves alive at the step, its inputs their "
	                 "contents\n// there, and its reference the baseline program "
	                 "(manifest.json). The\n// program below is host.cu's.\n"
	                 "#define CUCO_LIFT_WORKLOAD 1\n");
	cuco_strbuf_adds(out, host);
}

static json_t *shape_json(const struct cuco_lift_shape *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(s->name));
	for (int i = 0; i < s->nparams; i++)
		json_object_set_new(o, s->params[i], json_integer(s->values[i]));
	return o;
}

void cuco_lift_emit_manifest(const struct cuco_lift_facts *f, const struct cuco_lift_plan *p,
                             const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out)
{
	json_t *m = json_object(), *params = json_array(), *shapes = json_array(),
	       *programs = json_array(), *prog = json_object(), *libs = json_array(),
	       *ranks = json_array(), *ref = json_object();
	struct cuco_strbuf desc = CUCO_STRBUF_INIT;
	struct cuco_lift_shape dflt;
	const struct cuco_lift_shape *shp = o->shapes;
	int nshapes = o->nshapes, dtype = 0;
	char *text;

	memset(&dflt, 0, sizeof(dflt));
	snprintf(dflt.name, sizeof(dflt.name), "default");
	dflt.nparams = 1;
	snprintf(dflt.params[0], sizeof(dflt.params[0]), "visit");
	dflt.values[0] = 1;
	if (!nshapes) {
		shp = &dflt;
		nshapes = 1;
	}
	for (size_t i = 0; i < p->nsites && !dtype; i++)
		dtype = p->sites[i].dtype;
	cuco_strbuf_addf(&desc,
	                 "%s, lifted by cuco init from %s: the program's own step (its kernels "
	                 "and NCCL calls) run by the harness; the baseline is the reference.",
	                 o->name, o->from);
	json_object_set_new(m, "name", json_string(o->name));
	json_object_set_new(m, "description", json_string(desc.buf));
	json_object_set_new(m, "abi", json_integer(CUCO_ABI_VERSION));
	json_object_set_new(m, "dtype",
	                    json_string(dtype == CUCO_DTYPE_BF16  ? "bf16"
	                                : dtype == CUCO_DTYPE_F16 ? "f16"
	                                                          : "f32"));
	json_object_set_new(m, "tolerance", json_real(p->float_reduction ? 1e-5 : 1e-6));
	for (int r = 2; r <= 8; r *= 2)
		json_array_append_new(ranks, json_integer(r));
	json_object_set_new(m, "ranks", ranks);
	/* the parameters: visit (which arrival at the step), then every other of the shapes' */
	json_array_append_new(params, json_string("visit"));
	for (int s = 0; s < nshapes; s++)
		for (int i = 0; i < shp[s].nparams; i++) {
			int have = 0;
			for (size_t k = 0; k < json_array_size(params); k++)
				have |= !strcmp(json_string_value(json_array_get(params, k)),
				                shp[s].params[i]);
			if (!have)
				json_array_append_new(params, json_string(shp[s].params[i]));
		}
	json_object_set_new(m, "params", params);
	for (int s = 0; s < nshapes; s++) {
		json_t *sj = shape_json(&shp[s]);
		if (!json_object_get(sj, "visit"))
			json_object_set_new(sj, "visit", json_integer(1));
		for (size_t k = 0; k < json_array_size(params); k++) {
			const char *pn = json_string_value(json_array_get(params, k));
			if (!json_object_get(sj, pn))
				json_object_set_new(sj, pn, json_integer(0));
		}
		json_array_append_new(shapes, sj);
	}
	json_object_set_new(m, "shapes", shapes);
	json_object_set_new(m, "default_shape", json_string(shp[0].name));
	json_object_set_new(m, "argv", json_string(o->argv ? o->argv : ""));
	json_object_set_new(m, "workload", json_string("workload.cu"));
	json_object_set_new(m, "host_program", json_string("host.cu"));
	json_object_set_new(ref, "program", json_string("baseline"));
	json_object_set_new(m, "reference", ref);
	json_object_set_new(prog, "name", json_string("baseline"));
	json_object_set_new(prog, "role", json_string("baseline"));
	json_object_set_new(prog, "file", json_string("host.cu"));
	for (size_t i = 0; i < p->nlibs; i++)
		json_array_append_new(libs, json_string(p->libs[i]));
	if (p->nlibs)
		json_object_set_new(prog, "libs", libs);
	else
		json_decref(libs);
	json_array_append_new(programs, prog);
	json_object_set_new(m, "programs", programs);
	text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (text) {
		cuco_strbuf_adds(out, text);
		cuco_strbuf_addch(out, '\n');
		free(text);
	}
	json_decref(m);
	cuco_strbuf_release(&desc);
	(void)f;
}

static json_t *where(const struct cuco_lift_facts *f, int file, unsigned line)
{
	json_t *w = json_object();
	json_object_set_new(w, "file", file >= 0 ? json_string(relname(f, file)) : json_null());
	json_object_set_new(w, "line", json_integer(line));
	return w;
}

int cuco_lift_emit_report(const struct cuco_lift_facts *f, const struct cuco_lift_plan *p,
                          const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out,
                          struct cuco_err *err)
{
	static const char *const kinds[] = {"", "info", "todo", "dropped"};
	static const char *const roles[] = {"", "input", "output", "inout"};
	json_t *r = json_object(), *files = json_array(), *sites = json_array(),
	       *calls = json_array(), *notes = json_array(),
	       *step = where(f, p->step.file, p->step.line);
	char *text;

	json_object_set_new(r, "from", json_string(o->from));
	json_object_set_new(r, "clang", json_string(f->clang_version ? f->clang_version : ""));
	for (size_t i = 0; i < f->nfiles; i++)
		if (f->files[i].local)
			json_array_append_new(files, json_string(relname(f, (int)i)));
	json_object_set_new(r, "files", files);
	json_object_set_new(step, "end_line", json_integer(p->step.end_line));
	json_object_set_new(step, "function", json_string(f->functions[p->step_fn].name));
	json_object_set_new(step, "kind",
	                    json_string(p->step_loop >= 0 ? "loop body" : "statements"));
	json_object_set_new(r, "step", step);
	json_object_set_new(r, "single_process", json_boolean(p->single_process));
	json_object_set_new(r, "float_reduction", json_boolean(p->float_reduction));
	for (size_t i = 0; i < p->nsites; i++) {
		json_t *s = where(f, p->sites[i].file, p->sites[i].line);
		json_object_set_new(s, "call", json_string(p->sites[i].callee));
		json_object_set_new(s, "buffer", json_string(p->sites[i].text));
		json_object_set_new(s, "role", json_string(roles[p->sites[i].role & 3]));
		json_array_append_new(sites, s);
	}
	json_object_set_new(r, "allocations", sites);
	for (size_t i = 0; i < p->nstep_calls; i++) {
		const struct cuco_lift_call *c = &f->calls[p->step_calls[i]];
		json_t *s = where(f, c->name.file, c->name.line);
		json_object_set_new(s, "call", json_string(c->callee));
		json_array_append_new(calls, s);
	}
	json_object_set_new(r, "step_calls", calls);
	for (size_t i = 0; i < p->nnotes; i++) {
		json_t *n = where(f, p->notes[i].file, p->notes[i].line);
		json_object_set_new(n, "kind", json_string(kinds[p->notes[i].kind & 3]));
		json_object_set_new(n, "text", json_string(p->notes[i].text));
		json_array_append_new(notes, n);
	}
	json_object_set_new(r, "notes", notes);
	text = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(r);
	if (!text)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "lift.json: out of memory");
	cuco_strbuf_adds(out, text);
	cuco_strbuf_addch(out, '\n');
	free(text);
	return CUCO_OK;
}
