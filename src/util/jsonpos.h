/*
 * jsonpos.h - positions in JSON text, for errors that point at a value.
 *
 * jansson reports positions only for syntax errors. These helpers find a
 * value (by a path such as "shapes[1].K") in the already validated text, turn
 * it into a line and column, and report `file:line:column: field: message`.
 * The manifest loader and the design space loader share them.
 */
#ifndef CUCO_JSONPOS_H
#define CUCO_JSONPOS_H

#include <stddef.h>

#include <jansson.h>

#include "util/error.h"
#include "util/strbuf.h"

/*
 * A JSON text under validation, for the errors that point into it. The
 * caller owns everything it points to.
 */
struct cuco_json_src {
	const char *path;     /* the file, as shown in messages */
	const char *text;     /* its contents; valid JSON once cuco_json_fail() is used */
	size_t len;           /* bytes of text */
	struct cuco_err *err; /* where errors are recorded */
};

/*
 * Find the value at path in the JSON text and return a pointer to its first
 * byte, or NULL. path is "" for the root, "a.b" for members, "a[2]" for
 * elements ("shapes[1].K"). With key set, point at the member's key instead
 * of its value (for "unknown field" errors). text must be valid JSON (parse
 * it with jansson first); the scan is lenient otherwise.
 */
const char *cuco_json_locate(const char *text, size_t len, const char *path, int key);

/* 1-based line and byte column of p inside text. */
void cuco_json_linecol(const char *text, const char *p, int *line, int *col);

/* A short rendering of v for "got ..." messages: "abc" quoted, 12, true, an object. */
void cuco_json_describe(struct cuco_strbuf *sb, const json_t *v);

/*
 * The candidate closest to word by edit distance when it is close enough to
 * be a likely typo, else NULL.
 */
const char *cuco_suggest(const char *word, const char *const *candidates, int n);

/*
 * Parse src->text (duplicate keys rejected) into *root, which the caller then
 * owns and which must be a JSON object. Returns CUCO_OK, or CUCO_ERR_PARSE
 * with *root NULL and `path:line:column: invalid JSON: ...` (a syntax error)
 * or `path:line:column: (document): expected an object, got ...` in src->err.
 */
int cuco_json_parse_object(const struct cuco_json_src *src, json_t **root);

/*
 * Record `path:line:column: field: message` in src->err with code and return
 * code; message is fmt with its arguments. The position is that of field's
 * value (of its key when key is set), or of the nearest enclosing value that
 * exists when field is missing (1:1 when none does). field "" is the whole
 * document, shown as "(document)".
 */
int cuco_json_fail(const struct cuco_json_src *src, int code, const char *field, int key,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * CUCO_ERR_PARSE at field: "expected <expected>, got <v described>", or
 * "required field is missing" when v is NULL.
 */
int cuco_json_fail_type(const struct cuco_json_src *src, const char *field, const char *expected,
                        const json_t *v);

#endif
