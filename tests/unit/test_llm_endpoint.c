/*
 * test_llm_endpoint.c - the chat client's behaviour against what real
 * OpenAI-compatible servers send, replayed by tests/llm_server.py: U+0000 in a
 * reply, a chat template that refuses the system role, a 5xx that repeats
 * itself, a tokenizer that makes few bytes a token (the hard budget), a reply
 * cut off by a full context, per-call sampling seeds, the per-call columns in
 * the store (and stores made before them), and the endpoint's model list.
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

#include "llm/client.h"
#include "store/store.h"
#include "util/error.h"
#include "util/strbuf.h"

#include "llm_loopback.h"
#include "store_query.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm"
#define KEY_ENV "CUCO_TEST_LLM_ENDPOINT_KEY"
#define KEY "sk-cuco-endpoint-0a1b2c3d4e"
#define MODEL "test-model"
#define SYSTEM "You are cuco's mutation operator."

struct server {
	struct llm_server srv;
	char dir[64];
};

static void server_start(struct server *s, const char *const *names)
{
	char log[128];

	snprintf(s->dir, sizeof(s->dir), "/tmp/cuco-test-llm-ep-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(log, sizeof(log), "%s/requests.jsonl", s->dir);
	llm_server_start(&s->srv, FIXTURES, log, 20, names);
}

static void server_stop(struct server *s)
{
	llm_server_stop(&s->srv);
	rm_tree(s->dir);
}

static void config(struct cuco_llm_config *cfg, const struct server *s)
{
	cuco_llm_config_init(cfg);
	cfg->base_url = s->srv.base;
	cfg->model = MODEL;
	cfg->max_tokens = 100;
	cfg->api_key_env = KEY_ENV;
	cfg->retry_base_ms = 5;
	cfg->retry_max_ms = 50;
	cfg->max_retries = 2;
	cfg->timeout_ms = 5000;
	cfg->connect_timeout_ms = 2000;
	cfg->sampling_seed = 42;
}

static const struct cuco_llm_message msgs[] = {
    {"system", SYSTEM},
    {"user", "Improve the program."},
};

static struct cuco_llm_client *client_start(struct server *s, const char *const *names,
                                            struct cuco_llm_config *cfg)
{
	struct cuco_llm_client *c = NULL;
	struct cuco_err err;

	server_start(s, names);
	config(cfg, s);
	assert_int_equal(cuco_llm_client_new(cfg, &c, &err), CUCO_OK);
	return c;
}

static void client_stop(struct server *s, struct cuco_llm_client *c)
{
	cuco_llm_client_free(c);
	server_stop(s);
}

/* Request line i (0-based) the server logged, malloc'd; fails the test when there is none. */
static char *request(const struct server *s, int i)
{
	char *lines[16];
	int n = llm_server_request_lines(&s->srv, lines, 16);
	char *r = NULL;

	if (i >= n)
		fail_msg("the server saw %d requests, not %d", n, i + 1);
	for (int k = 0; k < n; k++)
		if (k == i)
			r = lines[k];
		else
			free(lines[k]);
	return r;
}

static int setup(void **state)
{
	(void)state;
	setenv(KEY_ENV, KEY, 1);
	return 0;
}

