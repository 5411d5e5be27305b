/* test_llm_reply.c - model replies into candidates: directives, diffs, rewrites, rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "llm/reply.h"
#include "program/directive.h"
#include "program/blocks.h"
#include "util/error.h"
#include "util/strbuf.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/llm"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define SHARE CUCO_SOURCE_DIR "/share"

static struct cuco_design_space ds;
static struct cuco_strbuf parent = CUCO_STRBUF_INIT;

static int setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK) {
		fprintf(stderr, "design space: %s\n", err.msg);
		return -1;
	}
	if (cuco_strbuf_read_file(&parent, FIXTURES "/parent.cu") != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&parent);
	return 0;
}

static char *fixture(const char *name)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	if (cuco_strbuf_read_file(&sb, path) != 0)
		fail_msg("cannot read %s", path);
	return cuco_strbuf_detach(&sb, NULL);
}

/* Apply fixture name in mode to parent.cu; the outcome in *e, the code returned. */
static int apply(const char *name, int mode, struct cuco_llm_edit *e, struct cuco_err *err)
{
	char *reply = fixture(name);
	int rc;

	cuco_err_clear(err);
	rc = cuco_llm_reply_apply("parent.cu", parent.buf, reply, mode, &ds, NULL, e, err);
	free(reply);
	return rc;
}

/* An accepted candidate must pass the same checks the cascade applies. */
static void assert_valid_candidate(const struct cuco_llm_edit *e)
{
	struct cuco_directive d;
	struct cuco_err err;

	assert_non_null(e->code);
	assert_null(e->reason);
	/* everything but the directive line (line 1) is the parent's outside the blocks */
	assert_int_equal(cuco_blocks_check_edit("parent.cu", strchr(parent.buf, '\n'),
	                                        strchr(e->code, '\n'), &err),
	                 CUCO_OK);
	assert_int_equal(cuco_directive_parse("cand.cu", e->code, &d, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &ds, NULL, &err), CUCO_OK);
	cuco_directive_release(&d);
}

static void test_diff_good(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("diff_good.txt", CUCO_LLM_MODE_DIFF, &e, &err), CUCO_OK);
	assert_valid_candidate(&e);
	assert_int_equal(e.nedits, 2);
	assert_int_equal(e.nfuzzy, 0);
	assert_string_equal(e.notes, "");
	assert_null(e.flags);
	assert_contains(e.code, "#define COMM_CTAS 64\n");
	assert_contains(e.code,
	                "tensors[1].win,\n\t                                                     "
	                "tensors[1].win_offset, bytes);\n// EVOLVE-BLOCK-END");
	assert_null(strstr(e.code, "#define COMM_CTAS 32"));
	/* the stated directive replaced the parent's (canonical form, first line) */
	assert_string_equal(
	    e.directive_json,
	    "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"grid\","
	    "\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":64,"
	    "\"threads\":512}}");
	assert_int_equal(strncmp(e.code, "// cuco-directive: {\"backend\":\"lsa\"", 35), 0);
	assert_contains(e.code, "\"comm_ctas\":64");
	/* only the directive line and block lines changed */
	{
		struct cuco_strbuf a = CUCO_STRBUF_INIT, b = CUCO_STRBUF_INIT;

		cuco_strbuf_adds(&a, strchr(parent.buf, '\n'));
		cuco_strbuf_adds(&b, strchr(e.code, '\n'));
		assert_int_equal(cuco_blocks_check_edit("parent.cu", a.buf, b.buf, &err), CUCO_OK);
		cuco_strbuf_release(&a);
		cuco_strbuf_release(&b);
	}
	cuco_llm_edit_release(&e);
}

static void test_diff_fuzzy_crlf(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("diff_fuzzy.txt", CUCO_LLM_MODE_DIFF, &e, &err), CUCO_OK);
	assert_valid_candidate(&e);
	assert_int_equal(e.nedits, 2);
	assert_int_equal(e.nfuzzy, 2);
	assert_contains(e.notes, "edit 1: SEARCH matched parent.cu:8 ignoring trailing whitespace");
	assert_contains(e.notes,
	                "edit 2: SEARCH matched parent.cu:13 after whitespace normalisation");
	assert_contains(e.code, "\tbar.sync_acq_rel();\n\tfor (int p");
	assert_null(strchr(e.code, '\r')); /* LF parent stays LF although the reply was CRLF */
	assert_string_equal(
	    e.directive_json,
	    "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"grid\","
	    "\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":64}}");
	cuco_llm_edit_release(&e);
}

