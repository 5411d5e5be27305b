/*
 * llm_loopback.h - scaffolding for the tests that talk to tests/llm_server.py,
 * the loopback OpenAI-compatible server replaying recorded replies from a
 * fixtures directory: start it and learn its port, stop it, read its request
 * log; plus the whole-file helpers those tests share (temp dirs: rm_tree.h).
 * Header-only (static inline). Include it after <cmocka.h>; the including file
 * must define _XOPEN_SOURCE 700 (or _GNU_SOURCE) before its first include, for
 * nftw.
 */
#ifndef CUCO_TEST_LLM_LOOPBACK_H
#define CUCO_TEST_LLM_LOOPBACK_H

#if !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE)
#error "define _XOPEN_SOURCE 700 (or _GNU_SOURCE) before including llm_loopback.h"
#endif

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rm_tree.h"
#include "util/proc.h"
#include "util/strbuf.h"

#define LLM_SERVER_SCRIPT CUCO_SOURCE_DIR "/tests/llm_server.py"

/* One running llm_server.py. */
struct llm_server {
	pid_t pid;
	int out_fd;
	int port;
	char log[160]; /* its request log, one JSON line per request */
	char base[64]; /* http://127.0.0.1:<port> */
};

/*
 * Start llm_server.py replaying the replies names (NULL-terminated, in order)
 * from the fixtures directory, logging every request to log and exiting by
 * itself after lifetime_s seconds; waits up to 10 s for its "PORT <n>" line.
 * Fails the test when it does not start.
 */
static inline void llm_server_start(struct llm_server *s, const char *fixtures, const char *log,
                                    int lifetime_s, const char *const *names)
{
	char *argv[40], lifetime[16], line[64], *end;
	struct pollfd pfd;
	size_t n = 0;
	int i = 0;
	long port;

	memset(s, 0, sizeof(*s));
	snprintf(s->log, sizeof(s->log), "%s", log);
	snprintf(lifetime, sizeof(lifetime), "%d", lifetime_s);
	argv[i++] = "python3";
	argv[i++] = LLM_SERVER_SCRIPT;
	argv[i++] = "--fixtures";
	argv[i++] = (char *)fixtures;
	argv[i++] = "--log";
	argv[i++] = s->log;
	argv[i++] = "--lifetime";
	argv[i++] = lifetime;
	for (; *names && i < 38; names++)
		argv[i++] = (char *)*names;
	argv[i] = NULL;
	s->pid = cuco_proc_start(argv, NULL, &s->out_fd, NULL);
	assert_true(s->pid > 0);
	while (n + 1 < sizeof(line)) {
		pfd.fd = s->out_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 10000) <= 0)
			fail_msg("llm_server.py did not start");
		if (read(s->out_fd, line + n, 1) != 1)
			fail_msg("llm_server.py exited before printing its port");
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	assert_int_equal(strncmp(line, "PORT ", 5), 0);
	errno = 0;
	port = strtol(line + 5, &end, 10);
	assert_true(errno == 0 && *end == '\0' && port > 0 && port < 65536);
	s->port = (int)port;
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%d", s->port);
}

/* Kill the server and reap it; its request log stays. */
static inline void llm_server_stop(struct llm_server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	close(s->out_fd);
}

/* The requests the server saw (one JSON line each) into log; returns how many. */
static inline int llm_server_requests(const struct llm_server *s, struct cuco_strbuf *log)
{
	int n = 0;

	cuco_strbuf_reset(log);
	if (cuco_strbuf_read_file(log, s->log) != 0)
		return 0;
	for (const char *p = log->buf; *p; p++)
		n += *p == '\n';
	return n;
}

/* The requests the server saw, one JSON line each, into lines[] (malloc'd); returns how many. */
static inline int llm_server_request_lines(const struct llm_server *s, char **lines, int max)
{
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	int n = 0;

	if (cuco_strbuf_read_file(&log, s->log) == 0)
		for (const char *p = log.buf; *p && n < max;) {
			size_t len = strcspn(p, "\n");
			lines[n] = strndup(p, len);
			n++;
			p += len;
			if (*p)
				p++;
		}
	cuco_strbuf_release(&log);
	return n;
}

/*
 * The LLM tests' environment: a fresh scratch directory made from the
 * mkdtemp pattern in tmp (rewritten in place), CUCO_HOME (unless set),
 * CUCO_STATE below tmp, and the API key in key_env. 0, or -1 when the
 * directory cannot be made.
 */
static inline int llm_test_env(char *tmp, const char *key_env, const char *key)
{
	char path[256];

	if (!mkdtemp(tmp))
		return -1;
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	snprintf(path, sizeof(path), "%s/state", tmp);
	setenv("CUCO_STATE", path, 1);
	setenv(key_env, key, 1);
	return 0;
}

/* Remove tmp, or keep it and say where when CUCO_TEST_KEEP is set (to look at the store). */
static inline void llm_test_env_end(const char *tmp)
{
	if (tmp[0] && !getenv("CUCO_TEST_KEEP"))
		rm_tree(tmp);
	else if (tmp[0])
		fprintf(stderr, "kept %s\n", tmp);
}

/* The whole file at path (malloc'd, NUL-terminated), or NULL when it cannot be read. */
static inline char *llm_read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, path)) {
		cuco_strbuf_release(&sb);
		return NULL;
	}
	return cuco_strbuf_detach(&sb, NULL);
}

#endif
