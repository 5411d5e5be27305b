/*
 * array.h - the one growable array: a typed pointer, its length and its
 * allocation, grown by doubling. Out of memory, or a size that does not fit in
 * size_t, aborts (as every cuco allocation does: docs/architecture.md).
 *
 *     struct item *v = NULL;
 *     size_t n = 0, alloc = 0;
 *     struct item *it = CUCO_ARRAY_PUSH(v, n, alloc);   // room for one more, n++
 *     ...
 *     free(v);
 */
#ifndef CUCO_ARRAY_H
#define CUCO_ARRAY_H

#include <stddef.h>

/*
 * Return v (an array of elements of size bytes, *alloc of them allocated, NULL
 * when *alloc is 0) with room for at least need elements: unchanged when it
 * has room, else reallocated to max(need, twice *alloc, 8) elements and
 * *alloc updated. need 0 allocates nothing. The caller frees the result.
 * Aborts when out of memory or when the bytes overflow size_t.
 */
void *cuco_array_grow(void *v, size_t size, size_t need, size_t *alloc);

/*
 * n elements of size bytes in *bytes: 0, or -1 (and *bytes untouched) when
 * the product overflows size_t.
 */
int cuco_array_bytes(size_t n, size_t size, size_t *bytes);

/* Grow array v (an lvalue, evaluated more than once) to hold need elements. */
#define CUCO_ARRAY_GROW(v, need, alloc) \
	((v) = cuco_array_grow((v), sizeof(*(v)), (size_t)(need), &(alloc)))

/*
 * Append one element to v (n used, alloc allocated, alloc a size_t): a
 * pointer to it, uninitialised; n grows by one. v and n are evaluated more
 * than once.
 */
#define CUCO_ARRAY_PUSH(v, n, alloc) (CUCO_ARRAY_GROW((v), (size_t)(n) + 1, (alloc)), &(v)[(n)++])

#endif
