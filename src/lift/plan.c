/*
 * plan.c - how to lift a program (plan.h): the entry and the step, the edits,
 * the buffers' table and the notes. The step is chosen by rules the notes
 * state (docs/your-own-program.md): a loop named by --step or a `// cuco: step`
 * comment; else among the loops that run NCCL collectives (directly or through
 * the program's functions), not the ones inside a group or over devices, the
 * innermost, those that also compute first, the last in the source; else the
 * statements of one block from the first collective to the last.
 */
#include "lift/plan.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lift/plan_impl.h"
#include "lift/rules.h"
#include "util/array.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void cuco_lift_plan_init(struct cuco_lift_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->entry = p->step_fn = p->step_loop = p->step_first = p->step_last = -1;
}

void cuco_lift_plan_release(struct cuco_lift_plan *p)
{
	for (size_t i = 0; i < p->nedits; i++)
		free(p->edits[i].text);
	for (size_t i = 0; i < p->ninserts; i++)
		free(p->inserts[i].text);
	for (size_t i = 0; i < p->nnotes; i++)
		free(p->notes[i].text);
	for (size_t i = 0; i < p->nsites; i++) {
		free(p->sites[i].callee);
		free(p->sites[i].text);
	}
	for (size_t i = 0; i < p->nlibs; i++)
		free(p->libs[i]);
	for (size_t i = 0; i < p->ntexts; i++)
		free(p->texts[i]);
	free(p->units);
	free(p->edits);
	free(p->inserts);
	free(p->notes);
	free(p->sites);
	free(p->step_calls);
	free(p->libs);
	free(p->texts);
	cuco_lift_plan_init(p);
}

const char *cuco_lift_plan_text(struct cuco_lift_plan *p, const struct cuco_lift_facts *f, int file)
{
	if (file < 0 || (size_t)file >= f->nfiles)
		return NULL;
	if ((size_t)file >= p->ntexts) {
		p->texts = cuco_xrealloc(p->texts, f->nfiles * sizeof(*p->texts));
		memset(p->texts + p->ntexts, 0, (f->nfiles - p->ntexts) * sizeof(*p->texts));
		p->ntexts = f->nfiles;
	}
	if (!p->texts[file]) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;
		if (cuco_strbuf_read_file(&sb, f->files[file].path)) {
			cuco_strbuf_release(&sb);
			return NULL;
		}
		p->texts[file] = cuco_strbuf_detach(&sb, NULL);
	}
	return p->texts[file];
}

const char *lift_rel(const struct cuco_lift_facts *f, int file)
{
	if (file < 0 || (size_t)file >= f->nfiles)
		return "?";
	return f->files[file].rel ? f->files[file].rel : f->files[file].path;
}

void cuco_lift_plan_note(struct cuco_lift_plan *p, int kind, int file, unsigned line,
                         const char *fmt, ...)
{
	struct cuco_lift_note *n = CUCO_ARRAY_PUSH(p->notes, p->nnotes, p->notes_alloc);
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	cuco_strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	n->kind = kind;
	n->file = file;
	n->line = line;
	n->text = cuco_strbuf_detach(&sb, NULL);
}

void lift_edit(struct cuco_lift_plan *p, int file, unsigned begin, unsigned end, const char *text)
{
	struct cuco_lift_edit *e;

	for (size_t i = 0; i < p->nedits; i++)
		if (p->edits[i].file == file && p->edits[i].begin == begin &&
		    p->edits[i].end == end && end > begin)
			return; /* one rewrite of a place (a macro body reached twice) */
	e = CUCO_ARRAY_PUSH(p->edits, p->nedits, p->edits_alloc);
	e->file = file;
	e->begin = begin;
	e->end = end;
	e->text = cuco_xstrdup(text);
	e->seq = (int)p->nedits;
}

