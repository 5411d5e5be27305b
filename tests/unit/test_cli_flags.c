/* test_cli_flags.c - the command-line tables (src/cli/flags.c): the forms a flag is given in,
 * the errors that name it, the --help they print; and for every cuco command, that each flag
 * its --help lists is one its parser takes and each flag its parser takes is listed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "util/error.h"

/* ---- a small command of every kind ---- */

struct inner {
	int level, depth;
};

struct demo {
	int on, n;
	int64_t big;
	double x;
	const char *name, *mode, *env_name;
	int pick;
	const char *tags[2];
	int ntags;
	char called[32];
	struct inner in;
	const char *pos[2];
	int npos;
};

static int call_it(void *dest, const char *flag, const char *v, char *msg, size_t len)
{
	struct demo *d = dest;

	if (!strcmp(v, "bad")) {
		snprintf(msg, len, "%s %s: not this one", flag, v);
		return -1;
	}
	snprintf(d->called, sizeof(d->called), "%s", v);
	return 0;
}

static const char *const modes[] = {"fast", "slow", "safe", NULL};
static const char *const picks[] = {"a", "b", NULL};

static const struct cli_flag inner_table[] = {
    {CLI_INT, "--level", "L", "a level", CLI_AT(struct inner, level), .lo = 0, .hi = 9},
    {CLI_INT, "--depth", "D", "a depth", CLI_AT(struct inner, depth), .lo = 0, .hi = 9},
    {CLI_END},
};

static const struct cli_flag demo_table[] = {
    {CLI_ARG, "WHAT", .help = "what to do"},
    {CLI_BOOL, "--on", NULL, "switch it on", CLI_AT(struct demo, on)},
    {CLI_INT, "--n", "N", "a small count", CLI_AT(struct demo, n), .lo = 1, .hi = 10},
    {CLI_INT, "--big", "N", "a big count", CLI_AT(struct demo, big), .lo = 0,
     .hi = (long long)1 << 40},
    {CLI_DOUBLE, "--x", "F", "a fraction", CLI_AT(struct demo, x), .dlo = 0, .dhi = 1},
    {CLI_STRING, "--name", "S", "a name (or $DEMO_NAME)", CLI_AT(struct demo, env_name),
     .env = "DEMO_NAME"},
    {CLI_ENUM, "--mode", "M", "fast, slow or safe", CLI_AT(struct demo, mode), .values = modes},
    {CLI_CHOICE, "--pick", "P", "a or b", CLI_AT(struct demo, pick), .values = picks,
     .hint = "give a or b"},
    {CLI_LIST, "--tag", "T", "a tag (repeatable)", CLI_LIST_AT(struct demo, tags, ntags)},
    {CLI_CALL, "--call", "V", "handed to a function", .fn = call_it},
    {CLI_STRING, "--old", "S", NULL, CLI_AT(struct demo, name), .hidden = 1},
    {CLI_HEADING, .help = "More:"},
    {CLI_REFUSE, "--depth", .hint = "--depth: not here"},
    {CLI_TABLE, .table = inner_table, CLI_AT(struct demo, in)},
    {CLI_STRING, "--a-rather-long-flag-name", "VALUE",
     "its help starts on the next line, and this sentence is long enough to wrap at the "
     "eightieth column",
     CLI_AT(struct demo, name)},
    {CLI_TEXT, .help = "A note, printed as it is.\n"},
    {CLI_END},
};

static const struct cli_spec demo = {
    .name = "demo",
    .usage = "usage: cuco demo WHAT [options]\n",
    .flags = demo_table,
    .args_size = sizeof(struct demo),
    .pos = offsetof(struct demo, pos),
    .npos = offsetof(struct demo, npos),
    .max_pos = 2,
};

/* Scan argv (NULL-terminated, argv[0] the command) into *d; the reason, if any, into msg. */
static int scan(struct demo *d, char *msg, size_t len, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(d, 0, sizeof(*d));
	return cli_flags_scan(&demo, argc, argv, d, msg, len);
}

#define SCAN(d, msg, ...) scan(d, msg, sizeof(msg), (char *[]){"demo", __VA_ARGS__, NULL})

