/*
 * walk.c - the declarations of local files: functions defined there, and
 * the statement tree of each body (loops with their headers, the exits of
 * break, continue and return), handing expressions to calls.c.
 */
#include <stdlib.h>
#include <string.h>

#include "lift/internal.h"
#include "util/array.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* libclang's kind numbers: expressions 100-199, statements 200-399 (in every version since 3). */
static int is_expr(enum CXCursorKind k)
{
	return k >= 100 && k < 200;
}

static int is_stmt(enum CXCursorKind k)
{
	return k >= 200 && k < 400;
}

struct children {
	CXCursor *v;
	size_t n, alloc;
};

static enum CXChildVisitResult collect(CXCursor c, CXCursor parent, CXClientData data)
{
	struct children *ch = data;

	(void)parent;
	*CUCO_ARRAY_PUSH(ch->v, ch->n, ch->alloc) = c;
	return CXChildVisit_Continue;
}

CXCursor *lift_children(struct lift_unit *U, CXCursor c, size_t *n)
{
	struct children ch = {NULL, 0, 0};

	U->C->clang_visitChildren(c, collect, &ch);
	*n = ch.n;
	return ch.v;
}

static enum CXCursorKind kind(struct lift_unit *U, CXCursor c)
{
	return U->C->clang_getCursorKind(c);
}

/* "ns::Class::name", from the semantic parents up to the unit. */
char *lift_qualified(struct lift_unit *U, CXCursor c)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char *name = lift_str(U, U->C->clang_getCursorSpelling(c));
	CXCursor p = U->C->clang_getCursorSemanticParent(c);
	int depth = 0;

	cuco_strbuf_adds(&sb, name);
	free(name);
	while (!U->C->clang_Cursor_isNull(p) && kind(U, p) != CXCursor_TranslationUnit &&
	       depth++ < 64) {
		enum CXCursorKind k = kind(U, p);

		if (k == CXCursor_Namespace || k == CXCursor_ClassDecl ||
		    k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
		    k == CXCursor_ClassTemplate ||
		    k == CXCursor_ClassTemplatePartialSpecialization) {
			char *s = lift_str(U, U->C->clang_getCursorSpelling(p));
			struct cuco_strbuf q = CUCO_STRBUF_INIT;

			cuco_strbuf_addf(&q, "%s::%s", *s ? s : "(anonymous)", sb.buf);
			free(s);
			cuco_strbuf_release(&sb);
			sb = q;
		}
		p = U->C->clang_getCursorSemanticParent(p);
	}
	return cuco_strbuf_detach(&sb, NULL);
}

/* The token after a span, when it is ';': the statement's end with it. */
static unsigned with_semicolon(struct lift_unit *U, const struct cuco_lift_range *r)
{
	const struct lift_text *t = lift_text(U, r->file);
	struct lift_tok tok;

	if (!t || r->end == 0 || r->end > t->len || t->src[r->end - 1] == ';')
		return r->end;
	tok = lift_text_tok(t->src, t->len, r->end);
	return lift_tok_is(t->src, tok, ";") ? (unsigned)tok.end : r->end;
}

int lift_stmt_push(struct lift_unit *U, int k, CXCursor c)
{
	struct cuco_lift_facts *f = U->S->facts;
	struct cuco_lift_stmt *s = CUCO_ARRAY_PUSH(f->stmts, f->nstmts, f->stmts_alloc);
	struct cuco_lift_pos begin;
	const struct lift_expansion *x;

	memset(s, 0, sizeof(*s));
	s->kind = k;
	s->parent = U->stmt;
	s->function = U->function;
	s->parent_loop = U->loop;
	s->target = -1;
	s->body.file = -1;
	s->cond.file = -1;
	lift_extent(U, c, &s->extent);
	begin.file = s->extent.file;
	begin.offset = s->extent.begin;
	x = s->extent.file >= 0 ? lift_expansion_at(U, &begin) : NULL;
	if (x) {
		s->macro = cuco_xstrdup(x->name);
		s->opaque = s->extent.end <= x->end && U->stmt >= 0;
	}
	if (s->extent.file >= 0 &&
	    (k == CUCO_LIFT_STMT_EXPR || k == CUCO_LIFT_STMT_DECL || k == CUCO_LIFT_STMT_BREAK ||
	     k == CUCO_LIFT_STMT_CONTINUE || k == CUCO_LIFT_STMT_RETURN || k == CUCO_LIFT_STMT_DO ||
	     k == CUCO_LIFT_STMT_OTHER || s->opaque))
		lift_range_at(U, s->extent.file, s->extent.begin, with_semicolon(U, &s->extent),
		              &s->extent);
	return (int)(f->nstmts - 1);
}

