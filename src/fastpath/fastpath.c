/*
 * fastpath.c - rule-based host-to-device transformation of a cuco program.
 *
 * The source is tokenised just well enough to skip comments, string and
 * character literals and preprocessor lines; host collective calls are then
 * found as `name (` with balanced arguments. Each call is rewritten in place
 * (name replaced, leading arguments inserted) so any wrapper macro such as
 * NCCLCHECK(...) keeps working, and the generated kernels and launchers, read
 * from templates, are inserted after the program's leading preprocessor lines.
 * The tokenizer is in lex.c, the templates and the seed's assembly in emit.c.
 */
#include "fastpath/fastpath.h"
#include "fastpath/lex.h"
#include "util/array.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- edits ---- */

static void edit_add(struct fp *fp, size_t off, size_t len, const char *text)
{
	struct edits *e = &fp->edits;
	*CUCO_ARRAY_PUSH(e->v, e->n, e->alloc) = (struct edit){off, len, cuco_xstrdup(text)};
}

/* ---- report ---- */

void cuco_fastpath_opts_init(struct cuco_fastpath_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->comm_ctas = CUCO_FASTPATH_COMM_CTAS_DEFAULT;
	opts->threads = CUCO_FASTPATH_THREADS_DEFAULT;
}

void cuco_fastpath_report_init(struct cuco_fastpath_report *report)
{
	memset(report, 0, sizeof(*report));
}

void cuco_fastpath_report_release(struct cuco_fastpath_report *report)
{
	free(report->sites);
	cuco_fastpath_report_init(report);
}

const char *cuco_fastpath_kind_name(int kind)
{
	switch (kind) {
	case CUCO_FASTPATH_ALLGATHER:
		return "allgather";
	case CUCO_FASTPATH_REDUCESCATTER:
		return "reducescatter";
	case CUCO_FASTPATH_ALLREDUCE:
		return "allreduce";
	case CUCO_FASTPATH_ALLTOALL:
		return "alltoall";
	case CUCO_FASTPATH_GROUP_START:
		return "group_start";
	case CUCO_FASTPATH_SEND:
		return "send";
	case CUCO_FASTPATH_RECV:
		return "recv";
	case CUCO_FASTPATH_GROUP_END:
		return "group_end";
	case CUCO_FASTPATH_REDUCE:
		return "reduce";
	case CUCO_FASTPATH_BROADCAST:
		return "broadcast";
	case CUCO_FASTPATH_BCAST:
		return "bcast";
	}
	return "unknown";
}

static void report_add(struct cuco_fastpath_report *r, int kind, const struct tok *t,
                       const char *call, const char *replacement, int hint,
                       const struct site_args *a)
{
	struct cuco_fastpath_site *s = CUCO_ARRAY_PUSH(r->sites, r->nsites, r->alloc);
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->line = t->line;
	s->column = t->col;
	snprintf(s->call, sizeof(s->call), "%s", call);
	snprintf(s->replacement, sizeof(s->replacement), "%s", replacement);
	s->hint = hint;
	snprintf(s->dtype, sizeof(s->dtype), "%s", a->dtype ? a->dtype : "");
	snprintf(s->op, sizeof(s->op), "%s", a->op ? a->op : "");
}

/* ---- recognition ---- */

struct coll {
	const char *name;
	int kind;
	int nargs;
	int op_arg;    /* index of the ncclRedOp_t argument, -1 for none */
	int dtype_arg; /* index of the ncclDataType_t argument, -1 for none */
	const char *tpl,
	    *tpl2;      /* templates of its kernel and launcher (tpl2: a wrapper, or NULL) */
	const char *fn; /* generated function, without the _<id> */
};

