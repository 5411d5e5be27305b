/* test_store.c - unit tests of the SQLite store: round trips, versions, refusal, transactions. */
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
#include <sqlite3.h>

#include "store/store.h"
#include "util/strbuf.h"

/* Per-test state: a fresh temporary directory and the store path inside it. */
struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/cuco-test-store-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/cuco.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct dirent *de;
	char file[512];
	DIR *d = opendir(f->dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(file, sizeof(file), "%s/%s", f->dir, de->d_name);
			unlink(file);
		}
		closedir(d);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct cuco_store *open_ok(const char *path)
{
	struct cuco_store *s = NULL;
	struct cuco_err err = {0};
	int ret = cuco_store_open(path, &s, &err);

	if (ret)
		fail_msg("cuco_store_open(%s): %d %s", path, ret, err.msg);
	assert_non_null(s);
	return s;
}

#define assert_ok(expr)                                              \
	do {                                                         \
		int ret_ = (expr);                                   \
		if (ret_ != CUCO_OK)                                 \
			fail_msg("%s: %d %s", #expr, ret_, err.msg); \
	} while (0)

/* Read an integer with a separate raw SQLite connection, bypassing the store. */
static int64_t raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void read_bytes(const char *path, struct cuco_strbuf *sb)
{
	cuco_strbuf_reset(sb);
	assert_int_equal(cuco_strbuf_read_file(sb, path), 0);
}

static void assert_file_unchanged(const char *path, const struct cuco_strbuf *before)
{
	struct cuco_strbuf after = CUCO_STRBUF_INIT;

	read_bytes(path, &after);
	assert_int_equal(after.len, before->len);
	assert_memory_equal(after.buf, before->buf, before->len);
	cuco_strbuf_release(&after);
}

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

static int count_run(const struct cuco_run_rec *run, void *arg, struct cuco_err *err)
{
	(void)err;
	(void)run;
	(*(int *)arg)++;
	return 0;
}

static void test_run_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec in, out;
	int64_t id = 0, id2 = 0;
	int n = 0;

	cuco_run_rec_init(&in);
	in.kind = "bench";
	in.workload = "allgather_gemm";
	in.shape = "m4096";
	in.config = "{\"iters\": 20}";
	in.status = "done"; /* ignored: a run begins 'running' */
	in.cuco_version = "0.1.0";
	in.host = "node1";
	in.gpu = "H200";
	in.commit_id = "abc123";
	assert_ok(cuco_store_run_begin(s, &in, &id, &err));
	assert_true(id > 0);

	assert_ok(cuco_store_run_get(s, id, &out, &err));
	assert_int_equal(out.id, id);
	assert_string_equal(out.kind, "bench");
	assert_string_equal(out.workload, "allgather_gemm");
	assert_string_equal(out.shape, "m4096");
	assert_string_equal(out.config, "{\"iters\": 20}");
	assert_string_equal(out.status, "running");
	assert_null(out.finished_at);
	assert_string_equal(out.cuco_version, "0.1.0");
	assert_string_equal(out.host, "node1");
	assert_string_equal(out.gpu, "H200");
	assert_string_equal(out.commit_id, "abc123");
	assert_non_null(out.created_at);
	assert_int_equal(strlen(out.created_at), strlen("2024-01-02T03:04:05.678Z"));
	cuco_run_rec_release(&out);
	assert_null(out.kind);

	assert_ok(cuco_store_run_finish(s, id, "done", &err));
	assert_ok(cuco_store_run_get(s, id, &out, &err));
	assert_string_equal(out.status, "done");
	assert_non_null(out.finished_at);
	cuco_run_rec_release(&out);

	assert_null(out.error);
	/* a failed run keeps why; resuming it clears that, finishing keeps it */
	assert_ok(cuco_store_run_fail(s, id, "evolve: no GPU", &err));
	assert_ok(cuco_store_run_get(s, id, &out, &err));
	assert_string_equal(out.status, "failed");
	assert_string_equal(out.error, "evolve: no GPU");
	assert_non_null(out.finished_at);
	cuco_run_rec_release(&out);
	assert_ok(cuco_store_run_finish(s, id, "failed", &err));
	assert_ok(cuco_store_run_get(s, id, &out, &err));
	assert_string_equal(out.error, "evolve: no GPU");
	cuco_run_rec_release(&out);
	assert_ok(cuco_store_run_finish(s, id, "running", &err));
	assert_ok(cuco_store_run_get(s, id, &out, &err));
	assert_null(out.error);
	cuco_run_rec_release(&out);
	assert_ok(cuco_store_run_finish(s, id, "done", &err));
	assert_int_equal(cuco_store_run_fail(s, id + 100, "x", &err), CUCO_ERR_NOT_FOUND);

	assert_int_equal(cuco_store_run_finish(s, id + 100, "failed", &err), CUCO_ERR_NOT_FOUND);
	assert_int_equal(cuco_store_run_finish(s, id, "finished", &err), CUCO_ERR_INVALID);
	assert_int_equal(cuco_store_run_get(s, id + 100, &out, &err), CUCO_ERR_NOT_FOUND);
	assert_null(out.kind);

	in.config = "{not json";
	assert_int_equal(cuco_store_run_begin(s, &in, &id2, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "config"));
	in.config = NULL;
	in.kind = NULL;
	assert_int_equal(cuco_store_run_begin(s, &in, &id2, &err), CUCO_ERR_INVALID);
	in.kind = "eval";
	assert_ok(cuco_store_run_begin(s, &in, &id2, &err));
	assert_true(id2 > id);
	assert_ok(cuco_store_run_each(s, count_run, &n, &err));
	assert_int_equal(n, 2);
	cuco_store_close(s);
}

