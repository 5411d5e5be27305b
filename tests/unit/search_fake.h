/*
 * search_fake.h - a fake evaluator for the search tests: fitness is a fixed
 * function of the directive, some directives "fail to compile", some "time
 * out", some give "wrong" results. No GPU, no nvcc. With prefetch on it also
 * has the prefetch hooks (so the loop pipelines) and records the order of
 * prefetches, evaluations and cancels. With shapes set it judges each
 * candidate at every shape (at_shape) and combines the verdicts as the cascade
 * evaluator does (cuco_eval_outcome_combine). Header-only (static).
 */
#ifndef CUCO_TEST_SEARCH_FAKE_H
#define CUCO_TEST_SEARCH_FAKE_H

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/evolve.h"
#include "search/operator.h"

/* One call the fake saw, in order. */
struct fake_event {
	char kind;          /* 'P' prefetched, 'E' evaluated, 'C' prefetch_cancel */
	int64_t program_id; /* the candidate's (0 for 'C') */
};

struct fake_eval {
	int calls;         /* candidates judged by this process */
	int kill_at;       /* raise SIGKILL on this call (1-based); 0: never */
	int sleep_us;      /* pretend each candidate takes this long */
	int log_fd;        /* append "program_id\n" per candidate judged; -1: none */
	double base_us;    /* the baseline's latency */
	double mean_extra; /* a correct outcome's mean = its median + this (p90: + twice it) */
	int prefetch;      /* 1: offer prefetch and prefetch_cancel */
	int prefetch_calls, cancel_calls;
	struct fake_event *events; /* with prefetch: every call in order (fake_release frees) */
	int nevents, aevents;
	/* several shapes (nshapes > 0): shape k's verdict from at_shape (fake_judge when NULL),
	   its baseline base_us * (k + 1); the outcomes combined over the shapes */
	int nshapes;
	const char *shapes[CUCO_EVOLVE_MAX_SHAPES];
	int (*at_shape)(const struct cuco_directive *d, int k, double *fitness, const char **stage,
	                const char **status, const char **error);
};

static void fake_init(struct fake_eval *f)
{
	memset(f, 0, sizeof(*f));
	f->log_fd = -1;
	f->base_us = 1000.0;
}

/* Free what fake_init set up (inline: not every test file uses it). */
static inline void fake_release(struct fake_eval *f)
{
	free(f->events);
	f->events = NULL;
	f->nevents = f->aevents = 0;
}

static void fake_event(struct fake_eval *f, char kind, int64_t id)
{
	if (!f->prefetch)
		return;
	if (f->nevents == f->aevents) {
		int na = f->aevents ? 2 * f->aevents : 256;
		struct fake_event *ne = realloc(f->events, (size_t)na * sizeof(*ne));
		if (!ne)
			abort();
		f->events = ne;
		f->aevents = na;
	}
	f->events[f->nevents].kind = kind;
	f->events[f->nevents++].program_id = id;
}

/* The fake's verdict for one directive: CUCO_OK with a fitness, or a failure. */
static int fake_judge(const struct cuco_directive *d, double *fitness, const char **stage,
                      const char **status, const char **error)
{
	static const char *const placements[] = {"sequential", "stream_overlap", "fused_producer",
	                                         "specialized"};
	static const double speed[] = {1.0, 1.25, 1.35, 1.45};
	long long ctas = cuco_directive_knob(d, "comm_ctas", 32);
	long long chunks = cuco_directive_knob(d, "chunks", 4);
	double f = 0;

	*stage = "bench";
	*status = "ok";
	*error = NULL;
	if (!strcmp(d->dims[CUCO_DIM_PLACEMENT], "fused_consumer")) {
		*stage = "compile";
		*status = "compile";
		*error = "mini.cu:60: error: fused_consumer is not realized (line 60)";
		return CUCO_ERR_COMPILE;
	}
	if (chunks > 32) {
		*stage = "run";
		*status = "timeout";
		*error = "rank 1 hung for 60 s";
		return CUCO_ERR_TIMEOUT;
	}
	if (!strcmp(d->dims[CUCO_DIM_ISSUER], "thread") &&
	    !strcmp(d->dims[CUCO_DIM_SYNC_SCOPE], "thread")) {
		*stage = "verify";
		*status = "wrong";
		*error = "rel_err 3.1e-01 over tolerance 1.0e-02";
		return CUCO_ERR_VERIFY;
	}
	for (int i = 0; i < 4; i++)
		if (!strcmp(d->dims[CUCO_DIM_PLACEMENT], placements[i]))
			f = speed[i];
	if (!strcmp(d->dims[CUCO_DIM_BACKEND], "ce"))
		f *= 1.05;
	if (!strcmp(d->dims[CUCO_DIM_GRANULARITY], "tile"))
		f *= 1.03;
	f *= 1.0 - 0.03 * fabs(log2((double)(ctas > 0 ? ctas : 1) / 64.0));
	f *= 1.0 + 0.02 * log2((double)(chunks > 0 ? chunks : 1));
	*fitness = f;
	return CUCO_OK;
}

