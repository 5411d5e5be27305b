/*
 * test_report.c - the report of an evolve run on a fixture store (the search
 * driven by the fake evaluator plus hand-inserted bench and re-check rows),
 * the line diff, and the re-check's pieces that need no GPU: the wrapper in
 * front of the harness (a fake harness and a fake sanitizer) and the
 * sanitizer verdict from run logs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cascade/cascade.h"
#include "report/report.h"
#include "search/evolve.h"
#include "search/recheck.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "search_fake.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/evolve"

static char dir[64];

static char *read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, path))
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

/* Insert a program of origin with one evaluation of median us; returns the program id. */
static int64_t bench_row(struct cuco_store *s, int64_t run, const char *name, const char *origin,
                         const char *status, double us)
{
	struct cuco_program_rec p;
	struct cuco_eval_rec e;
	struct cuco_err err;
	int64_t pid = 0, eid = 0;
	char code[128];

	snprintf(code, sizeof(code), "// %s\nint main(void) { return 0; }\n", name);
	cuco_program_rec_init(&p);
	p.run_id = run;
	p.workload = "mini";
	p.name = name;
	p.origin = origin;
	p.code = code;
	assert_int_equal(cuco_store_program_add(s, &p, &pid, &err), CUCO_OK);
	cuco_eval_rec_init(&e);
	e.program_id = pid;
	e.run_id = run;
	e.shape = "small";
	e.stage_reached = strcmp(status, "ok") ? "run" : "bench";
	e.status = status;
	e.median_us = us;
	assert_int_equal(cuco_store_eval_add(s, &e, &eid, &err), CUCO_OK);
	return pid;
}

/* An evolve run of "mini" at "small" through the fake f with cfg, from the fixtures; its id. */
static int64_t fake_run(struct cuco_store *s, struct cuco_design_space *ds,
                        const struct cuco_evolve_config *cfg, struct fake_eval *f,
                        struct cuco_evolve_progress *fin)
{
	static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
	struct cuco_evolve_opts o;
	struct cuco_err err;
	char *tmpl = read_all(FIXTURES "/mini.cu.in"), *seed = read_all(FIXTURES "/seed.cu");
	int64_t run = 0;

	assert_non_null(tmpl);
	assert_non_null(seed);
	memset(&o, 0, sizeof(o));
	o.store = s;
	o.workload = "mini";
	o.shape = "small";
	o.ds = ds;
	o.facts = &facts;
	o.seed_code = seed;
	o.template_text = tmpl;
	o.template_name = "mini.cu.in";
	o.evaluator = fake_evaluator(f, 4);
	assert_int_equal(cuco_evolve_run(&o, cfg, 0, &run, fin, &err), CUCO_OK);
	assert_true(fin->best_program > 0);
	free(tmpl);
	free(seed);
	return run;
}

/* A new store in the test directory, any older file of that name removed first. */
static struct cuco_store *fresh_store(const char *name)
{
	struct cuco_store *s = NULL;
	struct cuco_err err;
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	remove(path);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	return s;
}

/* A bench run of "mini" at "small" (config: NULL or JSON) with the manifest's programs, and
   a second peer 20 us slower and a second compute alone 10 % faster than the given ones. */
static void bench_run(struct cuco_store *s, const char *config, double base, double peer,
                      double compute, double comm)
{
	struct cuco_run_rec rr;
	struct cuco_err err;
	int64_t bench = 0;

	cuco_run_rec_init(&rr);
	rr.kind = "bench";
	rr.workload = "mini";
	rr.shape = "small";
	rr.config = config;
	assert_int_equal(cuco_store_run_begin(s, &rr, &bench, &err), CUCO_OK);
	bench_row(s, bench, "baseline", "baseline", "ok", base);
	bench_row(s, bench, "cublas_nccl", "peer", "ok", peer);
	bench_row(s, bench, "cublas_nccl_graph", "peer", "ok", peer + 20.0);
	bench_row(s, bench, "gemm_only", "compute", "ok", compute);
	bench_row(s, bench, "gemm_cublas", "compute", "ok", 0.9 * compute);
	bench_row(s, bench, "allgather_only", "comm", "ok", comm);
}

/* A run that evaluated nothing (stopped before its first batch) has a report, not a crash. */
static void test_report_no_evaluations(void **state)
{
	struct cuco_store *s;
	struct cuco_run_rec rr;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int64_t run = 0;

	(void)state;
	s = fresh_store("report-empty.db");
	cuco_run_rec_init(&rr);
	rr.kind = "evolve";
	rr.workload = "mini";
	rr.shape = "small";
	rr.config = "{\"search_seed\":1}";
	assert_int_equal(cuco_store_run_begin(s, &rr, &run, &err), CUCO_OK);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	assert_non_null(strstr(m.buf, "0 candidates evaluated"));
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_store_close(s);
}

