/* rules.c - the lift's small decisions (rules.h). */
#include "lift/rules.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cuco/program.h>

#include "util/xalloc.h"

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

int cuco_lift_rules_step_call(const char *callee)
{
	static const char *const calls[] = {
	    "ncclAllReduce",     "ncclBroadcast",  "ncclBcast",    "ncclReduce",  "ncclAllGather",
	    "ncclReduceScatter", "ncclAlltoAll",   "ncclGather",   "ncclScatter", "ncclSend",
	    "ncclRecv",          "ncclGroupStart", "ncclGroupEnd", NULL};
	return in_list(callee, calls);
}

int cuco_lift_rules_alloc_call(const char *callee)
{
	static const char *const calls[] = {"cudaMalloc",      "cudaMallocManaged",
	                                    "cudaMallocAsync", "cudaMallocPitch",
	                                    "ncclMemAlloc",    NULL};
	return in_list(callee, calls);
}

int cuco_lift_rules_dtype(const char *t)
{
	static const struct {
		const char *name;
		int dtype;
	} map[] = {
	    {"float", CUCO_DTYPE_F32},
	    {"double", CUCO_DTYPE_F64},
	    {"__half", CUCO_DTYPE_F16},
	    {"half", CUCO_DTYPE_F16},
	    {"__nv_bfloat16", CUCO_DTYPE_BF16},
	    {"nv_bfloat16", CUCO_DTYPE_BF16},
	    {"char", CUCO_DTYPE_I8},
	    {"signed char", CUCO_DTYPE_I8},
	    {"int8_t", CUCO_DTYPE_I8},
	    {"unsigned char", CUCO_DTYPE_U8},
	    {"uint8_t", CUCO_DTYPE_U8},
	    {"int", CUCO_DTYPE_I32},
	    {"int32_t", CUCO_DTYPE_I32},
	    {"unsigned int", CUCO_DTYPE_U32},
	    {"unsigned", CUCO_DTYPE_U32},
	    {"uint32_t", CUCO_DTYPE_U32},
	    {"long", CUCO_DTYPE_I64},
	    {"long long", CUCO_DTYPE_I64},
	    {"int64_t", CUCO_DTYPE_I64},
	    {"unsigned long", CUCO_DTYPE_U64},
	    {"unsigned long long", CUCO_DTYPE_U64},
	    {"uint64_t", CUCO_DTYPE_U64},
	    {"size_t", CUCO_DTYPE_U64},
	};
	char buf[96];
	size_t n;

	if (!t)
		return 0;
	/* "const float" and "struct __half" read as their type */
	while (!strncmp(t, "const ", 6) || !strncmp(t, "volatile ", 9) || !strncmp(t, "struct ", 7))
		t = strchr(t, ' ') + 1;
	n = strlen(t);
	while (n > 0 && t[n - 1] == ' ')
		n--;
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, t, n);
	buf[n] = 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(buf, map[i].name))
			return map[i].dtype;
	return 0;
}

/* The expression text without spaces, so that "ls_dev[ i ].d_send" matches "ls_dev[i].d_send". */
static void squeeze(char *out, size_t len, const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && s[i] && k + 1 < len; i++)
		if (!isspace((unsigned char)s[i]))
			out[k++] = s[i];
	out[k] = 0;
}

