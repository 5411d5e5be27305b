/*
 * test_llm_agents.c - the evolve operator and the fast-path agent against
 * tests/llm_server.py as real servers behave: a chat template that refuses
 * the system role (folded once, remembered for the run), replies cut off at
 * max_tokens (rejected replies, which neither end the run nor count as
 * endpoint failures), and a distinct sampling seed per call, all in the
 * store. The evaluator is the search tests' fake (no nvcc, no GPU).
 */
#define _XOPEN_SOURCE 700 /* nftw, in llm_loopback.h */
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
#include <unistd.h>

#include "fastpath/agent.h"
#include "search/evolve.h"
#include "search/llm_operator.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "llm_loopback.h"
#include "store_query.h"

#include "search_fake.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm/evolve"
#define FP_HOST CUCO_SOURCE_DIR "/tests/fixtures/llm/fastpath/host.cu"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define KEY_ENV "CUCO_TEST_LLM_AGENTS_KEY"
#define KEY "sk-cuco-agents-5e6f7a8b9c"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char tmp[64];
static char *seed_code, *ds_text, *host_code;

static int group_setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK)
		return -1;
	snprintf(tmp, sizeof(tmp), "/tmp/cuco-test-llm-agents-XXXXXX");
	seed_code = llm_read_all(FIXTURES "/seed.cu");
	ds_text = llm_read_all(DESIGN_SPACE);
	host_code = llm_read_all(FP_HOST);
	if (!seed_code || !ds_text || !host_code)
		return -1;
	return llm_test_env(tmp, KEY_ENV, KEY);
}

static int group_teardown(void **state)
{
	(void)state;
	cuco_design_space_release(&ds);
	free(seed_code);
	free(ds_text);
	free(host_code);
	llm_test_env_end(tmp);
	return 0;
}

/* Occurrences of needle in s. */
static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * Two generations of two children. The first call meets a template that
 * refuses the system role; every later reply is cut off at max_tokens. Before,
 * the refusal was retried as a 500 until the call failed, and three cut-off
 * replies in a row ended the run as "calls failed"; now the run goes on to
 * its end with every call stored as what it was.
 */
