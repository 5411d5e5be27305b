/*
 * compile.c - the cascade's first stage: nvcc each program into a shared
 * object the harness can load. Jobs run in parallel; outputs are cached by
 * a hash of everything that decides the binary (source, flags, nvcc
 * version, cuco's device headers, headers beside the program).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "cascade/sandbox.h"
#include "util/hash.h"
#include "util/paths.h"
#include "util/proc.h"
#include "util/array.h"
#include "util/xalloc.h"

static char default_arch[16] = "90a";

void cuco_compile_set_default_arch(const char *arch)
{
	if (arch && *arch && strlen(arch) < sizeof(default_arch))
		snprintf(default_arch, sizeof(default_arch), "%s", arch);
}

int cuco_compile_opts_default(struct cuco_compile_opts *opts, struct cuco_err *err)
{
	static char cache[PATH_MAX];
	const char *arch = getenv("CUCO_ARCH");
	const char *dir = getenv("CUCO_CACHE"); /* another folder for the cache, e.g. shared */

	memset(opts, 0, sizeof(*opts));
	opts->home = cuco_home(err);
	if (!opts->home)
		return err ? err->code : CUCO_ERR_NOT_FOUND;
	if (dir && *dir)
		snprintf(cache, sizeof(cache), "%s", dir);
	else
		snprintf(cache, sizeof(cache), "%s/cache", cuco_state_dir());
	opts->cache_dir = cache;
	opts->arch = arch && *arch ? arch : default_arch;
	opts->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (opts->jobs < 1)
		opts->jobs = 1;
	if (opts->jobs > 16)
		opts->jobs = 16;
	opts->timeout_s = 600;
	return CUCO_OK;
}

void cuco_compile_job_init(struct cuco_compile_job *job, const char *name, const char *path,
                           const char *source)
{
	memset(job, 0, sizeof(*job));
	job->name = name;
	job->path = path;
	job->source = source;
	cuco_strbuf_init(&job->log, 0);
}

void cuco_compile_job_release(struct cuco_compile_job *job)
{
	cuco_strbuf_release(&job->log);
}

static char nvcc_version[256];
static pthread_once_t nvcc_version_once = PTHREAD_ONCE_INIT;

static void read_nvcc_version(void)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	char *argv[] = {(char *)cuco_nvcc_path(), "--version", NULL};

	if (cuco_proc_run(argv, NULL, &out, NULL, 60, &st) == 0 && st.exited && st.code == 0) {
		char *last;
		cuco_strbuf_rtrim(&out);
		last = strrchr(out.buf, '\n');
		snprintf(nvcc_version, sizeof(nvcc_version), "%s", last ? last + 1 : out.buf);
	}
	cuco_strbuf_release(&out);
}

const char *cuco_nvcc_version(void)
{
	/* Once per process, also when a prefetch thread and the loop ask at the same time. */
	pthread_once(&nvcc_version_once, read_nvcc_version);
	return nvcc_version;
}

/* Hash every header file of dir (sorted names) into c. */
static void hash_headers(struct cuco_sha256 *c, const char *dir)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t len = strlen(nm);
		if (cuco_sandbox_is_header(nm)) {
			struct cuco_strbuf sb = CUCO_STRBUF_INIT;
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "%s/%s", dir, nm);
			if (cuco_strbuf_read_file(&sb, p) == 0) {
				cuco_sha256_update(c, nm, len + 1);
				cuco_sha256_update(c, sb.buf, sb.len);
			}
			cuco_strbuf_release(&sb);
		}
		free(ents[i]);
	}
	free(ents);
}

static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, len, ".");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

int cuco_compile_needs_nvshmem(const char *source)
{
	const char *d, *eol;

	if (!source)
		return 0;
	/* a directive decides by its backend (templates include the header under #if) */
	d = strstr(source, "// cuco-directive:");
	if (d) {
		const char *q = strstr(d, "\"nvshmem\"");

		eol = strchr(d, '\n');
		return q != NULL && (eol == NULL || q < eol);
	}
	return strstr(source, "#include <cuco_dev/nvshmem.cuh>") != NULL;
}