static struct cuco_lift_stmt *stmt(struct lift_unit *U, int i)
{
	return &U->S->facts->stmts[i];
}

static void push_exit(struct lift_unit *U, int s, int is_loop)
{
	struct lift_exit *e = CUCO_ARRAY_PUSH(U->exits, U->nexits, U->exits_alloc);

	e->stmt = s;
	e->is_loop = is_loop;
}

/* The statement break (loops_only 0) or continue (1) leaves, -1 when none. */
static int exit_target(struct lift_unit *U, int loops_only)
{
	size_t i = U->nexits;

	while (i-- > 0) {
		if (U->exits[i].is_loop < 0)
			return -1;
		if (U->exits[i].is_loop || !loops_only)
			return U->exits[i].stmt;
	}
	return -1;
}

/*
 * The parenthesised header of if, for, while, switch at the start of a
 * statement's text: its pieces split at ';' and the offset of its ')'.
 * -1 when the text is not there (a statement that a macro writes).
 */
static int header(struct lift_unit *U, const struct cuco_lift_range *r, struct lift_piece *p,
                  int max, size_t *close)
{
	const struct lift_text *t = lift_text(U, r->file);
	struct lift_tok kw;
	size_t open;

	if (!t)
		return -1;
	kw = lift_text_tok(t->src, t->len, r->begin);
	if (!(lift_tok_is(t->src, kw, "for") || lift_tok_is(t->src, kw, "while") ||
	      lift_tok_is(t->src, kw, "if") || lift_tok_is(t->src, kw, "switch")))
		return -1;
	open = lift_text_expect(t->src, t->len, kw.end, "(", 0);
	if (open == (size_t)-1) {
		struct lift_tok ce = lift_text_tok(t->src, t->len, kw.end);

		if (!lift_tok_is(t->src, ce, "constexpr"))
			return -1;
		open = lift_text_expect(t->src, t->len, ce.end, "(", 0);
		if (open == (size_t)-1)
			return -1;
	}
	return lift_text_split(t->src, t->len, open, ';', p, max, close);
}

static void set_cond(struct lift_unit *U, struct cuco_lift_stmt *s, int file,
                     const struct lift_piece *p)
{
	if (p->end <= p->start)
		return;
	lift_range_at(U, file, p->start, p->end, &s->cond);
	s->cond_text = lift_range_text(U, &s->cond);
}

/* The first variable a declaration statement declares. */
static char *first_var(struct lift_unit *U, CXCursor decl)
{
	size_t n, i;
	CXCursor *ch = lift_children(U, decl, &n);
	char *name = NULL;

	for (i = 0; i < n && !name; i++)
		if (kind(U, ch[i]) == CXCursor_VarDecl)
			name = lift_str(U, U->C->clang_getCursorSpelling(ch[i]));
	free(ch);
	return name;
}

static unsigned begin_of(struct lift_unit *U, CXCursor c, int *file)
{
	struct cuco_lift_range r;

	lift_extent(U, c, &r);
	*file = r.file;
	return r.begin;
}

