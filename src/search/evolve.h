/*
 * evolve.h - the evolution loop of the slow path: islands of candidates bred
 * by the built-in design-space operator, judged by an evaluator, every
 * candidate and evaluation kept in the store so a run can be resumed.
 *
 * A generation is: breed children on every island (parent selection,
 * inspirations, mutation or crossover, realisation, novelty rejection) ->
 * store them all in one transaction -> evaluate them in batches, storing each
 * batch's outcomes in one transaction -> add them to their islands -> update
 * bests and stagnation, trim, migrate every M generations, summarise every K.
 * The RNG is reseeded from (search_seed, generation) at the start of each
 * generation, so a resumed run breeds exactly what an uninterrupted one would.
 *
 * Pipelined (config.pipeline, the default with an evaluator that prefetches),
 * generation g+1 is bred and stored before generation g is evaluated, from
 * the islands as they stand then (results up to g-1), and handed to the
 * evaluator's prefetch, so its compiles overlap g's GPU runs. Generation 1 is
 * bred after generation 0 is judged (the islands are empty before).
 */
#ifndef CUCO_SEARCH_EVOLVE_H
#define CUCO_SEARCH_EVOLVE_H

#include <stdint.h>

#include "search/evolve_config.h"
#include "util/error.h"

/*
 * Run (resume_run == 0) or resume (resume_run = a run of kind 'evolve') an
 * evolution. A fresh run stores a run row of kind 'evolve' with cfg as its
 * config; a resumed run continues with cfg (the caller reads the stored config
 * with cuco_evolve_config_from_json() and may raise the budgets), rebuilds the
 * islands from the store, evaluates candidates stored without an evaluation
 * and never re-evaluates the others. *run_id gets the run's id as soon as it
 * is known; *final (may be NULL) the last progress. The run ends 'done',
 * 'interrupted' (stop was set; returns CUCO_OK) or 'failed' (an error: the
 * evaluator, the store or the operator failed; err says why).
 */
int cuco_evolve_run(const struct cuco_evolve_opts *o, const struct cuco_evolve_config *cfg,
                    int64_t resume_run, int64_t *run_id, struct cuco_evolve_progress *final,
                    struct cuco_err *err);

/* ---- the real evaluator: the cascade (compile -> run/verify -> bench) ---- */

struct cuco_manifest;
struct cuco_shape;
struct cuco_run_opts;

/*
 * The cascade evaluator (opaque). Each batch compiles the candidates in
 * parallel (cached by content hash) and runs them with the workload's
 * baseline in one harness call, so fitness = baseline / candidate latency
 * from the same run. Nothing is stored: the loop stores the outcomes.
 * Its prefetch compiles candidates on a background thread into the same
 * cache, nvcc pinned away from the CPUs the harness's ranks use and at the
 * lowest priority (cuco_compile_background_sched()); a batch waits for a
 * prefetched compile of the same program in flight and takes its result.
 */
struct cuco_cascade_evaluator;

/*
 * A cascade evaluator for workload m at nshapes shapes (1 to
 * CUCO_EVOLVE_MAX_SHAPES, the primary first; m and the shapes borrowed, must
 * outlive it) with run options (copied) and default compile options, into
 * *out (free with cuco_cascade_evaluator_free()). Each batch runs the
 * candidates and the baseline at every shape (one harness run per shape)
 * and combines them with cuco_eval_outcome_combine(). Returns CUCO_OK,
 * CUCO_ERR_INVALID (no shape, or too many), CUCO_ERR_IO (host program
 * unreadable), CUCO_ERR_NOMEM, or the error of cuco_compile_opts_default();
 * *out is NULL on error.
 */
int cuco_cascade_evaluator_new(const struct cuco_manifest *m,
                               const struct cuco_shape *const *shapes, int nshapes,
                               const struct cuco_run_opts *run, struct cuco_cascade_evaluator **out,
                               struct cuco_err *err);
/*
 * Evaluate batches across GPU slots (search/slots.h): each batch is split
 * into one group per slot, all run at once, each with its own baseline run.
 * Call before cuco_cascade_evaluator_bind(). Default: one slot.
 */
struct cuco_slots;
void cuco_cascade_evaluator_set_slots(struct cuco_cascade_evaluator *ce,
                                      const struct cuco_slots *s);
/* Fill ev with the cascade evaluator's callbacks and ce as context. */
void cuco_cascade_evaluator_bind(struct cuco_cascade_evaluator *ce, struct cuco_evaluator *ev);
/* Free it (prefetches in flight are cancelled first); NULL is allowed. */
void cuco_cascade_evaluator_free(struct cuco_cascade_evaluator *ce);

#endif