static const struct coll colls[] = {
    {"ncclAllGather", CUCO_FASTPATH_ALLGATHER, 6, -1, 3, "allgather.cu.in", NULL,
     "cuco_seed_allgather"},
    {"ncclReduceScatter", CUCO_FASTPATH_REDUCESCATTER, 7, 4, 3, "reducescatter.cu.in", NULL,
     "cuco_seed_reducescatter"},
    {"ncclAllReduce", CUCO_FASTPATH_ALLREDUCE, 7, 4, 3, "allreduce.cu.in", NULL,
     "cuco_seed_allreduce"},
    {"ncclReduce", CUCO_FASTPATH_REDUCE, 8, 4, 3, "reduce.cu.in", NULL, "cuco_seed_reduce"},
    {"ncclBroadcast", CUCO_FASTPATH_BROADCAST, 7, -1, 3, "broadcast.cu.in", NULL,
     "cuco_seed_broadcast"},
    {"ncclBcast", CUCO_FASTPATH_BCAST, 6, -1, 2, "broadcast.cu.in", "bcast.cu.in",
     "cuco_seed_bcast"},
    {"ncclAlltoAll", CUCO_FASTPATH_ALLTOALL, 6, -1, 3, "alltoall.cu.in", NULL,
     "cuco_seed_alltoall"},
    {"ncclGroupStart", CUCO_FASTPATH_GROUP_START, 0, -1, -1, NULL, NULL, "cuco_seed_group_start"},
    {"ncclSend", CUCO_FASTPATH_SEND, 6, -1, 2, NULL, NULL, "cuco_seed_send"},
    {"ncclRecv", CUCO_FASTPATH_RECV, 6, -1, 2, NULL, NULL, "cuco_seed_recv"},
    {"ncclGroupEnd", CUCO_FASTPATH_GROUP_END, 0, -1, -1, NULL, NULL, "cuco_seed_group_end"},
};

/* What the fast path handles, for messages. */
#define HANDLED                                                                                   \
	"ncclAllGather, ncclReduceScatter, ncclAllReduce, ncclReduce, ncclBroadcast, ncclBcast, " \
	"ncclAlltoAll and grouped ncclSend/ncclRecv"

/* Host collectives the fast path knows but cannot transform. */
static const char *const unsupported_colls[] = {
    "ncclGather",
    "ncclScatter",
    "ncclAlltoAllv",
};

/* NCCL's dtype names, aliases included, with the name the generated code uses. */
static const struct {
	const char *name, *canonical;
} dtypes[] = {
    {"ncclInt8", "ncclInt8"},
    {"ncclChar", "ncclInt8"},
    {"ncclUint8", "ncclUint8"},
    {"ncclInt32", "ncclInt32"},
    {"ncclInt", "ncclInt32"},
    {"ncclUint32", "ncclUint32"},
    {"ncclInt64", "ncclInt64"},
    {"ncclUint64", "ncclUint64"},
    {"ncclFloat16", "ncclFloat16"},
    {"ncclHalf", "ncclFloat16"},
    {"ncclFloat32", "ncclFloat32"},
    {"ncclFloat", "ncclFloat32"},
    {"ncclFloat64", "ncclFloat64"},
    {"ncclDouble", "ncclFloat64"},
    {"ncclBfloat16", "ncclBfloat16"},
    {"ncclFloat8e4m3", "ncclFloat8e4m3"},
    {"ncclFloat8e5m2", "ncclFloat8e5m2"},
};

/* NCCL's built-in reduction ops. */
static const char *const ops[] = {"ncclSum", "ncclProd", "ncclMin", "ncclMax", "ncclAvg"};

static const struct coll *find_coll_named(const char *name)
{
	for (size_t k = 0; k < sizeof(colls) / sizeof(colls[0]); k++)
		if (strcmp(colls[k].name, name) == 0)
			return &colls[k];
	return NULL;
}

static const struct coll *find_coll(const struct fp *fp, int i)
{
	for (size_t k = 0; k < sizeof(colls) / sizeof(colls[0]); k++)
		if (cuco_fastpath_tok_is(fp, i, colls[k].name))
			return &colls[k];
	return NULL;
}

/* Whether token i names a call (not a member, not a declaration of something else). */
static int is_call(const struct fp *fp, int i)
{
	if (fp->toks.v[i].type != TOK_IDENT || !cuco_fastpath_tok_punct(fp, i + 1, '('))
		return 0;
	if (cuco_fastpath_tok_punct(fp, i - 1, '.') ||
	    (cuco_fastpath_tok_punct(fp, i - 1, '>') && cuco_fastpath_tok_punct(fp, i - 2, '-')))
		return 0;
	return 1;
}

