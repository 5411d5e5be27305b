/*
 * driver.c - the main the lift writes for a function (driver.h). Each of the
 * function's parameters is made by its type: the communicator and stream are
 * the harness's (through the runtime's set-up calls), a pointer is a device
 * buffer (a tensor) sized from the collectives the function runs on it, an
 * NCCL dtype or op and an integer come from --arg, else from a shape
 * parameter of the same name, else a default the notes state.
 */
#include "lift/driver.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lift/plan_impl.h"
#include "lift/rules.h"
#include "util/array.h"
#include "util/xalloc.h"

/* The type without const/volatile and outer blanks, into out. */
static void bare_type(const char *t, char *out, size_t len)
{
	size_t k = 0;

	while (*t && k + 1 < len) {
		if (!strncmp(t, "const ", 6)) {
			t += 6;
			continue;
		}
		if (!strncmp(t, "volatile ", 9)) {
			t += 9;
			continue;
		}
		out[k++] = *t++;
	}
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = 0;
}

static const char *given(const struct cuco_lift_arg_value *args, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(args[i].name, name))
			return args[i].expr;
	return NULL;
}

static int integral(const char *t)
{
	static const char *const types[] = {"int",
	                                    "unsigned",
	                                    "unsigned int",
	                                    "long",
	                                    "unsigned long",
	                                    "long long",
	                                    "unsigned long long",
	                                    "short",
	                                    "unsigned short",
	                                    "size_t",
	                                    "ssize_t",
	                                    "int32_t",
	                                    "uint32_t",
	                                    "int64_t",
	                                    "uint64_t",
	                                    "bool",
	                                    "char",
	                                    "ptrdiff_t",
	                                    NULL};
	for (int i = 0; types[i]; i++)
		if (!strcmp(t, types[i]))
			return 1;
	return 0;
}

/* A count-like name takes a size worth timing; offsets, roots, peers and flags take 0. */
static long long default_integer(const char *name)
{
	static const char *const counts[] = {"count", "n",      "size", "nelems", "elements",
	                                     "len",   "length", "num",  "numel",  NULL};
	for (int i = 0; counts[i]; i++)
		if (!strcmp(name, counts[i]))
			return 1 << 20;
	return 0;
}

/* Whether every identifier of expr is one of fn's parameters (or an NCCL name, a number). */
static int over_params(const struct cuco_lift_function *fn, const char *expr)
{
	const char *s = expr;

	while (s && *s) {
		if (isalpha((unsigned char)*s) || *s == '_') {
			const char *b = s;
			int known = 0;
			while (isalnum((unsigned char)*s) || *s == '_')
				s++;
			if (!strncmp(b, "nccl", 4) || !strncmp(b, "sizeof", 6))
				continue;
			for (size_t i = 0; i < fn->nparams && !known; i++)
				known = strlen(fn->params[i].name) == (size_t)(s - b) &&
				        !strncmp(fn->params[i].name, b, (size_t)(s - b));
			if (!known)
				return 0;
		} else if (isdigit((unsigned char)*s)) {
			while (isalnum((unsigned char)*s))
				s++;
		} else {
			s++;
		}
	}
	return 1;
}

/* Which argument of an NCCL call is a buffer, which its count and dtype, and how many counts the
 * buffer holds (1, or the rank count: "nranks"). -1 when the call has no such argument. */
struct buffer_use {
	int buf, count, dtype;
	int by_ranks;
};

static int buffer_uses(const char *callee, struct buffer_use u[2])
{
	static const struct {
		const char *name;
		struct buffer_use send, recv;
	} t[] = {
	    {"ncclAllReduce", {0, 2, 3, 0}, {1, 2, 3, 0}},
	    {"ncclBroadcast", {0, 2, 3, 0}, {1, 2, 3, 0}},
	    {"ncclReduce", {0, 2, 3, 0}, {1, 2, 3, 0}},
	    {"ncclAllGather", {0, 2, 3, 0}, {1, 2, 3, 1}},
	    {"ncclReduceScatter", {0, 2, 3, 1}, {1, 2, 3, 0}},
	    {"ncclAlltoAll", {0, 2, 3, 1}, {1, 2, 3, 1}},
	    {"ncclGather", {0, 2, 3, 0}, {1, 2, 3, 1}},
	    {"ncclScatter", {0, 2, 3, 1}, {1, 2, 3, 0}},
	    {"ncclBcast", {0, 1, 2, 0}, {-1, -1, -1, 0}},
	    {"ncclSend", {0, 1, 2, 0}, {-1, -1, -1, 0}},
	    {"ncclRecv", {0, 1, 2, 0}, {-1, -1, -1, 0}},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(callee, t[i].name)) {
			u[0] = t[i].send;
			u[1] = t[i].recv;
			return 1;
		}
	return 0;
}

/* The name a declaration statement declares when it is initialised from the parameter: "char *sptr
 * = (char *)sendbuff + sendoffset;" with param sendbuff gives "sptr". */
