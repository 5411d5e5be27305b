/*
 * llm_summarize.h - the LLM operator's meta-summaries (llm_summarize.c).
 */
#ifndef CUCO_SEARCH_LLM_SUMMARIZE_H
#define CUCO_SEARCH_LLM_SUMMARIZE_H

#include <stdint.h>

#include "util/error.h"

/*
 * The child operator's summarize callback (ctx: the operator): keep the
 * statistical summary of generation and have the best model turn it into
 * recommendations, stored as an "llm" summary.
 */
int cuco_llm_op_summarize(void *ctx, int64_t run_id, int generation, const char *statistical,
                          struct cuco_err *err);

#endif
