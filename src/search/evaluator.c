/*
 * evaluator.c - the real evaluator of the evolution loop: a batch of
 * candidates through the cascade (parallel compile, one harness run beside
 * the baseline) without storing anything; the loop stores the outcomes. Its
 * prefetch compiles the next generation on a background thread while the
 * GPUs run this one.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "search/evolve.h"
#include "search/slots.h"
#include "util/paths.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Candidates handed to prefetch, copied: the loop's strings are borrowed. */
struct prefetch_req {
	struct prefetch_req *next;
	int n;
	char **names, **codes;
};

/* Context of the cascade evaluator. */
struct cuco_cascade_evaluator {
	const struct cuco_manifest *m;
	const struct cuco_shape *shapes[CUCO_EVOLVE_MAX_SHAPES]; /* the primary first */
	const char *shape_names[CUCO_EVOLVE_MAX_SHAPES];
	int nshapes;
	struct cuco_run_opts run;
	struct cuco_compile_opts compile; /* batches: with the shared in-flight table */
	char *baseline_src;               /* the host program's text */
	struct cuco_slots slots;
	/* the prefetch: one thread, a queue of requests */
	struct cuco_compile_inflight *inflight; /* shared by the thread and the batches */
	struct cuco_proc_sched bg;              /* how prefetched compiles run */
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a request was queued, or the thread went idle */
	pthread_t thread;
	int started; /* the thread exists */
	int quit;    /* the thread ends once the queue is empty */
	int busy;    /* the thread is compiling a request */
	struct prefetch_req *head, *tail;
	atomic_int cancel; /* nonzero: the request in flight stops */
};

static void req_free(struct prefetch_req *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		free(r->names ? r->names[i] : NULL);
		free(r->codes ? r->codes[i] : NULL);
	}
	free(r->names);
	free(r->codes);
	free(r);
}

int cuco_cascade_evaluator_new(const struct cuco_manifest *m,
                               const struct cuco_shape *const *shapes, int nshapes,
                               const struct cuco_run_opts *run, struct cuco_cascade_evaluator **out,
                               struct cuco_err *err)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_cascade_evaluator *ce;
	int rc;

	*out = NULL;
	if (nshapes < 1 || nshapes > CUCO_EVOLVE_MAX_SHAPES)
		return cuco_err_set(err, CUCO_ERR_INVALID, "%d shapes: give 1 to %d", nshapes,
		                    CUCO_EVOLVE_MAX_SHAPES);
	ce = cuco_xcalloc(1, sizeof(*ce));
	ce->m = m;
	for (int k = 0; k < nshapes; k++) {
		ce->shapes[k] = shapes[k];
		ce->shape_names[k] = shapes[k]->name;
	}
	ce->nshapes = nshapes;
	ce->run = *run;
	ce->slots.n = 1;
	if ((rc = cuco_compile_opts_default(&ce->compile, err))) {
		free(ce);
		return rc;
	}
	if (cuco_strbuf_read_file(&src, m->host_program)) {
		cuco_strbuf_release(&src);
		free(ce);
		return cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the workload's host program",
		                    m->host_program);
	}
	ce->baseline_src = cuco_strbuf_detach(&src, NULL);
	if ((rc = cuco_compile_inflight_new(&ce->inflight, err))) {
		free(ce->baseline_src);
		free(ce);
		return rc;
	}
	pthread_mutex_init(&ce->mu, NULL);
	pthread_cond_init(&ce->cv, NULL);
	ce->compile.inflight = ce->inflight;
	cuco_compile_background_sched(run->ranks, &ce->bg);
	/* Settle the lazily found paths before a second thread reads them. */
	(void)cuco_nvcc_version();
	*out = ce;
	return CUCO_OK;
}

/* Drop the queue, stop the request in flight, wait until the thread is idle. */
static void prefetch_cancel(void *ctx)
{
	struct cuco_cascade_evaluator *ce = ctx;
	struct prefetch_req *r;

	pthread_mutex_lock(&ce->mu);
	while ((r = ce->head)) {
		ce->head = r->next;
		req_free(r);
	}
	ce->tail = NULL;
	atomic_store(&ce->cancel, 1);
	while (ce->busy)
		pthread_cond_wait(&ce->cv, &ce->mu);
	atomic_store(&ce->cancel, 0);
	pthread_mutex_unlock(&ce->mu);
}

