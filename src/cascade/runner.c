/*
 * runner.c - the runners of this node (runner.h): the fork (one harness that
 * forks a rank per GPU) and a launcher cuco starts here, both in a private
 * directory and, where the node allows it, in a view of their own (util/jail.h,
 * docs/sandbox.md); and the job helpers every runner uses.
 */
#define _GNU_SOURCE /* O_CLOEXEC, fchown */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "cascade/runner.h"
#include "cascade/sandbox.h"
#include "util/jail.h"
#include "util/jail_probe.h"
#include "util/paths.h"
#include "util/proc.h"
#include "util/xalloc.h"

void cuco_run_job_push(struct cuco_run_job *job, char *s)
{
	if (job->argc < CUCO_RUN_MAX_ARGS - 1)
		job->argv[job->argc++] = s;
}

void cuco_run_job_pushf(struct cuco_run_job *job, const char *fmt, ...)
{
	char buf[4608];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (job->nowned >= CUCO_RUN_MAX_OWNED)
		return;
	job->owned[job->nowned] = cuco_xstrdup(buf);
	cuco_run_job_push(job, job->owned[job->nowned++]);
}

int cuco_run_job_private_dir(struct cuco_run_job *job, const char *parent, struct cuco_err *err)
{
	int rc;

	if (cuco_proc_private_dir(parent, "cuco-run", job->dir, sizeof(job->dir)))
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot make the run's directory: %s",
		                    strerror(errno));
	/* work: what the harness sees and writes; root: where its view is built */
	snprintf(job->work, sizeof(job->work), "%s/work", job->dir);
	snprintf(job->stage, sizeof(job->stage), "%s/root", job->dir);
	if (mkdir(job->work, 0700) || mkdir(job->stage, 0700)) {
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot make the run's directory: %s",
		                  strerror(errno));
		cuco_proc_remove_tree(job->dir);
		job->dir[0] = '\0';
		return rc;
	}
	return CUCO_OK;
}

void cuco_run_job_push_words(struct cuco_run_job *job, const char *words)
{
	cuco_strbuf_adds(&job->launch, words);
	for (char *tok = job->launch.buf; *tok && job->argc < 32;) {
		while (*tok == ' ')
			*tok++ = '\0';
		if (!*tok)
			break;
		cuco_run_job_push(job, tok);
		while (*tok && *tok != ' ')
			tok++;
	}
}

int cuco_run_jailed(void)
{
	const char *v = getenv("CUCO_SANDBOX_RUN_JAIL");

	return !(v && !strcmp(v, "0")) && cuco_jail_available();
}

/* Every existing folder of a PATH-like list ("a:b:c") into j, read-only. */
static void add_path_list(struct cuco_jail *j, const char *list)
{
	char one[PATH_MAX];

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			cuco_jail_add(j, one, 0);
		}
		p += n + (p[n] == ':');
	}
}

/* 1 when dir is path or a folder above it (both made canonical). */
static int holds(const char *dir, const char *path)
{
	char d[PATH_MAX], p[PATH_MAX];
	size_t n;

	if (!path || !realpath(dir, d) || !realpath(path, p))
		return 0;
	n = strlen(d);
	return !strcmp(d, "/") || (!strncmp(p, d, n) && (p[n] == '\0' || p[n] == '/'));
}

/* 1 when the view's id may enter dir (as root the run is an unprivileged id's). */
static int visible(const struct cuco_jail *j, const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return 0;
	return !j->root || (st.st_mode & 0001) || (st.st_uid == j->uid && (st.st_mode & 0100)) ||
	       (st.st_gid == j->gid && (st.st_mode & 0010));
}

/*
 * The view a harness run is given (util/jail.h): the system's folders, the
 * toolkit, NCCL, NVSHMEM and the library path read-only, the files it loads
 * (files[0..nfiles): the harness, the workload's and the programs' objects)
 * read-only one by one, work writable, the node's /dev (GPUs) with a private
 * /dev/shm, /sys read-only; with a launcher, the directory cuco was started
 * in read-only (a hostfile may be named from there; never one that holds
 * $HOME or the state directory, nor one its id may not enter) and the
 * launcher starts there, else in work. Nothing else
 * of the node: not the store, the state directory, $HOME, nor the node's
 * unix sockets. NULL (errno) when it holds too much.
 */
