/*
 * test_compile_share.c - compiles shared between threads, without a GPU and
 * without CUDA: a fake nvcc (a shell script, $CUCO_NVCC) that logs each run
 * with its niceness, scheduling policy and CPUs, can sleep, fails sources
 * marked BROKEN, and writes its output in two steps. Covered: where
 * background compiles may run (2, 16, 32 CPUs, SMT siblings, a taskset),
 * that a child gets the schedule asked for, that a compile in flight is
 * waited for and not raced, that its failure reaches the next call with the
 * same log, that the cache never shows a half-written .so, that a
 * cancelled compile stops at once and is not remembered as a failure, and
 * the cascade evaluator's prefetch: in the background, at low priority,
 * its failures reported by the later evaluation (also across GPU slots).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_text.h"
#include "rm_tree.h"
#include "cascade/cascade.h"
#include "search/evolve.h"
#include "search/slots.h"
#include "util/paths.h"
#include "util/proc.h"
#include "util/strbuf.h"

#define SOURCE_DIR CUCO_SOURCE_DIR "/tests/fixtures/cascade"

static char tmp_dir[64], cache_dir[128], nvcc_log[128], nvcc_path[128];

/* The fake nvcc: "$source_basename nice policy cpus" per run into $CUCO_FAKE_NVCC_LOG. */
static const char fake_nvcc[] =
    "#!/bin/sh\n"
    "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, fake'; exit 0; fi\n"
    "out=; src=\n"
    "while [ $# -gt 0 ]; do\n"
    "  case \"$1\" in -o) out=$2; shift ;; *.cu) src=$1 ;; esac\n"
    "  shift\n"
    "done\n"
    "echo \"$(sed -n 2p \"$src\") $(cut -d' ' -f19,41 /proc/$$/stat) "
    "$(grep Cpus_allowed_list /proc/$$/status | cut -f2)\" >> \"$CUCO_FAKE_NVCC_LOG\"\n"
    "echo \"$TMPDIR\" >> \"$CUCO_FAKE_NVCC_LOG.tmpdir\"\n"
    "sleep \"${CUCO_FAKE_NVCC_SLEEP:-0}\"\n"
    "if grep -q BROKEN \"$src\"; then\n"
    "  echo \"$(sed -n 2p \"$src\"): error: broken on purpose\" >&2; exit 1\n"
    "fi\n"
    "if [ -n \"$CUCO_FAKE_NVCC_FAIL_HOST\" ] && head -1 \"$src\" | grep -q '/host.cu\"'; then\n"
    "  echo 'host.cu: error: no host program today' >&2; exit 1\n"
    "fi\n"
    "printf half > \"$out\"; sleep 0.2; printf ' whole\\n' >> \"$out\"\n";

static int group_setup(void **state)
{
	FILE *f;

	(void)state;
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/cuco-test-share-XXXXXX");
	if (!mkdtemp(tmp_dir))
		return -1;
	snprintf(cache_dir, sizeof(cache_dir), "%s/state/cache", tmp_dir);
	snprintf(nvcc_log, sizeof(nvcc_log), "%s/nvcc.log", tmp_dir);
	snprintf(nvcc_path, sizeof(nvcc_path), "%s/nvcc", tmp_dir);
	f = fopen(nvcc_path, "w");
	if (!f || fputs(fake_nvcc, f) == EOF || fclose(f) || chmod(nvcc_path, 0755))
		return -1;
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	setenv("CUCO_NVCC", nvcc_path, 1);
	setenv("CUCO_FAKE_NVCC_LOG", nvcc_log, 1);
	/* the fake nvcc logs beside the test, which a candidate's compile view does not hold
	 * (the view is tests/unit/test_sandbox.c's and tests/hostile/'s to check) */
	setenv("CUCO_SANDBOX_RUN_JAIL", "0", 1);
	setenv("CUCO_HARNESS", CUCO_BINARY_DIR "/cuco-harness", 1);
	{
		char state_dir[128];
		snprintf(state_dir, sizeof(state_dir), "%s/state", tmp_dir);
		setenv("CUCO_STATE", state_dir, 1);
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmp_dir[0])
		rm_tree(tmp_dir);
	return 0;
}