/* U+0000 in the content is legal JSON: the reply is kept, the NULs dropped. */
static void test_nul_in_reply(void **state)
{
	static const char *const names[] = {"nul_reply", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg);
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_string_equal(res.reply, "kernel ok done");
	assert_int_equal(res.nul_dropped, 3);
	assert_int_equal(res.tokens_in, 30);
	assert_int_equal(res.tokens_out, 7);
	assert_int_equal(res.usage_estimated, 0);
	assert_null(res.error);
	assert_int_equal(cuco_llm_client_budget(c)->tokens_used, 37);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

static void no_retries(struct cuco_llm_config *cfg)
{
	cfg->max_retries = 0;
}

/*
 * A template that refuses the system role: the call is sent again at once
 * with the system prompt folded into the user message (not a retry: it works
 * with retries off), and every later call for that model goes folded.
 */
static void test_system_role_refused(void **state)
{
	static const char *const names[] = {"system_refused", "ok_diff", "ok_diff", NULL};
	static const struct cuco_llm_message user_only[] = {{"user", "Only a user message."}};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;
	char *r;

	(void)state;
	server_start(&s, names);
	config(&cfg, &s);
	no_retries(&cfg);
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_client_folds_system(c, MODEL), 0);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.attempts, 2);
	assert_int_equal(res.http_status, 200);
	assert_int_equal(res.system_folded, 1);
	assert_null(res.error);
	/* what is stored is what was sent: one user message, the system prompt first */
	assert_string_equal(res.prompt_json, "[{\"role\":\"user\",\"content\":\"" SYSTEM
	                                     "\\n\\nImprove the program.\"}]");
	assert_int_equal(cuco_llm_client_folds_system(c, MODEL), 1);
	assert_int_equal(cuco_llm_client_folds_system(c, "another-model"), 0);
	r = request(&s, 0);
	assert_contains(r, "\"role\": \"system\"");
	free(r);
	r = request(&s, 1);
	assert_null(strstr(r, "\"role\": \"system\""));
	assert_contains(r, SYSTEM "\\n\\nImprove the program.");
	free(r);

	/* remembered: the next call goes folded at once */
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.attempts, 1);
	assert_int_equal(res.system_folded, 1);
	r = request(&s, 2);
	assert_null(strstr(r, "\"role\": \"system\""));
	free(r);
	/* a call without a system message is not touched */
	assert_int_equal(cuco_llm_chat(c, user_only, 1, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.system_folded, 0);
	assert_string_equal(res.prompt_json,
	                    "[{\"role\":\"user\",\"content\":\"Only a user message.\"}]");
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* A 500 whose body repeats the attempt before is not retried again; a loading 503 is. */
static void test_repeated_5xx(void **state)
{
	static const char *const same[] = {"server_error", "server_error", "ok_diff", NULL};
	static const char *const loading[] = {"unavailable", "unavailable", "ok_diff", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	c = client_start(&s, same, &cfg);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 2);
	assert_int_equal(res.http_status, 500);
	assert_contains(res.error, "upstream model crashed (the same error as the attempt "
	                           "before: not retried further)");
	assert_int_equal(llm_server_requests(&s.srv, &log), 2);
	client_stop(&s, c);

	c = client_start(&s, loading, &cfg);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.attempts, 3);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
	cuco_strbuf_release(&log);
}

/*
 * A tokenizer of about 1.6 bytes a token: the first call is estimated at
 * CUCO_LLM_BYTES_PER_TOKEN, the next from what usage taught, so the third
 * call, which would cross the budget, is never sent (at 4 bytes a token it
 * was, and the run used 4050 of 3500 tokens).
 */
