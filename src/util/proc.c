/* proc.c - child processes with time limits. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double cuco_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pid_t cuco_proc_start(char *const argv[], char *const env[], int *out_fd, int *err_fd)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	pid_t pid;

	if ((out_fd && pipe(po)) || (err_fd && pipe(pe)))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		if (out_fd) {
			dup2(po[1], 1);
			close(po[0]);
			close(po[1]);
		}
		if (err_fd) {
			dup2(pe[1], 2);
			close(pe[0]);
			close(pe[1]);
		}
		for (int i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			char name[256];
			if (eq && (size_t)(eq - env[i]) < sizeof(name)) {
				memcpy(name, env[i], (size_t)(eq - env[i]));
				name[eq - env[i]] = '\0';
				setenv(name, eq + 1, 1);
			}
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	if (out_fd) {
		close(po[1]);
		*out_fd = po[0];
	}
	if (err_fd) {
		close(pe[1]);
		*err_fd = pe[0];
	}
	return pid;
}

static void drain(int *fd, struct cuco_strbuf *sb)
{
	char buf[8192];
	ssize_t k = read(*fd, buf, sizeof(buf));

	if (k > 0) {
		if (sb)
			cuco_strbuf_add(sb, buf, (size_t)k);
	} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

int cuco_proc_wait(pid_t pid, int out_fd, int err_fd, struct cuco_strbuf *out,
                   struct cuco_strbuf *err, double timeout_s, struct cuco_proc_status *st)
{
	double start = cuco_now();
	int status = 0, done = 0, killed = 0;

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
				drain(&out_fd, out);
			else
				drain(&err_fd, err);
		}
		if (!done && waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
		if (!killed && timeout_s > 0 && cuco_now() - start > timeout_s) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = 1;
		}
		/* Grandchildren may hold the pipes open after a kill: stop waiting for them. */
		if (done && killed) {
			if (out_fd >= 0)
				close(out_fd);
			if (err_fd >= 0)
				close(err_fd);
			out_fd = err_fd = -1;
		}
	}
	st->seconds = cuco_now() - start;
	st->timed_out = killed;
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
