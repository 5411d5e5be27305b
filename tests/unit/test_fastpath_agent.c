/*
 * test_fastpath_agent.c - the LLM fast-path agent (cuco fastpath --llm)
 * against tests/llm_server.py replaying tests/fixtures/llm/fastpath/: a host
 * program the rule-based fast path refuses (an ncclBroadcast outside
 * cuco_program_run) goes through stage A (a reply that does not compile, then
 * a fixed one) and stage B (a reply without EVOLVE-BLOCK markers, then a good
 * one), with real nvcc compiles and the run stage absent (no GPUs) or faked
 * through the judge hook.
 */
#define _GNU_SOURCE /* memmem; nftw, in llm_loopback.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastpath/agent.h"
#include "fastpath/fastpath.h"
#include "program/blocks.h"
#include "store/store.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include "llm_loopback.h"
#include "store_query.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm/fastpath"
#define HOST FIXTURES "/host.cu"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define KEY_ENV "CUCO_TEST_FASTPATH_AGENT_KEY"
#define KEY "sk-cuco-fastpath-9f8e7d6c5b4a"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char tmp[64];
static char *host_code, *ds_text;

static int group_setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK)
		return -1;
	snprintf(tmp, sizeof(tmp), "/tmp/cuco-test-fastpath-agent-XXXXXX");
	host_code = llm_read_all(HOST);
	ds_text = llm_read_all(DESIGN_SPACE);
	if (!host_code || !ds_text)
		return -1;
	return llm_test_env(tmp, KEY_ENV, KEY);
}

static int group_teardown(void **state)
{
	(void)state;
	cuco_design_space_release(&ds);
	free(host_code);
	free(ds_text);
	llm_test_env_end(tmp);
	return 0;
}

/* ---- the loopback server and the store ---- */

/* llm_server.py replaying names, logging to <tmp>/requests-<tag>.jsonl. */
static void start_server(struct llm_server *s, const char *tag, const char *const *names)
{
	char log[128];

	snprintf(log, sizeof(log), "%s/requests-%s.jsonl", tmp, tag);
	llm_server_start(s, FIXTURES, log, 300, names);
}

/* ---- the fake run stage ---- */

struct fake_judge {
	int calls[2];   /* per stage */
	int fail_first; /* 1: stage B's first verification fails */
	int no_gpu;     /* 1: every verdict is CUCO_ERR_NO_GPU, like this machine */
};

static int fake_judge(void *arg, int stage, const char *path, const char *code,
                      struct cuco_fastpath_verdict *v, struct cuco_err *err)
{
	struct fake_judge *f = arg;

	(void)path;
	(void)err;
	assert_non_null(code);
	f->calls[stage]++;
	if (f->no_gpu) {
		v->code = CUCO_ERR_NO_GPU;
		snprintf(v->message, sizeof(v->message),
		         "execution needs 2 CUDA GPUs on this node; this machine has none");
		return CUCO_OK;
	}
	if (stage == CUCO_FASTPATH_STAGE_B && f->fail_first && f->calls[stage] == 1) {
		v->code = CUCO_ERR_VERIFY;
		v->rel_err = 0.5;
		snprintf(v->message, sizeof(v->message),
		         "wrong: rank 1 output differs from the reference at element 0");
		return CUCO_OK;
	}
	v->code = CUCO_OK;
	v->median_us = 40.0;
	v->baseline_us = 50.0;
	v->rel_err = 0.0;
	return CUCO_OK;
}

static void agent_config(struct cuco_fastpath_agent_config *c, const char *base,
                         struct cuco_store *store, int64_t run_id, struct fake_judge *j)
{
	cuco_fastpath_agent_config_init(c);
	c->llm.base_url = base;
	c->llm.model = "model-fp";
	c->llm.api_key_env = KEY_ENV;
	c->llm.retry_base_ms = 5;
	c->llm.retry_max_ms = 20;
	c->share_dir = CUCO_SOURCE_DIR "/share";
	c->file = HOST;
	c->host_code = host_code;
	c->workload = "toy_bcast";
	c->workload_description = "broadcasts rank 0's doubled vector (a test workload)";
	c->shape = "small";
	c->ds = &ds;
	c->design_space_text = ds_text;
	c->facts = &facts;
	c->store = store;
	c->run_id = run_id;
	c->iterations = 3;
	c->judge = fake_judge;
	c->judge_arg = j;
}

