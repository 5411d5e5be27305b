/*
 * plan.h - the lift's decisions about a user's program, made from the facts of
 * its parse (facts.h): where its entry is, which statements are its step,
 * which edits turn its files into a lifted program (cuco_dev/lift.cuh), what
 * its buffers are and how the step uses them, which NCCL calls the fast path
 * may make device-initiated, and every note, item to finish by hand and
 * refusal, each with its file:line. Nothing is written here (emit.h does).
 */
#ifndef CUCO_LIFT_PLAN_H
#define CUCO_LIFT_PLAN_H

#include <stddef.h>

#include "lift/facts.h"
#include "util/error.h"

/* An edit of one file's text: [begin, end) replaced by text (begin == end inserts). */
struct cuco_lift_edit {
	int file;
	unsigned begin, end;
	char *text;
	int seq; /* edits at one offset apply in this order */
};

/* Lines put before a line of a file (EVOLVE-BLOCK markers); the file's numbering resumes
 * after them. */
struct cuco_lift_insert {
	int file;
	unsigned line;
	char *text; /* whole lines, each ending in '\n' */
};

enum cuco_lift_note_kind {
	CUCO_LIFT_NOTE_INFO = 1, /* what the lift did and why */
	CUCO_LIFT_NOTE_TODO = 2, /* left for the user: the package works without it */
	CUCO_LIFT_NOTE_DROP = 3, /* a call the harness does for the program (MPI set-up, ...) */
};

struct cuco_lift_note {
	int kind;
	int file; /* -1: about the program as a whole */
	unsigned line;
	char *text;
};

/* A buffer allocation site: what the lifted program's table says of it. */
struct cuco_lift_alloc_site {
	int file;
	unsigned line;
	char *callee; /* "cudaMalloc" */
	char *text;   /* the buffer as written: "a_new", "ls_dev[i].d_send" */
	int dtype;    /* enum cuco_dtype from the pointee type, 0 when unknown */
	int role;     /* enum cuco_role from the step's uses */
};

struct cuco_lift_plan_opts {
	const char
	    *step_at; /* "FILE:LINE": the loop (or statement) there is the step; NULL: choose */
	const char *entry; /* the function main is; NULL: main */
};

/* Everything the planner decided; caller-owned, _init/_release. */
struct cuco_lift_plan {
	int entry;      /* index into facts->functions */
	int driver;     /* the entry is a function with arguments: the lift writes a main that calls
	                   it as the step (driver.h) */
	int step_fn;    /* the function the step is in */
	int step_loop;  /* the loop whose body is the step, or -1 */
	int step_first; /* else: the first and last statements of the step (children of one block)
	                 */
	int step_last;
	struct cuco_lift_range step; /* the step's text */
	int single_process;          /* one process drives every GPU (ncclCommInitAll) */
	int float_reduction;         /* the step reduces floating-point values */
	int *units;                  /* translation units (file indices), the entry's last */
	size_t nunits, units_alloc;
	struct cuco_lift_edit *edits;
	size_t nedits, edits_alloc;
	struct cuco_lift_insert *inserts;
	size_t ninserts, inserts_alloc;
	struct cuco_lift_note *notes;
	size_t nnotes, notes_alloc;
	struct cuco_lift_alloc_site *sites;
	size_t nsites, sites_alloc;
	int *step_calls; /* calls (indices) the fast path makes device-initiated, in source order */
	size_t nstep_calls, step_calls_alloc;
	char **libs; /* toolkit libraries the program links: "cublas", "curand" */
	size_t nlibs, libs_alloc;
	char **texts; /* the files' contents, read as needed (index: file) */
	size_t ntexts;
};

void cuco_lift_plan_init(struct cuco_lift_plan *p);
void cuco_lift_plan_release(struct cuco_lift_plan *p);

/*
 * Decide how to lift the program facts describe. CUCO_OK with p filled, or an error whose
 * message names the file:line, what cannot be lifted and the next step: CUCO_ERR_COMPILE (the
 * program does not parse), CUCO_ERR_NOT_FOUND (no NCCL collective, no main),
 * CUCO_ERR_UNSUPPORTED (threads, a call the lift cannot rewrite), CUCO_ERR_INVALID (--step
 * names no loop or statement), CUCO_ERR_IO (a file cannot be read).
 */
int cuco_lift_plan_make(const struct cuco_lift_facts *f, const struct cuco_lift_plan_opts *o,
                        struct cuco_lift_plan *p, struct cuco_err *err);

/* The contents of file (read once, owned by p), or NULL when it cannot be read. */
const char *cuco_lift_plan_text(struct cuco_lift_plan *p, const struct cuco_lift_facts *f,
                                int file);

/* Add a note (kind: enum cuco_lift_note_kind; file -1 for the program as a whole). */
void cuco_lift_plan_note(struct cuco_lift_plan *p, int kind, int file, unsigned line,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The NCCL call kinds of the step the fast path transforms, by callee name. */
int cuco_lift_is_step_call(const char *callee);

#endif
