/* cmd_show.c - `cuco show`: a stored run, program or evaluation. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/paths.h"
#include "util/xalloc.h"

struct show_args {
	const char *store;
	int code, logs, json;
	const char *pos[2];
	int npos;
};

static const struct cli_flag show_flags[] = {
    CLI_STORE_FLAG(struct show_args, store),
    {CLI_BOOL, "--json", NULL,
     "one JSON object on stdout instead of the table (runs: an array); keys are the store's "
     "column names, null for none",
     CLI_AT(struct show_args, json)},
    {CLI_BOOL, "--code", NULL,
     "program: write only its code on stdout (the header goes to stderr); with --json, the "
     "code joins the object",
     CLI_AT(struct show_args, code)},
    {CLI_BOOL, "--logs", NULL, "evaluation: its compile log, run log and harness result too",
     CLI_AT(struct show_args, logs)},
    {CLI_END},
};

const struct cli_spec cmd_show_spec = {
    .name = "show",
    .usage = "usage: cuco show run ID | program ID [--code] | evaluation ID [--logs] | runs "
             "[--json]\n",
    .flags = show_flags,
    .args_size = sizeof(struct show_args),
    .pos = offsetof(struct show_args, pos),
    .npos = offsetof(struct show_args, npos),
    .max_pos = 2,
};

/* ---- JSON: the store's rows with their column names as keys ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *int_or_null(int64_t v, int64_t none)
{
	return v == none ? json_null() : json_integer((json_int_t)v);
}

/* A JSON text column parsed; the text itself when it does not parse; null when NULL. */
static json_t *parsed(const char *text)
{
	json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	return v ? v : str_or_null(text);
}

static json_t *run_json(const struct cuco_run_rec *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer((json_int_t)r->id));
	json_object_set_new(o, "kind", str_or_null(r->kind));
	json_object_set_new(o, "workload", str_or_null(r->workload));
	json_object_set_new(o, "shape", str_or_null(r->shape));
	json_object_set_new(o, "status", str_or_null(r->status));
	json_object_set_new(o, "error", str_or_null(r->error));
	json_object_set_new(o, "package", str_or_null(r->package));
	json_object_set_new(o, "created_at", str_or_null(r->created_at));
	json_object_set_new(o, "finished_at", str_or_null(r->finished_at));
	json_object_set_new(o, "cuco_version", str_or_null(r->cuco_version));
	json_object_set_new(o, "host", str_or_null(r->host));
	json_object_set_new(o, "gpu", str_or_null(r->gpu));
	json_object_set_new(o, "commit_id", str_or_null(r->commit_id));
	json_object_set_new(o, "config", parsed(r->config));
	return o;
}

static json_t *eval_json(const struct cuco_eval_rec *e, int logs)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer((json_int_t)e->id));
	json_object_set_new(o, "program_id", json_integer((json_int_t)e->program_id));
	json_object_set_new(o, "run_id", int_or_null(e->run_id, 0));
	json_object_set_new(o, "shape", str_or_null(e->shape));
	json_object_set_new(o, "ranks", e->ranks < 0 ? json_null() : json_integer(e->ranks));
	json_object_set_new(o, "stage_reached", str_or_null(e->stage_reached));
	json_object_set_new(o, "status", str_or_null(e->status));
	json_object_set_new(o, "error_code", json_integer(e->error_code));
	json_object_set_new(o, "error", str_or_null(e->error));
	json_object_set_new(o, "median_us", real_or_null(e->median_us));
	json_object_set_new(o, "p10_us", real_or_null(e->p10_us));
	json_object_set_new(o, "p90_us", real_or_null(e->p90_us));
	json_object_set_new(o, "min_us", real_or_null(e->min_us));
	json_object_set_new(o, "mean_us", real_or_null(e->mean_us));
	json_object_set_new(o, "rel_err", real_or_null(e->rel_err));
	json_object_set_new(o, "fitness", real_or_null(e->fitness));
	json_object_set_new(o, "gpu", str_or_null(e->gpu));
	json_object_set_new(o, "created_at", str_or_null(e->created_at));
	if (logs) {
		json_object_set_new(o, "compile_log", str_or_null(e->compile_log));
		json_object_set_new(o, "run_log", str_or_null(e->run_log));
		json_object_set_new(o, "result_json", parsed(e->result_json));
	}
	return o;
}

static int eval_json_row(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	(void)err;
	json_array_append_new(arg, eval_json(e, 0));
	return 0;
}

static int run_json_row(const struct cuco_run_rec *r, void *arg, struct cuco_err *err)
{
	(void)err;
	json_array_append_new(arg, run_json(r));
	return 0;
}

