/*
 * slurm.h - the Slurm farm: candidate groups evaluated as job steps on a
 * cluster's GPU nodes while cuco, on the head, compiles, writes the store and
 * decides.
 *
 * A step is `srun --exact -N1 -n R --gres=gpu:R` running cuco-harness with
 * --launch env: R tasks on one node (one NVLink domain), rank and size from
 * Slurm, one GPU each (rank r takes the r-th GPU of the step). Inside an
 * allocation (SLURM_JOB_ID set, from salloc or sbatch) steps share it side by
 * side; without one, each step is a job of its own. The harness writes its
 * JSON lines to a result file in the run directory, which both sides must see.
 *
 * The run directory is <state>/farm/<tag>, tag = "cuco-<store hash>-r<run>";
 * a step's name is "<tag>-<key>", key = a hash of the harness command. A
 * result file that holds every rank's line is that command's result: a step
 * that finished while cuco was not running is taken from there, never run
 * again. A step that ends without a result for the node's reason (cancelled
 * by someone else, node failure, preemption, time limit, the allocation gone)
 * is run again, up to CUCO_FARM_REQUEUES times; then the farm gives up and
 * the evaluation stops with an error (nothing is scored for it).
 */
#ifndef CUCO_FARM_SLURM_H
#define CUCO_FARM_SLURM_H

#include <stdint.h>

#include "cascade/runner.h"
#include "program/directive.h"
#include "util/error.h"
#include "util/proc.h"
#include "util/strbuf.h"

#define CUCO_FARM_REQUEUES 3 /* runs of a step lost for the node's reason, at most */
#define CUCO_FARM_MAX_ARGS 32

struct cuco_farm {
	int ranks;                      /* tasks (and GPUs) per step */
	char partition[64];             /* "" : Slurm's default */
	char args_text[1024];           /* --farm-args as given */
	char *args[CUCO_FARM_MAX_ARGS]; /* args_text split at blanks */
	int nargs;                      /* entries of args */
	char args_buf[1024];            /* what args point into */
	char job[32];                   /* SLURM_JOB_ID when inside an allocation */
	char tag[96];                   /* the run's step-name prefix; "" until set */
	char dir[4096];                 /* the run directory */
	int requeues;                   /* bound on re-runs (CUCO_FARM_REQUEUES) */
};

/*
 * Fill f for steps of ranks tasks: partition and extra srun arguments (both
 * may be NULL or ""), the allocation from SLURM_JOB_ID. CUCO_ERR_USAGE when
 * srun cannot be found on PATH or args has too many words (err says which).
 */
int cuco_farm_init(struct cuco_farm *f, int ranks, const char *partition, const char *args,
                   struct cuco_err *err);

/*
 * Name the run the steps belong to: tag from the store's path and run id, the
 * run directory made under the state directory. CUCO_ERR_IO when it cannot be.
 */
int cuco_farm_set_run(struct cuco_farm *f, const char *store_path, int64_t run_id,
                      struct cuco_err *err);

/*
 * The Slurm view of the partition into out, one "key: value" line each
 * (partition, nodes, GPUs per node from GRES, allocation) and in *max_gpus the
 * most GPUs one node of it has (0 when sinfo shows none, -1 when sinfo fails).
 * CUCO_OK, or CUCO_ERR_SYSTEM when sinfo cannot run (err says why).
 */
int cuco_farm_view(const struct cuco_farm *f, struct cuco_strbuf *out, int *max_gpus,
                   struct cuco_err *err);

/*
 * GPUs the farm's steps can use at once: the allocation's (its gres/gpu
 * TRES) inside one, else the partition's (nodes x GRES). 0 when unknown.
 */
int cuco_farm_total_gpus(const struct cuco_farm *f);

/*
 * Check that a step sees the run directory (f's dir, set by
 * cuco_farm_set_run, or dir when given): a file written here must read back
 * the same there, on every node of the allocation (one node without one).
 * CUCO_OK, CUCO_ERR_INVALID with a plain message when it does not,
 * CUCO_ERR_SYSTEM when no step could run.
 */
