/* client.c - chat calls over libcurl (OpenAI-compatible, Anthropic): retries, budget, call records.
 */
#include "llm/client.h"
#include "llm/provider.h"
#include "llm/wire.h"
#include "util/secret.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "util/proc.h"
#include "util/strbuf.h"

#define ESTIMATE_MARGIN 1.05 /* a learnt prompt estimate is raised by this much */
#define ESTIMATE_SLACK 8     /* and by these tokens (the template's own) */
#define ATTEMPT_ERROR 300    /* bytes of an earlier attempt's error kept in the call's error */
#define ATTEMPTS_ERROR 1200  /* bytes of all the earlier attempts' errors */

/* What the client learnt about one model on the endpoint. */
struct model_state {
	char *name;
	double bytes_per_token; /* 0: nothing learnt yet */
	int fold_system;        /* 1: its template refuses the system role */
};

struct cuco_llm_client {
	struct cuco_llm_config cfg; /* strings below are owned copies */
	char *endpoint;
	CURL *curl;
	uint64_t rng;
	struct cuco_llm_budget budget;
	int64_t call_index; /* of the next call: its sampling seed */
	struct model_state models[CUCO_LLM_MAX_LEARNT];
	int nmodels;
};

void cuco_llm_config_init(struct cuco_llm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->temperature = 0.7;
	cfg->max_tokens = 4096;
	cfg->api_key_env = CUCO_LLM_DEFAULT_KEY_ENV;
	cfg->connect_timeout_ms = 10000;
	cfg->timeout_ms = 300000;
	cfg->max_retries = 4;
	cfg->retry_base_ms = 1000;
	cfg->retry_max_ms = 60000;
	cfg->sampling_seed = 1;
}

void cuco_llm_config_api(struct cuco_llm_config *cfg, int api)
{
	cfg->api = api;
	cfg->api_key_env = cuco_llm_api_key_env(api);
}

void cuco_llm_result_init(struct cuco_llm_result *res)
{
	memset(res, 0, sizeof(*res));
	res->tokens_in = CUCO_STORE_NO_INT;
	res->tokens_out = CUCO_STORE_NO_INT;
	res->seed = CUCO_STORE_NO_INT;
	res->cost = NAN;
	res->latency_ms = NAN;
}

void cuco_llm_result_release(struct cuco_llm_result *res)
{
	if (!res)
		return;
	free(res->model);
	free(res->endpoint);
	free(res->prompt_json);
	free(res->reply);
	free(res->finish_reason);
	free(res->error);
	cuco_llm_result_init(res);
}

static const struct cuco_llm_price *find_price(const struct cuco_llm_config *cfg, const char *model)
{
	int i;

	for (i = 0; i < cfg->nprices; i++)
		if (cfg->prices[i].model && model && strcmp(cfg->prices[i].model, model) == 0)
			return &cfg->prices[i];
	return NULL;
}

double cuco_llm_price_cost(const struct cuco_llm_config *cfg, const char *model, int64_t tokens_in,
                           int64_t tokens_out)
{
	const struct cuco_llm_price *p = find_price(cfg, model);

	if (!p || tokens_in < 0 || tokens_out < 0)
		return NAN;
	return ((double)tokens_in * p->in_per_mtok + (double)tokens_out * p->out_per_mtok) / 1e6;
}

/* A copy of s with every occurrence of key replaced by CUCO_LLM_REDACTED. */
static char *redact(const char *s, const char *key)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	size_t klen;
	const char *p, *hit;

	if (!s)
		return NULL;
	if (!key || !*key)
		return cuco_xstrdup(s);
	klen = strlen(key);
	p = s;
	for (;;) {
		hit = strstr(p, key);
		if (!hit)
			break;
		cuco_strbuf_add(&sb, p, (size_t)(hit - p));
		cuco_strbuf_adds(&sb, CUCO_LLM_REDACTED);
		p = hit + klen;
	}
	cuco_strbuf_adds(&sb, p);
	return cuco_strbuf_detach(&sb, NULL);
}

