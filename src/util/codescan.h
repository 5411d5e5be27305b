/*
 * codescan.h - rules a candidate's source (code a model wrote) must keep
 * before nvcc sees it: no multicast in any spelling (identifiers, string and
 * character literals, adjacent literals joined) and no include of a host
 * file. A small C/C++ lexer: line splices, comments, raw strings, escapes.
 */
#ifndef CUCO_CODESCAN_H
#define CUCO_CODESCAN_H

#include "util/strbuf.h"

/*
 * The number of multicast findings in code: multimem, multicast or nvls
 * (any case) in an identifier, in a string literal (adjacent literals
 * joined, escapes decoded) or in a run of character literals; a call that
 * changes the environment (setenv, putenv, unsetenv, clearenv) or loads a
 * symbol by name (dlopen, dlsym, dlvsym); a driver entry point
 * (cuGetProcAddress*, cudaGetDriverEntryPoint*) fetched by a name that is
 * not a string literal. Each finding appends "line N: what\n" to why (may
 * be NULL). 0: none.
 */
int cuco_codescan_multicast(const char *code, struct cuco_strbuf *why);

/*
 * The number of include findings in code: an #include (or #include_next,
 * #import) of an absolute path, of a path with a ".." part, or of a
 * computed name (a macro); a string literal holding an assembler .include
 * or .incbin directive. Each appends "PATH:N: what\n" to why (PATH names the
 * file in messages; may be NULL). 0: none.
 */
int cuco_codescan_includes(const char *code, const char *path, struct cuco_strbuf *why);

/*
 * The number of timing findings in code: an identifier that sets or resets
 * an L2 persisting-access window or the persisting L2 size
 * (accessPolicyWindow, cudaLimitPersistingL2CacheSize,
 * cudaCtxResetPersistingL2Cache, their driver spellings): lines kept in L2
 * across the harness's runs would time a program on warm data. Each appends
 * "line N: what\n" to why (may be NULL). 0: none.
 */
int cuco_codescan_timing(const char *code, struct cuco_strbuf *why);

#endif
