/* error.c - result code names and the error context. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/secret.h"

static const struct {
	const char *token;
	const char *text;
} names[] = {
    [CUCO_OK] = {"ok", "success"},
    [CUCO_ERR_NOMEM] = {"nomem", "out of memory"},
    [CUCO_ERR_IO] = {"io", "input/output error"},
    [CUCO_ERR_PARSE] = {"parse", "parse error"},
    [CUCO_ERR_INVALID] = {"invalid", "invalid value"},
    [CUCO_ERR_USAGE] = {"usage", "usage error"},
    [CUCO_ERR_STORE] = {"store", "store error"},
    [CUCO_ERR_SCHEMA] = {"schema", "store schema error"},
    [CUCO_ERR_COMPILE] = {"compile", "compile error"},
    [CUCO_ERR_RUN] = {"run", "run error"},
    [CUCO_ERR_TIMEOUT] = {"timeout", "timeout"},
    [CUCO_ERR_CRASH] = {"crash", "crash"},
    [CUCO_ERR_VERIFY] = {"wrong", "wrong result"},
    [CUCO_ERR_UNSUPPORTED] = {"unsupported", "unsupported"},
    [CUCO_ERR_NOT_FOUND] = {"not_found", "not found"},
    [CUCO_ERR_NO_GPU] = {"no_gpu", "not enough CUDA GPUs"},
    [CUCO_ERR_SYSTEM] = {"system", "system error"},
};

#define NNAMES ((int)(sizeof(names) / sizeof(names[0])))

const char *cuco_strerror(int code)
{
	if (code < 0 || code >= NNAMES || !names[code].text)
		return "unknown error";
	return names[code].text;
}

const char *cuco_result_token(int code)
{
	if (code < 0 || code >= NNAMES || !names[code].token)
		return "unknown";
	return names[code].token;
}

int cuco_err_setx(struct cuco_err *err, const char *file, int line, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->file = file;
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	cuco_secret_redact_buf(err->msg, sizeof(err->msg)); /* the API key never shows */
	return code;
}

void cuco_err_prefix(struct cuco_err *err, const char *fmt, ...)
{
	char head[512], old[sizeof(err->msg)];
	size_t n;
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	n = strlen(head);
	if (n >= sizeof(err->msg))
		n = sizeof(err->msg) - 1;
	memcpy(err->msg, head, n);
	memcpy(err->msg + n, old, sizeof(err->msg) - n - 1);
	err->msg[sizeof(err->msg) - 1] = '\0';
	cuco_secret_redact_buf(err->msg, sizeof(err->msg));
}

void cuco_err_clear(struct cuco_err *err)
{
	if (!err)
		return;
	err->code = CUCO_OK;
	err->file = NULL;
	err->line = 0;
	err->msg[0] = '\0';
}
