/* test_blocks.c - EVOLVE-BLOCK markers: finding, replacing, checking an edit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "program/blocks.h"
#include "util/error.h"
#include "util/strbuf.h"

static const char two_blocks[] = "#include <cuda.h>\n"          /* 1 */
                                 "// EVOLVE-BLOCK-START\n"      /* 2 */
                                 "int a = 1;\n"                 /* 3 */
                                 "int b = 2;\n"                 /* 4 */
                                 "// EVOLVE-BLOCK-END\n"        /* 5 */
                                 "int keep;\n"                  /* 6 */
                                 "\t  // EVOLVE-BLOCK-START \n" /* 7: indented, trailing blank */
                                 "  //EVOLVE-BLOCK-END\n"       /* 8: empty block, no space */
                                 "int tail;\n";                 /* 9 */

static void test_find(void **state)
{
	struct cuco_block b[4];
	struct cuco_err err;
	int n = -1;

	(void)state;
	assert_int_equal(cuco_blocks_find("k.cu", two_blocks, b, 4, &n, &err), CUCO_OK);
	assert_int_equal(n, 2);
	assert_int_equal(b[0].start_line, 2);
	assert_int_equal(b[0].end_line, 5);
	assert_int_equal(b[0].end - b[0].begin, strlen("int a = 1;\nint b = 2;\n"));
	assert_int_equal(
	    strncmp(two_blocks + b[0].begin, "int a = 1;\nint b = 2;\n", b[0].end - b[0].begin), 0);
	assert_int_equal(b[1].start_line, 7);
	assert_int_equal(b[1].end_line, 8);
	assert_int_equal(b[1].begin, b[1].end); /* empty */
	assert_int_equal(strncmp(two_blocks + b[1].end, "  //EVOLVE-BLOCK-END", 20), 0);

	/* no blocks at all is not an error */
	assert_int_equal(cuco_blocks_find("k.cu", "int x;\n", b, 4, &n, &err), CUCO_OK);
	assert_int_equal(n, 0);
}

static void test_find_crlf(void **state)
{
	static const char src[] = "a\r\n// EVOLVE-BLOCK-START\r\nx\r\n  // EVOLVE-BLOCK-END  \r\nb";
	struct cuco_block b[2];
	struct cuco_err err;
	int n;

	(void)state;
	assert_int_equal(cuco_blocks_find("c.cu", src, b, 2, &n, &err), CUCO_OK);
	assert_int_equal(n, 1);
	assert_int_equal(b[0].start_line, 2);
	assert_int_equal(b[0].end_line, 4);
	assert_int_equal(b[0].end - b[0].begin, 3);
	assert_memory_equal(src + b[0].begin, "x\r\n", 3);
}

static void expect_find_error(const char *src, int max, const char *msg)
{
	struct cuco_block b[4];
	struct cuco_err err;
	int n = -1;

	cuco_err_clear(&err);
	assert_int_equal(cuco_blocks_find("k.cu", src, b, max, &n, &err), CUCO_ERR_PARSE);
	assert_string_equal(err.msg, msg);
	assert_int_equal(n, 0);
}

static void test_find_errors(void **state)
{
	(void)state;
	expect_find_error(
	    "// EVOLVE-BLOCK-START\nx\n  // EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\n", 4,
	    "k.cu:3:3: EVOLVE-BLOCK-START: nested block; the block opened at line 1 "
	    "is not closed (blocks do not nest)");
	expect_find_error("x\n// EVOLVE-BLOCK-END\n", 4,
	                  "k.cu:2:1: EVOLVE-BLOCK-END: no EVOLVE-BLOCK-START before it");
	expect_find_error("x\n    // EVOLVE-BLOCK-START\ny\n", 4,
	                  "k.cu:2:5: EVOLVE-BLOCK-START: the block is never closed; add `// "
	                  "EVOLVE-BLOCK-END` after it");
	expect_find_error("x();  // EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\n", 4,
	                  "k.cu:1:10: EVOLVE-BLOCK-START: an EVOLVE-BLOCK marker must be alone on "
	                  "its line, as `// EVOLVE-BLOCK-START`");
	expect_find_error("// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END: the tile loop\n", 4,
	                  "k.cu:2:4: EVOLVE-BLOCK-END: an EVOLVE-BLOCK marker must be alone on its "
	                  "line, as `// EVOLVE-BLOCK-END`");
	expect_find_error("/* EVOLVE-BLOCK-START */\n", 4,
	                  "k.cu:1:4: EVOLVE-BLOCK-START: an EVOLVE-BLOCK marker must be alone on "
	                  "its line, as `// EVOLVE-BLOCK-START`");
	expect_find_error(two_blocks, 1, "k.cu:8:3: EVOLVE-BLOCK-END: more than 1 evolve blocks");
}

