/*
 * compile.c - the cascade's first stage: nvcc each program into a shared
 * object the harness can load. Jobs run in parallel; outputs are cached by
 * a hash of everything that decides the binary (source, flags, nvcc
 * version, cuco's device headers, headers beside the program).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "util/hash.h"
#include "util/paths.h"
#include "util/proc.h"

int cuco_compile_opts_default(struct cuco_compile_opts *opts, struct cuco_err *err)
{
	static char cache[PATH_MAX];
	const char *arch = getenv("CUCO_ARCH");

	memset(opts, 0, sizeof(*opts));
	opts->home = cuco_home(err);
	if (!opts->home)
		return err ? err->code : CUCO_ERR_NOT_FOUND;
	snprintf(cache, sizeof(cache), "%s/cache", cuco_state_dir());
	opts->cache_dir = cache;
	opts->arch = arch && *arch ? arch : "90a";
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

const char *cuco_nvcc_version(void)
{
	static char version[256];
	static int done;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	char *argv[] = {(char *)cuco_nvcc_path(), "--version", NULL};

	if (done)
		return version;
	done = 1;
	if (cuco_proc_run(argv, NULL, &out, NULL, 60, &st) == 0 && st.exited && st.code == 0) {
		char *last;
		cuco_strbuf_rtrim(&out);
		last = strrchr(out.buf, '\n');
		snprintf(version, sizeof(version), "%s", last ? last + 1 : out.buf);
	}
	cuco_strbuf_release(&out);
	return version;
}

/* Hash every header file of dir (sorted names) into c. */
static void hash_headers(struct cuco_sha256 *c, const char *dir)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t len = strlen(nm);
		int header = (len > 2 && !strcmp(nm + len - 2, ".h")) ||
		             (len > 4 && !strcmp(nm + len - 4, ".cuh"));
		if (header) {
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
		store[*nstore] = strdup(buf);            \
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
	ADDF("-I%s", srcdir);
	if (nccl) {
		char lib[PATH_MAX];
		ADDF("-I%s/include", nccl);
		/* Wheels ship only libnccl.so.2: then link the system one; the run uses nccl's. */
		snprintf(lib, sizeof(lib), "%s/lib/libnccl.so", nccl);
		if (cuco_file_exists(lib))
			ADDF("-L%s/lib", nccl);
	}
	ADD("-o");
	ADD((char *)out);
	ADD((char *)src);
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

struct running {
	pid_t pid;
	int out_fd, err_fd;
	int job;
	double start;
};

int cuco_compile_many(const struct cuco_compile_opts *o, struct cuco_compile_job *jobs, int n,
                      struct cuco_err *err)
{
	int next = 0, active = 0, maxp = o->jobs > 0 ? o->jobs : 1;
	struct running *run = calloc((size_t)maxp, sizeof(*run));

	if (!run)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	if (cuco_mkdir_p(o->cache_dir)) {
		free(run);
		return cuco_err_set(err, CUCO_ERR_IO, "cannot create cache directory %s: %s",
		                    o->cache_dir, strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		job_hash(o, &jobs[i]);
		snprintf(jobs[i].so_path, sizeof(jobs[i].so_path), "%s/%.24s.so", o->cache_dir,
		         jobs[i].hash);
		jobs[i].code = -1;
		if (cuco_file_exists(jobs[i].so_path)) {
			jobs[i].code = CUCO_OK;
			jobs[i].cached = 1;
		}
	}
	while (next < n || active) {
		/* Start jobs while slots are free. */
		while (active < maxp && next < n) {
			struct cuco_compile_job *job = &jobs[next];
			char src[PATH_MAX], tmp_out[PATH_MAX], *argv[64], *store[32];
			int nstore = 0, ofd, efd;
			pid_t pid;

			if (job->code != -1) {
				next++;
				continue;
			}
			snprintf(src, sizeof(src), "%s/%.24s.cu", o->cache_dir, job->hash);
			snprintf(tmp_out, sizeof(tmp_out), "%s.tmp%d", job->so_path, (int)getpid());
			if (write_source(src, job)) {
				job->code = CUCO_ERR_IO;
				cuco_strbuf_addf(&job->log, "cannot write %s: %s\n", src,
				                 strerror(errno));
				next++;
				continue;
			}
			build_argv(o, job, src, tmp_out, argv, 64, store, &nstore);
			for (int i = 0; argv[i]; i++)
				cuco_strbuf_addf(&job->log, "%s%s", i ? " " : "$ ", argv[i]);
			cuco_strbuf_addch(&job->log, '\n');
			pid = cuco_proc_start(argv, NULL, &ofd, &efd);
			for (int i = 0; i < nstore; i++)
				free(store[i]);
			if (pid < 0) {
				job->code = CUCO_ERR_SYSTEM;
				cuco_strbuf_addf(&job->log, "cannot start nvcc: %s\n",
				                 strerror(errno));
				next++;
				continue;
			}
			for (int s = 0; s < maxp; s++)
				if (!run[s].pid) {
					run[s] = (struct running){pid, ofd, efd, next, cuco_now()};
					break;
				}
			active++;
			next++;
		}
		/* Reap one. */
		for (int s = 0; s < maxp && active; s++) {
			struct cuco_proc_status st;
			struct cuco_compile_job *job;
			char tmp_out[PATH_MAX];

			if (!run[s].pid)
				continue;
			job = &jobs[run[s].job];
			cuco_proc_wait(run[s].pid, run[s].out_fd, run[s].err_fd, &job->log,
			               &job->log, o->timeout_s, &st);
			snprintf(tmp_out, sizeof(tmp_out), "%s.tmp%d", job->so_path, (int)getpid());
			job->seconds = st.seconds;
			if (st.timed_out) {
				job->code = CUCO_ERR_COMPILE;
				cuco_strbuf_addf(&job->log, "nvcc killed after %.0f s\n",
				                 o->timeout_s);
			} else if (!st.exited || st.code != 0) {
				job->code = CUCO_ERR_COMPILE;
			} else if (rename(tmp_out, job->so_path)) {
				job->code = CUCO_ERR_IO;
				cuco_strbuf_addf(&job->log, "cannot move %s into the cache: %s\n",
				                 tmp_out, strerror(errno));
			} else {
				job->code = CUCO_OK;
			}
			unlink(tmp_out);
			run[s].pid = 0;
			active--;
			break;
		}
	}
	free(run);
	return CUCO_OK;
}