/* The fixture: an evolve run through the fake evaluator, a bench run, a stored re-check. */
static int64_t fixture(struct cuco_store *s, struct cuco_design_space *ds, int64_t *best,
                       double *best_us)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_run_rec rr;
	struct cuco_eval_rec e;
	struct cuco_err err;
	char meta[512];
	int64_t run = 0, rc_run = 0, e1 = 0, e2 = 0;

	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 5;
	cfg.islands = 3;
	cfg.generations = 6;
	cfg.children_per_island = 4;
	cfg.population_size = 12;
	cfg.archive_size = 4;
	cfg.migration_interval = 2;
	cfg.summary_interval = 2;
	fake_init(&f);
	run = fake_run(s, ds, &cfg, &f, &fin);

	/* Bench rows: what `cuco bench` stores for the manifest's programs. */
	bench_run(s, NULL, 1000.0, 910.0, 520.0, 430.0);
	/* A later bench run timed in bursts: not comparable with a sustained search. */
	bench_run(s, "{\"timing\":\"burst\"}", 800.0, 707.0, 404.0, 303.0);

	/* A stored re-check: a clean fresh-seed check, a memcheck finding. */
	cuco_run_rec_init(&rr);
	rr.kind = "recheck";
	rr.workload = "mini";
	rr.shape = "small";
	assert_int_equal(cuco_store_run_begin(s, &rr, &rc_run, &err), CUCO_OK);
	cuco_eval_rec_init(&e);
	e.program_id = fin.best_program;
	e.run_id = rc_run;
	e.shape = "small";
	e.stage_reached = "bench";
	e.status = "ok";
	e.median_us = fin.best_us * 1.01;
	e.p90_us = 812.5;
	e.mean_us = 733.3;
	e.fitness = 1000.0 / e.median_us;
	assert_int_equal(cuco_store_eval_add(s, &e, &e1, &err), CUCO_OK);
	cuco_eval_rec_init(&e);
	e.program_id = fin.best_program;
	e.run_id = rc_run;
	e.shape = "small";
	e.stage_reached = "verify";
	e.status = "sanitizer";
	e.error_code = CUCO_ERR_VERIFY;
	e.error = "========= Invalid __global__ write of size 4 bytes\n"
	          "========= ERROR SUMMARY: 1 error";
	assert_int_equal(cuco_store_eval_add(s, &e, &e2, &err), CUCO_OK);
	snprintf(meta, sizeof(meta),
	         "{\"recheck_run\":%lld,\"program\":%lld,\"seed\":%llu,\"sanitized\":true,"
	         "\"passed\":false,\"checks\":[{\"check\":\"fresh-seed\",\"shape\":\"small\","
	         "\"evaluation\":%lld,\"status\":\"ok\"},{\"check\":\"memcheck\",\"shape\":"
	         "\"small\",\"evaluation\":%lld,\"status\":\"sanitizer\"}]}",
	         (long long)rc_run, (long long)fin.best_program,
	         (unsigned long long)cuco_recheck_seed(1), (long long)e1, (long long)e2);
	{
		char key[64];
		snprintf(key, sizeof(key), "run.%lld.recheck", (long long)run);
		assert_int_equal(cuco_store_meta_set(s, key, meta, &err), CUCO_OK);
	}
	*best = fin.best_program;
	*best_us = fin.best_us;
	return run;
}

/* Lineage length by the store's own parent edges ('parent' kind first). */
static int lineage_len(struct cuco_store *s, int64_t run, int64_t id)
{
	int n = 0;

	while (id) {
		struct cuco_program_rec p;
		struct cuco_err err;
		int64_t next = 0;
		cuco_program_rec_init(&p);
		assert_int_equal(cuco_store_program_get(s, id, &p, &err), CUCO_OK);
		if (p.run_id != run) {
			cuco_program_rec_release(&p);
			break;
		}
		n++;
		for (size_t i = 0; i < p.nparents && !next; i++)
			if (!p.parents[i].kind || !strcmp(p.parents[i].kind, "parent"))
				next = p.parents[i].id;
		if (!next && p.nparents)
			next = p.parents[0].id;
		id = next;
		cuco_program_rec_release(&p);
	}
	return n;
}

/* Shape "large": the fake's speed-up times 0.8 (its baseline is twice the primary's). */
static int slower_at_large(const struct cuco_directive *d, int k, double *fitness,
                           const char **stage, const char **status, const char **error)
{
	int code = fake_judge(d, fitness, stage, status, error);

	if (code == CUCO_OK && k == 1)
		*fitness *= 0.8;
	return code;
}

/*
 * A run over two shapes: the header says what the fitness covers, the best
 * program has a per-shape table, and the host baseline is the primary
 * shape's (1000 us), not latency * fitness (which a geometric mean breaks).
 */
