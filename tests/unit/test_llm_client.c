/*
 * test_llm_client.c - the chat client against tests/llm_server.py, a loopback
 * OpenAI-compatible server that replays recorded replies from tests/fixtures/llm/:
 * good replies end to end, malformed and truncated bodies, retries on 429/5xx,
 * timeouts, missing usage, budgets, and the API key kept out of every record.
 */
#define _XOPEN_SOURCE 700 /* nftw, in llm_loopback.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "llm/client.h"
#include "llm/reply.h"
#include "program/directive.h"
#include "store/store.h"
#include "util/error.h"
#include "util/proc.h"
#include "util/strbuf.h"

#include "llm_loopback.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm"
#define KEY_ENV "CUCO_TEST_LLM_KEY"
#define KEY "sk-cuco-test-9f8e7d6c5b4a"
#define MODEL "test-model"

/* One llm_server.py with a temp dir of its own: its request log, the key test's store. */
struct server {
	struct llm_server srv;
	char dir[64];
};

static void server_start(struct server *s, const char *const *names)
{
	char log[128];

	snprintf(s->dir, sizeof(s->dir), "/tmp/cuco-test-llm-XXXXXX");
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
	cfg->temperature = 0.25;
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
    {"system", "You are cuco's mutation operator."},
    {"user", "Improve the program."},
};

static char *fixture(const char *name)
{
	char path[512], *text;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	if (!(text = llm_read_all(path)))
		fail_msg("cannot read %s", path);
	return text;
}

static void assert_no_key(const char *s)
{
	if (s && strstr(s, KEY))
		fail_msg("the API key leaked into \"%s\"", s);
}

/* A client on a fresh server replaying names, configured by config() and then tweak (or NULL). */
static struct cuco_llm_client *client_start(struct server *s, const char *const *names,
                                            struct cuco_llm_config *cfg,
                                            void (*tweak)(struct cuco_llm_config *))
{
	struct cuco_llm_client *c = NULL;
	struct cuco_err err;

	server_start(s, names);
	config(cfg, s);
	if (tweak)
		tweak(cfg);
	assert_int_equal(cuco_llm_client_new(cfg, &c, &err), CUCO_OK);
	return c;
}

/* Free the client and stop its server. */
static void client_stop(struct server *s, struct cuco_llm_client *c)
{
	cuco_llm_client_free(c);
	server_stop(s);
}

/* One call against a server replaying names; the client is returned for budget checks. */
static int call(const char *const *names, struct cuco_llm_config *cfg_out,
                void (*tweak)(struct cuco_llm_config *), struct cuco_llm_result *res,
                struct cuco_err *err, struct cuco_strbuf *log, int *nreq)
{
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg, tweak);
	int rc;

	rc = cuco_llm_chat(c, msgs, 2, NULL, res, err);
	if (log)
		*nreq = llm_server_requests(&s.srv, log);
	if (cfg_out)
		*cfg_out = cfg;
	client_stop(&s, c);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	setenv(KEY_ENV, KEY, 1);
	return 0;
}

