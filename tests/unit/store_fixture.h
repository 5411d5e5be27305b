/*
 * store_fixture.h - what the store's unit tests share: a fresh directory and
 * store path per test, opening, and a raw SQLite connection that bypasses
 * the store. Include after cmocka.h.
 */
#ifndef CUCO_TEST_STORE_FIXTURE_H
#define CUCO_TEST_STORE_FIXTURE_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "util/strbuf.h"

/* Per-test state: a fresh temporary directory and the store path inside it. */
struct fixture {
	char dir[64];
	char path[128];
};

static inline int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/cuco-test-store-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/cuco.db", f->dir);
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *f = *state;
	struct dirent *de;
	char file[512];
	DIR *d = opendir(f->dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(file, sizeof(file), "%s/%s", f->dir, de->d_name);
			unlink(file);
		}
		closedir(d);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

static inline struct cuco_store *open_ok(const char *path)
{
	struct cuco_store *s = NULL;
	struct cuco_err err = {0};
	int ret = cuco_store_open(path, &s, &err);

	if (ret)
		fail_msg("cuco_store_open(%s): %d %s", path, ret, err.msg);
	assert_non_null(s);
	return s;
}

#define assert_ok(expr)                                              \
	do {                                                         \
		int ret_ = (expr);                                   \
		if (ret_ != CUCO_OK)                                 \
			fail_msg("%s: %d %s", #expr, ret_, err.msg); \
	} while (0)

/* Read an integer with a separate raw SQLite connection, bypassing the store. */
static inline int64_t raw_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static inline void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static inline void read_bytes(const char *path, struct cuco_strbuf *sb)
{
	cuco_strbuf_reset(sb);
	assert_int_equal(cuco_strbuf_read_file(sb, path), 0);
}

static inline void assert_file_unchanged(const char *path, const struct cuco_strbuf *before)
{
	struct cuco_strbuf after = CUCO_STRBUF_INIT;

	read_bytes(path, &after);
	assert_int_equal(after.len, before->len);
	assert_memory_equal(after.buf, before->buf, before->len);
	cuco_strbuf_release(&after);
}

#endif