void lift_insert_lines(struct cuco_lift_plan *p, int file, unsigned line, const char *text)
{
	struct cuco_lift_insert *in = CUCO_ARRAY_PUSH(p->inserts, p->ninserts, p->inserts_alloc);
	in->file = file;
	in->line = line;
	in->text = cuco_xstrdup(text);
}

int lift_within(const struct cuco_lift_range *a, const struct cuco_lift_range *b)
{
	return a->file >= 0 && a->file == b->file && a->begin >= b->begin && a->end <= b->end;
}

int lift_pos_within(const struct cuco_lift_pos *a, const struct cuco_lift_range *b)
{
	return a->file >= 0 && a->file == b->file && a->offset >= b->begin && a->offset < b->end;
}

int lift_is_loop(int kind)
{
	return kind == CUCO_LIFT_STMT_FOR || kind == CUCO_LIFT_STMT_WHILE ||
	       kind == CUCO_LIFT_STMT_DO || kind == CUCO_LIFT_STMT_RANGE_FOR;
}

/* Whether name occurs in text as a whole identifier. */
int lift_has_ident(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *s = text;

	if (!text || !n)
		return 0;
	while ((s = strstr(s, name))) {
		int before = s > text && (isalnum((unsigned char)s[-1]) || s[-1] == '_');
		int after = isalnum((unsigned char)s[n]) || s[n] == '_';
		if (!before && !after)
			return 1;
		s += n;
	}
	return 0;
}

/* ---- what the program's functions do, transitively ---- */

static void graph_release(struct lift_graph *g)
{
	free(g->collects);
	free(g->computes);
	free(g->reach);
}

static int call_computes(const struct cuco_lift_call *c)
{
	return c->origin == CUCO_LIFT_ORIGIN_TOOLKIT &&
	       (!strncmp(c->callee, "cublas", 6) || !strncmp(c->callee, "cudnn", 5) ||
	        !strncmp(c->callee, "cufft", 5) || !strncmp(c->callee, "cusparse", 8) ||
	        !strncmp(c->callee, "curandGenerate", 14));
}

static void graph_make(const struct cuco_lift_facts *f, int entry, struct lift_graph *g)
{
	size_t n = f->nfunctions;
	int changed = 1;

	g->collects = cuco_xcalloc(n + 1, sizeof(int));
	g->computes = cuco_xcalloc(n + 1, sizeof(int));
	g->reach = cuco_xcalloc(n + 1, sizeof(int));
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->caller < 0)
			continue;
		if (cuco_lift_call_is_host_collective(c))
			g->collects[c->caller] = 1;
		if (call_computes(c))
			g->computes[c->caller] = 1;
	}
	for (size_t i = 0; i < f->nlaunches; i++)
		if (f->launches[i].caller >= 0)
			g->computes[f->launches[i].caller] = 1;
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < f->ncalls; i++) {
			const struct cuco_lift_call *c = &f->calls[i];
			if (c->caller < 0 || c->function < 0)
				continue;
			if (g->collects[c->function] && !g->collects[c->caller])
				changed = g->collects[c->caller] = 1;
			if (g->computes[c->function] && !g->computes[c->caller])
				changed = g->computes[c->caller] = 1;
		}
	}
	if (entry >= 0)
		g->reach[entry] = 1;
	changed = 1;
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < f->ncalls; i++) {
			const struct cuco_lift_call *c = &f->calls[i];
			if (c->caller < 0 || !g->reach[c->caller])
				continue;
			if (c->function >= 0 && !g->reach[c->function])
				changed = g->reach[c->function] = 1;
			/* a function handed over by name (run_example(argc, argv, allReduce)) runs
			 */
			for (size_t k = 0; k < c->nargs; k++) {
				const char *t = c->args[k].text;
				int fn;
				if (!t)
					continue;
				while (*t == '&' || *t == ' ')
					t++;
				fn = cuco_lift_function_find(f, t);
				if (fn >= 0 && !g->reach[fn])
					changed = g->reach[fn] = 1;
			}
		}
	}
}

