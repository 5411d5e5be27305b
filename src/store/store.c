/* store.c - the SQLite store: schema, versioning, and typed access to every table. */
#include "store.h"
#include "util/xalloc.h"
#include "util/hash.h"
#include "util/paths.h"
#include "util/secret.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "util/strbuf.h"

#ifndef CUCO_VERSION
#define CUCO_VERSION "unknown"
#endif

struct cuco_store {
	sqlite3 *db;
	char *path;
};

/*
 * Version 1 of the schema. Only constants here: values always go through bound
 * parameters. Closed vocabularies that are likely to grow (origin, kind) are
 * checked in C rather than with CHECK constraints, because SQLite cannot alter a
 * CHECK constraint without rebuilding the table.
 */
static const char schema_v1[] =
    "CREATE TABLE runs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  created_at TEXT NOT NULL,\n"
    "  kind TEXT NOT NULL,\n"
    "  workload TEXT,\n"
    "  shape TEXT,\n"
    "  config TEXT,\n"
    "  status TEXT NOT NULL DEFAULT 'running',\n"
    "  finished_at TEXT,\n"
    "  cuco_version TEXT,\n"
    "  host TEXT,\n"
    "  gpu TEXT,\n"
    "  commit_id TEXT\n"
    ");\n"
    "CREATE TABLE programs (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  workload TEXT NOT NULL,\n"
    "  name TEXT,\n"
    "  origin TEXT NOT NULL,\n"
    "  hash TEXT NOT NULL,\n"
    "  code TEXT NOT NULL,\n"
    "  directive TEXT,\n"
    "  island INTEGER,\n"
    "  generation INTEGER,\n"
    "  operator TEXT,\n"
    "  created_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX programs_hash ON programs(workload, hash);\n"
    "CREATE INDEX programs_run_id ON programs(run_id);\n"
    "CREATE TABLE program_parents (\n"
    "  program_id INTEGER NOT NULL REFERENCES programs(id),\n"
    "  parent_id INTEGER NOT NULL REFERENCES programs(id),\n"
    "  kind TEXT NOT NULL DEFAULT 'parent',\n"
    "  UNIQUE (program_id, parent_id, kind)\n"
    ");\n"
    "CREATE INDEX program_parents_parent_id ON program_parents(parent_id);\n"
    "CREATE TABLE evaluations (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  program_id INTEGER NOT NULL REFERENCES programs(id),\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  shape TEXT,\n"
    "  ranks INTEGER,\n"
    "  stage_reached TEXT,\n"
    "  status TEXT NOT NULL,\n"
    "  error_code INTEGER NOT NULL DEFAULT 0,\n"
    "  error TEXT,\n"
    "  compile_log TEXT,\n"
    "  run_log TEXT,\n"
    "  median_us REAL,\n"
    "  p10_us REAL,\n"
    "  p90_us REAL,\n"
    "  min_us REAL,\n"
    "  mean_us REAL,\n"
    "  samples_json TEXT,\n"
    "  rel_err REAL,\n"
    "  fitness REAL,\n"
    "  result_json TEXT,\n"
    "  gpu TEXT,\n"
    "  created_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX evaluations_program_id ON evaluations(program_id);\n"
    "CREATE INDEX evaluations_run_id ON evaluations(run_id);\n"
    "CREATE TABLE llm_calls (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER REFERENCES runs(id),\n"
    "  program_id INTEGER REFERENCES programs(id),\n"
    "  model TEXT,\n"
    "  endpoint TEXT,\n"
    "  prompt TEXT,\n"
    "  reply TEXT,\n"
    "  tokens_in INTEGER,\n"
    "  tokens_out INTEGER,\n"
    "  latency_ms REAL,\n"
    "  cost REAL,\n"
    "  error TEXT,\n"
    "  created_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX llm_calls_run_id ON llm_calls(run_id);\n"
    "CREATE TABLE summaries (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  generation INTEGER,\n"
    "  kind TEXT NOT NULL,\n"
    "  text TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX summaries_run_id ON summaries(run_id, generation);\n"
    "CREATE TABLE meta (\n"
    "  key TEXT PRIMARY KEY,\n"
    "  value TEXT\n"
    ");\n";

/*
 * Migrations: migrations[v - 1] takes a store from version v to v + 1. Only
 * columns are added; older rows keep their meaning (NULL in a new column).
 * schema_v1 followed by every step is the current schema.
 */
static const char *const migrations[] = {
    /* 1 -> 2: contradictions between a program's code and its directive */
    "ALTER TABLE programs ADD COLUMN flags TEXT;\n",
    /* 2 -> 3: how each LLM call went: HTTP status, finish reason, attempts, sampling seed */
    "ALTER TABLE llm_calls ADD COLUMN http_status INTEGER;\n"
    "ALTER TABLE llm_calls ADD COLUMN finish_reason TEXT;\n"
    "ALTER TABLE llm_calls ADD COLUMN attempts INTEGER;\n"
    "ALTER TABLE llm_calls ADD COLUMN seed INTEGER;\n",
    /* 3 -> 4: what each LLM call was for; a model's diagnosis of a failed or slower child */
    "ALTER TABLE llm_calls ADD COLUMN purpose TEXT;\n"
    "ALTER TABLE evaluations ADD COLUMN diagnosis TEXT;\n",
    /* 4 -> 5: why a failed run failed */
    "ALTER TABLE runs ADD COLUMN error TEXT;\n",
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == CUCO_STORE_SCHEMA_VERSION - 1,
               "one migration per schema version after 1");

/* SQL for "now" in the format every created_at column uses. */
#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* Turn an SQLite failure into err: where cuco was, the store, what it did, SQLite's message. */
#define sql_fail(s, err, rc, what) sql_failx((s), (err), __FILE__, __LINE__, (rc), (what))

static int sql_failx(struct cuco_store *s, struct cuco_err *err, const char *file, int line, int rc,
                     const char *what)
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

static int prepare(struct cuco_store *s, const char *sql, sqlite3_stmt **st, struct cuco_err *err)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	if (rc != SQLITE_OK) {
		*st = NULL;
		return sql_fail(s, err, rc, "preparing a statement");
	}
	return CUCO_OK;
}

