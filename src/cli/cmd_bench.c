/* cmd_bench.c - `cuco bench`: baseline, peers, compute/comm alone, the
 * fast-path seed and any given programs, at every shape, through the
 * cascade; a table per shape and JSON for machines. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "farm/slurm.h"
#include "program/directive.h"
#include "util/paths.h"
#include "util/xalloc.h"

static const char usage[] =
    "usage: cuco bench <workload> [--shape NAME]... [--program FILE]... [options]\n"
    "\n"
    "Compile, verify and time the workload's host baseline, its peer programs\n"
    "(e.g. cuBLAS + NCCL), compute alone and comm alone (the ideal bound is the\n"
    "larger), the fast-path seed, and any --program files, at every shape.\n";

#define MAX_PROGS 16

struct bench_args {
	struct cuco_run_opts run;
	const char *shapes[64];
	int nshapes;
	const char *programs[MAX_PROGS];
	int nprograms;
	int no_seed, compile_only;
	const char *json, *store, *farm, *partition, *farm_args;
	const char *pos[1];
	int npos;
};

static const char *const farm_kinds[] = {"slurm", NULL};

static const struct cli_flag bench_flags[] = {
    {CLI_LIST, "--shape", "NAME",
     "only this shape (repeatable; default: all); a shape not in the manifest by its values: "
     "4096x14784x8192 (its params in order) or M=4096,N=14784,K=8192",
     CLI_LIST_AT(struct bench_args, shapes, nshapes)},
    {CLI_LIST, "--program", "FILE", "also evaluate this program (repeatable)",
     CLI_LIST_AT(struct bench_args, programs, nprograms)},
    {CLI_BOOL, "--no-seed", NULL, "do not run the fast path", CLI_AT(struct bench_args, no_seed)},
    {CLI_BOOL, "--compile-only", NULL, "stop after the compile stage",
     CLI_AT(struct bench_args, compile_only)},
    {CLI_STRING, "--json", "FILE", "write all results as JSON to FILE",
     CLI_AT(struct bench_args, json)},
    {CLI_ENUM, "--farm", "slurm",
     "run each shape's harness as a Slurm job step on a GPU node (srun); this node compiles and "
     "stores (docs/farm.md)",
     CLI_AT(struct bench_args, farm), .values = farm_kinds},
    {CLI_STRING, "--partition", "P", "--farm: the Slurm partition (default: Slurm's)",
     CLI_AT(struct bench_args, partition)},
    {CLI_STRING, "--farm-args", "'ARGS'", "--farm: more srun arguments, e.g. '--time=10'",
     CLI_AT(struct bench_args, farm_args)},
    CLI_STORE_FLAG(struct bench_args, store),
    {CLI_HEADING, .help = "Run options:"},
    {CLI_TABLE, .table = cli_run_table, CLI_AT(struct bench_args, run)},
    {CLI_END},
};

const struct cli_spec cmd_bench_spec = {
    .name = "bench",
    .usage = usage,
    .flags = bench_flags,
    .args_size = sizeof(struct bench_args),
    .pos = offsetof(struct bench_args, pos),
    .npos = offsetof(struct bench_args, npos),
    .max_pos = 1,
};

static int max_run_id(const struct cuco_run_rec *r, void *arg, struct cuco_err *err)
{
	int64_t *max = arg;

	(void)err;
	if (r->id > *max)
		*max = r->id;
	return 0;
}

/*
 * --farm slurm: ranks and shapes checked, the farm prepared for the run the
 * store will begin next (farm/slurm.h), harness runs routed through it.
 */
