/* summaries.c - the store's summaries of a run's generations: added and listed. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

static const struct cuco_rec_col summary_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_summary_rec, id), REC_NO_INSERT},
    {"run_id", COL_ID, offsetof(struct cuco_summary_rec, run_id), NULL},
    {"generation", COL_OPT_INT, offsetof(struct cuco_summary_rec, generation), NULL},
    {"kind", COL_TEXT, offsetof(struct cuco_summary_rec, kind), NULL},
    {"text", COL_TEXT, offsetof(struct cuco_summary_rec, text), NULL},
    {"created_at", COL_TEXT, offsetof(struct cuco_summary_rec, created_at), NOW_SQL},
    {NULL},
};

struct summary_walk {
	int (*fn)(const struct cuco_summary_rec *sum, void *arg, struct cuco_err *err);
	void *arg;
};

static int summary_visit(void *rec, void *ctx, struct cuco_err *err)
{
	const struct summary_walk *w = ctx;

	return w->fn(rec, w->arg, err);
}

int cuco_store_summary_each_run(struct cuco_store *store, int64_t run_id,
                                int (*fn)(const struct cuco_summary_rec *sum, void *arg,
                                          struct cuco_err *err),
                                void *arg, struct cuco_err *err)
{
	struct summary_walk w = {fn, arg};
	struct cuco_summary_rec rec;

	memset(&rec, 0, sizeof(rec));
	return cuco_store_walk(store, summary_cols, "FROM summaries WHERE run_id = ?1 ORDER BY id",
	                       run_id, &rec, summary_visit, &w, "listing summaries", err);
}

int cuco_store_summary_add(struct cuco_store *store, int64_t run_id, int64_t generation,
                           const char *kind, const char *text, int64_t *id, struct cuco_err *err)
{
	struct cuco_summary_rec rec;
	int ret;

	ret = cuco_store_require(kind, "summary kind", err);
	if (!ret && !text)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "summary text is required");
	if (!ret && run_id <= 0)
		ret = cuco_err_set(err, CUCO_ERR_INVALID, "summary run_id is required");
	if (ret)
		return ret;
	memset(&rec, 0, sizeof(rec));
	rec.run_id = run_id;
	rec.generation = generation;
	rec.kind = kind;
	rec.text = text;
	return cuco_store_insert_rec(store, "summaries", summary_cols, &rec, "a summary", id, err);
}
