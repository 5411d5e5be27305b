/* cmd_fastpath.c - `cuco fastpath`: host program in, device-initiated seed out. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "fastpath/agent.h"
#include "fastpath/fastpath.h"
#include "lift/seed.h"
#include "program/directive.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco fastpath <workload | program.cu> [-o FILE] [--backend lsa|nvshmem]\n"
    "                     [--no-compile] [--store PATH]\n"
    "       cuco fastpath --llm <workload | program.cu> [-o FILE] [--llm-* flags]\n"
    "\n"
    "Replace the host NCCL collectives of a host program (a workload's host\n"
    "program, or a cuco program file) with device-initiated LSA code, using\n"
    "conservative choices, mark the EVOLVE-BLOCKs, write the directive, and\n"
    "check that the seed compiles. The seed is written to FILE (default\n"
    "<state>/seeds/<name>.seed.cu) and stored as origin 'seed'.\n"
    "A workload is a name, a package directory or a manifest .json; any other\n"
    "file is source. An ordinary program (no cuco_program_run) becomes a\n"
    "workload first: cuco init NAME --from FILE, then cuco fastpath ./NAME.\n";
struct fastpath_args {
	const char *out, *store;
	int comm_ctas, nvshmem, no_compile, llm;
	long long iterations;
	struct cli_llm_flags lf;
	const char *pos[1];
	int npos;
};

static const char *const backends[] = {"lsa", "nvshmem", NULL};

static const struct cli_flag fastpath_flags[] = {
    {CLI_STRING, "-o", "FILE", "where to write the seed (default <state>/seeds/<name>.seed.cu)",
     CLI_AT(struct fastpath_args, out)},
    {CLI_INT, "--comm-ctas", "N", "CTAs per generated comm kernel (default 32)",
     CLI_AT(struct fastpath_args, comm_ctas), .lo = 1, .hi = 1024},
    {CLI_CHOICE, "--backend", "B",
     "lsa (default: NCCL device API) or nvshmem (puts on NVSHMEM's symmetric heap; "
     "ncclAllGather (GEMM workloads) and ncclAlltoAll (MoE layer); docs/nvshmem.md)",
     CLI_AT(struct fastpath_args, nvshmem), .values = backends,
     .hint = "the fast path writes lsa or nvshmem seeds"},
    {CLI_BOOL, "--no-compile", NULL, "do not check that the seed compiles",
     CLI_AT(struct fastpath_args, no_compile)},
    CLI_STORE_FLAG(struct fastpath_args, store),
    {CLI_HEADING, .help = "LLM agent (docs/fastpath.md), for programs the rules cannot transform:"},
    {CLI_BOOL, "--llm", NULL,
     "a model rewrites the program in two stages (device infrastructure, then the "
     "collectives), each compiled, run and judged with its feedback fed back; the seed is "
     "stored with operator 'llm-fastpath'. Without >= 2 GPUs each stage is only "
     "compile-checked and the seed stored unverified.",
     CLI_AT(struct fastpath_args, llm)},
    {CLI_INT, "--llm-iterations", "K", "attempts per stage (default 3)",
     CLI_AT(struct fastpath_args, iterations), .lo = 1, .hi = 50},
    {CLI_TABLE, .table = cli_llm_table, CLI_AT(struct fastpath_args, lf)},
    {CLI_END},
};

const struct cli_spec cmd_fastpath_spec = {
    .name = "fastpath",
    .usage = usage,
    .flags = fastpath_flags,
    .args_size = sizeof(struct fastpath_args),
    .pos = offsetof(struct fastpath_args, pos),
    .npos = offsetof(struct fastpath_args, npos),
    .max_pos = 1,
};

/*
 * The LLM agent on the host program src (host names it; m, when non-NULL, is
 * its workload): every call and the seed into the store, the seed into out.
 * *verified gets 1 when the seed was verified on GPUs.
 */
static int run_agent(struct cli_llm_flags *lf, int iterations, const char *host, const char *src,
                     const char *name, const struct cuco_manifest *m, const char *store_path,
                     struct cuco_strbuf *out, int *verified, struct cuco_err *err)
{
	struct cuco_fastpath_agent_config cfg;
	struct cuco_fastpath_agent_result res;
	struct cuco_fastpath_cascade judge;
	struct cuco_design_space ds;
	struct cuco_hw_facts facts;
	struct cuco_strbuf ds_text = CUCO_STRBUF_INIT;
	struct cuco_store *store = NULL;
	char share[PATH_MAX], ds_path[PATH_MAX], wl[128];
	const char *home = cuco_home(err);
	int64_t run_id = 0;
	int rc, have_ds = 0;

