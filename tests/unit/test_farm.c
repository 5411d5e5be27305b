/* test_farm.c - the Slurm farm's pure parts: a step lost for the node's reason told
 * apart from a candidate's own failure, result lines counted, --farm-args split,
 * the run's tag and directory, the farm a process routes harness runs through. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "farm/slurm.h"
#include "rm_tree.h"

/* An empty executable file at path: 0 or -1. */
static int make_executable(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("#!/bin/sh\nexit 1\n", f);
	fclose(f);
	return chmod(path, 0755);
}

static void test_lost(void **state)
{
	char why[320];

	(void)state;
	/* what srun and slurmstepd print when the step ends for the node's reason */
	assert_true(cuco_farm_lost("srun: Job step aborted: Waiting up to 32 seconds for job step "
	                           "to finish.\nslurmstepd-n1: error: *** STEP 12.3 ON n1 "
	                           "CANCELLED AT 2026-12-02T13:23:20 ***\n",
	                           why, sizeof(why)));
	assert_non_null(strstr(why, "STEP 12.3 ON n1 CANCELLED AT"));
	assert_true(cuco_farm_lost("slurmstepd: error: *** JOB 7 ON n3 CANCELLED AT 2026-12-02 "
	                           "DUE TO TIME LIMIT ***\n",
	                           why, sizeof(why)));
	assert_true(cuco_farm_lost("slurmstepd: error: *** STEP 7.0 ON n3 CANCELLED AT x DUE TO "
	                           "PREEMPTION ***\n",
	                           NULL, 0));
	assert_true(cuco_farm_lost("srun: error: Node failure on n5\n", why, sizeof(why)));
	assert_string_equal(why, "srun: error: Node failure on n5");
	assert_true(cuco_farm_lost("srun: error: Unable to create step for job 9: Job/step "
	                           "already completing or completed\n",
	                           NULL, 0));
	/* a candidate's own failure is not a loss */
	assert_false(cuco_farm_lost("srun: error: n1: task 1: Segmentation fault (core dumped)\n",
	                            why, sizeof(why)));
	assert_false(
	    cuco_farm_lost("srun: error: n1: task 0: Exited with exit code 11\n", NULL, 0));
	assert_false(cuco_farm_lost("", NULL, 0));
}

static void test_never_started(void **state)
{
	(void)state;
	assert_true(cuco_farm_never_started("srun: job 12 queued and waiting for resources\n"));
	assert_true(cuco_farm_never_started("srun: Job 2 step creation temporarily disabled, "
	                                    "retrying (Requested nodes are busy)\n"));
	assert_false(cuco_farm_never_started("srun: job 12 queued and waiting for resources\n"
	                                     "srun: job 12 has been allocated resources\n"));
	assert_false(cuco_farm_never_started("srun: Job 2 step creation temporarily disabled, "
	                                     "retrying (Requested nodes are busy)\n"
	                                     "srun: Step created for StepId=2.5\n"));
	assert_false(cuco_farm_never_started(""));
}

static void test_result_lines(void **state)
{
	(void)state;
	assert_int_equal(cuco_farm_result_lines(""), 0);
	assert_int_equal(cuco_farm_result_lines("{\"harness\":1,\"status\":\"ok\"}\n"), 1);
	assert_int_equal(cuco_farm_result_lines("{\"harness\":1,\"status\":\"ok\"}\n"
	                                        "noise \"harness\"\n"
	                                        "{\"harness\":1,\"status\":\"crash\"}"),
	                 2);
	/* a line cut off before its key is not a result */
	assert_int_equal(cuco_farm_result_lines("{\"harness\":1}\n{\"harn"), 1);
}