static void compile_opts(struct cuco_compile_opts *o)
{
	struct cuco_err err;

	cuco_err_clear(&err);
	if (cuco_compile_opts_default(o, &err))
		fail_msg("cuco_compile_opts_default: %s", err.msg);
	o->cache_dir = cache_dir;
	o->jobs = 4;
}

/* Lines of the fake nvcc's log that mention what (its runs on that source). */
static int nvcc_runs(const char *what)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int n = 0;

	if (cuco_strbuf_read_file(&sb, nvcc_log) == 0)
		for (const char *p = sb.buf; (p = strstr(p, what)); p += strlen(what))
			n++;
	cuco_strbuf_release(&sb);
	return n;
}

/* The fake nvcc's log line for what ("" when none). */
static void nvcc_line(const char *what, char *out, size_t len)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	const char *p;

	out[0] = '\0';
	if (cuco_strbuf_read_file(&sb, nvcc_log) == 0 && (p = strstr(sb.buf, what)))
		snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
	cuco_strbuf_release(&sb);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Wait until what has started n times (up to 60 s: on a busy machine a
 * background nvcc is slow to start).
 */
static void wait_runs(const char *what, int n)
{
	for (int i = 0; i < 6000 && nvcc_runs(what) < n; i++)
		sleep_ms(10);
	assert_int_equal(nvcc_runs(what), n);
}

static int cache_files_with(const char *part)
{
	DIR *d = opendir(cache_dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strstr(de->d_name, part) != NULL;
	closedir(d);
	return n;
}

/* ---- where background compiles run ---- */

static void range(struct cuco_cpus *s, int lo, int hi)
{
	memset(s, 0, sizeof(*s));
	for (int c = lo; c <= hi; c++)
		cuco_cpus_add(s, c);
}

/* 16 cores with 2 hardware threads each: CPU c and c +- 16. */
static void smt16(int cpu, struct cuco_cpus *out)
{
	cuco_cpus_add(out, cpu);
	cuco_cpus_add(out, cpu < 16 ? cpu + 16 : cpu - 16);
}

/* A program is compiled as NVSHMEM's when its directive names the nvshmem backend, or,
 * without a directive, when it includes cuco_dev/nvshmem.cuh; a template's guarded include
 * does not count for another backend. */
/* Every nvcc gets a TMPDIR of its own under the cache, gone when it ends: nvcc names its
 * temporary files by its PID, 1 for each in a PID namespace of its own. */
static void test_compile_tmpdir(void **state)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job jobs[3];
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char log[160], *save = NULL, *dirs[3] = {NULL};
	const char *src[3] = {"int a;\n// tmp one\n", "int b;\n// tmp two\n",
	                      "int c;\n// tmp three\n"};
	int n = 0;

	(void)state;
	snprintf(log, sizeof(log), "%s.tmpdir", nvcc_log);
	unlink(log);
	compile_opts(&o);
	for (int i = 0; i < 3; i++)
		cuco_compile_job_init(&jobs[i], "tmp", SOURCE_DIR "/comm_only.cu", src[i]);
	assert_int_equal(cuco_compile_many(&o, jobs, 3, &err), CUCO_OK);
	assert_int_equal(cuco_strbuf_read_file(&sb, log), 0);
	for (char *p = strtok_r(sb.buf, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		struct stat st;

		assert_true(n < 3);
		assert_int_equal(strncmp(p, cache_dir, strlen(cache_dir)), 0);
		assert_non_null(strstr(p, "/nvcc-tmp."));
		assert_int_not_equal(stat(p, &st), 0); /* removed */
		for (int k = 0; k < n; k++)
			assert_string_not_equal(dirs[k], p);
		dirs[n++] = p;
	}
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++)
		cuco_compile_job_release(&jobs[i]);
	cuco_strbuf_release(&sb);
}

