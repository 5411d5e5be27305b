/*
 * test_report_views.c - the report's views of a whole run on a store the
 * search filled through the fake evaluator: every evaluation against run
 * order (correct ones by island, failures by the stage they failed at), the
 * best program's ancestry as a tree, and seed to best step by step (the
 * directive change and the code diff of each step). Every expected count is
 * read back from the store itself. And a failed run's report says why it
 * failed. CUCO_TEST_REPORT_DIR keeps the report.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "report/report.h"
#include "search/evolve.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "search_fake.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/evolve"

static char dir[64], path[128];

static char *read_all(const char *p)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, p))
		return NULL;
	return cuco_strbuf_detach(&sb, NULL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The first column of the first row of sql (printf-style) on the store, or -1. */
__attribute__((format(printf, 1, 2))) static int64_t query_int(const char *fmt, ...)
{
	char sql[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return sql_int(path, sql);
}

/* The part of html from the first occurrence of from up to the next of to (NUL-ended copy). */
static char *between(const char *html, const char *from, const char *to)
{
	const char *a = strstr(html, from), *b = a ? strstr(a + strlen(from), to) : NULL;

	assert_non_null(a);
	return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

/* Keys whose values differ between two directives (dimensions and knobs). */
static int directive_changes(const char *a, const char *b)
{
	json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL), *v;
	const char *k;
	int n = 0;

	assert_non_null(ja);
	assert_non_null(jb);
	json_object_foreach(ja, k, v)
	{
		json_t *w = json_object_get(jb, k);
		if (json_is_object(v)) {
			const char *k2;
			json_t *x;
			json_object_foreach(v, k2, x)
			{
				n += !json_equal(x, json_object_get(w, k2));
			}
			json_object_foreach(w, k2, x)
			{
				n += !json_object_get(v, k2);
			}
		} else {
			n += !json_equal(v, w);
		}
	}
	json_object_foreach(jb, k, v)
	{
		n += !json_object_get(ja, k);
	}
	json_decref(ja);
	json_decref(jb);
	return n;
}

/* The ancestry of program id in the store: parents and crossover partners, no others. */
struct anc {
	int64_t id[256];
	int n, parent_edges, cross_edges;
};

static int anc_has(const struct anc *a, int64_t id)
{
	for (int i = 0; i < a->n; i++)
		if (a->id[i] == id)
			return 1;
	return 0;
}

static void ancestry(struct cuco_store *s, int64_t best, struct anc *a)
{
	struct cuco_err err;

	memset(a, 0, sizeof(*a));
	a->id[a->n++] = best;
	for (int i = 0; i < a->n; i++) {
		struct cuco_program_rec p;
		int64_t par = 0, cross = 0;
		cuco_program_rec_init(&p);
		assert_int_equal(cuco_store_program_get(s, a->id[i], &p, &err), CUCO_OK);
		for (size_t k = 0; k < p.nparents; k++) {
			const char *kind = p.parents[k].kind ? p.parents[k].kind : "parent";
			if (!strcmp(kind, "parent") && !par)
				par = p.parents[k].id;
			else if (!strcmp(kind, "crossover") && !cross)
				cross = p.parents[k].id;
		}
		cuco_program_rec_release(&p);
		for (int k = 0; k < 2; k++) {
			int64_t up = k ? cross : par;
			if (!up)
				continue;
			if (k)
				a->cross_edges++;
			else
				a->parent_edges++;
			if (!anc_has(a, up))
				a->id[a->n++] = up;
		}
	}
}

/* The 'parent' chain from best back to the first ancestor: best first. */
static int chain(struct cuco_store *s, int64_t best, int64_t *ids, int max)
{
	struct cuco_err err;
	int n = 0;

	for (int64_t id = best; id && n < max;) {
		struct cuco_program_rec p;
		ids[n++] = id;
		cuco_program_rec_init(&p);
		assert_int_equal(cuco_store_program_get(s, id, &p, &err), CUCO_OK);
		id = 0;
		for (size_t k = 0; k < p.nparents && !id; k++)
			if (!p.parents[k].kind || !strcmp(p.parents[k].kind, "parent"))
				id = p.parents[k].id;
		cuco_program_rec_release(&p);
	}
	return n;
}

/*
 * An evolve run of "mini" through the fake (3 islands, 10 generations), then
 * a child of its best as an LLM operator would write it: the same directive,
 * one line inside the EVOLVE-BLOCK rewritten, and a faster evaluation, so it
 * is the new best. Returns the run; *best the child.
 */
static int64_t views_run(struct cuco_store *s, int64_t *best)
{
	static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
	struct cuco_design_space ds;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct cuco_evolve_opts o;
	struct cuco_program_rec p, child;
	struct cuco_parent edge = {0, "parent"};
	struct cuco_eval_rec e;
	struct fake_eval f;
	struct cuco_err err;
	struct cuco_strbuf code = CUCO_STRBUF_INIT;
	char *tmpl = read_all(FIXTURES "/mini.cu.in"), *seed = read_all(FIXTURES "/seed.cu");
	const char *line;
	int64_t run = 0, eid = 0;

	assert_non_null(tmpl);
	assert_non_null(seed);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 9; /* an ancestry with crossover partners in it */
	cfg.islands = 3;
	cfg.generations = 10;
	cfg.children_per_island = 4;
	cfg.population_size = 12;
	cfg.archive_size = 4;
	cfg.migration_interval = 2;
	fake_init(&f);
	memset(&o, 0, sizeof(o));
	o.store = s;
	o.workload = "mini";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed;
	o.template_text = tmpl;
	o.template_name = "mini.cu.in";
	o.evaluator = fake_evaluator(&f, 4);
	assert_int_equal(cuco_evolve_run(&o, &cfg, 0, &run, &fin, &err), CUCO_OK);
	assert_true(fin.best_program > 0);

	cuco_program_rec_init(&p);
	assert_int_equal(cuco_store_program_get(s, fin.best_program, &p, &err), CUCO_OK);
	line = strstr(p.code, "static int mini_blocks");
	assert_non_null(line);
	cuco_strbuf_add(&code, p.code, (size_t)(line - p.code));
	cuco_strbuf_adds(&code, "static int mini_blocks(int n) { return n / MINI_CHUNKS + "
	                        "(n % MINI_CHUNKS != 0); }");
	cuco_strbuf_adds(&code, strchr(line, '\n'));
	cuco_program_rec_init(&child);
	child.run_id = run;
	child.workload = "mini";
	child.name = "g11-i0-c0";
	child.origin = "candidate";
	child.operator_ = "llm-diff";
	child.code = code.buf;
	child.directive = p.directive;
	child.island = 0;
	child.generation = 11;
	edge.id = p.id;
	child.parents = &edge;
	child.nparents = 1;
	assert_int_equal(cuco_store_program_add(s, &child, best, &err), CUCO_OK);
	cuco_eval_rec_init(&e);
	e.program_id = *best;
	e.run_id = run;
	e.shape = "small";
	e.stage_reached = "bench";
	e.status = "ok";
	e.median_us = fin.best_us * 0.9;
	e.fitness = 1000.0 / e.median_us;
	assert_int_equal(cuco_store_eval_add(s, &e, &eid, &err), CUCO_OK);

	cuco_program_rec_release(&p);
	cuco_strbuf_release(&code);
	cuco_design_space_release(&ds);
	fake_release(&f);
	free(tmpl);
	free(seed);
	return run;
}

static void test_views(void **state)
{
	struct cuco_store *s = NULL;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT, want = CUCO_STRBUF_INIT;
	char *view, html[512], md[512], *keep = getenv("CUCO_TEST_REPORT_DIR");
	int64_t run, best, ids[512];
	struct anc a;
	int n;

	(void)state;
	snprintf(path, sizeof(path), "%s/views.db", dir);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	run = views_run(s, &best);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);

	/* Every evaluation: correct ones by island, failures by stage, as stored. */
	view = between(h.buf, "<h2>Every evaluation</h2>", "</svg>");
	assert_int_equal(count(view, "class=\"ev ok"),
	                 query_int("SELECT COUNT(*) FROM evaluations WHERE run_id = %lld AND "
	                           "status = 'ok' AND median_us > 0",
	                           (long long)run));
	assert_int_equal(
	    count(view, "class=\"ev "),
	    query_int("SELECT COUNT(*) FROM evaluations WHERE run_id = %lld", (long long)run));
	for (int k = 0; k < 3; k++) {
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(&want, "class=\"ev ok\" data-island=\"%d\"", k);
		assert_int_equal(
		    count(view, want.buf),
		    query_int("SELECT COUNT(*) FROM evaluations e JOIN programs p ON "
		              "p.id = e.program_id WHERE e.run_id = %lld AND e.status = "
		              "'ok' AND p.island = %d",
		              (long long)run, k));
	}
	{
		static const char *const stages[] = {"compile", "run", "verify", "bench"};
		int failed = 0;
		for (int k = 0; k < 4; k++) {
			int64_t nf =
			    query_int("SELECT COUNT(*) FROM evaluations WHERE run_id = %lld "
			              "AND status <> 'ok' AND stage_reached = '%s'",
			              (long long)run, stages[k]);
			cuco_strbuf_reset(&want);
			cuco_strbuf_addf(&want, "data-stage=\"%s\"", stages[k]);
			assert_int_equal(count(view, want.buf), nf);
			cuco_strbuf_reset(&want);
			cuco_strbuf_addf(&want, "failed at %s (%lld)", stages[k], (long long)nf);
			assert_true(nf ? strstr(view, want.buf) != NULL
			               : strstr(view, want.buf) == NULL);
			cuco_strbuf_reset(&want);
			cuco_strbuf_addf(&want, "| %s | %lld |\n", stages[k], (long long)nf);
			assert_non_null(strstr(m.buf, want.buf));
			failed += (int)nf;
		}
		/* the fake fails some at compile, some at run and some at verify */
		assert_true(failed > 0);
		assert_true(strstr(view, "data-stage=\"compile\"") != NULL);
	}
	assert_non_null(strstr(view, ">island 2</text>"));
	free(view);

	/* The ancestry: one node per ancestor, an edge per parent and partner. */
	ancestry(s, best, &a);
	view = between(h.buf, "<h3>Ancestry of the best program</h3>", "</svg>");
	assert_true(a.n >= 3 && a.cross_edges > 0);
	assert_int_equal(count(view, "<g class=\"node"), a.n);
	assert_int_equal(count(view, "<line class=\"edge parent\""), a.parent_edges);
	assert_int_equal(count(view, "<line class=\"edge crossover\""), a.cross_edges);
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "<g class=\"node best\" data-program=\"%lld\">", (long long)best);
	assert_non_null(strstr(view, want.buf));
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, ">program %lld (best)</text>", (long long)best);
	assert_non_null(strstr(view, want.buf));
	assert_non_null(strstr(view, ">llm-diff, island 0</text>"));
	for (int i = 0; i < a.n; i++) {
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(&want, "data-program=\"%lld\"", (long long)a.id[i]);
		assert_int_equal(count(view, want.buf), 1);
	}
	free(view);

	/* Seed to best: one step per parent edge of the chain, each with its changes. */
	n = chain(s, best, ids, 512);
	assert_true(n >= 3);
	view = between(h.buf, "<h2>Seed to best, step by step</h2>", "<h2>");
	assert_int_equal(count(view, "<div class=\"step\""), n - 1);
	for (int k = n - 1, step = 1; k > 0; k--, step++) {
		struct cuco_program_rec pa, pb;
		char *one;
		cuco_program_rec_init(&pa);
		cuco_program_rec_init(&pb);
		assert_int_equal(cuco_store_program_get(s, ids[k], &pa, &err), CUCO_OK);
		assert_int_equal(cuco_store_program_get(s, ids[k - 1], &pb, &err), CUCO_OK);
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(&want, "<div class=\"step\" data-step=\"%d\">", step);
		one = between(view, want.buf, "</div>");
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(&want, "program %lld &rarr; program %lld", (long long)pa.id,
		                 (long long)pb.id);
		assert_non_null(strstr(one, want.buf));
		assert_int_equal(count(one, "<tr class=\"dimension\">") +
		                     count(one, "<tr class=\"knob\">"),
		                 directive_changes(pa.directive, pb.directive));
		/* a diff of the step, never the whole program again */
		assert_true(count(one, "<span class=\"add\">") < 40);
		free(one);
		cuco_program_rec_release(&pa);
		cuco_program_rec_release(&pb);
	}
	/* The seed's step diffs the seed's rendering through the template, not the seed. */
	{
		struct cuco_program_rec root;
		cuco_program_rec_init(&root);
		assert_int_equal(cuco_store_program_get(s, ids[n - 1], &root, &err), CUCO_OK);
		if (!strcmp(root.name, "seed")) {
			int64_t realized =
			    query_int("SELECT id FROM programs WHERE run_id = %lld AND "
			              "name = 'seed-realized'",
			              (long long)run);
			assert_true(realized > 0);
			cuco_strbuf_reset(&want);
			cuco_strbuf_addf(&want, "<p>Code against program %lld (seed-realized",
			                 (long long)realized);
			assert_non_null(strstr(view, want.buf));
		}
		cuco_program_rec_release(&root);
	}
	/* The last step: the LLM's edit, one line inside the EVOLVE-BLOCK. */
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "<div class=\"step\" data-step=\"%d\">", n - 1);
	{
		char *last = between(view, want.buf, "</div>");
		assert_non_null(strstr(last, "<p>The same directive.</p>"));
		assert_non_null(strstr(last, "data-inside=\"2\" data-outside=\"0\""));
		assert_int_equal(count(last, "<span class=\"add\">"), 1);
		assert_int_equal(count(last, "<span class=\"del\">"), 1);
		assert_non_null(strstr(last,
		                       "<span class=\"add\">+static int mini_blocks(int n) "
		                       "{ return n / MINI_CHUNKS + (n % MINI_CHUNKS != 0); }"));
		free(last);
	}
	free(view);
	assert_non_null(strstr(m.buf, "## Seed to best, step by step"));
	assert_non_null(strstr(m.buf, "### Ancestry of the best program"));

	/* Well formed, and no script. */
	assert_int_equal(count(h.buf, "<svg"), count(h.buf, "</svg>"));
	assert_int_equal(count(h.buf, "<div"), count(h.buf, "</div>"));
	assert_int_equal(count(h.buf, "<svg"), 4);
	assert_null(strstr(h.buf, "<script"));
	for (const char *p = strchr(h.buf, '<'); p; p = strchr(p + 1, '<'))
		assert_true(p[1] == '/' || p[1] == '!' || (p[1] >= 'a' && p[1] <= 'z'));

	if (keep && *keep)
		assert_int_equal(
		    cuco_report_write(s, run, keep, html, sizeof(html), md, sizeof(md), &err),
		    CUCO_OK);
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_strbuf_release(&want);
	cuco_store_close(s);
	unlink(path);
	snprintf(html, sizeof(html), "%s-wal", path);
	unlink(html);
	snprintf(html, sizeof(html), "%s-shm", path);
	unlink(html);
}

