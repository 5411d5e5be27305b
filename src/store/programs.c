/* programs.c - the store's programs and their lineage (program_parents). */
#include "internal.h"
#include "util/array.h"
#include "util/hash.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The columns of programs; the parents live in program_parents. */
static const struct cuco_rec_col program_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_program_rec, id), REC_NO_INSERT},
    {"run_id", COL_ID, offsetof(struct cuco_program_rec, run_id), NULL},
    {"workload", COL_TEXT, offsetof(struct cuco_program_rec, workload), NULL},
    {"name", COL_TEXT, offsetof(struct cuco_program_rec, name), NULL},
    {"origin", COL_TEXT, offsetof(struct cuco_program_rec, origin), NULL},
    {"hash", COL_TEXT, offsetof(struct cuco_program_rec, hash), NULL},
    {"code", COL_TEXT, offsetof(struct cuco_program_rec, code), NULL},
    {"directive", COL_TEXT, offsetof(struct cuco_program_rec, directive), NULL},
    {"island", COL_OPT_INT, offsetof(struct cuco_program_rec, island), NULL},
    {"generation", COL_OPT_INT, offsetof(struct cuco_program_rec, generation), NULL},
    {"operator", COL_TEXT, offsetof(struct cuco_program_rec, operator_), NULL},
    {"created_at", COL_TEXT, offsetof(struct cuco_program_rec, created_at), REC_NOW_UNLESS_GIVEN},
    {"flags", COL_TEXT, offsetof(struct cuco_program_rec, flags), NULL},
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

/* Free r's parents (not its columns' strings). */
static void free_parents(struct cuco_program_rec *r)
{
	size_t i;

	for (i = 0; i < r->nparents; i++)
		free((void *)r->parents[i].kind);
	free((void *)r->parents);
	r->parents = NULL;
	r->nparents = 0;
}

void cuco_program_rec_release(struct cuco_program_rec *rec)
{
	if (!rec)
		return;
	cuco_store_free_rec_strs(program_cols, rec);
	free_parents(rec);
	cuco_program_rec_init(rec);
}

/* Read the parents of program r->id into r, in the order they were added. */
static int read_parents(struct cuco_store *s, struct cuco_program_rec *r, struct cuco_err *err)
{
	struct cuco_parent *parents = NULL, *p;
	size_t n = 0, alloc = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = cuco_store_prepare(s,
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
			ret = cuco_store_sql_fail(s, err, rc, "reading program parents");
			goto out;
		}
		p = CUCO_ARRAY_PUSH(parents, n, alloc);
		p->id = cuco_store_col_id(st, 0);
		p->kind = cuco_store_col_str(st, 1);
	}
out:
	/* Hand over what was read even on error, so release frees it. */
	r->parents = parents;
	r->nparents = n;
	sqlite3_finalize(st);
	return ret;
}

/* Insert the lineage edges of rec as those of program pid. */
static int add_parents(struct cuco_store *store, int64_t pid, const struct cuco_program_rec *rec,
                       struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;
	size_t i;

	ret = cuco_store_prepare(
	    store, "INSERT INTO program_parents(program_id, parent_id, kind) VALUES (?, ?, ?)", &st,
	    err);
	if (ret)
		goto out;
	for (i = 0; i < rec->nparents; i++) {
		const char *kind = rec->parents[i].kind ? rec->parents[i].kind : "parent";

		sqlite3_reset(st);
		rc = sqlite3_bind_int64(st, 1, pid);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 2, rec->parents[i].id);
		if (rc == SQLITE_OK)
			rc = cuco_store_bind_str(st, 3, kind);
		if (rc != SQLITE_OK) {
			ret = cuco_store_sql_fail(store, err, rc, "binding a program parent");
			goto out;
		}
		ret = cuco_store_step_done(store, st, "inserting a program parent", err);
		if (ret)
			goto out;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

int cuco_store_program_add(struct cuco_store *store, const struct cuco_program_rec *rec,
                           int64_t *id, struct cuco_err *err)
{
	char hash[CUCO_STORE_HASH_LEN + 1];
	struct cuco_program_rec row = *rec;
	int64_t pid = 0;
	int ret, own = 0, opened = 0;

	ret = cuco_store_require(rec->workload, "program workload", err);
	if (!ret)
		ret = cuco_store_require(rec->origin, "program origin", err);
	if (!ret && !rec->code)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "program code is required");
	if (!ret)
		ret = cuco_store_check_json(rec->directive, "program directive", err);
	if (!ret && rec->nparents && !rec->parents)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "program has %zu parents but no array",
		                   rec->nparents);
	if (ret)
		goto out;
	if (!rec->hash) {
		cuco_store_hash_code(rec->code, hash);
		row.hash = hash;
	}

	ret = cuco_store_op_begin(store, &own, err);
	if (ret)
		goto out;
	opened = 1;
	ret = cuco_store_insert_rec(store, "programs", program_cols, &row, "a program", &pid, err);
	if (!ret)
		ret = add_parents(store, pid, rec, err);
out:
	if (opened) {
		int end = cuco_store_op_end(store, own, ret == CUCO_OK, err);

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
	int ret;

	cuco_program_rec_init(out);
	ret = cuco_store_get_rec(store, program_cols, "FROM programs WHERE id = ?", id, out,
	                         "program", "a program", err);
	if (!ret)
		ret = read_parents(store, out, err);
	if (ret)
		cuco_program_rec_release(out);
	return ret;
}

int cuco_store_program_find_hash(struct cuco_store *store, const char *workload, const char *hash,
                                 int64_t *id, struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*id = 0;
	ret = cuco_store_prepare(
	    store, "SELECT id FROM programs WHERE workload = ? AND hash = ? ORDER BY id LIMIT 1",
	    &st, err);
	if (ret)
		goto out;
	rc = cuco_store_bind_str(st, 1, workload);
	if (rc == SQLITE_OK)
		rc = cuco_store_bind_str(st, 2, hash);
	if (rc != SQLITE_OK) {
		ret = cuco_store_sql_fail(store, err, rc, "binding a program hash");
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		ret = cuco_store_sql_fail(store, err, rc, "finding a program by hash");
out:
	sqlite3_finalize(st);
	return ret;
}

struct program_walk {
	struct cuco_store *store;
	int (*fn)(const struct cuco_program_rec *prog, void *arg, struct cuco_err *err);
	void *arg;
};

/* A program as read by the walk gets its parents before fn sees it. */
static int program_visit(void *rec, void *ctx, struct cuco_err *err)
{
	const struct program_walk *w = ctx;
	int ret;

	ret = read_parents(w->store, rec, err);
	if (!ret)
		ret = w->fn(rec, w->arg, err);
	free_parents(rec);
	return ret;
}

/* Walk the programs "SELECT <program_cols> <rest>" returns, with key bound to ?1. */
static int program_walk(struct cuco_store *s, const char *rest, int64_t key,
                        int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                  struct cuco_err *err),
                        void *arg, struct cuco_err *err)
{
	struct program_walk w = {s, fn, arg};
	struct cuco_program_rec rec;

	cuco_program_rec_init(&rec);
	return cuco_store_walk(s, program_cols, rest, key, &rec, program_visit, &w,
	                       "listing programs", err);
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
