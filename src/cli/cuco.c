/* cuco.c - the `cuco` command: dispatch to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "util/error.h"
#include "util/proc.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: cuco <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < cuco_ncommands; i++)
		fprintf(out, "  %-10s %s\n", cuco_commands[i].name, cuco_commands[i].help);
	fprintf(out, "\n'cuco <command> --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	cuco_proc_protect_self();
	if (argc < 2) {
		usage(stderr);
		return CUCO_ERR_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* cuco help CMD = cuco CMD --help */
		char *sub[] = {argv[2], "--help", NULL};
		for (size_t i = 0; i < cuco_ncommands; i++)
			if (!strcmp(argv[2], cuco_commands[i].name))
				return cuco_commands[i].fn(2, sub);
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
	for (size_t i = 0; i < cuco_ncommands; i++)
		if (!strcmp(argv[1], cuco_commands[i].name))
			return cuco_commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "cuco: '%s' is not a cuco command; see 'cuco --help'\n", argv[1]);
	return CUCO_ERR_USAGE;
}
