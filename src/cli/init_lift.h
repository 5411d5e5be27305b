/*
 * init_lift.h - `cuco init --from`: a user's MPI + NCCL program read for what
 * a workload package can take from it (its kernels and device code, its
 * includes, its NCCL calls), every other site reported as file:line.
 */
#ifndef CUCO_CLI_INIT_LIFT_H
#define CUCO_CLI_INIT_LIFT_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"
#include "util/strbuf.h"

/* One site of the user's program that init reports. */
struct lift_site {
	int line;
	char what[64];   /* "kernel foo", "ncclAllReduce", "launch foo", "MPI_Init", ... */
	char placed[64]; /* where it went: "compute.cuh", "host.cu", or "" (not placed) */
	char todo[256];  /* what the user must finish; "" for nothing */
};

struct lift {
	const char *path;
	const char *src;
	char *masked; /* src with comments and literals blanked (same offsets) */
	struct lift_site *sites;
	int nsites;
	size_t alloc;
	struct cuco_strbuf kernels;  /* lifted device code, with #line markers */
	struct cuco_strbuf includes; /* the program's #include lines that device code may need */
	struct cuco_strbuf calls;    /* the NCCL calls, as comments for host.cu */
	struct cuco_strbuf launches; /* the kernel launches, as comments for compute.cuh */
	char coll[16];               /* collective of the first NCCL collective, "" for none */
	char dtype[32];              /* its dtype argument as written */
	int ncoll;
};

/*
 * Read path into src (caller-owned, released by the caller) and lift it
 * into L (release with cli_lift_release() once this returns CUCO_OK).
 * CUCO_ERR_IO when path cannot be read.
 */
int cli_lift_file(struct lift *L, const char *path, struct cuco_strbuf *src, struct cuco_err *err);

/* Free what cli_lift_file() allocated in L. */
void cli_lift_release(struct lift *L);

/* What was lifted where, what was dropped and what is left to finish by hand, to f. */
void cli_lift_report(const struct lift *L, FILE *f);

#endif