static int farm_setup(struct cuco_farm *farm, struct cuco_runner *runner,
                      const struct cuco_manifest *m, struct cuco_run_opts *run,
                      const struct cuco_shape *const *shapes, int nshapes, const char *partition,
                      const char *args, struct cuco_store *store, struct cuco_hw_facts *f,
                      const struct cuco_hw_facts **fp, struct cuco_err *err)
{
	int64_t next = 0;
	int rc, have = 0;

	*fp = NULL;
	if ((rc = cuco_manifest_check_ranks(m, run->ranks, 1, err)))
		return rc;
	for (int i = 0; i < nshapes; i++)
		if ((rc = cuco_manifest_check_shape(m, shapes[i], run->ranks, err)))
			return rc;
	if ((rc = cuco_store_run_each(store, max_run_id, &next, err)) ||
	    (rc = cuco_farm_prepare(farm, "bench", run->ranks, partition, args,
	                            cuco_store_path(store), next + 1, 0, f, &have, err)))
		return rc;
	if (have) {
		*fp = f;
		rc = cuco_manifest_check_cc(m, f->cc, err);
	}
	cuco_farm_runner(farm, runner);
	run->runner = runner;
	return rc;
}

/* ---- progress, interruption, outcome ---- */

static volatile sig_atomic_t stop_signal; /* the signal that stopped the bench, 0: none */
static atomic_int stop_compiles;          /* the compile stage's cancel flag */
static volatile sig_atomic_t farm_on;     /* --farm: its steps are cancelled on a stop */

static void on_stop(int sig)
{
	stop_signal = sig;
	atomic_store(&stop_compiles, 1);
	if (farm_on)
		cuco_farm_interrupt(); /* --farm: the steps in flight are cancelled */
	signal(sig, SIG_DFL);          /* a second one ends cuco at once */
}

/* SIGINT and SIGTERM stop the bench (on) or end cuco as by default (off). */
static void signals(int on)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on ? on_stop : SIG_DFL;
	sa.sa_flags = SA_RESTART; /* the harness of a shape finishes; the next does not start */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* What the progress lines need. */
struct bench_progress {
	const struct cuco_manifest *m;
	int ndone, ntotal;         /* compile jobs settled, and all of them */
	int nshape, ntotal_shapes; /* shapes begun, and all of them */
};

static void on_compiled(void *arg, const struct cuco_compile_job *j)
{
	struct bench_progress *pr = arg;

	pr->ndone++;
	fprintf(stderr, "cuco bench: [%d/%d] compile %-16s %s", pr->ndone, pr->ntotal, j->name,
	        j->code == CUCO_OK ? (j->cached ? "ok (cached)" : "ok")
	        : stop_signal      ? "stopped"
	                           : "FAILED");
	if (j->code == CUCO_OK && j->seconds > 0)
		fprintf(stderr, " (%.1f s)", j->seconds);
	fputc('\n', stderr);
}

static void on_shape(void *arg, const struct cuco_eval_shape *s, int done)
{
	struct bench_progress *pr = arg;
	const struct cuco_run_result *r = &s->run;

	if (!done) {
		fprintf(stderr, "cuco bench: shape %s (%d of %d): running...\n", s->shape->name,
		        ++pr->nshape, pr->ntotal_shapes);
		return;
	}
	for (int i = 0; i < r->nresults; i++) {
		const struct cuco_program_result *x = &r->results[i];
		fprintf(stderr, "cuco bench: shape %s: run %-16s %s", s->shape->name, x->name,
		        x->status);
		if (!isnan(x->median_us))
			fprintf(stderr, " %.1f us", x->median_us);
		fputc('\n', stderr);
	}
	if (s->code)
		fprintf(stderr, "cuco bench: shape %s: %s\n", s->shape->name, s->error);
}

/* Progress lines on stderr as programs compile and shapes run (stdout stays the tables). */
static struct bench_progress progress; /* of the one bench this process runs */

static void bench_progress_on(struct cuco_eval_request *req, const struct cuco_manifest *m,
                              const struct cuco_eval_program *progs, int np)
{
	int todo = 0;

	for (int i = 0; i < np; i++) {
		todo += !progs[i].precheck_code;
		if (progs[i].precheck_code)
			fprintf(stderr, "cuco bench: compile %-16s rejected: %s\n", progs[i].name,
			        progs[i].precheck_error);
	}
	memset(&progress, 0, sizeof(progress));
	progress.m = m;
	progress.ntotal = todo + 1; /* and the workload's generator, named "workload" */
	progress.ntotal_shapes = req->nshapes;
	req->compile.on_done = on_compiled;
	req->compile.on_done_arg = &progress;
	req->compile.cancel = &stop_compiles;
	req->on_shape = on_shape;
	req->on_shape_arg = &progress;
	fprintf(stderr,
	        "cuco bench: compiling %d programs and the workload's generator (%d at a time)\n",
	        todo, req->compile.jobs);
}

