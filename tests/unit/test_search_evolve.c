/*
 * test_search_evolve.c - the evolution loop through a fake evaluator: a whole
 * run, repeatability, batching, budgets, Ctrl-C, resume after SIGKILL, the
 * same for the pipelined loop (generation g+1 bred and prefetched before g is
 * evaluated), and the statistical summary on a fixture store.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cascade/cascade.h"
#include "search/evolve.h"
#include "search/operator.h"
#include "search/summary.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "search_fake.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/evolve"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char *tmpl, *seed;
static char dir[64];

static char *read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, path))
		return NULL;
	return cuco_strbuf_detach(&sb, NULL);
}

static int setup(void **state)
{
	struct cuco_err err;

	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	tmpl = read_all(FIXTURES "/mini.cu.in");
	seed = read_all(FIXTURES "/seed.cu");
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-evolve-XXXXXX");
	if (!tmpl || !seed || !mkdtemp(dir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	struct dirent *de;
	char file[512];
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
			unlink(file);
		}
		closedir(d);
	}
	rmdir(dir);
	free(tmpl);
	free(seed);
	cuco_design_space_release(&ds);
	return 0;
}

static void store_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s.db", dir, name);
	unlink(out);
	snprintf(out + strlen(out), size - strlen(out), "-wal");
	unlink(out);
	out[strlen(out) - 4] = '\0';
}

static void small_config(struct cuco_evolve_config *cfg)
{
	cuco_evolve_config_default(cfg);
	cfg->search_seed = 5;
	cfg->islands = 3;
	cfg->generations = 8;
	cfg->children_per_island = 4;
	cfg->population_size = 12;
	cfg->archive_size = 4;
	cfg->migration_interval = 2;
	cfg->summary_interval = 2;
	cfg->stagnation_generations = 3;
}

static void default_opts(struct cuco_evolve_opts *o, struct cuco_store *s, struct cuco_evaluator ev,
                         int with_template)
{
	memset(o, 0, sizeof(*o));
	o->store = s;
	o->workload = "mini";
	o->shape = "small";
	o->ds = &ds;
	o->facts = &facts;
	o->seed_code = seed;
	o->template_text = with_template ? tmpl : NULL;
	o->template_name = "mini.cu.in";
	o->evaluator = ev;
}

/* Run (or resume) an evolution in the store at path; returns cuco_evolve_run's code. */
static int run_in(const char *path, const struct cuco_evolve_config *cfg, struct fake_eval *f,
                  int max_batch, int with_template, int64_t resume, volatile sig_atomic_t *stop,
                  void (*progress)(void *, const struct cuco_evolve_progress *),
                  struct cuco_evolve_progress *final)
{
	struct cuco_store *s = NULL;
	struct cuco_evolve_opts o;
	struct cuco_err err;
	int64_t run_id = 0;
	int rc;

	if (cuco_store_open(path, &s, &err))
		return -1;
	default_opts(&o, s, fake_evaluator(f, max_batch), with_template);
	o.stop = stop;
	o.progress = progress;
	o.progress_arg = (void *)stop;
	rc = cuco_evolve_run(&o, cfg, resume, &run_id, final, &err);
	if (rc)
		fprintf(stderr, "evolve: %s\n", err.msg);
	cuco_store_close(s);
	return rc;
}

static char *sql_text(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *v = NULL;

	if (sqlite3_open(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The run's candidates as text, one line each: what two runs must agree on. */
static int add_line(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct cuco_strbuf *sb = arg;

	cuco_strbuf_addf(sb, "%lld g%lld i%lld %s %s %s %s", (long long)p->id,
	                 (long long)p->generation, (long long)p->island, p->name, p->operator_,
	                 p->hash, p->directive ? p->directive : "-");
	for (size_t i = 0; i < p->nparents; i++)
		cuco_strbuf_addf(sb, " %s:%lld", p->parents[i].kind, (long long)p->parents[i].id);
	cuco_strbuf_addch(sb, '\n');
	return 0;
}

static char *sequence(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_store *s = NULL;
	struct cuco_err err;

	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	assert_int_equal(cuco_store_program_each(s, 1, add_line, &sb, &err), CUCO_OK);
	cuco_store_close(s);
	return cuco_strbuf_detach(&sb, NULL);
}

/* The run in path bred the same candidates, in the same order, as the run in ref. */
static void assert_same_sequence(const char *ref, const char *path)
{
	char *sa = sequence(ref), *sb = sequence(path);

	assert_string_equal(sa, sb);
	free(sa);
	free(sb);
}

/* Checks that hold for every finished run in path. */
static void check_run_rows(const char *path)
{
	/* every candidate has exactly one evaluation */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs p WHERE (SELECT COUNT(*) "
	                               "FROM evaluations e WHERE e.program_id = p.id) != 1"),
	                 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs WHERE origin != 'candidate' "
	                               "OR run_id != 1 OR directive IS NULL"),
	                 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs WHERE operator NOT IN "
	                               "('init', 'mutate', 'crossover')"),
	                 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM program_parents WHERE kind NOT IN "
	                               "('parent', 'inspiration', 'crossover')"),
	                 0);
	/* every bred child names exactly one parent; crossovers name their partner */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs p WHERE operator != 'init' "
	                               "AND (SELECT COUNT(*) FROM program_parents q WHERE "
	                               "q.program_id = p.id AND q.kind = 'parent') != 1"),
	                 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs p WHERE operator = "
	                               "'crossover' AND NOT EXISTS (SELECT 1 FROM program_parents "
	                               "q WHERE q.program_id = p.id AND q.kind = 'crossover')"),
	                 0);
	/* parents come from earlier generations */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM program_parents q JOIN programs c ON "
	                               "c.id = q.program_id JOIN programs p ON p.id = q.parent_id "
	                               "WHERE p.generation >= c.generation"),
	                 0);
	/* no code twice */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) - COUNT(DISTINCT hash) FROM programs"), 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND "
	                               "(fitness IS NULL OR fitness <= 0)"),
	                 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE status != 'ok' AND "
	                               "fitness != 0"),
	                 0);
	/* every evaluation names the GPU it ran on (the report shows it) */
	assert_int_equal(
	    sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE gpu IS NOT 'Fake GPU'"), 0);
}

/* Every stored directive is valid against the design space and the facts. */
static int check_directive(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct cuco_directive d;
	int *bad = arg;

	if (cuco_directive_from_json(p->directive, &d, err) ||
	    cuco_directive_validate(&d, &ds, &facts, err)) {
		fprintf(stderr, "program %lld: %s\n", (long long)p->id, err->msg);
		(*bad)++;
		return 0;
	}
	if (strcmp(p->name, "seed")) { /* the code realizes the directive */
		struct cuco_directive back;
		if (cuco_directive_parse("c.cu", p->code, &back, err) ||
		    !cuco_directive_equal(&d, &back))
			(*bad)++;
		cuco_directive_release(&back);
	}
	cuco_directive_release(&d);
	return 0;
}