/* if, for, while, switch, range-for: the header's parts, then the body or branches. */
static void walk_headed(struct lift_unit *U, int idx, CXCursor c, int k)
{
	struct cuco_lift_range ext = stmt(U, idx)->extent;
	struct lift_piece p[4];
	size_t close = 0, n, i;
	int np = header(U, &ext, p, 4, &close),
	    loop = k != CUCO_LIFT_STMT_IF && k != CUCO_LIFT_STMT_SWITCH;
	CXCursor *ch = lift_children(U, c, &n);
	int saved_loop = U->loop;
	size_t first_body = n ? n - 1 : 0;

	/* which children are the header's: those that start before its ')' */
	if (np >= 0) {
		first_body = n;
		for (i = 0; i < n; i++) {
			int file;
			unsigned b = begin_of(U, ch[i], &file);

			if (file == ext.file && b > close) {
				first_body = i;
				break;
			}
		}
	} else if (k == CUCO_LIFT_STMT_IF) {
		first_body = n > 1 ? 1 : n;
	}
	if (np > 0 && k == CUCO_LIFT_STMT_FOR && np == 3) {
		set_cond(U, stmt(U, idx), ext.file, &p[1]);
		for (i = 0; i < first_body; i++) {
			int file;
			unsigned b = begin_of(U, ch[i], &file);

			if (kind(U, ch[i]) == CXCursor_DeclStmt && file == ext.file &&
			    b >= p[0].start && b < p[0].end && !stmt(U, idx)->induction)
				stmt(U, idx)->induction = first_var(U, ch[i]);
		}
	} else if (np > 0 && k != CUCO_LIFT_STMT_RANGE_FOR) {
		set_cond(U, stmt(U, idx), ext.file, &p[np - 1]);
	}
	if (k == CUCO_LIFT_STMT_RANGE_FOR && first_body >= 2) {
		struct cuco_lift_stmt *s = stmt(U, idx);

		for (i = 0; i < first_body; i++)
			if (kind(U, ch[i]) == CXCursor_VarDecl && !s->induction)
				s->induction = lift_str(U, U->C->clang_getCursorSpelling(ch[i]));
		lift_extent(U, ch[first_body - 1], &s->cond);
		s = stmt(U, idx);
		s->cond_text = lift_range_text(U, &s->cond);
	}
	for (i = 0; i < first_body; i++)
		lift_walk_expr(U, ch[i]);
	if (loop) {
		push_exit(U, idx, 1);
		U->loop = idx;
		if (first_body < n)
			lift_extent(U, ch[n - 1], &stmt(U, idx)->body);
	} else if (k == CUCO_LIFT_STMT_SWITCH) {
		push_exit(U, idx, 0);
	}
	for (i = first_body; i < n; i++) {
		if (is_stmt(kind(U, ch[i])) || is_expr(kind(U, ch[i])))
			lift_walk_stmt(U, ch[i]);
		else
			lift_walk_expr(U, ch[i]);
	}
	if (loop || k == CUCO_LIFT_STMT_SWITCH)
		U->nexits--;
	U->loop = saved_loop;
	free(ch);
}

/* do body while (cond); */
static void walk_do(struct lift_unit *U, int idx, CXCursor c)
{
	size_t n, i;
	CXCursor *ch = lift_children(U, c, &n);
	int saved_loop = U->loop;

	if (n >= 1) {
		struct cuco_lift_stmt *s = stmt(U, idx);
		const struct lift_text *t;

		lift_extent(U, ch[0], &s->body);
		t = lift_text(U, s->body.file);
		if (t && s->body.file == s->extent.file) {
			struct lift_tok w = lift_text_tok(t->src, t->len, s->body.end);
			struct lift_piece p[2];
			size_t open, close;

			open = lift_tok_is(t->src, w, "while")
			           ? lift_text_expect(t->src, t->len, w.end, "(", 0)
			           : (size_t)-1;
			if (open != (size_t)-1 &&
			    lift_text_split(t->src, t->len, open, ';', p, 2, &close) == 1)
				set_cond(U, s, s->body.file, &p[0]);
		}
	}
	push_exit(U, idx, 1);
	U->loop = idx;
	for (i = 0; i < n; i++) {
		if (i == 0)
			lift_walk_stmt(U, ch[i]);
		else
			lift_walk_expr(U, ch[i]);
	}
	U->nexits--;
	U->loop = saved_loop;
	free(ch);
}

static int stmt_kind(enum CXCursorKind k)
{
	switch (k) {
	case CXCursor_CompoundStmt:
		return CUCO_LIFT_STMT_COMPOUND;
	case CXCursor_IfStmt:
		return CUCO_LIFT_STMT_IF;
	case CXCursor_SwitchStmt:
		return CUCO_LIFT_STMT_SWITCH;
	case CXCursor_ForStmt:
		return CUCO_LIFT_STMT_FOR;
	case CXCursor_WhileStmt:
		return CUCO_LIFT_STMT_WHILE;
	case CXCursor_DoStmt:
		return CUCO_LIFT_STMT_DO;
	case CXCursor_CXXForRangeStmt:
		return CUCO_LIFT_STMT_RANGE_FOR;
	case CXCursor_BreakStmt:
		return CUCO_LIFT_STMT_BREAK;
	case CXCursor_ContinueStmt:
		return CUCO_LIFT_STMT_CONTINUE;
	case CXCursor_ReturnStmt:
		return CUCO_LIFT_STMT_RETURN;
	case CXCursor_DeclStmt:
		return CUCO_LIFT_STMT_DECL;
	default:
		return is_expr(k) ? CUCO_LIFT_STMT_EXPR : CUCO_LIFT_STMT_OTHER;
	}
}