/*
 * The key from the environment, or NULL when unset or empty. Registered as a
 * secret (util/secret.h): redacted in whatever is stored, printed or sent.
 */
static const char *api_key(const struct cuco_llm_client *c)
{
	const char *k;

	if (!*c->cfg.api_key_env)
		return NULL;
	k = cuco_secret_env(c->cfg.api_key_env);
	return k && *k ? k : NULL;
}

static int has_prefix_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

int cuco_llm_client_new(const struct cuco_llm_config *cfg, struct cuco_llm_client **out,
                        struct cuco_err *err)
{
	struct cuco_llm_client *c = NULL;
	struct cuco_strbuf url = CUCO_STRBUF_INIT;
	int ret = CUCO_OK, i;

	*out = NULL;
	if (!cfg->base_url || !*cfg->base_url) {
		ret =
		    cuco_err_set(err, CUCO_ERR_USAGE,
		                 "llm: no endpoint: set the base URL (e.g. http://127.0.0.1:8000)");
		goto out;
	}
	if (!has_prefix_ci(cfg->base_url, "http://") && !has_prefix_ci(cfg->base_url, "https://")) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE,
		                   "llm: base URL '%s' must start with http:// or https://",
		                   cfg->base_url);
		goto out;
	}
	if (!cfg->model || !*cfg->model) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE, "llm: no model: set the model name");
		goto out;
	}
	if (!cuco_llm_api_name(cfg->api)) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE,
		                   "llm: api %d is neither openai nor anthropic", cfg->api);
		goto out;
	}
	if (cfg->max_tokens <= 0 || cfg->temperature < 0 || cfg->temperature > 2 ||
	    cfg->connect_timeout_ms <= 0 || cfg->timeout_ms <= 0 || cfg->max_retries < 0 ||
	    cfg->retry_base_ms < 0 || cfg->retry_max_ms < 0 || cfg->budget_tokens < 0 ||
	    cfg->budget_cost < 0 || cfg->nprices < 0 || cfg->nprices > CUCO_LLM_MAX_PRICES) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE,
		                   "llm: bad configuration: max_tokens and timeouts must be > 0, "
		                   "temperature in [0, 2], retries, delays and budgets >= 0");
		goto out;
	}
	if (cfg->budget_cost > 0 && !find_price(cfg, cfg->model)) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE,
		                   "llm: a cost budget is set but model '%s' has no price; add its "
		                   "price per 1M tokens or use a token budget",
		                   cfg->model);
		goto out;
	}
	c = cuco_xcalloc(1, sizeof(*c));
	c->cfg = *cfg;
	c->cfg.base_url = cuco_xstrdup(cfg->base_url);
	c->cfg.model = cuco_xstrdup(cfg->model);
	c->cfg.api_key_env =
	    cuco_xstrdup(cfg->api_key_env ? cfg->api_key_env : cuco_llm_api_key_env(cfg->api));
	for (i = 0; i < cfg->nprices; i++)
		c->cfg.prices[i].model = cuco_xstrdup(cfg->prices[i].model);
	c->rng = cfg->sampling_seed;
	(void)api_key(c); /* read now: out of the environment before any child starts */

	cuco_strbuf_adds(&url, cfg->base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		cuco_strbuf_setlen(&url, url.len - 1);
	if (url.len < 3 || strcmp(url.buf + url.len - 3, "/v1") != 0)
		cuco_strbuf_adds(&url, "/v1");
	cuco_strbuf_adds(&url, cuco_llm_provider(cfg->api)->path);
	c->endpoint = cuco_strbuf_detach(&url, NULL);

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		ret = cuco_err_set(err, CUCO_ERR_SYSTEM, "llm: libcurl failed to initialise");
		goto out;
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		curl_global_cleanup();
		ret = cuco_err_set(err, CUCO_ERR_SYSTEM, "llm: libcurl failed to create a handle");
		goto out;
	}
	*out = c;
	c = NULL;
out:
	if (c) {
		c->curl = NULL;
		cuco_llm_client_free(c);
	}
	cuco_strbuf_release(&url);
	return ret;
}