static void test_forms(void **state)
{
	struct demo d;
	char msg[256];

	(void)state;
	unsetenv("DEMO_NAME");
	assert_int_equal(SCAN(&d, msg, "go", "--on", "--n", "3", "--big=1099511627776", "--x=0.25",
	                      "--mode", "slow", "--pick=b", "--tag", "p", "--tag=q=r", "--call",
	                      "v", "--level", "7", "--old", "o", "--", "--on"),
	                 0);
	assert_string_equal(msg, "");
	assert_int_equal(d.on, 1);
	assert_int_equal(d.n, 3);
	assert_true(d.big == (int64_t)1 << 40);
	assert_true(d.x == 0.25);
	assert_string_equal(d.mode, "slow");
	assert_ptr_equal(d.mode, modes[1]); /* the table's string */
	assert_int_equal(d.pick, 1);
	assert_int_equal(d.ntags, 2);
	assert_string_equal(d.tags[0], "p");
	assert_string_equal(d.tags[1], "q=r"); /* split at the first '=' only */
	assert_string_equal(d.called, "v");
	assert_int_equal(d.in.level, 7); /* an included table, at its offset */
	assert_string_equal(d.name, "o");
	assert_null(d.env_name);
	/* positional arguments, and after "--" a flag's name is one too */
	assert_int_equal(d.npos, 2);
	assert_string_equal(d.pos[0], "go");
	assert_string_equal(d.pos[1], "--on");
	/* an empty value is a value; a value may start with '-' */
	assert_int_equal(SCAN(&d, msg, "--old=", "--call", "--x"), 0);
	assert_string_equal(d.name, "");
	assert_string_equal(d.called, "--x");
	/* --help anywhere ends the parse with CLI_HELP; a problem before it comes first */
	assert_int_equal(SCAN(&d, msg, "--on", "--help", "--bogus"), CLI_HELP);
	assert_int_equal(SCAN(&d, msg, "-h"), CLI_HELP);
	assert_int_equal(SCAN(&d, msg, "--bogus", "--help"), CUCO_ERR_USAGE);
}

/* The reason a command line is refused for: exit code and text. */
static void refused(const char *want, char **argv)
{
	struct demo d;
	char msg[256];

	assert_int_equal(scan(&d, msg, sizeof(msg), argv), CUCO_ERR_USAGE);
	assert_string_equal(msg, want);
}

#define REFUSED(want, ...) refused(want, (char *[]){"demo", __VA_ARGS__, NULL})

static void test_errors(void **state)
{
	(void)state;
	REFUSED("unknown option --bogus", "--bogus");
	REFUSED("unknown option --bogus", "--bogus=1");
	REFUSED("unknown option -", "-");
	REFUSED("--n needs a value", "--n");
	REFUSED("--on takes no value", "--on=1");
	REFUSED("--n 0: expected an integer in [1, 10]", "--n", "0");
	REFUSED("--n 3x: expected an integer in [1, 10]", "--n=3x");
	REFUSED("--n 99999999999999999999: expected an integer in [1, 10]", "--n",
	        "99999999999999999999");
	REFUSED("--x 1.5: expected a number in [0, 1]", "--x", "1.5");
	REFUSED("--x nan: expected a number in [0, 1]", "--x", "nan");
	REFUSED("--mode quick: expected fast, slow or safe", "--mode", "quick");
	REFUSED("--pick c: give a or b", "--pick", "c");
	REFUSED("--tag r: at most 2 --tag flags", "--tag", "p", "--tag", "q", "--tag", "r");
	REFUSED("--call bad: not this one", "--call", "bad");
	/* a refused name hides the included entry of that name */
	REFUSED("--depth: not here", "--depth", "3");
	REFUSED("unexpected argument c", "a", "b", "c");
	REFUSED("unexpected argument c", "a", "--", "b", "c");
}

