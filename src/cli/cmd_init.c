/* cmd_init.c - `cuco init`: a new workload package, from nothing or from a
 * user's MPI + NCCL program, that compiles and verifies as generated. The
 * files come from share/init/ (placeholders @KEY@, sections kept per
 * collective between `//@if c1 c2` and `//@endif` lines); the manifest is
 * written here. With --from, the program's kernels are lifted into
 * compute.cuh and every site init could not place is reported as
 * file:line. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "program/directive.h"
#include "program/realize.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco init NAME [--collective C] [--params P1,P2,...] [--from FILE.cu] [-o DIR]\n"
    "\n"
    "Write a workload package that compiles and verifies as generated: manifest.json\n"
    "(shapes, shape_rules, tolerance, ranks), workload.cu (describe, generate and a\n"
    "reference that never communicates), host.cu (the program ABI around the compute\n"
    "and the collective), compute_only.cu, comm_only.cu, compute.cuh (the compute you\n"
    "replace: compute_rows over rows r0..r1).\n"
    "\n"
    "  --collective C   allreduce, allgather, reducescatter, alltoall or sendrecv\n"
    "                   (default: the first collective of --from, else allreduce)\n"
    "  --params LIST    shape parameters, comma-separated (default M,N): rows are the\n"
    "                   product of all but the last, the last is the row width\n"
    "  --from FILE      lift FILE's kernels into compute.cuh and its NCCL calls into\n"
    "                   host.cu; every site not placed is reported as FILE:LINE\n"
    "  -o DIR           where to write (default ./NAME); must not exist or be empty\n"
    "\n"
    "Then: cuco bench DIR --ranks 1 (one GPU) or cuco bench DIR (2+ GPUs); a\n"
    "DIR names a package when it holds a '/' (./NAME).\n";

#define INIT_MAX_PARAMS 8

static const char *const collectives[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                                          "sendrecv"};
#define NCOLL ((int)(sizeof(collectives) / sizeof(collectives[0])))

/* One @KEY@ and its text. */
struct init_var {
	const char *key;
	const char *val;
};

struct init_opts {
	const char *name;
	const char *coll; /* one of collectives[] */
	char params[INIT_MAX_PARAMS][CUCO_NAME_MAX];
	int nparams;
	const char *from;
	const char *dir;
};

/* ------------------------------------------------------------ rendering */

/* Whether the `//@if` line (after the marker) names coll. */
static int if_names(const char *list, size_t len, const char *coll)
{
	size_t n = strlen(coll);
	const char *p = list, *end = list + len;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		const char *w = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - w) == n && !strncmp(w, coll, n))
			return 1;
	}
	return 0;
}

/*
 * Render a share/init file: keep the lines of `//@if` sections that name
 * coll, drop the markers, replace every @KEY@ of vars. An unknown @KEY@ or
 * an unbalanced section is an error naming path:line.
 */
static int render(const char *path, const char *text, const char *coll, const struct init_var *vars,
                  int nvars, struct cuco_strbuf *out, struct cuco_err *err)
{
	const char *p = text;
	int line = 0, in_if = 0, keep = 1;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *q = p;

		line++;
		while (q < p + len && (*q == ' ' || *q == '\t'))
			q++;
		if (!strncmp(q, "//@if ", 6)) {
			if (in_if)
				return cuco_err_set(err, CUCO_ERR_PARSE, "%s:%d: nested //@if",
				                    path, line);
			in_if = 1;
			keep = if_names(q + 6, len - (size_t)(q + 6 - p), coll);
		} else if (!strncmp(q, "//@endif", 8)) {
			if (!in_if)
				return cuco_err_set(err, CUCO_ERR_PARSE,
				                    "%s:%d: //@endif without //@if", path, line);
			in_if = 0;
			keep = 1;
		} else if (keep) {
			for (const char *c = p; c < p + len; c++) {
				const char *e;
				int k;

				if (*c != '@' || !isupper((unsigned char)c[1])) {
					cuco_strbuf_addch(out, *c);
					continue;
				}
				e = c + 1;
				while (e < p + len && (isupper((unsigned char)*e) || *e == '_'))
					e++;
				if (e >= p + len || *e != '@') {
					cuco_strbuf_addch(out, *c);
					continue;
				}
				for (k = 0; k < nvars; k++)
					if (strlen(vars[k].key) == (size_t)(e - c - 1) &&
					    !strncmp(vars[k].key, c + 1, (size_t)(e - c - 1)))
						break;
				if (k == nvars)
					return cuco_err_set(err, CUCO_ERR_PARSE,
					                    "%s:%d: unknown placeholder %.*s", path,
					                    line, (int)(e - c + 1), c);
				cuco_strbuf_adds(out, vars[k].val);
				c = e;
			}
			cuco_strbuf_addch(out, '\n');
		}
		p += len + (eol ? 1 : 0);
	}
	if (in_if)
		return cuco_err_set(err, CUCO_ERR_PARSE, "%s: //@if without //@endif", path);
	return CUCO_OK;
}

/* ------------------------------------------------------------ --from */

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
	int nsites, alloc;
	struct cuco_strbuf kernels;  /* lifted device code, with #line markers */
	struct cuco_strbuf includes; /* the program's #include lines that device code may need */
	struct cuco_strbuf calls;    /* the NCCL calls, as comments for host.cu */
	struct cuco_strbuf launches; /* the kernel launches, as comments for compute.cuh */
	char coll[16];               /* collective of the first NCCL collective, "" for none */
	char dtype[32];              /* its dtype argument as written */
	int ncoll;
};