static void test_budget_learns_bytes_per_token(void **state)
{
	static const char *const names[] = {"dense_usage", "dense_usage", "dense_usage", NULL};
	struct cuco_strbuf big = CUCO_STRBUF_INIT, log = CUCO_STRBUF_INIT;
	struct cuco_llm_message m[2] = {{"system", SYSTEM}, {"user", NULL}};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;
	double bpt;

	(void)state;
	/* 36 lines of 55 bytes: 2046 bytes with the system message and framing, 1300 tokens */
	for (int i = 0; i < 36; i++)
		cuco_strbuf_adds(&big, "__global__ void k(float *x) { x[threadIdx.x] += 1; }\n");
	m[1].content = big.buf;
	server_start(&s, names);
	config(&cfg, &s);
	cfg.budget_tokens = 3500;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_result_init(&res);
	assert_true(cuco_llm_client_bytes_per_token(c, MODEL) == CUCO_LLM_BYTES_PER_TOKEN);
	assert_int_equal(cuco_llm_chat(c, m, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(cuco_llm_client_budget(c)->tokens_used, 1350);
	bpt = cuco_llm_client_bytes_per_token(c, MODEL);
	assert_true(bpt > 1.5 && bpt < 1.7);
	assert_int_equal(cuco_llm_chat(c, m, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(cuco_llm_client_budget(c)->tokens_used, 2700);
	assert_int_equal(cuco_llm_chat(c, m, 2, NULL, &res, &err), CUCO_ERR_UNSUPPORTED);
	assert_int_equal(res.attempts, 0);
	assert_contains(res.error, "budget exhausted: 2700 of 3500 tokens used");
	assert_contains(res.error, "bytes a token");
	assert_true(cuco_llm_client_budget(c)->tokens_used <= cfg.budget_tokens);
	assert_int_equal(llm_server_requests(&s.srv, &log), 2);
	/* another model on the endpoint starts from the default */
	assert_true(cuco_llm_client_bytes_per_token(c, "another-model") ==
	            CUCO_LLM_BYTES_PER_TOKEN);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
	cuco_strbuf_release(&big);
	cuco_strbuf_release(&log);
}

/* The same learning from stored calls (a resumed run), and the no-usage estimate. */
static void test_learn_from_stored(void **state)
{
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_err err;

	(void)state;
	cuco_llm_config_init(&cfg);
	cfg.base_url = "http://127.0.0.1:1";
	cfg.model = MODEL;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	/* 2 messages: 10 + 20 content bytes + 2 * 16 framing = 62 bytes in 31 tokens */
	cuco_llm_client_learn(c, MODEL,
	                      "[{\"role\":\"system\",\"content\":\"0123456789\"},"
	                      "{\"role\":\"user\",\"content\":\"01234567890123456789\"}]",
	                      31);
	assert_true(fabs(cuco_llm_client_bytes_per_token(c, MODEL) - 2.0) < 1e-9);
	cuco_llm_client_learn(c, MODEL, "[{\"role\":\"user\",\"content\":\"0123\"}]", 20);
	assert_true(fabs(cuco_llm_client_bytes_per_token(c, MODEL) - 1.0) < 1e-9);
	cuco_llm_client_learn(c, MODEL, "[{\"role\":\"user\",\"content\":\"0123\"}]",
	                      CUCO_STORE_NO_INT);
	assert_true(fabs(cuco_llm_client_bytes_per_token(c, MODEL) - 1.0) < 1e-9);
	/* (4 + 16) / 2 + 6 / 2 */
	assert_int_equal(
	    cuco_llm_estimate_call("[{\"role\":\"user\",\"content\":\"0123\"}]", "abcdef"), 13);
	cuco_llm_client_free(c);
}

/* finish_reason "length" below max_tokens: the context is full, and the message says so. */
static void test_context_full(void **state)
{
	static const char *const names[] = {"context_full", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg);
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_PARSE);
	assert_int_equal(res.truncated, 1);
	assert_int_equal(res.context_full, 1);
	assert_string_equal(res.finish_reason, "length");
	assert_non_null(res.reply);
	assert_contains(res.error, "after 18 completion tokens, below max_tokens 100: context full "
	                           "(the prompt took 2030 tokens)");
	assert_contains(res.error, "--ctx-size");
	assert_int_equal(res.charged_tokens, 2048);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* Every request carries a seed from the configured seed and the call's index. */
static void test_seed_per_call(void **state)
{
	static const char *const names[] = {"ok_diff", "ok_diff", "ok_diff", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg);
	struct cuco_llm_result res;
	struct cuco_err err;
	int64_t seeds[3];
	char want[64], *r;

	(void)state;
	cuco_llm_result_init(&res);
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			cuco_llm_client_set_calls(c, 7); /* a resumed run with 7 calls stored */
		assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
		seeds[i] = res.seed;
		assert_true(seeds[i] >= 0 && seeds[i] <= 0x7fffffff);
		r = request(&s, i);
		snprintf(want, sizeof(want), "\"seed\": %lld", (long long)seeds[i]);
		assert_contains(r, want);
		free(r);
	}
	assert_int_equal(seeds[0], cuco_llm_call_seed(42, 0));
	assert_int_equal(seeds[1], cuco_llm_call_seed(42, 1));
	assert_int_equal(seeds[2], cuco_llm_call_seed(42, 7));
	assert_true(seeds[0] != seeds[1] && seeds[1] != seeds[2]);
	assert_true(cuco_llm_call_seed(43, 0) != seeds[0]);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* The per-call columns: HTTP status, finish reason, attempts, seed; never the key. */
static void test_stored_columns(void **state)
{
	static const char *const names[] = {"system_refused", "echo_key_401", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg);
	struct cuco_llm_result res;
	struct cuco_llm_call_rec rec;
	struct cuco_store *st = NULL;
	struct cuco_err err;
	char path[160];
	int64_t id[3];

	(void)state;
	snprintf(path, sizeof(path), "%s/cuco.db", s.dir);
	assert_int_equal(cuco_store_open(path, &st, &err), CUCO_OK);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(cuco_llm_result_store(st, &res, 0, 0, &id[0], &err), CUCO_OK);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(cuco_llm_result_store(st, &res, 0, 0, &id[1], &err), CUCO_OK);
	cfg.budget_tokens = 1; /* refused before sending */
	cuco_llm_client_free(c);
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_UNSUPPORTED);
	assert_int_equal(cuco_llm_result_store(st, &res, 0, 0, &id[2], &err), CUCO_OK);

	cuco_llm_call_rec_init(&rec);
	assert_int_equal(cuco_store_llm_call_get(st, id[0], &rec, &err), CUCO_OK);
	assert_int_equal(rec.http_status, 200);
	assert_string_equal(rec.finish_reason, "stop");
	assert_int_equal(rec.attempts, 2);
	assert_int_equal(rec.sampling_seed, cuco_llm_call_seed(42, 0));
	assert_int_equal(rec.tokens_in, 120);
	cuco_llm_call_rec_release(&rec);
	assert_int_equal(cuco_store_llm_call_get(st, id[1], &rec, &err), CUCO_OK);
	assert_int_equal(rec.http_status, 401);
	assert_null(rec.finish_reason);
	assert_int_equal(rec.attempts, 1);
	assert_int_equal(rec.sampling_seed, cuco_llm_call_seed(42, 1));
	assert_null(strstr(rec.error, KEY));
	cuco_llm_call_rec_release(&rec);
	assert_int_equal(cuco_store_llm_call_get(st, id[2], &rec, &err), CUCO_OK);
	assert_int_equal(rec.http_status, 0);
	assert_int_equal(rec.attempts, 0);
	assert_int_equal(rec.sampling_seed, CUCO_STORE_NO_INT); /* nothing was sent */
	cuco_llm_call_rec_release(&rec);
	cuco_store_close(st);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* A store made before the per-call columns opens, keeps its calls, and takes new ones. */
static void test_older_stores(void **state)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	char dir[64], path[128];
	sqlite3 *db;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-llm-ep-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(
	    cuco_strbuf_read_file(&sql, CUCO_SOURCE_DIR "/tests/fixtures/store/v1.sql"), 0);
	for (int version = 1; version <= 3; version++) {
		struct cuco_store *st = NULL;
		struct cuco_llm_call_rec rec;
		struct cuco_err err;
		int64_t id;

		snprintf(path, sizeof(path), "%s/v%d.db", dir, version);
		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(sqlite3_exec(db, sql.buf, NULL, NULL, NULL), SQLITE_OK);
		if (version == 2) /* schema 2 as cuco made it: schema 1 and the programs' flags */
			assert_int_equal(sqlite3_exec(db,
			                              "ALTER TABLE programs ADD COLUMN flags TEXT; "
			                              "PRAGMA user_version = 2;",
			                              NULL, NULL, NULL),
			                 SQLITE_OK);
		if (version == 3) /* and the per-call columns */
			assert_int_equal(
			    sqlite3_exec(db,
			                 "ALTER TABLE programs ADD COLUMN flags TEXT; "
			                 "ALTER TABLE llm_calls ADD COLUMN http_status INTEGER; "
			                 "ALTER TABLE llm_calls ADD COLUMN finish_reason TEXT; "
			                 "ALTER TABLE llm_calls ADD COLUMN attempts INTEGER; "
			                 "ALTER TABLE llm_calls ADD COLUMN seed INTEGER; "
			                 "PRAGMA user_version = 3;",
			                 NULL, NULL, NULL),
			    SQLITE_OK);
		assert_int_equal(q_int(db, "PRAGMA user_version"), version);
		sqlite3_close(db);

		assert_int_equal(cuco_store_open(path, &st, &err), CUCO_OK);
		cuco_llm_call_rec_init(&rec);
		assert_int_equal(cuco_store_llm_call_get(st, 1, &rec, &err), CUCO_OK);
		assert_string_equal(rec.model, "model-a");
		assert_int_equal(rec.tokens_in, 100);
		assert_int_equal(rec.http_status, CUCO_STORE_NO_INT);
		assert_null(rec.finish_reason);
		assert_int_equal(rec.attempts, CUCO_STORE_NO_INT);
		assert_int_equal(rec.sampling_seed, CUCO_STORE_NO_INT);
		assert_null(rec.purpose);
		cuco_llm_call_rec_release(&rec);
		rec.model = "model-b";
		rec.purpose = "diagnosis";
		rec.http_status = 200;
		rec.finish_reason = "length";
		rec.attempts = 3;
		rec.sampling_seed = 12345;
		assert_int_equal(cuco_store_llm_call_add(st, &rec, &id, &err), CUCO_OK);
		cuco_llm_call_rec_init(&rec);
		assert_int_equal(cuco_store_llm_call_get(st, id, &rec, &err), CUCO_OK);
		assert_int_equal(rec.http_status, 200);
		assert_string_equal(rec.finish_reason, "length");
		assert_int_equal(rec.attempts, 3);
		assert_int_equal(rec.sampling_seed, 12345);
		assert_string_equal(rec.purpose, "diagnosis");
		cuco_llm_call_rec_release(&rec);
		/* the evaluations take a diagnosis, set after the row */
		{
			struct cuco_eval_rec ev;
			int64_t eid;

			cuco_eval_rec_init(&ev);
			ev.program_id = 1;
			ev.status = "compile";
			assert_int_equal(cuco_store_eval_add(st, &ev, &eid, &err), CUCO_OK);
			assert_int_equal(cuco_store_eval_set_diagnosis(st, eid, "- a cause", &err),
			                 CUCO_OK);
			assert_int_equal(cuco_store_eval_get(st, eid, &ev, &err), CUCO_OK);
			assert_string_equal(ev.diagnosis, "- a cause");
			cuco_eval_rec_release(&ev);
			assert_int_equal(cuco_store_eval_set_diagnosis(st, eid + 100, "x", &err),
			                 CUCO_ERR_NOT_FOUND);
		}
		cuco_store_close(st);

		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(q_int(db, "PRAGMA user_version"), CUCO_STORE_SCHEMA_VERSION);
		assert_int_equal(q_int(db, "SELECT count(*) FROM llm_calls"), 2);
		assert_int_equal(
		    q_int(db, "SELECT count(*) FROM llm_calls WHERE sampling_seed IS NULL AND "
		              "attempts IS NULL AND http_status IS NULL"),
		    1);
		{
			char *fin = q_text(db, "SELECT finish_reason FROM llm_calls WHERE id = 2");
			assert_string_equal(fin, "length");
			free(fin);
		}
		sqlite3_close(db);
	}
	cuco_strbuf_release(&sql);
	rm_tree(dir);
}

/* The endpoint's model list, with and without /v1 in the base URL; a server without one. */
static void test_list_models(void **state)
{
	/* a fixture in line keeps the server up until the test stops it */
	static const char *const listing[] = {"--models=test-model,other-model", "ok_diff", NULL};
	static const char *const none[] = {"ok_diff", NULL};
	struct cuco_strbuf ids = CUCO_STRBUF_INIT, log = CUCO_STRBUF_INIT;
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_err err;
	char base[96];

	(void)state;
	server_start(&s, listing);
	config(&cfg, &s);
	assert_int_equal(cuco_llm_list_models(&cfg, 3000, &ids, &err), CUCO_OK);
	assert_string_equal(ids.buf, "test-model\nother-model\n");
	snprintf(base, sizeof(base), "%s/v1/", s.srv.base);
	cfg.base_url = base;
	assert_int_equal(cuco_llm_list_models(&cfg, 3000, &ids, &err), CUCO_OK);
	assert_string_equal(ids.buf, "test-model\nother-model\n");
	assert_int_equal(llm_server_requests(&s.srv, &log), 2);
	assert_contains(log.buf, "\"path\": \"/v1/models\"");
	assert_contains(log.buf, "Bearer " KEY);
	server_stop(&s);

	server_start(&s, none);
	config(&cfg, &s);
	assert_int_equal(cuco_llm_list_models(&cfg, 3000, &ids, &err), CUCO_ERR_RUN);
	assert_contains(err.msg, "HTTP 404");
	server_stop(&s);
	cuco_strbuf_release(&ids);
	cuco_strbuf_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nul_in_reply),
	    cmocka_unit_test(test_system_role_refused),
	    cmocka_unit_test(test_repeated_5xx),
	    cmocka_unit_test(test_budget_learns_bytes_per_token),
	    cmocka_unit_test(test_learn_from_stored),
	    cmocka_unit_test(test_context_full),
	    cmocka_unit_test(test_seed_per_call),
	    cmocka_unit_test(test_stored_columns),
	    cmocka_unit_test(test_older_stores),
	    cmocka_unit_test(test_list_models),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