	cuco_fastpath_agent_result_init(&res);
	if (!home)
		return err->code ? err->code : CUCO_ERR_NOT_FOUND;
	snprintf(share, sizeof(share), "%s/share", home);
	snprintf(ds_path, sizeof(ds_path), "%s/design_space.json", share);
	rc = cuco_design_space_load(ds_path, &ds, err);
	if (rc)
		goto out;
	have_ds = 1;
	if (cuco_strbuf_read_file(&ds_text, ds_path)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the design space", ds_path);
		goto out;
	}
	/* A program file is stored under its own name as the workload. */
	snprintf(wl, sizeof(wl), "%.*s", (int)(strlen(name) - (strstr(name, ".cu") ? 3 : 0)), name);
	rc = cli_open_store(store_path, &store, err);
	if (rc)
		goto out;
	rc = cli_run_begin(store, "fastpath", m, m ? m->name : wl, m ? m->default_shape : NULL,
	                   NULL, NULL, &run_id, err);
	if (rc)
		goto out;
	cuco_fastpath_agent_config_init(&cfg);
	cli_llm_config(lf, 1, &cfg.llm);
	cfg.share_dir = share;
	cfg.file = host;
	cfg.host_code = src;
	cfg.workload = m ? m->name : wl;
	cfg.workload_description = m ? m->description : NULL;
	cfg.shape = m ? m->default_shape : NULL;
	cfg.ds = &ds;
	cfg.design_space_text = ds_text.buf;
	if (m) {
		const struct cuco_manifest_program *b = cuco_manifest_program(m, "baseline");
		for (int l = 0; b && l < b->nlibs && l < 3; l++)
			cfg.libs[l] = b->libs[l];
	}
	cfg.store = store;
	cfg.run_id = run_id;
	cfg.iterations = iterations;
	memset(&judge, 0, sizeof(judge));
	judge.m = m;
	judge.shape = m ? cuco_manifest_shape(m, m->default_shape) : NULL;
	cuco_run_opts_default(&judge.run);
	cfg.ranks = judge.run.ranks;
	cfg.facts = cli_probe_facts("fastpath", &judge.run, &facts); /* NULL: unknown here */
	cfg.judge = cuco_fastpath_judge_cascade;
	cfg.judge_arg = &judge;
	cfg.progress = stderr;
	rc = cuco_fastpath_agent_run(&cfg, &res, err);
	if (rc)
		cuco_store_run_fail(store, run_id, err->msg, NULL);
	else
		cuco_store_run_finish(store, run_id, "done", NULL);
	if (rc)
		goto out;
	cuco_strbuf_adds(out, res.seed);
	*verified = res.verified;
	printf("# fastpath --llm: stage A in %d attempt%s, stage B in %d, %d model calls; "
	       "stored as program %lld (operator %s)\n",
	       res.attempts[0], res.attempts[0] == 1 ? "" : "s", res.attempts[1], res.calls,
	       (long long)res.program_id, CUCO_FASTPATH_OPERATOR);
	if (!res.verified)
		printf("# the seed compiles but is NOT verified: %s.\n"
		       "# Verification needs >= %d CUDA GPUs: run this command on a GPU node.\n",
		       res.note, cfg.ranks);
out:
	cuco_fastpath_agent_result_release(&res);
	cuco_strbuf_release(&ds_text);
	if (have_ds)
		cuco_design_space_release(&ds);
	cuco_store_close(store);
	return rc;
}

