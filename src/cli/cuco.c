/* cuco.c - the `cuco` command: dispatch to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/error.h"
#include "util/proc.h"

static void usage(FILE *out, int full)
{
	fprintf(out, "usage: cuco <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < cuco_ncommands; i++)
		fprintf(out, "  %-10s %s\n", cuco_commands[i].name, cuco_commands[i].help);
	fprintf(out, "\n'cuco <command> --help' describes one command.\n");
	if (full) {
		fputc('\n', out);
		cli_exit_help(out);
	}
}

/* The command named name, or NULL after saying so (with the nearest name) on stderr. */
static const struct cuco_command *command(const char *name)
{
	const char *names[64], *near;
	size_t n = 0;

	for (size_t i = 0; i < cuco_ncommands; i++)
		if (!strcmp(name, cuco_commands[i].name))
			return &cuco_commands[i];
	for (size_t i = 0; i < cuco_ncommands && n < 64; i++)
		names[n++] = cuco_commands[i].name;
	near = cli_did_you_mean(name, names, n);
	if (near)
		fprintf(stderr, "cuco: '%s' is not a cuco command. Did you mean '%s'?\n", name,
		        near);
	else
		fprintf(stderr, "cuco: '%s' is not a cuco command; see 'cuco --help'\n", name);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cuco_command *c;

	cuco_proc_protect_self();
	if (argc < 2) {
		usage(stderr, 0);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* cuco help CMD = cuco CMD --help */
		char *sub[] = {argv[2], "--help", NULL};
		c = command(argv[2]);
		return c ? cli_exit_status(c->fn(2, sub)) : CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout, 1);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cuco %s\n", CUCO_VERSION);
		return 0;
	}
	c = command(argv[1]);
	return c ? cli_exit_status(c->fn(argc - 1, argv + 1)) : CLI_EXIT_USAGE;
}