static json_t *program_json(const struct cuco_program_rec *p, int code)
{
	json_t *o = json_object(), *parents = json_array(), *flags = json_array();

	json_object_set_new(o, "id", json_integer((json_int_t)p->id));
	json_object_set_new(o, "run_id", int_or_null(p->run_id, 0));
	json_object_set_new(o, "workload", str_or_null(p->workload));
	json_object_set_new(o, "name", str_or_null(p->name));
	json_object_set_new(o, "origin", str_or_null(p->origin));
	json_object_set_new(o, "hash", str_or_null(p->hash));
	json_object_set_new(o, "directive", parsed(p->directive));
	json_object_set_new(o, "island", p->island < 0 ? json_null() : json_integer(p->island));
	json_object_set_new(o, "generation",
	                    p->generation < 0 ? json_null() : json_integer(p->generation));
	json_object_set_new(o, "operator", str_or_null(p->operator_));
	json_object_set_new(o, "created_at", str_or_null(p->created_at));
	for (const char *f = p->flags; f && *f;) { /* one string per contradiction */
		size_t n = strcspn(f, "\n");
		json_array_append_new(flags, json_stringn(f, n));
		f += n + (f[n] == '\n');
	}
	json_object_set_new(o, "flags", flags);
	for (size_t k = 0; k < p->nparents; k++) {
		json_t *e = json_object();
		json_object_set_new(e, "id", json_integer((json_int_t)p->parents[k].id));
		json_object_set_new(
		    e, "kind", json_string(p->parents[k].kind ? p->parents[k].kind : "parent"));
		json_array_append_new(parents, e);
	}
	json_object_set_new(o, "parents", parents);
	if (code)
		json_object_set_new(o, "code", str_or_null(p->code));
	return o;
}

/*
 * Text from the store (a candidate's or a model's: code, logs, errors, names)
 * made safe for a terminal (cuco_strbuf_add_printable); cuco keeps up to 8 at
 * a time, each valid until the 8th call after it.
 */
static const char *tty(const char *s)
{
	static struct cuco_strbuf ring[8];
	static int at;
	struct cuco_strbuf *sb = &ring[at++ % 8];

	if (!sb->buf)
		cuco_strbuf_init(sb, 0);
	cuco_strbuf_reset(sb);
	cuco_strbuf_add_printable(sb, s ? s : "");
	return sb->buf;
}

/* Print v on stdout (indented, keys in insertion order; no byte outside ASCII) and free it. */
static int print_json(json_t *v)
{
	char *text =
	    v ? json_dumps(v, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) : NULL;
	int rc = text ? 0 : CUCO_ERR_NOMEM;

	if (text)
		printf("%s\n", text);
	else
		fprintf(stderr, "cuco show: out of memory\n");
	free(text);
	json_decref(v);
	return rc;
}

/* arg: the FILE to print on (NULL: stdout). */
static int show_eval_row(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	FILE *f = arg ? (FILE *)arg : stdout;

	(void)err;
	fprintf(f, "  evaluation %-5lld program %-5lld shape %-8s stage %-7s status %-8s",
	        (long long)e->id, (long long)e->program_id, tty(e->shape ? e->shape : "-"),
	        tty(e->stage_reached), tty(e->status));
	if (!isnan(e->median_us))
		fprintf(f, " median %.1f us", e->median_us);
	if (!isnan(e->rel_err))
		fprintf(f, " rel_err %.2e", e->rel_err);
	if (!isnan(e->fitness))
		fprintf(f, " fitness %.3f", e->fitness);
	fprintf(f, "\n");
	if (e->error)
		fprintf(f, "    %s\n", tty(e->error));
	return 0;
}

/* The column names above show_run_row's lines (a # line: scripts skip it). */
static void show_run_header(void)
{
	printf("%-10s%-10s%-17s%-9s%-12s%s\n", "# run", "kind", "workload", "shape", "status",
	       "created (UTC)");
}

static int show_run_row(const struct cuco_run_rec *r, void *arg, struct cuco_err *err)
{
	(void)arg;
	(void)err;
	printf("run %-5lld %-9s %-16s %-8s %-11s %s\n", (long long)r->id, tty(r->kind),
	       tty(r->workload ? r->workload : "-"), tty(r->shape ? r->shape : "-"), tty(r->status),
	       tty(r->created_at));
	return 0;
}

/* `show ... --json`: what the form shows, as one JSON value on stdout. */
static int show_json(struct cuco_store *store, const char *what, int64_t id, int code, int logs,
                     struct cuco_err *err)
{
	json_t *v = NULL, *evs = json_array();
	int rc = CUCO_OK;