static void test_evolve_run(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_store *s;
	struct cuco_err err;
	char path[256], *status, *config;
	int bad = 0;
	int64_t n;

	store_path(path, sizeof(path), "run");
	small_config(&cfg);
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	check_run_rows(path);
	n = sql_int(path, "SELECT COUNT(*) FROM programs");
	/* seed + its rendering, then 3 islands x 4 children x 8 generations */
	assert_int_equal(n, 2 + 3 * 4 * 8);
	assert_int_equal(fin.evaluated, n);
	assert_int_equal(f.calls, n);
	assert_int_equal(fin.correct + fin.failed_compile + fin.failed_run + fin.failed_verify +
	                     fin.failed_bench,
	                 n);
	assert_int_equal(fin.correct,
	                 sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'"));
	assert_int_equal(
	    fin.failed_compile,
	    sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE stage_reached = 'compile'"));
	assert_int_equal(
	    fin.failed_timeout,
	    sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE status = 'timeout'"));
	assert_true(fin.failed_compile > 0); /* exploration tried fused_consumer */
	assert_string_equal(fin.stop_reason, "generations");
	assert_false(fin.interrupted);
	/* the search found better than the seed (fitness 0.97: sequential, 32 CTAs) */
	assert_true(fin.best_fitness > 1.4);
	assert_true(fabs(fin.best_us - 1000.0 / fin.best_fitness) < 1e-6);
	assert_true(fin.baseline_us == 1000.0);
	/* every island bred on every generation; initial programs are on no single island */
	assert_int_equal(
	    sql_int(path, "SELECT COUNT(DISTINCT island) FROM programs WHERE generation > 0"), 3);
	assert_int_equal(
	    sql_int(path, "SELECT COUNT(*) FROM programs WHERE generation = 0 AND island IS NULL"),
	    2);
	assert_int_equal(sql_int(path, "SELECT COUNT(DISTINCT generation) FROM programs"), 9);
	/* both operators were used */
	assert_true(sql_int(path, "SELECT COUNT(*) FROM programs WHERE operator = 'crossover'") >
	            0);
	assert_true(sql_int(path, "SELECT COUNT(*) FROM programs WHERE operator = 'mutate'") > 0);
	assert_true(
	    sql_int(path, "SELECT COUNT(*) FROM program_parents WHERE kind = 'inspiration'") > 0);
	/* a statistical summary every 2 generations */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM summaries WHERE kind = 'statistical'"),
	                 4);
	assert_int_equal(sql_int(path, "SELECT MIN(generation) FROM summaries"), 2);
	status = sql_text(path, "SELECT status FROM runs WHERE id = 1");
	assert_string_equal(status, "done");
	free(status);
	config = sql_text(path, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(config, "\"search_seed\":5"));
	{
		struct cuco_evolve_config back;
		cuco_evolve_config_default(&back);
		assert_int_equal(cuco_evolve_config_from_json(config, &back, &err), CUCO_OK);
		assert_int_equal(back.search_seed, 5);
		assert_int_equal(back.islands, 3);
		assert_true(back.migration_rate == cfg.migration_rate);
		assert_string_equal(back.timing, "sustained");
	}
	{
		/* the timing: kept, read as sustained when absent, refused when unknown */
		struct cuco_evolve_config c2;
		char *j;
		cuco_evolve_config_default(&c2);
		snprintf(c2.timing, sizeof(c2.timing), "burst");
		j = cuco_evolve_config_to_json(&c2);
		assert_non_null(strstr(j, "\"timing\":\"burst\""));
		cuco_evolve_config_default(&c2);
		assert_int_equal(cuco_evolve_config_from_json(j, &c2, &err), CUCO_OK);
		assert_string_equal(c2.timing, "burst");
		free(j);
		assert_int_equal(cuco_evolve_config_from_json("{\"search_seed\":2}", &c2, &err),
		                 CUCO_OK);
		assert_string_equal(c2.timing, "sustained");
		assert_int_equal(cuco_evolve_config_from_json("{\"timing\":\"fast\"}", &c2, &err),
		                 CUCO_ERR_PARSE);
		assert_non_null(strstr(err.msg, "timing"));
	}
	{
		/* the statistic: "mean" kept, absent (and the default) the median, refused when
		   unknown */
		struct cuco_evolve_config c2;
		char *j;
		cuco_evolve_config_default(&c2);
		assert_string_equal(c2.statistic, "median");
		snprintf(c2.statistic, sizeof(c2.statistic), "mean");
		j = cuco_evolve_config_to_json(&c2);
		assert_non_null(strstr(j, "\"statistic\":\"mean\""));
		cuco_evolve_config_default(&c2);
		assert_int_equal(cuco_evolve_config_from_json(j, &c2, &err), CUCO_OK);
		assert_string_equal(c2.statistic, "mean");
		free(j);
		assert_int_equal(cuco_evolve_config_from_json("{\"search_seed\":2}", &c2, &err),
		                 CUCO_OK);
		assert_string_equal(c2.statistic, "median");
		assert_int_equal(cuco_evolve_config_from_json("{\"statistic\":\"p99\"}", &c2, &err),
		                 CUCO_ERR_PARSE);
		assert_non_null(strstr(err.msg, "statistic: not \"median\" or \"mean\""));
		assert_string_equal(cuco_run_config_statistic("{\"statistic\":\"mean\"}"), "mean");
		assert_string_equal(cuco_run_config_statistic("{}"), "median");
		assert_string_equal(cuco_run_config_statistic(NULL), "median");
	}
	{
		/* the hardware queues: kept when set, absent and "" when unset, refused when
		   not a string */
		struct cuco_evolve_config c2;
		char *j;
		cuco_evolve_config_default(&c2);
		j = cuco_evolve_config_to_json(&c2);
		assert_null(strstr(j, "cuda_device_max_connections"));
		free(j);
		snprintf(c2.max_connections, sizeof(c2.max_connections), "32");
		j = cuco_evolve_config_to_json(&c2);
		assert_non_null(strstr(j, "\"cuda_device_max_connections\":\"32\""));
		cuco_evolve_config_default(&c2);
		assert_int_equal(cuco_evolve_config_from_json(j, &c2, &err), CUCO_OK);
		assert_string_equal(c2.max_connections, "32");
		free(j);
		assert_int_equal(cuco_evolve_config_from_json("{\"search_seed\":2}", &c2, &err),
		                 CUCO_OK);
		assert_string_equal(c2.max_connections, "");
		assert_int_equal(
		    cuco_evolve_config_from_json("{\"cuda_device_max_connections\":32}", &c2, &err),
		    CUCO_ERR_PARSE);
		assert_non_null(strstr(err.msg, "cuda_device_max_connections"));
	}
	free(config);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	assert_int_equal(cuco_store_program_each(s, 1, check_directive, &bad, &err), CUCO_OK);
	cuco_store_close(s);
	assert_int_equal(bad, 0);
}

/* Same seed and fitnesses: the same candidates in the same order; batching does not matter. */
static void test_evolve_repeatable(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char a[256], b[256], c[256];
	char *sa, *sb, *sc;

	small_config(&cfg);
	store_path(a, sizeof(a), "rep-a");
	store_path(b, sizeof(b), "rep-b");
	store_path(c, sizeof(c), "rep-c");
	fake_init(&f);
	assert_int_equal(run_in(a, &cfg, &f, 0, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_init(&f);
	assert_int_equal(run_in(b, &cfg, &f, 7, 1, 0, NULL, NULL, NULL), CUCO_OK);
	cfg.search_seed = 6;
	fake_init(&f);
	assert_int_equal(run_in(c, &cfg, &f, 0, 1, 0, NULL, NULL, NULL), CUCO_OK);
	sa = sequence(a);
	sb = sequence(b);
	sc = sequence(c);
	assert_true(strlen(sa) > 1000);
	assert_string_equal(sa, sb);
	assert_string_not_equal(sa, sc);
	free(sa);
	free(sb);
	free(sc);
}

/* The phase each generation reported, by a progress callback. */
static char phases[32];

static void record_phase(void *arg, const struct cuco_evolve_progress *p)
{
	(void)arg;
	if (p->generation >= 0 && p->generation < (int)sizeof(phases) && p->phase)
		phases[p->generation] = p->phase[5]; /* 'r' explore, 'i' exploit */
}

/*
 * budget-evals stops at exactly that many evaluations, and the explore fraction
 * counts the generations the budget reaches: 31 evaluations at 12 a generation
 * end in generation 3 (of 8), so 0.4 of 3 explores generations 1 and 2 only.
 */
static void test_evolve_budget(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char path[256];

	small_config(&cfg);
	cfg.budget_evals = 31;
	store_path(path, sizeof(path), "budget");
	fake_init(&f);
	memset(phases, 0, sizeof(phases));
	assert_int_equal(run_in(path, &cfg, &f, 4, 1, 0, NULL, record_phase, &fin), CUCO_OK);
	assert_string_equal(phases + 1, "rri");
	assert_int_equal(fin.evaluated, 31);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations"), 31);
	assert_string_equal(fin.stop_reason, "budget-evals");
	check_run_rows(path);
}

/* Without a template only the seed's knobs change, in the seed's own code. */
static void test_evolve_seed_mode(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_store *s;
	struct cuco_err err;
	char path[256];
	int bad = 0;

	small_config(&cfg);
	cfg.generations = 4;
	store_path(path, sizeof(path), "seedmode");
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 0, 0, 0, NULL, NULL, &fin), CUCO_OK);
	check_run_rows(path);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs WHERE generation = 0"), 1);
	assert_true(sql_int(path, "SELECT COUNT(*) FROM programs") > 20);
	assert_int_equal(sql_int(path,
	                         "SELECT COUNT(*) FROM programs WHERE directive NOT LIKE "
	                         "'{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_"
	                         "scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\"%'"),
	                 0);
	assert_int_equal(sql_int(path,
	                         "SELECT COUNT(*) FROM programs WHERE code NOT LIKE '%int "
	                         "main(void)%' OR code NOT LIKE '%#define CUCO_SEED_THREADS %'"),
	                 0);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	assert_int_equal(cuco_store_program_each(s, 1, check_directive, &bad, &err), CUCO_OK);
	cuco_store_close(s);
	assert_int_equal(bad, 0);
}

/* Frozen dimensions and knobs stay as the seed has them; an unknown name is refused. */
static void test_evolve_freeze(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char path[256];

	small_config(&cfg);
	cfg.generations = 4;
	snprintf(cfg.freeze, sizeof(cfg.freeze), "placement, chunks,threads");
	store_path(path, sizeof(path), "freeze");
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 0, 1, 0, NULL, NULL, NULL), CUCO_OK);
	check_run_rows(path);
	assert_true(sql_int(path, "SELECT COUNT(*) FROM programs") > 20);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs WHERE generation > 0 AND ("
	                               "directive NOT LIKE '%\"placement\":\"sequential\"%' OR "
	                               "directive NOT LIKE '%\"chunks\":4,%' OR directive NOT LIKE "
	                               "'%\"threads\":512%')"),
	                 0);
	assert_true(sql_int(path, "SELECT COUNT(DISTINCT directive) FROM programs") > 20);
	snprintf(cfg.freeze, sizeof(cfg.freeze), "placement,no_such_knob");
	store_path(path, sizeof(path), "freeze-bad");
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 0, 1, 0, NULL, NULL, NULL), CUCO_ERR_INVALID);
	assert_int_equal(f.calls, 0);
}

/*
 * Run cfg over the shipped gemm_allgather template (shipped) and space from
 * seed_code in store <name> with the fake evaluator, then (when the run
 * succeeded and each is set) call each() on every program. path gets the
 * store's path, *calls the evaluator's calls; returns the run's code (err set).
 */