static void test_good_diff_end_to_end(void **state)
{
	static const char *const names[] = {"ok_diff", NULL};
	struct cuco_strbuf log = CUCO_STRBUF_INIT, parent = CUCO_STRBUF_INIT;
	struct cuco_design_space ds;
	struct cuco_llm_result res;
	struct cuco_llm_edit e;
	struct cuco_err err;
	char *want = fixture("diff_good.txt");
	int nreq = 0;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, NULL, &res, &err, &log, &nreq), CUCO_OK);
	assert_string_equal(res.reply, want);
	assert_string_equal(res.model, MODEL);
	assert_string_equal(res.finish_reason, "stop");
	assert_int_equal(res.tokens_in, 120);
	assert_int_equal(res.tokens_out, 80);
	assert_int_equal(res.usage_estimated, 0);
	assert_int_equal(res.attempts, 1);
	assert_int_equal(res.http_status, 200);
	assert_null(res.error);
	assert_true(isnan(res.cost)); /* no prices configured */
	assert_true(res.latency_ms >= 0 && res.latency_ms < 5000);
	assert_contains(res.endpoint, "/v1/chat/completions");
	assert_string_equal(
	    res.prompt_json,
	    "[{\"role\":\"system\",\"content\":\"You are cuco's mutation operator.\"},"
	    "{\"role\":\"user\",\"content\":\"Improve the program.\"}]");
	/* what went over the wire */
	assert_int_equal(nreq, 1);
	assert_contains(log.buf, "\"path\": \"/v1/chat/completions\"");
	assert_contains(log.buf, "\"authorization\": \"Bearer " KEY "\"");
	assert_contains(log.buf, "\"model\": \"test-model\"");
	assert_contains(log.buf, "\"temperature\": 0.25");
	assert_contains(log.buf, "\"max_tokens\": 100");
	assert_contains(log.buf, "\"stream\": false");
	assert_contains(log.buf, "\"role\": \"system\"");

	/* the reply becomes a candidate */
	assert_int_equal(
	    cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds, &err), CUCO_OK);
	assert_int_equal(cuco_strbuf_read_file(&parent, FIXTURES "/parent.cu"), 0);
	cuco_llm_edit_init(&e);
	assert_int_equal(cuco_llm_reply_apply("parent.cu", parent.buf, res.reply,
	                                      CUCO_LLM_MODE_DIFF, &ds, NULL, &e, &err),
	                 CUCO_OK);
	assert_contains(e.code, "#define COMM_CTAS 64");
	cuco_llm_edit_release(&e);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&parent);
	cuco_strbuf_release(&log);
	cuco_llm_result_release(&res);
	free(want);
}

/* Recorded replies that arrive fine but must be judged by the reply parser. */
static void test_replayed_replies(void **state)
{
	static const struct {
		const char *fixture;
		int mode;
		int code;
		const char *reason;
	} cases[] = {
	    {"ok_rewrite", CUCO_LLM_MODE_REWRITE, CUCO_OK, NULL},
	    {"ok_crossover", CUCO_LLM_MODE_CROSSOVER, CUCO_OK, NULL},
	    {"missing_markers", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE, "the reply ends before"},
	    {"outside", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID, "outside the EVOLVE-BLOCKs"},
	};
	struct cuco_strbuf parent = CUCO_STRBUF_INIT;
	struct cuco_design_space ds;
	struct cuco_err err;
	size_t i;

	(void)state;
	assert_int_equal(
	    cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds, &err), CUCO_OK);
	assert_int_equal(cuco_strbuf_read_file(&parent, FIXTURES "/parent.cu"), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *names[] = {cases[i].fixture, NULL};
		struct cuco_llm_result res;
		struct cuco_llm_edit e;
		int rc;

		cuco_llm_result_init(&res);
		cuco_llm_edit_init(&e);
		assert_int_equal(call(names, NULL, NULL, &res, &err, NULL, NULL), CUCO_OK);
		rc = cuco_llm_reply_apply("parent.cu", parent.buf, res.reply, cases[i].mode, &ds,
		                          NULL, &e, &err);
		if (rc != cases[i].code)
			fail_msg("%s: %d (%s)", cases[i].fixture, rc, e.reason ? e.reason : "");
		if (cases[i].reason)
			assert_contains(e.reason, cases[i].reason);
		else
			assert_non_null(e.code);
		cuco_llm_edit_release(&e);
		cuco_llm_result_release(&res);
	}
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&parent);
}

static void base_with_v1(struct cuco_llm_config *cfg)
{
	static char base[80];

	snprintf(base, sizeof(base), "%s/v1/", cfg->base_url);
	cfg->base_url = base;
}

static void test_base_url_with_v1(void **state)
{
	static const char *const names[] = {"ok_diff", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, base_with_v1, &res, &err, NULL, NULL), CUCO_OK);
	assert_contains(res.endpoint, ":");
	assert_null(strstr(res.endpoint, "/v1/v1"));
	cuco_llm_result_release(&res);
}