static void test_replace(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_blocks_replace(two_blocks, 0, "int c = 3;", &out, &err), CUCO_OK);
	assert_string_equal(out.buf, "#include <cuda.h>\n"
	                             "// EVOLVE-BLOCK-START\n"
	                             "int c = 3;\n" /* newline added */
	                             "// EVOLVE-BLOCK-END\n"
	                             "int keep;\n"
	                             "\t  // EVOLVE-BLOCK-START \n"
	                             "  //EVOLVE-BLOCK-END\n"
	                             "int tail;\n");
	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, out.buf, &err), CUCO_OK);

	cuco_strbuf_reset(&out);
	assert_int_equal(cuco_blocks_replace(two_blocks, 1, "x();\ny();\n", &out, &err), CUCO_OK);
	assert_non_null(strstr(out.buf, "\t  // EVOLVE-BLOCK-START \nx();\ny();\n  //EVOLVE"));

	/* emptying a block */
	cuco_strbuf_reset(&out);
	assert_int_equal(cuco_blocks_replace(two_blocks, 0, "", &out, &err), CUCO_OK);
	assert_non_null(strstr(out.buf, "// EVOLVE-BLOCK-START\n// EVOLVE-BLOCK-END\n"));

	cuco_strbuf_reset(&out);
	assert_int_equal(cuco_blocks_replace(two_blocks, 2, "x", &out, &err), CUCO_ERR_NOT_FOUND);
	assert_string_equal(err.msg, "evolve block 2 does not exist; the program has 2");
	assert_int_equal(
	    cuco_blocks_replace(two_blocks, 0, "a\n// EVOLVE-BLOCK-END\nb\n", &out, &err),
	    CUCO_ERR_INVALID);
	assert_int_equal(out.len, 0);
	cuco_strbuf_release(&out);
}

static void test_replace_crlf(void **state)
{
	static const char src[] = "a\r\n// EVOLVE-BLOCK-START\r\nx\r\n// EVOLVE-BLOCK-END\r\nb\r\n";
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_blocks_replace(src, 0, "y = 1;", &out, &err), CUCO_OK);
	assert_string_equal(out.buf,
	                    "a\r\n// EVOLVE-BLOCK-START\r\ny = 1;\r\n// EVOLVE-BLOCK-END\r\nb\r\n");
	cuco_strbuf_release(&out);
}

