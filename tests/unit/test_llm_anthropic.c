/*
 * test_llm_anthropic.c - the client speaking Anthropic's Messages API to
 * tests/llm_server.py on /v1/messages: the request's shape (headers, top-level
 * system, max_tokens, no seed), text blocks joined, stop_reason "max_tokens"
 * as a truncation, 529 retried, 401 not, the key only in x-api-key and never
 * in a record; the stored rows.
 */
#define _XOPEN_SOURCE 700 /* nftw, in llm_loopback.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/client.h"
#include "store/store.h"
#include "util/error.h"
#include "util/strbuf.h"

#include "llm_loopback.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm"
#define KEY "sk-ant-cuco-test-0a1b2c3d4e5f"
#define MODEL "test-model"

static const struct cuco_llm_message msgs[] = {
    {"system", "You are cuco's mutation operator."},
    {"user", "Improve the program."},
};

/* One llm_server.py with a temp dir of its own: its request log and a store. */
struct server {
	struct llm_server srv;
	char dir[64];
	struct cuco_llm_client *c;
};

static void start(struct server *s, const char *const *names, int max_retries)
{
	struct cuco_llm_config cfg;
	struct cuco_err err;
	char log[128];

	snprintf(s->dir, sizeof(s->dir), "/tmp/cuco-test-anth-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(log, sizeof(log), "%s/requests.jsonl", s->dir);
	llm_server_start(&s->srv, FIXTURES, log, 20, names);
	cuco_llm_config_init(&cfg);
	cuco_llm_config_api(&cfg, CUCO_LLM_API_ANTHROPIC);
	cfg.base_url = s->srv.base;
	cfg.model = MODEL;
	cfg.temperature = 1.5; /* sent as 1: the API's largest */
	cfg.max_tokens = 100;
	cfg.retry_base_ms = 5;
	cfg.retry_max_ms = 50;
	cfg.max_retries = max_retries;
	cfg.timeout_ms = 5000;
	cfg.sampling_seed = 7;
	assert_int_equal(cuco_llm_client_new(&cfg, &s->c, &err), CUCO_OK);
}

static void stop(struct server *s)
{
	cuco_llm_client_free(s->c);
	llm_server_stop(&s->srv);
	rm_tree(s->dir);
}

static void assert_no_key(const char *s)
{
	if (s && strstr(s, KEY))
		fail_msg("the API key leaked into \"%s\"", s);
}

/* Request i of the server's log, parsed (json_decref it). */
static json_t *request(const struct server *s, int i)
{
	char *lines[8] = {NULL};
	int n = llm_server_request_lines(&s->srv, lines, 8);
	json_t *r;

	assert_true(i < n);
	r = json_loads(lines[i], 0, NULL);
	assert_non_null(r);
	for (int k = 0; k < n; k++)
		free(lines[k]);
	return r;
}

/* res stored and read back: no key anywhere, the columns as the result says. */
static void assert_stored(const struct server *s, const struct cuco_llm_result *res)
{
	struct cuco_store *st = NULL;
	struct cuco_llm_call_rec rec;
	struct cuco_err err;
	char path[160];
	int64_t id = 0;

	snprintf(path, sizeof(path), "%s/cuco.db", s->dir);
	assert_int_equal(cuco_store_open(path, &st, &err), CUCO_OK);
	assert_int_equal(cuco_llm_result_store(st, res, 0, 0, &id, &err), CUCO_OK);
	cuco_llm_call_rec_init(&rec);
	assert_int_equal(cuco_store_llm_call_get(st, id, &rec, &err), CUCO_OK);
	assert_no_key(rec.prompt);
	assert_no_key(rec.reply);
	assert_no_key(rec.error);
	assert_no_key(rec.endpoint);
	assert_string_equal(rec.endpoint, res->endpoint);
	if (res->error)
		assert_string_equal(rec.error, res->error);
	if (res->finish_reason)
		assert_string_equal(rec.finish_reason, res->finish_reason);
	assert_int_equal(rec.http_status, res->http_status);
	assert_int_equal(rec.attempts, res->attempts);
	assert_int_equal(rec.sampling_seed, res->seed);
	assert_int_equal(rec.tokens_in, res->tokens_in);
	assert_int_equal(rec.tokens_out, res->tokens_out);
	cuco_llm_call_rec_release(&rec);
	cuco_store_close(st);
}

static void test_reply(void **state)
{
	static const char *const names[] = {"anthropic_ok", NULL};
	struct server s;
	struct cuco_llm_result res;
	struct cuco_err err;
	json_t *r, *body, *m;

	(void)state;
	start(&s, names, 2);
	cuco_llm_result_init(&res);
	assert_contains(cuco_llm_client_endpoint(s.c), "/v1/messages");
	assert_int_equal(cuco_llm_chat(s.c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_string_equal(res.reply, "The loop unrolls twice.");
	assert_string_equal(res.finish_reason, "end_turn");
	assert_int_equal(res.truncated, 0);
	assert_int_equal(res.tokens_in, 120);
	assert_int_equal(res.tokens_out, 30);
	assert_int_equal(res.charged_tokens, 150);
	assert_int_equal(cuco_llm_client_budget(s.c)->tokens_used, 150);
	assert_int_equal(res.http_status, 200);
	assert_int_equal(res.attempts, 1);
	assert_true(res.seed >= 0); /* recorded, though not sent */
	assert_int_equal(res.system_folded, 0);
	/* the record keeps the messages as the openai path does, system first */
	assert_contains(res.prompt_json, "\"role\":\"system\"");

	r = request(&s, 0);
	assert_string_equal(json_string_value(json_object_get(r, "path")), "/v1/messages");
	assert_string_equal(json_string_value(json_object_get(r, "x_api_key")), KEY);
	assert_string_equal(json_string_value(json_object_get(r, "authorization")), "");
	assert_string_equal(json_string_value(json_object_get(r, "anthropic_version")),
	                    CUCO_LLM_ANTHROPIC_VERSION);
	body = json_object_get(r, "request");
	assert_string_equal(json_string_value(json_object_get(body, "model")), MODEL);
	assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 100);
	assert_string_equal(json_string_value(json_object_get(body, "system")),
	                    "You are cuco's mutation operator.");
	assert_true(json_number_value(json_object_get(body, "temperature")) == 1.0);
	assert_null(json_object_get(body, "seed"));
	assert_null(json_object_get(body, "stream"));
	assert_int_equal(json_array_size(json_object_get(body, "messages")), 1);
	m = json_array_get(json_object_get(body, "messages"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "role")), "user");
	assert_string_equal(json_string_value(json_object_get(m, "content")),
	                    "Improve the program.");
	json_decref(r);
	assert_stored(&s, &res);
	cuco_llm_result_release(&res);
	stop(&s);
}

static void test_max_tokens_truncates(void **state)
{
	static const char *const names[] = {"anthropic_max_tokens", "anthropic_context_full", NULL};
	struct server s;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	start(&s, names, 2);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(s.c, msgs, 2, NULL, &res, &err), CUCO_ERR_PARSE);
	assert_string_equal(res.finish_reason, "max_tokens");
	assert_int_equal(res.truncated, 1);
	assert_int_equal(res.context_full, 0);
	assert_contains(res.error, "truncated at max_tokens 100 (stop_reason \"max_tokens\")");
	assert_non_null(res.reply);
	assert_int_equal(res.attempts, 1); /* a truncation is not retried */
	assert_int_equal(res.charged_tokens, 240);
	assert_stored(&s, &res);

	assert_int_equal(cuco_llm_chat(s.c, msgs, 2, NULL, &res, &err), CUCO_ERR_PARSE);
	assert_int_equal(res.truncated, 1);
	assert_int_equal(res.context_full, 1);
	assert_contains(res.error, "stop_reason \"model_context_window_exceeded\" after 40");
	assert_contains(res.error, "context full");
	cuco_llm_result_release(&res);
	stop(&s);
}