static int64_t begin_run(struct cuco_store *store)
{
	struct cuco_run_rec r;
	struct cuco_err err;
	int64_t id = 0;

	cuco_run_rec_init(&r);
	r.kind = "fastpath";
	r.workload = "toy_bcast";
	r.status = "running";
	if (cuco_store_run_begin(store, &r, &id, &err))
		fail_msg("%s", err.msg);
	return id;
}

/* ---- tests ---- */

/* The rules refuse the fixture: that is why the agent exists. */
static void test_rules_refuse(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_fastpath_opts o;
	struct cuco_err err;

	(void)state;
	cuco_fastpath_opts_init(&o);
	o.share_dir = CUCO_SOURCE_DIR "/share/fastpath";
	assert_int_equal(cuco_fastpath_transform(HOST, host_code, &o, &out, NULL, &err),
	                 CUCO_ERR_UNSUPPORTED);
	assert_contains(err.msg, "ncclBroadcast at line 34 is outside cuco_program_run");
	cuco_strbuf_release(&out);
}

/* Stage A: compile error -> fed back -> fixed; stage B: no markers -> asked again -> good. */
static void test_agent_no_gpu(void **state)
{
	static const char *const replies[] = {"a_compile_error", "a_fixed", "b_no_markers",
	                                      "b_good", NULL};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_fastpath_agent_config c;
	struct cuco_fastpath_agent_result res;
	struct cuco_block blocks[4];
	struct cuco_directive d;
	struct fake_judge j;
	struct cuco_err err;
	struct cuco_strbuf file = CUCO_STRBUF_INIT;
	char path[128], *req[8], *s, sql[256];
	int64_t run_id;
	int n, nb = 0;
	sqlite3 *db;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.no_gpu = 1;
	start_server(&srv, "nogpu", replies);
	snprintf(path, sizeof(path), "%s/agent.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	run_id = begin_run(store);
	agent_config(&c, srv.base, store, run_id, &j);
	cuco_fastpath_agent_result_init(&res);
	if (cuco_fastpath_agent_run(&c, &res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	n = llm_server_request_lines(&srv, req, 8);
	llm_server_stop(&srv);

	/* the outcome */
	assert_int_equal(n, 4);
	assert_int_equal(res.calls, 4);
	assert_int_equal(res.attempts[0], 2);
	assert_int_equal(res.attempts[1], 2);
	assert_int_equal(res.verified, 0);
	assert_contains(res.note, "verification needs >= 2 GPUs");
	assert_int_equal(j.calls[0], 1); /* asked once, then compile checks only */
	assert_int_equal(j.calls[1], 0);
	assert_non_null(res.stage_a);
	assert_contains(res.stage_a, "ncclBroadcast"); /* stage A keeps the collective */
	assert_contains(res.stage_a, "req->devcomm = 1");
	assert_non_null(res.seed);
	assert_null(strstr(res.seed, "ncclBroadcast("));
	assert_int_equal(cuco_blocks_find("seed", res.seed, blocks, 4, &nb, &err), CUCO_OK);
	assert_int_equal(nb, 1);
	assert_int_equal(cuco_directive_find_line(res.seed), 1);
	assert_int_equal(cuco_directive_parse("seed", res.seed, &d, &err), CUCO_OK);
	cuco_directive_release(&d);
	assert_contains(res.directive_json, "\"backend\":\"lsa\"");

	/* the feedback: nvcc's error, then the missing markers */
	assert_contains(req[0], "This is stage A");
	assert_contains(req[0], "ncclBroadcast");     /* the host program */
	assert_contains(req[0], "cuco_requirements"); /* the ABI header */
	assert_contains(req[0], "lsa_peer");          /* the device-library guide */
	assert_contains(req[0], "broadcasts rank 0"); /* the workload description */
	assert_contains(req[0], "None: this is the first attempt.");
	assert_contains(req[1], "It does not compile. nvcc said:");
	assert_contains(req[1], "COMM_CTAS");
	assert_contains(req[1], "undefined");
	assert_contains(req[1], "lsa_barrier_count = COMM_CTAS"); /* the previous attempt */
	assert_contains(req[2], "This is stage B");
	assert_contains(req[2], "lsa_barrier_count = 32"); /* stage A's result is the input */
	assert_contains(req[3], "no EVOLVE-BLOCKs");
	for (int i = 0; i < n; i++) {
		/* the key goes in the header only, never into a prompt */
		assert_contains(req[i], "Bearer " KEY);
		assert_non_null(strstr(req[i], "\"request\""));
		assert_null(strstr(strstr(req[i], "\"request\""), KEY));
		free(req[i]);
	}

	/* the store */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM llm_calls WHERE run_id = %lld",
	         (long long)run_id);
	assert_int_equal(q_int(db, sql), 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE error LIKE "
	                           "'%stage A attempt 1/3: does not compile%'"),
	                 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE error LIKE "
	                           "'%stage B attempt 1/3: program rejected%no EVOLVE-BLOCKs%'"),
	                 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM programs WHERE origin = 'seed' AND "
	                           "operator = 'llm-fastpath'"),
	                 1);
	assert_int_equal(q_int(db, "SELECT program_id FROM llm_calls ORDER BY id DESC LIMIT 1"),
	                 res.program_id);
	s = q_text(db, "SELECT status || '/' || stage_reached FROM evaluations");
	assert_string_equal(s, "no_gpu/compile");
	free(s);
	s = q_text(db, "SELECT code FROM programs WHERE operator = 'llm-fastpath'");
	assert_string_equal(s, res.seed);
	free(s);
	sqlite3_close(db);
	cuco_store_close(store);
	assert_int_equal(cuco_strbuf_read_file(&file, path), 0);
	assert_null(memmem(file.buf, file.len, KEY, strlen(KEY)));
	cuco_strbuf_release(&file);
	cuco_fastpath_agent_result_release(&res);
}