	if (!strcmp(what, "runs")) {
		v = json_array();
		rc = cuco_store_run_each(store, run_json_row, v, err);
	} else if (!strcmp(what, "run")) {
		struct cuco_run_rec r;
		if ((rc = cuco_store_run_get(store, id, &r, err)) == 0) {
			v = run_json(&r);
			cuco_run_rec_release(&r);
			rc = cuco_store_eval_each_run(store, id, eval_json_row, evs, err);
			json_object_set(v, "evaluations", evs);
		}
	} else if (!strcmp(what, "program")) {
		struct cuco_program_rec p;
		if ((rc = cuco_store_program_get(store, id, &p, err)) == 0) {
			v = program_json(&p, code);
			cuco_program_rec_release(&p);
			rc = cuco_store_eval_each_program(store, id, eval_json_row, evs, err);
			json_object_set(v, "evaluations", evs);
		}
	} else {
		struct cuco_eval_rec e;
		if ((rc = cuco_store_eval_get(store, id, &e, err)) == 0) {
			v = eval_json(&e, logs);
			cuco_eval_rec_release(&e);
		}
	}
	json_decref(evs);
	if (rc) {
		json_decref(v);
		return rc;
	}
	return print_json(v);
}

int cmd_show(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	const char *what = NULL, *idstr = NULL, *store_path = NULL;
	struct show_args a = {0};
	int code, logs, as_json, rc = 0;
	long long id = 0;

	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_show_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	what = a.npos > 0 ? a.pos[0] : NULL;
	idstr = a.npos > 1 ? a.pos[1] : NULL;
	code = a.code;
	logs = a.logs;
	as_json = a.json;
	store_path = a.store;
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
	if (as_json) {
		rc = show_json(store, what, id, code, logs, &err);
		goto out;
	}
	if (!strcmp(what, "runs")) {
		show_run_header();
		rc = cuco_store_run_each(store, show_run_row, NULL, &err);
	} else if (!strcmp(what, "run")) {
		struct cuco_run_rec r;
		if ((rc = cuco_store_run_get(store, id, &r, &err)) == 0) {
			show_run_header();
			show_run_row(&r, NULL, &err);
			if (r.error) /* why it failed, before what it stored */
				printf("error: %s\n", tty(r.error));
			if (r.package)
				printf("package: %s\n", tty(r.package));
			cuco_run_rec_release(&r);
			rc = cuco_store_eval_each_run(store, id, show_eval_row, NULL, &err);
		}
	} else if (!strcmp(what, "program")) {
		struct cuco_program_rec p;
		if ((rc = cuco_store_program_get(store, id, &p, &err)) == 0) {
			/* with --code only the code goes to stdout, so it can be fed to eval */
			FILE *h = code ? stderr : stdout;

			fprintf(h, "program %lld %s (%s) workload %s run %lld hash %.16s\n", id,
			        tty(p.name), tty(p.origin), tty(p.workload), (long long)p.run_id,
			        tty(p.hash));
			if (p.directive)
				fprintf(h, "directive: %s\n", tty(p.directive));
			if (p.flags && *p.flags) /* one "flag:" line per contradiction */
				for (const char *f = p.flags; *f;) {
					size_t n = strcspn(f, "\n");
					char *line = cuco_xstrndup(f, n);
					fprintf(h, "flag: %s\n", tty(line));
					free(line);
					f += n + (f[n] == '\n');
				}
			for (size_t k = 0; k < p.nparents; k++)
				fprintf(h, "parent: %lld (%s)\n", (long long)p.parents[k].id,
				        tty(p.parents[k].kind));
			rc = cuco_store_eval_each_program(store, id, show_eval_row, h, &err);
			/* verbatim into a file or pipe (for cuco eval), made safe for a terminal */
			if (code)
				fputs(isatty(STDOUT_FILENO) ? tty(p.code)
				      : p.code              ? p.code
				                            : "",
				      stdout);
			cuco_program_rec_release(&p);
		}
	} else {
		struct cuco_eval_rec e;
		if ((rc = cuco_store_eval_get(store, id, &e, &err)) == 0) {
			show_eval_row(&e, NULL, &err);
			if (logs) {
				printf("--- compile log ---\n%s\n", tty(e.compile_log));
				printf("--- run log ---\n%s\n", tty(e.run_log));
				printf("--- harness result ---\n%s\n", tty(e.result_json));
			}
			cuco_eval_rec_release(&e);
		}
	}
out:
	if (rc && err.code)
		cli_fail(&err);
	cuco_store_close(store);
	return rc;
}
