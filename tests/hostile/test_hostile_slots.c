/*
 * test_hostile_slots.c - a candidate in one GPU slot looks for cuco's own
 * temporary files (the slots' outcome files) in $TMPDIR, /tmp and the state
 * directory and swaps each for a symbolic link to a file it may not write
 * (the store, here a stand-in): cuco must never write through the link. The
 * outcomes travel in files without a name, so there is nothing to swap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>

#include "assert_text.h"
#include "hostile.h"
#include "search/slots.h"

static char protected_file[160], tmpdir[160];

static int setup(void **state)
{
	(void)state;
	if (hostile_setup("slots"))
		return -1;
	hostile_path("store.db", protected_file, sizeof(protected_file));
	hostile_path("tmp", tmpdir, sizeof(tmpdir));
	setenv("TMPDIR", tmpdir, 1);
	return cuco_mkdir_p(tmpdir) || cuco_write_file(protected_file, "STORE", 5) ||
	       chmod(protected_file, 0444);
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* Every file in dir whose name starts with "cuco" becomes a link to the protected file. */
static void swap_all(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char p[512];

		if (strncmp(e->d_name, "cuco", 4))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (unlink(p) == 0 && symlink(protected_file, p))
			print_message("cannot link %s\n", p);
	}
	if (d)
		closedir(d);
}

/* The candidate: runs in its slot's process (as a harness a slot starts would), swaps. */
static int hostile_batch(void *ctx, const struct cuco_candidate *c, int n,
                         struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	(void)ctx;
	(void)c;
	(void)err;
	swap_all(tmpdir);
	swap_all("/tmp");
	swap_all(getenv("CUCO_STATE"));
	for (int i = 0; i < n; i++) {
		outs[i].code = CUCO_OK;
		outs[i].fitness = 1.5;
	}
	return CUCO_OK;
}

static void test_slot_files_swapped(void **state)
{
	struct cuco_slots s;
	struct cuco_candidate c[4];
	struct cuco_eval_outcome outs[4];
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;

	(void)state;
	memset(c, 0, sizeof(c));
	cuco_slots_plan(4, 1, 0, NULL, &s);
	assert_int_equal(s.n, 4);
	for (int i = 0; i < 4; i++)
		cuco_eval_outcome_init(&outs[i]);
	cuco_err_clear(&err);
	assert_int_equal(cuco_slots_run(&s, hostile_batch, NULL, c, 4, outs, &err), CUCO_OK);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(outs[i].code, CUCO_OK);
		assert_true(outs[i].fitness == 1.5);
		cuco_eval_outcome_release(&outs[i]);
	}
	assert_int_equal(cuco_strbuf_read_file(&sb, protected_file), 0);
	assert_string_equal(sb.buf, "STORE");
	cuco_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slot_files_swapped),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