static void test_compile_needs_nvshmem(void **state)
{
	(void)state;
	assert_true(cuco_compile_needs_nvshmem(
	    "// cuco-directive: {\"backend\":\"nvshmem\",\"placement\":\"sequential\"}\n"));
	assert_false(cuco_compile_needs_nvshmem(
	    "// cuco-directive: {\"backend\":\"lsa\"}\n#if 0\n#include <cuco_dev/nvshmem.cuh>\n"
	    "#endif\n// \"nvshmem\" in a comment\n"));
	assert_true(cuco_compile_needs_nvshmem("#include <cuco_dev/nvshmem.cuh>\nint x;\n"));
	assert_false(cuco_compile_needs_nvshmem("#include <cuco_dev/lsa.cuh>\n"));
	assert_false(cuco_compile_needs_nvshmem(NULL));
}

static void test_background_cpus(void **state)
{
	struct cuco_cpus allowed, out;

	(void)state;
	/* 2 CPUs, 2 ranks (keep 3): nothing set aside, no pinning (never an empty set) */
	range(&allowed, 0, 1);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, NULL, &out), 0);
	assert_int_equal(cuco_cpus_count(&out), 0);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 2, NULL, &out), 0);
	/* 16 CPUs: the first 3 for the harness, 13 for nvcc */
	range(&allowed, 0, 15);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, NULL, &out), 13);
	for (int c = 0; c < 16; c++)
		assert_int_equal(cuco_cpus_has(&out, c), c >= 3);
	assert_false(cuco_cpus_has(&out, 16));
	/* 32 CPUs: 29 for nvcc; as 16 cores x 2 threads, the kept cores' siblings too */
	range(&allowed, 0, 31);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, NULL, &out), 29);
	for (int c = 0; c < 32; c++)
		assert_int_equal(cuco_cpus_has(&out, c), c >= 3);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, smt16, &out), 26);
	for (int c = 0; c < 32; c++)
		assert_int_equal(cuco_cpus_has(&out, c), (c % 16) >= 3);
	/* a taskset of CPUs 4-19: the first 3 of those are kept */
	range(&allowed, 4, 19);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, NULL, &out), 13);
	assert_false(cuco_cpus_has(&out, 6));
	assert_true(cuco_cpus_has(&out, 7));
	assert_true(cuco_cpus_has(&out, 19));
	/* exactly twice keep still splits; keep 0 pins nothing */
	range(&allowed, 0, 5);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 3, NULL, &out), 3);
	assert_int_equal(cuco_compile_background_cpus(&allowed, 0, NULL, &out), 0);
	/* on this machine: pinned only with room for it, always niced and idle-class */
	{
		struct cuco_proc_sched s;
		struct cuco_cpus mine;
		int n = cuco_cpus_allowed(&mine);
		cuco_compile_background_sched(2, &s);
		assert_true(n >= 1);
		assert_int_equal(s.pin, n >= 6);
		assert_int_equal(s.pin ? cuco_cpus_count(&s.cpus) : 0, n >= 6 ? n - 3 : 0);
		assert_int_equal(s.nice, 19);
		assert_int_equal(s.idle, 1);
	}
}

