/* cmd_cache.c - `cuco cache`: what the compile cache holds (where, how much, how old), and
 * `cuco cache clean` to remove its entries, all or those older than some days. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco cache [clean [--older-than DAYS]]\n"
    "\n"
    "Show the compile cache: its folder ($CUCO_CACHE, else <state>/cache, <state> being\n"
    "$CUCO_STATE or .cuco), its entries (one compiled program each: its source and shared\n"
    "object, named by the hash of what was compiled) and their size. 'clean' removes every\n"
    "entry, or with --older-than those not written for DAYS days; a program whose entry is\n"
    "gone is compiled again when next needed.\n";

struct cache_args {
	double older_than; /* days; -1: not given */
	const char *pos[1];
	int npos;
};

static const struct cli_flag cache_flags[] = {
    {CLI_ARG, "clean", .help = "remove entries (all, or those --older-than DAYS)"},
    {CLI_DOUBLE, "--older-than", "DAYS",
     "clean: only entries not written for DAYS days (fractions allowed: 0.5 is 12 hours)",
     CLI_AT(struct cache_args, older_than), .dlo = 0, .dhi = 36500},
    {CLI_END},
};

const struct cli_spec cmd_cache_spec = {
    .name = "cache",
    .usage = usage,
    .flags = cache_flags,
    .args_size = sizeof(struct cache_args),
    .pos = offsetof(struct cache_args, pos),
    .npos = offsetof(struct cache_args, npos),
    .max_pos = 1,
};

#define HASH_CHARS 24 /* an entry's files are named by this many hex digits of its hash */

/* What one pass over the cache found (and, cleaning, removed). */
struct cache_tally {
	long entries, files, removed_entries;
	unsigned long long bytes, removed_bytes;
	time_t oldest, newest; /* of the entries' latest writes; 0: none */
};

/* 1 when name starts with an entry's hash: HASH_CHARS hex digits then '.'. */
static int entry_file(const char *name)
{
	for (int i = 0; i < HASH_CHARS; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return name[HASH_CHARS] == '.';
}

/* Remove the files list[from..to) of one entry; -1 with errno on the first failure. */
static int entry_remove(const char *dir, struct dirent **list, int from, int to)
{
	for (int i = from; i < to; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (unlink(path) && errno != ENOENT)
			return -1;
	}
	return 0;
}

/* Count (and, when clean and not written since cutoff, remove) the entry list[from..to). */
static int entry_visit(const char *dir, struct dirent **list, int from, int to, int clean,
                       time_t cutoff, struct cache_tally *t, struct cuco_err *err)
{
	unsigned long long bytes = 0;
	time_t latest = 0;

	for (int i = from; i < to; i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		bytes += (unsigned long long)st.st_size;
		if (st.st_mtime > latest)
			latest = st.st_mtime;
	}
	if (!latest)
		return CUCO_OK;
	t->entries++;
	t->bytes += bytes;
	if (!t->oldest || latest < t->oldest)
		t->oldest = latest;
	if (latest > t->newest)
		t->newest = latest;
	if (!clean || latest >= cutoff)
		return CUCO_OK;
	if (entry_remove(dir, list, from, to))
		return cuco_err_set(err, CUCO_ERR_IO, "cannot remove %s/%.*s.*: %s", dir,
		                    HASH_CHARS, list[from]->d_name, strerror(errno));
	t->removed_entries++;
	t->removed_bytes += bytes;
	return CUCO_OK;
}

/*
 * One pass over dir, its names sorted so that an entry's files are
 * neighbours: each entry counted, and when clean removed if not written
 * since cutoff. 0, or CUCO_ERR_IO in err (the first removal that failed).
 */
static int cache_walk(const char *dir, int clean, time_t cutoff, struct cache_tally *t,
                      struct cuco_err *err)
{
	struct dirent **list = NULL;
	int n = scandir(dir, &list, NULL, alphasort), rc = CUCO_OK;

	memset(t, 0, sizeof(*t));
	if (n < 0)
		return errno == ENOENT
		           ? CUCO_OK
		           : cuco_err_set(err, CUCO_ERR_IO, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n;) {
		int j = i + 1;
		if (!entry_file(list[i]->d_name)) {
			i++;
			continue;
		}
		while (j < n && entry_file(list[j]->d_name) &&
		       !strncmp(list[j]->d_name, list[i]->d_name, HASH_CHARS))
			j++;
		if (!rc)
			rc = entry_visit(dir, list, i, j, clean, cutoff, t, err);
		i = j;
	}
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

static void human_bytes(unsigned long long b, char *out, size_t len)
{
	if (b >= 1ull << 30)
		snprintf(out, len, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(out, len, "%.1f MiB", (double)b / (1ull << 20));
	else if (b >= 1ull << 10)
		snprintf(out, len, "%.1f KiB", (double)b / (1ull << 10));
	else
		snprintf(out, len, "%llu bytes", b);
}

static void day(time_t t, char *out, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M UTC", &tm);
}

static void show(const char *dir, const struct cache_tally *t)
{
	char size[32], a[40], b[40];

	human_bytes(t->bytes, size, sizeof(size));
	printf("cache:    %s\n", dir);
	printf("entries:  %ld compiled program%s, %s\n", t->entries, t->entries == 1 ? "" : "s",
	       size);
	if (t->entries) {
		day(t->oldest, a, sizeof(a));
		day(t->newest, b, sizeof(b));
		printf("written:  %s (oldest) to %s (newest)\n", a, b);
	}
	printf("'cuco cache clean [--older-than DAYS]' removes entries.\n");
}

int cmd_cache(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_compile_opts co;
	struct cache_tally t;
	struct cache_args a;
	int rc, clean;
	time_t cutoff;

	memset(&a, 0, sizeof(a));
	a.older_than = -1;
	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_cache_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	clean = a.npos && !strcmp(a.pos[0], "clean");
	if (a.npos && !clean)
		return cli_usage_error("cache", "'%s' is not a cache command (clean)", a.pos[0]);
	if (!clean && a.older_than >= 0)
		return cli_usage_error("cache", "--older-than is for 'cuco cache clean'");
	if ((rc = cuco_compile_opts_default(&co, &err)))
		return cli_fail(&err);
	cutoff = a.older_than >= 0 ? time(NULL) - (time_t)(a.older_than * 86400) : time(NULL) + 1;
	if ((rc = cache_walk(co.cache_dir, clean, cutoff, &t, &err)))
		cli_fail(&err);
	if (!clean) {
		show(co.cache_dir, &t);
	} else {
		char size[32];
		human_bytes(t.removed_bytes, size, sizeof(size));
		printf("removed %ld of %ld entr%s (%s) from %s; %ld left\n", t.removed_entries,
		       t.entries, t.entries == 1 ? "y" : "ies", size, co.cache_dir,
		       t.entries - t.removed_entries);
	}
	return rc;
}