/* argv for one nvcc run; strings live in store (freed by caller). */
static void build_argv(const struct cuco_compile_opts *o, const struct cuco_compile_job *job,
                       const char *src, const char *out, char **argv, int max, char **store,
                       int *nstore)
{
	int n = 0;
	char buf[PATH_MAX + 64], srcdir[PATH_MAX];
	const char *nccl = cuco_nccl_home();

#define ADD(s) (argv[n++] = (s))
#define ADDF(...)                                        \
	do {                                             \
		snprintf(buf, sizeof(buf), __VA_ARGS__); \
		store[*nstore] = cuco_xstrdup(buf);      \
		ADD(store[(*nstore)++]);                 \
	} while (0)
	dir_of(job->path, srcdir, sizeof(srcdir));
	ADD((char *)cuco_nvcc_path());
	ADDF("-gencode=arch=compute_%s,code=sm_%s", o->arch, o->arch);
	ADD("-std=c++17");
	ADD("-O3");
	ADD("-lineinfo");
	ADD("-shared");
	ADD("-Xcompiler");
	ADD("-fPIC");
	ADD("-cudart");
	ADD("shared");
	ADDF("-I%s/include", o->home);
	ADDF("-I%s/device/include", o->home);
	if (job->trusted) {
		ADDF("-I%s", srcdir);
	} else {
		/* the sandbox holds the source: its PTX stays there for the object check */
		dir_of(src, srcdir, sizeof(srcdir));
		ADD("-keep");
		ADD("-keep-dir");
		ADDF("%s", srcdir);
	}
	if (nccl) {
		char lib[PATH_MAX];
		ADDF("-I%s/include", nccl);
		/* Wheels ship only libnccl.so.2: then link the system one; the run uses nccl's. */
		snprintf(lib, sizeof(lib), "%s/lib/libnccl.so", nccl);
		if (cuco_file_exists(lib))
			ADDF("-L%s/lib", nccl);
	}
	if (cuco_compile_needs_nvshmem(job->source) && cuco_nvshmem_home()) {
		/* NVSHMEM keeps its device state in the module that links its device library:
		 * relocatable device code, device-linked into this shared object; the host
		 * library by its soname (the wheel has no unversioned link), found through
		 * the runpath here and LD_LIBRARY_PATH where it lies elsewhere */
		const char *nv = cuco_nvshmem_home();
		ADD("-rdc=true");
		ADDF("-I%s/include", nv);
		ADDF("-L%s/lib", nv);
		ADD("-o");
		ADD((char *)out);
		ADD((char *)src);
		ADD("-lnvshmem_device");
		ADD("-Xlinker");
		ADD("-l:libnvshmem_host.so.3");
		ADD("-Xlinker");
		ADDF("-rpath=%s/lib", nv);
	} else {
		ADD("-o");
		ADD((char *)out);
		ADD((char *)src);
	}
	ADD("-lnccl");
	ADD("-lcublas");
	for (int i = 0; i < 4 && job->libs[i]; i++)
		ADDF("-l%s", job->libs[i]);
	ADD(NULL);
	(void)max;
#undef ADD
#undef ADDF
}

