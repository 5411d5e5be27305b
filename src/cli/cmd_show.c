/* cmd_show.c - `cuco show`: a stored run, program or evaluation. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco show run ID | program ID [--code] | evaluation ID [--logs] | runs\n"
    "  --store PATH        SQLite store\n";

/* arg: the FILE to print on (NULL: stdout). */
static int show_eval_row(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	FILE *f = arg ? (FILE *)arg : stdout;

	(void)err;
	fprintf(f, "  evaluation %-5lld program %-5lld shape %-8s stage %-7s status %-8s",
	        (long long)e->id, (long long)e->program_id, e->shape ? e->shape : "-",
	        e->stage_reached, e->status);
	if (!isnan(e->median_us))
		fprintf(f, " median %.1f us", e->median_us);
	if (!isnan(e->rel_err))
		fprintf(f, " rel_err %.2e", e->rel_err);
	if (!isnan(e->fitness))
		fprintf(f, " fitness %.3f", e->fitness);
	fprintf(f, "\n");
	if (e->error)
		fprintf(f, "    %s\n", e->error);
	return 0;
}

static int show_run_row(const struct cuco_run_rec *r, void *arg, struct cuco_err *err)
{
	(void)arg;
	(void)err;
	printf("run %-5lld %-9s %-16s %-8s %-11s %s\n", (long long)r->id, r->kind,
	       r->workload ? r->workload : "-", r->shape ? r->shape : "-", r->status,
	       r->created_at);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	const char *what = NULL, *idstr = NULL, *store_path = NULL;
	int code = 0, logs = 0, rc = 0;
	long long id = 0;

	cuco_err_clear(&err);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--code")) {
			code = 1;
		} else if (!strcmp(argv[i], "--logs")) {
			logs = 1;
		} else if (!strcmp(argv[i], "--store")) {
			if (!(store_path = cli_value("show", argc, argv, &i)))
				return CUCO_ERR_USAGE;
		} else if (argv[i][0] == '-') {
			return cli_usage_error("show", "unknown option %s", argv[i]);
		} else if (!what) {
			what = argv[i];
		} else if (!idstr) {
			idstr = argv[i];
		} else {
			return cli_usage_error("show", "unexpected argument %s", argv[i]);
		}
	}
	if (!what || (strcmp(what, "run") && strcmp(what, "program") &&
	              strcmp(what, "evaluation") && strcmp(what, "runs")))
		return cli_usage_error("show", "show what? run, program, evaluation or runs");
	if (strcmp(what, "runs") && (!idstr || cli_int("show", what, idstr, 1, INT64_MAX, &id)))
		return idstr ? CUCO_ERR_USAGE : cli_usage_error("show", "%s needs an ID", what);
	if (!store_path)
		store_path = cuco_store_default_path();
	if (!cuco_file_exists(store_path)) {
		fprintf(stderr, "cuco show: no store at %s (set --store or CUCO_STORE)\n",
		        store_path);
		return CUCO_ERR_NOT_FOUND;
	}
	if (cli_open_store(store_path, &store, &err))
		return cli_fail(&err);
	if (!strcmp(what, "runs")) {
		rc = cuco_store_run_each(store, show_run_row, NULL, &err);
	} else if (!strcmp(what, "run")) {
		struct cuco_run_rec r;
		if ((rc = cuco_store_run_get(store, id, &r, &err)) == 0) {
			show_run_row(&r, NULL, &err);
			if (r.error) /* why it failed, before what it stored */
				printf("error: %s\n", r.error);
			cuco_run_rec_release(&r);
			rc = cuco_store_eval_each_run(store, id, show_eval_row, NULL, &err);
		}
	} else if (!strcmp(what, "program")) {
		struct cuco_program_rec p;
		if ((rc = cuco_store_program_get(store, id, &p, &err)) == 0) {
			/* with --code only the code goes to stdout, so it can be fed to eval */
			FILE *h = code ? stderr : stdout;

			fprintf(h, "program %lld %s (%s) workload %s run %lld hash %.16s\n", id,
			        p.name, p.origin, p.workload, (long long)p.run_id, p.hash);
			if (p.directive)
				fprintf(h, "directive: %s\n", p.directive);
			if (p.flags && *p.flags) { /* one "flag:" line per contradiction */
				for (const char *f = p.flags; *f;) {
					size_t n = strcspn(f, "\n");
					fprintf(h, "flag: %.*s\n", (int)n, f);
					f += n + (f[n] == '\n');
				}
			}
			for (size_t k = 0; k < p.nparents; k++)
				fprintf(h, "parent: %lld (%s)\n", (long long)p.parents[k].id,
				        p.parents[k].kind);
			rc = cuco_store_eval_each_program(store, id, show_eval_row, h, &err);
			if (code)
				printf("%s", p.code);
			cuco_program_rec_release(&p);
		}
	} else {
		struct cuco_eval_rec e;
		if ((rc = cuco_store_eval_get(store, id, &e, &err)) == 0) {
			show_eval_row(&e, NULL, &err);
			if (logs) {
				printf("--- compile log ---\n%s\n",
				       e.compile_log ? e.compile_log : "");
				printf("--- run log ---\n%s\n", e.run_log ? e.run_log : "");
				printf("--- harness result ---\n%s\n",
				       e.result_json ? e.result_json : "");
			}
			cuco_eval_rec_release(&e);
		}
	}
	if (rc)
		cli_fail(&err);
	cuco_store_close(store);
	return rc;
}
