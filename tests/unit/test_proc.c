/*
 * test_proc.c - children cuco starts: their output is kept as head, a count
 * of what was left out, and tail; a child dies with the process that
 * started it, even when that one is killed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"

/* A child that writes 8 MiB: the first and last bytes kept, the middle counted. */
static void test_output_kept_head_and_tail(void **state)
{
	char *argv[] = {"sh", "-c",
	                "printf FIRST; head -c 8388608 /dev/zero | tr '\\0' x; printf LAST", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	char line[96];
	size_t left = 8388608 + 9 - CUCO_PROC_KEEP_HEAD - CUCO_PROC_KEEP_TAIL;

	(void)state;
	assert_int_equal(cuco_proc_run(argv, NULL, &out, NULL, 60, &st), 0);
	assert_true(st.exited);
	assert_int_equal(st.code, 0);
	snprintf(line, sizeof(line), "\n[... %zu bytes of output left out ...]\n", left);
	assert_int_equal(out.len, CUCO_PROC_KEEP_HEAD + strlen(line) + CUCO_PROC_KEEP_TAIL);
	assert_memory_equal(out.buf, "FIRSTxxx", 8);
	assert_non_null(strstr(out.buf, line));
	assert_string_equal(out.buf + out.len - 7, "xxxLAST");
	cuco_strbuf_release(&out);
}

/* Short output is kept whole, with no note. */
static void test_short_output_whole(void **state)
{
	char *argv[] = {"sh", "-c", "echo hello; echo oops >&2", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT, err = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;

	(void)state;
	assert_int_equal(cuco_proc_run(argv, NULL, &out, &err, 60, &st), 0);
	assert_string_equal(out.buf, "hello\n");
	assert_string_equal(err.buf, "oops\n");
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&err);
}

/* A child sees the allow-listed environment and what it was given, never a key. */
static void test_environment_scrubbed(void **state)
{
	char *argv[] = {"sh", "-c", "echo; env | sort", NULL};
	char *add[] = {"CUCO_GIVEN=1", "NCCL_DEBUG=WARN", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;

	(void)state;
	setenv("OPENAI_API_KEY", "sk-secret", 1);
	setenv("MY_LLM_TOKEN", "tok", 1);
	setenv("CUCO_STORE", "/tmp/store.db", 1);
	setenv("CUCO_MASTER_PORT", "29555", 1);
	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("UNRELATED_VARIABLE", "x", 1);
	assert_int_equal(cuco_proc_run(argv, add, &out, NULL, 60, &st), 0);
	assert_int_equal(st.code, 0);
	assert_null(strstr(out.buf, "sk-secret"));
	assert_null(strstr(out.buf, "MY_LLM_TOKEN"));
	assert_null(strstr(out.buf, "CUCO_STORE"));
	assert_null(strstr(out.buf, "UNRELATED_VARIABLE"));
	assert_non_null(strstr(out.buf, "\nCUCO_MASTER_PORT=29555\n"));
	assert_non_null(strstr(out.buf, "\nCUCO_GIVEN=1\n"));
	assert_non_null(strstr(out.buf, "\nNCCL_DEBUG=WARN\n")); /* given wins over inherited */
	assert_null(strstr(out.buf, "NCCL_DEBUG=INFO"));
	assert_non_null(strstr(out.buf, "\nPATH="));
	cuco_strbuf_release(&out);
}

/* A child may not leave a core file. */
static void test_no_core_files(void **state)
{
	char *argv[] = {"sh", "-c", "ulimit -c", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;

	(void)state;
	assert_int_equal(cuco_proc_run(argv, NULL, &out, NULL, 60, &st), 0);
	assert_string_equal(out.buf, "0\n");
	cuco_strbuf_release(&out);
}

/* 1 while pid runs (a zombie or a missing pid is not running). */
static int running(pid_t pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* The starter is killed with SIGKILL: the child it started goes too. */
static void test_child_dies_with_starter(void **state)
{
	int fds[2];
	pid_t starter, child = 0;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	starter = fork();
	assert_true(starter >= 0);
	if (starter == 0) {
		char *argv[] = {"sleep", "60", NULL};
		pid_t p = cuco_proc_start(argv, NULL, NULL, NULL);

		if (write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &child, sizeof(child)), (ssize_t)sizeof(child));
	close(fds[0]);
	assert_true(child > 0);
	assert_true(running(child));
	kill(starter, SIGKILL);
	waitpid(starter, NULL, 0);
	for (int i = 0; i < 200 && running(child); i++)
		usleep(10 * 1000);
	if (running(child)) {
		kill(child, SIGKILL);
		fail_msg("the child (sleep 60) outlived its starter");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_output_kept_head_and_tail),
	    cmocka_unit_test(test_short_output_whole),
	    cmocka_unit_test(test_child_dies_with_starter),
	    cmocka_unit_test(test_environment_scrubbed),
	    cmocka_unit_test(test_no_core_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
