/*
 * child.c - what the harness's processes share with their children: whole
 * reads and writes on a pipe, and the GPUs counted in a throw-away child so
 * the caller stays CUDA-free. Low in the harness: above result.c (the clock)
 * alone.
 */
#include <errno.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Write all n bytes of buf; -1 on error. */
int hx_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Read exactly n bytes within timeout_s; -1 on EOF, error or timeout. */
int hx_read_all(int fd, void *buf, size_t n, double timeout_s)
{
	char *p = buf;
	double end = hx_now() + timeout_s;

	while (n) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int left = (int)((end - hx_now()) * 1000);
		ssize_t k;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return -1;
		k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Count GPUs in a throw-away child so this process stays CUDA-free. */
int hx_count_gpus(void)
{
	int fds[2], n = 0;
	pid_t pid;

	if (pipe(fds))
		return 0;
	pid = fork();
	if (pid == 0) {
		int c = 0;
		close(fds[0]);
		if (cudaGetDeviceCount(&c) != cudaSuccess)
			c = 0;
		if (hx_write_all(fds[1], &c, sizeof(c)))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || hx_read_all(fds[0], &n, sizeof(n), 60))
		n = 0;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return n;
}
