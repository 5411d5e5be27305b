/*
 * evolve_breed.c - breeding a generation: parents, inspirations, the
 * built-in operator or the child operator, novelty, lineage; the initial
 * programs and the genes the operator may change (--freeze, --search).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/evolve_engine.h"
#include "search/rng.h"

/* ---- breeding ---- */

/* Add a lineage edge unless (id, kind) is there already. */
static void add_edge(struct pending *p, int64_t id, const char *kind)
{
	for (int i = 0; i < p->nedges; i++)
		if (p->edges[i].id == id && !strcmp(p->edges[i].kind, kind))
			return;
	if (p->nedges < MAX_EDGES) {
		p->edges[p->nedges].id = id;
		p->edges[p->nedges++].kind = kind;
	}
}

/* A parent for slot on island isl: an archive member when reseeding, else by weight. */
static int pick_parent(struct engine *e, int isl, int slot, const struct cuco_phase_params *pp,
                       struct cuco_rng *rng)
{
	int arch[64], na;

	if (pp->reseed && slot == 0 && (na = cuco_island_archive(&e->pop, isl, arch, 64)) > 0)
		return arch[cuco_rng_below(rng, (uint64_t)na)];
	return cuco_island_pick_parent(&e->pop, isl, pp->lambda, rng);
}

/*
 * Breed one child of generation g on island isl into L. Returns CUCO_OK (a
 * child was added, or none could be found: *made says which) or an error.
 */
static int breed(struct engine *e, struct pendlist *L, int g, int isl, int slot,
                 const struct cuco_phase_params *pp, struct cuco_rng *rng, int *made,
                 struct cuco_err *err)
{
	struct cuco_op_ctx op = {e->o->ds, e->o->facts, &e->genes,
	                         pp->use_bias && e->bias.active ? &e->bias : NULL};
	struct cuco_strbuf code = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	*made = 0;
	for (int attempt = 0; attempt < NOVELTY_ATTEMPTS; attempt++) {
		int parent, insp[8], ninsp, partner = -1, nchanges;
		struct cuco_directive child;
		struct cuco_err e2;
		struct pending *p;
		char *json;
		const char *op_name = "mutate";

		parent = pick_parent(e, isl, slot, pp, rng);
		if (parent < 0)
			goto out;
		ninsp = cuco_island_inspirations(&e->pop, isl, parent, e->cfg.top_k,
		                                 e->cfg.diverse_k, rng, insp, 8);
		nchanges = pp->changes_min;
		if (pp->changes_max > pp->changes_min) {
			if (pp->phase == CUCO_PHASE_EXPLOIT && !pp->reseed)
				nchanges += cuco_rng_unit(rng) < 0.25; /* mostly one change */
			else
				nchanges += (int)cuco_rng_below(
				    rng, (uint64_t)(pp->changes_max - pp->changes_min + 1));
		}
		nchanges += attempt / 2; /* bolder after rejections */
		cuco_err_clear(&e2);
		rc = CUCO_ERR_NOT_FOUND;
		if (ninsp > 0 && cuco_rng_unit(rng) < pp->crossover_rate) {
			partner = insp[cuco_rng_below(rng, (uint64_t)ninsp)];
			rc = cuco_operator_crossover(&op, &e->pop.m[parent].d, &e->pop.m[partner].d,
			                             rng, &child, &e2);
			op_name = "crossover";
		}
		if (rc) {
			partner = -1;
			op_name = "mutate";
			rc = cuco_operator_mutate(&op, &e->pop.m[parent].d,
			                          ninsp ? &e->pop.m[insp[0]].d : NULL, nchanges,
			                          rng, &child, &e2);
		}
		if (rc) { /* nothing valid and new around this parent */
			rc = CUCO_OK;
			continue;
		}
		cuco_strbuf_reset(&code);
		if ((rc = cuco_evolve_realize(e, &child, &code, err)))
			goto out;
		json = cuco_directive_to_json(&child);
		if (!json) {
			rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
			goto out;
		}
		if (cuco_novelty_check(&e->nov, code.buf, json, NULL, NULL) != CUCO_NOVEL) {
			e->prog.rejected++;
			free(json);
			continue;
		}
		p = cuco_evolve_pend_new(L);
		cuco_novelty_add(&e->nov, code.buf, json, 0);
		p->island = isl;
		snprintf(p->name, sizeof(p->name), "g%d-i%d-c%d", g, isl, slot);
		p->op = op_name;
		p->code = cuco_strbuf_detach(&code, NULL);
		p->json = json;
		p->d = child;
		add_edge(p, e->pop.m[parent].program_id, "parent");
		if (partner >= 0)
			add_edge(p, e->pop.m[partner].program_id, "crossover");
		for (int k = 0; k < ninsp; k++)
			if (insp[k] != partner &&
			    e->pop.m[insp[k]].program_id != e->pop.m[parent].program_id)
				add_edge(p, e->pop.m[insp[k]].program_id, "inspiration");
		e->pop.m[parent].nchildren++;
		*made = 1;
		goto out;
	}
out:
	cuco_strbuf_release(&code);
	return rc;
}

