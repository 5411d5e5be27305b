/*
 * fastpath.h - the rule-based fast path: a host-orchestrated program (compute
 * kernels + host NCCL collectives) in, a conservative device-initiated seed
 * program (NCCL device API, LSA over symmetric windows) out.
 *
 * The seed keeps the host program's compute untouched and replaces each host
 * collective call expression with a call to a generated launcher whose kernel
 * moves the data with LSA loads/stores. The generated code comes from templates
 * in <share_dir> (allgather.cu.in, ...), sits inside one EVOLVE-BLOCK, and the
 * file opens with a cuco-directive line describing the seed's choices.
 */
#ifndef CUCO_FASTPATH_H
#define CUCO_FASTPATH_H

#include "util/error.h"
#include "util/strbuf.h"

/* What a recognised call site is. Append only (the numbers may be stored). */
enum cuco_fastpath_kind {
	CUCO_FASTPATH_ALLGATHER = 1,     /* ncclAllGather */
	CUCO_FASTPATH_REDUCESCATTER = 2, /* ncclReduceScatter */
	CUCO_FASTPATH_ALLREDUCE = 3,     /* ncclAllReduce */
	CUCO_FASTPATH_ALLTOALL = 4,      /* ncclAlltoAll */
	CUCO_FASTPATH_GROUP_START = 5,   /* ncclGroupStart */
	CUCO_FASTPATH_SEND = 6,          /* ncclSend inside a group */
	CUCO_FASTPATH_RECV = 7,          /* ncclRecv inside a group */
	CUCO_FASTPATH_GROUP_END = 8,     /* ncclGroupEnd */
	CUCO_FASTPATH_REDUCE = 9,        /* ncclReduce */
	CUCO_FASTPATH_BROADCAST = 10,    /* ncclBroadcast */
	CUCO_FASTPATH_BCAST = 11,        /* ncclBcast (ncclBroadcast in place) */
};

#define CUCO_FASTPATH_COMM_CTAS_DEFAULT 32 /* CTAs of every generated comm kernel */
#define CUCO_FASTPATH_THREADS_DEFAULT 512  /* threads per CTA */

/*
 * A call site to transform, as a parser that knows the file (the lift's libclang) names it: the
 * 1-based line and column (in bytes, a tab is one) of the callee's name token.
 */
struct cuco_fastpath_hint {
	int line, column;
	const char *call; /* the callee expected there: "ncclAllReduce", "ncclGroupStart", ... */
};

/* Knobs of a transformation. Caller-owned; see cuco_fastpath_opts_init(). */
struct cuco_fastpath_opts {
	const char
	    *share_dir; /* folder with the *.cu.in templates; NULL: $CUCO_HOME/share/fastpath */
	int comm_ctas;  /* CTAs per comm kernel (1..1024) */
	int threads;    /* threads per CTA (32..1024, a multiple of 32) */
	int nvshmem;    /* 1: nvshmem (nvshmem_*.cu.in: all-gather, all-to-all), 0: LSA */
	/*
	 * Site hints (caller-owned, nhints entries). With nhints > 0 exactly these sites are
	 * transformed, in any function of the file; every other NCCL call is left alone, and
	 * cuco_program_run need not exist. ncclGroupStart/ncclGroupEnd hints delimit the groups
	 * (in source order). With nhints == 0: every host collective, all inside cuco_program_run.
	 */
	const struct cuco_fastpath_hint *hints;
	int nhints;
	/* The tensor set the launchers resolve buffers in, as one line of C (lifted files:
	 * "cuco_lift_tensors()"); NULL: the name of cuco_program_run's tensors parameter, which
	 * a hinted site outside cuco_program_run cannot use (an error names the site). */
	const char *tensors_expr;
	/* The stream an ncclGroupEnd launches on when this rank recorded no send or receive in the
	 * group; NULL: cuco_program_run's stream parameter inside it, "0" (the legacy default
	 * stream) elsewhere. */
	const char *stream_expr;
};