static int line_of(const struct lift *L, size_t off)
{
	int n = 1;

	for (size_t i = 0; i < off && L->src[i]; i++)
		n += L->src[i] == '\n';
	return n;
}

static struct lift_site *site_add(struct lift *L, size_t off, const char *what, const char *placed,
                                  const char *todo)
{
	struct lift_site *s;

	if (L->nsites == L->alloc) {
		L->alloc = L->alloc ? 2 * L->alloc : 16;
		L->sites = realloc(L->sites, (size_t)L->alloc * sizeof(*L->sites));
		if (!L->sites)
			abort();
	}
	s = &L->sites[L->nsites++];
	s->line = line_of(L, off);
	snprintf(s->what, sizeof(s->what), "%s", what);
	snprintf(s->placed, sizeof(s->placed), "%s", placed);
	snprintf(s->todo, sizeof(s->todo), "%s", todo);
	return s;
}

/* Blank comments, string and character literals (newlines kept), so that
 * searches see only code. */
static char *mask_source(const char *src)
{
	size_t n = strlen(src);
	char *m = malloc(n + 1);

	if (!m)
		abort();
	memcpy(m, src, n + 1);
	for (size_t i = 0; i < n;) {
		if (src[i] == '/' && src[i + 1] == '/') {
			while (i < n && src[i] != '\n')
				m[i++] = ' ';
		} else if (src[i] == '/' && src[i + 1] == '*') {
			m[i++] = ' ';
			m[i++] = ' ';
			while (i < n && !(src[i] == '*' && src[i + 1] == '/')) {
				if (src[i] != '\n')
					m[i] = ' ';
				i++;
			}
			if (i < n) {
				m[i++] = ' ';
				m[i++] = ' ';
			}
		} else if (src[i] == '"' || src[i] == '\'') {
			char q = src[i++];
			while (i < n && src[i] != q && src[i] != '\n') {
				if (src[i] == '\\' && i + 1 < n)
					m[i++] = ' ';
				m[i++] = ' ';
			}
			i++;
		} else {
			i++;
		}
	}
	return m;
}

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* Offset just past the bracket that closes the one at open ('(' or '{'), or 0. */
static size_t match_close(const char *m, size_t open)
{
	char o = m[open], c = o == '(' ? ')' : '}';
	int depth = 0;

	for (size_t i = open; m[i]; i++) {
		if (m[i] == o)
			depth++;
		else if (m[i] == c && --depth == 0)
			return i + 1;
	}
	return 0;
}

/* Offset of the start of the line holding off. */
static size_t line_start(const char *s, size_t off)
{
	while (off > 0 && s[off - 1] != '\n')
		off--;
	return off;
}

/* The identifier at or after off, into out. */
static void ident_at(const char *m, size_t off, char *out, size_t len)
{
	size_t k = 0;

	while (m[off] && !is_ident((unsigned char)m[off]))
		off++;
	while (m[off] && is_ident((unsigned char)m[off]) && k + 1 < len)
		out[k++] = m[off++];
	out[k] = '\0';
}

/*
 * Top-level device functions (__global__ and __device__, with any template
 * line above them) go to compute.cuh verbatim, each led by a #line marker so
 * nvcc's errors name the user's file and line.
 */
static void lift_device_code(struct lift *L)
{
	const char *m = L->masked;
	size_t n = strlen(m);

	for (size_t i = 0; i < n; i++) {
		size_t start, body, end;
		char name[64] = "";
		int global;

		if (strncmp(m + i, "__global__", 10) && strncmp(m + i, "__device__", 10))
			continue;
		if ((i > 0 && is_ident((unsigned char)m[i - 1])) ||
		    is_ident((unsigned char)m[i + 10]))
			continue;
		global = !strncmp(m + i, "__global__", 10);
		start = line_start(m, i);
		/* a `template <...>` line directly above belongs to it */
		if (start > 0) {
			size_t prev = line_start(m, start - 1);
			const char *t = m + prev;
			while (*t == ' ' || *t == '\t')
				t++;
			if (!strncmp(t, "template", 8))
				start = prev;
		}
		/* the declaration's parameter list, then its body (or a ';' for a prototype) */
		body = i;
		while (body < n && m[body] != '(')
			body++;
		if (body >= n)
			break;
		{
			size_t k = body;
			while (k > i && !is_ident((unsigned char)m[k - 1]))
				k--;
			while (k > i && is_ident((unsigned char)m[k - 1]))
				k--;
			ident_at(m, k, name, sizeof(name));
		}
		end = match_close(m, body);
		if (!end)
			break;
		while (end < n && m[end] != '{' && m[end] != ';')
			end++;
		if (end >= n)
			break;
		if (m[end] == '{') {
			end = match_close(m, end);
			if (!end)
				break;
		} else {
			end++;
		}
		cuco_strbuf_addf(&L->kernels, "#line %d \"%s\"\n", line_of(L, start), L->path);
		cuco_strbuf_add(&L->kernels, L->src + start, end - start);
		cuco_strbuf_adds(&L->kernels, "\n");
		{
			char what[64];
			snprintf(what, sizeof(what), "%s %s", global ? "kernel" : "device function",
			         name);
			site_add(L, i, what, "compute.cuh", "");
		}
		i = end;
	}
}

