/*
 * test_fastpath_input.c - the fast path's front door: which arguments are workloads and which
 * source files, and the one message for a source file that is no cuco program (an ordinary
 * C, C++ or CUDA program, an empty file, binary data).
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

/* Check fixture `name` (under input/ unless it has a '/'); returns the code, message in err. */
static int check(const char *name, struct cuco_err *err)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	char rel[128];
	snprintf(rel, sizeof(rel), "input/%s", name);
	read_fixture(rel, &src);
	cuco_err_clear(err);
	int rc = cuco_fastpath_check_source(name, src.buf, src.len, err);
	cuco_strbuf_release(&src);
	return rc;
}

static void test_kind(void **unused)
{
	(void)unused;
	/* workloads: names, package directories, manifests */
	assert_int_equal(cuco_fastpath_input_kind("gemm_allgather"), CUCO_FASTPATH_INPUT_WORKLOAD);
	assert_int_equal(cuco_fastpath_input_kind(CUCO_SOURCE_DIR "/workloads/moe_layer"),
	                 CUCO_FASTPATH_INPUT_WORKLOAD);
	assert_int_equal(cuco_fastpath_input_kind("./pkg/manifest.json"),
	                 CUCO_FASTPATH_INPUT_WORKLOAD);
	assert_int_equal(cuco_fastpath_input_kind("./missing/thing"), CUCO_FASTPATH_INPUT_WORKLOAD);
	/* source files by their name, existing or not, any case */
	static const char *const src[] = {"host.cu", "a/b.cuh",    "x.cpp",   "x.cc",
	                                  "x.cxx",   "x.c",        "x.h",     "x.hpp",
	                                  "X.CU",    "dir/Main.C", "prog.hh", "prog.hxx"};
	for (size_t k = 0; k < sizeof(src) / sizeof(src[0]); k++)
		if (cuco_fastpath_input_kind(src[k]) != CUCO_FASTPATH_INPUT_SOURCE)
			fail_msg("%s is not taken for source", src[k]);
	/* an existing file named with a '/' is source whatever its name (sniffed later) */
	assert_int_equal(cuco_fastpath_input_kind(CUCO_SOURCE_DIR "/LICENSE"),
	                 CUCO_FASTPATH_INPUT_SOURCE);
	/* a bare name stays a workload name even with a dot */
	assert_int_equal(cuco_fastpath_input_kind("moe.v2"), CUCO_FASTPATH_INPUT_WORKLOAD);
}