/* Run constant SQL (no values in it). */
static int exec_sql(struct cuco_store *s, const char *sql, const char *what, struct cuco_err *err)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return sql_fail(s, err, rc, what);
	return CUCO_OK;
}

/* Binders following the NULL conventions of store.h. */
static int bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (!v)
		return sqlite3_bind_null(st, i);
	if (cuco_secret_in(v)) /* the API key is never stored, whoever echoed it */
		return sqlite3_bind_text(st, i, cuco_secret_redact(v), -1, free);
	return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int bind_id(sqlite3_stmt *st, int i, int64_t v)
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

/* Column readers, the inverse of the binders. */
static const char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *t;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	t = sqlite3_column_text(st, i);
	return cuco_xstrdup(t ? (const char *)t : "");
}

static int64_t col_id(sqlite3_stmt *st, int i)
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

static void free_str(const char **p)
{
	free((void *)*p);
	*p = NULL;
}

/*
 * A column of a record's table and the field of the record struct that holds it.
 * One array of these per record type, ended by a NULL name, drives the SELECT
 * column list, the reading of rows and the binding of INSERT parameters; the
 * types follow the NULL conventions of store.h.
 */
enum col_type {
	COL_TEXT,    /* const char *: NULL is NULL */
	COL_ID,      /* int64_t row id: 0 is NULL */
	COL_OPT_INT, /* int64_t: CUCO_STORE_NO_INT (any value below 0) is NULL */
	COL_INT,     /* int, never NULL */
	COL_REAL,    /* double: NaN is NULL */
};

struct rec_col {
	const char *name; /* column name; INSERT statements name its parameter ":name" */
	enum col_type type;
	size_t off; /* offsetof the field in the record struct */
};

/* Prepare "SELECT <every column of cols> <rest>": rows for read_rec(). */
static int prepare_select(struct cuco_store *s, const struct rec_col *cols, const char *rest,
                          sqlite3_stmt **st, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	const struct rec_col *c;
	int ret;

	cuco_strbuf_adds(&sql, "SELECT ");
	for (c = cols; c->name; c++)
		cuco_strbuf_addf(&sql, "%s%s", c == cols ? "" : ", ", c->name);
	cuco_strbuf_addf(&sql, " %s", rest);
	ret = prepare(s, sql.buf, st, err);
	cuco_strbuf_release(&sql);
	return ret;
}

