/*
 * llm_settings.h - the LLM operator's settings (llm_settings.c): defaults,
 * the JSON a run keeps of them, and reading them back from a run's config.
 */
#ifndef CUCO_SEARCH_LLM_SETTINGS_H
#define CUCO_SEARCH_LLM_SETTINGS_H

#include <stdint.h>

#include "llm/client.h"
#include "program/directive.h"
#include "search/llm_bandit.h"
#include "util/error.h"

struct cuco_store;
struct cuco_hw_facts;

/* Temperatures of the operator's calls. */
struct cuco_llm_temps {
	double explore[3]; /* full rewrites while exploring, in rotation: 0.2, 0.5, 0.8 */
	double exploit;    /* diffs and rewrites while exploiting: 0.2 */
	double crossover;  /* crossovers: 0.5 */
	double summary;    /* meta-summaries: 0.3 */
};

/*
 * Operator configuration. Borrowed; everything must outlive the operator.
 * cuco_llm_operator_config_init() sets the defaults noted here.
 */
struct cuco_llm_operator_config {
	struct cuco_llm_config llm; /* endpoint, key variable, timeouts, budgets, prices;
	                               llm.model is ignored: models[] below */
	const char *models[CUCO_LLM_MAX_MODELS];
	int nmodels;
	const char *share_dir;            /* holds prompts/ */
	const char *workload;             /* name */
	const char *workload_description; /* "" when none */
	const char *shape;                /* name, or NULL */
	const char *fitness_shapes;       /* "4096, 8192" when fitness is the geometric mean over
	                                     several shapes (latencies the primary's); NULL: one */
	const struct cuco_design_space *ds;
	const char *design_space_text;     /* share/design_space.json as text */
	const struct cuco_hw_facts *facts; /* NULL: none known */
	struct cuco_store *store;
	uint64_t seed;      /* of mode, temperature and bandit choices */
	int meta_summaries; /* 1 (default): LLM recommendations beside each statistical summary */
	int summary_max_tokens;      /* completion limit of a meta-summary call: 1024 */
	int diagnose;                /* 1: a diagnosis of each failed or regressed LLM child
	                                (--llm-diagnose); 0 (default): none */
	int diagnose_max_tokens;     /* completion limit of a diagnosis call: 400 */
	struct cuco_llm_temps temps; /* defaults above */
};

/* Defaults: those of cuco_llm_config_init() and the fields above; no endpoint or model. */
void cuco_llm_operator_config_init(struct cuco_llm_operator_config *c);

/*
 * The settings of c that a run keeps, as a JSON object (malloc'd; NULL out
 * of memory): api, endpoint, models, key variable (its name only: the key itself
 * is never in c), max_tokens, timeouts, retries, budgets, prices,
 * temperatures, meta-summary and diagnosis settings. cuco evolve stores it as the run
 * config's "llm".
 */
char *cuco_llm_operator_config_to_json(const struct cuco_llm_operator_config *c);

/* Operator settings read back from a run config; owns the strings cfg points to. */
struct cuco_llm_stored {
	struct cuco_llm_operator_config cfg; /* the stored settings over the defaults */
	void *json;                          /* the parsed config (owner of the strings) */
};

/*
 * Read the "llm" object of a run config (JSON text) into *out: the stored
 * settings over cuco_llm_operator_config_init()'s defaults (store, share_dir,
 * workload, ... stay unset). *found is 0 when the config has no "llm" (a
 * builtin run, or one made before settings were stored); *out is then just
 * the defaults. Errors: CUCO_ERR_PARSE naming the field ("llm.models[1]: not
 * a string"). Release *out with cuco_llm_stored_release() in every case.
 */
int cuco_llm_stored_from_json(const char *run_config, struct cuco_llm_stored *out, int *found,
                              struct cuco_err *err);

/* Free what cuco_llm_stored_from_json() kept; NULL is allowed. */
void cuco_llm_stored_release(struct cuco_llm_stored *s);

#endif