/* Whether the range holds a call that runs a collective (itself or through a local callee). */
int lift_range_collects(const struct cuco_lift_facts *f, const struct lift_graph *g,
                        const struct cuco_lift_range *r)
{
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (!lift_pos_within(&c->name, r) && !lift_within(&c->extent, r))
			continue;
		if (cuco_lift_call_is_host_collective(c) ||
		    (c->function >= 0 && g->collects[c->function]))
			return 1;
	}
	return 0;
}

int lift_range_computes(const struct cuco_lift_facts *f, const struct lift_graph *g,
                        const struct cuco_lift_range *r)
{
	for (size_t i = 0; i < f->nlaunches; i++)
		if (lift_within(&f->launches[i].extent, r) ||
		    lift_pos_within(&f->launches[i].name, r))
			return 1;
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if ((lift_within(&c->extent, r) || lift_pos_within(&c->name, r)) &&
		    (call_computes(c) || (c->function >= 0 && g->computes[c->function])))
			return 1;
	}
	return 0;
}

int cuco_lift_is_step_call(const char *callee)
{
	return cuco_lift_rules_step_call(callee);
}

/* The NCCL calls of the step, and of the program's functions the step calls. */
static void step_calls(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	int *inside = cuco_xcalloc(f->nfunctions + 1, sizeof(int));
	int changed = 1;

	if (p->driver)
		inside[p->entry] = 1;

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->function >= 0 &&
		    (lift_within(&c->extent, &p->step) || lift_pos_within(&c->name, &p->step)))
			inside[c->function] = 1;
	}
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < f->ncalls; i++) {
			const struct cuco_lift_call *c = &f->calls[i];
			if (c->caller >= 0 && inside[c->caller] && c->function >= 0 &&
			    !inside[c->function])
				changed = inside[c->function] = 1;
		}
	}
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		int here = (p->step.file >= 0 && lift_pos_within(&c->name, &p->step)) ||
		           (c->caller >= 0 && inside[c->caller]);
		if (!here || !cuco_lift_rules_step_call(c->callee) ||
		    c->origin != CUCO_LIFT_ORIGIN_NCCL)
			continue;
		if (c->in_macro_body) {
			cuco_lift_plan_note(
			    p, CUCO_LIFT_NOTE_INFO, c->macro.site.file, c->macro.site.line,
			    "%s comes from the body of macro %s: the seed keeps it a host call",
			    c->callee, c->macro.name);
			continue;
		}
		*CUCO_ARRAY_PUSH(p->step_calls, p->nstep_calls, p->step_calls_alloc) = (int)i;
	}
	free(inside);
}

static void alloc_sites(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	const char *step = p->driver ? NULL : cuco_lift_plan_text(p, f, p->step.file);

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		struct cuco_lift_alloc_site *s;
		if (!c->dest_root || !cuco_lift_rules_alloc_call(c->callee) || c->name.file < 0 ||
		    !f->files[c->name.file].local)
			continue;
		s = CUCO_ARRAY_PUSH(p->sites, p->nsites, p->sites_alloc);
		s->file = c->in_macro_body ? c->macro.site.file : c->name.file;
		s->line = c->in_macro_body ? c->macro.site.line : c->name.line;
		s->callee = cuco_xstrdup(c->callee);
		s->text = cuco_xstrdup(c->dest_root);
		s->dtype = cuco_lift_rules_dtype(c->dest_pointee);
		s->role = step ? cuco_lift_rules_role(f, &p->step, step, c->dest_root) : 0;
	}
}

