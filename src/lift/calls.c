/*
 * calls.c - the calls of local functions (callee.c says what they call):
 * each argument as written with its constant value and enumerator, the
 * macro a call comes from; kernel launches with their configuration;
 * lambdas, whose bodies are statements of their own; what only the whole
 * program tells.
 */
#include <stdlib.h>
#include <string.h>

#include "lift/internal.h"
#include "util/array.h"
#include "util/xalloc.h"

#define MAX_ARGS 64

static enum CXCursorKind kind(struct lift_unit *U, CXCursor c)
{
	return U->C->clang_getCursorKind(c);
}

static char *spelling(struct lift_unit *U, CXCursor c)
{
	return lift_str(U, U->C->clang_getCursorSpelling(c));
}

/* The enumerator an argument names, directly, through macros, or through a constant. */
static char *enumerator(struct lift_unit *U, CXCursor c, int depth)
{
	CXCursor e = lift_strip(U, c), ref;
	enum CXCursorKind rk;

	if (depth > 4 || kind(U, e) != CXCursor_DeclRefExpr)
		return NULL;
	ref = U->C->clang_getCursorReferenced(e);
	rk = kind(U, ref);
	if (rk == CXCursor_EnumConstantDecl)
		return spelling(U, ref);
	if (rk == CXCursor_VarDecl &&
	    U->C->clang_isConstQualifiedType(U->C->clang_getCursorType(ref))) {
		size_t n, i;
		CXCursor *ch = lift_children(U, ref, &n);
		char *name = NULL;

		for (i = n; i-- > 0 && !name;) {
			enum CXCursorKind ck = kind(U, ch[i]);

			if (ck >= 100 && ck < 200) {
				name = enumerator(U, ch[i], depth + 1);
				break;
			}
		}
		free(ch);
		return name;
	}
	return NULL;
}

/*
 * The arguments: clang's cursors for values and enumerators, the text
 * split at top-level commas for exact spans where the list is written in a
 * local file (open is its '(' or "<<<", -1 for none).
 */
static void fill_args(struct lift_unit *U, int file, size_t open, const CXCursor *a, size_t na,
                      const struct cuco_lift_range *site, struct cuco_lift_arg **out, size_t *nout)
{
	const struct lift_text *t = open != (size_t)-1 ? lift_text(U, file) : NULL;
	struct lift_piece p[MAX_ARGS];
	size_t i, j, close, alloc = 0, written = 0;
	int np = -1, w[MAX_ARGS];

	/* default arguments have no place at all; a macro body's have an empty one */
	for (i = 0; i < na && i < MAX_ARGS; i++) {
		struct cuco_lift_range r;

		w[i] = lift_extent(U, a[i], &r) == 0;
		written += (size_t)w[i];
	}
	if (t)
		np = lift_text_split(t->src, t->len, open, ',', p, MAX_ARGS, &close);
	for (i = 0, j = 0; i < na && i < MAX_ARGS; i++) {
		struct cuco_lift_arg *g;
		CXEvalResult ev;

		if (!w[i])
			continue;
		g = CUCO_ARRAY_PUSH(*out, *nout, alloc);
		memset(g, 0, sizeof(*g));
		if (np >= 0 && (size_t)np == written) {
			lift_range_at(U, file, p[j].start, p[j].end, &g->extent);
		} else {
			lift_extent(U, a[i], &g->extent);
			/* a macro body's argument: clang places it at the macro's name */
			if (g->extent.end <= g->extent.begin ||
			    !lift_is_local(U, &(struct cuco_lift_pos){g->extent.file,
			                                              g->extent.begin, 0, 0}) ||
			    (site && site->file == g->extent.file &&
			     site->begin == g->extent.begin))
				g->extent.file = -1;
		}
		j++;
		g->text = lift_expr_text(U, a[i], &g->extent);
		ev = U->C->clang_Cursor_Evaluate(a[i]);
		if (ev) {
			if (U->C->clang_EvalResult_getKind(ev) == CXEval_Int) {
				g->has_value = 1;
				g->value = U->C->clang_EvalResult_isUnsignedInt(ev)
				               ? (long long)U->C->clang_EvalResult_getAsUnsigned(ev)
				               : U->C->clang_EvalResult_getAsLongLong(ev);
			}
			U->C->clang_EvalResult_dispose(ev);
		}
		g->enumerator = enumerator(U, a[i], 0);
	}
}

