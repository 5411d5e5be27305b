/*
 * seed.h - the fast-path seed of a lifted program: host.cu with the step's NCCL
 * calls (those the lift tagged /\*cuco:step*\/) made device-initiated by the
 * fast path, their buffers found in the run's tensors (cuco_lift_tensors()).
 */
#ifndef CUCO_LIFT_SEED_H
#define CUCO_LIFT_SEED_H

#include <stddef.h>

#include "fastpath/fastpath.h"
#include "util/error.h"
#include "util/strbuf.h"

/* The fast path's hints for a lifted program's tagged calls; owned, _release. */
struct cuco_lift_hints {
	struct cuco_fastpath_hint *v;
	size_t n;
};
void cuco_lift_hints_release(struct cuco_lift_hints *h);

/* Fill h from text's tags and point opts at them (hints, tensors_expr); CUCO_ERR_NOT_FOUND
 * when nothing is tagged. */
int cuco_lift_hints(const char *name, const char *text, struct cuco_lift_hints *h,
                    struct cuco_fastpath_opts *opts, struct cuco_err *err);

/* Whether text is a lifted program (it includes cuco_dev/lift.cuh). */
int cuco_lift_is_lifted(const char *text);

/*
 * The seed of the lifted program text (named name in messages) appended to out, with the fast
 * path's templates in share_dir (NULL: $CUCO_HOME/share/fastpath); *nsites (may be NULL) the
 * calls transformed. The fast path's errors as they are (file:line of the call).
 */
int cuco_lift_seed(const char *name, const char *text, const char *share_dir,
                   struct cuco_strbuf *out, int *nsites, struct cuco_err *err);

#endif
