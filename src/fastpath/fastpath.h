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
	CUCO_FASTPATH_REDUCESCATTER = 2, /* ncclReduceScatter (ncclSum) */
	CUCO_FASTPATH_ALLREDUCE = 3,     /* ncclAllReduce (ncclSum) */
	CUCO_FASTPATH_ALLTOALL = 4,      /* ncclAlltoAll */
	CUCO_FASTPATH_GROUP_START = 5,   /* ncclGroupStart */
	CUCO_FASTPATH_SEND = 6,          /* ncclSend inside a group */
	CUCO_FASTPATH_RECV = 7,          /* ncclRecv inside a group */
	CUCO_FASTPATH_GROUP_END = 8,     /* ncclGroupEnd */
};

#define CUCO_FASTPATH_COMM_CTAS_DEFAULT 32 /* CTAs of every generated comm kernel */
#define CUCO_FASTPATH_THREADS_DEFAULT 512  /* threads per CTA */

/* Knobs of a transformation. Caller-owned; see cuco_fastpath_opts_init(). */
struct cuco_fastpath_opts {
	const char
	    *share_dir; /* folder with the *.cu.in templates; NULL: $CUCO_HOME/share/fastpath */
	int comm_ctas;  /* CTAs per comm kernel (1..1024) */
	int threads;    /* threads per CTA (32..1024, a multiple of 32) */
	int nvshmem;    /* 1: nvshmem (nvshmem_*.cu.in: all-gather, all-to-all), 0: LSA */
};

/* One call site that was replaced. */
struct cuco_fastpath_site {
	int kind;             /* enum cuco_fastpath_kind */
	int line, column;     /* 1-based position of the call's name in the input */
	char call[32];        /* the host call as written: "ncclAllGather" */
	char replacement[48]; /* what now stands there: "cuco_seed_allgather_0" */
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

/* Defaults: share_dir NULL, 32 CTAs, 512 threads. */
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
 * CUCO_ERR_UNSUPPORTED for a call it cannot transform (unsupported op or dtype,
 * a collective outside cuco_program_run, no collective at all, ...),
 * CUCO_ERR_PARSE for malformed source (unbalanced parentheses, unterminated
 * comment), CUCO_ERR_IO when a template cannot be read, CUCO_ERR_INVALID for bad
 * opts. On error out is left as it was.
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

#endif
