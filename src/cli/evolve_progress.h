/* evolve_progress.h - the time on `cuco evolve`'s live line: elapsed, and left by the
 * budget that ends the run first. */
#ifndef CUCO_CLI_EVOLVE_PROGRESS_H
#define CUCO_CLI_EVOLVE_PROGRESS_H

#include <stdio.h>

#include "search/evolve.h"

/* The clock of one evolve process. Plain data. */
struct cli_evolve_clock {
	double t0;             /* when this process began evolving (cuco_now) */
	int ev0, gen0;         /* evaluated and generation when it began; -1: at the first update */
	int budget_evals;      /* the run's budgets: 0 none */
	double budget_minutes; /* of this process, as cuco_evolve_config's */
};

/* Start c now for a run of cfg (resumed: its rate counts from the first update). */
void cli_evolve_clock_start(struct cli_evolve_clock *c, const struct cuco_evolve_config *cfg,
                            int resumed);

/*
 * " | 3m05s elapsed, ~12m left" to f: the time left by --budget-minutes, or
 * at the rate of evaluations and generations seen so far by --budget-evals
 * and the generations, whichever ends first; without " left" while no rate
 * is known.
 */
void cli_evolve_clock_print(struct cli_evolve_clock *c, const struct cuco_evolve_progress *p,
                            FILE *f);

/* Seconds left as cli_evolve_clock_print() says them after elapsed seconds; < 0: unknown. */
double cli_evolve_clock_left(const struct cli_evolve_clock *c, const struct cuco_evolve_progress *p,
                             double elapsed);

/* The loop's note for the user (cuco_evolve_opts.note): "cuco evolve: MSG" on stderr. */
void cli_evolve_note(void *arg, const char *msg);

#endif