/* s as a JSON string into sb. */
static void json_str(struct cuco_strbuf *sb, const char *s)
{
	if (!s) {
		cuco_strbuf_adds(sb, "null");
		return;
	}
	cuco_strbuf_addch(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cuco_strbuf_addf(sb, "\\%c", c);
		else if (c < 0x20)
			cuco_strbuf_addf(sb, "\\u%04x", c);
		else
			cuco_strbuf_addch(sb, (char)c);
	}
	cuco_strbuf_addch(sb, '"');
}

/* The programs' compile outcome: "compile":[{"name","status","cached","seconds"}]. */
static void compile_json(struct cuco_strbuf *sb, const struct cuco_eval_program *progs, int np)
{
	cuco_strbuf_adds(sb, ",\"compile\":[");
	for (int i = 0; i < np; i++) {
		const struct cuco_eval_program *p = &progs[i];
		int code = p->precheck_code ? p->precheck_code : p->job.code;
		cuco_strbuf_adds(sb, i ? ",{\"name\":" : "{\"name\":");
		json_str(sb, p->name);
		cuco_strbuf_addf(sb, ",\"status\":\"%s\",\"cached\":%s,\"seconds\":%.2f}",
		                 p->precheck_code ? "rejected" : cuco_result_token(code),
		                 p->job.cached ? "true" : "false", p->job.seconds);
	}
	cuco_strbuf_addch(sb, ']');
}

/*
 * What the bench achieved: CUCO_OK, CUCO_ERR_COMPILE when no program
 * compiled, CUCO_ERR_VERIFY when none that ran verified, CUCO_ERR_RUN when
 * none ran; the reason into why.
 */
static int bench_outcome(const struct cuco_eval_program *progs, int np,
                         const struct cuco_eval_shape *out, int nshapes, int ran, char *why,
                         size_t len)
{
	int compiled = 0, ok = 0, wrong = 0;

	for (int i = 0; i < np; i++)
		compiled += !progs[i].precheck_code && progs[i].job.code == CUCO_OK;
	if (!compiled) {
		snprintf(why, len, "no program compiled (%d tried)", np);
		return CUCO_ERR_COMPILE;
	}
	if (!ran)
		return CUCO_OK;
	for (int s = 0; s < nshapes; s++)
		for (int i = 0; i < out[s].run.nresults; i++) {
			const struct cuco_program_result *r = &out[s].run.results[i];
			ok += r->code == CUCO_OK && r->verify;
			wrong += r->code == CUCO_ERR_VERIFY;
		}
	if (ok)
		return CUCO_OK;
	snprintf(why, len, "no program verified at any shape (%d compiled%s)", compiled,
	         wrong ? ", their outputs differ from the reference" : ", none ran to the end");
	return wrong ? CUCO_ERR_VERIFY : CUCO_ERR_RUN;
}

/*
 * After cuco_evaluate returned rc: the tables (stdout), the JSON file (always,
 * when asked), the run's end in the store. Returns the command's result.
 */
