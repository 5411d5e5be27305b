/* exit.c - the exit status of every `cuco` command: one per kind of failure,
 * from one table that both maps result codes and prints `cuco --help`'s list. */
#include "cli/cli.h"

#include "util/error.h"

/* One exit status: what it means, and the result codes (util/error.h) it stands for. */
struct exit_row {
	int status;
	const char *meaning;
	int results[4]; /* ends at the first 0 */
};

/* The numbers are those the result codes had as exit statuses before the table:
 * scripts that tested them keep working. */
static const struct exit_row exit_rows[] = {
    {CLI_EXIT_OK, "success", {0}},
    {CLI_EXIT_INTERNAL,
     "internal error: out of memory, an OS call failed",
     {CUCO_ERR_NOMEM, CUCO_ERR_SYSTEM}},
    {CLI_EXIT_IO, "a file could not be read or written", {CUCO_ERR_IO}},
    {CLI_EXIT_BAD_INPUT,
     "bad input: a malformed or invalid manifest, directive, program or value",
     {CUCO_ERR_PARSE, CUCO_ERR_INVALID}},
    {CLI_EXIT_USAGE,
     "usage: unknown command or flag, a flag's value out of range",
     {CUCO_ERR_USAGE}},
    {CLI_EXIT_STORE,
     "the store failed, or was written by a newer cuco",
     {CUCO_ERR_STORE, CUCO_ERR_SCHEMA}},
    {CLI_EXIT_COMPILE, "compile failed: no program compiled", {CUCO_ERR_COMPILE}},
    {CLI_EXIT_RUN,
     "a program failed while running, hung or crashed",
     {CUCO_ERR_RUN, CUCO_ERR_TIMEOUT, CUCO_ERR_CRASH}},
    {CLI_EXIT_VERIFY,
     "verification failed: no program's output matched the reference",
     {CUCO_ERR_VERIFY}},
    {CLI_EXIT_UNSUPPORTED,
     "not possible here: rank count, compute capability, a library missing",
     {CUCO_ERR_UNSUPPORTED}},
    {CLI_EXIT_NOT_FOUND, "not found: a named workload, run, program or file", {CUCO_ERR_NOT_FOUND}},
    {CLI_EXIT_NO_GPU, "no GPU: fewer CUDA GPUs than the ranks need", {CUCO_ERR_NO_GPU}},
    {CLI_EXIT_INTERRUPTED, "interrupted (SIGINT, SIGTERM): the run is stored as interrupted", {0}},
};

int cli_exit_status(int result)
{
	if (result == CUCO_OK || result == CLI_EXIT_INTERRUPTED)
		return result;
	for (size_t i = 0; i < sizeof(exit_rows) / sizeof(exit_rows[0]); i++)
		for (int k = 0; k < 4 && exit_rows[i].results[k]; k++)
			if (exit_rows[i].results[k] == result)
				return exit_rows[i].status;
	return CLI_EXIT_INTERNAL;
}

void cli_exit_help(FILE *out)
{
	fprintf(out, "exit status (the same in every command):\n");
	for (size_t i = 0; i < sizeof(exit_rows) / sizeof(exit_rows[0]); i++)
		fprintf(out, "  %3d  %s\n", exit_rows[i].status, exit_rows[i].meaning);
}
