/* xalloc.c - allocation that cannot fail. */
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *check(void *p)
{
	if (!p) {
		fputs("cuco: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *cuco_xcalloc(size_t n, size_t size)
{
	return check(calloc(n ? n : 1, size ? size : 1));
}

void *cuco_xrealloc(void *p, size_t size)
{
	return check(realloc(p, size ? size : 1));
}

char *cuco_xstrdup(const char *s)
{
	return s ? check(strdup(s)) : NULL;
}

char *cuco_xstrndup(const char *s, size_t n)
{
	return check(strndup(s, n));
}