/* Fill the fields of rec from the current row of a prepare_select() statement. */
static void read_rec(sqlite3_stmt *st, const struct rec_col *cols, void *rec)
{
	int i;

	for (i = 0; cols[i].name; i++) {
		char *f = (char *)rec + cols[i].off;

		switch (cols[i].type) {
		case COL_TEXT:
			*(const char **)f = col_str(st, i);
			break;
		case COL_ID:
			*(int64_t *)f = col_id(st, i);
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

static int bind_col(sqlite3_stmt *st, int i, const struct rec_col *c, const void *rec)
{
	const char *f = (const char *)rec + c->off;

	switch (c->type) {
	case COL_TEXT:
		return bind_str(st, i, *(const char *const *)f);
	case COL_ID:
		return bind_id(st, i, *(const int64_t *)f);
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
static int bind_rec(struct cuco_store *s, sqlite3_stmt *st, const struct rec_col *cols,
                    const void *rec, const char *what, struct cuco_err *err)
{
	const struct rec_col *c;
	char param[64];
	int i, rc, nbound = 0;

	for (c = cols; c->name; c++) {
		snprintf(param, sizeof(param), ":%s", c->name);
		i = sqlite3_bind_parameter_index(st, param);
		if (!i)
			continue;
		rc = bind_col(st, i, c, rec);
		if (rc != SQLITE_OK)
			return sql_fail(s, err, rc, what);
		nbound++;
	}
	if (nbound != sqlite3_bind_parameter_count(st))
		return cuco_err_set(
		    err, CUCO_ERR_STORE,
		    "store %s: %s: the statement has a parameter that names no column", s->path,
		    what);
	return CUCO_OK;
}

/* Free the text fields of rec (the caller re-inits it). */
static void free_rec_strs(const struct rec_col *cols, void *rec)
{
	const struct rec_col *c;

	for (c = cols; c->name; c++)
		if (c->type == COL_TEXT)
			free_str((const char **)((char *)rec + c->off));
}

/* Reject text that is not JSON, so the JSON columns can be trusted by readers. */
static int check_json(const char *text, const char *what, struct cuco_err *err)
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

static int one_of(const char *v, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(v, *set))
			return 1;
	return 0;
}

static const char *const run_statuses[] = {"running", "done", "failed", "interrupted", NULL};
static const char *const stages[] = {"compile", "run", "verify", "bench", NULL};

static int require(const char *v, const char *what, struct cuco_err *err)
{
	if (!v || !*v)
		return cuco_err_set(err, CUCO_ERR_INVALID, "%s is required and was not given",
		                    what);
	return CUCO_OK;
}

/* Step an INSERT/UPDATE/DELETE to completion. */
static int step_done(struct cuco_store *s, sqlite3_stmt *st, const char *what, struct cuco_err *err)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		return sql_fail(s, err, rc, what);
	return CUCO_OK;
}

/*
 * Insert one record with sql, whose parameters bind_rec() fills from rec, and
 * store the new row id in *id; a_noun ("a run") names the record in errors.
 */
static int insert_rec(struct cuco_store *s, const char *sql, const struct rec_col *cols,
                      const void *rec, const char *a_noun, int64_t *id, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	char what[64];
	int ret;

	ret = prepare(s, sql, &st, err);
	if (ret)
		goto out;
	snprintf(what, sizeof(what), "binding %s", a_noun);
	ret = bind_rec(s, st, cols, rec, what, err);
	if (ret)
		goto out;
	snprintf(what, sizeof(what), "inserting %s", a_noun);
	ret = step_done(s, st, what, err);
	if (ret)
		goto out;
	*id = sqlite3_last_insert_rowid(s->db);
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * Read into rec (init'ed by the caller) the row "SELECT <cols> <rest>" finds with
 * id bound to its parameter. noun ("run") and a_noun ("a run") name the record in
 * errors: CUCO_ERR_NOT_FOUND when there is no such row, CUCO_ERR_STORE.
 */
static int get_rec(struct cuco_store *s, const struct rec_col *cols, const char *rest, int64_t id,
                   void *rec, const char *noun, const char *a_noun, struct cuco_err *err)
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
		read_rec(st, cols, rec);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no %s %lld", s->path,
		                   noun, (long long)id);
	} else {
		snprintf(what, sizeof(what), "reading %s", a_noun);
		ret = sql_fail(s, err, rc, what);
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * Make the statements of one API call atomic: a transaction of its own when none
 * is open, else a savepoint inside the caller's transaction.
 */
static int op_begin(struct cuco_store *s, int *own, struct cuco_err *err)
{
	*own = sqlite3_get_autocommit(s->db);
	if (*own)
		return exec_sql(s, "BEGIN IMMEDIATE", "starting a transaction", err);
	return exec_sql(s, "SAVEPOINT cuco_op", "starting a savepoint", err);
}

static int op_end(struct cuco_store *s, int own, int ok, struct cuco_err *err)
{
	if (ok)
		return exec_sql(s, own ? "COMMIT" : "RELEASE cuco_op", "committing", err);
	/* Failure already recorded in err: undo quietly. */
	sqlite3_exec(s->db, own ? "ROLLBACK" : "ROLLBACK TO cuco_op; RELEASE cuco_op", NULL, NULL,
	             NULL);
	return CUCO_OK;
}

const char *cuco_store_default_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("CUCO_STORE");

	if (env && *env)
		return env;
	snprintf(path, sizeof(path), "%s/cuco.db", cuco_state_dir());
	return path;
}

const char *cuco_store_path(const struct cuco_store *store)
{
	return store->path;
}

/* Read one integer pragma (constant name). */
static int pragma_int(struct cuco_store *s, const char *sql, int64_t *v, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(s, sql, &st, err);
	if (ret)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = sql_fail(s, err, rc, "reading the store header");
		goto out;
	}
	*v = sqlite3_column_int64(st, 0);
	ret = CUCO_OK;
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * Decide, reading only, whether the file is ours: *fresh is set when it is an
 * empty database that needs the schema. Nothing is written here, so a file we
 * refuse stays as it was.
 */
static int check_file(struct cuco_store *s, int *fresh, struct cuco_err *err)
{
	int64_t version = 0, app = 0, nobj = 0;
	int ret;

	*fresh = 0;
	ret = pragma_int(s, "PRAGMA user_version", &version, err);
	if (!ret)
		ret = pragma_int(s, "PRAGMA application_id", &app, err);
	if (!ret)
		ret = pragma_int(s, "SELECT count(*) FROM sqlite_master", &nobj, err);
	if (ret == CUCO_ERR_SCHEMA) {
		/* SQLITE_NOTADB or SQLITE_CORRUPT: say plainly what the file is not. */
		return cuco_err_set(err, CUCO_ERR_SCHEMA,
		                    "%s is not a cuco store (not an SQLite database, or corrupt: "
		                    "%s); it was left untouched: move it away or set CUCO_STORE "
		                    "to another file",
		                    s->path, sqlite3_errmsg(s->db));
	}
	if (ret)
		return ret;
	if (app != 0 && app != CUCO_STORE_APPLICATION_ID)
		return cuco_err_set(err, CUCO_ERR_SCHEMA,
		                    "%s is an SQLite database of another application "
		                    "(application_id 0x%08llx), not a cuco store; it was left "
		                    "untouched: set CUCO_STORE to another file",
		                    s->path, (unsigned long long)app);
	if (version > CUCO_STORE_SCHEMA_VERSION)
		return cuco_err_set(err, CUCO_ERR_SCHEMA,
		                    "%s has store schema version %lld, newer than the version %d "
		                    "this cuco (%s) supports; it was left untouched: use a newer "
		                    "cuco, or set CUCO_STORE to another file",
		                    s->path, (long long)version, CUCO_STORE_SCHEMA_VERSION,
		                    CUCO_VERSION);
	if (version == 0 && nobj > 0)
		return cuco_err_set(
		    err, CUCO_ERR_SCHEMA,
		    "%s is an SQLite database with tables but no cuco schema "
		    "version; it was left untouched: set CUCO_STORE to another file",
		    s->path);
	if (version > 0 && app != CUCO_STORE_APPLICATION_ID)
		return cuco_err_set(err, CUCO_ERR_SCHEMA,
		                    "%s is an SQLite database of another application (user_version "
		                    "%lld, no cuco application_id); it was left untouched: set "
		                    "CUCO_STORE to another file",
		                    s->path, (long long)version);
	*fresh = version == 0;
	return CUCO_OK;
}

/*
 * Bring an older store up to CUCO_STORE_SCHEMA_VERSION in place, one version
 * per transaction; a concurrent opener may have done a step already.
 */
static int migrate(struct cuco_store *s, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	int64_t version = 0;
	int ret = CUCO_OK;

	for (;;) {
		if ((ret = exec_sql(s, "BEGIN IMMEDIATE", "starting a schema migration", err)))
			break;
		ret = pragma_int(s, "PRAGMA user_version", &version, err);
		if (ret || version < 1 || version >= CUCO_STORE_SCHEMA_VERSION) {
			sqlite3_exec(s->db, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
			break;
		}
		cuco_strbuf_reset(&sql);
		cuco_strbuf_addf(&sql, "%sPRAGMA user_version = %lld;", migrations[version - 1],
		                 (long long)version + 1);
		ret = exec_sql(s, sql.buf, "migrating the schema", err);
		if (!ret)
			ret = exec_sql(s, "COMMIT", "committing a schema migration", err);
		if (ret) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			cuco_err_prefix(err, "store schema %lld -> %lld: ", (long long)version,
			                (long long)version + 1);
			break;
		}
	}
	cuco_strbuf_release(&sql);
	return ret;
}

/* Create the current schema in a new database; a concurrent opener may have won the race. */
static int create_schema(struct cuco_store *s, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int64_t version = 0;
	int ret, ok = 0;

	ret = exec_sql(s, "BEGIN IMMEDIATE", "starting to create the schema", err);
	if (ret)
		return ret;
	ret = pragma_int(s, "PRAGMA user_version", &version, err);
	if (ret)
		goto out;
	if (version != 0) {
		ok = 1;
		goto out;
	}
	ret = exec_sql(s, schema_v1, "creating the schema", err);
	for (size_t i = 0; !ret && i < sizeof(migrations) / sizeof(migrations[0]); i++)
		ret = exec_sql(s, migrations[i], "creating the schema", err);
	if (ret)
		goto out;
	/* PRAGMA takes no parameters; these are compile-time constants, not values. */
	cuco_strbuf_addf(&sql, "PRAGMA user_version = %d; PRAGMA application_id = %lld;",
	                 CUCO_STORE_SCHEMA_VERSION, (long long)CUCO_STORE_APPLICATION_ID);
	ret = exec_sql(s, sql.buf, "setting the schema version", err);
	if (ret)
		goto out;
	ret = prepare(s,
	              "INSERT INTO meta(key, value) VALUES ('created_by', ?), "
	              "('created_at', " NOW_SQL ")",
	              &st, err);
	if (ret)
		goto out;
	sqlite3_bind_text(st, 1, "cuco " CUCO_VERSION, -1, SQLITE_STATIC);
	ret = step_done(s, st, "recording the store's creation", err);
	if (ret)
		goto out;
	ok = 1;
out:
	sqlite3_finalize(st);
	cuco_strbuf_release(&sql);
	if (ok)
		return exec_sql(s, "COMMIT", "committing the schema", err);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

static int set_journal_wal(struct cuco_store *s, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *mode;
	int rc, ret;

	ret = prepare(s, "PRAGMA journal_mode = WAL", &st, err);
	if (ret)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = sql_fail(s, err, rc, "turning on WAL mode");
		goto out;
	}
	mode = sqlite3_column_text(st, 0);
	if (!mode || strcmp((const char *)mode, "wal")) {
		ret = cuco_err_set(err, CUCO_ERR_STORE,
		                   "store %s: WAL mode could not be turned on (journal mode is "
		                   "'%s'); put the store on a local file system",
		                   s->path, mode ? (const char *)mode : "?");
		goto out;
	}
	ret = CUCO_OK;
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_open(const char *path, struct cuco_store **out, struct cuco_err *err)
{
	struct cuco_store *s = NULL;
	int rc, ret, fresh = 0;

	*out = NULL;
	if (!path || !*path)
		return cuco_err_set(err, CUCO_ERR_INVALID, "no store path given");
	s = calloc(1, sizeof(*s));
	if (!s)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory opening store %s", path);
	s->path = cuco_xstrdup(path);
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		ret = cuco_err_set(err, CUCO_ERR_STORE,
		                   "cannot open store %s: %s; check that its directory exists and "
		                   "is writable",
		                   path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto out;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, CUCO_STORE_BUSY_TIMEOUT_MS);
	ret = check_file(s, &fresh, err);
	if (ret)
		goto out;
	ret = set_journal_wal(s, err);
	if (ret)
		goto out;
	ret = exec_sql(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
	               "setting connection options", err);
	if (ret)
		goto out;
	if (fresh) {
		ret = create_schema(s, err);
		if (ret)
			goto out;
	}
	ret = migrate(s, err);
out:
	if (ret) {
		cuco_store_close(s);
		return ret;
	}
	*out = s;
	return CUCO_OK;
}

void cuco_store_close(struct cuco_store *store)
{
	if (!store)
		return;
	if (store->db) {
		if (!sqlite3_get_autocommit(store->db))
			sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close_v2(store->db);
	}
	free(store->path);
	free(store);
}

int cuco_store_begin(struct cuco_store *store, struct cuco_err *err)
{
	if (!sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: a transaction is already open (they do not nest)",
		                    store->path);
	return exec_sql(store, "BEGIN IMMEDIATE", "starting a transaction", err);
}

int cuco_store_commit(struct cuco_store *store, struct cuco_err *err)
{
	if (sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: commit without an open transaction", store->path);
	return exec_sql(store, "COMMIT", "committing", err);
}

int cuco_store_rollback(struct cuco_store *store, struct cuco_err *err)
{
	if (sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: rollback without an open transaction", store->path);
	return exec_sql(store, "ROLLBACK", "rolling back", err);
}

/* --- runs */

static const struct rec_col run_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_run_rec, id)},
    {"created_at", COL_TEXT, offsetof(struct cuco_run_rec, created_at)},
    {"kind", COL_TEXT, offsetof(struct cuco_run_rec, kind)},
    {"workload", COL_TEXT, offsetof(struct cuco_run_rec, workload)},
    {"shape", COL_TEXT, offsetof(struct cuco_run_rec, shape)},
    {"config", COL_TEXT, offsetof(struct cuco_run_rec, config)},
    {"status", COL_TEXT, offsetof(struct cuco_run_rec, status)},
    {"finished_at", COL_TEXT, offsetof(struct cuco_run_rec, finished_at)},
    {"cuco_version", COL_TEXT, offsetof(struct cuco_run_rec, cuco_version)},
    {"host", COL_TEXT, offsetof(struct cuco_run_rec, host)},
    {"gpu", COL_TEXT, offsetof(struct cuco_run_rec, gpu)},
    {"commit_id", COL_TEXT, offsetof(struct cuco_run_rec, commit_id)},
    {"error", COL_TEXT, offsetof(struct cuco_run_rec, error)},
    {NULL},
};

void cuco_run_rec_init(struct cuco_run_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
}

void cuco_run_rec_release(struct cuco_run_rec *rec)
{
	if (!rec)
		return;
	free_rec_strs(run_cols, rec);
	cuco_run_rec_init(rec);
}

int cuco_store_run_begin(struct cuco_store *store, const struct cuco_run_rec *rec, int64_t *id,
                         struct cuco_err *err)
{
	int ret;

	ret = require(rec->kind, "run kind", err);
	if (!ret)
		ret = check_json(rec->config, "run config", err);
	if (ret)
		return ret;
	return insert_rec(store,
	                  "INSERT INTO runs(created_at, kind, workload, shape, config, status, "
	                  "cuco_version, host, gpu, commit_id) "
	                  "VALUES (COALESCE(:created_at, " NOW_SQL "), :kind, :workload, :shape, "
	                  ":config, 'running', :cuco_version, :host, :gpu, :commit_id)",
	                  run_cols, rec, "a run", id, err);
}

/* One UPDATE of run id with text ?1 (sql's WHERE id = ?2); what names ?1 in a binding error. */
static int run_update(struct cuco_store *store, int64_t id, const char *sql, const char *text,
                      const char *what, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(store, sql, &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, text);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, id);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, what);
		goto out;
	}
	ret = step_done(store, st, "updating a run", err);
	if (ret)
		goto out;
	if (sqlite3_changes(store->db) == 0)
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no run %lld", store->path,
		                   (long long)id);
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_run_finish(struct cuco_store *store, int64_t id, const char *status,
                          struct cuco_err *err)
{
	if (!status || !one_of(status, run_statuses))
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run status '%s' is not one of running, done, failed, interrupted",
		    status ? status : "(null)");
	return run_update(store, id,
	                  "UPDATE runs SET status = ?1, finished_at = CASE WHEN ?1 = 'running' "
	                  "THEN NULL ELSE " NOW_SQL " END, error = CASE WHEN ?1 = 'running' THEN "
	                  "NULL ELSE error END WHERE id = ?2",
	                  status, "binding a run status", err);
}

