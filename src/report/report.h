/*
 * report.h - the report of an evolve run, from the store alone: why it failed
 * (when it did); best against seed, host baseline, peers and the ideal bound;
 * best latency per island and every evaluation (failures by stage); the best
 * program's lineage and ancestry tree; seed to best step by step (directive
 * change and code diff); directive statistics; failures; the re-check; the
 * best code and its diff against the seed. One
 * self-contained HTML file (inline CSS and SVG, no script, no network) and
 * the same in Markdown. Deterministic: the same store gives the same bytes.
 */
#ifndef CUCO_REPORT_H
#define CUCO_REPORT_H

#include <stdint.h>

#include "report/diff.h"
#include "util/error.h"
#include "util/strbuf.h"

struct cuco_store;

/*
 * Build the report of evolve run run_id into html and md (appended; both
 * caller-owned). Errors: CUCO_ERR_NOT_FOUND (no such run), CUCO_ERR_INVALID
 * (the run is not of kind 'evolve'), CUCO_ERR_STORE.
 */
int cuco_report_build(struct cuco_store *store, int64_t run_id, struct cuco_strbuf *html,
                      struct cuco_strbuf *md, struct cuco_err *err);

/*
 * Build the report and write <dir>/run-<id>.html and <dir>/run-<id>.md (dir
 * is created when missing). html_path and md_path (may be NULL) get the
 * file names. Errors: those of cuco_report_build(), CUCO_ERR_IO.
 */
int cuco_report_write(struct cuco_store *store, int64_t run_id, const char *dir, char *html_path,
                      size_t html_size, char *md_path, size_t md_size, struct cuco_err *err);

#endif
