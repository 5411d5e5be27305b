/*
 * callee.c - who a call calls and what that means: the declaration behind
 * a callee expression (overload sets in templates, operators, calls through
 * variables), the header it comes from, the kind of NCCL call, the
 * destination of an allocator, the calls that start threads.
 */
#include <stdlib.h>
#include <string.h>

#include "lift/internal.h"
#include "util/array.h"
#include "util/xalloc.h"

static const struct {
	const char *name;
	int kind;
} nccl_calls[] = {
    {"ncclAllReduce", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclBroadcast", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclBcast", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclReduce", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclAllGather", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclReduceScatter", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclAlltoAll", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclGather", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclScatter", CUCO_LIFT_NCCL_COLLECTIVE},
    {"ncclSend", CUCO_LIFT_NCCL_P2P},
    {"ncclRecv", CUCO_LIFT_NCCL_P2P},
    {"ncclGroupStart", CUCO_LIFT_NCCL_GROUP},
    {"ncclGroupEnd", CUCO_LIFT_NCCL_GROUP},
    {"ncclGroupSimulateEnd", CUCO_LIFT_NCCL_GROUP},
    {"ncclGetUniqueId", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommInitRank", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommInitRankConfig", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommInitRankScalable", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommInitAll", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommSplit", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommShrink", CUCO_LIFT_NCCL_SETUP},
    {"ncclCommDestroy", CUCO_LIFT_NCCL_TEARDOWN},
    {"ncclCommFinalize", CUCO_LIFT_NCCL_TEARDOWN},
    {"ncclCommAbort", CUCO_LIFT_NCCL_TEARDOWN},
    {"ncclCommRevoke", CUCO_LIFT_NCCL_TEARDOWN},
    {"ncclMemAlloc", CUCO_LIFT_NCCL_MEMORY},
    {"ncclMemFree", CUCO_LIFT_NCCL_MEMORY},
    {"ncclCommRegister", CUCO_LIFT_NCCL_MEMORY},
    {"ncclCommDeregister", CUCO_LIFT_NCCL_MEMORY},
    {"ncclCommWindowRegister", CUCO_LIFT_NCCL_MEMORY},
    {"ncclCommWindowDeregister", CUCO_LIFT_NCCL_MEMORY},
    {"ncclCommCount", CUCO_LIFT_NCCL_QUERY},
    {"ncclCommUserRank", CUCO_LIFT_NCCL_QUERY},
    {"ncclCommCuDevice", CUCO_LIFT_NCCL_QUERY},
    {"ncclCommGetAsyncError", CUCO_LIFT_NCCL_QUERY},
    {"ncclGetVersion", CUCO_LIFT_NCCL_QUERY},
    {"ncclGetErrorString", CUCO_LIFT_NCCL_QUERY},
    {"ncclGetLastError", CUCO_LIFT_NCCL_QUERY},
    {"ncclRedOpCreatePreMulSum", CUCO_LIFT_NCCL_REDOP},
    {"ncclRedOpDestroy", CUCO_LIFT_NCCL_REDOP},
};

/* Allocators whose first argument is where the new pointer goes. */
static const char *const dest_calls[] = {
    "cudaMalloc",      "cudaMallocHost",          "cudaMallocManaged", "cudaMallocAsync",
    "cudaMallocPitch", "cudaMallocFromPoolAsync", "cudaHostAlloc",     "ncclMemAlloc",
};

static enum CXCursorKind kind(struct lift_unit *U, CXCursor c)
{
	return U->C->clang_getCursorKind(c);
}

static char *spelling(struct lift_unit *U, CXCursor c)
{
	return lift_str(U, U->C->clang_getCursorSpelling(c));
}

int lift_nccl_kind(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(nccl_calls) / sizeof(nccl_calls[0]); i++)
		if (strcmp(nccl_calls[i].name, name) == 0)
			return nccl_calls[i].kind;
	return CUCO_LIFT_NCCL_OTHER;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Which header declares the cursor (a declaration). */
