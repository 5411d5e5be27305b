/*
 * hostile.h - what the hostile tests share (header-only, include after
 * cmocka.h): a temporary folder with cuco's state in it, and a stand-in
 * harness, a shell script with exactly a candidate's privileges (cuco starts
 * it as it starts cuco-harness), run through cuco_run_programs on two
 * programs, "baseline" and "cand". Each test is an attack that must fail.
 */
#ifndef CUCO_TEST_HOSTILE_H
#define CUCO_TEST_HOSTILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "util/paths.h"
#include "util/proc.h"

static char hostile_dir[64];

/* mkdtemp'd folder under /tmp with the state in it (CUCO_STATE), this process not dumpable as
 * cuco is; 0 or -1. */
static inline int hostile_setup(const char *name)
{
	char p[160];

	cuco_proc_protect_self(); /* as cuco does when it starts */
	snprintf(hostile_dir, sizeof(hostile_dir), "/tmp/cuco-hostile-%s-XXXXXX", name);
	if (!mkdtemp(hostile_dir))
		return -1;
	snprintf(p, sizeof(p), "%s/state", hostile_dir);
	setenv("CUCO_STATE", p, 1);
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	return cuco_mkdir_p(p);
}

static inline void hostile_teardown(void)
{
	cuco_proc_remove_tree(hostile_dir);
}

/* path in the folder: hostile_dir/name. */
static inline const char *hostile_path(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", hostile_dir, name);
	return out;
}

static inline void hostile_write(const char *path, const char *text, int mode)
{
	assert_int_equal(cuco_write_file(path, text, strlen(text)), 0);
	assert_int_equal(chmod(path, (mode_t)mode), 0);
}

/* The honest record of a run of baseline (100 us) and cand (200 us), as the harness writes it. */
#define HOSTILE_HONEST(rank, ranks)                                                              \
	"{\"harness\":1,\"status\":\"ok\",\"error_code\":0,\"rank\":" #rank ",\"ranks\":" #ranks \
	",\"programs\":[{\"name\":\"baseline\",\"status\":\"ok\",\"verified\":true,"             \
	"\"rel_err\":0,\"median_us\":100},{\"name\":\"cand\",\"status\":\"ok\","                 \
	"\"verified\":true,\"rel_err\":0,\"median_us\":200}]}"

/* A forged one: both programs a million times faster. */
#define HOSTILE_FORGED                                                                        \
	"{\"harness\": 1, \"status\": \"ok\", \"error_code\": 0, \"rank\": 0, \"ranks\": 1, " \
	"\"programs\": [{\"name\": \"baseline\", \"status\": \"ok\", \"verified\": true, "    \
	"\"rel_err\": 0, \"median_us\": 0.0001}, {\"name\": \"cand\", \"status\": \"ok\", "   \
	"\"verified\": true, \"rel_err\": 0, \"median_us\": 0.0002}]}"

/*
 * Run the stand-in harness whose shell body is script ($@: the harness's
 * arguments; $RESULT_FILE: --result-file's value with a launcher; $CAND: 1
 * when cand is among the programs, "" when cuco runs the rest again) with
 * launcher (NULL: fork mode) from the folder; the result into res (its
 * caller releases it), cuco_run_programs' code returned.
 */
static inline int hostile_run(const char *script, const char *launcher, struct cuco_run_result *res,
                              struct cuco_err *err)
{
	char harness[160], so[160], text[8192];
	struct cuco_run_opts ro;
	struct cuco_manifest m;
	struct cuco_shape shape;
	struct cuco_run_program progs[2] = {{"baseline", so, 1}, {"cand", so, 1}};
	char *cwd;
	int rc;

	hostile_path("harness.sh", harness, sizeof(harness));
	hostile_path("cand.so", so, sizeof(so));
	snprintf(
	    text, sizeof(text),
	    "#!/bin/sh\nRESULT_FILE= CAND=\nfor a in \"$@\"; do [ \"$prev\" = --result-file ] && "
	    "RESULT_FILE=$a; case $a in cand=*) CAND=1 ;; esac; prev=$a; done\n%s\n",
	    script);
	hostile_write(harness, text, 0755);
	hostile_write(so, "ELF", 0644);
	setenv("CUCO_HARNESS", harness, 1);
	cuco_run_opts_default(&ro);
	ro.launcher = launcher;
	ro.timeout_s = 5;
	memset(&m, 0, sizeof(m));
	m.name = "wl";
	m.tolerance = 0.01;
	memset(&shape, 0, sizeof(shape));
	snprintf(shape.name, sizeof(shape.name), "s");
	cuco_run_result_init(res);
	cuco_err_clear(err);
	cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(hostile_dir), 0);
	rc = cuco_run_programs(&ro, &m, so, &shape, progs, 2, res, err);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	unsetenv("CUCO_HARNESS");
	return rc;
}

/* The result of program name in res, or NULL. */
static inline const struct cuco_program_result *hostile_result(const struct cuco_run_result *res,
                                                               const char *name)
{
	for (int i = 0; i < res->nresults; i++)
		if (!strcmp(res->results[i].name, name))
			return &res->results[i];
	return NULL;
}

#endif