static void job_hash(const struct cuco_compile_opts *o, struct cuco_compile_job *job)
{
	struct cuco_sha256 c;
	char dir[PATH_MAX];
	const char *nccl = cuco_nccl_home();

	cuco_sha256_init(&c);
	cuco_sha256_update(&c, "cuco-compile-1", 15);
	cuco_sha256_update(&c, job->source, strlen(job->source) + 1);
	cuco_sha256_update(&c, o->arch, strlen(o->arch) + 1);
	cuco_sha256_update(&c, cuco_nvcc_version(), strlen(cuco_nvcc_version()) + 1);
	if (nccl)
		cuco_sha256_update(&c, nccl, strlen(nccl) + 1);
	for (int i = 0; i < 4 && job->libs[i]; i++)
		cuco_sha256_update(&c, job->libs[i], strlen(job->libs[i]) + 1);
	if (!job->trusted) /* other flags, and a .so that passed the object check */
		cuco_sha256_update(&c, "sandbox-1", 10);
	if (cuco_compile_needs_nvshmem(job->source) && cuco_nvshmem_home()) {
		struct cuco_nvshmem_info nv;

		cuco_nvshmem_probe(&nv, 0);
		cuco_sha256_update(&c, nv.home, strlen(nv.home) + 1);
		cuco_sha256_update(&c, nv.version, strlen(nv.version) + 1);
	}
	snprintf(dir, sizeof(dir), "%s/include/cuco", o->home);
	hash_headers(&c, dir);
	snprintf(dir, sizeof(dir), "%s/device/include/cuco_dev", o->home);
	hash_headers(&c, dir);
	dir_of(job->path, dir, sizeof(dir));
	hash_headers(&c, dir);
	cuco_sha256_hex(&c, job->hash);
}

/*
 * The cache copy of a job's source, led by a #line so nvcc's errors (and
 * -lineinfo) name the program's own file and line, not the cache's name.
 */
static int write_source(const char *dst, const struct cuco_compile_job *job)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int rc;

	cuco_strbuf_adds(&sb, "#line 1 \"");
	for (const char *c = job->path; *c; c++) {
		if (*c == '"' || *c == '\\')
			cuco_strbuf_addch(&sb, '\\');
		cuco_strbuf_addch(&sb, *c);
	}
	cuco_strbuf_adds(&sb, "\"\n");
	cuco_strbuf_adds(&sb, job->source);
	rc = cuco_write_file(dst, sb.buf, sb.len);
	cuco_strbuf_release(&sb);
	return rc;
}

/* ---- compiles in flight, shared by the threads of this process ---- */

/* A hash one call is compiling, or a failure kept for the next call that compiles it. */
struct flight {
	char hash[65];
	int running;    /* 1: a call's nvcc is at it; 0: a kept failure */
	int code;       /* the failure's code */
	double seconds; /* its nvcc time */
	char *log;      /* its log (malloc'd) */
	uint64_t seq;   /* order kept: the oldest failure goes first */
};

struct cuco_compile_inflight {
	pthread_mutex_t mu;
	pthread_cond_t changed; /* a compile finished */
	struct flight *f;
	int n;
	size_t alloc;
	uint64_t seq;
};

int cuco_compile_inflight_new(struct cuco_compile_inflight **out, struct cuco_err *err)
{
	struct cuco_compile_inflight *t = cuco_xcalloc(1, sizeof(*t));

	*out = NULL;
	if (pthread_mutex_init(&t->mu, NULL)) {
		free(t);
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot create a mutex");
	}
	if (pthread_cond_init(&t->changed, NULL)) {
		pthread_mutex_destroy(&t->mu);
		free(t);
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot create a condition variable");
	}
	*out = t;
	return CUCO_OK;
}

void cuco_compile_inflight_free(struct cuco_compile_inflight *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		free(t->f[i].log);
	free(t->f);
	pthread_cond_destroy(&t->changed);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Under t->mu. */
static struct flight *flight_find(struct cuco_compile_inflight *t, const char *hash)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->f[i].hash, hash))
			return &t->f[i];
	return NULL;
}

/* Under t->mu. */
static void flight_drop(struct cuco_compile_inflight *t, struct flight *fl)
{
	free(fl->log);
	*fl = t->f[--t->n];
}

/* Under t->mu: a new entry for hash. */
static struct flight *flight_add(struct cuco_compile_inflight *t, const char *hash)
{
	struct flight *fl = CUCO_ARRAY_PUSH(t->f, t->n, t->alloc);

	memset(fl, 0, sizeof(*fl));
	snprintf(fl->hash, sizeof(fl->hash), "%s", hash);
	return fl;
}

