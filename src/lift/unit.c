/*
 * unit.c - one translation unit's files and positions (clang's file
 * locations mapped back to the text as written), its #include lines,
 * #defines and macro expansions in local files, and its diagnostics.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lift/internal.h"
#include "util/array.h"
#include "util/xalloc.h"

char *lift_str(struct lift_unit *U, CXString s)
{
	const char *c = U->C->clang_getCString(s);
	char *r = cuco_xstrdup(c ? c : "");

	U->C->clang_disposeString(s);
	return r;
}

/* The facts' index of a file (added on first sight). */
static int facts_file(struct lift_scan *S, const char *path, int local)
{
	struct cuco_lift_facts *f = S->facts;
	struct cuco_lift_file *e;
	size_t i, rootlen = strlen(S->root);

	for (i = 0; i < f->nfiles; i++)
		if (strcmp(f->files[i].path, path) == 0)
			return (int)i;
	e = CUCO_ARRAY_PUSH(f->files, f->nfiles, f->files_alloc);
	memset(e, 0, sizeof(*e));
	e->path = cuco_xstrdup(path);
	if (strncmp(path, S->root, rootlen) == 0 && path[rootlen] == '/')
		e->rel = cuco_xstrdup(path + rootlen + 1);
	e->local = local;
	e->included_from = -1;
	return (int)(f->nfiles - 1);
}

/* The text of a local file, read on first sight; NULL when it cannot be read. */
static struct lift_text *local_text(struct lift_scan *S, const char *path)
{
	struct lift_text *t;
	size_t i;

	for (i = 0; i < S->ntexts; i++)
		if (strcmp(S->texts[i]->path, path) == 0)
			return S->texts[i];
	t = cuco_xcalloc(1, sizeof(*t));
	if (lift_text_load(t, path) < 0) {
		free(t);
		return NULL;
	}
	lift_text_patch(t);
	*CUCO_ARRAY_PUSH(S->texts, S->ntexts, S->texts_alloc) = t;
	return t;
}

static size_t hash_ptr(const void *p)
{
	uintptr_t x = (uintptr_t)p;

	x ^= x >> 17;
	x *= (uintptr_t)0xed5ad4bbu;
	x ^= x >> 11;
	return (size_t)x;
}

static struct lift_unit_file *slot(struct lift_unit *U, CXFile f)
{
	size_t i = hash_ptr(f) & (U->files_cap - 1);

	while (U->files[i].cx && U->files[i].cx != f)
		i = (i + 1) & (U->files_cap - 1);
	return &U->files[i];
}

static void grow_files(struct lift_unit *U)
{
	struct lift_unit_file *old = U->files;
	size_t i, cap = U->files_cap;

	U->files_cap = cap ? cap * 2 : 256;
	U->files = cuco_xcalloc(U->files_cap, sizeof(U->files[0]));
	for (i = 0; i < cap; i++)
		if (old[i].cx)
			*slot(U, old[i].cx) = old[i];
	free(old);
}

static int is_system(struct lift_unit *U, CXFile f)
{
	CXSourceLocation loc = U->C->clang_getLocationForOffset(U->tu, f, 0);

	return U->C->clang_Location_isInSystemHeader(loc) != 0;
}

struct lift_unit_file *lift_unit_file(struct lift_unit *U, CXFile f)
{
	struct lift_scan *S = U->S;
	struct lift_unit_file *e;
	char real[PATH_MAX], *name;
	size_t rootlen = strlen(S->root), i;
	int local, index;