#define LOC(t) fp->file, (t)->line, (t)->col

/*
 * Check the op and dtype arguments of a call that are written as NCCL names; a->dtype and a->op
 * get the names the generated code uses (NULL when held in a variable or macro: decided at run
 * time by the launcher).
 */
static int check_args(struct fp *fp, const struct coll *c, const struct call *call,
                      struct site_args *a)
{
	const struct tok *t = &fp->toks.v[call->name];
	char id[64];
	a->dtype = a->op = NULL;
	if (c->op_arg >= 0 && cuco_fastpath_arg_ident(fp, call, c->op_arg, id, sizeof(id)) &&
	    strncmp(id, "nccl", 4) == 0) {
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]) && a->op == NULL; k++)
			if (strcmp(ops[k], id) == 0)
				a->op = ops[k];
		if (a->op == NULL)
			return cuco_err_set(
			    fp->err, CUCO_ERR_UNSUPPORTED,
			    "%s:%d:%d: cannot transform %s at line %d: op %s is not "
			    "supported (ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg)",
			    LOC(t), c->name, t->line, id);
	}
	if (c->dtype_arg >= 0 && cuco_fastpath_arg_ident(fp, call, c->dtype_arg, id, sizeof(id)) &&
	    strncmp(id, "nccl", 4) == 0) {
		for (size_t k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]) && a->dtype == NULL; k++)
			if (strcmp(dtypes[k].name, id) == 0)
				a->dtype = dtypes[k].canonical;
		if (a->dtype == NULL)
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s:%d:%d: cannot transform %s at line %d: dtype %s is "
			                    "not supported",
			                    LOC(t), c->name, t->line, id);
	}
	return CUCO_OK;
}

/* Name of the parameter of run() whose type mentions type_word (last identifier before , or )). */
static int param_name(struct fp *fp, int lparen, const char *type_word, char *buf, size_t size)
{
	int rparen = cuco_fastpath_match_bracket(fp, lparen), seen = 0, last_ident = -1;
	for (int k = lparen + 1; k <= rparen; k++) {
		if (cuco_fastpath_tok_punct(fp, k, ',') || k == rparen) {
			if (seen && last_ident >= 0) {
				cuco_fastpath_tok_text(fp, last_ident, buf, size);
				return 1;
			}
			seen = 0;
			last_ident = -1;
			continue;
		}
		if (cuco_fastpath_tok_is(fp, k, type_word))
			seen = 1;
		else if (fp->toks.v[k].type == TOK_IDENT)
			last_ident = k;
	}
	return 0;
}

static int find_run(struct fp *fp)
{
	int open, close, lparen, hinted = fp->opts->nhints > 0;
	fp->run_body_open = fp->run_body_close = -1;
	if (cuco_fastpath_find_definition(fp, "cuco_program_run", &open, &close, &lparen)) {
		fp->run_body_open = open;
		fp->run_body_close = close;
		if ((!param_name(fp, lparen, "cuco_tensor", fp->tensors_name,
		                 sizeof(fp->tensors_name)) ||
		     !param_name(fp, lparen, "cudaStream_t", fp->stream_name,
		                 sizeof(fp->stream_name))) &&
		    !hinted) {
			const struct tok *t = &fp->toks.v[lparen - 1];
			return cuco_err_set(
			    fp->err, CUCO_ERR_UNSUPPORTED,
			    "%s:%d:%d: cannot transform: cuco_program_run must name "
			    "its tensor and stream parameters",
			    LOC(t));
		}
	} else if (!hinted) {
		return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
		                    "%s: cannot transform: no definition of cuco_program_run found "
		                    "(the fast path needs a program that implements the cuco ABI, "
		                    "see include/cuco/program.h)",
		                    fp->file);
	}
	const char *need[] = {"cuco_program_init", "cuco_program_requirements"};
	for (int k = 0; k < 2; k++)
		if (!cuco_fastpath_find_definition(fp, need[k], &open, &close, &lparen))
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s: cannot transform: no definition of %s found",
			                    fp->file, need[k]);
	return CUCO_OK;
}