int cuco_farm_check_shared(const struct cuco_farm *f, const char *dir, struct cuco_err *err);

/* Remove the run directory and the results in it (the run has them stored). */
void cuco_farm_clean_run(const struct cuco_farm *f);

/* `cuco-harness --probe --ranks R` as one step; its JSON line into out. */
int cuco_farm_probe(const struct cuco_farm *f, struct cuco_strbuf *out, struct cuco_err *err);

/*
 * Cancel the steps (and jobs) still alive whose name starts with f's tag:
 * those an earlier process of the run left behind. *n (may be NULL) gets how
 * many. CUCO_OK, or CUCO_ERR_SYSTEM when squeue cannot run.
 */
int cuco_farm_cancel_run(const struct cuco_farm *f, int *n, struct cuco_err *err);

/*
 * Run one harness command (argv, NULL-terminated, without --result-file;
 * env as for cuco_proc_start) as a step and put the harness's JSON lines into
 * out and the step's stderr into log; *st says how srun ended (exited 0 and
 * nothing else when the result was taken from the run directory). Re-runs the
 * step after a loss for the node's reason. Returns 0 when a result or the
 * candidate's own failure came back (read out and st as for a local harness),
 * else -1 with err set: CUCO_ERR_SYSTEM when srun could not start, the farm
 * gave up after f->requeues losses, or the farm was interrupted.
 */
int cuco_farm_step(const struct cuco_farm *f, char *const argv[], char *const env[],
                   double timeout_s, struct cuco_strbuf *out, struct cuco_strbuf *log,
                   struct cuco_proc_status *st, struct cuco_err *err);

/*
 * Everything a command checks before it stores a run on the farm, in order:
 * f set up (cuco_farm_init), Slurm's view printed on stderr after "cuco
 * <cmd>: ", a node with f->ranks GPUs (GRES) required (CUCO_ERR_NO_GPU), the
 * run directory of store_path's run_id made and checked shared, with resume
 * the run's steps still alive cancelled, and a node's facts from the probe
 * step into *facts (*have_facts = 1; 0 and a note when the probe fails; the
 * default nvcc target follows its compute capability). CUCO_OK or the first
 * failure, err set.
 */
int cuco_farm_prepare(struct cuco_farm *f, const char *cmd, int ranks, const char *partition,
                      const char *args, const char *store_path, int64_t run_id, int resume,
                      struct cuco_hw_facts *facts, int *have_facts, struct cuco_err *err);

/*
 * A runner (cascade/runner.h) whose harness runs are f's job steps (f->ranks
 * ranks each, results in the run directory), into r; a run options' runner
 * routes its harness runs through f (borrowed: f must outlive r's use). Its
 * cancel is cuco_farm_interrupt().
 */
void cuco_farm_runner(struct cuco_farm *f, struct cuco_runner *r);

/*
 * Stop: steps in flight are cancelled within about 0.1 s and no new one
 * starts. Async-signal-safe (a handler of SIGINT or SIGTERM calls it).
 */
void cuco_farm_interrupt(void);
/* 1 once cuco_farm_interrupt() was called in this process. */
int cuco_farm_interrupted(void);
/* 1 once a step was given up in this process (its losses hit the bound). */
int cuco_farm_gave_up(void);

/*
 * Whether a step's stderr says it ended for the node's reason (cancelled,
 * node failure, preemption, time limit, allocation gone): the matching line
 * into why (may be NULL). Exposed for tests.
 */
int cuco_farm_lost(const char *log, char *why, size_t len);

/*
 * Whether srun's stderr says its step waited for resources (a job in the
 * queue, step creation disabled) and never got them: a step that timed out so
 * is the farm's loss, not the candidate's timeout. Exposed for tests.
 */
int cuco_farm_never_started(const char *log);

/* How many of the lines in text are harness result lines (exposed for tests). */
int cuco_farm_result_lines(const char *text);

#endif
