/*
 * jail.c - the view given to a child running a model's code (jail.h): a tmpfs
 * root holding bind mounts of what the caller names, made the child's root
 * by pivot_root, in mount and PID namespaces of the child's own (and a user
 * namespace when not root). The caller settles the view before fork; the
 * child only makes system calls.
 */
#define _GNU_SOURCE /* unshare, CLONE_NEW*, pipe2 */
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

/* mount_setattr(2)'s argument (linux/mount.h, not in every libc's headers). */
struct jail_mount_attr {
	unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

/* 1 if path is dir or under it. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

void cuco_jail_init(struct cuco_jail *j, const char *stage)
{
	const char *id = getenv("CUCO_SANDBOX_UID");
	struct passwd *pw;

	memset(j, 0, sizeof(*j));
	snprintf(j->stage, sizeof(j->stage), "%s", stage);
	j->root = geteuid() == 0;
	j->uid = 65534;
	j->gid = 65534;
	pw = getpwnam("nobody");
	if (pw) {
		j->uid = pw->pw_uid;
		j->gid = pw->pw_gid;
	}
	if (id && *id) {
		char *end;
		long v = strtol(id, &end, 10);
		if (!*end && v > 0 && v < 1L << 31)
			j->uid = j->gid = (uid_t)v;
	}
	snprintf(j->uid_map, sizeof(j->uid_map), "%u %u 1\n", (unsigned)getuid(),
	         (unsigned)getuid());
	snprintf(j->gid_map, sizeof(j->gid_map), "%u %u 1\n", (unsigned)getgid(),
	         (unsigned)getgid());
}

static struct cuco_jail_entry *entry(struct cuco_jail *j)
{
	if (j->n == CUCO_JAIL_MAX) {
		j->overflow = 1;
		return NULL;
	}
	memset(&j->e[j->n], 0, sizeof(j->e[0]));
	return &j->e[j->n++];
}

void cuco_jail_add(struct cuco_jail *j, const char *path, int writable)
{
	struct cuco_jail_entry *e;
	char real[PATH_MAX];
	struct stat st;

	if (!path || path[0] != '/' || !realpath(path, real) || stat(real, &st))
		return;
	for (int i = 0; i < j->n; i++)
		if (!strcmp(j->e[i].dst, path)) {
			if (writable)
				j->e[i].kind = CUCO_JAIL_RW;
			return;
		}
	e = entry(j);
	if (!e)
		return;
	snprintf(e->src, sizeof(e->src), "%s", real);
	snprintf(e->dst, sizeof(e->dst), "%s", path);
	e->kind = writable ? CUCO_JAIL_RW : CUCO_JAIL_RO;
	e->dir = S_ISDIR(st.st_mode);
}

void cuco_jail_add_system(struct cuco_jail *j)
{
	static const char *const sys[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
	                                  "/lib64", "/libx32", "/etc",  "/opt"};

	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		cuco_jail_add(j, sys[i], 0);
}

/* Shorter destinations first: a folder is bound before what lies in it. */
static int by_depth(const void *a, const void *b)
{
	const struct cuco_jail_entry *x = a, *y = b;
	size_t lx = strlen(x->dst), ly = strlen(y->dst);

	return lx < ly ? -1 : lx > ly ? 1 : strcmp(x->dst, y->dst);
}

int cuco_jail_finish(struct cuco_jail *j)
{
	int k = 0;

	if (j->overflow) {
		errno = E2BIG;
		return -1;
	}
	for (int i = 0; i < j->n; i++) {
		struct cuco_jail_entry *e = &j->e[i];
		char text[PATH_MAX];
		struct stat st;
		ssize_t n;

		/* a link named itself (merged /usr's /bin): a link again where its target is in
		 * the view; it is then no bind of its own */
		if (lstat(e->dst, &st) || !S_ISLNK(st.st_mode))
			continue;
		for (int m = 0; m < j->n; m++)
			if (m != i && j->e[m].kind != CUCO_JAIL_LINK &&
			    under(e->src, j->e[m].dst) &&
			    (n = readlink(e->dst, text, sizeof(text) - 1)) > 0) {
				text[n] = '\0';
				snprintf(e->src, sizeof(e->src), "%s", text);
				e->kind = CUCO_JAIL_LINK;
				break;
			}
	}
	/* an entry a bound folder already shows as it should be is dropped */
	for (int i = 0; i < j->n; i++) {
		struct cuco_jail_entry *e = &j->e[i];
		int covered = 0;

		for (int m = 0; m < j->n && !covered; m++)
			covered =
			    m != i && j->e[m].kind == e->kind && e->kind == CUCO_JAIL_RO &&
			    strcmp(j->e[m].dst, e->dst) && under(e->dst, j->e[m].dst) &&
			    under(e->src, j->e[m].src) &&
			    !strcmp(e->src + strlen(j->e[m].src), e->dst + strlen(j->e[m].dst));
		if (!covered)
			j->e[k++] = *e;
	}
	j->n = k;
	if (j->node_dev) {
		/* the node's unix sockets in /dev (syslog's /dev/log) under /dev/null */
		static const char *const socks[] = {"/dev/log", "/dev/initctl"};
		for (size_t i = 0; i < sizeof(socks) / sizeof(socks[0]); i++) {
			struct stat st;
			struct cuco_jail_entry *e;
			if (lstat(socks[i], &st) || !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)))
				continue;
			if (!(e = entry(j))) {
				errno = E2BIG;
				return -1;
			}
			snprintf(e->src, sizeof(e->src), "/dev/null");
			snprintf(e->dst, sizeof(e->dst), "%s", socks[i]);
			e->kind = CUCO_JAIL_MASK;
		}
	}
	qsort(j->e, (size_t)j->n, sizeof(j->e[0]), by_depth);
	return 0;
}

