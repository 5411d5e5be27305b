/*
 * evaluator.c - the real evaluator of the evolution loop: a batch of
 * candidates through the cascade (parallel compile, one harness run beside
 * the baseline) without storing anything; the loop stores the outcomes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "search/evolve.h"
#include "search/slots.h"
#include "util/strbuf.h"

/* Context of the cascade evaluator. */
struct cuco_cascade_evaluator {
	const struct cuco_manifest *m;
	const struct cuco_shape *shape;
	struct cuco_run_opts run;
	struct cuco_compile_opts compile;
	char *baseline_src; /* the host program's text */
	struct cuco_slots slots;
};

int cuco_cascade_evaluator_new(const struct cuco_manifest *m, const struct cuco_shape *shape,
                               const struct cuco_run_opts *run, struct cuco_cascade_evaluator **out,
                               struct cuco_err *err)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_cascade_evaluator *ce = calloc(1, sizeof(*ce));
	int rc;

	*out = NULL;
	if (!ce)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	ce->m = m;
	ce->shape = shape;
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
	*out = ce;
	return CUCO_OK;
}

void cuco_cascade_evaluator_free(struct cuco_cascade_evaluator *ce)
{
	if (!ce)
		return;
	free(ce->baseline_src);
	free(ce);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static int batch(void *ctx, const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs,
                 struct cuco_err *err)
{
	struct cuco_cascade_evaluator *ce = ctx;
	struct cuco_eval_request req;
	struct cuco_eval_program *progs = calloc((size_t)n + 1, sizeof(*progs));
	char(*paths)[4200] = calloc((size_t)n + 1, sizeof(*paths));
	const struct cuco_shape *shapes[1] = {ce->shape};
	struct cuco_eval_shape sh;
	const struct cuco_manifest_program *b = NULL;
	const struct cuco_program_result *base;
	double base_us = NAN;
	int rc;

	memset(&sh, 0, sizeof(sh));
	if (!progs || !paths) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	cuco_eval_program_init(&progs[0], "baseline", "baseline", ce->m->host_program,
	                       ce->baseline_src, 1);
	for (int i = 0; i < ce->m->nprograms; i++)
		if (!strcmp(ce->m->programs[i].name, "baseline"))
			b = &ce->m->programs[i];
	for (int l = 0; b && l < b->nlibs && l < 3; l++)
		progs[0].libs[l] = b->libs[l];
	for (int i = 0; i < n; i++) {
		/* Candidates compile beside the workload's files, for its includes. */
		snprintf(paths[i], sizeof(paths[i]), "%s/%s.cu", ce->m->dir, c[i].name);
		cuco_eval_program_init(&progs[i + 1], c[i].name, "candidate", paths[i], c[i].code,
		                       1);
	}
	memset(&req, 0, sizeof(req));
	req.m = ce->m;
	req.shapes = shapes;
	req.nshapes = 1;
	req.progs = progs;
	req.nprogs = n + 1;
	req.compile = ce->compile;
	req.run = ce->run;
	rc = cuco_evaluate(&req, &sh, err);
	if (rc)
		goto release; /* no GPU or a broken cascade: the run cannot go on */
	base = cuco_eval_find(&sh, "baseline");
	if (base && base->code == CUCO_OK)
		base_us = base->median_us;
	for (int i = 0; i < n; i++) {
		struct cuco_eval_program *p = &progs[i + 1];
		struct cuco_eval_outcome *o = &outs[i];
		const struct cuco_program_result *r;

		o->baseline_us = base_us;
		snprintf(o->gpu, sizeof(o->gpu), "%s", sh.run.gpu);
		snprintf(o->stage, sizeof(o->stage), "compile");
		if (p->precheck_code) {
			o->code = p->precheck_code;
			snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
			o->error = strdup(p->precheck_error);
			continue;
		}
		if (p->job.code != CUCO_OK) {
			o->code = p->job.code == -1 ? CUCO_ERR_COMPILE : p->job.code;
			snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
			o->error = strdup("nvcc failed (see the compile log)");
			o->log = dup_or_null(p->job.log.buf);
			continue;
		}
		r = cuco_eval_find(&sh, p->name);
		if (!r) {
			o->code = sh.code ? sh.code : CUCO_ERR_RUN;
			snprintf(o->status, sizeof(o->status), "%s", cuco_result_token(o->code));
			snprintf(o->stage, sizeof(o->stage), "run");
			o->error = strdup(sh.error[0] ? sh.error : "no result from the harness");
			o->log = dup_or_null(sh.run.log.buf);
			continue;
		}
		o->code = r->code;
		snprintf(o->status, sizeof(o->status), "%s", r->status);
		snprintf(o->stage, sizeof(o->stage), "%s", r->stage);
		o->median_us = r->median_us;
		o->rel_err = r->rel_err;
		o->error = r->error ? strdup(r->error) : NULL;
		if (r->code != CUCO_OK)
			o->log = dup_or_null(sh.run.log.buf);
		else if (isfinite(base_us) && r->median_us > 0)
			o->fitness = base_us / r->median_us;
		else /* correct but not comparable: keep it, rank it last */
			o->fitness = 1e-6;
	}
release:
	cuco_eval_shape_release(&sh);
	for (int i = 0; i <= n; i++)
		cuco_eval_program_release(&progs[i]);
out:
	free(progs);
	free(paths);
	return rc;
}

static int batch_slots(void *ctx, const struct cuco_candidate *c, int n,
                       struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	struct cuco_cascade_evaluator *ce = ctx;
	return cuco_slots_run(&ce->slots, batch, ce, c, n, outs, err);
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
	/* each harness run holds the baseline beside at most MAX - 1 candidates */
	ev->max_batch = ce->slots.n * (CUCO_CASCADE_MAX_PROGRAMS - 1);
	ev->ctx = ce;
}