static int alias_of(const char *decl, const char *param, char *out, size_t len)
{
	const char *eq = strchr(decl, '=');
	const char *e, *b;

	if (!eq || !lift_has_ident(eq + 1, param))
		return 0;
	e = eq;
	while (e > decl && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	b = e;
	while (b > decl && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
		b--;
	if (b == e || (size_t)(e - b) >= len)
		return 0;
	snprintf(out, len, "%.*s", (int)(e - b), b);
	return 1;
}

/* The bytes of pointer parameter `param` as an expression over fn's parameters, from the NCCL
 * calls of the step that take it (the largest of them), or "" when none does. */
static void buffer_bytes(const struct cuco_lift_facts *f, struct cuco_lift_plan *p, int fni,
                         const char *param, struct cuco_strbuf *out)
{
	const struct cuco_lift_function *fn = &f->functions[fni];
	char aliases[8][64];
	int naliases = 0;
	const char *text = cuco_lift_plan_text(p, f, fn->body.file);

	/* the parameter's names in fn: itself and the locals made from it */
	snprintf(aliases[naliases++], 64, "%s", param);
	for (size_t i = 0; text && i < f->nstmts && naliases < 8; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		char decl[512];
		size_t n = s->extent.end - s->extent.begin;
		if (s->kind != CUCO_LIFT_STMT_DECL || s->function != fni || n >= sizeof(decl))
			continue;
		memcpy(decl, text + s->extent.begin, n);
		decl[n] = 0;
		if (alias_of(decl, param, aliases[naliases], 64))
			naliases++;
	}
	for (size_t i = 0; i < p->nstep_calls; i++) {
		const struct cuco_lift_call *c = &f->calls[p->step_calls[i]];
		struct buffer_use u[2];
		if (c->caller != fni || !buffer_uses(c->callee, u))
			continue;
		for (int k = 0; k < 2; k++) {
			int named = 0;
			if (u[k].buf < 0 || (size_t)u[k].dtype >= c->nargs)
				continue;
			for (int a = 0; a < naliases; a++)
				named |= lift_has_ident(c->args[u[k].buf].text, aliases[a]);
			if (!named || !over_params(fn, c->args[u[k].count].text) ||
			    !over_params(fn, c->args[u[k].dtype].text))
				continue;
			cuco_strbuf_addf(out, "%s(size_t)(%s) * cuco_lift_nccl_bytes(%s)%s",
			                 out->len ? ", " : "", c->args[u[k].count].text,
			                 c->args[u[k].dtype].text,
			                 u[k].by_ranks ? " * cuco_nranks" : "");
		}
	}
}

int cuco_lift_driver(const struct cuco_lift_facts *f, struct cuco_lift_plan *p, int fni,
                     const struct cuco_lift_arg_value *args, size_t nargs, struct cuco_strbuf *out,
                     struct cuco_err *err)
{
	const struct cuco_lift_function *fn = &f->functions[fni];
	struct cuco_strbuf call = CUCO_STRBUF_INIT, bufs = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	cuco_strbuf_addf(
	    out,
	    "// The lift's main for %s (docs/your-own-program.md): its arguments, then\n"
	    "// %s as the step.\n"
	    "int cuco_lift_user_main(int argc, char **argv)\n{\n"
	    "\tncclUniqueId cuco_id;\n\tncclComm_t cuco_comm;\n"
	    "\tcudaStream_t cuco_stream;\n\tint cuco_rank = 0, cuco_nranks = 1;\n"
	    "\t(void)argc;\n\t(void)argv;\n\t(void)cuco_rank;\n"
	    "\tncclGetUniqueId(&cuco_id);\n"
	    "\tncclCommInitRank(&cuco_comm, 0, cuco_id, 0);\n"
	    "\tncclCommCount(cuco_comm, &cuco_nranks);\n"
	    "\tncclCommUserRank(cuco_comm, &cuco_rank);\n"
	    "\tcudaStreamCreate(&cuco_stream);\n",
	    fn->name, fn->name);
	for (size_t i = 0; i < fn->nparams && !rc; i++) {
		const struct cuco_lift_param *pm = &fn->params[i];
		const char *g = given(args, nargs, pm->name);
		char t[128];
		bare_type(pm->type, t, sizeof(t));
		cuco_strbuf_addf(&call, "%s", i ? ", " : "");
		if (!pm->name[0]) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID,
			                  "%s: parameter %zu has no name; cuco names a function's "
			                  "arguments by their parameters' names",
			                  fn->name, i + 1);
			break;
		}
		if (strchr(t, '*')) {
			cuco_strbuf_addf(&bufs, "\tvoid *%s = NULL;\n", pm->name);
			if (g) {
				cuco_strbuf_addf(&bufs, "\tsize_t %s_bytes = (size_t)(%s);\n",
				                 pm->name, g);
			} else {
				struct cuco_strbuf b = CUCO_STRBUF_INIT;
				buffer_bytes(f, p, fni, pm->name, &b);
				if (!b.len) {
					cuco_strbuf_release(&b);
					rc = cuco_err_set(
					    err, CUCO_ERR_INVALID,
					    "%s: no NCCL call of %s sizes its buffer %s: give its "
					    "bytes with --arg %s=EXPR",
					    fn->name, fn->name, pm->name, pm->name);
					break;
				}
				cuco_strbuf_addf(&bufs,
				                 "\tsize_t %s_bytes = cuco_lift_max_bytes({%s});\n",
				                 pm->name, b.buf);
				cuco_strbuf_release(&b);
			}
			cuco_strbuf_addf(
			    &bufs,
			    "\tcudaMalloc(&%s, %s_bytes);\n"
			    "\tcuco_lift_fill(%s, %s_bytes, cuco_lift_fill_dtype, cuco_rank);\n",
			    pm->name, pm->name, pm->name, pm->name);
			cuco_strbuf_addf(&call, "(%s)%s", pm->type, pm->name);
			continue;
		}
		if (!strcmp(t, "ncclComm_t"))
			cuco_strbuf_addf(out, "\tncclComm_t %s = %s;\n", pm->name,
			                 g ? g : "cuco_comm");
		else if (!strcmp(t, "cudaStream_t"))
			cuco_strbuf_addf(out, "\tcudaStream_t %s = %s;\n", pm->name,
			                 g ? g : "cuco_stream");
		else if (!strcmp(t, "ncclDataType_t") && g)
			cuco_strbuf_addf(out, "\tncclDataType_t %s = %s;\n", pm->name, g);
		else if (!strcmp(t, "ncclDataType_t"))
			cuco_strbuf_addf(
			    out,
			    "\tncclDataType_t %s = (ncclDataType_t)cuco_lift_param(\"%s\", "
			    "ncclFloat32);\n",
			    pm->name, pm->name);
		else if (!strcmp(t, "ncclRedOp_t") && g)
			cuco_strbuf_addf(out, "\tncclRedOp_t %s = %s;\n", pm->name, g);
		else if (!strcmp(t, "ncclRedOp_t"))
			cuco_strbuf_addf(out,
			                 "\tncclRedOp_t %s = (ncclRedOp_t)cuco_lift_param(\"%s\", "
			                 "ncclSum);\n",
			                 pm->name, pm->name);
		else if (integral(t) && g)
			cuco_strbuf_addf(out, "\t%s %s = %s;\n", t, pm->name, g);
		else if (integral(t))
			cuco_strbuf_addf(out, "\t%s %s = (%s)cuco_lift_param(\"%s\", %lld);\n", t,
			                 pm->name, t, pm->name, default_integer(pm->name));
		else if (!strcmp(t, "float") || !strcmp(t, "double"))
			cuco_strbuf_addf(out, "\t%s %s = %s;\n", t, pm->name, g ? g : "1");
		else
			rc = cuco_err_set(
			    err, CUCO_ERR_INVALID,
			    "%s: parameter %s of type %s: cuco cannot make one; give it with "
			    "--arg %s=EXPR (a C expression)",
			    fn->name, pm->name, pm->type, pm->name);
		if (!rc)
			cuco_strbuf_adds(&call, pm->name);
	}
	if (!rc) {
		/* buffers are filled as elements of the function's NCCL dtype (bytes without one)
		 */
		const char *dt = "ncclUint8";
		for (size_t i = 0; i < fn->nparams; i++) {
			char t[128];
			bare_type(fn->params[i].type, t, sizeof(t));
			if (!strcmp(t, "ncclDataType_t")) {
				dt = fn->params[i].name;
				break;
			}
		}
		cuco_strbuf_addf(out, "\tconst ncclDataType_t cuco_lift_fill_dtype = %s;\n", dt);
		cuco_strbuf_add(out, bufs.buf, bufs.len);
		cuco_strbuf_addf(out,
		                 "\tcudaStreamSynchronize(cuco_stream);\n"
		                 "\tCUCO_LIFT_STEP_BEGIN\n\t(void)%s(%s);\n\tCUCO_LIFT_STEP_END\n"
		                 "\treturn 0;\n}\n",
		                 fn->name, call.buf);
		cuco_lift_plan_note(
		    p, CUCO_LIFT_NOTE_INFO, fn->name_pos.file, fn->name_pos.line,
		    "the step is a call of %s from a main the lift wrote: pointers are "
		    "device buffers sized from its NCCL calls (--arg NAME=BYTES), "
		    "integers and NCCL dtypes/ops from --arg NAME=EXPR or a shape "
		    "parameter of the same name",
		    fn->name);
	}
	cuco_strbuf_release(&call);
	cuco_strbuf_release(&bufs);
	return rc;
}
