/* cuco.c - the `cuco` command: dispatch to one file per subcommand. */
#include <stdio.h>
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
};

static void usage(FILE *out)
{
	fprintf(out, "usage: cuco <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'cuco <command> --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
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
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "cuco: '%s' is not a cuco command; see 'cuco --help'\n", argv[1]);
	return CUCO_ERR_USAGE;
}