/* With a (fake) GPU stage: a failed verification is fed back; the seed is stored verified. */
static void test_agent_verify(void **state)
{
	static const char *const replies[] = {"a_fixed", "b_good", "b_good", NULL};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_fastpath_agent_config c;
	struct cuco_fastpath_agent_result res;
	struct fake_judge j;
	struct cuco_err err;
	char path[128], *req[8], *s;
	int n;
	sqlite3 *db;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.fail_first = 1;
	start_server(&srv, "verify", replies);
	snprintf(path, sizeof(path), "%s/verify.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	agent_config(&c, srv.base, store, begin_run(store), &j);
	cuco_fastpath_agent_result_init(&res);
	if (cuco_fastpath_agent_run(&c, &res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	n = llm_server_request_lines(&srv, req, 8);
	llm_server_stop(&srv);
	assert_int_equal(n, 3);
	assert_int_equal(res.verified, 1);
	assert_string_equal(res.note, "");
	assert_int_equal(res.attempts[0], 1);
	assert_int_equal(res.attempts[1], 2);
	assert_int_equal(j.calls[0], 1);
	assert_int_equal(j.calls[1], 2);
	assert_contains(req[2], "the run stage failed");
	assert_contains(req[2], "rank 1 output differs");
	assert_contains(req[2], "max relative error against the reference: 0.5");
	for (int i = 0; i < n; i++)
		free(req[i]);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	s = q_text(db, "SELECT status || '/' || printf('%.2f', fitness) FROM evaluations");
	assert_string_equal(s, "ok/1.25");
	free(s);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE error LIKE "
	                           "'%run stage failed%'"),
	                 1);
	sqlite3_close(db);
	cuco_store_close(store);
	cuco_fastpath_agent_result_release(&res);
}

/* A verified seed whose code contradicts its directive is kept, with the contradiction stored. */
static void test_agent_flags(void **state)
{
	static const char *const replies[] = {"a_fixed", "b_flagged", NULL};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_fastpath_agent_config c;
	struct cuco_fastpath_agent_result res;
	struct fake_judge j;
	struct cuco_err err;
	char path[128], *s;
	sqlite3 *db;

	(void)state;
	memset(&j, 0, sizeof(j));
	start_server(&srv, "flags", replies);
	snprintf(path, sizeof(path), "%s/flags.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	agent_config(&c, srv.base, store, begin_run(store), &j);
	cuco_fastpath_agent_result_init(&res);
	if (cuco_fastpath_agent_run(&c, &res, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	llm_server_stop(&srv);
	assert_int_equal(res.verified, 1);
	assert_non_null(res.flags);
	assert_contains(res.flags, "stream_overlap");
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	s = q_text(db, "SELECT flags FROM programs WHERE origin = 'seed'");
	assert_string_equal(s, res.flags);
	free(s);
	sqlite3_close(db);
	cuco_store_close(store);
	cuco_fastpath_agent_result_release(&res);
}

/* Every attempt of a stage refused: a clear error naming the stage and the last failure. */
static void test_agent_gives_up(void **state)
{
	static const char *const replies[] = {"a_fixed", "b_no_markers", "b_no_markers", NULL};
	struct llm_server srv;
	struct cuco_fastpath_agent_config c;
	struct cuco_fastpath_agent_result res;
	struct fake_judge j;
	struct cuco_err err;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.no_gpu = 1;
	start_server(&srv, "giveup", replies);
	agent_config(&c, srv.base, NULL, 0, &j);
	c.iterations = 2;
	cuco_fastpath_agent_result_init(&res);
	assert_int_equal(cuco_fastpath_agent_run(&c, &res, &err), CUCO_ERR_INVALID);
	llm_server_stop(&srv);
	assert_contains(err.msg, "stage B: no acceptable program after 2 attempts");
	assert_contains(err.msg, "no EVOLVE-BLOCKs");
	assert_non_null(res.stage_a);
	assert_null(res.seed);
	cuco_fastpath_agent_result_release(&res);
}

/* `cuco fastpath --llm` without an endpoint: exit 5 naming the flag and the variable. */
static void test_cli_no_endpoint(void **state)
{
	char cmd[512], buf[4096];
	size_t n;
	FILE *p;
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd),
	         "env -u CUCO_LLM_BASE_URL -u CUCO_LLM_MODEL CUCO_STORE=%s/cli.db %s/cuco fastpath "
	         "--llm %s 2>&1",
	         tmp, CUCO_BINARY_DIR, HOST);
	if (access(CUCO_BINARY_DIR "/cuco", X_OK) != 0)
		skip();
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	st = pclose(p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CUCO_ERR_USAGE);
	assert_contains(buf, "--llm needs an endpoint: give --llm-base-url URL "
	                     "or set CUCO_LLM_BASE_URL");
	snprintf(cmd, sizeof(cmd),
	         "env -u CUCO_LLM_MODEL CUCO_LLM_BASE_URL=http://127.0.0.1:9 %s/cuco fastpath "
	         "--llm %s 2>&1",
	         CUCO_BINARY_DIR, HOST);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	st = pclose(p);
	assert_int_equal(WEXITSTATUS(st), CUCO_ERR_USAGE);
	assert_contains(buf, "give --llm-model NAME or set CUCO_LLM_MODEL");
	snprintf(cmd, sizeof(cmd), "%s/cuco fastpath %s --llm-base-url http://x 2>&1",
	         CUCO_BINARY_DIR, HOST);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	st = pclose(p);
	assert_int_equal(WEXITSTATUS(st), CUCO_ERR_USAGE);
	assert_contains(buf, "the --llm-* flags need --llm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules_refuse),   cmocka_unit_test(test_agent_no_gpu),
	    cmocka_unit_test(test_agent_verify),   cmocka_unit_test(test_agent_flags),
	    cmocka_unit_test(test_agent_gives_up), cmocka_unit_test(test_cli_no_endpoint),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