/* Collects ids seen by the iteration callbacks. */
struct ids {
	int64_t v[16];
	int n;
	int stop_after; /* 0: never stop */
};

static int collect_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct ids *ids = arg;

	(void)err;
	assert_true(ids->n < 16);
	ids->v[ids->n++] = p->id;
	assert_non_null(p->code);
	return 0;
}

static int collect_eval(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct ids *ids = arg;

	assert_true(ids->n < 16);
	ids->v[ids->n++] = ev->id;
	if (ids->stop_after && ids->n == ids->stop_after)
		return cuco_err_set(err, CUCO_ERR_INVALID, "stopped on purpose");
	return 0;
}

static int64_t count_rows(const char *path, const char *table_sql)
{
	return raw_int(path, table_sql);
}

static void test_program_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run;
	struct cuco_program_rec in, out;
	struct cuco_parent parents[2];
	struct ids ids = {0};
	char hash[CUCO_STORE_HASH_LEN + 1];
	int64_t run_id = 0, base = 0, peer = 0, child = 0, found = -1, other_run = 0, bad = 0;

	cuco_run_rec_init(&run);
	run.kind = "evolve";
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	assert_ok(cuco_store_run_begin(s, &run, &other_run, &err));

	cuco_program_rec_init(&in);
	in.run_id = run_id;
	in.workload = "allgather_gemm";
	in.name = "baseline";
	in.origin = "baseline";
	in.code = "__global__ void k() {}\n";
	assert_ok(cuco_store_program_add(s, &in, &base, &err));

	in.name = "peer";
	in.origin = "peer";
	in.code = "// peer\n";
	in.hash = "h-peer";
	assert_ok(cuco_store_program_add(s, &in, &peer, &err));

	parents[0].id = base;
	parents[0].kind = NULL; /* means 'parent' */
	parents[1].id = peer;
	parents[1].kind = "inspiration";
	in.name = "gen1-i0-c0";
	in.origin = "candidate";
	in.code = "// child\n";
	in.hash = NULL;
	in.directive = "{\"op\": \"fuse\"}";
	in.island = 0;
	in.generation = 1;
	in.operator_ = "llm_rewrite";
	in.parents = parents;
	in.nparents = 2;
	assert_ok(cuco_store_program_add(s, &in, &child, &err));

	assert_ok(cuco_store_program_get(s, child, &out, &err));
	assert_int_equal(out.id, child);
	assert_int_equal(out.run_id, run_id);
	assert_string_equal(out.workload, "allgather_gemm");
	assert_string_equal(out.name, "gen1-i0-c0");
	assert_string_equal(out.origin, "candidate");
	assert_string_equal(out.code, "// child\n");
	cuco_store_hash_code("// child\n", hash);
	assert_string_equal(out.hash, hash);
	assert_string_equal(out.directive, "{\"op\": \"fuse\"}");
	assert_int_equal(out.island, 0);
	assert_int_equal(out.generation, 1);
	assert_string_equal(out.operator_, "llm_rewrite");
	assert_non_null(out.created_at);
	assert_int_equal(out.nparents, 2);
	assert_int_equal(out.parents[0].id, base);
	assert_string_equal(out.parents[0].kind, "parent");
	assert_int_equal(out.parents[1].id, peer);
	assert_string_equal(out.parents[1].kind, "inspiration");
	cuco_program_rec_release(&out);
	assert_null(out.parents);
	assert_int_equal(out.nparents, 0);

	/* Caller-given hash is kept as is. */
	assert_ok(cuco_store_program_get(s, peer, &out, &err));
	assert_string_equal(out.hash, "h-peer");
	assert_int_equal(out.nparents, 0);
	cuco_program_rec_release(&out);

	assert_ok(cuco_store_program_find_hash(s, "allgather_gemm", hash, &found, &err));
	assert_int_equal(found, child);
	assert_ok(cuco_store_program_find_hash(s, "other_workload", hash, &found, &err));
	assert_int_equal(found, 0);
	assert_ok(cuco_store_program_find_hash(s, "allgather_gemm", "nope", &found, &err));
	assert_int_equal(found, 0);

	/* Lineage: children of base and of peer are the child. */
	assert_ok(cuco_store_program_each_child(s, base, collect_program, &ids, &err));
	assert_int_equal(ids.n, 1);
	assert_int_equal(ids.v[0], child);
	ids.n = 0;
	assert_ok(cuco_store_program_each_child(s, child, collect_program, &ids, &err));
	assert_int_equal(ids.n, 0);

	/* Programs of a run, in order; another run has none; 0 lists all. */
	assert_ok(cuco_store_program_each(s, run_id, collect_program, &ids, &err));
	assert_int_equal(ids.n, 3);
	assert_int_equal(ids.v[0], base);
	assert_int_equal(ids.v[1], peer);
	assert_int_equal(ids.v[2], child);
	ids.n = 0;
	assert_ok(cuco_store_program_each(s, other_run, collect_program, &ids, &err));
	assert_int_equal(ids.n, 0);
	assert_ok(cuco_store_program_each(s, 0, collect_program, &ids, &err));
	assert_int_equal(ids.n, 3);

	/* A missing parent fails the whole insert: no program row is left behind. */
	parents[1].id = 9999;
	assert_int_equal(cuco_store_program_add(s, &in, &bad, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, f->path));
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM programs"), 3);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM program_parents"), 2);

	/* Invalid inputs. */
	in.nparents = 0;
	in.directive = "[1,";
	assert_int_equal(cuco_store_program_add(s, &in, &bad, &err), CUCO_ERR_INVALID);
	in.directive = NULL;
	in.origin = NULL;
	assert_int_equal(cuco_store_program_add(s, &in, &bad, &err), CUCO_ERR_INVALID);
	in.origin = "file";
	in.run_id = 12345;
	assert_int_equal(cuco_store_program_add(s, &in, &bad, &err), CUCO_ERR_INVALID);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM programs"), 3);
	assert_int_equal(cuco_store_program_get(s, 12345, &out, &err), CUCO_ERR_NOT_FOUND);
	cuco_store_close(s);
}

