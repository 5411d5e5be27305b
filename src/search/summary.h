/*
 * summary.h - the statistical meta-summary of a run, without an LLM: which
 * directive values and knob settings go with high fitness, what failed at
 * which stage, and the most common error messages. Computed from the store,
 * stored as JSON in `summaries` (kind 'statistical'), and turned into a bias
 * for the built-in operator.
 */
#ifndef CUCO_SEARCH_SUMMARY_H
#define CUCO_SEARCH_SUMMARY_H

#include <stdint.h>

#include "program/directive.h"
#include "search/operator.h"
#include "util/error.h"

struct cuco_store;

#define CUCO_SUMMARY_MAX_ERRORS 8 /* error prefixes kept, most common first */
#define CUCO_SUMMARY_PREFIX 72    /* bytes of an error's first line that group it */

/* Fitness of the candidates that share one value: "placement" = "stream_overlap", "chunks" = 8. */
struct cuco_summary_stat {
	char key[CUCO_NAME_MAX];   /* a dimension name, or "knobs.<name>" */
	char value[CUCO_NAME_MAX]; /* the value as text */
	int n;                     /* evaluated candidates with it */
	int ncorrect;
	double sum;  /* of fitness, failures counting 0 */
	double best; /* best fitness */
};

/* A named count (a stage, a status, an error prefix). */
struct cuco_summary_count {
	char name[CUCO_SUMMARY_PREFIX + 8];
	int n;
};

/* A summary. Caller-owned: filled by cuco_summary_compute(), freed by cuco_summary_release(). */
struct cuco_summary {
	int generation; /* last generation included */
	int nprograms;  /* candidates of the run up to that generation */
	int nevaluated;
	int ncorrect;
	double best_fitness;
	int64_t best_program;
	double mean_fitness; /* over evaluated candidates, failures counting 0 */
	struct cuco_summary_stat *stats;
	int nstats;
	struct cuco_summary_count stages[8]; /* failures by stage reached */
	int nstages;
	struct cuco_summary_count statuses[16]; /* failures by status token */
	int nstatuses;
	struct cuco_summary_count errors[CUCO_SUMMARY_MAX_ERRORS]; /* digits folded to '#' */
	int nerrors;
};

/*
 * Summarise the candidates (origin 'candidate') of run_id with generation <=
 * max_generation and their first evaluations. Returns CUCO_OK, CUCO_ERR_STORE
 * or CUCO_ERR_NOMEM; *out is filled (release it) even when empty.
 */
int cuco_summary_compute(struct cuco_store *store, int64_t run_id, int max_generation,
                         struct cuco_summary *out, struct cuco_err *err);

/* Free what cuco_summary_compute() allocated. */
void cuco_summary_release(struct cuco_summary *s);

/* The statistic for key = value, or NULL. */
const struct cuco_summary_stat *cuco_summary_find(const struct cuco_summary *s, const char *key,
                                                  const char *value);

/* The summary as JSON text (malloc'd; NULL out of memory): what `summaries.text` holds. */
char *cuco_summary_to_json(const struct cuco_summary *s);

/*
 * The operator's bias from a summary: each value's smoothed mean fitness
 * (sum + m * mean) / (n + m), floored so no seen value is ruled out; values
 * never seen stay 0 ("no data"). *out is active when anything was evaluated.
 */
void cuco_summary_bias(const struct cuco_summary *s, const struct cuco_design_space *ds, double m,
                       struct cuco_bias *out);

#endif
