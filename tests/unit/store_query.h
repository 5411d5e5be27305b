/* store_query.h - read single values straight from a store's SQLite file in
 * tests, independently of the store module (include after cmocka.h). */
#ifndef CUCO_TEST_STORE_QUERY_H
#define CUCO_TEST_STORE_QUERY_H

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

/* First column of the first row of sql as an integer; -1 when no row. */
static inline long long q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* First column of the first row of sql as text (malloc'd); NULL when no row or NULL. */
static inline char *q_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* The first column of the first row of sql on the store at path, or -1 (no row, or the
 * file or the query fails). */
static inline int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_open(path, &db) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

#endif
