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

static const char *rel(const struct cuco_lift_facts *f, int file)
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

static void edit(struct cuco_lift_plan *p, int file, unsigned begin, unsigned end, const char *text)
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

static void insert_lines(struct cuco_lift_plan *p, int file, unsigned line, const char *text)
{
	struct cuco_lift_insert *in = CUCO_ARRAY_PUSH(p->inserts, p->ninserts, p->inserts_alloc);
	in->file = file;
	in->line = line;
	in->text = cuco_xstrdup(text);
}

static int within(const struct cuco_lift_range *a, const struct cuco_lift_range *b)
{
	return a->file >= 0 && a->file == b->file && a->begin >= b->begin && a->end <= b->end;
}

static int pos_within(const struct cuco_lift_pos *a, const struct cuco_lift_range *b)
{
	return a->file >= 0 && a->file == b->file && a->offset >= b->begin && a->offset < b->end;
}

static int is_loop(int kind)
{
	return kind == CUCO_LIFT_STMT_FOR || kind == CUCO_LIFT_STMT_WHILE ||
	       kind == CUCO_LIFT_STMT_DO || kind == CUCO_LIFT_STMT_RANGE_FOR;
}

/* Whether name occurs in text as a whole identifier. */
static int has_ident(const char *text, const char *name)
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

struct graph {
	int *collects; /* per function: runs a NCCL collective, itself or through callees */
	int *computes; /* launches a kernel or calls a toolkit library, itself or through callees */
	int *reach;    /* reached from the entry */
};

static void graph_release(struct graph *g)
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

static void graph_make(const struct cuco_lift_facts *f, int entry, struct graph *g)
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
static int range_collects(const struct cuco_lift_facts *f, const struct graph *g,
                          const struct cuco_lift_range *r)
{
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (!pos_within(&c->name, r) && !within(&c->extent, r))
			continue;
		if (cuco_lift_call_is_host_collective(c) ||
		    (c->function >= 0 && g->collects[c->function]))
			return 1;
	}
	return 0;
}

static int range_computes(const struct cuco_lift_facts *f, const struct graph *g,
                          const struct cuco_lift_range *r)
{
	for (size_t i = 0; i < f->nlaunches; i++)
		if (within(&f->launches[i].extent, r) || pos_within(&f->launches[i].name, r))
			return 1;
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if ((within(&c->extent, r) || pos_within(&c->name, r)) &&
		    (call_computes(c) || (c->function >= 0 && g->computes[c->function])))
			return 1;
	}
	return 0;
}

/* ---- single-process programs ---- */

/* The names that hold the number of devices: ncclCommInitAll's count, cudaGetDeviceCount's out. */
static size_t device_counts(const struct cuco_lift_facts *f, char names[][64], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < f->ncalls && n < max; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		const char *t = NULL;
		if (!strcmp(c->callee, "ncclCommInitAll") && c->nargs >= 2)
			t = c->args[1].text;
		else if (!strcmp(c->callee, "cudaGetDeviceCount") && c->nargs >= 1)
			t = c->args[0].text;
		if (!t)
			continue;
		while (*t == '&' || *t == ' ' || *t == '(')
			t++;
		snprintf(names[n], 64, "%.*s", (int)strcspn(t, " )[.,"), t);
		if (names[n][0])
			n++;
	}
	return n;
}

static int single_process(const struct cuco_lift_facts *f)
{
	int mpi = 0, init_all = 0, init_in_loop = 0;

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->origin == CUCO_LIFT_ORIGIN_MPI && !strcmp(c->callee, "MPI_Init"))
			mpi = 1;
		if (c->origin == CUCO_LIFT_ORIGIN_MPI && !strcmp(c->callee, "MPI_Init_thread"))
			mpi = 1;
		if (!strcmp(c->callee, "ncclCommInitAll"))
			init_all = 1;
		if (!strncmp(c->callee, "ncclCommInitRank", 16) && c->loop >= 0)
			init_in_loop = 1;
	}
	return init_all || (init_in_loop && !mpi);
}

/* A loop over the devices: its variable picks a device (cudaSetDevice) or it runs up to a device
 * count. */
