/* proc.c - child processes with time limits. */
#define _GNU_SOURCE /* pipe2, sched_setaffinity, SCHED_IDLE */
#include "proc.h"
#include "jail.h"
#include "secret.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Held while a child is forked with pipes whose write ends the parent has not closed yet. */
static pthread_mutex_t fork_mu = PTHREAD_MUTEX_INITIALIZER;

void cuco_proc_fork_lock(void)
{
	pthread_mutex_lock(&fork_mu);
}

void cuco_proc_fork_unlock(void)
{
	pthread_mutex_unlock(&fork_mu);
}

void cuco_cpus_add(struct cuco_cpus *s, int cpu)
{
	if (cpu >= 0 && cpu < CUCO_CPUS_MAX)
		s->words[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

int cuco_cpus_has(const struct cuco_cpus *s, int cpu)
{
	return cpu >= 0 && cpu < CUCO_CPUS_MAX && (s->words[cpu / 64] >> (cpu % 64)) & 1;
}

int cuco_cpus_count(const struct cuco_cpus *s)
{
	int n = 0;

	for (int i = 0; i < CUCO_CPUS_MAX / 64; i++)
		n += __builtin_popcountll(s->words[i]);
	return n;
}

int cuco_cpus_allowed(struct cuco_cpus *s)
{
	cpu_set_t set;
	long online;

	memset(s, 0, sizeof(*s));
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < CUCO_CPUS_MAX && c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cuco_cpus_add(s, c);
		if (cuco_cpus_count(s))
			return cuco_cpus_count(s);
	}
	online = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < (online > 0 ? online : 1) && c < CUCO_CPUS_MAX; c++)
		cuco_cpus_add(s, (int)c);
	return cuco_cpus_count(s);
}

/* In the child, before exec: where and how eagerly it runs. Best effort. */
static void apply_sched(const struct cuco_proc_sched *s)
{
	if (s->pin && cuco_cpus_count(&s->cpus)) {
		cpu_set_t set;
		CPU_ZERO(&set);
		for (int c = 0; c < CUCO_CPUS_MAX && c < CPU_SETSIZE; c++)
			if (cuco_cpus_has(&s->cpus, c))
				CPU_SET(c, &set);
		(void)sched_setaffinity(0, sizeof(set), &set);
	}
	if (s->nice > 0) {
		int now;
		errno = 0;
		now = getpriority(PRIO_PROCESS, 0);
		if (errno == 0)
			(void)setpriority(PRIO_PROCESS, 0, now + s->nice > 19 ? 19 : now + s->nice);
	}
	if (s->idle) {
		struct sched_param sp;
		memset(&sp, 0, sizeof(sp));
		(void)sched_setscheduler(0, SCHED_IDLE, &sp);
	}
}

/* Loopback up in the child's network namespace (its ranks reach each other there). */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

