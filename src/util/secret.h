/*
 * secret.h - values that must never be stored, printed or put into a prompt
 * (the LLM API key): registered once they are read, redacted wherever text
 * leaves cuco (store columns, error messages, request bodies).
 */
#ifndef CUCO_SECRET_H
#define CUCO_SECRET_H

#include <stddef.h>

#define CUCO_SECRET_MARK "[REDACTED]" /* what a secret becomes */
#define CUCO_SECRET_MIN 8             /* shorter values are not registered (too common) */
#define CUCO_SECRET_MAX 8             /* secrets kept; later ones are ignored */

/*
 * The value of environment variable name (the API key --llm-key-env names),
 * read once (again only if set again): kept here, registered as a secret,
 * and scrubbed from this process's environment (its bytes overwritten where
 * they lie, so /proc/PID/environ no longer shows them, and the variable
 * unset), so no child ever inherits it whatever the name. Later calls return
 * the kept copy. NULL when unset or empty. Thread-safe; the string lives
 * until the variable is set and read again.
 */
const char *cuco_secret_env(const char *name);
/* 1 when name is a variable cuco_secret_env read (its value is a key), else 0. */
int cuco_secret_env_name(const char *name, size_t len);

/* Register s (copied; repeats and values shorter than CUCO_SECRET_MIN ignored). Thread-safe. */
void cuco_secret_add(const char *s);
/* 1 when s (may be NULL) holds a registered secret, or ends in 4 or more bytes that open one. */
int cuco_secret_in(const char *s);
/*
 * A malloc'd copy of s with every registered secret, and a tail that opens
 * one (a cut-off message), replaced by CUCO_SECRET_MARK; NULL for NULL.
 */
char *cuco_secret_redact(const char *s);
/* buf (NUL-terminated, size bytes) redacted in place, truncated where the marks make it longer. */
void cuco_secret_redact_buf(char *buf, size_t size);

#endif