/* A child started with a schedule runs on its CPU, niced, in SCHED_IDLE. */
static void test_proc_sched(void **state)
{
	struct cuco_proc_sched s;
	struct cuco_cpus mine;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	char *status_argv[] = {"grep", "Cpus_allowed_list", "/proc/self/status", NULL};
	char *stat_argv[] = {"cut", "-d ", "-f19,41", "/proc/self/stat", NULL};
	char want[64];
	int last = -1, ofd, efd, base, nice_now = -100, policy = -1;
	pid_t pid;

	(void)state;
	cuco_cpus_allowed(&mine);
	for (int c = 0; c < CUCO_CPUS_MAX; c++)
		if (cuco_cpus_has(&mine, c))
			last = c;
	memset(&s, 0, sizeof(s));
	s.pin = 1;
	cuco_cpus_add(&s.cpus, last);
	s.nice = 7;
	s.idle = 1;
	pid = cuco_proc_start_sched(status_argv, NULL, &s, &ofd, &efd);
	assert_true(pid > 0);
	cuco_proc_wait(pid, ofd, efd, &out, NULL, 10, &st);
	snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", last);
	assert_string_equal(out.buf, want);
	cuco_strbuf_reset(&out);
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	pid = cuco_proc_start_sched(stat_argv, NULL, &s, &ofd, &efd);
	assert_true(pid > 0);
	cuco_proc_wait(pid, ofd, efd, &out, NULL, 10, &st);
	assert_int_equal(sscanf(out.buf, "%d %d", &nice_now, &policy), 2);
	assert_int_equal(nice_now, base + 7 > 19 ? 19 : base + 7);
	assert_int_equal(policy, 5); /* SCHED_IDLE */
	/* without a schedule: as this process */
	cuco_strbuf_reset(&out);
	pid = cuco_proc_start(stat_argv, NULL, &ofd, &efd);
	cuco_proc_wait(pid, ofd, efd, &out, NULL, 10, &st);
	assert_int_equal(sscanf(out.buf, "%d %d", &nice_now, &policy), 2);
	assert_int_equal(nice_now, base);
	assert_int_equal(policy, 0);
	cuco_strbuf_release(&out);
}

/* ---- compiles shared between threads ---- */

struct compile_call {
	const struct cuco_compile_opts *o;
	struct cuco_compile_job *jobs;
	int n, rc;
	struct cuco_err err;
};

static void *compile_thread(void *arg)
{
	struct compile_call *c = arg;

	cuco_err_clear(&c->err);
	c->rc = cuco_compile_many(c->o, c->jobs, c->n, &c->err);
	return NULL;
}

/* Watches the cache while a compile writes: a .so is never seen half-written. */
struct watcher {
	const char *so_path;
	atomic_int stop;
	int saw_partial_tmp; /* the fake's first half seen under a temporary name */
	int saw_partial_so;  /* ... or under the final name (must never happen) */
	int saw_whole_so;
};

static void *watch_thread(void *arg)
{
	struct watcher *w = arg;

	while (!w->stop) {
		DIR *d = opendir(cache_dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			struct cuco_strbuf sb = CUCO_STRBUF_INIT;
			char p[512];
			snprintf(p, sizeof(p), "%s/%s", cache_dir, de->d_name);
			if (!strstr(de->d_name, ".so") || cuco_strbuf_read_file(&sb, p)) {
				cuco_strbuf_release(&sb);
				continue;
			}
			if (!strcmp(p, w->so_path)) {
				if (!strcmp(sb.buf, "half whole\n"))
					w->saw_whole_so = 1;
				else
					w->saw_partial_so = 1;
			} else if (strstr(de->d_name, ".tmp") && !strcmp(sb.buf, "half")) {
				w->saw_partial_tmp = 1;
			}
			cuco_strbuf_release(&sb);
		}
		if (d)
			closedir(d);
		sleep_ms(5);
	}
	return NULL;
}

/*
 * Two threads compile the same two programs with one in-flight table: the
 * second waits for the first's nvcc instead of starting its own, then takes
 * the .so from the cache and the failure with the first's log. The first ran
 * with the background schedule, the second not at all.
 */