static int bench_finish(struct cuco_store *store, const struct cuco_eval_request *req,
                        const struct cuco_manifest *m, const struct cuco_eval_program *progs,
                        int np, const struct cuco_eval_shape *out, int rc, struct cuco_err *err,
                        const char *cmdline, const char *json_path)
{
	struct cuco_strbuf json = CUCO_STRBUF_INIT;
	int ran = !rc && !req->compile_only && !stop_signal;
	char date[64], why[512] = "", reason[160];
	time_t now = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (stop_signal) {
		snprintf(reason, sizeof(reason), "%s during the %s stage",
		         stop_signal == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM",
		         progress.nshape ? "run" : "compile");
		fprintf(stderr, "cuco bench: interrupted by %s\n", reason);
	} else if (rc == CUCO_ERR_NO_GPU) {
		printf("# compile stage done for %s; %s.\n"
		       "# Execution needs >= %d CUDA GPUs: run this command on a GPU node.\n",
		       m->name, err->msg, req->run.ranks);
	} else if (rc) {
		cli_fail(err);
	} else if (!(rc = bench_outcome(progs, np, out, req->nshapes, ran, why, sizeof(why))) &&
	           req->compile_only) {
		printf("# compile stage done for %s (--compile-only)\n", m->name);
	} else if (rc) {
		fprintf(stderr, "cuco bench: %s\n", why);
		cuco_err_set(err, rc, "%s", why);
	}
	if (ran && rc != CUCO_ERR_COMPILE) {
		printf("# cuco bench, run %lld, %s, %s\n", (long long)req->run_id, date, cmdline);
		for (int s = 0; s < req->nshapes; s++)
			cli_print_shape_table(stdout, m, &out[s], progs, np, req->run.ranks);
	}
	cuco_strbuf_addf(&json,
	                 "{\"cuco\":\"%s\",\"date\":\"%s\",\"commit\":\"%s\",\"run_id\":%lld,"
	                 "\"workload\":\"%s\",\"ranks\":%d,\"command\":",
	                 CUCO_VERSION, date, getenv("CUCO_COMMIT") ? getenv("CUCO_COMMIT") : "",
	                 (long long)req->run_id, m->name, req->run.ranks);
	json_str(&json, cmdline);
	cuco_strbuf_addf(&json, ",\"status\":\"%s\",\"error\":",
	                 stop_signal ? "interrupted"
	                 : rc        ? "failed"
	                             : "done");
	json_str(&json, stop_signal ? reason : rc ? err->msg : NULL);
	compile_json(&json, progs, np);
	cuco_strbuf_adds(&json, ",\"shapes\":[");
	for (int s = 0; ran && s < req->nshapes; s++) {
		if (s)
			cuco_strbuf_addch(&json, ',');
		cli_shape_json(&json, &out[s], progs, np);
	}
	cuco_strbuf_adds(&json, "]}\n");
	if (stop_signal)
		cuco_store_run_stop(store, req->run_id, "interrupted", reason, NULL);
	else if (rc)
		cuco_store_run_fail(store, req->run_id, err->msg, NULL);
	else
		cuco_store_run_finish(store, req->run_id, "done", NULL);
	if (json_path && cuco_write_file(json_path, json.buf, json.len)) {
		fprintf(stderr, "cuco bench: cannot write %s: %s\n", json_path, strerror(errno));
		rc = rc ? rc : CUCO_ERR_IO;
	}
	cuco_strbuf_release(&json);
	return stop_signal ? CLI_EXIT_INTERRUPTED : rc;
}

/* The --program files after the workload's programs (progs[0..*np)), each named by its file. */
static int add_file_programs(const char *const *paths, int n, struct cuco_eval_program *progs,
                             struct cuco_strbuf *files, int *np)
{
	struct cuco_err err;
	int rc;

