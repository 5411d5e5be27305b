/*
 * flags.h - one table per command that both parses its command line and
 * prints its --help, so what a command takes and what it says it takes are
 * the same list.
 *
 * A table is an array of struct cli_flag ending in a CLI_END entry. Each
 * flag entry names the flag, the kind of value it takes, where the value
 * goes (an offset into the struct the command parses into: its "args"),
 * and one help line. Headings and prose lines sit between the flags where
 * --help prints them; CLI_TABLE includes a shared table (the run options,
 * the LLM endpoint flags) at an offset of its own.
 */
#ifndef CUCO_CLI_FLAGS_H
#define CUCO_CLI_FLAGS_H

#include <stddef.h>
#include <stdio.h>

enum cli_kind {
	CLI_END = 0, /* ends a table */
	CLI_BOOL,    /* no value: the int at offset becomes 1 */
	CLI_INT,     /* an integer in [lo, hi] into an int or a 64-bit integer (size says) */
	CLI_DOUBLE,  /* a number in [dlo, dhi] into a double */
	CLI_STRING,  /* the value (argv's own string) into a const char * */
	CLI_ENUM,    /* one of values[]: that static string into a const char * */
	CLI_CHOICE,  /* one of values[]: its index into an int */
	CLI_LIST,    /* repeatable: appended to a const char *[max]; the int at count counts */
	CLI_CALL,    /* the value (NULL when arg is NULL) handed to fn */
	CLI_REFUSE,  /* a name refused with hint: not listed, and hides later entries so named */
	CLI_TABLE,   /* the entries of table, their offsets counted from offset */
	CLI_HEADING, /* --help only: a group's heading line, help */
	CLI_TEXT,    /* --help only: help printed as it is (its own line breaks) */
	CLI_ARG,     /* --help only: a positional argument (name) and its help, aligned as flags */
};

/*
 * A CLI_CALL flag's handler: dest is the struct the table's offsets count
 * from. Returns 0, or nonzero with the reason in msg (without "cuco CMD: ").
 */
typedef int (*cli_flag_fn)(void *dest, const char *flag, const char *value, char *msg, size_t len);

struct cli_flag {
	enum cli_kind kind;
	const char *name; /* "--shape", "-o" */
	const char *arg;  /* the value's name in --help ("N", "PATH"); NULL: the flag takes none */
	const char *help; /* one help line (--help wraps it), or a heading's or prose's text */
	size_t offset;    /* the destination within the struct being filled */
	size_t size;      /* INT: the destination's size; TABLE: the included struct's */
	long long lo, hi; /* INT: the accepted range */
	double dlo, dhi;  /* DOUBLE: the accepted range */
	const char *const *values; /* ENUM, CHOICE: the accepted values, NULL-terminated */
	/* ENUM, CHOICE: the reason after "FLAG VALUE: " (default "expected a, b or c");
	 * REFUSE: the whole reason */
	const char *hint;
	size_t count;                 /* LIST: offset of the int that counts the values */
	int max;                      /* LIST: how many values fit */
	cli_flag_fn fn;               /* CALL */
	const struct cli_flag *table; /* TABLE */
	/* a variable that stands for the flag when the command line does not give
	 * it (STRING, INT, DOUBLE, ENUM, CHOICE); its help names it */
	const char *env;
	int hidden; /* parsed but not listed: an old name kept for users' scripts */
};

/* Destination of a member of type: its offset and size. */
#define CLI_AT(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
/* A LIST's destination: array member arr and its count n. */
#define CLI_LIST_AT(type, arr, n)                                  \
	.offset = offsetof(type, arr), .count = offsetof(type, n), \
	.max = (int)(sizeof(((type *)0)->arr) / sizeof(((type *)0)->arr[0]))

/* A command: its usage text, its table, and where its positional arguments go. */
struct cli_spec {
	const char *name;  /* "bench": messages say "cuco bench: ..." */
	const char *usage; /* printed first by --help, as it is: usage lines, description */
	const struct cli_flag *flags;
	size_t args_size; /* sizeof the struct the table fills */
	size_t pos;       /* offset of a const char *[max_pos] for positional arguments */
	size_t npos;      /* offset of the int counting them */
	int max_pos;      /* positional arguments taken; 0: none */
};

#define CLI_HELP (-1) /* cli_flags_parse(): --help was given and printed */

/*
 * Parse argv[1..argc) (argv[0] is the command's name) into args, left to
 * right: "--flag value", "--flag=value", flags without a value, positional
 * arguments, and "--" after which every argument is positional. "--help"
 * or "-h" stops there and prints the help (stdout). Variables of
 * entries not given fill them last. Returns 0, CLI_HELP, or
 * CUCO_ERR_USAGE after printing "cuco CMD: <reason>" and where to read
 * the help (stderr); the first problem stops the parse.
 */
int cli_flags_parse(const struct cli_spec *s, int argc, char **argv, void *args);

/* cli_flags_parse() without printing: the reason of CUCO_ERR_USAGE into msg. */
int cli_flags_scan(const struct cli_spec *s, int argc, char **argv, void *args, char *msg,
                   size_t len);

/*
 * The name of names[0..n) nearest to word by edit distance (a typo of it),
 * or NULL when none is near enough or two are equally near.
 */
const char *cli_did_you_mean(const char *word, const char *const *names, size_t n);

/* The --help text: the usage, then every listed flag, aligned and wrapped, by group. */
void cli_flags_help(const struct cli_spec *s, FILE *out);

/*
 * Call fn for each flag entry of s in parse order (included tables
 * flattened; headings and prose skipped): listed is 1 when --help lists
 * it (the first entry of its name, neither hidden nor refused). Stops at
 * and returns fn's first nonzero; 0 when all were seen.
 */
int cli_flags_each(const struct cli_spec *s,
                   int (*fn)(const struct cli_flag *f, int listed, void *arg), void *arg);

#endif