static void test_overloaded_retried(void **state)
{
	/* 529 twice with the same body: an overloaded API, retried all the same */
	static const char *const names[] = {"anthropic_overloaded", "anthropic_overloaded",
	                                    "anthropic_ok", NULL};
	struct server s;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	start(&s, names, 3);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(s.c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.attempts, 3);
	assert_int_equal(res.http_status, 200);
	assert_string_equal(res.reply, "The loop unrolls twice.");
	assert_stored(&s, &res);
	cuco_llm_result_release(&res);
	stop(&s);
}

static void test_overloaded_gives_up(void **state)
{
	static const char *const names[] = {"anthropic_overloaded", "anthropic_overloaded", NULL};
	struct server s;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	start(&s, names, 1);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(s.c, msgs, 2, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 2);
	assert_int_equal(res.http_status, 529);
	assert_contains(res.error, "HTTP 529");
	assert_contains(res.error, "overloaded_error");
	assert_contains(res.error, "gave up after 2 attempts");
	assert_stored(&s, &res);
	cuco_llm_result_release(&res);
	stop(&s);
}

static void test_401_not_retried_key_redacted(void **state)
{
	static const char *const names[] = {"anthropic_401", NULL};
	static const struct cuco_llm_message leaky[] = {
	    {"system", "key " KEY " in the system prompt"},
	    {"user", "and " KEY " in the question"},
	};
	struct server s;
	struct cuco_llm_result res;
	struct cuco_err err;
	json_t *r;
	char *dump;

	(void)state;
	start(&s, names, 3);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(s.c, leaky, 2, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 1);
	assert_int_equal(res.http_status, 401);
	assert_contains(res.error, "authentication_error");
	assert_contains(res.error, "invalid x-api-key " CUCO_LLM_REDACTED);
	assert_contains(res.error, "check the API key in $" CUCO_LLM_ANTHROPIC_KEY_ENV);
	assert_contains(res.prompt_json, "key " CUCO_LLM_REDACTED " in the system prompt");
	assert_no_key(res.error);
	assert_no_key(res.prompt_json);
	assert_no_key(err.msg);
	assert_stored(&s, &res);
	/* the key went only as x-api-key */
	r = request(&s, 0);
	assert_string_equal(json_string_value(json_object_get(r, "x_api_key")), KEY);
	assert_string_equal(json_string_value(json_object_get(r, "authorization")), "");
	dump = json_dumps(json_object_get(r, "request"), 0);
	assert_non_null(dump);
	assert_no_key(dump); /* the key leaves in the header only, never in the body */
	assert_contains(dump, "and " CUCO_LLM_REDACTED " in the question");
	free(dump);
	json_decref(r);
	cuco_llm_result_release(&res);
	stop(&s);
}