/* A prompt that is not valid UTF-8 keeps its every message: bad bytes become U+FFFD. */
static void test_invalid_utf8(void **state)
{
	static const char *const names[] = {"ok_diff", NULL};
	static const struct cuco_llm_message bad[] = {
	    {"system", "You are cuco's mutation operator."},
	    {"user", "Improve \xff the \xc3( program \xed\xa0\x80 now \xe2\x82."},
	};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg, NULL);
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, bad, 2, NULL, &res, &err), CUCO_OK);
	assert_contains(res.prompt_json, "\"role\":\"user\"");
	assert_contains(
	    res.prompt_json,
	    "Improve \xef\xbf\xbd the \xef\xbf\xbd( program \xef\xbf\xbd now \xef\xbf\xbd.");
	assert_int_equal(llm_server_requests(&s.srv, &log), 1);
	assert_contains(log.buf, "\"role\": \"user\"");
	assert_contains(log.buf, "Improve \\ufffd the \\ufffd( program");
	cuco_llm_result_release(&res);
	client_stop(&s, c);
	cuco_strbuf_release(&log);
}

static void test_retry_429(void **state)
{
	static const char *const names[] = {"rate_limited", "ok_diff", NULL};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	struct cuco_err err;
	int nreq;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, NULL, &res, &err, &log, &nreq), CUCO_OK);
	assert_int_equal(res.attempts, 2);
	assert_int_equal(nreq, 2);
	assert_int_equal(res.http_status, 200);
	assert_int_equal(res.tokens_in, 120);
	cuco_llm_result_release(&res);
	cuco_strbuf_release(&log);
}

static void slow_backoff(struct cuco_llm_config *cfg)
{
	cfg->retry_base_ms = 5;
	cfg->retry_max_ms = 5000; /* Retry-After: 1 fits under the cap */
}

static void test_retry_after_honoured(void **state)
{
	static const char *const names[] = {"rate_limited_1s", "ok_diff", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, slow_backoff, &res, &err, NULL, NULL), CUCO_OK);
	assert_int_equal(res.attempts, 2);
	assert_true(res.latency_ms >= 950); /* waited the server's second, not our 5 ms */
	cuco_llm_result_release(&res);
}

static void test_retry_5xx(void **state)
{
	static const char *const names[] = {"server_error", "unavailable", "ok_diff", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, NULL, &res, &err, NULL, NULL), CUCO_OK);
	assert_int_equal(res.attempts, 3);
	assert_non_null(res.reply);
	cuco_llm_result_release(&res);
}

static void test_retries_exhausted(void **state)
{
	static const char *const names[] = {"server_error", "server_error_other", "server_error",
	                                    "ok_diff", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, NULL, &res, &err, NULL, NULL), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 3);
	assert_int_equal(res.code, CUCO_ERR_RUN);
	assert_int_equal(res.http_status, 500);
	assert_null(res.reply);
	assert_contains(res.error, "HTTP 500 from http://127.0.0.1:");
	assert_contains(res.error, "upstream model crashed (gave up after 3 attempts)");
	/* every attempt's error, not only the last one's */
	assert_contains(res.error, "; before it: attempt 1: HTTP 500 from http://127.0.0.1:");
	assert_contains(res.error, "upstream model crashed; attempt 2: HTTP 500 from");
	assert_contains(res.error, "upstream model crashed: out of memory");
	assert_contains(err.msg, res.error);
	cuco_llm_result_release(&res);
}

static void assert_stored_without_key(const struct server *s, const struct cuco_llm_result *res);

