/*
 * test_llm_run_end.c - how an LLM run ends, against tests/llm_server.py
 * replaying tests/fixtures/llm/evolve/ with a fake evaluator: a spent budget
 * stays spent across a resume that does not raise it (not one call more), and
 * a run in which none of the model's replies was accepted fails saying so.
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
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "llm/reply.h"
#include "search/evolve.h"
#include "search/llm_operator.h"
#include "store/store.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include "llm_loopback.h"
#include "store_query.h"

#include "search_fake.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm/evolve"
#define SEED FIXTURES "/seed.cu"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define KEY_ENV "CUCO_TEST_LLM_RUN_END_KEY"
#define KEY "sk-cuco-evolve-1a2b3c4d5e6f"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char tmp[64];
static char *seed_code, *ds_text;

static int group_setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK)
		return -1;
	snprintf(tmp, sizeof(tmp), "/tmp/cuco-test-llm-run-end-XXXXXX");
	seed_code = llm_read_all(SEED);
	ds_text = llm_read_all(DESIGN_SPACE);
	if (!seed_code || !ds_text)
		return -1;
	return llm_test_env(tmp, KEY_ENV, KEY);
}

static int group_teardown(void **state)
{
	(void)state;
	cuco_design_space_release(&ds);
	free(seed_code);
	free(ds_text);
	llm_test_env_end(tmp);
	return 0;
}

static void op_config(struct cuco_llm_operator_config *c, struct cuco_store *store,
                      const char *base)
{
	cuco_llm_operator_config_init(c);
	c->llm.base_url = base;
	c->llm.api_key_env = KEY_ENV;
	c->llm.retry_base_ms = 5;
	c->llm.retry_max_ms = 20;
	c->llm.max_tokens = 800;
	c->models[0] = "model-a";
	c->models[1] = "model-b";
	c->nmodels = 2;
	c->share_dir = CUCO_SOURCE_DIR "/share";
	c->workload = "toy_scale";
	c->workload_description = "doubles a vector on every rank (a test workload)";
	c->shape = "small";
	c->ds = &ds;
	c->design_space_text = ds_text;
	c->facts = &facts;
	c->store = store;
	c->seed = 1;
	c->meta_summaries = 1;
}

/* The rows of sql's first column on the store at path, as an integer. */
static long long store_int(const char *path, const char *sql)
{
	sqlite3 *db;
	long long v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	v = q_int(db, sql);
	sqlite3_close(db);
	return v;
}

/* An evolve run of the LLM operator alone (1 island, 2 children) over the store at path. */
static int llm_run(struct cuco_store *store, struct cuco_llm_operator *op, int generations,
                   int64_t resume, struct cuco_evolve_progress *fin, struct cuco_err *err)
{
	struct cuco_child_operator co;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct fake_eval fake;
	int64_t run_id = 0;

	cuco_llm_operator_bind(op, 1.0, &co);
	cuco_evolve_config_default(&cfg);
	cfg.islands = 1;
	cfg.generations = generations;
	cfg.children_per_island = 2;
	cfg.summary_interval = 0;
	snprintf(cfg.operator_, sizeof(cfg.operator_), "llm");
	cfg.llm_share = 1.0;
	fake_init(&fake);
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.workload = "toy_scale";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator = fake_evaluator(&fake, 0);
	o.child_op = &co;
	return cuco_evolve_run(&o, &cfg, resume, &run_id, fin, err);
}

/* 1 when op's statistics say its budget is spent. */
static int spent(const struct cuco_llm_operator *op)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int yes;

	assert_non_null(f);
	cuco_llm_operator_print_stats(op, f);
	fclose(f);
	yes = strstr(text, "(exhausted)") != NULL;
	free(text);
	return yes;
}