static void test_api_names(void **state)
{
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = NULL;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_llm_api_parse("openai"), CUCO_LLM_API_OPENAI);
	assert_int_equal(cuco_llm_api_parse("anthropic"), CUCO_LLM_API_ANTHROPIC);
	assert_int_equal(cuco_llm_api_parse("claude"), -1);
	assert_string_equal(cuco_llm_api_name(CUCO_LLM_API_ANTHROPIC), "anthropic");
	cuco_llm_config_init(&cfg);
	assert_int_equal(cfg.api, CUCO_LLM_API_OPENAI);
	cuco_llm_config_api(&cfg, CUCO_LLM_API_ANTHROPIC);
	assert_string_equal(cfg.api_key_env, "ANTHROPIC_API_KEY");
	cfg.base_url = "http://127.0.0.1:1/v1/";
	cfg.model = MODEL;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	assert_string_equal(cuco_llm_client_endpoint(c), "http://127.0.0.1:1/v1/messages");
	cuco_llm_client_free(c);
	cfg.api = 7;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	assert_contains(err.msg, "neither openai nor anthropic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reply),
	    cmocka_unit_test(test_max_tokens_truncates),
	    cmocka_unit_test(test_overloaded_retried),
	    cmocka_unit_test(test_overloaded_gives_up),
	    cmocka_unit_test(test_401_not_retried_key_redacted),
	    cmocka_unit_test(test_api_names),
	};

	setenv(CUCO_LLM_ANTHROPIC_KEY_ENV, KEY, 1);
	setenv("OPENAI_API_KEY", "sk-openai-not-this-one", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
