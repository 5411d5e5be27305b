/*
 * evolve_flags.c - a `cuco evolve` command line applied to a run's config:
 * what a fresh run takes, what a resumed run keeps, refuses or replaces for
 * this process (see evolve_flags.h).
 */
#include "search/evolve_flags.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "search/llm_operator.h"
#include "store/store.h"
#include "util/paths.h"
#include "util/secret.h"
#include "util/strbuf.h"

#define TEMPLATE_MARKER "// cuco-realizes:" /* the line every realize template holds */

void cuco_evolve_flags_init(struct cuco_evolve_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->generations = f->islands = f->children = f->budget_evals = f->search_seed = -1;
	f->best_of = -1;
	f->budget_minutes = f->explore = f->llm_share = -1;
}

/* A fresh run: every flag given over the defaults. */
static void apply_fresh(const struct cuco_evolve_flags *f, struct cuco_evolve_config *cfg)
{
	const char *op = f->operator_ ? f->operator_ : "builtin";

	cuco_evolve_config_default(cfg);
	if (f->islands > 0)
		cfg->islands = (int)f->islands;
	if (f->children > 0)
		cfg->children_per_island = (int)f->children;
	if (f->search_seed >= 0)
		cfg->search_seed = (uint64_t)f->search_seed;
	if (f->explore >= 0)
		cfg->explore_fraction = f->explore;
	if (f->statistic)
		snprintf(cfg->statistic, sizeof(cfg->statistic), "%s", f->statistic);
	if (f->selection)
		snprintf(cfg->selection, sizeof(cfg->selection), "%s", f->selection);
	if (f->best_of > 0)
		cfg->selection_n = (int)f->best_of;
	if (f->migration)
		snprintf(cfg->migration, sizeof(cfg->migration), "%s", f->migration);
	if (f->freeze)
		snprintf(cfg->freeze, sizeof(cfg->freeze), "%s", f->freeze);
	if (f->search)
		snprintf(cfg->search, sizeof(cfg->search), "%s", f->search);
	if (f->template_path)
		snprintf(cfg->template_path, sizeof(cfg->template_path), "%s", f->template_path);
	snprintf(cfg->operator_, sizeof(cfg->operator_), "%s", op);
	cfg->llm_share = f->llm_share >= 0      ? f->llm_share
	                 : !strcmp(op, "llm")   ? 1.0
	                 : !strcmp(op, "mixed") ? 0.5
	                                        : 0.0;
	snprintf(cfg->timing, sizeof(cfg->timing), "%s",
	         f->timing && !strcmp(f->timing, "burst") ? "burst" : "sustained");
	snprintf(cfg->max_connections, sizeof(cfg->max_connections), "%s",
	         f->max_connections ? f->max_connections : "");
}

/* 1 when path (its links followed) is a regular file inside dir (its links followed). */
static int file_inside(const char *dir, const char *path)
{
	char *d = realpath(dir, NULL), *p = realpath(path, NULL);
	size_t n = d ? strlen(d) : 0;
	struct stat st;
	int ok = d && p && !strncmp(d, p, n) && p[n] == '/' && !stat(p, &st) && S_ISREG(st.st_mode);

	free(d);
	free(p);
	return ok;
}

/* 1 when text has a line that opens with the template marker. */
static int has_marker(const char *text)
{
	const char *m = TEMPLATE_MARKER;

	for (const char *p = text; p; p = strchr(p, '\n')) {
		p += *p == '\n';
		if (!strncmp(p, m, strlen(m)))
			return 1;
	}
	return 0;
}

int cuco_evolve_flags_template(const char *stored, const char *realize_dir, long long run,
                               char *out, size_t n, struct cuco_err *err)
{
	struct cuco_strbuf text = CUCO_STRBUF_INIT;
	const char *base = strrchr(stored, '/');
	size_t len;
	int rc = CUCO_OK;

	base = base ? base + 1 : stored;
	len = strlen(base);
	if (len <= strlen(".cu.in") || strcmp(base + len - strlen(".cu.in"), ".cu.in") ||
	    base[0] == '.' ||
	    strspn(base, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                 "0123456789_.-") != len) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID,
		                  "run %lld: its stored template %s is not a template of the data "
		                  "folder (%s/NAME.cu.in); a resumed run takes its template from "
		                  "there only, or from --template FILE",
		                  run, stored, realize_dir);
		goto out;
	}
	if ((size_t)snprintf(out, n, "%s/%s", realize_dir, base) >= n ||
	    !file_inside(realize_dir, out)) {
		rc = cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "run %lld: its stored template %s: no template %s in the data "
		    "folder's %s; a resumed run takes its template from there only, or "
		    "from --template FILE",
		    run, stored, base, realize_dir);
		goto out;
	}
	if (cuco_strbuf_read_file(&text, out)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "run %lld: template %s: %s", run, out,
		                  strerror(errno));
		goto out;
	}
	if (!has_marker(text.buf))
		rc = cuco_err_set(err, CUCO_ERR_INVALID,
		                  "run %lld: template %s has no '" TEMPLATE_MARKER
		                  "' line: it is not a program template; give --template FILE",
		                  run, out);
