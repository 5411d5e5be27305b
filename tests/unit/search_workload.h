/*
 * search_workload.h - a small evolution over a shipped workload's template
 * with the fake evaluator of search_fake.h, for the workloads' unit tests: the
 * design space narrowed to the template, a store in a fresh temporary
 * directory, a small config (the caller sets its seed and sizes before
 * running). Header-only (static inline); include after cmocka.h and
 * search_fake.h.
 */
#ifndef CUCO_TEST_SEARCH_WORKLOAD_H
#define CUCO_TEST_SEARCH_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program/directive.h"
#include "search/evolve.h"
#include "store/store.h"

struct search_workload {
	char dir[64], path[128]; /* the temporary directory and the store in it */
	struct cuco_design_space ds;
	struct cuco_store *store; /* NULL once closed */
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
};

/*
 * Ready an evolution of workload at shape from seed_code over the template
 * tmpl (named tmpl_name; all borrowed) with the design space at ds_path and
 * the node facts: 4 children per island, archives of 4, migration and
 * summaries every 2 generations, the fake evaluator in batches of 4.
 */
static inline void search_workload_init(struct search_workload *w, const char *ds_path,
                                        const char *workload, const char *shape,
                                        const char *tmpl_name, const char *tmpl,
                                        const char *seed_code, const struct cuco_hw_facts *facts)
{
	struct cuco_err err;

	memset(w, 0, sizeof(*w));
	assert_int_equal(cuco_design_space_load(ds_path, &w->ds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&w->ds, tmpl_name, tmpl, &err))
		fail_msg("%s", err.msg);
	snprintf(w->dir, sizeof(w->dir), "/tmp/cuco-test-%s-XXXXXX", workload);
	assert_non_null(mkdtemp(w->dir));
	snprintf(w->path, sizeof(w->path), "%s/evolve.db", w->dir);
	assert_int_equal(cuco_store_open(w->path, &w->store, &err), CUCO_OK);
	cuco_evolve_config_default(&w->cfg);
	w->cfg.children_per_island = 4;
	w->cfg.archive_size = 4;
	w->cfg.migration_interval = 2;
	w->cfg.summary_interval = 2;
	fake_init(&w->f);
	w->o.store = w->store;
	w->o.workload = workload;
	w->o.shape = shape;
	w->o.ds = &w->ds;
	w->o.facts = facts;
	w->o.seed_code = seed_code;
	w->o.template_text = tmpl;
	w->o.template_name = tmpl_name;
	w->o.evaluator = fake_evaluator(&w->f, 4);
}

/* Run the evolution (run 1 of the store); every candidate bred is evaluated. */
static inline void search_workload_run(struct search_workload *w)
{
	struct cuco_err err;

	if (cuco_evolve_run(&w->o, &w->cfg, 0, NULL, &w->fin, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(w->fin.evaluated,
	                 2 + w->cfg.generations * w->cfg.children_per_island * w->cfg.islands);
}

/* Close the store (the caller may have), remove the directory, release the rest. */
static inline void search_workload_release(struct search_workload *w)
{
	char p[160];

	cuco_store_close(w->store);
	w->store = NULL;
	unlink(w->path);
	snprintf(p, sizeof(p), "%s-wal", w->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", w->path);
	unlink(p);
	rmdir(w->dir);
	fake_release(&w->f);
	cuco_design_space_release(&w->ds);
}

#endif
