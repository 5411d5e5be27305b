/* proc.h - run a child process with a time limit and capture its output. */
#ifndef CUCO_PROC_H
#define CUCO_PROC_H

#include <sys/types.h>

#include "util/strbuf.h"

/* How a finished child ended. */
struct cuco_proc_status {
	int exited;    /* 1: exit(code); 0: killed by signal */
	int code;      /* exit code, or the signal number */
	int timed_out; /* 1 if we killed it at the time limit */
	double seconds;
};

/*
 * Start argv[0] (PATH searched) in its own process group, with setenv-style
 * "NAME=VALUE" strings from env (NULL-terminated, may be NULL) added to the
 * environment. Returns the pid, or -1 with errno set. out_fd/err_fd receive
 * the read ends of its stdout/stderr pipes (either pointer may be NULL to
 * inherit ours).
 */
pid_t cuco_proc_start(char *const argv[], char *const env[], int *out_fd, int *err_fd);

/*
 * Wait for pid, draining out_fd and err_fd (either may be -1) into out/err
 * (either may be NULL); after timeout_s (<= 0: none) the whole process group
 * gets SIGKILL. Closes the fds.
 */
int cuco_proc_wait(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                   struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st);

/* cuco_proc_start + cuco_proc_wait; 0 when it ran (check st), -1 if it could not start. */
int cuco_proc_run(char *const argv[], char *const env[], struct cuco_strbuf *out,
                  struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st);

/* Monotonic seconds. */
double cuco_now(void);

#endif
