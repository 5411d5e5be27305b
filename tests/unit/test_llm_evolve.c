/*
 * test_llm_evolve.c - the LLM operator: the UCB1 model bandit, prompt
 * assembly from the store, and the whole slow path against
 * tests/llm_server.py replaying tests/fixtures/llm/evolve/, with the compile
 * stage real (nvcc builds every child) and a fake GPU stage (fitness from
 * the directive, once the .so exists).
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
#include "search/llm_ledger.h"
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
#define KEY_ENV "CUCO_TEST_LLM_EVOLVE_KEY"
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
	snprintf(tmp, sizeof(tmp), "/tmp/cuco-test-llm-evolve-XXXXXX");
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

/* ---- the bandit ---- */

static void test_bandit(void **state)
{
	struct cuco_bandit b;
	struct cuco_rng rng;
	int picks[3] = {0, 0, 0}, first[3];

	(void)state;
	cuco_rng_seed(&rng, 7);
	cuco_bandit_init(&b, 3);
	/* untried arms first, in order */
	for (int i = 0; i < 3; i++)
		first[i] = cuco_bandit_pick(&b, &rng);
	assert_int_equal(first[0], 0);
	assert_int_equal(first[1], 1);
	assert_int_equal(first[2], 2);
	/* arm 1 gains a lot per cost, arm 0 little, arm 2 nothing */
	cuco_bandit_reward(&b, 0, 0.05, 1.0);
	cuco_bandit_reward(&b, 1, 0.40, 1.0);
	cuco_bandit_reward(&b, 2, -0.3, 1.0); /* clipped at 0 */
	assert_true(cuco_bandit_score(&b, 1) > cuco_bandit_score(&b, 0));
	assert_true(cuco_bandit_score(&b, 0) > cuco_bandit_score(&b, 2));
	for (int i = 0; i < 60; i++) {
		int a = cuco_bandit_pick(&b, &rng);
		picks[a]++;
		cuco_bandit_reward(&b, a, a == 1 ? 0.4 : a == 0 ? 0.05 : 0, 1.0);
	}
	assert_true(picks[1] > picks[0] && picks[1] > picks[2]);
	assert_true(picks[0] > 0 && picks[2] > 0); /* UCB still explores */
	/* the same cost halves the reward when it doubles: gain per cost */
	cuco_bandit_init(&b, 2);
	cuco_bandit_pick(&b, &rng);
	cuco_bandit_pick(&b, &rng);
	cuco_bandit_reward(&b, 0, 0.2, 2.0);
	cuco_bandit_reward(&b, 1, 0.2, 1.0);
	assert_true(cuco_bandit_score(&b, 1) > cuco_bandit_score(&b, 0));
	/* deterministic: the same seed, the same sequence */
	{
		struct cuco_bandit b1, b2;
		struct cuco_rng r1, r2;
		cuco_rng_seed(&r1, 3);
		cuco_rng_seed(&r2, 3);
		cuco_bandit_init(&b1, 4);
		cuco_bandit_init(&b2, 4);
		for (int i = 0; i < 40; i++) {
			int a1 = cuco_bandit_pick(&b1, &r1), a2 = cuco_bandit_pick(&b2, &r2);
			assert_int_equal(a1, a2);
			cuco_bandit_reward(&b1, a1, (double)(a1 % 2) * 0.1, 1);
			cuco_bandit_reward(&b2, a2, (double)(a2 % 2) * 0.1, 1);
		}
	}
}

/* ---- the settings a run keeps ---- */

