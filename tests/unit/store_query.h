/* store_query.h - read single values straight from a store's SQLite file in
 * tests, independently of the store module (include after cmocka.h). */
#ifndef CUCO_TEST_STORE_QUERY_H
#define CUCO_TEST_STORE_QUERY_H

#include <sqlite3.h>
#include <string.h>

/* First column of the first row of sql as an integer; -1 when no row. */
static long long q_int(sqlite3 *db, const char *sql)
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
static char *q_text(sqlite3 *db, const char *sql)
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

#endif
