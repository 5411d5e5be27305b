/*
 * init_lift.c - `cuco init --from`: kernels, device code and includes of a
 * user's program lifted for compute.cuh, its NCCL calls for host.cu, and
 * every site not placed reported as file:line (see init_lift.h).
 */
#include "cli/init_lift.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/xalloc.h"

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
	struct lift_site *s = CUCO_ARRAY_PUSH(L->sites, L->nsites, L->alloc);

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
	char *m = cuco_xstrdup(src);

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

void cli_lift_release(struct lift *L)
{
	free(L->masked);
	free(L->sites);
	cuco_strbuf_release(&L->kernels);
	cuco_strbuf_release(&L->includes);
	cuco_strbuf_release(&L->calls);
	cuco_strbuf_release(&L->launches);
}

int cli_lift_file(struct lift *L, const char *path, struct cuco_strbuf *src, struct cuco_err *err)
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

static int dropped(const struct lift_site *s)
{
	return !strncmp(s->todo, "not needed", 10);
}

void cli_lift_report(const struct lift *L, FILE *f)
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
