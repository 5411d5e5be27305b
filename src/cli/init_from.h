/*
 * init_from.h - `cuco init NAME --from FILE|DIR`: a user's program lifted into
 * a workload package (docs/your-own-program.md).
 */
#ifndef CUCO_CLI_INIT_FROM_H
#define CUCO_CLI_INIT_FROM_H

/* What cuco init was given for a lift; the strings are argv's. */
struct init_from_opts {
	const char *name, *from, *dir;
	const char *args;       /* the program's command line ({param}: a shape's value) */
	const char *step;       /* FILE:LINE of the step, or NULL */
	const char *entry;      /* the function that is the program's main, or NULL */
	const char *shapes[16]; /* NAME:PARAM=VALUE,... */
	int nshapes;
	const char *include_dirs[32];
	int ninclude_dirs;
	const char *defines[32];
	int ndefines;
	const char *arg_values[32]; /* --arg NAME=EXPR: a parameter of --entry's function */
	int nargs_given;
	int no_compile; /* skip the compile check (no nvcc) */
};

/* Lift o->from into o->dir and print what was done; a CUCO_ERR_* exit code (0 on success),
 * the message printed. Nothing is written unless the baseline and workload compile. */
int cli_init_from(const struct init_from_opts *o);

#endif
