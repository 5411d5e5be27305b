/*
 * recheck.h - the winner re-check: the best program of an evolve run verified
 * again at every shape of its workload with a fresh input seed, then once
 * more under compute-sanitizer (memcheck and racecheck). A search can overfit
 * one shape and one input; this is where that shows.
 */
#ifndef CUCO_SEARCH_RECHECK_H
#define CUCO_SEARCH_RECHECK_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cascade/cascade.h"
#include "util/error.h"
#include "util/strbuf.h"

struct cuco_store;

/* Exit code the sanitizer wrappers ask for when they found something. */
#define CUCO_RECHECK_SANITIZER_EXIT 86

/* Default wrappers: in front of the harness; --target-processes all follows the forked ranks. */
#define CUCO_RECHECK_MEMCHECK                                                              \
	"compute-sanitizer --tool memcheck --report-api-errors no --target-processes all " \
	"--print-limit 10000 --error-exitcode 86"
#define CUCO_RECHECK_RACECHECK                                                           \
	"compute-sanitizer --tool racecheck --target-processes all --print-limit 10000 " \
	"--error-exitcode 86"

/* What to re-check and how. Borrowed; everything must outlive cuco_recheck_run(). */
struct cuco_recheck_opts {
	struct cuco_store *store;
	int64_t run_id;                /* the evolve run whose best program is re-checked */
	const struct cuco_manifest *m; /* its workload */
	struct cuco_run_opts run;      /* run options of the search; seed is replaced */
	int sanitize;                  /* 1: also the memcheck and racecheck passes */
	const char *memcheck;          /* wrapper; NULL: CUCO_RECHECK_MEMCHECK */
	const char *racecheck;         /* wrapper; NULL: CUCO_RECHECK_RACECHECK */
};

/* What the re-check found. Plain data. */
struct cuco_recheck_result {
	int64_t program_id;  /* the best program; 0 when the run has no correct program */
	int64_t recheck_run; /* the run row (kind 'recheck') its evaluations belong to */
	uint64_t input_seed; /* the fresh input seed */
	int nchecks;         /* evaluations stored */
	int npassed;
	int passed; /* every check passed */
};

/*
 * The best program of run_id: the program with the highest fitness among the
 * run's correct evaluations (ties: the earlier evaluation). *program_id is 0
 * when nothing is correct (not an error); *median_us and *fitness (may be
 * NULL) get its evaluation's values. Errors: CUCO_ERR_STORE.
 */
int cuco_recheck_best(struct cuco_store *store, int64_t run_id, int64_t *program_id,
                      double *median_us, double *fitness, struct cuco_err *err);

/* A fresh input seed for the re-check, never equal to search_seed; deterministic. */
uint64_t cuco_recheck_seed(uint64_t search_seed);

/*
 * The sanitizer's verdict from a run log (the harness's stderr with the
 * wrapper's "=========" lines and cuco's "wrapper exited with code N" line,
 * as cuco_run_programs() leaves it): 1 when it reported errors ("ERROR
 * SUMMARY: N errors" with N > 0, or exit code CUCO_RECHECK_SANITIZER_EXIT),
 * else 0 - also 0 when every finding is a race inside a vendor library's kernel
 * (cuBLAS's nvjet_*, CUTLASS, NCCL), which racecheck reports for cuBLAS + NCCL
 * alone. summary (may be NULL) gets the sanitizer's finding and summary lines,
 * and a cuco line saying when vendor races were set aside.
 */
int cuco_recheck_sanitizer_verdict(const char *log, struct cuco_strbuf *summary);

/*
 * A note when the timed runs of r spread far above their median: the mean at
 * least CUCO_RECHECK_SPREAD_PCT % and CUCO_RECHECK_SPREAD_US over the median
 * (the search ranks by the median, which a few slow runs in ten leave alone,
 * e.g. a device-signal program's every 8th run, docs/overlap.md). Writes
 * "slow runs: mean M us, p90 P us against a median of D us" into buf and
 * returns 1; else returns 0 and leaves buf alone. Small shapes' ordinary noise
 * stays under the microsecond floor.
 */
#define CUCO_RECHECK_SPREAD_PCT 1.0
#define CUCO_RECHECK_SPREAD_US 5.0
int cuco_recheck_spread_note(const struct cuco_program_result *r, char *buf, size_t n);

/*
 * A note when the best program ran slower than the host baseline beside it
 * (lat_us > base_us, both finite and positive): "slower than the host baseline
 * (B us)", and when shape is not among the shapes the search judged (searched:
 * their names joined by ','; NULL when unknown) "; the search judged 8192 only:
 * --shape 2048 adds this shape to the fitness". Writes it into buf and returns
 * 1; else returns 0 and leaves buf alone. (Measured 2026-12-01 on two H200s: a
 * search at 8192 alone picked 256-column tiles, 0.985x the baseline at 2048.)
 */
int cuco_recheck_slower_note(double lat_us, double base_us, const char *shape, const char *searched,
                             char *buf, size_t n);

/*
 * The shapes a run's fitness judged, for cuco_recheck_slower_note: the run
 * config's "shapes" joined by ',' ("8192,2048"), or shape when the config has
 * none (runs stored before several shapes; NULL config too). buf is left
 * empty when the list holds a non-string or does not fit in n.
 */
void cuco_recheck_searched(const char *config, const char *shape, char *buf, size_t n);

/*
 * Re-check the best program of o->run_id: every shape of o->m with a fresh
 * seed, then (o->sanitize) memcheck and racecheck at the smallest shape. Stores
 * a run of kind 'recheck', one evaluation per check (a sanitizer finding is
 * status 'sanitizer', stage 'verify', error = the sanitizer's summary), the
 * meta key `run.<id>.recheck` (JSON: recheck run, program, seed, passed,
 * evaluation ids per check) and, when every check passed,
 * `run.<id>.best_checked` = the program id. Returns CUCO_OK when the checks
 * ran (res->passed says how they went; res->program_id 0: nothing to check),
 * else the cascade's error (e.g. CUCO_ERR_NO_GPU) with err set.
 */
int cuco_recheck_run(const struct cuco_recheck_opts *o, struct cuco_recheck_result *res,
                     struct cuco_err *err);

/* One line per check of a stored re-check of run_id to f ("# recheck: ..."). */
int cuco_recheck_print(FILE *f, struct cuco_store *store, int64_t run_id, struct cuco_err *err);

/*
 * The stored re-check of run_id as one JSON object in *out (caller decrefs):
 * "run", "rechecked" (false and nothing else when there is none), and the
 * stored "recheck_run", "program", "seed" (the inputs'), "sanitized", "passed" and "checks",
 * each check with its evaluation's "shape", "status", "median_us", "p90_us",
 * "mean_us", "fitness" and "error" (null for none).
 */
int cuco_recheck_json(struct cuco_store *store, int64_t run_id, json_t **out, struct cuco_err *err);

#endif
