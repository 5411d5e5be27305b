/* test_store.c - unit tests of the SQLite store's file: its path, schema, versions, refusal of
 * other files, transactions and connections (its rows: test_store_rows.c). */
#include <dirent.h>
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
#include "store_fixture.h"

static void test_default_path(void **state)
{
	(void)state;
	assert_int_equal(setenv("CUCO_STORE", "/x/y.db", 1), 0);
	assert_string_equal(cuco_store_default_path(), "/x/y.db");
	assert_int_equal(setenv("CUCO_STORE", "", 1), 0);
	assert_string_equal(cuco_store_default_path(), ".cuco/cuco.db");
	assert_int_equal(unsetenv("CUCO_STORE"), 0);
	assert_string_equal(cuco_store_default_path(), ".cuco/cuco.db");
	/* in the state directory, as the compile cache */
	assert_int_equal(setenv("CUCO_STATE", "/s/state", 1), 0);
	assert_string_equal(cuco_store_default_path(), "/s/state/cuco.db");
	assert_int_equal(setenv("CUCO_STORE", "/x/y.db", 1), 0);
	assert_string_equal(cuco_store_default_path(), "/x/y.db");
	assert_int_equal(unsetenv("CUCO_STORE"), 0);
	assert_int_equal(unsetenv("CUCO_STATE"), 0);
	assert_string_equal(cuco_store_default_path(), ".cuco/cuco.db");
}

static void test_hash_code(void **state)
{
	char h[CUCO_STORE_HASH_LEN + 1];

	(void)state;
	cuco_store_hash_code("abc", h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cuco_store_hash_code("", h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* 56 bytes: the padding spills into a second block. */
	cuco_store_hash_code("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_fresh_schema(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	char *v = NULL;

	assert_string_equal(cuco_store_path(s), f->path);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	assert_int_equal(raw_int(f->path, "PRAGMA application_id"), CUCO_STORE_APPLICATION_ID);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type='table' "
	                                  "AND name IN ('runs','programs','program_parents',"
	                                  "'evaluations','llm_calls','summaries','meta')"),
	                 7);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type='index' "
	                                  "AND name IN ('programs_hash','evaluations_program_id',"
	                                  "'programs_run_id')"),
	                 3);
	assert_ok(cuco_store_meta_get(s, "created_by", &v, &err));
	assert_non_null(v);
	assert_non_null(strstr(v, "cuco"));
	free(v);
	cuco_store_close(s);
}

static void test_wal_mode(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	/* The journal mode is persistent in the file: a second connection sees it. */
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
	/* And the file header says WAL (bytes 18 and 19 are 2). */
	{
		struct cuco_strbuf b = CUCO_STRBUF_INIT;

		read_bytes(f->path, &b);
		assert_true(b.len >= 100);
		assert_int_equal((unsigned char)b.buf[18], 2);
		assert_int_equal((unsigned char)b.buf[19], 2);
		cuco_strbuf_release(&b);
	}
	cuco_store_close(s);
}

static void test_meta(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	char *v = NULL;

	assert_ok(cuco_store_meta_get(s, "island_count", &v, &err));
	assert_null(v);
	assert_ok(cuco_store_meta_set(s, "island_count", "4", &err));
	assert_ok(cuco_store_meta_get(s, "island_count", &v, &err));
	assert_string_equal(v, "4");
	free(v);
	assert_ok(cuco_store_meta_set(s, "island_count", "8", &err));
	assert_ok(cuco_store_meta_get(s, "island_count", &v, &err));
	assert_string_equal(v, "8");
	free(v);
	/* A value that looks like SQL is just a value. */
	assert_ok(cuco_store_meta_set(s, "k'; DROP TABLE runs; --", "v'\"", &err));
	assert_ok(cuco_store_meta_get(s, "k'; DROP TABLE runs; --", &v, &err));
	assert_string_equal(v, "v'\"");
	free(v);
	assert_ok(cuco_store_meta_set(s, "island_count", NULL, &err));
	assert_ok(cuco_store_meta_get(s, "island_count", &v, &err));
	assert_null(v);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name='runs'"),
	                 1);
	cuco_store_close(s);
}

