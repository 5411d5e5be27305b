/* store.c - the SQLite store: schema, versioning, and typed access to every table. */
#include "store.h"
#include "util/xalloc.h"
#include "util/hash.h"

#include <math.h>
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
	const char *env = getenv("CUCO_STORE");

	if (env && *env)
		return env;
	return ".cuco/cuco.db";
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

/* Create schema version 1 in a new database; a concurrent opener may have won the race. */
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
	/* Future versions: migrate older schemas here, each step in one transaction. */
	ret = CUCO_OK;
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

void cuco_run_rec_init(struct cuco_run_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
}

void cuco_run_rec_release(struct cuco_run_rec *rec)
{
	if (!rec)
		return;
	free_str(&rec->created_at);
	free_str(&rec->kind);
	free_str(&rec->workload);
	free_str(&rec->shape);
	free_str(&rec->config);
	free_str(&rec->status);
	free_str(&rec->finished_at);
	free_str(&rec->cuco_version);
	free_str(&rec->host);
	free_str(&rec->gpu);
	free_str(&rec->commit_id);
	cuco_run_rec_init(rec);
}

#define RUN_COLS                                                                                   \
	"id, created_at, kind, workload, shape, config, status, finished_at, cuco_version, host, " \
	"gpu, commit_id"

static void run_from_row(sqlite3_stmt *st, struct cuco_run_rec *r)
{
	r->id = col_id(st, 0);
	r->created_at = col_str(st, 1);
	r->kind = col_str(st, 2);
	r->workload = col_str(st, 3);
	r->shape = col_str(st, 4);
	r->config = col_str(st, 5);
	r->status = col_str(st, 6);
	r->finished_at = col_str(st, 7);
	r->cuco_version = col_str(st, 8);
	r->host = col_str(st, 9);
	r->gpu = col_str(st, 10);
	r->commit_id = col_str(st, 11);
}

int cuco_store_run_begin(struct cuco_store *store, const struct cuco_run_rec *rec, int64_t *id,
                         struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, ret;

	ret = require(rec->kind, "run kind", err);
	if (!ret)
		ret = check_json(rec->config, "run config", err);
	if (ret)
		goto out;
	ret = prepare(store,
	              "INSERT INTO runs(created_at, kind, workload, shape, config, status, "
	              "cuco_version, host, gpu, commit_id) VALUES (COALESCE(?1, " NOW_SQL
	              "), ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?8, ?9)",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, rec->created_at);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 2, rec->kind);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 3, rec->workload);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 4, rec->shape);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 5, rec->config);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 6, rec->cuco_version);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 7, rec->host);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 8, rec->gpu);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 9, rec->commit_id);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a run");
		goto out;
	}
	ret = step_done(store, st, "inserting a run", err);
	if (ret)
		goto out;
	*id = sqlite3_last_insert_rowid(store->db);
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_run_finish(struct cuco_store *store, int64_t id, const char *status,
                          struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	if (!status || !one_of(status, run_statuses))
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run status '%s' is not one of running, done, failed, interrupted",
		    status ? status : "(null)");
	ret = prepare(store,
	              "UPDATE runs SET status = ?1, finished_at = CASE WHEN ?1 = 'running' "
	              "THEN NULL ELSE " NOW_SQL " END WHERE id = ?2",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_str(st, 1, status);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, id);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a run status");
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

