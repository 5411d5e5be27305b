/*
 * evolve_engine.c - the search's engine state (evolve_engine.h): the
 * generation's candidates, the progress tallied, bests, members, and what
 * ends a generation (stagnation, trim, migration, bias, summaries). The loop
 * (evolve.c), the breeding (evolve_breed.c) and the resume (evolve_resume.c)
 * build on it.
 */
#include "search/evolve_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/rng.h"
#include "util/array.h"

/* ---- engine state ---- */

void cuco_evolve_pend_clear(struct pendlist *L)
{
	for (int i = 0; i < L->n; i++) {
		free(L->a[i].code);
		free(L->a[i].json);
		free(L->a[i].flags);
	}
	L->n = 0;
}

struct pending *cuco_evolve_pend_new(struct pendlist *L)
{
	struct pending *p = CUCO_ARRAY_PUSH(L->a, L->n, L->alloc);

	memset(p, 0, sizeof(*p));
	cuco_directive_init(&p->d);
	p->median_us = p->mean_us = NAN;
	return p;
}

int cuco_evolve_realize(struct engine *e, const struct cuco_directive *d, struct cuco_strbuf *out,
                        struct cuco_err *err)
{
	if (e->o->template_text)
		return cuco_realize_template(e->o->template_name ? e->o->template_name : "template",
		                             e->o->template_text, d, out, err);
	return cuco_realize_seed(e->start_code, d, out, err);
}

/* Count an outcome into the progress. */
void cuco_evolve_tally(struct engine *e, const struct cuco_eval_outcome *out)
{
	struct cuco_evolve_progress *p = &e->prog;

	p->evaluated++;
	if (isfinite(out->baseline_us))
		p->baseline_us = out->baseline_us;
	if (out->code == CUCO_OK) {
		p->correct++;
		return;
	}
	if (!strcmp(out->stage, "compile"))
		p->failed_compile++;
	else if (!strcmp(out->stage, "verify"))
		p->failed_verify++;
	else if (!strcmp(out->stage, "bench"))
		p->failed_bench++;
	else
		p->failed_run++;
	if (!strcmp(out->status, "timeout"))
		p->failed_timeout++;
}

/* A latency by the run's statistic (cuco_evolve_config.statistic): what fitness divides by. */
double cuco_evolve_latency_of(const struct engine *e, double median_us, double mean_us)
{
	return !strcmp(e->cfg.statistic, "mean") ? mean_us : median_us;
}

void cuco_evolve_note_best(struct engine *e, int64_t id, double fitness, double latency_us)
{
	if (fitness > e->prog.best_fitness) {
		e->prog.best_fitness = fitness;
		e->prog.best_us = latency_us;
		e->prog.best_program = id;
	}
}

/* Members for generation g's candidates L (initial programs go to every island). */
void cuco_evolve_add_members(struct engine *e, const struct pendlist *L, int g)
{
	for (int i = 0; i < L->n; i++) {
		const struct pending *p = &L->a[i];
		struct cuco_member m;
		int first = p->island == CUCO_STORE_NO_INT ? 0 : p->island;
		int last = p->island == CUCO_STORE_NO_INT ? e->pop.nislands - 1 : p->island;

		memset(&m, 0, sizeof(m));
		m.program_id = p->program_id;
		m.generation = g;
		m.correct = p->correct;
		m.fitness = p->correct ? p->fitness : 0;
		m.median_us = p->median_us;
		m.d = p->d;
		/* The fast-path seed breeds through the template with every knob the
		 * template needs set: its completed directive. */
		if (p->island == CUCO_STORE_NO_INT && e->o->template_text &&
		    !strcmp(p->name, "seed"))
			m.d = e->start_d;
		for (int isl = first; isl <= last && isl < e->pop.nislands; isl++) {
			m.island = isl;
			cuco_population_add(&e->pop, &m);
		}
	}
}

int cuco_evolve_refresh_bias(struct engine *e, int g, int store_it, struct cuco_err *err)
{
	struct cuco_summary s;
	char *text = NULL;
	int rc = cuco_summary_compute(e->o->store, e->run_id, g, &s, err);

	if (rc == CUCO_OK) {
		cuco_summary_bias(&s, e->o->ds, 2.0, &e->bias);
		e->bias_generation = g;
		if (store_it) {
			text = cuco_summary_to_json(&s);
			rc = text ? cuco_store_summary_add(e->o->store, e->run_id, g, "statistical",
			                                   text, NULL, err)
			          : cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			if (rc == CUCO_OK && e->o->child_op && e->o->child_op->summarize) {
				free(e->summary_text);
				e->summary_text = text;
				text = NULL;
			}
		}
	}
	free(text);
	cuco_summary_release(&s);
	return rc;
}

int cuco_evolve_summary_due(const struct engine *e, int g)
{
	return g > 0 && e->cfg.summary_interval > 0 && g % e->cfg.summary_interval == 0;
}

/* After a generation's members are in: bests, stagnation, trim, migration, bias. */
int cuco_evolve_finish_generation(struct engine *e, int g, struct cuco_err *err)
{
	cuco_population_end_generation(&e->pop, g);
	if (g > 0 && e->cfg.migration_interval > 0 && g % e->cfg.migration_interval == 0)
		cuco_population_migrate(&e->pop, e->cfg.migration_rate);
	if (cuco_evolve_summary_due(e, g) && e->bias_generation != g)
		return cuco_evolve_refresh_bias(e, g, 0, err);
	return CUCO_OK;
}

/* Candidates of L without an outcome. */
int cuco_evolve_unevaluated(const struct pendlist *L)
{
	int n = 0;

	for (int i = 0; i < L->n; i++)
		n += !L->a[i].evaluated;
	return n;
}