void cuco_cascade_evaluator_free(struct cuco_cascade_evaluator *ce)
{
	if (!ce)
		return;
	prefetch_cancel(ce);
	if (ce->started) {
		pthread_mutex_lock(&ce->mu);
		ce->quit = 1;
		pthread_cond_broadcast(&ce->cv);
		pthread_mutex_unlock(&ce->mu);
		pthread_join(ce->thread, NULL);
	}
	pthread_cond_destroy(&ce->cv);
	pthread_mutex_destroy(&ce->mu);
	cuco_compile_inflight_free(ce->inflight);
	free(ce->baseline_src);
	free(ce);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? cuco_xstrdup(s) : NULL;
}

/* Where candidate name compiles: beside the workload's files, for its includes. */
static void candidate_path(const struct cuco_cascade_evaluator *ce, const char *name, char *out,
                           size_t len)
{
	snprintf(out, len, "%s/%s.cu", ce->m->dir, name);
}

/* On the prefetch thread: compile one request into the cache, in the background. */
static void prefetch_compile(struct cuco_cascade_evaluator *ce, struct prefetch_req *r)
{
	struct cuco_compile_opts o = ce->compile;
	struct cuco_compile_job *jobs = cuco_xcalloc((size_t)r->n + 1, sizeof(*jobs));
	char(*paths)[4200] = cuco_xcalloc((size_t)r->n + 1, sizeof(*paths));
	struct cuco_err e;

	o.sched = &ce->bg;
	o.cancel = &ce->cancel;
	for (int i = 0; i < r->n; i++) {
		candidate_path(ce, r->names[i], paths[i], sizeof(paths[i]));
		cuco_compile_job_init(&jobs[i], r->names[i], paths[i], r->codes[i]);
	}
	cuco_err_clear(&e);
	/* Outcomes stay in the cache and the in-flight table; errors are the batch's to find. */
	(void)cuco_compile_many(&o, jobs, r->n, &e);
	for (int i = 0; i < r->n; i++)
		cuco_compile_job_release(&jobs[i]);
	free(jobs);
	free(paths);
}

static void *prefetch_main(void *arg)
{
	struct cuco_cascade_evaluator *ce = arg;

	pthread_mutex_lock(&ce->mu);
	for (;;) {
		struct prefetch_req *r;
		while (!ce->head && !ce->quit)
			pthread_cond_wait(&ce->cv, &ce->mu);
		if (!(r = ce->head))
			break;
		ce->head = r->next;
		if (!ce->head)
			ce->tail = NULL;
		ce->busy = 1;
		pthread_mutex_unlock(&ce->mu);
		prefetch_compile(ce, r);
		req_free(r);
		pthread_mutex_lock(&ce->mu);
		ce->busy = 0;
		pthread_cond_broadcast(&ce->cv);
	}
	pthread_mutex_unlock(&ce->mu);
	return NULL;
}

static int prefetch(void *ctx, const struct cuco_candidate *c, int n, struct cuco_err *err)
{
	struct cuco_cascade_evaluator *ce = ctx;
	struct prefetch_req *r = NULL;
	int rc = CUCO_OK;

	if (n <= 0)
		goto out;
	r = cuco_xcalloc(1, sizeof(*r));
	r->names = cuco_xcalloc((size_t)n, sizeof(char *));
	r->codes = cuco_xcalloc((size_t)n, sizeof(char *));
	r->n = n;
	for (int i = 0; i < n; i++) {
		r->names[i] = cuco_xstrdup(c[i].name);
		r->codes[i] = cuco_xstrdup(c[i].code);
	}
	pthread_mutex_lock(&ce->mu);
	if (!ce->started) {
		/* SIGINT stays with the loop's thread: the new thread inherits a mask blocking it.
		 */
		sigset_t block, old;
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		pthread_sigmask(SIG_BLOCK, &block, &old);
		if (pthread_create(&ce->thread, NULL, prefetch_main, ce) == 0)
			ce->started = 1;
		else
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot start the prefetch thread");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc == CUCO_OK) {
		if (ce->tail)
			ce->tail->next = r;
		else
			ce->head = r;
		ce->tail = r;
		r = NULL;
		pthread_cond_broadcast(&ce->cv);
	}
	pthread_mutex_unlock(&ce->mu);
out:
	req_free(r);
	return rc;
}

