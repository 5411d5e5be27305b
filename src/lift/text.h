/*
 * text.h - a local source file's text as the user wrote it (private to
 * src/lift/): a tokenizer just good enough to split argument lists and
 * loop headers where clang gives no exact spans, the line table that turns
 * offsets into lines and columns, and the adjusted copy the parse reads
 * (struct cuco_lift_patch) with the map back to the original offsets.
 */
#ifndef CUCO_LIFT_TEXT_H
#define CUCO_LIFT_TEXT_H

#include <stddef.h>

enum lift_tok_kind {
	LIFT_TOK_END = 0,
	LIFT_TOK_IDENT,
	LIFT_TOK_NUMBER,
	LIFT_TOK_STRING, /* string or character literal, raw strings included */
	LIFT_TOK_PUNCT,  /* one character, or "<<<" / ">>>" (len 3) */
};

struct lift_tok {
	int kind;
	size_t start, end; /* byte range */
	int pp;            /* inside a preprocessor directive */
};

/* One replacement in the copy the parse reads: [off, off + old_len) became new_len bytes. */
struct lift_edit {
	size_t off, old_len, new_len;
	const char *text; /* the replacement (a static string) */
};

struct lift_text {
	char *path; /* absolute, resolved */
	char *src;  /* the file as written, NUL-terminated */
	size_t len;
	size_t *lines; /* offset of each line's start */
	size_t nlines;
	struct lift_edit *edits; /* in offset order; none for most files */
	size_t nedits, edits_alloc;
	char *patched; /* src with the edits applied, NULL when there are none */
	size_t patched_len;
};

/* Read path into t (resolved path kept); 0, or -1 with errno. Release with lift_text_release. */
int lift_text_load(struct lift_text *t, const char *path);

void lift_text_release(struct lift_text *t);

/*
 * Find what clang cannot parse as nvcc does in a CUDA unit and build
 * t->patched: `__NVCC__` in #if lines, braced launch configurations.
 */
void lift_text_patch(struct lift_text *t);

/* The original offset of an offset in the patched copy. */
size_t lift_text_unpatch(const struct lift_text *t, size_t off);

/* Line and column (1-based) of an original offset. */
void lift_text_linecol(const struct lift_text *t, size_t off, unsigned *line, unsigned *col);

/* The token at or after pos; kind LIFT_TOK_END at the end of the text. */
struct lift_tok lift_text_tok(const char *s, size_t len, size_t pos);

/* Whether token t's text is word. */
int lift_tok_is(const char *s, struct lift_tok t, const char *word);

/* A span of a split list: [start, end), whitespace and comments trimmed away. */
struct lift_piece {
	size_t start, end;
};

/*
 * Split the bracketed list whose opening token starts at open ('(', '{',
 * '[' or "<<<") at sep (',' or ';') outside nested brackets. Fills up to
 * max pieces and returns how many there are (an empty list has none), and
 * *close is the offset of the closing token; -1 when the list does not
 * close.
 */
int lift_text_split(const char *s, size_t len, size_t open, char sep, struct lift_piece *pieces,
                    int max, size_t *close);

/*
 * The offset of the first token at or after pos that is the punctuation p
 * ("(", "<<<"), skipping one template argument list <...> first when
 * skip_template; (size_t)-1 when another token comes first.
 */
size_t lift_text_expect(const char *s, size_t len, size_t pos, const char *p, int skip_template);

#endif
