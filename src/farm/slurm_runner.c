/*
 * slurm_runner.c - the Slurm farm as a runner (cascade/runner.h): a harness
 * run becomes one job step of the farm's ranks, its ranks' records in the
 * run directory's result file (slurm.h).
 */
#include "farm/slurm.h"

#include "cascade/cascade.h"

static int farm_start(const struct cuco_runner *r, const struct cuco_run_opts *o,
                      struct cuco_run_job *job, struct cuco_err *err)
{
	(void)r;
	(void)err;
	/* srun is the farm's; a wrapper (compute-sanitizer) goes in front of the harness */
	if (o->wrapper && *o->wrapper)
		cuco_run_job_push_words(job, o->wrapper);
	return CUCO_OK;
}

static int farm_args(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_err *err)
{
	(void)r;
	(void)o;
	(void)err;
	/* ranks from srun; the farm names the result file (in the run directory) */
	job->records = 1;
	cuco_run_job_push(job, "--launch");
	cuco_run_job_push(job, "env");
	return CUCO_OK;
}

static int farm_step(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_strbuf *out, struct cuco_strbuf *log,
                     struct cuco_proc_status *st, struct cuco_err *err)
{
	(void)o;
	return cuco_farm_step(r->ctx, job->argv, job->env, job->timeout_s, out, log, st, err) ? -2
	                                                                                      : 0;
}

static void farm_cancel(const struct cuco_runner *r)
{
	(void)r;
	cuco_farm_interrupt();
}

void cuco_farm_runner(struct cuco_farm *f, struct cuco_runner *r)
{
	r->name = "slurm";
	r->ranks = f->ranks;
	r->start = farm_start;
	r->args = farm_args;
	r->step = farm_step;
	r->cancel = farm_cancel;
	r->ctx = f;
}
