/*
 * test_hostile_show.c - a candidate's text aimed at the terminal of whoever
 * reads it with `cuco show`: escape sequences (screen clear, the window
 * title, OSC 52 writing the clipboard), a carriage return that hides a line,
 * C1 controls (U+009B is CSI to a UTF-8 terminal), bidirectional overrides
 * that reorder what is shown, bytes that are not UTF-8; in the code, the
 * error, the flags, the logs and the name. None reaches the terminal as it
 * is; `--code` into a pipe stays verbatim (cuco eval reads it).
 */
#define _GNU_SOURCE /* posix_openpt, ptsname */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>

#include "assert_text.h"
#include "cli/commands.h"
#include "hostile.h"
#include "store/store.h"

/* What a candidate writes for the terminal. */
#define EVIL                                                                \
	"A\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\rB\xc2\x9b" \
	"31mC\xe2\x80\xae"                                                  \
	"D\xff\x7f"

static char db[160];

static int setup(void **state)
{
	struct cuco_store *s = NULL;
	struct cuco_run_rec r;
	struct cuco_program_rec p;
	struct cuco_eval_rec e;
	struct cuco_err err;
	int64_t run = 0, prog = 0, ev = 0;

	(void)state;
	if (hostile_setup("show"))
		return -1;
	hostile_path("show.db", db, sizeof(db));
	if (cuco_store_open(db, &s, &err))
		return -1;
	cuco_run_rec_init(&r);
	r.kind = "evolve";
	r.workload = "wl";
	if (cuco_store_run_begin(s, &r, &run, &err))
		return -1;
	memset(&p, 0, sizeof(p));
	p.run_id = run;
	p.workload = "wl";
	p.name = "cand" EVIL;
	p.origin = "candidate";
	p.code = "int x; // " EVIL "\n";
	p.flags = "flag " EVIL;
	p.island = p.generation = CUCO_STORE_NO_INT;
	if (cuco_store_program_add(s, &p, &prog, &err))
		return -1;
	cuco_eval_rec_init(&e);
	e.program_id = prog;
	e.run_id = run;
	e.status = "wrong";
	e.stage_reached = "verify";
	e.error = "error " EVIL;
	e.compile_log = "compile " EVIL;
	e.run_log = "run " EVIL;
	if (cuco_store_eval_add(s, &e, &ev, &err))
		return -1;
	cuco_store_close(s);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* Nothing a terminal acts on, in text meant for a terminal. */
static void assert_inert(const char *out)
{
	for (const unsigned char *c = (const unsigned char *)out; *c; c++)
		if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f || *c == 0xff)
			fail_msg("byte 0x%02x reached the terminal at %zu in:\n%s", *c,
			         (size_t)(c - (const unsigned char *)out), out);
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strstr(out, "\xe2\x80\xae"));
}

/* cmd_show with args, its stdout onto fd (a file or a terminal); its code. */
static int show_onto(int fd, const char *a1, const char *a2, const char *a3)
{
	char *argv[] = {"show", (char *)a1, (char *)a2, "--store", db, (char *)a3, NULL};
	int argc = a3 ? 6 : 5, saved, rc;

	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	rc = cmd_show(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return rc;
}

/* cmd_show's stdout into out, through a file. */
static int show(struct cuco_strbuf *out, const char *a1, const char *a2, const char *a3)
{
	char path[160];
	int fd, rc;

	hostile_path("out.txt", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	rc = show_onto(fd, a1, a2, a3);
	close(fd);
	cuco_strbuf_reset(out);
	assert_int_equal(cuco_strbuf_read_file(out, path), 0);
	return rc;
}

static void test_show_escapes(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(show(&out, "evaluation", "1", "--logs"), 0);
	assert_contains(out.buf, "run A\\x1b[2J\\x1b]0;owned\\x07");
	assert_contains(out.buf, "\\x0dB\\u{009b}31mC\\u{202e}D\\xff\\x7f");
	assert_inert(out.buf);
	assert_int_equal(show(&out, "program", "1", NULL), 0);
	assert_contains(out.buf, "flag: flag A\\x1b[2J");
	assert_inert(out.buf);
	assert_int_equal(show(&out, "run", "1", NULL), 0);
	assert_inert(out.buf);
	assert_int_equal(show(&out, "evaluation", "1", "--json"), 0);
	assert_inert(out.buf);
	for (const unsigned char *c = (const unsigned char *)out.buf; *c; c++)
		assert_true(*c < 0x80); /* JSON: all of it escaped to ASCII */
	/* the code into a file: verbatim, as cuco eval reads it */
	assert_int_equal(show(&out, "program", "1", "--code"), 0);
	assert_string_equal(out.buf, "int x; // " EVIL "\n");
	cuco_strbuf_release(&out);
}

/* --code onto a terminal (a pseudo-terminal here): made safe. */
static void test_show_code_on_terminal(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
	struct pollfd pfd;
	char buf[4096];
	ssize_t k;

	(void)state;
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		print_message("no pseudo-terminal here: skipped\n");
		skip();
	}
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	assert_int_equal(show_onto(slave, "program", "1", "--code"), 0);
	close(slave);
	pfd.fd = master;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, 200) > 0 && (k = read(master, buf, sizeof(buf))) > 0)
		cuco_strbuf_add(&out, buf, (size_t)k);
	close(master);
	assert_contains(out.buf, "int x; // A\\x1b[2J");
	for (char *c = out.buf; *c; c++) /* the terminal's line discipline adds \r before \n */
		if (*c == '\r' && c[1] == '\n')
			*c = ' ';
	assert_inert(out.buf);
	cuco_strbuf_release(&out);
}

/* The escaping itself: valid UTF-8 stays, all else is written out. */
static void test_printable(void **state)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	(void)state;
	cuco_strbuf_add_printable(&sb, "ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\ttab\n");
	assert_string_equal(sb.buf, "ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\ttab\n");
	cuco_strbuf_reset(&sb);
	/* overlong, surrogate, truncated, stray continuation, beyond U+10FFFF */
	cuco_strbuf_add_printable(&sb, "\xc0\xaf|\xed\xa0\x80|\xe2\x82|\x80|\xf4\x90\x80\x80");
	assert_string_equal(sb.buf,
	                    "\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x82|\\x80|\\xf4\\x90\\x80\\x80");
	cuco_strbuf_reset(&sb);
	cuco_strbuf_add_printable(&sb, "\xe2\x81\xa6x\xe2\x81\xa9");
	assert_string_equal(sb.buf, "\\u{2066}x\\u{2069}");
	cuco_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_show_escapes),
	    cmocka_unit_test(test_show_code_on_terminal),
	    cmocka_unit_test(test_printable),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
