/*
 * evaluate.c - the whole cascade as one library call: directive check ->
 * compile -> run and verify on the GPUs -> benchmark -> store. Every outcome
 * becomes an evaluation row; nothing here exits the process.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "cascade/runner.h"
#include "program/directive.h"
#include "store/store.h"
#include "util/paths.h"
#include "util/xalloc.h"

void cuco_eval_program_init(struct cuco_eval_program *p, const char *name, const char *origin,
                            const char *path, const char *source, int verify)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->origin = origin;
	p->path = path;
	p->source = source;
	p->verify = verify;
	cuco_compile_job_init(&p->job, name, path, source);
	/* the workload's own files; a candidate is code a model wrote */
	p->job.trusted = !origin || strcmp(origin, "candidate") != 0;
}

void cuco_eval_program_release(struct cuco_eval_program *p)
{
	free(p->directive_json);
	p->directive_json = NULL;
	cuco_compile_job_release(&p->job);
}

void cuco_eval_shape_release(struct cuco_eval_shape *s)
{
	cuco_run_result_release(&s->run);
}

const struct cuco_program_result *cuco_eval_find(const struct cuco_eval_shape *s, const char *name)
{
	for (int i = 0; i < s->run.nresults; i++)
		if (!strcmp(s->run.results[i].name, name))
			return &s->run.results[i];
	return NULL;
}

static double fmin_finite(double a, double b)
{
	return isfinite(a) && (!isfinite(b) || a < b) ? a : b;
}

void cuco_reference_of(const struct cuco_eval_shape *s, const struct cuco_eval_program *progs,
                       int nprogs, struct cuco_reference *ref)
{
	double comp = NAN, comm = NAN;

	ref->peer = NULL;
	ref->peer_us = ref->bound_us = NAN;
	for (int i = 0; i < nprogs; i++) {
		const struct cuco_program_result *r = cuco_eval_find(s, progs[i].name);
		if (!r || r->code != CUCO_OK || !isfinite(r->median_us) || !progs[i].origin)
			continue;
		if (!strcmp(progs[i].origin, "peer") &&
		    (!ref->peer || r->median_us < ref->peer_us)) {
			ref->peer = progs[i].name;
			ref->peer_us = r->median_us;
		} else if (!strcmp(progs[i].origin, "compute")) {
			comp = fmin_finite(r->median_us, comp);
		} else if (!strcmp(progs[i].origin, "comm")) {
			comm = fmin_finite(r->median_us, comm);
		}
	}
	ref->bound_us = cuco_ideal_bound(comp, comm);
}

double cuco_ideal_bound(double compute_us, double comm_us)
{
	return isfinite(compute_us) && isfinite(comm_us) ? fmax(compute_us, comm_us) : NAN;
}

double cuco_hidden_fraction(double peer_us, double bound_us, double us)
{
	if (!isfinite(peer_us) || !isfinite(bound_us) || !isfinite(us) || !(peer_us > bound_us))
		return NAN;
	return (peer_us - us) / (peer_us - bound_us);
}

void cuco_eval_rec_timings(struct cuco_eval_rec *ev, const struct cuco_program_result *r,
                           const struct cuco_run_opts *o, double base_us, int fit)
{
	double lat = cuco_result_latency(r, o);

	ev->median_us = r->median_us;
	ev->p10_us = r->p10_us;
	ev->p90_us = r->p90_us;
	ev->min_us = r->min_us;
	ev->mean_us = r->mean_us;
	ev->samples_json = r->samples_json;
	ev->rel_err = r->rel_err;
	if (fit && isfinite(base_us) && lat > 0)
		ev->fitness = base_us / lat;
}

/* The design space of one batch, loaded when the first program needs it. */
struct batch_ds {
	int tried;
	struct cuco_err err; /* the load's error; code CUCO_OK once loaded */
	struct cuco_design_space ds;
};

static const struct cuco_design_space *batch_ds_get(struct batch_ds *b, const char *home)
{
	char path[PATH_MAX];

	if (!b->tried) {
		b->tried = 1;
		cuco_err_clear(&b->err);
		snprintf(path, sizeof(path), "%s/share/design_space.json", home);
		cuco_design_space_load(path, &b->ds, &b->err);
	}
	return b->err.code == CUCO_OK ? &b->ds : NULL;
}

static void batch_ds_release(struct batch_ds *b)
{
	if (b->tried && b->err.code == CUCO_OK)
		cuco_design_space_release(&b->ds);
	memset(b, 0, sizeof(*b));
}