static void test_report_shapes(void **state)
{
	struct cuco_design_space ds;
	struct cuco_store *s = NULL;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT, want = CUCO_STRBUF_INIT;
	int64_t run = 0, best_id = 0;
	double x, best_us, best_fit;

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	s = fresh_store("report-shapes.db");
	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 5;
	cfg.generations = 4;
	cfg.nshapes = 2;
	snprintf(cfg.shapes[0], sizeof(cfg.shapes[0]), "small");
	snprintf(cfg.shapes[1], sizeof(cfg.shapes[1]), "large");
	snprintf(cfg.max_connections, sizeof(cfg.max_connections), "1");
	fake_init(&f);
	f.nshapes = 2;
	f.shapes[0] = "small";
	f.shapes[1] = "large";
	f.at_shape = slower_at_large;
	run = fake_run(s, &ds, &cfg, &f, &fin);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);

	/* the header: which shapes the fitness covers; the title keeps the primary */
	assert_non_null(strstr(m.buf, "# cuco evolve run 1: mini at small\n"));
	/* the hardware queues the run was timed under, from its config */
	assert_non_null(strstr(m.buf, "- hardware queues: CUDA_DEVICE_MAX_CONNECTIONS=1\n"));
	assert_non_null(strstr(
	    h.buf, "<tr><td>hardware queues</td><td>CUDA_DEVICE_MAX_CONNECTIONS=1</td></tr>"));
	assert_non_null(strstr(m.buf,
	                       "- fitness: geometric mean over shapes small, large of "
	                       "baseline / latency (latencies at small, the primary shape)\n"));
	assert_non_null(strstr(h.buf, "<tr><td>fitness</td><td>geometric mean over shapes small, "
	                              "large"));
	/* the host baseline beside the candidates: the primary shape's */
	assert_non_null(strstr(m.buf, "| host baseline (beside the candidates) | 1000.0 us | "
	                              "1.000x |"));
	/* the best program at each shape: x at small, 0.8 x at large, geometric mean = fitness */
	x = 1000.0 / fin.best_us;
	assert_true(fabs(sqrt(x * 0.8 * x) - fin.best_fitness) < 1e-9);
	cuco_strbuf_addf(
	    &want,
	    "Fitness %.3f is the geometric mean of the speed-ups at the run's shapes:"
	    "\n\n| shape | latency | baseline latency | speed-up |\n|---|---|---|---|\n"
	    "| small | %.1f us | 1000.0 us | %.3fx |\n"
	    "| large | %.1f us | 2000.0 us | %.3fx |\n",
	    fin.best_fitness, fin.best_us, x, 2000.0 / (0.8 * x), 0.8 * x);
	assert_non_null(strstr(m.buf, want.buf));
	assert_int_equal(count(h.buf, "<table class=\"shapes\">"), 1);
	/* the island chart plots the primary shape and says the ranking is another */
	assert_non_null(strstr(m.buf, "Latencies at small, the primary shape. The run ranks by the "
	                              "geometric mean over shapes small, large, so its best "
	                              "program need not be the lowest line here.\n"));
	assert_non_null(strstr(h.buf, "<p>Latencies at small, the primary shape."));
	/* the re-check takes the best by the geometric mean too */
	assert_int_equal(cuco_recheck_best(s, run, &best_id, &best_us, &best_fit, &err), CUCO_OK);
	assert_int_equal(best_id, fin.best_program);
	assert_true(best_fit == fin.best_fitness);
	assert_true(best_us == fin.best_us);
	assert_int_equal(count(h.buf, "<table"), count(h.buf, "</table>"));
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_strbuf_release(&want);
	fake_release(&f);
}

/* A run that ends while its schedule still explores draws no phase line and says so. */
static void test_report_explored_throughout(void **state)
{
	struct cuco_design_space ds;
	struct cuco_store *s = NULL;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT;
	int64_t run;

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	s = fresh_store("report-explore.db");
	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 5;
	cfg.generations = 3;
	cfg.explore_fraction = 1; /* exploits from generation 4, which never comes */
	fake_init(&f);
	run = fake_run(s, &ds, &cfg, &f, &fin);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	assert_null(strstr(h.buf, "<line class=\"phase\""));
	assert_non_null(strstr(m.buf, "The run explored throughout: it ended before generation 4"));
	assert_null(strstr(m.buf, "Schedule: evaluations"));
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
}

/* A run ranked by the mean (--statistic mean): the report says so, and its latencies
   and the baseline are means (the fake's median + 5 us). */
static void test_report_statistic_mean(void **state)
{
	struct cuco_design_space ds;
	struct cuco_store *s = NULL;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT, want = CUCO_STRBUF_INIT;
	int64_t run;

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	s = fresh_store("report-mean.db");
	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 5;
	cfg.generations = 3;
	snprintf(cfg.statistic, sizeof(cfg.statistic), "mean");
	fake_init(&f);
	f.mean_extra = 5.0;
	run = fake_run(s, &ds, &cfg, &f, &fin);
	assert_true(fabs(fin.best_us - (1000.0 / fin.best_fitness + 5.0)) < 1e-6);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	assert_non_null(strstr(m.buf, "- latency: mean of the timed runs (--statistic mean)\n"));
	assert_non_null(strstr(m.buf, "| program | mean latency | speed-up vs host baseline |"));
	cuco_strbuf_addf(&want, "**%.1f us**, fitness %.3f.", fin.best_us, fin.best_fitness);
	assert_non_null(strstr(m.buf, want.buf));
	/* the baseline beside the candidates: the median over the evaluations of latency x
	   fitness, each by the mean (the fake's fitness ignores the 5 us: above 1000) */
	{
		const char *row = strstr(m.buf, "| host baseline (beside the candidates) | ");
		double base = 0;
		assert_non_null(row);
		assert_int_equal(
		    sscanf(row, "| host baseline (beside the candidates) | %lf us", &base), 1);
		assert_true(base > 1000.0 && base < 1000.0 + 5.0 * fin.best_fitness + 0.05);
		assert_non_null(
		    strstr(row, "median of the baseline's mean latencies the search took"));
	}
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_strbuf_release(&want);
}

/* The island chart's y axis spans the best-so-far curves: a correct but very slow
   candidate evaluated late must not stretch it (a real run's chart went flat that way). */
static void test_report_island_axis(void **state)
{
	struct cuco_design_space ds;
	struct cuco_store *s = NULL;
	struct cuco_eval_rec e;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT;
	int64_t run, best_id, id = 0;
	double best_us;

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	s = fresh_store("report-axis.db");
	run = fixture(s, &ds, &best_id, &best_us);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	assert_null(strstr(h.buf, ">4e+06<"));
	cuco_strbuf_reset(&h);
	cuco_strbuf_reset(&m);
	cuco_eval_rec_init(&e);
	e.program_id = best_id;
	e.run_id = run;
	e.shape = "small";
	e.stage_reached = "bench";
	e.status = "ok";
	e.median_us = 5e6;
	e.fitness = 1000.0 / e.median_us;
	assert_int_equal(cuco_store_eval_add(s, &e, &id, &err), CUCO_OK);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);
	/* the slow evaluation is in the run, but no y tick reaches toward 5e6 us */
	assert_int_equal(count(h.buf, "<polyline class=\"island\""), 3);
	assert_null(strstr(h.buf, "e+06<"));
	assert_null(strstr(h.buf, ">1e+06<"));
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
}