/* Whether the argument's text names the buffer: the root itself, cast, offset or indexed. */
static int arg_names(const char *arg, const char *root)
{
	char a[512], r[256];
	const char *s;
	size_t n;

	squeeze(a, sizeof(a), arg, strlen(arg));
	squeeze(r, sizeof(r), root, strlen(root));
	n = strlen(r);
	if (!n)
		return 0;
	for (s = strstr(a, r); s; s = strstr(s + 1, r)) {
		int before = s > a && (isalnum((unsigned char)s[-1]) || s[-1] == '_' ||
		                       s[-1] == '.' || s[-1] == '>');
		int after = isalnum((unsigned char)s[n]) || s[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* How one argument position of a call uses its buffer: 1 reads, 2 writes (whole), 3 both, 0
 * unknown (not a call the rule knows). */
static int arg_use(const struct cuco_lift_call *c, size_t k)
{
	const char *n = c->callee;

	if (c->origin == CUCO_LIFT_ORIGIN_NCCL) {
		if (!strcmp(n, "ncclSend"))
			return k == 0 ? 1 : 0;
		if (!strcmp(n, "ncclRecv"))
			return k == 0 ? 2 : 0;
		if (!strcmp(n, "ncclBcast"))
			return k == 0 ? 3 : 0;
		if (cuco_lift_rules_step_call(n) && strcmp(n, "ncclGroupStart") &&
		    strcmp(n, "ncclGroupEnd"))
			return k == 0 ? 1 : k == 1 ? 2 : 0;
	}
	if (c->origin == CUCO_LIFT_ORIGIN_CUDA) {
		if (!strcmp(n, "cudaMemset") || !strcmp(n, "cudaMemsetAsync"))
			return k == 0 ? 2 : 0;
		if (!strcmp(n, "cudaMemcpy") || !strcmp(n, "cudaMemcpyAsync") ||
		    !strcmp(n, "cudaMemcpyPeer") || !strcmp(n, "cudaMemcpyPeerAsync"))
			return k == 0 ? 2 : k == (size_t)(strstr(n, "Peer") ? 2 : 1) ? 1 : 0;
	}
	return 0;
}

int cuco_lift_rules_role(const struct cuco_lift_facts *f, const struct cuco_lift_range *step,
                         const char *text, const char *root)
{
	int reads = 0, writes = 0, mentions = 0, classified = 0;
	size_t rn = strlen(root);
	char r[256];

	/* a root that is not a plain name or member chain ("buf + i") is not followed */
	squeeze(r, sizeof(r), root, rn);
	for (const char *s = r; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '[' ||
		      *s == ']' || *s == '-' || *s == '>'))
			return CUCO_ROLE_INOUT;
	/* every mention of the buffer in the step's text */
	{
		char *st;
		size_t len = step->end - step->begin;
		char *sq = cuco_xcalloc(len + 1, 1);
		squeeze(sq, len + 1, text + step->begin, len);
		for (st = strstr(sq, r); st; st = strstr(st + 1, r)) {
			size_t n = strlen(r);
			int before = st > sq && (isalnum((unsigned char)st[-1]) || st[-1] == '_' ||
			                         st[-1] == '.' || st[-1] == '>');
			int after = isalnum((unsigned char)st[n]) || st[n] == '_';
			mentions += !before && !after;
		}
		free(sq);
	}
	/* the mentions that are arguments of a call the rule knows */
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->name.file != step->file || c->name.offset < step->begin ||
		    c->name.offset >= step->end)
			continue;
		for (size_t k = 0; k < c->nargs; k++) {
			int use;
			if (!c->args[k].text || !arg_names(c->args[k].text, root))
				continue;
			use = arg_use(c, k);
			if (!use)
				return CUCO_ROLE_INOUT;
			reads |= use & 1;
			writes |= use & 2;
			classified++;
		}
	}
	if (!mentions || classified != mentions)
		return CUCO_ROLE_INOUT; /* used elsewhere, or through a name the rule cannot see */
	if (writes && !reads)
		return CUCO_ROLE_OUTPUT;
	if (reads && !writes)
		return CUCO_ROLE_INPUT;
	return CUCO_ROLE_INOUT;
}

static int float_dtype(const struct cuco_lift_arg *a)
{
	static const char *const floats[] = {"ncclFloat",    "ncclFloat32", "ncclFloat16",
	                                     "ncclHalf",     "ncclFloat64", "ncclDouble",
	                                     "ncclBfloat16", NULL};
	if (!a->enumerator)
		return 1; /* a dtype in a variable: it may be one */
	return in_list(a->enumerator, floats) || !strncmp(a->enumerator, "ncclFloat8", 10);
}

