/* cmd_evolve.c - `cuco evolve`: the slow path. Islands of candidates bred from the fast-path
 * seed, judged by the cascade, kept in the store; Ctrl-C stops cleanly and --resume continues. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/evolve_llm.h"
#include "cli/evolve_progress.h"
#include "program/directive.h"
#include "program/realize.h"
#include "search/evolve.h"
#include "search/evolve_flags.h"
#include "search/recheck.h"
#include "farm/slurm.h"
#include "search/slots.h"
#include "search/llm_operator.h"
#include "util/paths.h"
#include "util/strbuf.h"

static const char usage[] =
    "usage: cuco evolve <workload> --shape S [--shape S2 ...] [options]\n"
    "       cuco evolve --resume RUN [options]\n"
    "\n"
    "Search the design space for the fastest correct program: islands of\n"
    "candidates bred from the fast-path seed by the built-in operator (mutation\n"
    "and crossover of directives, realised through share/realize/<workload>.cu.in\n"
    "when it exists, else the seed's own knobs), each verified and timed beside\n"
    "the baseline (fitness = baseline / candidate latency). Every candidate and\n"
    "evaluation is stored; Ctrl-C stops after the current batch (status\n"
    "'interrupted'); --resume continues a run without evaluating anything twice.\n";

static const char resume_llm_help[] =
    "With --resume the operator and its settings come from the run's stored config\n"
    "(api, endpoint, models, key variable name, budgets, timeouts, prices,\n"
    "temperatures, meta-summaries, diagnoses; never the API key): no --llm-* flag is\n"
    "needed. --operator, --llm-share and --llm-model must equal the stored values\n"
    "(exit 5 otherwise); --llm-api, --llm-base-url, --llm-key-env,\n"
    "--llm-budget-tokens, --llm-budget-cost, --llm-timeout, --llm-max-tokens,\n"
    "--llm-price and --llm-diagnose replace them for that process, with a note.\n";

/* What the command line gives; the struct the flag table fills. */
struct evolve_args {
	struct cuco_run_opts run;
	struct cuco_evolve_flags ef; /* ef.workload: the positional argument */
	struct cli_evolve_llm lf;
	char shape_names[CUCO_EVOLVE_MAX_SHAPES][32];
	int nshape_names;
	long long resume, slots;
	const char *store, *farm, *partition, *farm_args;
	int no_recheck;
	const char *pos[1];
	int npos;
};

/* One --shape value into the list: 0, or the reason for a fifth or a too long name. */
static int add_shape(void *dest, const char *flag, const char *v, char *msg, size_t len)
{
	struct evolve_args *a = dest;

	if (a->nshape_names == CUCO_EVOLVE_MAX_SHAPES) {
		snprintf(msg, len, "%s %s: at most %d shapes per run", flag, v,
		         CUCO_EVOLVE_MAX_SHAPES);
		return -1;
	}
	if (strlen(v) >= sizeof(a->shape_names[0])) {
		snprintf(msg, len, "%s %s: no shape has so long a name", flag, v);
		return -1;
	}
	snprintf(a->shape_names[a->nshape_names++], sizeof(a->shape_names[0]), "%s", v);
	return 0;
}

static const char *const statistics[] = {"median", "mean", NULL};
static const char *const sels[] = {"rank", "power_law", "weighted", "beam", "best_of_n", NULL};
static const char *const farm_kinds[] = {"slurm", NULL};

#define EVOLVE_MAX ((long long)1 << 40) /* bound of the counts */

