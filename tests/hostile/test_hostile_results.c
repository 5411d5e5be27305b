/*
 * test_hostile_results.c - a candidate forges its results: records printed
 * on stdout (with spaces after the colons and without), after the harness's
 * own, stray bytes without a newline, records appended to a launcher's
 * result file or a file swapped in for it. The harness's result travels on a
 * descriptor the ranks do not hold (fork mode) or in a file cuco made and
 * reads through its own descriptor (a launcher), exactly one record per
 * rank, parsed as JSON: every attack fails, nothing forged is taken, and no
 * batch-mate loses its honest result.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>

#include "assert_text.h"
#include "hostile.h"

static int setup(void **state)
{
	(void)state;
	return hostile_setup("results");
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* Both programs kept their honest times. */
static void assert_honest(const struct cuco_run_result *res)
{
	const struct cuco_program_result *b = hostile_result(res, "baseline");
	const struct cuco_program_result *c = hostile_result(res, "cand");

	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(b->code, CUCO_OK);
	assert_int_equal(c->code, CUCO_OK);
	assert_true(b->median_us == 100);
	assert_true(c->median_us == 200);
}

/* Forged records on stdout and stderr, before and after the harness's own, and a stray byte. */
static void test_stdout_forgery(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(hostile_run("echo '" HOSTILE_FORGED "'\n"
	                             "echo '" HOSTILE_FORGED "' | tr -d ' '\n"
	                             "echo '" HOSTILE_FORGED "' >&2\n"
	                             "echo '" HOSTILE_HONEST(0, 1) "' >&3\n"
	                                                           "echo '" HOSTILE_FORGED "'\n"
	                                                           "printf x\n",
	                             NULL, &res, &err),
	                 CUCO_OK);
	assert_honest(&res);
	assert_contains(res.log.buf, "\"median_us\": 0.0001"); /* a log, never read for results */
	cuco_run_result_release(&res);

	/* a stray byte alone (a kernel's printf) fails nothing */
	assert_int_equal(hostile_run("printf '{'\necho '" HOSTILE_HONEST(0, 1) "' >&3\nprintf '{'",
	                             NULL, &res, &err),
	                 CUCO_OK);
	assert_honest(&res);
	cuco_run_result_release(&res);

	/* the forgery alone is no result at all */
	assert_int_not_equal(hostile_run("echo '" HOSTILE_FORGED "'", NULL, &res, &err), CUCO_OK);
	assert_null(hostile_result(&res, "cand"));
	cuco_run_result_release(&res);
}

/* A second record on the harness's channel is no result: never the forged one. */
static void test_channel_second_record(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	int rc;

	(void)state;
	rc = hostile_run("echo '" HOSTILE_FORGED "' >&3\necho '" HOSTILE_HONEST(0, 1) "' >&3", NULL,
	                 &res, &err);
	assert_int_not_equal(rc, CUCO_OK);
	assert_null(hostile_result(&res, "cand"));
	cuco_run_result_release(&res);
}

/*
 * A launcher's ranks share a file: a forged record appended after the
 * honest ones, a rank's second record, a line that is no record; each fails
 * the program announced before it, never the batch-mates' honest results.
 */
static void test_launcher_file(void **state)
{
#define HONEST2                                                 \
	"echo '" HOSTILE_HONEST(1, 2) "' >> \"$RESULT_FILE\"\n" \
	                              "echo '" HOSTILE_HONEST(0, 2) "' >> \"$RESULT_FILE\"\n"
	static const char *const attacks[] = {
	    /* appended after both ranks' records */
	    HONEST2 "[ -n \"$CAND\" ] && { echo '#program cand'; echo '" HOSTILE_FORGED "'; } >> "
	            "\"$RESULT_FILE\"",
	    /* before rank 0's own */
	    "[ -n \"$CAND\" ] && { echo '#program cand'; echo '" HOSTILE_FORGED "'; } >> "
	    "\"$RESULT_FILE\"\n" HONEST2,
	    /* stray bytes on the channel */
	    "[ -n \"$CAND\" ] && { echo '#program cand'; printf '{\"harness\":1'; } >> "
	    "\"$RESULT_FILE\"\n" HONEST2,
	};
#undef HONEST2

	(void)state;
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		struct cuco_run_result res;
		struct cuco_err err;
		const struct cuco_program_result *b, *c;

		assert_int_equal(hostile_run(attacks[i], "env", &res, &err), CUCO_OK);
		b = hostile_result(&res, "baseline"); /* run again without cand: honest */
		assert_non_null(b);
		assert_int_equal(b->code, CUCO_OK);
		assert_true(b->median_us == 100);
		c = hostile_result(&res, "cand");
		assert_non_null(c);
		assert_int_not_equal(c->code, CUCO_OK);
		assert_contains(c->error, "result channel");
		assert_true(isnan(c->median_us));
		cuco_run_result_release(&res);
	}
}

/* The file swapped for another of the candidate's: cuco reads the one it made. */
static void test_launcher_file_swapped(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(
	    hostile_run("exec 4>> \"$RESULT_FILE\"\n"
	                "mv \"$RESULT_FILE\" \"$RESULT_FILE.away\" || rm -f \"$RESULT_FILE\"\n"
	                "echo '" HOSTILE_FORGED "' > \"$RESULT_FILE\"\n"
	                "echo '" HOSTILE_HONEST(0, 1) "' >&4",
	                "env", &res, &err),
	    CUCO_OK);
	assert_honest(&res);
	cuco_run_result_release(&res);
	/* a symbolic link in its place: the harness's ranks refuse to follow it */
	assert_int_equal(hostile_run("exec 4>> \"$RESULT_FILE\"\nrm -f \"$RESULT_FILE\"\n"
	                             "ln -s /tmp/cuco-hostile-nowhere \"$RESULT_FILE\"\n"
	                             "echo '" HOSTILE_HONEST(0, 1) "' >&4",
	                             "env", &res, &err),
	                 CUCO_OK);
	assert_honest(&res);
	assert_false(cuco_file_exists("/tmp/cuco-hostile-nowhere"));
	cuco_run_result_release(&res);
}

/* The records of a shared file, read as JSON: rank by rank, exactly one each. */
static void test_records_pick(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(cuco_run_records_pick("", &out), -1);
	assert_int_equal(cuco_run_records_pick("#program a\n", &out), -1);
	assert_int_equal(
	    cuco_run_records_pick(HOSTILE_HONEST(1, 2) "\n" HOSTILE_HONEST(0, 2) "\n", &out), 0);
	assert_contains(out.buf, "\"rank\":0");
	/* a rank missing */
	assert_int_equal(cuco_run_records_pick(HOSTILE_HONEST(0, 2) "\n", &out), 0);
	assert_contains(out.buf, "rank 1 exited without a result");
	/* text matching would take these; JSON does not */
	assert_int_equal(
	    cuco_run_records_pick(
	        "{\"harness\" garbage \"status\":\"ok\"}\n" HOSTILE_HONEST(0, 1) "\n", &out),
	    0);
	assert_contains(out.buf, "no rank's record");
	assert_int_equal(cuco_run_records_pick(
	                     "#program cand\n" HOSTILE_HONEST(0, 1) "\n" HOSTILE_FORGED "\n", &out),
	                 0);
	assert_contains(out.buf, "\"program\":\"cand\"");
	assert_contains(out.buf, "second record");
	cuco_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stdout_forgery), cmocka_unit_test(test_channel_second_record),
	    cmocka_unit_test(test_launcher_file),  cmocka_unit_test(test_launcher_file_swapped),
	    cmocka_unit_test(test_records_pick),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
