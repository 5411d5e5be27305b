/*
 * test_sandbox.c - a candidate (code a model wrote) is compiled in a private
 * directory with only its source and the workload's headers, cuco's include
 * folders and no network; its source is refused when it includes a host file
 * or hides multicast, and its object when it holds a multimem instruction
 * all the same (a fake nvcc here; real nvcc on a program that hides multimem
 * from every source scan). The harness runs in a private directory too; a
 * cached object is read-only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "assert_text.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "util/codescan.h"
#include "util/paths.h"
#include "util/proc.h"

static char tmp_dir[64], wl_dir[128], cache_dir[160], nvcc_path[160];

/*
 * The fake nvcc (TOOLKIT/bin/nvcc): where it ran, that folder's mode and
 * files, its -I flags and the network interfaces it sees, one "nvcc-saw
 * key: value" line each on its stderr (the compile's log: it writes nothing
 * outside its view); a source with HIDE_PTX leaves a multimem instruction in
 * the PTX it keeps, HIDE_SYM a cuMulticast name in the object.
 */
static const char fake_nvcc[] =
    "#!/bin/sh\n"
    "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, fake'; exit 0; fi\n"
    "out=; src=; keep=; incs=\n"
    "while [ $# -gt 0 ]; do\n"
    "  case \"$1\" in -o) out=$2; shift ;; -keep-dir) keep=$2; shift ;;\n"
    "    -I*) incs=\"$incs $1\" ;; *.cu) src=$1 ;; esac\n"
    "  shift\n"
    "done\n"
    "{ echo \"cwd: $(pwd)\"; echo \"mode: $(stat -c %a .)\"; echo \"files: $(ls | tr '\\n' ' ')\"\n"
    "  echo \"incs:$incs\"; echo \"ifaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' "
    "| sort | tr '\\n' ' ')\"\n"
    "} | sed 's/^/nvcc-saw /' >&2\n"
    "if grep -q HIDE_PTX \"$src\" && [ -n \"$keep\" ]; then\n"
    "  printf '\\tmultimem.st.global.f32 [%%rd1], %%f1;\\n' > \"$keep/x.ptx\"\n"
    "fi\n"
    "printf 'ELF' > \"$out\"\n"
    "if grep -q HIDE_SYM \"$src\"; then printf 'cuMulticastCreate' >> \"$out\"; fi\n";

static int write_text(const char *path, const char *text)
{
	return cuco_write_file(path, text, strlen(text));
}

static int group_setup(void **state)
{
	char p[256];

	(void)state;
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/cuco-test-sandbox-XXXXXX");
	if (!mkdtemp(tmp_dir) || chmod(tmp_dir, 0755)) /* a folder others may enter, as a rule */
		return -1;
	snprintf(wl_dir, sizeof(wl_dir), "%s/workload", tmp_dir);
	snprintf(cache_dir, sizeof(cache_dir), "%s/state/cache", tmp_dir);
	snprintf(nvcc_path, sizeof(nvcc_path), "%s/toolkit/bin", tmp_dir);
	if (cuco_mkdir_p(nvcc_path))
		return -1;
	snprintf(nvcc_path, sizeof(nvcc_path), "%s/toolkit/bin/nvcc", tmp_dir);
	if (cuco_mkdir_p(wl_dir) || write_text(nvcc_path, fake_nvcc) || chmod(nvcc_path, 0755))
		return -1;
	/* the workload's folder: a header candidates include, and files they must not see */
	snprintf(p, sizeof(p), "%s/common.cuh", wl_dir);
	if (write_text(p, "#define COMMON 1\n"))
		return -1;
	snprintf(p, sizeof(p), "%s/notes.txt", wl_dir);
	if (write_text(p, "not for candidates\n"))
		return -1;
	snprintf(p, sizeof(p), "%s/host.cu", wl_dir);
	if (write_text(p, "int host;\n"))
		return -1;
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	snprintf(p, sizeof(p), "%s/state", tmp_dir);
	setenv("CUCO_STATE", p, 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	cuco_proc_remove_tree(tmp_dir);
	return 0;
}

static void compile_opts(struct cuco_compile_opts *o)
{
	struct cuco_err err;

	assert_int_equal(cuco_compile_opts_default(o, &err), CUCO_OK);
	o->jobs = 1;
	o->timeout_s = 120;
}

/* Compile one job through the fake nvcc; the fake's log (what it saw) in seen. */
static void compile_fake(struct cuco_compile_job *job, struct cuco_strbuf *seen)
{
	struct cuco_compile_opts o;
	struct cuco_err err;

	setenv("CUCO_NVCC", nvcc_path, 1);
	compile_opts(&o);
	assert_int_equal(cuco_compile_many(&o, job, 1, &err), CUCO_OK);
	cuco_strbuf_reset(seen);
	for (const char *l = job->log.buf; (l = strstr(l, "nvcc-saw ")); l += 9) {
		size_t n = strcspn(l + 9, "\n");
		cuco_strbuf_add(seen, l + 9, n);
		cuco_strbuf_addch(seen, '\n');
	}
}

/* Entries of the cache folder whose name starts with prefix. */
static int cache_entries(const char *prefix)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char cmd[256];
	int n;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '^%s'", cache_dir, prefix);
	{
		char *argv[] = {"sh", "-c", cmd, NULL};
		struct cuco_proc_status st;
		assert_int_equal(cuco_proc_run(argv, NULL, &sb, NULL, 30, &st), 0);
	}
	n = (int)strtol(sb.buf, NULL, 10);
	cuco_strbuf_release(&sb);
	return n;
}

