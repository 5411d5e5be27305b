/*
 * evolve_resume.c - a resumed run's islands rebuilt from the store, exactly
 * as the live loop built them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/evolve_engine.h"
#include "util/array.h"

/* ---- resume ---- */

/* A stored candidate of the run, as loaded for the rebuild. */
struct loaded {
	int64_t id;
	int island, generation;
	char *name, *code, *json, *op;
	int64_t parent_ids[MAX_EDGES];
	char parent_kind[MAX_EDGES][16];
	int nparents;
	int evaluated, correct;
	double fitness, median_us, mean_us;
};

struct loader {
	struct loaded *a;
	int n;
	size_t alloc;
	struct engine *e;
	int max_generation; /* the highest generation the run can have stored */
};

static int load_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct loader *L = arg;
	struct loaded *x;

	if (strcmp(p->origin, "candidate"))
		return 0;
	/* What the store holds is checked before the loop trusts it (a damaged or edited
	 * row must not send the rebuild around 2^31 generations or off the islands). */
	if (p->generation < CUCO_STORE_NO_INT || p->generation > L->max_generation)
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld: program %lld: programs.generation %lld is out of range "
		    "(0 to %d, the run's generations); the stored run is damaged and "
		    "cannot be resumed",
		    (long long)L->e->run_id, (long long)p->id, (long long)p->generation,
		    L->max_generation);
	if (p->island < CUCO_STORE_NO_INT || p->island >= L->e->cfg.islands)
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld: program %lld: programs.island %lld is out of range (0 "
		    "to %d, the run's islands); the stored run is damaged and cannot "
		    "be resumed",
		    (long long)L->e->run_id, (long long)p->id, (long long)p->island,
		    L->e->cfg.islands - 1);
	if (p->generation < 0)
		return 0;
	x = CUCO_ARRAY_PUSH(L->a, L->n, L->alloc);
	memset(x, 0, sizeof(*x));
	x->id = p->id;
	x->island = (int)p->island;
	x->generation = (int)p->generation;
	x->name = cuco_xstrdup(p->name ? p->name : "");
	x->code = cuco_xstrdup(p->code);
	x->json = cuco_xstrdup(p->directive);
	x->op = cuco_xstrdup(p->operator_ ? p->operator_ : "");
	x->median_us = x->mean_us = NAN;
	for (size_t i = 0; i < p->nparents && x->nparents < MAX_EDGES; i++) {
		x->parent_ids[x->nparents] = p->parents[i].id;
		snprintf(x->parent_kind[x->nparents++], 16, "%s",
		         p->parents[i].kind ? p->parents[i].kind : "parent");
	}
	return 0;
}