static int shipped_evolve(const char *name, const char *shipped,
                          const struct cuco_design_space *space, const char *seed_code,
                          struct cuco_evolve_config *cfg,
                          int (*each)(const struct cuco_program_rec *, void *, struct cuco_err *),
                          void *arg, char *path, size_t size, int *calls, struct cuco_err *err)
{
	struct cuco_evolve_progress fin;
	struct cuco_evolve_opts o;
	struct cuco_store *s;
	struct fake_eval f;
	int rc;

	store_path(path, size, name);
	assert_int_equal(cuco_store_open(path, &s, err), CUCO_OK);
	fake_init(&f);
	default_opts(&o, s, fake_evaluator(&f, 4), 1);
	o.ds = space;
	o.seed_code = seed_code;
	o.template_text = shipped;
	o.template_name = "gemm_allgather.cu.in";
	rc = cuco_evolve_run(&o, cfg, 0, NULL, &fin, err);
	if (rc == CUCO_OK) {
		assert_int_equal(fin.evaluated,
		                 2 + cfg->generations * cfg->children_per_island * cfg->islands);
		if (each)
			assert_int_equal(cuco_store_program_each(s, 1, each, arg, err), CUCO_OK);
	}
	*calls = f.calls;
	cuco_store_close(s);
	return rc;
}

/* shipped_evolve over 3 generations of the small config; any failure fails the test. */
static void shipped_run(const char *name, const char *shipped,
                        const struct cuco_design_space *space, const char *seed_code,
                        int (*each)(const struct cuco_program_rec *, void *, struct cuco_err *),
                        void *arg, char *path, size_t size)
{
	struct cuco_evolve_config cfg;
	struct cuco_err err;
	int calls;

	small_config(&cfg);
	cfg.generations = 3;
	if (shipped_evolve(name, shipped, space, seed_code, &cfg, each, arg, path, size, &calls,
	                   &err))
		fail_msg("%s", err.msg);
}

/*
 * A knob the design space holds ("searched": false: split) stays as the seed has
 * it unless the config's search list names it; a search entry that is no knob
 * is refused before anything runs.
 */
static void test_evolve_searched(void **state)
{
	char *shipped = read_all(CUCO_SOURCE_DIR "/share/realize/gemm_allgather.cu.in");
	const char *lists[] = {"", "split", "split,no_such_knob"};
	int with_split[2] = {0};

	if (!shipped)
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	for (int i = 0; i < 3; i++) {
		struct cuco_evolve_config cfg;
		struct cuco_err err;
		char path[256], name[32];
		int rc, calls;

		small_config(&cfg);
		cfg.generations = 6;
		snprintf(cfg.search, sizeof(cfg.search), "%s", lists[i]);
		snprintf(name, sizeof(name), "searched-%d", i);
		rc = shipped_evolve(name, shipped, &ds, seed, &cfg, NULL, NULL, path, sizeof(path),
		                    &calls, &err);
		if (i == 2) {
			assert_int_equal(rc, CUCO_ERR_INVALID);
			assert_non_null(strstr(err.msg, "search: no_such_knob is not a knob"));
			assert_int_equal(calls, 0);
			continue;
		}
		if (rc)
			fail_msg("%s", err.msg);
		with_split[i] =
		    sql_int(path, "SELECT COUNT(*) FROM programs WHERE directive LIKE "
		                  "'%\"split\":%' AND directive NOT LIKE '%\"split\":0%'");
	}
	assert_int_equal(with_split[0], 0);
	assert_true(with_split[1] > 0);
	free(shipped);
}

/* The shipped gemm_allgather template breeds a run from a bare seed directive. */
static void test_evolve_shipped_template(void **state)
{
	char path[256], *shipped = read_all(CUCO_SOURCE_DIR "/share/realize/gemm_allgather.cu.in");
	int bad = 0;

	if (!shipped)
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	shipped_run("shipped", shipped, &ds, seed, check_directive, &bad, path, sizeof(path));
	assert_int_equal(bad, 0);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs WHERE name != 'seed' AND "
	                               "code LIKE '%{{%'"),
	                 0);
	free(shipped);
}

struct canon_check {
	const struct cuco_design_space *ds;
	int bad, n;
};

/* Every candidate's directive is valid and canonical for the template. */
static int check_canonical(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct canon_check *c = arg;
	struct cuco_directive d;

	if (!strcmp(p->name, "seed"))
		return 0;
	c->n++;
	if (cuco_directive_from_json(p->directive, &d, err) ||
	    cuco_directive_validate(&d, c->ds, &facts, err) ||
	    cuco_directive_canonicalize(&d, c->ds)) {
		fprintf(stderr, "program %lld (%s) not valid and canonical: %s\n", (long long)p->id,
		        p->name, p->directive);
		c->bad++;
	}
	cuco_directive_release(&d);
	return 0;
}

/*
 * Through the shipped template's narrowed space: the seed's rendering and every
 * candidate are canonical (genes the template ignores at their canonical
 * values); the fast-path seed itself keeps its directive.
 */
static void test_evolve_shipped_template_inert(void **state)
{
	struct cuco_design_space nds;
	struct cuco_err err;
	struct canon_check cc;
	struct cuco_strbuf sd = CUCO_STRBUF_INIT;
	char path[256], *shipped = read_all(CUCO_SOURCE_DIR "/share/realize/gemm_allgather.cu.in");
	char *dir_seed, *dir_real;

	if (!shipped)
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &nds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&nds, "gemm_allgather.cu.in", shipped, &err))
		fail_msg("%s", err.msg);
	/* the fixture seed with granularity chunk: valid, not canonical for sequential
	 * (whole); its sync_scope cta is live there (per-CTA barriers) and stays */
	cuco_strbuf_adds(&sd, "// cuco-directive: {\"backend\":\"lsa\",\"placement\":"
	                      "\"sequential\",\"sync_scope\":\"cta\",\"issuer\":\"cta\","
	                      "\"granularity\":\"chunk\",\"knobs\":{\"comm_ctas\":32,"
	                      "\"threads\":512}}");
	cuco_strbuf_adds(&sd, strchr(seed, '\n'));
	memset(&cc, 0, sizeof(cc));
	cc.ds = &nds;
	shipped_run("shipped-inert", shipped, &nds, sd.buf, check_canonical, &cc, path,
	            sizeof(path));
	assert_int_equal(cc.bad, 0);
	assert_true(cc.n > 20);
	dir_seed = sql_text(path, "SELECT directive FROM programs WHERE name = 'seed'");
	dir_real = sql_text(path, "SELECT directive FROM programs WHERE name = 'seed-realized'");
	assert_non_null(dir_seed);
	assert_non_null(dir_real);
	assert_non_null(strstr(dir_seed, "\"granularity\":\"chunk\""));
	assert_non_null(strstr(dir_real, "\"granularity\":\"whole\""));
	assert_non_null(strstr(dir_real, "\"sync_scope\":\"cta\""));
	assert_non_null(strstr(dir_real, "\"streams\":1")); /* the built-in default is 2 */
	free(dir_seed);
	free(dir_real);
	cuco_strbuf_release(&sd);
	cuco_design_space_release(&nds);
	free(shipped);
}

/* An outside operator (as the LLM's) whose children's directives leave out the knob comm_ctas. */
static int knobless_breed(void *ctx, const struct cuco_breed_request *rq,
                          struct cuco_breed_child *out, struct cuco_err *err)
{
	int *n = ctx;
	char code[128];

	(void)rq;
	(void)err;
	snprintf(code, sizeof(code), "// knobless child %d\nint k%d;\n", *n, *n);
	(*n)++;
	out->code = strdup(code);
	out->directive_json =
	    strdup("{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"grid\","
	           "\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{\"threads\":512}}");
	out->op_name = "llm-whole";
	return CUCO_OK;
}

/* A mixed run (the template's and an outside operator's children) in path; cuco_evolve_run's code.
 */
static int run_mixed(const char *path, const struct cuco_evolve_config *cfg, int64_t resume)
{
	struct cuco_child_operator co;
	struct cuco_store *s = NULL;
	struct cuco_evolve_opts o;
	struct fake_eval f;
	struct cuco_err err;
	int64_t run_id = 0;
	int rc, n = 0;

	if (cuco_store_open(path, &s, &err))
		return -1;
	fake_init(&f);
	default_opts(&o, s, fake_evaluator(&f, 5), 1);
	memset(&co, 0, sizeof(co));
	co.share = 0.5;
	co.breed = knobless_breed;
	co.ctx = &n;
	o.child_op = &co;
	rc = cuco_evolve_run(&o, cfg, resume, &run_id, NULL, &err);
	if (rc)
		fprintf(stderr, "evolve: %s\n", err.msg);
	cuco_store_close(s);
	return rc;
}

/*
 * A model leaves out an optional knob (the template has it without a
 * default): the live loop completes the child's directive for the template,
 * and so must a resume, whose rebuilt members breed through the template
 * too. Resumed for more generations, the run goes on and ends done.
 */
static void test_evolve_resume_knob_omitted(void **state)
{
	struct cuco_evolve_config cfg;
	char path[256];

	(void)state;
	small_config(&cfg);
	cfg.generations = 2;
	store_path(path, sizeof(path), "knobless");
	assert_int_equal(run_mixed(path, &cfg, 0), CUCO_OK);
	assert_true(sql_int(path, "SELECT COUNT(*) FROM programs WHERE operator = 'llm-whole'") >
	            0);
	cfg.generations = 5;
	assert_int_equal(run_mixed(path, &cfg, 1), CUCO_OK);
	assert_int_equal(sql_int(path, "SELECT status = 'done' FROM runs WHERE id = 1"), 1);
	assert_true(sql_int(path, "SELECT MAX(generation) FROM programs") >= 3);
}