static void libraries(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	static const char *const libs[][2] = {{"cublas", "cublas"},     {"cublasLt", "cublasLt"},
	                                      {"curand", "curand"},     {"cufft", "cufft"},
	                                      {"cusparse", "cusparse"}, {"cusolver", "cusolver"}};

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->origin != CUCO_LIFT_ORIGIN_TOOLKIT)
			continue;
		for (size_t k = 0; k < sizeof(libs) / sizeof(libs[0]); k++) {
			int have = 0;
			if (strncmp(c->callee, libs[k][0], strlen(libs[k][0])))
				continue;
			for (size_t j = 0; j < p->nlibs; j++)
				have |= !strcmp(p->libs[j], libs[k][1]);
			if (!have)
				*CUCO_ARRAY_PUSH(p->libs, p->nlibs, p->libs_alloc) =
				    cuco_xstrdup(libs[k][1]);
		}
	}
}

/* Refusals that no edit mends, each with where and what to do. */
static int refusals(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                    const struct lift_graph *g, struct cuco_err *err)
{
	const struct cuco_lift_diag *d = cuco_lift_first_error(f);
	int any = 0;

	if (d) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;
		int rc;
		cuco_lift_diag_format(f, d, &sb);
		rc = cuco_err_set(
		    err, CUCO_ERR_COMPILE,
		    "%s\nthe program does not compile as given: pass its include folders "
		    "and macros (--include-dir DIR, -D NAME=VALUE) or a "
		    "compile_commands.json beside it",
		    sb.buf);
		cuco_strbuf_release(&sb);
		return rc;
	}
	for (size_t i = 0; i < f->ncalls; i++)
		any |= cuco_lift_call_is_host_collective(&f->calls[i]);
	if (!any) {
		/* no call to point at: the message names the files that were read */
		struct cuco_strbuf names = CUCO_STRBUF_INIT;
		size_t n = 0;
		int rc;
		for (size_t i = 0; i < f->nfiles; i++)
			if (f->files[i].parsed && n++ < 3)
				cuco_strbuf_addf(&names, "%s%s", n > 1 ? ", " : "",
				                 lift_rel(f, (int)i));
		if (n > 3)
			cuco_strbuf_addf(&names, " and %zu more", n - 3);
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "%s: no NCCL collective or send/receive in the program: there is "
		                  "nothing for cuco to make device-initiated",
		                  names.len ? names.buf : "?");
		cuco_strbuf_release(&names);
		return rc;
	}
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (strcmp(c->callee, "cudaStreamBeginCapture") || c->caller < 0 ||
		    !g->reach[c->caller])
			continue;
		return cuco_err_set(
		    err, CUCO_ERR_UNSUPPORTED,
		    "%s:%u: the program captures its work into a CUDA graph "
		    "(cudaStreamBeginCapture) and replays it: the graph holds the "
		    "addresses of the buffers it was captured with, which cuco cannot "
		    "give each run's tensors. Lift the program's form that launches its "
		    "kernels and NCCL calls directly",
		    lift_rel(f, c->name.file), c->name.line);
	}
	if (f->nthreads) {
		const struct cuco_lift_call *c = &f->calls[f->threads[0].call];
		return cuco_err_set(
		    err, CUCO_ERR_UNSUPPORTED,
		    "%s:%u: the program starts threads (%s); cuco runs one rank per "
		    "process. Build it in its one-process-per-GPU mode (often an MPI "
		    "option such as -D MPI_SUPPORT) and lift that",
		    lift_rel(f, c->name.file), c->name.line, c->callee);
	}
	for (size_t i = 0; i < f->nundefined; i++) {
		const struct cuco_lift_undefined *u = &f->undefined[i];
		for (size_t k = 0; k < f->ncalls; k++) {
			const struct cuco_lift_call *c = &f->calls[k];
			if (c->caller < 0 || !g->reach[c->caller] || strcmp(c->callee, u->name))
				continue;
			return cuco_err_set(
			    err, CUCO_ERR_NOT_FOUND,
			    "%s:%u: %s calls %s (declared at %s:%u), which no file given "
			    "defines: lift the whole folder (--from DIR) or name the file "
			    "that defines it too",
			    lift_rel(f, c->name.file), c->name.line, f->functions[c->caller].name,
			    u->name, lift_rel(f, u->decl.file), u->decl.line);
		}
	}
	(void)p;
	return CUCO_OK;
}

