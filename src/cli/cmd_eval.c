/* cmd_eval.c - `cuco eval`: one program (a file or a stored program) through
 * the cascade, beside the workload's baseline so fitness is measured in the
 * same run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "program/directive.h"
#include "util/paths.h"
#include "util/xalloc.h"

static const char usage[] =
    "usage: cuco eval <FILE.cu | program-id> --workload NAME [--shape NAME]... [options]\n"
    "\n"
    "Evaluate one program: directive check, compile, run and verify on the GPUs\n"
    "against the workload's reference, time it next to the baseline, store the\n"
    "result (fitness = baseline latency / program latency).\n";

struct eval_args {
	struct cuco_run_opts run;
	const char *workload, *store, *json;
	const char *shapes[32];
	int nshapes;
	const char *pos[1];
	int npos;
};

static const struct cli_flag eval_flags[] = {
    {CLI_STRING, "--workload", "NAME", "workload the program belongs to (required for files)",
     CLI_AT(struct eval_args, workload)},
    {CLI_LIST, "--shape", "NAME",
     "shape (repeatable; default: the workload's default shape), or one by its values: "
     "4096x14784x8192, M=4096,N=14784,K=8192",
     CLI_LIST_AT(struct eval_args, shapes, nshapes)},
    CLI_STORE_FLAG(struct eval_args, store),
    {CLI_STRING, "--json", "FILE", "also write the results as JSON to FILE (as cuco bench --json)",
     CLI_AT(struct eval_args, json)},
    {CLI_HEADING, .help = "Run options:"},
    {CLI_TABLE, .table = cli_run_table, CLI_AT(struct eval_args, run)},
    {CLI_END},
};

const struct cli_spec cmd_eval_spec = {
    .name = "eval",
    .usage = usage,
    .flags = eval_flags,
    .args_size = sizeof(struct eval_args),
    .pos = offsetof(struct eval_args, pos),
    .npos = offsetof(struct eval_args, npos),
    .max_pos = 1,
};

int cmd_eval(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_manifest m;
	struct cuco_eval_request req;
	struct cuco_hw_facts facts;
	struct cuco_eval_program progs[2];
	struct cuco_strbuf base_src = CUCO_STRBUF_INIT, src = CUCO_STRBUF_INIT;
	struct cuco_program_rec stored;
	struct cuco_store *store = NULL;
	struct cuco_eval_shape *out = NULL;
	const char *target = NULL, *workload = NULL, *store_path = NULL, *shape_names[32];
	const char *json_path = NULL;
	const struct cuco_shape *shapes[32];
	struct eval_args a;
	int nshape = 0, rc, have_m = 0, failed = 0;
	char *end, config[64];
	long long id = 0;

	memset(&req, 0, sizeof(req));
	cuco_run_opts_default(&req.run);
	cuco_err_clear(&err);
	cuco_program_rec_init(&stored);
	memset(&a, 0, sizeof(a));
	a.run = req.run;
	if ((rc = cli_flags_parse(&cmd_eval_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	req.run = a.run;
	target = a.npos ? a.pos[0] : NULL;
	workload = a.workload;
	store_path = a.store;
	json_path = a.json;
	nshape = a.nshapes;
	for (int i = 0; i < nshape; i++)
		shape_names[i] = a.shapes[i];
	if (!target)
		return cli_usage_error("eval",
		                       "which program? (a .cu file or a stored program id)");
	if ((rc = cli_open_store(store_path, &store, &err)))
		return cli_fail(&err);
	errno = 0;
	id = strtoll(target, &end, 10);
	if (!errno && *end == '\0' && id > 0) {
		if ((rc = cuco_store_program_get(store, id, &stored, &err))) {
			cli_fail(&err);
			goto out;
		}
		if (!workload)
			workload = stored.workload;
		cuco_strbuf_adds(&src, stored.code);
	} else if (cuco_strbuf_read_file(&src, target)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", target, strerror(errno));
		cli_fail(&err);
		goto out;
	}
	if (!workload) {
		rc = cli_usage_error("eval", "--workload is required for a program file");
		goto out;
	}
	if ((rc = cli_load_workload(workload, &m, &err))) {
		cli_fail(&err);
		goto out;
	}
	have_m = 1;
	for (int i = 0; i < nshape; i++)
		if ((rc = cli_shape_arg("eval", &m, shape_names[i], shapes, i)))
			goto out;
	if (!nshape) {
		shapes[0] = cuco_manifest_shape(&m, m.default_shape);
		nshape = 1;
	}
	if (cuco_strbuf_read_file(&base_src, m.host_program)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", m.host_program, strerror(errno));
		cli_fail(&err);
		goto out;
	}
	cuco_eval_program_init(&progs[0], "baseline", "baseline", m.host_program, base_src.buf, 1);
	{
		const struct cuco_manifest_program *b = cuco_manifest_program(&m, "baseline");
		for (int l = 0; b && l < b->nlibs && l < 3; l++)
			progs[0].libs[l] = b->libs[l];
	}
	{
		/* Programs from the store compile beside the workload's files. */
		static char virt[4200];
		snprintf(virt, sizeof(virt), "%s/program-%lld.cu", m.dir, id);
		cuco_eval_program_init(&progs[1], "program", id > 0 ? "candidate" : "file",
		                       id > 0 ? virt : target, src.buf, 1);
	}
	/* Refusals come before the store has a run that would stay "running". */
	if ((rc = cli_node_checks("eval", &m, &req.run, 1, 1, shapes, nshape, &facts, &req.facts,
	                          &err)) ||
	    (rc = cuco_compile_opts_default(&req.compile, &err))) {
		cli_fail(&err);
		goto out_progs;
	}
	snprintf(config, sizeof(config), "{\"timing\":\"%s\"}", cuco_run_timing(&req.run));
	if ((rc = cli_run_begin(store, "eval", &m, m.name, shapes[0]->name, config, NULL,
	                        &req.run_id, &err))) {
		cli_fail(&err);
		goto out_progs;
	}
	req.m = &m;
	req.shapes = shapes;
	req.nshapes = nshape;
	req.progs = progs;
	req.nprogs = 2;
	req.store = store;
	out = cuco_xcalloc((size_t)nshape, sizeof(*out));
	rc = cuco_evaluate(&req, out, &err);
	if (progs[1].precheck_code)
		fprintf(stderr, "cuco eval: directive rejected: %s\n", progs[1].precheck_error);
	else if (progs[1].job.code != CUCO_OK && progs[1].job.code != -1)
		fprintf(stderr, "cuco eval: compile failed:\n%s\n", progs[1].job.log.buf);
	if (progs[1].precheck_code) {
		rc = progs[1].precheck_code;
	} else if (progs[1].job.code != CUCO_OK && progs[1].job.code != -1) {
		rc = CUCO_ERR_COMPILE;
	} else if (rc) {
		cli_fail(&err);
	} else {
		struct cuco_strbuf json = CUCO_STRBUF_INIT;

		cuco_strbuf_addf(&json,
		                 "{\"cuco\":\"%s\",\"run_id\":%lld,\"workload\":\"%s\","
		                 "\"ranks\":%d,\"shapes\":[",
		                 CUCO_VERSION, (long long)req.run_id, m.name, req.run.ranks);
		for (int s = 0; s < nshape; s++) {
			const struct cuco_program_result *r = cuco_eval_find(&out[s], "program");
			cli_print_shape_table(stdout, &m, &out[s], progs, 2, req.run.ranks);
			failed |= !r || r->code != CUCO_OK;
			if (s)
				cuco_strbuf_addch(&json, ',');
			cli_shape_json(&json, &out[s], progs, 2);
		}
		cuco_strbuf_adds(&json, "]}\n");
		if (json_path && cuco_write_file(json_path, json.buf, json.len)) {
			fprintf(stderr, "cuco eval: cannot write %s: %s\n", json_path,
			        strerror(errno));
			failed = 1;
		}
		cuco_strbuf_release(&json);
		if (progs[1].precheck_code || progs[1].job.code != CUCO_OK)
			failed = 1;
		rc = failed ? CUCO_ERR_RUN : 0;
	}
	cuco_store_run_finish(store, req.run_id, rc ? "failed" : "done", NULL);
	for (int s = 0; out && s < nshape; s++)
		cuco_eval_shape_release(&out[s]);
	free(out);
out_progs:
	cuco_eval_program_release(&progs[0]);
	cuco_eval_program_release(&progs[1]);
out:
	if (have_m)
		cuco_manifest_release(&m);
	cuco_program_rec_release(&stored);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&base_src);
	cuco_store_close(store);
	return rc;
}
