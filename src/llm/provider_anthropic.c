/*
 * provider_anthropic.c - Anthropic's Messages API (provider.h): one POST to
 * {base}/v1/messages with anthropic-version; the key as x-api-key; the system
 * messages as one top-level "system" string; no seed (the API has none);
 * temperatures at most 1; the reply's "text" blocks concatenated; usage with
 * the prompt cache's tokens counted as prompt tokens; stop_reason
 * "max_tokens" (or "model_context_window_exceeded": the context is full) when
 * cut off.
 */
#include <string.h>

#include "llm/provider.h"

/* The system messages as one top-level string, the rest as messages. */
static json_t *request(const char *model, json_t *messages, double temperature, int max_tokens,
                       int64_t seed)
{
	struct cuco_strbuf sys = CUCO_STRBUF_INIT;
	json_t *msgs = json_array(), *m, *req;
	size_t i;

	(void)seed; /* recorded by the client, never sent */
	json_array_foreach(messages, i, m)
	{
		const char *role = json_string_value(json_object_get(m, "role"));
		json_t *content = json_object_get(m, "content");

		if (role && !strcmp(role, "system")) {
			if (sys.len)
				cuco_strbuf_adds(&sys, "\n\n");
			cuco_strbuf_add(&sys, json_string_value(content),
			                json_string_length(content));
		} else {
			json_array_append(msgs, m);
		}
	}
	if (!json_array_size(msgs) && sys.len) { /* only a system prompt: it is the question */
		json_array_append_new(
		    msgs, json_pack("{s:s, s:s%}", "role", "user", "content", sys.buf, sys.len));
		cuco_strbuf_reset(&sys);
	}
	/* the Messages API takes temperatures from 0 to 1 */
	req = json_pack("{s:s, s:i, s:o, s:f}", "model", model, "max_tokens", max_tokens,
	                "messages", msgs, "temperature", temperature > 1 ? 1.0 : temperature);
	if (req && sys.len)
		json_object_set_new(req, "system", json_stringn(sys.buf, sys.len));
	cuco_strbuf_release(&sys);
	return req;
}

static void auth(const char *key, struct cuco_strbuf *sb)
{
	cuco_strbuf_addf(sb, "x-api-key: %s", key);
}

/*
 * usage: input_tokens, output_tokens; tokens read from or written to the
 * prompt cache count as prompt tokens too (the budget's view).
 */
static void usage(json_t *root, struct cuco_llm_result *res)
{
	static const char *const cached[] = {"cache_creation_input_tokens",
	                                     "cache_read_input_tokens"};
	json_t *u = json_object_get(root, "usage");
	json_t *it = json_object_get(u, "input_tokens");
	json_t *ot = json_object_get(u, "output_tokens");

	if (!json_is_integer(it) || !json_is_integer(ot) || json_integer_value(it) < 0 ||
	    json_integer_value(ot) < 0)
		return;
	res->tokens_in = json_integer_value(it);
	res->tokens_out = json_integer_value(ot);
	for (size_t i = 0; i < sizeof(cached) / sizeof(cached[0]); i++) {
		json_t *c = json_object_get(u, cached[i]);
		if (json_is_integer(c) && json_integer_value(c) > 0)
			res->tokens_in += json_integer_value(c);
	}
}

/* The "text" blocks of the content, concatenated; 0 when there are none. */
static int reply(json_t *root, struct cuco_strbuf *text, struct cuco_llm_result *res, json_t **stop,
                 const char **missing)
{
	json_t *content = json_object_get(root, "content"), *b;
	size_t i;
	int n = 0;

	usage(root, res);
	*stop = json_object_get(root, "stop_reason");
	json_array_foreach(content, i, b)
	{
		json_t *type = json_object_get(b, "type"), *t = json_object_get(b, "text");
		if (json_is_string(type) && !strcmp(json_string_value(type), "text") &&
		    json_is_string(t)) {
			cuco_strbuf_add(text, json_string_value(t), json_string_length(t));
			n++;
		}
	}
	if (!n) {
		*missing = "text block in content";
		return -1;
	}
	return 0;
}

static int cut_off(const char *stop, int *context_full)
{
	*context_full = stop && !strcmp(stop, "model_context_window_exceeded");
	return *context_full || (stop && !strcmp(stop, "max_tokens"));
}

const struct cuco_llm_provider cuco_llm_anthropic = {
    .name = "anthropic",
    .key_env = CUCO_LLM_ANTHROPIC_KEY_ENV,
    .path = "/messages",
    .stop_field = "stop_reason",
    .header = "anthropic-version: " CUCO_LLM_ANTHROPIC_VERSION,
    .folds_system = 0,
    .request = request,
    .auth = auth,
    .reply = reply,
    .cut_off = cut_off,
};
