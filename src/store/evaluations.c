/* evaluations.c - the store's evaluations: added, diagnosed, read back and listed. */
#include "internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const stages[] = {"compile", "run", "verify", "bench", NULL};

/* The diagnosis comes later, from cuco_store_eval_set_diagnosis(). */
static const struct cuco_rec_col eval_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_eval_rec, id), REC_NO_INSERT},
    {"program_id", COL_ID, offsetof(struct cuco_eval_rec, program_id), NULL},
    {"run_id", COL_ID, offsetof(struct cuco_eval_rec, run_id), NULL},
    {"shape", COL_TEXT, offsetof(struct cuco_eval_rec, shape), NULL},
    {"ranks", COL_OPT_INT, offsetof(struct cuco_eval_rec, ranks), NULL},
    {"stage_reached", COL_TEXT, offsetof(struct cuco_eval_rec, stage_reached), NULL},
    {"status", COL_TEXT, offsetof(struct cuco_eval_rec, status), NULL},
    {"error_code", COL_INT, offsetof(struct cuco_eval_rec, error_code), NULL},
    {"error", COL_TEXT, offsetof(struct cuco_eval_rec, error), NULL},
    {"compile_log", COL_TEXT, offsetof(struct cuco_eval_rec, compile_log), NULL},
    {"run_log", COL_TEXT, offsetof(struct cuco_eval_rec, run_log), NULL},
    {"median_us", COL_REAL, offsetof(struct cuco_eval_rec, median_us), NULL},
    {"p10_us", COL_REAL, offsetof(struct cuco_eval_rec, p10_us), NULL},
    {"p90_us", COL_REAL, offsetof(struct cuco_eval_rec, p90_us), NULL},
    {"min_us", COL_REAL, offsetof(struct cuco_eval_rec, min_us), NULL},
    {"mean_us", COL_REAL, offsetof(struct cuco_eval_rec, mean_us), NULL},
    {"samples_json", COL_TEXT, offsetof(struct cuco_eval_rec, samples_json), NULL},
    {"rel_err", COL_REAL, offsetof(struct cuco_eval_rec, rel_err), NULL},
    {"fitness", COL_REAL, offsetof(struct cuco_eval_rec, fitness), NULL},
    {"result_json", COL_TEXT, offsetof(struct cuco_eval_rec, result_json), NULL},
    {"gpu", COL_TEXT, offsetof(struct cuco_eval_rec, gpu), NULL},
    {"created_at", COL_TEXT, offsetof(struct cuco_eval_rec, created_at), REC_NOW_UNLESS_GIVEN},
    {"diagnosis", COL_TEXT, offsetof(struct cuco_eval_rec, diagnosis), REC_NO_INSERT},
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
	cuco_store_free_rec_strs(eval_cols, rec);
	cuco_eval_rec_init(rec);
}

int cuco_store_eval_add(struct cuco_store *store, const struct cuco_eval_rec *rec, int64_t *id,
                        struct cuco_err *err)
{
	int ret = CUCO_OK;

	if (rec->program_id <= 0)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "evaluation program_id is required");
	if (!ret)
		ret = cuco_store_require(rec->status, "evaluation status", err);
	if (!ret && rec->stage_reached && !cuco_store_one_of(rec->stage_reached, stages))
		ret = cuco_err_set(err, CUCO_ERR_INVALID,
		                   "evaluation stage_reached '%s' is not one of compile, run, "
		                   "verify, bench",
		                   rec->stage_reached);
	if (!ret)
		ret = cuco_store_check_json(rec->samples_json, "evaluation samples_json", err);
	if (ret)
		return ret;
	return cuco_store_insert_rec(store, "evaluations", eval_cols, rec, "an evaluation", id,
	                             err);
}

int cuco_store_eval_set_diagnosis(struct cuco_store *store, int64_t id, const char *text,
                                  struct cuco_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = cuco_store_prepare(store, "UPDATE evaluations SET diagnosis = ?1 WHERE id = ?2", &st,
	                         err);
	if (ret)
		goto out;
	rc = cuco_store_bind_str(st, 1, text);
	if (rc == SQLITE_OK)
		rc = cuco_store_bind_id(st, 2, id);
	if (rc != SQLITE_OK) {
		ret = cuco_store_sql_fail(store, err, rc, "binding a diagnosis");
		goto out;
	}
	ret = cuco_store_step_done(store, st, "storing a diagnosis", err);
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
	return cuco_store_get_rec(store, eval_cols, "FROM evaluations WHERE id = ?", id, out,
	                          "evaluation", "an evaluation", err);
}

struct eval_walk {
	int (*fn)(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err);
	void *arg;
};

static int eval_visit(void *rec, void *ctx, struct cuco_err *err)
{
	const struct eval_walk *w = ctx;

	return w->fn(rec, w->arg, err);
}

/* Walk the evaluations "SELECT <eval_cols> <rest>" returns, with key bound to ?1. */
static int eval_walk(struct cuco_store *s, const char *rest, int64_t key,
                     int (*fn)(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err),
                     void *arg, struct cuco_err *err)
{
	struct eval_walk w = {fn, arg};
	struct cuco_eval_rec rec;

	cuco_eval_rec_init(&rec);
	return cuco_store_walk(s, eval_cols, rest, key, &rec, eval_visit, &w, "listing evaluations",
	                       err);
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