out:
	if (rc && n)
		out[0] = '\0';
	cuco_strbuf_release(&text);
	return rc;
}

/*
 * A resumed run: the flags that define it must equal the stored ones
 * (fitness never mixes two statistics, timings or schedules; the operator
 * and its share decide who breeds).
 */
static int check_resume(const struct cuco_evolve_flags *f, const struct cuco_run_rec *stored,
                        struct cuco_evolve_config *cfg, struct cuco_err *err)
{
	long long run = (long long)stored->id;

	if (f->workload && stored->workload && strcmp(f->workload, stored->workload))
		return cuco_err_set(err, CUCO_ERR_USAGE, "run %lld evolved %s, not %s", run,
		                    stored->workload, f->workload);
	if (!stored->workload)
		return cuco_err_set(err, CUCO_ERR_INVALID, "run %lld names no workload", run);
	if (f->statistic && strcmp(f->statistic, cfg->statistic))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "--statistic %s: run %lld ranks by the %s; a resumed run "
		                    "keeps it, so fitness never mixes the two (drop it)",
		                    f->statistic, run, cfg->statistic);
	if (f->migration && strcmp(f->migration, cfg->migration))
		return cuco_err_set(
		    err, CUCO_ERR_USAGE,
		    "--migration %s: run %lld migrates along %s; a resumed run keeps "
		    "it (drop it)",
		    f->migration, run, cfg->migration);
	if ((f->selection && strcmp(f->selection, cfg->selection)) ||
	    (f->best_of > 0 && f->best_of != cfg->selection_n))
		return cuco_err_set(
		    err, CUCO_ERR_USAGE,
		    "--selection/--best-of: run %lld selects parents by %s; a resumed "
		    "run keeps it (drop them)",
		    run, cfg->selection);
	if (f->explore >= 0 && fabs(f->explore - cfg->explore_fraction) > 1e-12)
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "--explore %g: run %lld explores %g of its generations; "
		                    "a resumed run keeps its schedule (drop it)",
		                    f->explore, run, cfg->explore_fraction);
	if (f->template_path)
		snprintf(cfg->template_path, sizeof(cfg->template_path), "%s", f->template_path);
	else if (cfg->template_path[0]) { /* the stored one, from the data folder only */
		const char *home = cuco_home(NULL);
		char dir[PATH_MAX], path[sizeof(cfg->template_path)];
		int rc;

		if (!home)
			return cuco_err_set(
			    err, CUCO_ERR_NOT_FOUND,
			    "run %lld: cuco home not found, so neither is its template; "
			    "set CUCO_HOME",
			    run);
		snprintf(dir, sizeof(dir), "%s/share/realize", home);
		if ((rc = cuco_evolve_flags_template(cfg->template_path, dir, run, path,
		                                     sizeof(path), err)))
			return rc;
		snprintf(cfg->template_path, sizeof(cfg->template_path), "%s", path);
	}
	if (!cfg->operator_[0]) /* stored before the operator was: the caller decides */
		return CUCO_OK;
	if (f->operator_ && strcmp(f->operator_, cfg->operator_))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "--operator %s: run %lld was made with --operator %s, which a "
		                    "resumed run keeps; drop --operator",
		                    f->operator_, run, cfg->operator_);
	if (f->llm_share >= 0 && strcmp(cfg->operator_, "mixed"))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "--llm-share %g: run %lld was made with --operator %s, which "
		                    "takes no share; drop --llm-share",
		                    f->llm_share, run, cfg->operator_);
	if (f->llm_share >= 0 && fabs(f->llm_share - cfg->llm_share) > 1e-9)
		return cuco_err_set(
		    err, CUCO_ERR_USAGE,
		    "--llm-share %g: run %lld was made with --llm-share %g, which a "
		    "resumed run keeps; drop --llm-share",
		    f->llm_share, run, cfg->llm_share);
	return CUCO_OK;
}

int cuco_evolve_flags_apply(const struct cuco_evolve_flags *f, const struct cuco_run_rec *stored,
                            struct cuco_evolve_config *cfg, FILE *notes, struct cuco_err *err)
{
	const char *mc = f->max_connections ? f->max_connections : "";
	int rc;

