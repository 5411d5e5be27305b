/*
 * test_runner.c - a runner in the run options (cascade/runner.h) carries the
 * harness runs: its ranks name the shape's command line, its words and
 * arguments are in the command, its result text is read as a shared
 * channel's records, its own failure is the run's; and the run options
 * without one name this node's runners.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cascade/cascade.h"
#include "cascade/runner.h"

#define MANIFEST CUCO_SOURCE_DIR "/tests/fixtures/cascade/manifest_reference.json"

/* What the fake runner saw, and what it answers. */
struct fake {
	int started, fail;
	char command[4096];
};

static int fake_start(const struct cuco_runner *r, const struct cuco_run_opts *o,
                      struct cuco_run_job *job, struct cuco_err *err)
{
	struct fake *f = r->ctx;

	(void)o;
	(void)err;
	f->started++;
	cuco_run_job_push_words(job, "fake-launch --here");
	return CUCO_OK;
}

static int fake_args(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_err *err)
{
	(void)r;
	(void)o;
	(void)err;
	job->records = 1;
	cuco_run_job_push(job, "--launch");
	cuco_run_job_push(job, "env");
	return CUCO_OK;
}

/* Two ranks' records, as a farm's result file holds them; or the runner's own failure. */
static int fake_step(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_strbuf *out, struct cuco_strbuf *log,
                     struct cuco_proc_status *st, struct cuco_err *err)
{
	struct fake *f = r->ctx;
	size_t n = 0;

	(void)o;
	for (int i = 0; job->argv[i]; i++)
		n += (size_t)snprintf(f->command + n, sizeof(f->command) - n, "%s%s", i ? " " : "",
		                      job->argv[i]);
	if (f->fail)
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "the fake farm gave up"), -2;
	for (int rank = 0; rank < 2; rank++)
		cuco_strbuf_addf(out,
		                 "{\"harness\":1,\"status\":\"ok\",\"gpu\":\"fake\",\"rank\":%d,"
		                 "\"ranks\":2,\"programs\":[{\"name\":\"p\",\"status\":\"ok\","
		                 "\"verified\":true,\"rel_err\":0,\"mismatched\":0,"
		                 "\"median_us\":%d.0}]}\n",
		                 rank, 5 + rank);
	cuco_strbuf_adds(log, "fake step ran\n");
	memset(st, 0, sizeof(*st));
	st->exited = 1;
	return 0;
}

static void run(struct fake *f, int ranks, struct cuco_run_result *res, int *rc,
                struct cuco_err *err)
{
	struct cuco_runner r = {.name = "fake",
	                        .ranks = ranks,
	                        .start = fake_start,
	                        .args = fake_args,
	                        .step = fake_step,
	                        .ctx = f};
	struct cuco_run_opts o;
	struct cuco_manifest m;
	struct cuco_run_program p = {"p", "/nonexistent/p.so", 1};

	if (cuco_manifest_load(MANIFEST, &m, err))
		fail_msg("fixture manifest: %s", err->msg);
	cuco_run_opts_default(&o);
	o.runner = &r;
	cuco_run_result_init(res);
	*rc = cuco_run_programs(&o, &m, "/nonexistent/workload.so", &m.shapes[0], &p, 1, res, err);
	cuco_manifest_release(&m);
}

static void test_runner_carries_the_run(void **state)
{
	struct fake f;
	struct cuco_run_result res;
	struct cuco_err err;
	int rc;

	(void)state;
	memset(&f, 0, sizeof(f));
	cuco_err_clear(&err);
	run(&f, 4, &res, &rc, &err);
	if (rc != CUCO_OK)
		fail_msg("cuco_run_programs: %s", err.msg);
	assert_int_equal(f.started, 1);
	/* the runner's words first, the harness next; its ranks in the shape's command line */
	assert_non_null(strstr(f.command, "fake-launch --here "));
	assert_true(strstr(f.command, "fake-launch") == f.command);
	assert_non_null(strstr(f.command, "--workload-so /nonexistent/workload.so"));
	assert_non_null(strstr(f.command, "--argv -M 256 -n 4"));
	assert_non_null(strstr(f.command, "--launch env"));
	assert_null(strstr(f.command, "--result-fd"));
	/* one record per rank: rank 0's is the run's */
	assert_int_equal(res.nresults, 1);
	assert_int_equal(res.results[0].code, CUCO_OK);
	assert_true(res.results[0].median_us == 5.0);
	assert_non_null(strstr(res.log.buf, "fake step ran"));
	cuco_run_result_release(&res);
}

static void test_runner_failure_is_the_runs(void **state)
{
	struct fake f;
	struct cuco_run_result res;
	struct cuco_err err;
	int rc;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.fail = 1;
	cuco_err_clear(&err);
	run(&f, 0, &res, &rc, &err);
	assert_int_equal(rc, CUCO_ERR_SYSTEM);
	assert_non_null(strstr(err.msg, "the fake farm gave up"));
	/* ranks 0: the run options' (2) */
	assert_non_null(strstr(f.command, "--argv -M 256 -n 2"));
	cuco_run_result_release(&res);
}

static void test_node_runners(void **state)
{
	struct cuco_run_opts o;

	(void)state;
	cuco_run_opts_default(&o);
	assert_ptr_equal(cuco_runner_of(&o), &cuco_runner_fork);
	assert_string_equal(cuco_runner_of(&o)->name, "fork");
	o.launcher = "mpirun -np 2";
	assert_ptr_equal(cuco_runner_of(&o), &cuco_runner_launcher);
	o.launcher = "";
	assert_ptr_equal(cuco_runner_of(&o), &cuco_runner_fork);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runner_carries_the_run),
	    cmocka_unit_test(test_runner_failure_is_the_runs),
	    cmocka_unit_test(test_node_runners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