static void test_report_fixture(void **state)
{
	struct cuco_design_space ds;
	struct cuco_store *s = NULL;
	struct cuco_err err;
	struct cuco_strbuf h = CUCO_STRBUF_INIT, m = CUCO_STRBUF_INIT, h2 = CUCO_STRBUF_INIT,
	                   m2 = CUCO_STRBUF_INIT, want = CUCO_STRBUF_INIT;
	struct cuco_program_rec best;
	char path[128], html[512], md[512], *keep = getenv("CUCO_TEST_REPORT_DIR");
	int64_t run, best_id;
	double best_us;

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	snprintf(path, sizeof(path), "%s/report.db", dir);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	run = fixture(s, &ds, &best_id, &best_us);
	assert_int_equal(cuco_report_build(s, run, &h, &m, &err), CUCO_OK);

	/* One shape: no word on a primary one. */
	assert_null(strstr(m.buf, "the primary shape"));
	/* The best program and its latency. */
	cuco_strbuf_addf(&want, "Best program: <b>%lld</b>", (long long)best_id);
	assert_non_null(strstr(h.buf, want.buf));
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "<b>%.1f us</b>", best_us);
	assert_non_null(strstr(h.buf, want.buf));
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "Best program: **%lld**", (long long)best_id);
	assert_non_null(strstr(m.buf, want.buf));
	/* Peers and the ideal bound from the bench run: the faster compute, max(468, 430). */
	assert_non_null(strstr(h.buf, "peer: cublas_nccl"));
	assert_non_null(strstr(h.buf, "910.0 us"));
	assert_non_null(
	    strstr(m.buf, "| ideal bound: max(fastest compute alone, comm alone) | 468.0 us"));
	/* The best against the fastest peer (910, not 930), and its hidden fraction. */
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want,
	                 "Best against the fastest peer, cublas_nccl (910.0 us): %.3fx; hidden "
	                 "fraction %.2f (peer - best) / (peer - ideal bound).\n",
	                 910.0 / best_us, (910.0 - best_us) / (910.0 - 468.0));
	assert_non_null(strstr(m.buf, want.buf));
	assert_non_null(strstr(h.buf, "<p>Best against the fastest peer, cublas_nccl (910.0 us)"));
	assert_null(strstr(h.buf, "No bench run"));
	/* ... from the sustained bench run, not the later burst one. */
	assert_non_null(strstr(m.buf, "- timing: sustained"));
	assert_non_null(strstr(m.buf, "- hardware queues: CUDA's default (8)\n"));
	assert_non_null(strstr(m.buf, "(sustained timing)"));
	assert_null(strstr(h.buf, "707.0 us"));
	assert_null(strstr(h.buf, "404.0 us"));
	/* One polyline per island, three islands. */
	assert_int_equal(count(h.buf, "<polyline class=\"island\""), 3);
	assert_non_null(strstr(h.buf, "data-island=\"2\""));
	assert_int_equal(count(h.buf, "<svg"), count(h.buf, "</svg>"));
	assert_int_equal(count(h.buf, "<svg"), 4);
	assert_int_equal(count(h.buf, "<table"), count(h.buf, "</table>"));
	assert_int_equal(count(h.buf, "<pre"), count(h.buf, "</pre>"));
	/* Where the schedule turned: 6 generations explore 0.4, so 1-3 explore and 4
	   exploits; the line sits before the first evaluation of generation 4. */
	assert_int_equal(count(h.buf, "<line class=\"phase\""), 1);
	{
		char sql[256];
		snprintf(
		    sql, sizeof(sql),
		    "SELECT COUNT(*) FROM evaluations e JOIN programs p ON p.id = e.program_id "
		    "WHERE e.run_id = %lld AND p.generation < 4",
		    (long long)run);
		int64_t n = sql_int(path, sql);
		assert_true(n > 12);
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(&want,
		                 "Schedule: evaluations 1-%lld explore (generations up to 3), from "
		                 "evaluation %lld on the run exploits (generation 4 on).",
		                 (long long)n, (long long)n + 1);
		assert_non_null(strstr(m.buf, want.buf));
	}
	/* Lineage length as the store has it. */
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "<p>%d programs from the first ancestor",
	                 lineage_len(s, run, best_id));
	assert_non_null(strstr(h.buf, want.buf));
	assert_true(lineage_len(s, run, best_id) >= 2);
	/* Directive statistics and failures (the fake fails some on purpose). */
	assert_non_null(strstr(h.buf, "<h2>Directive values</h2>"));
	assert_non_null(strstr(m.buf, "| placement | stream_overlap |"));
	assert_non_null(strstr(h.buf, "<th>stage reached</th>"));
	/* The re-check: the sanitizer finding, escaped. */
	assert_non_null(strstr(h.buf, "FAILED"));
	assert_non_null(strstr(h.buf, "Invalid __global__ write of size 4 bytes"));
	assert_non_null(strstr(m.buf, "| memcheck | small | sanitizer | - | - | - | - |"));
	/* ...and the fresh-seed timing with its p90 and mean */
	cuco_strbuf_reset(&want);
	cuco_strbuf_addf(&want, "| fresh-seed | small | ok | %.1f us | 812.5 us | 733.3 us | ",
	                 best_us * 1.01);
	assert_non_null(strstr(m.buf, want.buf));
	assert_non_null(strstr(h.buf, "<th>median</th><th>p90</th><th>mean</th>"));
	/* `cuco recheck RUN` without running again prints the same */
	{
		char buf[2048] = "";
		FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
		assert_non_null(f);
		assert_int_equal(cuco_recheck_print(f, s, run, &err), CUCO_OK);
		fclose(f);
		assert_non_null(strstr(buf, "(p90 812.5, mean 733.3)"));
		assert_non_null(strstr(buf, "FAILED"));
	}
	/* ...and `cuco recheck RUN --json` the same as one object */
	{
		json_t *j = NULL, *c;
		size_t i;
		int fresh = 0;

		assert_int_equal(cuco_recheck_json(s, run, &j, &err), CUCO_OK);
		assert_true(json_is_true(json_object_get(j, "rechecked")));
		assert_true(json_is_false(json_object_get(j, "passed")));
		assert_int_equal(json_integer_value(json_object_get(j, "run")), run);
		json_array_foreach(json_object_get(j, "checks"), i, c)
		{
			if (strcmp(json_string_value(json_object_get(c, "check")), "fresh-seed"))
				continue;
			fresh++;
			assert_string_equal(json_string_value(json_object_get(c, "shape")),
			                    "small");
			assert_string_equal(json_string_value(json_object_get(c, "status")), "ok");
			assert_true(json_real_value(json_object_get(c, "p90_us")) == 812.5);
		}
		assert_int_equal(fresh, 1);
		json_decref(j);
		assert_int_equal(cuco_recheck_json(s, run + 1000, &j, &err), CUCO_OK);
		assert_true(json_is_false(json_object_get(j, "rechecked")));
		json_decref(j);
	}
	/* The diff against the seed has both kinds of lines. */
	assert_non_null(strstr(h.buf, "<span class=\"del\">-"));
	assert_non_null(strstr(h.buf, "<span class=\"add\">+"));
	assert_non_null(strstr(m.buf, "```diff\n@@ -"));
	/* Code is escaped: no raw '<' from it; every '<' in the HTML opens a tag or comment. */
	cuco_program_rec_init(&best);
	assert_int_equal(cuco_store_program_get(s, best_id, &best, &err), CUCO_OK);
	assert_non_null(strchr(best.code, '<'));
	for (const char *p = strchr(h.buf, '<'); p; p = strchr(p + 1, '<'))
		assert_true(p[1] == '/' || p[1] == '!' || (p[1] >= 'a' && p[1] <= 'z'));
	for (const char *l = best.code; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (memchr(l, '<', len) && len > 8) {
			char *line = strndup(l, len);
			assert_null(strstr(h.buf, line));
			cuco_strbuf_reset(&want);
			cuco_report_escape(&want, line);
			assert_non_null(strstr(h.buf, want.buf));
			free(line);
		}
		l += len + (nl ? 1 : 0);
	}
	cuco_program_rec_release(&best);
	/* Deterministic: the same store gives the same bytes. */
	assert_int_equal(cuco_report_build(s, run, &h2, &m2, &err), CUCO_OK);
	assert_string_equal(h.buf, h2.buf);
	assert_string_equal(m.buf, m2.buf);
	/* The files. */
	assert_int_equal(cuco_report_write(s, run, keep && *keep ? keep : dir, html, sizeof(html),
	                                   md, sizeof(md), &err),
	                 CUCO_OK);
	assert_int_equal(access(html, R_OK), 0);
	assert_int_equal(access(md, R_OK), 0);
	if (!(keep && *keep)) {
		unlink(html);
		unlink(md);
	}
	/* Contradictions between code and directive: none in the fixture, then one. */
	assert_non_null(strstr(h.buf, "<h2>Code that contradicts its directive</h2>\n<p>None "
	                              "flagged.</p>"));
	{
		struct cuco_program_rec f;
		int64_t fid;
		cuco_program_rec_init(&f);
		f.run_id = run;
		f.workload = "mini";
		f.name = "g9-i0-c0";
		f.origin = "candidate";
		f.operator_ = "llm-diff";
		f.code = "// flagged\n";
		f.flags = "directive says backend \"ce\" but <no> copy | at all\n";
		assert_int_equal(cuco_store_program_add(s, &f, &fid, &err), CUCO_OK);
		cuco_strbuf_reset(&h2);
		cuco_strbuf_reset(&m2);
		assert_int_equal(cuco_report_build(s, run, &h2, &m2, &err), CUCO_OK);
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(
		    &want,
		    "<tr><td>%lld g9-i0-c0</td><td>llm-diff</td><td class=\"num\">-</td>"
		    "<td>directive says backend &quot;ce&quot; but &lt;no&gt; copy | at all",
		    (long long)fid);
		assert_non_null(strstr(h2.buf, "1 programs were accepted with code that does not"));
		assert_non_null(strstr(h2.buf, want.buf));
		cuco_strbuf_reset(&want);
		cuco_strbuf_addf(
		    &want,
		    "| %lld g9-i0-c0 | llm-diff | - | directive says backend \"ce\" but "
		    "<no> copy \\| at all  |",
		    (long long)fid);
		assert_non_null(strstr(m2.buf, want.buf));
	}
	/* Not an evolve run. */
	assert_int_equal(cuco_report_build(s, run + 1, &h2, &m2, &err), CUCO_ERR_INVALID);

	cuco_strbuf_release(&h);
	cuco_strbuf_release(&m);
	cuco_strbuf_release(&h2);
	cuco_strbuf_release(&m2);
	cuco_strbuf_release(&want);
	cuco_store_close(s);
	cuco_design_space_release(&ds);
	unlink(path);
	snprintf(html, sizeof(html), "%s-wal", path);
	unlink(html);
	snprintf(html, sizeof(html), "%s-shm", path);
	unlink(html);
}