/* A progress callback that asks to stop once generation 3 is done. */
static void stop_after_3(void *arg, const struct cuco_evolve_progress *p)
{
	volatile sig_atomic_t *stop = arg;

	if (p->generation >= 3)
		*stop = 1;
}

/*
 * --statistic mean: the run's best latency is the mean (the fake's median + 7),
 * every evaluation stores its mean and p90 beside the median, the config
 * records it, and a resumed run finds the same best latency in the store.
 */
static void test_evolve_statistic_mean(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin, again;
	struct fake_eval f;
	char path[256], *config;
	double best_us;

	(void)state;
	small_config(&cfg);
	cfg.generations = 3;
	snprintf(cfg.statistic, sizeof(cfg.statistic), "mean");
	store_path(path, sizeof(path), "mean");
	fake_init(&f);
	f.mean_extra = 7.0;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	assert_true(fin.best_fitness > 0);
	assert_true(fabs(fin.best_us - (1000.0 / fin.best_fitness + 7.0)) < 1e-6);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND "
	                               "abs(mean_us - median_us - 7.0) < 1e-9 AND "
	                               "abs(p90_us - median_us - 14.0) < 1e-9"),
	                 fin.correct);
	config = sql_text(path, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(config, "\"statistic\":\"mean\""));
	free(config);
	best_us = fin.best_us;
	/* resumed with nothing left to do: the best is rebuilt from the store alone, by the mean */
	fake_init(&f);
	f.mean_extra = 7.0;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 1, NULL, NULL, &again), CUCO_OK);
	assert_int_equal(f.calls, 0);
	assert_int_equal(again.best_program, fin.best_program);
	assert_true(again.best_us == best_us);
	/* and with two more generations, new bests are by the mean too */
	cfg.generations = 5;
	fake_init(&f);
	f.mean_extra = 7.0;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 1, NULL, NULL, &again), CUCO_OK);
	assert_true(again.best_fitness >= fin.best_fitness);
	assert_true(fabs(again.best_us - (1000.0 / again.best_fitness + 7.0)) < 1e-6);
	/* the same run by the median: the best latency is the median */
	snprintf(cfg.statistic, sizeof(cfg.statistic), "median");
	cfg.generations = 3;
	store_path(path, sizeof(path), "median");
	fake_init(&f);
	f.mean_extra = 7.0;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	assert_true(fabs(fin.best_us - 1000.0 / fin.best_fitness) < 1e-6);
	config = sql_text(path, "SELECT config FROM runs WHERE id = 1");
	assert_null(strstr(config, "statistic"));
	free(config);
}

/* Ctrl-C: stop after the current batch, status 'interrupted'; resume finishes the same run. */
static void test_evolve_interrupt_and_resume(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	volatile sig_atomic_t stop = 0;
	char ref[256], path[256], *st;
	int64_t n_before, calls;

	small_config(&cfg);
	store_path(ref, sizeof(ref), "int-ref");
	store_path(path, sizeof(path), "int");
	fake_init(&f);
	assert_int_equal(run_in(ref, &cfg, &f, 5, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, &stop, stop_after_3, &fin), CUCO_OK);
	assert_true(fin.interrupted);
	assert_string_equal(fin.stop_reason, "interrupted");
	st = sql_text(path, "SELECT status FROM runs WHERE id = 1");
	assert_string_equal(st, "interrupted");
	free(st);
	/* stopped inside generation 3 after a batch: some of it may wait for evaluation */
	assert_int_equal(sql_int(path, "SELECT MAX(generation) FROM programs"), 3);
	n_before = sql_int(path, "SELECT COUNT(*) FROM evaluations");
	assert_true(n_before < 2 + 3 * 4 * 3);
	stop = 0;
	fake_init(&f);
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 1, &stop, NULL, &fin), CUCO_OK);
	calls = f.calls;
	assert_int_equal(calls + n_before, sql_int(path, "SELECT COUNT(*) FROM programs"));
	st = sql_text(path, "SELECT status FROM runs WHERE id = 1");
	assert_string_equal(st, "done");
	free(st);
	check_run_rows(path);
	assert_same_sequence(ref, path);
}

/*
 * Kill a run (pipelined or not) with SIGKILL (from inside the evaluator at
 * call kill_at, or from outside after delay_us), resume it, and check that
 * nothing was lost, nothing evaluated twice, and the result is the
 * uninterrupted run. Returns how many generations waited for evaluation
 * when it was killed.
 */
static int kill_and_resume(const char *ref_seq, const char *name, int kill_at, int delay_us,
                           int pipelined)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char path[256], log[300], *seq, *st, *evaluated_before;
	int64_t programs, evals, missing, open_gens, last_gen_n = 0;
	pid_t pid;
	int wst, first_eval;

	small_config(&cfg);
	store_path(path, sizeof(path), name);
	snprintf(log, sizeof(log), "%s/%s.log", dir, name);
	unlink(log);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fake_init(&f);
		f.kill_at = kill_at;
		f.sleep_us = delay_us ? 200 : 0;
		f.prefetch = pipelined;
		_exit(run_in(path, &cfg, &f, 3, 1, 0, NULL, NULL, NULL) ? 1 : 0);
	}
	if (delay_us) {
		struct timespec ts = {delay_us / 1000000, (long)(delay_us % 1000000) * 1000};
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
	}
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	if (!delay_us)
		assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
	if (sql_int(path, "SELECT COUNT(*) FROM runs") != 1)
		return 0; /* killed before the run row existed: nothing to resume */
	programs = sql_int(path, "SELECT COUNT(*) FROM programs");
	evals = sql_int(path, "SELECT COUNT(*) FROM evaluations");
	missing = sql_int(path, "SELECT COUNT(*) FROM programs p WHERE NOT EXISTS (SELECT 1 FROM "
	                        "evaluations e WHERE e.program_id = p.id)");
	assert_int_equal(programs - evals, missing);
	if (getenv("CUCO_TEST_VERBOSE"))
		fprintf(stderr, "%s: killed=%d programs=%lld evals=%lld missing=%lld\n", name,
		        WIFSIGNALED(wst), (long long)programs, (long long)evals,
		        (long long)missing);
	evaluated_before =
	    sql_text(path, "SELECT ',' || group_concat(program_id, ',') || ',' FROM evaluations");
	if (WIFSIGNALED(wst)) {
		st = sql_text(path, "SELECT status FROM runs WHERE id = 1");
		/* nobody finished it, unless the kill came after the last commit */
		assert_true(!strcmp(st, "running") || (!strcmp(st, "done") && missing == 0));
		free(st);
	}
	/* at most two generations wait: the current one and the one bred ahead of it */
	open_gens = sql_int(path, "SELECT COUNT(DISTINCT generation) FROM programs p WHERE NOT "
	                          "EXISTS (SELECT 1 FROM evaluations e WHERE e.program_id = p.id)");
	assert_true(open_gens <= (pipelined ? 2 : 1));
	if (open_gens == 2) { /* the later one was bred ahead: nothing of it ran */
		assert_int_equal(sql_int(path,
		                         "SELECT COUNT(*) FROM evaluations e JOIN programs p "
		                         "ON p.id = e.program_id WHERE p.generation = (SELECT "
		                         "MAX(generation) FROM programs)"),
		                 0);
		last_gen_n = sql_int(path, "SELECT COUNT(*) FROM programs WHERE generation = "
		                           "(SELECT MAX(generation) FROM programs)");
	}
	/* resume, logging every candidate the evaluator sees */
	fake_init(&f);
	f.prefetch = pipelined;
	f.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	assert_true(f.log_fd >= 0);
	assert_int_equal(run_in(path, &cfg, &f, 3, 1, 1, NULL, NULL, &fin), CUCO_OK);
	close(f.log_fd);
	/* with two generations waiting, the later one compiles while the first runs */
	for (first_eval = 0; first_eval < f.nevents && f.events[first_eval].kind != 'E';
	     first_eval++)
		;
	if (open_gens == 2)
		assert_int_equal(first_eval, last_gen_n);
	fake_release(&f);
	/* (a run killed before its seed was stored starts over: nothing to re-evaluate) */
	assert_int_equal(fin.resumed_evals, WIFSIGNALED(wst) && programs ? missing : 0);
	/* the resumed process evaluated exactly what had no evaluation, once */
	assert_int_equal(f.calls, sql_int(path, "SELECT COUNT(*) FROM programs") - evals);
	if (evaluated_before) {
		char *logged = read_all(log), *p = logged, *end;
		while (p && *p) {
			char needle[32];
			long long id = strtoll(p, &end, 10);
			snprintf(needle, sizeof(needle), ",%lld,", id);
			assert_null(strstr(evaluated_before, needle));
			p = *end ? end + 1 : end;
		}
		free(logged);
		free(evaluated_before);
	}
	check_run_rows(path);
	seq = sequence(path);
	assert_string_equal(seq, ref_seq);
	free(seq);
	st = sql_text(path, "SELECT status FROM runs WHERE id = 1");
	assert_string_equal(st, "done");
	free(st);
	return (int)open_gens;
}

