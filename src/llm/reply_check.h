/*
 * reply_check.h - a candidate's code read against its directive and for
 * multicast; the lowest file of the reply parser (reply.c calls it).
 */
#ifndef CUCO_LLM_REPLY_CHECK_H
#define CUCO_LLM_REPLY_CHECK_H

#include "program/directive.h"
#include "util/strbuf.h"

/*
 * Append to flags one line per contradiction between d and code: backend
 * "ce" without an async memcpy, "lsa" without peer pointers, "gin" without
 * ncclGin, placement "sequential" creating a stream, "stream_overlap"
 * creating none. Comments and string literals are ignored. Returns the
 * number of contradictions found.
 */
int cuco_llm_directive_check_code(const struct cuco_directive *d, const char *code,
                                  struct cuco_strbuf *flags);

/*
 * 1 when the code uses multicast in any spelling (identifiers, literals
 * joined) or a way around its ban (util/codescan.h); the rejection, naming
 * the lines, in why.
 */
int cuco_reply_uses_multicast(const char *code, struct cuco_strbuf *why);

#endif
