/* commands.h - the subcommands of `cuco`, one file each (cmd_<name>.c). */
#ifndef CUCO_CLI_COMMANDS_H
#define CUCO_CLI_COMMANDS_H

/* Each returns the process exit status: 0, or a CUCO_ERR_* code. argv[0] is the command name. */
typedef int (*cuco_command_fn)(int argc, char **argv);

struct cuco_command {
	const char *name;
	cuco_command_fn fn;
	const char *help;
};

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

#endif