static void test_diff(void **state)
{
	struct cuco_strbuf d = CUCO_STRBUF_INIT;

	(void)state;
	cuco_report_diff("a\nb\nc\n", "a\nb\nc\n", &d);
	assert_int_equal(d.len, 0);
	cuco_report_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n10\n", &d);
	assert_string_equal(d.buf, "@@ -2,8 +2,9 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n 9\n+10\n");
	cuco_strbuf_reset(&d);
	/* Two changes far apart: two hunks. */
	cuco_report_diff("a\n1\n2\n3\n4\n5\n6\n7\n8\n9\nz\n", "A\n1\n2\n3\n4\n5\n6\n7\n8\n9\nZ\n",
	                 &d);
	assert_int_equal(count(d.buf, "@@ -"), 2);
	assert_non_null(strstr(d.buf, "@@ -1,4 +1,4 @@\n-a\n+A\n 1\n"));
	cuco_strbuf_reset(&d);
	cuco_report_diff("", "new\n", &d);
	assert_string_equal(d.buf, "@@ -0,0 +1,1 @@\n+new\n");
	cuco_strbuf_release(&d);
}

static void test_escape(void **state)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	(void)state;
	cuco_report_escape(&sb, "k<<<g, b>>>(a && \"x\" || 'y');");
	assert_string_equal(
	    sb.buf, "k&lt;&lt;&lt;g, b&gt;&gt;&gt;(a &amp;&amp; &quot;x&quot; || &#39;y&#39;);");
	cuco_strbuf_release(&sb);
}

