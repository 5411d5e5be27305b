/*
 * evolve.c - the evolution loop: breed, store, evaluate, select; resume from
 * the store (see evolve.h for the generation protocol). Breeding is in
 * evolve_breed.c, the rebuild of a resumed run in evolve_resume.c, outcomes
 * and the config in evolve_config.c; the engine state they share is
 * evolve_engine.c's.
 */
#include "search/evolve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/evolve_engine.h"
#include "search/rng.h"
#include "util/array.h"
#include "util/proc.h"

/* Tell the child operator which of its children (in L) were stored as which programs. */
static int op_stored(struct engine *e, const struct pendlist *L, struct cuco_err *err)
{
	const struct cuco_child_operator *op = e->o->child_op;
	const char **names;
	int64_t *ids;
	int n = 0, rc;

	if (!op || !op->stored)
		return CUCO_OK;
	names = cuco_xcalloc((size_t)L->n, sizeof(*names));
	ids = cuco_xcalloc((size_t)L->n, sizeof(*ids));
	for (int i = 0; i < L->n; i++)
		if (L->a[i].island != CUCO_STORE_NO_INT) {
			names[n] = L->a[i].name;
			ids[n++] = L->a[i].program_id;
		}
	rc = op->stored(op->ctx, names, ids, n, err);
	free(names);
	free(ids);
	return rc;
}

/* Store generation g's candidates L (one transaction). */
static int store_pending(struct engine *e, struct pendlist *L, int g, struct cuco_err *err)
{
	int rc;

	if (!L->n)
		return CUCO_OK;
	if ((rc = cuco_store_begin(e->o->store, err)))
		return rc;
	for (int i = 0; i < L->n; i++) {
		struct pending *p = &L->a[i];
		struct cuco_program_rec rec;

		cuco_program_rec_init(&rec);
		rec.run_id = e->run_id;
		rec.workload = e->o->workload;
		rec.name = p->name;
		rec.origin = "candidate";
		rec.code = p->code;
		rec.directive = p->json;
		rec.island = p->island;
		rec.generation = g;
		rec.operator_ = p->op;
		rec.flags = p->flags;
		rec.parents = p->edges;
		rec.nparents = (size_t)p->nedges;
		if ((rc = cuco_store_program_add(e->o->store, &rec, &p->program_id, err))) {
			cuco_store_rollback(e->o->store, NULL);
			return rc;
		}
	}
	if ((rc = op_stored(e, L, err))) {
		cuco_store_rollback(e->o->store, NULL);
		return rc;
	}
	return cuco_store_commit(e->o->store, err);
}

static int store_outcome(struct engine *e, const struct pending *p,
                         const struct cuco_eval_outcome *out, struct cuco_err *err)
{
	struct cuco_eval_rec ev;
	int64_t id;

	cuco_eval_rec_init(&ev);
	ev.program_id = p->program_id;
	ev.run_id = e->run_id;
	ev.shape = e->o->shape;
	if (e->o->ranks > 0)
		ev.ranks = e->o->ranks;
	ev.stage_reached = out->stage;
	ev.status = out->status;
	ev.error_code = out->code;
	ev.error = out->error;
	if (out->log)
		ev.compile_log = !strcmp(out->stage, "compile") ? out->log : NULL;
	if (out->log && strcmp(out->stage, "compile"))
		ev.run_log = out->log;
	ev.median_us = out->median_us;
	ev.mean_us = out->mean_us;
	ev.p90_us = out->p90_us;
	ev.rel_err = out->rel_err;
	ev.gpu = out->gpu[0] ? out->gpu : NULL;
	ev.fitness = out->code == CUCO_OK ? out->fitness : 0;
	ev.result_json = out->result_json; /* per-shape details of a run over several shapes */
	return cuco_store_eval_add(e->o->store, &ev, &id, err);
}

static void report(struct engine *e)
{
	if (e->o->progress)
		e->o->progress(e->o->progress_arg, &e->prog);
}

/* Time or evaluation budget spent, or a stop requested: why, else NULL. */
static const char *should_stop(const struct engine *e)
{
	if (e->o->stop && *e->o->stop)
		return "interrupted";
	if (e->cfg.budget_evals > 0 && e->prog.evaluated >= e->cfg.budget_evals)
		return "budget-evals";
	if (e->cfg.budget_minutes > 0 && cuco_now() - e->t0 >= e->cfg.budget_minutes * 60)
		return "budget-minutes";
	return NULL;
}

/*
 * Evaluate the current generation's candidates that have no outcome, a batch at a time;
 * each batch's outcomes (and the summary, after the generation's last batch
 * when one is due) land in one transaction. Stops early, leaving the rest
 * unevaluated, when should_stop() says so.
 */
