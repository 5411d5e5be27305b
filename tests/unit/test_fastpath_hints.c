/*
 * test_fastpath_hints.c - the fast path given site hints, as the lift gives them: exactly the
 * named sites transformed, anywhere in the file, groups from the hints, a tensors expression,
 * the one-line ABI wrappers wrapped, hints that do not match refused by site; nvcc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fastpath/fastpath.h"
#include "fastpath_fixture.h"
#include "program/design_space.h"
#include "program/directive.h"

/* Where the hinted seeds go, for the one nvcc run at the end. */
static char out_dir[256];

/* Line and column (1-based, bytes) where the k-th (0-based) occurrence of needle begins. */
static struct cuco_fastpath_hint site_of(const char *src, const char *needle, int k,
                                         const char *call)
{
	struct cuco_fastpath_hint h = {0, 0, call};
	const char *p = strstr(src, needle);
	for (; p != NULL && k > 0; k--)
		p = strstr(p + 1, needle);
	if (p == NULL)
		fail_msg("'%s' is not in the fixture", needle);
	h.line = 1;
	const char *bol = src;
	for (const char *q = src; q < p; q++)
		if (*q == '\n') {
			h.line++;
			bol = q + 1;
		}
	h.column = (int)(p - bol) + 1;
	return h;
}

/* The lifted fixture's step: an all-reduce, a helper's group (send/recv in a loop), a group of
 * all-reduces in a loop, a legacy broadcast; a warm-up all-reduce before the step and an
 * all-gather after it are not sites. Hints in no particular order. */
static int lifted_hints(const char *src, struct cuco_fastpath_hint *h)
{
	int n = 0;
	h[n++] = site_of(src, "ncclBcast(y", 0, "ncclBcast");
	h[n++] = site_of(src, "ncclAllReduce(x, y, n, ncclFloat32, ncclAvg", 0, "ncclAllReduce");
	h[n++] = site_of(src, "ncclGroupStart()", 0, "ncclGroupStart");
	h[n++] = site_of(src, "ncclSend(", 0, "ncclSend");
	h[n++] = site_of(src, "ncclRecv(", 0, "ncclRecv");
	h[n++] = site_of(src, "ncclGroupEnd()", 0, "ncclGroupEnd");
	h[n++] = site_of(src, "ncclGroupStart()", 1, "ncclGroupStart");
	h[n++] = site_of(src, "ncclAllReduce(x + k", 0, "ncclAllReduce");
	h[n++] = site_of(src, "ncclGroupEnd()", 1, "ncclGroupEnd");
	return n;
}