	if (!f)
		return NULL;
	if (U->files_used * 2 >= U->files_cap)
		grow_files(U);
	e = slot(U, f);
	if (e->cx)
		return e;
	name = lift_str(U, U->C->clang_getFileName(f));
	if (!realpath(name, real))
		snprintf(real, sizeof(real), "%s", name);
	free(name);
	local = strncmp(real, S->root, rootlen) == 0 && real[rootlen] == '/' && !is_system(U, f);
	index = facts_file(S, real, local);
	/* interning the includer below may grow the table: fill the slot first */
	e->cx = f;
	e->index = index;
	e->text = local ? local_text(S, real) : NULL;
	while (S->nfile_text <= (size_t)index)
		*CUCO_ARRAY_PUSH(S->file_text, S->nfile_text, S->file_text_alloc) = NULL;
	if (e->text)
		S->file_text[index] = e->text;
	e->patched = U->cuda && e->text && e->text->patched;
	U->files_used++;
	if (e->patched && !S->facts->files[index].patched) {
		struct cuco_lift_facts *fa = S->facts;

		fa->files[index].patched = 1;
		for (i = 0; i < e->text->nedits; i++) {
			const struct lift_edit *ed = &e->text->edits[i];
			struct cuco_lift_patch *p =
			    CUCO_ARRAY_PUSH(fa->patches, fa->npatches, fa->patches_alloc);

			lift_range_at(U, index, ed->off, ed->off + ed->old_len, &p->extent);
			p->replacement = cuco_xstrndup(ed->text, ed->new_len);
		}
		e = slot(U, f);
	}
	if (S->facts->files[index].included_from >= 0 || S->facts->files[index].parsed)
		return slot(U, f);
	for (i = 0; i < U->nincs; i++) {
		if (U->incs[i].file == f && U->incs[i].includer) {
			struct lift_unit_file *inc = lift_unit_file(U, U->incs[i].includer);

			if (inc && inc->index != index) {
				S->facts->files[index].included_from = inc->index;
				S->facts->files[index].include_line = U->incs[i].line;
			}
			break;
		}
	}
	return slot(U, f);
}

const struct lift_text *lift_text(struct lift_unit *U, int file)
{
	struct lift_scan *S = U->S;

	if (file < 0 || (size_t)file >= S->nfile_text)
		return NULL;
	return S->file_text[file];
}

int lift_adjusted_at(struct lift_unit *U, int file, size_t offset)
{
	const struct lift_text *t = lift_text(U, file);
	size_t i;

	if (!U->cuda || !t || !t->patched)
		return 0;
	for (i = 0; i < t->nedits; i++)
		if (t->edits[i].off == offset)
			return 1;
	return 0;
}

int lift_is_local(struct lift_unit *U, const struct cuco_lift_pos *p)
{
	return p->file >= 0 && U->S->facts->files[p->file].local;
}

int lift_pos(struct lift_unit *U, CXSourceLocation loc, struct cuco_lift_pos *out)
{
	CXFile f = NULL;
	unsigned line = 0, col = 0, off = 0;
	struct lift_unit_file *uf;

	memset(out, 0, sizeof(*out));
	out->file = -1;
	U->C->clang_getFileLocation(loc, &f, &line, &col, &off);
	uf = lift_unit_file(U, f);
	if (!uf)
		return -1;
	out->file = uf->index;
	if (uf->text) {
		size_t o = uf->patched ? lift_text_unpatch(uf->text, off) : off;

		out->offset = (unsigned)o;
		lift_text_linecol(uf->text, o, &out->line, &out->column);
	} else {
		out->offset = off;
		out->line = line;
		out->column = col;
	}
	return 0;
}

void lift_range_at(struct lift_unit *U, int file, size_t begin, size_t end,
                   struct cuco_lift_range *out)
{
	const struct lift_text *t = lift_text(U, file);

	memset(out, 0, sizeof(*out));
	out->file = -1;
	if (!t || begin > end || end > t->len)
		return;
	out->file = file;
	out->begin = (unsigned)begin;
	out->end = (unsigned)end;
	lift_text_linecol(t, begin, &out->line, &out->column);
	lift_text_linecol(t, end, &out->end_line, &out->end_column);
}

int lift_extent(struct lift_unit *U, CXCursor c, struct cuco_lift_range *out)
{
	CXSourceRange r = U->C->clang_getCursorExtent(c);
	struct cuco_lift_pos b, e;

	memset(out, 0, sizeof(*out));
	out->file = -1;
	if (lift_pos(U, U->C->clang_getRangeStart(r), &b) < 0 ||
	    lift_pos(U, U->C->clang_getRangeEnd(r), &e) < 0 || b.file != e.file ||
	    e.offset < b.offset)
		return -1;
	out->file = b.file;
	out->begin = b.offset;
	out->end = e.offset;
	out->line = b.line;
	out->column = b.column;
	out->end_line = e.line;
	out->end_column = e.column;
	return 0;
}

