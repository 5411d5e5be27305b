/* sql.c - the store's SQL helpers: errors, binders, records read, inserted and walked by column. */
#include "internal.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

int cuco_store_sql_failx(struct cuco_store *s, struct cuco_err *err, const char *file, int line,
                         int rc, const char *what)
{
	int code = CUCO_ERR_STORE;
	const char *hint = "";

	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		code = CUCO_ERR_NOMEM;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		code = CUCO_ERR_SCHEMA;
		hint = "; the file is corrupt: restore it from a backup or set CUCO_STORE to "
		       "another file";
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		hint = "; another process holds the store for too long: retry when it is done";
		break;
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		hint = "; check that the file and its directory exist and are writable";
		break;
	case SQLITE_CONSTRAINT:
		if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
			code = CUCO_ERR_INVALID;
			hint = " (a run, program or parent id that does not exist)";
		}
		break;
	}
	return cuco_err_setx(err, file, line, code, "store %s: %s: %s%s", s->path, what,
	                     sqlite3_errmsg(s->db), hint);
}

int cuco_store_prepare(struct cuco_store *s, const char *sql, sqlite3_stmt **st,
                       struct cuco_err *err)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	if (rc != SQLITE_OK) {
		*st = NULL;
		return cuco_store_sql_fail(s, err, rc, "preparing a statement");
	}
	return CUCO_OK;
}

int cuco_store_exec(struct cuco_store *s, const char *sql, const char *what, struct cuco_err *err)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return cuco_store_sql_fail(s, err, rc, what);
	return CUCO_OK;
}

int cuco_store_step_done(struct cuco_store *s, sqlite3_stmt *st, const char *what,
                         struct cuco_err *err)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		return cuco_store_sql_fail(s, err, rc, what);
	return CUCO_OK;
}

int cuco_store_bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (!v)
		return sqlite3_bind_null(st, i);
	if (cuco_secret_in(v)) /* the API key is never stored, whoever echoed it */
		return sqlite3_bind_text(st, i, cuco_secret_redact(v), -1, free);
	return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

int cuco_store_bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v <= 0)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_int64(st, i, v);
}

static int bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_int64(st, i, v);
}

static int bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_double(st, i, v);
}

const char *cuco_store_col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	t = sqlite3_column_text(st, i);
	return cuco_xstrdup(t ? (const char *)t : "");
}

int64_t cuco_store_col_id(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return 0;
	return sqlite3_column_int64(st, i);
}

static int64_t col_opt_int(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return CUCO_STORE_NO_INT;
	return sqlite3_column_int64(st, i);
}

static double col_real(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NAN;
	return sqlite3_column_double(st, i);
}

int cuco_store_check_json(const char *text, const char *what, struct cuco_err *err)
{
	json_error_t jerr;
	json_t *j;

	if (!text)
		return CUCO_OK;
	j = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (!j)
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "%s is not valid JSON: %s at line %d column %d", what,
		                    jerr.text, jerr.line, jerr.column);
	json_decref(j);
	return CUCO_OK;
}

int cuco_store_one_of(const char *v, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(v, *set))
			return 1;
	return 0;
}

int cuco_store_require(const char *v, const char *what, struct cuco_err *err)
{
	if (!v || !*v)
		return cuco_err_set(err, CUCO_ERR_INVALID, "%s is required and was not given",
		                    what);
	return CUCO_OK;
}

int cuco_store_op_begin(struct cuco_store *s, int *own, struct cuco_err *err)
{
	*own = sqlite3_get_autocommit(s->db);
	if (*own)
		return cuco_store_exec(s, "BEGIN IMMEDIATE", "starting a transaction", err);
	return cuco_store_exec(s, "SAVEPOINT cuco_op", "starting a savepoint", err);
}

int cuco_store_op_end(struct cuco_store *s, int own, int ok, struct cuco_err *err)
{
	if (ok)
		return cuco_store_exec(s, own ? "COMMIT" : "RELEASE cuco_op", "committing", err);
	/* Failure already recorded in err: undo quietly. */
	sqlite3_exec(s->db, own ? "ROLLBACK" : "ROLLBACK TO cuco_op; RELEASE cuco_op", NULL, NULL,
	             NULL);
	return CUCO_OK;
}

/* Prepare "SELECT <every column of cols> <rest>": rows for cuco_store_read_rec(). */
static int prepare_select(struct cuco_store *s, const struct cuco_rec_col *cols, const char *rest,
                          sqlite3_stmt **st, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	const struct cuco_rec_col *c;
	int ret;

	cuco_strbuf_adds(&sql, "SELECT ");
	for (c = cols; c->name; c++)
		cuco_strbuf_addf(&sql, "%s%s", c == cols ? "" : ", ", c->name);
	cuco_strbuf_addf(&sql, " %s", rest);
	ret = cuco_store_prepare(s, sql.buf, st, err);
	cuco_strbuf_release(&sql);
	return ret;
}

void cuco_store_read_rec(sqlite3_stmt *st, const struct cuco_rec_col *cols, void *rec)
{
	int i;

	for (i = 0; cols[i].name; i++) {
		char *f = (char *)rec + cols[i].off;

		switch (cols[i].type) {
		case COL_TEXT:
			*(const char **)f = cuco_store_col_str(st, i);
			break;
		case COL_ID:
			*(int64_t *)f = cuco_store_col_id(st, i);
			break;
		case COL_OPT_INT:
			*(int64_t *)f = col_opt_int(st, i);
			break;
		case COL_INT:
			*(int *)f = sqlite3_column_int(st, i);
			break;
		case COL_REAL:
			*(double *)f = col_real(st, i);
			break;
		}
	}
}

