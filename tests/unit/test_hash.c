/* test_hash.c - SHA-256 (util/hash.h) against FIPS 180-4's vectors, whole and fed in pieces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/hash.h"

static void test_vectors(void **state)
{
	char h[65];

	(void)state;
	cuco_hash_string("abc", h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cuco_hash_string("", h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* 56 bytes: the padding spills into a second block */
	cuco_hash_string("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A million 'a's in pieces of 7 bytes (blocks split anywhere), and empty updates between. */
static void test_pieces(void **state)
{
	struct cuco_sha256 c;
	char a[7], h[65];
	int left = 1000000;

	(void)state;
	memset(a, 'a', sizeof(a));
	cuco_sha256_init(&c);
	while (left > 0) {
		int n = left < 7 ? left : 7;
		cuco_sha256_update(&c, a, (size_t)n);
		cuco_sha256_update(&c, a, 0);
		left -= n;
	}
	cuco_sha256_hex(&c, h);
	assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	assert_null(c.ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),
	    cmocka_unit_test(test_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