int cuco_store_run_fail(struct cuco_store *store, int64_t id, const char *error,
                        struct cuco_err *err)
{
	return run_update(store, id,
	                  "UPDATE runs SET status = 'failed', finished_at = " NOW_SQL
	                  ", error = ?1 WHERE id = ?2",
	                  error, "binding a run's error", err);
}

int cuco_store_run_get(struct cuco_store *store, int64_t id, struct cuco_run_rec *out,
                       struct cuco_err *err)
{
	cuco_run_rec_init(out);
	return get_rec(store, run_cols, "FROM runs WHERE id = ?", id, out, "run", "a run", err);
}

int cuco_store_run_each(struct cuco_store *store,
                        int (*fn)(const struct cuco_run_rec *run, void *arg, struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct cuco_run_rec rec;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare_select(store, run_cols, "FROM runs ORDER BY id", &st, err);
	if (ret)
		goto out;
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sql_fail(store, err, rc, "listing runs");
			goto out;
		}
		read_rec(st, run_cols, &rec);
		ret = fn(&rec, arg, err);
		cuco_run_rec_release(&rec);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/* --- programs */

/* The columns of programs; the parents live in program_parents. */
static const struct rec_col program_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_program_rec, id)},
    {"run_id", COL_ID, offsetof(struct cuco_program_rec, run_id)},
    {"workload", COL_TEXT, offsetof(struct cuco_program_rec, workload)},
    {"name", COL_TEXT, offsetof(struct cuco_program_rec, name)},
    {"origin", COL_TEXT, offsetof(struct cuco_program_rec, origin)},
    {"hash", COL_TEXT, offsetof(struct cuco_program_rec, hash)},
    {"code", COL_TEXT, offsetof(struct cuco_program_rec, code)},
    {"directive", COL_TEXT, offsetof(struct cuco_program_rec, directive)},
    {"island", COL_OPT_INT, offsetof(struct cuco_program_rec, island)},
    {"generation", COL_OPT_INT, offsetof(struct cuco_program_rec, generation)},
    {"operator", COL_TEXT, offsetof(struct cuco_program_rec, operator_)},
    {"created_at", COL_TEXT, offsetof(struct cuco_program_rec, created_at)},
    {"flags", COL_TEXT, offsetof(struct cuco_program_rec, flags)},
    {NULL},
};

