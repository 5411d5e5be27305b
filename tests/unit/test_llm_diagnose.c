/*
 * test_llm_diagnose.c - per-evaluation diagnosis (--llm-diagnose) through
 * the LLM operator's callbacks against tests/llm_server.py: a failed child
 * gets a diagnosis stored beside its evaluation and in llm_calls (purpose
 * 'diagnosis', counted in the budget); its own children's prompts and its
 * parent's next prompts show it; off by default no call is made; a spent
 * budget skips the diagnosis cleanly; a resumed operator keeps the stored
 * diagnoses and does not count their calls as mutations.
 */
#define _XOPEN_SOURCE 700 /* nftw, in llm_loopback.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/reply.h"
#include "search/evolve.h"
#include "search/llm_diagnose.h"
#include "search/llm_operator.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "llm_loopback.h"
#include "store_query.h"

#include "search_fake.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm/evolve"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define KEY_ENV "CUCO_TEST_LLM_DIAGNOSE_KEY"
#define KEY "sk-cuco-diagnose-5e6f7a8b9c"
#define COMPILE_LOG                                               \
	"parent.cu(41): error: identifier \"bar\" is undefined\n" \
	"1 error detected in the compilation of \"parent.cu\".\n"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};
static char tmp[64];
static char *seed_code, *ds_text;
static int diagnose_max_tokens = 400; /* of the operators op_config() makes */

static int group_setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK)
		return -1;
	snprintf(tmp, sizeof(tmp), "/tmp/cuco-test-llm-diag-XXXXXX");
	seed_code = llm_read_all(FIXTURES "/seed.cu");
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

/* One scenario: a store with a run and a correct parent, a server, an operator. */
struct world {
	struct llm_server srv;
	struct cuco_store *store;
	struct cuco_llm_operator *op;
	struct cuco_child_operator co;
	sqlite3 *db;
	char path[128];
	int64_t run_id, parent;
};

static void op_config(struct cuco_llm_operator_config *c, struct world *w, int diagnose,
                      int64_t budget)
{
	cuco_llm_operator_config_init(c);
	c->llm.base_url = w->srv.base;
	c->llm.api_key_env = KEY_ENV;
	c->llm.retry_base_ms = 5;
	c->llm.retry_max_ms = 20;
	c->llm.max_tokens = 800;
	c->llm.budget_tokens = budget;
	c->models[0] = "model-a";
	c->nmodels = 1;
	c->share_dir = CUCO_SOURCE_DIR "/share";
	c->workload = "toy_scale";
	c->shape = "small";
	c->ds = &ds;
	c->design_space_text = ds_text;
	c->facts = &facts;
	c->store = w->store;
	c->seed = 1;
	c->meta_summaries = 0;
	c->diagnose = diagnose;
	c->diagnose_max_tokens = diagnose_max_tokens;
}