/* #include lines (not NCCL's, MPI's or cuco's) that lifted device code may need. */
static void lift_includes(struct lift *L)
{
	const char *s = L->src;

	for (size_t i = 0; s[i];) {
		size_t e = i;
		const char *t = L->masked + i;
		char line[512];

		while (s[e] && s[e] != '\n')
			e++;
		while (*t == ' ' || *t == '\t')
			t++;
		snprintf(line, sizeof(line), "%.*s", (int)(e - i), s + i);
		if (!strncmp(t, "#include", 8) && !strstr(line, "nccl") && !strstr(line, "mpi.h") &&
		    !strstr(line, "cuco"))
			cuco_strbuf_addf(&L->includes, "%s\n", line);
		i = s[e] ? e + 1 : e;
	}
}

/* The collective of an NCCL function name, or NULL when it is none of ours. */
static const char *coll_of_nccl(const char *fn)
{
	if (!strcmp(fn, "ncclAllReduce"))
		return "allreduce";
	if (!strcmp(fn, "ncclAllGather"))
		return "allgather";
	if (!strcmp(fn, "ncclReduceScatter"))
		return "reducescatter";
	if (!strcmp(fn, "ncclAlltoAll"))
		return "alltoall";
	if (!strcmp(fn, "ncclSend") || !strcmp(fn, "ncclRecv"))
		return "sendrecv";
	return NULL;
}

/* Argument k (0-based) of the call whose '(' is at open, trimmed, into out. */
static void call_arg(const struct lift *L, size_t open, int k, char *out, size_t len)
{
	const char *m = L->masked;
	int depth = 0, idx = 0;
	size_t a = open + 1;

	out[0] = '\0';
	for (size_t i = open + 1; m[i]; i++) {
		if (m[i] == '(' || m[i] == '[' || m[i] == '{')
			depth++;
		else if ((m[i] == ')' || m[i] == ']' || m[i] == '}') && depth > 0)
			depth--;
		else if ((m[i] == ',' || m[i] == ')') && depth == 0) {
			if (idx == k) {
				while (a < i && isspace((unsigned char)L->src[a]))
					a++;
				size_t b = i;
				while (b > a && isspace((unsigned char)L->src[b - 1]))
					b--;
				snprintf(out, len, "%.*s", (int)(b - a), L->src + a);
				return;
			}
			if (m[i] == ')')
				return;
			idx++;
			a = i + 1;
		}
	}
}

/* Every call of a known kind: NCCL, MPI, kernel launches, allocations, copies. */
static void lift_calls(struct lift *L)
{
	const char *m = L->masked;
	size_t n = strlen(m);

	for (size_t i = 0; i < n; i++) {
		char fn[64], what[96], todo[256];
		size_t j, open;

		if (!is_ident((unsigned char)m[i]) || (i > 0 && is_ident((unsigned char)m[i - 1])))
			continue;
		ident_at(m, i, fn, sizeof(fn));
		j = i + strlen(fn);
		/* a launch: name<<<...>>>(...) */
		if (!strncmp(m + j, "<<<", 3)) {
			size_t e = j, args;
			while (m[e] && strncmp(m + e, ">>>", 3))
				e++;
			args = m[e] ? e + 3 : e;
			while (m[args] == ' ' || m[args] == '\t')
				args++;
			e = m[args] == '(' ? match_close(m, args) : 0;
			if (!e)
				e = args;
			cuco_strbuf_addf(&L->launches, "//   %s:%d: %.*s;\n", L->path,
			                 line_of(L, i), (int)(e - i), L->src + i);
			snprintf(what, sizeof(what), "launch %s", fn);
			site_add(
			    L, i, what, "",
			    "call it from compute_rows (compute.cuh, where the launch is quoted) "
			    "on rows r0..r1 of X, W and Y, in place of the RMS-norm launch");
			i = e > j ? e - 1 : j;
			continue;
		}
		open = j;
		while (open < n && (m[open] == ' ' || m[open] == '\t'))
			open++;
		if (m[open] != '(') {
			i = j > i ? j - 1 : i;
			continue;
		}
		todo[0] = '\0';
		if (!strncmp(fn, "nccl", 4)) {
			const char *c = coll_of_nccl(fn);
			char call[512];
			size_t close = match_close(m, open);

			if (!close)
				close = open + 1;
			snprintf(call, sizeof(call), "%.*s", (int)(close - i), L->src + i);
			if (c) {
				char dt[32], op[32] = "";
				int dpos =
				    !strcmp(fn, "ncclSend") || !strcmp(fn, "ncclRecv") ? 2 : 3;

				call_arg(L, open, dpos, dt, sizeof(dt));
				if (!strcmp(c, "allreduce") || !strcmp(c, "reducescatter"))
					call_arg(L, open, 4, op, sizeof(op));
				if (!L->coll[0]) {
					snprintf(L->coll, sizeof(L->coll), "%s", c);
					snprintf(L->dtype, sizeof(L->dtype), "%s", dt);
				}
				L->ncoll++;
				cuco_strbuf_addf(&L->calls, "//   %s:%d: %s\n", L->path,
				                 line_of(L, i), call);
				if (strcmp(c, L->coll))
					snprintf(
					    todo, sizeof(todo),
					    "a second collective (%s): host.cu holds the first "
					    "(%s); add this one to host.cu and the reference",
					    c, L->coll);
				else if (strcmp(dt, "ncclFloat32") && strcmp(dt, "ncclFloat"))
					snprintf(
					    todo, sizeof(todo),
					    "dtype %s: the package moves f32 (ncclFloat32); "
					    "change the tensors' dtype in workload.cu and host.cu",
					    dt);
				else if (op[0] && strcmp(op, "ncclSum"))
					snprintf(todo, sizeof(todo),
					         "op %s: the package sums (ncclSum) and so does "
					         "its reference; change both",
					         op);
				site_add(L, i, fn, "host.cu", todo);
			} else if (!strcmp(fn, "ncclGroupStart") || !strcmp(fn, "ncclGroupEnd")) {
				site_add(L, i, fn, !strcmp(L->coll, "sendrecv") ? "host.cu" : "",
				         "");
			} else if (!strncmp(fn, "ncclCommInit", 12) ||
			           !strcmp(fn, "ncclGetUniqueId") ||
			           !strcmp(fn, "ncclCommDestroy") ||
			           !strcmp(fn, "ncclCommFinalize")) {
				site_add(L, i, fn, "",
				         "not needed: the harness (and an exported program's "
				         "runtime) owns the communicator");
			} else if (!strcmp(fn, "ncclMemAlloc") || !strcmp(fn, "ncclMemFree") ||
			           !strcmp(fn, "ncclCommWindowRegister") ||
			           !strcmp(fn, "ncclCommWindowDeregister")) {
				site_add(L, i, fn, "",
				         "not needed: every tensor workload.cu describes lives in "
				         "a symmetric window");
			} else if (strcmp(fn, "ncclGetErrorString") &&
			           strcmp(fn, "ncclGetLastError")) {
				snprintf(todo, sizeof(todo),
				         "%s is not a collective the package can place (allreduce, "
				         "allgather, reducescatter, alltoall, send/recv); "
				         "write it into host.cu by hand",
				         fn);
				site_add(L, i, fn, "", todo);
			}
		} else if (!strncmp(fn, "MPI_", 4)) {
			site_add(L, i, fn, "",
			         "not needed in the package: ranks, the unique id and the "
			         "launch are the harness's (cuco bench --launcher runs mpirun)");
		} else if (!strcmp(fn, "cudaFree") || !strcmp(fn, "cudaFreeAsync")) {
			site_add(L, i, fn, "", "not needed: the harness frees the tensors");
		} else if (!strcmp(fn, "cudaMalloc") || !strcmp(fn, "cudaMallocAsync")) {
			site_add(L, i, fn, "",
			         "buffers become the workload's tensors: size X, W, Y and Z in "
			         "workload.cu's describe (cuco_workload_describe)");
		} else if (!strcmp(fn, "cudaMemcpy") || !strcmp(fn, "cudaMemcpyAsync") ||
		           !strcmp(fn, "cudaMemset") || !strcmp(fn, "cudaMemsetAsync") ||
		           !strcmp(fn, "curandGenerateUniform")) {
			site_add(L, i, fn, "",
			         "inputs come from the seed: fill them in workload.cu's "
			         "cuco_workload_generate; checks of the output become its "
			         "reference (cuco_workload_reference)");
		}
		i = open;
	}
}