/* One call site that was replaced. */
struct cuco_fastpath_site {
	int kind;             /* enum cuco_fastpath_kind */
	int line, column;     /* 1-based position of the call's name in the input */
	char call[32];        /* the host call as written: "ncclAllGather" */
	char replacement[48]; /* what now stands there: "cuco_seed_allgather_0" */
	int hint;             /* index in opts->hints of the hint that named it; -1 without hints */
	char dtype[24]; /* the dtype as an NCCL name ("ncclFloat32"); "" when held in a variable or
	                   macro (decided at run time) or for calls without one */
	char op[16];    /* the same for the op ("ncclAvg") */
};

/*
 * What a transformation found. Caller-owned struct: cuco_fastpath_report_init()
 * before use, cuco_fastpath_report_release() after; sites is owned by the report.
 */
struct cuco_fastpath_report {
	int nsites;
	size_t alloc;
	struct cuco_fastpath_site *sites; /* in source order */
	int ncollectives;                 /* kernels generated: collectives + send/recv groups */
	int ngroups;                      /* ncclGroupStart/End pairs */
};

/* Defaults: share_dir NULL, 32 CTAs, 512 threads, LSA, no hints, expressions NULL. */
void cuco_fastpath_opts_init(struct cuco_fastpath_opts *opts);

void cuco_fastpath_report_init(struct cuco_fastpath_report *report);
void cuco_fastpath_report_release(struct cuco_fastpath_report *report);

/* Static name of a kind ("allgather", "send", ...); "unknown" for others. */
const char *cuco_fastpath_kind_name(int kind);

/*
 * Transform the host program src (NUL-terminated CUDA C++; file_name is used in
 * messages and in the generated header comment) into a seed program appended to
 * out. report (may be NULL) is reset and filled with the replaced call sites.
 *
 * Returns CUCO_OK, or with a message in err (file:line:column of the culprit):
 * CUCO_ERR_UNSUPPORTED for a call it cannot transform (unknown op or dtype name,
 * a collective outside cuco_program_run, no collective at all, ...),
 * CUCO_ERR_PARSE for malformed source (unbalanced parentheses, unterminated
 * comment), CUCO_ERR_IO when a template cannot be read, CUCO_ERR_INVALID for bad
 * opts, a hint whose position does not hold its call among them. On error out is
 * left as it was.
 */
int cuco_fastpath_transform(const char *file_name, const char *src,
                            const struct cuco_fastpath_opts *opts, struct cuco_strbuf *out,
                            struct cuco_fastpath_report *report, struct cuco_err *err);

/*
 * Read in_path, transform it, write the seed to out_path (replacing it only
 * when the transformation succeeded). Same results as cuco_fastpath_transform.
 */
int cuco_fastpath_transform_file(const char *in_path, const char *out_path,
                                 const struct cuco_fastpath_opts *opts,
                                 struct cuco_fastpath_report *report, struct cuco_err *err);

/* What `cuco fastpath ARG` was given. */
enum cuco_fastpath_input {
	CUCO_FASTPATH_INPUT_WORKLOAD =
	    1,                          /* a workload name, a package directory, a .json manifest */
	CUCO_FASTPATH_INPUT_SOURCE = 2, /* a C, C++ or CUDA source file */
};

/*
 * Classify ARG: a directory or a path ending in .json is a workload; a name ending in .cu .cuh
 * .cpp .cc .cxx .c .h .hpp .hh .hxx (any case) is a source file, and so is an existing regular
 * file named with a '/'; anything else (a bare name) is a workload name. Returns
 * enum cuco_fastpath_input.
 */
int cuco_fastpath_input_kind(const char *arg);

/*
 * Whether src (len bytes, read from path) is a program the fast path transforms: C, C++ or
 * CUDA text that defines cuco_program_run. CUCO_OK if so; otherwise one message in err saying
 * what the file is and what to do: CUCO_ERR_UNSUPPORTED for an empty file and for an ordinary
 * program (its NCCL calls listed as path:line, the next step `cuco init NAME --from PATH`, then
 * `cuco fastpath ./NAME`), CUCO_ERR_PARSE for binary data or text that cannot be tokenised.
 */
int cuco_fastpath_check_source(const char *path, const char *src, size_t len, struct cuco_err *err);

#endif