static void test_diff_crlf_parent(void **state)
{
	struct cuco_strbuf crlf = CUCO_STRBUF_INIT;
	struct cuco_llm_edit e;
	struct cuco_err err;
	char *reply = fixture("diff_good.txt");
	size_t i;

	(void)state;
	for (i = 0; i < parent.len; i++) {
		if (parent.buf[i] == '\n')
			cuco_strbuf_addch(&crlf, '\r');
		cuco_strbuf_addch(&crlf, parent.buf[i]);
	}
	cuco_llm_edit_init(&e);
	assert_int_equal(
	    cuco_llm_reply_apply("p.cu", crlf.buf, reply, CUCO_LLM_MODE_DIFF, &ds, NULL, &e, &err),
	    CUCO_OK);
	assert_contains(e.code, "#define COMM_CTAS 64\r\n");
	assert_int_equal(
	    cuco_blocks_check_edit("p.cu", strchr(crlf.buf, '\n'), strchr(e.code, '\n'), &err),
	    CUCO_OK);
	for (i = 0; e.code[i]; i++)
		if (e.code[i] == '\n')
			assert_int_equal(e.code[i - 1], '\r');
	cuco_llm_edit_release(&e);
	cuco_strbuf_release(&crlf);
	free(reply);
}

struct reject_case {
	const char *fixture;
	int mode;
	int code;
	const char *reason; /* substring of the stored reason */
};

