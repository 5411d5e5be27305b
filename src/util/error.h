/* error.h - cuco's result codes and the error context that carries the human message. */
#ifndef CUCO_ERROR_H
#define CUCO_ERROR_H

#include <stddef.h>

/*
 * Result codes. Append only: never renumber, never reuse. The numbers are stored
 * in the database (evaluations.error_code) and returned as process exit codes
 * where a command fails.
 */
enum cuco_result {
	CUCO_OK = 0,
	CUCO_ERR_NOMEM = 1,        /* allocation failed */
	CUCO_ERR_IO = 2,           /* a file or pipe could not be read or written */
	CUCO_ERR_PARSE = 3,        /* malformed input: manifest, directive, program, reply */
	CUCO_ERR_INVALID = 4,      /* well-formed but invalid value */
	CUCO_ERR_USAGE = 5,        /* command-line misuse */
	CUCO_ERR_STORE = 6,        /* SQLite failed */
	CUCO_ERR_SCHEMA = 7,       /* store file is newer than this cuco, or corrupt */
	CUCO_ERR_COMPILE = 8,      /* nvcc rejected a program */
	CUCO_ERR_RUN = 9,          /* a program failed while running (CUDA/NCCL error) */
	CUCO_ERR_TIMEOUT = 10,     /* a rank hung past the watchdog limit */
	CUCO_ERR_CRASH = 11,       /* a rank died (signal or abnormal exit) */
	CUCO_ERR_VERIFY = 12,      /* output differs from the reference */
	CUCO_ERR_UNSUPPORTED = 13, /* not possible on this machine or not handled (yet) */
	CUCO_ERR_NOT_FOUND = 14,   /* a named thing does not exist */
	CUCO_ERR_NO_GPU = 15,      /* fewer CUDA GPUs than the job needs */
	CUCO_ERR_SYSTEM = 16,      /* fork/exec/socket and other OS failures */
};

/* The message that goes with a result: what was wrong, where, what to do. */
struct cuco_err {
	int code;         /* last code set, CUCO_OK when clear */
	const char *file; /* source file that recorded it (cuco's own, for debugging) */
	int line;
	char msg[2048]; /* human message, always NUL-terminated */
};

/* Static name of a result code ("CUCO_ERR_PARSE" -> "parse error"); never NULL. */
const char *cuco_strerror(int code);

/* Short stable token for a code, used in JSON and SQLite ("ok", "parse", "timeout"). */
const char *cuco_result_token(int code);

/*
 * Record code and a printf-style message in err (which may be NULL) and return
 * code, so callers can write `return cuco_err_set(err, CUCO_ERR_PARSE, ...)`.
 */
int cuco_err_setx(struct cuco_err *err, const char *file, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define cuco_err_set(err, code, ...) cuco_err_setx((err), __FILE__, __LINE__, (code), __VA_ARGS__)

/* Prefix the existing message with more context ("while loading X: " + old). */
void cuco_err_prefix(struct cuco_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reset err to CUCO_OK with an empty message. */
void cuco_err_clear(struct cuco_err *err);

#endif