static void lift_release(struct lift *L)
{
	free(L->masked);
	free(L->sites);
	cuco_strbuf_release(&L->kernels);
	cuco_strbuf_release(&L->includes);
	cuco_strbuf_release(&L->calls);
	cuco_strbuf_release(&L->launches);
}

static int lift_file(struct lift *L, const char *path, struct cuco_strbuf *src,
                     struct cuco_err *err)
{
	memset(L, 0, sizeof(*L));
	cuco_strbuf_init(&L->kernels, 0);
	cuco_strbuf_init(&L->includes, 0);
	cuco_strbuf_init(&L->calls, 0);
	cuco_strbuf_init(&L->launches, 0);
	L->path = path;
	if (cuco_strbuf_read_file(src, path))
		return cuco_err_set(err, CUCO_ERR_IO, "--from %s: %s", path, strerror(errno));
	L->src = src->buf;
	L->masked = mask_source(src->buf);
	lift_device_code(L);
	lift_includes(L);
	lift_calls(L);
	return CUCO_OK;
}

/* ------------------------------------------------------------ the package */

/* manifest.json: shapes that meet the rules on 1, 2, 4 and 8 ranks. */
static void write_manifest_text(const struct init_opts *o, struct cuco_strbuf *sb)
{
	static const struct {
		const char *name;
		long long rows, width;
	} shapes[] = {{"small", 1024, 1024}, {"medium", 4096, 4096}, {"large", 16384, 8192}};
	const char *last = o->params[o->nparams - 1];
	int split = strcmp(o->coll, "allreduce") && strcmp(o->coll, "sendrecv");

	cuco_strbuf_addf(sb, "{\n  \"name\": \"%s\",\n", o->name);
	cuco_strbuf_addf(sb,
	                 "  \"description\": \"Each rank computes Y = compute(X, W) on its rows "
	                 "(compute.cuh: an RMS norm of each row scaled by W until you replace "
	                 "it), then %s.\",\n",
	                 !strcmp(o->coll, "allreduce")       ? "all ranks sum their Y into Z"
	                 : !strcmp(o->coll, "allgather")     ? "all ranks gather every Y into Z"
	                 : !strcmp(o->coll, "reducescatter") ? "rank r receives block r of the "
	                                                       "sum of all Y in Z"
	                 : !strcmp(o->coll, "alltoall")      ? "block p of rank r's Y goes to "
	                                                       "block r of rank p's Z"
	                                                : "rank r sends Y to rank r+1 (a ring), "
	                                                  "which keeps it in Z");
	cuco_strbuf_adds(sb, "  \"abi\": 1,\n  \"dtype\": \"f32\",\n  \"tolerance\": 0.001,\n"
	                     "  \"ranks\": [2, 4, 8],\n  \"params\": [");
	for (int i = 0; i < o->nparams; i++)
		cuco_strbuf_addf(sb, "%s\"%s\"", i ? ", " : "", o->params[i]);
	cuco_strbuf_adds(sb, "],\n  \"shapes\": [\n");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		cuco_strbuf_addf(sb, "    {\"name\": \"%s\"", shapes[s].name);
		for (int i = 0; i < o->nparams; i++)
			cuco_strbuf_addf(sb, ", \"%s\": %lld", o->params[i],
			                 i == o->nparams - 1 ? shapes[s].width
			                 : i == 0            ? shapes[s].rows
			                                     : 1LL);
		cuco_strbuf_addf(sb, "}%s\n",
		                 s + 1 < sizeof(shapes) / sizeof(shapes[0]) ? "," : "");
	}
	cuco_strbuf_adds(sb, "  ],\n  \"default_shape\": \"medium\",\n"
	                     "  \"workload\": \"workload.cu\",\n  \"host_program\": \"host.cu\",\n"
	                     "  \"programs\": [\n"
	                     "    {\"name\": \"baseline\", \"role\": \"baseline\", \"file\": "
	                     "\"host.cu\"},\n"
	                     "    {\"name\": \"compute\", \"role\": \"compute\", \"file\": "
	                     "\"compute_only.cu\", \"verify\": false},\n"
	                     "    {\"name\": \"comm\", \"role\": \"comm\", \"file\": "
	                     "\"comm_only.cu\", \"verify\": false}\n  ],\n"
	                     "  \"shape_rules\": [\n");
	if (split && o->nparams > 1)
		cuco_strbuf_addf(sb,
		                 "    {\"param\": \"%s\", \"per_rank\": true, \"min\": 1, \"why\": "
		                 "\"the rows are split among the ranks by %s\"},\n",
		                 o->params[0], o->params[0]);
	cuco_strbuf_addf(sb,
	                 "    {\"param\": \"%s\", \"min\": 4, \"multiple_of\": 4, \"why\": \"rows "
	                 "of 16 bytes: the template moves them in 16-byte vectors\"}\n  ],\n",
	                 last);
	cuco_strbuf_adds(sb, "  \"knobs\": {\n"
	                     "    \"comm_ctas\": {\"type\": \"int\", \"min\": 1, \"max\": 132, "
	                     "\"default\": 32}\n  }\n}\n");
}

