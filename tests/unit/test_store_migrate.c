/*
 * test_store_migrate.c - an older store is migrated in place on open: every row
 * kept, new columns NULL in old rows, renamed columns and keys carried over;
 * opening it again changes nothing.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_fixture.h"

/* A single row read with a separate raw SQLite connection, bypassing the store. */
static sqlite3_stmt *raw_row(const char *path, const char *sql, sqlite3 **db)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(*db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	return st;
}

static char *raw_text(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = raw_row(path, sql, &db);
	const unsigned char *t = sqlite3_column_text(st, 0);
	char *v = t ? strdup((const char *)t) : NULL;

	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

#define assert_raw_text(path, sql, want)              \
	do {                                          \
		char *got_ = raw_text((path), (sql)); \
		assert_non_null(got_);                \
		assert_string_equal(got_, (want));    \
		free(got_);                           \
	} while (0)

static char *fixture_text(const char *name)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char path[512];

	snprintf(path, sizeof(path), "%s/tests/fixtures/store/%s", CUCO_SOURCE_DIR, name);
	if (cuco_strbuf_read_file(&sb, path))
		fail_msg("cannot read %s", path);
	return cuco_strbuf_detach(&sb, NULL);
}

/* A version-1 store is migrated in place: every row kept, the new column there and NULL. */
static void test_migrate_v1(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = NULL;
	struct cuco_program_rec p;
	struct cuco_err err = {0};
	char *sql = fixture_text("v1.sql");
	int64_t id;

	raw_exec(f->path, sql);
	free(sql);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_OK);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM program_parents"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM evaluations"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM llm_calls"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM summaries"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM meta"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs WHERE flags IS NULL"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM runs WHERE error IS NULL"), 1);
	assert_raw_text(f->path, "SELECT config FROM runs WHERE id = 1", "{\"search_seed\":1}");
	/* old rows read back as before, with no flags */
	assert_int_equal(cuco_store_program_get(s, 2, &p, &err), CUCO_OK);
	assert_string_equal(p.name, "g1-i0-c0");
	assert_string_equal(p.code, "// child v1");
	assert_string_equal(p.operator_, "llm-diff");
	assert_int_equal(p.nparents, 1);
	assert_int_equal(p.parents[0].id, 1);
	assert_null(p.flags);
	cuco_program_rec_release(&p);
	/* new rows carry flags */
	p.workload = "gemm_allgather";
	p.origin = "candidate";
	p.code = "// flagged";
	p.flags = "directive says backend \"ce\" but the code makes no copy-engine copy\n";
	assert_int_equal(cuco_store_program_add(s, &p, &id, &err), CUCO_OK);
	cuco_program_rec_init(&p);
	assert_int_equal(cuco_store_program_get(s, id, &p, &err), CUCO_OK);
	assert_non_null(p.flags);
	assert_non_null(strstr(p.flags, "no copy-engine copy"));
	cuco_program_rec_release(&p);
	cuco_store_close(s);
	/* opening again changes nothing */
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_OK);
	cuco_store_close(s);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs"), 3);
}

/* The row counts of every table of a migrated fixture store. */
static void assert_counts(const char *path, int runs, int programs, int evals, int calls, int meta)
{
	assert_int_equal(raw_int(path, "SELECT count(*) FROM runs"), runs);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM programs"), programs);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM program_parents"), 1);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM evaluations"), evals);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM llm_calls"), calls);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM summaries"), 1);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM meta"), meta);
}

/*
 * A version-5 store: llm_calls.seed becomes sampling_seed and an evolve run's
 * config key "seed" becomes "search_seed", values kept; a recheck run's "seed"
 * (an input seed), other runs and every other row stay as they were.
 */
