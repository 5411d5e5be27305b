/*
 * chat.h - a chat call as data, the lowest file of src/llm: the APIs an
 * endpoint speaks, the client's configuration, a message, a call's record and
 * the budget's state; with what the wire formats (wire.c) answer without a
 * client: an API's name and key variable, a call's seed and estimate, an
 * endpoint's models. The client (client.h) and the wire formats (wire.h)
 * build on it; client.h includes it for its users.
 */
#ifndef CUCO_LLM_CHAT_H
#define CUCO_LLM_CHAT_H

#include <stdint.h>

#include "store/store.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CUCO_LLM_DEFAULT_KEY_ENV "OPENAI_API_KEY"
#define CUCO_LLM_ANTHROPIC_KEY_ENV "ANTHROPIC_API_KEY"
#define CUCO_LLM_ANTHROPIC_VERSION "2023-06-01" /* the anthropic-version header sent */
#define CUCO_LLM_REDACTED "[REDACTED]"
#define CUCO_LLM_MAX_PRICES 16 /* models with a price in one config */
#define CUCO_LLM_MAX_LEARNT 16 /* models per client whose bytes per token are learnt */
/* Prompt bytes per token assumed for a model before its replies report usage:
   conservative (tokenizers make 3 to 4 bytes a token of code and English; small ones less). */
#define CUCO_LLM_BYTES_PER_TOKEN 2.0

/* The wire format an endpoint speaks. */
enum cuco_llm_api {
	CUCO_LLM_API_OPENAI = 0, /* chat completions: {base}/v1/chat/completions */
	CUCO_LLM_API_ANTHROPIC,  /* Messages API: {base}/v1/messages */
};

/* "openai" or "anthropic"; NULL for a value out of range. */
const char *cuco_llm_api_name(int api);

/* The api named name ("openai", "anthropic"), or -1 when it names none. */
int cuco_llm_api_parse(const char *name);

/* The variable holding the key by default for api: OPENAI_API_KEY, ANTHROPIC_API_KEY. */
const char *cuco_llm_api_key_env(int api);

/* What one model costs, in cost units (e.g. USD) per million tokens. */
struct cuco_llm_price {
	const char *model;   /* exact model name as sent in requests */
	double in_per_mtok;  /* prompt tokens */
	double out_per_mtok; /* completion tokens */
};

/*
 * Client configuration. Strings are borrowed by cuco_llm_client_new(), which
 * copies what it keeps. cuco_llm_config_init() sets the defaults noted here.
 */
struct cuco_llm_config {
	const char *base_url;    /* "http://127.0.0.1:8000" or ".../v1"; required */
	int api;                 /* enum cuco_llm_api: CUCO_LLM_API_OPENAI */
	const char *model;       /* required */
	double temperature;      /* 0.7; anthropic: at most 1 is sent */
	int max_tokens;          /* completion limit per call: 4096 */
	const char *api_key_env; /* variable holding the key: "OPENAI_API_KEY" (see
	                            cuco_llm_config_api()); NULL: the api's; unset is fine
	                            (local servers need no key) */
	long connect_timeout_ms; /* 10000 */
	long timeout_ms;         /* whole request, per attempt: 300000 */
	int max_retries;         /* further attempts after a 429/5xx/network failure: 4; a
	                            5xx other than 502/503/504 whose body repeats the previous
	                            attempt's is not retried again */
	long retry_base_ms;      /* first backoff: 1000; doubles per attempt */
	long retry_max_ms;       /* cap of one backoff (and of an honoured Retry-After): 60000 */
	uint64_t sampling_seed;  /* seed of the jitter RNG and of the per-call sampling seeds: 1
	                            (anthropic takes no seed: it is recorded, not sent) */
	int64_t budget_tokens;   /* hard limit on prompt + completion tokens of all calls; 0: none.
	                            A call is sent only when its worst case fits: prompt tokens
	                            (CUCO_LLM_BYTES_PER_TOKEN until the model's usage taught the
	                            client better) + max_tokens */
	double budget_cost;      /* hard limit on cost of all calls; 0: none (needs prices) */
	struct cuco_llm_price prices[CUCO_LLM_MAX_PRICES];
	int nprices;
};