/*
 * Breed one child of generation g on island isl into L with the child
 * operator (up to OP_ATTEMPTS asks). Returns CUCO_OK (*made says whether a
 * child was added; the operator's spent budget sets op_exhausted) or the
 * operator's error.
 */
static int breed_external(struct engine *e, struct pendlist *L, int g, int isl, int slot,
                          const struct cuco_phase_params *pp, struct cuco_rng *rng, int *made,
                          struct cuco_err *err)
{
	const struct cuco_child_operator *op = e->o->child_op;
	int rc = CUCO_OK;

	*made = 0;
	for (int attempt = 0; attempt < OP_ATTEMPTS; attempt++) {
		int parent, insp[8], ninsp;
		int64_t ids[8];
		struct cuco_breed_request rq;
		struct cuco_breed_child child;
		struct cuco_directive d;
		struct cuco_err e2;
		struct pending *p;
		char name[48];

		if ((parent = pick_parent(e, isl, slot, pp, rng)) < 0)
			return CUCO_OK;
		ninsp = cuco_island_inspirations(&e->pop, isl, parent, e->cfg.top_k,
		                                 e->cfg.diverse_k, rng, insp, 8);
		for (int k = 0; k < ninsp; k++)
			ids[k] = e->pop.m[insp[k]].program_id;
		snprintf(name, sizeof(name), "g%d-i%d-c%d", g, isl, slot);
		memset(&rq, 0, sizeof(rq));
		rq.run_id = e->run_id;
		rq.generation = g;
		rq.island = isl;
		rq.name = name;
		rq.exploit = pp->phase == CUCO_PHASE_EXPLOIT && !pp->reseed;
		rq.parent_id = e->pop.m[parent].program_id;
		rq.parent_fitness = e->pop.m[parent].correct ? e->pop.m[parent].fitness : 0;
		rq.inspirations = ids;
		rq.ninspirations = ninsp;
		memset(&child, 0, sizeof(child));
		rc = op->breed(op->ctx, &rq, &child, err);
		if (rc == CUCO_ERR_UNSUPPORTED) {
			e->op_exhausted = 1;
			rc = CUCO_OK;
		}
		cuco_err_clear(&e2);
		if (rc || e->op_exhausted || !child.code || !child.directive_json ||
		    cuco_directive_from_json(child.directive_json, &d, &e2)) {
			free(child.code);
			free(child.directive_json);
			free(child.flags);
			if (rc || e->op_exhausted)
				return rc;
			continue;
		}
		if (cuco_novelty_check(&e->nov, child.code, child.directive_json, NULL, NULL) !=
		    CUCO_NOVEL) {
			e->prog.rejected++;
			cuco_directive_release(&d);
			free(child.code);
			free(child.directive_json);
			free(child.flags);
			continue;
		}
		/* Members breed through the built-in operator too (mixed): complete the
		 * knobs the template needs, as for the seed. */
		if (e->o->template_text) {
			struct cuco_genes tg;
			memset(&tg, 0, sizeof(tg));
			cuco_realize_template_knobs(e->o->template_text, e->o->ds, &tg, &d, NULL);
		}
		p = cuco_evolve_pend_new(L);
		cuco_novelty_add(&e->nov, child.code, child.directive_json, 0);
		p->island = isl;
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->op = child.op_name ? child.op_name : "external";
		p->code = child.code;
		p->json = child.directive_json;
		p->flags = child.flags;
		p->d = d;
		add_edge(p, rq.parent_id, "parent");
		if (child.partner_id && child.partner_id != rq.parent_id)
			add_edge(p, child.partner_id, "crossover");
		for (int k = 0; k < ninsp; k++)
			if (ids[k] != child.partner_id && ids[k] != rq.parent_id)
				add_edge(p, ids[k], "inspiration");
		e->pop.m[parent].nchildren++;
		*made = 1;
		return CUCO_OK;
	}
	return rc;
}

/*
 * Breed generation g into L (empty). With an evaluation budget, the
 * candidates bred never exceed what is left of it, counting those of the
 * current generation still waiting for evaluation when L is the next one.
 */