/* Under t->mu: fl (running or new) becomes job's kept failure; the oldest beyond the limit go. */
static void flight_keep(struct cuco_compile_inflight *t, struct flight *fl,
                        const struct cuco_compile_job *job)
{
	int kept = 0;

	fl->log = cuco_xstrdup(job->log.buf);
	fl->running = 0;
	fl->code = job->code;
	fl->seconds = job->seconds;
	fl->seq = t->seq++;
	for (int i = 0; i < t->n; i++)
		kept += !t->f[i].running;
	while (kept-- > CUCO_COMPILE_KEEP_FAILURES) {
		struct flight *old = NULL;
		for (int i = 0; i < t->n; i++)
			if (!t->f[i].running && (!old || t->f[i].seq < old->seq))
				old = &t->f[i];
		flight_drop(t, old);
	}
}

void cuco_compile_inflight_note(struct cuco_compile_inflight *t, const struct cuco_compile_job *job)
{
	struct flight *fl;

	if (job->code == CUCO_OK || !job->hash[0])
		return;
	pthread_mutex_lock(&t->mu);
	fl = flight_find(t, job->hash);
	if (!fl)
		fl = flight_add(t, job->hash);
	if (!fl->running) {
		free(fl->log);
		fl->log = NULL;
		flight_keep(t, fl, job);
	}
	pthread_mutex_unlock(&t->mu);
}

/* What a job does now. */
enum claim {
	CLAIM_CACHED, /* the .so is in the cache */
	CLAIM_TAKEN,  /* a failure another call found: code and log copied */
	CLAIM_BUSY,   /* another call is compiling it: wait */
	CLAIM_NOSLOT, /* to compile, once an nvcc slot is free */
	CLAIM_MINE,   /* to compile now (registered as running) */
};

static enum claim claim(const struct cuco_compile_opts *o, struct cuco_compile_job *job,
                        int may_start)
{
	struct cuco_compile_inflight *t = o->inflight;
	struct flight *fl;
	enum claim r;

	if (!t) {
		if (cuco_file_exists(job->so_path))
			return CLAIM_CACHED;
		return may_start ? CLAIM_MINE : CLAIM_NOSLOT;
	}
	pthread_mutex_lock(&t->mu);
	fl = flight_find(t, job->hash);
	if (cuco_file_exists(job->so_path)) {
		r = CLAIM_CACHED;
	} else if (fl && !fl->running) {
		job->code = fl->code;
		job->seconds = fl->seconds;
		cuco_strbuf_adds(&job->log, fl->log);
		flight_drop(t, fl);
		r = CLAIM_TAKEN;
	} else if (fl) {
		r = CLAIM_BUSY;
	} else if (!may_start) {
		r = CLAIM_NOSLOT;
	} else {
		fl = flight_add(t, job->hash);
		fl->running = 1;
		r = CLAIM_MINE;
	}
	pthread_mutex_unlock(&t->mu);
	return r;
}

/* A job this call compiled is done: its hash is free; a real failure is kept. */
static void unclaim(const struct cuco_compile_opts *o, const struct cuco_compile_job *job,
                    int cancelled)
{
	struct cuco_compile_inflight *t = o->inflight;
	struct flight *fl;

	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	fl = flight_find(t, job->hash);
	if (fl && fl->running) {
		if (job->code == CUCO_OK || cancelled)
			flight_drop(t, fl);
		else
			flight_keep(t, fl, job);
	}
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->mu);
}

/* Wait (at most 0.25 s) until a compile of another call finishes. */
static void wait_others(const struct cuco_compile_opts *o)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 250 * 1000 * 1000;
	if (ts.tv_nsec >= 1000 * 1000 * 1000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000 * 1000 * 1000;
	}
	pthread_mutex_lock(&o->inflight->mu);
	pthread_cond_timedwait(&o->inflight->changed, &o->inflight->mu, &ts);
	pthread_mutex_unlock(&o->inflight->mu);
}