static const struct cli_flag evolve_flags[] = {
    {CLI_CALL, "--shape", "S",
     "shape to evolve for (default: the workload's default), by name or by its values "
     "(4096x14784x8192 or M=4096,N=14784,K=8192: stored as the former); repeat it (up to 4 "
     "shapes) to evolve for several at once: fitness is then the geometric mean over the "
     "shapes of baseline / candidate latency, a candidate failing at one shape fails, and "
     "each batch runs once per shape; the first is the primary (the run's shape, its "
     "latencies)",
     .fn = add_shape},
    {CLI_INT, "--generations", "N", "generations (default 20)",
     CLI_AT(struct evolve_args, ef.generations), .lo = 1, .hi = EVOLVE_MAX},
    {CLI_INT, "--islands", "N", "islands (default 2)", CLI_AT(struct evolve_args, ef.islands),
     .lo = 1, .hi = 16},
    {CLI_INT, "--children-per-island", "N",
     "children each island breeds per generation (default 4; the run config's "
     "children_per_island)",
     CLI_AT(struct evolve_args, ef.children), .lo = 1, .hi = EVOLVE_MAX},
    /* the flag's old name, kept for users' scripts (docs/search.md) */
    {CLI_INT, "--children", "N", NULL, CLI_AT(struct evolve_args, ef.children), .lo = 1,
     .hi = EVOLVE_MAX, .hidden = 1},
    {CLI_INT, "--budget-evals", "N", "stop after N evaluations",
     CLI_AT(struct evolve_args, ef.budget_evals), .lo = 1, .hi = EVOLVE_MAX},
    {CLI_DOUBLE, "--budget-minutes", "M", "stop after M minutes",
     CLI_AT(struct evolve_args, ef.budget_minutes), .dlo = 0.01, .dhi = 1e6},
    {CLI_INT, "--search-seed", "N", "search seed (default 1): same seed, same candidates",
     CLI_AT(struct evolve_args, ef.search_seed), .lo = 0, .hi = EVOLVE_MAX},
    {CLI_ENUM, "--statistic", "S",
     "median (default) or mean: what a latency is, over the timed runs; fitness = baseline / "
     "candidate, both by it. mean counts runs that are slow now and then (e.g. every 8th, "
     "docs/overlap.md), which the median leaves out",
     CLI_AT(struct evolve_args, ef.statistic), .values = statistics},
    {CLI_ENUM, "--selection", "S",
     "parent selection: rank (default), power_law, weighted, beam or best_of_n (docs/search.md)",
     CLI_AT(struct evolve_args, ef.selection), .values = sels},
    {CLI_STRING, "--migration", "GRAPH", "where migrants go: ring (default), all, or edges 0>1,1>2",
     CLI_AT(struct evolve_args, ef.migration)},
    {CLI_INT, "--best-of", "N", "best_of_n: members drawn per parent (default 3)",
     CLI_AT(struct evolve_args, ef.best_of), .lo = 2, .hi = 1000},
    {CLI_DOUBLE, "--explore", "F",
     "share of the run's generations that explore, 0..1 (default 0.4; counted over the "
     "generations the --budget-evals reaches when it ends the run sooner)",
     CLI_AT(struct evolve_args, ef.explore), .dlo = 0, .dhi = 1},
    {CLI_INT, "--resume", "RUN",
     "continue evolve run RUN (its stored config; the flags above may raise --generations and "
     "the budgets; the run's --timing and --shape list stay)",
     CLI_AT(struct evolve_args, resume), .lo = 1, .hi = EVOLVE_MAX},
    {CLI_STRING, "--template", "FILE", "program template (default share/realize/<workload>.cu.in)",
     CLI_AT(struct evolve_args, ef.template_path)},
    {CLI_STRING, "--freeze", "LIST",
     "dimensions and knobs to leave as the seed has them, e.g. tile_n,gemm_lib "
     "(comma-separated)",
     CLI_AT(struct evolve_args, ef.freeze)},
    {CLI_STRING, "--search", "LIST",
     "knobs the design space holds by default (\"searched\": false, e.g. split) to search all "
     "the same",
     CLI_AT(struct evolve_args, ef.search)},
    {CLI_INT, "--slots", "N",
     "candidate groups evaluated at once, each on its own GPUs (default: GPUs / ranks, fork "
     "mode only; 1 = one at a time)",
     CLI_AT(struct evolve_args, slots), .lo = 1, .hi = EVOLVE_MAX},
    {CLI_ENUM, "--farm", "slurm",
     "evaluate candidate groups as Slurm job steps (srun) on the cluster's GPU nodes, --slots "
     "at once (default: the farm's GPUs / ranks); this node compiles, stores and decides "
     "(docs/farm.md)",
     CLI_AT(struct evolve_args, farm), .values = farm_kinds},
    {CLI_STRING, "--partition", "P", "--farm: the Slurm partition (default: Slurm's)",
     CLI_AT(struct evolve_args, partition)},
    {CLI_STRING, "--farm-args", "'ARGS'",
     "--farm: more srun arguments, e.g. '--time=10 --qos=short'",
     CLI_AT(struct evolve_args, farm_args)},
    {CLI_BOOL, "--no-recheck", NULL, "skip the re-check of the best program (cuco recheck RUN)",
     CLI_AT(struct evolve_args, no_recheck)},
    {CLI_BOOL, "--no-pipeline", NULL,
     "breed each generation after the one before is judged; by default generation g+1 is bred "
     "from the results up to g-1 and compiled while g runs on the GPUs (docs/search.md)",
     CLI_AT(struct evolve_args, ef.no_pipeline)},
    CLI_STORE_FLAG(struct evolve_args, store),
    {CLI_HEADING, .help = "LLM operator (docs/llm.md):"},
    {CLI_TABLE, .table = cli_evolve_llm_table, CLI_AT(struct evolve_args, lf)},
    {CLI_TEXT, .help = resume_llm_help},
    {CLI_HEADING, .help = "Run options (--input-seed aside: evolve generates inputs from seed 1):"},
    {CLI_REFUSE, "--seed",
     .hint = "--seed names no seed: --input-seed N (the workload's inputs) or --search-seed N "
             "(which candidates)"},
    {CLI_REFUSE, "--input-seed",
     .hint = "--input-seed: evolve generates inputs from seed 1 (its recheck from fresh ones); "
             "bench and eval take it"},
    {CLI_TABLE, .table = cli_run_table, CLI_AT(struct evolve_args, run)},
    {CLI_END},
};