	if (f->best_of > 0 && !stored && (!f->selection || strcmp(f->selection, "best_of_n")))
		return cuco_err_set(err, CUCO_ERR_USAGE, "--best-of is for --selection best_of_n");
	if (!stored) {
		apply_fresh(f, cfg);
	} else {
		cuco_evolve_config_default(cfg);
		if ((rc = cuco_evolve_config_from_json(stored->config, cfg, err))) {
			cuco_err_prefix(err, "run %lld: ", (long long)stored->id);
			return rc;
		}
		if ((rc = check_resume(f, stored, cfg, err)))
			return rc;
	}
	if (!stored) {
		unsigned links[CUCO_MAX_ISLANDS];
		char why[160];

		if (cuco_migration_parse(cfg->migration, cfg->islands, links, why, sizeof(why)))
			return cuco_err_set(err, CUCO_ERR_USAGE, "--migration: %s", why);
	}
	if (f->generations > CUCO_EVOLVE_MAX_GENERATIONS)
		return cuco_err_set(err, CUCO_ERR_USAGE, "--generations %lld: at most %d",
		                    f->generations, CUCO_EVOLVE_MAX_GENERATIONS);
	if (f->generations > 0)
		cfg->generations = (int)f->generations;
	if (f->budget_evals > 0)
		cfg->budget_evals = (int)f->budget_evals;
	if (f->budget_minutes > 0)
		cfg->budget_minutes = f->budget_minutes;
	if (f->no_pipeline) /* on resume: the rest of the run, in this process */
		cfg->pipeline = 0;
	if (!stored)
		return CUCO_OK;
	/* The timing is the run's: a resumed run keeps it, so fitness never mixes the two. */
	if (f->timing && strcmp(f->timing, cfg->timing))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "run %lld times candidates %s; --timing %s would mix timings "
		                    "in one run (drop it)",
		                    (long long)stored->id, cfg->timing, f->timing);
	/* The hardware queues change what some placements cost (docs/harness.md). */
	if (notes && strcmp(mc, cfg->max_connections))
		fprintf(notes,
		        "cuco evolve: warning: run %lld started with CUDA_DEVICE_MAX_CONNECTIONS "
		        "%s, this process has %s: candidates' times may not compare across the two "
		        "(lsa stream overlap's do not)\n",
		        (long long)stored->id,
		        cfg->max_connections[0] ? cfg->max_connections : "unset",
		        *mc ? mc : "unset");
	return CUCO_OK;
}

/* "A, B, C" from names. */
static void join_names(const char (*names)[32], int n, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (int k = 0; k < n && at < len; k++) {
		int w = snprintf(out + at, len - at, "%s%s", k ? ", " : "", names[k]);
		at += w > 0 ? (size_t)w : 0;
	}
}

int cuco_evolve_flags_shapes(const char (*given)[32], int ngiven, const char *default_shape,
                             long long run, const char *stored_shape,
                             struct cuco_evolve_config *cfg, struct cuco_err *err)
{
	char a[160], b[160];
	int same;

	if (!run) {
		cfg->nshapes = 0;
		for (int k = 0; k < ngiven && k < CUCO_EVOLVE_MAX_SHAPES; k++)
			snprintf(cfg->shapes[cfg->nshapes++], sizeof(cfg->shapes[0]), "%s",
			         given[k]);
		if (!cfg->nshapes)
			snprintf(cfg->shapes[cfg->nshapes++], sizeof(cfg->shapes[0]), "%s",
			         default_shape);
		return CUCO_OK;
	}
	if (!cfg->nshapes && stored_shape)
		snprintf(cfg->shapes[cfg->nshapes++], sizeof(cfg->shapes[0]), "%s", stored_shape);
	if (!ngiven)
		return CUCO_OK;
	same = ngiven == cfg->nshapes;
	for (int k = 0; same && k < ngiven; k++)
		same = !strcmp(given[k], cfg->shapes[k]);
	if (same)
		return CUCO_OK;
	join_names((const char(*)[32])cfg->shapes, cfg->nshapes, a, sizeof(a));
	join_names(given, ngiven, b, sizeof(b));
	return cuco_err_set(err, CUCO_ERR_USAGE,
	                    "run %lld evolves for shapes %s; --shape %s would change what its "
	                    "fitness means (drop --shape)",
	                    run, a, b);
}

/* A flag given on resume that replaces a stored setting, for this process only. */
static void note(FILE *notes, long long run, const char *flag, const char *given,
                 const char *stored)
{
	if (notes)
		fprintf(notes,
		        "cuco evolve: run %lld: %s %s replaces the stored %s for this resume (the "
		        "stored config is unchanged)\n",
		        run, flag, given, stored);
}