static int device_loop(const struct cuco_lift_facts *f, const struct cuco_lift_stmt *s,
                       char counts[][64], size_t ncounts)
{
	if (!s->induction || !s->induction[0] || s->body.file < 0)
		return 0;
	for (size_t k = 0; k < ncounts; k++)
		if (has_ident(s->cond_text, counts[k]))
			return 1;
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (!strcmp(c->callee, "cudaSetDevice") && c->nargs == 1 &&
		    pos_within(&c->name, &s->body) && has_ident(c->args[0].text, s->induction))
			return 1;
	}
	return 0;
}

/* Insert text at the start of a loop's body (wrapping a body that is one statement). */
static void body_prefix(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                        const struct cuco_lift_stmt *s, const char *open, const char *close)
{
	const char *t = cuco_lift_plan_text(p, f, s->body.file);
	struct cuco_strbuf a = CUCO_STRBUF_INIT, b = CUCO_STRBUF_INIT;

	if (t && t[s->body.begin] == '{') {
		cuco_strbuf_addf(&a, " %s", open);
		edit(p, s->body.file, s->body.begin + 1, s->body.begin + 1, a.buf);
		if (close) {
			cuco_strbuf_addf(&b, "%s ", close);
			edit(p, s->body.file, s->body.end - 1, s->body.end - 1, b.buf);
		}
	} else {
		/* a body of one statement: braced, its ';' inside */
		unsigned end = s->body.end;
		while (t && (t[end] == ' ' || t[end] == '\t'))
			end++;
		end = t && t[end] == ';' ? end + 1 : s->body.end;
		cuco_strbuf_addf(&a, "{ %s ", open);
		cuco_strbuf_addf(&b, " %s}", close ? close : "");
		edit(p, s->body.file, s->body.begin, s->body.begin, a.buf);
		edit(p, s->body.file, end, end, b.buf);
	}
	cuco_strbuf_release(&a);
	cuco_strbuf_release(&b);
}

/* ---- the step ---- */

/* Group start/end pairs: a loop between them is part of one group, not a step. */
static int in_group(const struct cuco_lift_facts *f, const struct cuco_lift_stmt *s)
{
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *g = &f->calls[i];
		if (strcmp(g->callee, "ncclGroupStart") || g->caller != s->function ||
		    g->name.file != s->extent.file || g->name.offset > s->extent.begin)
			continue;
		for (size_t j = 0; j < f->ncalls; j++) {
			const struct cuco_lift_call *e = &f->calls[j];
			if (!strcmp(e->callee, "ncclGroupEnd") && e->caller == s->function &&
			    e->name.file == s->extent.file && e->name.offset >= s->extent.end) {
				/* the first end after the start closes it */
				int closer = 1;
				for (size_t k = 0; k < f->ncalls; k++) {
					const struct cuco_lift_call *x = &f->calls[k];
					if (!strcmp(x->callee, "ncclGroupEnd") &&
					    x->caller == s->function &&
					    x->name.file == s->extent.file &&
					    x->name.offset > g->name.offset &&
					    x->name.offset < e->name.offset)
						closer = 0;
				}
				if (closer)
					return 1;
			}
		}
	}
	return 0;
}

/* The `// cuco: step` comment, or --step FILE:LINE: the line it names, or 0. */
static unsigned step_line(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                          const struct cuco_lift_plan_opts *o, int *file)
{
	if (o->step_at) {
		const char *colon = strrchr(o->step_at, ':');
		char name[1024];
		char *end;
		long line;
		if (!colon || colon == o->step_at)
			return 0;
		snprintf(name, sizeof(name), "%.*s", (int)(colon - o->step_at), o->step_at);
		errno = 0;
		line = strtol(colon + 1, &end, 10);
		if (errno || *end || line < 1)
			return 0;
		*file = cuco_lift_file_find(f, name);
		return *file >= 0 ? (unsigned)line : 0;
	}
	for (size_t i = 0; i < f->nfiles; i++) {
		const char *t;
		unsigned line = 1;
		if (!f->files[i].local || !(t = cuco_lift_plan_text(p, f, (int)i)))
			continue;
		for (const char *s = t; *s; s++) {
			if (*s == '\n')
				line++;
			else if (!strncmp(s, "cuco: step", 10) && s - t >= 2 &&
			         (!strncmp(s - 3, "// ", 3) || !strncmp(s - 2, "//", 2) ||
			          !strncmp(s - 3, "/* ", 3))) {
				*file = (int)i;
				return line + 1;
			}
		}
	}
	return 0;
}