static int evaluate_pending(struct engine *e, int g, struct cuco_err *err)
{
	const struct cuco_evaluator *ev = &e->o->evaluator;
	int batch = ev->evaluate_batch ? (ev->max_batch > 0 ? ev->max_batch : e->cur.n) : 1;
	struct cuco_candidate *c = cuco_xcalloc((size_t)batch + 1, sizeof(*c));
	struct cuco_eval_outcome *outs = cuco_xcalloc((size_t)batch + 1, sizeof(*outs));
	int *which = cuco_xcalloc((size_t)batch + 1, sizeof(*which)), rc = CUCO_OK;

	for (int next = 0;;) {
		int n = 0, left;
		while (next < e->cur.n && n < batch) {
			struct pending *p = &e->cur.a[next];
			if (!p->evaluated) {
				c[n].name = p->name;
				c[n].code = p->code;
				c[n].directive_json = p->json;
				c[n].program_id = p->program_id;
				cuco_eval_outcome_init(&outs[n]);
				which[n++] = next;
			}
			next++;
		}
		if (!n)
			break;
		if (ev->evaluate_batch)
			rc = ev->evaluate_batch(ev->ctx, c, n, outs, err);
		else
			rc = ev->evaluate(ev->ctx, c, outs, err);
		if (rc)
			goto release;
		if ((rc = cuco_store_begin(e->o->store, err)))
			goto release;
		for (int k = 0; k < n && !rc; k++)
			rc = store_outcome(e, &e->cur.a[which[k]], &outs[k], err);
		left = 0;
		for (int i = next; i < e->cur.n; i++)
			left += !e->cur.a[i].evaluated;
		if (!rc && !left && cuco_evolve_summary_due(e, g))
			rc = cuco_evolve_refresh_bias(e, g, 1, err);
		if (rc) {
			cuco_store_rollback(e->o->store, NULL);
			e->bias_generation = -1;
			goto release;
		}
		if ((rc = cuco_store_commit(e->o->store, err)))
			goto release;
		for (int k = 0; k < n; k++) {
			struct pending *p = &e->cur.a[which[k]];
			p->evaluated = 1;
			p->correct = outs[k].code == CUCO_OK;
			p->fitness = p->correct ? outs[k].fitness : 0;
			p->median_us = outs[k].median_us;
			p->mean_us = outs[k].mean_us;
			cuco_evolve_tally(e, &outs[k]);
			if (p->correct)
				cuco_evolve_note_best(
				    e, p->program_id, p->fitness,
				    cuco_evolve_latency_of(e, p->median_us, p->mean_us));
			if (!rc && e->o->child_op && e->o->child_op->evaluated)
				rc = e->o->child_op->evaluated(e->o->child_op->ctx, p->program_id,
				                               p->correct, p->fitness, err);
		}
		if (e->summary_text) { /* the LLM meta-summary, outside the transaction */
			if (!rc)
				rc = e->o->child_op->summarize(e->o->child_op->ctx, e->run_id, g,
				                               e->summary_text, err);
			free(e->summary_text);
			e->summary_text = NULL;
		}
	release:
		for (int k = 0; k < n; k++)
			cuco_eval_outcome_release(&outs[k]);
		if (rc)
			goto out;
		report(e);
		if (should_stop(e))
			break;
	}
out:
	free(c);
	free(outs);
	free(which);
	return rc;
}

static int all_evaluated(const struct pendlist *L)
{
	return cuco_evolve_unevaluated(L) == 0;
}

/* ---- the loop ---- */

/* Hand L (stored) to the evaluator's prefetch, when it has one. */
static int prefetch(struct engine *e, const struct pendlist *L, struct cuco_err *err)
{
	const struct cuco_evaluator *ev = &e->o->evaluator;
	struct cuco_candidate *c;
	int n = 0, rc;

	if (!ev->prefetch || !cuco_evolve_unevaluated(L))
		return CUCO_OK;
	c = cuco_xcalloc((size_t)L->n, sizeof(*c));
	for (int i = 0; i < L->n; i++)
		if (!L->a[i].evaluated) {
			c[n].name = L->a[i].name;
			c[n].code = L->a[i].code;
			c[n].directive_json = L->a[i].json;
			c[n++].program_id = L->a[i].program_id;
		}
	rc = ev->prefetch(ev->ctx, c, n, err);
	free(c);
	return rc;
}

/*
 * Pipelined, whether generation g+1 is bred now, before g is evaluated: from
 * generation 1 on (the islands are empty before generation 0 is judged),
 * within the generations, and only when the run goes on (no stop asked, the
 * budgets and the child operator not spent by what is already bred).
 */