static void test_share_inflight(void **state)
{
	struct cuco_compile_opts o, bg;
	struct cuco_compile_inflight *t;
	struct cuco_proc_sched s;
	struct cuco_compile_job a[2], b[2], c;
	struct compile_call ca;
	struct watcher w;
	struct cuco_err err;
	pthread_t ta, tw;
	char line[256], want[64];
	const char *good = "// share-good\nint good;\n";
	const char *bad = "// share-broken\nBROKEN\n";

	(void)state;
	cuco_err_clear(&err);
	compile_opts(&o);
	assert_int_equal(cuco_compile_inflight_new(&t, &err), CUCO_OK);
	o.inflight = t;
	memset(&s, 0, sizeof(s));
	s.nice = 19;
	s.idle = 1;
	bg = o;
	bg.sched = &s;
	setenv("CUCO_FAKE_NVCC_SLEEP", "0.6", 1);
	cuco_compile_job_init(&a[0], "good", SOURCE_DIR "/good.cu", good);
	cuco_compile_job_init(&a[1], "broken", SOURCE_DIR "/broken.cu", bad);
	cuco_compile_job_init(&b[0], "good-again", SOURCE_DIR "/good.cu", good);
	cuco_compile_job_init(&b[1], "broken-again", SOURCE_DIR "/broken.cu", bad);
	for (int i = 0; i < 2; i++) /* workload files: nvcc writes beside the cache's names */
		a[i].trusted = b[i].trusted = 1;
	memset(&w, 0, sizeof(w));
	ca = (struct compile_call){&bg, a, 2, -1, {0}};
	assert_int_equal(pthread_create(&ta, NULL, compile_thread, &ca), 0);
	wait_runs("share-good", 1);
	wait_runs("share-broken", 1);
	/* both are in flight: the second call must wait for them, not start nvcc */
	w.so_path = a[0].so_path;
	assert_int_equal(pthread_create(&tw, NULL, watch_thread, &w), 0);
	assert_int_equal(cuco_compile_many(&o, b, 2, &err), CUCO_OK);
	assert_int_equal(pthread_join(ta, NULL), 0);
	sleep_ms(50); /* a last look once everything is in place */
	w.stop = 1;
	assert_int_equal(pthread_join(tw, NULL), 0);
	assert_int_equal(ca.rc, CUCO_OK);
	assert_int_equal(nvcc_runs("share-good"), 1);
	assert_int_equal(nvcc_runs("share-broken"), 1);
	/* the first call compiled them */
	assert_int_equal(a[0].code, CUCO_OK);
	assert_int_equal(a[0].cached, 0);
	assert_int_equal(a[1].code, CUCO_ERR_COMPILE);
	assert_contains(a[1].log.buf, "$ ");
	assert_contains(a[1].log.buf, "share-broken: error: broken on purpose");
	/* the second got the same .so and the same failure, log and all */
	assert_int_equal(b[0].code, CUCO_OK);
	assert_int_equal(b[0].cached, 1);
	assert_string_equal(b[0].so_path, a[0].so_path);
	assert_int_equal(b[1].code, CUCO_ERR_COMPILE);
	assert_string_equal(b[1].log.buf, a[1].log.buf);
	assert_true(b[1].seconds == a[1].seconds);
	/* the cache: half-written output only ever under a temporary name */
	assert_true(w.saw_partial_tmp);
	assert_false(w.saw_partial_so);
	assert_true(w.saw_whole_so);
	assert_int_equal(cache_files_with(".tmp"), 0);
	/* the background schedule reached nvcc: niceness 19, SCHED_IDLE (policy 5) */
	nvcc_line("share-good", line, sizeof(line));
	errno = 0;
	snprintf(want, sizeof(want), "share-good %d 5 ",
	         getpriority(PRIO_PROCESS, 0) + 19 > 19 ? 19 : getpriority(PRIO_PROCESS, 0) + 19);
	assert_contains(line, want);
	/* a failure is handed on once: the next call compiles it again */
	setenv("CUCO_FAKE_NVCC_SLEEP", "0", 1);
	cuco_compile_job_init(&c, "broken-third", SOURCE_DIR "/broken.cu", bad);
	c.trusted = 1;
	assert_int_equal(cuco_compile_many(&o, &c, 1, &err), CUCO_OK);
	assert_int_equal(c.code, CUCO_ERR_COMPILE);
	assert_int_equal(nvcc_runs("share-broken"), 2);
	for (int i = 0; i < 2; i++) {
		cuco_compile_job_release(&a[i]);
		cuco_compile_job_release(&b[i]);
	}
	cuco_compile_job_release(&c);
	cuco_compile_inflight_free(t);
}

