/*
 * store.c - the store's connection: open (schema checked, made, migrated), transactions, meta,
 * the runs a process holds.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "internal.h"
#include "util/paths.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int set_journal_wal(struct cuco_store *s, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *mode;
	int rc, ret;

	ret = cuco_store_prepare(s, "PRAGMA journal_mode = WAL", &st, err);
	if (ret)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = cuco_store_sql_fail(s, err, rc, "turning on WAL mode");
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
	s = cuco_xcalloc(1, sizeof(*s));
	s->path = cuco_xstrdup(path);
	s->lock_fd = -1;
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
	ret = cuco_store_schema_check(s, &fresh, err);
	if (ret)
		goto out;
	ret = set_journal_wal(s, err);
	if (ret)
		goto out;
	ret = cuco_store_exec(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL",
	                      "setting connection options", err);
	if (ret)
		goto out;
	if (fresh) {
		ret = cuco_store_schema_create(s, err);
		if (ret)
			goto out;
	}
	ret = cuco_store_schema_migrate(s, err);
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
	if (store->lock_fd >= 0)
		close(store->lock_fd); /* the runs it held are free */
	free(store->path);
	free(store);
}

int cuco_store_run_lock(struct cuco_store *store, int64_t id, struct cuco_err *err)
{
	struct flock fl;
	char path[PATH_MAX];

	if (!strcmp(store->path, ":memory:") || !strncmp(store->path, "file:", 5))
		return CUCO_OK;
	if (store->lock_fd < 0) {
		if ((size_t)snprintf(path, sizeof(path), "%s.lock", store->path) >= sizeof(path))
			return cuco_err_set(err, CUCO_ERR_IO,
			                    "store %s: path too long for its lock", store->path);
		store->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (store->lock_fd < 0)
			return cuco_err_set(err, CUCO_ERR_IO,
			                    "cannot open %s (the store's run lock): %s; check that "
			                    "the store's directory is writable",
			                    path, strerror(errno));
	}
	/* one byte per run, held by this open file (not the process: a second handle on
	 * the store in this process is refused too), gone when it closes or cuco dies */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)id;
	fl.l_len = 1;
	if (fcntl(store->lock_fd, F_OFD_SETLK, &fl) == 0)
		return CUCO_OK;
	if (errno == EAGAIN || errno == EACCES)
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld of %s is in use by another cuco process (a run is run "
		    "or resumed by one process at a time); wait for it to end or "
		    "stop it, then resume",
		    (long long)id, store->path);
	return cuco_err_set(err, CUCO_ERR_IO, "store %s: cannot lock run %lld: %s", store->path,
	                    (long long)id, strerror(errno));
}

int cuco_store_begin(struct cuco_store *store, struct cuco_err *err)
{
	if (!sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: a transaction is already open (they do not nest)",
		                    store->path);
	return cuco_store_exec(store, "BEGIN IMMEDIATE", "starting a transaction", err);
}

int cuco_store_commit(struct cuco_store *store, struct cuco_err *err)
{
	if (sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: commit without an open transaction", store->path);
	return cuco_store_exec(store, "COMMIT", "committing", err);
}

int cuco_store_rollback(struct cuco_store *store, struct cuco_err *err)
{
	if (sqlite3_get_autocommit(store->db))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "store %s: rollback without an open transaction", store->path);
	return cuco_store_exec(store, "ROLLBACK", "rolling back", err);
}

/* --- meta */

int cuco_store_meta_get(struct cuco_store *store, const char *key, char **value,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*value = NULL;
	ret = cuco_store_prepare(store, "SELECT value FROM meta WHERE key = ?", &st, err);
	if (ret)
		goto out;
	rc = cuco_store_bind_str(st, 1, key);
	if (rc != SQLITE_OK) {
		ret = cuco_store_sql_fail(store, err, rc, "binding a meta key");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*value = (char *)cuco_store_col_str(st, 0);
	else if (rc != SQLITE_DONE)
		ret = cuco_store_sql_fail(store, err, rc, "reading meta");
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_meta_set(struct cuco_store *store, const char *key, const char *value,
                        struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = cuco_store_require(key, "meta key", err);
	if (ret)
		goto out;
	ret = cuco_store_prepare(store,
	                         value ? "INSERT INTO meta(key, value) VALUES (?1, ?2) "
	                                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
	                               : "DELETE FROM meta WHERE key = ?1",
	                         &st, err);
	if (ret)
		goto out;
	rc = cuco_store_bind_str(st, 1, key);
	if (rc == SQLITE_OK && value)
		rc = cuco_store_bind_str(st, 2, value);
	if (rc != SQLITE_OK) {
		ret = cuco_store_sql_fail(store, err, rc, "binding meta");
		goto out;
	}
	ret = cuco_store_step_done(store, st, "writing meta", err);
out:
	sqlite3_finalize(st);
	return ret;
}