void cuco_store_hash_code(const char *code, char out[CUCO_STORE_HASH_LEN + 1])
{
	cuco_hash_string(code, out);
}

void cuco_program_rec_init(struct cuco_program_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->island = CUCO_STORE_NO_INT;
	rec->generation = CUCO_STORE_NO_INT;
}

void cuco_program_rec_release(struct cuco_program_rec *rec)
{
	size_t i;

	if (!rec)
		return;
	free_rec_strs(program_cols, rec);
	for (i = 0; i < rec->nparents; i++)
		free((void *)rec->parents[i].kind);
	free((void *)rec->parents);
	cuco_program_rec_init(rec);
}

/* Fill r from a row of program_cols, then its parents. */
static int program_from_row(struct cuco_store *s, sqlite3_stmt *row, struct cuco_program_rec *r,
                            struct cuco_err *err)
{
	struct cuco_parent *parents = NULL;
	size_t n = 0, alloc = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	read_rec(row, program_cols, r);

	ret = prepare(s,
	              "SELECT parent_id, kind FROM program_parents WHERE program_id = ? "
	              "ORDER BY rowid",
	              &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, r->id);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sql_fail(s, err, rc, "reading program parents");
			goto out;
		}
		if (n == alloc) {
			struct cuco_parent *p;

			alloc = alloc ? 2 * alloc : 4;
			p = realloc(parents, alloc * sizeof(*p));
			if (!p) {
				ret = cuco_err_set(err, CUCO_ERR_NOMEM,
				                   "out of memory reading program parents");
				goto out;
			}
			parents = p;
		}
		parents[n].id = col_id(st, 0);
		parents[n].kind = col_str(st, 1);
		n++;
	}
