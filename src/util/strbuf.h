/* strbuf.h - growable string buffer (never NULL, always NUL-terminated). */
#ifndef CUCO_STRBUF_H
#define CUCO_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A caller-owned struct: cuco_strbuf_init() before use, cuco_strbuf_release()
 * after. buf is never NULL and always NUL-terminated, also right after init.
 * Allocation failure aborts the process (there is no sane recovery for the
 * small strings cuco builds).
 */
struct cuco_strbuf {
	size_t len;   /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated, 0 while buf points at the shared empty string */
	char *buf;
};

#define CUCO_STRBUF_INIT                \
	{                               \
		0, 0, cuco_strbuf_empty \
	}
extern char cuco_strbuf_empty[];

void cuco_strbuf_init(struct cuco_strbuf *sb, size_t hint);
void cuco_strbuf_release(struct cuco_strbuf *sb);
/* Hand the buffer to the caller (free() it); sb is left empty and reusable. */
char *cuco_strbuf_detach(struct cuco_strbuf *sb, size_t *len);
void cuco_strbuf_grow(struct cuco_strbuf *sb, size_t extra);
void cuco_strbuf_reset(struct cuco_strbuf *sb);
void cuco_strbuf_setlen(struct cuco_strbuf *sb, size_t len);
void cuco_strbuf_add(struct cuco_strbuf *sb, const void *data, size_t len);
void cuco_strbuf_adds(struct cuco_strbuf *sb, const char *s);
void cuco_strbuf_addch(struct cuco_strbuf *sb, int c);
void cuco_strbuf_addf(struct cuco_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cuco_strbuf_vaddf(struct cuco_strbuf *sb, const char *fmt, va_list ap);
/* Append the whole file; returns 0 or -1 with errno set. */
int cuco_strbuf_read_file(struct cuco_strbuf *sb, const char *path);
/* Append all of fd until EOF; returns 0 or -1 with errno set. */
int cuco_strbuf_read_fd(struct cuco_strbuf *sb, int fd);
/*
 * Append s (NULL: nothing) safe for a terminal: every byte a terminal would
 * act on written out instead, \xNN for C0 controls but newline and tab (ESC
 * becomes \x1b, carriage return \x0d), DEL and bytes that are not UTF-8,
 * \u{NNNN} for C1 controls (U+0080..U+009F, which a UTF-8 terminal may read as
 * CSI) and the bidirectional overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069, which reorder what is shown). Text a candidate or a model
 * wrote goes through it before it reaches a terminal.
 */
void cuco_strbuf_add_printable(struct cuco_strbuf *sb, const char *s);
/* Append s quoted for a POSIX shell ('...' with embedded quotes escaped). */
void cuco_strbuf_add_shell_quoted(struct cuco_strbuf *sb, const char *s);
/* Trim trailing whitespace. */
void cuco_strbuf_rtrim(struct cuco_strbuf *sb);

#endif