static int lag_due(const struct engine *e, int g)
{
	if (!e->cfg.pipeline || g < 1 || g + 1 > e->cfg.generations || e->op_exhausted ||
	    should_stop(e))
		return 0;
	return !(e->cfg.budget_evals > 0 &&
	         e->prog.evaluated + cuco_evolve_unevaluated(&e->cur) >= e->cfg.budget_evals);
}

/* A run to resume: an evolve run, locked by this process, its stored config read. */
static int resume_open(struct engine *e, int64_t resume_run, struct cuco_err *err)
{
	int rc;
	struct cuco_run_rec run;
	struct cuco_evolve_config stored;

	cuco_run_rec_init(&run);
	if ((rc = cuco_store_run_get(e->o->store, resume_run, &run, err)))
		return rc;
	if (strcmp(run.kind, "evolve")) {
		rc =
		    cuco_err_set(err, CUCO_ERR_INVALID, "run %lld is a '%s' run, not an evolve run",
		                 (long long)resume_run, run.kind);
		cuco_run_rec_release(&run);
		return rc;
	}
	/* refused, the run is left as it was: the other process is running it */
	if ((rc = cuco_store_run_lock(e->o->store, resume_run, err))) {
		cuco_run_rec_release(&run);
		return rc;
	}
	cuco_evolve_config_default(&stored);
	rc = run.config ? cuco_evolve_config_from_json(run.config, &stored, err) : CUCO_OK;
	cuco_run_rec_release(&run);
	if (rc) {
		cuco_err_prefix(err, "run %lld: ", (long long)resume_run);
		return rc;
	}
	e->stored_generations = stored.generations;
	e->run_id = resume_run;
	return CUCO_OK;
}

int cuco_evolve_run(const struct cuco_evolve_opts *o, const struct cuco_evolve_config *cfg,
                    int64_t resume_run, int64_t *run_id, struct cuco_evolve_progress *final,
                    struct cuco_err *err)
{
	struct engine e;
	/* open: cur holds generation g, stored; lagged: it was bred ahead by the pipeline;
	 * have_next: next holds generation g+1, stored (prefetched once next_sent) */
	int rc = CUCO_OK, g = 0, open = 0, lagged = 0, have_next = 0, next_sent = 0, empty = 0;
	char *config = NULL, why_graph[160];
	const char *why = NULL;