/* The loop (or else the statement) that starts on `line` of `file`: a statement index, -1. */
static int stmt_at(const struct cuco_lift_facts *f, int file, unsigned line)
{
	int best = -1;

	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		if (s->extent.file != file || s->extent.line != line ||
		    s->kind == CUCO_LIFT_STMT_COMPOUND)
			continue;
		if (best < 0 || (is_loop(s->kind) && !is_loop(f->stmts[best].kind)) ||
		    s->extent.begin < f->stmts[best].extent.begin)
			best = (int)i;
	}
	return best;
}

/* The statement of block `block` (a compound) that holds [off, off]: its index or -1. */
static int child_holding(const struct cuco_lift_facts *f, int block, int file, unsigned off)
{
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		if (s->parent == block && s->extent.file == file && off >= s->extent.begin &&
		    off < s->extent.end)
			return (int)i;
	}
	return -1;
}

static int function_body(const struct cuco_lift_facts *f, int fn)
{
	for (size_t i = 0; i < f->nstmts; i++)
		if (f->stmts[i].function == fn && f->stmts[i].parent < 0 &&
		    f->stmts[i].kind == CUCO_LIFT_STMT_COMPOUND)
			return (int)i;
	return -1;
}

/* The step as a range of one block's statements: from the first collective of function fn to the
 * last, with the compute right before and after. */
static int step_range(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                      const struct graph *g, int fn, int block, struct cuco_err *err)
{
	int first = -1, last = -1;

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		int k;
		if (c->caller != fn || !(cuco_lift_call_is_host_collective(c) ||
		                         (c->function >= 0 && g->collects[c->function])))
			continue;
		k = child_holding(f, block, c->name.file, c->name.offset);
		if (k < 0)
			continue;
		if (first < 0 || f->stmts[k].extent.begin < f->stmts[first].extent.begin)
			first = k;
		if (last < 0 || f->stmts[k].extent.begin > f->stmts[last].extent.begin)
			last = k;
	}
	if (first < 0)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "%s: no statement of %s runs the program's collectives",
		                    rel(f, f->functions[fn].extent.file), f->functions[fn].name);
	/* the compute right before and after the collectives is part of the step */
	for (;;) {
		int prev = -1;
		for (size_t i = 0; i < f->nstmts; i++) {
			const struct cuco_lift_stmt *s = &f->stmts[i];
			if (s->parent == block && s->extent.end <= f->stmts[first].extent.begin &&
			    (prev < 0 || s->extent.end > f->stmts[prev].extent.end))
				prev = (int)i;
		}
		if (prev < 0 || !cuco_lift_rules_compute_only(f, &f->stmts[prev].extent))
			break;
		first = prev;
	}
	for (;;) {
		int next = -1;
		for (size_t i = 0; i < f->nstmts; i++) {
			const struct cuco_lift_stmt *s = &f->stmts[i];
			if (s->parent == block && s->extent.begin >= f->stmts[last].extent.end &&
			    (next < 0 || s->extent.begin < f->stmts[next].extent.begin))
				next = (int)i;
		}
		if (next < 0 || !cuco_lift_rules_compute_only(f, &f->stmts[next].extent))
			break;
		last = next;
	}
	p->step_first = first;
	p->step_last = last;
	p->step = f->stmts[first].extent;
	p->step.end = f->stmts[last].extent.end;
	p->step.end_line = f->stmts[last].extent.end_line;
	p->step.end_column = f->stmts[last].extent.end_column;
	return CUCO_OK;
}

