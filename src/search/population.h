/*
 * population.h - islands of programs: population and archive per island,
 * parent selection, inspirations, ring migration, stagnation, and the
 * explore-then-exploit schedule.
 *
 * The population is in memory and rebuilt from the store on resume; every
 * decision here is a pure function of its members and the RNG, so replaying
 * the same members gives the same state.
 */
#ifndef CUCO_SEARCH_POPULATION_H
#define CUCO_SEARCH_POPULATION_H

#include <stddef.h>
#include <stdint.h>

#include "program/directive.h"
#include "search/rng.h"

#define CUCO_MAX_ISLANDS 16

/* One program on one island (a migrated program has one member per island it is on). */
struct cuco_member {
	int64_t program_id;
	int island;
	int generation;
	int correct;             /* verified and timed */
	double fitness;          /* baseline / program latency; 0 for failures */
	double median_us;        /* NaN when not timed */
	int nchildren;           /* children bred from this member (the selection penalty) */
	int alive;               /* 0 once trimmed out of the island's population */
	int migrant;             /* arrived by migration */
	struct cuco_directive d; /* its directive (owned; file NULL) */
};

/* Progress of one island. */
struct cuco_island_state {
	double best_fitness;
	int64_t best_program;
	int last_improvement; /* generation of the last new best */
	int stagnant;         /* generations since then */
};

/*
 * How a parent is drawn from an island's alive members, ranked best first (r = 0..n-1),
 * under the phase's pressure lambda; every weight but beam's is divided by
 * 1 + the member's children so far:
 *   rank       exp(-lambda * r / (n - 1))
 *   power_law  (r + 1)^-lambda
 *   weighted   by fitness: 1 / (1 + exp(-lambda * (f - median) / spread)), spread the
 *              mean absolute deviation from the median (equal weights when it is 0)
 *   beam       the best member, always
 *   best_of_n  the best of n members drawn uniformly (with replacement): the chance
 *              that rank r wins, ((n - r) / n)^k - ((n - r - 1) / n)^k for k = n
 */
enum cuco_selection_kind {
	CUCO_SELECT_RANK = 0,
	CUCO_SELECT_POWER_LAW,
	CUCO_SELECT_WEIGHTED,
	CUCO_SELECT_BEAM,
	CUCO_SELECT_BEST_OF_N,
};

struct cuco_selection {
	int kind; /* enum cuco_selection_kind */
	int n;    /* best_of_n: members drawn (>= 2) */
};

/*
 * A migration graph over nislands islands into links (struct cuco_population's): "ring"
 * (or "" : i -> i + 1), "all" (every island to every other), or directed edges "0>1,0>2,2>0".
 * Returns 0, or -1 with why (an edge outside the islands, a self edge, bad syntax).
 */
int cuco_migration_parse(const char *s, int nislands, unsigned *links, char *why, size_t whylen);

/* The kind named s ("rank", "power_law", "weighted", "beam", "best_of_n"); -1 if none. */
int cuco_selection_kind(const char *s);
/* The name of kind k. */
const char *cuco_selection_name(int k);

/* All islands. Caller-owned: cuco_population_init(), cuco_population_release(). */
struct cuco_population {
	struct cuco_selection sel; /* rank after cuco_population_init() */
	/* migration graph: bit j of links[i] sends island i's migrants to island j; all zero
	   (as after cuco_population_init()): the ring i -> i + 1 */
	unsigned links[CUCO_MAX_ISLANDS];
	int nislands;
	int population_size; /* alive members per island before trimming */
	int archive_size;    /* elites per island, never trimmed */
	struct cuco_member *m;
	int n;
	size_t alloc;
	struct cuco_island_state isl[CUCO_MAX_ISLANDS];
};

/* Empty islands. Returns 0, or -1 when nislands is outside 1..CUCO_MAX_ISLANDS. */
int cuco_population_init(struct cuco_population *p, int nislands, int population_size,
                         int archive_size);
/* Free all members. */
void cuco_population_release(struct cuco_population *p);