/* Fixture logs, as cuco_run_programs() leaves them with a wrapper. */
static const char log_clean[] = "rank 0: ok\n"
                                "========= COMPUTE-SANITIZER\n"
                                "========= ERROR SUMMARY: 0 errors\n";
static const char log_memcheck[] =
    "========= COMPUTE-SANITIZER\n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at overlap_kernel(float *, int)+0x1b0 in seed.cu:88\n"
    "=========     by thread (0,0,0) in block (3,0,0)\n"
    "========= \n"
    "========= ERROR SUMMARY: 1 error\n"
    "cuco: wrapper exited with code 86\n";
static const char log_racecheck[] =
    "========= COMPUTE-SANITIZER\n"
    "========= Error: Race reported between Write access at 0x1a0 in k(float*)\n"
    "=========     and Read access at 0x2c0 in k(float*) [1024 hazards]\n"
    "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
    "========= ERROR SUMMARY: 1 error\n";
/* racecheck on H200 with cuBLAS: hazards inside its nvjet kernel only (as seen for cublas_nccl). */
static const char log_race_vendor[] =
    "========= COMPUTE-SANITIZER\n"
    "========= Error: Race reported between Read access at "
    "nvjet_sm90_tst_64x64_64x13_2x1_v_bz_NNT+0xab0\n"
    "=========     and Write access at nvjet_sm90_tst_64x64_64x13_2x1_v_bz_NNT+0xc40 [64 hazards]\n"
    "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
    "cuco: wrapper exited with code 86\n";
static const char log_race_mixed[] =
    "========= Error: Race reported between Read access at nvjet_sm90_tst_64x64+0xab0\n"
    "=========     and Write access at nvjet_sm90_tst_64x64+0xc40 [64 hazards]\n"
    "========= Error: Race reported between Write access at "
    "cuco::overlap_push_kernel(ncclDevComm)+0x1a0\n"
    "=========     and Read access at cuco::overlap_push_kernel(ncclDevComm)+0x2c0 [8 hazards]\n"
    "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n"
    "cuco: wrapper exited with code 86\n";
static const char log_vendor_race_and_oob[] =
    "========= Error: Race reported between Read access at nvjet_sm90_tst_64x64+0xab0\n"
    "=========     and Write access at nvjet_sm90_tst_64x64+0xc40 [64 hazards]\n"
    "========= Invalid __global__ write of size 4 bytes\n"
    "=========     at overlap_kernel(float *, int)+0x1b0 in seed.cu:88\n"
    "========= ERROR SUMMARY: 2 errors\n";
/* as racecheck printed it at 8192^3 (2026-11-30): one report with no location */
static const char log_race_vendor_unnamed[] =
    "========= Error: Race reported between Read access at nvjet_sm90_tst_64x32+0xaf0\n"
    "=========     and Write access at nvjet_sm90_tst_64x32+0x29b0 [512 hazards]\n"
    "========= \n"
    "========= Error: Race reported between Read access at \n"
    "=========     and Write access at  [512 hazards]\n"
    "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n"
    "cuco: wrapper exited with code 86\n";
static const char log_race_unnamed[] =
    "========= Error: Race reported between Read access at \n"
    "=========     and Write access at  [512 hazards]\n"
    "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
    "cuco: wrapper exited with code 86\n";
static const char log_exit_only[] = "cuco: wrapper exited with code 86\n";
static const char log_crash[] = "========= ERROR SUMMARY: 0 errors\n"
                                "cuco: wrapper exited with code 1\n";

