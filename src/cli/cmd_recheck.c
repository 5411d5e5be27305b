/*
 * cmd_recheck.c - `cuco recheck`: the best program of an evolve run verified
 * again at every shape with a fresh input seed, then under compute-sanitizer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "program/directive.h"
#include "search/recheck.h"

static const char usage[] =
    "usage: cuco recheck RUN [--store PATH] [--no-sanitizer] [run options]\n"
    "\n"
    "Re-verify the best program of evolve run RUN at every shape of its workload\n"
    "with a fresh input seed, then at the smallest shape under compute-sanitizer\n"
    "(memcheck, racecheck). Each check is stored as an evaluation (a sanitizer\n"
    "finding has status 'sanitizer'); when all pass, meta run.RUN.best_checked\n"
    "names the program. 'cuco report RUN' shows the results. It times as the\n"
    "run did (its --timing, unless given here) and computes fitness by the run's\n"
    "statistic (median or mean).\n";

struct recheck_args {
	struct cuco_run_opts run;
	const char *store;
	int no_sanitizer, json;
	const char *pos[1];
	int npos;
};

static const struct cli_flag recheck_flags[] = {
    CLI_STORE_FLAG(struct recheck_args, store),
    {CLI_BOOL, "--no-sanitizer", NULL, "skip the compute-sanitizer passes",
     CLI_AT(struct recheck_args, no_sanitizer)},
    {CLI_BOOL, "--json", NULL,
     "one JSON object on stdout instead of the table: the run, its program, whether it "
     "passed, and each check with its evaluation's shape, status and times",
     CLI_AT(struct recheck_args, json)},
    {CLI_HEADING, .help = "Run options:"},
    {CLI_TABLE, .table = cli_run_table, CLI_AT(struct recheck_args, run)},
    {CLI_END},
};

const struct cli_spec cmd_recheck_spec = {
    .name = "recheck",
    .usage = usage,
    .flags = recheck_flags,
    .args_size = sizeof(struct recheck_args),
    .pos = offsetof(struct recheck_args, pos),
    .npos = offsetof(struct recheck_args, npos),
    .max_pos = 1,
};

int cmd_recheck(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	struct cuco_recheck_opts o;
	struct cuco_recheck_result res;
	struct cuco_run_rec run;
	struct cuco_manifest m;
	struct cuco_hw_facts facts;
	const char *store_path = NULL;
	struct recheck_args a;
	long long id = 0;
	int rc, have_m = 0;

	cuco_err_clear(&err);
	memset(&o, 0, sizeof(o));
	cuco_run_opts_default(&o.run);
	o.run.burst = -1; /* not given: the run's own timing (below) */
	o.sanitize = 1;
	cuco_run_rec_init(&run);
	memset(&a, 0, sizeof(a));
	a.run = o.run;
	if ((rc = cli_flags_parse(&cmd_recheck_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	o.run = a.run;
	o.sanitize = !a.no_sanitizer;
	store_path = a.store;
	if (a.npos && cli_int("recheck", "RUN", a.pos[0], 1, (long long)1 << 62, &id))
		return CUCO_ERR_USAGE;
	if (!id)
		return cli_usage_error("recheck", "which run? ('cuco show runs' lists them)");
	if ((rc = cli_open_store(store_path, &store, &err)))
		return cli_fail(&err);
	if ((rc = cuco_store_run_get(store, id, &run, &err)))
		goto fail;
	if (strcmp(run.kind, "evolve") || !run.workload) {
		rc = cli_usage_error("recheck", "run %lld is a %s run, not an evolve run", id,
		                     run.kind);
		goto out;
	}
	if ((rc = cli_load_run_workload(&run, &m, &err)))
		goto fail;
	have_m = 1;
	{
		/* The run's shapes given by their values join the manifest's, as in the run. */
		char searched[256], *save = NULL;
		cuco_recheck_searched(run.config, run.shape, searched, sizeof(searched));
		for (char *t = strtok_r(searched, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (!cuco_manifest_shape_spec(&m, t, &err)) {
				rc = err.code;
				goto fail;
			}
	}
	/* Time as the search did, unless --timing says otherwise, and rank by its statistic. */
	if (o.run.burst < 0)
		o.run.burst = !strcmp(cuco_run_config_timing(run.config), "burst");
	o.run.mean = !strcmp(cuco_run_config_statistic(run.config), "mean");
	o.store = store;
	o.run_id = id;
	o.m = &m;
	(void)cli_probe_facts("recheck", &o.run, &facts); /* the nvcc target */
	if ((rc = cuco_recheck_run(&o, &res, &err)))
		goto fail;
	if (a.json) {
		json_t *j = NULL;

		if (cuco_recheck_json(store, id, &j, &err) == CUCO_OK) {
			json_dumpf(j, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
		}
		json_decref(j);
	} else if (!res.program_id) {
		printf("# recheck: run %lld has no correct program to re-check\n", id);
	} else {
		cuco_recheck_print(stdout, store, id, &err);
	}
	rc = res.program_id && !res.passed ? CUCO_ERR_VERIFY : CUCO_OK;
	goto out;
fail:
	cli_fail(&err);
out:
	if (have_m)
		cuco_manifest_release(&m);
	cuco_run_rec_release(&run);
	cuco_store_close(store);
	return rc;
}
