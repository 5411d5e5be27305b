/*
 * evolve_config.h - what a search is made of, the lowest file of the
 * search's loop: its config (defaults, JSON), the options a run takes, an
 * evaluation's outcome, the evaluator's callbacks and the progress. The loop
 * (evolve.c), its breeding, resume and the evaluator build on these;
 * evolve.h, the search's public face, includes this.
 */
#ifndef CUCO_SEARCH_EVOLVE_CONFIG_H
#define CUCO_SEARCH_EVOLVE_CONFIG_H

#include <signal.h>
#include <stdint.h>

#include "program/directive.h"
#include "search/population.h"
#include "util/error.h"

struct cuco_store;

/* A candidate handed to an evaluator. Borrowed strings, valid during the call. */
struct cuco_candidate {
	const char *name;           /* unique within the run, e.g. "g3-i1-c2" */
	const char *code;           /* complete program source */
	const char *directive_json; /* canonical directive; NULL when none */
	int64_t program_id;         /* its row in `programs` */
};

/* What an evaluator found. Caller-owned: _init before, _release after. */
struct cuco_eval_outcome {
	int code;        /* CUCO_OK when verified and timed, else why not (CUCO_ERR_COMPILE, ...) */
	char status[24]; /* result token: ok, compile, timeout, wrong, run, crash, ... */
	char stage[16];  /* stage reached: compile, run, verify, bench */
	double fitness;  /* baseline latency / candidate latency; 0 when failed */
	double median_us;   /* NaN when not timed */
	double mean_us;     /* mean of the timed runs; NaN when not timed */
	double p90_us;      /* their 90th percentile; NaN when not timed */
	double baseline_us; /* baseline measured beside it, by the run's statistic (median or
	                       mean, cuco_evolve_config.statistic); NaN when unknown */
	double rel_err;     /* NaN when not checked */
	char *error;        /* malloc'd human message or NULL */
	char *log;          /* malloc'd compile or run log or NULL */
	char gpu[64];       /* GPU model the harness ran on; "" when unknown */
	/* malloc'd per-shape details of a run over several shapes, or NULL (one shape):
	   {"shapes":[{"shape","status","stage","median_us","baseline_us","speedup"},...],
	   "fitness":"geomean"}, stored as evaluations.result_json */
	char *result_json;
};

/* Zero an outcome (status "ok", stage "bench", NaN latencies). */
void cuco_eval_outcome_init(struct cuco_eval_outcome *o);
/* Free error, log and result_json and re-init. */
void cuco_eval_outcome_release(struct cuco_eval_outcome *o);

/* Most shapes one run's fitness covers. */
#define CUCO_EVOLVE_MAX_SHAPES 4
#define CUCO_EVOLVE_MAX_GENERATIONS 1000000 /* --generations, and what a stored run may hold */

/*
 * One candidate's outcome over several shapes from its outcome at each
 * (per[k] at shapes[k], fitness = baseline / latency at that shape; shapes[0]
 * is the primary), into *out (initialised by the caller; per is not
 * changed). n == 1: a copy of per[0], result_json NULL, as a one-shape run
 * has always stored. n > 1: correct only when correct at every shape, with
 * fitness = the geometric mean of the per-shape fitnesses, median_us and
 * baseline_us the primary shape's, rel_err the largest; otherwise the first
 * failing shape's code, status, stage, rel_err and log, fitness 0, median_us
 * NaN, and its error prefixed "at shape S: ". result_json gets every shape's
 * details either way. Returns CUCO_OK or CUCO_ERR_NOMEM.
 */
int cuco_eval_outcome_combine(const char *const *shapes, const struct cuco_eval_outcome *per, int n,
                              struct cuco_eval_outcome *out);

/*
 * The cascade behind the loop. evaluate judges one candidate; evaluate_batch
 * (optional) judges n at once, e.g. compiling them in parallel and running
 * them in one harness call. Both return CUCO_OK when they produced outcomes
 * (a candidate that fails to compile is an outcome, not an error) and another
 * code with err set when the evaluator itself cannot work (no GPU), which
 * ends the run as 'failed'.
 *
 * prefetch (optional) starts preparing candidates that will be evaluated
 * later, in the background, and returns at once: the cascade evaluator
 * compiles them into its cache while the GPUs run the generation before.
 * c and its strings are borrowed for the call only. An evaluation of a
 * prefetched candidate must give the outcome it would have given without the
 * prefetch (a compile failure the prefetch found is reported then, stage
 * "compile" with the nvcc log) and waits for work on it still in flight.
 * CUCO_OK, or an error that ends the run as 'failed'. With prefetch the loop
 * pipelines generations (cuco_evolve_config.pipeline). prefetch_cancel
 * (optional) drops prefetched work not started and stops what runs; it
 * returns when nothing runs in the background. The loop calls it when the
 * run ends, so nothing compiles behind what the caller does next.
 */