static void test_operator(void **state)
{
	static const char *const replies[] = {
	    "refuse_system_ctas64",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    "truncated",
	    NULL,
	};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *op = NULL;
	struct cuco_child_operator co;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	sqlite3 *db;
	int64_t run_id = 0;
	char path[128], *s;
	long long calls;
	int nreq;

	(void)state;
	snprintf(path, sizeof(path), "%s/operator-requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 60, replies);
	snprintf(path, sizeof(path), "%s/operator.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	cuco_llm_operator_config_init(&c);
	c.llm.base_url = srv.base;
	c.llm.api_key_env = KEY_ENV;
	c.llm.retry_base_ms = 5;
	c.llm.retry_max_ms = 20;
	c.llm.max_tokens = 800;
	c.models[0] = "model-a";
	c.nmodels = 1;
	c.share_dir = CUCO_SOURCE_DIR "/share";
	c.workload = "toy_scale";
	c.workload_description = "doubles a vector on every rank (a test workload)";
	c.shape = "small";
	c.ds = &ds;
	c.design_space_text = ds_text;
	c.facts = &facts;
	c.store = store;
	c.seed = 5;
	c.llm.sampling_seed = 5;
	c.meta_summaries = 0;
	if (cuco_llm_operator_new(&c, &op, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_bind(op, 1.0, &co);
	fake_init(&f);
	cuco_evolve_config_default(&cfg);
	cfg.islands = 1;
	cfg.generations = 2;
	cfg.children_per_island = 2;
	snprintf(cfg.operator_, sizeof(cfg.operator_), "llm");
	cfg.llm_share = 1.0;
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.workload = "toy_scale";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator = fake_evaluator(&f, 0);
	o.child_op = &co;
	if (cuco_evolve_run(&o, &cfg, 0, &run_id, &fin, &err))
		fail_msg("the run ended early: %s", err.msg);
	assert_int_equal(cuco_llm_operator_finish(op, run_id, &err), CUCO_OK);
	cuco_llm_operator_free(op);
	cuco_store_close(store);
	nreq = llm_server_requests(&srv, &log);
	llm_server_stop(&srv);
	fake_release(&f);

	/* one system message ever went out: the first request; its retry and the rest folded */
	assert_int_equal(count(log.buf, "\"role\": \"system\""), 1);
	assert_int_equal(count(log.buf, "\"role\": \"user\""), nreq);
	assert_true(nreq >= 5);

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	calls = q_int(db, "SELECT count(*) FROM llm_calls");
	assert_int_equal(calls, nreq - 1); /* the refused request and its fold are one call */
	/* the folded call made a child, and says how it went */
	assert_int_equal(q_int(db, "SELECT attempts FROM llm_calls WHERE program_id IS NOT NULL"),
	                 2);
	assert_int_equal(
	    q_int(db, "SELECT http_status FROM llm_calls WHERE program_id IS NOT NULL"), 200);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE program_id IS NOT NULL"),
	                 1);
	s = q_text(db, "SELECT prompt FROM llm_calls WHERE program_id IS NOT NULL");
	assert_null(strstr(s, "\"role\":\"system\""));
	free(s);
	/* the cut-off replies: rejected replies, not failed calls */
	assert_int_equal(q_int(db,
	                       "SELECT count(*) FROM llm_calls WHERE finish_reason = 'length' "
	                       "AND error LIKE '%reply for % rejected: %truncated at max_tokens "
	                       "800%' AND program_id IS NULL"),
	                 calls - 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE error LIKE '%call for % "
	                           "failed%'"),
	                 0);
	assert_true(calls - 1 >= 3); /* three in a row used to end the run */
	/* a sampling seed per call, all different */
	assert_int_equal(q_int(db, "SELECT count(DISTINCT sampling_seed) FROM llm_calls"), calls);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE sampling_seed IS NULL"),
	                 0);
	s = q_text(db, "SELECT status FROM runs WHERE id = 1");
	assert_null(strstr(s, "fail"));
	free(s);
	sqlite3_close(db);
	cuco_strbuf_release(&log);
}

/* Stage A's replies are cut off: each is a rejected reply, fed back, and the stage ends. */
static void test_fastpath_truncated(void **state)
{
	static const char *const replies[] = {"truncated", "truncated", NULL};
	struct cuco_fastpath_agent_config c;
	struct cuco_fastpath_agent_result r;
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_run_rec run;
	struct cuco_err err;
	sqlite3 *db;
	char path[128], *req[4];
	int64_t run_id = 0;
	int n;

	(void)state;
	snprintf(path, sizeof(path), "%s/fastpath-requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 60, replies);
	snprintf(path, sizeof(path), "%s/fastpath.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	cuco_run_rec_init(&run);
	run.kind = "fastpath";
	run.workload = "toy_bcast";
	assert_int_equal(cuco_store_run_begin(store, &run, &run_id, &err), CUCO_OK);
	cuco_fastpath_agent_config_init(&c);
	c.llm.base_url = srv.base;
	c.llm.model = "model-fp";
	c.llm.api_key_env = KEY_ENV;
	c.llm.max_tokens = 800;
	c.share_dir = CUCO_SOURCE_DIR "/share";
	c.file = FP_HOST;
	c.host_code = host_code;
	c.workload = "toy_bcast";
	c.ds = &ds;
	c.design_space_text = ds_text;
	c.facts = &facts;
	c.store = store;
	c.run_id = run_id;
	c.iterations = 2;
	cuco_fastpath_agent_result_init(&r);
	assert_int_equal(cuco_fastpath_agent_run(&c, &r, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "stage A: no acceptable program after 2 attempts; the last: reply "
	                         "rejected: llm: reply from");
	assert_contains(err.msg, "truncated at max_tokens 800");
	assert_int_equal(r.calls, 2);
	cuco_fastpath_agent_result_release(&r);
	cuco_store_close(store);
	n = llm_server_request_lines(&srv, req, 4);
	llm_server_stop(&srv);
	assert_int_equal(n, 2);
	assert_contains(req[1], "Your reply was cut off before its end (it reached max_tokens)");
	for (int i = 0; i < n; i++)
		free(req[i]);

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE finish_reason = 'length' "
	                           "AND error LIKE 'fastpath stage A attempt _/2: reply rejected%' "
	                           "AND attempts = 1 AND http_status = 200"),
	                 2);
	assert_int_equal(q_int(db, "SELECT count(DISTINCT sampling_seed) FROM llm_calls"), 2);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_operator),
	    cmocka_unit_test(test_fastpath_truncated),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
