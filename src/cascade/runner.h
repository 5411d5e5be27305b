/*
 * runner.h - how a harness command gets its ranks: forked on this node (the
 * default), started by a launcher cuco runs here (mpirun, `--launcher`), or
 * run elsewhere (a Slurm farm's job step, farm/slurm.h). A runner is a small
 * table of callbacks with a context; the run options carry one
 * (cuco_run_opts.runner), so nothing below the caller knows which.
 *
 * One run: run.c builds the command in a job (struct cuco_run_job), calling
 * start (the run's private directory, the words in front of the harness),
 * then args (the harness's rank and result arguments) where they go, then
 * step to run it; run.c reads the result text step put in out, one record
 * (fork) or one per rank (records), and removes the job's directory.
 */
#ifndef CUCO_CASCADE_RUNNER_H
#define CUCO_CASCADE_RUNNER_H

#include <limits.h>

#include "util/error.h"
#include "util/proc.h"
#include "util/strbuf.h"

#define CUCO_RUN_MAX_ARGS 256 /* words of one harness command */
#define CUCO_RUN_MAX_FILES 18 /* files a run loads (harness, workload, programs) */
/* strings the job owns: at most one per word and file, and the library path */
#define CUCO_RUN_MAX_OWNED (CUCO_RUN_MAX_ARGS + CUCO_RUN_MAX_FILES + 1)

struct cuco_run_opts;

/* One harness run being built and run. run.c owns it; a runner fills its part. */
struct cuco_run_job {
	char *argv[CUCO_RUN_MAX_ARGS]; /* the command, NULL-terminated once built */
	int argc;
	char *owned[CUCO_RUN_MAX_OWNED]; /* strings argv points to that the job frees */
	int nowned;
	char *env[4]; /* extra environment (NCCL_NVLS_ENABLE=0, the NCCL library path) */
	int nenv;
	const char *files[CUCO_RUN_MAX_FILES]; /* files the run loads: what its view holds */
	int nfiles;
	struct cuco_strbuf launch;       /* words in front of the harness; argv points into it */
	char dir[PATH_MAX];              /* the run's private directory; "" none */
	char work[PATH_MAX + 8];         /* dir/work: what the harness sees and writes */
	char stage[PATH_MAX + 8];        /* dir/root: where its view is built */
	char result_file[PATH_MAX + 32]; /* a shared result file; "" none */
	int result_fd;                   /* cuco's descriptor of it; -1 none */
	int records;                     /* 1: the result is one record per rank */
	double timeout_s;                /* the whole run */
};

/* The job's next word (not copied). */
void cuco_run_job_push(struct cuco_run_job *job, char *s);
/* The job's next word, printf-formatted into a string the job owns. */
void cuco_run_job_pushf(struct cuco_run_job *job, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Words (a launcher's, a wrapper's: blank-separated) pushed in front of the harness; once a
 * job. */
void cuco_run_job_push_words(struct cuco_run_job *job, const char *words);
/* Make the job's private directory (with work and stage in it) under parent. CUCO_OK or
 * CUCO_ERR_SYSTEM with err set. */
int cuco_run_job_private_dir(struct cuco_run_job *job, const char *parent, struct cuco_err *err);

struct cuco_runner {
	const char *name; /* "fork", "launcher", "slurm": for messages */
	int ranks;        /* ranks of every run (a farm step's size); 0: the run options' */
	/*
	 * Before the command: the run's private directory (cuco_run_job_private_dir) if it
	 * wants one, and the words in front of the harness pushed (a launcher's, a
	 * wrapper's). CUCO_OK, or an error with err set.
	 */
	int (*start)(const struct cuco_runner *r, const struct cuco_run_opts *o,
	             struct cuco_run_job *job, struct cuco_err *err);
	/* The harness's rank and result-channel arguments pushed. CUCO_OK or an error. */
	int (*args)(const struct cuco_runner *r, const struct cuco_run_opts *o,
	            struct cuco_run_job *job, struct cuco_err *err);
	/*
	 * Run the job's command to its end: the result text into out, the log (its
	 * output, its stderr) into log, how it ended into st. 0 when it ran; -1 when
	 * it could not start (errno), or -2 with err set (the runner's own failure).
	 */
	int (*step)(const struct cuco_runner *r, const struct cuco_run_opts *o,
	            struct cuco_run_job *job, struct cuco_strbuf *out, struct cuco_strbuf *log,
	            struct cuco_proc_status *st, struct cuco_err *err);
	/* Stop the runs in flight and start no new one; async-signal-safe. NULL: nothing to do. */
	void (*cancel)(const struct cuco_runner *r);
	void *ctx; /* the runner's own (the farm) */
};

/* The runner o names: o->runner, else this node's: the launcher's when o->launcher, else
 * the fork's. */
const struct cuco_runner *cuco_runner_of(const struct cuco_run_opts *o);

/* The runs on this node: one harness that forks a rank per GPU, in the view. */
extern const struct cuco_runner cuco_runner_fork;
/* A launcher (o->launcher, e.g. mpirun) cuco starts here; ranks write a result file. */
extern const struct cuco_runner cuco_runner_launcher;

#endif
