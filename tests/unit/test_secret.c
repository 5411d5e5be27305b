/*
 * test_secret.c - a registered secret (the API key) is redacted in error
 * messages and in every text the store writes, whichever column holds it.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "util/error.h"
#include "util/proc.h"
#include "util/secret.h"
#include "util/strbuf.h"

#define KEY "sk-cuco-secret-test-0a1b2c3d"

static void test_redact(void **state)
{
	char *r, buf[24];

	(void)state;
	cuco_secret_add(KEY);
	cuco_secret_add("short"); /* too short to register */
	assert_true(cuco_secret_in("x " KEY " y"));
	assert_false(cuco_secret_in("x short y"));
	r = cuco_secret_redact("a " KEY " b " KEY);
	assert_string_equal(r, "a [REDACTED] b [REDACTED]");
	free(r);
	snprintf(buf, sizeof(buf), "k=%s", KEY);
	cuco_secret_redact_buf(buf, sizeof(buf));
	assert_string_equal(buf, "k=[REDACTED]");
}

static void test_error_message(void **state)
{
	struct cuco_err err;

	(void)state;
	cuco_secret_add(KEY);
	cuco_err_clear(&err);
	cuco_err_set(&err, CUCO_ERR_INVALID, "HTTP 401: invalid key %s", KEY);
	assert_string_equal(err.msg, "HTTP 401: invalid key [REDACTED]");
	cuco_err_prefix(&err, "call %s: ", KEY);
	assert_null(strstr(err.msg, KEY));
}

/* Every text column goes through one binder: an llm call's error, prompt and reply here. */
static void test_store_never_holds_it(void **state)
{
	char dir[] = "/tmp/cuco-test-secret-XXXXXX", path[64];
	struct cuco_store *s = NULL;
	struct cuco_llm_call_rec rec;
	struct cuco_strbuf bytes = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int64_t id;

	(void)state;
	cuco_secret_add(KEY);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.db", dir);
	assert_int_equal(cuco_store_open(path, &s, &err), CUCO_OK);
	cuco_llm_call_rec_init(&rec);
	rec.model = "m";
	rec.endpoint = "http://127.0.0.1:9";
	rec.prompt = "{\"messages\":[\"" KEY "\"]}";
	rec.reply = "you sent " KEY;
	rec.error = "the agent's reason quotes " KEY;
	assert_int_equal(cuco_store_llm_call_add(s, &rec, &id, &err), CUCO_OK);
	cuco_store_close(s);
	assert_int_equal(cuco_strbuf_read_file(&bytes, path), 0);
	assert_non_null(memmem(bytes.buf, bytes.len, "[REDACTED]", 10));
	assert_null(memmem(bytes.buf, bytes.len, KEY, strlen(KEY)));
	cuco_strbuf_release(&bytes);
	cuco_proc_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_redact),
	    cmocka_unit_test(test_error_message),
	    cmocka_unit_test(test_store_never_holds_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