/*
 * What the launcher of the call at token i is given: the caller's expressions, else
 * cuco_program_run's parameters where the call is inside it, else (the stream) 0.
 */
static int site_names(struct fp *fp, int i, const char *call)
{
	int in_run = i > fp->run_body_open && i < fp->run_body_close;
	const struct tok *t = &fp->toks.v[i];
	fp->tensors = fp->opts->tensors_expr ? fp->opts->tensors_expr
	              : in_run               ? fp->tensors_name
	                                     : "";
	fp->stream = fp->opts->stream_expr          ? fp->opts->stream_expr
	             : in_run && fp->stream_name[0] ? fp->stream_name
	                                            : "0";
	if (!fp->tensors[0])
		return cuco_err_set(
		    fp->err, CUCO_ERR_INVALID,
		    "%s:%d:%d: cannot transform %s: no cuco_program_run parameter "
		    "names the tensor set here; give the tensors expression (struct "
		    "cuco_fastpath_opts.tensors_expr, e.g. cuco_lift_tensors())",
		    LOC(t), call);
	return CUCO_OK;
}

/* Index of the token that begins at line:col, or -1 (tokens are in source order). */
static int token_at(const struct fp *fp, int line, int col)
{
	int lo = 0, hi = fp->toks.n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct tok *t = &fp->toks.v[mid];
		if (t->line == line && t->col == col)
			return mid;
		if (t->line < line || (t->line == line && t->col < col))
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Check every site hint against the tokens and mark the token each one names. */
static int locate_hints(struct fp *fp)
{
	const struct cuco_fastpath_opts *o = fp->opts;
	fp->hint_of = cuco_xcalloc((size_t)fp->toks.n + 1, sizeof(*fp->hint_of));
	for (int i = 0; i < fp->toks.n; i++)
		fp->hint_of[i] = -1;
	for (int k = 0; k < o->nhints; k++) {
		const struct cuco_fastpath_hint *h = &o->hints[k];
		const char *name = h->call ? h->call : "(null)";
		char found[48];
		if (find_coll_named(name) == NULL)
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s:%d:%d: cannot transform site hint %d: %s is not a "
			                    "call the fast path transforms (it handles " HANDLED
			                    ")",
			                    fp->file, h->line, h->column, k, name);
		int i = token_at(fp, h->line, h->column);
		if (i < 0)
			return cuco_err_set(fp->err, CUCO_ERR_INVALID,
			                    "%s:%d:%d: site hint %d expects %s here, but no token "
			                    "begins at this line and column (a comment, a literal, "
			                    "white space, or a file other than the one the hint "
			                    "was made for?)",
			                    fp->file, h->line, h->column, k, name);
		if (!cuco_fastpath_tok_is(fp, i, name)) {
			cuco_fastpath_tok_text(fp, i, found, sizeof(found));
			return cuco_err_set(fp->err, CUCO_ERR_INVALID,
			                    "%s:%d:%d: site hint %d expects %s here, found '%s'",
			                    fp->file, h->line, h->column, k, name, found);
		}
		if (!is_call(fp, i))
			return cuco_err_set(fp->err, CUCO_ERR_INVALID,
			                    "%s:%d:%d: site hint %d: %s here is not a call",
			                    fp->file, h->line, h->column, k, name);
		if (fp->hint_of[i] >= 0)
			return cuco_err_set(fp->err, CUCO_ERR_INVALID,
			                    "%s:%d:%d: site hints %d and %d name the same call",
			                    fp->file, h->line, h->column, fp->hint_of[i], k);
		fp->hint_of[i] = k;
	}
	return CUCO_OK;
}