/* ---- in the child: system calls only ---- */

static char where[2 * PATH_MAX]; /* stage + a path (the child's copy) */

static const char *at_stage(const struct cuco_jail *j, const char *path)
{
	snprintf(where, sizeof(where), "%s%s", j->stage, strcmp(path, "/") ? path : "");
	return where;
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

/* mkdir -p of where's folders below the stage (where holds stage + path). */
static void make_parents(size_t stage_len)
{
	for (char *p = where + stage_len + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		(void)mkdir(where, 0755);
		*p = '/';
	}
}

/* The mount at target, read-only with everything under it; the flags the kernel locks kept. */
static int read_only(const char *target)
{
	struct jail_mount_attr a;
	struct statvfs sv;
	unsigned long f = MS_REMOUNT | MS_BIND | MS_RDONLY;

	memset(&a, 0, sizeof(a));
	a.attr_set = MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, -1, target, AT_RECURSIVE, &a, sizeof(a)) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	/* before Linux 5.12: the top mount alone */
	if (statvfs(target, &sv) == 0) {
		f |= sv.f_flag & ST_NOSUID ? MS_NOSUID : 0;
		f |= sv.f_flag & ST_NODEV ? MS_NODEV : 0;
		f |= sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0;
		f |= sv.f_flag & ST_NOATIME ? MS_NOATIME : 0;
		f |= sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0;
		f |= sv.f_flag & ST_RELATIME ? MS_RELATIME : 0;
	}
	return mount(NULL, target, NULL, f, NULL);
}

/* Bind src at dst in the view (dst's folders made), read-only unless rw. */
static int bind_at(const struct cuco_jail *j, const char *src, const char *dst, int dir, int rw)
{
	size_t sl = strlen(j->stage);
	struct stat st;

	at_stage(j, dst);
	make_parents(sl);
	if (lstat(where, &st)) {
		if (dir) {
			if (mkdir(where, 0755) && errno != EEXIST)
				return -1;
		} else {
			int fd = open(where, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0)
				return -1;
			close(fd);
		}
	}
	if (mount(src, where, NULL, MS_BIND | MS_REC, NULL))
		return -1;
	return rw ? 0 : read_only(where);
}