int cuco_store_run_get(struct cuco_store *store, int64_t id, struct cuco_run_rec *out,
                       struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	cuco_run_rec_init(out);
	ret = prepare(store, "SELECT " RUN_COLS " FROM runs WHERE id = ?", &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		run_from_row(st, out);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no run %lld", store->path,
		                   (long long)id);
	} else {
		ret = sql_fail(store, err, rc, "reading a run");
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_run_each(struct cuco_store *store,
                        int (*fn)(const struct cuco_run_rec *run, void *arg, struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct cuco_run_rec rec;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(store, "SELECT " RUN_COLS " FROM runs ORDER BY id", &st, err);
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
		run_from_row(st, &rec);
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
	free_str(&rec->workload);
	free_str(&rec->name);
	free_str(&rec->origin);
	free_str(&rec->hash);
	free_str(&rec->code);
	free_str(&rec->directive);
	free_str(&rec->operator_);
	free_str(&rec->created_at);
	for (i = 0; i < rec->nparents; i++)
		free((void *)rec->parents[i].kind);
	free((void *)rec->parents);
	cuco_program_rec_init(rec);
}

#define PROGRAM_COLS                                                                            \
	"p.id, p.run_id, p.workload, p.name, p.origin, p.hash, p.code, p.directive, p.island, " \
	"p.generation, p.operator, p.created_at"

/* Fill r from a PROGRAM_COLS row, then its parents. */
static int program_from_row(struct cuco_store *s, sqlite3_stmt *row, struct cuco_program_rec *r,
                            struct cuco_err *err)
{
	struct cuco_parent *parents = NULL;
	size_t n = 0, alloc = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	r->id = col_id(row, 0);
	r->run_id = col_id(row, 1);
	r->workload = col_str(row, 2);
	r->name = col_str(row, 3);
	r->origin = col_str(row, 4);
	r->hash = col_str(row, 5);
	r->code = col_str(row, 6);
	r->directive = col_str(row, 7);
	r->island = col_opt_int(row, 8);
	r->generation = col_opt_int(row, 9);
	r->operator_ = col_str(row, 10);
	r->created_at = col_str(row, 11);

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
	if (!rec->hash)
		cuco_store_hash_code(rec->code, hash);

	ret = op_begin(store, &own, err);
	if (ret)
		goto out;
	opened = 1;
	ret = prepare(store,
	              "INSERT INTO programs(run_id, workload, name, origin, hash, code, directive, "
	              "island, generation, operator, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
	              "?7, ?8, ?9, ?10, COALESCE(?11, " NOW_SQL "))",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_id(st, 1, rec->run_id);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 2, rec->workload);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 3, rec->name);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 4, rec->origin);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 5, rec->hash ? rec->hash : hash);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 6, rec->code);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 7, rec->directive);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 8, rec->island);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 9, rec->generation);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 10, rec->operator_);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 11, rec->created_at);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding a program");
		goto out;
	}
	ret = step_done(store, st, "inserting a program", err);
	if (ret)
		goto out;
	pid = sqlite3_last_insert_rowid(store->db);
	sqlite3_finalize(st);
	st = NULL;

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
	ret = prepare(store, "SELECT " PROGRAM_COLS " FROM programs p WHERE p.id = ?", &st, err);
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

/* Walk the programs a prepared PROGRAM_COLS query (with its key bound to ?1) returns. */
static int program_walk(struct cuco_store *s, const char *sql, int64_t key,
                        int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                  struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct cuco_program_rec rec;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(s, sql, &st, err);
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
	return program_walk(store,
	                    "SELECT " PROGRAM_COLS " FROM programs p WHERE ?1 = 0 OR p.run_id = ?1 "
	                    "ORDER BY p.id",
	                    run_id, fn, arg, err);
}

int cuco_store_program_each_child(struct cuco_store *store, int64_t id,
                                  int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                            struct cuco_err *err),
                                  void *arg, struct cuco_err *err)
{
	return program_walk(store,
	                    "SELECT " PROGRAM_COLS " FROM programs p WHERE p.id IN "
	                    "(SELECT program_id FROM program_parents WHERE parent_id = ?1) "
	                    "ORDER BY p.id",
	                    id, fn, arg, err);
}

/* --- evaluations */

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
	free_str(&rec->shape);
	free_str(&rec->stage_reached);
	free_str(&rec->status);
	free_str(&rec->error);
	free_str(&rec->compile_log);
	free_str(&rec->run_log);
	free_str(&rec->samples_json);
	free_str(&rec->result_json);
	free_str(&rec->gpu);
	free_str(&rec->created_at);
	cuco_eval_rec_init(rec);
}