static void test_settings_json(void **state)
{
	struct cuco_llm_operator_config c;
	struct cuco_llm_stored st;
	struct cuco_err err;
	struct cuco_strbuf cfg = CUCO_STRBUF_INIT;
	char *json;
	int found;
	static const struct {
		const char *llm, *msg;
	} bad[] = {
	    {"[1]", "run config: llm: not an object"},
	    {"{\"models\":[]}", "run config: llm.models: not an array of 1 to 8 names"},
	    {"{\"models\":[\"a\",2]}", "run config: llm.models[1]: not a string"},
	    {"{\"base_url\":7}", "run config: llm.base_url: not a string"},
	    {"{\"timeout_ms\":-5}", "run config: llm.timeout_ms: not an integer from 0"},
	    {"{\"budget_cost\":\"x\"}", "run config: llm.budget_cost: not a number"},
	    {"{\"prices\":[{\"model\":\"a\"}]}", "run config: llm.prices[0]: not"},
	    {"{\"temperatures\":{\"explore\":[0.1,0.2]}}",
	     "run config: llm.temperatures.explore: not 3 numbers"},
	    {"{\"temperatures\":{\"summary\":9}}",
	     "run config: llm.temperatures.summary: not a number from 0 to 2"},
	    {"{\"meta_summaries\":1}", "run config: llm.meta_summaries: not true or false"},
	    {"{\"api\":\"claude\"}", "run config: llm.api: not \"openai\" or \"anthropic\""},
	    {"{\"diagnose\":\"yes\"}", "run config: llm.diagnose: not true or false"},
	};

	(void)state;
	cuco_llm_operator_config_init(&c);
	c.llm.base_url = "http://127.0.0.1:8000";
	c.llm.api = CUCO_LLM_API_ANTHROPIC;
	c.llm.api_key_env = KEY_ENV;
	c.llm.timeout_ms = 12345;
	c.diagnose = 1;
	c.diagnose_max_tokens = 300;
	c.llm.budget_tokens = 3000000;
	c.llm.budget_cost = 2.5;
	c.llm.prices[0].model = "model-a";
	c.llm.prices[0].in_per_mtok = 0.25;
	c.llm.prices[0].out_per_mtok = 1.5;
	c.llm.nprices = 1;
	c.models[0] = "model-a";
	c.models[1] = "model-b";
	c.nmodels = 2;
	c.temps.explore[2] = 0.9;
	c.temps.summary = 0.1;
	c.meta_summaries = 0;
	c.summary_max_tokens = 512;
	json = cuco_llm_operator_config_to_json(&c);
	assert_non_null(json);
	assert_null(strstr(json, KEY));
	cuco_strbuf_addf(&cfg, "{\"search_seed\":1,\"operator\":\"llm\",\"llm\":%s}", json);
	free(json);
	assert_int_equal(cuco_llm_stored_from_json(cfg.buf, &st, &found, &err), CUCO_OK);
	assert_int_equal(found, 1);
	assert_string_equal(st.cfg.llm.base_url, "http://127.0.0.1:8000");
	assert_string_equal(st.cfg.llm.api_key_env, KEY_ENV);
	assert_int_equal(st.cfg.llm.timeout_ms, 12345);
	assert_int_equal(st.cfg.llm.connect_timeout_ms, c.llm.connect_timeout_ms);
	assert_int_equal(st.cfg.llm.max_retries, c.llm.max_retries);
	assert_int_equal(st.cfg.llm.max_tokens, c.llm.max_tokens);
	assert_int_equal(st.cfg.llm.budget_tokens, 3000000);
	assert_true(st.cfg.llm.budget_cost == 2.5);
	assert_int_equal(st.cfg.llm.nprices, 1);
	assert_string_equal(st.cfg.llm.prices[0].model, "model-a");
	assert_true(st.cfg.llm.prices[0].out_per_mtok == 1.5);
	assert_int_equal(st.cfg.nmodels, 2);
	assert_string_equal(st.cfg.models[1], "model-b");
	assert_true(st.cfg.temps.explore[0] == 0.2 && st.cfg.temps.explore[2] == 0.9);
	assert_true(st.cfg.temps.summary == 0.1 && st.cfg.temps.crossover == 0.5);
	assert_int_equal(st.cfg.meta_summaries, 0);
	assert_int_equal(st.cfg.summary_max_tokens, 512);
	assert_int_equal(st.cfg.llm.api, CUCO_LLM_API_ANTHROPIC);
	assert_int_equal(st.cfg.diagnose, 1);
	assert_int_equal(st.cfg.diagnose_max_tokens, 300);
	cuco_llm_stored_release(&st);
	/* a builtin run has no "llm": the defaults, not found */
	assert_int_equal(cuco_llm_stored_from_json("{\"operator\":\"builtin\"}", &st, &found, &err),
	                 CUCO_OK);
	assert_int_equal(found, 0);
	assert_int_equal(st.cfg.meta_summaries, 1);
	cuco_llm_stored_release(&st);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cuco_strbuf_reset(&cfg);
		cuco_strbuf_addf(&cfg, "{\"llm\":%s}", bad[i].llm);
		assert_int_equal(cuco_llm_stored_from_json(cfg.buf, &st, &found, &err),
		                 CUCO_ERR_PARSE);
		assert_contains(err.msg, bad[i].msg);
		cuco_llm_stored_release(&st);
	}
	cuco_strbuf_release(&cfg);
}