/* An earlier attempt's error that echoed the key is kept redacted, stored and all. */
static void test_retries_keep_errors_redacted(void **state)
{
	static const char *const names[] = {"echo_key_500", "unavailable", "server_error", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = client_start(&s, names, &cfg, NULL);
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 3);
	assert_contains(res.error, "attempt 1: HTTP 500 from");
	assert_contains(res.error, "crashed serving Bearer " CUCO_LLM_REDACTED);
	assert_contains(res.error, "attempt 2: HTTP 503 from");
	assert_contains(res.error, "loading model");
	assert_no_key(res.error);
	assert_no_key(err.msg);
	assert_stored_without_key(&s, &res);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

static void test_malformed_body(void **state)
{
	static const char *const names[] = {"malformed", "ok_diff", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, NULL, &res, &err, NULL, NULL), CUCO_ERR_PARSE);
	assert_int_equal(res.attempts, 1); /* not retried: the server answered */
	assert_contains(res.error, "is not a JSON object");
	assert_contains(res.error, "chatcmpl-1");
	assert_null(res.reply);
	cuco_llm_result_release(&res);

	{
		static const char *const n2[] = {"no_content", NULL};

		cuco_llm_result_init(&res);
		assert_int_equal(call(n2, NULL, NULL, &res, &err, NULL, NULL), CUCO_ERR_PARSE);
		assert_contains(res.error, "has no choices[0].message.content");
		assert_int_equal(res.tokens_in, 10);
		cuco_llm_result_release(&res);
	}
}

static void max_tokens_64(struct cuco_llm_config *cfg)
{
	cfg->max_tokens = 64; /* the fixture's reply stops at 64 completion tokens */
}

static void test_truncated(void **state)
{
	static const char *const names[] = {"truncated", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, max_tokens_64, &res, &err, NULL, NULL), CUCO_ERR_PARSE);
	assert_string_equal(res.finish_reason, "length");
	assert_int_equal(res.truncated, 1);
	assert_int_equal(res.context_full, 0);
	assert_contains(res.error, "truncated at max_tokens 64 (finish_reason \"length\")");
	assert_contains(res.error, "raise --llm-max-tokens");
	assert_non_null(res.reply); /* kept for the record */
	assert_int_equal(res.tokens_out, 64);
	assert_int_equal(res.charged_tokens, 164);
	cuco_llm_result_release(&res);
}

static void short_timeout(struct cuco_llm_config *cfg)
{
	cfg->timeout_ms = 300;
	cfg->max_retries = 0;
}

static void test_slow_reply_times_out(void **state)
{
	static const char *const names[] = {"slow", NULL};
	struct cuco_llm_result res;
	struct cuco_err err;
	double t0 = cuco_now();

	(void)state;
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, short_timeout, &res, &err, NULL, NULL),
	                 CUCO_ERR_TIMEOUT);
	/* the server answers after 8 s; starting it takes about 1 s (3 s on a loaded machine) */
	assert_true(cuco_now() - t0 < 6.0);
	assert_contains(res.error, "timed out");
	assert_contains(res.error, "total 300 ms");
	assert_int_equal(res.attempts, 1);
	cuco_llm_result_release(&res);
}