static void test_reopen_keeps_data(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run, out;
	struct cuco_program_rec prog, pout;
	int64_t run_id = 0, pid = 0, run2 = 0;
	char *v = NULL;

	cuco_run_rec_init(&run);
	run.kind = "fastpath";
	run.workload = "w1";
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	cuco_program_rec_init(&prog);
	prog.run_id = run_id;
	prog.workload = "w1";
	prog.origin = "compute";
	prog.code = "int main(void) { return 0; }";
	assert_ok(cuco_store_program_add(s, &prog, &pid, &err));
	assert_ok(cuco_store_meta_set(s, "k", "v", &err));
	cuco_store_close(s);

	s = open_ok(f->path);
	assert_ok(cuco_store_run_get(s, run_id, &out, &err));
	assert_string_equal(out.kind, "fastpath");
	assert_string_equal(out.workload, "w1");
	cuco_run_rec_release(&out);
	assert_ok(cuco_store_program_get(s, pid, &pout, &err));
	assert_string_equal(pout.code, "int main(void) { return 0; }");
	cuco_program_rec_release(&pout);
	assert_ok(cuco_store_meta_get(s, "k", &v, &err));
	assert_string_equal(v, "v");
	free(v);
	/* New rows continue after the old ones. */
	assert_ok(cuco_store_run_begin(s, &run, &run2, &err));
	assert_true(run2 > run_id);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
	cuco_store_close(s);
}

static void test_newer_version_refused(void **state)
{
	struct fixture *f = *state;
	struct cuco_strbuf before = CUCO_STRBUF_INIT;
	struct cuco_store *s = (struct cuco_store *)(uintptr_t)1; /* must become NULL */
	struct cuco_err err = {0};
	char want[64];

	raw_exec(f->path, "CREATE TABLE runs(id INTEGER PRIMARY KEY, future TEXT);"
	                  "INSERT INTO runs(future) VALUES ('keep me');"
	                  "PRAGMA user_version = 99; PRAGMA application_id = 1668637551;");
	read_bytes(f->path, &before);
	assert_true(before.len > 0);

	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_ERR_SCHEMA);
	assert_null(s);
	assert_int_equal(err.code, CUCO_ERR_SCHEMA);
	assert_non_null(strstr(err.msg, f->path));
	assert_non_null(strstr(err.msg, "version 99"));
	snprintf(want, sizeof(want), "version %d", CUCO_STORE_SCHEMA_VERSION);
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.msg, "newer cuco"));
	assert_file_unchanged(f->path, &before);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 99);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM runs WHERE future = 'keep me'"), 1);
	cuco_strbuf_release(&before);
}

/* The text of a fixture file (malloc'd). */
static void test_garbage_file_refused(void **state)
{
	struct fixture *f = *state;
	struct cuco_strbuf before = CUCO_STRBUF_INIT;
	struct cuco_store *s = NULL;
	struct cuco_err err = {0};
	FILE *fp = fopen(f->path, "wb");
	int i;

	assert_non_null(fp);
	for (i = 0; i < 8192; i++)
		fputc((i * 131 + 7) & 0xff, fp);
	fclose(fp);
	read_bytes(f->path, &before);

	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_ERR_SCHEMA);
	assert_null(s);
	assert_non_null(strstr(err.msg, f->path));
	assert_non_null(strstr(err.msg, "not a cuco store"));
	assert_file_unchanged(f->path, &before);

	/* Text that is too short to have an SQLite header, too. */
	fp = fopen(f->path, "wb");
	assert_non_null(fp);
	fputs("hello, I am a CSV file\n1,2,3\n", fp);
	fclose(fp);
	read_bytes(f->path, &before);
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_ERR_SCHEMA);
	assert_non_null(strstr(err.msg, f->path));
	assert_file_unchanged(f->path, &before);
	cuco_strbuf_release(&before);
}

static void test_foreign_sqlite_refused(void **state)
{
	struct fixture *f = *state;
	struct cuco_strbuf before = CUCO_STRBUF_INIT;
	struct cuco_store *s = NULL;
	struct cuco_err err = {0};

	/* Another application's database without a user_version. */
	raw_exec(f->path, "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES ('a');");
	read_bytes(f->path, &before);
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_ERR_SCHEMA);
	assert_non_null(strstr(err.msg, f->path));
	assert_file_unchanged(f->path, &before);

	/* ... and one with an application_id of its own. */
	raw_exec(f->path, "PRAGMA application_id = 42; PRAGMA user_version = 1;");
	read_bytes(f->path, &before);
	assert_int_equal(cuco_store_open(f->path, &s, &err), CUCO_ERR_SCHEMA);
	assert_non_null(strstr(err.msg, "another application"));
	assert_file_unchanged(f->path, &before);
	assert_null(s);
	cuco_strbuf_release(&before);
}