struct cuco_evaluator {
	int (*evaluate)(void *ctx, const struct cuco_candidate *c, struct cuco_eval_outcome *out,
	                struct cuco_err *err);
	int (*evaluate_batch)(void *ctx, const struct cuco_candidate *c, int n,
	                      struct cuco_eval_outcome *outs, struct cuco_err *err);
	int (*prefetch)(void *ctx, const struct cuco_candidate *c, int n, struct cuco_err *err);
	void (*prefetch_cancel)(void *ctx);
	int max_batch; /* candidates per evaluate_batch call; <= 0: all of a generation */
	void *ctx;
};

/*
 * A child asked of an operator beside the built-in one (the LLM operator).
 * Borrowed; valid during the call.
 */
struct cuco_breed_request {
	int64_t run_id;
	int generation, island;
	const char *name; /* the child's name once stored, e.g. "g3-i1-c2" (same for retries) */
	int exploit;      /* 1 in the exploitation phase (and not stagnating) */
	int64_t parent_id;
	double parent_fitness;       /* 0 for a parent that failed */
	const int64_t *inspirations; /* program ids, best first */
	int ninspirations;
};

/* What the operator made. The loop frees code and directive_json. */
struct cuco_breed_child {
	char *code;           /* the complete child program; NULL: no child this attempt */
	char *directive_json; /* its canonical directive */
	const char *op_name;  /* static, stored as programs.operator, e.g. "llm-diff" */
	int64_t partner_id;   /* second parent of a crossover (one of the inspirations), or 0 */
	char *flags; /* where the code contradicts its directive, one per line, or NULL; the
	                loop stores it as programs.flags and frees it */
};

/*
 * An operator beside the built-in one, called through these callbacks so the
 * loop knows nothing of how it works (no libcurl here). Borrowed by the loop.
 */
struct cuco_child_operator {
	double share; /* fraction of children asked of it: 1 all, 0 < share < 1 mixed */
	/*
	 * Make one child. CUCO_OK with out->code set: a child; CUCO_OK with
	 * out->code NULL: none this attempt (the operator recorded why);
	 * CUCO_ERR_UNSUPPORTED: its budget is spent, the run stops cleanly
	 * ("budget-llm"); anything else fails the run.
	 */
	int (*breed)(void *ctx, const struct cuco_breed_request *rq, struct cuco_breed_child *out,
	             struct cuco_err *err);
	/*
	 * Inside the transaction that stored a generation's children: names[i]
	 * became program ids[i]. Children it made that are not among them were
	 * dropped as near-duplicates. Optional.
	 */
	int (*stored)(void *ctx, const char *const *names, const int64_t *ids, int n,
	              struct cuco_err *err);
	/*
	 * A stored child was judged (fitness 0 when it failed); its evaluation
	 * is committed, and no transaction is open. An error fails the run.
	 * Optional.
	 */
	int (*evaluated)(void *ctx, int64_t program_id, int correct, double fitness,
	                 struct cuco_err *err);
	/*
	 * The statistical summary of generation g (JSON) was stored; called
	 * outside any transaction. An error fails the run. Optional.
	 */
	int (*summarize)(void *ctx, int64_t run_id, int generation, const char *statistical,
	                 struct cuco_err *err);
	/*
	 * The run ended, not interrupted, before its status is stored. An error
	 * fails the run with err as its stored reason (runs.error): an operator
	 * none of whose children could be made says so. Optional.
	 */
	int (*finished)(void *ctx, int64_t run_id, struct cuco_err *err);
	void *ctx;
};

/* The knobs of the search, stored as the run's config JSON. Plain data. */
struct cuco_evolve_config {
	uint64_t search_seed;
	int islands;              /* default 2 */
	int generations;          /* default 20 */
	int children_per_island;  /* children bred per island per generation, default 4 */
	int population_size;      /* alive members per island, default 40 */
	int archive_size;         /* elites per island, default 12 */
	int migration_interval;   /* generations between ring migrations, default 4; 0: never */
	double migration_rate;    /* share of an island's population sent, default 0.15 */
	double explore_fraction;  /* default 0.4 */
	double novelty_threshold; /* token 3-gram Jaccard at which code is a near duplicate, 0.95 */
	int stagnation_generations; /* generations without a new best before boldness, default 4 */
	int summary_interval;       /* generations between meta-summaries, default 4 */
	int top_k;                  /* inspirations from the archive, default 2 */
	int diverse_k;              /* diverse inspirations, default 1 */
	int budget_evals;           /* stop after this many evaluations (0: no limit) */
	double budget_minutes;      /* stop after this many minutes of this process (0: no limit) */
	char template_path[1024];   /* program template used ("" without) */
	char freeze[256];   /* dimensions and knobs the operator leaves alone, comma-separated */
	char search[256];   /* knobs the design space holds ("searched": false) that this run
	                       changes all the same, comma-separated */
	char operator_[16]; /* who breeds: "builtin", "llm", "mixed"; "" in configs stored
	                       before it was recorded */
	double llm_share;   /* fraction of children the LLM makes (mixed; 1 for llm, 0 builtin) */
	/*
	 * 1 (default): from generation 1 on, breed and store generation g+1 from
	 * the population as known before g is evaluated, and prefetch it while g
	 * runs (parents one generation stale); 0: the strict order. Without an
	 * evaluator prefetch a run (fresh or resumed) takes the strict order, and
	 * a fresh run stores the order it takes; configs stored before this was
	 * recorded read as 0, so they resume in the order they ran.
	 */
	int pipeline;
	/* how the harness times candidates: "sustained" or "burst" (harness --timing);
	   configs stored before it was recorded read as "sustained" */
	char timing[16];
	/* what a latency is: "median" (default) or "mean" of the timed runs (evolve
	   --statistic); fitness = baseline / candidate, both by it; configs stored before
	   the choice read as "median" */
	char statistic[8];
	/* parent selection (population.h): "rank" (default, and configs stored before the
	   choice), "power_law", "weighted", "beam", "best_of_n" with selection_n members drawn */
	char selection[16];
	int selection_n;
	/* where migrants go (cuco_migration_parse()): "ring" (default, and configs stored
	   before the choice), "all", or directed edges "0>1,0>2" */
	char migration[256];
	/* CUDA_DEVICE_MAX_CONNECTIONS (CUDA's hardware queues) the run started with; "" when
	   unset, and in configs stored before it was recorded (docs/harness.md) */
	char max_connections[16];
	/*
	 * The shapes fitness covers, the primary (the run row's shape) first:
	 * fitness is the geometric mean over them of baseline / latency
	 * (docs/search.md). nshapes 0: the run's shape alone (configs stored
	 * before this was recorded); a one-shape run stores its one shape.
	 */
	char shapes[CUCO_EVOLVE_MAX_SHAPES][32];
	int nshapes;
};