static void test_lifted(void **unused)
{
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report report;
	struct cuco_strbuf src = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	struct cuco_fastpath_hint hints[16];
	struct cuco_err err;
	(void)unused;
	read_fixture("lifted.cu", &src);
	opts_default(&opts);
	opts.hints = hints;
	opts.nhints = lifted_hints(src.buf, hints);
	opts.tensors_expr = "cuco_lift_tensors()";
	cuco_fastpath_report_init(&report);
	if (cuco_fastpath_transform("lifted.cu", src.buf, &opts, &out, &report, &err) != CUCO_OK)
		fail_msg("%s", err.msg);

	/* one report entry per hint, in source order, each naming its hint */
	static const int kinds[] = {
	    CUCO_FASTPATH_GROUP_START, CUCO_FASTPATH_SEND,      CUCO_FASTPATH_RECV,
	    CUCO_FASTPATH_GROUP_END,   CUCO_FASTPATH_ALLREDUCE, CUCO_FASTPATH_GROUP_START,
	    CUCO_FASTPATH_ALLREDUCE,   CUCO_FASTPATH_GROUP_END, CUCO_FASTPATH_BCAST};
	static const int hint_of[] = {2, 3, 4, 5, 1, 6, 7, 8, 0};
	static const char *const repl[] = {
	    "cuco_seed_group_start", "cuco_seed_send",        "cuco_seed_recv",
	    "cuco_seed_group_end",   "cuco_seed_allreduce_0", "cuco_seed_group_start",
	    "cuco_seed_allreduce_1", "cuco_seed_group_end",   "cuco_seed_bcast_2"};
	assert_int_equal(report.nsites, 9);
	for (int k = 0; k < 9; k++) {
		assert_int_equal(report.sites[k].kind, kinds[k]);
		assert_int_equal(report.sites[k].hint, hint_of[k]);
		assert_int_equal(report.sites[k].line, hints[hint_of[k]].line);
		assert_int_equal(report.sites[k].column, hints[hint_of[k]].column);
		assert_string_equal(report.sites[k].call, hints[hint_of[k]].call);
		assert_string_equal(report.sites[k].replacement, repl[k]);
	}
	assert_string_equal(report.sites[4].op, "ncclAvg");
	assert_string_equal(report.sites[4].dtype, "ncclFloat32");
	assert_int_equal(report.ngroups, 2);
	assert_int_equal(report.ncollectives, 5);

	/* the tensors expression, the group of the helper's loop, the group of all-reduces */
	assert_non_null(strstr(out.buf, "NCCLCHECK(cuco_seed_send(&cuco_seed_group_0, "
	                                "\"lifted.cu:53:13\", cuco_lift_tensors(), buf, n,"));
	assert_non_null(strstr(out.buf, "NCCLCHECK(cuco_seed_recv(&cuco_seed_group_0, "));
	assert_non_null(strstr(out.buf, "NCCLCHECK(cuco_seed_group_end(&cuco_seed_group_0, "
	                                "\"lifted.cu:56:12\", cuco_lift_tensors(), 0));"));
	assert_non_null(strstr(out.buf,
	                       "NCCLCHECK(cuco_seed_allreduce_1(cuco_lift_tensors(), x + k "
	                       "* n, x + k * n, n, ncclFloat32, ncclMax, comm, s));"));
	assert_non_null(strstr(out.buf, "NCCLCHECK(cuco_seed_group_end(&cuco_seed_group_1, "));
	assert_non_null(strstr(out.buf, "NCCLCHECK(cuco_seed_bcast_2(cuco_lift_tensors(), y, n, "));
	/* every other NCCL call is left alone: the warm-up, the all-gather after the step, setup */
	assert_non_null(strstr(out.buf, "NCCLCHECK(ncclAllReduce(x, y, n, ncclFloat32, ncclSum, "
	                                "comm, s));"));
	assert_non_null(
	    strstr(out.buf, "NCCLCHECK(ncclAllGather(y, x, n, ncclFloat32, comm, s));"));
	assert_non_null(strstr(out.buf, "NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));"));
	assert_non_null(strstr(out.buf, "ncclCommDestroy(comm);"));
	/* the one-line ABI wrappers renamed and wrapped */
	assert_non_null(strstr(out.buf,
	                       "extern \"C\" int cuco_host_program_init(struct cuco_ctx *c, "
	                       "void **s) { return lift_init(c, s); }"));
	assert_non_null(strstr(out.buf, "extern \"C\" int cuco_host_program_requirements("));
	assert_int_equal(count_substr(out.buf, "extern \"C\" int cuco_program_init("), 1);
	assert_int_equal(count_substr(out.buf, "extern \"C\" int cuco_program_requirements("), 1);
	assert_non_null(strstr(out.buf, "return cuco_host_program_init(ctx, state);"));
	assert_non_null(strstr(out.buf, "#define CUCO_SEED_HAS_GROUPS 1"));

	/* the directive is first and lies in the design space */
	struct cuco_directive d;
	struct cuco_design_space ds;
	assert_int_equal(cuco_directive_parse("lifted.cu", out.buf, &d, &err), CUCO_OK);
	assert_int_equal(
	    cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds, &err), CUCO_OK);
	if (cuco_directive_validate(&d, &ds, NULL, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	cuco_directive_release(&d);
	cuco_design_space_release(&ds);

	write_seed(out_dir, "lifted.cu", out.buf);
	cuco_fastpath_report_release(&report);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&src);
}

/* A cuco program given hints: only those sites, and collectives outside run() are fine;
 * without a tensors expression run()'s parameter is used. */