int cuco_lift_rules_float_reduction(const struct cuco_lift_facts *f,
                                    const struct cuco_lift_range *step, const int *calls, size_t n)
{
	(void)step;
	for (size_t i = 0; i < n; i++) {
		const struct cuco_lift_call *c = &f->calls[calls[i]];
		size_t dt = 0, op = 0;
		if (!strcmp(c->callee, "ncclAllReduce") ||
		    !strcmp(c->callee, "ncclReduceScatter")) {
			dt = 3;
			op = 4;
		} else if (!strcmp(c->callee, "ncclReduce")) {
			dt = 3; /* (send, recv, count, dtype, op, root, ...) */
			op = 4;
		} else {
			continue;
		}
		if (c->nargs <= op || !float_dtype(&c->args[dt]))
			continue;
		{
			const char *e = c->args[op].enumerator;
			if (!e || (strcmp(e, "ncclMin") && strcmp(e, "ncclMax")))
				return 1; /* a sum, product or average, or an op in a variable */
		}
	}
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->caller >= 0 && f->functions[c->caller].kind != CUCO_LIFT_FN_HOST &&
		    (!strncmp(c->callee, "atomicAdd", 9) || !strncmp(c->callee, "atomicSub", 9)))
			return 1;
	}
	return 0;
}

int cuco_lift_rules_compute_only(const struct cuco_lift_facts *f, const struct cuco_lift_range *r)
{
	int computes = 0;

	for (size_t i = 0; i < f->nlaunches; i++)
		if (f->launches[i].name.file == r->file && f->launches[i].name.offset >= r->begin &&
		    f->launches[i].name.offset < r->end)
			computes = 1;
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		if (c->name.file != r->file || c->name.offset < r->begin ||
		    c->name.offset >= r->end)
			continue;
		if (c->origin == CUCO_LIFT_ORIGIN_LOCAL || c->origin == CUCO_LIFT_ORIGIN_TOOLKIT)
			computes = 1;
		else if (c->origin != CUCO_LIFT_ORIGIN_SYSTEM)
			return 0; /* CUDA, NCCL and MPI calls: set-up, copies, checks */
	}
	return computes;
}

int cuco_lift_rules_own_lines(const char *text, unsigned begin, unsigned end)
{
	if (!text)
		return 0;
	for (unsigned i = begin; i > 0 && text[i - 1] != '\n'; i--)
		if (!isspace((unsigned char)text[i - 1]))
			return 0;
	for (unsigned i = end; text[i] && text[i] != '\n'; i++)
		if (!isspace((unsigned char)text[i]) && text[i] != ';')
			return 0;
	return 1;
}

int cuco_lift_rules_mpi_runs(const char *callee)
{
	static const char *const runs[] = {"MPI_Init",
	                                   "MPI_Init_thread",
	                                   "MPI_Initialized",
	                                   "MPI_Finalized",
	                                   "MPI_Query_thread",
	                                   "MPI_Finalize",
	                                   "MPI_Abort",
	                                   "MPI_Comm_rank",
	                                   "MPI_Comm_size",
	                                   "MPI_Comm_split_type",
	                                   "MPI_Comm_dup",
	                                   "MPI_Comm_free",
	                                   "MPI_Comm_set_errhandler",
	                                   "MPI_Get_processor_name",
	                                   "MPI_Error_string",
	                                   "MPI_Error_class",
	                                   "MPI_Wtime",
	                                   "MPI_Wtick",
	                                   "MPI_Type_size",
	                                   "MPI_Type_contiguous",
	                                   "MPI_Type_commit",
	                                   "MPI_Type_free",
	                                   "MPI_Barrier",
	                                   "MPI_Bcast",
	                                   "MPI_Reduce",
	                                   "MPI_Allreduce",
	                                   "MPI_Gather",
	                                   "MPI_Allgather",
	                                   "MPI_Scatter",
	                                   "MPI_Alltoall",
	                                   "MPI_Send",
	                                   "MPI_Ssend",
	                                   "MPI_Recv",
	                                   "MPI_Isend",
	                                   "MPI_Irecv",
	                                   "MPI_Sendrecv",
	                                   "MPI_Wait",
	                                   "MPI_Waitall",
	                                   "MPI_Get_count",
	                                   "MPI_Info_create",
	                                   "MPI_Info_set",
	                                   "MPI_Info_free",
	                                   NULL};
	return in_list(callee, runs);
}
