/*
 * test_hostile_key.c - a candidate looks for the API key: in its own
 * environment (--llm-key-env naming a variable the allow-list passes, such
 * as NCCL_..., or another variable holding the same value), and in every
 * /proc/PID/environ it can read (cuco's own among them). cuco reads the key
 * once, scrubs it from its environment and passes no variable of that name
 * or value to a child: the candidate finds it nowhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "assert_text.h"
#include "hostile.h"
#include "llm/client.h"
#include "util/secret.h"

#define KEY "sk-hostile-0123456789abcdef"
#define NAME "NCCL_HOSTILE_ENDPOINT" /* passes the allow-list: NCCL_* */

static int setup(void **state)
{
	(void)state;
	setenv(NAME, KEY, 1);
	setenv("CUDA_HOSTILE_COPY", "prefix-" KEY, 1); /* the key under another allowed name */
	return hostile_setup("key");
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* The stand-in dumps its environment and every environ it can read into the log. */
static const char dump[] = "env >&2\n"
                           "for f in /proc/[0-9]*/environ; do cat \"$f\"; echo; done 2>/dev/null "
                           "| tr '\\0' '\\n' >&2\n"
                           "echo '" HOSTILE_HONEST(0, 1) "' >&3";

static void test_key_under_allowed_name(void **state)
{
	struct cuco_llm_config cfg;
	struct cuco_llm_client *c = NULL;
	struct cuco_run_result res;
	struct cuco_err err;
	struct cuco_strbuf self = CUCO_STRBUF_INIT;

	(void)state;
	/* as `--llm-key-env NCCL_HOSTILE_ENDPOINT` has cuco do: the client reads the key */
	cuco_llm_config_init(&cfg);
	cfg.base_url = "http://127.0.0.1:9";
	cfg.model = "m";
	cfg.api_key_env = NAME;
	assert_int_equal(cuco_llm_client_new(&cfg, &c, &err), CUCO_OK);
	assert_null(getenv(NAME));
	assert_string_equal(cuco_secret_env(NAME), KEY); /* cuco keeps it for its requests */

	assert_int_equal(hostile_run(dump, NULL, &res, &err), CUCO_OK);
	assert_contains(res.log.buf, "PATH="); /* the dump ran */
	if (strstr(res.log.buf, KEY))
		fail_msg("the candidate found the key:\n%s", strstr(res.log.buf, KEY) - 64);
	assert_null(strstr(res.log.buf, NAME "="));
	assert_null(strstr(res.log.buf, "CUDA_HOSTILE_COPY="));
	cuco_run_result_release(&res);

	/* cuco's own /proc/PID/environ (the block the kernel shows) no longer holds it */
	assert_int_equal(cuco_strbuf_read_file(&self, "/proc/self/environ"), 0);
	for (size_t i = 0; i < self.len; i++)
		if (!self.buf[i])
			self.buf[i] = '\n';
	assert_null(strstr(self.buf, KEY));
	cuco_strbuf_release(&self);
	cuco_llm_client_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_under_allowed_name),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