/* note() for a number; unit follows the stored value ("" or " s"). */
static void note_num(FILE *notes, long long run, const char *flag, double given, double stored,
                     const char *unit)
{
	char g[32], st[40];

	snprintf(g, sizeof(g), "%.15g", given);
	snprintf(st, sizeof(st), "%.15g%s", stored, unit);
	note(notes, run, flag, g, st);
}

int cuco_evolve_llm_resume(const struct cuco_evolve_llm_flags *f,
                           const struct cuco_evolve_config *cfg, const char *config, long long run,
                           struct cuco_llm_stored *st, int *have, FILE *notes, struct cuco_err *err)
{
	struct cuco_llm_operator_config *c = &st->cfg;
	struct cuco_strbuf a = CUCO_STRBUF_INIT, b = CUCO_STRBUF_INIT;
	int rc, found;

	*have = 0;
	if (!strcmp(cfg->operator_, "builtin"))
		return CUCO_OK;
	if ((rc = cuco_llm_stored_from_json(config, st, &found, err)))
		return rc;
	if (!found)
		return cuco_err_set(err, CUCO_ERR_PARSE,
		                    "run %lld: its config says operator %s but holds no \"llm\" "
		                    "settings",
		                    run, cfg->operator_);
	*have = 1;
	for (int i = 0; i < c->nmodels; i++)
		cuco_strbuf_addf(&a, "%s--llm-model %s", i ? " " : "", c->models[i]);
	for (int i = 0; i < f->nmodels; i++)
		cuco_strbuf_addf(&b, "%s--llm-model %s", i ? " " : "", f->models[i]);
	if (f->nmodels && strcmp(a.buf, b.buf)) {
		rc = cuco_err_set(err, CUCO_ERR_USAGE,
		                  "%s: run %lld was made with %s, which a resumed run keeps (the "
		                  "bandit's arms); drop --llm-model",
		                  b.buf, run, a.buf);
		goto out;
	}
	if (f->api && cuco_llm_api_parse(f->api) != c->llm.api) {
		note(notes, run, "--llm-api", f->api, cuco_llm_api_name(c->llm.api));
		c->llm.api = cuco_llm_api_parse(f->api);
		if (!f->key_env)
			c->llm.api_key_env = cuco_llm_api_key_env(c->llm.api);
	}
	if (f->diagnose && !c->diagnose) {
		note(notes, run, "--llm-diagnose", "on", "off");
		c->diagnose = 1;
	}
	if (f->base_url && strcmp(f->base_url, c->llm.base_url ? c->llm.base_url : "")) {
		note(notes, run, "--llm-base-url", f->base_url,
		     c->llm.base_url ? c->llm.base_url : "(none)");
		c->llm.base_url = f->base_url;
	}
	if (f->key_env && strcmp(f->key_env, c->llm.api_key_env ? c->llm.api_key_env : "")) {
		note(notes, run, "--llm-key-env", f->key_env,
		     c->llm.api_key_env ? c->llm.api_key_env : "(the api's)");
		c->llm.api_key_env = f->key_env;
		(void)cuco_secret_env(f->key_env); /* out of the environment before any child */
	}
	if (f->budget_tokens > 0 && f->budget_tokens != c->llm.budget_tokens) {
		note_num(notes, run, "--llm-budget-tokens", (double)f->budget_tokens,
		         (double)c->llm.budget_tokens, "");
		c->llm.budget_tokens = f->budget_tokens;
	}
	if (f->budget_cost > 0 && f->budget_cost != c->llm.budget_cost) {
		note_num(notes, run, "--llm-budget-cost", f->budget_cost, c->llm.budget_cost, "");
		c->llm.budget_cost = f->budget_cost;
	}
	if (f->timeout_s > 0 && (long)(f->timeout_s * 1000) != c->llm.timeout_ms) {
		note_num(notes, run, "--llm-timeout", f->timeout_s, c->llm.timeout_ms / 1000.0,
		         " s");
		c->llm.timeout_ms = (long)(f->timeout_s * 1000);
	}
	if (f->max_tokens > 0 && f->max_tokens != c->llm.max_tokens) {
		note_num(notes, run, "--llm-max-tokens", f->max_tokens, c->llm.max_tokens, "");
		c->llm.max_tokens = f->max_tokens;
	}
	if (f->nprices > 0) {
		int n = f->nprices < CUCO_LLM_MAX_PRICES ? f->nprices : CUCO_LLM_MAX_PRICES;
		note(notes, run, "--llm-price", "(all of them)", "prices");
		memset(c->llm.prices, 0, sizeof(c->llm.prices));
		memcpy(c->llm.prices, f->prices, (size_t)n * sizeof(f->prices[0]));
		c->llm.nprices = n;
	}
out:
	cuco_strbuf_release(&a);
	cuco_strbuf_release(&b);
	return rc;
}
