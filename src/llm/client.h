/*
 * client.h - a client for chat endpoints: OpenAI-compatible ones (vLLM, SGLang,
 * llama.cpp server, Ollama, hosted APIs; one POST to {base}/v1/chat/completions
 * per call) and Anthropic's Messages API (one POST to {base}/v1/messages), with
 * timeouts, retries with backoff, a hard token/cost budget and a record of
 * every call for the store. Both APIs share the retries, the budget, the
 * redaction and the record; only the wire format differs.
 *
 * Per model on the endpoint the client learns two things from the replies:
 * how many prompt bytes make a token (from `usage`, for the budget's
 * worst-case estimate) and whether the model's chat template refuses the
 * system role (then the system prompt is folded into the first user message
 * for that call and every later one). Each request carries a sampling seed
 * derived from the configured seed and the call's index, so that two calls
 * with the same prompt do not get the same reply from a server with a fixed
 * seed.
 *
 * The API key is read from an environment variable (its name is configurable)
 * at each call and sent as `Authorization: Bearer` (openai) or `x-api-key`
 * (anthropic); it is never kept in the client, never put in a record, and any text that goes into a
 * record (the prompt, the reply, an error or an echoed server body) has the key replaced by
 * "[REDACTED]".
 */
#ifndef CUCO_LLM_CLIENT_H
#define CUCO_LLM_CLIENT_H

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

/* Defaults as documented in struct cuco_llm_config; no base_url or model. */
void cuco_llm_config_init(struct cuco_llm_config *cfg);

/* Speak api (enum cuco_llm_api), the key in that api's variable (cuco_llm_api_key_env()). */
void cuco_llm_config_api(struct cuco_llm_config *cfg, int api);

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

struct cuco_llm_client;

/*
 * Check cfg and create a client (free with cuco_llm_client_free()). Errors:
 * CUCO_ERR_USAGE (no base_url/model, a base URL that is not http(s), a cost
 * budget without a price for the model, bad numbers), CUCO_ERR_SYSTEM
 * (libcurl could not start). *out is NULL on error.
 */
int cuco_llm_client_new(const struct cuco_llm_config *cfg, struct cuco_llm_client **out,
                        struct cuco_err *err);

/* Free a client; NULL is allowed. */
void cuco_llm_client_free(struct cuco_llm_client *c);

/*
 * Send one chat completion request (retrying as configured) and fill *res
 * (which must be init'ed; it is released first). The budget is checked
 * before the call against its worst case (used + estimated prompt tokens +
 * max_tokens, and their cost) and charged from the reply's usage, or
 * cuco_llm_estimate_call() when usage is missing. A model whose template
 * refuses the system role (an HTTP error naming it) gets the same call again
 * at once with the system prompt folded into the user message; that attempt
 * is not a retry (openai only: the Messages API takes the system prompt as
 * a field of its own). Returns CUCO_OK with
 * res->reply set, or:
 *   CUCO_ERR_UNSUPPORTED - the budget would be exceeded; nothing was sent,
 *                          cuco_llm_client_budget()->exhausted is set. The
 *                          run should stop cleanly.
 *   CUCO_ERR_TIMEOUT     - the last attempt timed out (connect or total);
 *   CUCO_ERR_SYSTEM      - network failure after all retries;
 *   CUCO_ERR_RUN         - an HTTP error status (after retries for 429/5xx,
 *                          anthropic's 529 "overloaded" among them);
 *   CUCO_ERR_PARSE       - a body that is not a chat completion, no content,
 *                          or a truncated reply (finish_reason "length":
 *                          res->truncated, and res->context_full when it
 *                          stopped below max_tokens); res->reply holds what
 *                          came back, if anything;
 *   CUCO_ERR_INVALID     - no messages.
 * err and res->error carry the same message.
 */
int cuco_llm_chat(struct cuco_llm_client *c, const struct cuco_llm_message *msgs, int nmsgs,
                  const struct cuco_llm_call_opts *opts, struct cuco_llm_result *res,
                  struct cuco_err *err);

/* The client's budget state (owned by the client). */
const struct cuco_llm_budget *cuco_llm_client_budget(const struct cuco_llm_client *c);

/*
 * Charge the budget for calls made before this client existed (a resumed
 * run's earlier calls): tokens, and cost when it is not NaN. The budget is
 * checked as usual at the next call.
 */
void cuco_llm_client_charge(struct cuco_llm_client *c, int64_t tokens, double cost);

/*
 * Mark the budget spent, as a call refused for it does: the operators ask
 * nothing more of the model. A resumed run whose budget ran out (and was
 * not raised since) starts so.
 */
void cuco_llm_client_exhaust(struct cuco_llm_client *c);

/*
 * A copy of text (malloc'd; NULL for NULL) with the API key replaced by
 * CUCO_LLM_REDACTED: for text the caller puts into a prompt (logs of
 * programs, which never get the key, all the same).
 */
char *cuco_llm_client_redact(const struct cuco_llm_client *c, const char *text);

/* The full URL calls go to (owned by the client). */
const char *cuco_llm_client_endpoint(const struct cuco_llm_client *c);

/* Cost of tokens for model under cfg's prices; NaN when the model has no price. */
double cuco_llm_price_cost(const struct cuco_llm_config *cfg, const char *model, int64_t tokens_in,
                           int64_t tokens_out);

/*
 * Start the per-call seeds at call index n (a resumed run's stored calls), so
 * that no seed of the earlier calls repeats.
 */
void cuco_llm_client_set_calls(struct cuco_llm_client *c, int64_t n);

/* The sampling seed of call index n under cfg_seed (0 .. 2^31 - 1). */
int64_t cuco_llm_call_seed(uint64_t cfg_seed, int64_t n);

/*
 * Learn model's prompt bytes per token from a stored call: prompt_json (the
 * messages array as sent) and the prompt_tokens its reply reported. Calls
 * with unknown tokens are ignored.
 */
void cuco_llm_client_learn(struct cuco_llm_client *c, const char *model, const char *prompt_json,
                           int64_t tokens_in);

/* Prompt bytes per token the client assumes for model now (learnt or the default). */
double cuco_llm_client_bytes_per_token(const struct cuco_llm_client *c, const char *model);

/* 1 when the client folds the system prompt into the user message for model. */
int cuco_llm_client_folds_system(const struct cuco_llm_client *c, const char *model);

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

/* Zero a result (strings NULL, tokens unknown, cost NaN). */
void cuco_llm_result_init(struct cuco_llm_result *res);

/* Free a result's strings and re-init it. NULL is allowed. */
void cuco_llm_result_release(struct cuco_llm_result *res);

/*
 * Store res as a row of llm_calls for run_id and program_id (0: none) and
 * put the row id in *id (may be NULL). Errors: those of
 * cuco_store_llm_call_add().
 */
int cuco_llm_result_store(struct cuco_store *store, const struct cuco_llm_result *res,
                          int64_t run_id, int64_t program_id, int64_t *id, struct cuco_err *err);

/*
 * Like cuco_llm_result_store(), but first prefix res->error with why (may be
 * NULL: no change), e.g. "fastpath stage A reply rejected: <reason>", so the
 * stored row says what the call was for and why nothing came of it.
 * res->error is replaced (still free of the key). Errors: those of
 * cuco_llm_result_store().
 */
int cuco_llm_result_store_why(struct cuco_store *store, struct cuco_llm_result *res, int64_t run_id,
                              int64_t program_id, const char *why, struct cuco_err *err);

#endif