static int bind_col(sqlite3_stmt *st, int i, const struct cuco_rec_col *c, const void *rec)
{
	const char *f = (const char *)rec + c->off;

	switch (c->type) {
	case COL_TEXT:
		return cuco_store_bind_str(st, i, *(const char *const *)f);
	case COL_ID:
		return cuco_store_bind_id(st, i, *(const int64_t *)f);
	case COL_OPT_INT:
		return bind_opt_int(st, i, *(const int64_t *)f);
	case COL_INT:
		return sqlite3_bind_int(st, i, *(const int *)f);
	case COL_REAL:
		return bind_real(st, i, *(const double *)f);
	}
	return SQLITE_MISUSE;
}

/*
 * Bind the fields of rec to the parameters of st named after their columns
 * (":kind"); columns the statement does not name are left out. what says what is
 * bound, for errors.
 */
static int bind_rec(struct cuco_store *s, sqlite3_stmt *st, const struct cuco_rec_col *cols,
                    const void *rec, const char *what, struct cuco_err *err)
{
	const struct cuco_rec_col *c;
	char param[64];
	int i, rc, nbound = 0;

	for (c = cols; c->name; c++) {
		snprintf(param, sizeof(param), ":%s", c->name);
		i = sqlite3_bind_parameter_index(st, param);
		if (!i)
			continue;
		rc = bind_col(st, i, c, rec);
		if (rc != SQLITE_OK)
			return cuco_store_sql_fail(s, err, rc, what);
		nbound++;
	}
	if (nbound != sqlite3_bind_parameter_count(st))
		return cuco_err_set(
		    err, CUCO_ERR_STORE,
		    "store %s: %s: the statement has a parameter that names no column", s->path,
		    what);
	return CUCO_OK;
}

void cuco_store_free_rec_strs(const struct cuco_rec_col *cols, void *rec)
{
	const struct cuco_rec_col *c;

	for (c = cols; c->name; c++) {
		if (c->type == COL_TEXT) {
			const char **p = (const char **)((char *)rec + c->off);

			free((void *)*p);
			*p = NULL;
		}
	}
}

/* "INSERT INTO table(<columns>) VALUES (<their values>)" as cols says. */
static void insert_sql(struct cuco_strbuf *sql, const char *table, const struct cuco_rec_col *cols)
{
	const struct cuco_rec_col *c;
	const char *sep = "";

	cuco_strbuf_addf(sql, "INSERT INTO %s(", table);
	for (c = cols; c->name; c++) {
		if (c->insert && !*c->insert)
			continue;
		cuco_strbuf_addf(sql, "%s%s", sep, c->name);
		sep = ", ";
	}
	cuco_strbuf_adds(sql, ") VALUES (");
	sep = "";
	for (c = cols; c->name; c++) {
		if (c->insert && !*c->insert)
			continue;
		if (c->insert)
			cuco_strbuf_addf(sql, "%s%s", sep, c->insert);
		else
			cuco_strbuf_addf(sql, "%s:%s", sep, c->name);
		sep = ", ";
	}
	cuco_strbuf_adds(sql, ")");
}

int cuco_store_insert_rec(struct cuco_store *s, const char *table, const struct cuco_rec_col *cols,
                          const void *rec, const char *a_noun, int64_t *id, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	char what[64];
	int ret;

	insert_sql(&sql, table, cols);
	ret = cuco_store_prepare(s, sql.buf, &st, err);
	if (ret)
		goto out;
	snprintf(what, sizeof(what), "binding %s", a_noun);
	ret = bind_rec(s, st, cols, rec, what, err);
	if (ret)
		goto out;
	snprintf(what, sizeof(what), "inserting %s", a_noun);
	ret = cuco_store_step_done(s, st, what, err);
	if (ret)
		goto out;
	if (id)
		*id = sqlite3_last_insert_rowid(s->db);
out:
	sqlite3_finalize(st);
	cuco_strbuf_release(&sql);
	return ret;
}

int cuco_store_get_rec(struct cuco_store *s, const struct cuco_rec_col *cols, const char *rest,
                       int64_t id, void *rec, const char *noun, const char *a_noun,
                       struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	char what[64];
	int rc, ret;

	ret = prepare_select(s, cols, rest, &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		cuco_store_read_rec(st, cols, rec);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no %s %lld", s->path,
		                   noun, (long long)id);
	} else {
		snprintf(what, sizeof(what), "reading %s", a_noun);
		ret = cuco_store_sql_fail(s, err, rc, what);
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_walk(struct cuco_store *s, const struct cuco_rec_col *cols, const char *rest,
                    int64_t key, void *rec,
                    int (*visit)(void *rec, void *ctx, struct cuco_err *err), void *ctx,
                    const char *what, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare_select(s, cols, rest, &st, err);
	if (ret)
		goto out;
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, key);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = cuco_store_sql_fail(s, err, rc, what);
			goto out;
		}
		cuco_store_read_rec(st, cols, rec);
		ret = visit(rec, ctx, err);
		cuco_store_free_rec_strs(cols, rec);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}