/*
 * Candidate p's outcome at one shape sh (whose baseline took base_us), into
 * *o; p compiled. Precheck and compile failures are judged by batch_with().
 */
static void outcome_at(const struct cuco_eval_program *p, const struct cuco_eval_shape *sh,
                       double base_us, const struct cuco_run_opts *run, struct cuco_eval_outcome *o)
{
	const struct cuco_program_result *r = cuco_eval_find(sh, p->name);

	o->baseline_us = base_us;
	snprintf(o->gpu, sizeof(o->gpu), "%s", sh->run.gpu);
	if (!r) {
		o->code = sh->code ? sh->code : CUCO_ERR_RUN;
		snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
		snprintf(o->stage, sizeof(o->stage), "run");
		o->error = cuco_xstrdup(sh->error[0] ? sh->error : "no result from the harness");
		o->log = dup_or_null(sh->run.log.buf);
		return;
	}
	o->code = r->code;
	snprintf(o->status, sizeof(o->status), "%s", r->status);
	snprintf(o->stage, sizeof(o->stage), "%s", r->stage);
	o->median_us = r->median_us;
	o->mean_us = r->mean_us;
	o->p90_us = r->p90_us;
	o->rel_err = r->rel_err;
	o->error = cuco_xstrdup(r->error);
	if (r->code != CUCO_OK)
		o->log = dup_or_null(sh->run.log.buf);
	else if (isfinite(base_us) && cuco_result_latency(r, run) > 0)
		o->fitness = base_us / cuco_result_latency(r, run);
	else /* correct but not comparable: keep it, rank it last */
		o->fitness = 1e-6;
}

/*
 * One batch through the cascade with compile options co (shared table or a
 * slot's own): every shape, the baseline beside the candidates at each.
 */
static int batch_with(struct cuco_cascade_evaluator *ce, const struct cuco_compile_opts *co,
                      const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs,
                      struct cuco_err *err)
{
	struct cuco_eval_request req;
	struct cuco_eval_program *progs = cuco_xcalloc((size_t)n + 1, sizeof(*progs));
	char(*paths)[4200] = cuco_xcalloc((size_t)n + 1, sizeof(*paths));
	struct cuco_eval_shape sh[CUCO_EVOLVE_MAX_SHAPES];
	struct cuco_eval_outcome per[CUCO_EVOLVE_MAX_SHAPES];
	const struct cuco_manifest_program *b = NULL;
	double base_us[CUCO_EVOLVE_MAX_SHAPES];
	int rc;

	memset(sh, 0, sizeof(sh));
	cuco_eval_program_init(&progs[0], "baseline", "baseline", ce->m->host_program,
	                       ce->baseline_src, 1);
	for (int i = 0; i < ce->m->nprograms; i++)
		if (!strcmp(ce->m->programs[i].name, "baseline"))
			b = &ce->m->programs[i];
	for (int l = 0; b && l < b->nlibs && l < 3; l++)
		progs[0].libs[l] = b->libs[l];
	for (int i = 0; i < n; i++) {
		candidate_path(ce, c[i].name, paths[i], sizeof(paths[i]));
		cuco_eval_program_init(&progs[i + 1], c[i].name, "candidate", paths[i], c[i].code,
		                       1);
	}
	memset(&req, 0, sizeof(req));
	req.m = ce->m;
	req.shapes = ce->shapes;
	req.nshapes = ce->nshapes;
	req.progs = progs;
	req.nprogs = n + 1;
	req.compile = *co;
	req.run = ce->run;
	rc = cuco_evaluate(&req, sh, err);
	if (rc)
		goto release; /* no GPU or a broken cascade: the run cannot go on */
	for (int k = 0; k < ce->nshapes; k++) {
		const struct cuco_program_result *base = cuco_eval_find(&sh[k], "baseline");
		base_us[k] =
		    base && base->code == CUCO_OK ? cuco_result_latency(base, &ce->run) : NAN;
	}
	for (int i = 0; i < n && !rc; i++) {
		struct cuco_eval_program *p = &progs[i + 1];
		struct cuco_eval_outcome *o = &outs[i];

		/* Before the GPUs, so the same at every shape: the primary's baseline. */
		o->baseline_us = base_us[0];
		snprintf(o->gpu, sizeof(o->gpu), "%s", sh[0].run.gpu);
		snprintf(o->stage, sizeof(o->stage), "compile");
		if (p->precheck_code) {
			o->code = p->precheck_code;
			snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
			o->error = cuco_xstrdup(p->precheck_error);
			continue;
		}
		if (p->job.code != CUCO_OK) {
			o->code = p->job.code == -1 ? CUCO_ERR_COMPILE : p->job.code;
			snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
			o->error = cuco_xstrdup("nvcc failed (see the compile log)");
			o->log = dup_or_null(p->job.log.buf);
			continue;
		}
		for (int k = 0; k < ce->nshapes; k++) {
			cuco_eval_outcome_init(&per[k]);
			outcome_at(p, &sh[k], base_us[k], &ce->run, &per[k]);
		}
		cuco_eval_outcome_release(o);
		if (cuco_eval_outcome_combine(ce->shape_names, per, ce->nshapes, o))
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		for (int k = 0; k < ce->nshapes; k++)
			cuco_eval_outcome_release(&per[k]);
	}
release:
	for (int k = 0; k < ce->nshapes; k++)
		cuco_eval_shape_release(&sh[k]);
	for (int i = 0; i <= n; i++)
		cuco_eval_program_release(&progs[i]);
	free(progs);
	free(paths);
	return rc;
}