/* ---- compile ---- */

struct running {
	pid_t pid;
	int out_fd, err_fd;
	int job;
	char tmp_out[PATH_MAX]; /* nvcc's output before the rename into the cache */
	char sandbox[PATH_MAX]; /* a candidate's private directory; "" for a trusted job */
	char tmp[PATH_MAX];     /* nvcc's own temporary folder outside a view; "" for none */
};

enum job_state { JOB_TODO, JOB_WAIT, JOB_RUN, JOB_DONE };

static int cancelled(const struct cuco_compile_opts *o)
{
	return o->cancel && atomic_load(o->cancel);
}

/* Start nvcc for job i in a free slot of run; 0, or -1 with the job failed. */
static int start(const struct cuco_compile_opts *o, struct cuco_compile_job *job, int i,
                 struct running *run, int maxp)
{
	static atomic_uint seq; /* temporary names unique to this process and call */
	char src[PATH_MAX], tmp_out[PATH_MAX], sandbox[PATH_MAX] = "", *argv[64], *store[32];
	char home[PATH_MAX], work[PATH_MAX + 8], tmpdir[PATH_MAX + 16], homedir[PATH_MAX + 16];
	char *env[3] = {NULL}, jobtmp[PATH_MAX] = "";
	struct cuco_jail *view = NULL;
	int nstore = 0, ofd, efd;
	struct cuco_compile_opts ao = *o; /* absolute folders: nvcc starts in the sandbox */
	struct cuco_proc_sched sched;
	pid_t pid;

