/*
 * emit.h - the lifted package's files from a plan (plan.h): host.cu (the
 * program's translation units and local headers in one file, edited, with
 * cuco_dev/lift.cuh first and the harness's entry points last: the baseline,
 * and the fast path's input), workload.cu (the same file as the workload:
 * tensors and inputs from the program's own setup), manifest.json (its
 * reference is the baseline) and lift.json (what the lift found and did).
 */
#ifndef CUCO_LIFT_EMIT_H
#define CUCO_LIFT_EMIT_H

#include <stddef.h>

#include "lift/driver.h"
#include "lift/facts.h"
#include "lift/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

/* One shape: a name and its parameters' values, substituted into the command line. */
struct cuco_lift_shape {
	char name[32];
	int nparams;
	char params[16][32];
	long long values[16];
};

struct cuco_lift_emit_opts {
	const char *name; /* the workload's name */
	const char *argv; /* the program's command line, {param} for a shape's value; "" none */
	const struct cuco_lift_shape *shapes; /* none: one shape "default" */
	int nshapes;
	const char *const *defines; /* the -D macros the program was parsed with */
	size_t ndefines;
	const char *from;                       /* what the user named (for the description) */
	const struct cuco_lift_arg_value *args; /* --arg NAME=EXPR for a function's driver */
	size_t nargs;
	/* the program's own include folders (--include-dir): their headers are inlined as the
	 * local ones are, so that the package needs none of them */
	const char *const *include_dirs;
	size_t ninclude_dirs;
};

/*
 * host.cu's text into out (appended). The step's NCCL calls carry a /\*cuco:step*\/ comment
 * before their name, which the fast path reads (cuco_fastpath_opts.lifted).
 */
int cuco_lift_emit_host(const struct cuco_lift_facts *f, struct cuco_lift_plan *p,
                        const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out,
                        struct cuco_err *err);

/* manifest.json's text into out. */
void cuco_lift_emit_manifest(const struct cuco_lift_facts *f, const struct cuco_lift_plan *p,
                             const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out);

/* lift.json's text into out: files, step, sites, buffers, notes. */
int cuco_lift_emit_report(const struct cuco_lift_facts *f, const struct cuco_lift_plan *p,
                          const struct cuco_lift_emit_opts *o, struct cuco_strbuf *out,
                          struct cuco_err *err);

/* workload.cu's text for host.cu's, appended to out. */
void cuco_lift_emit_workload(const char *host, struct cuco_strbuf *out);

#endif