/* One chat message; strings borrowed for the call. */
struct cuco_llm_message {
	const char *role; /* "system", "user", "assistant" */
	const char *content;
};

/* Per-call overrides; a field < 0 (or NULL) keeps the client's value. */
struct cuco_llm_call_opts {
	double temperature;
	int max_tokens;
	const char *model; /* another model on the same endpoint and budget (its price applies) */
};

/*
 * The record of one call, owned by the caller: cuco_llm_result_init() before
 * the call, cuco_llm_result_release() after. Every string is malloc'd (or
 * NULL) and free of the API key. Filled on success and on failure (then
 * error says why), except when the call was refused before any request
 * (budget, bad arguments): then attempts is 0.
 */
struct cuco_llm_result {
	char *model;            /* model asked for */
	char *endpoint;         /* full URL posted to */
	char *prompt_json;      /* the messages array as JSON (anthropic: the same array, the
	                           system prompt as its first message; it went as "system") */
	char *reply;            /* the assistant's content; NULL when none came back */
	char *finish_reason;    /* openai's finish_reason, anthropic's stop_reason, verbatim */
	char *error;            /* why the call failed; NULL when it succeeded */
	int code;               /* enum cuco_result of the call */
	long http_status;       /* of the last attempt; 0 when no response */
	int attempts;           /* requests sent */
	int64_t tokens_in;      /* from usage; CUCO_STORE_NO_INT when the reply had none */
	int64_t tokens_out;     /* from usage; CUCO_STORE_NO_INT when the reply had none */
	int usage_estimated;    /* 1: no usage in the reply; the budget was charged an estimate */
	int64_t charged_tokens; /* what the budget was charged (usage or estimate) */
	double latency_ms;      /* all attempts and backoffs together */
	double cost;            /* from usage and prices; NaN when unknown */
	int64_t seed;           /* sampling seed of the call (anthropic: recorded, not sent);
	                           CUCO_STORE_NO_INT when nothing was sent */
	int system_folded;      /* 1: the system prompt went into the user message (the model's
	                           template refuses the system role); prompt_json is what was sent */
	int truncated;          /* 1: finish_reason "length" (anthropic: stop_reason "max_tokens"
	                           or "model_context_window_exceeded"): the reply is cut off */
	int context_full;       /* 1: cut off below max_tokens: the server's context is full */
	int nul_dropped;        /* U+0000 characters removed from the reply */
	const char *purpose;    /* what the call was for, stored as llm_calls.purpose ("mutation",
	                           "summary", "diagnosis", "fastpath"; a static string the caller
	                           sets after the call); NULL: unsaid */
};

/* Budget state of a client. */
struct cuco_llm_budget {
	int64_t tokens_used;
	double cost_used;
	int64_t calls; /* calls that sent at least one request */
	int exhausted; /* 1 once a call was refused for the budget */
};

/* The sampling seed of call index n under cfg_seed (0 .. 2^31 - 1). */
int64_t cuco_llm_call_seed(uint64_t cfg_seed, int64_t n);

/*
 * What the budget is charged for a call whose reply reported no usage: the
 * prompt (messages array as JSON) and the reply at CUCO_LLM_BYTES_PER_TOKEN.
 */
int64_t cuco_llm_estimate_call(const char *prompt_json, const char *reply);

/*
 * The model ids the endpoint lists at {base}/v1/models, one per line into
 * ids (reset first). Uses cfg's api (its headers), base URL, key variable and connect timeout,
 * at most timeout_ms in all, one attempt. Errors: CUCO_ERR_USAGE (base URL),
 * CUCO_ERR_SYSTEM/CUCO_ERR_TIMEOUT (no answer), CUCO_ERR_RUN (an HTTP
 * error), CUCO_ERR_PARSE (not a model list: {"data": [{"id": ...}]}).
 */
int cuco_llm_list_models(const struct cuco_llm_config *cfg, long timeout_ms,
                         struct cuco_strbuf *ids, struct cuco_err *err);

#endif