static void test_migrate_v5(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = NULL;
	struct cuco_llm_call_rec call;
	struct cuco_run_rec run;
	struct cuco_err err = {0};
	char *sql = fixture_text("v5.sql");
	int64_t id;

	raw_exec(f->path, sql);
	free(sql);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 5);
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_OK);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	assert_counts(f->path, 4, 2, 1, 3, 3);

	/* llm_calls: the column renamed, every value kept */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pragma_table_info('llm_calls') "
	                                  "WHERE name = 'seed'"),
	                 0);
	assert_int_equal(raw_int(f->path, "SELECT sum(sampling_seed) FROM llm_calls"),
	                 123456789 + 987654321);
	cuco_llm_call_rec_init(&call);
	assert_int_equal(cuco_store_llm_call_get(s, 1, &call, &err), CUCO_OK);
	assert_int_equal(call.sampling_seed, 123456789);
	assert_int_equal(call.http_status, 200);
	assert_string_equal(call.finish_reason, "stop");
	assert_int_equal(call.attempts, 1);
	assert_string_equal(call.purpose, "mutation");
	assert_int_equal(call.tokens_in, 100);
	cuco_llm_call_rec_release(&call);
	assert_int_equal(cuco_store_llm_call_get(s, 2, &call, &err), CUCO_OK);
	assert_int_equal(call.sampling_seed, 987654321);
	assert_int_equal(call.http_status, 500);
	assert_null(call.finish_reason);
	cuco_llm_call_rec_release(&call);
	assert_int_equal(cuco_store_llm_call_get(s, 3, &call, &err), CUCO_OK);
	assert_int_equal(call.sampling_seed, CUCO_STORE_NO_INT);
	assert_int_equal(call.attempts, 0);
	cuco_llm_call_rec_release(&call);

	/* runs: the evolve run's search seed renamed, the rest of its config kept */
	assert_int_equal(raw_int(f->path, "SELECT json_extract(config, '$.search_seed') FROM runs "
	                                  "WHERE id = 1"),
	                 18);
	assert_int_equal(raw_int(f->path, "SELECT json_type(config, '$.seed') IS NULL FROM runs "
	                                  "WHERE id = 1"),
	                 1);
	assert_int_equal(raw_int(f->path, "SELECT json_extract(config, '$.islands') + "
	                                  "json_extract(config, '$.generations') FROM runs "
	                                  "WHERE id = 1"),
	                 5);
	assert_raw_text(f->path,
	                "SELECT json_extract(config, '$.llm.models[0]') FROM runs WHERE id = 1",
	                "model-a");
	assert_raw_text(f->path, "SELECT config FROM runs WHERE id = 2",
	                "{\"timing\":\"sustained\"}");
	assert_raw_text(f->path, "SELECT config FROM runs WHERE id = 3",
	                "{\"of_run\":1,\"program\":2,\"seed\":99}");
	assert_raw_text(f->path, "SELECT config FROM runs WHERE id = 4", "{\"islands\":1}");
	cuco_run_rec_init(&run);
	assert_int_equal(cuco_store_run_get(s, 1, &run, &err), CUCO_OK);
	assert_string_equal(run.status, "done");
	assert_string_equal(run.finished_at, "2026-11-01T00:10:00.000Z");
	cuco_run_rec_release(&run);
	assert_int_equal(cuco_store_run_get(s, 2, &run, &err), CUCO_OK);
	assert_string_equal(run.status, "failed");
	assert_string_equal(run.error, "rank 1 made no progress");
	cuco_run_rec_release(&run);

	/* the other tables as they were */
	assert_raw_text(f->path, "SELECT flags FROM programs WHERE id = 2", "a flag");
	assert_raw_text(f->path, "SELECT diagnosis FROM evaluations WHERE id = 1",
	                "- slower: one stream");
	assert_raw_text(f->path, "SELECT value FROM meta WHERE key = 'run.1.recheck'",
	                "{\"recheck_run\":3,\"program\":2,\"seed\":99,\"sanitized\":false,"
	                "\"passed\":true,\"checks\":[]}");

	/* new rows write the new column */
	cuco_llm_call_rec_init(&call);
	call.run_id = 1;
	call.model = "model-b";
	call.sampling_seed = 4242;
	assert_int_equal(cuco_store_llm_call_add(s, &call, &id, &err), CUCO_OK);
	assert_int_equal(cuco_store_llm_call_get(s, id, &call, &err), CUCO_OK);
	assert_int_equal(call.sampling_seed, 4242);
	cuco_llm_call_rec_release(&call);
	cuco_store_close(s);

	/* opening again changes nothing */
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_OK);
	cuco_store_close(s);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	assert_counts(f->path, 4, 2, 1, 4, 3);
	assert_int_equal(raw_int(f->path, "SELECT json_extract(config, '$.search_seed') FROM runs "
	                                  "WHERE id = 1"),
	                 18);
	assert_raw_text(f->path, "SELECT config FROM runs WHERE id = 3",
	                "{\"of_run\":1,\"program\":2,\"seed\":99}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_migrate_v1, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_migrate_v5, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
