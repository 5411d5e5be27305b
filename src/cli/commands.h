/* commands.h - the subcommands of `cuco`, one file each (cmd_<name>.c). */
#ifndef CUCO_CLI_COMMANDS_H
#define CUCO_CLI_COMMANDS_H

#include <stddef.h>

#include "cli/flags.h"

/* Each returns the process exit status: 0, or a CUCO_ERR_* code. argv[0] is the command name. */
typedef int (*cuco_command_fn)(int argc, char **argv);

struct cuco_command {
	const char *name;
	cuco_command_fn fn;
	const char *help;            /* one line for `cuco --help` */
	const struct cli_spec *spec; /* its flags: what it parses and its --help */
};

/* Every command, in the order `cuco --help` lists them. */
extern const struct cuco_command cuco_commands[];
extern const size_t cuco_ncommands;

int cmd_doctor(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_fastpath(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_realize(int argc, char **argv);
int cmd_evolve(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_recheck(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_cache(int argc, char **argv);

extern const struct cli_spec cmd_doctor_spec, cmd_workloads_spec, cmd_fastpath_spec, cmd_eval_spec,
    cmd_bench_spec, cmd_show_spec, cmd_realize_spec, cmd_evolve_spec, cmd_report_spec,
    cmd_recheck_spec, cmd_init_spec, cmd_export_spec, cmd_cache_spec;

#endif