static int write_text(const char *dir, const char *file, const struct cuco_strbuf *sb,
                      struct cuco_err *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (cuco_write_file(path, sb->buf, sb->len))
		return cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", path, strerror(errno));
	return CUCO_OK;
}

/* Render share/init/<src> into dir/<dst>. */
static int emit(const char *share, const char *src, const char *dir, const char *dst,
                const char *coll, const struct init_var *vars, int nvars, struct cuco_err *err)
{
	struct cuco_strbuf in = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	char path[PATH_MAX];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", share, src);
	if (cuco_strbuf_read_file(&in, path)) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "%s: %s (is CUCO_HOME right?)", path,
		                  strerror(errno));
		goto out;
	}
	rc = render(path, in.buf, coll, vars, nvars, &out, err);
	if (!rc)
		rc = write_text(dir, dst, &out, err);
out:
	cuco_strbuf_release(&in);
	cuco_strbuf_release(&out);
	return rc;
}

/* compute.cuh with the user's device code lifted in front of compute_rows. */
static int emit_lifted_compute(const char *share, const char *dir, const struct lift *L,
                               const char *coll, const struct init_var *vars, int nvars,
                               struct cuco_err *err)
{
	struct cuco_strbuf in = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT, lifted = CUCO_STRBUF_INIT;
	char path[PATH_MAX];
	const char *mark;
	int rc;

	snprintf(path, sizeof(path), "%s/compute.cuh", share);
	if (cuco_strbuf_read_file(&in, path)) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "%s: %s", path, strerror(errno));
		goto out;
	}
	if ((rc = render(path, in.buf, coll, vars, nvars, &out, err)))
		goto out;
	mark = strstr(out.buf, "#define PKG_COMPUTE_THREADS");
	if (!mark) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "%s: no PKG_COMPUTE_THREADS line", path);
		goto out;
	}
	cuco_strbuf_add(&lifted, out.buf, (size_t)(mark - out.buf));
	cuco_strbuf_addf(&lifted,
	                 "// ---- lifted from %s by cuco init: its includes and device code, "
	                 "unchanged.\n// Call your kernel from compute_rows below (rows r0..r1 "
	                 "of X, W, Y).\n",
	                 L->path);
	cuco_strbuf_add(&lifted, L->includes.buf, L->includes.len);
	cuco_strbuf_add(&lifted, L->kernels.buf, L->kernels.len);
	if (L->launches.len) {
		cuco_strbuf_adds(&lifted, "// The program launched them so (call yours from "
		                          "compute_rows below, on rows r0..r1):\n");
		cuco_strbuf_add(&lifted, L->launches.buf, L->launches.len);
	}
	{
		int n = 1;
		for (const char *c = lifted.buf; *c; c++)
			n += *c == '\n';
		cuco_strbuf_addf(
		    &lifted, "#line %d \"compute.cuh\"\n// ---- end of the lifted code\n\n", n + 1);
	}
	cuco_strbuf_adds(&lifted, mark);
	rc = write_text(dir, "compute.cuh", &lifted, err);