/*
 * A failure noted into a table (the GPU slots' own) is taken by the next
 * call without nvcc; a success is not noted.
 */
static void test_share_note(void **state)
{
	struct cuco_compile_opts o;
	struct cuco_compile_inflight *t;
	struct cuco_compile_job j, k;
	struct cuco_err err;
	const char *bad = "// note-broken\nBROKEN\n";

	(void)state;
	cuco_err_clear(&err);
	compile_opts(&o);
	setenv("CUCO_FAKE_NVCC_SLEEP", "0", 1);
	cuco_compile_job_init(&j, "broken", SOURCE_DIR "/broken.cu", bad);
	assert_int_equal(cuco_compile_many(&o, &j, 1, &err), CUCO_OK);
	assert_int_equal(j.code, CUCO_ERR_COMPILE);
	assert_int_equal(nvcc_runs("note-broken"), 1);
	assert_int_equal(cuco_compile_inflight_new(&t, &err), CUCO_OK);
	cuco_compile_inflight_note(t, &j);
	o.inflight = t;
	cuco_compile_job_init(&k, "broken-again", SOURCE_DIR "/broken.cu", bad);
	assert_int_equal(cuco_compile_many(&o, &k, 1, &err), CUCO_OK);
	assert_int_equal(k.code, CUCO_ERR_COMPILE);
	assert_string_equal(k.log.buf, j.log.buf);
	assert_int_equal(nvcc_runs("note-broken"), 1);
	cuco_compile_job_release(&j);
	cuco_compile_job_release(&k);
	cuco_compile_inflight_free(t);
}

/* Cancel: nvcc in flight is killed at once, nothing is left, nothing is remembered. */
static void test_share_cancel(void **state)
{
	struct cuco_compile_opts o, bg;
	struct cuco_compile_inflight *t;
	struct cuco_compile_job a[2], b;
	struct compile_call ca;
	struct cuco_err err;
	atomic_int cancel = 0;
	pthread_t ta;
	double t0;
	const char *slow = "// cancel-slow\nint slow;\n";
	const char *slow2 = "// cancel-second\nint second;\n";

	(void)state;
	cuco_err_clear(&err);
	compile_opts(&o);
	o.jobs = 1; /* the second job waits for a slot: cancelled before nvcc runs */
	assert_int_equal(cuco_compile_inflight_new(&t, &err), CUCO_OK);
	o.inflight = t;
	bg = o;
	bg.cancel = &cancel;
	setenv("CUCO_FAKE_NVCC_SLEEP", "20", 1);
	cuco_compile_job_init(&a[0], "slow", SOURCE_DIR "/slow.cu", slow);
	cuco_compile_job_init(&a[1], "second", SOURCE_DIR "/second.cu", slow2);
	ca = (struct compile_call){&bg, a, 2, -1, {0}};
	assert_int_equal(pthread_create(&ta, NULL, compile_thread, &ca), 0);
	wait_runs("cancel-slow", 1);
	t0 = cuco_now();
	atomic_store(&cancel, 1);
	assert_int_equal(pthread_join(ta, NULL), 0);
	assert_true(cuco_now() - t0 < 5);
	assert_int_equal(ca.rc, CUCO_OK);
	assert_int_equal(a[0].code, CUCO_ERR_SYSTEM);
	assert_contains(a[0].log.buf, "cancelled");
	assert_int_equal(a[1].code, CUCO_ERR_SYSTEM);
	assert_contains(a[1].log.buf, "cancelled before nvcc ran");
	assert_int_equal(nvcc_runs("cancel-second"), 0);
	assert_int_equal(cache_files_with(".tmp"), 0);
	/* not a failure of the program: the next call compiles it */
	setenv("CUCO_FAKE_NVCC_SLEEP", "0", 1);
	cuco_compile_job_init(&b, "slow-again", SOURCE_DIR "/slow.cu", slow);
	assert_int_equal(cuco_compile_many(&o, &b, 1, &err), CUCO_OK);
	assert_int_equal(b.code, CUCO_OK);
	assert_int_equal(b.cached, 0);
	assert_int_equal(nvcc_runs("cancel-slow"), 2);
	for (int i = 0; i < 2; i++)
		cuco_compile_job_release(&a[i]);
	cuco_compile_job_release(&b);
	cuco_compile_inflight_free(t);
}