int lift_origin_of(struct lift_unit *U, CXCursor decl, struct cuco_lift_pos *pos)
{
	const struct cuco_lift_file *f;
	const char *b, *tk = U->S->toolkit_inc;

	if (lift_pos(U, U->C->clang_getCursorLocation(decl), pos) < 0)
		return CUCO_LIFT_ORIGIN_UNKNOWN;
	f = &U->S->facts->files[pos->file];
	b = base_name(f->path);
	if (f->local)
		return CUCO_LIFT_ORIGIN_LOCAL;
	if (strcmp(b, "nccl.h") == 0)
		return CUCO_LIFT_ORIGIN_NCCL;
	if (strcmp(b, "nccl_device.h") == 0 || strstr(f->path, "/nccl_device/"))
		return CUCO_LIFT_ORIGIN_NCCL_DEVICE;
	if (strcmp(b, "mpi.h") == 0 || strcmp(b, "mpio.h") == 0 || strcmp(b, "mpicxx.h") == 0 ||
	    strstr(f->path, "/openmpi/") || strstr(f->path, "/mpich"))
		return CUCO_LIFT_ORIGIN_MPI;
	if (strcmp(b, "cuda_runtime_api.h") == 0 || strcmp(b, "cuda_runtime.h") == 0 ||
	    strcmp(b, "cuda.h") == 0 || strcmp(b, "cuda_device_runtime_api.h") == 0)
		return CUCO_LIFT_ORIGIN_CUDA;
	if (tk && strncmp(f->path, tk, strlen(tk)) == 0 && f->path[strlen(tk)] == '/')
		return CUCO_LIFT_ORIGIN_TOOLKIT;
	return CUCO_LIFT_ORIGIN_SYSTEM;
}

/* Through implicit conversions, parentheses and casts to the expression underneath. */
CXCursor lift_strip(struct lift_unit *U, CXCursor c)
{
	int guard = 0;

	while (guard++ < 32) {
		enum CXCursorKind k = kind(U, c);
		size_t n, i;
		CXCursor *ch, last;
		int found = 0;

		if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr &&
		    k != CXCursor_CStyleCastExpr && k != CXCursor_CXXStaticCastExpr &&
		    k != CXCursor_CXXFunctionalCastExpr && k != CXCursor_CXXReinterpretCastExpr &&
		    k != CXCursor_CXXConstCastExpr)
			break;
		ch = lift_children(U, c, &n);
		for (i = 0; i < n; i++) {
			enum CXCursorKind ck = kind(U, ch[i]);

			if (ck >= 100 && ck < 200) {
				last = ch[i];
				found = 1;
			}
		}
		free(ch);
		if (!found)
			break;
		c = last;
	}
	return c;
}

/* The text of an argument: as written when a local file has it, else clang's rendering. */
char *lift_expr_text(struct lift_unit *U, CXCursor c, const struct cuco_lift_range *r)
{
	char *t = r->file >= 0 && r->end > r->begin ? lift_range_text(U, r) : NULL;

	if (t)
		return t;
	return lift_str(U, U->C->clang_getCursorPrettyPrinted(c, NULL));
}

/* Through implicit conversions and parentheses only. */
static CXCursor unwrap(struct lift_unit *U, CXCursor e)
{
	while (kind(U, e) == CXCursor_UnexposedExpr || kind(U, e) == CXCursor_ParenExpr) {
		size_t m;
		CXCursor *sub = lift_children(U, e, &m);

		if (m == 0) {
			free(sub);
			break;
		}
		e = sub[0];
		free(sub);
	}
	return e;
}

int lift_is_function(enum CXCursorKind k)
{
	return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod ||
	       k == CXCursor_FunctionTemplate || k == CXCursor_Constructor ||
	       k == CXCursor_Destructor || k == CXCursor_ConversionFunction;
}

/* A type named as a callee: T(x) builds a T. */
int lift_is_type(enum CXCursorKind k)
{
	return k == CXCursor_TypedefDecl || k == CXCursor_TypeAliasDecl ||
	       k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_ClassTemplate ||
	       k == CXCursor_TemplateTypeParameter || k == CXCursor_UnionDecl;
}

/* An overload set's first member, the declaration itself otherwise. */
static CXCursor resolve(struct lift_unit *U, CXCursor ref)
{
	if (!U->C->clang_Cursor_isNull(ref) && kind(U, ref) == CXCursor_OverloadedDeclRef)
		return U->C->clang_getNumOverloadedDecls(ref)
		           ? U->C->clang_getOverloadedDecl(ref, 0)
		           : U->C->clang_getNullCursor();
	return ref;
}

/*
 * The declaration a call's callee expression names, and the cursor of its
 * name. *op is set for an operator call (a + b, *p: libclang lists the
 * operands around the operator), which is no call as written.
 */