static void test_evolve_resume_after_sigkill(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char ref[256], *ref_seq, name[32];
	static const int kill_at[] = {1, 2, 3, 14, 15, 40, 77, 98};
	static const int delays_us[] = {3000, 8000, 15000, 30000, 60000};

	small_config(&cfg);
	store_path(ref, sizeof(ref), "kill-ref");
	fake_init(&f);
	assert_int_equal(run_in(ref, &cfg, &f, 3, 1, 0, NULL, NULL, NULL), CUCO_OK);
	ref_seq = sequence(ref);
	for (size_t i = 0; i < sizeof(kill_at) / sizeof(kill_at[0]); i++) {
		snprintf(name, sizeof(name), "kill-at-%d", kill_at[i]);
		kill_and_resume(ref_seq, name, kill_at[i], 0, 0);
	}
	for (size_t i = 0; i < sizeof(delays_us) / sizeof(delays_us[0]); i++) {
		snprintf(name, sizeof(name), "kill-after-%d", delays_us[i]);
		kill_and_resume(ref_seq, name, 0, delays_us[i], 0);
	}
	free(ref_seq);
}

/* ---- the pipelined loop ---- */

/* The generation of every program in the store at path, indexed by id; *n gets the size. */
static int *generations_of(const char *path, int *n)
{
	int max = (int)sql_int(path, "SELECT MAX(id) FROM programs"), *gen;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	assert_true(max > 0);
	gen = calloc((size_t)max + 1, sizeof(*gen));
	assert_non_null(gen);
	for (int i = 0; i <= max; i++)
		gen[i] = -1;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
	    sqlite3_prepare_v2(db, "SELECT id, generation FROM programs", -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		gen[sqlite3_column_int(st, 0)] = sqlite3_column_int(st, 1);
	sqlite3_finalize(st);
	sqlite3_close(db);
	*n = max + 1;
	return gen;
}

/* Index of the first (or last) event of kind for a program of generation g; -1 when none. */
static int event_at(const struct fake_eval *f, const int *gen, int ngen, char kind, int g, int last)
{
	int at = -1;

	for (int i = 0; i < f->nevents; i++) {
		int64_t id = f->events[i].program_id;
		if (f->events[i].kind != kind || id <= 0 || id >= ngen || gen[id] != g)
			continue;
		at = i;
		if (!last)
			break;
	}
	return at;
}

/*
 * Pipelined: generation g+1 is bred from the results up to g-1 and
 * prefetched before generation g is evaluated; every candidate is prefetched
 * (from generation 2 on) and evaluated exactly once; the leftovers are
 * cancelled once at the end.
 */
static void test_evolve_pipeline_order(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char path[256], *config;
	int *gen, ngen, *prefetched;
	int64_t n;

	small_config(&cfg);
	store_path(path, sizeof(path), "pipe");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	check_run_rows(path);
	n = sql_int(path, "SELECT COUNT(*) FROM programs");
	assert_int_equal(n, 2 + 3 * 4 * 8); /* as many as the strict order breeds */
	assert_int_equal(fin.evaluated, n);
	assert_int_equal(f.calls, n);
	assert_string_equal(fin.stop_reason, "generations");
	config = sql_text(path, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(config, "\"pipeline\":true"));
	free(config);
	/* generations 0 and 1 are bred after the one before is judged; the rest ahead */
	gen = generations_of(path, &ngen);
	prefetched = calloc((size_t)ngen, sizeof(*prefetched));
	assert_non_null(prefetched);
	for (int i = 0; i < f.nevents; i++)
		if (f.events[i].kind == 'P')
			prefetched[f.events[i].program_id]++;
	for (int id = 1; id < ngen; id++)
		assert_int_equal(prefetched[id], gen[id] >= 2 ? 1 : 0);
	for (int g = 1; g < cfg.generations; g++) {
		/* g+1 is in the evaluator's hands before g's first evaluation ... */
		assert_true(event_at(&f, gen, ngen, 'P', g + 1, 1) <
		            event_at(&f, gen, ngen, 'E', g, 0));
		/* ... and was bred once g-1 was judged */
		assert_true(event_at(&f, gen, ngen, 'P', g + 1, 0) >
		            event_at(&f, gen, ngen, 'E', g - 1, 1));
	}
	/* parents, partners and inspirations of generation g >= 2 are from g-2 or older */
	assert_int_equal(sql_int(path,
	                         "SELECT COUNT(*) FROM program_parents q JOIN programs c ON "
	                         "c.id = q.program_id JOIN programs p ON p.id = q.parent_id "
	                         "WHERE c.generation >= 2 AND p.generation > c.generation - 2"),
	                 0);
	assert_true(sql_int(path,
	                    "SELECT COUNT(*) FROM program_parents q JOIN programs c ON "
	                    "c.id = q.program_id JOIN programs p ON p.id = q.parent_id "
	                    "WHERE c.generation >= 3 AND p.generation = c.generation - 2") > 0);
	/* the schedule's summaries as in the strict order */
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM summaries WHERE kind = 'statistical'"),
	                 4);
	/* nothing is left compiling behind the caller */
	assert_int_equal(f.cancel_calls, 1);
	assert_int_equal(f.events[f.nevents - 1].kind, 'C');
	free(prefetched);
	free(gen);
	fake_release(&f);
}

/*
 * The same seed gives the same pipelined run (batching does not matter); it
 * differs from the strict order's, which pipeline = 0 still gives with a
 * prefetching evaluator (and then nothing is prefetched).
 */
static void test_evolve_pipeline_repeatable(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char a[256], b[256], c[256], d[256];
	char *sa, *sb, *sc, *sd, *config;

	small_config(&cfg);
	store_path(a, sizeof(a), "pipe-rep-a");
	store_path(b, sizeof(b), "pipe-rep-b");
	store_path(c, sizeof(c), "pipe-rep-strict");
	store_path(d, sizeof(d), "pipe-rep-off");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(a, &cfg, &f, 0, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_release(&f);
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(b, &cfg, &f, 7, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_release(&f);
	fake_init(&f); /* no prefetch: the strict order */
	assert_int_equal(run_in(c, &cfg, &f, 7, 1, 0, NULL, NULL, NULL), CUCO_OK);
	cfg.pipeline = 0;
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(d, &cfg, &f, 7, 1, 0, NULL, NULL, NULL), CUCO_OK);
	assert_int_equal(f.prefetch_calls, 0);
	fake_release(&f);
	config = sql_text(d, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(config, "\"pipeline\":false"));
	free(config);
	config = sql_text(c, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(config, "\"pipeline\":false")); /* what it ran with */
	free(config);
	sa = sequence(a);
	sb = sequence(b);
	sc = sequence(c);
	sd = sequence(d);
	assert_true(strlen(sa) > 1000);
	assert_string_equal(sa, sb);
	assert_string_not_equal(sa, sc);
	assert_string_equal(sc, sd);
	free(sa);
	free(sb);
	free(sc);
	free(sd);
}

/* The unevaluated candidates of a store: how many, in how many generations. */
static void waiting(const char *path, int64_t *missing, int64_t *gens)
{
	*missing = sql_int(path, "SELECT COUNT(*) FROM programs p WHERE NOT EXISTS (SELECT 1 FROM "
	                         "evaluations e WHERE e.program_id = p.id)");
	*gens = sql_int(path, "SELECT COUNT(DISTINCT generation) FROM programs p WHERE NOT EXISTS "
	                      "(SELECT 1 FROM evaluations e WHERE e.program_id = p.id)");
}

/*
 * Budgets, pipelined: --budget-evals is never overshot (nothing is bred past
 * it); --budget-minutes stops after a batch or before a generation bred ahead,
 * which stays stored unevaluated, and a resume evaluates it once.
 */
static void test_evolve_pipeline_budget(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char ref[256], path[256];
	int64_t missing, gens, evals;

	small_config(&cfg);
	cfg.budget_evals = 31;
	store_path(path, sizeof(path), "pipe-budget");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 4, 1, 0, NULL, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_string_equal(fin.stop_reason, "budget-evals");
	assert_int_equal(fin.evaluated, 31);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations"), 31);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM programs"), 31);
	check_run_rows(path);

	small_config(&cfg);
	store_path(ref, sizeof(ref), "pipe-budget-ref");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(ref, &cfg, &f, 4, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_release(&f);
	cfg.budget_minutes = 0.002; /* 120 ms; the run takes 98 x 2 ms at least */
	store_path(path, sizeof(path), "pipe-minutes");
	fake_init(&f);
	f.prefetch = 1;
	f.sleep_us = 2000;
	assert_int_equal(run_in(path, &cfg, &f, 4, 1, 0, NULL, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_string_equal(fin.stop_reason, "budget-minutes");
	evals = sql_int(path, "SELECT COUNT(*) FROM evaluations");
	waiting(path, &missing, &gens);
	assert_true(evals < 2 + 3 * 4 * 8);
	assert_true(gens <= 2);
	if (gens == 2) /* the generation bred ahead waits whole */
		assert_int_equal(sql_int(path,
		                         "SELECT COUNT(*) FROM evaluations e JOIN programs p "
		                         "ON p.id = e.program_id WHERE p.generation = (SELECT "
		                         "MAX(generation) FROM programs)"),
		                 0);
	cfg.budget_minutes = 0;
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 4, 1, 1, NULL, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_int_equal(fin.resumed_evals, missing);
	assert_int_equal(f.calls, sql_int(path, "SELECT COUNT(*) FROM programs") - evals);
	check_run_rows(path);
	assert_same_sequence(ref, path);
}

/*
 * A finished pipelined run resumed with more generations breeds on as the
 * pipeline does: generation G+1 from the results up to G-1 (its last
 * generation is not added to the islands before G+1 is bred).
 */
static void test_evolve_pipeline_resume_more_generations(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char path[256];

	small_config(&cfg);
	cfg.generations = 4;
	store_path(path, sizeof(path), "pipe-more");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_int_equal(sql_int(path, "SELECT MAX(generation) FROM programs"), 4);
	cfg.generations = 6;
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 1, NULL, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_int_equal(fin.resumed_evals, 0);
	assert_int_equal(fin.evaluated, 2 + 3 * 4 * 6);
	check_run_rows(path);
	assert_int_equal(sql_int(path,
	                         "SELECT COUNT(*) FROM program_parents q JOIN programs c ON "
	                         "c.id = q.program_id JOIN programs p ON p.id = q.parent_id "
	                         "WHERE c.generation >= 2 AND p.generation > c.generation - 2"),
	                 0);
}

/* Ctrl-C inside a generation with the next one bred ahead: both wait, resume finishes the run. */
static void test_evolve_pipeline_interrupt_and_resume(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	volatile sig_atomic_t stop = 0;
	char ref[256], path[256];
	int64_t missing, gens, n_before;

	small_config(&cfg);
	store_path(ref, sizeof(ref), "pipe-int-ref");
	store_path(path, sizeof(path), "pipe-int");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(ref, &cfg, &f, 5, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_release(&f);
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, &stop, stop_after_3, &fin), CUCO_OK);
	assert_int_equal(f.cancel_calls, 1);
	fake_release(&f);
	assert_true(fin.interrupted);
	/* stopped after a batch of generation 3, with generation 4 stored ahead */
	assert_int_equal(sql_int(path, "SELECT MAX(generation) FROM programs"), 4);
	waiting(path, &missing, &gens);
	assert_int_equal(gens, 2);
	n_before = sql_int(path, "SELECT COUNT(*) FROM evaluations");
	stop = 0;
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 1, &stop, NULL, &fin), CUCO_OK);
	fake_release(&f);
	assert_int_equal(fin.resumed_evals, missing);
	assert_int_equal(f.calls + n_before, sql_int(path, "SELECT COUNT(*) FROM programs"));
	check_run_rows(path);
	assert_same_sequence(ref, path);
}