out:
	cuco_strbuf_release(&in);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&lifted);
	return rc;
}

/* Directives the package ships realised: one per code path of its template. */
static const char *const variants[][2] = {
    {"sequential_lsa", "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":"
                       "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{"
                       "\"comm_ctas\":32,\"threads\":512}}"},
    {"sequential_ce", "{\"backend\":\"ce\",\"placement\":\"sequential\",\"sync_scope\":"
                      "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{}}"},
    {"stream_overlap_lsa", "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_"
                           "scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                           "\"knobs\":{\"chunks\":4,\"streams\":2,\"comm_ctas\":16,"
                           "\"threads\":512}}"},
    {"stream_overlap_lsa_cta", "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_"
                               "scope\":\"cta\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                               "\"knobs\":{\"chunks\":4,\"streams\":2,\"comm_ctas\":16,"
                               "\"threads\":512}}"},
    {"stream_overlap_ce", "{\"backend\":\"ce\",\"placement\":\"stream_overlap\",\"sync_"
                          "scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"chunk\","
                          "\"knobs\":{\"chunks\":4,\"streams\":2}}"},
};

/*
 * Realise the package's template for each of variants[] into
 * DIR/variants/NAME.json (the directive) and DIR/NAME.cu (the program,
 * beside common.cuh, which it includes, as evolve's children are),
 * validated against the design space as `cuco realize` does.
 */
static int realise_variants(const char *dir, struct cuco_err *err)
{
	struct cuco_strbuf tmpl = CUCO_STRBUF_INIT;
	struct cuco_design_space ds;
	const char *dsp = cli_share_dir("design_space.json");
	char path[PATH_MAX], tpath[PATH_MAX];
	int rc;

	snprintf(tpath, sizeof(tpath), "%s/template.cu.in", dir);
	if (cuco_strbuf_read_file(&tmpl, tpath))
		return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", tpath, strerror(errno));
	if (!dsp || (rc = cuco_design_space_load(dsp, &ds, err))) {
		cuco_strbuf_release(&tmpl);
		return dsp ? rc : cuco_err_set(err, CUCO_ERR_NOT_FOUND, "no design_space.json");
	}
	rc = cuco_design_space_narrow(&ds, tpath, tmpl.buf, err);
	snprintf(path, sizeof(path), "%s/variants", dir);
	if (!rc && cuco_mkdir_p(path))
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot create %s: %s", path, strerror(errno));
	for (size_t k = 0; !rc && k < sizeof(variants) / sizeof(variants[0]); k++) {
		struct cuco_strbuf line = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
		struct cuco_directive d;

		cuco_strbuf_addf(&line, "// cuco-directive: %s\n", variants[k][1]);
		rc = cuco_directive_parse(variants[k][0], line.buf, &d, err);
		if (!rc) {
			rc = cuco_directive_validate(&d, &ds, NULL, err);
			if (!rc)
				rc = cuco_realize_template(tpath, tmpl.buf, &d, &out, err);
			cuco_directive_release(&d);
		}
		if (!rc) {
			cuco_strbuf_reset(&line);
			cuco_strbuf_addf(&line, "%s\n", variants[k][1]);
			snprintf(path, sizeof(path), "%s/variants/%s.json", dir, variants[k][0]);
			if (cuco_write_file(path, line.buf, line.len))
				rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s", path);
			snprintf(path, sizeof(path), "%s/%s.cu", dir, variants[k][0]);
			if (!rc && cuco_write_file(path, out.buf, out.len))
				rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s", path);
		}
		cuco_strbuf_release(&line);
		cuco_strbuf_release(&out);
	}
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&tmpl);
	return rc;
}

static int dir_usable(const char *dir, struct cuco_err *err)
{
	struct stat st;
	char probe[PATH_MAX];

	if (stat(dir, &st) != 0)
		return cuco_mkdir_p(dir)
		           ? cuco_err_set(err, CUCO_ERR_IO, "-o %s: cannot create: %s", dir,
		                          strerror(errno))
		           : CUCO_OK;
	if (!S_ISDIR(st.st_mode))
		return cuco_err_set(err, CUCO_ERR_INVALID, "-o %s: exists and is not a directory",
		                    dir);
	snprintf(probe, sizeof(probe), "%s/manifest.json", dir);
	if (cuco_file_exists(probe))
		return cuco_err_set(
		    err, CUCO_ERR_INVALID,
		    "-o %s: already holds a workload (manifest.json); choose another "
		    "directory or remove it",
		    dir);
	return CUCO_OK;
}