/* Device-side programs (seed, candidate) must carry a valid directive. */
static void precheck(struct cuco_eval_program *p, const char *home,
                     const struct cuco_hw_facts *facts, struct batch_ds *bds)
{
	struct cuco_directive d;
	const struct cuco_design_space *ds;
	struct cuco_err e;
	int needs = !strcmp(p->origin, "seed") || !strcmp(p->origin, "candidate");

	cuco_err_clear(&e);
	if (cuco_directive_find_line(p->source) == 0 && !needs)
		return;
	if (cuco_directive_parse(p->path, p->source, &d, &e)) {
		p->precheck_code = e.code;
		snprintf(p->precheck_error, sizeof(p->precheck_error), "%s", e.msg);
		return;
	}
	ds = batch_ds_get(bds, home);
	if (!ds) {
		p->precheck_code = bds->err.code;
		snprintf(p->precheck_error, sizeof(p->precheck_error), "%s", bds->err.msg);
		cuco_directive_release(&d);
		return;
	}
	if (cuco_directive_validate(&d, ds, facts, &e)) {
		p->precheck_code = e.code;
		snprintf(p->precheck_error, sizeof(p->precheck_error), "%s", e.msg);
	}
	p->directive_json = cuco_directive_to_json(&d);
	cuco_directive_release(&d);
}

static void store_program(struct cuco_eval_request *req, struct cuco_eval_program *p)
{
	struct cuco_program_rec rec;
	struct cuco_err e;
	int64_t id = 0;

	if (!req->store)
		return;
	cuco_program_rec_init(&rec);
	rec.run_id = req->run_id;
	rec.workload = req->m->name;
	rec.name = p->name;
	rec.origin = p->origin;
	rec.code = p->source;
	rec.directive = p->directive_json;
	if (cuco_store_program_add(req->store, &rec, &id, &e) == CUCO_OK)
		p->program_id = id;
	else
		fprintf(stderr, "cuco: warning: program %s not stored: %s\n", p->name, e.msg);
}

static void store_eval(struct cuco_eval_request *req, struct cuco_eval_program *p,
                       const struct cuco_shape *shape, const char *stage, const char *status,
                       int code, const char *error, const struct cuco_program_result *r,
                       const struct cuco_run_result *run, double baseline_us)
{
	struct cuco_eval_rec ev;
	struct cuco_err e;
	int64_t id;

	if (!req->store || !p->program_id)
		return;
	cuco_eval_rec_init(&ev);
	ev.program_id = p->program_id;
	ev.run_id = req->run_id;
	ev.shape = shape ? shape->name : NULL;
	ev.ranks = req->run.ranks;
	ev.stage_reached = stage;
	ev.status = status;
	ev.error_code = code;
	ev.error = error;
	ev.compile_log = p->job.log.len ? p->job.log.buf : NULL;
	if (run) {
		ev.run_log = run->log.len ? run->log.buf : NULL;
		ev.result_json = run->raw_json;
		ev.gpu = run->gpu[0] ? run->gpu : NULL;
	}
	if (r)
		cuco_eval_rec_timings(&ev, r, &req->run, baseline_us,
		                      r->code == CUCO_OK && p->verify);
	if (cuco_store_eval_add(req->store, &ev, &id, &e))
		fprintf(stderr, "cuco: warning: evaluation of %s not stored: %s\n", p->name, e.msg);
}

/*
 * The manifest's reference program, when it names one: its source into src, and the program
 * of req->progs built from the same source and libraries (a workload's own file, not
 * rejected before compiling) into *same, -1 when none is; then it is compiled once. NULL when
 * the manifest names none (or with err when its file cannot be read).
 */
static const struct cuco_manifest_program *reference_of(const struct cuco_eval_request *req,
                                                        struct cuco_strbuf *src, int *same, int *rc,
                                                        struct cuco_err *err)
{
	const struct cuco_manifest_program *mp;

	*same = -1;
	*rc = CUCO_OK;
	if (!req->m->reference_program)
		return NULL;
	mp = cuco_manifest_program(req->m, req->m->reference_program);
	if (!mp) {
		*rc = cuco_err_set(err, CUCO_ERR_INVALID, "%s: reference: no program %s",
		                   req->m->path, req->m->reference_program);
		return NULL;
	}
	if (cuco_strbuf_read_file(src, mp->file)) {
		*rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the reference program %s",
		                   mp->file, mp->name);
		return NULL;
	}
	for (int i = 0; i < req->nprogs && *same < 0; i++) {
		const struct cuco_eval_program *p = &req->progs[i];
		int libs = 1, k;

		for (k = 0; k < 4 && libs; k++) {
			const char *a = k < mp->nlibs ? mp->libs[k] : NULL, *b = p->libs[k];
			libs = (!a && !b) || (a && b && !strcmp(a, b));
		}
		if (libs && p->job.trusted && !p->precheck_code && !strcmp(p->source, src->buf))
			*same = i;
	}
	return mp;
}

