/*
 * evolve_engine.h - the evolution loop's state and the functions its files
 * share, bottom to top: evolve_config.c (outcomes and the config),
 * evolve_engine.c (the state: candidates, tally, bests, a generation's end),
 * evolve_breed.c (breeding), evolve_resume.c (the rebuild from the store),
 * evolve.c (store, evaluate, the loop). Private to src/search/evolve*.c.
 */
#ifndef CUCO_SEARCH_EVOLVE_ENGINE_H
#define CUCO_SEARCH_EVOLVE_ENGINE_H

#include "search/evolve_config.h"
#include "search/novelty.h"
#include "search/operator.h"
#include "search/population.h"
#include "search/summary.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define NOVELTY_ATTEMPTS 6 /* tries for a novel child before the slot stays empty */
#define MAX_EDGES 16       /* lineage edges of one child */
#define EMPTY_LIMIT 3      /* generations in a row without a new child: space exhausted */
#define OP_ATTEMPTS 2      /* asks of a child operator per slot (each may be a paid LLM call) */

/* A candidate of the current generation, stored or about to be. */
struct pending {
	int64_t program_id;
	int island; /* CUCO_STORE_NO_INT for the initial programs (on every island) */
	char name[48];
	const char *op;
	char *code;
	char *json;
	char *flags; /* programs.flags, or NULL */
	struct cuco_directive d;
	struct cuco_parent edges[MAX_EDGES];
	int nedges;
	int evaluated;
	double fitness, median_us, mean_us;
	int correct;
};

/* The candidates of one generation, in the order they were bred. */
struct pendlist {
	struct pending *a;
	int n;
	size_t alloc;
};

struct engine {
	const struct cuco_evolve_opts *o;
	struct cuco_evolve_config cfg;
	int64_t run_id;
	struct cuco_population pop;
	struct cuco_novelty nov;
	struct cuco_genes genes;
	struct cuco_bias bias;
	int bias_generation; /* generation the bias was computed at; -1 none */
	struct cuco_schedule sched;
	char *start_code;              /* the fast-path seed */
	struct cuco_directive start_d; /* its directive, completed for the template */
	struct pendlist cur;           /* the generation being evaluated */
	struct pendlist next;          /* pipelined: the one after it, bred and stored ahead */
	struct cuco_evolve_progress prog;
	double t0;
	int op_exhausted;       /* the child operator's budget is spent */
	int stored_generations; /* a resumed run's generations as stored (flags may change them) */
	char *summary_text; /* statistical summary stored by the current batch, for the child op */
};

/* Free the candidates of L; L stays allocated, empty. */
void cuco_evolve_pend_clear(struct pendlist *L);

/* A new zeroed candidate at the end of L. */
struct pending *cuco_evolve_pend_new(struct pendlist *L);

/* The program directive d names: the template rendered, or the seed with d's knobs. */
int cuco_evolve_realize(struct engine *e, const struct cuco_directive *d, struct cuco_strbuf *out,
                        struct cuco_err *err);

/* Count an outcome into the progress. */
void cuco_evolve_tally(struct engine *e, const struct cuco_eval_outcome *out);

/* A latency by the run's statistic (cuco_evolve_config.statistic): what fitness divides by. */
double cuco_evolve_latency_of(const struct engine *e, double median_us, double mean_us);

/* Keep (id, fitness, latency) as the run's best when it beats it. */
void cuco_evolve_note_best(struct engine *e, int64_t id, double fitness, double latency_us);

/* Members for generation g's candidates L (initial programs go to every island). */
void cuco_evolve_add_members(struct engine *e, const struct pendlist *L, int g);

/*
 * The statistical summary of generation g computed and its bias kept; with
 * store_it, stored (and kept for the child operator when it summarizes).
 */
int cuco_evolve_refresh_bias(struct engine *e, int g, int store_it, struct cuco_err *err);

/* Whether generation g is one that gets a summary (every config.summary_interval). */
int cuco_evolve_summary_due(const struct engine *e, int g);

/* After a generation's members are in: bests, stagnation, trim, migration, bias. */
int cuco_evolve_finish_generation(struct engine *e, int g, struct cuco_err *err);

/* Candidates of L without an outcome. */
int cuco_evolve_unevaluated(const struct pendlist *L);

/* What the operator may change, and the start directive completed for the template. */
int cuco_evolve_setup_genes(struct engine *e, struct cuco_err *err);

/* The initial programs (generation 0, into cur): the seed and, with a template, its rendering. */
int cuco_evolve_initial_programs(struct engine *e, struct cuco_err *err);

/*
 * Breed generation g into L (empty). With an evaluation budget, the
 * candidates bred never exceed what is left of it, counting those of the
 * current generation still waiting for evaluation when L is the next one.
 */
int cuco_evolve_breed_generation(struct engine *e, struct pendlist *L, int g, struct cuco_err *err);

/*
 * Rebuild the islands from the run's stored candidates, generation by
 * generation, exactly as the live loop built them, up to the current
 * generation: the first one with a candidate lacking an evaluation, or, in a
 * pipelined run, the last stored one (the live loop bred the generation
 * after it before adding it to the islands). The current generation is left
 * in cur (*open = 1, *last_g = it); a pipelined run killed with two
 * generations stored but not evaluated has the later one in next
 * (*next_stored = 1). With nothing open, *last_g gets the last stored
 * generation, -1 when the run has none yet.
 */
int cuco_evolve_rebuild(struct engine *e, int *last_g, int *open, int *next_stored,
                        struct cuco_err *err);

#endif