void cuco_llm_client_free(struct cuco_llm_client *c)
{
	int i;

	if (!c)
		return;
	if (c->curl) {
		curl_easy_cleanup(c->curl);
		curl_global_cleanup();
	}
	free((char *)c->cfg.base_url);
	free((char *)c->cfg.model);
	free((char *)c->cfg.api_key_env);
	for (i = 0; i < c->nmodels; i++)
		free(c->models[i].name);
	for (i = 0; i < c->cfg.nprices; i++)
		free((char *)c->cfg.prices[i].model);
	free(c->endpoint);
	free(c);
}

const struct cuco_llm_budget *cuco_llm_client_budget(const struct cuco_llm_client *c)
{
	return &c->budget;
}

/* What the client knows of model; NULL when it has no room for another (nothing learnt). */
static struct model_state *model_state(struct cuco_llm_client *c, const char *model)
{
	for (int i = 0; i < c->nmodels; i++)
		if (!strcmp(c->models[i].name, model))
			return &c->models[i];
	if (c->nmodels == CUCO_LLM_MAX_LEARNT)
		return NULL;
	c->models[c->nmodels].name = cuco_xstrdup(model);
	c->models[c->nmodels].bytes_per_token = 0;
	c->models[c->nmodels].fold_system = 0;
	return &c->models[c->nmodels++];
}

static const struct model_state *model_known(const struct cuco_llm_client *c, const char *model)
{
	for (int i = 0; i < c->nmodels; i++)
		if (!strcmp(c->models[i].name, model))
			return &c->models[i];
	return NULL;
}

double cuco_llm_client_bytes_per_token(const struct cuco_llm_client *c, const char *model)
{
	const struct model_state *m = model_known(c, model);

	return m && m->bytes_per_token > 0 ? m->bytes_per_token : CUCO_LLM_BYTES_PER_TOKEN;
}

int cuco_llm_client_folds_system(const struct cuco_llm_client *c, const char *model)
{
	const struct model_state *m = model_known(c, model);

	return m ? m->fold_system : 0;
}

/* Learn from one reply: bytes of prompt per token reported; the smallest seen is kept. */
static void learn(struct cuco_llm_client *c, const char *model, size_t bytes, int64_t tokens)
{
	struct model_state *m;
	double r;

	if (tokens <= 0 || !bytes || !(m = model_state(c, model)))
		return;
	r = (double)bytes / (double)tokens;
	if (r < 0.5)
		r = 0.5;
	if (m->bytes_per_token <= 0 || r < m->bytes_per_token)
		m->bytes_per_token = r;
}

void cuco_llm_client_learn(struct cuco_llm_client *c, const char *model, const char *prompt_json,
                           int64_t tokens_in)
{
	json_t *messages;

	if (!model || !prompt_json || tokens_in <= 0)
		return;
	messages = json_loads(prompt_json, JSON_ALLOW_NUL, NULL);
	if (json_is_array(messages))
		learn(c, model, cuco_llm_wire_bytes(messages), tokens_in);
	json_decref(messages);
}

void cuco_llm_client_set_calls(struct cuco_llm_client *c, int64_t n)
{
	c->call_index = n > 0 ? n : 0;
}

void cuco_llm_client_charge(struct cuco_llm_client *c, int64_t tokens, double cost)
{
	if (tokens > 0)
		c->budget.tokens_used += tokens;
	if (!isnan(cost))
		c->budget.cost_used += cost;
}

void cuco_llm_client_exhaust(struct cuco_llm_client *c)
{
	c->budget.exhausted = 1;
}

char *cuco_llm_client_redact(const struct cuco_llm_client *c, const char *text)
{
	return redact(text, api_key(c));
}

const char *cuco_llm_client_endpoint(const struct cuco_llm_client *c)
{
	return c->endpoint;
}

/* What one attempt brought back. */
struct attempt {
	struct cuco_strbuf body;
	long retry_after_s; /* -1: no usable Retry-After header */
	int too_big;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct attempt *a = arg;
	size_t len = size * n;