/*
 * Whether the name at pos is the macro's rather than the callee's (a call a
 * #define's body writes): a macro expansion starts there, or the text is
 * another identifier. Fills the macro's use.
 */
static int macro_body(struct lift_unit *U, struct cuco_lift_pos *name, const char *callee,
                      int by_text, struct cuco_lift_macro_use *m)
{
	const struct lift_text *t = lift_text(U, name->file);
	const struct lift_expansion *x = lift_expansion_at(U, name);
	struct lift_tok tok;

	if (!x) {
		if (!t || !*callee || !by_text)
			return 0;
		tok = lift_text_tok(t->src, t->len, name->offset);
		if (tok.start != name->offset || lift_tok_is(t->src, tok, callee))
			return 0;
		x = lift_expansion_over(U, name);
		if (!x)
			return 0;
	}
	m->name = cuco_xstrdup(x->name);
	lift_range_at(U, x->file, x->begin, x->end, &m->site);
	m->definition = x->definition;
	/* where the #define spells the callee */
	t = lift_text(U, x->def_extent.file);
	if (t && *callee) {
		size_t at = x->def_extent.begin;

		while (at < x->def_extent.end) {
			tok = lift_text_tok(t->src, t->len, at);
			if (tok.kind == LIFT_TOK_END || tok.start >= x->def_extent.end)
				break;
			if (lift_tok_is(t->src, tok, callee)) {
				name->file = x->def_extent.file;
				name->offset = (unsigned)tok.start;
				lift_text_linecol(t, tok.start, &name->line, &name->column);
				return 1;
			}
			at = tok.end;
		}
	}
	if (x->definition.file >= 0)
		*name = x->definition;
	return 1;
}

/* The arguments of a call as cursors. */
static CXCursor *call_args(struct lift_unit *U, CXCursor c, size_t *n)
{
	int na = U->C->clang_Cursor_getNumArguments(c), i;
	CXCursor *a;

	*n = 0;
	if (na <= 0)
		return NULL;
	a = cuco_xcalloc((size_t)na, sizeof(*a));
	for (i = 0; i < na; i++)
		a[i] = U->C->clang_Cursor_getArgument(c, (unsigned)i);
	*n = (size_t)na;
	return a;
}

/* The first '(' or '{' of an object's construction: t(f, x), std::thread{f}. */
static size_t first_open(const struct lift_text *t, size_t begin, size_t end)
{
	size_t at = begin;

	while (at < end) {
		struct lift_tok tok = lift_text_tok(t->src, t->len, at);

		if (tok.kind == LIFT_TOK_END || tok.start >= end || lift_tok_is(t->src, tok, ";"))
			break;
		if (lift_tok_is(t->src, tok, "(") || lift_tok_is(t->src, tok, "{"))
			return tok.start;
		at = tok.end;
	}
	return (size_t)-1;
}