static void test_eval_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run;
	struct cuco_program_rec prog;
	struct cuco_eval_rec in, out;
	struct ids ids = {0};
	int64_t run_id = 0, pid = 0, pid2 = 0, e1 = 0, e2 = 0, e3 = 0;

	cuco_run_rec_init(&run);
	run.kind = "eval";
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	cuco_program_rec_init(&prog);
	prog.workload = "w";
	prog.origin = "file";
	prog.code = "x";
	assert_ok(cuco_store_program_add(s, &prog, &pid, &err));
	prog.code = "y";
	assert_ok(cuco_store_program_add(s, &prog, &pid2, &err));

	cuco_eval_rec_init(&in);
	in.program_id = pid;
	in.run_id = run_id;
	in.shape = "m4096";
	in.ranks = 8;
	in.stage_reached = "bench";
	in.status = "ok";
	in.error_code = CUCO_OK;
	in.compile_log = "nvcc: ok";
	in.run_log = "rank 0 done";
	in.median_us = 123.5;
	in.p10_us = 120.25;
	in.p90_us = 130.0;
	in.min_us = 119.0;
	in.mean_us = 124.0;
	in.samples_json = "[119.0, 123.5, 130.0]";
	in.rel_err = 1e-6;
	in.fitness = -123.5;
	in.result_json = "{\"ok\": true"; /* raw, even truncated, is kept */
	in.gpu = "H200";
	assert_ok(cuco_store_eval_add(s, &in, &e1, &err));

	assert_ok(cuco_store_eval_get(s, e1, &out, &err));
	assert_int_equal(out.id, e1);
	assert_int_equal(out.program_id, pid);
	assert_int_equal(out.run_id, run_id);
	assert_string_equal(out.shape, "m4096");
	assert_int_equal(out.ranks, 8);
	assert_string_equal(out.stage_reached, "bench");
	assert_string_equal(out.status, "ok");
	assert_int_equal(out.error_code, CUCO_OK);
	assert_null(out.error);
	assert_string_equal(out.compile_log, "nvcc: ok");
	assert_string_equal(out.run_log, "rank 0 done");
	assert_true(out.median_us == 123.5);
	assert_true(out.p10_us == 120.25);
	assert_true(out.p90_us == 130.0);
	assert_true(out.min_us == 119.0);
	assert_true(out.mean_us == 124.0);
	assert_string_equal(out.samples_json, "[119.0, 123.5, 130.0]");
	assert_true(out.rel_err == 1e-6);
	assert_true(out.fitness == -123.5);
	assert_string_equal(out.result_json, "{\"ok\": true");
	assert_string_equal(out.gpu, "H200");
	assert_non_null(out.created_at);
	cuco_eval_rec_release(&out);

	/* A failed evaluation of the same program, and one of another program without a run. */
	cuco_eval_rec_init(&in);
	in.program_id = pid;
	in.run_id = run_id;
	in.stage_reached = "compile";
	in.status = cuco_result_token(CUCO_ERR_COMPILE);
	in.error_code = CUCO_ERR_COMPILE;
	in.error = "x.cu:3:1: error: expected ';'";
	assert_ok(cuco_store_eval_add(s, &in, &e2, &err));
	in.program_id = pid2;
	in.run_id = 0;
	assert_ok(cuco_store_eval_add(s, &in, &e3, &err));
	assert_ok(cuco_store_eval_get(s, e2, &out, &err));
	assert_string_equal(out.status, "compile");
	assert_int_equal(out.error_code, CUCO_ERR_COMPILE);
	assert_true(isnan(out.median_us));
	cuco_eval_rec_release(&out);

	assert_ok(cuco_store_eval_each_program(s, pid, collect_eval, &ids, &err));
	assert_int_equal(ids.n, 2);
	assert_int_equal(ids.v[0], e1);
	assert_int_equal(ids.v[1], e2);
	ids.n = 0;
	assert_ok(cuco_store_eval_each_run(s, run_id, collect_eval, &ids, &err));
	assert_int_equal(ids.n, 2);
	ids.n = 0;
	assert_ok(cuco_store_eval_each_run(s, 0, collect_eval, &ids, &err));
	assert_int_equal(ids.n, 3);
	assert_int_equal(ids.v[2], e3);

	/* A callback's non-zero value stops the walk and comes back. */
	ids.n = 0;
	ids.stop_after = 1;
	assert_int_equal(cuco_store_eval_each_run(s, 0, collect_eval, &ids, &err),
	                 CUCO_ERR_INVALID);
	assert_int_equal(ids.n, 1);
	assert_string_equal(err.msg, "stopped on purpose");

	/* Invalid inputs. */
	in.stage_reached = "link";
	assert_int_equal(cuco_store_eval_add(s, &in, &e3, &err), CUCO_ERR_INVALID);
	in.stage_reached = NULL;
	in.samples_json = "[1, 2";
	assert_int_equal(cuco_store_eval_add(s, &in, &e3, &err), CUCO_ERR_INVALID);
	in.samples_json = NULL;
	in.program_id = 9999;
	assert_int_equal(cuco_store_eval_add(s, &in, &e3, &err), CUCO_ERR_INVALID);
	in.program_id = pid;
	in.status = NULL;
	assert_int_equal(cuco_store_eval_add(s, &in, &e3, &err), CUCO_ERR_INVALID);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM evaluations"), 3);
	assert_int_equal(cuco_store_eval_get(s, 9999, &out, &err), CUCO_ERR_NOT_FOUND);
	cuco_store_close(s);
}