static void test_check_edit(void **state)
{
	static const char edited_inside[] = "#include <cuda.h>\n"
	                                    "// EVOLVE-BLOCK-START\n"
	                                    "int a = 10;\n"
	                                    "int b = 20;\n"
	                                    "int extra = 30;\n"
	                                    "// EVOLVE-BLOCK-END\n"
	                                    "int keep;\n"
	                                    "\t  // EVOLVE-BLOCK-START \n"
	                                    "new_code();\n"
	                                    "  //EVOLVE-BLOCK-END\n"
	                                    "int tail;\n";
	static const char edited_outside[] = "#include <cuda.h>\n"
	                                     "// EVOLVE-BLOCK-START\n"
	                                     "int a = 10;\n"
	                                     "// EVOLVE-BLOCK-END\n"
	                                     "int keep_changed;\n"
	                                     "\t  // EVOLVE-BLOCK-START \n"
	                                     "  //EVOLVE-BLOCK-END\n"
	                                     "int tail;\n";
	static const char lost_marker[] = "#include <cuda.h>\n"
	                                  "int a = 1;\n"
	                                  "int b = 2;\n"
	                                  "int keep;\n"
	                                  "\t  // EVOLVE-BLOCK-START \n"
	                                  "  //EVOLVE-BLOCK-END\n"
	                                  "int tail;\n";
	static const char crlf[] = "#include <cuda.h>\r\n"
	                           "// EVOLVE-BLOCK-START\r\n"
	                           "changed();\r\n"
	                           "// EVOLVE-BLOCK-END\r\n"
	                           "int keep;\r\n"
	                           "\t  // EVOLVE-BLOCK-START \r\n"
	                           "  //EVOLVE-BLOCK-END\r\n"
	                           "int tail;\r\n";
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, two_blocks, &err), CUCO_OK);
	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, edited_inside, &err), CUCO_OK);
	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, crlf, &err), CUCO_OK);

	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, edited_outside, &err),
	                 CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "k.cu:5:1: outside EVOLVE-BLOCK: the edit changed a line "
	                             "outside the evolve blocks (expected line 6 of the original, "
	                             "\"int keep;\", found \"int keep_changed;\"); only lines "
	                             "between EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change");

	assert_int_equal(cuco_blocks_check_edit("k.cu", two_blocks, lost_marker, &err),
	                 CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "k.cu:2:1: EVOLVE-BLOCK-START: the edit lost the "
	                             "EVOLVE-BLOCK-START marker of line 2 of the original; markers "
	                             "and everything outside the blocks must stay as they were");
}

static void test_check_edit_ends(void **state)
{
	static const char old[] = "a\n// EVOLVE-BLOCK-START\nx\n// EVOLVE-BLOCK-END\nb\n";
	struct cuco_err err;

	(void)state;
	/* a line added after the end */
	assert_int_equal(
	    cuco_blocks_check_edit(
	        "e.cu", old, "a\n// EVOLVE-BLOCK-START\nx\n// EVOLVE-BLOCK-END\nb\nc\n", &err),
	    CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "e.cu:6:1: outside EVOLVE-BLOCK: the edit added this line "
	                             "after the end of the original (\"c\"); only lines between "
	                             "EVOLVE-BLOCK-START and EVOLVE-BLOCK-END may change");
	/* the last line removed */
	assert_int_equal(
	    cuco_blocks_check_edit("e.cu", old,
	                           "a\n// EVOLVE-BLOCK-START\ny\n// EVOLVE-BLOCK-END\n", &err),
	    CUCO_ERR_INVALID);
	assert_string_equal(err.msg,
	                    "e.cu:4:1: outside EVOLVE-BLOCK: the edit removed line 5 of "
	                    "the original (\"b\"); only lines between EVOLVE-BLOCK-START and "
	                    "EVOLVE-BLOCK-END may change");
	/* the END marker lost: the new text no longer parses */
	assert_int_equal(
	    cuco_blocks_check_edit("e.cu", old, "a\n// EVOLVE-BLOCK-START\nx\nb\n", &err),
	    CUCO_ERR_PARSE);
	assert_string_equal(err.msg, "e.cu:2:1: EVOLVE-BLOCK-START: the block is never closed; "
	                             "add `// EVOLVE-BLOCK-END` after it");
	/* the final newline dropped */
	assert_int_equal(
	    cuco_blocks_check_edit("e.cu", old,
	                           "a\n// EVOLVE-BLOCK-START\nx\n// EVOLVE-BLOCK-END\nb", &err),
	    CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "e.cu:5:1: outside EVOLVE-BLOCK:"));
	assert_non_null(strstr(err.msg, "found \"b\" without a final newline"));
	/* a bad original is reported as such */
	assert_int_equal(cuco_blocks_check_edit("e.cu", "// EVOLVE-BLOCK-END\n", old, &err),
	                 CUCO_ERR_PARSE);
	assert_string_equal(err.msg, "in the original program: e.cu:1:1: EVOLVE-BLOCK-END: no "
	                             "EVOLVE-BLOCK-START before it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_find_crlf),
	    cmocka_unit_test(test_find_errors),
	    cmocka_unit_test(test_replace),
	    cmocka_unit_test(test_replace_crlf),
	    cmocka_unit_test(test_check_edit),
	    cmocka_unit_test(test_check_edit_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