static struct cuco_jail *harness_view(const char *work, const char *stage, char **env,
                                      const char *const *files, int nfiles, int launcher)
{
	struct cuco_jail *j = cuco_xcalloc(1, sizeof(*j));
	char nvcc[PATH_MAX], here[PATH_MAX];

	cuco_jail_init(j, stage);
	j->node_dev = 1;
	j->sys = 1;
	cuco_jail_add_system(j);
	/* the toolkit (libcudart, compute-sanitizer) */
	if (cuco_sandbox_toolkit(nvcc, sizeof(nvcc)))
		cuco_jail_add(j, nvcc, 0);
	if (cuco_nccl_home())
		cuco_jail_add(j, cuco_nccl_home(), 0);
	if (cuco_nvshmem_home())
		cuco_jail_add(j, cuco_nvshmem_home(), 0);
	add_path_list(j, getenv("LD_LIBRARY_PATH"));
	for (int i = 0; env && env[i]; i++)
		if (!strncmp(env[i], "LD_LIBRARY_PATH=", 16))
			add_path_list(j, env[i] + 16);
	for (int i = 0; i < nfiles; i++)
		cuco_jail_add(j, files[i], 0);
	if (launcher && getcwd(here, sizeof(here)) && visible(j, here) &&
	    !holds(here, getenv("HOME")) && !holds(here, cuco_state_dir()))
		cuco_jail_add(j, here, 0);
	cuco_jail_add(j, work, 1);
	if (cuco_jail_finish(j)) {
		free(j);
		return NULL;
	}
	return j;
}

/*
 * Start the harness on this node (fork mode, or the launcher cuco starts
 * here) with env's first nenv settings and work, a private directory the
 * caller made (with stage, an empty one beside it) and removes; in fork mode
 * it starts in work, and so do the ranks it forks. Where the node allows it
 * (cuco_run_jailed) it runs in the view of harness_view, the first process
 * of a PID namespace of its own (all it starts ends with it), as root an
 * unprivileged id; work is then its TMPDIR and $HOME. In fork mode, in a
 * network namespace of its own (loopback only, shared by the ranks) when
 * CUCO_SANDBOX_RUN_NETNS is 1 and the kernel allows it. 0 when it ran (see
 * st), -1 when it could not start (errno).
 */
static int run_private(char **argv, char **env, int nenv, const char *work, const char *stage,
                       const char *const *files, int nfiles, int enter, int result_fd,
                       struct cuco_strbuf *out, struct cuco_strbuf *log, double timeout_s,
                       struct cuco_proc_status *st)
{
	struct cuco_proc_sched s;
	const char *netns = getenv("CUCO_SANDBOX_RUN_NETNS");
	char tmpdir[PATH_MAX + 8], home[PATH_MAX + 8], here[PATH_MAX], *envs[20];
	struct cuco_jail *j = NULL;
	int ofd = -1, efd = -1, n = 0, rc = -1;
	pid_t pid;

	memset(&s, 0, sizeof(s));
	s.pidns = 1; /* without the view too: what it starts ends with it */
	s.cwd = enter ? work : NULL;
	s.channel = enter; /* fork mode: the result on descriptor 3, stdout and stderr a log */
	s.netns =
	    enter && netns && !strcmp(netns, "1"); /* never a launcher's: it may leave the node */
	for (; n < nenv && n < 16; n++)
		envs[n] = env[n];
	envs[n] = NULL;
	if (cuco_run_jailed()) {
		j = harness_view(work, stage, envs, files, nfiles, !enter);
		if (!j)
			return -1;
		/* as root the run is an unprivileged id's: its folder (and result file) its */
		if (j->root && (chown(work, j->uid, j->gid) ||
		                (result_fd >= 0 && fchown(result_fd, j->uid, j->gid))))
			goto out;
		s.jail = j;
		if (!enter) {
			/* the launcher starts where cuco was started, where the view holds it */
			s.cwd = work;
			if (getcwd(here, sizeof(here)))
				for (int i = 0; i < j->n; i++)
					if (!strcmp(j->e[i].dst, here))
						s.cwd = here;
		}
		snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", work);
		snprintf(home, sizeof(home), "HOME=%s", work);
		envs[n++] = tmpdir;
		envs[n++] = home;
		envs[n] = NULL;
	}
	pid = cuco_proc_start_sched(argv, envs, &s, &ofd, &efd);
	if (pid >= 0)
		rc = cuco_proc_wait(pid, ofd, efd, out, log, timeout_s, st);
out:
	free(j);
	return rc;
}
/* ---- the fork: one harness on this node, its ranks forked, the result on fd 3 ---- */

