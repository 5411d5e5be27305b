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

#include "llm/chat.h"
#include "store/store.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Defaults as documented in struct cuco_llm_config; no base_url or model. */
void cuco_llm_config_init(struct cuco_llm_config *cfg);

/* Speak api (enum cuco_llm_api), the key in that api's variable (cuco_llm_api_key_env()). */
void cuco_llm_config_api(struct cuco_llm_config *cfg, int api);

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
