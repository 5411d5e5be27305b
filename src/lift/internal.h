/*
 * internal.h - the state of one scan and of the translation unit being
 * walked, shared by the files of src/lift/ and private to them: scan.c
 * (options, units, the merge), unit.c (files, positions, includes, macros,
 * diagnostics), walk.c (functions, statements), calls.c (calls, launches),
 * callee.c (what a call calls, threads).
 */
#ifndef CUCO_LIFT_INTERNAL_H
#define CUCO_LIFT_INTERNAL_H

#include <stddef.h>

#include "lift/clang.h"
#include "lift/facts.h"
#include "lift/scan.h"
#include "lift/text.h"

/* One scan: the options, the facts it fills and the local files' text. */
struct lift_scan {
	const struct cuco_lift_clang *C;
	const struct cuco_lift_scan_opts *opts;
	struct cuco_lift_facts *facts;
	char *root;               /* resolved */
	char *toolkit_inc;        /* the toolkit's include folder, resolved; NULL when absent */
	struct lift_text **texts; /* every local source and header read so far (each allocated) */
	size_t ntexts, texts_alloc;
	struct lift_text **file_text; /* by file index: the text of a local file, else NULL */
	size_t nfile_text, file_text_alloc;
	int *walked; /* by file index: the unit that walked its declarations, -1 for none */
	size_t nwalked, walked_alloc;
};

/* A file of the unit: clang's handle, its index in facts, its text when local. */
struct lift_unit_file {
	CXFile cx;
	int index;
	struct lift_text *text; /* NULL for a file outside the root */
	int patched;            /* the unit reads text->patched */
};

/* A macro expansion in a local file. */
struct lift_expansion {
	int file;
	unsigned begin, end; /* original offsets of NAME(args) */
	char *name;
	struct cuco_lift_pos definition;
	struct cuco_lift_range def_extent; /* the #define's name and body */
};

/* Where a file was included from, as clang_getInclusions tells. */
struct lift_inclusion {
	CXFile file, includer;
	unsigned line;
};

/* Statements that break or continue can leave, innermost last. */
struct lift_exit {
	int stmt;
	int is_loop; /* continue's target too; 0 for switch, -1 for a lambda (a wall) */
};

/* One translation unit being walked. */
struct lift_unit {
	struct lift_scan *S;
	const struct cuco_lift_clang *C;
	CXTranslationUnit tu;
	int unit; /* file index of its main file */
	int cuda;
	struct lift_unit_file *files; /* open-addressed on cx */
	size_t files_cap, files_used;
	struct lift_expansion *exps; /* in (file, begin) order */
	size_t nexps, exps_alloc;
	struct lift_inclusion *incs;
	size_t nincs, incs_alloc;
	/* the walk */
	int function; /* enclosing function, -1 outside */
	int stmt;     /* innermost statement, -1 outside */
	int loop;     /* innermost loop */
	struct lift_exit *exits;
	size_t nexits, exits_alloc;
};

/* unit.c */

/* The unit's record of a file (interned into facts on first sight); NULL for no file. */
struct lift_unit_file *lift_unit_file(struct lift_unit *U, CXFile f);

/* Where loc's text is in a file (a macro argument's spelling, a macro body's expansion site). */
int lift_pos(struct lift_unit *U, CXSourceLocation loc, struct cuco_lift_pos *out);

/* The file span of a cursor; file -1 when clang gives none or its ends lie in two files. */
int lift_extent(struct lift_unit *U, CXCursor c, struct cuco_lift_range *out);

/* A range of one file from original offsets (a local file's). */
void lift_range_at(struct lift_unit *U, int file, size_t begin, size_t end,
                   struct cuco_lift_range *out);

/* A local file's text (NULL for any other file). */
const struct lift_text *lift_text(struct lift_unit *U, int file);

/* The text of a span of a local file, a new string; NULL when it has no text. */
char *lift_range_text(struct lift_unit *U, const struct cuco_lift_range *r);

