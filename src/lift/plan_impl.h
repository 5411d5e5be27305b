/*
 * plan_impl.h - what the planner's files share (plan.c: the plan and its refusals; step.c: the
 * step and single-process programs; edits.c: the edits and EVOLVE-BLOCKs). Not a public header.
 */
#ifndef CUCO_LIFT_PLAN_IMPL_H
#define CUCO_LIFT_PLAN_IMPL_H

#include "lift/plan.h"

/* What the program's functions do, transitively (plan.c). */
struct lift_graph {
	int *collects; /* per function: runs a NCCL collective, itself or through callees */
	int *computes; /* launches a kernel or calls a toolkit library, itself or through callees */
	int *reach;    /* reached from the entry */
};

/* Whether a range holds a call that runs a collective / computes, itself or through a callee. */
int lift_range_collects(const struct cuco_lift_facts *f, const struct lift_graph *g,
                        const struct cuco_lift_range *r);
int lift_range_computes(const struct cuco_lift_facts *f, const struct lift_graph *g,
                        const struct cuco_lift_range *r);

/* A file's name for messages: its path under the root, else its path. */
const char *lift_rel(const struct cuco_lift_facts *f, int file);
/* Record an edit of file's [begin, end) (an insertion when equal); one rewrite per place. */
void lift_edit(struct cuco_lift_plan *p, int file, unsigned begin, unsigned end, const char *text);
/* Lines put before line `line` of file. */
void lift_insert_lines(struct cuco_lift_plan *p, int file, unsigned line, const char *text);
int lift_within(const struct cuco_lift_range *a, const struct cuco_lift_range *b);
int lift_pos_within(const struct cuco_lift_pos *a, const struct cuco_lift_range *b);
int lift_is_loop(int kind);
/* Whether name occurs in text as a whole identifier. */
int lift_has_ident(const char *text, const char *name);

/* step.c: single-process programs and the step */
size_t lift_device_counts(const struct cuco_lift_facts *f, char names[][64], size_t max);
int lift_single_process(const struct cuco_lift_facts *f);
int lift_device_loop(const struct cuco_lift_facts *f, const struct cuco_lift_stmt *s,
                     char counts[][64], size_t ncounts);
void lift_body_prefix(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                      const struct cuco_lift_stmt *s, const char *open, const char *close);
int lift_choose_step(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                     const struct cuco_lift_plan_opts *o, const struct lift_graph *g,
                     char counts[][64], size_t ncounts, struct cuco_err *err);

/* edits.c */
int lift_leave_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                     struct cuco_err *err);
void lift_step_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f);
void lift_entry_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f);
void lift_call_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f);
void lift_device_loop_edits(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                            char counts[][64], size_t ncounts);
void lift_block_inserts(struct cuco_lift_plan *p, const struct cuco_lift_facts *f);

#endif