out:
	/* Hand over what was read even on error, so release frees it. */
	r->parents = parents;
	r->nparents = n;
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_program_add(struct cuco_store *store, const struct cuco_program_rec *rec,
                           int64_t *id, struct cuco_err *err)
{
	char hash[CUCO_STORE_HASH_LEN + 1];
	struct cuco_program_rec row = *rec;
	sqlite3_stmt *st = NULL;
	int64_t pid = 0;
	int rc = SQLITE_OK, ret, own = 0, opened = 0;
	size_t i;

	ret = require(rec->workload, "program workload", err);
	if (!ret)
		ret = require(rec->origin, "program origin", err);
	if (!ret && !rec->code)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "program code is required");
	if (!ret)
		ret = check_json(rec->directive, "program directive", err);
	if (!ret && rec->nparents && !rec->parents)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "program has %zu parents but no array",
		                   rec->nparents);
	if (ret)
		goto out;
	if (!rec->hash) {
		cuco_store_hash_code(rec->code, hash);
		row.hash = hash;
	}

	ret = op_begin(store, &own, err);
	if (ret)
		goto out;
	opened = 1;
	ret = insert_rec(store,
	                 "INSERT INTO programs(run_id, workload, name, origin, hash, code, "
	                 "directive, island, generation, operator, created_at, flags) "
	                 "VALUES (:run_id, :workload, :name, :origin, :hash, :code, "
	                 ":directive, :island, :generation, :operator, "
	                 "COALESCE(:created_at, " NOW_SQL "), :flags)",
	                 program_cols, &row, "a program", &pid, err);
	if (ret)
		goto out;

	ret = prepare(store,
	              "INSERT INTO program_parents(program_id, parent_id, kind) VALUES (?, ?, ?)",
	              &st, err);
	if (ret)
		goto out;
	for (i = 0; i < rec->nparents; i++) {
		const char *kind = rec->parents[i].kind ? rec->parents[i].kind : "parent";

		sqlite3_reset(st);
		rc = sqlite3_bind_int64(st, 1, pid);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 2, rec->parents[i].id);
		if (rc == SQLITE_OK)
			rc = bind_str(st, 3, kind);
		if (rc != SQLITE_OK) {
			ret = sql_fail(store, err, rc, "binding a program parent");
			goto out;
		}
		ret = step_done(store, st, "inserting a program parent", err);
		if (ret)
			goto out;
	}
	ret = CUCO_OK;
out:
	sqlite3_finalize(st);
	if (opened) {
		int end = op_end(store, own, ret == CUCO_OK, err);

		if (!ret)
			ret = end;
	}
	if (!ret)
		*id = pid;
	return ret;
}

int cuco_store_program_get(struct cuco_store *store, int64_t id, struct cuco_program_rec *out,
                           struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	cuco_program_rec_init(out);
	ret = prepare_select(store, program_cols, "FROM programs WHERE id = ?", &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		ret = program_from_row(store, st, out, err);
		if (ret)
			cuco_program_rec_release(out);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no program %lld",
		                   store->path, (long long)id);
	} else {
		ret = sql_fail(store, err, rc, "reading a program");
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_program_find_hash(struct cuco_store *store, const char *workload, const char *hash,
                                 int64_t *id, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*id = 0;
	ret = prepare(store,
	              "SELECT id FROM programs WHERE workload = ? AND hash = ? ORDER BY id LIMIT 1",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, workload);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 2, hash);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a program hash");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = sql_fail(store, err, rc, "finding a program by hash");
out:
	sqlite3_finalize(st);
	return ret;
}

/* Walk the programs "SELECT <program_cols> <rest>" returns, with key bound to ?1. */
static int program_walk(struct cuco_store *s, const char *rest, int64_t key,
                        int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                  struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct cuco_program_rec rec;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare_select(s, program_cols, rest, &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, key);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sql_fail(s, err, rc, "listing programs");
			goto out;
		}
		cuco_program_rec_init(&rec);
		ret = program_from_row(s, st, &rec, err);
		if (!ret)
			ret = fn(&rec, arg, err);
		cuco_program_rec_release(&rec);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_program_each(struct cuco_store *store, int64_t run_id,
                            int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                      struct cuco_err *err),
                            void *arg, struct cuco_err *err)
{
	return program_walk(store, "FROM programs WHERE ?1 = 0 OR run_id = ?1 ORDER BY id", run_id,
	                    fn, arg, err);
}

int cuco_store_program_each_child(struct cuco_store *store, int64_t id,
                                  int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                            struct cuco_err *err),
                                  void *arg, struct cuco_err *err)
{
	return program_walk(store,
	                    "FROM programs WHERE id IN "
	                    "(SELECT program_id FROM program_parents WHERE parent_id = ?1) "
	                    "ORDER BY id",
	                    id, fn, arg, err);
}

/* --- evaluations */

static const struct rec_col eval_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_eval_rec, id)},
    {"program_id", COL_ID, offsetof(struct cuco_eval_rec, program_id)},
    {"run_id", COL_ID, offsetof(struct cuco_eval_rec, run_id)},
    {"shape", COL_TEXT, offsetof(struct cuco_eval_rec, shape)},
    {"ranks", COL_OPT_INT, offsetof(struct cuco_eval_rec, ranks)},
    {"stage_reached", COL_TEXT, offsetof(struct cuco_eval_rec, stage_reached)},
    {"status", COL_TEXT, offsetof(struct cuco_eval_rec, status)},
    {"error_code", COL_INT, offsetof(struct cuco_eval_rec, error_code)},
    {"error", COL_TEXT, offsetof(struct cuco_eval_rec, error)},
    {"compile_log", COL_TEXT, offsetof(struct cuco_eval_rec, compile_log)},
    {"run_log", COL_TEXT, offsetof(struct cuco_eval_rec, run_log)},
    {"median_us", COL_REAL, offsetof(struct cuco_eval_rec, median_us)},
    {"p10_us", COL_REAL, offsetof(struct cuco_eval_rec, p10_us)},
    {"p90_us", COL_REAL, offsetof(struct cuco_eval_rec, p90_us)},
    {"min_us", COL_REAL, offsetof(struct cuco_eval_rec, min_us)},
    {"mean_us", COL_REAL, offsetof(struct cuco_eval_rec, mean_us)},
    {"samples_json", COL_TEXT, offsetof(struct cuco_eval_rec, samples_json)},
    {"rel_err", COL_REAL, offsetof(struct cuco_eval_rec, rel_err)},
    {"fitness", COL_REAL, offsetof(struct cuco_eval_rec, fitness)},
    {"result_json", COL_TEXT, offsetof(struct cuco_eval_rec, result_json)},
    {"gpu", COL_TEXT, offsetof(struct cuco_eval_rec, gpu)},
    {"created_at", COL_TEXT, offsetof(struct cuco_eval_rec, created_at)},
    {"diagnosis", COL_TEXT, offsetof(struct cuco_eval_rec, diagnosis)},
    {NULL},
};