	for (int i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/'), *name = base ? base + 1 : paths[i];
		/* the name keys the harness's NAME=PATH argument and the results */
		if (strpbrk(name, "=,") || !*name)
			return cli_usage_error(
			    "bench",
			    "--program %s: a program's file name may not hold '=' "
			    "or ','; rename the file",
			    paths[i]);
		for (int k = 0; k < *np; k++)
			if (!strcmp(progs[k].name, name))
				return cli_usage_error(
				    "bench",
				    "--program %s: the name %s is taken by %s of that name; "
				    "rename the file",
				    paths[i], name,
				    strcmp(progs[k].origin, "file") ? "the workload's program"
				                                    : "another --program file");
		cuco_strbuf_init(&files[*np], 0);
		if (cuco_strbuf_read_file(&files[*np], paths[i])) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "--program %s: %s", paths[i],
			                  strerror(errno));
			cuco_strbuf_release(&files[*np]);
			cli_fail(&err);
			return rc;
		}
		cuco_eval_program_init(&progs[*np], name, "file", paths[i], files[*np].buf, 1);
		(*np)++;
	}
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct cuco_manifest m;
	struct cuco_err err;
	struct cuco_eval_request req;
	struct cuco_hw_facts facts;
	struct cuco_eval_program progs[MAX_PROGS];
	struct cuco_strbuf seed = CUCO_STRBUF_INIT, cmdline = CUCO_STRBUF_INIT;
	struct cuco_strbuf files[MAX_PROGS];
	const char *shape_names[64], *prog_files[MAX_PROGS], *json_path = NULL, *store_path = NULL;
	const struct cuco_shape *shapes[64];
	struct cuco_eval_shape *out = NULL;
	struct cuco_store *store = NULL;
	const char *workload = NULL, *farm_kind = NULL, *partition = NULL, *farm_args = NULL;
	struct cuco_farm farm;
	struct cuco_runner farm_runner;
	struct bench_args a;
	int nshape_names = 0, nfiles = 0, no_seed = 0, compile_only = 0, np = 0, rc, nsites = 0;
	char seed_path[PATH_MAX], config[64];

	memset(&req, 0, sizeof(req));
	cuco_run_opts_default(&req.run);
	cuco_err_clear(&err);
	memset(&a, 0, sizeof(a));
	a.run = req.run;
	if ((rc = cli_flags_parse(&cmd_bench_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	req.run = a.run;
	workload = a.npos ? a.pos[0] : NULL;
	nshape_names = a.nshapes;
	for (int i = 0; i < nshape_names; i++)
		shape_names[i] = a.shapes[i];
	nfiles = a.nprograms;
	for (int i = 0; i < nfiles; i++)
		prog_files[i] = a.programs[i];
	no_seed = a.no_seed;
	compile_only = a.compile_only;
	json_path = a.json;
	store_path = a.store;
	farm_kind = a.farm;
	partition = a.partition;
	farm_args = a.farm_args;
	if (!workload)
		return cli_usage_error("bench", "which workload? ('cuco workloads' lists them)");
	if (cli_load_workload(workload, &m, &err))
		return cli_fail(&err);
	cuco_strbuf_adds(&cmdline, "cuco");
	for (int i = 0; i < argc; i++)
		cuco_strbuf_addf(&cmdline, " %s", argv[i]);
	/* Shapes */
	if (!nshape_names) {
		for (int i = 0; i < m.nshapes && i < 64; i++)
			shapes[req.nshapes++] = &m.shapes[i];
	} else {
		for (int i = 0; i < nshape_names; i++)
			if ((rc = cli_shape_arg("bench", &m, shape_names[i], shapes, i)))
				goto out_manifest;
		req.nshapes = nshape_names;
	}
	/* Programs: the manifest's, then the seed, then the user's. */
	for (int i = 0; i < m.nprograms && np < MAX_PROGS; i++) {
		const struct cuco_manifest_program *mp = &m.programs[i];
		cuco_strbuf_init(&files[np], 0);
		if (cuco_strbuf_read_file(&files[np], mp->file)) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", mp->file, strerror(errno));
			cuco_strbuf_release(&files[np]);
			cli_fail(&err);
			goto out_progs;
		}
		cuco_eval_program_init(&progs[np], mp->name, cuco_program_role_name(mp->role),
		                       mp->file, files[np].buf, mp->verify);
		for (int l = 0; l < mp->nlibs && l < 3; l++)
			progs[np].libs[l] = mp->libs[l];
		np++;
	}
	if (np + !no_seed + nfiles > MAX_PROGS) {
		rc = cli_usage_error("bench",
		                     "%d --program files do not fit: one harness run takes %d "
		                     "programs and workload %s brings %d (its own%s)",
		                     nfiles, MAX_PROGS, m.name, np + !no_seed,
		                     no_seed ? "" : " and the seed");
		goto out_progs;
	}
	if (!no_seed) {
		rc = cli_make_seed(&m, &seed, &nsites, &err);
		if (rc) {
			fprintf(stderr, "cuco bench: fast path failed, no seed: %s\n", err.msg);
		} else {
			snprintf(seed_path, sizeof(seed_path), "%s/seed.cu", m.dir);
			cuco_strbuf_init(&files[np], 0);
			cuco_eval_program_init(&progs[np], "seed", "seed", seed_path, seed.buf, 1);
			fprintf(stderr,
			        "cuco bench: fast path replaced %d host collective call%s\n",
			        nsites, nsites == 1 ? "" : "s");
			np++;
		}
	}
	if ((rc = add_file_programs(prog_files, nfiles, progs, files, &np)))
		goto out_progs;

	/* Refusals come before the store has a run that would stay "running". */
	if (!farm_kind && (partition || farm_args)) {
		rc = cli_usage_error("bench", "%s is for --farm slurm",
		                     partition ? "--partition" : "--farm-args");
		goto out_progs;
	}
	if (farm_kind && (compile_only || req.run.launcher)) {
		rc = cli_usage_error("bench", "--farm slurm runs the harness on the farm; drop %s",
		                     compile_only ? "--compile-only" : "--launcher");
		goto out_progs;
	}
	if (!farm_kind) {
		rc = cli_node_checks("bench", &m, &req.run, 1, !compile_only, shapes, req.nshapes,
		                     &facts, &req.facts, &err);
		if (!rc)
			rc = cuco_compile_opts_default(&req.compile, &err);
		if (rc) {
			cli_fail(&err);
			goto out_progs;
		}
	}
	rc = cli_open_store(store_path, &store, &err);
	if (rc) {
		cli_fail(&err);
		goto out_progs;
	}
	if (farm_kind) {
		rc = farm_setup(&farm, &farm_runner, &m, &req.run, shapes, req.nshapes, partition,
		                farm_args, store, &facts, &req.facts, &err);
		farm_on = 1;
		if (!rc)
			rc = cuco_compile_opts_default(&req.compile, &err);
		if (rc) {
			cli_fail(&err);
			goto out_store;
		}
	}
	snprintf(config, sizeof(config), "{\"timing\":\"%s\"}", cuco_run_timing(&req.run));
	rc = cli_run_begin(store, "bench", &m, m.name, req.nshapes == 1 ? shapes[0]->name : NULL,
	                   config, NULL, &req.run_id, &err);
	if (rc) {
		cli_fail(&err);
		goto out_store;
	}
	/* from here a signal ends the run 'interrupted', never leaves it 'running' */
	signals(1);
	req.m = &m;
	req.shapes = shapes;
	req.progs = progs;
	req.nprogs = np;
	req.store = store;
	req.compile_only = compile_only;
	out = cuco_xcalloc((size_t)req.nshapes, sizeof(*out));
	bench_progress_on(&req, &m, progs, np);
	rc = cuco_evaluate(&req, out, &err);
	signals(0);
	for (int i = 0; i < np; i++)
		if (!progs[i].precheck_code && progs[i].job.code != CUCO_OK && !stop_signal)
			fprintf(stderr, "--- %s: nvcc output ---\n%s\n", progs[i].name,
			        progs[i].job.log.buf);
	rc = bench_finish(store, &req, &m, progs, np, out, rc, &err, cmdline.buf, json_path);
	for (int s = 0; s < req.nshapes; s++)
		cuco_eval_shape_release(&out[s]);
	free(out);
out_store:
	if (req.run.runner) { /* bench is not resumed: its step results go */
		cuco_farm_clean_run(&farm);
		req.run.runner = NULL;
	}
	cuco_store_close(store);
out_progs:
	for (int i = 0; i < np; i++) {
		cuco_eval_program_release(&progs[i]);
		cuco_strbuf_release(&files[i]);
	}
out_manifest:
	cuco_manifest_release(&m);
	cuco_strbuf_release(&seed);
	cuco_strbuf_release(&cmdline);
	return rc;
}