	if (a->body.len + len > CUCO_LLM_MAX_REPLY_BYTES) {
		a->too_big = 1;
		return 0; /* makes libcurl fail the transfer */
	}
	cuco_strbuf_add(&a->body, data, len);
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct attempt *a = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	char buf[64], *end;
	size_t i = sizeof(name) - 1, j = 0;
	long v;

	if (len <= i || strncasecmp(data, name, i) != 0)
		return len;
	while (i < len && (data[i] == ' ' || data[i] == '\t'))
		i++;
	while (i < len && j + 1 < sizeof(buf) && !isspace((unsigned char)data[i]))
		buf[j++] = data[i++];
	buf[j] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	/* only the delta-seconds form; an HTTP date falls back to our own backoff */
	if (j && *end == '\0' && errno == 0 && v >= 0)
		a->retry_after_s = v;
	return len;
}

static void sleep_ms(long ms)
{
	struct timespec ts, rem;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
		ts = rem;
}

/* Backoff before retry number `retry` (0-based): base * 2^retry, capped, with equal jitter. */
static long backoff_ms(struct cuco_llm_client *c, int retry)
{
	double d = (double)c->cfg.retry_base_ms;
	long ms, half;

	while (retry-- > 0 && d < (double)c->cfg.retry_max_ms)
		d *= 2;
	if (d > (double)c->cfg.retry_max_ms)
		d = (double)c->cfg.retry_max_ms;
	ms = (long)d;
	half = ms / 2;
	return half +
	       (half > 0 ? (long)(cuco_llm_wire_splitmix(&c->rng) % (uint64_t)(half + 1)) : 0);
}

/* Worst-case prompt tokens of bytes for model: the learnt ratio with a margin, else the default. */
static int64_t estimate_prompt(const struct cuco_llm_client *c, const char *model, size_t bytes)
{
	const struct model_state *m = model_known(c, model);

	if (m && m->bytes_per_token > 0)
		return (int64_t)ceil((double)bytes / m->bytes_per_token * ESTIMATE_MARGIN) +
		       ESTIMATE_SLACK;
	return (int64_t)ceil((double)bytes / CUCO_LLM_BYTES_PER_TOKEN);
}

/* Result of one attempt, classified. */
enum outcome {
	OUT_OK,    /* 2xx with a body */
	OUT_RETRY, /* 429, 5xx, network failure or timeout: try again if allowed */
	OUT_FAIL,  /* anything else: give up now */
};

