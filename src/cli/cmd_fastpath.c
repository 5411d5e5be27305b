/* cmd_fastpath.c - `cuco fastpath`: host program in, device-initiated seed out. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "fastpath/fastpath.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco fastpath <workload | host.cu> [-o FILE] [--no-compile] [--store PATH]\n"
    "\n"
    "Replace the host NCCL collectives of a host program (a workload's host\n"
    "program, or any program file) with device-initiated LSA code, using\n"
    "conservative choices, mark the EVOLVE-BLOCKs, write the directive, and\n"
    "check that the seed compiles. The seed is written to FILE (default\n"
    "<state>/seeds/<name>.seed.cu) and stored as origin 'seed'.\n"
    "  --comm-ctas N       CTAs per generated comm kernel (default 32)\n";

int cmd_fastpath(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_manifest m;
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report rep;
	struct cuco_strbuf src = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	const char *input = NULL, *out_path = NULL, *store_path = NULL, *host, *name;
	char def_out[PATH_MAX], dir[PATH_MAX];
	int no_compile = 0, have_manifest = 0, rc;
	long long n;

	cuco_err_clear(&err);
	cuco_fastpath_opts_init(&opts);
	opts.share_dir = cli_share_dir("fastpath");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--store") || !strcmp(a, "--comm-ctas")) {
			if (!(v = cli_value("fastpath", argc, argv, &i)))
				return CUCO_ERR_USAGE;
			if (!strcmp(a, "-o"))
				out_path = v;
			else if (!strcmp(a, "--store"))
				store_path = v;
			else if (cli_int("fastpath", a, v, 1, 1024, &n))
				return CUCO_ERR_USAGE;
			else
				opts.comm_ctas = (int)n;
		} else if (!strcmp(a, "--no-compile")) {
			no_compile = 1;
		} else if (a[0] == '-') {
			return cli_usage_error("fastpath", "unknown option %s", a);
		} else if (!input) {
			input = a;
		} else {
			return cli_usage_error("fastpath", "unexpected argument %s", a);
		}
	}
	if (!input)
		return cli_usage_error("fastpath", "which workload or host program?");
	if (strlen(input) > 3 && !strcmp(input + strlen(input) - 3, ".cu")) {
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
	cuco_fastpath_report_init(&rep);
	rc = cuco_fastpath_transform(host, src.buf, &opts, &out, &rep, &err);
	if (rc) {
		cli_fail(&err);
		cuco_fastpath_report_release(&rep);
		goto out;
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
		         (int)(strlen(name) - (strstr(name, ".cu") ? 3 : 0)), name);
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
			fprintf(stderr, "%s", job.log.buf);
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
	if (have_manifest) {
		struct cuco_store *store;
		if (cli_open_store(store_path, &store, &err) == 0) {
			struct cuco_program_rec rec;
			int64_t run_id = 0, id = 0;
			cli_run_begin(store, "fastpath", m.name, NULL, NULL, NULL, &run_id, &err);
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
	if (have_manifest)
		cuco_manifest_release(&m);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&out);
	return rc;
}