int cuco_evolve_breed_generation(struct engine *e, struct pendlist *L, int g, struct cuco_err *err)
{
	struct cuco_rng rng;
	int rc, waiting = L == &e->cur ? 0 : cuco_evolve_unevaluated(&e->cur);

	cuco_rng_seed_stream(&rng, e->cfg.search_seed, (uint64_t)g);
	for (int isl = 0; isl < e->pop.nislands; isl++) {
		struct cuco_phase_params pp;
		cuco_schedule_params(
		    &e->sched, g,
		    cuco_island_stagnating(&e->pop, isl, e->cfg.stagnation_generations), &pp);
		for (int slot = 0; slot < e->cfg.children_per_island; slot++) {
			const struct cuco_child_operator *op = e->o->child_op;
			int made, use_op;
			if (e->cfg.budget_evals > 0 &&
			    e->prog.evaluated + waiting + L->n >= e->cfg.budget_evals)
				return CUCO_OK;
			/* No draw without a child operator: built-in runs breed as before. */
			use_op =
			    op && op->breed &&
			    (op->share >= 1 || (op->share > 0 && cuco_rng_unit(&rng) < op->share));
			rc = use_op ? breed_external(e, L, g, isl, slot, &pp, &rng, &made, err)
			            : breed(e, L, g, isl, slot, &pp, &rng, &made, err);
			if (rc)
				return rc;
			if (e->op_exhausted)
				return CUCO_OK;
		}
	}
	return CUCO_OK;
}

/* The initial programs (generation 0, into cur): the seed and, with a template, its rendering. */
int cuco_evolve_initial_programs(struct engine *e, struct cuco_err *err)
{
	struct pending *p = cuco_evolve_pend_new(&e->cur);
	struct cuco_strbuf code = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	p->island = CUCO_STORE_NO_INT;
	snprintf(p->name, sizeof(p->name), "seed");
	p->op = "init";
	p->code = cuco_xstrdup(e->start_code);
	if ((rc = cuco_directive_parse("seed", e->start_code, &p->d, err)))
		return rc;
	free(p->d.file);
	p->d.file = NULL;
	p->json = cuco_directive_to_json(&p->d);
	if (!p->json)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	if (e->o->template_text) {
		if ((rc = cuco_evolve_realize(e, &e->start_d, &code, err)))
			goto out;
		if (strcmp(code.buf, e->start_code)) {
			p = cuco_evolve_pend_new(&e->cur);
			p->island = CUCO_STORE_NO_INT;
			snprintf(p->name, sizeof(p->name), "seed-realized");
			p->op = "init";
			p->code = cuco_strbuf_detach(&code, NULL);
			p->json = cuco_directive_to_json(&e->start_d);
			cuco_directive_copy(&p->d, &e->start_d);
			if (!p->json) {
				rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
				goto out;
			}
		}
	}
	for (int i = 0; i < e->cur.n; i++)
		cuco_novelty_add(&e->nov, e->cur.a[i].code, e->cur.a[i].json, 0);
out:
	cuco_strbuf_release(&code);
	return rc;
}

/*
 * The next name of a comma- (or space-) separated list at *p into name: 1, 0 at
 * the end, -1 for a name of CUCO_NAME_MAX characters or more (left in name, cut).
 */
static int next_name(const char **p, char *name)
{
	size_t n;

	while (**p == ',' || **p == ' ')
		(*p)++;
	if (!**p)
		return 0;
	n = strcspn(*p, ", ");
	snprintf(name, CUCO_NAME_MAX, "%.*s", (int)n, *p);
	*p += n;
	return n < CUCO_NAME_MAX ? 1 : -1;
}

/* Whether the comma-separated list holds name. */
static int list_has(const char *list, const char *name)
{
	char one[CUCO_NAME_MAX];
	int r;

	while ((r = next_name(&list, one)) != 0)
		if (r > 0 && !strcmp(one, name))
			return 1;
	return 0;
}

/*
 * Take the config's frozen dimensions and knobs out of the genes, and the knobs
 * the design space holds ("searched": false) unless the config's search list
 * names them.
 */
static int apply_freeze(struct engine *e, struct cuco_err *err)
{
	const char *p = e->cfg.search;
	char name[CUCO_NAME_MAX];
	int r;

	while ((r = next_name(&p, name)) != 0)
		if (r < 0 || !cuco_design_space_knob(e->o->ds, name))
			return cuco_err_set(err, CUCO_ERR_INVALID, "search: %s%s is not a knob",
			                    name, r < 0 ? "..." : "");
	for (int k = 0; k < e->genes.nknobs;) {
		const struct cuco_ds_knob *spec =
		    cuco_design_space_knob(e->o->ds, e->genes.knobs[k]);
		if (spec && !spec->searched && !list_has(e->cfg.search, spec->name)) {
			memmove(e->genes.knobs[k], e->genes.knobs[k + 1],
			        (size_t)(e->genes.nknobs - k - 1) * sizeof(e->genes.knobs[0]));
			e->genes.nknobs--;
		} else
			k++;
	}
	p = e->cfg.freeze;
	while ((r = next_name(&p, name)) != 0) {
		int found = 0;

		if (r < 0)
			return cuco_err_set(err, CUCO_ERR_INVALID, "freeze: name too long: %s...",
			                    name);
		for (int d = 0; d < CUCO_NDIMS; d++)
			if (!strcmp(cuco_dimension_name(d), name)) {
				e->genes.dims[d] = 0;
				found = 1;
			}
		for (int k = 0; k < e->genes.nknobs; k++)
			if (!strcmp(e->genes.knobs[k], name)) {
				memmove(e->genes.knobs[k], e->genes.knobs[k + 1],
				        (size_t)(e->genes.nknobs - k - 1) *
				            sizeof(e->genes.knobs[0]));
				e->genes.nknobs--;
				found = 1;
				break;
			}
		if (!found && !cuco_design_space_knob(e->o->ds, name))
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "freeze: %s is neither a dimension nor a knob", name);
	}
	return CUCO_OK;
}