/* Add a copy of m (directive copied, alive set); returns its index. */
int cuco_population_add(struct cuco_population *p, const struct cuco_member *m);

/* Index of program_id's member on island, or -1. */
int cuco_population_find(const struct cuco_population *p, int island, int64_t program_id);

/*
 * The island's archive: its best correct members by fitness (ties: older
 * program first), at most archive_size and max, into idx best first. Returns
 * how many.
 */
int cuco_island_archive(const struct cuco_population *p, int island, int *idx, int max);

/*
 * Selection weights of the island's alive members (correct ones only, when
 * there are any) by p->sel (struct cuco_selection), rank 0 for the fittest. idx
 * and w get up to max entries, best first; returns how many.
 */
int cuco_island_parent_weights(const struct cuco_population *p, int island, double lambda, int *idx,
                               double *w, int max);

/* A parent drawn by cuco_island_parent_weights(); its member index, or -1 for an empty island. */
int cuco_island_pick_parent(const struct cuco_population *p, int island, double lambda,
                            struct cuco_rng *rng);

/*
 * Inspirations for a child of member parent: up to top_k archive members
 * (other than the parent and its design point), then up to diverse_k other
 * correct members whose directives differ most from the parent's (ties drawn
 * with rng). Member indices into out (at most max); returns how many.
 */
int cuco_island_inspirations(const struct cuco_population *p, int island, int parent, int top_k,
                             int diverse_k, struct cuco_rng *rng, int *out, int max);

/*
 * Migration along p->links (the ring i -> (i + 1) % nislands when none is set):
 * each island sends its best max(1, ceil(rate * alive)) correct native (not
 * themselves migrated) members to each island it links to, skipping programs
 * already there. All choices are made before any copy lands. Returns the
 * number of copies made.
 */
int cuco_population_migrate(struct cuco_population *p, double rate);

/*
 * Retire the island's worst members until at most population_size are alive:
 * failures first, then the least fit, oldest first; archive members never go.
 */
void cuco_population_trim(struct cuco_population *p, int island);

/*
 * Close generation g: update each island's best and stagnation counter, then
 * trim each island. Returns the number of islands whose best improved.
 */
int cuco_population_end_generation(struct cuco_population *p, int g);

/* 1 when island has gone k or more generations without a new best (k <= 0: never). */
int cuco_island_stagnating(const struct cuco_population *p, int island, int k);

/* ---- schedule ---- */

enum cuco_phase {
	CUCO_PHASE_EXPLORE = 0,
	CUCO_PHASE_EXPLOIT = 1,
};

/* Two phases over generations 1..generations (the run's horizon). */
struct cuco_schedule {
	int generations;
	double explore_fraction; /* share of generations that explore, 0..1 */
};

/*
 * The generations a run can reach: its --generations, or fewer where an
 * evaluation budget (0: none) of per_generation children a generation ends it
 * sooner. A time budget is not counted: its horizon depends on the machine.
 */
int cuco_schedule_horizon(int generations, int budget_evals, int per_generation);

/* How bold a generation is. */
struct cuco_phase_params {
	enum cuco_phase phase;
	int changes_min, changes_max; /* genes a mutation changes */
	double crossover_rate;        /* chance a child is a crossover */
	double lambda;                /* selection pressure (see cuco_island_parent_weights) */
	int use_bias;                 /* draw values by the meta-summary */
	int reseed;                   /* children bred from a uniform archive pick */
};

/* First generation that exploits: 1 + ceil(explore_fraction * generations). */
int cuco_schedule_switch(const struct cuco_schedule *s);

/* Phase of generation g (1-based). */
enum cuco_phase cuco_schedule_phase(const struct cuco_schedule *s, int g);

/* "explore" or "exploit". */
const char *cuco_phase_name(enum cuco_phase ph);

/* Parameters of generation g for an island that is (or is not) stagnating. */
void cuco_schedule_params(const struct cuco_schedule *s, int g, int stagnating,
                          struct cuco_phase_params *out);

#endif
