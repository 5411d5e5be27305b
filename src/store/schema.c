/* schema.c - the store's schema: version 1, the migrations after it, the check a file is ours. */
#include "internal.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>

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
    /* 5 -> 6: the seeds named in full: an LLM call's sampling seed, an evolve run's
       search seed in its config (a recheck run's "seed" is an input seed: kept) */
    "ALTER TABLE llm_calls RENAME COLUMN seed TO sampling_seed;\n"
    "UPDATE runs SET config = json_set(json_remove(config, '$.seed'), '$.search_seed', "
    "json_extract(config, '$.seed')) WHERE kind = 'evolve' AND CASE WHEN json_valid(config) "
    "THEN json_type(config, '$.seed') IS NOT NULL ELSE 0 END;\n",
    /* 6 -> 7: the folder of a workload package outside cuco's workloads (cuco init's) */
    "ALTER TABLE runs ADD COLUMN package TEXT;\n",
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == CUCO_STORE_SCHEMA_VERSION - 1,
               "one migration per schema version after 1");

/* Read one integer pragma (constant name). */
static int pragma_int(struct cuco_store *s, const char *sql, int64_t *v, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = cuco_store_prepare(s, sql, &st, err);
	if (ret)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = cuco_store_sql_fail(s, err, rc, "reading the store header");
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
int cuco_store_schema_check(struct cuco_store *s, int *fresh, struct cuco_err *err)
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
int cuco_store_schema_migrate(struct cuco_store *s, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	int64_t version = 0;
	int ret = CUCO_OK;

	for (;;) {
		if ((ret =
		         cuco_store_exec(s, "BEGIN IMMEDIATE", "starting a schema migration", err)))
			break;
		ret = pragma_int(s, "PRAGMA user_version", &version, err);
		if (ret || version < 1 || version >= CUCO_STORE_SCHEMA_VERSION) {
			sqlite3_exec(s->db, ret ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
			break;
		}
		cuco_strbuf_reset(&sql);
		cuco_strbuf_addf(&sql, "%sPRAGMA user_version = %lld;", migrations[version - 1],
		                 (long long)version + 1);
		ret = cuco_store_exec(s, sql.buf, "migrating the schema", err);
		if (!ret)
			ret = cuco_store_exec(s, "COMMIT", "committing a schema migration", err);
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
int cuco_store_schema_create(struct cuco_store *s, struct cuco_err *err)
{
	struct cuco_strbuf sql = CUCO_STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int64_t version = 0;
	int ret, ok = 0;

	ret = cuco_store_exec(s, "BEGIN IMMEDIATE", "starting to create the schema", err);
	if (ret)
		return ret;
	ret = pragma_int(s, "PRAGMA user_version", &version, err);
	if (ret)
		goto out;
	if (version != 0) {
		ok = 1;
		goto out;
	}
	ret = cuco_store_exec(s, schema_v1, "creating the schema", err);
	for (size_t i = 0; !ret && i < sizeof(migrations) / sizeof(migrations[0]); i++)
		ret = cuco_store_exec(s, migrations[i], "creating the schema", err);
	if (ret)
		goto out;
	/* PRAGMA takes no parameters; these are compile-time constants, not values. */
	cuco_strbuf_addf(&sql, "PRAGMA user_version = %d; PRAGMA application_id = %lld;",
	                 CUCO_STORE_SCHEMA_VERSION, (long long)CUCO_STORE_APPLICATION_ID);
	ret = cuco_store_exec(s, sql.buf, "setting the schema version", err);
	if (ret)
		goto out;
	ret = cuco_store_prepare(s,
	                         "INSERT INTO meta(key, value) VALUES ('created_by', ?), "
	                         "('created_at', " NOW_SQL ")",
	                         &st, err);
	if (ret)
		goto out;
	sqlite3_bind_text(st, 1, "cuco " CUCO_VERSION, -1, SQLITE_STATIC);
	ret = cuco_store_step_done(s, st, "recording the store's creation", err);
	if (ret)
		goto out;
	ok = 1;
out:
	sqlite3_finalize(st);
	cuco_strbuf_release(&sql);
	if (ok)
		return cuco_store_exec(s, "COMMIT", "committing the schema", err);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}