void cuco_eval_rec_init(struct cuco_eval_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->ranks = CUCO_STORE_NO_INT;
	rec->error_code = CUCO_OK;
	rec->median_us = NAN;
	rec->p10_us = NAN;
	rec->p90_us = NAN;
	rec->min_us = NAN;
	rec->mean_us = NAN;
	rec->rel_err = NAN;
	rec->fitness = NAN;
}

void cuco_eval_rec_release(struct cuco_eval_rec *rec)
{
	if (!rec)
		return;
	free_rec_strs(eval_cols, rec);
	cuco_eval_rec_init(rec);
}

int cuco_store_eval_add(struct cuco_store *store, const struct cuco_eval_rec *rec, int64_t *id,
                        struct cuco_err *err)
{
	int ret = CUCO_OK;

	if (rec->program_id <= 0)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "evaluation program_id is required");
	if (!ret)
		ret = require(rec->status, "evaluation status", err);
	if (!ret && rec->stage_reached && !one_of(rec->stage_reached, stages))
		ret = cuco_err_set(err, CUCO_ERR_INVALID,
		                   "evaluation stage_reached '%s' is not one of compile, run, "
		                   "verify, bench",
		                   rec->stage_reached);
	if (!ret)
		ret = check_json(rec->samples_json, "evaluation samples_json", err);
	if (ret)
		return ret;
	return insert_rec(store,
	                  "INSERT INTO evaluations(program_id, run_id, shape, ranks, "
	                  "stage_reached, status, error_code, error, compile_log, run_log, "
	                  "median_us, p10_us, p90_us, min_us, mean_us, samples_json, rel_err, "
	                  "fitness, result_json, gpu, created_at) "
	                  "VALUES (:program_id, :run_id, :shape, :ranks, :stage_reached, "
	                  ":status, :error_code, :error, :compile_log, :run_log, :median_us, "
	                  ":p10_us, :p90_us, :min_us, :mean_us, :samples_json, :rel_err, "
	                  ":fitness, :result_json, :gpu, COALESCE(:created_at, " NOW_SQL "))",
	                  eval_cols, rec, "an evaluation", id, err);
}

int cuco_store_eval_set_diagnosis(struct cuco_store *store, int64_t id, const char *text,
                                  struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(store, "UPDATE evaluations SET diagnosis = ?1 WHERE id = ?2", &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, text);
	if (rc == SQLITE_OK)
		rc = bind_id(st, 2, id);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a diagnosis");
		goto out;
	}
	ret = step_done(store, st, "storing a diagnosis", err);
	if (!ret && sqlite3_changes(store->db) != 1)
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s: no evaluation %lld",
		                   store->path, (long long)id);
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_eval_get(struct cuco_store *store, int64_t id, struct cuco_eval_rec *out,
                        struct cuco_err *err)
{
	cuco_eval_rec_init(out);
	return get_rec(store, eval_cols, "FROM evaluations WHERE id = ?", id, out, "evaluation",
	               "an evaluation", err);
}

/* The caller's callback of a walk, whichever record type it takes. */
struct walk {
	int (*eval)(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err);
	int (*call)(const struct cuco_llm_call_rec *call, void *arg, struct cuco_err *err);
	int (*summary)(const struct cuco_summary_rec *sum, void *arg, struct cuco_err *err);
	void *arg;
};

static int visit(const struct walk *w, const void *rec, struct cuco_err *err)
{
	if (w->eval)
		return w->eval(rec, w->arg, err);
	if (w->call)
		return w->call(rec, w->arg, err);
	return w->summary(rec, w->arg, err);
}

/*
 * Walk the rows "SELECT <cols> <rest>" returns, with key bound to ?1: each is
 * read into rec (a record of cols), handed to w, then its strings freed.
 */
static int rec_walk(struct cuco_store *s, const struct rec_col *cols, const char *rest, int64_t key,
                    void *rec, const struct walk *w, const char *what, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare_select(s, cols, rest, &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, key);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sql_fail(s, err, rc, what);
			goto out;
		}
		read_rec(st, cols, rec);
		ret = visit(w, rec, err);
		free_rec_strs(cols, rec);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/* Walk the evaluations "SELECT <eval_cols> <rest>" returns, with key bound to ?1. */
static int eval_walk(struct cuco_store *s, const char *rest, int64_t key,
                     int (*fn)(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err),
                     void *arg, struct cuco_err *err)
{
	struct cuco_eval_rec rec;
	struct walk w = {fn, NULL, NULL, arg};

	cuco_eval_rec_init(&rec);
	return rec_walk(s, eval_cols, rest, key, &rec, &w, "listing evaluations", err);
}

int cuco_store_eval_each_program(struct cuco_store *store, int64_t program_id,
                                 int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err)
{
	return eval_walk(store, "FROM evaluations WHERE program_id = ?1 ORDER BY id", program_id,
	                 fn, arg, err);
}

int cuco_store_eval_each_run(struct cuco_store *store, int64_t run_id,
                             int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                       struct cuco_err *err),
                             void *arg, struct cuco_err *err)
{
	return eval_walk(store, "FROM evaluations WHERE ?1 = 0 OR run_id = ?1 ORDER BY id", run_id,
	                 fn, arg, err);
}

/* --- llm_calls, summaries */