CXCursor lift_callee_of(struct lift_unit *U, CXCursor call, CXCursor *ch, size_t n, CXCursor *name,
                        int *op)
{
	CXCursor ref = resolve(U, U->C->clang_getCursorReferenced(call)), e, r;
	size_t i;

	*name = call;
	*op = 0;
	/* an object built: no callee expression, the children are the arguments */
	if (!U->C->clang_Cursor_isNull(ref) && kind(U, ref) == CXCursor_Constructor)
		return ref;
	if (!U->C->clang_Cursor_isNull(ref) && lift_is_function(kind(U, ref))) {
		char *s = spelling(U, ref);

		*op = strncmp(s, "operator", 8) == 0;
		free(s);
	}
	if (n == 0 || *op)
		return ref;
	e = unwrap(U, ch[0]);
	r = resolve(U, U->C->clang_getCursorReferenced(e));
	if (kind(U, e) == CXCursor_DeclRefExpr || kind(U, e) == CXCursor_MemberRefExpr ||
	    kind(U, e) == CXCursor_OverloadedDeclRef)
		*name = e;
	if (!U->C->clang_Cursor_isNull(r) &&
	    (lift_is_function(kind(U, r)) || lift_is_type(kind(U, r))))
		return U->C->clang_Cursor_isNull(ref) ? r : ref;
	/* an unresolved operator in a template: an overload set named operator... */
	for (i = 1; i < n; i++) {
		CXCursor o = unwrap(U, ch[i]);
		char *s;

		if (kind(U, o) != CXCursor_DeclRefExpr && kind(U, o) != CXCursor_OverloadedDeclRef)
			continue;
		o = resolve(U, U->C->clang_getCursorReferenced(o));
		if (U->C->clang_Cursor_isNull(o) || !lift_is_function(kind(U, o)))
			continue;
		s = spelling(U, o);
		*op = strncmp(s, "operator", 8) == 0;
		free(s);
		if (*op)
			return o;
	}
	return U->C->clang_Cursor_isNull(ref) ? r : ref;
}

static int is_std_class(struct lift_unit *U, CXCursor ctor, const char *cls)
{
	CXCursor p = U->C->clang_getCursorSemanticParent(ctor);
	char *q;
	int yes;

	if (U->C->clang_Cursor_isNull(p))
		return 0;
	q = lift_qualified(U, p);
	yes = strncmp(q, "std::", 5) == 0;
	if (yes) {
		const char *last = strrchr(q, ':');

		yes = last && strcmp(last + 1, cls) == 0;
	}
	free(q);
	return yes;
}

static void add_thread(struct lift_unit *U, int kind_, size_t call, size_t entry_arg)
{
	struct cuco_lift_facts *f = U->S->facts;
	struct cuco_lift_thread *t = CUCO_ARRAY_PUSH(f->threads, f->nthreads, f->threads_alloc);

	t->kind = kind_;
	t->call = (int)call;
	t->entry = entry_arg < f->calls[call].nargs
	               ? cuco_xstrdup(f->calls[call].args[entry_arg].text)
	               : NULL;
}

/* A call that starts a thread: std::thread, std::jthread, std::async, pthread_create. */
void lift_thread_of(struct lift_unit *U, size_t ci, CXCursor ref, CXCursor name)
{
	const struct cuco_lift_call *c = &U->S->facts->calls[ci];

	if (c->is_constructor && is_std_class(U, ref, "thread"))
		add_thread(U, CUCO_LIFT_THREAD_STD, ci, 0);
	else if (c->is_constructor && is_std_class(U, ref, "jthread"))
		add_thread(U, CUCO_LIFT_THREAD_JTHREAD, ci, 0);
	else if (strcmp(c->callee, "pthread_create") == 0 && c->origin == CUCO_LIFT_ORIGIN_SYSTEM)
		add_thread(U, CUCO_LIFT_THREAD_PTHREAD, ci, 2);
	else if (strcmp(c->callee, "async") == 0 && c->origin == CUCO_LIFT_ORIGIN_SYSTEM) {
		char *q = lift_qualified(U, ref);
		int policy = c->nargs > 1 && strstr(c->args[0].text, "launch");

		if (strncmp(q, "std::", 5) == 0)
			add_thread(U, CUCO_LIFT_THREAD_ASYNC, ci, policy ? 1 : 0);
		free(q);
	} else if (c->is_method &&
	           (strcmp(c->callee, "emplace_back") == 0 || strcmp(c->callee, "emplace") == 0)) {
		/* a container of std::thread: the object's type names it */
		size_t n;
		CXCursor *ch = lift_children(U, name, &n);

		if (n > 0) {
			char *ty = lift_str(
			    U, U->C->clang_getTypeSpelling(U->C->clang_getCursorType(ch[0])));

			if (strstr(ty, "std::thread") || strstr(ty, "std::jthread"))
				add_thread(U, CUCO_LIFT_THREAD_EMPLACE, ci, 0);
			free(ty);
		}
		free(ch);
	}
}

