/*
 * jail.c - the read-only view of the node a harness run gets: a mount
 * namespace of its own, every mount in it remounted read-only but the
 * writable directories (each bound onto itself first, so it is a mount of
 * its own that stays writable), /dev and /proc; the kept directories under a
 * writable one bound onto themselves after it, and so made read-only too. Not root: inside a user
 * namespace that maps only our ids, where the kernel allows it. Flags the kernel locks on a mount
 * (nosuid, nodev, noexec, atime) are kept, or it refuses the remount.
 */
#define _GNU_SOURCE /* unshare, CLONE_NEW* */
#include "jail.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 if path is dir or under it. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* One space-separated field of a mountinfo line, octal escapes (\040) decoded, into out. */
static const char *field(const char *p, char *out, size_t len)
{
	size_t k = 0;

	while (*p == ' ')
		p++;
	for (; *p && *p != ' ' && *p != '\n'; p++) {
		char c = *p;

		if (c == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			c = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		}
		if (k + 1 < len)
			out[k++] = c;
	}
	out[k] = '\0';
	return p;
}

/* The remount flags that keep a mount's own options (field 6 of mountinfo) and add read-only. */
static unsigned long keep_flags(const char *opts)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} known[] = {{"nosuid", MS_NOSUID},         {"nodev", MS_NODEV},
	             {"noexec", MS_NOEXEC},         {"noatime", MS_NOATIME},
	             {"nodiratime", MS_NODIRATIME}, {"relatime", MS_RELATIME}};
	unsigned long f = MS_REMOUNT | MS_BIND | MS_RDONLY;

	for (const char *o = opts; *o;) {
		size_t n = strcspn(o, ",");

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == n && !strncmp(o, known[i].name, n))
				f |= known[i].flag;
		o += n + (o[n] == ',');
	}
	return f;
}

/* mountinfo is read whole; a node with more mounts than this is refused (the child exits). */
static char info[1 << 18];

/* The step cuco_jail_enter was at when it failed (in the child: the probe reports it). */
static const char *jail_step = "";

/* Fail at step with errno as it is. */
static int step_failed(const char *step)
{
	jail_step = step;
	return -1;
}

/* 1 if path is one of list (NULL-terminated). */
static int listed(const char *path, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(path, *list))
			return 1;
	return 0;
}

int cuco_jail_enter(const char *const *writable, const char *const *keep, int in_userns,
                    const char *uid_map, const char *gid_map)
{
	char point[4096], opts[512], skip[16];
	const char *p;
	ssize_t got;
	size_t n = 0;
	int fd;

	if (geteuid() == 0 || in_userns) {
		if (unshare(CLONE_NEWNS))
			return step_failed("unshare(CLONE_NEWNS), a mount namespace");
	} else if (cuco_proc_unshare_user(CLONE_NEWNS, uid_map, gid_map)) {
		return step_failed("unshare(CLONE_NEWUSER | CLONE_NEWNS), an unprivileged user "
		                   "namespace (the kernel or a sysctl such as "
		                   "kernel.unprivileged_userns_clone or "
		                   "kernel.apparmor_restrict_unprivileged_userns refuses them)");
	}
	/* nothing done here reaches the node's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return step_failed("making / private in the new mount namespace");
	/* recursive: a directory bound after one under it keeps that one's mount visible, so
	 * every mount point below names a mount */
	for (const char *const *w = writable; *w; w++)
		if (mount(*w, *w, NULL, MS_BIND | MS_REC, NULL))
			return step_failed("binding a writable directory onto itself");
	/* recursive too: a writable directory inside a kept one stays a mount of its own */
	for (const char *const *k = keep; k && *k; k++) {
		int in_writable = 0;

		for (const char *const *w = writable; *w; w++)
			in_writable |= under(*k, *w) && strcmp(*k, *w);
		if (in_writable && mount(*k, *k, NULL, MS_BIND | MS_REC, NULL))
			return step_failed("binding a kept directory onto itself");
	}
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return step_failed("reading /proc/self/mountinfo");
	while ((got = read(fd, info + n, sizeof(info) - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (got < 0 || n == sizeof(info) - 1) {
		errno = got < 0 ? errno : E2BIG;
		return step_failed("reading /proc/self/mountinfo");
	}
	info[n] = '\0';
	for (p = info; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		const char *q = p;

		for (int i = 0; i < 4; i++) /* id, parent, major:minor, root */
			q = field(q, skip, sizeof(skip));
		q = field(q, point, sizeof(point));
		field(q, opts, sizeof(opts));
		if (point[0] != '/' || listed(point, writable) || under(point, "/proc") ||
		    under(point, "/dev"))
			continue;
		if (mount(NULL, point, NULL, keep_flags(opts), NULL) &&
		    !under(point, "/sys")) /* sysfs is read-only to a namespace's user anyway */
			return step_failed("remounting a mount read-only");
	}
	return 0;
}

/* Why the probe found no view ("" when it did); set once, with known. */
static char why_not[512];
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probed;

/*
 * Build the view in a child, as a run would, in a private directory (no
 * name anyone else can take first): the directory it may write is
 * writable, the one above it read-only. The child reports the step that
 * failed, and its errno, on a pipe.
 */
static void probe(void)
{
	char dir[] = "/tmp/cuco-jail.XXXXXX", w[64], file[80], outside[64], uid[64], gid[64];
	char msg[300] = "";
	int status = 0, fds[2] = {-1, -1}, err = 0;
	pid_t pid = -1;
	ssize_t k;

	snprintf(uid, sizeof(uid), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(gid, sizeof(gid), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	if (!mkdtemp(dir)) {
		snprintf(why_not, sizeof(why_not), "cannot make a private directory in /tmp: %s",
		         strerror(errno));
		return;
	}
	snprintf(w, sizeof(w), "%s/w", dir);
	snprintf(file, sizeof(file), "%s/file", w);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	if (mkdir(w, 0700) || pipe2(fds, O_CLOEXEC)) {
		snprintf(why_not, sizeof(why_not), "cannot make the probe's directory: %s",
		         strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		const char *wr[] = {w, NULL};
		const char *step = "";
		int fd, e = 0;

		close(fds[0]);
		if (cuco_jail_enter(wr, NULL, 0, uid, gid)) {
			step = jail_step;
			e = errno;
		} else if ((fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0) {
			step = "writing the directory left writable";
			e = errno;
		} else {
			close(fd);
			if (mkdir(outside, 0700) == 0 || errno != EROFS) {
				step = "a directory outside the writable one is still writable";
				e = errno == EROFS ? 0 : errno;
			}
		}
		if (*step) {
			(void)!write(fds[1], &e, sizeof(e));
			(void)!write(fds[1], step, strlen(step));
			_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	fds[1] = -1;
	if (pid < 0) {
		snprintf(why_not, sizeof(why_not), "cannot fork the probe: %s", strerror(errno));
		goto out;
	}
	if (read(fds[0], &err, sizeof(err)) == (ssize_t)sizeof(err) &&
	    (k = read(fds[0], msg, sizeof(msg) - 1)) > 0)
		msg[k] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(why_not, sizeof(why_not), "%s%s%s", msg[0] ? msg : "the probe died",
		         err ? ": " : "", err ? strerror(err) : "");
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	unlink(file);
	rmdir(outside);
	rmdir(w);
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
