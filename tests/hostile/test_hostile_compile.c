/*
 * test_hostile_compile.c - a candidate's source goes after the node's files
 * through its compile (real nvcc): a host file included past the lexical
 * rules (a line splice, a comment between # and include, an assembler
 * .include built by stringizing, GAS's \() in the directive's name), its
 * text then in the compile log that goes back to the model; a banned name
 * made by token pasting (its own a##b, glibc's __CONCAT); a compile that
 * takes the node's memory (a 256 MiB __device__ array). The compile's view
 * holds no file of the node's but the toolkit's, the system's and cuco's
 * headers, the preprocessed source is checked as the source is, and nvcc's
 * address space is capped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "assert_text.h"
#include "hostile.h"
#include "util/jail.h"
#include "util/jail_probe.h"

static char secret[200], secret_text[64];

static int setup(void **state)
{
	(void)state;
	if (hostile_setup("compile") || chmod(hostile_dir, 0755))
		return -1;
	hostile_path("secret.txt", secret, sizeof(secret));
	snprintf(secret_text, sizeof(secret_text), "CUCO-HOST-SECRET-%d", (int)getpid());
	return cuco_write_file(secret, secret_text, strlen(secret_text)) || chmod(secret, 0644);
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

static void need_nvcc(void)
{
	unsetenv("CUCO_NVCC");
	if (access(cuco_nvcc_path(), X_OK)) {
		print_message("no nvcc here: skipped\n");
		skip();
	}
	if (!cuco_run_jailed()) {
		print_message("no view here (%s): skipped\n", cuco_jail_why());
		skip();
	}
}

/* Compile source as a candidate; its code, its log in log. */
static int compile(const char *source, struct cuco_strbuf *log)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job job;
	struct cuco_err err;
	char path[200];
	int code;

	assert_int_equal(cuco_compile_opts_default(&o, &err), CUCO_OK);
	o.jobs = 1;
	o.timeout_s = 300;
	hostile_path("cand.cu", path, sizeof(path));
	cuco_compile_job_init(&job, "cand", path, source);
	assert_int_equal(cuco_compile_many(&o, &job, 1, &err), CUCO_OK);
	code = job.code;
	cuco_strbuf_reset(log);
	cuco_strbuf_adds(log, job.log.buf);
	cuco_compile_job_release(&job);
	return code;
}

/* Each way past the include rule: the host file's text never reaches the log. */
static void test_host_file_includes(void **state)
{
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	char src[4][1024];

	(void)state;
	need_nvcc();
	snprintf(src[0], sizeof(src[0]), "#inc\\\nlude \"%s\"\nint x;\n", secret);
	snprintf(src[1], sizeof(src[1]), "#/* a comment */include \"%s\"\nint x;\n", secret);
	snprintf(src[2], sizeof(src[2]),
	         "#define S(x) #x\n#define I(f) S(.include f)\nasm(I(\"%s\"));\nint x;\n", secret);
	snprintf(src[3], sizeof(src[3]),
	         "asm(\".macro m\\n.incl\\\\()ude \\\"%s\\\"\\n.endm\\nm\");\nint x;\n", secret);
	for (int i = 0; i < 4; i++) {
		int code = compile(src[i], &log);
		if (getenv("CUCO_HOSTILE_VERBOSE"))
			print_message("way %d:\n%s\n", i, log.buf);
		if (strstr(log.buf, secret_text))
			fail_msg("way %d: the host file's text is in the compile log:\n%s", i,
			         log.buf);
		if (code == CUCO_OK)
			fail_msg("way %d: compiled with a host file included:\n%s", i, log.buf);
	}
	cuco_strbuf_release(&log);
}

/* A banned name made by pasting: the candidate's own ## and glibc's __CONCAT. */
static void test_token_pasting(void **state)
{
	static const char *const src[] = {
	    "#include <stdlib.h>\n#define CAT(a, b) a##b\n"
	    "extern \"C\" void f() { CAT(set, env)(\"NCCL_ALGO\", \"Ring\", 1); }\n",
	    "#include <stdlib.h>\n"
	    "extern \"C\" void f() { __CONCAT(set, env)(\"NCCL_ALGO\", \"Ring\", 1); }\n",
	    "#include <dlfcn.h>\n#define CAT(a, b) a##b\n"
	    "extern \"C\" void *f() { return CAT(dl, open)(\"libcuda.so.1\", 0); }\n",
	};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;

	(void)state;
	need_nvcc();
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		if (compile(src[i], &log) == CUCO_OK)
			fail_msg("pasting %zu compiled:\n%s", i, log.buf);
		assert_contains(log.buf, "once its macros are expanded");
	}
	cuco_strbuf_release(&log);
}

/* A compile that would take the node's memory fails at the cap instead. */
static void test_compile_memory(void **state)
{
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	double t0 = cuco_now();

	(void)state;
	need_nvcc();
	setenv("CUCO_COMPILE_MEMORY_GB", "1", 1);
	assert_int_equal(compile("__device__ char big[1 << 28] = {1};\n"
	                         "__global__ void k(char *p) { *p = big[threadIdx.x]; }\n",
	                         &log),
	                 CUCO_ERR_COMPILE);
	unsetenv("CUCO_COMPILE_MEMORY_GB");
	assert_true(cuco_now() - t0 < 240);
	cuco_strbuf_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_file_includes),
	    cmocka_unit_test(test_token_pasting),
	    cmocka_unit_test(test_compile_memory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