	if (o->sched)
		sched = *o->sched;
	else
		memset(&sched, 0, sizeof(sched));
	/* nvcc's cicc and ptxas end with it, also at a timeout and when cuco dies */
	sched.pidns = 1;
	if (!job->trusted) {
		if (cuco_sandbox_refused(job))
			return -1;
		if (cuco_sandbox_make(o->cache_dir, job, sandbox, sizeof(sandbox))) {
			job->code = CUCO_ERR_IO;
			return -1;
		}
		snprintf(work, sizeof(work), "%s/work", sandbox);
		snprintf(src, sizeof(src), "%s/%.24s.cu", work, job->hash);
		snprintf(tmp_out, sizeof(tmp_out), "%s/%.24s.so", work, job->hash);
		sched.cwd = work;
		sched.netns = 1;
		sched.mem_bytes = cuco_compile_mem_bytes();
		if (realpath(o->home, home))
			ao.home = home;
		/* where the view can be made, nvcc sees only what it needs (sandbox.h); else it
		 * runs as before, which cuco fails closed on for a model's code (cli) */
		if (cuco_run_jailed()) {
			view = cuco_sandbox_view(sandbox, ao.home);
			if (!view || (view->root && chown(work, view->uid, view->gid))) {
				job->code = CUCO_ERR_IO;
				cuco_strbuf_addf(&job->log, "cannot make the compile's view: %s\n",
				                 strerror(errno));
				goto fail;
			}
			sched.jail = view;
			snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", work);
			snprintf(homedir, sizeof(homedir), "HOME=%s", work);
			env[0] = tmpdir;
			env[1] = homedir;
		}
	} else {
		snprintf(src, sizeof(src), "%s/%.24s.cu", o->cache_dir, job->hash);
		snprintf(tmp_out, sizeof(tmp_out), "%s.tmp%d.%u", job->so_path, (int)getpid(),
		         atomic_fetch_add(&seq, 1));
	}
	if (write_source(src, job)) {
		job->code = CUCO_ERR_IO;
		cuco_strbuf_addf(&job->log, "cannot write %s: %s\n", src, strerror(errno));
		goto fail;
	}
	if (cuco_compile_needs_nvshmem(job->source) && !cuco_nvshmem_home()) {
		job->code = CUCO_ERR_COMPILE;
		cuco_strbuf_adds(&job->log,
		                 "NVSHMEM not found: this program includes "
		                 "cuco_dev/nvshmem.cuh; set CUCO_NVSHMEM_HOME or NVSHMEM_HOME, "
		                 "or run scripts/setup-nvshmem.sh\n");
		goto fail;
	}
	/* Outside a view, a TMPDIR of this nvcc's own: nvcc names its temporary files by its
	 * PID, which is 1 for every nvcc in a PID namespace of its own, so two at once in one
	 * /tmp delete each other's files. */
	if (!env[0]) {
		snprintf(jobtmp, sizeof(jobtmp), "%s/nvcc-tmp.XXXXXX", o->cache_dir);
		if (!mkdtemp(jobtmp)) {
			job->code = CUCO_ERR_IO;
			cuco_strbuf_addf(&job->log, "cannot make %s: %s\n", jobtmp,
			                 strerror(errno));
			goto fail;
		}
		snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", jobtmp);
		env[0] = tmpdir;
	}
	build_argv(&ao, job, src, tmp_out, argv, 64, store, &nstore);
	for (int k = 0; argv[k]; k++)
		cuco_strbuf_addf(&job->log, "%s%s", k ? " " : "$ ", argv[k]);
	cuco_strbuf_addch(&job->log, '\n');
	pid = cuco_proc_start_sched(argv, env, &sched, &ofd, &efd);
	free(view); /* the child has its copy */
	view = NULL;
	for (int k = 0; k < nstore; k++)
		free(store[k]);
	if (pid < 0) {
		job->code = CUCO_ERR_SYSTEM;
		cuco_strbuf_addf(&job->log, "cannot start nvcc: %s\n", strerror(errno));
		goto fail;
	}
	for (int s = 0; s < maxp; s++)
		if (!run[s].pid) {
			run[s].pid = pid;
			run[s].out_fd = ofd;
			run[s].err_fd = efd;
			run[s].job = i;
			snprintf(run[s].tmp_out, sizeof(run[s].tmp_out), "%s", tmp_out);
			snprintf(run[s].sandbox, sizeof(run[s].sandbox), "%s", sandbox);
			snprintf(run[s].tmp, sizeof(run[s].tmp), "%s", jobtmp);
			break;
		}
	return 0;
fail:
	free(view);
	if (sandbox[0])
		cuco_proc_remove_tree(sandbox);
	if (jobtmp[0])
		cuco_proc_remove_tree(jobtmp);
	return -1;
}

/*
 * The object nvcc wrote, made cuco's before it enters the cache: a regular
 * file (never a link), cuco's own (as root the compile ran as an
 * unprivileged id, who could otherwise open it again), read-only (0444).
 * 0, or -1 with errno.
 */
static int own(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc = -1;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_uid == geteuid() || fchown(fd, geteuid(), getegid()) == 0))
		rc = fchmod(fd, 0444);
	else if (!S_ISREG(st.st_mode))
		errno = EINVAL;
	close(fd);
	return rc;
}

/* Wait for the nvcc in slot r and settle its job. */
static void reap(const struct cuco_compile_opts *o, struct cuco_compile_job *jobs,
                 struct running *r)
{
	struct cuco_compile_job *job = &jobs[r->job];
	struct cuco_proc_status st;
	char work[PATH_MAX + 8];

