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

#include <stddef.h>

#include "cuco/program.h"
#include "util/error.h"
#include "util/jsonpos.h"

#define CUCO_MANIFEST_NAME_MAX 64 /* workload and program names, NUL included */

/* What a program of a workload is for. */
enum cuco_program_role {
	CUCO_PROGRAM_BASELINE = 1, /* the host-orchestrated original: compute kernels + host NCCL */
	CUCO_PROGRAM_PEER = 2,     /* a hand-written competitor (e.g. cuBLAS + NCCL) */
	CUCO_PROGRAM_COMPUTE = 3,  /* compute alone: a lower bound, not verified */
	CUCO_PROGRAM_COMM = 4,     /* communication alone: a lower bound, not verified */
};

/* One entry of "programs". Strings are owned by the manifest. */
struct cuco_manifest_program {
	char *name;
	int role;    /* enum cuco_program_role */
	char *file;  /* path resolved against the manifest's directory */
	char **libs; /* extra libraries to link ("cublas"); nlibs entries */
	int nlibs;
	int verify; /* 1 unless "verify": false; a baseline is always verified */
};

/*
 * A loaded manifest. Caller-owned struct: cuco_manifest_load() fills it,
 * cuco_manifest_release() frees everything it points to. All strings and
 * arrays below belong to the manifest.
 */
/*
 * One of "shape_rules": what every program of the workload needs of one
 * shape parameter, e.g. the GEMM's N % 8 == 0. With per_rank the parameter is
 * divided among the ranks first: it must divide by the rank count, and the
 * share must meet min and multiple_of. Checked when the manifest loads (the
 * rules without per_rank) and when a command picks its shapes and rank count
 * (cuco_manifest_check_shape), before anything compiles.
 */
struct cuco_shape_rule {
	int param;          /* index into params[] */
	int per_rank;       /* the value / ranks, which must divide it */
	long long min;      /* 0: none */
	long long multiple; /* multiple_of; 0: none */
	char *why;          /* "" when absent */
	int line, col;      /* of the rule, for messages */
};

struct cuco_manifest {
	char *path;        /* the manifest.json as given to load */
	char *dir;         /* its directory ("." when path has no slash) */
	char *name;        /* workload name ([A-Za-z0-9_-]+) */
	char *description; /* "" when absent */
	int abi;           /* CUCO_ABI_VERSION */
	char *dtype_name;  /* "bf16", "f16" or "f32" */
	int dtype;         /* enum cuco_dtype */
	double tolerance;  /* relative tolerance of the output check, in (0, 1) */
	int *ranks;        /* rank counts the workload supports, each >= 2 */
	int nranks;
	int nparams; /* parameter names, in declaration order */
	char params[CUCO_MAX_PARAMS][CUCO_NAME_MAX];
	struct cuco_shape *shapes; /* params of each shape in the order of params[] */
	int nshapes;
	char *default_shape; /* name of one of shapes[] */
	char *workload;      /* workload.cu, resolved against dir */
	char *host_program;  /* host baseline .cu, resolved against dir */
	struct cuco_manifest_program *programs;
	int nprograms;
	char *knobs_json; /* the "knobs" object, compact with sorted keys; "{}" when absent */
	int nknobs;       /* members of knobs_json */
	int requires_cc;  /* "requires": {"cc"}: compute capability x 10 the programs need; 0 any */
	char *requires_why;            /* its "why"; "" when absent */
	struct cuco_shape_rule *rules; /* "shape_rules": what the programs take */
	int nrules;
	char *text;      /* the manifest's text, for the positions of errors found after loading */
	size_t text_len; /* its bytes */
	int nspec;       /* the last nspec of shapes[] were given by their values */
	/* "reference": {"program": NAME}: the verified program whose outputs are the expected
	 * ones (cuco-harness --reference-program); NULL: the workload's reference() */
	char *reference_program;
	/* "argv": the programs' command-line template for every shape ({P}: parameter P,
	 * {ranks}: the rank count); NULL when absent. cuco_manifest_argv() expands it. */
	char *argv;
	/* per shape (same index and room as shapes[]): its own "argv" template, NULL for argv
	 * above. shapes[].argv stays "": the rank count is known only when a run starts. */
	char **shape_argv;
};

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

/*
 * Whether shape sh (one of m's) meets every shape rule on `ranks` ranks (1:
 * the whole shape on one GPU). CUCO_OK, or CUCO_ERR_INVALID with
 * `manifest:line:column: shapes[i].P: ...` naming the value, the rank count,
 * the rule and its why.
 */
int cuco_manifest_check_shape(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                              struct cuco_err *err);

/* Free what the manifest owns and zero it. NULL and zeroed manifests are fine. */
void cuco_manifest_release(struct cuco_manifest *m);

/* The shape called name, or NULL. Points into m. */
const struct cuco_shape *cuco_manifest_shape(const struct cuco_manifest *m, const char *name);

/* Shapes a manifest can take by their values (cuco_manifest_shape_spec). */
#define CUCO_MANIFEST_SPEC_SHAPES 8

/*
 * The shape `text` names: one of m's by name, or one given by its values,
 * "4096x14784x8192" (every parameter, in params order) or
 * "M=4096,N=14784,K=8192" (every parameter once, any order); the values of
 * one of m's shapes give that shape. Other values are added to m (at most CUCO_MANIFEST_SPEC_SHAPES
 * of them; the same values give the same shape) under its values joined by 'x', and must meet the
 * shape rules that do not depend on the rank count. Pointers to m's shapes stay valid. NULL with
 * err naming the text, the parameters and m's shapes when it is neither.
 */
const struct cuco_shape *cuco_manifest_shape_spec(struct cuco_manifest *m, const char *text,
                                                  struct cuco_err *err);

/*
 * tmpl with every {NAME} (NAME an identifier) replaced: {ranks} by ranks, {P} by sh's parameter
 * P; any other text, braces included, is kept. Into out (appended). 0, or -1 with the first
 * NAME that is neither in bad (out then unspecified).
 */
int cuco_manifest_argv_expand(const char *tmpl, const struct cuco_shape *sh, int ranks,
                              struct cuco_strbuf *out, char *bad, size_t badlen);

/*
 * The programs' command line for shape sh (one of m's) on `ranks` ranks: sh's "argv" template,
 * else the manifest's, expanded (cuco_manifest_argv_expand) into out (reset first; "" when
 * neither is given). CUCO_OK, or CUCO_ERR_INVALID with err naming the manifest and the shape
 * when it names an unknown parameter or is longer than cuco_shape.argv holds.
 */
int cuco_manifest_argv(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                       struct cuco_strbuf *out, struct cuco_err *err);

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