static const struct reject_case rejects[] = {
    {"diff_outside.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID,
     "edit 1 (reply line 2): SEARCH text matches parent.cu:26, outside the EVOLVE-BLOCKs; the "
     "EVOLVE-BLOCK contents are lines 8-20, 35-35 and only they may change"},
    {"diff_marker.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID,
     "edit 1 (reply line 2): SEARCH/REPLACE text contains an EVOLVE-BLOCK marker"},
    {"diff_missing_markers.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE,
     "edit 1 (reply line 2): the reply ends before >>>>>>> REPLACE; the reply is truncated or a "
     "marker is missing"},
    {"diff_truncated.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE, "the reply ends before"},
    {"diff_no_directive.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE,
     "directive: no directive in the reply: state it first"},
    {"diff_directive_late.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE,
     "directive: stated at reply line 6, after the code that starts at line 1"},
    {"diff_bad_directive.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID, "directive: "},
    {"diff_multicast.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID, "multicast"},
    {"diff_ambiguous.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID,
     "SEARCH text matches 2 places (lines 18, 20); include more lines"},
    {"diff_notfound.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_INVALID,
     "edit 1 (reply line 2): SEARCH text not found in parent.cu (first line '#define COMM_CTAS "
     "48')"},
    {"rewrite_blocks.txt", CUCO_LLM_MODE_DIFF, CUCO_ERR_PARSE, "no SEARCH/REPLACE blocks"},
    {"rewrite_lost_marker.txt", CUCO_LLM_MODE_REWRITE, CUCO_ERR_INVALID,
     "markers must survive: the rewritten file has 2 EVOLVE-BLOCK marker lines, the parent 4"},
    {"rewrite_outside.txt", CUCO_LLM_MODE_REWRITE, CUCO_ERR_INVALID,
     "the rewritten file changes text outside the EVOLVE-BLOCKs: parent.cu:26:1"},
    {"rewrite_count.txt", CUCO_LLM_MODE_REWRITE, CUCO_ERR_INVALID,
     "parent.cu has 2 EVOLVE-BLOCKs but the reply has 1 code blocks"},
    {"rewrite_unclosed.txt", CUCO_LLM_MODE_REWRITE, CUCO_ERR_PARSE,
     "the code block opened at reply line 2 is never closed"},
    {"diff_good.txt", CUCO_LLM_MODE_REWRITE, CUCO_ERR_INVALID, "code blocks"},
};

static void test_rejections(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		struct cuco_llm_edit e;
		struct cuco_err err;
		int rc;

		cuco_llm_edit_init(&e);
		rc = apply(rejects[i].fixture, rejects[i].mode, &e, &err);
		if (rc != rejects[i].code || !e.reason || !strstr(e.reason, rejects[i].reason))
			fail_msg("%s (%s): got %d '%s', want %d '%s'", rejects[i].fixture,
			         cuco_llm_mode_name(rejects[i].mode), rc,
			         e.reason ? e.reason : "(null)", rejects[i].code,
			         rejects[i].reason);
		assert_null(e.code);
		assert_string_equal(err.msg, e.reason);
		cuco_llm_edit_release(&e);
	}
}

static void test_contradiction(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("diff_contradiction.txt", CUCO_LLM_MODE_DIFF, &e, &err), CUCO_OK);
	assert_non_null(e.code);
	assert_contains(e.flags, "backend \"ce\" but the code has no cudaMemcpy*Async");
	assert_contains(e.flags, "placement \"sequential\" but the code creates a second stream");
	cuco_llm_edit_release(&e);
}

static void test_check_code(void **state)
{
	struct cuco_directive d;
	struct cuco_strbuf flags = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	assert_int_equal(
	    cuco_directive_parse("x.cu",
	                         "// cuco-directive: {\"backend\":\"lsa\",\"placement\":"
	                         "\"stream_overlap\",\"sync_scope\":\"grid\",\"issuer\":\"cta\","
	                         "\"granularity\":\"chunk\"}\n",
	                         &d, &err),
	    CUCO_OK);
	/* mentions in comments and strings do not count */
	assert_int_equal(
	    cuco_llm_directive_check_code(
	        &d, "/* lsa_peer */ const char *s = \"cudaStreamCreate\"; // lsa_peer\n", &flags),
	    2);
	assert_contains(flags.buf, "backend \"lsa\" but the code takes no peer pointer");
	assert_contains(flags.buf,
	                "placement \"stream_overlap\" but the code creates no second stream");
	cuco_strbuf_reset(&flags);
	assert_int_equal(cuco_llm_directive_check_code(
	                     &d, "p = cuco::lsa_peer(w, 0, 1); cudaStreamCreate(&s);", &flags),
	                 0);
	assert_string_equal(flags.buf, "");
	cuco_directive_release(&d);
	cuco_strbuf_release(&flags);
}

static void test_rewrite_blocks(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("rewrite_blocks.txt", CUCO_LLM_MODE_REWRITE, &e, &err), CUCO_OK);
	assert_valid_candidate(&e);
	assert_int_equal(e.nedits, 2);
	assert_contains(e.code,
	                "// EVOLVE-BLOCK-START\n#define COMM_CTAS 64\n#define THREADS 256\n");
	assert_contains(e.code, "\tbar.sync_acq_rel();\n}\n// EVOLVE-BLOCK-END\n");
	assert_contains(e.code, "tensors[1].win_offset, bytes);\n// EVOLVE-BLOCK-END\n\treturn");
	assert_contains(e.code, "\"sync_scope\":\"cta\"");
	assert_null(e.flags);
	cuco_llm_edit_release(&e);
}

static void test_rewrite_file(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("rewrite_file.txt", CUCO_LLM_MODE_REWRITE, &e, &err), CUCO_OK);
	assert_valid_candidate(&e);
	assert_contains(e.code, "#define COMM_CTAS 48\n");
	assert_contains(e.code, "\"comm_ctas\":48");
	assert_int_equal(e.nedits, 2);
	cuco_llm_edit_release(&e);
}

static void test_crossover(void **state)
{
	struct cuco_llm_edit e;
	struct cuco_err err;

	(void)state;
	cuco_llm_edit_init(&e);
	assert_int_equal(apply("crossover.txt", CUCO_LLM_MODE_CROSSOVER, &e, &err), CUCO_OK);
	assert_valid_candidate(&e);
	/* echoed markers were dropped, not doubled */
	assert_contains(e.code, "// EVOLVE-BLOCK-START\n#define COMM_CTAS 32\n#define THREADS 512\n"
	                        "#define CHUNKS 4\n");
	assert_contains(e.code, "side_stream);\n// EVOLVE-BLOCK-END\n\treturn");
	assert_null(e.flags); /* ce with cudaMemcpyAsync, stream_overlap with a stream */
	assert_contains(e.directive_json, "\"backend\":\"ce\"");
	cuco_llm_edit_release(&e);
}

