/*
 * lex.h - the fast path's view of a source file (private to src/fastpath/):
 * tokens just good enough to skip comments, literals and preprocessor lines,
 * calls with balanced arguments, and the transformation's state.
 */
#ifndef CUCO_FASTPATH_LEX_H
#define CUCO_FASTPATH_LEX_H

#include <stddef.h>

#include "fastpath/fastpath.h"
#include "util/strbuf.h"

enum tok_type {
	TOK_IDENT = 1,
	TOK_PUNCT,  /* one character */
	TOK_STRING, /* string or character literal, raw strings included */
	TOK_NUMBER,
};

struct tok {
	int type;
	int pp;            /* inside a preprocessor directive */
	size_t start, end; /* byte range in the source */
	int line, col;     /* 1-based */
};

struct toks {
	struct tok *v;
	int n;
	size_t alloc;
	size_t first_code; /* offset of the line start of the first token outside a directive */
};

/* One source edit: replace [off, off+len) with text. */
struct edit {
	size_t off, len;
	char *text;
};

struct edits {
	struct edit *v;
	int n;
	size_t alloc;
};

/* A call `name(args)`: token indices of the name, '(' and ')'. */
#define MAX_ARGS 12
struct call {
	int name, open, close;
	int nargs;
	size_t arg_start[MAX_ARGS], arg_end[MAX_ARGS]; /* trimmed byte ranges */
};

/* The transformation under way. */
struct fp {
	const char *file;
	const char *src;
	size_t len;
	const struct cuco_fastpath_opts *opts;
	struct cuco_err *err;
	struct toks toks;
	struct edits edits;
	struct cuco_fastpath_report *report;
	int run_body_open, run_body_close; /* token indices of cuco_program_run's { }; -1: none */
	char tensors_name[64], stream_name[64]; /* cuco_program_run's parameters */
	const char *tensors, *stream; /* what the current site's launcher is given (site_names) */
	int *hint_of;                 /* per token: index in opts->hints naming it, or -1 */
	int next_id;
	struct cuco_strbuf gen; /* generated code of the EVOLVE-BLOCK, after the common part */
};

/* The dtype and op a call site names (NULL when held in a variable): report and templates. */
struct site_args {
	const char *dtype, *op;
};

/* Tokenise fp->src into fp->toks. Comments vanish; line splices are taken as whitespace. */
int cuco_fastpath_tokenize(struct fp *fp);

int cuco_fastpath_tok_is(const struct fp *fp, int i, const char *text);

int cuco_fastpath_tok_punct(const struct fp *fp, int i, char c);

/* Copy token i's text into buf (truncated). */
void cuco_fastpath_tok_text(const struct fp *fp, int i, char *buf, size_t size);

/* Index of the bracket matching the opening one at i, or -1. */
int cuco_fastpath_match_bracket(const struct fp *fp, int i);

/* Parse the argument list of the call whose name is token i (followed by '('). */
int cuco_fastpath_parse_call(struct fp *fp, int i, struct call *call);

/* Whether argument a of call is exactly one identifier; copies it into buf if so. */
int cuco_fastpath_arg_ident(const struct fp *fp, const struct call *call, int a, char *buf,
                            size_t size);

/*
 * Find the definition of function name (outside directives): its '(' token in *lparen, its
 * body's braces in *open and *close. Returns 1 when found, else 0.
 */
int cuco_fastpath_find_definition(const struct fp *fp, const char *name, int *open, int *close,
                                  int *lparen);

/* Append s to sb escaped for the inside of a C string literal. */
void cuco_fastpath_add_c_escaped(struct cuco_strbuf *sb, const char *s);

/*
 * Expand template tpl (one site at token t, call its callee; a its literal dtype and op, or
 * NULL; t and call NULL for the frame's templates) into fp->gen. CUCO_ERR_IO for a template
 * that cannot be read, CUCO_ERR_PARSE for an unknown placeholder, CUCO_ERR_UNSUPPORTED for a
 * template the nvshmem backend lacks.
 */
int cuco_fastpath_emit(struct fp *fp, const char *tpl, int id, const struct tok *t,
                       const char *call, const struct site_args *a);

/* Append the seed to out: directive, the program with fp->edits applied, the EVOLVE-BLOCK
 * (common frame, send/recv machinery, fp->gen) and the ABI wrappers. */
int cuco_fastpath_assemble(struct fp *fp, struct cuco_strbuf *out);

#endif