int cuco_evaluate(struct cuco_eval_request *req, struct cuco_eval_shape *out, struct cuco_err *err)
{
	struct cuco_compile_job *jobs = NULL, wl_job, ref_job;
	struct cuco_strbuf wl_src = CUCO_STRBUF_INIT, ref_src = CUCO_STRBUF_INIT;
	struct cuco_run_program *runp = NULL;
	struct cuco_run_opts run = req->run;
	const struct cuco_manifest_program *ref;
	struct batch_ds bds = {0};
	int *idx = NULL, nrun = 0, rc = CUCO_OK, ngpu, ref_same = -1, nref = 0;

	for (int s = 0; s < req->nshapes; s++) {
		memset(&out[s], 0, sizeof(out[s]));
		out[s].shape = req->shapes[s];
		cuco_run_result_init(&out[s].run);
	}
	/* Directives first: a rejected directive never reaches nvcc. */
	for (int i = 0; i < req->nprogs; i++) {
		precheck(&req->progs[i], req->compile.home, req->facts, &bds);
		store_program(req, &req->progs[i]);
	}
	batch_ds_release(&bds);

	/* Compile the programs and the workload's generator/reference together. */
	if (cuco_strbuf_read_file(&wl_src, req->m->workload)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the workload's generator",
		                  req->m->workload);
		goto out;
	}
	ref = reference_of(req, &ref_src, &ref_same, &rc, err);
	if (rc)
		goto out;
	nref = ref && ref_same < 0; /* its own compile job, after the programs' */
	jobs = cuco_xcalloc((size_t)req->nprogs + 2, sizeof(*jobs));
	idx = cuco_xcalloc((size_t)req->nprogs + 1, sizeof(*idx));
	runp = cuco_xcalloc((size_t)req->nprogs + 1, sizeof(*runp));
	cuco_compile_job_init(&wl_job, "workload", req->m->workload, wl_src.buf);
	wl_job.trusted = 1;
	jobs[0] = wl_job;
	if (nref) {
		cuco_compile_job_init(&ref_job, "reference", ref->file, ref_src.buf);
		ref_job.trusted = 1;
		for (int l = 0; l < ref->nlibs && l < 3; l++)
			ref_job.libs[l] = ref->libs[l];
		jobs[req->nprogs + 1] = ref_job;
	}
	for (int i = 0; i < req->nprogs; i++) {
		struct cuco_eval_program *p = &req->progs[i];
		memcpy(p->job.libs, p->libs, sizeof(p->libs));
		jobs[i + 1] = p->job;
		if (p->precheck_code)
			jobs[i + 1].code = p->precheck_code;
	}
	{
		/* Only jobs not already rejected go to nvcc. */
		struct cuco_compile_job *todo =
		    cuco_xcalloc((size_t)req->nprogs + 2, sizeof(*todo));
		int *map = cuco_xcalloc((size_t)req->nprogs + 2, sizeof(*map)), nt = 0;
		for (int i = 0; i <= req->nprogs + nref; i++)
			if (i == 0 || i > req->nprogs || !req->progs[i - 1].precheck_code) {
				todo[nt] = jobs[i];
				map[nt++] = i;
			}
		rc = cuco_compile_many(&req->compile, todo, nt, err);
		for (int k = 0; k < nt; k++)
			jobs[map[k]] = todo[k];
		free(todo);
		free(map);
		if (rc)
			goto out;
	}
	wl_job = jobs[0];
	for (int i = 0; i < req->nprogs; i++)
		req->progs[i].job = jobs[i + 1];
	if (nref)
		ref_job = jobs[req->nprogs + 1];
	if (wl_job.code != CUCO_OK) {
		rc = cuco_err_set(err, CUCO_ERR_COMPILE,
		                  "the workload's generator %s does not compile:\n%s",
		                  req->m->workload, wl_job.log.buf);
		goto out;
	}
	if (ref) {
		/* the expected outputs come from it: nothing verifies without it */
		const struct cuco_compile_job *j = nref ? &ref_job : &req->progs[ref_same].job;
		if (j->code != CUCO_OK) {
			rc = cuco_err_set(err, CUCO_ERR_COMPILE,
			                  "the reference program %s (%s) does not compile:\n%s",
			                  ref->name, ref->file, j->log.buf);
			goto out;
		}
		run.reference_so = j->so_path;
	}
	for (int i = 0; i < req->nprogs; i++) {
		struct cuco_eval_program *p = &req->progs[i];
		if (p->precheck_code) {
			for (int s = 0; s < req->nshapes; s++)
				store_eval(req, p, req->shapes[s], "compile",
				           cuco_result_token(p->precheck_code), p->precheck_code,
				           p->precheck_error, NULL, NULL, NAN);
			continue;
		}
		if (p->job.code != CUCO_OK) {
			for (int s = 0; s < req->nshapes; s++)
				store_eval(req, p, req->shapes[s], "compile", "compile",
				           p->job.code, "nvcc failed (see compile_log)", NULL, NULL,
				           NAN);
			continue;
		}
		idx[nrun] = i;
		runp[nrun].name = p->name;
		runp[nrun].so_path = p->job.so_path;
		runp[nrun].verify = p->verify;
		nrun++;
	}
	if (req->compile_only || nrun == 0) {
		for (int k = 0; k < nrun; k++)
			for (int s = 0; s < req->nshapes; s++)
				store_eval(req, &req->progs[idx[k]], req->shapes[s], "compile",
				           "ok", CUCO_OK, NULL, NULL, NULL, NAN);
		goto out;
	}

	/* a runner of fixed ranks (a farm's) has its nodes' GPUs, checked when it was set up */
	ngpu = run.runner && run.runner->ranks ? run.runner->ranks : cuco_gpu_count(err);
	if (ngpu < run.ranks && !(run.launcher && *run.launcher)) {
		rc = cuco_err_set(err, CUCO_ERR_NO_GPU,
		                  "execution needs %d CUDA GPUs on this node; %s", req->run.ranks,
		                  ngpu <= 0 ? "this machine has none" : "there are fewer");
		for (int s = 0; s < req->nshapes; s++) {
			out[s].code = CUCO_ERR_NO_GPU;
			snprintf(out[s].error, sizeof(out[s].error), "%s", err->msg);
			/* Compiled, not run: the row says how far it got and why it stopped. */
			for (int k = 0; k < nrun; k++)
				store_eval(req, &req->progs[idx[k]], req->shapes[s], "compile",
				           "no_gpu", CUCO_ERR_NO_GPU, err->msg, NULL, NULL, NAN);
		}
		goto out;
	}

	for (int s = 0; s < req->nshapes; s++) {
		struct cuco_eval_shape *sh = &out[s];
		const struct cuco_program_result *base;
		double base_us = NAN;
		struct cuco_err e;

		cuco_err_clear(&e);
		if (req->compile.cancel && atomic_load(req->compile.cancel))
			break; /* stopped (a signal): the shapes left do not run */
		if (req->on_shape)
			req->on_shape(req->on_shape_arg, sh, 0);
		sh->code = cuco_run_programs(&run, req->m, wl_job.so_path, sh->shape, runp, nrun,
		                             &sh->run, &e);
		if (sh->code)
			snprintf(sh->error, sizeof(sh->error), "%s", e.msg);
		if (req->on_shape)
			req->on_shape(req->on_shape_arg, sh, 1);
		base = cuco_eval_find(sh, "baseline");
		if (base && base->code == CUCO_OK)
			base_us = cuco_result_latency(base, &req->run);
		for (int k = 0; k < nrun; k++) {
			struct cuco_eval_program *p = &req->progs[idx[k]];
			const struct cuco_program_result *r = cuco_eval_find(sh, p->name);
			if (r)
				store_eval(req, p, sh->shape, r->stage, r->status, r->code,
				           r->error, r, &sh->run, base_us);
			else
				store_eval(req, p, sh->shape, "run", cuco_result_token(sh->code),
				           sh->code ? sh->code : CUCO_ERR_RUN,
				           sh->error[0] ? sh->error : "no result", NULL, &sh->run,
				           NAN);
		}
	}
out:
	if (jobs)
		cuco_compile_job_release(&jobs[0]);
	if (jobs && nref)
		cuco_compile_job_release(&jobs[req->nprogs + 1]);
	cuco_strbuf_release(&wl_src);
	cuco_strbuf_release(&ref_src);
	free(jobs);
	free(idx);
	free(runp);
	return rc;
}