/* Rewrite one recognised call (hint: the site hint that named it, or -1). */
static int rewrite_call(struct fp *fp, const struct coll *c, const struct call *call, int group,
                        int hint, const struct site_args *a)
{
	const struct tok *t = &fp->toks.v[call->name];
	struct cuco_strbuf ins = CUCO_STRBUF_INIT, site = CUCO_STRBUF_INIT,
	                   site_raw = CUCO_STRBUF_INIT;
	char fn[48];
	int rc = CUCO_OK;
	int id = -1;

	rc = site_names(fp, call->name, c->name);
	if (rc != CUCO_OK)
		goto out;
	cuco_strbuf_addf(&site_raw, "%s:%d:%d", fp->file, t->line, t->col);
	cuco_fastpath_add_c_escaped(&site, site_raw.buf);
	switch (c->kind) {
	case CUCO_FASTPATH_GROUP_START:
		cuco_strbuf_addf(&ins, "&cuco_seed_group_%d, \"%s\"", group, site.buf);
		snprintf(fn, sizeof(fn), "%s", c->fn);
		break;
	case CUCO_FASTPATH_GROUP_END:
		cuco_strbuf_addf(&ins, "&cuco_seed_group_%d, \"%s\", %s, %s", group, site.buf,
		                 fp->tensors, fp->stream);
		snprintf(fn, sizeof(fn), "%s", c->fn);
		break;
	case CUCO_FASTPATH_SEND:
	case CUCO_FASTPATH_RECV:
		cuco_strbuf_addf(&ins, "&cuco_seed_group_%d, \"%s\", %s, ", group, site.buf,
		                 fp->tensors);
		snprintf(fn, sizeof(fn), "%s", c->fn);
		break;
	default:
		id = fp->next_id++;
		cuco_strbuf_addf(&ins, "%s, ", fp->tensors);
		snprintf(fn, sizeof(fn), "%s_%d", c->fn, id);
		rc = cuco_fastpath_emit(fp, c->tpl, id, t, c->name, a);
		if (rc == CUCO_OK && c->tpl2 != NULL)
			rc = cuco_fastpath_emit(fp, c->tpl2, id, t, c->name, a);
		if (rc != CUCO_OK)
			goto out;
		break;
	}
	edit_add(fp, t->start, t->end - t->start, fn);
	edit_add(fp, fp->toks.v[call->open].end, 0, ins.buf);
	report_add(fp->report, c->kind, t, c->name, fn, hint, a);
out:
	cuco_strbuf_release(&ins);
	cuco_strbuf_release(&site);
	cuco_strbuf_release(&site_raw);
	return rc;
}

/*
 * Find and rewrite the calls: without hints every host collective (all inside
 * cuco_program_run), with hints exactly the hinted ones. Groups follow source order.
 */