static int parse_params(const char *list, struct init_opts *o)
{
	const char *p = list;

	o->nparams = 0;
	while (*p) {
		const char *e = p;
		size_t len;

		while (*e && *e != ',')
			e++;
		len = (size_t)(e - p);
		if (!len || len >= CUCO_NAME_MAX || !(isalpha((unsigned char)*p) || *p == '_'))
			return cli_usage_error(
			    "init",
			    "--params %s: '%.*s' is not a parameter name (a letter "
			    "or '_', then letters, digits, '_'; under %d characters)",
			    list, (int)len, p, CUCO_NAME_MAX);
		for (size_t k = 0; k < len; k++)
			if (!is_ident((unsigned char)p[k]))
				return cli_usage_error(
				    "init", "--params %s: '%.*s' is not a parameter name", list,
				    (int)len, p);
		if (o->nparams == INIT_MAX_PARAMS)
			return cli_usage_error("init", "--params %s: at most %d parameters", list,
			                       INIT_MAX_PARAMS);
		snprintf(o->params[o->nparams], CUCO_NAME_MAX, "%.*s", (int)len, p);
		for (int k = 0; k < o->nparams; k++)
			if (!strcmp(o->params[k], o->params[o->nparams]))
				return cli_usage_error("init", "--params %s: %s is named twice",
				                       list, o->params[k]);
		o->nparams++;
		p = *e ? e + 1 : e;
		if (*e && !*p)
			return cli_usage_error("init", "--params %s: a trailing comma", list);
	}
	if (o->nparams < 2)
		return cli_usage_error("init",
		                       "--params %s: give at least two names, the rows (first) and "
		                       "the row width (last), e.g. M,N",
		                       list);
	return 0;
}

static int dropped(const struct lift_site *s)
{
	return !strncmp(s->todo, "not needed", 10);
}

static void print_report(const struct lift *L, FILE *f)
{
	fprintf(f, "lifted from %s:\n", L->path);
	for (int i = 0; i < L->nsites; i++)
		if (L->sites[i].placed[0] && !L->sites[i].todo[0])
			fprintf(f, "  %s:%d: %s -> %s\n", L->path, L->sites[i].line,
			        L->sites[i].what, L->sites[i].placed);
	fprintf(f, "dropped (the harness, or an exported program's runtime, does it):\n");
	for (int i = 0; i < L->nsites; i++)
		if (dropped(&L->sites[i]))
			fprintf(f, "  %s:%d: %s\n", L->path, L->sites[i].line, L->sites[i].what);
	fprintf(f, "not placed, to finish by hand:\n");
	for (int i = 0; i < L->nsites; i++)
		if (L->sites[i].todo[0] && !dropped(&L->sites[i]))
			fprintf(f, "  %s:%d: %s: %s\n", L->path, L->sites[i].line, L->sites[i].what,
			        L->sites[i].todo);
	fprintf(f, "  workload.cu: the reference computes the built-in RMS norm; make it compute "
	           "what your kernel computes, independently\n");
}