/* ---- the cascade evaluator's prefetch ---- */

/* A candidate: marker line (what the fake nvcc logs), the fixture seed, BROKEN. */
static char *broken_candidate(const char *seed, const char *marker)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	cuco_strbuf_addf(&sb, "// %s\n%sBROKEN\n", marker, seed);
	return cuco_strbuf_detach(&sb, NULL);
}

/* Prefetch two candidates, then evaluate them: compiled once, failures reported as usual. */
static void prefetch_then_evaluate(struct cuco_evaluator *ev, const char *seed, const char *ma,
                                   const char *mb)
{
	struct cuco_candidate c[2];
	struct cuco_eval_outcome outs[2];
	struct cuco_err err;
	char *code[2] = {broken_candidate(seed, ma), broken_candidate(seed, mb)}, want[96];
	double t0;

	cuco_err_clear(&err);
	memset(c, 0, sizeof(c));
	c[0].name = ma;
	c[1].name = mb;
	for (int i = 0; i < 2; i++) {
		c[i].code = code[i];
		c[i].program_id = i + 1;
		cuco_eval_outcome_init(&outs[i]);
	}
	setenv("CUCO_FAKE_NVCC_SLEEP", "1.5", 1);
	t0 = cuco_now();
	assert_int_equal(ev->prefetch(ev->ctx, c, 2, &err), CUCO_OK);
	assert_true(cuco_now() - t0 < 1); /* at once: nvcc (1.5 s here) runs behind */
	free(code[0]);                    /* borrowed for the call only */
	code[0] = broken_candidate(seed, ma);
	c[0].code = code[0];
	wait_runs(ma, 1);
	wait_runs(mb, 1);
	/* both compiling in the background: the evaluation waits for them */
	assert_int_equal(ev->evaluate_batch(ev->ctx, c, 2, outs, &err), CUCO_OK);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(outs[i].code, CUCO_ERR_COMPILE);
		assert_string_equal(outs[i].stage, "compile");
		assert_string_equal(outs[i].status, "compile");
		assert_string_equal(outs[i].error, "nvcc failed (see the compile log)");
		snprintf(want, sizeof(want), "%s: error: broken on purpose", c[i].name);
		assert_contains(outs[i].log, want);
		assert_contains(outs[i].log, "$ ");
		assert_int_equal(nvcc_runs(c[i].name), 1);
		cuco_eval_outcome_release(&outs[i]);
		free(code[i]);
	}
}

/*
 * The cascade evaluator's prefetch compiles in the background (niceness 19,
 * SCHED_IDLE) while its batches compile as cuco runs; an evaluation finds
 * the prefetched failures with their logs, with one slot and across two
 * (forked) slots; prefetch_cancel stops a compile in flight at once.
 */