	snprintf(work, sizeof(work), "%s/work", r->sandbox);
	cuco_proc_wait_cancel(r->pid, r->out_fd, r->err_fd, &job->log, &job->log, o->timeout_s,
	                      o->cancel, &st);
	job->seconds = st.seconds;
	if (st.cancelled) {
		job->code = CUCO_ERR_SYSTEM;
		cuco_strbuf_addf(&job->log, "nvcc stopped: the compile was cancelled\n");
	} else if (st.timed_out) {
		job->code = CUCO_ERR_COMPILE;
		cuco_strbuf_addf(&job->log, "nvcc killed after %.0f s\n", o->timeout_s);
	} else if (!st.exited || st.code != 0) {
		job->code = CUCO_ERR_COMPILE;
	} else if (r->sandbox[0] && (cuco_sandbox_expanded_check(work, job->path, &job->log) +
	                             cuco_sandbox_object_check(work, r->tmp_out, &job->log))) {
		job->code = CUCO_ERR_COMPILE;
	} else if (own(r->tmp_out) || rename(r->tmp_out, job->so_path)) {
		job->code = CUCO_ERR_IO;
		cuco_strbuf_addf(&job->log, "cannot move %s into the cache: %s\n", r->tmp_out,
		                 strerror(errno));
	} else {
		job->code = CUCO_OK;
	}
	unlink(r->tmp_out);
	if (r->sandbox[0])
		cuco_proc_remove_tree(r->sandbox);
	if (r->tmp[0])
		cuco_proc_remove_tree(r->tmp);
	unclaim(o, job, st.cancelled);
	r->pid = 0;
}

/* Job i is settled: say so to the caller's progress callback. */
static void settled(const struct cuco_compile_opts *o, enum job_state *state, int i,
                    const struct cuco_compile_job *job)
{
	state[i] = JOB_DONE;
	if (o->on_done)
		o->on_done(o->on_done_arg, job);
}

int cuco_compile_many(const struct cuco_compile_opts *o, struct cuco_compile_job *jobs, int n,
                      struct cuco_err *err)
{
	int maxp = o->jobs > 0 ? o->jobs : 1, rc = CUCO_OK;
	struct running *run = cuco_xcalloc((size_t)maxp, sizeof(*run));
	enum job_state *state = cuco_xcalloc((size_t)n + 1, sizeof(*state));

	if (cuco_mkdir_p(o->cache_dir)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot create cache directory %s: %s",
		                  o->cache_dir, strerror(errno));
		goto out;
	}
	for (int i = 0; i < n; i++) {
		job_hash(o, &jobs[i]);
		snprintf(jobs[i].so_path, sizeof(jobs[i].so_path), "%s/%.24s.so", o->cache_dir,
		         jobs[i].hash);
		jobs[i].code = -1;
		state[i] = JOB_TODO;
	}
	for (;;) {
		int active = 0, waiting = 0;

		for (int s = 0; s < maxp; s++)
			active += run[s].pid != 0;
		/* Settle what needs no nvcc; start what does while slots are free. */
		for (int i = 0; i < n; i++) {
			struct cuco_compile_job *job = &jobs[i];
			if (state[i] != JOB_TODO && state[i] != JOB_WAIT)
				continue;
			if (cancelled(o)) {
				job->code = CUCO_ERR_SYSTEM;
				cuco_strbuf_adds(&job->log, "compile cancelled before nvcc ran\n");
				settled(o, state, i, job);
				continue;
			}
			switch (claim(o, job, active < maxp)) {
			case CLAIM_CACHED:
				job->code = CUCO_OK;
				job->cached = 1;
				settled(o, state, i, job);
				break;
			case CLAIM_TAKEN:
				settled(o, state, i, job);
				break;
			case CLAIM_BUSY:
				state[i] = JOB_WAIT;
				waiting++;
				break;
			case CLAIM_NOSLOT:
				state[i] = JOB_TODO;
				waiting++;
				break;
			case CLAIM_MINE:
				if (start(o, job, i, run, maxp) == 0) {
					state[i] = JOB_RUN;
					active++;
				} else {
					unclaim(o, job, 0);
					settled(o, state, i, job);
				}
				break;
			}
		}
		if (!active && !waiting)
			break;
		if (active) {
			/* Reap one. */
			for (int s = 0; s < maxp; s++)
				if (run[s].pid) {
					int j = run[s].job;
					reap(o, jobs, &run[s]);
					settled(o, state, j, &jobs[j]);
					break;
				}
		} else if (o->inflight) {
			wait_others(o); /* only jobs another call is compiling are left */
		}
	}
out:
	free(run);
	free(state);
	return rc;
}
