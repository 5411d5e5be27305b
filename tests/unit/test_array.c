/*
 * test_array.c - the growable array: growth keeps the elements and doubles,
 * zero length allocates nothing, and a size that overflows size_t aborts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/array.h"

struct item {
	int a;
	double b;
};

/* Pushing keeps every element and grows by doubling, never one at a time. */
static void test_growth(void **state)
{
	struct item *v = NULL;
	size_t n = 0, alloc = 0, grows = 0, last = 0;
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		struct item *it = CUCO_ARRAY_PUSH(v, n, alloc);

		it->a = i;
		it->b = i * 0.5;
		if (alloc != last) {
			assert_true(last == 0 || alloc == 2 * last);
			last = alloc;
			grows++;
		}
	}
	assert_int_equal(n, 1000);
	assert_true(alloc >= 1000 && alloc < 2000);
	assert_true(grows <= 8); /* 8, 16, ..., 1024 */
	for (i = 0; i < 1000; i++) {
		assert_int_equal(v[i].a, i);
		assert_true(v[i].b == i * 0.5);
	}
	free(v);
}

/* An int count works as well as a size_t one; GROW to a larger need takes it at once. */
static void test_grow_to_need(void **state)
{
	int *v = NULL, n = 0;
	size_t alloc = 0;

	(void)state;
	CUCO_ARRAY_GROW(v, 100, alloc);
	assert_non_null(v);
	assert_int_equal(alloc, 100);
	*CUCO_ARRAY_PUSH(v, n, alloc) = 7;
	assert_int_equal(n, 1);
	assert_int_equal(v[0], 7);
	assert_int_equal(alloc, 100);
	CUCO_ARRAY_GROW(v, 50, alloc); /* already room: unchanged */
	assert_int_equal(alloc, 100);
	free(v);
}

/* Zero length allocates nothing and leaves the array NULL. */
static void test_zero_length(void **state)
{
	struct item *v = NULL;
	size_t alloc = 0;

	(void)state;
	CUCO_ARRAY_GROW(v, 0, alloc);
	assert_null(v);
	assert_int_equal(alloc, 0);
	assert_null(cuco_array_grow(NULL, 0, 0, &alloc)); /* zero-size elements too */
	free(v);
}

static void test_bytes_overflow(void **state)
{
	size_t bytes = 42;

	(void)state;
	assert_int_equal(cuco_array_bytes(10, 8, &bytes), 0);
	assert_int_equal(bytes, 80);
	assert_int_equal(cuco_array_bytes(0, 8, &bytes), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(cuco_array_bytes(SIZE_MAX, 0, &bytes), 0);
	bytes = 42;
	assert_int_equal(cuco_array_bytes(SIZE_MAX / 8 + 1, 8, &bytes), -1);
	assert_int_equal(bytes, 42);
	assert_int_equal(cuco_array_bytes(SIZE_MAX, 2, &bytes), -1);
	assert_int_equal(cuco_array_bytes(SIZE_MAX / 16, 16, &bytes), 0);
}

/* A need whose bytes overflow size_t aborts instead of allocating too little. */
static void test_grow_overflow_aborts(void **state)
{
	int status = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct item *v = NULL;
		size_t alloc = 0;

		close(2); /* the message is expected */
		CUCO_ARRAY_GROW(v, SIZE_MAX / sizeof(*v) + 1, alloc);
		_exit(0); /* not reached */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_growth),
	    cmocka_unit_test(test_grow_to_need),
	    cmocka_unit_test(test_zero_length),
	    cmocka_unit_test(test_bytes_overflow),
	    cmocka_unit_test(test_grow_overflow_aborts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
