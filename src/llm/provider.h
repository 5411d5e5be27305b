/*
 * provider.h - what an LLM API is to the client: one table of fields and
 * callbacks per provider (provider_openai.c, provider_anthropic.c), found by
 * its enum cuco_llm_api value (cuco_llm_provider, in wire.c's table). The
 * client (client.c) and the wire formats (wire.c) ask the table; neither
 * names a provider. A new provider is its file, its value in chat.h's enum,
 * its line in wire.c's table, and its test. Internal to src/llm/.
 */
#ifndef CUCO_LLM_PROVIDER_H
#define CUCO_LLM_PROVIDER_H

#include <stdint.h>

#include <jansson.h>

#include "llm/chat.h"
#include "util/strbuf.h"

struct cuco_llm_provider {
	const char *name;       /* --llm-api's word, a run config's "llm.api" */
	const char *key_env;    /* the variable holding the key by default */
	const char *path;       /* the chat endpoint under {base}/v1 */
	const char *stop_field; /* what the reply calls its stop reason, for messages */
	const char *header;     /* a header every request carries beyond the JSON ones; NULL none */
	int folds_system;       /* retry policy: 1 when a model whose template refuses the system
	                           role is asked again with it folded into the user message */
	/* The request body for model (messages: the JSON array, system messages included). NULL
	 * out of memory. */
	json_t *(*request)(const char *model, json_t *messages, double temperature, int max_tokens,
	                   int64_t seed);
	/* The header that carries key ("Authorization: Bearer KEY"), into auth. */
	void (*auth)(const char *key, struct cuco_strbuf *auth);
	/*
	 * A 2xx reply read: its text appended to text, its usage into res (tokens_in,
	 * tokens_out; left unknown when absent), its stop reason into *stop (borrowed from
	 * root, may be NULL). 0, or -1 with *missing naming what the reply lacks.
	 */
	int (*reply)(json_t *root, struct cuco_strbuf *text, struct cuco_llm_result *res,
	             json_t **stop, const char **missing);
	/* 1 when stop says the reply was cut off; *context_full when it says the server's
	 * context is full. */
	int (*cut_off)(const char *stop, int *context_full);
};

extern const struct cuco_llm_provider cuco_llm_openai;    /* provider_openai.c */
extern const struct cuco_llm_provider cuco_llm_anthropic; /* provider_anthropic.c */

/* The provider of api (enum cuco_llm_api), or NULL when it names none (wire.c). */
const struct cuco_llm_provider *cuco_llm_provider(int api);

#endif