static int write_small(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

#define CHILD_STACK ((size_t)256 << 10) /* the stack a child made by clone starts on */

/* The namespaces (CLONE_NEW*) a child needs for s: a user namespace whenever cuco is not root. */
static int ns_flags(const struct cuco_proc_sched *s)
{
	int f = 0;

	if (!s)
		return 0;
	if (s->jail || s->pidns)
		f = CLONE_NEWNS | CLONE_NEWPID; /* a /proc of its PID namespace needs a mount one */
	if (s->netns)
		f |= CLONE_NEWNET;
	if (f && geteuid() != 0)
		f |= CLONE_NEWUSER;
	return f;
}

/* The child's trivial body for cuco_proc_netns_available: loopback up, then leave. */
static int netns_probe_main(void *arg)
{
	const char *const *maps = arg;

	(void)prctl(PR_SET_DUMPABLE, 1); /* its /proc/self/uid_map its own (cuco is not dumpable) */
	if (geteuid() != 0 && (write_small("/proc/self/setgroups", "deny") ||
	                       write_small("/proc/self/uid_map", maps[0]) ||
	                       write_small("/proc/self/gid_map", maps[1])))
		_exit(1);
	_exit(lo_up() ? 1 : 0);
}

int cuco_proc_netns_available(void)
{
	static atomic_int known = -1;
	char uid[64], gid[64];
	const char *maps[2] = {uid, gid};
	int status = 0, now = atomic_load(&known);
	char *stack;
	pid_t pid;

	if (now >= 0)
		return now;
	snprintf(uid, sizeof(uid), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(gid, sizeof(gid), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	stack = cuco_xcalloc(1, CHILD_STACK);
	pid = clone(netns_probe_main, stack + CHILD_STACK,
	            CLONE_NEWNET | (geteuid() ? CLONE_NEWUSER : 0) | SIGCHLD, maps);
	free(stack);
	now = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0;
	atomic_store(&known, now);
	return now;
}

extern char **environ;

/*
 * The environment a child gets: an allow-list of cuco's own (what nvcc, the
 * harness, its ranks and the launchers need) plus env's settings, so code that
 * cuco builds and runs never sees what it has no business with: the LLM API key
 * (whatever --llm-key-env names: util/secret.h scrubs it from cuco's own
 * environment when read, and a variable of that name or holding a registered
 * secret is never passed), CUCO_STORE, other credentials. Built in the
 * parent (no allocation after fork); NULL when out of memory.
 */
static int env_allowed(const char *kv)
{
	static const char *const names[] = {
	    "PATH", "HOME", "USER",     "LOGNAME", "SHELL", "TMPDIR", "TMP",
	    "TEMP", "LANG", "LANGUAGE", "TERM",    "TZ",    "PWD",    "LD_LIBRARY_PATH",
	    "CC",   "CXX",  "HOSTNAME"};
	static const char *const prefixes[] = {"LC_",     "CUDA_",  "NCCL_",  "CUCO_",  "NVCC_",
	                                       "NVIDIA_", "CCCL_",  "OMPI_",  "PMIX_",  "PMI_",
	                                       "OPAL_",   "HWLOC_", "SLURM_", "MUNGE_", "ASAN_",
	                                       "UBSAN_",  "LSAN_",  "PYTHON", "XDG_",   "NVSHMEM_"};
	static const char *const secret[] = {"KEY",   "TOKEN",      "SECRET",
	                                     "PASSW", "CREDENTIAL", "AUTH"};
	const char *eq = strchr(kv, '=');
	size_t n = eq ? (size_t)(eq - kv) : strlen(kv);
	char name[256];
	int ok = 0;

	if (!eq || n >= sizeof(name))
		return 0;
	memcpy(name, kv, n);
	name[n] = '\0';
	/* the key, whatever --llm-key-env names, and any variable holding it */
	if (!strcmp(name, "CUCO_STORE") || cuco_secret_env_name(name, n) || cuco_secret_in(eq + 1))
		return 0;
	for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		for (char *c = name; *c; c++)
			if (!strncasecmp(c, secret[i], strlen(secret[i])))
				return 0;
	for (size_t i = 0; !ok && i < sizeof(names) / sizeof(names[0]); i++)
		ok = !strcmp(name, names[i]);
	for (size_t i = 0; !ok && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		ok = !strncmp(name, prefixes[i], strlen(prefixes[i]));
	return ok;
}

static char **child_env(char *const add[])
{
	size_t n = 0, k = 0, nadd = 0;
	char **out;

	while (environ && environ[n])
		n++;
	while (add && add[nadd])
		nadd++;
	out = cuco_xcalloc(n + nadd + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		int overridden = 0;

		for (size_t j = 0; eq && j < nadd && !overridden; j++)
			overridden = !strncmp(add[j], environ[i], (size_t)(eq - environ[i]) + 1);
		if (!overridden && env_allowed(environ[i]))
			out[k++] = environ[i];
	}
	for (size_t j = 0; j < nadd; j++)
		if (strchr(add[j], '='))
			out[k++] = add[j];
	return out;
}

double cuco_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What a child needs, all made before fork. */
struct child_args {
	char *const *argv;
	char **envp;
	const struct cuco_proc_sched *s;
	int po, pe; /* the pipes' write ends, -1 for none */
	pid_t parent;
	int flags; /* the namespaces it was made in */
	char uid_map[64], gid_map[64];
};

/* In the child: say why it cannot run (step, errno) and leave. */
static void child_fail(const struct child_args *a, const char *step)
{
	int e = errno, fd = a->s && a->s->report_fd > 0 ? a->s->report_fd : -1;

	if (fd >= 0) {
		(void)!write(fd, &e, sizeof(e));
		(void)!write(fd, step, strlen(step));
	} else {
		(void)!write(2, "cuco: ", 6);
		(void)!write(2, step, strlen(step));
		(void)!write(2, "\n", 1);
	}
	_exit(126);
}

/* The child, after fork or clone: system calls only, then exec. */
static int child_main(void *arg)
{
	const struct child_args *a = arg;
	const struct cuco_proc_sched *s = a->s;
	const char *step = "";

	setpgid(0, 0);
	/* Dies with cuco, even by kill -9: no orphan keeps a GPU or a compile going.
	 * (The signal follows the forking thread; cuco waits in the thread that
	 * started the child.) A parent gone before prctl took effect: leave now (in a
	 * PID namespace of its own the parent is not to be seen, and the race is lost). */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!(a->flags & CLONE_NEWPID) && getppid() != a->parent)
		_exit(127);
	if (s)
		apply_sched(s);
	{
		/* the pipes' ends above the standard descriptors first (cuco's own may
		 * be closed), then onto them; the copies close at exec */
		int o = a->po >= 0 ? fcntl(a->po, F_DUPFD_CLOEXEC, 10) : -1;
		int e = a->pe >= 0 ? fcntl(a->pe, F_DUPFD_CLOEXEC, 10) : -1;

		if (s && s->channel) {
			dup2(e, 1);
			dup2(e, 2);
			dup2(o, 3);
		} else {
			if (o >= 0)
				dup2(o, 1);
			if (e >= 0)
				dup2(e, 2);
		}
	}
	/* cuco is not dumpable (cuco_proc_protect_self), nor, until exec, its child: whose
	 * /proc/self/uid_map is then root's and closed to it */
	if (a->flags & CLONE_NEWUSER)
		(void)prctl(PR_SET_DUMPABLE, 1);
	if ((a->flags & CLONE_NEWUSER) && !(s && s->jail) &&
	    (write_small("/proc/self/setgroups", "deny") ||
	     write_small("/proc/self/uid_map", a->uid_map) ||
	     write_small("/proc/self/gid_map", a->gid_map)))
		child_fail(a, "mapping cuco's ids in a user namespace of the child's own");
	if (a->flags & CLONE_NEWNET)
		(void)lo_up(); /* no network either way */
	/* without the view, a /proc of its own PID namespace all the same: /proc/$$ is then
	 * itself (best effort) */
	if ((a->flags & CLONE_NEWPID) && !(s && s->jail) &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		(void)mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (s && s->jail && cuco_jail_enter(s->jail, &step))
		child_fail(a, step);
	{
		/* no core files of candidates; no file bigger than 4 GiB */
		struct rlimit core = {0, 0}, fsize = {(rlim_t)4 << 30, (rlim_t)4 << 30};
		(void)setrlimit(RLIMIT_CORE, &core);
		(void)setrlimit(RLIMIT_FSIZE, &fsize);
		if (s && s->mem_bytes) {
			struct rlimit as = {(rlim_t)s->mem_bytes, (rlim_t)s->mem_bytes};
			(void)setrlimit(RLIMIT_AS, &as);
		}
	}
	if (s && s->cwd && chdir(s->cwd))
		child_fail(a, "entering the child's directory");
	execvpe(a->argv[0], a->argv, a->envp);
	_exit(127);
}

pid_t cuco_proc_start_sched(char *const argv[], char *const env[], const struct cuco_proc_sched *s,
                            int *out_fd, int *err_fd)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, saved;
	struct child_args a;
	pid_t pid = -1;
	char *stack = NULL;

	memset(&a, 0, sizeof(a));
	a.argv = argv;
	a.envp = child_env(env);
	a.s = s;
	a.parent = getpid();
	a.flags = ns_flags(s);
	snprintf(a.uid_map, sizeof(a.uid_map), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(a.gid_map, sizeof(a.gid_map), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	if (a.flags)
		stack = cuco_xcalloc(1, CHILD_STACK);
	cuco_proc_fork_lock();
	if ((out_fd && pipe2(po, O_CLOEXEC)) || (err_fd && pipe2(pe, O_CLOEXEC)))
		goto fail;
	a.po = po[1];
	a.pe = pe[1];
	if (a.flags) {
		/* the first process of namespaces of its own (clone: no atfork handlers run,
		 * as after fork the child makes only system calls) */
		pid = clone(child_main, stack + CHILD_STACK, a.flags | SIGCHLD, &a);
		if (pid < 0 && !(s && s->jail)) {
			/* a PID or network namespace is best effort without a view */
			a.flags = 0;
			pid = fork();
		}
	} else {
		pid = fork();
	}
	if (pid == 0)
		child_main(&a); /* does not return */
	if (pid < 0)
		goto fail;
	free(stack);
	free(a.envp);
	setpgid(pid, pid);
	if (out_fd) {
		close(po[1]);
		*out_fd = po[0];
	}
	if (err_fd) {
		close(pe[1]);
		*err_fd = pe[0];
	}
	cuco_proc_fork_unlock();
	return pid;
fail:
	saved = errno;
	free(stack);
	free(a.envp);
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	cuco_proc_fork_unlock();
	errno = saved;
	return -1;
}

pid_t cuco_proc_start(char *const argv[], char *const env[], int *out_fd, int *err_fd)
{
	return cuco_proc_start_sched(argv, env, NULL, out_fd, err_fd);
}

/*
 * What one output pipe of a child keeps: its first CUCO_PROC_KEEP_HEAD bytes
 * in the caller's strbuf and its last CUCO_PROC_KEEP_TAIL bytes in a ring;
 * the bytes between are counted, not kept (a candidate that prints 100 MB
 * must not grow cuco or the store by as much).
 */
struct capture {
	struct cuco_strbuf *sb;
	char *ring;     /* CUCO_PROC_KEEP_TAIL bytes once the head is full, else NULL */
	size_t ring_at; /* next write position */
	size_t spilled; /* bytes past the head, all of them (ring included) */
};

static void capture_add(struct capture *c, const char *buf, size_t k)
{
	size_t room = c->sb->len < CUCO_PROC_KEEP_HEAD ? CUCO_PROC_KEEP_HEAD - c->sb->len : 0;

	if (room) {
		size_t n = k < room ? k : room;
		cuco_strbuf_add(c->sb, buf, n);
		buf += n;
		k -= n;
	}
	if (!k)
		return;
	if (!c->ring)
		c->ring = cuco_xcalloc(1, CUCO_PROC_KEEP_TAIL);
	c->spilled += k;
	for (size_t i = 0; i < k; i++) {
		c->ring[c->ring_at] = buf[i];
		c->ring_at = (c->ring_at + 1) % CUCO_PROC_KEEP_TAIL;
	}
}

/* The head, a line saying how much was left out, and the tail. */
static void capture_finish(struct capture *c)
{
	size_t tail;

	if (!c->sb || !c->spilled) {
		free(c->ring);
		return;
	}
	tail = c->spilled < CUCO_PROC_KEEP_TAIL ? c->spilled : CUCO_PROC_KEEP_TAIL;
	if (c->spilled > tail)
		cuco_strbuf_addf(c->sb, "\n[... %zu bytes of output left out ...]\n",
		                 c->spilled - tail);
	if (c->ring) {
		size_t start = (c->ring_at + CUCO_PROC_KEEP_TAIL - tail) % CUCO_PROC_KEEP_TAIL;
		for (size_t i = 0; i < tail; i++)
			cuco_strbuf_add(c->sb, c->ring + (start + i) % CUCO_PROC_KEEP_TAIL, 1);
	}
	free(c->ring);
}

static void drain(int *fd, struct capture *c)
{
	char buf[8192];
	ssize_t k = read(*fd, buf, sizeof(buf));

	if (k > 0) {
		if (c->sb)
			capture_add(c, buf, (size_t)k);
	} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

int cuco_proc_wait(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                   struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st)
{
	return cuco_proc_wait_cancel(pid, out_fd, err_fd, out, err, timeout_s, NULL, st);
}

int cuco_proc_wait_cancel(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                          struct cuco_strbuf *err, double timeout_s, const atomic_int *cancel,
                          struct cuco_proc_status *st)
{
	double start = cuco_now(), done_at = 0;
	int status = 0, done = 0, killed = 0, cancelled = 0;
	struct capture co = {out, NULL, 0, 0}, ce = {err, NULL, 0, 0};

	memset(st, 0, sizeof(*st));
	while (!done || out_fd >= 0 || err_fd >= 0) {
		struct pollfd p[2];
		int n = 0;

		if (out_fd >= 0)
			p[n++] = (struct pollfd){out_fd, POLLIN, 0};
		if (err_fd >= 0)
			p[n++] = (struct pollfd){err_fd, POLLIN, 0};
		if (n)
			poll(p, (nfds_t)n, 100);
		else
			usleep(20 * 1000);
		for (int i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (p[i].fd == out_fd)
				drain(&out_fd, &co);
			else
				drain(&err_fd, &ce);
		}
		if (!done && waitpid(pid, &status, WNOHANG) == pid) {
			done = 1;
			done_at = cuco_now();
			/* what it started and left behind (outside a PID namespace: its group) */
			kill(-pid, SIGKILL);
		}
		if (!killed && !done && cancel && atomic_load(cancel)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = cancelled = 1;
		}
		if (!killed && timeout_s > 0 && cuco_now() - start > timeout_s) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = 1;
		}
		/* Grandchildren may hold the pipes open after a kill, a daemon that left the
		 * group after it ended: stop waiting for them. */
		if (done && (killed || cuco_now() - done_at > CUCO_PROC_LINGER_S)) {
			if (out_fd >= 0)
				close(out_fd);
			if (err_fd >= 0)
				close(err_fd);
			out_fd = err_fd = -1;
		}
	}
	capture_finish(&co);
	capture_finish(&ce);
	st->seconds = cuco_now() - start;
	st->timed_out = killed && !cancelled;
	st->cancelled = cancelled;
	if (WIFEXITED(status)) {
		st->exited = 1;
		st->code = WEXITSTATUS(status);
	} else {
		st->exited = 0;
		st->code = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
	}
	return 0;
}

int cuco_proc_run(char *const argv[], char *const env[], struct cuco_strbuf *out,
                  struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st)
{
	int ofd = -1, efd = -1;
	pid_t pid = cuco_proc_start(argv, env, &ofd, &efd);

	if (pid < 0)
		return -1;
	return cuco_proc_wait(pid, ofd, efd, out, err, timeout_s, st);
}

int cuco_proc_private_dir(const char *parent, const char *name, char *out, size_t len)
{
	char tmpl[PATH_MAX], *real;
	int n = snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX", parent, name);

	if (n < 0 || (size_t)n >= sizeof(tmpl)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(tmpl)) /* mode 0700 */
		return -1;
	real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= len) {
		free(real);
		rmdir(tmpl);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(out, real, strlen(real) + 1);
	free(real);
	return 0;
}

/* One level of the removal: the directory's stream and the name it has in the level above. */
struct rm_level {
	DIR *d;
	char name[NAME_MAX + 1];
};

/*
 * A directory of the tree opened without following a link (and made
 * writable: a child may have left it closed), as a stream; NULL when it is
 * none.
 */
static DIR *rm_open(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	DIR *d;

	if (fd < 0 && errno == EACCES && fchmodat(at, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

void cuco_proc_remove_tree(const char *dir)
{
	struct rm_level *lv = cuco_xcalloc(CUCO_PROC_TREE_DEPTH, sizeof(*lv));
	int depth = 0, progress = 1;
	unsigned moved = 0;

	lv[0].d = rm_open(AT_FDCWD, dir);
	if (!lv[0].d) {
		if (errno == ENOTDIR || errno == ELOOP)
			(void)unlink(
			    dir); /* a file or a link in its place: itself, never its target */
		free(lv);
		return;
	}
	/* Depth first, by descriptors (a name is never looked up twice, so a link swapped
	 * in meanwhile is removed, not followed), at most CUCO_PROC_TREE_DEPTH streams open:
	 * a directory deeper than that moves up to the top, to be removed from there. */
	while (depth >= 0) {
		int at = dirfd(lv[depth].d);
		struct dirent *e = readdir(lv[depth].d);
		struct stat st;

		if (!e) {
			if (depth == 0) {
				if (!progress)
					break; /* what is left cannot be removed */
				progress = 0;
				rewinddir(lv[0].d); /* and again, for what moved up meanwhile */
				continue;
			}
			closedir(lv[depth].d);
			depth--;
			if (unlinkat(dirfd(lv[depth].d), lv[depth + 1].name, AT_REMOVEDIR) == 0)
				progress = 1;
			continue;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(at, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) {
			if (unlinkat(at, e->d_name, 0) == 0)
				progress = 1;
			continue;
		}
		if (depth + 1 < CUCO_PROC_TREE_DEPTH) {
			DIR *sub = rm_open(at, e->d_name);
			if (sub) {
				depth++;
				lv[depth].d = sub;
				snprintf(lv[depth].name, sizeof(lv[depth].name), "%s", e->d_name);
			} else if (unlinkat(at, e->d_name, AT_REMOVEDIR) == 0) {
				progress = 1;
			}
		} else {
			char up[64];

			snprintf(up, sizeof(up), ".cuco-rm.%u", moved++);
			if (renameat(at, e->d_name, dirfd(lv[0].d), up) == 0)
				progress = 1;
		}
	}
	for (; depth >= 0; depth--)
		closedir(lv[depth].d);
	free(lv);
	(void)rmdir(dir);
}

void cuco_proc_protect_self(void)
{
	(void)prctl(PR_SET_DUMPABLE, 0);
}

int cuco_proc_find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	while (path && *path) {
		size_t n = strcspn(path, ":");
		int k = snprintf(out, len, "%.*s/%s", (int)n, path, name);
		if (n && k > 0 && (size_t)k < len && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	if (len)
		out[0] = '\0';
	return -1;
}
