/*
 * provider_openai.c - OpenAI-compatible chat completions (provider.h): vLLM,
 * SGLang, llama.cpp's server, Ollama, hosted APIs. One POST to
 * {base}/v1/chat/completions; the key as a bearer token; usage as
 * prompt_tokens and completion_tokens; finish_reason "length" when cut off.
 */
#include <string.h>

#include "llm/provider.h"

static json_t *request(const char *model, json_t *messages, double temperature, int max_tokens,
                       int64_t seed)
{
	return json_pack("{s:s, s:O, s:f, s:i, s:I, s:b}", "model", model, "messages", messages,
	                 "temperature", temperature, "max_tokens", max_tokens, "seed",
	                 (json_int_t)seed, "stream", 0);
}

static void auth(const char *key, struct cuco_strbuf *sb)
{
	cuco_strbuf_addf(sb, "Authorization: Bearer %s", key);
}

/* usage: prompt_tokens, completion_tokens. */
static void usage(json_t *root, struct cuco_llm_result *res)
{
	json_t *u = json_object_get(root, "usage");
	json_t *pt = json_object_get(u, "prompt_tokens");
	json_t *ct = json_object_get(u, "completion_tokens");

	if (json_is_integer(pt) && json_is_integer(ct) && json_integer_value(pt) >= 0 &&
	    json_integer_value(ct) >= 0) {
		res->tokens_in = json_integer_value(pt);
		res->tokens_out = json_integer_value(ct);
	}
}

static int reply(json_t *root, struct cuco_strbuf *text, struct cuco_llm_result *res, json_t **stop,
                 const char **missing)
{
	json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
	json_t *content = json_object_get(json_object_get(choice, "message"), "content");

	usage(root, res);
	*stop = json_object_get(choice, "finish_reason");
	if (!json_is_string(content)) {
		*missing = "choices[0].message.content";
		return -1;
	}
	cuco_strbuf_add(text, json_string_value(content), json_string_length(content));
	return 0;
}

static int cut_off(const char *stop, int *context_full)
{
	*context_full = 0;
	return stop && !strcmp(stop, "length");
}

const struct cuco_llm_provider cuco_llm_openai = {
    .name = "openai",
    .key_env = CUCO_LLM_DEFAULT_KEY_ENV,
    .path = "/chat/completions",
    .stop_field = "finish_reason",
    .header = NULL,
    .folds_system = 1,
    .request = request,
    .auth = auth,
    .reply = reply,
    .cut_off = cut_off,
};