static void test_missing_usage(void **state)
{
	static const char *const names[] = {"no_usage", "no_usage", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	c = client_start(&s, names, &cfg, NULL);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(res.tokens_in, CUCO_STORE_NO_INT);
	assert_int_equal(res.tokens_out, CUCO_STORE_NO_INT);
	assert_int_equal(res.usage_estimated, 1);
	assert_true(res.charged_tokens > (int64_t)strlen(res.reply) / 4);
	assert_int_equal(cuco_llm_client_budget(c)->tokens_used, res.charged_tokens);
	assert_int_equal(cuco_llm_client_budget(c)->calls, 1);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

static void token_budget(struct cuco_llm_config *cfg)
{
	cfg->budget_tokens = 300; /* one call uses 200; the next may take ~120 more */
}

static void test_budget_tokens(void **state)
{
	static const char *const names[] = {"ok_diff", "ok_diff", "ok_diff", NULL};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	c = client_start(&s, names, &cfg, token_budget);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_int_equal(cuco_llm_client_budget(c)->tokens_used, 200);
	assert_int_equal(cuco_llm_client_budget(c)->exhausted, 0);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_UNSUPPORTED);
	assert_int_equal(res.attempts, 0);
	assert_int_equal(res.code, CUCO_ERR_UNSUPPORTED);
	assert_contains(res.error, "budget exhausted: 200 of 300 tokens used");
	assert_contains(err.msg, "raise the token budget");
	assert_int_equal(cuco_llm_client_budget(c)->exhausted, 1);
	assert_int_equal(cuco_llm_client_budget(c)->calls, 1);
	/* nothing sent for the refused call */
	assert_int_equal(llm_server_requests(&s.srv, &log), 1);
	cuco_llm_result_release(&res);
	client_stop(&s, c);
	cuco_strbuf_release(&log);
}

static void test_budget_cost(void **state)
{
	static const char *const names[] = {"ok_diff", "ok_diff", NULL};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	server_start(&s, names);
	config(&cfg, &s);
	cfg.budget_cost = 0.00045;
	/* no price for the model: refused up front */
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	assert_null(c);
	assert_contains(err.msg, "model 'test-model' has no price");
	cfg.prices[0].model = "other";
	cfg.prices[1].model = MODEL;
	cfg.prices[1].in_per_mtok = 1.0;
	cfg.prices[1].out_per_mtok = 2.0;
	cfg.nprices = 2;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_true(fabs(res.cost - 0.00028) < 1e-12); /* 120 * 1 + 80 * 2 per 1M */
	assert_true(fabs(cuco_llm_client_budget(c)->cost_used - 0.00028) < 1e-12);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_UNSUPPORTED);
	assert_contains(res.error, "budget exhausted: cost 0.00028 of 0.00045 used");
	assert_true(fabs(cuco_llm_price_cost(&cfg, MODEL, 1000000, 0) - 1.0) < 1e-12);
	assert_true(isnan(cuco_llm_price_cost(&cfg, "unknown", 1, 1)));
	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* Store every column of res and read it back; none may hold the key. */
static void assert_stored_without_key(const struct server *s, const struct cuco_llm_result *res)
{
	struct cuco_store *st = NULL;
	struct cuco_llm_call_rec rec;
	struct cuco_err err;
	char path[160];
	int64_t id = 0;

	snprintf(path, sizeof(path), "%s/cuco.db", s->dir);
	assert_int_equal(cuco_store_open(path, &st, &err), CUCO_OK);
	assert_int_equal(cuco_llm_result_store(st, res, 0, 0, &id, &err), CUCO_OK);
	assert_true(id > 0);
	cuco_llm_call_rec_init(&rec);
	assert_int_equal(cuco_store_llm_call_get(st, id, &rec, &err), CUCO_OK);
	assert_string_equal(rec.model, MODEL);
	assert_no_key(rec.model);
	assert_no_key(rec.endpoint);
	assert_no_key(rec.prompt);
	assert_no_key(rec.reply);
	assert_no_key(rec.error);
	if (res->error)
		assert_string_equal(rec.error, res->error);
	if (res->reply)
		assert_string_equal(rec.reply, res->reply);
	assert_string_equal(rec.prompt, res->prompt_json);
	assert_int_equal(rec.tokens_in, res->tokens_in);
	cuco_llm_call_rec_release(&rec);
	cuco_store_close(st);
}

static void test_key_never_recorded(void **state)
{
	static const char *const names[] = {"echo_key_401", "echo_key_reply", NULL};
	static const struct cuco_llm_message leaky[] = {
	    {"user", "my key is " KEY ", please keep it safe"},
	};
	struct server s;
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;

	(void)state;
	c = client_start(&s, names, &cfg, NULL);
	cuco_llm_result_init(&res);

	/* a server that echoes the Authorization header in its error page */
	assert_int_equal(cuco_llm_chat(c, leaky, 1, NULL, &res, &err), CUCO_ERR_RUN);
	assert_int_equal(res.attempts, 1); /* 401 is not retried */
	assert_contains(res.error, "HTTP 401");
	assert_contains(res.error, "invalid key: Bearer " CUCO_LLM_REDACTED);
	assert_contains(res.error, "check the API key in $" KEY_ENV);
	assert_contains(res.prompt_json, "my key is " CUCO_LLM_REDACTED ", please");
	assert_no_key(res.error);
	assert_no_key(res.prompt_json);
	assert_no_key(err.msg);
	assert_stored_without_key(&s, &res);

	/* and one that echoes it in the reply */
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_OK);
	assert_contains(res.reply, "you sent me Bearer " CUCO_LLM_REDACTED);
	assert_no_key(res.reply);
	assert_stored_without_key(&s, &res);

	cuco_llm_result_release(&res);
	client_stop(&s, c);
}