const struct cli_spec cmd_evolve_spec = {
    .name = "evolve",
    .usage = usage,
    .flags = evolve_flags,
    .args_size = sizeof(struct evolve_args),
    .pos = offsetof(struct evolve_args, pos),
    .npos = offsetof(struct evolve_args, npos),
    .max_pos = 1,
};

static volatile sig_atomic_t stop_flag; /* the signal that stopped the search; 0: none */

/* How the live run was stopped, for the store's reason. */
static const char *stop_name(void)
{
	return stop_flag == SIGINT    ? "SIGINT (Ctrl-C)"
	       : stop_flag == SIGTERM ? "SIGTERM"
	       : stop_flag == SIGHUP  ? "SIGHUP"
	                              : "a signal";
}

/* ---- --farm slurm ---- */

static struct cuco_farm farm;
static struct cuco_runner farm_runner; /* the run options' runner: farm's job steps */
static int farm_on;
static struct cuco_evaluator farm_inner; /* the cascade evaluator the farm's wraps */
static int64_t farm_run;                 /* the run id the farm's tag names */
static const char *farm_store;           /* the store's path, for the tag */

/* Ctrl-C, kill, hangup: stop after the batch in flight; on a farm its steps are cancelled
 * (farm/slurm.h). */
static void on_stop_signal(int sig)
{
	stop_flag = sig;
	if (farm_on)
		cuco_farm_interrupt();
	if (sig == SIGINT)
		signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends cuco at once */
}