#define EVAL_COLS                                                                          \
	"id, program_id, run_id, shape, ranks, stage_reached, status, error_code, error, " \
	"compile_log, run_log, median_us, p10_us, p90_us, min_us, mean_us, samples_json, " \
	"rel_err, fitness, result_json, gpu, created_at"

static void eval_from_row(sqlite3_stmt *st, struct cuco_eval_rec *r)
{
	r->id = col_id(st, 0);
	r->program_id = col_id(st, 1);
	r->run_id = col_id(st, 2);
	r->shape = col_str(st, 3);
	r->ranks = col_opt_int(st, 4);
	r->stage_reached = col_str(st, 5);
	r->status = col_str(st, 6);
	r->error_code = sqlite3_column_int(st, 7);
	r->error = col_str(st, 8);
	r->compile_log = col_str(st, 9);
	r->run_log = col_str(st, 10);
	r->median_us = col_real(st, 11);
	r->p10_us = col_real(st, 12);
	r->p90_us = col_real(st, 13);
	r->min_us = col_real(st, 14);
	r->mean_us = col_real(st, 15);
	r->samples_json = col_str(st, 16);
	r->rel_err = col_real(st, 17);
	r->fitness = col_real(st, 18);
	r->result_json = col_str(st, 19);
	r->gpu = col_str(st, 20);
	r->created_at = col_str(st, 21);
}

int cuco_store_eval_add(struct cuco_store *store, const struct cuco_eval_rec *rec, int64_t *id,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, ret = CUCO_OK;

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
		goto out;
	ret = prepare(store,
	              "INSERT INTO evaluations(program_id, run_id, shape, ranks, stage_reached, "
	              "status, error_code, error, compile_log, run_log, median_us, p10_us, p90_us, "
	              "min_us, mean_us, samples_json, rel_err, fitness, result_json, gpu, "
	              "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
	              "?14, ?15, ?16, ?17, ?18, ?19, ?20, COALESCE(?21, " NOW_SQL "))",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_id(st, 1, rec->program_id);
	if (rc == SQLITE_OK)
		rc = bind_id(st, 2, rec->run_id);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 3, rec->shape);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 4, rec->ranks);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 5, rec->stage_reached);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 6, rec->status);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 7, rec->error_code);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 8, rec->error);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 9, rec->compile_log);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 10, rec->run_log);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 11, rec->median_us);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 12, rec->p10_us);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 13, rec->p90_us);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 14, rec->min_us);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 15, rec->mean_us);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 16, rec->samples_json);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 17, rec->rel_err);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 18, rec->fitness);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 19, rec->result_json);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 20, rec->gpu);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 21, rec->created_at);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding an evaluation");
		goto out;
	}
	ret = step_done(store, st, "inserting an evaluation", err);
	if (ret)
		goto out;
	*id = sqlite3_last_insert_rowid(store->db);
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_eval_get(struct cuco_store *store, int64_t id, struct cuco_eval_rec *out,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	cuco_eval_rec_init(out);
	ret = prepare(store, "SELECT " EVAL_COLS " FROM evaluations WHERE id = ?", &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		eval_from_row(st, out);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no evaluation %lld",
		                   store->path, (long long)id);
	} else {
		ret = sql_fail(store, err, rc, "reading an evaluation");
	}
out:
	sqlite3_finalize(st);
	return ret;
}

static int eval_walk(struct cuco_store *s, const char *sql, int64_t key,
                     int (*fn)(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err),
                     void *arg, struct cuco_err *err)
{
	struct cuco_eval_rec rec;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prepare(s, sql, &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, key);
	for (;;) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			ret = sql_fail(s, err, rc, "listing evaluations");
			goto out;
		}
		eval_from_row(st, &rec);
		ret = fn(&rec, arg, err);
		cuco_eval_rec_release(&rec);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_eval_each_program(struct cuco_store *store, int64_t program_id,
                                 int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err)
{
	return eval_walk(store,
	                 "SELECT " EVAL_COLS " FROM evaluations WHERE program_id = ?1 ORDER BY id",
	                 program_id, fn, arg, err);
}