static const struct rec_col llm_call_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_llm_call_rec, id)},
    {"run_id", COL_ID, offsetof(struct cuco_llm_call_rec, run_id)},
    {"program_id", COL_ID, offsetof(struct cuco_llm_call_rec, program_id)},
    {"model", COL_TEXT, offsetof(struct cuco_llm_call_rec, model)},
    {"endpoint", COL_TEXT, offsetof(struct cuco_llm_call_rec, endpoint)},
    {"prompt", COL_TEXT, offsetof(struct cuco_llm_call_rec, prompt)},
    {"reply", COL_TEXT, offsetof(struct cuco_llm_call_rec, reply)},
    {"tokens_in", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, tokens_in)},
    {"tokens_out", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, tokens_out)},
    {"latency_ms", COL_REAL, offsetof(struct cuco_llm_call_rec, latency_ms)},
    {"cost", COL_REAL, offsetof(struct cuco_llm_call_rec, cost)},
    {"error", COL_TEXT, offsetof(struct cuco_llm_call_rec, error)},
    {"created_at", COL_TEXT, offsetof(struct cuco_llm_call_rec, created_at)},
    {"http_status", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, http_status)},
    {"finish_reason", COL_TEXT, offsetof(struct cuco_llm_call_rec, finish_reason)},
    {"attempts", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, attempts)},
    {"seed", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, seed)},
    {"purpose", COL_TEXT, offsetof(struct cuco_llm_call_rec, purpose)},
    {NULL},
};

void cuco_llm_call_rec_init(struct cuco_llm_call_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->tokens_in = CUCO_STORE_NO_INT;
	rec->tokens_out = CUCO_STORE_NO_INT;
	rec->latency_ms = NAN;
	rec->cost = NAN;
	rec->http_status = CUCO_STORE_NO_INT;
	rec->attempts = CUCO_STORE_NO_INT;
	rec->seed = CUCO_STORE_NO_INT;
}

void cuco_llm_call_rec_release(struct cuco_llm_call_rec *rec)
{
	if (!rec)
		return;
	free_rec_strs(llm_call_cols, rec);
	cuco_llm_call_rec_init(rec);
}

int cuco_store_llm_call_add(struct cuco_store *store, const struct cuco_llm_call_rec *rec,
                            int64_t *id, struct cuco_err *err)
{
	return insert_rec(store,
	                  "INSERT INTO llm_calls(run_id, program_id, model, endpoint, prompt, "
	                  "reply, tokens_in, tokens_out, latency_ms, cost, error, created_at, "
	                  "http_status, finish_reason, attempts, seed, purpose) "
	                  "VALUES (:run_id, :program_id, :model, :endpoint, :prompt, :reply, "
	                  ":tokens_in, :tokens_out, :latency_ms, :cost, :error, "
	                  "COALESCE(:created_at, " NOW_SQL "), :http_status, :finish_reason, "
	                  ":attempts, :seed, :purpose)",
	                  llm_call_cols, rec, "an LLM call", id, err);
}

int cuco_store_llm_call_get(struct cuco_store *store, int64_t id, struct cuco_llm_call_rec *out,
                            struct cuco_err *err)
{
	cuco_llm_call_rec_init(out);
	return get_rec(store, llm_call_cols, "FROM llm_calls WHERE id = ?", id, out, "LLM call",
	               "an LLM call", err);
}

int cuco_store_llm_call_each_run(struct cuco_store *store, int64_t run_id,
                                 int (*fn)(const struct cuco_llm_call_rec *call, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err)
{
	struct cuco_llm_call_rec rec;
	struct walk w = {NULL, fn, NULL, arg};

	cuco_llm_call_rec_init(&rec);
	return rec_walk(store, llm_call_cols, "FROM llm_calls WHERE run_id = ?1 ORDER BY id",
	                run_id, &rec, &w, "listing LLM calls", err);
}

static const struct rec_col summary_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_summary_rec, id)},
    {"run_id", COL_ID, offsetof(struct cuco_summary_rec, run_id)},
    {"generation", COL_OPT_INT, offsetof(struct cuco_summary_rec, generation)},
    {"kind", COL_TEXT, offsetof(struct cuco_summary_rec, kind)},
    {"text", COL_TEXT, offsetof(struct cuco_summary_rec, text)},
    {"created_at", COL_TEXT, offsetof(struct cuco_summary_rec, created_at)},
    {NULL},
};

int cuco_store_summary_each_run(struct cuco_store *store, int64_t run_id,
                                int (*fn)(const struct cuco_summary_rec *sum, void *arg,
                                          struct cuco_err *err),
                                void *arg, struct cuco_err *err)
{
	struct cuco_summary_rec rec;
	struct walk w = {NULL, NULL, fn, arg};

	memset(&rec, 0, sizeof(rec));
	return rec_walk(store, summary_cols, "FROM summaries WHERE run_id = ?1 ORDER BY id", run_id,
	                &rec, &w, "listing summaries", err);
}

int cuco_store_summary_add(struct cuco_store *store, int64_t run_id, int64_t generation,
                           const char *kind, const char *text, int64_t *id, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, ret;

	ret = require(kind, "summary kind", err);
	if (!ret && !text)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "summary text is required");
	if (!ret && run_id <= 0)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "summary run_id is required");
	if (ret)
		goto out;
	ret = prepare(store,
	              "INSERT INTO summaries(run_id, generation, kind, text, created_at) "
	              "VALUES (?, ?, ?, ?, " NOW_SQL ")",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_id(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 2, generation);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 3, kind);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 4, text);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a summary");
		goto out;
	}
	ret = step_done(store, st, "inserting a summary", err);
	if (ret)
		goto out;
	if (id)
		*id = sqlite3_last_insert_rowid(store->db);
out:
	sqlite3_finalize(st);
	return ret;
}

/* --- meta */

int cuco_store_meta_get(struct cuco_store *store, const char *key, char **value,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*value = NULL;
	ret = prepare(store, "SELECT value FROM meta WHERE key = ?", &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, key);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a meta key");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*value = (char *)col_str(st, 0);
	else if (rc != SQLITE_DONE)
		ret = sql_fail(store, err, rc, "reading meta");
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_meta_set(struct cuco_store *store, const char *key, const char *value,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = require(key, "meta key", err);
	if (ret)
		goto out;
	ret = prepare(store,
	              value ? "INSERT INTO meta(key, value) VALUES (?1, ?2) "
	                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
	                    : "DELETE FROM meta WHERE key = ?1",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, key);
	if (rc == SQLITE_OK && value)
		rc = bind_str(st, 2, value);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding meta");
		goto out;
	}
	ret = step_done(store, st, "writing meta", err);
out:
	sqlite3_finalize(st);
	return ret;
}
