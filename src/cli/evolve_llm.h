/*
 * evolve_llm.h - the LLM operator's side of `cuco evolve`: --operator,
 * --llm-share and the endpoint flags, checked for a fresh run, taken over a
 * resumed run's stored settings, and the operator made from them.
 */
#ifndef CUCO_CLI_EVOLVE_LLM_H
#define CUCO_CLI_EVOLVE_LLM_H

#include <stdint.h>

#include "cli/cli.h"
#include "search/evolve.h"
#include "search/llm_operator.h"

/* The LLM operator's flags: --operator, --llm-share and the shared endpoint flags. */
struct cli_evolve_llm {
	const char *operator_; /* "builtin", "llm", "mixed"; NULL: not given */
	double share;          /* < 0: not given */
	int diagnose;          /* --llm-diagnose given */
	struct cli_llm_flags ep;
};

/* Nothing given. */
void cli_evolve_llm_init(struct cli_evolve_llm *f);

/* --operator, --llm-share, --llm-diagnose and the endpoint flags, into a struct cli_evolve_llm. */
extern const struct cli_flag cli_evolve_llm_table[];

/*
 * Check the LLM flags of a fresh run before anything runs: an LLM operator
 * needs an endpoint and a model, from the flags or the environment. Returns
 * 0 or CUCO_ERR_USAGE (printed).
 */
int cli_evolve_llm_check(struct cli_evolve_llm *f);

/*
 * Resume: the operator and its settings come from the run config
 * (cuco_evolve_llm_resume(): --llm-model must match, the endpoint flags
 * replace the stored values with a note; the environment is not read). A
 * config stored before the operator was recorded takes the flags as a fresh
 * run does. *have says whether *st holds the stored settings. Returns 0,
 * CUCO_ERR_USAGE (err set, or printed by cli_evolve_llm_check()) or
 * CUCO_ERR_PARSE.
 */
int cli_evolve_llm_resume(struct cli_evolve_llm *f, const struct cuco_evolve_config *cfg,
                          const char *config, long long run, struct cuco_llm_stored *st, int *have,
                          struct cuco_err *err);

/*
 * Create the LLM operator for the run: from the stored settings st on resume,
 * else from the flags (checked by cli_evolve_llm_check()), whose settings then
 * go into *json (malloc'd) for the run config.
 */
int cli_evolve_llm_setup(struct cli_evolve_llm *f, const struct cuco_llm_stored *st,
                         struct cuco_store *store, const struct cuco_manifest *m, const char *shape,
                         const char *fitness_shapes, const struct cuco_design_space *ds,
                         const char *ds_text, const struct cuco_hw_facts *facts, uint64_t seed,
                         struct cuco_llm_operator **op, char **json, struct cuco_err *err);

/* After the run: the calls still open and the per-model statistics into the store and stdout. */
void cli_evolve_llm_finish(struct cuco_llm_operator *op, int64_t run_id);

#endif