static void test_sanitizer_verdict(void **state)
{
	struct cuco_strbuf sum = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_clean, NULL), 0);
	assert_int_equal(cuco_recheck_sanitizer_verdict(NULL, NULL), 0);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_crash, NULL), 0);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_exit_only, NULL), 1);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_racecheck, &sum), 1);
	assert_non_null(strstr(sum.buf, "Race reported"));
	assert_non_null(strstr(sum.buf, "ERROR SUMMARY: 1 error"));
	cuco_strbuf_reset(&sum);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_memcheck, &sum), 1);
	assert_non_null(strstr(sum.buf, "Invalid __global__ write of size 4 bytes\n"));
	assert_non_null(strstr(sum.buf, "ERROR SUMMARY: 1 error\n"));
	assert_non_null(strstr(sum.buf, "exited with code 86"));
	assert_null(strstr(sum.buf, "COMPUTE-SANITIZER"));
	cuco_strbuf_reset(&sum);
	/* races only inside cuBLAS's kernel: set aside, and said so */
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_race_vendor, &sum), 0);
	assert_non_null(strstr(sum.buf, "Race reported"));
	assert_non_null(strstr(sum.buf, "set aside: 1 race reports, all inside vendor kernels "
	                                "(nvjet_sm90_tst_64x64_64x13_2x1_v_bz_NNT"));
	cuco_strbuf_reset(&sum);
	/* ...but not a race in cuco's kernel beside them, nor a memcheck finding */
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_race_mixed, &sum), 1);
	assert_null(strstr(sum.buf, "vendor kernels"));
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_vendor_race_and_oob, NULL), 1);
	/* a race racecheck printed without a location: with the library's beside
	 * located vendor races, said so; alone, a failure */
	cuco_strbuf_reset(&sum);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_race_vendor_unnamed, &sum), 0);
	assert_non_null(strstr(sum.buf,
	                       "set aside: 2 race reports, all inside vendor kernels "
	                       "(nvjet_sm90_tst_64x32...) but 1 racecheck printed without a "
	                       "location, not the candidate's code"));
	cuco_strbuf_reset(&sum);
	assert_int_equal(cuco_recheck_sanitizer_verdict(log_race_unnamed, &sum), 1);
	assert_null(strstr(sum.buf, "set aside"));
	cuco_strbuf_release(&sum);
	/* A fresh seed differs from the search's and is stable. */
	assert_true(cuco_recheck_seed(1) != 1);
	assert_true(cuco_recheck_seed(1) == cuco_recheck_seed(1));
	assert_true(cuco_recheck_seed(2) != cuco_recheck_seed(1));
}

static void write_script(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0755);
}

/* The wrapper goes in front of the harness, its lines and exit code reach the run log. */
/* The re-check's note on runs far above their median: numbers of a 2026-11-30 run. */
static void test_spread_note(void **state)
{
	struct cuco_program_result r;
	char buf[160] = "untouched";

	(void)state;
	memset(&r, 0, sizeof(r));
	r.code = CUCO_OK;
	/* a device-signal program with its every-8th-run slow mode, 8192^3 */
	r.median_us = 750.2;
	r.p90_us = 826.5;
	r.mean_us = 767.7;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 1);
	assert_string_equal(buf,
	                    "slow runs: mean 767.7 us, p90 826.5 us against a median of 750.2 us");
	/* its CUDA-graph version: mean 1.5 us over the median, no note */
	snprintf(buf, sizeof(buf), "untouched");
	r.median_us = 752.2;
	r.p90_us = 758.0;
	r.mean_us = 753.7;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
	/* 2048^3 noise: 7 % over the median but under the 5 us floor */
	r.median_us = 68.1;
	r.p90_us = 75.7;
	r.mean_us = 72.8;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 0);
	/* 16384^3: 6 us over, but under 1 % of the median */
	r.median_us = 5609.1;
	r.p90_us = 5620.0;
	r.mean_us = 5615.1;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 0);
	/* not timed, or failed: nothing */
	r.mean_us = NAN;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 0);
	r.mean_us = 9000;
	r.code = CUCO_ERR_VERIFY;
	assert_int_equal(cuco_recheck_spread_note(&r, buf, sizeof(buf)), 0);
	assert_int_equal(cuco_recheck_spread_note(NULL, buf, sizeof(buf)), 0);
}