/* cudaMalloc((p + i), n): the slot p[i] written through pointer arithmetic, as "p[i]" with
 * the slot's type; NULL where the argument is no sum of a pointer and an index. */
static char *dest_of_sum(struct lift_unit *U, CXCursor e, CXType *slot)
{
	struct cuco_lift_range r;
	CXCursor *ch;
	CXType ty = U->C->clang_getCanonicalType(U->C->clang_getCursorType(e));
	char *base, *idx, *out = NULL, *txt;
	size_t n;

	if (kind(U, e) != CXCursor_BinaryOperator || ty.kind != CXType_Pointer)
		return NULL;
	lift_extent(U, e, &r);
	txt = lift_expr_text(U, e, &r);
	ch = lift_children(U, e, &n);
	if (n == 2 && strchr(txt, '+') && !strchr(txt, '-')) {
		CXCursor a = lift_strip(U, ch[0]), b = lift_strip(U, ch[1]);
		CXType ta = U->C->clang_getCanonicalType(U->C->clang_getCursorType(a));
		int ptr_first = ta.kind == CXType_Pointer || ta.kind == CXType_ConstantArray;

		lift_extent(U, ptr_first ? a : b, &r);
		base = lift_expr_text(U, ptr_first ? a : b, &r);
		lift_extent(U, ptr_first ? b : a, &r);
		idx = lift_expr_text(U, ptr_first ? b : a, &r);
		struct cuco_strbuf sb;

		cuco_strbuf_init(&sb, 0);
		cuco_strbuf_addf(&sb, "%s[%s]", base, idx);
		out = cuco_strbuf_detach(&sb, NULL);
		*slot = U->C->clang_getPointeeType(ty);
		free(base);
		free(idx);
	}
	free(ch);
	free(txt);
	return out;
}

/* cudaMalloc(&a, n): the root of the destination, its declared type, what it points to. */
void lift_dest_of(struct lift_unit *U, size_t ci, CXCursor arg0)
{
	CXCursor e = lift_strip(U, arg0), op, ref;
	struct cuco_lift_range r;
	CXType ty, pointee;
	char *amp, *s;
	size_t n;
	CXCursor *ch;

	lift_extent(U, e, &r);
	amp = lift_expr_text(U, e, &r);
	if (kind(U, e) != CXCursor_UnaryOperator || amp[0] != '&') {
		free(amp);
		s = dest_of_sum(U, e, &ty);
		if (!s)
			return;
		U->S->facts->calls[ci].dest_root = s;
		goto typed;
	}
	free(amp);
	ch = lift_children(U, e, &n);
	if (n != 1) {
		free(ch);
		return;
	}
	op = lift_strip(U, ch[0]);
	free(ch);
	lift_extent(U, op, &r);
	U->S->facts->calls[ci].dest_root = lift_expr_text(U, op, &r);
	ref = U->C->clang_getCursorReferenced(op);
	ty = !U->C->clang_Cursor_isNull(ref) &&
	             (kind(U, ref) == CXCursor_VarDecl || kind(U, ref) == CXCursor_ParmDecl ||
	              kind(U, ref) == CXCursor_FieldDecl)
	         ? U->C->clang_getCursorType(ref)
	         : U->C->clang_getCursorType(op);
typed:
	U->S->facts->calls[ci].dest_type = lift_str(U, U->C->clang_getTypeSpelling(ty));
	pointee = U->C->clang_getPointeeType(U->C->clang_getCanonicalType(ty));
	if (pointee.kind == CXType_Invalid)
		return;
	s = lift_str(U, U->C->clang_getTypeSpelling(pointee));
	if (strstr(s, "type-parameter")) {
		/* a template's parameter: its name reads better than clang's canonical one */
		free(s);
		s = lift_str(U, U->C->clang_getTypeSpelling(U->C->clang_getPointeeType(ty)));
	}
	U->S->facts->calls[ci].dest_pointee = s;
}

/* The template a specialization comes from, else the declaration itself: one USR for both. */
CXCursor lift_pattern(struct lift_unit *U, CXCursor ref)
{
	CXCursor t = U->C->clang_getSpecializedCursorTemplate(ref);

	return U->C->clang_Cursor_isNull(t) ? ref : t;
}

/* Whether a declaration is one clang made up at its first use (a builtin): only its name. */
int lift_implicit_decl(struct lift_unit *U, CXCursor decl, const char *name)
{
	struct cuco_lift_range r;

	return lift_extent(U, decl, &r) == 0 && r.end - r.begin == strlen(name);
}

int lift_is_dest_call(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(dest_calls) / sizeof(dest_calls[0]); i++)
		if (strcmp(name, dest_calls[i]) == 0)
			return 1;
	return 0;
}