void lift_walk_stmt(struct lift_unit *U, CXCursor c)
{
	enum CXCursorKind ck = kind(U, c);
	int k = stmt_kind(ck), idx, saved = U->stmt;
	size_t n, i;
	CXCursor *ch;

	/* a lone ';' (the one after a macro that is a whole statement) says nothing */
	if (ck == CXCursor_NullStmt)
		return;
	idx = lift_stmt_push(U, k, c);
	U->stmt = idx;
	if (stmt(U, idx)->opaque || k == CUCO_LIFT_STMT_EXPR || k == CUCO_LIFT_STMT_DECL) {
		if (k == CUCO_LIFT_STMT_EXPR)
			lift_walk_expr(U, c);
		else {
			ch = lift_children(U, c, &n);
			for (i = 0; i < n; i++)
				lift_walk_expr(U, ch[i]);
			free(ch);
		}
		U->stmt = saved;
		return;
	}
	switch (k) {
	case CUCO_LIFT_STMT_IF:
	case CUCO_LIFT_STMT_SWITCH:
	case CUCO_LIFT_STMT_FOR:
	case CUCO_LIFT_STMT_WHILE:
	case CUCO_LIFT_STMT_RANGE_FOR:
		walk_headed(U, idx, c, k);
		break;
	case CUCO_LIFT_STMT_DO:
		walk_do(U, idx, c);
		break;
	case CUCO_LIFT_STMT_BREAK:
	case CUCO_LIFT_STMT_CONTINUE:
		stmt(U, idx)->target = exit_target(U, k == CUCO_LIFT_STMT_CONTINUE);
		break;
	default:
		/* compound, return, labels, case, try: statements below, expressions walked */
		ch = lift_children(U, c, &n);
		for (i = 0; i < n; i++) {
			enum CXCursorKind kk = kind(U, ch[i]);

			if (k != CUCO_LIFT_STMT_RETURN &&
			    (is_stmt(kk) ||
			     (is_expr(kk) && (k == CUCO_LIFT_STMT_COMPOUND || i + 1 == n))))
				lift_walk_stmt(U, ch[i]);
			else
				lift_walk_expr(U, ch[i]);
		}
		free(ch);
	}
	U->stmt = saved;
}

static int function_kind(struct lift_unit *U, CXCursor *ch, size_t n)
{
	int global = 0, device = 0, host = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		enum CXCursorKind k = kind(U, ch[i]);

		global |= k == CXCursor_CUDAGlobalAttr;
		device |= k == CXCursor_CUDADeviceAttr;
		host |= k == CXCursor_CUDAHostAttr;
	}
	if (global)
		return CUCO_LIFT_FN_KERNEL;
	if (device)
		return host ? CUCO_LIFT_FN_HOST_DEVICE : CUCO_LIFT_FN_DEVICE;
	return CUCO_LIFT_FN_HOST;
}

