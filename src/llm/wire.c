/*
 * wire.c - the wire formats (see wire.h) as the providers' table says them
 * (provider.h): requests, headers, replies; the per-call seeds and the model list.
 */
#include "llm/wire.h"
#include "llm/provider.h"
#include "util/secret.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#define BODY_EXCERPT CUCO_LLM_BODY_EXCERPT
#define MESSAGE_OVERHEAD CUCO_LLM_MESSAGE_OVERHEAD
#define MAX_REPLY_BYTES CUCO_LLM_MAX_REPLY_BYTES

uint64_t cuco_llm_wire_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The providers, by enum cuco_llm_api value (provider.h). */
static const struct cuco_llm_provider *const providers[] = {
    [CUCO_LLM_API_OPENAI] = &cuco_llm_openai,
    [CUCO_LLM_API_ANTHROPIC] = &cuco_llm_anthropic,
};
#define NPROVIDERS ((int)(sizeof(providers) / sizeof(providers[0])))

const struct cuco_llm_provider *cuco_llm_provider(int api)
{
	return api >= 0 && api < NPROVIDERS ? providers[api] : NULL;
}

/* api's provider; out of range, OpenAI's (what every endpoint but Anthropic's speaks). */
static const struct cuco_llm_provider *of(int api)
{
	return cuco_llm_provider(api) ? cuco_llm_provider(api) : &cuco_llm_openai;
}

const char *cuco_llm_api_name(int api)
{
	return cuco_llm_provider(api) ? cuco_llm_provider(api)->name : NULL;
}

int cuco_llm_api_parse(const char *name)
{
	for (int i = 0; name && i < NPROVIDERS; i++)
		if (providers[i] && !strcmp(name, providers[i]->name))
			return i;
	return -1;
}

const char *cuco_llm_api_key_env(int api)
{
	/* out of range: the default, as before there was a choice */
	return cuco_llm_provider(api) ? cuco_llm_provider(api)->key_env : CUCO_LLM_DEFAULT_KEY_ENV;
}

static int has_prefix_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* Bytes the budget counts for a messages array: contents plus framing per message. */
size_t cuco_llm_wire_bytes(json_t *messages)
{
	size_t i, bytes = 0;
	json_t *m;

	json_array_foreach(messages, i, m)
	{
		bytes += json_string_length(json_object_get(m, "content")) + MESSAGE_OVERHEAD;
	}
	return bytes;
}

int64_t cuco_llm_call_seed(uint64_t cfg_seed, int64_t n)
{
	uint64_t s = cfg_seed ^ ((uint64_t)n * 0xd1b54a32d192ed03ull);

	/* 31 bits: every server takes it (llama.cpp's is 32-bit, some parse a signed int) */
	return (int64_t)(cuco_llm_wire_splitmix(&s) & 0x7fffffffull);
}

int64_t cuco_llm_estimate_call(const char *prompt_json, const char *reply)
{
	json_t *messages = json_loads(prompt_json ? prompt_json : "", JSON_ALLOW_NUL, NULL);
	size_t bytes = json_is_array(messages) ? cuco_llm_wire_bytes(messages)
	                                       : strlen(prompt_json ? prompt_json : "");
	double t = ceil((double)bytes / CUCO_LLM_BYTES_PER_TOKEN) +
	           ceil((double)strlen(reply ? reply : "") / CUCO_LLM_BYTES_PER_TOKEN);

	json_decref(messages);
	return (int64_t)t;
}

/* Body excerpt for an error message: first BODY_EXCERPT bytes, one line. */
void cuco_llm_wire_excerpt(struct cuco_strbuf *sb, const char *body, size_t len)
{
	size_t i, n = len < BODY_EXCERPT ? len : BODY_EXCERPT;

	for (i = 0; i < n; i++)
		cuco_strbuf_addch(sb,
		                  (body[i] == '\n' || body[i] == '\r' || !body[i]) ? ' ' : body[i]);
	if (n < len)
		cuco_strbuf_adds(sb, "...");
	if (!len)
		cuco_strbuf_adds(sb, "(empty body)");
}