static int load_eval(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct loader *L = arg;
	struct cuco_eval_outcome out;
	int lo = 0, hi = L->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		struct loaded *x = &L->a[mid];
		if (x->id == ev->program_id) {
			if (x->evaluated)
				return 0;
			x->evaluated = 1;
			x->correct = ev->error_code == CUCO_OK && !strcmp(ev->status, "ok");
			x->fitness = x->correct && isfinite(ev->fitness) ? ev->fitness : 0;
			x->median_us = ev->median_us;
			x->mean_us = ev->mean_us;
			cuco_eval_outcome_init(&out);
			out.code = ev->error_code;
			snprintf(out.status, sizeof(out.status), "%s", ev->status);
			snprintf(out.stage, sizeof(out.stage), "%s",
			         ev->stage_reached ? ev->stage_reached : "run");
			cuco_evolve_tally(L->e, &out);
			if (x->correct)
				cuco_evolve_note_best(
				    L->e, x->id, x->fitness,
				    cuco_evolve_latency_of(L->e, x->median_us, x->mean_us));
			return 0;
		}
		if (x->id < ev->program_id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static void loader_free(struct loader *L)
{
	for (int i = 0; i < L->n; i++) {
		free(L->a[i].name);
		free(L->a[i].code);
		free(L->a[i].json);
		free(L->a[i].op);
	}
	free(L->a);
}

/*
 * Rebuild the islands from the run's stored candidates, generation by
 * generation, exactly as the live loop built them, up to the current
 * generation: the first one with a candidate lacking an evaluation, or, in a
 * pipelined run, the last stored one (the live loop bred the generation
 * after it before adding it to the islands). The current generation is left
 * in cur (*open = 1, *last_g = it); a pipelined run killed with two
 * generations stored but not evaluated has the later one in next
 * (*next_stored = 1). With nothing open, *last_g gets the last stored
 * generation, -1 when the run has none yet.
 */
int cuco_evolve_rebuild(struct engine *e, int *last_g, int *open, int *next_stored,
                        struct cuco_err *err)
{
	struct loader L;
	int rc, gmax = -1, gopen = -1, gcur, i = 0;

	memset(&L, 0, sizeof(L));
	L.e = e;
	L.max_generation =
	    e->cfg.generations > e->stored_generations ? e->cfg.generations : e->stored_generations;
	*open = *next_stored = 0;
	if ((rc = cuco_store_program_each(e->o->store, e->run_id, load_program, &L, err)))
		goto out;
	if ((rc = cuco_store_eval_each_run(e->o->store, e->run_id, load_eval, &L, err)))
		goto out;
	for (int k = 0; k < L.n; k++) {
		if (L.a[k].generation > gmax)
			gmax = L.a[k].generation;
		if (!L.a[k].evaluated && (gopen < 0 || L.a[k].generation < gopen))
			gopen = L.a[k].generation;
		if (L.a[k].generation == 0 && !strcmp(L.a[k].op, "init") &&
		    !strcmp(L.a[k].name, "seed") && !e->start_code)
			e->start_code = cuco_xstrdup(L.a[k].code);
	}
	if (!e->start_code && gmax < 0 && e->o->seed_code) {
		/* Killed before generation 0 was stored: start over from the seed. */
		*last_g = -1;
		goto out;
	}
	if (!e->start_code) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "run %lld has no stored seed (generation 0); start a new run",
		                  (long long)e->run_id);
		goto out;
	}
	if (gopen >= 0 && gmax > gopen + 1) {
		rc = cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld: generation %d has candidates without an evaluation, but "
		    "generation %d is stored too (at most the next one can be); it "
		    "cannot be resumed",
		    (long long)e->run_id, gopen, gmax);
		goto out;
	}
	gcur = gopen >= 0 ? gopen : e->cfg.pipeline && gmax >= 1 ? gmax : gmax + 1;
	if ((rc = cuco_evolve_setup_genes(e, err)))
		goto out;
	for (int g = 0; g <= gmax; g++) {
		struct pendlist *T = g > gcur ? &e->next : &e->cur;
		cuco_evolve_pend_clear(T);
		/* Programs come oldest first, generation by generation. */
		for (; i < L.n && L.a[i].generation <= g; i++) {
			struct loaded *x = &L.a[i];
			struct pending *p;
			if (x->generation < g)
				continue;
			p = cuco_evolve_pend_new(T);
			p->program_id = x->id;
			p->island = x->island;
			snprintf(p->name, sizeof(p->name), "%s", x->name);
			p->op = "";
			p->code = x->code;
			p->json = x->json;
			x->code = x->json = NULL;
			p->evaluated = x->evaluated;
			p->correct = x->correct;
			p->fitness = x->fitness;
			p->median_us = x->median_us;
			p->mean_us = x->mean_us;
			if (p->json && cuco_directive_from_json(p->json, &p->d, err) != CUCO_OK) {
				rc = err->code;
				cuco_err_prefix(err, "program %lld: ", (long long)x->id);
				goto out;
			}
			/* as the live loop did for an outside operator's child: the knobs the
			 * template needs that its directive left out, at their defaults */
			if (p->json && e->o->template_text) {
				struct cuco_genes tg;
				memset(&tg, 0, sizeof(tg));
				cuco_realize_template_knobs(e->o->template_text, e->o->ds, &tg,
				                            &p->d, NULL);
			}
			cuco_novelty_add(&e->nov, p->code, p->json, p->program_id);
			for (int k = 0; k < x->nparents; k++) {
				int at;
				if (strcmp(x->parent_kind[k], "parent"))
					continue;
				at = cuco_population_find(&e->pop, x->island, x->parent_ids[k]);
				if (at >= 0)
					e->pop.m[at].nchildren++;
			}
		}
		if (g >= gcur)
			continue; /* cur (and next) stay pending */
		cuco_evolve_add_members(e, T, g);
		if ((rc = cuco_evolve_finish_generation(e, g, err)))
			goto out;
		cuco_evolve_pend_clear(T);
	}
	*open = gcur <= gmax;
	*last_g = *open ? gcur : gmax;
	*next_stored = gmax == gcur + 1;
out:
	loader_free(&L);
	return rc;
}
