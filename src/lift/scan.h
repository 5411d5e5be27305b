/*
 * scan.h - the lift's front end: a user's C, C++ and CUDA sources parsed by
 * libclang (loaded at run time, so that cuco runs where libclang is not
 * installed) into struct cuco_lift_facts (facts.h).
 */
#ifndef CUCO_LIFT_SCAN_H
#define CUCO_LIFT_SCAN_H

#include <stddef.h>

#include "lift/facts.h"
#include "util/error.h"

/* What to parse and how. The caller owns every string and array. */
struct cuco_lift_scan_opts {
	/*
	 * The program's root folder: files under it (and not system headers)
	 * are local. NULL: the folder of the first source.
	 */
	const char *root;
	/*
	 * Sources to parse, each a translation unit (relative paths against the
	 * working directory). None: root/compile_commands.json's files when it
	 * exists, else every .c, .cc, .cpp, .cxx and .cu file under root.
	 */
	const char *const *sources;
	size_t nsources;
	const char *const *include_dirs; /* -I, after the overlay */
	size_t ninclude_dirs;
	const char *const *defines; /* "NAME" or "NAME=VALUE" */
	size_t ndefines;
	/* searched before every other include folder (the lift's own mpi.h); NULL: none */
	const char *overlay_dir;
	/* the CUDA toolkit; NULL: $CUDA_HOME, else /usr/local/cuda */
	const char *cuda_path;
	/* ignore root/compile_commands.json even when it exists */
	int no_compile_commands;
};

/*
 * Parse the program opts names and add what it holds to facts (initialised
 * by the caller with cuco_lift_facts_init; on error it may hold part of the
 * program). A program that does not compile is not an error: its
 * diagnostics are facts (cuco_lift_first_error). Returns CUCO_OK;
 * CUCO_ERR_UNSUPPORTED when libclang cannot be loaded (the message says what
 * to install); CUCO_ERR_IO when a source or the root cannot be read;
 * CUCO_ERR_NOT_FOUND when there is nothing to parse; CUCO_ERR_PARSE when
 * compile_commands.json is unreadable; CUCO_ERR_NOT_FOUND when cuco's
 * share/clang folder is missing and a CUDA source needs it.
 */
int cuco_lift_scan(const struct cuco_lift_scan_opts *opts, struct cuco_lift_facts *facts,
                   struct cuco_err *err);

/*
 * Load libclang if it is not loaded yet: $CUCO_LIBCLANG when set (and only
 * it), else the newest libclang-{20..14}.so.1 or libclang.so.1 in the
 * usual Debian folders. CUCO_OK, or CUCO_ERR_UNSUPPORTED with a one-line
 * message that says what to install. Safe to call from several threads.
 */
int cuco_lift_clang_load(struct cuco_err *err);

/* The loaded libclang's version ("Debian clang version 16.0.6 ..."), or NULL before a load. */
const char *cuco_lift_clang_version(void);

#endif
