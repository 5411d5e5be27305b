/*
 * jail.h - the view given to a child that runs code a model wrote (a harness run
 * and its ranks, a candidate's compile): a root of its own, a tmpfs holding
 * only what the caller names, bound at the same paths (read-only but its
 * private directory), a private /tmp, /dev (the node's, with a private
 * /dev/shm, or only null, zero, full, random, urandom and tty), /sys
 * read-only when asked, and a /proc of a PID namespace of its own, whose
 * first process is the child: when it ends, everything it started ends. The
 * store, the state directory, $HOME and every other file of the node do not
 * exist in it, nor do the node's unix sockets. Not root: a user namespace
 * mapping only cuco's ids. As root: the child becomes an unprivileged id
 * (nobody unless CUCO_SANDBOX_UID says), without capabilities, with
 * no_new_privs. docs/sandbox.md.
 */
#ifndef CUCO_JAIL_H
#define CUCO_JAIL_H

#include <limits.h>
#include <sys/types.h>

#define CUCO_JAIL_MAX 96 /* entries a view holds */

/* One thing the view holds. */
struct cuco_jail_entry {
	char src[PATH_MAX]; /* the node's file or directory (canonical), or a link's text */
	char dst[PATH_MAX]; /* where it is in the view: the path as the caller named it */
	int kind;           /* CUCO_JAIL_RO, _RW, _LINK (a symbolic link src at dst), _MASK */
	int dir;            /* 1: a directory */
};

enum { CUCO_JAIL_RO, CUCO_JAIL_RW, CUCO_JAIL_LINK, CUCO_JAIL_MASK };

/*
 * A view, built by the caller before fork (cuco_jail_init, _add, _finish),
 * entered by the child (cuco_jail_enter). Plain data. Whether this node can
 * build one at all: jail_probe.h.
 */
struct cuco_jail {
	struct cuco_jail_entry e[CUCO_JAIL_MAX];
	int n;
	int node_dev; /* 1: the node's /dev (GPUs) with a private /dev/shm; 0: a minimal one */
	int sys;      /* 1: /sys, read-only */
	uid_t uid;    /* as root: who the child becomes */
	gid_t gid;
	int root;             /* 1: cuco runs as root (the child drops to uid, gid) */
	char stage[PATH_MAX]; /* an empty directory of the caller's, not in the view: the root is
	                         built there */
	char uid_map[64], gid_map[64]; /* not root: /proc/self/{uid,gid}_map lines (our ids) */
	int overflow;                  /* 1: more entries than CUCO_JAIL_MAX were asked for */
};

/* An empty view built on stage (an empty directory the caller made and removes). */
void cuco_jail_init(struct cuco_jail *j, const char *stage);
/*
 * Add path (absolute; a file or a directory, a missing one is skipped) to
 * the view at the same path, read-only or writable. A path whose folders
 * hold a symbolic link is bound from where it leads.
 */
void cuco_jail_add(struct cuco_jail *j, const char *path, int writable);
/* The system's folders a program needs to run: /usr, /bin, /lib*, /sbin, /etc, /opt. */
void cuco_jail_add_system(struct cuco_jail *j);
/*
 * Settle the view: entries in an order a child can bind them, those another
 * covers dropped, system links (/bin -> usr/bin) made links again, the
 * node's unix sockets in /dev hidden. 0, or -1 when the view holds too much
 * (errno E2BIG).
 */
int cuco_jail_finish(struct cuco_jail *j);

/*
 * In the child, the first process of new mount and PID namespaces (and a
 * user namespace when not root, whose maps it writes): build the view, make
 * it the root, mount its /proc, become j->uid as root, set no_new_privs.
 * System calls only, no allocation. 0, or -1 with errno set and the step in
 * *step (the child then exits).
 */
int cuco_jail_enter(const struct cuco_jail *j, const char **step);

#endif