static int batch(void *ctx, const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs,
                 struct cuco_err *err)
{
	struct cuco_cascade_evaluator *ce = ctx;

	return batch_with(ce, &ce->compile, c, n, outs, err);
}

/* What a slot's forked process evaluates with: its own in-flight table. */
struct slot_ctx {
	struct cuco_cascade_evaluator *ce;
	struct cuco_compile_opts compile;
};

static int batch_in_slot(void *ctx, const struct cuco_candidate *c, int n,
                         struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	struct slot_ctx *sc = ctx;

	return batch_with(sc->ce, &sc->compile, c, n, outs, err);
}

/*
 * Across slots: the candidates are compiled here first (waiting for the
 * prefetch, through the shared table), then each slot's process finds them
 * in the cache, their failures in a table of its own: the shared one's lock
 * may be held by the prefetch thread when the slots fork.
 */
static int batch_slots(void *ctx, const struct cuco_candidate *c, int n,
                       struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	struct cuco_cascade_evaluator *ce = ctx;
	struct cuco_compile_job *jobs = cuco_xcalloc((size_t)n + 1, sizeof(*jobs));
	char(*paths)[4200] = cuco_xcalloc((size_t)n + 1, sizeof(*paths));
	struct cuco_compile_inflight *own = NULL;
	struct slot_ctx sc;
	int rc;

	for (int i = 0; i < n; i++) {
		candidate_path(ce, c[i].name, paths[i], sizeof(paths[i]));
		cuco_compile_job_init(&jobs[i], c[i].name, paths[i], c[i].code);
	}
	if ((rc = cuco_compile_many(&ce->compile, jobs, n, err)) ||
	    (rc = cuco_compile_inflight_new(&own, err)))
		goto release;
	for (int i = 0; i < n; i++)
		cuco_compile_inflight_note(own, &jobs[i]);
	sc.ce = ce;
	sc.compile = ce->compile;
	sc.compile.inflight = own;
	rc = cuco_slots_run(&ce->slots, batch_in_slot, &sc, c, n, outs, err);
release:
	cuco_compile_inflight_free(own);
	for (int i = 0; i < n; i++)
		cuco_compile_job_release(&jobs[i]);
	free(jobs);
	free(paths);
	return rc;
}

void cuco_cascade_evaluator_set_slots(struct cuco_cascade_evaluator *ce, const struct cuco_slots *s)
{
	ce->slots = *s;
	if (ce->slots.n < 1)
		ce->slots.n = 1;
}

static int one(void *ctx, const struct cuco_candidate *c, struct cuco_eval_outcome *out,
               struct cuco_err *err)
{
	return batch(ctx, c, 1, out, err);
}

void cuco_cascade_evaluator_bind(struct cuco_cascade_evaluator *ce, struct cuco_evaluator *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->evaluate = one;
	ev->evaluate_batch = ce->slots.n > 1 ? batch_slots : batch;
	ev->prefetch = prefetch;
	ev->prefetch_cancel = prefetch_cancel;
	/* each harness run holds the baseline beside at most MAX - 1 candidates */
	ev->max_batch = ce->slots.n * (CUCO_CASCADE_MAX_PROGRAMS - 1);
	ev->ctx = ce;
}