/* Length of the well-formed UTF-8 sequence at s (1 to 4 bytes), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

char *cuco_llm_wire_utf8(const char *s)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = utf8_seq(p);

		if (n) {
			cuco_strbuf_add(&sb, (const char *)p, n);
			p += n;
			continue;
		}
		/* one U+FFFD for the lead byte and the continuation bytes that follow it */
		cuco_strbuf_adds(&sb, "\xef\xbf\xbd");
		p++;
		while (*p >= 0x80 && *p <= 0xbf)
			p++;
	}
	return cuco_strbuf_detach(&sb, NULL);
}

/* {"role": role, "content": content}, invalid UTF-8 in either replaced by U+FFFD. */
static json_t *message(const char *role, const char *content)
{
	char *r = cuco_llm_wire_utf8(role), *c = cuco_llm_wire_utf8(content);
	json_t *m = json_pack("{s:s, s:s}", "role", r, "content", c);

	free(r);
	free(c);
	return m;
}

/* The messages as JSON; with fold, system messages go in front of the first user message. */
json_t *cuco_llm_wire_messages(const struct cuco_llm_message *msgs, int nmsgs, int fold)
{
	struct cuco_strbuf sys = CUCO_STRBUF_INIT;
	json_t *arr = json_array();
	int i, folded = 0;

	for (i = 0; fold && i < nmsgs; i++)
		if (msgs[i].role && !strcmp(msgs[i].role, "system") && msgs[i].content) {
			cuco_strbuf_adds(&sys, msgs[i].content);
			cuco_strbuf_adds(&sys, "\n\n");
		}
	for (i = 0; i < nmsgs; i++) {
		const char *role = msgs[i].role ? msgs[i].role : "user";
		const char *content = msgs[i].content ? msgs[i].content : "";

		if (fold && !strcmp(role, "system"))
			continue;
		if (fold && !folded && sys.len && !strcmp(role, "user")) {
			struct cuco_strbuf u = CUCO_STRBUF_INIT;

			cuco_strbuf_adds(&u, sys.buf);
			cuco_strbuf_adds(&u, content);
			json_array_append_new(arr, message(role, u.buf));
			cuco_strbuf_release(&u);
			folded = 1;
			continue;
		}
		json_array_append_new(arr, message(role, content));
	}
	if (fold && !folded && sys.len) /* no user message: the system text becomes one */
		json_array_insert_new(arr, 0, message("user", sys.buf));
	cuco_strbuf_release(&sys);
	return arr;
}

int cuco_llm_wire_has_system(const struct cuco_llm_message *msgs, int nmsgs)
{
	for (int i = 0; i < nmsgs; i++)
		if (msgs[i].role && !strcmp(msgs[i].role, "system"))
			return 1;
	return 0;
}

/* Case-insensitive strstr over the first len bytes of s. */
static int contains_ci(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, needle, n) == 0)
			return 1;
	return 0;
}

/*
 * An HTTP error saying the chat template refuses the system role: the Gemma
 * family's templates raise "System role not supported"; older Mistral ones
 * "Conversation roles must alternate user/assistant/...".
 */
int cuco_llm_wire_refuses_system(long status, const struct cuco_strbuf *body)
{
	return status >= 400 && body->len &&
	       (contains_ci(body->buf, body->len, "system role") ||
	        contains_ci(body->buf, body->len, "roles must alternate"));
}

/*
 * Read the completion out of a 2xx body into res. CUCO_OK or CUCO_ERR_PARSE
 * with msg. U+0000 in the content (legal JSON; servers send it when the model
 * emits byte 0) is dropped and counted.
 */