static void test_missing_directory(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = NULL;
	struct cuco_err err = {0};
	char path[256];

	snprintf(path, sizeof(path), "%s/no/such/dir/cuco.db", f->dir);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_ERR_STORE);
	assert_null(s);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(err.file);
	assert_true(err.line > 0);
}

static void test_transactions(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run, out;
	struct cuco_program_rec prog, pout;
	struct cuco_parent parent;
	int64_t run_id = 0, pid = 0, kept = 0, bad = 0;
	char *v = NULL;

	cuco_run_rec_init(&run);
	run.kind = "evolve";
	cuco_program_rec_init(&prog);
	prog.workload = "w";
	prog.origin = "seed";
	prog.code = "rolled back";

	/* Rollback discards runs, programs, parents and meta written inside. */
	assert_ok(cuco_store_begin(s, &err));
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	prog.run_id = run_id;
	assert_ok(cuco_store_program_add(s, &prog, &pid, &err));
	assert_ok(cuco_store_meta_set(s, "tx", "1", &err));
	/* Visible inside the transaction. */
	assert_ok(cuco_store_program_get(s, pid, &pout, &err));
	cuco_program_rec_release(&pout);
	assert_ok(cuco_store_rollback(s, &err));
	assert_int_equal(cuco_store_run_get(s, run_id, &out, &err), CUCO_ERR_NOT_FOUND);
	assert_int_equal(cuco_store_program_get(s, pid, &pout, &err), CUCO_ERR_NOT_FOUND);
	assert_ok(cuco_store_meta_get(s, "tx", &v, &err));
	assert_null(v);
	cuco_store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM runs"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs"), 0);

	/* Commit keeps; a failed program_add inside a transaction undoes only itself. */
	s = open_ok(f->path);
	assert_ok(cuco_store_begin(s, &err));
	assert_int_equal(cuco_store_begin(s, &err), CUCO_ERR_INVALID);
	prog.run_id = 0;
	prog.code = "kept";
	assert_ok(cuco_store_program_add(s, &prog, &kept, &err));
	parent.id = 777;
	parent.kind = "crossover";
	prog.parents = &parent;
	prog.nparents = 1;
	prog.code = "bad parent";
	assert_int_equal(cuco_store_program_add(s, &prog, &bad, &err), CUCO_ERR_INVALID);
	assert_ok(cuco_store_commit(s, &err));
	assert_int_equal(cuco_store_commit(s, &err), CUCO_ERR_INVALID);
	assert_int_equal(cuco_store_rollback(s, &err), CUCO_ERR_INVALID);
	cuco_store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs WHERE code = 'kept'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM program_parents"), 0);

	/* Closing with a transaction open discards it. */
	s = open_ok(f->path);
	assert_ok(cuco_store_begin(s, &err));
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	cuco_store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM runs"), 0);
}

static void test_two_connections(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *a = open_ok(f->path);
	struct cuco_store *b = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run, out;
	int64_t id = 0;

	/* What one connection commits, the other reads; uncommitted work stays private. */
	cuco_run_rec_init(&run);
	run.kind = "eval";
	assert_ok(cuco_store_begin(a, &err));
	assert_ok(cuco_store_run_begin(a, &run, &id, &err));
	assert_int_equal(cuco_store_run_get(b, id, &out, &err), CUCO_ERR_NOT_FOUND);
	assert_ok(cuco_store_commit(a, &err));
	assert_ok(cuco_store_run_get(b, id, &out, &err));
	assert_string_equal(out.kind, "eval");
	cuco_run_rec_release(&out);
	assert_ok(cuco_store_run_finish(b, id, "interrupted", &err));
	assert_ok(cuco_store_run_get(a, id, &out, &err));
	assert_string_equal(out.status, "interrupted");
	cuco_run_rec_release(&out);
	cuco_store_close(b);
	cuco_store_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_path),
	    cmocka_unit_test(test_hash_code),
	    cmocka_unit_test_setup_teardown(test_fresh_schema, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wal_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_meta, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reopen_keeps_data, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_newer_version_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_garbage_file_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_foreign_sqlite_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_connections, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