static void launch(struct lift_unit *U, CXCursor c, CXCursor *ch, size_t n, size_t cfg)
{
	struct cuco_lift_facts *f = U->S->facts;
	struct cuco_lift_launch *l;
	CXCursor name, ref, *a;
	const struct lift_text *t;
	size_t na, i, open, close = 0;
	int op;
	struct cuco_lift_pos np;

	ref = lift_callee_of(U, c, ch, n, &name, &op);
	l = CUCO_ARRAY_PUSH(f->launches, f->nlaunches, f->launches_alloc);
	memset(l, 0, sizeof(*l));
	l->function = -1;
	l->caller = U->function;
	l->stmt = U->stmt;
	l->loop = U->loop;
	l->kernel = spelling(U, U->C->clang_Cursor_isNull(ref) ? name : ref);
	l->kernel_usr = U->C->clang_Cursor_isNull(ref)
	                    ? cuco_xstrdup("")
	                    : lift_str(U, U->C->clang_getCursorUSR(lift_pattern(U, ref)));
	lift_extent(U, c, &l->extent);
	lift_pos(U, U->C->clang_getCursorLocation(name), &l->name);
	np = l->name;
	l->in_macro_body = macro_body(U, &np, l->kernel, 1, &l->macro);
	l->name = np;
	t = lift_text(U, l->name.file);
	open = (size_t)-1;
	if (t) {
		struct lift_tok nt = lift_text_tok(t->src, t->len, l->name.offset);
		size_t cfg_open = lift_text_expect(t->src, t->len, nt.end, "<<<", 1);
		struct lift_piece p[4];
		int np4 = cfg_open == (size_t)-1
		              ? -1
		              : lift_text_split(t->src, t->len, cfg_open, ',', p, 4, &close);

		for (i = 0; np4 > 0 && i < (size_t)np4 && i < 4; i++) {
			lift_range_at(U, l->name.file, p[i].start, p[i].end, &l->config_extent[i]);
			l->config[i] = lift_range_text(U, &l->config_extent[i]);
		}
		l->nconfig = np4 > 0 ? (size_t)(np4 > 4 ? 4 : np4) : 0;
		if (np4 >= 0)
			open = lift_text_expect(t->src, t->len, close + 3, "(", 0);
		if (l->in_macro_body && open != (size_t)-1 &&
		    lift_text_split(t->src, t->len, open, ',', p, 1, &close) >= 0)
			lift_range_at(U, l->name.file, l->name.offset, close + 1, &l->extent);
	}
	if (!l->nconfig) {
		/* no text to split: clang's configuration, the defaults left out */
		a = call_args(U, ch[cfg], &na);
		for (i = 0; i < na && i < 4; i++) {
			struct cuco_lift_range r;

			if (lift_extent(U, a[i], &r) < 0 || r.end <= r.begin)
				continue;
			l = &f->launches[f->nlaunches - 1];
			l->config_extent[l->nconfig] = r;
			l->config[l->nconfig++] = lift_expr_text(U, a[i], &r);
		}
		free(a);
	}
	l = &f->launches[f->nlaunches - 1];
	for (i = l->nconfig; i < 4; i++)
		l->config_extent[i].file = -1;
	a = call_args(U, c, &na);
	fill_args(U, l->name.file, open, a, na, l->in_macro_body ? &l->macro.site : NULL, &l->args,
	          &l->nargs);
	free(a);
	for (i = 0; i < n; i++) {
		if (i == cfg) {
			size_t m, j;
			CXCursor *sub = lift_children(U, ch[i], &m);

			for (j = 1; j < m; j++)
				lift_walk_expr(U, sub[j]);
			free(sub);
		} else if (i > 0) {
			lift_walk_expr(U, ch[i]);
		}
	}
}

/* A constructor call that converts or copies rather than builds: nothing written but one value. */
static int implicit_construct(struct lift_unit *U, CXCursor c, const CXCursor *a, size_t na)
{
	struct cuco_lift_range rc, ra, r;
	size_t i, written = 0;

	if (lift_extent(U, c, &rc) < 0 || rc.end <= rc.begin)
		return 1;
	for (i = 0; i < na; i++) {
		/* default arguments have no place */
		if (lift_extent(U, a[i], &r) == 0) {
			written++;
			ra = r;
		}
	}
	return written == 0 || (written == 1 && ra.begin == rc.begin && ra.end == rc.end);
}

/*
 * The index of a call recorded already at the same place: a macro that
 * names its argument more than once (check(x) writing x in a test and a
 * message) has clang see one call per use; -1 when none.
 */
static int same_call(struct lift_unit *U, const struct cuco_lift_range *ext,
                     const struct cuco_lift_pos *name)
{
	struct cuco_lift_facts *f = U->S->facts;
	size_t i = f->ncalls, seen = 0;

	while (i-- > 0 && seen++ < 256) {
		const struct cuco_lift_call *c = &f->calls[i];

		if (c->caller != U->function)
			break;
		if (c->name.file == name->file && c->name.offset == name->offset &&
		    c->extent.file == ext->file && c->extent.begin == ext->begin &&
		    c->extent.end == ext->end)
			return (int)i;
	}
	return -1;
}

