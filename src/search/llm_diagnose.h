/*
 * llm_diagnose.h - per-evaluation diagnosis for the LLM operator
 * (--llm-diagnose): after a child a model wrote fails (compile, run, verify)
 * or is slower than its parent, a model reads the head and tail of its log
 * (redacted, bounded) with its code and writes a short diagnosis. The call is
 * stored in llm_calls (purpose 'diagnosis', linked to the child), the text
 * beside the child's evaluation (evaluations.diagnosis), and the prompts of
 * that lineage show it: a parent's own diagnosis with its evaluation, and the
 * latest diagnoses of its earlier children.
 */
#ifndef CUCO_SEARCH_LLM_DIAGNOSE_H
#define CUCO_SEARCH_LLM_DIAGNOSE_H

#include <stdint.h>

#include "llm/client.h"
#include "store/store.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CUCO_LLM_DIAGNOSIS_MAX 1200            /* bytes of a diagnosis kept */
#define CUCO_LLM_DIAGNOSIS_LOG 3000            /* bytes of a log shown: its head and tail halves */
#define CUCO_LLM_DIAGNOSIS_CODE 4000           /* bytes of the child's EVOLVE-BLOCKs shown */
#define CUCO_LLM_DIAGNOSIS_PURPOSE "diagnosis" /* llm_calls.purpose of the calls */

/* One diagnosis to ask for. Borrowed for the call. */
struct cuco_llm_diagnose_args {
	struct cuco_store *store;
	struct cuco_llm_client *client;
	const char *share_dir; /* holds prompts/diagnose.txt */
	const char *workload;
	const char *model; /* the model that wrote the child */
	double temperature;
	int max_tokens;
	int64_t run_id;
	int64_t program_id;    /* the child */
	double parent_fitness; /* 0: unknown or failed */
	int correct;           /* the child's evaluation passed */
	double fitness;        /* the child's; 0 when it failed */
};

/*
 * 1 when a child's evaluation asks for a diagnosis: it failed, or it is
 * correct but less fit than a correct parent.
 */
int cuco_llm_diagnosis_due(int correct, double fitness, double parent_fitness);

/*
 * Ask a->model for the diagnosis of a->program_id's latest evaluation and
 * store it: the call (purpose 'diagnosis', program a->program_id) and, when
 * a reply came back, its text (at most CUCO_LLM_DIAGNOSIS_MAX bytes; a reply
 * cut off at max_tokens is kept, marked so) as the evaluation's diagnosis,
 * in one transaction (no transaction may be open). *res (init'ed) holds the
 * call for the caller's statistics. A call refused for the budget stores
 * nothing (res->attempts is 0) and is not an error; nor is a call that
 * failed (stored with why). Returns CUCO_OK, or the store's, the prompt's
 * or CUCO_ERR_NOT_FOUND (no evaluation) errors.
 */
int cuco_llm_diagnose(const struct cuco_llm_diagnose_args *a, struct cuco_llm_result *res,
                      struct cuco_err *err);

/*
 * Append the EVOLVE-BLOCKs of code (markers included; the whole code when it
 * has none) to sb, at most max bytes.
 */
void cuco_llm_add_blocks(struct cuco_strbuf *sb, const char *code, size_t max);

/*
 * Append to out the latest diagnoses (at most two) of program_id's children,
 * newest first, as prompt text; nothing when none has one. Errors: the
 * store's.
 */
int cuco_llm_diagnoses_of_children(struct cuco_store *store, int64_t program_id,
                                   struct cuco_strbuf *out, struct cuco_err *err);

#endif
