/*
 * blocks.h - EVOLVE-BLOCK markers: the parts of a program a mutation may change.
 *
 * A program marks mutable regions with lines
 *
 *     // EVOLVE-BLOCK-START
 *     ...code an operator may rewrite...
 *     // EVOLVE-BLOCK-END
 *
 * Each marker is alone on its line (leading and trailing blanks and a CRLF
 * ending are fine). Blocks do not nest. Everything outside the blocks,
 * markers included, must survive an edit unchanged. Errors read
 * `file:line:column: EVOLVE-BLOCK-START: message` (or -END).
 */
#ifndef CUCO_BLOCKS_H
#define CUCO_BLOCKS_H

#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

#define CUCO_BLOCK_START "EVOLVE-BLOCK-START"
#define CUCO_BLOCK_END "EVOLVE-BLOCK-END"
#define CUCO_BLOCKS_MAX 64 /* a sensible bound for callers' arrays */

/* One block. Contents are src[begin, end): the lines strictly between the markers. */
struct cuco_block {
	int start_line; /* 1-based line of the START marker */
	int end_line;   /* 1-based line of the END marker */
	size_t begin;   /* byte offset of the first byte after the START line's newline */
	size_t end;     /* byte offset of the first byte of the END line */
};

/*
 * Find the blocks of src (file names it in messages) into blocks[0..*n).
 * Returns CUCO_OK (also with *n == 0), or CUCO_ERR_PARSE for a nested START,
 * an END without START, a START without END, a marker sharing its line with
 * anything else, or more than max blocks.
 */
int cuco_blocks_find(const char *file, const char *src, struct cuco_block *blocks, int max, int *n,
                     struct cuco_err *err);

/*
 * Append to out the text of src with the contents of block block_index
 * (0-based) replaced by new_contents; a newline is added when new_contents
 * is non-empty and does not end with one (CRLF when the START line has
 * one). Returns CUCO_OK, CUCO_ERR_PARSE (src has bad markers),
 * CUCO_ERR_NOT_FOUND (no such block) or CUCO_ERR_INVALID (new_contents
 * contains a marker). out is untouched on failure.
 */
int cuco_blocks_replace(const char *src, int block_index, const char *new_contents,
                        struct cuco_strbuf *out, struct cuco_err *err);

/*
 * Check that new_src is old_src with only block contents changed: every
 * line outside the blocks and every marker byte-identical (CRLF and LF count
 * as the same ending). Returns CUCO_OK, CUCO_ERR_PARSE (bad markers in
 * either text), or CUCO_ERR_INVALID naming the first differing line of
 * new_src (file:line:1) and what was expected there.
 */
int cuco_blocks_check_edit(const char *file, const char *old_src, const char *new_src,
                           struct cuco_err *err);

#endif