static void call(struct lift_unit *U, CXCursor c)
{
	struct cuco_lift_facts *f = U->S->facts;
	struct cuco_lift_call *k;
	struct cuco_lift_range ext;
	struct cuco_lift_pos np;
	size_t n, i, na, ci;
	CXCursor *ch = lift_children(U, c, &n), name, ref, *a = NULL;
	enum CXCursorKind rk;
	const struct lift_text *t;
	char *callee;
	size_t open = (size_t)-1;
	int op, dup;

	for (i = 1; i < n; i++) {
		if (kind(U, ch[i]) == CXCursor_CallExpr) {
			char *s = spelling(U, ch[i]);
			int cfg = strcmp(s, "__cudaPushCallConfiguration") == 0;

			free(s);
			if (cfg) {
				launch(U, c, ch, n, i);
				free(ch);
				return;
			}
		}
	}
	ref = lift_callee_of(U, c, ch, n, &name, &op);
	rk = U->C->clang_Cursor_isNull(ref) ? CXCursor_InvalidFile : kind(U, ref);
	callee = spelling(U, U->C->clang_Cursor_isNull(ref) ? name : ref);
	a = call_args(U, c, &na);
	lift_extent(U, c, &ext);
	lift_pos(U, U->C->clang_getCursorLocation(name), &np);
	/* a construction nobody wrote: a conversion, or a braced launch configuration */
	if (!*callee || op ||
	    ((rk == CXCursor_Constructor || lift_is_type(rk)) &&
	     (implicit_construct(U, c, a, na) || lift_adjusted_at(U, ext.file, ext.begin)))) {
		free(callee);
		goto children;
	}
	dup = same_call(U, &ext, &np);
	if (dup >= 0) {
		f->calls[dup].copies++;
		free(callee);
		goto children;
	}
	k = CUCO_ARRAY_PUSH(f->calls, f->ncalls, f->calls_alloc);
	ci = f->ncalls - 1;
	memset(k, 0, sizeof(*k));
	k->callee = callee;
	k->copies = 1;
	k->function = -1;
	k->caller = U->function;
	k->stmt = U->stmt;
	k->loop = U->loop;
	k->decl.file = -1;
	k->extent = ext;
	k->is_method = rk == CXCursor_CXXMethod || rk == CXCursor_Destructor;
	k->is_constructor = rk == CXCursor_Constructor || lift_is_type(rk);
	if (lift_is_function(rk) || lift_is_type(rk)) {
		CXCursor canon = U->C->clang_getCanonicalCursor(lift_pattern(U, ref));

		k->callee_usr = lift_is_function(rk)
		                    ? lift_str(U, U->C->clang_getCursorUSR(lift_pattern(U, ref)))
		                    : cuco_xstrdup("");
		k->origin = lift_origin_of(U, canon, &k->decl);
		k = &f->calls[ci];
		if (k->origin == CUCO_LIFT_ORIGIN_LOCAL && lift_implicit_decl(U, canon, k->callee))
			k->origin = CUCO_LIFT_ORIGIN_SYSTEM;
		if (k->origin == CUCO_LIFT_ORIGIN_NCCL)
			k->nccl = lift_nccl_kind(k->callee);
	} else {
		/* a call through a variable (a pointer, a function object) */
		k->callee_usr = cuco_xstrdup("");
		if (!U->C->clang_Cursor_isNull(ref))
			lift_pos(U, U->C->clang_getCursorLocation(ref), &f->calls[ci].decl);
	}
	k = &f->calls[ci];
	k->in_macro_body = macro_body(U, &np, k->callee, !k->is_constructor, &k->macro);
	k->name = np;
	/* the arguments as written: in the #define's body for a call it writes */
	t = lift_text(U, k->name.file);
	if (t && !(k->in_macro_body && k->is_constructor)) {
		struct lift_tok nt = lift_text_tok(t->src, t->len, k->name.offset);

		open = k->is_constructor ? first_open(t, k->extent.begin, k->extent.end)
		                         : lift_text_expect(t->src, t->len, nt.end, "(", 1);
		/* a call a macro body writes: its span is in the #define, as its text is */
		if (k->in_macro_body && open != (size_t)-1) {
			struct lift_piece p[1];
			size_t close;

			if (lift_text_split(t->src, t->len, open, ',', p, 1, &close) >= 0)
				lift_range_at(U, k->name.file, k->name.offset, close + 1,
				              &k->extent);
		}
	}
	fill_args(U, k->name.file, open, a, na, k->in_macro_body ? &k->macro.site : NULL,
	          &f->calls[ci].args, &f->calls[ci].nargs);
	k = &f->calls[ci];
	if (na > 0 && lift_is_dest_call(k->callee) &&
	    (k->origin == CUCO_LIFT_ORIGIN_CUDA || k->origin == CUCO_LIFT_ORIGIN_NCCL))
		lift_dest_of(U, ci, a[0]);
	lift_thread_of(U, ci, ref, name);
children:
	free(a);
	for (i = 0; i < n; i++)
		lift_walk_expr(U, ch[i]);
	free(ch);
}

