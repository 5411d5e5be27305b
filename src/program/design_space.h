/*
 * design_space.h - the design space a directive is checked against: its
 * dimensions and their values, the knobs (types, ranges, defaults) and the
 * constraints between them, loaded from data (share/design_space.json) and
 * checked with `file:line:column: field: message` errors.
 */
#ifndef CUCO_DESIGN_SPACE_H
#define CUCO_DESIGN_SPACE_H

#include "cuco/program.h"
#include "util/error.h"

/* The dimensions of the design space, in canonical order. */
enum cuco_dimension {
	CUCO_DIM_BACKEND = 0,
	CUCO_DIM_PLACEMENT = 1,
	CUCO_DIM_SYNC_SCOPE = 2,
	CUCO_DIM_ISSUER = 3,
	CUCO_DIM_GRANULARITY = 4,
	CUCO_NDIMS = 5,
};

/* "backend", "placement", ... for a dimension; NULL when out of range. */
const char *cuco_dimension_name(int dim);

/* The enum cuco_dimension called name ("backend", ...), or -1. */
int cuco_dimension_index(const char *name);

enum cuco_knob_type {
	CUCO_KNOB_INT = 1,
	CUCO_KNOB_BOOL = 2,
	CUCO_KNOB_ENUM = 3, /* one of a list of integers */
};

/*
 * What the machine offers; hardware-dependent constraints are checked against
 * it. Measured on the node by the harness's probe (cuco_hw_facts_probe(), the
 * facts `cuco doctor` prints); tests build them by hand.
 */
struct cuco_hw_facts {
	int gin_capable;       /* the network supports GPU-initiated networking */
	int lsa_all_reachable; /* every rank can load/store every other rank's memory */
	int nranks;            /* ranks of one program */
	int sm_count;          /* SMs of one GPU (the smallest, where they differ) */
	int cc;                /* compute capability x 10 (90: sm_90), the lowest; 0 unknown */
	int gpus;              /* GPUs on this node; 0 unknown */
};

/* Hardware facts that a constraint may require ("requires" in the data). */
enum cuco_hw_requirement {
	CUCO_REQ_NONE = 0,
	CUCO_REQ_GIN_CAPABLE_NETWORK = 1,     /* "gin_capable_network" */
	CUCO_REQ_ALL_RANKS_LSA_REACHABLE = 2, /* "all_ranks_lsa_reachable" */
	/* "nvshmem_transport": every rank reachable over NVLink P2P (NVSHMEM's built-in
	 * transport), or an RDMA (IB/RoCE) network for its remote transport */
	CUCO_REQ_NVSHMEM_TRANSPORT = 3,
};

/* One value of a dimension. Strings point into the design space's JSON. */
struct cuco_ds_value {
	const char *name;
	const char *doc;
};

struct cuco_ds_dimension {
	const char *name;
	const char *doc;
	struct cuco_ds_value *values;
	int nvalues;
};

struct cuco_ds_knob {
	const char *name;
	const char *doc;
	int type; /* enum cuco_knob_type */
	long long min, max;
	long long multiple_of; /* 1 when any integer will do */
	long long *values;     /* CUCO_KNOB_ENUM: the allowed values */
	int nvalues;
	const char *max_fact; /* "sm_count": the value may not exceed that fact; or NULL */
	int searched;         /* 0 ("searched": false): cuco evolve holds it as the seed has it
	                       * unless --search names it; 1 by default */
	int has_default;      /* the data gives "default" */
	long long dflt; /* that default (bools 0 or 1); see cuco_design_space_knob_default() */
};

/* A dimension and a set of its values: "issuer in {cta}". */
struct cuco_ds_clause {
	int dim; /* enum cuco_dimension */
	const char **values;
	int nvalues;
};

/* When every `when` clause holds, every `then` clause must hold and `requires` be true. */
struct cuco_ds_constraint {
	struct cuco_ds_clause *when;
	int nwhen;
	struct cuco_ds_clause *then;
	int nthen;
	int requires; /* enum cuco_hw_requirement */
	const char *why;
};

/*
 * A gene that a template ignores under one placement, under one value of
 * another dimension, or under one value of a knob (the "inert" member of its
 * cuco-realizes line, keyed "stream_overlap", "backend=ce" or
 * "device_signal=true"): there the dimension or knob changes nothing in the
 * realized program, so it is held at one canonical value.
 */
struct cuco_ds_inert {
	int when_dim; /* enum cuco_dimension of the condition (placement: bare key); -1: a knob */
	char when_value[CUCO_NAME_MAX]; /* the value that dimension must have ("" for a knob) */
	char when_knob[CUCO_NAME_MAX];  /* the condition's knob ("" for a dimension) */
	long long when_knob_value;      /* the value the directive must set it to (bools 0 or 1) */
	int dim;                        /* enum cuco_dimension, or -1 for a knob */
	char name[CUCO_NAME_MAX];       /* the dimension's or the knob's name */
	char value[CUCO_NAME_MAX];      /* a dimension's canonical value */
	long long knob_value;           /* a knob's canonical value (bools 0 or 1) */
	int is_bool;
};

/*
 * The loaded design space. Caller-owned: cuco_design_space_load() fills it,
 * cuco_design_space_release() frees it. dims[] is indexed by enum
 * cuco_dimension. All strings point into root (a jansson json_t *).
 */
struct cuco_design_space {
	void *root;
	struct cuco_ds_dimension dims[CUCO_NDIMS];
	struct cuco_ds_knob *knobs;
	int nknobs;
	int knobs_cap; /* entries allocated: a knob that failed to load may own values */
	struct cuco_ds_constraint *constraints;
	int nconstraints;
	struct cuco_ds_inert *inert; /* from cuco_design_space_narrow() (malloc'd); may be NULL */
	int ninert;
};

/*
 * Load and check a design space file (share/design_space.json). Returns
 * CUCO_OK, CUCO_ERR_IO, or CUCO_ERR_PARSE/CUCO_ERR_INVALID with `file:line:
 * column: field: message` in err (a missing or unknown dimension, a
 * constraint naming an unknown value or fact, any "multicast" value, a knob
 * default outside its knob...). On failure *out is left released.
 */
int cuco_design_space_load(const char *path, struct cuco_design_space *out, struct cuco_err *err);
void cuco_design_space_release(struct cuco_design_space *ds);

/* The knob spec called name, or NULL. */
const struct cuco_ds_knob *cuco_design_space_knob(const struct cuco_design_space *ds,
                                                  const char *name);

/* Index of value in dim's values, or -1. */
int cuco_design_space_value_index(const struct cuco_ds_dimension *dim, const char *value);

/* 1 when x is one of enum knob k's values. */
int cuco_design_space_enum_has(const struct cuco_ds_knob *k, long long x);

/*
 * The value a knob takes where a directive must set it and nothing else says
 * which: the knob's "default" in the data (else false, the first enum value,
 * the int range's low end), held to the knob as a template's cuco-realizes
 * line may have narrowed it: an enum value no longer allowed gives the first
 * value, an int is moved into the range onto a multiple.
 */
long long cuco_design_space_knob_default(const struct cuco_ds_knob *k);

/* 1 when s mentions multicast in any case: never a valid name or value in cuco. */
int cuco_design_space_mentions_multicast(const char *s);

#define CUCO_MULTICAST_MSG                                                                      \
	"multicast is never a valid choice in cuco (NVLink multicast is off on its machines); " \
	"use lsa, gin or ce"

#endif