/* One POST. Fills a (body, Retry-After) and msg/code on failure. */
static enum outcome attempt_once(struct cuco_llm_client *c, const char *body, struct attempt *a,
                                 long *status, int *code, struct cuco_strbuf *msg)
{
	struct curl_slist *hdrs;
	struct cuco_strbuf auth = CUCO_STRBUF_INIT;
	char errbuf[CURL_ERROR_SIZE];
	enum outcome o = OUT_FAIL;
	CURLcode cc;

	errbuf[0] = '\0';
	*status = 0;
	curl_easy_reset(c->curl);
	hdrs = cuco_llm_wire_headers(c->cfg.api, api_key(c), &auth);
	curl_easy_setopt(c->curl, CURLOPT_URL, c->endpoint);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->cfg.timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "cuco/" CUCO_VERSION);

	cc = curl_easy_perform(c->curl);
	/* the header text held the key: wipe it before the buffer goes back to the heap */
	if (auth.alloc)
		memset(auth.buf, 0, auth.len);
	if (cc != CURLE_OK) {
		const char *why = errbuf[0] ? errbuf : curl_easy_strerror(cc);

		if (a->too_big) {
			cuco_strbuf_addf(msg, "reply from %s is larger than %u MiB", c->endpoint,
			                 CUCO_LLM_MAX_REPLY_BYTES >> 20);
			*code = CUCO_ERR_PARSE;
			o = OUT_FAIL;
		} else if (cc == CURLE_OPERATION_TIMEDOUT) {
			cuco_strbuf_addf(
			    msg, "%s timed out: %s (timeouts: connect %ld ms, total %ld ms)",
			    c->endpoint, why, c->cfg.connect_timeout_ms, c->cfg.timeout_ms);
			*code = CUCO_ERR_TIMEOUT;
			o = OUT_RETRY;
		} else if (cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT ||
		           cc == CURLE_OUT_OF_MEMORY || cc == CURLE_BAD_FUNCTION_ARGUMENT) {
			cuco_strbuf_addf(msg, "cannot post to %s: %s", c->endpoint, why);
			*code = CUCO_ERR_USAGE;
			o = OUT_FAIL;
		} else {
			cuco_strbuf_addf(msg, "cannot reach %s: %s; is the model server running?",
			                 c->endpoint, why);
			*code = CUCO_ERR_SYSTEM;
			o = OUT_RETRY;
		}
		goto out;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300) {
		o = OUT_OK;
		goto out;
	}
	cuco_strbuf_addf(msg, "HTTP %ld from %s: ", *status, c->endpoint);
	cuco_llm_wire_excerpt(msg, a->body.buf, a->body.len);
	*code = CUCO_ERR_RUN;
	if (*status == 429 || *status >= 500) { /* anthropic's 529 "overloaded" too */
		o = OUT_RETRY;
	} else {
		if (*status == 401 || *status == 403)
			cuco_strbuf_addf(msg, " (check the API key in $%s)",
			                 c->cfg.api_key_env ? c->cfg.api_key_env : "");
		else if (*status == 404)
			cuco_strbuf_adds(msg, " (check the base URL and the model name)");
		o = OUT_FAIL;
	}
out:
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	cuco_strbuf_release(&auth);
	return o;
}

/* Record err/res->error from msg, with the key redacted, and return code. */
static int fail(struct cuco_llm_result *res, struct cuco_err *err, int code,
                const struct cuco_strbuf *msg, const char *key)
{
	char *m = redact(msg->buf, key);

	free(res->error);
	res->error = m;
	res->code = code;
	return cuco_err_set(err, code, "llm: %s", m);
}

/*
 * Keep a failed attempt's message in tries ("attempt N: why"), the key and
 * every registered secret redacted before it is clipped to ATTEMPT_ERROR
 * bytes (a clip never leaves part of a key), at most ATTEMPTS_ERROR in all.
 */
static void keep_attempt(struct cuco_strbuf *tries, int n, const struct cuco_strbuf *msg,
                         const char *key)
{
	char *r = redact(msg->buf, key), *s = r ? cuco_secret_redact(r) : NULL;
	size_t len;

	if (!s || tries->len >= ATTEMPTS_ERROR)
		goto out;
	len = strlen(s);
	cuco_strbuf_addf(tries, "%sattempt %d: ", tries->len ? "; " : "", n);
	cuco_strbuf_add(tries, s, len > ATTEMPT_ERROR ? ATTEMPT_ERROR : len);
	if (len > ATTEMPT_ERROR)
		cuco_strbuf_adds(tries, "...");
	if (tries->len >= ATTEMPTS_ERROR)
		cuco_strbuf_adds(tries, "; (later attempts left out)");
out:
	free(r);
	free(s);
}

int cuco_llm_chat(struct cuco_llm_client *c, const struct cuco_llm_message *msgs, int nmsgs,
                  const struct cuco_llm_call_opts *opts, struct cuco_llm_result *res,
                  struct cuco_err *err)
{
	struct cuco_strbuf msg = CUCO_STRBUF_INIT, prev = CUCO_STRBUF_INIT,
	                   tries = CUCO_STRBUF_INIT;
	struct attempt a;
	struct model_state *ms;
	json_t *messages = NULL;
	char *body = NULL, *prompt = NULL;
	const char *key = api_key(c), *model = c->cfg.model;
	double temperature = c->cfg.temperature, t0 = cuco_now(), worst_cost;
	int max_tokens = c->cfg.max_tokens, ret = CUCO_OK, code = CUCO_OK, retry = 0, fold;
	int64_t est_in, worst;
	size_t bytes;
	long status = 0, prev_status = 0;
	enum outcome o = OUT_FAIL;