/* The re-check's note on a shape where the best lost to the baseline (a 2026-12-01 run). */
static void test_slower_note(void **state)
{
	char buf[320] = "untouched";

	(void)state;
	/* 46.4 us at 2048 against 45.7 for the baseline; the search judged 8192 */
	assert_int_equal(cuco_recheck_slower_note(46.4, 45.7, "2048", "8192", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "slower than the host baseline (45.7 us); the search judged 8192 "
	                         "only: --shape 2048 adds this shape to the fitness");
	/* a judged shape: no advice to add it */
	assert_int_equal(
	    cuco_recheck_slower_note(46.4, 45.7, "2048", "8192,2048", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "slower than the host baseline (45.7 us)");
	/* a name that only starts like a judged one is not judged */
	assert_int_equal(cuco_recheck_slower_note(46.4, 45.7, "204", "2048", buf, sizeof(buf)), 1);
	assert_non_null(strstr(buf, "--shape 204 adds"));
	/* unknown list: the plain note */
	assert_int_equal(cuco_recheck_slower_note(46.4, 45.7, "2048", NULL, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "slower than the host baseline (45.7 us)");
	/* faster, equal, or a missing figure: nothing, buf untouched */
	snprintf(buf, sizeof(buf), "untouched");
	assert_int_equal(cuco_recheck_slower_note(726.9, 913.2, "8192", "8192", buf, sizeof(buf)),
	                 0);
	assert_int_equal(cuco_recheck_slower_note(45.7, 45.7, "2048", "8192", buf, sizeof(buf)), 0);
	assert_int_equal(cuco_recheck_slower_note(46.4, NAN, "2048", "8192", buf, sizeof(buf)), 0);
	assert_int_equal(cuco_recheck_slower_note(NAN, 45.7, "2048", "8192", buf, sizeof(buf)), 0);
	assert_int_equal(cuco_recheck_slower_note(46.4, 0, "2048", "8192", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
}

/* Which shapes a run judged, from its stored config. */
static void test_recheck_searched(void **state)
{
	char buf[32];

	(void)state;
	cuco_recheck_searched("{\"search_seed\":18,\"shapes\":[\"8192\",\"2048\"]}", "8192", buf,
	                      sizeof(buf));
	assert_string_equal(buf, "8192,2048");
	/* a config from before several shapes: the run's own shape */
	cuco_recheck_searched("{\"search_seed\":1}", "4096", buf, sizeof(buf));
	assert_string_equal(buf, "4096");
	cuco_recheck_searched(NULL, "4096", buf, sizeof(buf));
	assert_string_equal(buf, "4096");
	/* 31 characters and the NUL fill the buffer exactly */
	cuco_recheck_searched("{\"shapes\":[\"16384x4096x8192\",\"4096x16384x4096\"]}", "2048", buf,
	                      sizeof(buf));
	assert_string_equal(buf, "16384x4096x8192,4096x16384x4096");
	/* too long to fit, or not names: nothing rather than a wrong list */
	cuco_recheck_searched("{\"shapes\":[\"16384x4096x8192\",\"4096x16384x4096\",\"2048\"]}",
	                      "2048", buf, sizeof(buf));
	assert_string_equal(buf, "");
	cuco_recheck_searched("{\"shapes\":[8192]}", "8192", buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static void test_wrapper_argv(void **state)
{
	struct cuco_run_opts o;
	struct cuco_manifest m;
	struct cuco_shape shape;
	struct cuco_run_program prog = {"best", "/nonexistent/best.so", 1};
	struct cuco_run_result res;
	struct cuco_err err;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT, sum = CUCO_STRBUF_INIT;
	char harness[128], wrap[128], argv_file[128], wrapper[512], *args;

	(void)state;
	snprintf(harness, sizeof(harness), "%s/fake-harness.sh", dir);
	snprintf(wrap, sizeof(wrap), "%s/fake-sanitizer.sh", dir);
	snprintf(argv_file, sizeof(argv_file), "%s/argv.txt", dir);
	write_script(harness,
	             "#!/bin/sh\n"
	             "echo '{\"harness\":1,\"status\":\"ok\",\"gpu\":\"fake\",\"programs\":"
	             "[{\"name\":\"best\",\"status\":\"ok\",\"verified\":true,"
	             "\"rel_err\":0,\"median_us\":5.0}]}' >&3\n");
	cuco_strbuf_addf(&sb,
	                 "#!/bin/sh\necho \"$@\" > %s\nshift 4\n\"$@\"\n"
	                 "echo '========= COMPUTE-SANITIZER'\n"
	                 "echo '========= Invalid __global__ read of size 8 bytes'\n"
	                 "echo '========= ERROR SUMMARY: 3 errors'\nexit 86\n",
	                 argv_file);
	write_script(wrap, sb.buf);
	setenv("CUCO_HARNESS", harness, 1);
	/* the stand-in wrapper writes its argv beside the test, outside a run's read-only view */
	setenv("CUCO_SANDBOX_RUN_JAIL", "0", 1);
	memset(&m, 0, sizeof(m));
	m.name = "mini";
	m.tolerance = 0.01;
	memset(&shape, 0, sizeof(shape));
	snprintf(shape.name, sizeof(shape.name), "small");
	cuco_run_opts_default(&o);
	o.timeout_s = 5;
	snprintf(wrapper, sizeof(wrapper), "/bin/sh %s --tool memcheck --target-processes all",
	         wrap);
	o.wrapper = wrapper;
	cuco_run_result_init(&res);
	if (cuco_run_programs(&o, &m, "/nonexistent/wl.so", &shape, &prog, 1, &res, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(res.nresults, 1);
	assert_int_equal(res.results[0].code, CUCO_OK);
	args = read_all(argv_file);
	assert_non_null(args);
	/* The wrapper's own arguments, then the harness command as without it. */
	cuco_strbuf_reset(&sb);
	cuco_strbuf_addf(&sb, "--tool memcheck --target-processes all %s --workload-so ", harness);
	assert_true(!strncmp(args, sb.buf, sb.len));
	assert_non_null(strstr(args, "--ranks 2"));
	assert_non_null(strstr(args, "--program best=/nonexistent/best.so"));
	free(args);
	assert_non_null(strstr(res.log.buf, "========= ERROR SUMMARY: 3 errors"));
	assert_non_null(strstr(res.log.buf, "cuco: wrapper exited with code 86"));
	assert_int_equal(cuco_recheck_sanitizer_verdict(res.log.buf, &sum), 1);
	assert_non_null(strstr(sum.buf, "Invalid __global__ read of size 8 bytes"));
	cuco_run_result_release(&res);

	/* Without a wrapper the harness is argv[0] and the log has no sanitizer lines. */
	unlink(argv_file);
	o.wrapper = NULL;
	cuco_run_result_init(&res);
	assert_int_equal(
	    cuco_run_programs(&o, &m, "/nonexistent/wl.so", &shape, &prog, 1, &res, &err), CUCO_OK);
	assert_int_equal(access(argv_file, F_OK), -1);
	assert_null(strstr(res.log.buf, "========="));
	cuco_run_result_release(&res);
	unsetenv("CUCO_HARNESS");
	unsetenv("CUCO_SANDBOX_RUN_JAIL");
	unlink(harness);
	unlink(wrap);
	cuco_strbuf_release(&sb);
	cuco_strbuf_release(&sum);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-report-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char p[128];

	(void)state;
	snprintf(p, sizeof(p), "%s/argv.txt", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_no_evaluations),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_diff),
	    cmocka_unit_test(test_sanitizer_verdict),
	    cmocka_unit_test(test_spread_note),
	    cmocka_unit_test(test_slower_note),
	    cmocka_unit_test(test_recheck_searched),
	    cmocka_unit_test(test_wrapper_argv),
	    cmocka_unit_test(test_report_fixture),
	    cmocka_unit_test(test_report_island_axis),
	    cmocka_unit_test(test_report_explored_throughout),
	    cmocka_unit_test(test_report_shapes),
	    cmocka_unit_test(test_report_statistic_mean),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
