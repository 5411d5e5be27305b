/*
 * internal.h - what the store's files share: the connection, the table of a
 * record's columns that drives its SELECT, INSERT and reading, and the SQL
 * helpers over them. Not a public header: src/store/ only.
 */
#ifndef CUCO_STORE_INTERNAL_H
#define CUCO_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

#ifndef CUCO_VERSION
#define CUCO_VERSION "unknown"
#endif

struct cuco_store {
	sqlite3 *db;
	char *path;
	int lock_fd; /* "<path>.lock", holding the runs this process runs; -1 until one */
};

/* SQL for "now" in the format every created_at column uses. */
#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* ---- the schema (schema.c) ---- */

/*
 * Decide, reading only, whether the file is ours: *fresh is set when it is an
 * empty database that needs the schema. Nothing is written, so a file refused
 * (CUCO_ERR_SCHEMA) stays as it was.
 */
int cuco_store_schema_check(struct cuco_store *s, int *fresh, struct cuco_err *err);

/* Create the current schema in a new database; a concurrent opener may have won the race. */
int cuco_store_schema_create(struct cuco_store *s, struct cuco_err *err);

/*
 * Bring an older store up to CUCO_STORE_SCHEMA_VERSION in place, one version
 * per transaction; a concurrent opener may have done a step already.
 */
int cuco_store_schema_migrate(struct cuco_store *s, struct cuco_err *err);

/* ---- SQL helpers (sql.c) ---- */

/* Turn an SQLite failure into err: where cuco was, the store, what it did, SQLite's message. */
#define cuco_store_sql_fail(s, err, rc, what) \
	cuco_store_sql_failx((s), (err), __FILE__, __LINE__, (rc), (what))
int cuco_store_sql_failx(struct cuco_store *s, struct cuco_err *err, const char *file, int line,
                         int rc, const char *what);

/* Prepare sql into *st (NULL on error). */
int cuco_store_prepare(struct cuco_store *s, const char *sql, sqlite3_stmt **st,
                       struct cuco_err *err);

/* Run constant SQL (no values in it); what names it in errors. */
int cuco_store_exec(struct cuco_store *s, const char *sql, const char *what, struct cuco_err *err);

/* Step an INSERT/UPDATE/DELETE to completion. */
int cuco_store_step_done(struct cuco_store *s, sqlite3_stmt *st, const char *what,
                         struct cuco_err *err);

/* Binders following the NULL conventions of store.h; they return an SQLite code. */
int cuco_store_bind_str(sqlite3_stmt *st, int i, const char *v);
int cuco_store_bind_id(sqlite3_stmt *st, int i, int64_t v);

/* Column readers, the inverse of the binders; a text column comes back malloc'ed. */
const char *cuco_store_col_str(sqlite3_stmt *st, int i);
int64_t cuco_store_col_id(sqlite3_stmt *st, int i);

/* Reject text that is not JSON, so the JSON columns can be trusted by readers. */
int cuco_store_check_json(const char *text, const char *what, struct cuco_err *err);

/* Whether v is one of the NULL-ended set. */
int cuco_store_one_of(const char *v, const char *const *set);

/* CUCO_ERR_INVALID naming what when v is NULL or empty. */
int cuco_store_require(const char *v, const char *what, struct cuco_err *err);

/*
 * Make the statements of one API call atomic: a transaction of its own when none
 * is open (*own set), else a savepoint inside the caller's transaction.
 * cuco_store_op_end() commits when ok, else undoes quietly (err holds why).
 */
int cuco_store_op_begin(struct cuco_store *s, int *own, struct cuco_err *err);
int cuco_store_op_end(struct cuco_store *s, int own, int ok, struct cuco_err *err);

/* ---- records: a table's columns and the struct fields that hold them (sql.c) ---- */

enum cuco_col_type {
	COL_TEXT,    /* const char *: NULL is NULL */
	COL_ID,      /* int64_t row id: 0 is NULL */
	COL_OPT_INT, /* int64_t: CUCO_STORE_NO_INT (any value below 0) is NULL */
	COL_INT,     /* int, never NULL */
	COL_REAL,    /* double: NaN is NULL */
};

/*
 * A column of a record's table and the field of the record struct that holds it.
 * One array of these per record type, ended by a NULL name, is the one place a
 * table's columns are written: it drives the SELECT column list, the reading of
 * rows, the INSERT statement and the binding of its parameters.
 */
struct cuco_rec_col {
	const char *name; /* column name; the INSERT binds it as the parameter ":name" */
	enum cuco_col_type type;
	size_t off;         /* offsetof the field in the record struct */
	const char *insert; /* the INSERT's value: NULL binds ":name", REC_NO_INSERT leaves
	                       the column out, else this SQL expression */
};

/* A column the INSERT leaves to its default (the row id, what later updates set). */
#define REC_NO_INSERT ""
/* A created_at column: the record's value, or now when it has none. */
#define REC_NOW_UNLESS_GIVEN "COALESCE(:created_at, " NOW_SQL ")"

/* Fill the fields of rec from the current row of a SELECT of cols. */
void cuco_store_read_rec(sqlite3_stmt *st, const struct cuco_rec_col *cols, void *rec);

/* Free the text fields of rec (the caller re-inits it). */
void cuco_store_free_rec_strs(const struct cuco_rec_col *cols, void *rec);

/*
 * Insert rec as a row of table, columns and values as cols says, and store the
 * new row id in *id (may be NULL); a_noun ("a run") names the record in errors.
 */
int cuco_store_insert_rec(struct cuco_store *s, const char *table, const struct cuco_rec_col *cols,
                          const void *rec, const char *a_noun, int64_t *id, struct cuco_err *err);

/*
 * Read into rec (init'ed by the caller) the row "SELECT <cols> <rest>" finds with
 * id bound to its parameter. noun ("run") and a_noun ("a run") name the record in
 * errors: CUCO_ERR_NOT_FOUND when there is no such row, CUCO_ERR_STORE.
 */
int cuco_store_get_rec(struct cuco_store *s, const struct cuco_rec_col *cols, const char *rest,
                       int64_t id, void *rec, const char *noun, const char *a_noun,
                       struct cuco_err *err);

/*
 * Walk the rows "SELECT <cols> <rest>" returns, with key bound to ?1 (when rest
 * has a parameter): each is
 * read into rec (a record of cols), handed to visit with ctx, then its strings
 * freed. visit's nonzero value stops the walk and is returned; what names the
 * walk in errors.
 */
int cuco_store_walk(struct cuco_store *s, const struct cuco_rec_col *cols, const char *rest,
                    int64_t key, void *rec,
                    int (*visit)(void *rec, void *ctx, struct cuco_err *err), void *ctx,
                    const char *what, struct cuco_err *err);

#endif