	cuco_strbuf_init(&a.body, 0);
	cuco_llm_result_release(res);
	if (opts && opts->model && *opts->model)
		model = opts->model;
	res->model = cuco_xstrdup(model);
	res->endpoint = cuco_xstrdup(c->endpoint);
	if (opts && opts->temperature >= 0)
		temperature = opts->temperature;
	if (opts && opts->max_tokens > 0)
		max_tokens = opts->max_tokens;
	if (nmsgs <= 0 || !msgs) {
		cuco_strbuf_adds(&msg, "no messages to send");
		ret = fail(res, err, CUCO_ERR_INVALID, &msg, key);
		goto out;
	}
	fold = cuco_llm_provider(c->cfg.api)->folds_system &&
	       cuco_llm_wire_has_system(msgs, nmsgs) && cuco_llm_client_folds_system(c, model);
	messages = cuco_llm_wire_messages(msgs, nmsgs, fold);
	bytes = cuco_llm_wire_bytes(messages);
	prompt = json_dumps(messages, JSON_COMPACT);
	res->prompt_json = redact(prompt, key);
	res->system_folded = fold;

	/* the budget is hard: refuse a call whose worst case would cross it */
	est_in = estimate_prompt(c, model, bytes);
	worst = est_in + max_tokens;
	worst_cost = cuco_llm_price_cost(&c->cfg, model, est_in, max_tokens);
	if (c->cfg.budget_tokens > 0 && c->budget.tokens_used + worst > c->cfg.budget_tokens) {
		cuco_strbuf_addf(
		    &msg,
		    "budget exhausted: %lld of %lld tokens used, and this call may take "
		    "up to %lld more (about %lld prompt at %.2f bytes a token + %d max_tokens); "
		    "raise the token budget to continue",
		    (long long)c->budget.tokens_used, (long long)c->cfg.budget_tokens,
		    (long long)worst, (long long)est_in, cuco_llm_client_bytes_per_token(c, model),
		    max_tokens);
		c->budget.exhausted = 1;
		ret = fail(res, err, CUCO_ERR_UNSUPPORTED, &msg, key);
		goto out;
	}
	if (c->cfg.budget_cost > 0 && c->budget.cost_used + worst_cost > c->cfg.budget_cost) {
		cuco_strbuf_addf(
		    &msg,
		    "budget exhausted: cost %.6g of %.6g used, and this call may cost up "
		    "to %.6g more; raise the cost budget to continue",
		    c->budget.cost_used, c->cfg.budget_cost, worst_cost);
		c->budget.exhausted = 1;
		ret = fail(res, err, CUCO_ERR_UNSUPPORTED, &msg, key);
		goto out;
	}

	res->seed = cuco_llm_call_seed(c->cfg.sampling_seed, c->call_index++);
	body =
	    cuco_llm_wire_request(c->cfg.api, model, messages, temperature, max_tokens, res->seed);
	if (body && cuco_secret_in(body)) { /* the key goes in the header only */
		char *r = cuco_secret_redact(body);
		free(body);
		body = r;
	}
	if (!body) {
		cuco_strbuf_adds(&msg, "could not build the request body");
		ret = fail(res, err, CUCO_ERR_NOMEM, &msg, key);
		goto out;
	}