char *lift_range_text(struct lift_unit *U, const struct cuco_lift_range *r)
{
	const struct lift_text *t = lift_text(U, r->file);

	if (!t || r->end < r->begin || r->end > t->len)
		return NULL;
	return cuco_xstrndup(t->src + r->begin, r->end - r->begin);
}

/* The first expansion of file at or after offset begin, in U->exps' order. */
static size_t lower_bound(struct lift_unit *U, int file, unsigned begin)
{
	size_t lo = 0, hi = U->nexps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lift_expansion *x = &U->exps[mid];

		if (x->file < file || (x->file == file && x->begin < begin))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct lift_expansion *lift_expansion_at(struct lift_unit *U, const struct cuco_lift_pos *p)
{
	size_t i = lower_bound(U, p->file, p->offset);

	if (i < U->nexps && U->exps[i].file == p->file && U->exps[i].begin == p->offset)
		return &U->exps[i];
	return NULL;
}

const struct lift_expansion *lift_expansion_over(struct lift_unit *U, const struct cuco_lift_pos *p)
{
	size_t i = lower_bound(U, p->file, p->offset + 1);

	/* the innermost: the latest start at or before the position that still covers it */
	while (i-- > 0 && U->exps[i].file == p->file)
		if (U->exps[i].begin <= p->offset && p->offset < U->exps[i].end)
			return &U->exps[i];
	return NULL;
}

static void inclusion(CXFile included, CXSourceLocation *stack, unsigned len, CXClientData data)
{
	struct lift_unit *U = data;
	struct lift_inclusion *in;
	CXFile f = NULL;
	unsigned line = 0;

	if (!len)
		return;
	U->C->clang_getFileLocation(stack[0], &f, &line, NULL, NULL);
	in = CUCO_ARRAY_PUSH(U->incs, U->nincs, U->incs_alloc);
	in->file = included;
	in->includer = f;
	in->line = line;
}

static int exp_cmp(const void *a, const void *b)
{
	const struct lift_expansion *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static void add_include(struct lift_unit *U, CXCursor c, const struct cuco_lift_range *ext)
{
	struct cuco_lift_facts *f = U->S->facts;
	const struct lift_text *t = lift_text(U, ext->file);
	struct cuco_lift_include *in;
	size_t i, start, end, q;

	for (i = 0; i < f->nincludes; i++)
		if (f->includes[i].file == ext->file && f->includes[i].line == ext->line)
			return;
	if (!t)
		return;
	start = t->lines[ext->line - 1];
	for (end = start; end < t->len && t->src[end] != '\n'; end++)
		;
	if (end > start && t->src[end - 1] == '\r')
		end--;
	in = CUCO_ARRAY_PUSH(f->includes, f->nincludes, f->includes_alloc);
	memset(in, 0, sizeof(*in));
	in->file = ext->file;
	in->line = ext->line;
	in->name = lift_str(U, U->C->clang_getCursorSpelling(c));
	for (q = ext->begin; q < end && t->src[q] != '<' && t->src[q] != '"'; q++)
		;
	in->angled = q < end && t->src[q] == '<';
	{
		struct lift_unit_file *uf = lift_unit_file(U, U->C->clang_getIncludedFile(c));

		in->resolved = uf ? uf->index : -1;
	}
	lift_range_at(U, ext->file, start, end, &in->extent);
}

static void add_macro(struct lift_unit *U, CXCursor c, const struct cuco_lift_range *ext)
{
	struct cuco_lift_facts *f = U->S->facts;
	const struct lift_text *t = lift_text(U, ext->file);
	struct cuco_lift_macro *m;
	size_t i;

	for (i = 0; i < f->nmacros; i++)
		if (f->macros[i].extent.file == ext->file &&
		    f->macros[i].extent.begin == ext->begin)
			return;
	m = CUCO_ARRAY_PUSH(f->macros, f->nmacros, f->macros_alloc);
	memset(m, 0, sizeof(*m));
	m->name = lift_str(U, U->C->clang_getCursorSpelling(c));
	m->extent = *ext;
	i = ext->begin + strlen(m->name);
	m->function_like = t && i < t->len && t->src[i] == '(';
}

static void add_expansion(struct lift_unit *U, CXCursor c, const struct cuco_lift_range *ext)
{
	struct lift_expansion *x = CUCO_ARRAY_PUSH(U->exps, U->nexps, U->exps_alloc);
	CXCursor def = U->C->clang_getCursorReferenced(c);

	memset(x, 0, sizeof(*x));
	x->file = ext->file;
	x->begin = ext->begin;
	x->end = ext->end;
	x->name = lift_str(U, U->C->clang_getCursorSpelling(c));
	x->definition.file = -1;
	x->def_extent.file = -1;
	if (!U->C->clang_Cursor_isNull(def)) {
		lift_pos(U, U->C->clang_getCursorLocation(def), &x->definition);
		lift_extent(U, def, &x->def_extent);
	}
}

static enum CXChildVisitResult pp_visit(CXCursor c, CXCursor parent, CXClientData data)
{
	struct lift_unit *U = data;
	enum CXCursorKind k = U->C->clang_getCursorKind(c);
	struct cuco_lift_range ext;

	(void)parent;
	if (k != CXCursor_InclusionDirective && k != CXCursor_MacroDefinition &&
	    k != CXCursor_MacroExpansion)
		return CXChildVisit_Continue;
	if (lift_extent(U, c, &ext) < 0 || !U->S->facts->files[ext.file].local)
		return CXChildVisit_Continue;
	if (k == CXCursor_InclusionDirective)
		add_include(U, c, &ext);
	else if (k == CXCursor_MacroDefinition)
		add_macro(U, c, &ext);
	else
		add_expansion(U, c, &ext);
	return CXChildVisit_Continue;
}

void lift_unit_preprocessor(struct lift_unit *U)
{
	U->C->clang_getInclusions(U->tu, inclusion, U);
	U->C->clang_visitChildren(U->C->clang_getTranslationUnitCursor(U->tu), pp_visit, U);
	if (U->nexps)
		qsort(U->exps, U->nexps, sizeof(U->exps[0]), exp_cmp);
}

void lift_unit_diagnostics(struct lift_unit *U)
{
	struct cuco_lift_facts *f = U->S->facts;
	unsigned i, n = U->C->clang_getNumDiagnostics(U->tu);

	for (i = 0; i < n; i++) {
		CXDiagnostic d = U->C->clang_getDiagnostic(U->tu, i);
		enum CXDiagnosticSeverity sev = U->C->clang_getDiagnosticSeverity(d);
		struct cuco_lift_diag g, *e;
		size_t j;
		int dup = 0;

		if (sev < CXDiagnostic_Warning) {
			U->C->clang_disposeDiagnostic(d);
			continue;
		}
		memset(&g, 0, sizeof(g));
		g.severity = sev == CXDiagnostic_Warning ? CUCO_LIFT_WARNING
		             : sev == CXDiagnostic_Error ? CUCO_LIFT_ERROR
		                                         : CUCO_LIFT_FATAL;
		lift_pos(U, U->C->clang_getDiagnosticLocation(d), &g.pos);
		g.message = lift_str(U, U->C->clang_getDiagnosticSpelling(d));
		g.option = lift_str(U, U->C->clang_getDiagnosticOption(d, NULL));
		g.unit = U->unit;
		U->C->clang_disposeDiagnostic(d);
		for (j = 0; j < f->ndiags && !dup; j++)
			dup = f->diags[j].pos.file == g.pos.file &&
			      f->diags[j].pos.offset == g.pos.offset &&
			      strcmp(f->diags[j].message, g.message) == 0;
		if (dup) {
			free(g.message);
			free(g.option);
			continue;
		}
		if (!*g.option) {
			free(g.option);
			g.option = NULL;
		}
		e = CUCO_ARRAY_PUSH(f->diags, f->ndiags, f->diags_alloc);
		*e = g;
	}
}
