/*
 * test_hostile_key.c - a candidate looks for the API key: in its own
 * environment (--llm-key-env naming a variable the allow-list passes, such
 * as NCCL_..., or another variable holding the same value), and in every
 * /proc/PID/environ it can read (cuco's own among them). cuco reads the key
 * once, scrubs it from its environment and passes no variable of that name
 * or value to a child: the candidate finds it nowhere. cuco is not dumpable:
 * another process of its user cannot read its environ or memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

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

	/* cuco's own /proc/PID/environ (the block the kernel shows) no longer holds it (read
	 * while dumpable: else it is root's alone) */
	prctl(PR_SET_DUMPABLE, 1);
	assert_int_equal(cuco_strbuf_read_file(&self, "/proc/self/environ"), 0);
	prctl(PR_SET_DUMPABLE, 0);
	for (size_t i = 0; i < self.len; i++)
		if (!self.buf[i])
			self.buf[i] = '\n';
	assert_null(strstr(self.buf, KEY));
	cuco_strbuf_release(&self);
	cuco_llm_client_free(c);
}

/*
 * cuco is not dumpable: another process of its user (a candidate run without the view) can
 * neither read its environ and memory nor trace it. As root nothing stops root's reads: there the
 * flag alone is checked (the view, a PID namespace of its own, hides cuco from candidates).
 */
static void test_not_dumpable(void **state)
{
	int fds[2];
	pid_t cuco;
	char p[64], c;

	(void)state;
	assert_int_equal(prctl(PR_GET_DUMPABLE), 0); /* hostile_setup did as cuco does */
	assert_int_equal(pipe(fds), 0);
	cuco = fork();
	if (cuco == 0) { /* a cuco: not dumpable, its key in its memory */
		cuco_proc_protect_self();
		(void)!write(fds[1], "r", 1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], &c, 1), 1);
	if (geteuid() != 0) {
		pid_t peer = fork();
		if (peer == 0) { /* another process of the user, dumpable as any */
			int bad = 0;
			prctl(PR_SET_DUMPABLE, 1);
			snprintf(p, sizeof(p), "/proc/%d/environ", (int)cuco);
			bad |= open(p, O_RDONLY) >= 0;
			snprintf(p, sizeof(p), "/proc/%d/mem", (int)cuco);
			bad |= open(p, O_RDWR) >= 0;
			_exit(bad);
		}
		{
			int st = 0;
			waitpid(peer, &st, 0);
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
	}
	kill(cuco, SIGKILL);
	waitpid(cuco, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_under_allowed_name),
	    cmocka_unit_test(test_not_dumpable),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
