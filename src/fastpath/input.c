/*
 * input.c - the fast path's front door: what `cuco fastpath ARG` was given (a
 * workload or a source file), and whether a source file is a cuco program the
 * fast path transforms or an ordinary program that `cuco init --from` makes a
 * workload package first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fastpath/fastpath.h"
#include "fastpath/lex.h"
#include "util/strbuf.h"

/* Source files by their name; anything else with a '/' that is a regular file is sniffed. */
static const char *const source_exts[] = {".cu", ".cuh", ".cpp", ".cc", ".cxx",
                                          ".c",  ".h",   ".hpp", ".hh", ".hxx"};

#define CALLS_LISTED 8 /* NCCL calls an ordinary program's message names one by one */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcasecmp(s + n - k, suffix) == 0;
}

int cuco_fastpath_input_kind(const char *arg)
{
	struct stat st;
	int exists = stat(arg, &st) == 0;

	if ((exists && S_ISDIR(st.st_mode)) || ends_with(arg, ".json"))
		return CUCO_FASTPATH_INPUT_WORKLOAD;
	for (size_t k = 0; k < sizeof(source_exts) / sizeof(source_exts[0]); k++)
		if (ends_with(arg, source_exts[k]))
			return CUCO_FASTPATH_INPUT_SOURCE;
	if (strchr(arg, '/') != NULL && exists && S_ISREG(st.st_mode))
		return CUCO_FASTPATH_INPUT_SOURCE;
	return CUCO_FASTPATH_INPUT_WORKLOAD;
}

/* Offset of the first byte that text never holds (NUL, or most control bytes), or -1. */
static long binary_at(const char *src, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c == 0 || (c < 0x20 && !strchr("\t\n\v\f\r\x1b", c)) || c == 0x7f)
			return (long)i;
	}
	return -1;
}

/* Whether token i is a call of an NCCL function (not its declaration, not a member). */
static int nccl_call_at(const struct fp *fp, int i)
{
	const struct tok *t = &fp->toks.v[i];
	if (t->type != TOK_IDENT || t->end - t->start < 5 ||
	    memcmp(fp->src + t->start, "nccl", 4) != 0 || !cuco_fastpath_tok_punct(fp, i + 1, '('))
		return 0;
	if (cuco_fastpath_tok_punct(fp, i - 1, '.') || cuco_fastpath_tok_punct(fp, i - 1, '>'))
		return 0;
	/* `ncclResult_t ncclAllReduce(` declares it; `return ncclAllReduce(` calls it */
	return i == 0 || fp->toks.v[i - 1].type != TOK_IDENT ||
	       cuco_fastpath_tok_is(fp, i - 1, "return");
}

int cuco_fastpath_check_source(const char *path, const char *src, size_t len, struct cuco_err *err)
{
	struct fp fp;
	struct cuco_strbuf calls = CUCO_STRBUF_INIT;
	int rc = CUCO_OK, open, close, lparen, ncalls = 0;
	long bin = binary_at(src, len);
	size_t k = 0;

	memset(&fp, 0, sizeof(fp));
	while (k < len && strchr(" \t\n\v\f\r", src[k]) != NULL)
		k++;
	if (k == len) {
		rc = cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
		                  "%s is empty: there is no program in it to transform", path);
		goto out;
	}
	if (bin >= 0) {
		rc = cuco_err_set(
		    err, CUCO_ERR_PARSE,
		    "%s is not C, C++ or CUDA source: it holds binary data (byte 0x%02x "
		    "at offset %ld); cuco fastpath takes a program's source, or a "
		    "workload (a name, a package directory or a manifest .json)",
		    path, (unsigned char)src[bin], bin);
		goto out;
	}
	fp.file = path;
	fp.src = src;
	fp.len = len;
	fp.err = err;
	rc = cuco_fastpath_tokenize(&fp);
	if (rc != CUCO_OK) {
		cuco_err_prefix(err, "%s cannot be read as C, C++ or CUDA source: ", path);
		goto out;
	}
	if (cuco_fastpath_find_definition(&fp, "cuco_program_run", &open, &close, &lparen))
		goto out; /* a cuco program: the transformation takes it from here */
	for (int i = 0; i < fp.toks.n; i++) {
		if (!nccl_call_at(&fp, i))
			continue;
		if (ncalls++ < CALLS_LISTED) {
			char name[48];
			cuco_fastpath_tok_text(&fp, i, name, sizeof(name));
			cuco_strbuf_addf(&calls, "%s%s:%d (%s)", ncalls > 1 ? ", " : "", path,
			                 fp.toks.v[i].line, name);
		}
	}
	if (ncalls > CALLS_LISTED)
		cuco_strbuf_addf(&calls, " and %d more", ncalls - CALLS_LISTED);
	if (ncalls == 0)
		rc = cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
		                  "%s is an ordinary program, not a cuco program (it defines no "
		                  "cuco_program_run), and no NCCL call was found in it. Make it a "
		                  "workload package first: cuco init NAME --from %s (then cuco "
		                  "fastpath ./NAME)",
		                  path, path);
	else
		rc = cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
		                  "%s is an ordinary program, not a cuco program (it defines no "
		                  "cuco_program_run): %d NCCL call%s found at %s. Make it a "
		                  "workload package first: cuco init NAME --from %s (then cuco "
		                  "fastpath ./NAME)",
		                  path, ncalls, ncalls == 1 ? "" : "s", calls.buf, path);
out:
	free(fp.toks.v);
	cuco_strbuf_release(&calls);
	return rc;
}