static void stop_signals(int on)
{
	struct sigaction sa;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on ? on_stop_signal : SIG_DFL;
	/* on a farm, no SA_RESTART: its waits see EINTR; here the batch in flight finishes */
	sa.sa_flags = farm_on ? 0 : SA_RESTART;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* A batch whose steps were cancelled or given up is no outcome: the loop stores none of it. */
static int farm_verdict(int rc, struct cuco_err *err)
{
	if (rc)
		return rc;
	if (cuco_farm_interrupted())
		return cuco_err_set(err, CUCO_ERR_SYSTEM,
		                    "interrupted: the farm's steps were cancelled (nothing of "
		                    "their batch is stored)");
	if (cuco_farm_gave_up())
		return cuco_err_set(err, CUCO_ERR_SYSTEM,
		                    "the farm gave up on a step lost %d times for the node's "
		                    "reason (nothing of its batch is stored)",
		                    farm.requeues + 1);
	return CUCO_OK;
}

static int farm_batch(void *ctx, const struct cuco_candidate *c, int n,
                      struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	return farm_verdict(farm_inner.evaluate_batch(ctx, c, n, outs, err), err);
}

static int farm_one(void *ctx, const struct cuco_candidate *c, struct cuco_eval_outcome *out,
                    struct cuco_err *err)
{
	return farm_verdict(farm_inner.evaluate(ctx, c, out, err), err);
}

static int max_run_id(const struct cuco_run_rec *r, void *arg, struct cuco_err *err)
{
	int64_t *max = arg;

	(void)err;
	if (r->id > *max)
		*max = r->id;
	return 0;
}

/* Steps in flight by default: the GPUs of the allocation (or partition) / ranks. */
static int farm_default_slots(const struct cuco_farm *f)
{
	int n = cuco_farm_total_gpus(f) / (f->ranks > 0 ? f->ranks : 1);

	return n > 0 ? n : 1;
}

/*
 * The farm, checked before anything is stored: Slurm's view (a node with
 * ranks GPUs), the run directory seen by the steps, leftover steps of a
 * resumed run cancelled, and the facts of a node as its probe step finds
 * them (into *f, *fp = f; NULL when the probe fails).
 */
static int farm_setup(const struct cuco_manifest *m, const struct cuco_run_opts *run,
                      const struct cuco_shape *const *shapes, int nshapes, const char *partition,
                      const char *args, struct cuco_store *store, long long resume,
                      struct cuco_hw_facts *f, const struct cuco_hw_facts **fp,
                      struct cuco_err *err)
{
	int rc, have = 0;

	*fp = NULL;
	if ((rc = cuco_manifest_check_ranks(m, run->ranks, 1, err)))
		return rc;
	for (int i = 0; i < nshapes; i++)
		if ((rc = cuco_manifest_check_shape(m, shapes[i], run->ranks, err)))
			return rc;
	farm_run = resume;
	if (!resume) { /* the id the run will get: one writer, ids in order */
		if ((rc = cuco_store_run_each(store, max_run_id, &farm_run, err)))
			return rc;
		farm_run++;
	}
	farm_store = cuco_store_path(store);
	if ((rc = cuco_farm_prepare(&farm, "evolve", run->ranks, partition, args, farm_store,
	                            farm_run, resume != 0, f, &have, err)))
		return rc;
	if (have) {
		*fp = f;
		rc = cuco_manifest_check_cc(m, f->cc, err);
	}
	return rc;
}

/*
 * The GPUs this node has for the run's ranks into *gpus (the probe's count,
 * or the harness's when the probe could not run), refused as bench refuses
 * before the store has a run: a run that cannot execute here stores nothing.
 * With --launcher the launcher places the ranks: not checked.
 */
static int node_gpus(const struct cuco_run_opts *run, const struct cuco_hw_facts *facts, int *gpus,
                     struct cuco_err *err)
{
	struct cuco_err gerr;

	if (run->launcher && *run->launcher)
		return CUCO_OK;
	cuco_err_clear(&gerr);
	*gpus = facts->gpus ? facts->gpus : cuco_gpu_count(&gerr);
	if (*gpus >= run->ranks)
		return CUCO_OK;
	return cuco_err_set(err, CUCO_ERR_NO_GPU,
	                    "execution needs %d CUDA GPUs on this node; %s: run cuco evolve on a "
	                    "GPU node (nothing was stored)",
	                    run->ranks,
	                    *gpus < 0    ? gerr.msg
	                    : *gpus == 0 ? "this machine has none"
	                                 : "there are fewer");
}

/* What the progress line needs beside the progress. */
struct progress_ctx {
	int tty;
	const char *primary; /* the run's shape */
	const char *shapes;  /* "4096, 8192" for a run over several shapes; NULL: one */
	const char *stat;    /* "" (latencies are medians) or "mean " */
	struct cli_evolve_clock clock;
};

/* The live progress line on stderr: one line redrawn on a terminal, a line per update otherwise. */
static void progress(void *arg, const struct cuco_evolve_progress *p)
{
	static int last_evaluated = -1, last_generation = -1;
	struct progress_ctx *pc = arg;
	int tty = pc->tty;

	if (farm_on && p->run_id && p->run_id != farm_run) {
		/* Another process began a run first: name the steps by this run's id. */
		struct cuco_err e;
		cuco_err_clear(&e);
		farm_run = p->run_id;
		if (cuco_farm_set_run(&farm, farm_store, farm_run, &e) == CUCO_OK)
			fprintf(stderr, "\ncuco evolve: the farm's steps are now %s-*\n", farm.tag);
	}
	if (p->evaluated == last_evaluated && p->generation == last_generation)
		return;
	last_evaluated = p->evaluated;
	last_generation = p->generation;
	fprintf(stderr,
	        "%scuco evolve: run %lld gen %d/%d %s | evaluated %d correct %d | failed "
	        "compile %d run %d verify %d bench %d (timeout %d)",
	        tty ? "\r\033[K" : "", (long long)p->run_id, p->generation, p->generations,
	        p->phase ? p->phase : "", p->evaluated, p->correct, p->failed_compile,
	        p->failed_run, p->failed_verify, p->failed_bench, p->failed_timeout);
	if (isfinite(p->best_us))
		fprintf(stderr, " | best %s%.1f us", pc->stat, p->best_us);
	if (isfinite(p->best_us) && pc->shapes)
		fprintf(stderr, " at %s", pc->primary);
	if (p->best_fitness > 0)
		fprintf(stderr, ", %.3fx", p->best_fitness);
	if (p->best_fitness > 0 && pc->shapes)
		fprintf(stderr, " (geometric mean over shapes %s)", pc->shapes);
	if (isfinite(p->baseline_us))
		fprintf(stderr, " vs baseline %s%.1f us", pc->stat, p->baseline_us);
	if (isfinite(p->baseline_us) && pc->shapes)
		fprintf(stderr, " at %s", pc->primary);
	cli_evolve_clock_print(&pc->clock, p, stderr);
	fputs(tty ? "" : "\n", stderr);
	fflush(stderr);
}

/*
 * A resumed run of a package that evolved through the package's own
 * template (stored as <its folder>/template.cu.in): that template, from the
 * folder the run stored, into buf; else NULL (cuco's templates are found in
 * the data folder, evolve_flags.h).
 */
static const char *package_template(const struct cuco_run_rec *r, char *buf, size_t len)
{
	json_t *cfg;
	const char *t, *base;
	int ours;

	if (!r->package || !r->config || !(cfg = json_loads(r->config, 0, NULL)))
		return NULL;
	t = json_string_value(json_object_get(cfg, "template"));
	base = t ? strrchr(t, '/') : NULL;
	ours = base && !strcmp(base, "/template.cu.in");
	json_decref(cfg);
	if (!ours)
		return NULL;
	snprintf(buf, len, "%s/template.cu.in", r->package);
	return cuco_file_exists(buf) ? buf : NULL;
}

/*
 * The shapes of the run into cfg (cuco_evolve_flags_shapes()), the flags'
 * first turned into the names the manifest stores them under (repeats
 * refused); then each is looked up in m into shapes[] (a shape given by its
 * values is added to m). Returns 0 or CUCO_ERR_USAGE (printed).
 */
static int resolve_shapes(struct cuco_manifest *m, char (*given)[32], int ngiven, long long resume,
                          const char *stored_shape, struct cuco_evolve_config *cfg,
                          const struct cuco_shape **shapes)
{
	struct cuco_err err;

	cuco_err_clear(&err);
	for (int k = 0; k < ngiven; k++) {
		if (cli_shape_arg("evolve", m, given[k], shapes, k))
			return CUCO_ERR_USAGE;
		snprintf(given[k], sizeof(given[0]), "%s", shapes[k]->name);
	}
	if (cuco_evolve_flags_shapes((const char(*)[32])given, ngiven, m->default_shape, resume,
	                             stored_shape, cfg, &err))
		return cli_usage_error("evolve", "%s", err.msg);
	for (int k = 0; k < cfg->nshapes; k++)
		if (!(shapes[k] = cuco_manifest_shape_spec(m, cfg->shapes[k], &err)))
			return cli_usage_error("evolve", "--%s", err.msg);
	return 0;
}

/* "A, B, C" from names. */
static void join_shapes(char (*names)[32], int n, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (int k = 0; k < n && at < len; k++) {
		int w = snprintf(out + at, len - at, "%s%s", k ? ", " : "", names[k]);
		at += w > 0 ? (size_t)w : 0;
	}
}

int cmd_evolve(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_manifest m;
	struct cuco_run_opts run;
	struct cuco_evolve_config cfg;
	struct cuco_evolve_opts o;
	struct cuco_evolve_progress fin;
	struct cuco_design_space ds;
	struct cuco_hw_facts facts;
	const struct cuco_hw_facts *factsp = NULL;
	struct cuco_cascade_evaluator *ce = NULL;
	struct cuco_slots slots = {.n = 1};
	struct cuco_run_rec stored;
	struct cuco_strbuf seed = CUCO_STRBUF_INIT, tmpl = CUCO_STRBUF_INIT,
	                   ds_text = CUCO_STRBUF_INIT;
	struct evolve_args a;
	struct cli_evolve_llm *lf = &a.lf;
	struct cuco_llm_stored llm_stored;
	struct cuco_llm_operator *llm_op = NULL;
	struct cuco_child_operator child_op;
	struct cuco_store *store = NULL;
	const struct cuco_shape *shape, *shapes[CUCO_EVOLVE_MAX_SHAPES];
	const char *workload = NULL, *store_path = NULL, *template_path = NULL;
	char shapes_text[160], llm_shape[256];
	struct progress_ctx pc;
	struct cuco_evolve_flags ef;
	const char *ds_path;
	long long resume = 0, max_slots = 0;
	const char *farm_kind = NULL, *partition = NULL, *farm_args = NULL;
	int rc, have_m = 0, have_ds = 0, tty = isatty(2), gpus = 0;
	int64_t run_id = 0;
	int no_recheck = 0, have_stored = 0;
	char tpath[PATH_MAX], pkg[PATH_MAX], pkg_tmpl[PATH_MAX], *llm_json = NULL;

	cuco_err_clear(&err);
	cuco_run_opts_default(&run);
	run.burst = -1; /* not given; set below from the flag or the stored run */
	cuco_evolve_config_default(&cfg);
	cuco_evolve_flags_init(&ef);
	cuco_run_rec_init(&stored);
	memset(&fin, 0, sizeof(fin));
	memset(&llm_stored, 0, sizeof(llm_stored));
	memset(&a, 0, sizeof(a));
	cli_evolve_llm_init(lf);
	a.run = run;
	a.ef = ef;
	if ((rc = cli_flags_parse(&cmd_evolve_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	run = a.run;
	ef = a.ef;
	ef.workload = a.npos ? a.pos[0] : NULL;
	store_path = a.store;
	resume = a.resume;
	max_slots = a.slots;
	farm_kind = a.farm;
	partition = a.partition;
	farm_args = a.farm_args;
	no_recheck = a.no_recheck;
	if (!ef.workload && !resume)
		return cli_usage_error("evolve", "which workload? (or --resume RUN)");
	if (!farm_kind && (partition || farm_args))
		return cli_usage_error("evolve", "%s is for --farm slurm",
		                       partition ? "--partition" : "--farm-args");
	if (farm_kind && run.launcher)
		return cli_usage_error("evolve",
		                       "--farm slurm starts the ranks itself; drop --launcher");
	if (ef.budget_evals > 0 && ef.budget_minutes > 0)
		return cli_usage_error("evolve",
		                       "give --budget-evals or --budget-minutes, not both");
	if (!resume && cli_evolve_llm_check(lf))
		return CUCO_ERR_USAGE;
	if ((rc = cli_open_store(store_path, &store, &err)))
		return cli_fail(&err);
	if (resume && (rc = cuco_store_run_get(store, resume, &stored, &err))) {
		cli_fail(&err);
		goto out;
	}
	if (resume && !ef.template_path)
		ef.template_path = package_template(&stored, pkg_tmpl, sizeof(pkg_tmpl));
	if (run.burst >= 0)
		ef.timing = cuco_run_timing(&run);
	ef.operator_ = lf->operator_;
	ef.llm_share = lf->share;
	ef.max_connections = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
	if ((rc = cuco_evolve_flags_apply(&ef, resume ? &stored : NULL, &cfg, stderr, &err)) ||
	    (resume && (rc = cli_evolve_llm_resume(lf, &cfg, stored.config, resume, &llm_stored,
	                                           &have_stored, &err)))) {
		if (rc == CUCO_ERR_USAGE && err.msg[0])
			cli_usage_error("evolve", "%s", err.msg);
		else if (rc != CUCO_ERR_USAGE)
			cli_fail(&err);
		goto out;
	}
	workload = resume ? stored.workload : ef.workload;
	run.burst = !strcmp(cfg.timing, "burst");
	run.mean = !strcmp(cfg.statistic, "mean");
	if (cfg.template_path[0]) {
		snprintf(tpath, sizeof(tpath), "%s", cfg.template_path);
		template_path = tpath;
	}
	if ((rc = resume ? cli_load_run_workload(&stored, &m, &err)
	                 : cli_load_workload(workload, &m, &err))) {
		cli_fail(&err);
		goto out;
	}
	have_m = 1;
	if ((rc = resolve_shapes(&m, a.shape_names, a.nshape_names, resume, stored.shape, &cfg,
	                         shapes)))
		goto out;
	shape = shapes[0];
	join_shapes(cfg.shapes, cfg.nshapes, shapes_text, sizeof(shapes_text));
	ds_path = cli_share_dir("design_space.json");
	if (!ds_path || (rc = cuco_design_space_load(ds_path, &ds, &err))) {
		if (!ds_path)
			rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND,
			                  "cuco home not found; set CUCO_HOME");
		cli_fail(&err);
		goto out;
	}
	have_ds = 1;
	/* What this node (or the farm's) offers, measured: children stay inside it. */
	if (farm_kind) {
		if ((rc = farm_setup(&m, &run, shapes, cfg.nshapes, partition, farm_args, store,
		                     resume, &facts, &factsp, &err))) {
			cli_fail(&err);
			goto out;
		}
		farm_on = 1;
		cuco_farm_runner(&farm, &farm_runner);
		run.runner = &farm_runner;
	} else if ((rc = cli_node_checks("evolve", &m, &run, 1, 1, shapes, cfg.nshapes, &facts,
	                                 &factsp, &err)) ||
	           (rc = node_gpus(&run, &facts, &gpus, &err))) {
		cli_fail(&err);
		goto out;
	}
	if (!template_path)
		template_path = cli_template_of(&m, tpath, sizeof(tpath));
	if (template_path) {
		if (cuco_strbuf_read_file(&tmpl, template_path)) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", template_path,
			                  strerror(errno));
			cli_fail(&err);
			goto out;
		}
		snprintf(cfg.template_path, sizeof(cfg.template_path), "%s", template_path);
		/* Children stay inside what the template realises. */
		if ((rc = cuco_design_space_narrow(&ds, template_path, tmpl.buf, &err))) {
			cli_fail(&err);
			goto out;
		}
	}
	if (!resume && (rc = cli_make_seed(&m, &seed, NULL, &err))) {
		cuco_err_prefix(&err, "fast-path seed: ");
		cli_fail(&err);
		goto out;
	}
	if ((rc = cuco_cascade_evaluator_new(&m, shapes, cfg.nshapes, &run, &ce, &err))) {
		cli_fail(&err);
		goto out;
	}
	/* GPU slots: with mpirun/srun the launcher decides where ranks go, so one; a
	 * farm's slots are steps in flight, as many as its GPUs hold (or --slots). */
	if (farm_on) {
		slots.n = max_slots > 0 ? (int)max_slots : farm_default_slots(&farm);
		if (slots.n > CUCO_MAX_SLOTS)
			slots.n = CUCO_MAX_SLOTS;
		cuco_cascade_evaluator_set_slots(ce, &slots);
	} else if (!run.launcher && max_slots != 1) {
		cuco_slots_plan(gpus, run.ranks, (int)max_slots, getenv("CUDA_VISIBLE_DEVICES"),
		                &slots);
		cuco_cascade_evaluator_set_slots(ce, &slots);
	}
	if (strcmp(lf->operator_, "builtin")) {
		const char *dsp = cli_share_dir("design_space.json");

		/* fail closed: no model's code runs where the view cannot be made */
		if ((rc = cli_llm_sandbox("evolve", &lf->ep, a.farm != NULL)))
			goto out;
		if (!dsp || cuco_strbuf_read_file(&ds_text, dsp)) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: cannot read the design space",
			                  dsp ? dsp : "share/design_space.json");
			cli_fail(&err);
			goto out;
		}
		/* The prompts state what fitness covers (latencies stay the primary shape's). */
		if (cfg.nshapes > 1)
			snprintf(
			    llm_shape, sizeof(llm_shape),
			    "%s (fitness: the geometric mean over shapes %s of baseline latency / "
			    "your latency; the latencies reported are at shape %s)",
			    shapes_text, shapes_text, shape->name);
		else
			snprintf(llm_shape, sizeof(llm_shape), "%s", shape->name);
		if ((rc = cli_evolve_llm_setup(lf, have_stored ? &llm_stored : NULL, store, &m,
		                               llm_shape, cfg.nshapes > 1 ? shapes_text : NULL, &ds,
		                               ds_text.buf, factsp, cfg.search_seed, &llm_op,
		                               &llm_json, &err))) {
			cli_fail(&err);
			goto out;
		}
		if (resume && (rc = cuco_llm_operator_resume(llm_op, resume, &err))) {
			cuco_err_prefix(&err, "resuming run %lld: ", resume);
			cli_fail(&err);
			goto out;
		}
		cuco_llm_operator_bind(llm_op, lf->share, &child_op);
	}
	memset(&o, 0, sizeof(o));
	o.store = store;
	o.workload = m.name;
	o.package = cli_package_of(&m, pkg, sizeof(pkg));
	o.shape = shape->name;
	o.ds = &ds;
	o.facts = factsp;
	o.seed_code = resume ? NULL : seed.buf;
	o.template_text = template_path ? tmpl.buf : NULL;
	o.template_name = template_path;
	cuco_cascade_evaluator_bind(ce, &o.evaluator);
	if (farm_on) {
		farm_inner = o.evaluator;
		o.evaluator.evaluate = farm_one;
		o.evaluator.evaluate_batch = farm_inner.evaluate_batch ? farm_batch : NULL;
	}
	o.stop = &stop_flag;
	pc.tty = tty;
	pc.primary = shape->name;
	pc.shapes = cfg.nshapes > 1 ? shapes_text : NULL;
	pc.stat = run.mean ? "mean " : "";
	cli_evolve_clock_start(&pc.clock, &cfg, resume != 0);
	o.progress = progress;
	o.note = cli_evolve_note;
	o.ranks = run.ranks;
	o.progress_arg = &pc;
	o.child_op = llm_op ? &child_op : NULL;
	o.llm_json = llm_json;
	fprintf(stderr,
	        "cuco evolve: %s at shape%s %s%s, %d islands x %d children, %d generations, "
	        "seed %llu, %d %s%s, %s, %s\n",
	        m.name, cfg.nshapes > 1 ? "s" : "", shapes_text,
	        cfg.nshapes > 1 ? " (fitness: geometric mean; one harness run per shape)" : "",
	        cfg.islands, cfg.children_per_island, cfg.generations,
	        (unsigned long long)cfg.search_seed, slots.n,
	        farm_on ? "Slurm step slot" : "GPU slot", slots.n == 1 ? "" : "s",
	        cfg.pipeline ? "pipelined (next generation compiles while this one runs)"
	                     : "strict order",
	        template_path ? template_path : "no template: the seed's knobs only");
	stop_flag = 0;
	stop_signals(1); /* SIGINT, SIGTERM, SIGHUP stop the search; the run stays resumable */
	rc = cuco_evolve_run(&o, &cfg, resume, &run_id, &fin, &err);
	if (farm_on) {
		struct cuco_err ferr;
		int left = 0;
		stop_signals(0);
		cuco_err_clear(&ferr);
		/* Whatever ended the run, no step of it stays behind; a finished run's results
		 * are all stored, so its run directory goes too. */
		if (cuco_farm_cancel_run(&farm, &left, &ferr))
			fprintf(stderr, "\ncuco evolve: %s\n", ferr.msg);
		else if (left)
			fprintf(stderr, "\ncuco evolve: cancelled %d step%s of run %lld\n", left,
			        left == 1 ? "" : "s", (long long)run_id);
		if (!rc && !fin.interrupted)
			cuco_farm_clean_run(&farm);
	} else {
		stop_signals(0);
	}
	if (tty)
		fputc('\n', stderr);
	cli_evolve_llm_finish(llm_op, run_id);
	if (rc) {
		cli_fail(&err);
		if (run_id)
			fprintf(stderr,
			        "cuco evolve: run %lld failed; 'cuco evolve --resume %lld' "
			        "continues it once the cause is fixed\n",
			        (long long)run_id, (long long)run_id);
		goto out;
	}
	printf("# evolve run %lld: %s (%s), %d evaluated, %d correct, %d rejected as duplicates\n",
	       (long long)run_id, fin.interrupted ? "interrupted" : "done", fin.stop_reason,
	       fin.evaluated, fin.correct, fin.rejected);
	if (run.ranks == 1)
		printf(
		    "# 1 rank: communication not measured (every program ran on one GPU, nothing "
		    "sent: the figures time the compute side, not the workload)\n");
	if (fin.best_program && cfg.nshapes > 1)
		printf("# best: program %lld, %s%.1f us at %s, %.3fx the baseline (geometric mean "
		       "over shapes %s; baseline %s%.1f us at %s); 'cuco show %lld'\n",
		       (long long)fin.best_program, pc.stat, fin.best_us, shape->name,
		       fin.best_fitness, shapes_text, pc.stat, fin.baseline_us, shape->name,
		       (long long)fin.best_program);
	else if (fin.best_program)
		printf(
		    "# best: program %lld, %s%.1f us, %.3fx the baseline (%s%.1f us); 'cuco show "
		    "%lld'\n",
		    (long long)fin.best_program, pc.stat, fin.best_us, fin.best_fitness, pc.stat,
		    fin.baseline_us, (long long)fin.best_program);
	else
		printf("# no correct candidate yet\n");
	if (fin.interrupted) {
		char why[128];
		snprintf(why, sizeof(why),
		         "stopped by %s after %d evaluations; --resume continues it", stop_name(),
		         fin.evaluated);
		cuco_store_run_stop(store, run_id, "interrupted", why, NULL);
		printf("# continue with: cuco evolve --resume %lld\n", (long long)run_id);
		rc = CLI_EXIT_INTERRUPTED;
	}
	if (!no_recheck && !fin.interrupted && fin.best_program) {
		/* The winner at every shape, a fresh input seed, under compute-sanitizer. */
		struct cuco_recheck_opts ro;
		struct cuco_recheck_result rr;
		memset(&ro, 0, sizeof(ro));
		ro.store = store;
		ro.run_id = run_id;
		ro.m = &m;
		ro.run = run;
		ro.sanitize = 1;
		fprintf(stderr, "cuco evolve: re-checking program %lld (--no-recheck skips)\n",
		        (long long)fin.best_program);
		if (cuco_recheck_run(&ro, &rr, &err))
			cli_fail(&err); /* the search stands; 'cuco recheck RUN' retries */
		else
			cuco_recheck_print(stdout, store, run_id, &err);
	}
out:
	cuco_cascade_evaluator_free(ce);
	cuco_llm_operator_free(llm_op);
	cuco_llm_stored_release(&llm_stored);
	free(llm_json);
	cuco_strbuf_release(&ds_text);
	if (have_ds)
		cuco_design_space_release(&ds);
	if (have_m)
		cuco_manifest_release(&m);
	cuco_run_rec_release(&stored);
	cuco_strbuf_release(&seed);
	cuco_strbuf_release(&tmpl);
	cuco_store_close(store);
	return rc;
}