static void test_evaluator_prefetch(void **state)
{
	struct cuco_manifest m;
	struct cuco_run_opts run;
	struct cuco_cascade_evaluator *ce;
	struct cuco_evaluator ev;
	struct cuco_slots slots;
	struct cuco_candidate slow;
	struct cuco_strbuf seed = CUCO_STRBUF_INIT;
	const struct cuco_shape *shape;
	struct cuco_err err;
	char line[256], want[64];
	double t0;
	int base;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(
	    cuco_strbuf_read_file(&seed, CUCO_SOURCE_DIR "/tests/fixtures/evolve/seed.cu"), 0);
	if (cuco_manifest_load(CUCO_SOURCE_DIR "/workloads/gemm_allgather/manifest.json", &m, &err))
		fail_msg("%s", err.msg);
	cuco_run_opts_default(&run);
	run.ranks = 2;
	setenv("CUCO_FAKE_NVCC_FAIL_HOST", "1", 1); /* no program runs: nothing needs a GPU */
	shape = cuco_manifest_shape(&m, "2048");
	assert_int_equal(cuco_cascade_evaluator_new(&m, &shape, 1, &run, &ce, &err), CUCO_OK);
	cuco_cascade_evaluator_bind(ce, &ev);
	assert_non_null(ev.prefetch);
	assert_non_null(ev.prefetch_cancel);
	prefetch_then_evaluate(&ev, seed.buf, "pf-one-a", "pf-one-b");
	/* the prefetch ran nvcc in the background class, the batch its own compiles not */
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	nvcc_line("pf-one-a", line, sizeof(line));
	snprintf(want, sizeof(want), "pf-one-a %d 5 ", base + 19 > 19 ? 19 : base + 19);
	assert_contains(line, want);
	nvcc_line("// workload.cu", line, sizeof(line));
	snprintf(want, sizeof(want), " %d 0 ", base);
	assert_contains(line, want);
	/* two slots: compiled here first, each forked slot finds the failures */
	memset(&slots, 0, sizeof(slots));
	slots.n = 2;
	cuco_cascade_evaluator_set_slots(ce, &slots);
	cuco_cascade_evaluator_bind(ce, &ev);
	prefetch_then_evaluate(&ev, seed.buf, "pf-two-a", "pf-two-b");
	/* cancel: the compile in flight stops, the call returns when nothing runs */
	memset(&slow, 0, sizeof(slow));
	slow.name = "pf-slow";
	slow.code = "// pf-slow\nint slow;\n";
	setenv("CUCO_FAKE_NVCC_SLEEP", "20", 1);
	assert_int_equal(ev.prefetch(ev.ctx, &slow, 1, &err), CUCO_OK);
	wait_runs("pf-slow", 1);
	t0 = cuco_now();
	ev.prefetch_cancel(ev.ctx);
	assert_true(cuco_now() - t0 < 5);
	assert_int_equal(cache_files_with(".tmp"), 0);
	/* a prefetch still in flight when the evaluator goes is cancelled too */
	slow.code = "// pf-slow-2\nint slow2;\n";
	assert_int_equal(ev.prefetch(ev.ctx, &slow, 1, &err), CUCO_OK);
	wait_runs("pf-slow-2", 1);
	t0 = cuco_now();
	cuco_cascade_evaluator_free(ce);
	assert_true(cuco_now() - t0 < 5);
	setenv("CUCO_FAKE_NVCC_SLEEP", "0", 1);
	unsetenv("CUCO_FAKE_NVCC_FAIL_HOST");
	cuco_manifest_release(&m);
	cuco_strbuf_release(&seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_compile_needs_nvshmem), cmocka_unit_test(test_compile_tmpdir),
	    cmocka_unit_test(test_background_cpus),       cmocka_unit_test(test_proc_sched),
	    cmocka_unit_test(test_share_inflight),        cmocka_unit_test(test_share_note),
	    cmocka_unit_test(test_share_cancel),          cmocka_unit_test(test_evaluator_prefetch),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