/* A mistyped flag or command: the nearest name by edit distance, when one is near enough. */
static void test_did_you_mean(void **state)
{
	const char *cmds[64];
	size_t n = 0;
	static const char *const budgets[] = {"--budget-evals", "--budget-minutes"};

	(void)state;
	REFUSED("unknown option --nme; did you mean --name?", "--nme");
	REFUSED("unknown option --leve; did you mean --level?", "--leve=2");
	REFUSED("unknown option --bogus", "--bogus");
	for (size_t i = 0; i < cuco_ncommands; i++)
		cmds[n++] = cuco_commands[i].name;
	assert_string_equal(cli_did_you_mean("evolv", cmds, n), "evolve");
	assert_string_equal(cli_did_you_mean("bnech", cmds, n), "bench");
	assert_string_equal(cli_did_you_mean("reprot", cmds, n), "report");
	assert_null(cli_did_you_mean("frobnicate", cmds, n));
	assert_null(cli_did_you_mean("x", cmds, n));
	/* two names equally near: no guess */
	assert_null(cli_did_you_mean("--budget", budgets, 2));
	assert_string_equal(cli_did_you_mean("--budget-eval", budgets, 2), "--budget-evals");
}

/* One exit status per kind of failure, whichever result code a command returns. */
static void test_exit_status(void **state)
{
	(void)state;
	assert_int_equal(cli_exit_status(CUCO_OK), 0);
	assert_int_equal(cli_exit_status(CUCO_ERR_USAGE), CLI_EXIT_USAGE);
	assert_int_equal(cli_exit_status(CUCO_ERR_PARSE), CLI_EXIT_BAD_INPUT);
	assert_int_equal(cli_exit_status(CUCO_ERR_INVALID), CLI_EXIT_BAD_INPUT);
	assert_int_equal(cli_exit_status(CUCO_ERR_SCHEMA), CLI_EXIT_STORE);
	assert_int_equal(cli_exit_status(CUCO_ERR_TIMEOUT), CLI_EXIT_RUN);
	assert_int_equal(cli_exit_status(CUCO_ERR_CRASH), CLI_EXIT_RUN);
	assert_int_equal(cli_exit_status(CUCO_ERR_SYSTEM), CLI_EXIT_INTERNAL);
	assert_int_equal(cli_exit_status(CUCO_ERR_NO_GPU), CLI_EXIT_NO_GPU);
	assert_int_equal(cli_exit_status(CLI_EXIT_INTERRUPTED), 130);
	assert_int_equal(cli_exit_status(9999), CLI_EXIT_INTERNAL);
}

static void test_env(void **state)
{
	struct demo d;
	char msg[256];

	(void)state;
	setenv("DEMO_NAME", "from-env", 1);
	assert_int_equal(SCAN(&d, msg, "go"), 0);
	assert_string_equal(d.env_name, "from-env");
	assert_int_equal(SCAN(&d, msg, "--name", "given"), 0);
	assert_string_equal(d.env_name, "given");
	setenv("DEMO_NAME", "", 1);
	assert_int_equal(SCAN(&d, msg, "go"), 0);
	assert_null(d.env_name);
	unsetenv("DEMO_NAME");
}

static void test_help(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	cli_flags_help(&demo, f);
	fclose(f);
	assert_string_equal(
	    text,
	    "usage: cuco demo WHAT [options]\n"
	    "\n"
	    "  WHAT       what to do\n"
	    "  --on       switch it on\n"
	    "  --n N      a small count\n"
	    "  --big N    a big count\n"
	    "  --x F      a fraction\n"
	    "  --name S   a name (or $DEMO_NAME)\n"
	    "  --mode M   fast, slow or safe\n"
	    "  --pick P   a or b\n"
	    "  --tag T    a tag (repeatable)\n"
	    "  --call V   handed to a function\n"
	    "\n"
	    "More:\n"
	    "  --level L  a level\n"
	    "  --a-rather-long-flag-name VALUE\n"
	    "             its help starts on the next line, and this sentence is long enough\n"
	    "             to wrap at the eightieth column\n"
	    "\n"
	    "A note, printed as it is.\n");
	free(text);
}

/* ---- every command: what --help lists is what the parser takes ---- */

struct seen {
	const struct cli_spec *spec;
	char listed[128][48];
	int nlisted;
};

