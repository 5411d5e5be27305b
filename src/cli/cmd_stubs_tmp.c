/* temporary: replaced by cmd_<name>.c files during bring-up */
#include "cli/commands.h"
int cmd_doctor(int argc, char **argv) { (void)argc; (void)argv; return 13; }
int cmd_workloads(int argc, char **argv) { (void)argc; (void)argv; return 13; }
int cmd_fastpath(int argc, char **argv) { (void)argc; (void)argv; return 13; }
int cmd_eval(int argc, char **argv) { (void)argc; (void)argv; return 13; }
int cmd_bench(int argc, char **argv) { (void)argc; (void)argv; return 13; }
int cmd_show(int argc, char **argv) { (void)argc; (void)argv; return 13; }