static void test_init_args(void **state)
{
	struct cuco_farm f;
	struct cuco_err err;
	char many[1024] = "";
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char dir[] = "/tmp/cuco-test-farm-XXXXXX", srun[64];

	(void)state;
	/* a fake srun on PATH: init only looks for it */
	assert_non_null(mkdtemp(dir));
	snprintf(srun, sizeof(srun), "%s/srun", dir);
	assert_int_equal(make_executable(srun), 0);
	setenv("PATH", dir, 1);
	unsetenv("SLURM_JOB_ID");
	cuco_err_clear(&err);
	assert_int_equal(cuco_farm_init(&f, 2, "gpu", "  --time=10\t--qos=short ", &err), CUCO_OK);
	assert_int_equal(f.nargs, 2);
	assert_string_equal(f.args[0], "--time=10");
	assert_string_equal(f.args[1], "--qos=short");
	assert_string_equal(f.partition, "gpu");
	assert_string_equal(f.job, "");
	assert_int_equal(f.requeues, CUCO_FARM_REQUEUES);
	setenv("SLURM_JOB_ID", "4242", 1);
	assert_int_equal(cuco_farm_init(&f, 4, NULL, NULL, &err), CUCO_OK);
	assert_string_equal(f.job, "4242");
	assert_int_equal(f.nargs, 0);
	unsetenv("SLURM_JOB_ID");
	for (int i = 0; i < CUCO_FARM_MAX_ARGS + 1; i++)
		snprintf(many + 3 * i, sizeof(many) - 3 * (size_t)i, "-x ");
	assert_int_equal(cuco_farm_init(&f, 2, NULL, many, &err), CUCO_ERR_USAGE);
	assert_non_null(strstr(err.msg, "--farm-args: more than"));
	/* no srun: the user is told where to run cuco */
	setenv("PATH", "/nonexistent", 1);
	assert_int_equal(cuco_farm_init(&f, 2, NULL, NULL, &err), CUCO_ERR_USAGE);
	assert_non_null(strstr(err.msg, "srun is not on PATH"));
	if (path)
		setenv("PATH", path, 1);
	free(path);
	rm_tree(dir);
}