int cuco_store_eval_each_run(struct cuco_store *store, int64_t run_id,
                             int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                       struct cuco_err *err),
                             void *arg, struct cuco_err *err)
{
	return eval_walk(store,
	                 "SELECT " EVAL_COLS " FROM evaluations WHERE ?1 = 0 OR run_id = ?1 "
	                 "ORDER BY id",
	                 run_id, fn, arg, err);
}

/* --- llm_calls, summaries */

void cuco_llm_call_rec_init(struct cuco_llm_call_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->tokens_in = CUCO_STORE_NO_INT;
	rec->tokens_out = CUCO_STORE_NO_INT;
	rec->latency_ms = NAN;
	rec->cost = NAN;
}

void cuco_llm_call_rec_release(struct cuco_llm_call_rec *rec)
{
	if (!rec)
		return;
	free_str(&rec->model);
	free_str(&rec->endpoint);
	free_str(&rec->prompt);
	free_str(&rec->reply);
	free_str(&rec->error);
	free_str(&rec->created_at);
	cuco_llm_call_rec_init(rec);
}

int cuco_store_llm_call_add(struct cuco_store *store, const struct cuco_llm_call_rec *rec,
                            int64_t *id, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, ret;

	ret = prepare(store,
	              "INSERT INTO llm_calls(run_id, program_id, model, endpoint, prompt, reply, "
	              "tokens_in, tokens_out, latency_ms, cost, error, created_at) VALUES (?1, ?2, "
	              "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, COALESCE(?12, " NOW_SQL "))",
	              &st, err);
	if (ret)
		goto out;
	rc = bind_id(st, 1, rec->run_id);
	if (rc == SQLITE_OK)
		rc = bind_id(st, 2, rec->program_id);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 3, rec->model);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 4, rec->endpoint);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 5, rec->prompt);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 6, rec->reply);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 7, rec->tokens_in);
	if (rc == SQLITE_OK)
		rc = bind_opt_int(st, 8, rec->tokens_out);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 9, rec->latency_ms);
	if (rc == SQLITE_OK)
		rc = bind_real(st, 10, rec->cost);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 11, rec->error);
	if (rc == SQLITE_OK)
		rc = bind_str(st, 12, rec->created_at);
	if (rc != SQLITE_OK) {
		ret = sql_fail(store, err, rc, "binding an LLM call");
		goto out;
	}
	ret = step_done(store, st, "inserting an LLM call", err);
	if (ret)
		goto out;
	*id = sqlite3_last_insert_rowid(store->db);
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_llm_call_get(struct cuco_store *store, int64_t id, struct cuco_llm_call_rec *out,
                            struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	cuco_llm_call_rec_init(out);
	ret = prepare(store,
	              "SELECT id, run_id, program_id, model, endpoint, prompt, reply, tokens_in, "
	              "tokens_out, latency_ms, cost, error, created_at FROM llm_calls WHERE id = ?",
	              &st, err);
	if (ret)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = col_id(st, 0);
		out->run_id = col_id(st, 1);
		out->program_id = col_id(st, 2);
		out->model = col_str(st, 3);
		out->endpoint = col_str(st, 4);
		out->prompt = col_str(st, 5);
		out->reply = col_str(st, 6);
		out->tokens_in = col_opt_int(st, 7);
		out->tokens_out = col_opt_int(st, 8);
		out->latency_ms = col_real(st, 9);
		out->cost = col_real(st, 10);
		out->error = col_str(st, 11);
		out->created_at = col_str(st, 12);
	} else if (rc == SQLITE_DONE) {
		ret = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "store %s has no LLM call %lld",
		                   store->path, (long long)id);
	} else {
		ret = sql_fail(store, err, rc, "reading an LLM call");
	}
out:
	sqlite3_finalize(st);
	return ret;
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
