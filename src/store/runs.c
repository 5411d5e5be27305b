/* runs.c - the store's runs: begun, finished or failed, read back and listed. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

static const char *const run_statuses[] = {"running", "done", "failed", "interrupted", NULL};

/* A run begins 'running'; run_finish and run_fail set its end, status and error. */
static const struct cuco_rec_col run_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_run_rec, id), REC_NO_INSERT},
    {"created_at", COL_TEXT, offsetof(struct cuco_run_rec, created_at), REC_NOW_UNLESS_GIVEN},
    {"kind", COL_TEXT, offsetof(struct cuco_run_rec, kind), NULL},
    {"workload", COL_TEXT, offsetof(struct cuco_run_rec, workload), NULL},
    {"shape", COL_TEXT, offsetof(struct cuco_run_rec, shape), NULL},
    {"config", COL_TEXT, offsetof(struct cuco_run_rec, config), NULL},
    {"status", COL_TEXT, offsetof(struct cuco_run_rec, status), "'running'"},
    {"finished_at", COL_TEXT, offsetof(struct cuco_run_rec, finished_at), REC_NO_INSERT},
    {"cuco_version", COL_TEXT, offsetof(struct cuco_run_rec, cuco_version), NULL},
    {"host", COL_TEXT, offsetof(struct cuco_run_rec, host), NULL},
    {"gpu", COL_TEXT, offsetof(struct cuco_run_rec, gpu), NULL},
    {"commit_id", COL_TEXT, offsetof(struct cuco_run_rec, commit_id), NULL},
    {"error", COL_TEXT, offsetof(struct cuco_run_rec, error), REC_NO_INSERT},
    {"package", COL_TEXT, offsetof(struct cuco_run_rec, package), NULL},
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
	cuco_store_free_rec_strs(run_cols, rec);
	cuco_run_rec_init(rec);
}

int cuco_store_run_begin(struct cuco_store *store, const struct cuco_run_rec *rec, int64_t *id,
                         struct cuco_err *err)
{
	int ret;

	ret = cuco_store_require(rec->kind, "run kind", err);
	if (!ret)
		ret = cuco_store_check_json(rec->config, "run config", err);
	if (ret)
		return ret;
	return cuco_store_insert_rec(store, "runs", run_cols, rec, "a run", id, err);
}

/* One UPDATE of run id with text ?1 (sql's WHERE id = ?2); what names ?1 in a binding error. */
static int run_update(struct cuco_store *store, int64_t id, const char *sql, const char *text,
                      const char *what, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = cuco_store_prepare(store, sql, &st, err);
	if (ret)
		goto out;
	rc = cuco_store_bind_str(st, 1, text);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, id);
	if (rc != SQLITE_OK) {
		ret = cuco_store_sql_fail(store, err, rc, what);
		goto out;
	}
	ret = cuco_store_step_done(store, st, "updating a run", err);
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
	if (!status || !cuco_store_one_of(status, run_statuses))
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

int cuco_store_run_stop(struct cuco_store *store, int64_t id, const char *status, const char *why,
                        struct cuco_err *err)
{
	int rc;

	if (!status || !strcmp(status, "running"))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "a run stops 'done', 'failed' or "
		                    "'interrupted', not '%s'",
		                    status ? status : "(null)");
	rc = cuco_store_run_finish(store, id, status, err);
	if (!rc)
		rc = run_update(store, id, "UPDATE runs SET error = ?1 WHERE id = ?2", why,
		                "binding why a run stopped", err);
	return rc;
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
	return cuco_store_get_rec(store, run_cols, "FROM runs WHERE id = ?", id, out, "run",
	                          "a run", err);
}

struct run_walk {
	int (*fn)(const struct cuco_run_rec *run, void *arg, struct cuco_err *err);
	void *arg;
};

static int run_visit(void *rec, void *ctx, struct cuco_err *err)
{
	const struct run_walk *w = ctx;

	return w->fn(rec, w->arg, err);
}

int cuco_store_run_each(struct cuco_store *store,
                        int (*fn)(const struct cuco_run_rec *run, void *arg, struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct run_walk w = {fn, arg};
	struct cuco_run_rec rec;

	cuco_run_rec_init(&rec);
	return cuco_store_walk(store, run_cols, "FROM runs ORDER BY id", 0, &rec, run_visit, &w,
	                       "listing runs", err);
}