static int scan_calls(struct fp *fp)
{
	int group = -1, ngroups = 0, rc = CUCO_OK, hinted = fp->opts->nhints > 0;
	const struct tok *group_tok = NULL;

	for (int i = 0; i < fp->toks.n; i++) {
		const struct tok *t = &fp->toks.v[i];
		if (t->type != TOK_IDENT)
			continue;
		if (cuco_fastpath_tok_is(fp, i, "cuco_program_init") ||
		    cuco_fastpath_tok_is(fp, i, "cuco_program_requirements")) {
			char name[64];
			cuco_fastpath_tok_text(fp, i, name, sizeof(name));
			char repl[80];
			snprintf(repl, sizeof(repl), "cuco_host_%s", name + 5);
			edit_add(fp, t->start, t->end - t->start, repl);
			continue;
		}
		if (t->end - t->start > 10 && memcmp(fp->src + t->start, "cuco_seed_", 10) == 0)
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s:%d:%d: cannot transform: the program already uses "
			                    "cuco_seed_ names (is it a fast-path seed already?)",
			                    LOC(t));
		int hint = hinted ? fp->hint_of[i] : -1;
		if (hinted && hint < 0)
			continue; /* not named by a hint: left alone */
		for (size_t k = 0;
		     !hinted && k < sizeof(unsupported_colls) / sizeof(unsupported_colls[0]); k++)
			if (cuco_fastpath_tok_is(fp, i, unsupported_colls[k]) && is_call(fp, i))
				return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
				                    "%s:%d:%d: cannot transform %s at line %d: the "
				                    "fast path handles " HANDLED,
				                    LOC(t), unsupported_colls[k], t->line);
		const struct coll *c = find_coll(fp, i);
		if (c == NULL || !is_call(fp, i))
			continue;
		if (t->pp)
			return cuco_err_set(
			    fp->err, CUCO_ERR_UNSUPPORTED,
			    "%s:%d:%d: cannot transform %s at line %d: it is inside "
			    "a preprocessor directive (expand the macro by hand)",
			    LOC(t), c->name, t->line);
		if (!hinted && (i < fp->run_body_open || i > fp->run_body_close))
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s:%d:%d: cannot transform: %s at line %d is outside "
			                    "cuco_program_run (call collectives from "
			                    "cuco_program_run, where the tensor set is known)",
			                    LOC(t), c->name, t->line);
		struct call call;
		struct site_args args;
		rc = cuco_fastpath_parse_call(fp, i, &call);
		if (rc != CUCO_OK)
			return rc;
		if (call.nargs != c->nargs)
			return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
			                    "%s:%d:%d: cannot transform %s at line %d: expected %d "
			                    "arguments, found %d",
			                    LOC(t), c->name, t->line, c->nargs, call.nargs);
		rc = check_args(fp, c, &call, &args);
		if (rc != CUCO_OK)
			return rc;
		switch (c->kind) {
		case CUCO_FASTPATH_GROUP_START:
			if (group >= 0)
				return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
				                    "%s:%d:%d: cannot transform ncclGroupStart at "
				                    "line %d: nested groups are not supported",
				                    LOC(t), t->line);
			group = ngroups++;
			group_tok = t;
			rc = cuco_fastpath_emit(fp, "group.cu.in", group, t, c->name, NULL);
			break;
		case CUCO_FASTPATH_GROUP_END:
		case CUCO_FASTPATH_SEND:
		case CUCO_FASTPATH_RECV:
			if (group < 0)
				return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
				                    "%s:%d:%d: cannot transform %s at line %d: not "
				                    "between ncclGroupStart and ncclGroupEnd",
				                    LOC(t), c->name, t->line);
			break;
		default:
			/* with hints a collective in a group runs where it is called (stream order)
			 */
			if (group >= 0 && !hinted)
				return cuco_err_set(
				    fp->err, CUCO_ERR_UNSUPPORTED,
				    "%s:%d:%d: cannot transform %s at line %d: only "
				    "ncclSend/ncclRecv may sit inside a group",
				    LOC(t), c->name, t->line);
			break;
		}
		if (rc != CUCO_OK)
			return rc;
		rc = rewrite_call(fp, c, &call, group, hint, &args);
		if (rc != CUCO_OK)
			return rc;
		if (c->kind == CUCO_FASTPATH_GROUP_END)
			group = -1;
	}
	if (group >= 0)
		return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
		                    "%s:%d:%d: cannot transform ncclGroupStart at line %d: no "
		                    "ncclGroupEnd follows it %s",
		                    LOC(group_tok), group_tok->line,
		                    hinted ? "among the site hints" : "in cuco_program_run");
	fp->report->ngroups = ngroups;
	fp->report->ncollectives = fp->next_id + ngroups;
	if (fp->report->ncollectives == 0)
		return cuco_err_set(fp->err, CUCO_ERR_UNSUPPORTED,
		                    "%s: nothing to transform: no host collective (%s) in the "
		                    "program",
		                    fp->file,
		                    "ncclAllGather, ncclReduceScatter, ncclAllReduce, ncclReduce, "
		                    "ncclBroadcast, ncclBcast, ncclAlltoAll, grouped "
		                    "ncclSend/ncclRecv");
	return CUCO_OK;
}

/* The options' hints and expressions are usable: hints given when counted, expressions on one
 * line and not empty. */
