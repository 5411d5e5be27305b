/* strbuf.c - growable string buffer. */
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char cuco_strbuf_empty[1];

static void die_nomem(void)
{
	fputs("cuco: out of memory\n", stderr);
	abort();
}

void cuco_strbuf_init(struct cuco_strbuf *sb, size_t hint)
{
	sb->len = 0;
	sb->alloc = 0;
	sb->buf = cuco_strbuf_empty;
	if (hint)
		cuco_strbuf_grow(sb, hint);
}

void cuco_strbuf_release(struct cuco_strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	cuco_strbuf_init(sb, 0);
}

char *cuco_strbuf_detach(struct cuco_strbuf *sb, size_t *len)
{
	char *res;

	cuco_strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	cuco_strbuf_init(sb, 0);
	return res;
}

void cuco_strbuf_grow(struct cuco_strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;
	char *p;

	if (want < sb->len)
		die_nomem();
	if (sb->alloc && want <= sb->alloc)
		return;
	if (want < 64)
		want = 64;
	if (want < sb->alloc * 2)
		want = sb->alloc * 2;
	p = realloc(sb->alloc ? sb->buf : NULL, want);
	if (!p)
		die_nomem();
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = want;
}

void cuco_strbuf_reset(struct cuco_strbuf *sb)
{
	cuco_strbuf_setlen(sb, 0);
}

void cuco_strbuf_setlen(struct cuco_strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	if (len > sb->len)
		len = sb->len;
	sb->len = len;
	sb->buf[len] = '\0';
}

void cuco_strbuf_add(struct cuco_strbuf *sb, const void *data, size_t len)
{
	cuco_strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void cuco_strbuf_adds(struct cuco_strbuf *sb, const char *s)
{
	cuco_strbuf_add(sb, s, strlen(s));
}

void cuco_strbuf_addch(struct cuco_strbuf *sb, int c)
{
	char ch = (char)c;

	cuco_strbuf_add(sb, &ch, 1);
}

void cuco_strbuf_vaddf(struct cuco_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	cuco_strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->alloc - sb->len) {
		cuco_strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void cuco_strbuf_addf(struct cuco_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cuco_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

int cuco_strbuf_read_fd(struct cuco_strbuf *sb, int fd)
{
	for (;;) {
		ssize_t n;

		cuco_strbuf_grow(sb, 8192);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sb->buf[sb->len] = '\0';
			return -1;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
	}
	sb->buf[sb->len] = '\0';
	return 0;
}

int cuco_strbuf_read_file(struct cuco_strbuf *sb, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc, saved;

	if (fd < 0)
		return -1;
	rc = cuco_strbuf_read_fd(sb, fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void cuco_strbuf_add_shell_quoted(struct cuco_strbuf *sb, const char *s)
{
	cuco_strbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			cuco_strbuf_adds(sb, "'\\''");
		else
			cuco_strbuf_addch(sb, *s);
	}
	cuco_strbuf_addch(sb, '\'');
}

void cuco_strbuf_rtrim(struct cuco_strbuf *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

/* Length of the valid UTF-8 sequence at p (1 to 4), with its code point in *cp; 0 if none. */
static size_t utf8_seq(const unsigned char *p, unsigned *cp)
{
	size_t n = p[0] >= 0xf5 ? 0 : p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	unsigned c = n == 4 ? p[0] & 0x07u : n == 3 ? p[0] & 0x0fu : p[0] & 0x1fu;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (!n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3fu);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void cuco_strbuf_add_printable(struct cuco_strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (p && *p) {
		unsigned cp = 0;
		size_t n = utf8_seq(p, &cp);

		if (!n || (cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f) {
			cuco_strbuf_addf(sb, "\\x%02x", p[0]);
			p++;
		} else if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
		           (cp >= 0x2066 && cp <= 0x2069)) {
			cuco_strbuf_addf(sb, "\\u{%04x}", cp);
			p += n;
		} else {
			cuco_strbuf_add(sb, p, n);
			p += n;
		}
	}
}