static void test_ordinary_programs(void **unused)
{
	struct cuco_err err;
	(void)unused;
	assert_int_equal(check("allreduce_mpi.cc", &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "allreduce_mpi.cc is an ordinary program, not a cuco program (it "
	                    "defines no cuco_program_run): 4 NCCL calls found at "
	                    "allreduce_mpi.cc:16 (ncclGetUniqueId), allreduce_mpi.cc:19 "
	                    "(ncclCommInitRank), allreduce_mpi.cc:21 (ncclAllReduce), "
	                    "allreduce_mpi.cc:23 (ncclCommDestroy). Make it a workload package "
	                    "first: cuco init NAME --from allreduce_mpi.cc (then cuco fastpath "
	                    "./NAME)");
	/* a class's calls; the declaration is not one */
	assert_int_equal(check("trainer.cpp", &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "trainer.cpp is an ordinary program, not a cuco program (it defines no "
	                    "cuco_program_run): 4 NCCL calls found at trainer.cpp:16 "
	                    "(ncclGroupStart), trainer.cpp:18 (ncclAllReduce), trainer.cpp:19 "
	                    "(ncclGroupEnd), trainer.cpp:20 (ncclBroadcast). Make it a workload "
	                    "package first: cuco init NAME --from trainer.cpp (then cuco fastpath "
	                    "./NAME)");
	/* CUDA without the ABI; `return ncclAllGather(...)` is a call */
	assert_int_equal(check("kernel_only.cu", &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "kernel_only.cu is an ordinary program, not a cuco program (it defines "
	                    "no cuco_program_run): 1 NCCL call found at kernel_only.cu:14 "
	                    "(ncclAllGather). Make it a workload package first: cuco init NAME "
	                    "--from kernel_only.cu (then cuco fastpath ./NAME)");
}

/* Sources written here rather than kept as fixtures. */
static int check_text(const char *path, const char *src, size_t len, struct cuco_err *err)
{
	cuco_err_clear(err);
	return cuco_fastpath_check_source(path, src, len, err);
}

static void test_not_programs(void **unused)
{
	struct cuco_err err;
	static const char elf[] = "\x7f"
	                          "ELF\x02\x01\x01\0\0\0ncclAllReduce(";
	(void)unused;
	assert_int_equal(check_text("empty.cu", "", 0, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg, "empty.cu is empty: there is no program in it to transform");
	assert_int_equal(check_text("blank.cc", " \n\t\n", 4, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg, "blank.cc is empty: there is no program in it to transform");
	assert_int_equal(check_text("./a.out", elf, sizeof(elf) - 1, &err), CUCO_ERR_PARSE);
	assert_string_equal(
	    err.msg, "./a.out is not C, C++ or CUDA source: it holds binary data (byte 0x7f "
	             "at offset 0); cuco fastpath takes a program's source, or a workload (a "
	             "name, a package directory or a manifest .json)");
	/* a NUL after text */
	assert_int_equal(check_text("x.cu", "int main() {}\n\0\0", 16, &err), CUCO_ERR_PARSE);
	assert_non_null(strstr(err.msg, "(byte 0x00 at offset 14)"));
	/* text that is not C enough to tokenise */
	assert_int_equal(check_text("notes.c", "it's a note\n", 12, &err), CUCO_ERR_PARSE);
	assert_string_equal(err.msg,
	                    "notes.c cannot be read as C, C++ or CUDA source: notes.c:1:3: "
	                    "unterminated character literal");
	/* C without NCCL */
	assert_int_equal(check_text("plain.c", "int main(void) { return 0; }\n", 29, &err),
	                 CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "plain.c is an ordinary program, not a cuco program (it defines "
	                    "no cuco_program_run), and no NCCL call was found in it. Make "
	                    "it a workload package first: cuco init NAME --from plain.c "
	                    "(then cuco fastpath ./NAME)");
}

static void test_many_calls(void **unused)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_err err;
	(void)unused;
	cuco_strbuf_adds(&src, "void f(void)\n{\n");
	for (int k = 0; k < 11; k++)
		cuco_strbuf_adds(&src, "\tncclAllReduce(a, b, n, t, o, c, s);\n");
	cuco_strbuf_adds(&src, "}\n");
	assert_int_equal(check_text("many.cu", src.buf, src.len, &err), CUCO_ERR_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "11 NCCL calls found at many.cu:3 (ncclAllReduce), "));
	assert_non_null(strstr(err.msg, "many.cu:10 (ncclAllReduce) and 3 more. Make it"));
	cuco_strbuf_release(&src);
}

/* A cuco program passes, whatever its extension. */
static void test_cuco_programs(void **unused)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_err err;
	(void)unused;
	read_fixture("allgather.cu", &src);
	assert_int_equal(check_text("allgather.cc", src.buf, src.len, &err), CUCO_OK);
	cuco_strbuf_reset(&src);
	read_fixture("lifted.cu", &src);
	/* a lifted file has no cuco_program_run: it comes with hints, not through this door */
	assert_int_equal(check_text("lifted.cu", src.buf, src.len, &err), CUCO_ERR_UNSUPPORTED);
	cuco_strbuf_release(&src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kind),          cmocka_unit_test(test_ordinary_programs),
	    cmocka_unit_test(test_not_programs),  cmocka_unit_test(test_many_calls),
	    cmocka_unit_test(test_cuco_programs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