static int check_exprs(const struct cuco_fastpath_opts *opts, struct cuco_err *err)
{
	const char *exprs[] = {opts->tensors_expr, opts->stream_expr};
	const char *what[] = {"tensors_expr", "stream_expr"};
	if (opts->nhints < 0 || (opts->nhints > 0 && opts->hints == NULL))
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "fast path options: %d site hints but no hints array",
		                    opts->nhints);
	for (int k = 0; k < 2; k++)
		if (exprs[k] != NULL && (!*exprs[k] || strpbrk(exprs[k], "\n\r") != NULL))
			return cuco_err_set(err, CUCO_ERR_INVALID,
			                    "fast path options: %s must be one line of C, not "
			                    "empty",
			                    what[k]);
	return CUCO_OK;
}

int cuco_fastpath_transform(const char *file_name, const char *src,
                            const struct cuco_fastpath_opts *opts, struct cuco_strbuf *out,
                            struct cuco_fastpath_report *report, struct cuco_err *err)
{
	struct cuco_fastpath_report local_report;
	struct fp fp;
	int rc;

	cuco_fastpath_report_init(&local_report);
	memset(&fp, 0, sizeof(fp));
	fp.file = file_name ? file_name : "<input>";
	fp.src = src;
	fp.len = strlen(src);
	fp.opts = opts;
	fp.err = err;
	fp.report = report ? report : &local_report;
	cuco_strbuf_init(&fp.gen, 0);
	if (report != NULL)
		cuco_fastpath_report_release(report);

	if (opts == NULL || opts->comm_ctas < 1 || opts->comm_ctas > 1024 || opts->threads < 32 ||
	    opts->threads > 1024 || opts->threads % 32 != 0) {
		rc = cuco_err_set(err, CUCO_ERR_INVALID,
		                  "fast path options: comm_ctas must be 1..1024 and threads a "
		                  "multiple of 32 in 32..1024");
		goto out;
	}
	rc = check_exprs(opts, err);
	if (rc != CUCO_OK)
		goto out;
	rc = cuco_fastpath_tokenize(&fp);
	if (rc != CUCO_OK)
		goto out;
	rc = find_run(&fp);
	if (rc == CUCO_OK && opts->nhints > 0)
		rc = locate_hints(&fp);
	if (rc != CUCO_OK)
		goto out;
	rc = scan_calls(&fp);
	if (rc != CUCO_OK)
		goto out;
	rc = cuco_fastpath_assemble(&fp, out);
out:
	free(fp.toks.v);
	free(fp.hint_of);
	for (int k = 0; k < fp.edits.n; k++)
		free(fp.edits.v[k].text);
	free(fp.edits.v);
	cuco_strbuf_release(&fp.gen);
	cuco_fastpath_report_release(&local_report);
	if (rc != CUCO_OK && report != NULL)
		cuco_fastpath_report_release(report);
	return rc;
}

int cuco_fastpath_transform_file(const char *in_path, const char *out_path,
                                 const struct cuco_fastpath_opts *opts,
                                 struct cuco_fastpath_report *report, struct cuco_err *err)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT,
	                   tmp_path = CUCO_STRBUF_INIT;
	FILE *f = NULL;
	int rc = CUCO_OK;

	if (cuco_strbuf_read_file(&src, in_path) != 0) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot read %s: %s", in_path, strerror(errno));
		goto out;
	}
	rc = cuco_fastpath_transform(in_path, src.buf, opts, &out, report, err);
	if (rc != CUCO_OK)
		goto out;
	cuco_strbuf_addf(&tmp_path, "%s.tmp", out_path);
	f = fopen(tmp_path.buf, "w");
	if (f == NULL) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", tmp_path.buf,
		                  strerror(errno));
		goto out;
	}
	if (fwrite(out.buf, 1, out.len, f) != out.len || fclose(f) != 0) {
		f = NULL;
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", tmp_path.buf,
		                  strerror(errno));
		remove(tmp_path.buf);
		goto out;
	}
	f = NULL;
	if (rename(tmp_path.buf, out_path) != 0) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot rename %s to %s: %s", tmp_path.buf,
		                  out_path, strerror(errno));
		remove(tmp_path.buf);
	}
out:
	if (f != NULL)
		fclose(f);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&tmp_path);
	return rc;
}
