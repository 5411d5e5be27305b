/*
 * test_evolve_resume_refused.c - what a resume trusts of the store: values
 * read back out of range (a generation of 2^31 - 1, an island off the
 * islands, a config's generations) are refused naming the run and the field,
 * and a refused resume leaves the stored run exactly as it was.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "assert_text.h"
#include "cascade/cascade.h"
#include "search/evolve.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "search_fake.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/evolve"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char *seed_code;
static char dir[64];

static int setup(void **state)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK ||
	    cuco_strbuf_read_file(&sb, FIXTURES "/seed.cu"))
		return -1;
	seed_code = cuco_strbuf_detach(&sb, NULL);
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-resume-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return -1;
	free(seed_code);
	cuco_design_space_release(&ds);
	return 0;
}

static void config(struct cuco_evolve_config *cfg)
{
	cuco_evolve_config_default(cfg);
	cfg->search_seed = 3;
	cfg->islands = 2;
	cfg->generations = 3;
	cfg->children_per_island = 2;
	cfg->population_size = 8;
	cfg->archive_size = 3;
}

/* Run (resume: 0 for a new run) in the store at path; cuco_evolve_run's code, err filled. */
static int evolve(const char *path, int64_t resume, struct cuco_err *err)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_store *s = NULL;
	struct fake_eval f;
	int64_t run_id = 0;
	int rc;

	config(&cfg);
	fake_init(&f);
	if (cuco_store_open(path, &s, err))
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

/* A finished run 1 in a fresh store named name; its path in path. */
static void finished_run(char *path, size_t n, const char *name)
{
	struct cuco_err err;

	snprintf(path, n, "%s/%s.db", dir, name);
	if (evolve(path, 0, &err))
		fail_msg("evolve: %s", err.msg);
	assert_int_equal(sql_int(path, "SELECT status = 'done' FROM runs WHERE id = 1"), 1);
}

/* Every column of run 1's row, quoted, one string (malloc'd). */
static char *run_row(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int n;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM runs WHERE id = 1", -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_count(st);
	for (int i = 0; i < n; i++) {
		const unsigned char *t = sqlite3_column_text(st, i);
		cuco_strbuf_addf(&sb, "%s=%s|", sqlite3_column_name(st, i),
		                 t ? (const char *)t : "NULL");
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return cuco_strbuf_detach(&sb, NULL);
}

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

/*
 * Damage the finished run's store with sql, resume it: refused with code,
 * the message holding want, and run 1's row byte for byte as it was.
 */
static void refused(const char *name, const char *sql, int code, const char *want)
{
	struct cuco_err err;
	char path[128], *before, *after;
	int rc;

	finished_run(path, sizeof(path), name);
	exec_sql(path, sql);
	before = run_row(path);
	alarm(60); /* a resume that loops forever ends the test instead of hanging it */
	rc = evolve(path, 1, &err);
	alarm(0);
	if (rc != code)
		fail_msg("%s: resume returned %d (%s), expected %d", name, rc, err.msg, code);
	assert_contains(err.msg, want);
	after = run_row(path);
	assert_string_equal(after, before);
	free(before);
	free(after);
}

static void test_generation_out_of_range(void **state)
{
	(void)state;
	refused("generation",
	        "UPDATE programs SET generation = 2147483647 WHERE id = (SELECT max(id) FROM "
	        "programs WHERE origin = 'candidate')",
	        CUCO_ERR_INVALID, "run 1: program ");
	refused("generation2",
	        "UPDATE programs SET generation = 2147483647 WHERE id = (SELECT max(id) FROM "
	        "programs WHERE origin = 'candidate')",
	        CUCO_ERR_INVALID, ": programs.generation 2147483647 is out of range (0 to 3");
	refused("negative", "UPDATE programs SET generation = -5 WHERE origin = 'candidate'",
	        CUCO_ERR_INVALID, "programs.generation -5 is out of range");
}

static void test_island_out_of_range(void **state)
{
	(void)state;
	refused("island",
	        "UPDATE programs SET island = 40 WHERE id = (SELECT max(id) FROM programs WHERE "
	        "origin = 'candidate')",
	        CUCO_ERR_INVALID, "programs.island 40 is out of range (0 to 1");
}

static void test_config_out_of_range(void **state)
{
	(void)state;
	refused("config", "UPDATE runs SET config = json_set(config, '$.generations', 2147483647)",
	        CUCO_ERR_INVALID,
	        "run 1: evolve config: generations: 2147483647 is out of range (0 to 1000000)");
	refused("islands", "UPDATE runs SET config = json_set(config, '$.islands', 0)",
	        CUCO_ERR_INVALID, "run 1: evolve config: islands: 0 is out of range (1 to 16)");
}

/* A resume the rebuild refuses for what is stored: the finished run stays 'done', untouched. */
static void test_refused_resume_leaves_run(void **state)
{
	(void)state;
	refused("gap",
	        "DELETE FROM evaluations WHERE program_id IN (SELECT id FROM programs WHERE "
	        "generation = 1 AND origin = 'candidate')",
	        CUCO_ERR_INVALID, "generation 1 has candidates without an evaluation");
	refused("noseed", "UPDATE programs SET name = 'not-the-seed' WHERE generation = 0",
	        CUCO_ERR_NOT_FOUND, "run 1 has no stored seed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_generation_out_of_range),
	    cmocka_unit_test(test_island_out_of_range),
	    cmocka_unit_test(test_config_out_of_range),
	    cmocka_unit_test(test_refused_resume_leaves_run),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
