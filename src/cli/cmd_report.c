/* cmd_report.c - `cuco report`: the HTML and Markdown report of an evolve run. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "report/report.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco report RUN [--store PATH] [-o DIR]\n"
    "\n"
    "Write DIR/run-RUN.html (one self-contained file: inline CSS and SVG, no\n"
    "script, no network) and DIR/run-RUN.md: the best program against the seed,\n"
    "the host baseline, the peers and the ideal bound (from the latest bench run\n"
    "of the workload at the run's shape), best latency per island, every\n"
    "evaluation (by island; failures by the stage they failed at), the best\n"
    "program's lineage and ancestry, seed to best step by step (directive change\n"
    "and code diff), directive statistics, failures, the re-check, and the best\n"
    "code with its diff against the seed. A failed run's report opens with why.\n"
    "  --store PATH   SQLite store\n"
    "  -o DIR         output directory (default: <state>/reports, <state> being\n"
    "                 $CUCO_STATE or .cuco)\n";

int cmd_report(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	const char *store_path = NULL, *dir = NULL;
	long long run = 0;
	char html[PATH_MAX], md[PATH_MAX], dflt[PATH_MAX];
	int rc;

	cuco_err_clear(&err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "--store") || !strcmp(a, "-o")) {
			if (!(v = cli_value("report", argc, argv, &i)))
				return CUCO_ERR_USAGE;
			if (!strcmp(a, "--store"))
				store_path = v;
			else
				dir = v;
			continue;
		}
		if (a[0] == '-')
			return cli_usage_error("report", "unknown option %s", a);
		if (run)
			return cli_usage_error("report", "unexpected argument %s", a);
		if (cli_int("report", "RUN", a, 1, (long long)1 << 62, &run))
			return CUCO_ERR_USAGE;
	}
	if (!run)
		return cli_usage_error("report", "which run? ('cuco show runs' lists them)");
	if ((rc = cli_open_store(store_path, &store, &err)))
		return cli_fail(&err);
	if (!dir) {
		snprintf(dflt, sizeof(dflt), "%s/reports", cuco_state_dir());
		dir = dflt;
	}
	rc = cuco_report_write(store, run, dir, html, sizeof(html), md, sizeof(md), &err);
	if (rc)
		cli_fail(&err);
	else
		printf("%s\n%s\n", html, md);
	cuco_store_close(store);
	return rc;
}
