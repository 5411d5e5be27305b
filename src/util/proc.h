/* proc.h - run a child process with a time limit and capture its output. */
#ifndef CUCO_PROC_H
#define CUCO_PROC_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/strbuf.h"

struct cuco_jail; /* util/jail.h */

/*
 * Of each output pipe of a child, cuco keeps the first CUCO_PROC_KEEP_HEAD and
 * the last CUCO_PROC_KEEP_TAIL bytes, with a line between saying how many it
 * left out.
 */
#define CUCO_PROC_KEEP_HEAD ((size_t)256 << 10)
#define CUCO_PROC_KEEP_TAIL ((size_t)256 << 10)

/* How a finished child ended. */
struct cuco_proc_status {
	int exited;    /* 1: exit(code); 0: killed by signal */
	int code;      /* exit code, or the signal number */
	int timed_out; /* 1 if we killed it at the time limit */
	int cancelled; /* 1 if we killed it because the caller's cancel flag was set */
	double seconds;
};

#define CUCO_CPUS_MAX 1024 /* CPU numbers a struct cuco_cpus holds (glibc's CPU_SETSIZE) */

/* A set of CPUs: bit i % 64 of words[i / 64] is CPU i. Plain data; zero it to empty it. */
struct cuco_cpus {
	uint64_t words[CUCO_CPUS_MAX / 64];
};

/* Add cpu (0 <= cpu < CUCO_CPUS_MAX; others are ignored). */
void cuco_cpus_add(struct cuco_cpus *s, int cpu);
/* 1 if cpu is in s. */
int cuco_cpus_has(const struct cuco_cpus *s, int cpu);
/* How many CPUs s holds. */
int cuco_cpus_count(const struct cuco_cpus *s);
/*
 * The CPUs the calling thread may run on (sched_getaffinity: a taskset or
 * cgroup cpuset narrows it), or every online CPU when that fails. Returns
 * how many.
 */
int cuco_cpus_allowed(struct cuco_cpus *s);

/*
 * How a child runs beside processes that time something (the harness's
 * ranks): where and how eagerly. Plain data. Applied in the child before
 * exec, so its own children (nvcc's cicc, ptxas, the host compiler) inherit
 * it. Best effort: a setting the kernel refuses is skipped.
 */
struct cuco_proc_sched {
	int pin;               /* 1: run only on cpus (ignored when cpus is empty) */
	struct cuco_cpus cpus; /* where, with pin */
	int nice;              /* niceness added: 0 none, 19 the lowest priority */
	int idle;              /* 1: SCHED_IDLE, run only when a CPU has nothing else to do */
	const char *cwd;       /* NULL: ours; else the child starts in this directory */
	/* 1: a network namespace of its own (only loopback, up) where the kernel allows it
	 * (cuco_proc_netns_available), else none; the child's children share it */
	int netns;
	/* non-NULL: the view of util/jail.h (settled by cuco_jail_finish), in which the
	 * child is the first process of a PID namespace of its own; it exits (126) rather
	 * than run without it, writing its errno and the step that failed to report_fd
	 * (when > 0, else a line to its stderr) */
	const struct cuco_jail *jail;
	int report_fd;
	/* 1: without a view, still the first process of a PID namespace of its own where
	 * the kernel allows it: what it starts (nvcc's cicc, a setsid daemon) ends with it */
	int pidns;
	/* > 0: the child's address space is capped at this many bytes (RLIMIT_AS; nvcc) */
	unsigned long long mem_bytes;
	/* 1: the child's stdout and stderr both go to err_fd's pipe (a log, never parsed)
	 * and out_fd's pipe is its descriptor 3, a channel cuco reads alone (the harness's
	 * result: --result-fd 3) */
	int channel;
};

/*
 * 1 when this kernel lets cuco give a child a network namespace of its own
 * (unprivileged user namespaces), found once by trying in a child.
 */
int cuco_proc_netns_available(void);