static void function(struct lift_unit *U, CXCursor c)
{
	struct cuco_lift_facts *f = U->S->facts;
	struct cuco_lift_function *fn;
	struct cuco_lift_pos name;
	enum CXCursorKind k = kind(U, c), pk;
	CXCursor parent = U->C->clang_getCursorSemanticParent(c), *ch;
	size_t n, i, body = (size_t)-1, nparams = 0, params_alloc = 0;
	char *usr;
	int idx;

	if (lift_pos(U, U->C->clang_getCursorLocation(c), &name) < 0)
		return;
	usr = lift_str(U, U->C->clang_getCursorUSR(c));
	for (i = 0; i < f->nfunctions; i++) {
		if (f->functions[i].name_pos.file == name.file &&
		    f->functions[i].name_pos.offset == name.offset &&
		    strcmp(f->functions[i].usr, usr) == 0) {
			free(usr);
			return;
		}
	}
	ch = lift_children(U, c, &n);
	fn = CUCO_ARRAY_PUSH(f->functions, f->nfunctions, f->functions_alloc);
	memset(fn, 0, sizeof(*fn));
	idx = (int)(f->nfunctions - 1);
	fn->name = lift_str(U, U->C->clang_getCursorSpelling(c));
	fn->qualified = lift_qualified(U, c);
	fn->usr = usr;
	fn->kind = function_kind(U, ch, n);
	fn->name_pos = name;
	lift_extent(U, c, &fn->extent);
	fn->body.file = -1;
	pk = kind(U, parent);
	fn->is_main = strcmp(fn->name, "main") == 0 && pk == CXCursor_TranslationUnit;
	fn->is_template = k == CXCursor_FunctionTemplate || pk == CXCursor_ClassTemplate ||
	                  pk == CXCursor_ClassTemplatePartialSpecialization;
	fn->is_method = k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
	                k == CXCursor_Destructor || k == CXCursor_ConversionFunction ||
	                (k == CXCursor_FunctionTemplate &&
	                 (pk == CXCursor_ClassDecl || pk == CXCursor_StructDecl ||
	                  pk == CXCursor_ClassTemplate));
	for (i = 0; i < n; i++) {
		enum CXCursorKind ck = kind(U, ch[i]);

		if (ck == CXCursor_ParmDecl) {
			struct cuco_lift_param *p;

			fn = &f->functions[idx];
			p = CUCO_ARRAY_PUSH(fn->params, nparams, params_alloc);
			p->name = lift_str(U, U->C->clang_getCursorSpelling(ch[i]));
			p->type = lift_str(
			    U, U->C->clang_getTypeSpelling(U->C->clang_getCursorType(ch[i])));
			fn->nparams = nparams;
		} else if (ck == CXCursor_CompoundStmt) {
			body = i;
		}
	}
	U->function = idx;
	U->stmt = -1;
	U->loop = -1;
	U->nexits = 0;
	/* constructors' member initialisers: what stands between the parameters and the body */
	for (i = 0; i < n && i < body; i++) {
		enum CXCursorKind ck = kind(U, ch[i]);

		if (is_expr(ck))
			lift_walk_expr(U, ch[i]);
	}
	if (body != (size_t)-1) {
		lift_extent(U, ch[body], &f->functions[idx].body);
		lift_walk_stmt(U, ch[body]);
	}
	U->function = -1;
	U->stmt = -1;
	U->loop = -1;
	free(ch);
}

static enum CXChildVisitResult decl_visit(CXCursor c, CXCursor parent, CXClientData data)
{
	struct lift_unit *U = data;
	struct lift_scan *S = U->S;
	enum CXCursorKind k = kind(U, c);
	struct cuco_lift_pos p;

	(void)parent;
	if (k == CXCursor_InclusionDirective || k == CXCursor_MacroDefinition ||
	    k == CXCursor_MacroExpansion)
		return CXChildVisit_Continue;
	if (lift_pos(U, U->C->clang_getCursorLocation(c), &p) < 0 || !lift_is_local(U, &p))
		return CXChildVisit_Continue;
	/* a file's declarations are walked by the first unit that reads it */
	while (S->nwalked <= (size_t)p.file)
		*CUCO_ARRAY_PUSH(S->walked, S->nwalked, S->walked_alloc) = -1;
	if (S->walked[p.file] >= 0 && S->walked[p.file] != U->unit)
		return CXChildVisit_Continue;
	S->walked[p.file] = U->unit;
	switch (k) {
	case CXCursor_Namespace:
	case CXCursor_LinkageSpec:
	case CXCursor_StructDecl:
	case CXCursor_ClassDecl:
	case CXCursor_UnionDecl:
	case CXCursor_ClassTemplate:
	case CXCursor_ClassTemplatePartialSpecialization:
		U->C->clang_visitChildren(c, decl_visit, U);
		break;
	case CXCursor_FunctionDecl:
	case CXCursor_CXXMethod:
	case CXCursor_Constructor:
	case CXCursor_Destructor:
	case CXCursor_ConversionFunction:
	case CXCursor_FunctionTemplate:
		if (U->C->clang_isCursorDefinition(c))
			function(U, c);
		break;
	case CXCursor_VarDecl: {
		size_t n, i;
		CXCursor *ch = lift_children(U, c, &n);

		for (i = 0; i < n; i++)
			if (is_expr(kind(U, ch[i])))
				lift_walk_expr(U, ch[i]);
		free(ch);
		break;
	}
	default:
		break;
	}
	return CXChildVisit_Continue;
}

void lift_walk_unit(struct lift_unit *U)
{
	U->function = -1;
	U->stmt = -1;
	U->loop = -1;
	U->C->clang_visitChildren(U->C->clang_getTranslationUnitCursor(U->tu), decl_visit, U);
}
