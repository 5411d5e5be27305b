/*
 * test_codescan.c - the rules a candidate's source keeps: multicast in no
 * spelling (literals joined, escapes decoded), no environment changes or
 * symbols loaded by name, no include of a host file; the workloads' own code
 * passes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "util/codescan.h"

static int multicast(const char *code)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;
	int n = cuco_codescan_multicast(code, &why);

	if (n)
		print_message("%s", why.buf);
	cuco_strbuf_release(&why);
	return n;
}

static void test_multicast_in_strings(void **state)
{
	(void)state;
	assert_int_equal(multicast("asm volatile(\"multimem.ld_reduce.add.f32 %0, [%1];\");"), 1);
	assert_int_equal(multicast("asm(\"multi\" \"mem.red.add.f32 [%0], %1;\");"), 1);
	assert_int_equal(multicast("asm(\"multi\" /* x */\n  \"MEM.st\");"), 1);
	assert_int_equal(multicast("asm(\"multi\\x6d\" \"em.st\");"), 1);
	assert_int_equal(multicast("asm(\"multi\\155em.st\");"), 1);
	assert_int_equal(multicast("asm(R\"x(multimem.st)x\");"), 1);
	assert_int_equal(multicast("const char *s = u8\"cuMulti\" \"castCreate\";"), 1);
	assert_int_equal(multicast("char n[] = {'n', 'v', 'l', 's', 0};"), 1);
	assert_int_equal(multicast("cuGetProcAddress(\"cuMulticastCreate\", &f, 12000, 0, &q);"),
	                 1);
	/* a computed driver function name, an environment change, a symbol by name */
	assert_int_equal(multicast("cuGetProcAddress(name, &f, 12000, 0, &q);"), 1);
	assert_int_equal(multicast("setenv(\"NCCL_\" \"NV\" \"LS_ENABLE\", \"1\", 1);"), 2);
	assert_int_equal(multicast("putenv(buf);"), 1);
	assert_int_equal(multicast("void *f = dlsym(RTLD_DEFAULT, n);"), 1);
	assert_int_equal(multicast("int cuMulticastCreate_ok = 0;"), 1);
	/* spliced identifiers */
	assert_int_equal(multicast("int multi\\\nmem = 1;"), 1);
}

static void test_multicast_clean_code(void **state)
{
	(void)state;
	assert_int_equal(multicast("// multimem is forbidden here\n/* NVLS too */ int x = 1'000;"),
	                 0);
	assert_int_equal(multicast("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", "
	                           "&f, 12000, cudaEnableDefault, &q);"),
	                 0);
	assert_int_equal(multicast("printf(\"multi\"); int mem = 0; obj.setenv = 1;"), 0);
	assert_int_equal(multicast("char c = '\"'; const char *s = \"it's\";"), 0);
}

static int includes(const char *code, struct cuco_strbuf *why)
{
	return cuco_codescan_includes(code, "cand.cu", why);
}

static void test_includes(void **state)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(includes("#include \"common.cuh\"\n#include <cuda_runtime.h>\n"
	                          "#include <cuco_dev/lsa.cuh>\n  #  include \"a/b.h\"\n",
	                          &why),
	                 0);
	assert_int_equal(includes("int x;\n#include \"/etc/passwd\"\n", &why), 1);
	assert_non_null(strstr(why.buf, "cand.cu:2: #include \"/etc/passwd\" names an absolute"));
	cuco_strbuf_reset(&why);
	assert_int_equal(includes("\n\n#include <../../../home/u/.ssh/id_rsa>\n", &why), 1);
	assert_non_null(strstr(why.buf, "cand.cu:3:"));
	assert_non_null(strstr(why.buf, "\"..\" part"));
	cuco_strbuf_reset(&why);
	/* spliced, commented, digraph, include_next, a macro */
	assert_int_equal(includes("#in\\\nclude \"/etc/hosts\"\n", &why), 1);
	assert_int_equal(includes("#/**/include \"x/../../y\"\n", &why), 1);
	assert_int_equal(includes("%:include \"/etc/hosts\"\n", &why), 1);
	assert_int_equal(includes("#include_next </etc/hosts>\n", &why), 1);
	assert_int_equal(includes("#define F \"/etc/hosts\"\n#include F\n", &why), 1);
	/* the assembler reads files too */
	assert_int_equal(includes("asm(\".inc\" \"bin \\\"/etc/hosts\\\"\");\n", &why), 1);
	assert_int_equal(includes("__asm__(\".include \\\"/etc/hosts\\\"\");\n", &why), 1);
	/* not directives */
	cuco_strbuf_reset(&why);
	assert_int_equal(includes("const char *s = \"#include </etc/passwd>\";\n"
	                          "// #include \"/etc/passwd\"\nint a = b # c;\n",
	                          &why),
	                 0);
	cuco_strbuf_release(&why);
}

static void test_timing(void **state)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(
	    cuco_codescan_timing("cudaStreamAttrValue v;\n"
	                         "v.accessPolicyWindow.base_ptr = p;\n"
	                         "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, n);\n"
	                         "cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, n);\n",
	                         &why),
	    3);
	assert_non_null(strstr(why.buf, "line 2: accessPolicyWindow keeps lines in L2"));
	assert_int_equal(cuco_codescan_timing("// accessPolicyWindow\nint l2_bytes;\n", NULL), 0);
	cuco_strbuf_release(&why);
}

/* Every source and header of the workloads and the device library passes both rules. */
static void scan_dir(const char *dir, int *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[4096];
		size_t len = strlen(e->d_name);
		struct cuco_strbuf sb = CUCO_STRBUF_INIT, why = CUCO_STRBUF_INIT;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			scan_dir(p, files);
			continue;
		}
		if (!(len > 3 && !strcmp(e->d_name + len - 3, ".cu")) &&
		    !(len > 4 && !strcmp(e->d_name + len - 4, ".cuh")))
			continue;
		assert_int_equal(cuco_strbuf_read_file(&sb, p), 0);
		if (cuco_codescan_multicast(sb.buf, &why) ||
		    cuco_codescan_includes(sb.buf, p, &why) || cuco_codescan_timing(sb.buf, &why))
			fail_msg("%s: %s", p, why.buf);
		(*files)++;
		cuco_strbuf_release(&sb);
		cuco_strbuf_release(&why);
	}
	closedir(d);
}

static void test_own_code_passes(void **state)
{
	int files = 0;

	(void)state;
	scan_dir(CUCO_SOURCE_DIR "/workloads", &files);
	assert_true(files > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_multicast_in_strings),
	    cmocka_unit_test(test_multicast_clean_code),
	    cmocka_unit_test(test_includes),
	    cmocka_unit_test(test_timing),
	    cmocka_unit_test(test_own_code_passes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