/*
 * Start argv[0] (PATH searched) in its own process group, with setenv-style
 * "NAME=VALUE" strings from env (NULL-terminated, may be NULL) added to an
 * allow-listed copy of the environment (paths, locale, CUDA_*, NCCL_*,
 * CUCO_* but CUCO_STORE, MPI's and Slurm's; never a name that holds KEY,
 * TOKEN, SECRET, PASSW, CREDENTIAL or AUTH), without core files and with
 * files capped at 4 GiB. The child dies with the thread that started it. Returns the pid, or -1
 * with errno set. out_fd/err_fd receive the read ends of its stdout/stderr pipes (either pointer
 * may be NULL to inherit ours). The pipes are close-on-exec, so a child another thread starts at
 * the same time never holds them open.
 */
pid_t cuco_proc_start(char *const argv[], char *const env[], int *out_fd, int *err_fd);

/* cuco_proc_start, scheduled as s says (NULL: as this process is). */
pid_t cuco_proc_start_sched(char *const argv[], char *const env[], const struct cuco_proc_sched *s,
                            int *out_fd, int *err_fd);

#define CUCO_PROC_LINGER_S 2.0 /* how long the pipes may stay open after the child ended */

/*
 * Wait for pid, draining out_fd and err_fd (either may be -1) into out/err
 * (either may be NULL); after timeout_s (<= 0: none) the whole process group
 * gets SIGKILL (and so, for the first process of a PID namespace, everything
 * in it). Once the child ended, what is left of its group is killed and the
 * pipes are read for CUCO_PROC_LINGER_S more at most (a daemon of its that
 * left the group may hold them). Closes the fds.
 */
int cuco_proc_wait(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                   struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st);

/*
 * cuco_proc_wait that also kills the process group (st->cancelled) within
 * about 0.1 s of *cancel becoming nonzero (another thread sets it); cancel may
 * be NULL.
 */
int cuco_proc_wait_cancel(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                          struct cuco_strbuf *err, double timeout_s, const atomic_int *cancel,
                          struct cuco_proc_status *st);

/* cuco_proc_start + cuco_proc_wait; 0 when it ran (check st), -1 if it could not start. */
int cuco_proc_run(char *const argv[], char *const env[], struct cuco_strbuf *out,
                  struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st);

/*
 * Take around a fork() that does not exec (GPU slots) while other threads may
 * start children: cuco_proc_start holds the same lock from making its pipes
 * until the parent has closed their write ends, so such a child never keeps
 * another thread's pipe open. Release it in the parent and in the child.
 */
void cuco_proc_fork_lock(void);
void cuco_proc_fork_unlock(void);

/*
 * A private directory for a child (mode 0700): parent/NAME.XXXXXX with its
 * absolute path in out (the child's paths still hold once it starts there).
 * 0, or -1 with errno set.
 */
int cuco_proc_private_dir(const char *parent, const char *name, char *out, size_t len);
#define CUCO_PROC_TREE_DEPTH 64 /* directories cuco_proc_remove_tree holds open at once */

/*
 * Remove dir and everything under it, iteratively and through descriptors
 * (openat, unlinkat): symbolic links are removed, never followed, also one
 * swapped in while it runs; however deep the tree (a candidate's), at most
 * CUCO_PROC_TREE_DEPTH directories are open at once and no stack grows with
 * it. dir itself, when a file or a link, is unlinked.
 */
void cuco_proc_remove_tree(const char *dir);

/*
 * cuco's own process out of reach of others of its user (a candidate run
 * without the view): not dumpable, so its /proc/PID/{environ,mem,fd} stay
 * closed to them and it cannot be traced. Its children become dumpable
 * again at exec (and just before, to map their ids in a user namespace).
 */
void cuco_proc_protect_self(void);

/* name's path on PATH (an executable file) in out: 0, or -1 when there is none. */
int cuco_proc_find_program(const char *name, char *out, size_t len);

/* Monotonic seconds. */
double cuco_now(void);

#endif
