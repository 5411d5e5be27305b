/* cuco.c - the `cuco` command: dispatch to one file per subcommand. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "util/error.h"

static const struct cuco_command commands[] = {
    {"doctor", cmd_doctor, "GPUs, NVLink topology, NCCL and device-API support, nvcc"},
    {"workloads", cmd_workloads, "list workload packages and their shapes"},
    {"fastpath", cmd_fastpath, "turn a host program into a device-initiated seed"},
    {"eval", cmd_eval, "evaluate one program through the cascade"},
    {"bench", cmd_bench, "time baseline, peers, seed or any program at every shape"},
    {"show", cmd_show, "show a stored run, program or evaluation"},
    {"realize", cmd_realize, "render the program a directive names, through the workload template"},
    {"evolve", cmd_evolve, "evolutionary search for the fastest correct program"},
    {"recheck", cmd_recheck, "re-verify an evolve run's best at every shape, under the sanitizer"},
    {"report", cmd_report, "HTML and Markdown report of an evolve run"},
    {"init", cmd_init, "a new workload package, from nothing or from an MPI + NCCL program"},
    {"export", cmd_export, "a stored program as a library for your own NCCL program"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: cuco <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'cuco <command> --help' describes one command.\n");
}

/*
 * getopt_long's "--flag=value" as well as "--flag value": every argument that
 * starts with "--", names a flag in letters, digits and '-', and holds a '=' is
 * split in two (the value keeps any further '='). The strings stay argv's own;
 * only the array is new. NULL when out of memory.
 */
static char **split_equals(int argc, char **argv, int *out_argc)
{
	char **args = calloc((size_t)(2 * argc + 1), sizeof(*args));
	int n = 0;

	if (!args)
		return NULL;
	for (int i = 0; i < argc; i++) {
		char *eq = argv[i][0] == '-' && argv[i][1] == '-' ? strchr(argv[i], '=') : NULL;
		const char *c = argv[i] + 2;

		while (eq && c < eq && (isalnum((unsigned char)*c) || *c == '-'))
			c++;
		if (eq && c == eq && eq > argv[i] + 2) {
			*eq = '\0';
			args[n++] = argv[i];
			args[n++] = eq + 1;
		} else {
			args[n++] = argv[i];
		}
	}
	*out_argc = n;
	return args;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CUCO_ERR_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* cuco help CMD = cuco CMD --help */
		char *sub[] = {argv[2], "--help", NULL};
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].fn(2, sub);
		fprintf(stderr, "cuco: '%s' is not a cuco command; see 'cuco --help'\n", argv[2]);
		return CUCO_ERR_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cuco %s\n", CUCO_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			char **args = split_equals(argc - 1, argv + 1, &argc);
			int rc;

			if (!args) {
				fprintf(stderr, "cuco: out of memory\n");
				return CUCO_ERR_NOMEM;
			}
			rc = commands[i].fn(argc, args);
			free(args);
			return rc;
		}
	fprintf(stderr, "cuco: '%s' is not a cuco command; see 'cuco --help'\n", argv[1]);
	return CUCO_ERR_USAGE;
}
