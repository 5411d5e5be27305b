/*
 * jail.h - a read-only view of the node for a child that runs candidates'
 * host code (the harness and its ranks): a mount namespace of its own in
 * which every file system is read-only but a few directories (the child's
 * private one, /tmp), /dev (GPUs, /dev/shm) and /proc; directories cuco
 * must keep (its state) stay read-only even inside a writable one.
 * docs/sandbox.md.
 */
#ifndef CUCO_JAIL_H
#define CUCO_JAIL_H

/*
 * Enter the jail, in a child after fork and before exec: system calls only,
 * no allocation. writable is a NULL-terminated list of absolute, canonical
 * directories that stay writable (even inside a kept one); keep one of
 * directories that are read-only even where they lie under a writable one. uid_map and gid_map are
 * /proc/self/{uid,gid}_map lines mapping our ids, used when a user namespace is needed (not root,
 * and in_userns 0: the caller has not made one already). 0, or -1 with errno set (the child is then
 * half way: exit rather than run).
 */
int cuco_jail_enter(const char *const *writable, const char *const *keep, int in_userns,
                    const char *uid_map, const char *gid_map);

/*
 * 1 when this kernel and node let cuco build the jail (found once by building
 * it in a child, in a private directory of its own), else 0.
 */
int cuco_jail_available(void);
/* Why the jail cannot be built here: the step that failed and the kernel's word; "" if it can. */
const char *cuco_jail_why(void);

#endif