static int fork_start(const struct cuco_runner *r, const struct cuco_run_opts *o,
                      struct cuco_run_job *job, struct cuco_err *err)
{
	const char *tmp = getenv("TMPDIR");
	int rc = cuco_run_job_private_dir(job, tmp && *tmp ? tmp : "/tmp", err);

	(void)r;
	/* in fork mode, a wrapper (compute-sanitizer) goes in front of the harness */
	if (!rc && o->wrapper && *o->wrapper)
		cuco_run_job_push_words(job, o->wrapper);
	return rc;
}

static int fork_args(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_err *err)
{
	(void)r;
	(void)err;
	cuco_run_job_push(job, "--ranks");
	cuco_run_job_pushf(job, "%d", o->ranks);
	cuco_run_job_push(job, "--result-fd");
	cuco_run_job_push(job, "3");
	return CUCO_OK;
}

static int fork_step(const struct cuco_runner *r, const struct cuco_run_opts *o,
                     struct cuco_run_job *job, struct cuco_strbuf *out, struct cuco_strbuf *log,
                     struct cuco_proc_status *st, struct cuco_err *err)
{
	int rc = run_private(job->argv, job->env, job->nenv, job->work, job->stage, job->files,
	                     job->nfiles, 1, job->result_fd, out, log, job->timeout_s, st);

	(void)r;
	(void)err;
	if (!rc && o->wrapper && *o->wrapper && (!st->exited || st->code))
		cuco_strbuf_addf(log, "cuco: wrapper %s %d\n",
		                 st->exited ? "exited with code" : "died with signal", st->code);
	return rc;
}

const struct cuco_runner cuco_runner_fork = {
    .name = "fork", .start = fork_start, .args = fork_args, .step = fork_step};

/* ---- a launcher (mpirun) cuco starts here: the ranks' records in a result file ---- */

static int launcher_start(const struct cuco_runner *r, const struct cuco_run_opts *o,
                          struct cuco_run_job *job, struct cuco_err *err)
{
	int rc;

	(void)r;
	/* in the state directory, where its ranks' result file always was (shared with other
	 * nodes, as a rule, when ranks start there) */
	cuco_mkdir_p(cuco_state_dir());
	rc = cuco_run_job_private_dir(job, cuco_state_dir(), err);
	if (!rc)
		cuco_run_job_push_words(job, o->launcher);
	return rc;
}

static int launcher_args(const struct cuco_runner *r, const struct cuco_run_opts *o,
                         struct cuco_run_job *job, struct cuco_err *err)
{
	(void)r;
	(void)o;
	/* made here and read through cuco's own descriptor: a program that renames or
	 * replaces the file in the run's directory changes nothing cuco reads */
	snprintf(job->result_file, sizeof(job->result_file), "%s/result.jsonl", job->work);
	job->result_fd =
	    open(job->result_file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (job->result_fd < 0)
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot make %s: %s", job->result_file,
		                    strerror(errno));
	job->records = 1;
	cuco_run_job_push(job, "--launch");
	cuco_run_job_push(job, "env");
	cuco_run_job_push(job, "--result-file");
	cuco_run_job_push(job, job->result_file);
	return CUCO_OK;
}

static int launcher_step(const struct cuco_runner *r, const struct cuco_run_opts *o,
                         struct cuco_run_job *job, struct cuco_strbuf *out, struct cuco_strbuf *log,
                         struct cuco_proc_status *st, struct cuco_err *err)
{
	(void)r;
	(void)o;
	(void)err;
	/* a launcher starts where cuco was started (its hostfile may be named from there);
	 * the harness's result file is in the private directory */
	return run_private(job->argv, job->env, job->nenv, job->work, job->stage, job->files,
	                   job->nfiles, 0, job->result_fd, out, log, job->timeout_s, st);
}

const struct cuco_runner cuco_runner_launcher = {
    .name = "launcher", .start = launcher_start, .args = launcher_args, .step = launcher_step};

const struct cuco_runner *cuco_runner_of(const struct cuco_run_opts *o)
{
	if (o->runner)
		return o->runner;
	return o->launcher && *o->launcher ? &cuco_runner_launcher : &cuco_runner_fork;
}