static void test_llm_call_and_summary(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run;
	struct cuco_llm_call_rec in, out;
	int64_t run_id = 0, id = 0, sid = 0;

	cuco_run_rec_init(&run);
	run.kind = "evolve";
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));

	cuco_llm_call_rec_init(&in);
	in.run_id = run_id;
	in.model = "m-large";
	in.endpoint = "http://localhost:8000/v1";
	in.prompt = "rewrite this";
	in.reply = "```cuda\n...\n```";
	in.tokens_in = 1200;
	in.tokens_out = 0;
	in.latency_ms = 850.5;
	in.cost = 0.0;
	assert_ok(cuco_store_llm_call_add(s, &in, &id, &err));
	assert_ok(cuco_store_llm_call_get(s, id, &out, &err));
	assert_int_equal(out.run_id, run_id);
	assert_int_equal(out.program_id, 0);
	assert_string_equal(out.model, "m-large");
	assert_string_equal(out.endpoint, "http://localhost:8000/v1");
	assert_string_equal(out.prompt, "rewrite this");
	assert_string_equal(out.reply, "```cuda\n...\n```");
	assert_int_equal(out.tokens_in, 1200);
	assert_int_equal(out.tokens_out, 0); /* 0 is a value, not NULL */
	assert_true(out.latency_ms == 850.5);
	assert_true(out.cost == 0.0);
	assert_null(out.error);
	cuco_llm_call_rec_release(&out);
	assert_int_equal(cuco_store_llm_call_get(s, id + 1, &out, &err), CUCO_ERR_NOT_FOUND);

	in.program_id = 4242;
	assert_int_equal(cuco_store_llm_call_add(s, &in, &id, &err), CUCO_ERR_INVALID);

	assert_ok(cuco_store_summary_add(s, run_id, 3, "statistical", "best 120us", &sid, &err));
	assert_true(sid > 0);
	assert_int_equal(raw_int(f->path, "SELECT generation FROM summaries"), 3);
	assert_int_equal(cuco_store_summary_add(s, run_id + 7, 3, "llm", "t", NULL, &err),
	                 CUCO_ERR_INVALID);
	assert_int_equal(cuco_store_summary_add(s, run_id, 3, NULL, "t", NULL, &err),
	                 CUCO_ERR_INVALID);
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

