/* cmd_bench.c - `cuco bench`: baseline, peers, compute/comm alone, the
 * fast-path seed and any given programs, at every shape, through the
 * cascade; a table per shape and JSON for machines. */
#include <errno.h>
#include <limits.h>
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

int cmd_bench(int argc, char **argv)
{
	struct cuco_manifest m;
	struct cuco_err err;
	struct cuco_eval_request req;
	struct cuco_hw_facts facts;
	struct cuco_eval_program progs[MAX_PROGS];
	struct cuco_strbuf seed = CUCO_STRBUF_INIT, json = CUCO_STRBUF_INIT,
	                   cmdline = CUCO_STRBUF_INIT;
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
	for (int i = 0; i < nfiles; i++) {
		const char *base = strrchr(prog_files[i], '/'),
		           *name = base ? base + 1 : prog_files[i];
		/* the name keys the harness's NAME=PATH argument and the results */
		if (strpbrk(name, "=,") || !*name) {
			rc = cli_usage_error("bench",
			                     "--program %s: a program's file name may not hold '=' "
			                     "or ','; rename the file",
			                     prog_files[i]);
			goto out_progs;
		}
		for (int k = 0; k < np; k++)
			if (!strcmp(progs[k].name, name)) {
				rc = cli_usage_error(
				    "bench",
				    "--program %s: the name %s is taken by %s of that name; "
				    "rename the file",
				    prog_files[i], name,
				    strcmp(progs[k].origin, "file") ? "the workload's program"
				                                    : "another --program file");
				goto out_progs;
			}
		cuco_strbuf_init(&files[np], 0);
		if (cuco_strbuf_read_file(&files[np], prog_files[i])) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "--program %s: %s", prog_files[i],
			                  strerror(errno));
			cuco_strbuf_release(&files[np]);
			cli_fail(&err);
			goto out_progs;
		}
		cuco_eval_program_init(&progs[np], name, "file", prog_files[i], files[np].buf, 1);
		np++;
	}

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
		if (!rc)
			rc = cuco_compile_opts_default(&req.compile, &err);
		if (rc) {
			cli_fail(&err);
			goto out_store;
		}
	}
	snprintf(config, sizeof(config), "{\"timing\":\"%s\"}", cuco_run_timing(&req.run));
	rc = cli_run_begin(store, "bench", m.name, req.nshapes == 1 ? shapes[0]->name : NULL,
	                   config, NULL, &req.run_id, &err);
	if (rc) {
		cli_fail(&err);
		goto out_store;
	}
	req.m = &m;
	req.shapes = shapes;
	req.progs = progs;
	req.nprogs = np;
	req.store = store;
	req.compile_only = compile_only;
	out = cuco_xcalloc((size_t)req.nshapes, sizeof(*out));
	fprintf(stderr, "cuco bench: compiling %d programs (%d at a time)...\n", np + 1,
	        req.compile.jobs);
	rc = cuco_evaluate(&req, out, &err);
	for (int i = 0; i < np; i++)
		fprintf(stderr, "cuco bench: compile %-16s %s%s\n", progs[i].name,
		        progs[i].precheck_code ? "rejected: "
		        : progs[i].job.code == CUCO_OK
		            ? (progs[i].job.cached ? "ok (cached)" : "ok")
		            : "FAILED",
		        progs[i].precheck_code ? progs[i].precheck_error : "");
	for (int i = 0; i < np; i++)
		if (!progs[i].precheck_code && progs[i].job.code != CUCO_OK)
			fprintf(stderr, "--- %s: nvcc output ---\n%s\n", progs[i].name,
			        progs[i].job.log.buf);
	if (rc == CUCO_ERR_NO_GPU) {
		printf("# compile stage done for %s; %s.\n"
		       "# Execution needs >= %d CUDA GPUs: run this command on a GPU node.\n",
		       m.name, err.msg, req.run.ranks);
		cuco_store_run_fail(store, req.run_id, err.msg, NULL);
		goto out_results;
	}
	if (rc) {
		cli_fail(&err);
		cuco_store_run_fail(store, req.run_id, err.msg, NULL);
		goto out_results;
	}
	if (compile_only) {
		printf("# compile stage done for %s (--compile-only)\n", m.name);
		cuco_store_run_finish(store, req.run_id, "done", NULL);
		goto out_results;
	}
	{
		time_t now = time(NULL);
		char date[64];
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		cuco_strbuf_addf(
		    &json,
		    "{\"cuco\":\"%s\",\"date\":\"%s\",\"commit\":\"%s\",\"run_id\":%lld,"
		    "\"workload\":\"%s\",\"ranks\":%d,\"command\":\"",
		    CUCO_VERSION, date, getenv("CUCO_COMMIT") ? getenv("CUCO_COMMIT") : "",
		    (long long)req.run_id, m.name, req.run.ranks);
		for (size_t k = 0; k < cmdline.len; k++) {
			if (cmdline.buf[k] == '"' || cmdline.buf[k] == '\\')
				cuco_strbuf_addch(&json, '\\');
			cuco_strbuf_addch(&json, cmdline.buf[k]);
		}
		cuco_strbuf_adds(&json, "\",\"shapes\":[");
		printf("# cuco bench, run %lld, %s, %s\n", (long long)req.run_id, date,
		       cmdline.buf);
	}
	for (int s = 0; s < req.nshapes; s++) {
		cli_print_shape_table(stdout, &m, &out[s], progs, np, req.run.ranks);
		if (s)
			cuco_strbuf_addch(&json, ',');
		cli_shape_json(&json, &out[s], progs, np);
	}
	cuco_strbuf_adds(&json, "]}\n");
	if (json_path && cuco_write_file(json_path, json.buf, json.len)) {
		fprintf(stderr, "cuco bench: cannot write %s: %s\n", json_path, strerror(errno));
		rc = CUCO_ERR_IO;
	}
	cuco_store_run_finish(store, req.run_id, "done", NULL);
out_results:
	for (int s = 0; s < req.nshapes && out; s++)
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
	cuco_strbuf_release(&json);
	cuco_strbuf_release(&cmdline);
	return rc;
}
