/* array.c - the growable array: doubling growth, checked sizes, abort when memory runs out. */
#include "array.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CUCO_ARRAY_MIN 8 /* elements of a first allocation */

int cuco_array_bytes(size_t n, size_t size, size_t *bytes)
{
	if (size && n > SIZE_MAX / size)
		return -1;
	*bytes = n * size;
	return 0;
}

void *cuco_array_grow(void *v, size_t size, size_t need, size_t *alloc)
{
	size_t want, bytes;

	if (need <= *alloc)
		return v;
	want = *alloc <= SIZE_MAX / 2 ? 2 * *alloc : need;
	if (want < CUCO_ARRAY_MIN)
		want = CUCO_ARRAY_MIN;
	if (want < need)
		want = need;
	if (cuco_array_bytes(want, size, &bytes)) {
		want = need; /* doubling overflowed; the exact need may still fit */
		if (cuco_array_bytes(want, size, &bytes)) {
			fprintf(stderr,
			        "cuco: an array of %zu elements of %zu bytes is too large\n", need,
			        size);
			abort();
		}
	}
	v = cuco_xrealloc(v, bytes);
	*alloc = want;
	return v;
}