/* The fake over f's shapes: each shape's verdict, combined into out. */
static int fake_judge_shapes(const struct fake_eval *f, const struct cuco_directive *d,
                             struct cuco_eval_outcome *out)
{
	struct cuco_eval_outcome per[CUCO_EVOLVE_MAX_SHAPES];
	int rc;

	for (int k = 0; k < f->nshapes; k++) {
		const char *stage, *status, *error;
		double fitness = 0;
		int code = f->at_shape ? f->at_shape(d, k, &fitness, &stage, &status, &error)
		                       : fake_judge(d, &fitness, &stage, &status, &error);
		cuco_eval_outcome_init(&per[k]);
		per[k].code = code;
		snprintf(per[k].stage, sizeof(per[k].stage), "%s", stage);
		snprintf(per[k].status, sizeof(per[k].status), "%s", status);
		per[k].error = error ? strdup(error) : NULL;
		per[k].baseline_us = f->base_us * (k + 1);
		snprintf(per[k].gpu, sizeof(per[k].gpu), "Fake GPU");
		per[k].fitness = code == CUCO_OK ? fitness : 0;
		per[k].median_us = code == CUCO_OK ? per[k].baseline_us / fitness : NAN;
		per[k].mean_us = per[k].median_us + f->mean_extra;
		per[k].p90_us = per[k].median_us + 2 * f->mean_extra;
	}
	rc = cuco_eval_outcome_combine(f->shapes, per, f->nshapes, out);
	for (int k = 0; k < f->nshapes; k++)
		cuco_eval_outcome_release(&per[k]);
	return rc;
}

static int fake_evaluate(void *ctx, const struct cuco_candidate *c, struct cuco_eval_outcome *out,
                         struct cuco_err *err)
{
	struct fake_eval *f = ctx;
	struct cuco_directive d;
	const char *stage, *status, *error;
	double fitness = 0;
	int code;

	f->calls++;
	if (f->kill_at && f->calls == f->kill_at)
		raise(SIGKILL);
	fake_event(f, 'E', c->program_id);
	if (f->sleep_us) {
		struct timespec ts = {0, (long)f->sleep_us * 1000};
		nanosleep(&ts, NULL);
	}
	if (f->log_fd >= 0) {
		char line[32];
		int n = snprintf(line, sizeof(line), "%lld\n", (long long)c->program_id);
		if (write(f->log_fd, line, (size_t)n) != n)
			return cuco_err_set(err, CUCO_ERR_IO, "fake log");
	}
	if (!c->directive_json || cuco_directive_from_json(c->directive_json, &d, err))
		return cuco_err_set(err, CUCO_ERR_PARSE, "fake: no directive");
	if (f->nshapes > 0) {
		code = fake_judge_shapes(f, &d, out);
		cuco_directive_release(&d);
		return code;
	}
	code = fake_judge(&d, &fitness, &stage, &status, &error);
	cuco_directive_release(&d);
	out->code = code;
	snprintf(out->stage, sizeof(out->stage), "%s", stage);
	snprintf(out->status, sizeof(out->status), "%s", status);
	out->error = error ? strdup(error) : NULL;
	out->baseline_us = f->base_us;
	snprintf(out->gpu, sizeof(out->gpu), "Fake GPU");
	out->fitness = code == CUCO_OK ? fitness : 0;
	out->median_us = code == CUCO_OK ? f->base_us / fitness : NAN;
	out->mean_us = out->median_us + f->mean_extra;
	out->p90_us = out->median_us + 2 * f->mean_extra;
	return CUCO_OK;
}

static int fake_evaluate_batch(void *ctx, const struct cuco_candidate *c, int n,
                               struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	for (int i = 0; i < n; i++) {
		int rc = fake_evaluate(ctx, &c[i], &outs[i], err);
		if (rc)
			return rc;
	}
	return CUCO_OK;
}

/* Prefetch: nothing to prepare, the order is what matters. */
static int fake_prefetch(void *ctx, const struct cuco_candidate *c, int n, struct cuco_err *err)
{
	struct fake_eval *f = ctx;

	(void)err;
	f->prefetch_calls++;
	for (int i = 0; i < n; i++)
		fake_event(f, 'P', c[i].program_id);
	return CUCO_OK;
}

static void fake_prefetch_cancel(void *ctx)
{
	struct fake_eval *f = ctx;

	f->cancel_calls++;
	fake_event(f, 'C', 0);
}

/*
 * An evaluator around f: batches of max_batch (0: one at a time through
 * evaluate); the prefetch hooks when f->prefetch is set.
 */
static struct cuco_evaluator fake_evaluator(struct fake_eval *f, int max_batch)
{
	struct cuco_evaluator ev;

	memset(&ev, 0, sizeof(ev));
	ev.evaluate = fake_evaluate;
	ev.evaluate_batch = max_batch > 0 ? fake_evaluate_batch : NULL;
	if (f->prefetch) {
		ev.prefetch = fake_prefetch;
		ev.prefetch_cancel = fake_prefetch_cancel;
	}
	ev.max_batch = max_batch;
	ev.ctx = f;
	return ev;
}

#endif
