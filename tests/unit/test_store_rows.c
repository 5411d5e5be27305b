/* test_store_rows.c - unit tests of the SQLite store's rows: runs, programs, evaluations, LLM calls
 * and summaries written and read back, NULL fields included. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_run_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_program_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_eval_roundtrip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_llm_call_and_summary, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_null_fields_roundtrip, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
