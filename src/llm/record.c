/* record.c - an LLM call's result as a row of the store's llm_calls (see client.h). */
#include "llm/client.h"

#include <stdlib.h>

#include "store/store.h"
#include "util/strbuf.h"

int cuco_llm_result_store(struct cuco_store *store, const struct cuco_llm_result *res,
                          int64_t run_id, int64_t program_id, int64_t *id, struct cuco_err *err)
{
	struct cuco_llm_call_rec rec;
	int64_t dummy;

	cuco_llm_call_rec_init(&rec);
	rec.run_id = run_id;
	rec.program_id = program_id;
	rec.model = res->model;
	rec.endpoint = res->endpoint;
	rec.prompt = res->prompt_json;
	rec.reply = res->reply;
	rec.tokens_in = res->tokens_in;
	rec.tokens_out = res->tokens_out;
	rec.latency_ms = res->latency_ms;
	rec.cost = res->cost;
	rec.error = res->error;
	rec.http_status = res->http_status;
	rec.finish_reason = res->finish_reason;
	rec.attempts = res->attempts;
	rec.sampling_seed = res->seed;
	rec.purpose = res->purpose;
	return cuco_store_llm_call_add(store, &rec, id ? id : &dummy, err);
}

int cuco_llm_result_store_why(struct cuco_store *store, struct cuco_llm_result *res, int64_t run_id,
                              int64_t program_id, const char *why, struct cuco_err *err)
{
	if (why) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;

		cuco_strbuf_adds(&sb, why);
		if (res->error) {
			cuco_strbuf_adds(&sb, ": ");
			cuco_strbuf_adds(&sb, res->error);
		}
		free(res->error);
		res->error = cuco_strbuf_detach(&sb, NULL);
	}
	return cuco_llm_result_store(store, res, run_id, program_id, NULL, err);
}