int cuco_llm_wire_parse(int api, const char *body, size_t len, int max_tokens,
                        struct cuco_llm_result *res, struct cuco_strbuf *msg, const char *endpoint)
{
	struct cuco_strbuf text = CUCO_STRBUF_INIT;
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_ALLOW_NUL, &jerr), *fin = NULL;
	const struct cuco_llm_provider *pv = of(api);
	const char *fin_name = pv->stop_field, *missing = "";
	int ret = CUCO_OK, context_full;

	if (!root || !json_is_object(root)) {
		cuco_strbuf_addf(msg, "reply from %s is not a JSON object (%s): ", endpoint,
		                 root ? "wrong type" : jerr.text);
		cuco_llm_wire_excerpt(msg, body, len);
		ret = CUCO_ERR_PARSE;
		goto out;
	}
	if (pv->reply(root, &text, res, &fin, &missing)) {
		cuco_strbuf_addf(msg, "reply from %s has no %s: ", endpoint, missing);
		cuco_llm_wire_excerpt(msg, body, len);
		ret = CUCO_ERR_PARSE;
	}
	if (json_is_string(fin))
		res->finish_reason = cuco_xstrdup(json_string_value(fin));
	if (ret)
		goto out;
	{
		char *r = cuco_xcalloc(text.len + 1, 1);
		size_t j = 0;

		for (size_t i = 0; i < text.len; i++)
			if (text.buf[i])
				r[j++] = text.buf[i];
		r[j] = '\0';
		res->nul_dropped = (int)(text.len - j);
		res->reply = r;
	}
	if (pv->cut_off(res->finish_reason, &context_full)) {
		res->truncated = 1;
		if (context_full || (res->tokens_out >= 0 && res->tokens_out < max_tokens)) {
			res->context_full = 1;
			cuco_strbuf_addf(
			    msg,
			    "reply from %s stopped with %s \"%s\" after %lld "
			    "completion tokens, below max_tokens %d: context full (the prompt took "
			    "%lld tokens); a call needs prompt + max_tokens tokens of context: "
			    "start "
			    "the server with a larger one (llama.cpp: --ctx-size / --n_ctx; vLLM: "
			    "--max-model-len; Ollama: num_ctx)",
			    endpoint, fin_name, res->finish_reason, (long long)res->tokens_out,
			    max_tokens, (long long)res->tokens_in);
		} else {
			cuco_strbuf_addf(msg,
			                 "reply from %s was truncated at max_tokens %d (%s "
			                 "\"%s\"); raise --llm-max-tokens or ask for a diff "
			                 "instead of a full rewrite",
			                 endpoint, max_tokens, fin_name, res->finish_reason);
		}
		ret = CUCO_ERR_PARSE;
	}
out:
	json_decref(root);
	cuco_strbuf_release(&text);
	return ret;
}

/* The request body of one call (malloc'd), or NULL out of memory. */
char *cuco_llm_wire_request(int api, const char *model, json_t *messages, double temperature,
                            int max_tokens, int64_t seed)
{
	json_t *req = of(api)->request(model, messages, temperature, max_tokens, seed);
	char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;

	json_decref(req);
	return body;
}

struct curl_slist *cuco_llm_wire_headers(int api, const char *key, struct cuco_strbuf *auth)
{
	struct curl_slist *hdrs = NULL, *h;
	const char *fixed[] = {"Content-Type: application/json", "Accept: application/json",
	                       of(api)->header};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i] && (h = curl_slist_append(hdrs, fixed[i])))
			hdrs = h;
	if (key) {
		of(api)->auth(key, auth);
		if ((h = curl_slist_append(hdrs, auth->buf)))
			hdrs = h;
	}
	return hdrs;
}

/* A 5xx worth a retry only when it is not the previous attempt's error again. */
int cuco_llm_wire_same_error(long status, const struct cuco_strbuf *body, long prev_status,
                             const struct cuco_strbuf *prev)
{
	if (status < 500 || status == 502 || status == 503 || status == 504 || status == 529)
		return 0; /* gateways, a loading model and an overloaded API (529) answer the
		             same until they are ready */
	return status == prev_status && body->len == prev->len &&
	       (!body->len || memcmp(body->buf, prev->buf, body->len) == 0);
}