	memset(&e, 0, sizeof(e));
	e.o = o;
	e.cfg = *cfg;
	e.bias_generation = -1;
	e.t0 = cuco_now();
	e.prog.best_us = e.prog.baseline_us = NAN;
	e.sched = cuco_evolve_schedule(cfg);
	/* Pipelining needs a prefetch to gain anything; a fresh run stores the order it uses. */
	if (!o->evaluator.prefetch)
		e.cfg.pipeline = 0;
	cuco_novelty_init(&e.nov, cfg->novelty_threshold);
	if (!o->evaluator.evaluate && !o->evaluator.evaluate_batch) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: no evaluator");
		goto out;
	}
	if (cuco_population_init(&e.pop, cfg->islands, cfg->population_size, cfg->archive_size)) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: islands must be 1..%d",
		                  CUCO_MAX_ISLANDS);
		goto out;
	}
	e.pop.sel.kind = cuco_selection_kind(cfg->selection[0] ? cfg->selection : "rank");
	e.pop.sel.n = cfg->selection_n;
	if (cuco_migration_parse(cfg->migration, cfg->islands, e.pop.links, why_graph,
	                         sizeof(why_graph))) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: migration: %s", why_graph);
		goto out;
	}
	if (e.pop.sel.kind < 0) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: selection %s is not known",
		                  cfg->selection);
		goto out;
	}
	if (resume_run) {
		if ((rc = resume_open(&e, resume_run, err)))
			goto out;
		if (run_id)
			*run_id = e.run_id;
		e.prog.run_id = e.run_id;
		g = 0;
		/* The rebuild only reads: a resume it refuses leaves the stored run as it was. */
		if ((rc = cuco_evolve_rebuild(&e, &g, &open, &have_next, err)))
			goto out;
		if ((rc = cuco_store_run_finish(o->store, e.run_id, "running", err)))
			goto fail;
		if (g < 0) {
			e.start_code = cuco_xstrdup(o->seed_code);
			if ((rc = cuco_evolve_setup_genes(&e, err)) ||
			    (rc = cuco_evolve_initial_programs(&e, err)) ||
			    (rc = store_pending(&e, &e.cur, 0, err)))
				goto fail;
			g = 0;
			open = 1;
		} else if (!open) {
			g++;
		} else {
			e.prog.resumed_evals =
			    cuco_evolve_unevaluated(&e.cur) + cuco_evolve_unevaluated(&e.next);
		}
	} else {
		struct cuco_run_rec run;
		if (!o->seed_code) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID, "evolve: no seed program");
			goto out;
		}
		e.start_code = cuco_xstrdup(o->seed_code);
		config = cuco_evolve_config_json(&e.cfg, o->llm_json);
		if (!config) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		cuco_run_rec_init(&run);
		run.kind = "evolve";
		run.workload = o->workload;
		run.package = o->package;
		run.shape = o->shape;
		run.config = config;
		run.gpu = o->gpu;
		run.cuco_version = CUCO_VERSION;
		if ((rc = cuco_store_run_begin(o->store, &run, &e.run_id, err)))
			goto out;
		if (run_id)
			*run_id = e.run_id;
		if ((rc = cuco_store_run_lock(o->store, e.run_id, err)))
			goto out; /* a --resume of it took it first: its run now */
		e.prog.run_id = e.run_id;
		if ((rc = cuco_evolve_setup_genes(&e, err)) ||
		    (rc = cuco_evolve_initial_programs(&e, err)) ||
		    (rc = store_pending(&e, &e.cur, 0, err)))
			goto fail;
		open = 1;
		g = 0;
	}
	e.prog.generations = cfg->generations;
	for (;; g++) {
		e.prog.generation = g;
		e.prog.phase = cuco_phase_name(cuco_schedule_phase(&e.sched, g < 1 ? 1 : g));
		if (!open) {
			if (g > cfg->generations) {
				why = "generations";
				break;
			}
			if ((why = should_stop(&e)))
				break;
			if (e.op_exhausted) { /* after the bred children were judged */
				why = "budget-llm";
				break;
			}
			cuco_evolve_pend_clear(&e.cur);
			if ((rc = cuco_evolve_breed_generation(&e, &e.cur, g, err)) ||
			    (rc = store_pending(&e, &e.cur, g, err)))
				goto fail;
			empty = e.cur.n ? 0 : empty + 1;
			if (empty >= EMPTY_LIMIT) {
				why = "exhausted";
				break;
			}
		} else if (lagged) {
			/* Bred ahead: the checks the strict order makes before breeding it. It
			 * stays stored, unevaluated, for --resume. */
			if ((why = should_stop(&e)))
				break;
			if (empty >= EMPTY_LIMIT) {
				why = "exhausted";
				break;
			}
		}
		open = lagged = 0;
		if (have_next && !next_sent) {
			/* Resumed with g+1 stored too: compile it while g runs. */
			if ((rc = prefetch(&e, &e.next, err)))
				goto fail;
			next_sent = 1;
		} else if (!have_next && lag_due(&e, g)) {
			cuco_evolve_pend_clear(&e.next);
			if ((rc = cuco_evolve_breed_generation(&e, &e.next, g + 1, err)) ||
			    (rc = store_pending(&e, &e.next, g + 1, err)) ||
			    (rc = prefetch(&e, &e.next, err)))
				goto fail;
			empty = e.next.n ? 0 : empty + 1;
			have_next = next_sent = 1;
		}
		if ((rc = evaluate_pending(&e, g, err)))
			goto fail;
		if (!all_evaluated(&e.cur)) {
			why = should_stop(&e);
			break;
		}
		cuco_evolve_add_members(&e, &e.cur, g);
		if ((rc = cuco_evolve_finish_generation(&e, g, err)))
			goto fail;
		report(&e);
		if (have_next) {
			struct pendlist t = e.cur;
			e.cur = e.next;
			e.next = t;
			open = lagged = 1;
			have_next = next_sent = 0;
		}
		cuco_evolve_pend_clear(&e.next);
	}
	e.prog.stop_reason = why ? why : "generations";
	e.prog.interrupted = why && !strcmp(why, "interrupted");
	if (!e.prog.interrupted && o->child_op && o->child_op->finished &&
	    (rc = o->child_op->finished(o->child_op->ctx, e.run_id, err)))
		goto fail;
	rc = cuco_store_run_finish(o->store, e.run_id, e.prog.interrupted ? "interrupted" : "done",
	                           err);
	goto out;
fail:
	if (e.run_id) /* the reason stays with the run: its report and `show run` say it */
		cuco_store_run_fail(o->store, e.run_id, err ? err->msg : NULL, NULL);
out:
	/* Nothing compiles on behind the caller (a generation bred ahead stays stored). */
	if (o->evaluator.prefetch_cancel)
		o->evaluator.prefetch_cancel(o->evaluator.ctx);
	if (final)
		*final = e.prog;
	cuco_evolve_pend_clear(&e.cur);
	cuco_evolve_pend_clear(&e.next);
	free(e.cur.a);
	free(e.next.a);
	free(e.start_code);
	free(e.summary_text);
	free(config);
	cuco_population_release(&e.pop);
	cuco_novelty_release(&e.nov);
	return rc;
}
