/*
 * jail_probe.c - whether this node can build the view (jail_probe.h): found
 * once, by building one in a child started as a run starts its harness
 * (proc.h) and checking it from inside.
 */
#define _GNU_SOURCE /* pipe2 */
#include "jail_probe.h"
#include "jail.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char why_not[512];
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probed;

/*
 * Build a view in a child, as a run does, in a private directory (no name
 * anyone else can take first), and check it: its writable folder written,
 * the folder beside it and /root missing, /proc its own, not root. The step
 * that failed and its errno come back on a pipe.
 */
static void probe(void)
{
	char dir[] = "/tmp/cuco-jail.XXXXXX", msg[300] = "";
	struct cuco_jail *j = NULL;
	char w[64], stage[64], file[80];
	int status = 0, fds[2] = {-1, -1}, err = 0;
	struct cuco_proc_sched s;
	pid_t pid;
	ssize_t k;

	if (!mkdtemp(dir)) {
		snprintf(why_not, sizeof(why_not), "cannot make a private directory in /tmp: %s",
		         strerror(errno));
		return;
	}
	snprintf(w, sizeof(w), "%s/w", dir);
	snprintf(stage, sizeof(stage), "%s/root", dir);
	snprintf(file, sizeof(file), "%s/file", w);
	j = calloc(1, sizeof(*j));
	if (!j || mkdir(w, 0700) || mkdir(stage, 0700) || pipe2(fds, O_CLOEXEC)) {
		snprintf(why_not, sizeof(why_not), "cannot make the probe's directory: %s",
		         strerror(errno));
		goto out;
	}
	cuco_jail_init(j, stage);
	cuco_jail_add_system(j);
	cuco_jail_add(j, w, 1);
	if (j->root && chown(w, j->uid, j->gid)) {
		snprintf(why_not, sizeof(why_not), "cannot give %s to the unprivileged id: %s", w,
		         strerror(errno));
		goto out;
	}
	if (cuco_jail_finish(j)) {
		snprintf(why_not, sizeof(why_not), "the view holds too much");
		goto out;
	}
	memset(&s, 0, sizeof(s));
	s.jail = j;
	s.report_fd = fds[1];
	/* the check, inside: the writable folder written, the node's /tmp/cuco-jail.* and
	 * $HOME not there, one process in /proc, not root */
	{
		char script[512];
		char *argv[] = {"/bin/sh", "-c", script, NULL};
		snprintf(script, sizeof(script),
		         ": > %s || exit 2; [ -e %s ] && exit 3; [ -e /root ] && exit 3; "
		         "[ \"$(ls -d /proc/[0-9]* | wc -l)\" -le 8 ] || exit 4; "
		         "[ \"$(id -u)\" != 0 ] || exit 5; exit 0",
		         file, stage);
		pid = cuco_proc_start_sched(argv, NULL, &s, NULL, NULL);
	}
	close(fds[1]);
	fds[1] = -1;
	if (pid < 0) {
		snprintf(why_not, sizeof(why_not),
		         "making the child's namespaces (clone: mount, PID%s): %s",
		         j->root ? "" : ", user", strerror(errno));
		goto out;
	}
	if (read(fds[0], &err, sizeof(err)) == (ssize_t)sizeof(err) &&
	    (k = read(fds[0], msg, sizeof(msg) - 1)) > 0)
		msg[k] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (msg[0])
			snprintf(why_not, sizeof(why_not), "%s%s%s", msg, err ? ": " : "",
			         err ? strerror(err) : "");
		else
			snprintf(why_not, sizeof(why_not), "%s",
			         code == 2   ? "the view's private directory cannot be written"
			         : code == 3 ? "the node's files are still there in the view"
			         : code == 4 ? "the view's /proc shows the node's processes"
			         : code == 5 ? "the child is still root in the view"
			                     : "the probe died in the view");
	}
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(j);
	unlink(file);
	rmdir(w);
	rmdir(stage);
	rmdir(dir);
	probed = !why_not[0];
}

int cuco_jail_available(void)
{
	pthread_once(&probe_once, probe);
	return probed;
}

const char *cuco_jail_why(void)
{
	pthread_once(&probe_once, probe);
	return why_not;
}
