/* cmd_workloads.c - `cuco workloads`: the workload packages and their shapes. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/paths.h"

struct workloads_args {
	int json;
};

static const struct cli_flag workloads_flags[] = {
    {CLI_BOOL, "--json", NULL,
     "one JSON array: each package's manifest.json, with \"dir\" (its folder) added",
     CLI_AT(struct workloads_args, json)},
    {CLI_END},
};

const struct cli_spec cmd_workloads_spec = {
    .name = "workloads",
    .usage =
        "usage: cuco workloads [--json]\n\nList the workload packages under <cuco home>/workloads "
        "and their shapes.\n",
    .flags = workloads_flags,
    .args_size = sizeof(struct workloads_args),
};

int cmd_workloads(int argc, char **argv)
{
	struct cuco_err err;
	struct workloads_args a = {0};
	const char *home;
	char dir[PATH_MAX], **names = NULL;
	int n = 0, rc = 0, as_json;
	json_t *all = NULL;

	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_workloads_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	as_json = a.json;
	if (as_json && !(all = json_array()))
		return CUCO_ERR_NOMEM;
	home = cuco_home(&err);
	if (!home)
		return cli_fail(&err);
	snprintf(dir, sizeof(dir), "%s/workloads", home);
	if (cuco_workloads_list(dir, &names, &n, &err))
		return cli_fail(&err);
	for (int i = 0; i < n; i++) {
		struct cuco_manifest m;
		if (cuco_workload_find(dir, names[i], &m, &err)) {
			fprintf(stderr, "cuco: %s\n", err.msg);
			rc = err.code;
			continue;
		}
		if (as_json) {
			char path[PATH_MAX];
			json_error_t je;
			json_t *o;

			snprintf(path, sizeof(path), "%s/manifest.json", m.dir);
			o = json_load_file(path, 0, &je);
			if (o) {
				json_object_set_new(o, "dir", json_string(m.dir));
				json_array_append_new(all, o);
			}
			cuco_manifest_release(&m);
			continue;
		}
		printf("%s: %s\n  ranks:", m.name, m.description);
		for (int r = 0; r < m.nranks; r++)
			printf(" %d", m.ranks[r]);
		printf("  dtype: %s  tolerance: %g  default shape: %s\n", m.dtype_name, m.tolerance,
		       m.default_shape);
		if (m.requires_cc)
			printf("  GPUs: compute capability %d.%d%s%s%s\n", m.requires_cc / 10,
			       m.requires_cc % 10, m.requires_why[0] ? " (" : "", m.requires_why,
			       m.requires_why[0] ? ")" : "");
		printf("  shapes:\n");
		for (int s = 0; s < m.nshapes; s++) {
			printf("    %-10s", m.shapes[s].name);
			for (int k = 0; k < m.shapes[s].nparams; k++)
				printf(" %s=%lld", m.shapes[s].param_names[k],
				       m.shapes[s].params[k]);
			if (m.shape_argv[s])
				printf("  argv: %s", m.shape_argv[s]);
			printf("\n");
		}
		if (m.argv)
			printf("  argv: %s\n", m.argv);
		if (m.nrules) {
			printf("  shape rules (any other shape: --shape");
			for (int k = 0; k < m.nparams; k++)
				printf("%s%s", k ? "x" : " ", m.params[k]);
			printf("):\n");
		}
		for (int j = 0; j < m.nrules; j++) {
			const struct cuco_shape_rule *r = &m.rules[j];
			const char *p = m.params[r->param];
			printf("    %s%s", p, r->per_rank ? "/ranks" : "");
			if (r->per_rank)
				printf(" (%s divides by the rank count)", p);
			if (r->min)
				printf(" >= %lld", r->min);
			if (r->multiple)
				printf("%s multiple of %lld", r->min ? "," : "", r->multiple);
			printf("%s%s\n", r->why[0] ? ": " : "", r->why);
		}
		printf("  programs:");
		for (int p = 0; p < m.nprograms; p++)
			printf(" %s(%s)", m.programs[p].name,
			       cuco_program_role_name(m.programs[p].role));
		printf("\n");
		if (m.reference_program)
			printf("  reference: program %s\n", m.reference_program);
		cuco_manifest_release(&m);
	}
	cuco_workloads_list_free(names, n);
	if (all) {
		char *text = json_dumps(all, JSON_INDENT(1) | JSON_PRESERVE_ORDER);

		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(all);
	}
	return rc;
}