/* A run whose budget ran out, resumed under the same budget: not one call more. */
static void test_resume_budget_spent(void **state)
{
	static const char *const replies[] = {
	    "rewrite_ctas64",
	    "rewrite_overlap",
	    "diff_threads",
	    "diff_threads128",
	    "rewrite_ctas64",
	    "rewrite_overlap",
	    "diff_threads",
	    "diff_threads128",
	    "rewrite_ctas64",
	    "rewrite_overlap",
	    "diff_threads",
	    "diff_threads128",
	    "rewrite_ctas64",
	    "rewrite_overlap",
	    "diff_threads",
	    "diff_threads128",
	    NULL,
	};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *live = NULL, *back = NULL, *raised = NULL;
	struct cuco_evolve_progress fin;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char path[128];
	int n0, n1;

	(void)state;
	snprintf(path, sizeof(path), "%s/spent-requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 300, replies);
	snprintf(path, sizeof(path), "%s/spent.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	op_config(&c, store, srv.base);
	c.meta_summaries = 0;
	c.llm.budget_tokens = 20000; /* seven calls of 2620 tokens, then spent */
	if (cuco_llm_operator_new(&c, &live, &err))
		fail_msg("%s", err.msg);
	if (llm_run(store, live, 6, 0, &fin, &err))
		fail_msg("evolve: %s", err.msg);
	assert_string_equal(fin.stop_reason, "budget-llm");
	assert_true(spent(live));
	n0 = llm_server_requests(&srv, &log);
	assert_true(n0 >= 2);
	cuco_llm_operator_free(live);

	/* resumed under the same budget: spent from the start, nothing asked */
	if (cuco_llm_operator_new(&c, &back, &err))
		fail_msg("%s", err.msg);
	if (cuco_llm_operator_resume(back, 1, &err))
		fail_msg("resume: %s", err.msg);
	assert_true(spent(back));
	if (llm_run(store, back, 6, 1, &fin, &err))
		fail_msg("resume: %s", err.msg);
	assert_string_equal(fin.stop_reason, "budget-llm");
	assert_int_equal(llm_server_requests(&srv, &log), n0);
	cuco_llm_operator_free(back);

	/* a raised budget: the run goes on (one generation more) */
	c.llm.budget_tokens = 1000000;
	if (cuco_llm_operator_new(&c, &raised, &err))
		fail_msg("%s", err.msg);
	if (cuco_llm_operator_resume(raised, 1, &err))
		fail_msg("resume: %s", err.msg);
	assert_false(spent(raised));
	if (llm_run(store, raised, fin.generation, 1, &fin, &err))
		fail_msg("resume: %s", err.msg);
	n1 = llm_server_requests(&srv, &log);
	assert_true(n1 > n0);
	cuco_llm_operator_free(raised);
	cuco_store_close(store);
	llm_server_stop(&srv);
	cuco_strbuf_release(&log);
}

/* A run in which the model's every reply was rejected fails, saying so, stored with the run. */
static void test_no_reply_accepted(void **state)
{
	static const char *const replies[] = {
	    "no_directive", "no_directive", "no_directive", "no_directive", "no_directive", NULL,
	};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *op = NULL;
	struct cuco_evolve_progress fin;
	struct cuco_err err;
	char path[128], *s;
	sqlite3 *db;

	(void)state;
	snprintf(path, sizeof(path), "%s/none-requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 300, replies);
	snprintf(path, sizeof(path), "%s/none.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	op_config(&c, store, srv.base);
	c.meta_summaries = 0;
	if (cuco_llm_operator_new(&c, &op, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(llm_run(store, op, 1, 0, &fin, &err), CUCO_ERR_RUN);
	assert_contains(err.msg, "llm: none of the model's 4 replies in run 1 was accepted");
	cuco_llm_operator_free(op);
	cuco_store_close(store);
	llm_server_stop(&srv);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	s = q_text(db, "SELECT status || ': ' || error FROM runs WHERE id = 1");
	assert_contains(s, "failed: llm: none of the model's 4 replies in run 1 was accepted");
	free(s);
	sqlite3_close(db);
	assert_int_equal(store_int(path, "SELECT count(*) FROM llm_calls WHERE program_id IS NULL"),
	                 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resume_budget_spent),
	    cmocka_unit_test(test_no_reply_accepted),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
