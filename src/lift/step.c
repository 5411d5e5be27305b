/*
 * step.c - the step of a lifted program (plan_impl.h): chosen by the rules of
 * plan.c's opening comment, and the loops over devices of a program that drives
 * every GPU from one process.
 */
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

/* ---- single-process programs ---- */

/* The names that hold the number of devices: ncclCommInitAll's count, cudaGetDeviceCount's out. */
size_t lift_device_counts(const struct cuco_lift_facts *f, char names[][64], size_t max)
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
		/* a literal count names no variable to recognise the device loops by */
		if (names[n][0] && !isdigit((unsigned char)names[n][0]))
			n++;
	}
	return n;
}

int lift_single_process(const struct cuco_lift_facts *f)
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
int lift_device_loop(const struct cuco_lift_facts *f, const struct cuco_lift_stmt *s,
                     char counts[][64], size_t ncounts)
{
	if (!s->induction || !s->induction[0] || s->body.file < 0)
		return 0;
	for (size_t k = 0; k < ncounts; k++)
		if (lift_has_ident(s->cond_text, counts[k]))
			return 1;
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (!strcmp(c->callee, "cudaSetDevice") && c->nargs == 1 &&
		    lift_pos_within(&c->name, &s->body) &&
		    lift_has_ident(c->args[0].text, s->induction))
			return 1;
	}
	return 0;
}

/* Insert text at the start of a loop's body (wrapping a body that is one statement). */
void lift_body_prefix(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                      const struct cuco_lift_stmt *s, const char *open, const char *close)
{
	const char *t = cuco_lift_plan_text(p, f, s->body.file);
	struct cuco_strbuf a = CUCO_STRBUF_INIT, b = CUCO_STRBUF_INIT;

	if (t && t[s->body.begin] == '{') {
		cuco_strbuf_addf(&a, " %s", open);
		lift_edit(p, s->body.file, s->body.begin + 1, s->body.begin + 1, a.buf);
		if (close) {
			cuco_strbuf_addf(&b, "%s ", close);
			lift_edit(p, s->body.file, s->body.end - 1, s->body.end - 1, b.buf);
		}
	} else {
		/* a body of one statement: braced, its ';' inside */
		unsigned end = s->body.end;
		while (t && (t[end] == ' ' || t[end] == '\t'))
			end++;
		end = t && t[end] == ';' ? end + 1 : s->body.end;
		cuco_strbuf_addf(&a, "{ %s ", open);
		cuco_strbuf_addf(&b, " %s}", close ? close : "");
		lift_edit(p, s->body.file, s->body.begin, s->body.begin, a.buf);
		lift_edit(p, s->body.file, end, end, b.buf);
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
		if (*file < 0) {
			/* the file as named from the working directory, as --from names it */
			char *abs = realpath(name, NULL);
			if (abs)
				*file = cuco_lift_file_find(f, abs);
			free(abs);
		}
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
			         (!strncmp(s - 2, "//", 2) ||
			          (s - t >= 3 &&
			           (!strncmp(s - 3, "// ", 3) || !strncmp(s - 3, "/* ", 3))))) {
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
		if (best < 0 || (lift_is_loop(s->kind) && !lift_is_loop(f->stmts[best].kind)) ||
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
                      const struct lift_graph *g, int fn, int block, struct cuco_err *err)
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
		                    lift_rel(f, f->functions[fn].extent.file),
		                    f->functions[fn].name);
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

int lift_choose_step(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                     const struct cuco_lift_plan_opts *o, const struct lift_graph *g,
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
			                    lift_rel(f, file), line,
			                    o->step_at ? "--step" : "the `cuco: step` comment");
		}
		p->step_fn = f->stmts[s].function;
		if (lift_is_loop(f->stmts[s].kind)) {
			p->step_loop = s;
			p->step = f->stmts[s].body;
		} else {
			p->step_first = p->step_last = s;
			p->step = f->stmts[s].extent;
		}
		cuco_lift_plan_note(p, CUCO_LIFT_NOTE_INFO, file, line, "step: the %s named by %s",
		                    lift_is_loop(f->stmts[s].kind) ? "loop's body" : "statement",
		                    o->step_at ? "--step" : "the `cuco: step` comment");
		free(cand);
		return CUCO_OK;
	}
	/* loops that run collectives, in functions the entry reaches */
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		if (!lift_is_loop(s->kind) || s->function < 0 || !g->reach[s->function] ||
		    s->body.file < 0)
			continue;
		if (!lift_range_collects(f, g, &s->body) || in_group(f, s))
			continue;
		if (p->single_process && lift_device_loop(f, s, counts, ncounts))
			continue;
		cand[i] = 1;
	}
	/* the innermost */
	for (size_t i = 0; i < f->nstmts; i++)
		for (size_t j = 0; j < f->nstmts && cand[i]; j++)
			if (j != i && cand[j] &&
			    lift_within(&f->stmts[j].extent, &f->stmts[i].body))
				cand[i] = 2;
	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (size_t i = 0; i < f->nstmts; i++) {
			const struct cuco_lift_stmt *s = &f->stmts[i];
			if (cand[i] != 1 || (pass == 0 && !lift_range_computes(f, g, &s->body)))
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
				                 lift_rel(f, f->stmts[i].extent.file),
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