static void test_reply_directive(void **state)
{
	struct cuco_directive d;
	struct cuco_err err;
	size_t pos = 99;

	(void)state;
	assert_int_equal(
	    cuco_llm_reply_directive("Plan.\r\n  //cuco-directive: {\"backend\":\"gin\","
	                             "\"placement\":\"specialized\",\"sync_scope\":"
	                             "\"warp\",\"issuer\":\"warp\",\"granularity\":"
	                             "\"tile\"}  \r\ncode",
	                             &d, &pos, &err),
	    CUCO_OK);
	assert_int_equal(pos, 7);
	assert_string_equal(d.dims[CUCO_DIM_BACKEND], "gin");
	cuco_directive_release(&d);
	assert_int_equal(cuco_llm_reply_directive("no directive here", &d, NULL, &err),
	                 CUCO_ERR_NOT_FOUND);
	assert_int_equal(
	    cuco_llm_reply_directive("// cuco-directive: {\"backend\":", &d, NULL, &err),
	    CUCO_ERR_PARSE);
	assert_contains(err.msg, "invalid JSON");
}

static void test_modes(void **state)
{
	struct cuco_err err;
	int m = 0;

	(void)state;
	assert_int_equal(cuco_llm_mode_parse("crossover", &m, &err), CUCO_OK);
	assert_int_equal(m, CUCO_LLM_MODE_CROSSOVER);
	assert_string_equal(cuco_llm_mode_name(CUCO_LLM_MODE_DIFF), "diff");
	assert_int_equal(cuco_llm_mode_parse("patch", &m, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "use diff, rewrite or crossover");
	assert_null(cuco_llm_mode_name(0));
}

/* Every shipped prompt loads, has a version and renders with the variables its users pass. */
static void test_prompts(void **state)
{
	static const struct cuco_prompt_var vars[] = {
	    {"design_space", "{...}"},  {"hardware", "2 x H200"},
	    {"nccl_guide", "GUIDE"},    {"workload", "gemm_allgather"},
	    {"parent", "PARENT"},       {"parent_b", "PARENT_B"},
	    {"feedback", "ok"},         {"inspirations", "none"},
	    {"meta_summary", "none"},   {"host_program", "HOST"},
	    {"stage_feedback", "none"}, {"previous", "none"},
	    {"abi_header", "ABI"},
	};
	static const char *const names[] = {"system",          "nccl_guide", "diff",
	                                    "rewrite",         "crossover",  "fastpath_stage_a",
	                                    "fastpath_stage_b"};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_err err;
	size_t i;
	int v;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cuco_strbuf_reset(&out);
		v = 0;
		if (cuco_prompt_build(SHARE, names[i], vars, (int)(sizeof(vars) / sizeof(vars[0])),
		                      &out, &v, &err) != CUCO_OK)
			fail_msg("%s: %s", names[i], err.msg);
		assert_true(v >= 1);
		assert_null(strstr(out.buf, "{{"));
		assert_null(strstr(out.buf, "cuco-prompt:"));
	}
	cuco_strbuf_reset(&out);
	assert_int_equal(cuco_prompt_render("t", "a {{x}}\nb {{y}}", vars, 1, &out, &err),
	                 CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "t:1: {{x}} has no value");
	assert_string_equal(out.buf, "");
	assert_int_equal(cuco_prompt_render("t", "{{design_space}}!", vars, 1, &out, &err),
	                 CUCO_OK);
	assert_string_equal(out.buf, "{...}!");
	assert_int_equal(cuco_prompt_render("t", "x\n{{ oops", vars, 1, &out, &err),
	                 CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "t:2: '{{' does not open a placeholder {{name}}");
	assert_int_equal(cuco_prompt_load(SHARE, "no_such_prompt", &out, &v, &err), CUCO_ERR_IO);
	cuco_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_diff_good),
	    cmocka_unit_test(test_diff_fuzzy_crlf),
	    cmocka_unit_test(test_diff_crlf_parent),
	    cmocka_unit_test(test_rejections),
	    cmocka_unit_test(test_contradiction),
	    cmocka_unit_test(test_check_code),
	    cmocka_unit_test(test_rewrite_blocks),
	    cmocka_unit_test(test_rewrite_file),
	    cmocka_unit_test(test_crossover),
	    cmocka_unit_test(test_reply_directive),
	    cmocka_unit_test(test_modes),
	    cmocka_unit_test(test_prompts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