static void test_candidate_private_dir(void **state)
{
	struct cuco_compile_job job;
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char path[256], want[256];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/cand.cu", wl_dir);
	cuco_compile_job_init(&job, "cand", path, "#include \"common.cuh\"\nint c = COMMON;\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_OK);
	/* nvcc ran in a private folder under the cache, holding the source and the header */
	snprintf(want, sizeof(want), "cwd: %s/sandbox.", cache_dir);
	assert_contains(seen.buf, want);
	assert_contains(seen.buf, "mode: 700\n");
	assert_contains(seen.buf, "common.cuh");
	assert_null(strstr(seen.buf, "notes.txt"));
	assert_null(strstr(seen.buf, "host.cu"));
	/* only cuco's include folders: never the workload's own */
	snprintf(want, sizeof(want), "-I%s ", wl_dir);
	assert_null(strstr(seen.buf, want));
	assert_contains(seen.buf, "/device/include");
	if (cuco_proc_netns_available())
		assert_contains(seen.buf, "ifaces: lo \n");
	else
		print_message("no network namespace here: the interfaces were not checked\n");
	/* the folder is gone; the object is read-only */
	assert_int_equal(cache_entries("sandbox."), 0);
	assert_int_equal(stat(job.so_path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0444);
	cuco_compile_job_release(&job);

	/* a workload's own file compiles beside its folder, as before */
	cuco_compile_job_init(&job, "host", path, "int host2;\n");
	job.trusted = 1;
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_OK);
	snprintf(want, sizeof(want), "-I%s", wl_dir);
	assert_non_null(strstr(seen.buf, want));
	assert_true(strchr(" \n", strstr(seen.buf, want)[strlen(want)]) != NULL);
	assert_null(strstr(seen.buf, "sandbox."));
	cuco_compile_job_release(&job);
	cuco_strbuf_release(&seen);
}

static void test_host_file_include_refused(void **state)
{
	struct cuco_compile_job job;
	struct cuco_strbuf seen = CUCO_STRBUF_INIT, host = CUCO_STRBUF_INIT;
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/cand.cu", wl_dir);
	cuco_compile_job_init(&job, "cand", path, "int a;\n\n#include \"/etc/passwd\"\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "cand.cu:3: #include \"/etc/passwd\" names an absolute path");
	assert_string_equal(seen.buf, ""); /* nvcc never ran */
	if (cuco_strbuf_read_file(&host, "/etc/passwd") == 0 && host.len > 8) {
		char first[9];
		snprintf(first, sizeof(first), "%s", host.buf);
		assert_null(strstr(job.log.buf, first));
	}
	cuco_compile_job_release(&job);
	cuco_compile_job_init(&job, "cand", path, "#include \"../notes.txt\"\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "cand.cu:1:");
	assert_contains(job.log.buf, "\"..\" part");
	cuco_compile_job_release(&job);
	/* multicast spelt in strings: refused before nvcc too */
	cuco_compile_job_init(&job, "cand", path, "const char *n = \"cuMulti\" \"castCreate\";\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "line 1: a string literal");
	assert_string_equal(seen.buf, "");
	cuco_compile_job_release(&job);
	cuco_strbuf_release(&seen);
	cuco_strbuf_release(&host);
}

static void test_object_with_multicast_refused(void **state)
{
	struct cuco_compile_job job;
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/cand.cu", wl_dir);
	cuco_compile_job_init(&job, "cand", path, "int HIDE_PTX;\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "refused: the PTX (x.ptx) holds a multimem instruction");
	assert_false(cuco_file_exists(job.so_path));
	assert_int_equal(cache_entries("sandbox."), 0);
	cuco_compile_job_release(&job);
	cuco_compile_job_init(&job, "cand", path, "int HIDE_SYM;\n");
	compile_fake(&job, &seen);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "refused: the shared object names cuMulticast");
	assert_false(cuco_file_exists(job.so_path));
	cuco_compile_job_release(&job);
	cuco_strbuf_release(&seen);
}

/* Real nvcc, sm_90a: multimem in inline asm that no source scan can read. */
static void test_real_nvcc_hidden_multimem(void **state)
{
	static const char code[] =
	    "#define S(x) #x\n"
	    "__global__ void k(float *p)\n"
	    "{\n"
	    "\tasm volatile(S(multi) S(mem) \".red.relaxed.sys.global.add.f32 [%0], %1;\"\n"
	    "\t             : : \"l\"(p), \"f\"(1.0f) : \"memory\");\n"
	    "}\n"
	    "extern \"C\" void launch(float *p) { k<<<1, 1>>>(p); }\n";
	struct cuco_compile_opts o;
	struct cuco_compile_job job;
	struct cuco_err err;
	char path[256];

	(void)state;
	unsetenv("CUCO_NVCC");
	if (access(cuco_nvcc_path(), X_OK)) {
		print_message("no nvcc here: skipped\n");
		skip();
	}
	assert_int_equal(cuco_codescan_multicast(code, NULL), 0);
	snprintf(path, sizeof(path), "%s/hidden.cu", wl_dir);
	compile_opts(&o);
	o.arch = "90a";
	cuco_compile_job_init(&job, "hidden", path, code);
	assert_int_equal(cuco_compile_many(&o, &job, 1, &err), CUCO_OK);
	assert_int_equal(job.code, CUCO_ERR_COMPILE);
	assert_contains(job.log.buf, "holds a multimem instruction");
	assert_false(cuco_file_exists(job.so_path));
	assert_int_equal(cache_entries("sandbox."), 0);
	cuco_compile_job_release(&job);
}

/*
 * Run the stand-in harness whose shell body is script (its "$@" the harness's
 * arguments) on one program, cand.so, from tmp_dir; what it wrote to its
 * stderr (the run's log: it may not write outside its directory) into seen.
 */
static void run_stand_in(const char *script, const char *launcher, struct cuco_strbuf *seen)
{
	char harness[256], so[256], text[2048];
	struct cuco_run_opts ro;
	struct cuco_manifest m;
	struct cuco_shape shape;
	struct cuco_run_program prog = {"cand", so, 1};
	struct cuco_run_result res;
	struct cuco_err err;
	char *cwd;

	snprintf(harness, sizeof(harness), "%s/harness.sh", tmp_dir);
	snprintf(so, sizeof(so), "%s/cand.so", tmp_dir);
	snprintf(text, sizeof(text), "#!/bin/sh\n{\n%s\n} >&2\necho '{\"programs\":[]}'\n", script);
	assert_int_equal(write_text(harness, text), 0);
	assert_int_equal(chmod(harness, 0755), 0);
	assert_int_equal(write_text(so, "ELF"), 0);
	setenv("CUCO_HARNESS", harness, 1);
	cuco_run_opts_default(&ro);
	ro.launcher = launcher;
	memset(&m, 0, sizeof(m));
	m.name = "wl";
	m.tolerance = 0.01;
	memset(&shape, 0, sizeof(shape));
	snprintf(shape.name, sizeof(shape.name), "s");
	cuco_run_result_init(&res);
	cuco_err_clear(&err);
	cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(tmp_dir), 0);
	prog.so_path = "cand.so"; /* relative to where cuco runs: made absolute for the harness */
	(void)cuco_run_programs(&ro, &m, "cand.so", &shape, &prog, 1, &res, &err);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	cuco_strbuf_reset(seen);
	cuco_strbuf_adds(seen, res.log.buf);
	cuco_run_result_release(&res);
	unsetenv("CUCO_HARNESS");
}

/* The harness (a stand-in that says where it ran) starts in a private folder, removed after. */
static void test_harness_private_dir(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char want[256];

	(void)state;
	run_stand_in("pwd; stat -c %a .; echo \"$@\"", NULL, &seen);
	assert_contains(seen.buf, "/cuco-run.");
	assert_contains(seen.buf, "\n700\n");
	snprintf(want, sizeof(want), "cand=%s/cand.so", tmp_dir);
	assert_contains(seen.buf, want);
	{
		char dir[256];
		snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(seen.buf, "\n"), seen.buf);
		assert_false(cuco_file_exists(dir));
	}
	cuco_strbuf_release(&seen);
}

/* Shell: try NAME PATH says "NAME written" or "NAME refused" as creating PATH went. */
#define TRY_SH                                                                             \
	"try() { if ( : > \"$2\" ) 2>/dev/null; then echo \"$1 written\"; else echo \"$1 " \
	"refused\"; fi; }\n"

/*
 * A hostile harness run (its host code is a candidate's) tries to write
 * beside the program it was given (where cuco was started), into the state
 * directory and its cache, over a cached object and to the user's $HOME:
 * none of them is in the view (all but $HOME lie under /tmp here, and the
 * view's /tmp is its own), so nothing reaches the node's files; its own
 * directory (its TMPDIR and $HOME), /tmp and /dev/shm are written, the last
 * two its own too.
 */
static void test_harness_read_only_view(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char script[1536], obj[256], host_tmp[128], host_shm[128];
	const char *home = getenv("HOME") ? getenv("HOME") : "/root";

	(void)state;
	if (!cuco_run_jailed())
		skip(); /* this kernel refuses the namespaces: cuco doctor says why */
	assert_int_equal(cuco_mkdir_p(cache_dir), 0);
	snprintf(obj, sizeof(obj), "%s/trusted.so", cache_dir);
	assert_int_equal(write_text(obj, "TRUSTED"), 0);
	snprintf(host_tmp, sizeof(host_tmp), "/tmp/cuco-test-outside.%d", (int)getpid());
	snprintf(host_shm, sizeof(host_shm), "/dev/shm/cuco-test.%d", (int)getpid());
	snprintf(script, sizeof(script),
	         TRY_SH "try beside %s/beside; try cache %s/new.so; try object %s; try state "
	                "\"$CUCO_STATE/x\"\n"
	                "try tmp %s; try home %s/cuco-test-outside.%d\n"
	                "try own ./own; try tmpdir \"$TMPDIR/t\"; try shm %s\n"
	                "[ \"$TMPDIR\" = \"$(pwd)\" ] && [ \"$HOME\" = \"$(pwd)\" ] && echo tmpdir "
	                "is own",
	         tmp_dir, cache_dir, obj, host_tmp, home, (int)getpid(), host_shm);
	run_stand_in(script, NULL, &seen);
	assert_contains(seen.buf, "object refused\n"); /* in the view, read-only */
	assert_contains(seen.buf, "tmp written\n");
	assert_contains(seen.buf, "own written\n");
	assert_contains(seen.buf, "tmpdir written\n");
	assert_contains(seen.buf, "shm written\n");
	assert_contains(seen.buf, "tmpdir is own\n");
	/* nothing reached the node: its /tmp and /dev/shm were its own */
	assert_false(cuco_file_exists(host_tmp));
	assert_false(cuco_file_exists(host_shm));
	snprintf(obj, sizeof(obj), "%s/beside", tmp_dir);
	assert_false(cuco_file_exists(obj));
	snprintf(obj, sizeof(obj), "%s/new.so", cache_dir);
	assert_false(cuco_file_exists(obj));
	snprintf(obj, sizeof(obj), "%s/state/x", tmp_dir);
	assert_false(cuco_file_exists(obj));
	snprintf(obj, sizeof(obj), "%s/cuco-test-outside.%d", home, (int)getpid());
	assert_false(cuco_file_exists(obj));
	snprintf(obj, sizeof(obj), "%s/trusted.so", cache_dir);
	cuco_strbuf_reset(&seen);
	assert_int_equal(cuco_strbuf_read_file(&seen, obj), 0);
	assert_string_equal(seen.buf, "TRUSTED");
	cuco_strbuf_release(&seen);
}

/*
 * With a launcher (mpirun, here env) the harness starts where cuco was
 * started (read-only in the view) and writes its result file into the run's
 * private directory, in the state directory (of which it sees nothing
 * else). Where the directory cuco was started in holds the state directory
 * (or $HOME), it is not in the view: the launcher starts in the run's own.
 */
static void test_launcher_read_only_view(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char script[1024], want[256], other[64], *saved;

	(void)state;
	if (!cuco_run_jailed())
		skip(); /* this kernel refuses the namespaces: cuco doctor says why */
	assert_int_equal(cuco_mkdir_p(cache_dir), 0);
	snprintf(script, sizeof(script),
	         TRY_SH
	         "res=; while [ $# -gt 0 ]; do [ \"$1\" = --result-file ] && res=$2; shift; done\n"
	         "echo \"started in $(pwd)\"; echo \"result in $(dirname \"$res\")\"\n"
	         "try beside %s/beside; try cache %s/new.so; try result \"$res\"",
	         tmp_dir, cache_dir);
	/* the state directory elsewhere: where cuco was started is in the view */
	snprintf(other, sizeof(other), "/tmp/cuco-test-sandbox-state-XXXXXX");
	assert_non_null(mkdtemp(other));
	saved = strdup(getenv("CUCO_STATE"));
	setenv("CUCO_STATE", other, 1);
	run_stand_in(script, "env", &seen);
	snprintf(want, sizeof(want), "started in %s\n", tmp_dir);
	assert_contains(seen.buf, want);
	snprintf(want, sizeof(want), "result in %s/cuco-run.", other);
	assert_contains(seen.buf, want); /* a private directory in the state directory */
	assert_contains(seen.buf, "beside refused\n"); /* where cuco was started: read-only */
	assert_contains(seen.buf, "result written\n");
	setenv("CUCO_STATE", saved, 1);
	free(saved);
	cuco_proc_remove_tree(other);
	/* the state directory inside where cuco was started: only the run's folder */
	run_stand_in(script, "env", &seen);
	snprintf(want, sizeof(want), "started in %s/state/cuco-run.", tmp_dir);
	assert_contains(seen.buf, want);
	assert_contains(seen.buf, "result written\n");
	snprintf(want, sizeof(want), "%s/beside", tmp_dir);
	assert_false(cuco_file_exists(want));
	snprintf(want, sizeof(want), "%s/new.so", cache_dir);
	assert_false(cuco_file_exists(want));
	cuco_strbuf_release(&seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_candidate_private_dir),
	    cmocka_unit_test(test_host_file_include_refused),
	    cmocka_unit_test(test_object_with_multicast_refused),
	    cmocka_unit_test(test_real_nvcc_hidden_multimem),
	    cmocka_unit_test(test_harness_private_dir),
	    cmocka_unit_test(test_harness_read_only_view),
	    cmocka_unit_test(test_launcher_read_only_view),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