int cmd_fastpath(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_manifest m;
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report rep;
	struct cuco_lift_hints hints = {NULL, 0};
	struct cuco_strbuf src = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	struct fastpath_args a;
	const char *input = NULL, *out_path = NULL, *store_path = NULL, *host, *name;
	char def_out[PATH_MAX], dir[PATH_MAX];
	int no_compile, have_manifest = 0, rc, llm, verified = 1;
	long long iterations;

	cuco_err_clear(&err);
	cuco_fastpath_opts_init(&opts);
	opts.share_dir = cli_share_dir("fastpath");
	memset(&a, 0, sizeof(a));
	a.comm_ctas = opts.comm_ctas;
	a.iterations = CUCO_FASTPATH_AGENT_ITERATIONS;
	cli_llm_flags_init(&a.lf);
	if ((rc = cli_flags_parse(&cmd_fastpath_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	input = a.npos ? a.pos[0] : NULL;
	out_path = a.out;
	store_path = a.store;
	opts.comm_ctas = a.comm_ctas;
	opts.nvshmem = a.nvshmem;
	no_compile = a.no_compile;
	llm = a.llm;
	iterations = a.iterations;
	if (!input)
		return cli_usage_error("fastpath", "which workload or host program?");
	if (llm && cli_llm_resolve("fastpath", &a.lf, "--llm"))
		return CUCO_ERR_USAGE;
	if (llm && (rc = cli_llm_sandbox("fastpath", &a.lf, 0)))
		return rc;
	if (!llm && (a.lf.base_url || a.lf.nmodels))
		return cli_usage_error("fastpath", "the --llm-* flags need --llm");
	if (cuco_fastpath_input_kind(input) == CUCO_FASTPATH_INPUT_SOURCE) {
		host = input;
		name = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
	} else {
		if (cli_load_workload(input, &m, &err))
			return cli_fail(&err);
		have_manifest = 1;
		host = m.host_program;
		name = m.name;
	}
	if (cuco_strbuf_read_file(&src, host)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", host, strerror(errno));
		cli_fail(&err);
		goto out;
	}
	/* a file, not a workload: an ordinary program goes through cuco init first */
	rc = have_manifest ? CUCO_OK : cuco_fastpath_check_source(host, src.buf, src.len, &err);
	if (rc) {
		cli_fail(&err);
		goto out;
	}
	if (cuco_lift_is_lifted(src.buf) &&
	    (rc = cuco_lift_hints(host, src.buf, &hints, &opts, &err))) {
		cli_fail(&err);
		goto out;
	}
	cuco_fastpath_report_init(&rep);
	rc = cuco_fastpath_transform(host, src.buf, &opts, &out, &rep, &err);
	if (rc && llm) {
		/* The rules cannot: that is the agent's job. */
		fprintf(stderr, "cuco fastpath: the rule-based fast path refuses: %s\n", err.msg);
	} else if (rc) {
		cli_fail(&err);
		if (rc == CUCO_ERR_UNSUPPORTED)
			fprintf(stderr,
			        "cuco fastpath: an LLM can try: cuco fastpath --llm %s "
			        "--llm-base-url URL --llm-model M (docs/fastpath.md)\n",
			        input);
		cuco_fastpath_report_release(&rep);
		goto out;
	}
	if (llm) {
		cuco_fastpath_report_release(&rep);
		cuco_strbuf_reset(&out);
		rc = run_agent(&a.lf, (int)iterations, host, src.buf, name,
		               have_manifest ? &m : NULL, store_path, &out, &verified, &err);
		if (rc) {
			cli_fail(&err);
			goto out;
		}
		no_compile = 1; /* the agent compiled it */
	}
	for (int i = 0; i < rep.nsites; i++)
		printf("%s:%d:%d: %s -> %s\n", host, rep.sites[i].line, rep.sites[i].column,
		       rep.sites[i].call, rep.sites[i].replacement);
	cuco_fastpath_report_release(&rep);
	if (!out_path) {
		snprintf(dir, sizeof(dir), "%s/seeds", cuco_state_dir());
		if (cuco_mkdir_p(dir)) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot create %s: %s", dir,
			                  strerror(errno));
			cli_fail(&err);
			goto out;
		}
		snprintf(def_out, sizeof(def_out), "%s/%.*s.seed.cu", dir,
		         (int)(strrchr(name, '.') && strrchr(name, '.') != name
		                   ? strrchr(name, '.') - name
		                   : (long)strlen(name)),
		         name);
		out_path = def_out;
	}
	if (cuco_write_file(out_path, out.buf, out.len)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot write %s: %s", out_path,
		                  strerror(errno));
		cli_fail(&err);
		goto out;
	}
	printf("seed written to %s\n", out_path);
	if (!no_compile) {
		struct cuco_compile_opts co;
		struct cuco_compile_job job;
		char virt[PATH_MAX];
		const char *slash = strrchr(host, '/');

		/* Compile as if beside the host program, so its local headers resolve. */
		snprintf(virt, sizeof(virt), "%.*s/seed.cu", slash ? (int)(slash - host) : 1,
		         slash ? host : ".");
		if ((rc = cuco_compile_opts_default(&co, &err))) {
			cli_fail(&err);
			goto out;
		}
		cuco_compile_job_init(&job, "seed", virt, out.buf);
		if (have_manifest && m.nprograms) {
			const struct cuco_manifest_program *b =
			    cuco_manifest_program(&m, "baseline");
			for (int l = 0; b && l < b->nlibs && l < 3; l++)
				job.libs[l] = b->libs[l];
		}
		rc = cuco_compile_many(&co, &job, 1, &err);
		if (!rc && job.code != CUCO_OK) {
			cli_put_printable(stderr, job.log.buf);
			rc = cuco_err_set(&err, CUCO_ERR_COMPILE,
			                  "the seed does not compile (see above)");
		}
		if (rc)
			cli_fail(&err);
		else
			printf("compile stage: ok%s (%s)\n", job.cached ? ", cached" : "",
			       job.so_path);
		cuco_compile_job_release(&job);
		if (rc)
			goto out;
	}
	if (llm && !verified)
		rc = CUCO_ERR_NO_GPU; /* like cuco bench: compiled, not run */
	if (have_manifest && !llm) {
		struct cuco_store *store;
		if (cli_open_store(store_path, &store, &err) == 0) {
			struct cuco_program_rec rec;
			int64_t run_id = 0, id = 0;
			cli_run_begin(store, "fastpath", &m, m.name, NULL, NULL, NULL, &run_id,
			              &err);
			cuco_program_rec_init(&rec);
			rec.run_id = run_id;
			rec.workload = m.name;
			rec.name = "seed";
			rec.origin = "seed";
			rec.code = out.buf;
			if (cuco_store_program_add(store, &rec, &id, &err) == 0)
				printf("stored as program %lld\n", (long long)id);
			cuco_store_run_finish(store, run_id, "done", NULL);
			cuco_store_close(store);
		} else {
			fprintf(stderr, "cuco: warning: seed not stored: %s\n", err.msg);
		}
	}
out:
	cuco_lift_hints_release(&hints);
	if (have_manifest)
		cuco_manifest_release(&m);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&out);
	return rc;
}