/* A variable never set: cuco reads the key once, so unsetting it later would not do. */
static void no_key(struct cuco_llm_config *cfg)
{
	cfg->api_key_env = "CUCO_TEST_LLM_NO_KEY";
}

static void test_no_key_no_header(void **state)
{
	static const char *const names[] = {"ok_diff", NULL};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	struct cuco_err err;
	int nreq;

	(void)state;
	unsetenv("CUCO_TEST_LLM_NO_KEY");
	cuco_llm_result_init(&res);
	assert_int_equal(call(names, NULL, no_key, &res, &err, &log, &nreq), CUCO_OK);
	assert_contains(log.buf, "\"authorization\": \"\"");
	cuco_llm_result_release(&res);
	cuco_strbuf_release(&log);
}

static void test_connection_refused(void **state)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c;
	struct cuco_llm_result res;
	struct cuco_err err;
	char base[64];
	int fd;

	(void)state;
	/* a loopback port that nobody listens on: bind, learn it, close */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	cuco_llm_config_init(&cfg);
	cfg.base_url = base;
	cfg.model = MODEL;
	cfg.max_retries = 1;
	cfg.retry_base_ms = 2;
	cfg.connect_timeout_ms = 1000;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	cuco_llm_result_init(&res);
	assert_int_equal(cuco_llm_chat(c, msgs, 2, NULL, &res, &err), CUCO_ERR_SYSTEM);
	assert_int_equal(res.attempts, 2);
	assert_contains(res.error, "cannot reach http://127.0.0.1:");
	assert_contains(res.error, "is the model server running?");
	assert_int_equal(cuco_llm_chat(c, NULL, 0, NULL, &res, &err), CUCO_ERR_INVALID);
	cuco_llm_result_release(&res);
	cuco_llm_client_free(c);
}

static void test_config_errors(void **state)
{
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = (struct cuco_llm_client *)&cfg;
	struct cuco_err err;

	(void)state;
	cuco_llm_config_init(&cfg);
	assert_string_equal(cfg.api_key_env, "OPENAI_API_KEY");
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	assert_null(c);
	assert_contains(err.msg, "no endpoint");
	cfg.base_url = "ftp://127.0.0.1:1";
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	assert_contains(err.msg, "must start with http:// or https://");
	cfg.base_url = "http://127.0.0.1:1";
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	assert_contains(err.msg, "no model");
	cfg.model = MODEL;
	cfg.temperature = 3;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_ERR_USAGE);
	cfg.temperature = 0;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	assert_string_equal(cuco_llm_client_endpoint(c), "http://127.0.0.1:1/v1/chat/completions");
	cuco_llm_client_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_diff_end_to_end),
	    cmocka_unit_test(test_replayed_replies),
	    cmocka_unit_test(test_base_url_with_v1),
	    cmocka_unit_test(test_invalid_utf8),
	    cmocka_unit_test(test_retry_429),
	    cmocka_unit_test(test_retry_after_honoured),
	    cmocka_unit_test(test_retry_5xx),
	    cmocka_unit_test(test_retries_exhausted),
	    cmocka_unit_test(test_retries_keep_errors_redacted),
	    cmocka_unit_test(test_malformed_body),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_slow_reply_times_out),
	    cmocka_unit_test(test_missing_usage),
	    cmocka_unit_test(test_budget_tokens),
	    cmocka_unit_test(test_budget_cost),
	    cmocka_unit_test(test_key_never_recorded),
	    cmocka_unit_test(test_no_key_no_header),
	    cmocka_unit_test(test_connection_refused),
	    cmocka_unit_test(test_config_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
