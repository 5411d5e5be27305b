/*
 * internal.h - what the report's files share: the run as loaded from the
 * store (programs, evaluations, the bench run's references) and the helpers
 * and sections each file draws. Not a public header: src/report/ only.
 */
#ifndef CUCO_REPORT_INTERNAL_H
#define CUCO_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"
#include "util/strbuf.h"

#define MAX_ISLANDS 16

struct prog {
	int64_t id;
	char *name, *origin, *op, *directive, *code;
	char *flags; /* where its code contradicts its directive, one per line; NULL: none */
	int64_t island, generation, parent;
	int64_t cross;          /* its crossover partner (a second parent); 0: none */
	double fitness, lat_us; /* best correct evaluation; latency by the run's statistic */
	char *result_json;      /* that evaluation's per-shape details; NULL: one shape */
};

struct ev {
	int64_t program_id;
	double lat_us, fitness; /* latency by the run's statistic (median or mean) */
	double base_us; /* the host baseline timed beside it at the run's shape; NaN: unknown */
	int ok;
	char stage[12];  /* stage reached: compile, run, verify, bench */
	char status[16]; /* "ok" or how it failed */
};

/* A reference latency: host baseline, a peer, compute or comm alone. */
struct ref {
	char label[96];
	double us;
};

struct report {
	struct cuco_store *store;
	struct cuco_run_rec run;
	struct prog *progs;
	int nprogs;
	size_t aprogs;
	struct ev *evs;
	int nevs;
	int one_rank; /* an evaluation ran on 1 rank: nothing sent, communication not measured */
	size_t aevs;
	int64_t bench_run;
	const char *timing; /* "sustained" or "burst": the run's, and its bench run's */
	struct ref refs[16];
	int nrefs;
	double compute_us, comm_us; /* the bench run's fastest compute alone and comm alone */
	double base_us;
	double peer_us; /* its fastest peer, named peer */
	char peer[64];
	int nshapes;      /* shapes the fitness covers (the config's "shapes"; 1 when absent) */
	char shapes[160]; /* their names, "4096, 8192" */
	char queues[48];  /* CUDA_DEVICE_MAX_CONNECTIONS the run was timed under, in words */
	int mean;         /* the run ranks by the mean of the timed runs, not the median */
	char gpu[128];    /* from the first evaluation that names one (evolve runs store none) */
	int exploit_from; /* first generation that exploits (the run's schedule); 0: unknown */
};

/* The program id in r (ids ascend, so a binary search); NULL when not of the run. */
struct prog *cuco_report_find_prog(struct report *r, int64_t id);

/* The run's seed: the program named "seed", else its first program; NULL when none. */
struct prog *cuco_report_seed_prog(struct report *r);

/* A number of a JSON object's key, NaN when absent or not a number (o may be NULL). */
double cuco_report_num_of(const json_t *o, const char *key);

/* ---- text (diff.c) ---- */

/* Markdown table cell: no pipes or newlines. */
void cuco_report_md_cell(struct cuco_strbuf *sb, const char *s);
/* "812.3 us", or "-" when us is not finite. */
void cuco_report_fmt_us(char *buf, size_t n, double us);
/* "1.234x" (base / us), or "-". */
void cuco_report_fmt_x(char *buf, size_t n, double base, double us);
/* The lines of a unified diff as HTML (inside a <pre>): added, deleted and hunk lines in spans. */
void cuco_report_diff_lines(struct cuco_strbuf *h, const char *diff);

/* One key of a directive that differs between two programs. */
struct cuco_report_change {
	char key[96];         /* a dimension ("placement") or a knob ("knobs.comm_ctas") */
	char *before, *after; /* values as text; NULL: the key is absent there */
};

/*
 * The keys whose values differ from directive JSON a to b, sorted by key, at
 * most max into out (a NULL: none). Returns their number; free the values
 * with cuco_report_changes_free().
 */
int cuco_report_directive_changes(const char *a, const char *b, struct cuco_report_change *out,
                                  int max);
void cuco_report_changes_free(struct cuco_report_change *c, int n);

/* "key: old -> new, ..." for the keys that differ (or all of b when a is NULL). */
void cuco_report_directive_diff(const char *a, const char *b, struct cuco_strbuf *out);

/* ---- charts (svg.c) ---- */

/* Best latency so far per island over the run's evaluations; one polyline per island. */
void cuco_report_island_chart(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md);

/*
 * Every evaluation of the run: latency against evaluation order, coloured by
 * island; failures in a band above the plot, one row per stage they failed at.
 */
void cuco_report_scatter(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md);

/* The colour of island k (k < 0: the seed's, of no island). */
const char *cuco_report_island_colour(int64_t k);

/* ---- sections (sections.c, lineage.c) ---- */

void cuco_report_summary(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                         struct cuco_strbuf *md);
void cuco_report_lineage(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                         struct cuco_strbuf *md);
/* The ancestry of the best program as a tree: parents and crossover partners, no siblings. */
void cuco_report_tree(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                      struct cuco_strbuf *md);
/* Seed to best step by step: the directive change and the code diff of each step. */
void cuco_report_steps(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                       struct cuco_strbuf *md);
void cuco_report_flags(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md);
int cuco_report_stats(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
                      struct cuco_err *err);
int cuco_report_recheck(struct report *r, struct cuco_strbuf *h, struct cuco_strbuf *md,
                        struct cuco_err *err);
void cuco_report_code(struct report *r, const struct prog *best, struct cuco_strbuf *h,
                      struct cuco_strbuf *md);

#endif