/* ---- prompt assembly ---- */

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

static void test_prompt_assembly(void **state)
{
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *op = NULL;
	struct cuco_program_rec p;
	struct cuco_eval_rec ev;
	struct cuco_strbuf sys = CUCO_STRBUF_INIT, user = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int64_t parent, insp, id;
	char path[128], *code = NULL;

	(void)state;
	snprintf(path, sizeof(path), "%s/prompt.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	cuco_program_rec_init(&p);
	p.workload = "toy_scale";
	p.name = "g1-i0-c0";
	p.origin = "candidate";
	p.code = seed_code;
	p.directive = "{\"backend\":\"lsa\"}";
	assert_int_equal(cuco_store_program_add(store, &p, &parent, &err), CUCO_OK);
	p.name = "g1-i0-c1";
	p.code = "// cuco-directive: {}\n// EVOLVE-BLOCK-START\nint inspired_block = 1;\n"
	         "// EVOLVE-BLOCK-END\n";
	p.directive = "{\"backend\":\"ce\"}";
	assert_int_equal(cuco_store_program_add(store, &p, &insp, &err), CUCO_OK);
	cuco_eval_rec_init(&ev);
	ev.program_id = parent;
	ev.stage_reached = "verify";
	ev.status = "wrong";
	ev.error_code = CUCO_ERR_VERIFY;
	ev.error = "rank 1: element 17 is 3.5, expected 7.0";
	ev.median_us = 812.5;
	assert_int_equal(cuco_store_eval_add(store, &ev, &id, &err), CUCO_OK);
	ev.program_id = insp;
	ev.stage_reached = "bench";
	ev.status = "ok";
	ev.error_code = CUCO_OK;
	ev.error = NULL;
	ev.median_us = 400;
	ev.fitness = 1.25;
	assert_int_equal(cuco_store_eval_add(store, &ev, &id, &err), CUCO_OK);

	op_config(&c, store, "http://127.0.0.1:9");
	if (cuco_llm_operator_new(&c, &op, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_set_summary(op, "{\"best_fitness\":1.25}", "- prefer backend ce");
	assert_int_equal(cuco_llm_operator_prompt(op, CUCO_LLM_MODE_DIFF, parent, 0, &insp, 1, &sys,
	                                          &user, &code, &err),
	                 CUCO_OK);
	/* system: design space, hardware, NCCL guide, workload */
	assert_contains(sys.buf, "\"dimensions\"");
	assert_contains(sys.buf, "GIN (network) backend: not available");
	assert_contains(sys.buf, "NCCL 2.28 device API");
	assert_contains(sys.buf, "toy_scale at shape small: doubles a vector");
	/* user: parent, its feedback, inspirations, both summaries, the diff format */
	assert_contains(user.buf, "#define CUCO_SEED_COMM_CTAS 32");
	assert_contains(user.buf, "stage reached: verify, status: wrong");
	assert_contains(user.buf, "rank 1: element 17 is 3.5, expected 7.0");
	assert_contains(user.buf, "median latency: 812.50 us");
	assert_contains(user.buf, "{\"backend\":\"ce\"}");
	assert_contains(user.buf, "int inspired_block = 1;");
	assert_contains(user.buf, "fitness (baseline / latency): 1.2500");
	assert_contains(user.buf, "- prefer backend ce");
	assert_contains(user.buf, "{\"best_fitness\":1.25}");
	assert_contains(user.buf, "<<<<<<< SEARCH");
	assert_string_equal(code, seed_code);
	assert_null(strstr(user.buf, "{{"));
	/* crossover: program B with its feedback */
	cuco_strbuf_reset(&sys);
	cuco_strbuf_reset(&user);
	assert_int_equal(cuco_llm_operator_prompt(op, CUCO_LLM_MODE_CROSSOVER, parent, insp, &insp,
	                                          1, &sys, &user, NULL, &err),
	                 CUCO_OK);
	assert_contains(user.buf, "int inspired_block = 1;");
	assert_contains(user.buf, "How program B did:");
	free(code);
	cuco_strbuf_release(&sys);
	cuco_strbuf_release(&user);
	cuco_llm_operator_free(op);
	cuco_store_close(store);
}

/* ---- the slow path against the loopback server ---- */

/* Real nvcc compile, then the fake GPU stage of search_fake.h. */
struct compile_eval {
	struct cuco_compile_opts copts;
	char cache[128];
	int compiles; /* nvcc runs (not from the cache) */
};

static int compile_batch(void *ctx, const struct cuco_candidate *c, int n,
                         struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	struct compile_eval *ce = ctx;
	struct cuco_compile_job jobs[8];
	struct fake_eval fake;
	int rc;

	assert_true(n <= 8);
	fake_init(&fake);
	for (int i = 0; i < n; i++)
		cuco_compile_job_init(&jobs[i], c[i].name, SEED, c[i].code);
	rc = cuco_compile_many(&ce->copts, jobs, n, err);
	for (int i = 0; i < n && rc == CUCO_OK; i++) {
		struct stat st;
		ce->compiles += !jobs[i].cached;
		if (jobs[i].code != CUCO_OK) {
			outs[i].code = CUCO_ERR_COMPILE;
			snprintf(outs[i].stage, sizeof(outs[i].stage), "compile");
			snprintf(outs[i].status, sizeof(outs[i].status), "compile");
			outs[i].error = strdup("nvcc failed");
			outs[i].log = strdup(jobs[i].log.buf);
			continue;
		}
		assert_int_equal(stat(jobs[i].so_path, &st), 0);
		rc = fake_evaluate(&fake, &c[i], &outs[i], err);
	}
	for (int i = 0; i < n; i++)
		cuco_compile_job_release(&jobs[i]);
	return rc;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_slow_path(void **state)
{
	/*
	 * The replies in the order the seeded run asks: generation 1 explores
	 * (rewrites at 0.2, 0.5, 0.8, 0.2), generation 2 exploits (diff, then a
	 * rewrite for the retry, diff), a meta-summary after each. Each slot may
	 * ask twice: a failed call or a rejected reply leaves room for one retry.
	 */
	static const char *const replies[] = {
	    "malformed",     "rewrite_overlap", "no_directive", "rewrite_syntax", "summary",
	    "reply_outside", "rewrite_ctas64",  "diff_threads", "summary",        NULL,
	};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *op = NULL;
	struct cuco_child_operator co;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct compile_eval ce;
	struct cuco_strbuf file = CUCO_STRBUF_INIT, log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	sqlite3 *db;
	int64_t run_id = 0;
	char path[128], *s, *llm_json;
	const char *const *models;
	const struct cuco_llm_model_stats *stats;
	long long n;

	(void)state;
	memset(&ce, 0, sizeof(ce));
	if (cuco_compile_opts_default(&ce.copts, &err))
		fail_msg("%s", err.msg);
	snprintf(ce.cache, sizeof(ce.cache), "%s/cache", tmp);
	ce.copts.cache_dir = ce.cache;
	ce.copts.jobs = 2;
	snprintf(path, sizeof(path), "%s/requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 300, replies);
	snprintf(path, sizeof(path), "%s/evolve.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	op_config(&c, store, srv.base);
	if (cuco_llm_operator_new(&c, &op, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_bind(op, 1.0, &co);

	cuco_evolve_config_default(&cfg);
	cfg.islands = 1;
	cfg.generations = 2;
	cfg.children_per_island = 2;
	cfg.summary_interval = 1;
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.workload = "toy_scale";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator.evaluate_batch = compile_batch;
	o.evaluator.ctx = &ce;
	o.child_op = &co;
	o.llm_json = llm_json = cuco_llm_operator_config_to_json(&c);
	snprintf(cfg.operator_, sizeof(cfg.operator_), "llm");
	cfg.llm_share = 1.0;
	if (cuco_evolve_run(&o, &cfg, 0, &run_id, &fin, &err))
		fail_msg("evolve: %s", err.msg);
	free(llm_json);
	assert_int_equal(cuco_llm_operator_finish(op, run_id, &err), CUCO_OK);
	cuco_llm_operator_print_stats(op, stdout);
	assert_int_equal(cuco_llm_operator_stats(op, &models, &stats), 2);
	assert_int_equal(stats[0].accepted + stats[1].accepted, 4);
	assert_int_equal(stats[0].calls + stats[1].calls, 9);
	assert_true(ce.compiles <= 6);
	assert_int_equal(llm_server_requests(&srv, &log), 9);
	cuco_llm_operator_free(op);
	cuco_store_close(store);
	llm_server_stop(&srv);

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* every call stored; the accepted ones linked to their candidates */
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls"), 9);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE program_id IS NOT NULL"),
	                 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls l JOIN programs p ON "
	                           "p.id = l.program_id WHERE p.operator LIKE 'llm-%'"),
	                 4);
	/* rejections with their reasons */
	s = q_text(db, "SELECT error FROM llm_calls WHERE id = 1");
	assert_contains(s, "llm-rewrite call for g1-i0-c0 failed");
	free(s);
	s = q_text(db, "SELECT error FROM llm_calls WHERE reply LIKE '%not sure which value%'");
	assert_contains(s, "reply for g1-i0-c1 rejected");
	assert_contains(s, "directive");
	free(s);
	s = q_text(db, "SELECT error FROM llm_calls WHERE reply LIKE '%2 * CUCO_SEED%'");
	assert_contains(s, "llm-diff reply for g2-i0-c0 rejected");
	assert_contains(s, "outside the EVOLVE-BLOCKs");
	free(s);
	/* a good diff became a candidate that compiled, markers intact */
	n = q_int(db, "SELECT p.id FROM programs p JOIN evaluations e ON e.program_id = p.id "
	              "WHERE p.operator = 'llm-diff' AND e.stage_reached = 'bench' AND "
	              "e.status = 'ok' AND p.code LIKE '%#define CUCO_SEED_THREADS 512%'");
	assert_true(n > 0);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE program_id = (SELECT id "
	                           "FROM programs WHERE operator = 'llm-diff')"),
	                 1);
	s = q_text(db, "SELECT code FROM programs WHERE operator = 'llm-diff'");
	assert_int_equal(count(s, "EVOLVE-BLOCK-START"), 1);
	assert_int_equal(count(s, "EVOLVE-BLOCK-END"), 1);
	assert_contains(s, "\"threads\":512");
	assert_null(strstr(s, "\r")); /* the parent's line endings, not the reply's */
	free(s);
	/* its code still creates the parent's second stream: flagged against its directive */
	s = q_text(db, "SELECT flags FROM programs WHERE operator = 'llm-diff'");
	assert_contains(s, "directive says placement \"sequential\" but the code creates a "
	                   "second stream");
	free(s);
	assert_int_equal(q_int(db, "SELECT count(*) FROM programs WHERE operator = 'init' AND "
	                           "flags IS NULL"),
	                 1);
	/* the rewrite to 64 CTAs compiled too */
	assert_int_equal(q_int(db, "SELECT count(*) FROM programs p JOIN evaluations e ON "
	                           "e.program_id = p.id WHERE p.operator = 'llm-rewrite' AND "
	                           "e.status = 'ok' AND p.code LIKE '%COMM_CTAS 64%'"),
	                 1);
	/* the rewrite with a syntax error was stored and failed at compile */
	assert_int_equal(q_int(db, "SELECT count(*) FROM programs p JOIN evaluations e ON "
	                           "e.program_id = p.id WHERE p.operator = 'llm-rewrite' AND "
	                           "e.stage_reached = 'compile' AND e.status = 'compile'"),
	                 1);
	/* lineage, LLM meta-summaries and per-model statistics */
	assert_true(q_int(db, "SELECT count(*) FROM program_parents pp JOIN programs p ON "
	                      "p.id = pp.program_id WHERE p.operator LIKE 'llm-%'") >= 4);
	assert_int_equal(q_int(db, "SELECT count(*) FROM summaries WHERE kind = 'llm'"), 2);
	assert_int_equal(q_int(db, "SELECT count(*) FROM summaries WHERE kind = 'statistical'"), 2);
	s = q_text(db, "SELECT value FROM meta WHERE key = 'llm_models.run1'");
	assert_contains(s, "\"model\":\"model-a\"");
	free(s);
	/* the operator's settings are in the run config: the key's variable, not the key */
	s = q_text(db, "SELECT config FROM runs WHERE id = 1");
	assert_contains(s, "\"operator\":\"llm\"");
	assert_contains(s, "\"models\":[\"model-a\",\"model-b\"]");
	assert_contains(s, "\"key_env\":\"" KEY_ENV "\"");
	assert_contains(s, "\"max_tokens\":800");
	assert_null(strstr(s, KEY));
	free(s);
	sqlite3_close(db);

	/* the generation-2 prompts carried the LLM summary and the compile failure */
	assert_contains(log.buf, "Prefer comm_ctas 64 over 32");
	/* the key went out as a header but never into the store file */
	assert_contains(log.buf, "Bearer " KEY);
	assert_int_equal(cuco_strbuf_read_file(&file, path), 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "-wal");
	cuco_strbuf_read_file(&file, path); /* appends the WAL when there is one */
	for (size_t i = 0; i + strlen(KEY) <= file.len; i++)
		if (!memcmp(file.buf + i, KEY, strlen(KEY)))
			fail_msg("the API key is in the store at byte %zu", i);
	cuco_strbuf_release(&file);
	cuco_strbuf_release(&log);
}

/* ---- resume: the operator's state rebuilt from the store ---- */

static volatile sig_atomic_t stop_flag;
static int stop_after; /* stop once this many candidates are evaluated; 0: never */

static void stop_progress(void *arg, const struct cuco_evolve_progress *p)
{
	(void)arg;
	if (stop_after && p->evaluated >= stop_after)
		stop_flag = 1;
}

/* The bandit, per-model statistics and meta-summaries of a and b are the same. */
static void assert_same_state(const struct cuco_llm_operator *a, const struct cuco_llm_operator *b)
{
	const struct cuco_bandit *x = cuco_llm_operator_bandit(a), *y = cuco_llm_operator_bandit(b);
	const struct cuco_llm_model_stats *sa, *sb;
	const char *const *models;
	const char *stat_a, *llm_a, *stat_b, *llm_b;
	int n = cuco_llm_operator_stats(a, &models, &sa);

	assert_int_equal(cuco_llm_operator_stats(b, &models, &sb), n);
	assert_int_equal(x->narms, y->narms);
	assert_int_equal(x->total, y->total);
	assert_true(fabs(x->max_reward - y->max_reward) < 1e-12);
	for (int i = 0; i < x->narms; i++) {
		assert_int_equal(x->pulls[i], y->pulls[i]);
		assert_true(fabs(x->sum[i] - y->sum[i]) < 1e-12);
		assert_int_equal(sa[i].calls, sb[i].calls);
		assert_int_equal(sa[i].tokens, sb[i].tokens);
		assert_int_equal(sa[i].accepted, sb[i].accepted);
		assert_int_equal(sa[i].improved, sb[i].improved);
		assert_true(fabs(sa[i].cost - sb[i].cost) < 1e-12);
	}
	cuco_llm_operator_summaries(a, &stat_a, &llm_a);
	cuco_llm_operator_summaries(b, &stat_b, &llm_b);
	assert_non_null(stat_a);
	assert_non_null(llm_a);
	assert_non_null(stat_b);
	assert_non_null(llm_b);
	assert_string_equal(stat_a, stat_b);
	assert_string_equal(llm_a, llm_b);
}

static void test_resume_state(void **state)
{
	/* Generation 1 explores (rewrites), 2 and 3 exploit (mostly diffs). */
	static const char *const replies[] = {
	    "rewrite_ctas64",
	    "rewrite_overlap",
	    "summary",
	    "diff_threads",
	    "diff_threads128",
	    "summary",
	    "reply_outside",
	    "diff_threads",
	    "diff_threads128",
	    "rewrite_ctas64",
	    "summary",
	    "summary",
	    NULL,
	};
	struct llm_server srv;
	struct cuco_store *store = NULL;
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *live = NULL, *back = NULL, *again = NULL;
	struct cuco_child_operator co;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct fake_eval fake;
	struct cuco_err err;
	const struct cuco_bandit *b;
	char path[128], *lines[64];
	int64_t run_id = 0, pulls;
	int n0, n, mutations = 0;
	sqlite3 *db;

	(void)state;
	snprintf(path, sizeof(path), "%s/resume-requests.jsonl", tmp);
	llm_server_start(&srv, FIXTURES, path, 300, replies);
	snprintf(path, sizeof(path), "%s/resume.db", tmp);
	assert_int_equal(cuco_store_open(path, &store, &err), CUCO_OK);
	op_config(&c, store, srv.base);
	if (cuco_llm_operator_new(&c, &live, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_bind(live, 1.0, &co);
	cuco_evolve_config_default(&cfg);
	cfg.islands = 1;
	cfg.generations = 3;
	cfg.explore_fraction = 0.3;
	cfg.children_per_island = 2;
	cfg.summary_interval = 1;
	fake_init(&fake);
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.workload = "toy_scale";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator = fake_evaluator(&fake, 1); /* one candidate a batch: a stop can split a
	                                           generation */
	o.child_op = &co;
	o.stop = &stop_flag;
	o.progress = stop_progress;
	/* Stop inside generation 2: the seed, generation 1 and one child of generation 2 judged. */
	stop_flag = 0;
	stop_after = 4;
	if (cuco_evolve_run(&o, &cfg, 0, &run_id, &fin, &err))
		fail_msg("evolve: %s", err.msg);
	assert_true(fin.interrupted);
	assert_int_equal(fin.generation, 2);
	assert_int_equal(fin.evaluated, 4);
	b = cuco_llm_operator_bandit(live);
	assert_true(b->total >= 4); /* the run asked the model: there is something to rebuild */

	/* A new operator resumed from the store knows what the live one knew. */
	if (cuco_llm_operator_new(&c, &back, &err))
		fail_msg("%s", err.msg);
	if (cuco_llm_operator_resume(back, run_id, &err))
		fail_msg("resume: %s", err.msg);
	assert_same_state(live, back);
	cuco_llm_operator_free(live);

	/* The resumed run continues with that state: its prompts carry the summaries. */
	n0 = llm_server_request_lines(&srv, lines, 64);
	for (int i = 0; i < n0; i++)
		free(lines[i]);
	cuco_llm_operator_bind(back, 1.0, &co);
	stop_flag = 0;
	stop_after = 0;
	if (cuco_evolve_run(&o, &cfg, run_id, &run_id, &fin, &err))
		fail_msg("resume: %s", err.msg);
	assert_false(fin.interrupted);
	assert_int_equal(cuco_llm_operator_finish(back, run_id, &err), CUCO_OK);
	n = llm_server_request_lines(&srv, lines, 64);
	assert_true(n > n0);
	for (int i = 0; i < n; i++) {
		if (i >= n0 && strstr(lines[i], "\"role\": \"system\"")) {
			assert_contains(lines[i], "Recommendations:");
			assert_contains(lines[i], "Statistics (JSON");
			mutations++;
		}
		free(lines[i]);
	}
	assert_true(mutations > 0);

	/* And what it ends with is again what the stored history says. */
	if (cuco_llm_operator_new(&c, &again, &err))
		fail_msg("%s", err.msg);
	if (cuco_llm_operator_resume(again, run_id, &err))
		fail_msg("resume: %s", err.msg);
	assert_same_state(back, again);
	pulls = cuco_llm_operator_bandit(again)->total;
	assert_true(pulls > 4);
	cuco_llm_operator_free(back);
	cuco_llm_operator_free(again);
	cuco_store_close(store);
	llm_server_stop(&srv);

	/* The stored history, read straight from SQLite: every mutation call is a pull. */
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls WHERE program_id IS NOT NULL OR "
	                           "(error IS NOT NULL AND error NOT LIKE 'meta-summary%')"),
	                 pulls);
	assert_int_equal(q_int(db, "SELECT count(*) FROM summaries WHERE kind = 'statistical'"), 3);
	assert_int_equal(q_int(db, "SELECT count(*) FROM summaries WHERE kind = 'llm'"), 3);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bandit),          cmocka_unit_test(test_settings_json),
	    cmocka_unit_test(test_prompt_assembly), cmocka_unit_test(test_slow_path),
	    cmocka_unit_test(test_resume_state),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