static void lambda(struct lift_unit *U, CXCursor c)
{
	int idx = lift_stmt_push(U, CUCO_LIFT_STMT_LAMBDA, c), saved = U->stmt,
	    saved_loop = U->loop;
	struct lift_exit *wall = CUCO_ARRAY_PUSH(U->exits, U->nexits, U->exits_alloc);
	size_t n, i;
	CXCursor *ch = lift_children(U, c, &n);

	wall->stmt = idx;
	wall->is_loop = -1;
	U->stmt = idx;
	U->loop = -1;
	for (i = 0; i < n; i++) {
		if (kind(U, ch[i]) == CXCursor_CompoundStmt)
			lift_walk_stmt(U, ch[i]);
		else
			lift_walk_expr(U, ch[i]);
	}
	free(ch);
	U->nexits--;
	U->stmt = saved;
	U->loop = saved_loop;
}

void lift_walk_expr(struct lift_unit *U, CXCursor c)
{
	enum CXCursorKind k = kind(U, c);
	size_t n, i;
	CXCursor *ch;

	if (k == CXCursor_CallExpr) {
		call(U, c);
		return;
	}
	if (k == CXCursor_LambdaExpr) {
		lambda(U, c);
		return;
	}
	ch = lift_children(U, c, &n);
	for (i = 0; i < n; i++)
		lift_walk_expr(U, ch[i]);
	free(ch);
}

void lift_resolve(struct cuco_lift_facts *f)
{
	size_t i, j;

	for (i = 0; i < f->ncalls; i++) {
		struct cuco_lift_call *c = &f->calls[i];
		struct cuco_lift_undefined *u = NULL;

		if (c->origin != CUCO_LIFT_ORIGIN_LOCAL || !*c->callee_usr || c->is_constructor)
			continue;
		for (j = 0; j < f->nfunctions && c->function < 0; j++)
			if (strcmp(f->functions[j].usr, c->callee_usr) == 0)
				c->function = (int)j;
		if (c->function >= 0)
			continue;
		for (j = 0; j < f->nundefined && !u; j++)
			if (strcmp(f->undefined[j].usr, c->callee_usr) == 0)
				u = &f->undefined[j];
		if (!u) {
			u = CUCO_ARRAY_PUSH(f->undefined, f->nundefined, f->undefined_alloc);
			memset(u, 0, sizeof(*u));
			u->name = cuco_xstrdup(c->callee);
			u->usr = cuco_xstrdup(c->callee_usr);
			u->decl = c->decl;
		}
		u->ncalls++;
	}
	for (i = 0; i < f->nlaunches; i++)
		for (j = 0; j < f->nfunctions && f->launches[i].function < 0; j++)
			if (*f->launches[i].kernel_usr &&
			    strcmp(f->functions[j].usr, f->launches[i].kernel_usr) == 0)
				f->launches[i].function = (int)j;
}