/*
 * The seed's directive where the template does not realise one of its dimensions (the fast
 * path's seed syncs per CTA; a template may realise grid scope only): the search starts from
 * the nearest directive the template realises, each such dimension at the first of its
 * admitted values that validates, and the user is told. The seed's own code is untouched.
 */
static void project_start(struct engine *e)
{
	const struct cuco_design_space *ds = e->o->ds;
	struct cuco_op_ctx op = {ds, e->o->facts, &e->genes, NULL};
	struct cuco_err e2;
	char msg[512];

	if (cuco_directive_validate(&e->start_d, ds, e->o->facts, &e2) == CUCO_OK)
		return;
	for (int d = 0; d < CUCO_NDIMS; d++) {
		if (cuco_design_space_value_index(&ds->dims[d], e->start_d.dims[d]) >= 0)
			continue;
		for (int v = 0; v < ds->dims[d].nvalues; v++) {
			struct cuco_directive c;
			cuco_directive_copy(&c, &e->start_d);
			snprintf(c.dims[d], sizeof(c.dims[d]), "%s", ds->dims[d].values[v].name);
			cuco_operator_canonicalize(&op, &c);
			if (cuco_directive_validate(&c, ds, e->o->facts, &e2) == CUCO_OK ||
			    v == ds->dims[d].nvalues - 1) {
				snprintf(msg, sizeof(msg),
				         "the seed's directive has %s \"%s\", which %s does not "
				         "realise; "
				         "the search starts from %s \"%s\"",
				         cuco_dimension_name(d), e->start_d.dims[d],
				         e->o->template_name ? e->o->template_name : "the template",
				         cuco_dimension_name(d), c.dims[d]);
				cuco_directive_copy(&e->start_d, &c);
				cuco_directive_release(&c);
				if (e->o->note)
					e->o->note(e->o->progress_arg, msg);
				break;
			}
			cuco_directive_release(&c);
		}
	}
}

/* What the operator may change, and the start directive completed for the template. */
int cuco_evolve_setup_genes(struct engine *e, struct cuco_err *err)
{
	int rc;

	if ((rc = cuco_directive_parse("seed", e->start_code, &e->start_d, err)))
		return rc;
	free(e->start_d.file);
	e->start_d.file = NULL;
	if (e->o->template_text) {
		memset(&e->genes, 0, sizeof(e->genes));
		for (int d = 0; d < CUCO_NDIMS; d++)
			e->genes.dims[d] = 1;
		rc = cuco_realize_template_knobs(e->o->template_text, e->o->ds, &e->genes,
		                                 &e->start_d, err);
	} else {
		char names[CUCO_DIRECTIVE_MAX_KNOBS][CUCO_NAME_MAX];
		const char *ptrs[CUCO_DIRECTIVE_MAX_KNOBS];
		int n;
		cuco_realize_seed_knobs(e->start_code, e->o->ds, names, CUCO_DIRECTIVE_MAX_KNOBS,
		                        &n);
		for (int i = 0; i < n; i++)
			ptrs[i] = names[i];
		cuco_genes_knobs_only(&e->genes, ptrs, n);
	}
	if (rc || (rc = apply_freeze(e, err)))
		return rc;
	if (e->o->template_text) {
		/* The seed's rendering (seed-realized) with the genes the template ignores
		 * canonical, as every child will be; kept as it is if that is not valid. */
		struct cuco_op_ctx op = {e->o->ds, e->o->facts, &e->genes, NULL};
		struct cuco_directive c;
		struct cuco_err e2;
		cuco_directive_copy(&c, &e->start_d);
		if (cuco_operator_canonicalize(&op, &c) &&
		    cuco_directive_validate(&c, e->o->ds, e->o->facts, &e2) == CUCO_OK)
			cuco_directive_copy(&e->start_d, &c);
	}
	if (e->o->template_text)
		project_start(e);
	if ((rc = cuco_directive_validate(&e->start_d, e->o->ds, e->o->facts, err)))
		cuco_err_prefix(err, "the seed's directive: ");
	return rc;
}
