/*
 * rm_tree.h - remove a test's temporary directory and everything below it.
 * Header-only (static inline). The including file must define _XOPEN_SOURCE
 * 700 (or _GNU_SOURCE) before its first include, for nftw.
 */
#ifndef CUCO_TEST_RM_TREE_H
#define CUCO_TEST_RM_TREE_H

#if !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE)
#error "define _XOPEN_SOURCE 700 (or _GNU_SOURCE) before including rm_tree.h"
#endif

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

/* nftw callback for rm_tree: remove one entry (children come first). */
static inline int rm_tree_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove dir and everything below it. */
static inline void rm_tree(const char *dir)
{
	nftw(dir, rm_tree_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