static int choose_step(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                       const struct cuco_lift_plan_opts *o, const struct graph *g,
                       char counts[][64], size_t ncounts, struct cuco_err *err)
{
	int file = -1, best = -1, nbest = 0, fn = -1;
	unsigned line = step_line(p, f, o, &file);
	int *cand = cuco_xcalloc(f->nstmts + 1, sizeof(int));

	if (o->step_at && !line) {
		free(cand);
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "--step %s: expected FILE:LINE naming a file of the program",
		                    o->step_at);
	}
	if (line) {
		int s = stmt_at(f, file, line);
		if (s < 0) {
			free(cand);
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "%s:%u: %s names no statement that starts on this line",
			                    rel(f, file), line,
			                    o->step_at ? "--step" : "the `cuco: step` comment");
		}
		p->step_fn = f->stmts[s].function;
		if (is_loop(f->stmts[s].kind)) {
			p->step_loop = s;
			p->step = f->stmts[s].body;
		} else {
			p->step_first = p->step_last = s;
			p->step = f->stmts[s].extent;
		}
		cuco_lift_plan_note(p, CUCO_LIFT_NOTE_INFO, file, line, "step: the %s named by %s",
		                    is_loop(f->stmts[s].kind) ? "loop's body" : "statement",
		                    o->step_at ? "--step" : "the `cuco: step` comment");
		free(cand);
		return CUCO_OK;
	}
	/* loops that run collectives, in functions the entry reaches */
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		if (!is_loop(s->kind) || s->function < 0 || !g->reach[s->function] ||
		    s->body.file < 0)
			continue;
		if (!range_collects(f, g, &s->body) || in_group(f, s))
			continue;
		if (p->single_process && device_loop(f, s, counts, ncounts))
			continue;
		cand[i] = 1;
	}
	/* the innermost */
	for (size_t i = 0; i < f->nstmts; i++)
		for (size_t j = 0; j < f->nstmts && cand[i]; j++)
			if (j != i && cand[j] && within(&f->stmts[j].extent, &f->stmts[i].body))
				cand[i] = 2;
	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (size_t i = 0; i < f->nstmts; i++) {
			const struct cuco_lift_stmt *s = &f->stmts[i];
			if (cand[i] != 1 || (pass == 0 && !range_computes(f, g, &s->body)))
				continue;
			nbest++;
			if (best < 0 || s->extent.file > f->stmts[best].extent.file ||
			    (s->extent.file == f->stmts[best].extent.file &&
			     s->extent.begin > f->stmts[best].extent.begin))
				best = (int)i;
		}
	if (best >= 0) {
		const struct cuco_lift_stmt *s = &f->stmts[best];
		struct cuco_strbuf others = CUCO_STRBUF_INIT;
		for (size_t i = 0; i < f->nstmts; i++)
			if (cand[i] && (int)i != best)
				cuco_strbuf_addf(&others, "%s%s:%u", others.len ? ", " : "",
				                 rel(f, f->stmts[i].extent.file),
				                 f->stmts[i].extent.line);
		p->step_fn = s->function;
		p->step_loop = best;
		p->step = s->body;
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
		    "step: the body of this loop (%s)%s%s%s", s->cond_text ? s->cond_text : "",
		    nbest > 1 ? "; the last of the innermost loops that run collectives"
		              : "; the innermost loop that runs collectives",
		    others.len ? "; other loops with collectives: " : "", others.buf);
		if (others.len)
			cuco_lift_plan_note(
			    p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
			    "to take another, put `// cuco: step` on the line before it or pass "
			    "--step FILE:LINE");
		cuco_strbuf_release(&others);
		free(cand);
		return CUCO_OK;
	}
	free(cand);
	/* no loop: statements of the first function that runs a collective itself */
	for (size_t i = 0; i < f->ncalls && fn < 0; i++)
		if (cuco_lift_call_is_host_collective(&f->calls[i]) && f->calls[i].caller >= 0 &&
		    g->reach[f->calls[i].caller])
			fn = f->calls[i].caller;
	if (fn < 0)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "no NCCL collective is reached from %s",
		                    f->functions[p->entry].name);
	p->step_fn = fn;
	{
		int rc = step_range(p, f, g, fn, function_body(f, fn), err);
		if (rc)
			return rc;
	}
	cuco_lift_plan_note(
	    p, CUCO_LIFT_NOTE_INFO, p->step.file, p->step.line,
	    "step: the statements of %s from line %u to %u (no loop runs the collectives)",
	    f->functions[fn].name, p->step.line, p->step.end_line);
	return CUCO_OK;
}

/* ---- the edits ---- */

/* Every break, continue and return that leaves the step ends one pass instead. */
static int leave_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                       struct cuco_err *err)
{
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		int leaves = 0;
		if (!within(&s->extent, &p->step))
			continue;
		if (s->kind == CUCO_LIFT_STMT_RETURN) {
			/* not the return of a lambda inside the step */
			int in_lambda = 0;
			for (int up = s->parent; up >= 0; up = f->stmts[up].parent)
				if (f->stmts[up].kind == CUCO_LIFT_STMT_LAMBDA &&
				    within(&f->stmts[up].extent, &p->step))
					in_lambda = 1;
			leaves = !in_lambda;
		} else if (s->kind == CUCO_LIFT_STMT_BREAK || s->kind == CUCO_LIFT_STMT_CONTINUE) {
			leaves = s->target < 0 || !within(&f->stmts[s->target].extent, &p->step);
		}
		if (!leaves)
			continue;
		if (s->macro || s->opaque)
			return cuco_err_set(
			    err, CUCO_ERR_UNSUPPORTED,
			    "%s:%u: the %s that leaves the step comes from macro %s; "
			    "the lift cannot end the step there. Mark a narrower step "
			    "with `// cuco: step`",
			    rel(f, s->extent.file), s->extent.line,
			    cuco_lift_stmt_kind_name(s->kind), s->macro ? s->macro : "?");
		edit(p, s->extent.file, s->extent.begin, s->extent.end, "CUCO_LIFT_STEP_LEAVE;");
		cuco_lift_plan_note(p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
		                    "this %s ends the run's pass through the step",
		                    cuco_lift_stmt_kind_name(s->kind));
	}
	return CUCO_OK;
}

