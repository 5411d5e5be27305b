/*
 * rules.h - the small decisions of the lift, one function each so that each is
 * tested alone: what a call is, a buffer's dtype from its pointee type, the role
 * a step gives a buffer, whether a step reduces floating-point values, whether
 * a statement only computes, and what cuco's MPI layer runs.
 */
#ifndef CUCO_LIFT_RULES_H
#define CUCO_LIFT_RULES_H

#include <stddef.h>

#include "lift/facts.h"

/* NCCL calls of a step that the fast path transforms: collectives, send/recv, group bounds. */
int cuco_lift_rules_step_call(const char *callee);

/* Calls that allocate a device (or pinned host) buffer into their first argument. */
int cuco_lift_rules_alloc_call(const char *callee);

/* enum cuco_dtype of a canonical pointee type ("float", "unsigned char", "__nv_bfloat16");
 * 0 when it is none of cuco's dtypes (a struct, void, a template parameter). */
int cuco_lift_rules_dtype(const char *pointee);

/*
 * The role (enum cuco_role) the step gives the buffer written `root` where it was allocated,
 * from the step's text (text: the contents of step->file): CUCO_ROLE_OUTPUT when the step only
 * writes it whole through NCCL receive buffers, cudaMemset or a cudaMemcpy destination;
 * CUCO_ROLE_INPUT when it only reads it through NCCL send buffers or a cudaMemcpy source;
 * CUCO_ROLE_INOUT otherwise (any other use: a kernel's argument, a function's, an alias).
 */
int cuco_lift_rules_role(const struct cuco_lift_facts *f, const struct cuco_lift_range *step,
                         const char *text, const char *root);

/* Whether the step's collectives (calls[0..n)) or the program's device code reduce floating-point
 * values (sums, products, averages of floats, or atomics), so results differ in the last bits. */
int cuco_lift_rules_float_reduction(const struct cuco_lift_facts *f,
                                    const struct cuco_lift_range *step, const int *calls, size_t n);

/* Whether the statement's calls all compute (launches, toolkit libraries, the program's own
 * computing functions): it may join the step beside the collectives. */
int cuco_lift_rules_compute_only(const struct cuco_lift_facts *f,
                                 const struct cuco_lift_range *stmt);

/* Whether [begin, end) of text starts a line and ends one (only blanks around it there). */
int cuco_lift_rules_own_lines(const char *text, unsigned begin, unsigned end);

/* Whether cuco's MPI layer (cuco_dev/lift/mpi.h) runs the MPI function named. */
int cuco_lift_rules_mpi_runs(const char *callee);

#endif
