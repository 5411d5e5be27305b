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

int cli_evolve_llm_flag(struct cli_evolve_llm *f, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	int k;

	if (strcmp(a, "--operator") && strncmp(a, "--llm-", 6))
		return 0;
	k = cli_llm_flag("evolve", &f->ep, argc, argv, i);
	if (k)
		return k;
	if (strcmp(a, "--operator") && strcmp(a, "--llm-share")) {
		cli_usage_error("evolve", "unknown option %s", a);
		return -1;
	}
	if (!(v = cli_value("evolve", argc, argv, i)))
		return -1;
	if (!strcmp(a, "--operator")) {
		if (strcmp(v, "builtin") && strcmp(v, "llm") && strcmp(v, "mixed")) {
			cli_usage_error("evolve", "--operator %s: give builtin, llm or mixed", v);
			return -1;
		}
		f->operator_ = v;
	} else if (cli_double("evolve", a, v, 0.0, 1.0, &f->share)) {
		return -1;
	}
	return 1;
}

int cli_evolve_llm_check(struct cli_evolve_llm *f)
{
	char who[64];

	if (!f->operator_)
		f->operator_ = "builtin";
	if (!strcmp(f->operator_, "builtin")) {
		if (f->share >= 0)
			return cli_usage_error("evolve", "--llm-share needs --operator mixed");
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
		if (!(*json = cuco_llm_operator_config_to_json(&c)))
			return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
	}
	c.llm.seed = seed;
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