/* A value the entry takes, as its kind reads it. */
static const char *sample(const struct cli_flag *f, char *buf, size_t len)
{
	switch (f->kind) {
	case CLI_INT:
		snprintf(buf, len, "%lld", f->lo);
		return buf;
	case CLI_DOUBLE:
		snprintf(buf, len, "%.17g", f->dlo);
		return buf;
	case CLI_ENUM:
	case CLI_CHOICE:
		return f->values[0];
	default:
		return "x";
	}
}

static int check_entry(const struct cli_flag *f, int listed, void *arg)
{
	struct seen *s = arg;
	void *args = calloc(1, s->spec->args_size);
	char value[64], msg[512];
	char *argv[] = {(char *)s->spec->name, (char *)f->name, NULL, NULL};
	int rc;

	assert_non_null(args);
	if (f->arg)
		argv[2] = (char *)sample(f, value, sizeof(value));
	rc = cli_flags_scan(s->spec, f->arg ? 3 : 2, argv, args, msg, sizeof(msg));
	if (f->kind == CLI_REFUSE || (!listed && !f->hidden)) {
		/* refused, or hidden by a refusal of that name before it */
		assert_int_equal(rc, CUCO_ERR_USAGE);
		if (strstr(msg, "unknown option") == msg)
			fail_msg("cuco %s: %s: %s", s->spec->name, f->name, msg);
	} else if (f->kind == CLI_CALL) {
		/* a handler may refuse the sample; the flag is known all the same */
		if (rc && strstr(msg, "unknown option") == msg)
			fail_msg("cuco %s: %s: %s", s->spec->name, f->name, msg);
	} else if (rc) {
		fail_msg("cuco %s %s %s: %s", s->spec->name, f->name, argv[2] ? argv[2] : "", msg);
	}
	if (f->kind == CLI_INT)
		assert_true(f->size == sizeof(int) || f->size == sizeof(int64_t));
	if (f->env && !strstr(f->help, f->env))
		fail_msg("cuco %s %s: its help does not name %s", s->spec->name, f->name, f->env);
	if (listed) {
		if (!f->help || !*f->help)
			fail_msg("cuco %s %s: listed without help", s->spec->name, f->name);
		assert_true(s->nlisted < 128);
		snprintf(s->listed[s->nlisted++], sizeof(s->listed[0]), "%s", f->name);
	}
	free(args);
	return 0;
}

static void test_every_command(void **state)
{
	(void)state;
	assert_true(cuco_ncommands >= 12);
	for (size_t c = 0; c < cuco_ncommands; c++) {
		const struct cli_spec *spec = cuco_commands[c].spec;
		struct seen s = {.spec = spec};
		char *text = NULL;
		size_t len = 0;
		int nhelp = 0;
		FILE *f;

		assert_non_null(spec);
		assert_string_equal(spec->name, cuco_commands[c].name);
		assert_int_equal(cli_flags_each(spec, check_entry, &s), 0);
		/* the flags --help lists: lines "  -NAME ..." (descriptions are indented further)
		 */
		f = open_memstream(&text, &len);
		assert_non_null(f);
		cli_flags_help(spec, f);
		fclose(f);
		assert_true(strncmp(text, "usage: cuco ", 12) == 0);
		assert_true(len > 0 && text[len - 1] == '\n');
		for (const char *line = text; *line; line += strcspn(line, "\n") + 1) {
			char name[48];
			int k;

			if (strncmp(line, "  -", 3))
				continue;
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(line + 2, " \n"),
			         line + 2);
			for (k = 0; k < s.nlisted && strcmp(s.listed[k], name); k++)
				;
			if (k == s.nlisted)
				fail_msg("cuco %s --help lists %s, which the parser does not take",
				         spec->name, name);
			nhelp++;
		}
		/* every flag taken (and not hidden) is listed, once */
		if (nhelp != s.nlisted)
			fail_msg("cuco %s: --help lists %d flags, the parser takes %d", spec->name,
			         nhelp, s.nlisted);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),         cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_env),           cmocka_unit_test(test_help),
	    cmocka_unit_test(test_every_command), cmocka_unit_test(test_did_you_mean),
	    cmocka_unit_test(test_exit_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