/* Defaults as documented above, seed 1. */
void cuco_evolve_config_default(struct cuco_evolve_config *cfg);

/* The config as JSON (malloc'd; NULL out of memory). */
char *cuco_evolve_config_to_json(const struct cuco_evolve_config *cfg);

/*
 * Read a config written by cuco_evolve_config_to_json() over *cfg (missing
 * keys keep their value). Returns CUCO_OK, CUCO_ERR_PARSE, or
 * CUCO_ERR_INVALID for a number out of the range the loop takes
 * ("evolve config: generations: 2147483647 is out of range (0 to 1000000)").
 */
int cuco_evolve_config_from_json(const char *json, struct cuco_evolve_config *cfg,
                                 struct cuco_err *err);

/*
 * The run's explore-then-exploit schedule: explore_fraction over the run's
 * horizon (cuco_schedule_horizon: --generations, or the generations the
 * evaluation budget reaches). What cuco evolve follows and cuco report draws.
 */
struct cuco_schedule cuco_evolve_schedule(const struct cuco_evolve_config *cfg);

/* Where a run stands; passed to the progress callback and returned at the end. */
struct cuco_evolve_progress {
	int64_t run_id;
	int generation; /* the generation being (or last) evaluated */
	int generations;
	const char *phase; /* "explore" | "exploit" */
	int evaluated;     /* candidates with an evaluation, this run in total */
	int correct;
	int failed_compile, failed_run, failed_verify, failed_bench; /* by stage reached */
	int failed_timeout; /* of the failures above, those that timed out */
	int rejected;       /* children rejected as not novel */
	int resumed_evals;  /* candidates that were stored without an evaluation and re-evaluated */
	double best_fitness;
	double best_us;     /* NaN until something is correct */
	double baseline_us; /* NaN until measured */
	int64_t best_program;
	int interrupted;         /* stopped by *stop */
	const char *stop_reason; /* "generations", "budget-evals", "budget-minutes", "exhausted",
	                            "budget-llm", "interrupted" */
};

/* What the loop runs on. Borrowed; everything must outlive cuco_evolve_run(). */
struct cuco_evolve_opts {
	struct cuco_store *store;
	const char *workload;
	const char *package; /* the package's folder, stored with a new run; NULL: cuco's own */
	const char *shape;
	const struct cuco_design_space *ds;
	const struct cuco_hw_facts *facts; /* NULL: design space only */
	const char *seed_code;     /* fast-path seed (fresh runs; resume reads it from the store) */
	const char *template_text; /* NULL: knob-only evolution of the seed */
	const char *template_name; /* for messages */
	struct cuco_evaluator evaluator;
	volatile sig_atomic_t *stop; /* set (e.g. by SIGINT) to stop after the current batch */
	void (*progress)(void *arg, const struct cuco_evolve_progress *p);
	/* a line to tell the user (e.g. where the search starts when the seed's directive lies
	 * outside the template's space); NULL: not told. Takes progress_arg. */
	void (*note)(void *arg, const char *msg);
	void *progress_arg;
	const char *gpu; /* for the run row, may be NULL */
	int ranks;       /* ranks every candidate runs on, stored with its evaluation; 0 unknown */
	const struct cuco_child_operator *child_op; /* NULL: the built-in operator only */
	const char *llm_json; /* the LLM operator's settings (a JSON object), stored as the
	                         run config's "llm" by a fresh run; NULL: none */
};

/* The config as JSON, with llm_json (may be NULL) as its "llm" object. */
char *cuco_evolve_config_json(const struct cuco_evolve_config *c, const char *llm_json);

#endif