static void step_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	if (p->step_loop >= 0) {
		body_prefix(p, f, &f->stmts[p->step_loop], "CUCO_LIFT_STEP_BEGIN",
		            "CUCO_LIFT_STEP_END");
		return;
	}
	if (cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, p->step.file), p->step.begin,
	                              p->step.end)) {
		/* lines of their own, outside the step's EVOLVE-BLOCK */
		insert_lines(p, p->step.file, p->step.line, "CUCO_LIFT_STEP_BEGIN\n");
		insert_lines(p, p->step.file, p->step.end_line + 1, "CUCO_LIFT_STEP_END\n");
	} else {
		edit(p, p->step.file, p->step.begin, p->step.begin, "CUCO_LIFT_STEP_BEGIN ");
		edit(p, p->step.file, p->step.end, p->step.end, " CUCO_LIFT_STEP_END");
	}
	{
		/* the block's statements after the step never run, and may name the step's
		 * declarations, which the step's frame hides: leave them out */
		int block = f->stmts[p->step_first].parent;
		const struct cuco_lift_stmt *b = block >= 0 ? &f->stmts[block] : NULL;
		if (b && b->extent.end_line > p->step.end_line + 1) {
			insert_lines(p, p->step.file, p->step.end_line + 1,
			             "#if 0 /* the rest of the block: it never runs */\n");
			edit(p, p->step.file, b->extent.end - 1, b->extent.end - 1, "\n#endif\n");
		}
	}
}

static void entry_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	const struct cuco_lift_function *m = &f->functions[p->entry];

	if (m->is_main)
		edit(p, m->name_pos.file, m->name_pos.offset, m->name_pos.offset + 4,
		     "cuco_lift_user_main");
}

/* exit(), abort(), setenv() and their kind in the program's code: the runtime's. */
static void call_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	static const char *const map[][2] = {
	    {"exit", "cuco_lift_exit"},       {"_exit", "cuco_lift_exit"},
	    {"_Exit", "cuco_lift_exit"},      {"quick_exit", "cuco_lift_exit"},
	    {"abort", "cuco_lift_abort"},     {"setenv", "cuco_lift_setenv"},
	    {"putenv", "cuco_lift_putenv"},   {"unsetenv", "cuco_lift_unsetenv"},
	    {"pthread_yield", "sched_yield"},
	};

	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		const char *t;
		if (c->origin != CUCO_LIFT_ORIGIN_SYSTEM || c->name.file < 0 ||
		    !f->files[c->name.file].local)
			continue;
		for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
			size_t n = strlen(map[k][0]);
			if (strcmp(c->callee, map[k][0]))
				continue;
			t = cuco_lift_plan_text(p, f, c->name.file);
			if (t && !strncmp(t + c->name.offset, map[k][0], n))
				edit(p, c->name.file, c->name.offset, c->name.offset + (unsigned)n,
				     map[k][1]);
		}
	}
	for (size_t i = 0; i < f->nincludes; i++) {
		const struct cuco_lift_include *in = &f->includes[i];
		const char *base = strrchr(in->name, '/');
		base = base ? base + 1 : in->name;
		if (!strcmp(base, "mpi.h") && f->files[in->file].local)
			edit(p, in->file, in->extent.begin, in->extent.end,
			     "#include <cuco_dev/lift/mpi.h>");
	}
}

static void device_loop_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                              char counts[][64], size_t ncounts)
{
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		char open[160];
		if (!is_loop(s->kind) || (int)i == p->step_loop ||
		    !device_loop(f, s, counts, ncounts))
			continue;
		snprintf(open, sizeof(open), "CUCO_LIFT_DEVICE_ONLY(%s);", s->induction);
		body_prefix(p, f, s, open, NULL);
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
		    "a loop over the devices: each rank runs it for its own device (%s)",
		    s->induction);
	}
}