	c->budget.calls++;
	for (;;) {
		long delay;

		cuco_strbuf_reset(&a.body);
		cuco_strbuf_reset(&msg);
		a.retry_after_s = -1;
		a.too_big = 0;
		res->attempts++;
		o = attempt_once(c, body, &a, &status, &code, &msg);
		res->http_status = status;
		if (o != OUT_OK && !fold && cuco_llm_provider(c->cfg.api)->folds_system &&
		    cuco_llm_wire_has_system(msgs, nmsgs) &&
		    cuco_llm_wire_refuses_system(status, &a.body)) {
			/* the template refuses the system role: fold it, for this model from now on
			 */
			fold = 1;
			if ((ms = model_state(c, model)))
				ms->fold_system = 1;
			json_decref(messages);
			free(prompt);
			free(body);
			messages = cuco_llm_wire_messages(msgs, nmsgs, 1);
			prompt = json_dumps(messages, JSON_COMPACT);
			free(res->prompt_json);
			res->prompt_json = redact(prompt, key);
			res->system_folded = 1;
			bytes = cuco_llm_wire_bytes(messages);
			body = cuco_llm_wire_request(c->cfg.api, model, messages, temperature,
			                             max_tokens, res->seed);
			if (!body || !prompt) {
				cuco_strbuf_reset(&msg);
				cuco_strbuf_adds(&msg, "could not build the request body");
				ret = fail(res, err, CUCO_ERR_NOMEM, &msg, key);
				goto out;
			}
			continue; /* not a retry: a different request */
		}
		if (o == OUT_RETRY &&
		    cuco_llm_wire_same_error(status, &a.body, prev_status, &prev)) {
			cuco_strbuf_adds(&msg,
			                 " (the same error as the attempt before: not retried "
			                 "further)");
			o = OUT_FAIL;
		}
		if (o != OUT_RETRY || retry >= c->cfg.max_retries)
			break;
		keep_attempt(&tries, res->attempts, &msg, key);
		prev_status = status;
		cuco_strbuf_reset(&prev);
		cuco_strbuf_add(&prev, a.body.buf ? a.body.buf : "", a.body.len);
		if (a.retry_after_s >= 0)
			delay = a.retry_after_s > c->cfg.retry_max_ms / 1000
			            ? c->cfg.retry_max_ms
			            : a.retry_after_s * 1000;
		else
			delay = backoff_ms(c, retry);
		retry++;
		sleep_ms(delay);
	}
	if (o != OUT_OK) {
		if (o == OUT_RETRY && res->attempts > 1)
			cuco_strbuf_addf(&msg, " (gave up after %d attempts)", res->attempts);
		if (tries.len) /* every attempt's error, not only the last one's */
			cuco_strbuf_addf(&msg, "; before it: %s", tries.buf);
		ret = fail(res, err, code, &msg, key);
		goto out;
	}

	ret = cuco_llm_wire_parse(c->cfg.api, a.body.buf, a.body.len, max_tokens, res, &msg,
	                          c->endpoint);
	if (res->reply) {
		char *r = redact(res->reply, key);

		free(res->reply);
		res->reply = r;
	}
	/* a 2xx reply consumed tokens even when it is unusable: charge it */
	if (res->tokens_in >= 0) {
		res->charged_tokens = res->tokens_in + res->tokens_out;
		res->cost = cuco_llm_price_cost(&c->cfg, model, res->tokens_in, res->tokens_out);
		learn(c, model, bytes, res->tokens_in);
	} else {
		int64_t in_est = (int64_t)ceil((double)bytes / CUCO_LLM_BYTES_PER_TOKEN);
		int64_t out_est =
		    (int64_t)ceil((double)(res->reply ? strlen(res->reply) : a.body.len) /
		                  CUCO_LLM_BYTES_PER_TOKEN);

		res->usage_estimated = 1;
		res->charged_tokens = in_est + out_est;
		res->cost = cuco_llm_price_cost(&c->cfg, model, in_est, out_est);
	}
	c->budget.tokens_used += res->charged_tokens;
	if (!isnan(res->cost))
		c->budget.cost_used += res->cost;
	if (ret != CUCO_OK) {
		ret = fail(res, err, ret, &msg, key);
		goto out;
	}
	res->code = CUCO_OK;
out:
	res->latency_ms = (cuco_now() - t0) * 1000.0;
	free(body);
	free(prompt);
	json_decref(messages);
	cuco_strbuf_release(&a.body);
	cuco_strbuf_release(&msg);
	cuco_strbuf_release(&prev);
	cuco_strbuf_release(&tries);
	return ret;
}