static void test_run_and_use(void **state)
{
	struct cuco_farm f, g;
	struct cuco_runner r;
	struct cuco_err err;
	char dir[] = "/tmp/cuco-test-farm-XXXXXX", store[128];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("CUCO_STATE", dir, 1);
	snprintf(store, sizeof(store), "%s/x.db", dir);
	memset(&f, 0, sizeof(f));
	memset(&g, 0, sizeof(g));
	cuco_err_clear(&err);
	assert_int_equal(cuco_farm_set_run(&f, store, 7, &err), CUCO_OK);
	assert_int_equal(strncmp(f.tag, "cuco-", 5), 0);
	assert_non_null(strstr(f.tag, "-r7"));
	assert_int_equal(stat(f.dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* the same store and run: the same tag (a resume finds its steps); another run: not */
	assert_int_equal(cuco_farm_set_run(&g, store, 7, &err), CUCO_OK);
	assert_string_equal(f.tag, g.tag);
	assert_int_equal(cuco_farm_set_run(&g, store, 8, &err), CUCO_OK);
	assert_string_not_equal(f.tag, g.tag);
	cuco_farm_clean_run(&f);
	assert_int_not_equal(stat(f.dir, &st), 0);
	/* the farm as the run options' runner: its steps' size, the farm as context */
	cuco_farm_runner(&f, &r);
	assert_string_equal(r.name, "slurm");
	assert_int_equal(r.ranks, f.ranks);
	assert_ptr_equal(r.ctx, &f);
	assert_non_null(r.start);
	assert_non_null(r.args);
	assert_non_null(r.step);
	/* last: the flags stay set for the process (test_steps runs before) */
	assert_false(cuco_farm_interrupted());
	r.cancel(&r);
	assert_true(cuco_farm_interrupted());
	rm_tree(dir);
}

/* A stand-in srun: drops its options and runs the command, or fails as $CUCO_TEST_SRUN says. */
static const char fake_srun[] =
    "#!/bin/sh\n"
    "while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done\n"
    "case ${CUCO_TEST_SRUN:-} in\n"
    "unshared) echo \"cat: $2: No such file or directory\" >&2; exit 1 ;;\n"
    "cancelled) echo 'slurmstepd: error: *** STEP 3.1 ON n1 CANCELLED AT 2026-12-02 ***' >&2;"
    " exit 1 ;;\n"
    "esac\n"
    "exec \"$@\"\n";

static void test_steps(void **state)
{
	struct cuco_farm f;
	struct cuco_err err;
	struct cuco_strbuf out = CUCO_STRBUF_INIT, log = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	char dir[] = "/tmp/cuco-test-farm-XXXXXX", srun[80], store[80], so[80];
	char harness[] = CUCO_SOURCE_DIR "/tests/fixtures/farm/cuco-harness";
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL, newpath[4200];
	char prog[128];
	char *argv[] = {harness, "--shape", "s", "--launch", "env", "--program", prog, NULL};
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(srun, sizeof(srun), "%s/srun", dir);
	fp = fopen(srun, "w");
	assert_non_null(fp);
	fputs(fake_srun, fp);
	fclose(fp);
	assert_int_equal(chmod(srun, 0755), 0);
	snprintf(newpath, sizeof(newpath), "%s:%s", dir, path ? path : "/usr/bin:/bin");
	setenv("PATH", newpath, 1);
	setenv("CUCO_STATE", dir, 1);
	setenv("CUDA_VISIBLE_DEVICES", "0", 1);
	unsetenv("SLURM_JOB_ID");
	unsetenv("CUCO_TEST_SRUN");
	snprintf(store, sizeof(store), "%s/x.db", dir);
	snprintf(so, sizeof(so), "%s/p.so", dir);
	assert_int_equal(make_executable(so), 0);
	snprintf(prog, sizeof(prog), "p=%s", so);
	cuco_err_clear(&err);
	assert_int_equal(cuco_farm_init(&f, 1, NULL, NULL, &err), CUCO_OK);
	assert_int_equal(cuco_farm_set_run(&f, store, 3, &err), CUCO_OK);

	/* the run directory: seen by the step, or said plainly that it is not */
	assert_int_equal(cuco_farm_check_shared(&f, NULL, &err), CUCO_OK);
	setenv("CUCO_TEST_SRUN", "unshared", 1);
	assert_int_equal(cuco_farm_check_shared(&f, NULL, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "is not on a filesystem the compute nodes see"));
	unsetenv("CUCO_TEST_SRUN");

	/* a step's result comes back; the same command again is taken from the run directory */
	assert_int_equal(cuco_farm_step(&f, argv, NULL, 60, &out, &log, &st, &err), 0);
	assert_int_equal(cuco_farm_result_lines(out.buf), 1);
	assert_non_null(strstr(out.buf, "\"name\":\"p\""));
	cuco_strbuf_reset(&out);
	cuco_strbuf_reset(&log);
	setenv("CUCO_TEST_SRUN", "cancelled", 1); /* it would be lost, were it run */
	assert_int_equal(cuco_farm_step(&f, argv, NULL, 60, &out, &log, &st, &err), 0);
	assert_int_equal(cuco_farm_result_lines(out.buf), 1);
	assert_non_null(strstr(log.buf, "finished before"));
	assert_false(cuco_farm_gave_up());

	/* another command, lost every time: queued again up to the bound, then given up */
	prog[0] = 'q';
	f.requeues = 1;
	cuco_strbuf_reset(&log);
	assert_int_equal(cuco_farm_step(&f, argv, NULL, 60, &out, &log, &st, &err), -1);
	assert_int_equal(err.code, CUCO_ERR_SYSTEM);
	assert_non_null(strstr(err.msg, "lost step"));
	assert_non_null(strstr(log.buf, "queued again (1 of 1)"));
	assert_true(cuco_farm_gave_up());
	unsetenv("CUCO_TEST_SRUN");
	unsetenv("CUDA_VISIBLE_DEVICES");
	if (path)
		setenv("PATH", path, 1);
	free(path);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&log);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lost),         cmocka_unit_test(test_never_started),
	    cmocka_unit_test(test_result_lines), cmocka_unit_test(test_init_args),
	    cmocka_unit_test(test_steps),        cmocka_unit_test(test_run_and_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
