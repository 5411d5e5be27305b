/*
 * manifest.h - a workload package's manifest.json: parse, validate, look up.
 *
 * A workload lives in workloads/<name>/ with a manifest.json that names its
 * shapes, rank counts, tolerance and programs (host baseline, peers,
 * compute-only and comm-only variants). Every error is reported as
 * `file:line:column: field: what is wrong` (field is a path such as
 * shapes[1].K), pointing at the offending value in the JSON text (see
 * util/jsonpos.h, which this header includes for its users).
 */
#ifndef CUCO_MANIFEST_H
#define CUCO_MANIFEST_H

#include "util/error.h"
#include "util/jsonpos.h"
#include "workload/model.h"
#include "workload/shape.h"

/*
 * Read and validate path (a manifest.json) into *out, which need not be
 * initialised. Returns CUCO_OK, or CUCO_ERR_IO (unreadable), CUCO_ERR_PARSE
 * (not JSON, or wrong structure/types) or CUCO_ERR_INVALID (a value out of
 * range, a missing file) with `file:line:column: field: message` in err; on
 * failure *out is left released (safe to release again).
 */
int cuco_manifest_load(const char *path, struct cuco_manifest *out, struct cuco_err *err);

/*
 * Whether GPUs of compute capability cc (x 10; 0 unknown) can run the
 * workload's programs: CUCO_OK, or CUCO_ERR_UNSUPPORTED with err saying which
 * capability the manifest requires and why.
 */
int cuco_manifest_check_cc(const struct cuco_manifest *m, int cc, struct cuco_err *err);

/*
 * Whether the workload runs on `ranks` ranks: one of its manifest's rank
 * counts, or 1 when allow_one (a check of the compute side on one GPU, where
 * nothing is sent; bench and eval allow it, evolve does not). CUCO_OK, or
 * CUCO_ERR_UNSUPPORTED with err naming the manifest, the field and the counts.
 */
int cuco_manifest_check_ranks(const struct cuco_manifest *m, int ranks, int allow_one,
                              struct cuco_err *err);

/* Free what the manifest owns and zero it. NULL and zeroed manifests are fine. */
void cuco_manifest_release(struct cuco_manifest *m);

/* The program called name, or NULL. Points into m. */
const struct cuco_manifest_program *cuco_manifest_program(const struct cuco_manifest *m,
                                                          const char *name);

/* "baseline", "peer", "compute", "comm"; "?" for anything else. */
const char *cuco_program_role_name(int role);

/*
 * Names of the workloads under workloads_dir: every subdirectory that holds a
 * manifest.json, sorted. The manifests are not loaded (a broken one is still
 * listed). *names is a malloc'd array of *n malloc'd strings; free it with
 * cuco_workloads_list_free(). Returns CUCO_OK or CUCO_ERR_IO /
 * CUCO_ERR_NOT_FOUND (no such directory).
 */
int cuco_workloads_list(const char *workloads_dir, char ***names, int *n, struct cuco_err *err);
void cuco_workloads_list_free(char **names, int n);

/*
 * Load workloads_dir/name/manifest.json into *out. CUCO_ERR_NOT_FOUND (with
 * the available names in the message) when there is no such workload;
 * CUCO_ERR_INVALID when the manifest's "name" differs from the directory;
 * otherwise as cuco_manifest_load().
 */
int cuco_workload_find(const char *workloads_dir, const char *name, struct cuco_manifest *out,
                       struct cuco_err *err);

#endif