static void world_start(struct world *w, const char *name, const char *const *replies, int diagnose,
                        int64_t budget)
{
	struct cuco_llm_operator_config c;
	struct cuco_run_rec run;
	struct cuco_program_rec p;
	struct cuco_eval_rec ev;
	struct cuco_err err;
	char log[160];
	int64_t id;

	memset(w, 0, sizeof(*w));
	snprintf(log, sizeof(log), "%s/%s.jsonl", tmp, name);
	llm_server_start(&w->srv, FIXTURES, log, 30, replies);
	snprintf(w->path, sizeof(w->path), "%s/%s.db", tmp, name);
	assert_int_equal(cuco_store_open(w->path, &w->store, &err), CUCO_OK);
	cuco_run_rec_init(&run);
	run.kind = "evolve";
	run.workload = "toy_scale";
	assert_int_equal(cuco_store_run_begin(w->store, &run, &w->run_id, &err), CUCO_OK);
	cuco_program_rec_init(&p);
	p.run_id = w->run_id;
	p.workload = "toy_scale";
	p.name = "seed";
	p.origin = "seed";
	p.code = seed_code;
	assert_int_equal(cuco_store_program_add(w->store, &p, &w->parent, &err), CUCO_OK);
	cuco_eval_rec_init(&ev);
	ev.program_id = w->parent;
	ev.run_id = w->run_id;
	ev.stage_reached = "bench";
	ev.status = "ok";
	ev.median_us = 100;
	ev.fitness = 1.0;
	assert_int_equal(cuco_store_eval_add(w->store, &ev, &id, &err), CUCO_OK);
	op_config(&c, w, diagnose, budget);
	if (cuco_llm_operator_new(&c, &w->op, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_bind(w->op, 1.0, &w->co);
	assert_int_equal(sqlite3_open(w->path, &w->db), SQLITE_OK);
}

static void world_stop(struct world *w)
{
	cuco_llm_operator_free(w->op);
	cuco_store_close(w->store);
	sqlite3_close(w->db);
	llm_server_stop(&w->srv);
}

/*
 * Breed one child of parent (the server's next reply), store it as the loop
 * does, and store its evaluation: failed at compile with COMPILE_LOG, or
 * correct with fitness. Returns the child's id.
 */
static int64_t breed_child(struct world *w, int64_t parent, double parent_fitness, const char *name,
                           int failed, double fitness)
{
	struct cuco_breed_request rq;
	struct cuco_breed_child out;
	struct cuco_program_rec p;
	struct cuco_parent edge = {parent, "parent"};
	struct cuco_eval_rec ev;
	struct cuco_err err;
	const char *names[1] = {name};
	int64_t id, eid;

	memset(&rq, 0, sizeof(rq));
	memset(&out, 0, sizeof(out));
	rq.run_id = w->run_id;
	rq.generation = 1;
	rq.name = name;
	rq.parent_id = parent;
	rq.parent_fitness = parent_fitness;
	if (w->co.breed(w->co.ctx, &rq, &out, &err))
		fail_msg("breed: %s", err.msg);
	assert_non_null(out.code);
	cuco_program_rec_init(&p);
	p.run_id = w->run_id;
	p.workload = "toy_scale";
	p.name = name;
	p.origin = "candidate";
	p.code = out.code;
	p.directive = out.directive_json;
	p.operator_ = out.op_name;
	p.parents = &edge;
	p.nparents = 1;
	assert_int_equal(cuco_store_begin(w->store, &err), CUCO_OK);
	assert_int_equal(cuco_store_program_add(w->store, &p, &id, &err), CUCO_OK);
	assert_int_equal(w->co.stored(w->co.ctx, names, &id, 1, &err), CUCO_OK);
	cuco_eval_rec_init(&ev);
	ev.program_id = id;
	ev.run_id = w->run_id;
	if (failed) {
		ev.stage_reached = "compile";
		ev.status = "compile";
		ev.error_code = CUCO_ERR_COMPILE;
		ev.error = "nvcc failed";
		ev.compile_log = COMPILE_LOG;
		ev.fitness = 0;
	} else {
		ev.stage_reached = "bench";
		ev.status = "ok";
		ev.median_us = 100 / fitness;
		ev.fitness = fitness;
	}
	assert_int_equal(cuco_store_eval_add(w->store, &ev, &eid, &err), CUCO_OK);
	assert_int_equal(cuco_store_commit(w->store, &err), CUCO_OK);
	free(out.code);
	free(out.directive_json);
	free(out.flags);
	return id;
}

/* The user prompt of a rewrite of parent. */
static char *prompt_of(struct world *w, int64_t parent)
{
	struct cuco_strbuf sys = CUCO_STRBUF_INIT, user = CUCO_STRBUF_INIT;
	struct cuco_err err;

	if (cuco_llm_operator_prompt(w->op, CUCO_LLM_MODE_REWRITE, parent, 0, NULL, 0, &sys, &user,
	                             NULL, &err))
		fail_msg("%s", err.msg);
	cuco_strbuf_release(&sys);
	return cuco_strbuf_detach(&user, NULL);
}

static void test_failed_child_diagnosed(void **state)
{
	static const char *const replies[] = {"rewrite_ctas64", "diagnosis", NULL};
	struct world w;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char sql[256], *text, *prompt, *req;
	int64_t child;

	(void)state;
	world_start(&w, "failed", replies, 1, 0);
	child = breed_child(&w, w.parent, 1.0, "g1-i0-c0", 1, 0);
	assert_int_equal(w.co.evaluated(w.co.ctx, child, 0, 0, &err), CUCO_OK);

	/* the call: stored for the child, purpose 'diagnosis', in the budget */
	snprintf(sql, sizeof(sql),
	         "SELECT count(*) FROM llm_calls WHERE purpose = 'diagnosis' AND program_id = %lld "
	         "AND error IS NULL AND tokens_in = 1800 AND tokens_out = 60",
	         (long long)child);
	assert_int_equal(q_int(w.db, sql), 1);
	assert_int_equal(q_int(w.db, "SELECT count(*) FROM llm_calls WHERE purpose = 'mutation'"),
	                 1);
	assert_int_equal(q_int(w.db, "SELECT sum(tokens_in + tokens_out) FROM llm_calls"),
	                 2500 + 120 + 1800 + 60);
	/* what the model read: the log's head and tail, the outcome, the code; no key */
	assert_int_equal(llm_server_requests(&w.srv, &log), 2);
	req = strstr(log.buf, "failed at stage compile");
	assert_non_null(req);
	assert_contains(log.buf, "identifier \\\"bar\\\" is undefined");
	assert_contains(log.buf, "CUCO_SEED_COMM_CTAS 64");
	assert_null(strstr(log.buf + (req - log.buf), KEY));
	/* the text beside the evaluation, trimmed */
	snprintf(sql, sizeof(sql), "SELECT diagnosis FROM evaluations WHERE program_id = %lld",
	         (long long)child);
	text = q_text(w.db, sql);
	assert_non_null(text);
	assert_true(!strncmp(text, "- Likely cause: the rewrite calls", 33));
	assert_true(text[strlen(text) - 1] == '.');
	free(text);

	/* its children's prompts show it */
	prompt = prompt_of(&w, child);
	assert_contains(prompt, "a model's diagnosis of this evaluation, from its log:\n"
	                        "- Likely cause: the rewrite calls");
	free(prompt);
	/* and so do its parent's next prompts, as an earlier child's */
	prompt = prompt_of(&w, w.parent);
	assert_contains(prompt, "what went wrong in earlier children of this program");
	assert_contains(prompt, "  - g1-i0-c0 (failed at stage compile):\n- Likely cause");
	free(prompt);
	cuco_strbuf_release(&log);
	world_stop(&w);
}

static void test_regressed_child_diagnosed(void **state)
{
	static const char *const replies[] = {"rewrite_ctas64", "diagnosis", NULL};
	struct world w;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int64_t child;

	(void)state;
	assert_int_equal(cuco_llm_diagnosis_due(1, 0.8, 1.0), 1);
	assert_int_equal(cuco_llm_diagnosis_due(1, 1.2, 1.0), 0);
	assert_int_equal(cuco_llm_diagnosis_due(1, 0.8, 0), 0); /* the parent failed */
	assert_int_equal(cuco_llm_diagnosis_due(0, 0, 0), 1);
	world_start(&w, "slower", replies, 1, 0);
	child = breed_child(&w, w.parent, 1.0, "g1-i0-c0", 0, 0.8);
	assert_int_equal(w.co.evaluated(w.co.ctx, child, 1, 0.8, &err), CUCO_OK);
	assert_int_equal(llm_server_requests(&w.srv, &log), 2);
	assert_contains(log.buf, "was correct but slower than its parent (fitness 0.8000 against "
	                         "the parent's 1.0000");
	assert_contains(log.buf, "(no log was kept)");
	assert_int_equal(
	    q_int(w.db, "SELECT count(*) FROM evaluations WHERE diagnosis IS NOT NULL"), 1);
	cuco_strbuf_release(&log);
	world_stop(&w);
}

static void test_off_by_default(void **state)
{
	static const char *const replies[] = {"rewrite_ctas64", NULL};
	struct cuco_llm_operator_config c;
	struct world w;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char *prompt;
	int64_t child;

	(void)state;
	cuco_llm_operator_config_init(&c);
	assert_int_equal(c.diagnose, 0);
	world_start(&w, "off", replies, 0, 0);
	child = breed_child(&w, w.parent, 1.0, "g1-i0-c0", 1, 0);
	assert_int_equal(w.co.evaluated(w.co.ctx, child, 0, 0, &err), CUCO_OK);
	assert_int_equal(llm_server_requests(&w.srv, &log), 1); /* the breed only */
	assert_int_equal(q_int(w.db, "SELECT count(*) FROM llm_calls"), 1);
	assert_int_equal(
	    q_int(w.db, "SELECT count(*) FROM evaluations WHERE diagnosis IS NOT NULL"), 0);
	prompt = prompt_of(&w, w.parent);
	assert_null(strstr(prompt, "earlier children"));
	free(prompt);
	cuco_strbuf_release(&log);
	world_stop(&w);
}

static void test_budget_skips_diagnosis(void **state)
{
	static const char *const replies[] = {"rewrite_ctas64", "diagnosis", NULL};
	struct world w;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int64_t child;

	(void)state;
	/* the rewrite fits (its prompt and 800 max_tokens); after its 2620 tokens the
	   diagnosis's worst case (its prompt and 60000 max_tokens) does not */
	diagnose_max_tokens = 60000;
	world_start(&w, "budget", replies, 1, 60000);
	diagnose_max_tokens = 400;
	child = breed_child(&w, w.parent, 1.0, "g1-i0-c0", 1, 0);
	assert_int_equal(w.co.evaluated(w.co.ctx, child, 0, 0, &err), CUCO_OK);
	assert_int_equal(llm_server_requests(&w.srv, &log), 1);
	assert_int_equal(q_int(w.db, "SELECT count(*) FROM llm_calls"), 1);
	assert_int_equal(
	    q_int(w.db, "SELECT count(*) FROM evaluations WHERE diagnosis IS NOT NULL"), 0);
	/* the next breed stops the run cleanly: the budget */
	{
		struct cuco_breed_request rq;
		struct cuco_breed_child out;

		memset(&rq, 0, sizeof(rq));
		memset(&out, 0, sizeof(out));
		rq.run_id = w.run_id;
		rq.name = "g1-i0-c1";
		rq.parent_id = w.parent;
		rq.parent_fitness = 1.0;
		assert_int_equal(w.co.breed(w.co.ctx, &rq, &out, &err), CUCO_ERR_UNSUPPORTED);
		assert_null(out.code);
	}
	cuco_strbuf_release(&log);
	world_stop(&w);
}

static void test_resume_keeps_diagnoses(void **state)
{
	static const char *const replies[] = {"rewrite_ctas64", "diagnosis", NULL};
	struct cuco_llm_operator_config c;
	struct cuco_llm_operator *op2 = NULL;
	const char *const *models;
	const struct cuco_llm_model_stats *stats;
	struct world w;
	struct cuco_err err;
	char *prompt;
	int64_t child;

	(void)state;
	world_start(&w, "resume", replies, 1, 0);
	child = breed_child(&w, w.parent, 1.0, "g1-i0-c0", 1, 0);
	assert_int_equal(w.co.evaluated(w.co.ctx, child, 0, 0, &err), CUCO_OK);
	/* a new process: the operator rebuilt from the store */
	op_config(&c, &w, 1, 0);
	if (cuco_llm_operator_new(&c, &op2, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(cuco_llm_operator_resume(op2, w.run_id, &err), CUCO_OK);
	assert_int_equal(cuco_llm_operator_stats(op2, &models, &stats), 1);
	assert_int_equal(stats[0].calls, 2);                       /* both calls counted */
	assert_int_equal(stats[0].tokens, 2500 + 120 + 1800 + 60); /* in the budget too */
	assert_int_equal(stats[0].accepted, 1);                    /* one mutation */
	assert_int_equal(cuco_llm_operator_bandit(op2)->total, 1); /* the diagnosis is no pull */
	cuco_llm_operator_free(w.op);
	w.op = op2;
	prompt = prompt_of(&w, child);
	assert_contains(prompt, "a model's diagnosis of this evaluation");
	free(prompt);
	prompt = prompt_of(&w, w.parent);
	assert_contains(prompt, "g1-i0-c0 (failed at stage compile)");
	free(prompt);
	world_stop(&w);
}

/* A whole run: the loop hands the judged child to the operator, which diagnoses it. */
static void test_evolve_run(void **state)
{
	static const char *const replies[] = {"rewrite_wrong", "diagnosis", NULL};
	struct cuco_llm_operator_config c;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct fake_eval f;
	struct world w;
	struct cuco_err err;
	int64_t run_id = 0;

	(void)state;
	world_start(&w, "evolve", replies, 1, 0);
	cuco_llm_operator_free(w.op);
	op_config(&c, &w, 1, 0);
	c.llm.sampling_seed = 3;
	if (cuco_llm_operator_new(&c, &w.op, &err))
		fail_msg("%s", err.msg);
	cuco_llm_operator_bind(w.op, 1.0, &w.co);
	fake_init(&f);
	cuco_evolve_config_default(&cfg);
	cfg.islands = 1;
	cfg.generations = 1;
	cfg.children_per_island = 1;
	snprintf(cfg.operator_, sizeof(cfg.operator_), "llm");
	cfg.llm_share = 1.0;
	memset(&o, 0, sizeof(o));
	o.store = w.store;
	o.workload = "toy_scale";
	o.shape = "small";
	o.ds = &ds;
	o.facts = &facts;
	o.seed_code = seed_code;
	o.evaluator = fake_evaluator(&f, 0);
	o.child_op = &w.co;
	if (cuco_evolve_run(&o, &cfg, 0, &run_id, &fin, &err))
		fail_msg("the run ended early: %s", err.msg);
	fake_release(&f);
	assert_int_equal(q_int(w.db, "SELECT count(*) FROM llm_calls WHERE purpose = 'mutation' "
	                             "AND program_id IS NOT NULL"),
	                 1);
	assert_int_equal(q_int(w.db, "SELECT count(*) FROM llm_calls c JOIN evaluations e ON "
	                             "e.program_id = c.program_id WHERE c.purpose = 'diagnosis' "
	                             "AND e.status = 'wrong' AND e.diagnosis LIKE '- Likely%'"),
	                 1);
	world_stop(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failed_child_diagnosed),
	    cmocka_unit_test(test_regressed_child_diagnosed),
	    cmocka_unit_test(test_off_by_default),
	    cmocka_unit_test(test_budget_skips_diagnosis),
	    cmocka_unit_test(test_resume_keeps_diagnoses),
	    cmocka_unit_test(test_evolve_run),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