static void test_null_fields_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct cuco_store *s = open_ok(f->path);
	struct cuco_err err = {0};
	struct cuco_run_rec run, run_out;
	struct cuco_program_rec prog, prog_out;
	struct cuco_eval_rec ev, ev_out;
	struct cuco_llm_call_rec call, call_out;
	int64_t run_id = 0, pid = 0, eid = 0, cid = 0;

	cuco_run_rec_init(&run);
	run.kind = "bench";
	assert_ok(cuco_store_run_begin(s, &run, &run_id, &err));
	assert_ok(cuco_store_run_get(s, run_id, &run_out, &err));
	assert_null(run_out.workload);
	assert_null(run_out.shape);
	assert_null(run_out.config);
	assert_null(run_out.finished_at);
	assert_null(run_out.cuco_version);
	assert_null(run_out.host);
	assert_null(run_out.gpu);
	assert_null(run_out.commit_id);
	cuco_run_rec_release(&run_out);

	cuco_program_rec_init(&prog);
	prog.workload = "w";
	prog.origin = "seed";
	prog.code = "";
	assert_ok(cuco_store_program_add(s, &prog, &pid, &err));
	assert_ok(cuco_store_program_get(s, pid, &prog_out, &err));
	assert_int_equal(prog_out.run_id, 0);
	assert_null(prog_out.name);
	assert_string_equal(prog_out.code, "");
	assert_null(prog_out.directive);
	assert_int_equal(prog_out.island, CUCO_STORE_NO_INT);
	assert_int_equal(prog_out.generation, CUCO_STORE_NO_INT);
	assert_null(prog_out.operator_);
	assert_null(prog_out.parents);
	assert_int_equal(prog_out.nparents, 0);
	cuco_program_rec_release(&prog_out);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM programs WHERE run_id IS NULL AND "
	                                  "island IS NULL AND generation IS NULL AND directive IS "
	                                  "NULL AND operator IS NULL AND name IS NULL"),
	                 1);

	cuco_eval_rec_init(&ev);
	ev.program_id = pid;
	ev.status = "no_gpu";
	ev.error_code = CUCO_ERR_NO_GPU;
	assert_ok(cuco_store_eval_add(s, &ev, &eid, &err));
	assert_ok(cuco_store_eval_get(s, eid, &ev_out, &err));
	assert_int_equal(ev_out.run_id, 0);
	assert_null(ev_out.shape);
	assert_int_equal(ev_out.ranks, CUCO_STORE_NO_INT);
	assert_null(ev_out.stage_reached);
	assert_null(ev_out.error);
	assert_null(ev_out.compile_log);
	assert_null(ev_out.run_log);
	assert_true(isnan(ev_out.median_us));
	assert_true(isnan(ev_out.p10_us));
	assert_true(isnan(ev_out.p90_us));
	assert_true(isnan(ev_out.min_us));
	assert_true(isnan(ev_out.mean_us));
	assert_null(ev_out.samples_json);
	assert_true(isnan(ev_out.rel_err));
	assert_true(isnan(ev_out.fitness));
	assert_null(ev_out.result_json);
	assert_null(ev_out.gpu);
	cuco_eval_rec_release(&ev_out);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM evaluations WHERE fitness IS NULL "
	                                  "AND median_us IS NULL AND ranks IS NULL AND run_id IS "
	                                  "NULL"),
	                 1);

	cuco_llm_call_rec_init(&call);
	assert_ok(cuco_store_llm_call_add(s, &call, &cid, &err));
	assert_ok(cuco_store_llm_call_get(s, cid, &call_out, &err));
	assert_int_equal(call_out.run_id, 0);
	assert_int_equal(call_out.program_id, 0);
	assert_null(call_out.model);
	assert_null(call_out.prompt);
	assert_null(call_out.reply);
	assert_int_equal(call_out.tokens_in, CUCO_STORE_NO_INT);
	assert_int_equal(call_out.tokens_out, CUCO_STORE_NO_INT);
	assert_true(isnan(call_out.latency_ms));
	assert_true(isnan(call_out.cost));
	cuco_llm_call_rec_release(&call_out);
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
	    cmocka_unit_test_setup_teardown(test_run_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_program_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_eval_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_llm_call_and_summary, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_meta, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_null_fields_roundtrip, setup, teardown),
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
