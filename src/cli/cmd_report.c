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
    "code with its diff against the seed. A failed run's report opens with why.\n";

struct report_args {
	const char *store, *dir;
	const char *pos[1];
	int npos;
};

static const struct cli_flag report_flags[] = {
    CLI_STORE_FLAG(struct report_args, store),
    {CLI_STRING, "-o", "DIR",
     "output directory (default: <state>/reports, <state> being $CUCO_STATE or .cuco)",
     CLI_AT(struct report_args, dir)},
    {CLI_END},
};

const struct cli_spec cmd_report_spec = {
    .name = "report",
    .usage = usage,
    .flags = report_flags,
    .args_size = sizeof(struct report_args),
    .pos = offsetof(struct report_args, pos),
    .npos = offsetof(struct report_args, npos),
    .max_pos = 1,
};

int cmd_report(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	const char *store_path = NULL, *dir = NULL;
	long long run = 0;
	char html[PATH_MAX], md[PATH_MAX], dflt[PATH_MAX];
	struct report_args a = {0};
	int rc;

	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_report_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	store_path = a.store;
	dir = a.dir;
	if (a.npos && cli_int("report", "RUN", a.pos[0], 1, (long long)1 << 62, &run))
		return CUCO_ERR_USAGE;
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
