/*
 * wire.h - the wire formats as the client speaks them: OpenAI's chat
 * completions and Anthropic's Messages API. The messages (with the system
 * prompt folded into the user message for templates that refuse the system
 * role), the headers, the request body, the reply, the errors worth telling
 * apart. Internal to src/llm/.
 */
#ifndef CUCO_LLM_WIRE_H
#define CUCO_LLM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "llm/chat.h"
#include "util/strbuf.h"

#define CUCO_LLM_BODY_EXCERPT 300            /* bytes of a server body quoted in an error */
#define CUCO_LLM_MESSAGE_OVERHEAD 16         /* bytes counted per message for role, framing */
#define CUCO_LLM_MAX_REPLY_BYTES (64u << 20) /* a reply larger than this is refused */

/* splitmix64: small, seedable; the jitter and the per-call seeds. */
uint64_t cuco_llm_wire_splitmix(uint64_t *s);

/* Bytes the budget counts for a messages array: contents plus framing per message. */
size_t cuco_llm_wire_bytes(json_t *messages);

/* body's first CUCO_LLM_BODY_EXCERPT bytes on one line into sb, for an error message. */
void cuco_llm_wire_excerpt(struct cuco_strbuf *sb, const char *body, size_t len);

/*
 * A malloc'd copy of s (NULL: "") with every byte sequence that is not
 * well-formed UTF-8 replaced by U+FFFD, so that JSON can carry it.
 */
char *cuco_llm_wire_utf8(const char *s);

/* The messages as a JSON array (invalid UTF-8 replaced by U+FFFD, no message dropped); with fold,
 * system messages go in front of the first user one. */
json_t *cuco_llm_wire_messages(const struct cuco_llm_message *msgs, int nmsgs, int fold);

/* 1 when msgs has a system message. */
int cuco_llm_wire_has_system(const struct cuco_llm_message *msgs, int nmsgs);

/* 1 when an HTTP error's body says the chat template refuses the system role. */
int cuco_llm_wire_refuses_system(long status, const struct cuco_strbuf *body);

/*
 * Read a 2xx body of api (enum cuco_llm_api) into res (reply without U+0000,
 * finish or stop reason, usage, truncated, context_full). Anthropic's reply is
 * its "text" content blocks concatenated. CUCO_OK or CUCO_ERR_PARSE with why
 * in msg.
 */
int cuco_llm_wire_parse(int api, const char *body, size_t len, int max_tokens,
                        struct cuco_llm_result *res, struct cuco_strbuf *msg, const char *endpoint);

/*
 * The request body (malloc'd), or NULL out of memory. openai: model,
 * messages, temperature, max_tokens, seed. anthropic: model, max_tokens, the
 * system messages as the top-level "system" string, the others as messages,
 * temperature (at most 1); no seed (the API has none).
 */
char *cuco_llm_wire_request(int api, const char *model, json_t *messages, double temperature,
                            int max_tokens, int64_t seed);

/*
 * The request headers of api (free with curl_slist_free_all()): JSON content,
 * anthropic-version for anthropic, and the key when key is non-NULL, written
 * into auth ("Authorization: Bearer KEY" or "x-api-key: KEY"), which the
 * caller wipes and releases after the transfer.
 */
struct curl_slist *cuco_llm_wire_headers(int api, const char *key, struct cuco_strbuf *auth);

/*
 * 1 when a 5xx other than 502/503/504/529 repeats the previous attempt's
 * status and body: not worth another retry.
 */
int cuco_llm_wire_same_error(long status, const struct cuco_strbuf *body, long prev_status,
                             const struct cuco_strbuf *prev);

#endif
