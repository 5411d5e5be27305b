/*
 * edits.c - the edits that make a program's files a lifted program (plan_impl.h):
 * the step's frame, the ways out of it, main renamed, the calls that would end
 * or reconfigure the harness, the loops over devices, and the EVOLVE-BLOCKs.
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

/* ---- the edits ---- */

/* Every break, continue and return that leaves the step ends one pass instead. */
int lift_leave_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                     struct cuco_err *err)
{
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		int leaves = 0;
		if (!lift_within(&s->extent, &p->step))
			continue;
		if (s->kind == CUCO_LIFT_STMT_RETURN) {
			/* not the return of a lambda inside the step */
			int in_lambda = 0;
			for (int up = s->parent; up >= 0; up = f->stmts[up].parent)
				if (f->stmts[up].kind == CUCO_LIFT_STMT_LAMBDA &&
				    lift_within(&f->stmts[up].extent, &p->step))
					in_lambda = 1;
			leaves = !in_lambda;
		} else if (s->kind == CUCO_LIFT_STMT_BREAK || s->kind == CUCO_LIFT_STMT_CONTINUE) {
			leaves =
			    s->target < 0 || !lift_within(&f->stmts[s->target].extent, &p->step);
		}
		if (!leaves)
			continue;
		if (s->macro || s->opaque)
			return cuco_err_set(
			    err, CUCO_ERR_UNSUPPORTED,
			    "%s:%u: the %s that leaves the step comes from macro %s; "
			    "the lift cannot end the step there. Mark a narrower step "
			    "with `// cuco: step`",
			    lift_rel(f, s->extent.file), s->extent.line,
			    cuco_lift_stmt_kind_name(s->kind), s->macro ? s->macro : "?");
		lift_edit(p, s->extent.file, s->extent.begin, s->extent.end,
		          "CUCO_LIFT_STEP_LEAVE;");
		cuco_lift_plan_note(p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
		                    "this %s ends the run's pass through the step",
		                    cuco_lift_stmt_kind_name(s->kind));
	}
	return CUCO_OK;
}

void lift_step_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	if (p->step_loop >= 0) {
		lift_body_prefix(p, f, &f->stmts[p->step_loop], "CUCO_LIFT_STEP_BEGIN",
		                 "CUCO_LIFT_STEP_END");
		return;
	}
	if (cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, p->step.file), p->step.begin,
	                              p->step.end)) {
		/* lines of their own, outside the step's EVOLVE-BLOCK */
		lift_insert_lines(p, p->step.file, p->step.line, "CUCO_LIFT_STEP_BEGIN\n");
		lift_insert_lines(p, p->step.file, p->step.end_line + 1, "CUCO_LIFT_STEP_END\n");
	} else {
		lift_edit(p, p->step.file, p->step.begin, p->step.begin, "CUCO_LIFT_STEP_BEGIN ");
		lift_edit(p, p->step.file, p->step.end, p->step.end, " CUCO_LIFT_STEP_END");
	}
	{
		/* the block's statements after the step never run, and may name the step's
		 * declarations, which the step's frame hides: leave them out */
		int block = f->stmts[p->step_first].parent;
		const struct cuco_lift_stmt *b = block >= 0 ? &f->stmts[block] : NULL;
		if (b && b->extent.end_line > p->step.end_line + 1) {
			lift_insert_lines(p, p->step.file, p->step.end_line + 1,
			                  "#if 0 /* the rest of the block: it never runs */\n");
			lift_edit(p, p->step.file, b->extent.end - 1, b->extent.end - 1,
			          "\n#endif\n");
		}
	}
}

void lift_entry_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	const struct cuco_lift_function *m = &f->functions[p->entry];

	if (m->is_main)
		lift_edit(p, m->name_pos.file, m->name_pos.offset, m->name_pos.offset + 4,
		          "cuco_lift_user_main");
}

/* exit(), abort(), setenv() and their kind in the program's code: the runtime's. */
void lift_call_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
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
				lift_edit(p, c->name.file, c->name.offset,
				          c->name.offset + (unsigned)n, map[k][1]);
		}
	}
	for (size_t i = 0; i < f->nincludes; i++) {
		const struct cuco_lift_include *in = &f->includes[i];
		const char *base = strrchr(in->name, '/');
		base = base ? base + 1 : in->name;
		if (!strcmp(base, "mpi.h") && f->files[in->file].local)
			lift_edit(p, in->file, in->extent.begin, in->extent.end,
			          "#include <cuco_dev/lift/mpi.h>");
	}
}

void lift_device_loop_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                            char counts[][64], size_t ncounts)
{
	for (size_t i = 0; i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		char open[160];
		if (!lift_is_loop(s->kind) || (int)i == p->step_loop ||
		    !lift_device_loop(f, s, counts, ncounts))
			continue;
		snprintf(open, sizeof(open), "CUCO_LIFT_DEVICE_ONLY(%s);", s->induction);
		lift_body_prefix(p, f, s, open, NULL);
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, s->extent.file, s->extent.line,
		    "a loop over the devices: each rank runs it for its own device (%s)",
		    s->induction);
	}
}

/* EVOLVE-BLOCKs: around the program's kernels and device functions, and around the step, where
 * each starts and ends a line of its own. */
void lift_block_inserts(struct cuco_lift_plan *p, const struct cuco_lift_facts *f)
{
	for (size_t i = 0; i < f->nfunctions; i++) {
		const struct cuco_lift_function *fn = &f->functions[i];
		if (fn->kind == CUCO_LIFT_FN_HOST || fn->extent.file < 0 ||
		    !f->files[fn->extent.file].local)
			continue;
		if (!cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, fn->extent.file),
		                               fn->extent.begin, fn->extent.end))
			continue;
		lift_insert_lines(p, fn->extent.file, fn->extent.line, "// EVOLVE-BLOCK-START\n");
		lift_insert_lines(p, fn->extent.file, fn->extent.end_line + 1,
		                  "// EVOLVE-BLOCK-END\n");
	}
	if (p->driver) {
		const struct cuco_lift_function *fn = &f->functions[p->entry];
		if (fn->kind == CUCO_LIFT_FN_HOST &&
		    cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, fn->extent.file),
		                              fn->extent.begin, fn->extent.end)) {
			lift_insert_lines(p, fn->extent.file, fn->extent.line,
			                  "// EVOLVE-BLOCK-START\n");
			lift_insert_lines(p, fn->extent.file, fn->extent.end_line + 1,
			                  "// EVOLVE-BLOCK-END\n");
		}
	} else if (cuco_lift_rules_own_lines(cuco_lift_plan_text(p, f, p->step.file), p->step.begin,
	                                     p->step.end) &&
	           p->step_loop < 0) {
		lift_insert_lines(p, p->step.file, p->step.line, "// EVOLVE-BLOCK-START\n");
		lift_insert_lines(p, p->step.file, p->step.end_line + 1, "// EVOLVE-BLOCK-END\n");
	} else if (p->step_loop >= 0) {
		const struct cuco_lift_stmt *s = &f->stmts[p->step_loop];
		if (s->body.end_line > s->body.line + 1) {
			lift_insert_lines(p, s->body.file, s->body.line + 1,
			                  "// EVOLVE-BLOCK-START\n");
			lift_insert_lines(p, s->body.file, s->body.end_line,
			                  "// EVOLVE-BLOCK-END\n");
		}
	}
}
