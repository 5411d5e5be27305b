/* xalloc.h - allocation that cannot fail: out of memory aborts (docs/architecture.md, memory). */
#ifndef CUCO_XALLOC_H
#define CUCO_XALLOC_H

#include <stddef.h>

/* calloc(n, size) (n = 0 gives one element); never NULL. Caller frees. */
void *cuco_xcalloc(size_t n, size_t size);
/* realloc(p, size) (size 0 gives one byte); never NULL. */
void *cuco_xrealloc(void *p, size_t size);
/* strdup(s); NULL for NULL. Caller frees. */
char *cuco_xstrdup(const char *s);
/* strndup(s, n): at most n bytes of s, NUL-terminated; never NULL. Caller frees. */
char *cuco_xstrndup(const char *s, size_t n);

#endif
