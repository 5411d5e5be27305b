/* llm_calls.c - the store's LLM calls: one row per request to a model, added, read back, listed. */
#include "internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const struct cuco_rec_col llm_call_cols[] = {
    {"id", COL_ID, offsetof(struct cuco_llm_call_rec, id), REC_NO_INSERT},
    {"run_id", COL_ID, offsetof(struct cuco_llm_call_rec, run_id), NULL},
    {"program_id", COL_ID, offsetof(struct cuco_llm_call_rec, program_id), NULL},
    {"model", COL_TEXT, offsetof(struct cuco_llm_call_rec, model), NULL},
    {"endpoint", COL_TEXT, offsetof(struct cuco_llm_call_rec, endpoint), NULL},
    {"prompt", COL_TEXT, offsetof(struct cuco_llm_call_rec, prompt), NULL},
    {"reply", COL_TEXT, offsetof(struct cuco_llm_call_rec, reply), NULL},
    {"tokens_in", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, tokens_in), NULL},
    {"tokens_out", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, tokens_out), NULL},
    {"latency_ms", COL_REAL, offsetof(struct cuco_llm_call_rec, latency_ms), NULL},
    {"cost", COL_REAL, offsetof(struct cuco_llm_call_rec, cost), NULL},
    {"error", COL_TEXT, offsetof(struct cuco_llm_call_rec, error), NULL},
    {"created_at", COL_TEXT, offsetof(struct cuco_llm_call_rec, created_at), REC_NOW_UNLESS_GIVEN},
    {"http_status", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, http_status), NULL},
    {"finish_reason", COL_TEXT, offsetof(struct cuco_llm_call_rec, finish_reason), NULL},
    {"attempts", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, attempts), NULL},
    {"sampling_seed", COL_OPT_INT, offsetof(struct cuco_llm_call_rec, sampling_seed), NULL},
    {"purpose", COL_TEXT, offsetof(struct cuco_llm_call_rec, purpose), NULL},
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
	rec->sampling_seed = CUCO_STORE_NO_INT;
}

void cuco_llm_call_rec_release(struct cuco_llm_call_rec *rec)
{
	if (!rec)
		return;
	cuco_store_free_rec_strs(llm_call_cols, rec);
	cuco_llm_call_rec_init(rec);
}

int cuco_store_llm_call_add(struct cuco_store *store, const struct cuco_llm_call_rec *rec,
                            int64_t *id, struct cuco_err *err)
{
	return cuco_store_insert_rec(store, "llm_calls", llm_call_cols, rec, "an LLM call", id,
	                             err);
}

int cuco_store_llm_call_get(struct cuco_store *store, int64_t id, struct cuco_llm_call_rec *out,
                            struct cuco_err *err)
{
	cuco_llm_call_rec_init(out);
	return cuco_store_get_rec(store, llm_call_cols, "FROM llm_calls WHERE id = ?", id, out,
	                          "LLM call", "an LLM call", err);
}

struct llm_call_walk {
	int (*fn)(const struct cuco_llm_call_rec *call, void *arg, struct cuco_err *err);
	void *arg;
};

static int llm_call_visit(void *rec, void *ctx, struct cuco_err *err)
{
	const struct llm_call_walk *w = ctx;

	return w->fn(rec, w->arg, err);
}

int cuco_store_llm_call_each_run(struct cuco_store *store, int64_t run_id,
                                 int (*fn)(const struct cuco_llm_call_rec *call, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err)
{
	struct llm_call_walk w = {fn, arg};
	struct cuco_llm_call_rec rec;

	cuco_llm_call_rec_init(&rec);
	return cuco_store_walk(store, llm_call_cols, "FROM llm_calls WHERE run_id = ?1 ORDER BY id",
	                       run_id, &rec, llm_call_visit, &w, "listing LLM calls", err);
}