static void mpi_notes(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                      const struct lift_graph *g)
{
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->origin != CUCO_LIFT_ORIGIN_MPI || c->caller < 0 || !g->reach[c->caller])
			continue;
		if (!cuco_lift_rules_mpi_runs(c->callee))
			cuco_lift_plan_note(
			    p, CUCO_LIFT_NOTE_TODO, c->name.file, c->name.line,
			    "%s is not run by cuco's MPI layer: the run fails here if the program "
			    "reaches it",
			    c->callee);
	}
}

int cuco_lift_plan_make(const struct cuco_lift_facts *f, const struct cuco_lift_plan_opts *o,
                        struct cuco_lift_plan *p, struct cuco_err *err)
{
	struct lift_graph g = {0};
	char counts[16][64];
	size_t ncounts;
	int rc;

	p->entry = cuco_lift_function_find(f, o->entry ? o->entry : "main");
	if (p->entry < 0)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    o->entry
		                        ? "no function %s is defined in the files given"
		                        : "no main() in the files given%s: lift the folder that "
		                          "holds the program's main, or name the function to run "
		                          "as the program with --entry",
		                    o->entry ? o->entry : "");
	graph_make(f, p->entry, &g);
	if ((rc = refusals(p, f, &g, err)))
		goto out;
	{
		const struct cuco_lift_function *e = &f->functions[p->entry];
		int main_like = e->is_main || e->nparams == 0 ||
		                (e->nparams == 2 && strstr(e->params[0].type, "int") &&
		                 strstr(e->params[1].type, "char"));
		p->driver = !main_like;
		if (!e->is_main && !g.collects[p->entry]) {
			rc = cuco_err_set(
			    err, CUCO_ERR_NOT_FOUND,
			    "%s:%u: --entry %s runs no NCCL collective, itself or through "
			    "the functions it calls",
			    lift_rel(f, e->name_pos.file), e->name_pos.line, e->name);
			goto out;
		}
	}
	p->single_process = lift_single_process(f);
	ncounts = p->single_process ? lift_device_counts(f, counts, 16) : 0;
	if (p->driver) {
		p->step_fn = p->entry;
		p->step.file = -1;
	} else if ((rc = lift_choose_step(p, f, o, &g, counts, ncounts, err))) {
		goto out;
	}
	if (p->single_process)
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, -1, 0,
		    "one process drives every GPU here (ncclCommInitAll or a loop of "
		    "ncclCommInitRank): cuco runs one process per GPU, each rank the device of its "
		    "index");
	lift_entry_edits(p, f);
	if (!p->driver) {
		lift_step_edits(p, f);
		if ((rc = lift_leave_edits(p, f, err)))
			goto out;
	}
	lift_call_edits(p, f);
	if (p->single_process)
		lift_device_loop_edits(p, f, counts, ncounts);
	lift_block_inserts(p, f);
	step_calls(p, f);
	alloc_sites(p, f);
	libraries(p, f);
	mpi_notes(p, f, &g);
	p->float_reduction =
	    cuco_lift_rules_float_reduction(f, &p->step, p->step_calls, p->nstep_calls);
	for (size_t i = 0; i < f->nfiles; i++)
		if (f->files[i].parsed && (int)i != f->functions[p->entry].extent.file)
			*CUCO_ARRAY_PUSH(p->units, p->nunits, p->units_alloc) = (int)i;
	*CUCO_ARRAY_PUSH(p->units, p->nunits, p->units_alloc) = f->functions[p->entry].extent.file;
	if (f->functions[p->entry].extent.file >= 0 &&
	    !f->files[f->functions[p->entry].extent.file].parsed) {
		/* the entry is in a header: every parsed unit is emitted, the header with its
		 * includer */
		p->nunits--;
	}
	rc = CUCO_OK;
out:
	graph_release(&g);
	return rc;
}