static void test_hints_in_program(void **unused)
{
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report report;
	struct cuco_strbuf src = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	struct cuco_fastpath_hint h[1];
	struct cuco_err err;
	(void)unused;
	read_fixture("ops.cu", &src);
	h[0] = site_of(src.buf, "ncclBcast(", 0, "ncclBcast");
	opts_default(&opts);
	opts.hints = h;
	opts.nhints = 1;
	cuco_fastpath_report_init(&report);
	if (cuco_fastpath_transform("ops.cu", src.buf, &opts, &out, &report, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	assert_int_equal(report.nsites, 1);
	assert_int_equal(report.sites[0].kind, CUCO_FASTPATH_BCAST);
	assert_non_null(strstr(out.buf, "cuco_seed_bcast_0(t, t[12].ptr, n, ncclInt8,"));
	assert_non_null(strstr(out.buf, "NCCLCHECK(ncclAllReduce(in, t[1].ptr, n, st->dtype,"));
	cuco_fastpath_report_release(&report);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&src);
}

/* Transform src with hints; the error must be code and message msg, nothing written. */
static void expect_hint_error(const char *src, const struct cuco_fastpath_hint *h, int n,
                              const char *tensors, int code, const char *msg)
{
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report report;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_err err;
	opts_default(&opts);
	opts.hints = h;
	opts.nhints = n;
	opts.tensors_expr = tensors;
	cuco_fastpath_report_init(&report);
	cuco_err_clear(&err);
	int rc = cuco_fastpath_transform("l.cu", src, &opts, &out, &report, &err);
	if (rc != code || strcmp(err.msg, msg) != 0)
		fail_msg("got %d \"%s\", want %d \"%s\"", rc, err.msg, code, msg);
	assert_int_equal(out.len, 0);
	assert_int_equal(report.nsites, 0);
	cuco_fastpath_report_release(&report);
}

static const char lifted_head[] =
    "#include <cuco/program.h>\n"
    "extern \"C\" int cuco_program_requirements(const struct cuco_ctx *c, struct "
    "cuco_requirements *r) { return 0; }\n"
    "extern \"C\" int cuco_program_init(struct cuco_ctx *c, void **s) { return 0; }\n"
    "int main(void)\n"
    "{\n";

static void test_bad_hints(void **unused)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	(void)unused;
	cuco_strbuf_adds(&src, lifted_head);
	cuco_strbuf_adds(&src,
	                 "\tncclAllReduce(a, b, 4, ncclFloat32, ncclSum, c, s); // ncclBcast\n"
	                 "\tncclGroupStart();\n"
	                 "\tncclSend(a, 4, ncclFloat32, 1, c, s);\n"
	                 "#define AR ncclAllReduce(a, b, 4, ncclFloat32, ncclSum, c, s)\n"
	                 "\tx.ncclAllReduce(a, b);\n"
	                 "}\n");
	const char *t = "cuco_lift_tensors()";
	struct cuco_fastpath_hint ar = {6, 2, "ncclAllReduce"};
	/* the token there is another call */
	struct cuco_fastpath_hint h1[] = {{6, 2, "ncclBroadcast"}};
	expect_hint_error(
	    src.buf, h1, 1, t, CUCO_ERR_INVALID,
	    "l.cu:6:2: site hint 0 expects ncclBroadcast here, found 'ncclAllReduce'");
	/* inside a comment: no token begins there */
	struct cuco_fastpath_hint h2[] = {ar, {6, 57, "ncclBcast"}};
	expect_hint_error(src.buf, h2, 2, t, CUCO_ERR_INVALID,
	                  "l.cu:6:57: site hint 1 expects ncclBcast here, but no token begins at "
	                  "this line and column (a comment, a literal, white space, or a file "
	                  "other than the one the hint was made for?)");
	/* a call the fast path does not transform */
	struct cuco_fastpath_hint h3[] = {{6, 2, "ncclCommSplit"}};
	expect_hint_error(src.buf, h3, 1, t, CUCO_ERR_UNSUPPORTED,
	                  "l.cu:6:2: cannot transform site hint 0: ncclCommSplit is not a call the "
	                  "fast path transforms (it handles ncclAllGather, ncclReduceScatter, "
	                  "ncclAllReduce, ncclReduce, ncclBroadcast, ncclBcast, ncclAlltoAll and "
	                  "grouped ncclSend/ncclRecv)");
	/* the same call twice */
	struct cuco_fastpath_hint h4[] = {ar, ar};
	expect_hint_error(src.buf, h4, 2, t, CUCO_ERR_INVALID,
	                  "l.cu:6:2: site hints 0 and 1 name the same call");
	/* a group start without its end among the hints */
	struct cuco_fastpath_hint h5[] = {{7, 2, "ncclGroupStart"}, {8, 2, "ncclSend"}};
	expect_hint_error(src.buf, h5, 2, t, CUCO_ERR_UNSUPPORTED,
	                  "l.cu:7:2: cannot transform ncclGroupStart at line 7: no ncclGroupEnd "
	                  "follows it among the site hints");
	/* a send outside a hinted group */
	struct cuco_fastpath_hint h6[] = {{8, 2, "ncclSend"}};
	expect_hint_error(src.buf, h6, 1, t, CUCO_ERR_UNSUPPORTED,
	                  "l.cu:8:2: cannot transform ncclSend at line 8: not between "
	                  "ncclGroupStart and ncclGroupEnd");
	/* in a macro */
	struct cuco_fastpath_hint h7[] = {{9, 12, "ncclAllReduce"}};
	expect_hint_error(src.buf, h7, 1, t, CUCO_ERR_UNSUPPORTED,
	                  "l.cu:9:12: cannot transform ncclAllReduce at line 9: it is inside a "
	                  "preprocessor directive (expand the macro by hand)");
	/* a member, not NCCL's function */
	struct cuco_fastpath_hint h8[] = {{10, 4, "ncclAllReduce"}};
	expect_hint_error(src.buf, h8, 1, t, CUCO_ERR_INVALID,
	                  "l.cu:10:4: site hint 0: ncclAllReduce here is not a call");
	/* no cuco_program_run and no tensors expression */
	struct cuco_fastpath_hint h9[] = {ar};
	expect_hint_error(
	    src.buf, h9, 1, NULL, CUCO_ERR_INVALID,
	    "l.cu:6:2: cannot transform ncclAllReduce: no cuco_program_run parameter names the "
	    "tensor set here; give the tensors expression (struct "
	    "cuco_fastpath_opts.tensors_expr, e.g. cuco_lift_tensors())");
	/* a site outside the cuco_program_run of a program that has one: run()'s parameter is out
	 * of scope there */
	struct cuco_strbuf prog = CUCO_STRBUF_INIT;
	cuco_strbuf_adds(&prog, lifted_head);
	cuco_strbuf_adds(&prog,
	                 "\treturn 0;\n}\n"
	                 "static int helper(void *a, void *b, ncclComm_t c, cudaStream_t s)\n"
	                 "{\n\treturn ncclAllReduce(a, b, 4, ncclFloat32, ncclSum, c, s);\n}\n"
	                 "extern \"C\" int cuco_program_run(void *st, const struct "
	                 "cuco_tensor *t, cudaStream_t s)\n{\n\treturn 0;\n}\n");
	struct cuco_fastpath_hint h10[] = {{10, 9, "ncclAllReduce"}};
	expect_hint_error(
	    prog.buf, h10, 1, NULL, CUCO_ERR_INVALID,
	    "l.cu:10:9: cannot transform ncclAllReduce: no cuco_program_run parameter "
	    "names the tensor set here; give the tensors expression (struct "
	    "cuco_fastpath_opts.tensors_expr, e.g. cuco_lift_tensors())");
	cuco_strbuf_release(&prog);
	/* an expression on two lines */
	expect_hint_error(src.buf, h9, 1, "a\nb", CUCO_ERR_INVALID,
	                  "fast path options: tensors_expr must be one line of C, not empty");
	expect_hint_error(src.buf, NULL, 2, t, CUCO_ERR_INVALID,
	                  "fast path options: 2 site hints but no hints array");
	cuco_strbuf_release(&src);
}

/* The hinted seed compiles as CUDA C++. */
static void test_nvcc(void **unused)
{
	static const char *const seeds[] = {"lifted.cu"};
	(void)unused;
	nvcc_seeds(out_dir, seeds, 1);
}

static int setup(void **unused)
{
	(void)unused;
	return seed_dir_make(out_dir, sizeof(out_dir));
}

static int teardown(void **unused)
{
	(void)unused;
	return seed_dir_remove(out_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lifted),
	    cmocka_unit_test(test_hints_in_program),
	    cmocka_unit_test(test_bad_hints),
	    cmocka_unit_test(test_nvcc),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
