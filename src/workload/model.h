/*
 * model.h - a workload package's manifest as data: its programs, shapes,
 * shape rules and knobs. The lowest file of src/workload: the manifest's
 * loader (manifest.c), its shapes (shape.c) and knobs (knobs.c) all build
 * on these types; manifest.h is the folder's public face.
 */
#ifndef CUCO_WORKLOAD_MODEL_H
#define CUCO_WORKLOAD_MODEL_H

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

#endif