/* EVOLVE-BLOCKs: around the program's kernels and device functions, and around the step, where
 * each starts and ends a line of its own. */
static void block_inserts(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	for (size_t i = 0; i < f->nfunctions; i++) {
		const struct cuco_lift_function *fn = &f->functions[i];
		if (fn->kind == CUCO_LIFT_FN_HOST || fn->extent.file < 0 ||
		    !f->files[fn->extent.file].local)
			continue;
		if (!cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, fn->extent.file),
		                               fn->extent.begin, fn->extent.end))
			continue;
		insert_lines(p, fn->extent.file, fn->extent.line, "// EVOLVE-BLOCK-START\n");
		insert_lines(p, fn->extent.file, fn->extent.end_line + 1, "// EVOLVE-BLOCK-END\n");
	}
	if (p->driver) {
		const struct cuco_lift_function *fn = &f->functions[p->entry];
		if (fn->kind == CUCO_LIFT_FN_HOST &&
		    cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, fn->extent.file),
		                              fn->extent.begin, fn->extent.end)) {
			insert_lines(p, fn->extent.file, fn->extent.line,
			             "// EVOLVE-BLOCK-START\n");
			insert_lines(p, fn->extent.file, fn->extent.end_line + 1,
			             "// EVOLVE-BLOCK-END\n");
		}
	} else if (cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, p->step.file), p->step.begin,
	                                     p->step.end) &&
	           p->step_loop < 0) {
		insert_lines(p, p->step.file, p->step.line, "// EVOLVE-BLOCK-START\n");
		insert_lines(p, p->step.file, p->step.end_line + 1, "// EVOLVE-BLOCK-END\n");
	} else if (p->step_loop >= 0) {
		const struct cuco_lift_stmt *s = &f->stmts[p->step_loop];
		if (s->body.end_line > s->body.line + 1) {
			insert_lines(p, s->body.file, s->body.line + 1, "// EVOLVE-BLOCK-START\n");
			insert_lines(p, s->body.file, s->body.end_line, "// EVOLVE-BLOCK-END\n");
		}
	}
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
		    (within(&c->extent, &p->step) || pos_within(&c->name, &p->step)))
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
		int here = (p->step.file >= 0 && pos_within(&c->name, &p->step)) ||
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
                    const struct graph *g, struct cuco_err *err)
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
	if (!any)
		return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                    "no NCCL collective or send/receive in the program: there is "
		                    "nothing for cuco to make device-initiated");
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
		    rel(f, c->name.file), c->name.line);
	}
	if (f->nthreads) {
		const struct cuco_lift_call *c = &f->calls[f->threads[0].call];
		return cuco_err_set(
		    err, CUCO_ERR_UNSUPPORTED,
		    "%s:%u: the program starts threads (%s); cuco runs one rank per "
		    "process. Build it in its one-process-per-GPU mode (often an MPI "
		    "option such as -D MPI_SUPPORT) and lift that",
		    rel(f, c->name.file), c->name.line, c->callee);
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
			    rel(f, c->name.file), c->name.line, f->functions[c->caller].name,
			    u->name, rel(f, u->decl.file), u->decl.line);
		}
	}
	(void)p;
	return CUCO_OK;
}

static void mpi_notes(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                      const struct graph *g)
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
	struct graph g = {0};
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
			    rel(f, e->name_pos.file), e->name_pos.line, e->name);
			goto out;
		}
	}
	p->single_process = single_process(f);
	ncounts = p->single_process ? device_counts(f, counts, 16) : 0;
	if (p->driver) {
		p->step_fn = p->entry;
		p->step.file = -1;
	} else if ((rc = choose_step(p, f, o, &g, counts, ncounts, err))) {
		goto out;
	}
	if (p->single_process)
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, -1, 0,
		    "one process drives every GPU here (ncclCommInitAll or a loop of "
		    "ncclCommInitRank): cuco runs one process per GPU, each rank the device of its "
		    "index");
	entry_edits(p, f);
	if (!p->driver) {
		step_edits(p, f);
		if ((rc = leave_edits(p, f, err)))
			goto out;
	}
	call_edits(p, f);
	if (p->single_process)
		device_loop_edits(p, f, counts, ncounts);
	block_inserts(p, f);
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