/* Whether the parse read an adjustment (struct cuco_lift_patch) starting at offset. */
int lift_adjusted_at(struct lift_unit *U, int file, size_t offset);

/* Whether a position is in a local file. */
int lift_is_local(struct lift_unit *U, const struct cuco_lift_pos *p);

/* The macro expansion that starts at a position, NULL if none. */
const struct lift_expansion *lift_expansion_at(struct lift_unit *U, const struct cuco_lift_pos *p);

/* The macro expansion whose span holds a position, NULL if none. */
const struct lift_expansion *lift_expansion_over(struct lift_unit *U,
                                                 const struct cuco_lift_pos *p);

/* clang's string as a new string (disposed). */
char *lift_str(struct lift_unit *U, CXString s);

/* The files, includes, macros and diagnostics of the unit. */
void lift_unit_preprocessor(struct lift_unit *U);
void lift_unit_diagnostics(struct lift_unit *U);

/* walk.c */

/* Walk the unit's declarations in local files: functions, their statements, their calls. */
void lift_walk_unit(struct lift_unit *U);

/* Record a statement at c (a child of a statement) and walk under it. */
void lift_walk_stmt(struct lift_unit *U, CXCursor c);

/* The children of a cursor, in order, into a new array (free it). */
CXCursor *lift_children(struct lift_unit *U, CXCursor c, size_t *n);

/* "ns::Class::name": a declaration's name with its namespaces and classes (a new string). */
char *lift_qualified(struct lift_unit *U, CXCursor c);

/* Record a statement whose record the walk starts; returns its index. */
int lift_stmt_push(struct lift_unit *U, int kind, CXCursor c);

/* callee.c */

/* The kind of NCCL call a function of nccl.h makes (CUCO_LIFT_NCCL_OTHER when not listed). */
int lift_nccl_kind(const char *name);

/* Which header declares decl (enum cuco_lift_origin); its position in *pos. */
int lift_origin_of(struct lift_unit *U, CXCursor decl, struct cuco_lift_pos *pos);

/* Through implicit conversions, parentheses and casts to the expression underneath. */
CXCursor lift_strip(struct lift_unit *U, CXCursor c);

/* An expression's text: as written when a local file has it, else clang's rendering. */
char *lift_expr_text(struct lift_unit *U, CXCursor c, const struct cuco_lift_range *r);

/* Whether a cursor kind declares a function (of any sort), or a type (T(x) builds one). */
int lift_is_function(enum CXCursorKind k);
int lift_is_type(enum CXCursorKind k);

/*
 * The declaration a call calls and the cursor of its name (ch: the call's
 * children); *op set for an operator call. A null cursor when unknown.
 */
CXCursor lift_callee_of(struct lift_unit *U, CXCursor call, CXCursor *ch, size_t n, CXCursor *name,
                        int *op);

/* The template a specialization comes from, else ref itself. */
CXCursor lift_pattern(struct lift_unit *U, CXCursor ref);

/* Whether decl is a builtin that clang declared at its first use. */
int lift_implicit_decl(struct lift_unit *U, CXCursor decl, const char *name);

/* Whether name is an allocator whose first argument receives the pointer. */
int lift_is_dest_call(const char *name);

/* Fill calls[ci]'s destination from its first argument (&a, (void **)&buf[i]). */
void lift_dest_of(struct lift_unit *U, size_t ci, CXCursor arg0);

/* Record a thread when calls[ci] starts one (ref: its callee, name: its name's cursor). */
void lift_thread_of(struct lift_unit *U, size_t ci, CXCursor ref, CXCursor name);

/* calls.c */

/* Walk an expression: record its calls, launches, threads and lambdas. */
void lift_walk_expr(struct lift_unit *U, CXCursor c);

/* After every unit: calls and launches to local functions, the undefined ones. */
void lift_resolve(struct cuco_lift_facts *f);

#endif
