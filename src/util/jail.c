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
#include <sched.h>
#include <stdatomic.h>
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
			return -1;
	} else if (cuco_proc_unshare_user(CLONE_NEWNS, uid_map, gid_map)) {
		return -1;
	}
	/* nothing done here reaches the node's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	/* recursive: a directory bound after one under it keeps that one's mount visible, so
	 * every mount point below names a mount */
	for (const char *const *w = writable; *w; w++)
		if (mount(*w, *w, NULL, MS_BIND | MS_REC, NULL))
			return -1;
	/* recursive too: a writable directory inside a kept one stays a mount of its own */
	for (const char *const *k = keep; k && *k; k++) {
		int in_writable = 0;

		for (const char *const *w = writable; *w; w++)
			in_writable |= under(*k, *w) && strcmp(*k, *w);
		if (in_writable && mount(*k, *k, NULL, MS_BIND | MS_REC, NULL))
			return -1;
	}
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((got = read(fd, info + n, sizeof(info) - 1 - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (got < 0 || n == sizeof(info) - 1) {
		errno = got < 0 ? errno : E2BIG;
		return -1;
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
			return -1;
	}
	return 0;
}

int cuco_jail_available(void)
{
	static atomic_int known = -1;
	char dir[] = "/tmp/cuco-jail.XXXXXX", uid[64], gid[64], file[64];
	int status = 0, now = atomic_load(&known);
	pid_t pid;

	if (now >= 0)
		return now;
	snprintf(uid, sizeof(uid), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	snprintf(gid, sizeof(gid), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	if (!mkdtemp(dir))
		return 0;
	snprintf(file, sizeof(file), "%s/w", dir);
	pid = fork();
	if (pid == 0) {
		/* built, the private folder writable and the one above it not */
		const char *w[] = {dir, NULL};
		int fd;

		if (cuco_jail_enter(w, NULL, 0, uid, gid))
			_exit(1);
		fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(2);
		close(fd);
		_exit(mkdir("/tmp/cuco-jail-probe-outside", 0700) == 0 || errno != EROFS ? 3 : 0);
	}
	now = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0;
	unlink(file);
	rmdir(dir);
	rmdir("/tmp/cuco-jail-probe-outside");
	atomic_store(&known, now);
	return now;
}