static int fail(const char **step, const char *what)
{
	*step = what;
	return -1;
}

int cuco_jail_enter(const struct cuco_jail *j, const char **step)
{
	static const char *const devs[] = {"/dev/null",   "/dev/zero",    "/dev/full",
	                                   "/dev/random", "/dev/urandom", "/dev/tty"};
	size_t sl = strlen(j->stage);

	if (!j->root && (write_small("/proc/self/setgroups", "deny") ||
	                 write_small("/proc/self/uid_map", j->uid_map) ||
	                 write_small("/proc/self/gid_map", j->gid_map)))
		return fail(step, "mapping cuco's ids in a user namespace of the child's own");
	/* nothing done here reaches the node's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return fail(step, "making / private in the child's mount namespace");
	if (mount("tmpfs", j->stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"))
		return fail(step, "mounting a tmpfs as the view's root");
	/* first /tmp and /dev: what the caller names may lie in them (a run's directory) */
	at_stage(j, "/tmp");
	if (mkdir(where, 01777) ||
	    mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"))
		return fail(step, "mounting a private /tmp");
	if (j->node_dev) {
		if (bind_at(j, "/dev", "/dev", 1, 1))
			return fail(step, "binding the node's /dev into the view");
		at_stage(j, "/dev/shm");
		if (mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"))
			return fail(step, "mounting a private /dev/shm");
	} else {
		for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
			if (access(devs[i], F_OK) == 0 && bind_at(j, devs[i], devs[i], 0, 1))
				return fail(step,
				            "binding /dev's null, zero, random into the view");
		at_stage(j, "/dev/fd");
		(void)symlink("/proc/self/fd", where);
		at_stage(j, "/dev/stdin");
		(void)symlink("/proc/self/fd/0", where);
		at_stage(j, "/dev/stdout");
		(void)symlink("/proc/self/fd/1", where);
		at_stage(j, "/dev/stderr");
		(void)symlink("/proc/self/fd/2", where);
	}
	for (int i = 0; i < j->n; i++) {
		const struct cuco_jail_entry *e = &j->e[i];

		if (e->kind == CUCO_JAIL_LINK) {
			at_stage(j, e->dst);
			make_parents(sl);
			if (symlink(e->src, where) && errno != EEXIST)
				return fail(step, "making a link in the view");
		} else if (e->kind != CUCO_JAIL_MASK &&
		           bind_at(j, e->src, e->dst, e->dir, e->kind == CUCO_JAIL_RW)) {
			return fail(step, "binding a folder into the view");
		}
	}
	for (int i = 0; i < j->n; i++)
		if (j->e[i].kind == CUCO_JAIL_MASK && bind_at(j, j->e[i].src, j->e[i].dst, 0, 0))
			return fail(step, "hiding a unix socket of /dev");
	if (j->sys && bind_at(j, "/sys", "/sys", 1, 0))
		return fail(step, "binding /sys into the view, read-only");
	at_stage(j, "/proc");
	if ((mkdir(where, 0555) && errno != EEXIST) ||
	    mount("proc", where, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return fail(step, "mounting a /proc of the child's PID namespace");
	if (chdir(j->stage) || syscall(SYS_pivot_root, ".", "."))
		return fail(step, "pivot_root into the view");
	/* the node's root, stacked under the view's, goes: nothing reaches it any more */
	if (umount2(".", MNT_DETACH) || chdir("/"))
		return fail(step, "letting go of the node's root");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL))
		return fail(step, "making the view's root read-only");
	if (j->root && (setgroups(0, NULL) || setresgid(j->gid, j->gid, j->gid) ||
	                setresuid(j->uid, j->uid, j->uid)))
		return fail(step, "becoming the unprivileged id (CUCO_SANDBOX_UID, nobody)");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail(step, "setting no_new_privs");
	return 0;
}