/* libcurl's write callback into a strbuf, with the reply size limit. */
static size_t on_list_body(char *data, size_t size, size_t n, void *arg)
{
	struct cuco_strbuf *sb = arg;
	size_t len = size * n;

	if (sb->len + len > MAX_REPLY_BYTES)
		return 0;
	cuco_strbuf_add(sb, data, len);
	return len;
}

int cuco_llm_list_models(const struct cuco_llm_config *cfg, long timeout_ms,
                         struct cuco_strbuf *ids, struct cuco_err *err)
{
	struct cuco_strbuf url = CUCO_STRBUF_INIT, body = CUCO_STRBUF_INIT, auth = CUCO_STRBUF_INIT;
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE];
	const char *key = NULL,
	           *key_env = cfg->api_key_env ? cfg->api_key_env : cuco_llm_api_key_env(cfg->api);
	json_t *root = NULL, *data, *x;
	CURL *curl = NULL;
	CURLcode cc;
	long status = 0;
	size_t i;
	int ret = CUCO_OK;

	cuco_strbuf_reset(ids);
	errbuf[0] = '\0';
	if (!cfg->base_url || (!has_prefix_ci(cfg->base_url, "http://") &&
	                       !has_prefix_ci(cfg->base_url, "https://"))) {
		ret = cuco_err_set(err, CUCO_ERR_USAGE, "llm: base URL must start with http(s)://");
		goto out;
	}
	cuco_strbuf_adds(&url, cfg->base_url);
	while (url.len && url.buf[url.len - 1] == '/')
		cuco_strbuf_setlen(&url, url.len - 1);
	if (url.len >= 3 && strcmp(url.buf + url.len - 3, "/v1") == 0)
		cuco_strbuf_adds(&url, "/models");
	else
		cuco_strbuf_adds(&url, "/v1/models");
	if (key_env && *key_env)
		key = cuco_secret_env(key_env);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(curl = curl_easy_init())) {
		ret = cuco_err_set(err, CUCO_ERR_SYSTEM, "llm: libcurl failed to start");
		goto out;
	}
	hdrs = cuco_llm_wire_headers(cfg->api, key, &auth);
	curl_easy_setopt(curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
	                 cfg->connect_timeout_ms < timeout_ms ? cfg->connect_timeout_ms
	                                                      : timeout_ms);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_list_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "cuco/" CUCO_VERSION);
	cc = curl_easy_perform(curl);
	if (auth.alloc)
		memset(auth.buf, 0, auth.len);
	if (cc != CURLE_OK) {
		ret = cuco_err_set(
		    err, cc == CURLE_OPERATION_TIMEDOUT ? CUCO_ERR_TIMEOUT : CUCO_ERR_SYSTEM,
		    "llm: cannot list models at %s: %s", url.buf,
		    errbuf[0] ? errbuf : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status >= 300) {
		ret = cuco_err_set(err, CUCO_ERR_RUN, "llm: HTTP %ld from %s", status, url.buf);
		goto out;
	}
	root = json_loadb(body.buf ? body.buf : "", body.len, JSON_ALLOW_NUL, NULL);
	data = json_object_get(root, "data");
	if (!json_is_array(data)) {
		ret = cuco_err_set(err, CUCO_ERR_PARSE, "llm: %s is not a model list", url.buf);
		goto out;
	}
	json_array_foreach(data, i, x)
	{
		json_t *id = json_object_get(x, "id");
		if (json_is_string(id)) {
			cuco_strbuf_adds(ids, json_string_value(id));
			cuco_strbuf_addch(ids, '\n');
		}
	}
out:
	json_decref(root);
	curl_slist_free_all(hdrs);
	if (curl) {
		curl_easy_cleanup(curl);
		curl_global_cleanup();
	}
	cuco_strbuf_release(&auth);
	cuco_strbuf_release(&url);
	cuco_strbuf_release(&body);
	return ret;
}