/* An evaluator that cannot run anything, as on a node whose GPUs went away mid-run. */
static int evaluate_no_gpu(void *ctx, const struct cuco_candidate *c, struct cuco_eval_outcome *out,
                           struct cuco_err *err)
{
	(void)ctx;
	(void)c;
	(void)out;
	return cuco_err_set(err, CUCO_ERR_NO_GPU, "cascade: 0 CUDA GPUs here, 2 ranks need 2");
}

/* A run that fails keeps why: in the store, at the top of its report. */
static void test_failed_run(void **state)
{
	static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
	struct cuco_design_space ds;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct cuco_evolve_opts o;
	struct cuco_run_rec rr;
	struct cuco_store *s = NULL;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT;
	char *tmpl = read_all(FIXTURES "/mini.cu.in"), *seed = read_all(FIXTURES "/seed.cu");
	int64_t run = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/failed.db", dir);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	cuco_evolve_config_default(&cfg);
	cfg.generations = 2;
	memset(&o, 0, sizeof(o));
	o.store = s;
	o.workload = "mini";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed;
	o.template_text = tmpl;
	o.template_name = "mini.cu.in";
	o.evaluator.evaluate = evaluate_no_gpu;
	assert_int_equal(cuco_evolve_run(&o, &cfg, 0, &run, &fin, &err), CUCO_ERR_NO_GPU);
	assert_true(run > 0);
	cuco_run_rec_init(&rr);
	assert_int_equal(cuco_store_run_get(s, run, &rr, &err), CUCO_OK);
	assert_string_equal(rr.status, "failed");
	assert_non_null(rr.error);
	assert_non_null(strstr(rr.error, "0 CUDA GPUs here, 2 ranks need 2"));
	cuco_run_rec_release(&rr);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	assert_non_null(strstr(h.buf, "<p class=\"fail run-error\">The run failed: "));
	assert_non_null(strstr(h.buf, "0 CUDA GPUs here, 2 ranks need 2</p>"));
	assert_non_null(strstr(m.buf, "**The run failed:** "));
	assert_non_null(strstr(m.buf, "0 CUDA GPUs here, 2 ranks need 2\n"));

	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	free(tmpl);
	free(seed);
	unlink(path);
	snprintf(path, sizeof(path), "%s/failed.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/failed.db-shm", dir);
	unlink(path);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-views-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_views),
	    cmocka_unit_test(test_failed_run),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
