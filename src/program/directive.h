/*
 * directive.h - the cuco-directive line of a device-side program and the
 * design space it is checked against.
 *
 * Every device-side program opens (before any code; only comments and blank
 * lines may come first) with one line
 *
 *   // cuco-directive: {"backend":"lsa","placement":"sequential","sync_scope":"grid",
 *                       "issuer":"cta","granularity":"whole","knobs":{"comm_ctas":32}}
 *
 * (on one line) that says which point of the design space it implements. The
 * dimensions, their values, the knobs and the constraints between them are
 * data: share/design_space.json. Errors read `file:line:column: field:
 * message`, with the column of the offending value on the directive line.
 */
#ifndef CUCO_DIRECTIVE_H
#define CUCO_DIRECTIVE_H

#include "cuco/program.h"
#include "util/error.h"

#define CUCO_DIRECTIVE_MAX_KNOBS 24          /* knob settings in one directive */
#define CUCO_DIRECTIVE_TAG "cuco-directive:" /* follows "//" on the directive line */

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

enum cuco_knob_type {
	CUCO_KNOB_INT = 1,
	CUCO_KNOB_BOOL = 2,
	CUCO_KNOB_ENUM = 3, /* one of a list of integers */
};

/* One knob setting of a directive. */
struct cuco_directive_knob {
	char name[CUCO_NAME_MAX];
	long long value; /* bools are 0 or 1 */
	int is_bool;     /* written as true/false in the directive */
	int col;         /* column of the value on the directive line, 0 when unknown */
};

/*
 * A parsed directive. Caller-owned: cuco_directive_init() or a successful
 * parse fills it, cuco_directive_release() frees file.
 */
struct cuco_directive {
	char *file; /* program file name for messages (malloc'd; may be NULL) */
	int line;   /* line of the directive in the program, 0 when built in code */
	char dims[CUCO_NDIMS][CUCO_NAME_MAX]; /* value of each enum cuco_dimension */
	int dim_col[CUCO_NDIMS];              /* column of each value, 0 when unknown */
	int nknobs;
	struct cuco_directive_knob knobs[CUCO_DIRECTIVE_MAX_KNOBS];
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
 * realised program, so it is held at one canonical value.
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
 * constraint naming an unknown value or fact, any "multicast" value...). On
 * failure *out is left released.
 */
int cuco_design_space_load(const char *path, struct cuco_design_space *out, struct cuco_err *err);
void cuco_design_space_release(struct cuco_design_space *ds);

/*
 * Narrow ds to what a realiser supports. text (a program template, shown as
 * name in messages) may hold one line "// cuco-realizes: {...}" whose JSON
 * object maps a dimension to the array of its values the template realises
 * and "knobs" to {knob: {"values": [...]}} (enum knobs: the values kept) or
 * {knob: {"min": a, "max": b}} (int knobs: the range kept), and "inert" to
 * {condition: {dimension or knob: value}}, the condition a placement
 * ("stream_overlap"), "dimension=value" ("backend=ce") or "knob=value"
 * ("device_signal=true"; a bool knob takes true or false, an int or enum knob
 * an integer it allows): the genes the template ignores there, each with its
 * canonical value (kept in ds->inert; see cuco_directive_canonicalize()).
 * Neither the placement nor the condition's own dimension or knob can be inert.
 * Everything named must be allowed by ds and by the line's own narrowing.
 * No such line: ds is unchanged. Returns
 * CUCO_OK or CUCO_ERR_PARSE / CUCO_ERR_INVALID with `name:line: cuco-realizes:
 * field: message` in err; ds is then unchanged.
 */
int cuco_design_space_narrow(struct cuco_design_space *ds, const char *name, const char *text,
                             struct cuco_err *err);

/* The knob spec called name, or NULL. */
const struct cuco_ds_knob *cuco_design_space_knob(const struct cuco_design_space *ds,
                                                  const char *name);

/*
 * 1-based line of the first line of src that is a directive line (leading
 * whitespace, "//", optional blanks, "cuco-directive"), wherever it is; 0
 * when there is none.
 */
int cuco_directive_find_line(const char *src);

/* Empty directive (no values, no knobs, no file). */
void cuco_directive_init(struct cuco_directive *d);

/*
 * Find the directive in a program's source text and parse it into *out
 * (which need not be initialised). Checks the syntax and structure only:
 * the JSON, the five dimensions present as strings, knobs as integers or
 * booleans; values are checked by cuco_directive_validate(). Returns
 * CUCO_OK, or CUCO_ERR_PARSE with `file:line:column: field: message` in err
 * for: no directive, a directive after code, two directives, bad JSON, an
 * unknown or missing dimension, a bad knob. On failure *out is released.
 */
int cuco_directive_parse(const char *file_name, const char *source_text, struct cuco_directive *out,
                         struct cuco_err *err);

/*
 * Check d against the design space: every value allowed, every knob known
 * and in range, every constraint met; with facts (NULL skips them) also the
 * hardware requirements and fact-bounded knobs. Returns CUCO_OK,
 * CUCO_ERR_INVALID (not in the design space) or CUCO_ERR_UNSUPPORTED (valid,
 * but this machine cannot run it), with the first problem in err.
 */
int cuco_directive_validate(const struct cuco_directive *d, const struct cuco_design_space *ds,
                            const struct cuco_hw_facts *facts, struct cuco_err *err);

/* A knob's value, or dflt when the directive does not set it. */
long long cuco_directive_knob(const struct cuco_directive *d, const char *name, long long dflt);

/*
 * Set (or add) a knob. Returns CUCO_OK, or CUCO_ERR_INVALID when the name is
 * too long or there are already CUCO_DIRECTIVE_MAX_KNOBS knobs.
 */
int cuco_directive_set_knob(struct cuco_directive *d, const char *name, long long value,
                            int is_bool);

/*
 * The directive as canonical JSON: the five dimensions in enum order, then
 * "knobs" with names sorted, compact. The same directive always gives the
 * same bytes (the store keys on them). malloc'd; NULL only if out of memory.
 */
char *cuco_directive_to_json(const struct cuco_directive *d);

/* "// cuco-directive: <canonical JSON>" without a newline; malloc'd, NULL if out of memory. */
char *cuco_directive_to_line(const struct cuco_directive *d);

/*
 * Set one inert gene of d to its canonical value when d meets in's condition:
 * d's dimension in->when_dim has the value in->when_value or, for a knob
 * condition (when_dim -1), d sets knob in->when_knob to in->when_knob_value (a
 * directive without that knob does not meet it). A knob that d lacks is added
 * only when d already sets some knob (a directive completed for a template); a
 * directive without knobs stays without. Returns 1 when d changed, else 0.
 */
int cuco_directive_apply_inert(struct cuco_directive *d, const struct cuco_ds_inert *in);

/*
 * Canonicalise d for the template that narrowed ds: every inert gene whose
 * condition d meets (ds->inert) set as cuco_directive_apply_inert() does, so that
 * directives that realise the same program are equal. The entries conditioned
 * on a placement or dimension=value are applied first, then those conditioned
 * on knob=value (each group in line order), so a knob condition sees the knob
 * as the other entries leave it, whatever the order of the line's JSON keys.
 * Returns the number of genes changed. The result is not re-validated.
 */
int cuco_directive_canonicalize(struct cuco_directive *d, const struct cuco_design_space *ds);

/* Free what d owns and re-initialise it. */
void cuco_directive_release(struct cuco_directive *d);

#endif