/*
 * SIGKILL at evaluation points and wall-clock delays of a pipelined run,
 * including kills with two generations stored and not evaluated (the first
 * evaluation of a generation, its successor already stored); each resume
 * evaluates exactly what waited, once, and ends as the uninterrupted run.
 */
static void test_evolve_pipeline_resume_after_sigkill(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char ref[256], *ref_seq, name[40];
	/* calls 3, 15 and 27 open generations 1, 2 and 3 (2 + 12 + 12 + ...) */
	static const int kill_at[] = {1, 2, 3, 4, 14, 15, 16, 27, 40, 77, 98};
	static const int delays_us[] = {3000, 8000, 15000, 30000, 60000};
	int two_open = 0;

	small_config(&cfg);
	store_path(ref, sizeof(ref), "pipe-kill-ref");
	fake_init(&f);
	f.prefetch = 1;
	assert_int_equal(run_in(ref, &cfg, &f, 3, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_release(&f);
	ref_seq = sequence(ref);
	for (size_t i = 0; i < sizeof(kill_at) / sizeof(kill_at[0]); i++) {
		int open;
		snprintf(name, sizeof(name), "pipe-kill-at-%d", kill_at[i]);
		open = kill_and_resume(ref_seq, name, kill_at[i], 0, 1);
		if (kill_at[i] == 3 || kill_at[i] == 15 || kill_at[i] == 27)
			assert_int_equal(open, 2);
		two_open += open == 2;
	}
	assert_true(two_open >= 3);
	for (size_t i = 0; i < sizeof(delays_us) / sizeof(delays_us[0]); i++) {
		snprintf(name, sizeof(name), "pipe-kill-after-%d", delays_us[i]);
		kill_and_resume(ref_seq, name, 0, delays_us[i], 1);
	}
	free(ref_seq);
}

/* Resume refuses runs that are not evolve runs. */
static void test_evolve_resume_wrong_run(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_run_rec run;
	struct cuco_store *s;
	struct cuco_err err;
	struct fake_eval f;
	char path[256];
	int64_t id;

	store_path(path, sizeof(path), "wrong");
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	cuco_run_rec_init(&run);
	run.kind = "bench";
	assert_int_equal(cuco_store_run_begin(s, &run, &id, &err), CUCO_OK);
	small_config(&cfg);
	fake_init(&f);
	default_opts(&o, s, fake_evaluator(&f, 0), 1);
	assert_int_equal(cuco_evolve_run(&o, &cfg, id, NULL, NULL, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "not an evolve run"));
	assert_int_equal(cuco_evolve_run(&o, &cfg, 42, NULL, NULL, &err), CUCO_ERR_NOT_FOUND);
	cuco_store_close(s);
}

/* ---- fitness over several shapes ---- */

static void per_shape(struct cuco_eval_outcome *o, int code, double base_us, double fitness,
                      double rel_err, const char *error)
{
	cuco_eval_outcome_init(o);
	o->code = code;
	if (code != CUCO_OK) {
		snprintf(o->status, sizeof(o->status), "wrong");
		snprintf(o->stage, sizeof(o->stage), "verify");
	}
	o->baseline_us = base_us;
	o->fitness = code == CUCO_OK ? fitness : 0;
	o->median_us = code == CUCO_OK ? base_us / fitness : NAN;
	o->mean_us = o->median_us + 1.0; /* a run or two slower than the rest */
	o->p90_us = o->median_us + 2.0;
	o->rel_err = rel_err;
	o->error = error ? strdup(error) : NULL;
	snprintf(o->gpu, sizeof(o->gpu), "Fake GPU");
}

/* The combination: one shape is a copy; the geometric mean; a failure at one shape. */
static void test_outcome_combine(void **state)
{
	const char *shapes[] = {"4096", "8192"};
	struct cuco_eval_outcome per[2], out;

	(void)state;
	per_shape(&per[0], CUCO_OK, 100.0, 1.25, 1e-3, NULL);
	cuco_eval_outcome_init(&out);
	assert_int_equal(cuco_eval_outcome_combine(shapes, per, 1, &out), CUCO_OK);
	assert_int_equal(out.code, CUCO_OK);
	assert_true(out.fitness == 1.25);
	assert_true(out.median_us == per[0].median_us);
	assert_true(out.baseline_us == 100.0);
	assert_null(out.result_json);
	cuco_eval_outcome_release(&out);

	/* fast at one shape, slow at the other: sqrt(2 * 0.5) = 1 */
	cuco_eval_outcome_release(&per[0]);
	per_shape(&per[0], CUCO_OK, 100.0, 2.0, 1e-3, NULL);
	per_shape(&per[1], CUCO_OK, 800.0, 0.5, 4e-3, NULL);
	assert_int_equal(cuco_eval_outcome_combine(shapes, per, 2, &out), CUCO_OK);
	assert_int_equal(out.code, CUCO_OK);
	assert_string_equal(out.status, "ok");
	assert_true(fabs(out.fitness - 1.0) < 1e-12);
	assert_true(out.median_us == 50.0); /* the primary shape's */
	assert_true(out.mean_us == 51.0 && out.p90_us == 52.0);
	assert_true(out.baseline_us == 100.0);
	assert_true(out.rel_err == 4e-3); /* the worst */
	assert_string_equal(
	    out.result_json,
	    "{\"shapes\":[{\"shape\":\"4096\",\"status\":\"ok\",\"stage\":\"bench\","
	    "\"median_us\":50.0,\"mean_us\":51.0,\"baseline_us\":100.0,\"speedup\":2.0},"
	    "{\"shape\":\"8192\",\"status\":\"ok\",\"stage\":\"bench\","
	    "\"median_us\":1600.0,\"mean_us\":1601.0,\"baseline_us\":800.0,\"speedup\":0.5}],"
	    "\"fitness\":\"geomean\"}");
	cuco_eval_outcome_release(&out);

	/* wrong at the second shape only: incorrect, the shape named */
	cuco_eval_outcome_release(&per[1]);
	per_shape(&per[1], CUCO_ERR_VERIFY, 800.0, 0, 0.3, "rel_err 3.0e-01 over tolerance");
	assert_int_equal(cuco_eval_outcome_combine(shapes, per, 2, &out), CUCO_OK);
	assert_int_equal(out.code, CUCO_ERR_VERIFY);
	assert_string_equal(out.status, "wrong");
	assert_string_equal(out.stage, "verify");
	assert_string_equal(out.error, "at shape 8192: rel_err 3.0e-01 over tolerance");
	assert_true(out.fitness == 0);
	assert_true(isnan(out.median_us) && isnan(out.mean_us) && isnan(out.p90_us));
	assert_true(out.baseline_us == 100.0);
	assert_non_null(strstr(out.result_json, "{\"shape\":\"8192\",\"status\":\"wrong\","
	                                        "\"stage\":\"verify\",\"median_us\":null,"
	                                        "\"mean_us\":null"));
	cuco_eval_outcome_release(&out);
	for (int k = 0; k < 2; k++)
		cuco_eval_outcome_release(&per[k]);
}

/*
 * Shape A and B: stream overlap is twice the baseline's speed at A and half
 * at B (geometric mean 1), a fused producer 1.2x at both, a specialized
 * program 3x at A but wrong at B; anything else 1x.
 */
static int two_shapes(const struct cuco_directive *d, int k, double *fitness, const char **stage,
                      const char **status, const char **error)
{
	const char *pl = d->dims[CUCO_DIM_PLACEMENT];
	int code = fake_judge(d, fitness, stage, status, error);

	if (code != CUCO_OK)
		return code;
	*fitness = 1.0;
	if (!strcmp(pl, "stream_overlap"))
		*fitness = k == 0 ? 2.0 : 0.5;
	else if (!strcmp(pl, "fused_producer"))
		*fitness = 1.2;
	else if (!strcmp(pl, "specialized") && k == 0)
		*fitness = 3.0;
	else if (!strcmp(pl, "specialized")) {
		*stage = "verify";
		*status = "wrong";
		*error = "rel_err 2.0e-01 over tolerance 1.0e-02";
		return CUCO_ERR_VERIFY;
	}
	return CUCO_OK;
}

#define PLACEMENT_OF "json_extract(p.directive, '$.placement')"
#define EVALS_OF(pl)                                                                              \
	"FROM evaluations e JOIN programs p ON p.id = e.program_id WHERE " PLACEMENT_OF " = '" pl \
	"'"

/*
 * A run over two shapes ranks by the geometric mean: the moderate program
 * beats the one fast at the primary shape alone, and the one failing at the
 * second shape is incorrect with the shape named. Over A alone the same
 * fake ranks them the other way.
 */
static void test_evolve_shapes(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	char path[256], one[256], *t;

	(void)state;
	small_config(&cfg);
	cfg.nshapes = 2;
	snprintf(cfg.shapes[0], sizeof(cfg.shapes[0]), "A");
	snprintf(cfg.shapes[1], sizeof(cfg.shapes[1]), "B");
	store_path(path, sizeof(path), "shapes");
	fake_init(&f);
	f.nshapes = 2;
	f.shapes[0] = "A";
	f.shapes[1] = "B";
	f.at_shape = two_shapes;
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	check_run_rows(path);
	t = sql_text(path, "SELECT config FROM runs WHERE id = 1");
	assert_non_null(strstr(t, "\"shapes\":[\"A\",\"B\"]"));
	free(t);
	/* every kind was bred */
	assert_true(sql_int(path, "SELECT COUNT(*) " EVALS_OF("stream_overlap")) > 0);
	assert_true(sql_int(path, "SELECT COUNT(*) " EVALS_OF("fused_producer")) > 0);
	assert_true(sql_int(path, "SELECT COUNT(*) " EVALS_OF("specialized")) > 0);
	/* the best is the moderate one: 1.2 at both, its latency at A, A's baseline */
	assert_true(fabs(fin.best_fitness - 1.2) < 1e-9);
	assert_true(fabs(fin.best_us - 1000.0 / 1.2) < 1e-6);
	assert_true(fin.baseline_us == 1000.0);
	t = sql_text(path,
	             "SELECT " PLACEMENT_OF " FROM programs p WHERE p.id = (SELECT program_id "
	             "FROM evaluations ORDER BY fitness DESC, id LIMIT 1)");
	assert_string_equal(t, "fused_producer");
	free(t);
	/* fast at A alone: the lowest latency at A, yet fitness 1 */
	assert_int_equal(
	    sql_int(path,
	            "SELECT COUNT(*) " EVALS_OF(
	                "stream_overlap") " AND "
	                                  "(e.status != 'ok' OR abs(e.fitness - 1.0) > 1e-9 OR "
	                                  "abs(e.median_us - 500.0) > 1e-6)"),
	    0);
	/* correct at A, wrong at B: incorrect, B named, fitness 0 */
	assert_int_equal(
	    sql_int(
	        path,
	        "SELECT COUNT(*) " EVALS_OF(
	            "specialized") " AND "
	                           "(e.status != 'wrong' OR e.stage_reached != 'verify' OR "
	                           "e.fitness != 0 OR e.error NOT LIKE 'at shape B: rel_err%')"),
	    0);
	assert_string_equal(
	    t = sql_text(path, "SELECT json_extract(e.result_json, '$.shapes[0].status') " EVALS_OF(
	                           "specialized") " LIMIT 1"),
	    "ok");
	free(t);
	/* the per-shape details of every evaluation that ran */
	assert_int_equal(
	    sql_int(
	        path,
	        "SELECT COUNT(*) " EVALS_OF(
	            "fused_producer") " AND "
	                              "(json_extract(e.result_json, '$.shapes[1].shape') != 'B' OR "
	                              "json_extract(e.result_json, '$.shapes[1].baseline_us') != "
	                              "2000.0 OR abs(json_extract(e.result_json, "
	                              "'$.shapes[1].speedup') - 1.2) > 1e-9 OR "
	                              "json_extract(e.result_json, '$.fitness') != 'geomean')"),
	    0);
	assert_int_equal(
	    sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE result_json IS NULL"), 0);

	/* over A alone the same fake prefers the specialized program (3x), found within
	 * twelve generations */
	cfg.nshapes = 1;
	cfg.generations = 12;
	store_path(one, sizeof(one), "shapes-one");
	fake_init(&f);
	f.nshapes = 1;
	f.shapes[0] = "A";
	f.at_shape = two_shapes;
	assert_int_equal(run_in(one, &cfg, &f, 5, 1, 0, NULL, NULL, &fin), CUCO_OK);
	assert_true(fabs(fin.best_fitness - 3.0) < 1e-9);
	assert_int_equal(sql_int(one, "SELECT COUNT(*) FROM evaluations WHERE result_json IS NOT "
	                              "NULL"),
	                 0);
}

/* A one-shape fake through the combination is the one-shape run of before, row for row. */
static void test_evolve_one_shape_unchanged(void **state)
{
	struct cuco_evolve_config cfg;
	struct fake_eval f;
	char ref[256], path[256];
	const char *sum = "SELECT printf('%.12f', SUM(fitness)) || ' ' || COUNT(*) || ' ' || "
	                  "SUM(status = 'ok') || ' ' || group_concat(IFNULL(error, '-'), '|') "
	                  "FROM evaluations";
	char *a, *b;

	(void)state;
	small_config(&cfg);
	store_path(ref, sizeof(ref), "one-ref");
	store_path(path, sizeof(path), "one");
	fake_init(&f);
	assert_int_equal(run_in(ref, &cfg, &f, 5, 1, 0, NULL, NULL, NULL), CUCO_OK);
	fake_init(&f);
	f.nshapes = 1;
	f.shapes[0] = "small";
	assert_int_equal(run_in(path, &cfg, &f, 5, 1, 0, NULL, NULL, NULL), CUCO_OK);
	assert_same_sequence(ref, path);
	a = sql_text(ref, sum);
	b = sql_text(path, sum);
	assert_non_null(a);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM evaluations WHERE result_json IS NOT "
	                               "NULL"),
	                 0);
}

/* The shapes in the config: kept, absent in older configs, refused when malformed. */
static void test_config_shapes(void **state)
{
	struct cuco_evolve_config c, back;
	struct cuco_err err;
	char *j;

	(void)state;
	cuco_evolve_config_default(&c);
	j = cuco_evolve_config_to_json(&c);
	assert_null(strstr(j, "\"shapes\"")); /* none set: the run's shape */
	free(j);
	c.nshapes = 2;
	snprintf(c.shapes[0], sizeof(c.shapes[0]), "4096");
	snprintf(c.shapes[1], sizeof(c.shapes[1]), "8192");
	j = cuco_evolve_config_to_json(&c);
	assert_non_null(strstr(j, "\"shapes\":[\"4096\",\"8192\"]"));
	cuco_evolve_config_default(&back);
	assert_int_equal(cuco_evolve_config_from_json(j, &back, &err), CUCO_OK);
	assert_int_equal(back.nshapes, 2);
	assert_string_equal(back.shapes[0], "4096");
	assert_string_equal(back.shapes[1], "8192");
	free(j);
	assert_int_equal(cuco_evolve_config_from_json("{\"search_seed\":2}", &back, &err), CUCO_OK);
	assert_int_equal(back.nshapes, 0);
	assert_int_equal(cuco_evolve_config_from_json("{\"shapes\":[]}", &back, &err),
	                 CUCO_ERR_PARSE);
	assert_non_null(strstr(err.msg, "shapes"));
	assert_int_equal(cuco_evolve_config_from_json(
	                     "{\"shapes\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", &back, &err),
	                 CUCO_ERR_PARSE);
	assert_int_equal(cuco_evolve_config_from_json("{\"shapes\":[\"a\",7]}", &back, &err),
	                 CUCO_ERR_PARSE);
	assert_non_null(strstr(err.msg, "shapes[1]"));
}

/* ---- summary on a fixture store ---- */

static int64_t put(struct cuco_store *s, int64_t run, int gen, const char *placement,
                   long long chunks, const char *status, const char *stage, double fitness,
                   const char *error)
{
	struct cuco_program_rec p;
	struct cuco_eval_rec e;
	struct cuco_err err;
	char dir_json[512], code[600];
	int64_t id, eid;

	snprintf(dir_json, sizeof(dir_json),
	         "{\"backend\":\"lsa\",\"placement\":\"%s\",\"sync_scope\":\"grid\",\"issuer\":"
	         "\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"chunks\":%lld}}",
	         placement, chunks);
	snprintf(code, sizeof(code), "// cuco-directive: %s\nint x = %d;\n", dir_json, gen);
	cuco_program_rec_init(&p);
	p.run_id = run;
	p.workload = "mini";
	p.origin = "candidate";
	p.code = code;
	p.directive = dir_json;
	p.generation = gen;
	p.island = 0;
	p.operator_ = "mutate";
	if (cuco_store_program_add(s, &p, &id, &err))
		fail_msg("%s", err.msg);
	if (!status)
		return id;
	cuco_eval_rec_init(&e);
	e.program_id = id;
	e.run_id = run;
	e.status = status;
	e.stage_reached = stage;
	e.error_code = strcmp(status, "ok") ? CUCO_ERR_COMPILE : CUCO_OK;
	e.error = error;
	e.fitness = fitness;
	if (cuco_store_eval_add(s, &e, &eid, &err))
		fail_msg("%s", err.msg);
	return id;
}

static void test_summary_fixture(void **state)
{
	struct cuco_store *s;
	struct cuco_err err;
	struct cuco_run_rec run;
	struct cuco_summary sum;
	struct cuco_bias bias;
	const struct cuco_summary_stat *st;
	char path[256], *json;
	int64_t rid, best;

	store_path(path, sizeof(path), "summary");
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	cuco_run_rec_init(&run);
	run.kind = "evolve";
	assert_int_equal(cuco_store_run_begin(s, &run, &rid, &err), CUCO_OK);
	put(s, rid, 1, "sequential", 4, "ok", "bench", 1.0, NULL);
	put(s, rid, 1, "sequential", 8, "ok", "bench", 1.2, NULL);
	put(s, rid, 1, "stream_overlap", 8, "ok", "bench", 1.5, NULL);
	best = put(s, rid, 2, "stream_overlap", 16, "ok", "bench", 1.9, NULL);
	put(s, rid, 2, "fused_consumer", 8, "compile", "compile", 0,
	    "x.cu:12: error: no (line 12)");
	put(s, rid, 2, "fused_consumer", 4, "compile", "compile", 0,
	    "x.cu:60: error: no (line 60)");
	put(s, rid, 2, "specialized", 64, "timeout", "run", 0, "rank 1 hung for 60 s");
	put(s, rid, 2, "specialized", 2, NULL, NULL, 0, NULL);      /* stored, never evaluated */
	put(s, rid, 3, "specialized", 4, "ok", "bench", 9.9, NULL); /* after the cut */
	assert_int_equal(cuco_summary_compute(s, rid, 2, &sum, &err), CUCO_OK);
	assert_int_equal(sum.nprograms, 8);
	assert_int_equal(sum.nevaluated, 7);
	assert_int_equal(sum.ncorrect, 4);
	assert_true(fabs(sum.best_fitness - 1.9) < 1e-12);
	assert_int_equal(sum.best_program, best);
	assert_true(fabs(sum.mean_fitness - (1.0 + 1.2 + 1.5 + 1.9) / 7) < 1e-12);
	st = cuco_summary_find(&sum, "placement", "stream_overlap");
	assert_non_null(st);
	assert_int_equal(st->n, 2);
	assert_true(fabs(st->sum / st->n - 1.7) < 1e-12 && fabs(st->best - 1.9) < 1e-12);
	st = cuco_summary_find(&sum, "placement", "fused_consumer");
	assert_int_equal(st->n, 2);
	assert_int_equal(st->ncorrect, 0);
	st = cuco_summary_find(&sum, "knobs.chunks", "8");
	assert_int_equal(st->n, 3);
	assert_true(fabs(st->sum - 2.7) < 1e-12);
	assert_null(cuco_summary_find(&sum, "knobs.chunks", "2")); /* not evaluated */
	assert_null(cuco_summary_find(&sum, "placement", "nonsense"));
	/* failures by stage and status; error prefixes group with digits folded */
	assert_int_equal(sum.nstages, 2);
	assert_string_equal(sum.stages[0].name, "compile");
	assert_int_equal(sum.stages[0].n, 2);
	assert_string_equal(sum.stages[1].name, "run");
	assert_string_equal(sum.statuses[1].name, "timeout");
	assert_int_equal(sum.nerrors, 2);
	assert_string_equal(sum.errors[0].name, "x.cu:##: error: no (line ##)");
	assert_int_equal(sum.errors[0].n, 2);
	json = cuco_summary_to_json(&sum);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"stream_overlap\":{\"n\":2,\"correct\":2"));
	assert_non_null(strstr(json, "\"failed_by_stage\":{\"compile\":2,\"run\":1}"));
	assert_non_null(strstr(json, "\"prefix\":\"x.cu:##: error: no (line ##)\",\"count\":2"));
	assert_int_equal(cuco_store_summary_add(s, rid, 2, "statistical", json, NULL, &err),
	                 CUCO_OK);
	free(json);
	/* the bias ranks values by smoothed mean fitness and never rules a seen value out */
	cuco_summary_bias(&sum, &ds, 2.0, &bias);
	assert_true(bias.active);
	assert_true(bias.dim[CUCO_DIM_PLACEMENT][1] >
	            bias.dim[CUCO_DIM_PLACEMENT][0]); /* overlap > seq */
	assert_true(bias.dim[CUCO_DIM_PLACEMENT][0] >
	            bias.dim[CUCO_DIM_PLACEMENT][3]); /* seq > consumer */
	assert_true(bias.dim[CUCO_DIM_PLACEMENT][3] > 0);
	assert_true(bias.dim[CUCO_DIM_PLACEMENT][2] == 0); /* fused_producer: no data */
	assert_true(bias.dim[CUCO_DIM_BACKEND][0] > 0);
	assert_int_equal(bias.nknobs, 1);
	assert_string_equal(bias.knob[0].name, "chunks");
	assert_int_equal(bias.knob[0].n, 4); /* 4, 8, 16, 64 */
	cuco_summary_release(&sum);
	/* the biased operator draws the better placement more often */
	{
		struct cuco_genes genes;
		struct cuco_op_ctx op = {&ds, &facts, &genes, &bias};
		struct cuco_directive parent, child;
		struct cuco_rng rng;
		int hist[5] = {0};
		cuco_genes_all(&genes, &ds);
		memset(genes.dims, 0, sizeof(genes.dims));
		genes.dims[CUCO_DIM_PLACEMENT] = 1;
		genes.nknobs = 0;
		cuco_rng_seed(&rng, 2);
		assert_int_equal(cuco_directive_from_json("{\"backend\":\"lsa\",\"placement\":"
		                                          "\"specialized\",\"sync_scope\":\"grid\","
		                                          "\"issuer\":\"cta\",\"granularity\":"
		                                          "\"chunk\",\"knobs\":{}}",
		                                          &parent, &err),
		                 CUCO_OK);
		for (int i = 0; i < 4000; i++) {
			assert_int_equal(
			    cuco_operator_mutate(&op, &parent, NULL, 1, &rng, &child, &err),
			    CUCO_OK);
			for (int v = 0; v < 5; v++)
				hist[v] += !strcmp(child.dims[CUCO_DIM_PLACEMENT],
				                   ds.dims[CUCO_DIM_PLACEMENT].values[v].name);
			cuco_directive_release(&child);
		}
		assert_int_equal(hist[4], 0); /* never the parent's own value */
		assert_true(hist[1] > hist[0] && hist[0] > hist[3]);
		cuco_directive_release(&parent);
	}
	/* an empty run summarises to nothing and biases nothing */
	assert_int_equal(cuco_summary_compute(s, 999, 10, &sum, &err), CUCO_OK);
	assert_int_equal(sum.nprograms, 0);
	cuco_summary_bias(&sum, &ds, 2.0, &bias);
	assert_false(bias.active);
	cuco_summary_release(&sum);
	cuco_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_evolve_run),
	    cmocka_unit_test(test_evolve_statistic_mean),
	    cmocka_unit_test(test_evolve_repeatable),
	    cmocka_unit_test(test_evolve_budget),
	    cmocka_unit_test(test_evolve_seed_mode),
	    cmocka_unit_test(test_evolve_freeze),
	    cmocka_unit_test(test_evolve_searched),
	    cmocka_unit_test(test_evolve_shipped_template),
	    cmocka_unit_test(test_evolve_shipped_template_inert),
	    cmocka_unit_test(test_evolve_interrupt_and_resume),
	    cmocka_unit_test(test_evolve_resume_after_sigkill),
	    cmocka_unit_test(test_evolve_pipeline_order),
	    cmocka_unit_test(test_evolve_pipeline_repeatable),
	    cmocka_unit_test(test_evolve_pipeline_budget),
	    cmocka_unit_test(test_evolve_pipeline_resume_more_generations),
	    cmocka_unit_test(test_evolve_pipeline_interrupt_and_resume),
	    cmocka_unit_test(test_evolve_pipeline_resume_after_sigkill),
	    cmocka_unit_test(test_evolve_resume_wrong_run),
	    cmocka_unit_test(test_summary_fixture),
	    cmocka_unit_test(test_outcome_combine),
	    cmocka_unit_test(test_evolve_shapes),
	    cmocka_unit_test(test_evolve_one_shape_unchanged),
	    cmocka_unit_test(test_config_shapes),
	    cmocka_unit_test(test_evolve_resume_knob_omitted),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