int cmd_init(int argc, char **argv)
{
	struct init_opts o;
	struct cuco_err err;
	struct cuco_strbuf text = CUCO_STRBUF_INIT, src = CUCO_STRBUF_INIT,
	                   plist = CUCO_STRBUF_INIT, rowsdoc = CUCO_STRBUF_INIT,
	                   calls = CUCO_STRBUF_INIT;
	struct cuco_manifest m;
	struct lift L;
	const char *params = "M,N", *share;
	char dirbuf[PATH_MAX], path[PATH_MAX];
	int rc, have_lift = 0;

	memset(&o, 0, sizeof(o));
	memset(&L, 0, sizeof(L));
	cuco_err_clear(&err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--collective") || !strcmp(a, "--params") ||
		           !strcmp(a, "--from") || !strcmp(a, "-o")) {
			if (!(v = cli_value("init", argc, argv, &i)))
				return CUCO_ERR_USAGE;
			if (!strcmp(a, "--collective"))
				o.coll = v;
			else if (!strcmp(a, "--params"))
				params = v;
			else if (!strcmp(a, "--from"))
				o.from = v;
			else
				o.dir = v;
		} else if (a[0] == '-') {
			return cli_usage_error("init", "unknown option %s", a);
		} else if (!o.name) {
			o.name = a;
		} else {
			return cli_usage_error("init", "unexpected argument %s", a);
		}
	}
	if (!o.name)
		return cli_usage_error("init", "which name? (cuco init NAME)");
	if (!*o.name || strlen(o.name) >= CUCO_MANIFEST_NAME_MAX)
		return cli_usage_error("init", "NAME %s: 1 to %d characters", o.name,
		                       CUCO_MANIFEST_NAME_MAX - 1);
	for (const char *c = o.name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return cli_usage_error(
			    "init",
			    "NAME %s: only letters, digits, '_' and '-' (it names "
			    "the workload in the store and in file names)",
			    o.name);
	if (o.coll) {
		int k;
		for (k = 0; k < NCOLL && strcmp(o.coll, collectives[k]); k++)
			;
		if (k == NCOLL)
			return cli_usage_error("init",
			                       "--collective %s: expected allreduce, allgather, "
			                       "reducescatter, alltoall or sendrecv",
			                       o.coll);
	}
	if (parse_params(params, &o))
		return CUCO_ERR_USAGE;
	if (o.from) {
		if ((rc = lift_file(&L, o.from, &src, &err)))
			goto fail;
		have_lift = 1;
		if (!o.coll && !L.coll[0]) {
			rc = cuco_err_set(
			    &err, CUCO_ERR_INVALID,
			    "--from %s: no NCCL collective the package can place "
			    "(ncclAllReduce, ncclAllGather, ncclReduceScatter, "
			    "ncclAlltoAll, ncclSend/ncclRecv); name one with --collective",
			    o.from);
			goto fail;
		}
		for (int k = 0; !o.coll && k < NCOLL; k++)
			if (!strcmp(L.coll, collectives[k]))
				o.coll = collectives[k];
	}
	if (!o.coll)
		o.coll = "allreduce";
	if (!o.dir) {
		snprintf(dirbuf, sizeof(dirbuf), "%s", o.name);
		o.dir = dirbuf;
	}
	if ((rc = dir_usable(o.dir, &err)))
		goto fail;
	share = cli_share_dir("init");
	if (!share) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND, "cuco home not found; set CUCO_HOME");
		goto fail;
	}
	for (int i = 0; i < o.nparams; i++) {
		cuco_strbuf_addf(&plist, "%s\"%s\"", i ? ", " : "", o.params[i]);
		if (i + 1 < o.nparams)
			cuco_strbuf_addf(&rowsdoc, "%s%s", i ? " x " : "", o.params[i]);
	}
	if (have_lift && L.calls.len) {
		cuco_strbuf_adds(&calls, "// The NCCL calls of the program this package was lifted "
		                         "from:\n");
		cuco_strbuf_add(&calls, L.calls.buf, L.calls.len);
	}
	{
		const char *call = !strcmp(o.coll, "allreduce")       ? "ncclAllReduce(Y -> Z)"
		                   : !strcmp(o.coll, "allgather")     ? "ncclAllGather(Y -> Z)"
		                   : !strcmp(o.coll, "reducescatter") ? "ncclReduceScatter(Y -> Z)"
		                   : !strcmp(o.coll, "alltoall")      ? "ncclAlltoAll(Y -> Z)"
		                                                      : "ncclSend(Y) / ncclRecv(Z)";
		const char *doc =
		    !strcmp(o.coll, "allreduce")       ? "the sum over ranks of Y"
		    : !strcmp(o.coll, "allgather")     ? "every rank's Y, rank q's at rows q*xrows"
		    : !strcmp(o.coll, "reducescatter") ? "rows r*zrows.. of the sum over ranks of Y"
		    : !strcmp(o.coll, "alltoall") ? "block p (rows/R rows) = block r of rank p's Y"
		                                  : "the Y of rank r-1 (a ring: r sends to r+1)";
		struct cuco_strbuf desc = CUCO_STRBUF_INIT;
		cuco_strbuf_addf(&desc,
		                 "Workload %s, made by cuco init: X -> compute -> Y -> %s -> Z.",
		                 o.name, o.coll);
		const struct init_var vars[] = {
		    {"NAME", o.name},
		    {"COLL", o.coll},
		    {"COLL_CALL", call},
		    {"COLL_DOC", doc},
		    {"PARAMS_LIST", plist.buf},
		    {"ROWS_DOC", rowsdoc.buf},
		    {"WIDTH", o.params[o.nparams - 1]},
		    {"DESCRIPTION", desc.buf},
		    {"LIFTED_CALLS", calls.buf},
		};
		const int nv = (int)(sizeof(vars) / sizeof(vars[0]));
		static const char *const files[][2] = {
		    {"common.cuh", "common.cuh"},     {"workload.cu", "workload.cu"},
		    {"host.cu", "host.cu"},           {"compute_only.cu", "compute_only.cu"},
		    {"comm_only.cu", "comm_only.cu"}, {"template.cu.in", "template.cu.in"},
		};

		rc = CUCO_OK;
		for (size_t k = 0; !rc && k < sizeof(files) / sizeof(files[0]); k++)
			rc = emit(share, files[k][0], o.dir, files[k][1], o.coll, vars, nv, &err);
		if (!rc)
			rc = have_lift
			         ? emit_lifted_compute(share, o.dir, &L, o.coll, vars, nv, &err)
			         : emit(share, "compute.cuh", o.dir, "compute.cuh", o.coll, vars,
			                nv, &err);
		cuco_strbuf_release(&desc);
		if (rc)
			goto fail;
	}
	write_manifest_text(&o, &text);
	if ((rc = write_text(o.dir, "manifest.json", &text, &err)))
		goto fail;
	/* What was written must load as any workload does. */
	snprintf(path, sizeof(path), "%s/manifest.json", o.dir);
	if ((rc = cuco_manifest_load(path, &m, &err))) {
		cuco_err_prefix(&err, "the generated manifest does not load (a cuco bug): ");
		goto fail;
	}
	cuco_manifest_release(&m);
	if ((rc = realise_variants(o.dir, &err))) {
		cuco_err_prefix(&err, "realising the package's template: ");
		goto fail;
	}
	printf("wrote %s: workload %s (%s; params %s; f32)\n", o.dir, o.name, o.coll, params);
	printf("  manifest.json workload.cu host.cu common.cuh compute.cuh compute_only.cu "
	       "comm_only.cu template.cu.in\n");
	if (have_lift)
		print_report(&L, stdout);
	{
		const char *dot = strchr(o.dir, '/') ? "" : "./";
		printf("next:\n  cuco bench %s%s --ranks 1    (one GPU: the compute side)\n"
		       "  cuco bench %s%s              (2, 4 or 8 GPUs)\n"
		       "  cuco evolve %s%s --template %s%s/template.cu.in\n",
		       dot, o.dir, dot, o.dir, dot, o.dir, dot, o.dir);
	}
	if (have_lift)
		printf(
		    "  the package verifies its built-in compute until you finish the list above;\n"
		    "  then change the reference in workload.cu to your computation\n");
	rc = CUCO_OK;
	goto out;
fail:
	cli_fail(&err);
out:
	if (have_lift)
		lift_release(&L);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&plist);
	cuco_strbuf_release(&rowsdoc);
	cuco_strbuf_release(&calls);
	return rc;
}
