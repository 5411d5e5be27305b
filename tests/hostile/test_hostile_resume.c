/*
 * test_hostile_resume.c - one run resumed twice at once (two `cuco evolve
 * --resume 1`, or one while the run still runs) would breed and judge side
 * by side, past its budget. The second is refused, saying why, and leaves
 * the stored run as it was; once the first ends, it resumes. The lock dies
 * with its process, even by SIGKILL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include "assert_text.h"
#include "hostile.h"
#include "search/evolve.h"
#include "search_fake.h"
#include "store/store.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char *seed_code, db[160];

static int setup(void **state)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	if (hostile_setup("resume") || cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK ||
	    cuco_strbuf_read_file(&sb, CUCO_SOURCE_DIR "/tests/fixtures/evolve/seed.cu"))
		return -1;
	seed_code = cuco_strbuf_detach(&sb, NULL);
	hostile_path("runs.db", db, sizeof(db));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(seed_code);
	cuco_design_space_release(&ds);
	hostile_teardown();
	return 0;
}

/* Run (resume: 0 for a new one) with a budget of 6 evaluations; cuco_evolve_run's code. */
static int evolve(int64_t resume, int generations, struct cuco_err *err)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_store *s = NULL;
	struct fake_eval f;
	int64_t run_id = 0;
	int rc;

	cuco_evolve_config_default(&cfg);
	cfg.search_seed = 3;
	cfg.islands = 1;
	cfg.generations = generations;
	cfg.children_per_island = 2;
	fake_init(&f);
	if (cuco_store_open(db, &s, err))
		return err->code;
	memset(&o, 0, sizeof(o));
	o.store = s;
	o.workload = "mini";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator = fake_evaluator(&f, 0);
	rc = cuco_evolve_run(&o, &cfg, resume, &run_id, NULL, err);
	cuco_store_close(s);
	return rc;
}

static char *run_row(void)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT * FROM runs WHERE id = 1", -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	for (int i = 0; i < sqlite3_column_count(st); i++)
		cuco_strbuf_addf(
		    &sb, "%s|",
		    sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "NULL");
	sqlite3_finalize(st);
	sqlite3_close(h);
	return cuco_strbuf_detach(&sb, NULL);
}

static void test_double_resume(void **state)
{
	struct cuco_store *first = NULL;
	struct cuco_err err;
	char *before, *after;
	int64_t programs;
	int fds[2];
	pid_t pid;

	(void)state;
	assert_int_equal(evolve(0, 1, &err), CUCO_OK);
	before = run_row();
	programs = sql_int(db, "SELECT COUNT(*) FROM programs");

	/* the first resume holds the run (here: a second handle on the store, in this process) */
	assert_int_equal(cuco_store_open(db, &first, &err), CUCO_OK);
	assert_int_equal(cuco_store_run_lock(first, 1, &err), CUCO_OK);
	assert_int_equal(evolve(1, 3, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "run 1 of ");
	assert_contains(err.msg, "in use by another cuco process");
	after = run_row();
	assert_string_equal(before, after); /* refused before anything changed */
	free(after);
	assert_int_equal(sql_int(db, "SELECT COUNT(*) FROM programs"), programs);
	cuco_store_close(first);

	/* held by another process, which then dies by SIGKILL: the run is free again */
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		struct cuco_store *s = NULL;
		char ok = cuco_store_open(db, &s, &err) == CUCO_OK &&
		          cuco_store_run_lock(s, 1, &err) == CUCO_OK;
		(void)!write(fds[1], &ok, 1);
		pause();
		_exit(0);
	}
	{
		char ok = 0;
		assert_int_equal(read(fds[0], &ok, 1), 1);
		assert_int_equal(ok, 1);
	}
	assert_int_equal(evolve(1, 3, &err), CUCO_ERR_INVALID);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(evolve(1, 3, &err), CUCO_OK);
	assert_true(sql_int(db, "SELECT COUNT(*) FROM programs") > programs);
	free(before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_double_resume),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
