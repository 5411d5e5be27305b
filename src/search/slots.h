/*
 * slots.h - GPU slots: several candidate groups evaluated at once, each on
 * its own GPUs.
 *
 * A node with G GPUs and candidates of R ranks has G / R slots; slot k owns
 * GPUs k*R .. k*R+R-1 and nothing else, so a candidate's ranks never share a
 * GPU with another candidate's. A batch of candidates is split into one
 * contiguous group per slot; each group is evaluated in a forked process whose
 * CUDA_VISIBLE_DEVICES names its slot's GPUs (the harness it starts then sees
 * only those), and the outcomes come back through a file without a name
 * (memfd, close-on-exec: no candidate reaches it by a path) in candidate
 * order.
 * Forking keeps slots apart: their children (nvcc, the harness) and the
 * store's connection are never shared between slots, and the child never
 * touches the store. The fork holds cuco_proc_fork_lock() so a child never
 * inherits a half-made pipe of another thread (the evaluator's prefetch);
 * fn must not use locks another thread may hold at the fork.
 *
 * With a farm (farm/slurm.h) a slot is one job step in flight: its process
 * holds no GPU and only waits for srun, so slots are many more than the
 * head's GPUs (--slots, or the farm's GPUs / ranks).
 */
#ifndef CUCO_SEARCH_SLOTS_H
#define CUCO_SEARCH_SLOTS_H

#include "search/evolve.h"
#include "util/error.h"

#define CUCO_MAX_SLOTS 64

struct cuco_slots {
	int n;                            /* slots, >= 1 */
	char devices[CUCO_MAX_SLOTS][64]; /* each slot's CUDA_VISIBLE_DEVICES; "" = inherit */
};

/*
 * Slots for gpus GPUs and ranks ranks per candidate: gpus / ranks of them
 * (at most max_slots when > 0, at most CUCO_MAX_SLOTS), device lists
 * "0,1", "2,3", ... or, when visible (the caller's CUDA_VISIBLE_DEVICES) is
 * a non-empty list, its entries in that order ("4,5", "6,7" for "4,5,6,7").
 * With fewer GPUs than ranks, or gpus <= 0, one slot that inherits the
 * environment.
 */
void cuco_slots_plan(int gpus, int ranks, int max_slots, const char *visible, struct cuco_slots *s);

/* Evaluate n candidates into outs (each _init'ed by the caller). */
typedef int (*cuco_slot_batch_fn)(void *ctx, const struct cuco_candidate *c, int n,
                                  struct cuco_eval_outcome *outs, struct cuco_err *err);

/*
 * fn over c[0..n) split across the slots (min(slots, n) groups of sizes
 * differing by at most one, in order), all at once. With one slot or one
 * candidate, fn is called directly. Returns CUCO_OK with every outs[i]
 * filled, or the first failing group's code and message (prefixed with its
 * slot and devices); a group whose process dies is CUCO_ERR_SYSTEM naming
 * the signal. outs of groups that failed are left as they were. A group
 * whose farm was interrupted or gave up on a step fails (CUCO_ERR_SYSTEM):
 * its outcomes are not the candidates' own. Once cuco_farm_interrupt() was
 * called here, the groups' processes get SIGTERM (they cancel their steps).
 */
int cuco_slots_run(const struct cuco_slots *s, cuco_slot_batch_fn fn, void *ctx,
                   const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs,
                   struct cuco_err *err);

#endif
