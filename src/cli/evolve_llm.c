/*
 * evolve_llm.c - the LLM operator's side of `cuco evolve` (see evolve_llm.h).
 */
#include "cli/evolve_llm.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "search/evolve_flags.h"
#include "util/paths.h"

void cli_evolve_llm_init(struct cli_evolve_llm *f)
{
	memset(f, 0, sizeof(*f));
	cli_llm_flags_init(&f->ep);
	f->share = -1;
}

static const char *const operators[] = {"builtin", "llm", "mixed", NULL};

const struct cli_flag cli_evolve_llm_table[] = {
    {CLI_ENUM, "--operator", "K", "builtin (default), llm, or mixed (both)",
     CLI_AT(struct cli_evolve_llm, operator_), .values = operators,
     .hint = "give builtin, llm or mixed"},
    {CLI_DOUBLE, "--llm-share", "F", "mixed: fraction of children the LLM makes (default 0.5)",
     CLI_AT(struct cli_evolve_llm, share), .dlo = 0, .dhi = 1},
    {CLI_BOOL, "--llm-diagnose", NULL,
     "after an LLM child fails or is slower than its parent, the model reads its log and "
     "writes a short diagnosis, stored with the evaluation and shown in that lineage's next "
     "prompts (one more call per such child; off by default)",
     CLI_AT(struct cli_evolve_llm, diagnose)},
    {CLI_TABLE, .table = cli_llm_table, CLI_AT(struct cli_evolve_llm, ep)},
    {CLI_END},
};

int cli_evolve_llm_check(struct cli_evolve_llm *f)
{
	char who[64];

	if (!f->operator_)
		f->operator_ = "builtin";
	if (!strcmp(f->operator_, "builtin")) {
		if (f->share >= 0)
			return cli_usage_error("evolve", "--llm-share needs --operator mixed");
		if (f->diagnose)
			return cli_usage_error("evolve",
			                       "--llm-diagnose needs --operator llm or mixed");
		f->share = 0;
		return 0;
	}
	snprintf(who, sizeof(who), "--operator %s", f->operator_);
	if (cli_llm_resolve("evolve", &f->ep, who))
		return CUCO_ERR_USAGE;
	if (f->share < 0)
		f->share = !strcmp(f->operator_, "llm") ? 1.0 : 0.5;
	else if (!strcmp(f->operator_, "llm"))
		return cli_usage_error("evolve", "--llm-share needs --operator mixed");
	return 0;
}

int cli_evolve_llm_resume(struct cli_evolve_llm *f, const struct cuco_evolve_config *cfg,
                          const char *config, long long run, struct cuco_llm_stored *st, int *have,
                          struct cuco_err *err)
{
	struct cuco_evolve_llm_flags ef = {
	    .models = f->ep.models,
	    .nmodels = f->ep.nmodels,
	    .api = f->ep.api,
	    .diagnose = f->diagnose,
	    .base_url = f->ep.base_url,
	    .key_env = f->ep.key_env,
	    .budget_tokens = f->ep.budget_tokens,
	    .budget_cost = f->ep.budget_cost,
	    .timeout_s = f->ep.timeout_s,
	    .max_tokens = f->ep.max_tokens,
	    .prices = f->ep.prices,
	    .nprices = f->ep.nprices,
	};

	*have = 0;
	if (!cfg->operator_[0])
		return cli_evolve_llm_check(f);
	f->operator_ = cfg->operator_;
	f->share = cfg->llm_share;
	return cuco_evolve_llm_resume(&ef, cfg, config, run, st, have, stderr, err);
}

int cli_evolve_llm_setup(struct cli_evolve_llm *f, const struct cuco_llm_stored *st,
                         struct cuco_store *store, const struct cuco_manifest *m, const char *shape,
                         const char *fitness_shapes, const struct cuco_design_space *ds,
                         const char *ds_text, const struct cuco_hw_facts *facts, uint64_t seed,
                         struct cuco_llm_operator **op, char **json, struct cuco_err *err)
{
	struct cuco_llm_operator_config c;
	static char share[PATH_MAX];
	const char *home = cuco_home(err);

	if (!home)
		return err->code ? err->code : CUCO_ERR_NOT_FOUND;
	snprintf(share, sizeof(share), "%s/share", home);
	if (st) {
		c = st->cfg;
	} else {
		cuco_llm_operator_config_init(&c);
		cli_llm_config(&f->ep, seed, &c.llm);
		for (int i = 0; i < f->ep.nmodels && i < CUCO_LLM_MAX_MODELS; i++)
			c.models[i] = f->ep.models[i];
		c.nmodels = f->ep.nmodels;
		c.diagnose = f->diagnose;
		if (!(*json = cuco_llm_operator_config_to_json(&c)))
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	}
	c.llm.sampling_seed = seed;
	c.share_dir = share;
	c.workload = m->name;
	c.workload_description = m->description;
	c.shape = shape;
	c.fitness_shapes = fitness_shapes;
	c.ds = ds;
	c.design_space_text = ds_text;
	c.facts = facts;
	c.store = store;
	c.seed = seed;
	return cuco_llm_operator_new(&c, op, err);
}

void cli_evolve_llm_finish(struct cuco_llm_operator *op, int64_t run_id)
{
	struct cuco_err err;

	if (!op || !run_id)
		return;
	cuco_err_clear(&err);
	if (cuco_llm_operator_finish(op, run_id, &err))
		cli_fail(&err);
	cuco_llm_operator_print_stats(op, stdout);
}
