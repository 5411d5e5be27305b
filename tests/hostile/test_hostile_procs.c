/*
 * test_hostile_procs.c - a candidate's processes outliving their run: a
 * setsid daemon holding the harness's stdout (a batch stalled past
 * --timeout), a compile's grandchild past the compile's time limit, and
 * the whole tree (a daemon, a slot's process) when cuco itself dies by
 * SIGKILL or SIGINT. Each run and compile is the first process of a PID
 * namespace of its own, killed whole; a slot dies with cuco.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "assert_text.h"
#include "hostile.h"
#include "search/slots.h"

static int setup(void **state)
{
	(void)state;
	return hostile_setup("procs");
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* Processes on the node whose command line holds mark (NUL-separated words as one string). */
static int count_marked(const char *mark)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;
		char p[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/cmdline", e->d_name);
		if (cuco_strbuf_read_file(&sb, p) == 0) {
			for (size_t i = 0; i < sb.len; i++)
				if (!sb.buf[i])
					sb.buf[i] = ' ';
			n += strstr(sb.buf, mark) != NULL;
		}
		snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
		cuco_strbuf_reset(&sb);
		if (cuco_strbuf_read_file(&sb, p) == 0)
			n += strstr(sb.buf, mark) != NULL;
		cuco_strbuf_release(&sb);
	}
	if (d)
		closedir(d);
	return n;
}

/* Wait up to s seconds for count_marked(mark) == want; 1 when it came. */
static int wait_marked(const char *mark, int want, double s)
{
	for (double t = cuco_now() + s; cuco_now() < t; usleep(20000))
		if (count_marked(mark) == want)
			return 1;
	return count_marked(mark) == want;
}

/* A daemon (setsid, holding stdout and stderr) left behind by the harness. */
static void test_daemon_holds_stdout(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	char script[1024], mark[32];
	double t0;

	(void)state;
	snprintf(mark, sizeof(mark), "sleep 300.%d", (int)getpid()); /* this test's own */
	snprintf(script, sizeof(script),
	         "setsid sh -c 'exec %s' &\necho '" HOSTILE_HONEST(0, 1) "' >&3", mark);
	for (int jail = 1; jail >= 0; jail--) {
		if (!jail)
			setenv("CUCO_SANDBOX_RUN_JAIL", "0", 1); /* without the view: the same */
		t0 = cuco_now();
		if (hostile_run(script, NULL, &res, &err))
			fail_msg("%s\n%s", err.msg, res.log.buf);
		unsetenv("CUCO_SANDBOX_RUN_JAIL");
		assert_non_null(hostile_result(&res, "cand"));
		cuco_run_result_release(&res);
		/* not the 140 s the run may take, nor the daemon's 300 */
		assert_true(cuco_now() - t0 < 20);
		if (!wait_marked(mark, 0, 5))
			fail_msg("the daemon outlived its run (view %d)", jail);
	}
}

/* A compile whose nvcc leaves a daemon and hangs past the compile's time limit. */
static void test_compile_timeout(void **state)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job job;
	struct cuco_err err;
	char nvcc[160], path[160], text[512], mark[32];
	double t0;

	(void)state;
	snprintf(mark, sizeof(mark), "sleep 301.%d", (int)getpid());
	hostile_path("toolkit/bin", nvcc, sizeof(nvcc));
	assert_int_equal(cuco_mkdir_p(nvcc), 0);
	hostile_path("toolkit/bin/nvcc", nvcc, sizeof(nvcc));
	snprintf(text, sizeof(text),
	         "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Cuda compilation tools, fake'; "
	         "exit 0; }\nsetsid sh -c 'exec %s' &\nsleep 100\n",
	         mark);
	hostile_write(nvcc, text, 0755);
	setenv("CUCO_NVCC", nvcc, 1);
	assert_int_equal(cuco_compile_opts_default(&o, &err), CUCO_OK);
	o.jobs = 1;
	o.timeout_s = 2;
	hostile_path("cand.cu", path, sizeof(path));
	cuco_compile_job_init(&job, "cand", path, "int x;\n");
	t0 = cuco_now();
	assert_int_equal(cuco_compile_many(&o, &job, 1, &err), CUCO_OK);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "nvcc killed after 2 s");
	assert_true(cuco_now() - t0 < 20);
	if (!wait_marked(mark, 0, 5))
		fail_msg("the compile's daemon outlived its time limit");
	cuco_compile_job_release(&job);
	unsetenv("CUCO_NVCC");
}

/* cuco (a child of the test here) killed by sig while its child's tree runs. */
static void cuco_dies(int sig, int n)
{
	char script[128], mark[32];
	pid_t cuco;

	snprintf(mark, sizeof(mark), "sleep 30%d.%d", n, (int)getpid());
	snprintf(script, sizeof(script), "setsid sh -c 'exec %s' & exec sleep 1000", mark);
	cuco = fork();
	if (cuco == 0) {
		char *argv[] = {"sh", "-c", script, NULL};
		struct cuco_proc_sched s;
		memset(&s, 0, sizeof(s));
		s.pidns = 1;
		if (cuco_proc_start_sched(argv, NULL, &s, NULL, NULL) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_true(cuco > 0);
	if (!wait_marked(mark, 1, 10)) {
		kill(cuco, SIGKILL);
		fail_msg("the tree never started");
	}
	kill(cuco, sig);
	waitpid(cuco, NULL, 0);
	if (!wait_marked(mark, 0, 5))
		fail_msg("the tree outlived cuco (signal %d)", sig);
}

static void test_cuco_dies(void **state)
{
	(void)state;
	cuco_dies(SIGKILL, 2);
	cuco_dies(SIGINT, 3);
}

/* A slot's process (and what it started) when cuco dies. */
static int slow_batch(void *ctx, const struct cuco_candidate *c, int n,
                      struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	(void)c;
	(void)n;
	(void)outs;
	(void)err;
	prctl(PR_SET_NAME, (const char *)ctx);
	sleep(1000);
	return CUCO_OK;
}

static void test_slots_die_with_cuco(void **state)
{
	char name[16];
	pid_t cuco;

	(void)state;
	snprintf(name, sizeof(name), "hslot%d", (int)getpid() % 1000000);
	cuco = fork();
	if (cuco == 0) {
		struct cuco_slots s;
		struct cuco_candidate c[2];
		struct cuco_eval_outcome outs[2];
		struct cuco_err err;
		memset(c, 0, sizeof(c));
		cuco_slots_plan(2, 1, 0, NULL, &s);
		for (int i = 0; i < 2; i++)
			cuco_eval_outcome_init(&outs[i]);
		(void)cuco_slots_run(&s, slow_batch, name, c, 2, outs, &err);
		_exit(0);
	}
	if (!wait_marked(name, 2, 10)) {
		kill(cuco, SIGKILL);
		fail_msg("the slots never started");
	}
	kill(cuco, SIGKILL);
	waitpid(cuco, NULL, 0);
	if (!wait_marked(name, 0, 5))
		fail_msg("a slot outlived cuco");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_daemon_holds_stdout),
	    cmocka_unit_test(test_compile_timeout),
	    cmocka_unit_test(test_cuco_dies),
	    cmocka_unit_test(test_slots_die_with_cuco),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
