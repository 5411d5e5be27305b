/*
 * test_hostile_tree.c - a candidate leaves in its private directory what
 * makes removing it dangerous: a tree 2100 directories deep (a recursion with
 * a path buffer per level overflowed cuco's stack, on every --resume too),
 * links to folders outside it (never followed), folders it closed
 * (mode 000). cuco removes the directory whole, and nothing outside it.
 */
#define _GNU_SOURCE /* O_DIRECTORY, openat */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <fcntl.h>

#include "assert_text.h"
#include "hostile.h"

#define DEEP 2100

static char fast[64]; /* a tmpfs folder when there is one: a slow disk takes ms per directory */

static int setup(void **state)
{
	(void)state;
	snprintf(fast, sizeof(fast), "/dev/shm/cuco-hostile-tree-XXXXXX");
	if (!mkdtemp(fast))
		snprintf(fast, sizeof(fast), "/tmp");
	else
		setenv("TMPDIR", fast, 1); /* the runs' private directories there too */
	return hostile_setup("tree");
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	if (strcmp(fast, "/tmp"))
		cuco_proc_remove_tree(fast);
	return 0;
}

/* A chain of DEEP directories "d" under dir, through descriptors (deeper than PATH_MAX). */
static void make_deep(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	assert_true(fd >= 0);
	for (int i = 0; i < DEEP; i++) {
		int next;

		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		assert_true(next >= 0);
		if (i % 500 == 0) /* a file now and then, and a closed folder */
			assert_int_equal(mkdirat(fd, "closed", 0), 0);
		close(fd);
		fd = next;
	}
	close(fd);
}

static void test_deep_tree_links_closed(void **state)
{
	char victim[160], file[200], tree[160], p[256];

	(void)state;
	hostile_path("victim", victim, sizeof(victim));
	snprintf(tree, sizeof(tree), "%s/cuco-run.deep.%d", fast, (int)getpid());
	assert_int_equal(cuco_mkdir_p(victim), 0);
	snprintf(file, sizeof(file), "%s/keep", victim);
	hostile_write(file, "KEEP", 0644);
	assert_int_equal(cuco_mkdir_p(tree), 0);
	make_deep(tree);
	snprintf(p, sizeof(p), "%s/to-victim", tree);
	assert_int_equal(symlink(victim, p), 0);
	snprintf(p, sizeof(p), "%s/to-file", tree);
	assert_int_equal(symlink(file, p), 0);
	cuco_proc_remove_tree(tree);
	assert_false(cuco_file_exists(tree));
	assert_true(cuco_file_exists(file));
	/* the directory itself a link: the link goes, not its target */
	assert_int_equal(symlink(victim, tree), 0);
	cuco_proc_remove_tree(tree);
	assert_int_equal(access(tree, F_OK), -1);
	assert_true(cuco_file_exists(file));
}

/* Through cuco: a harness run whose candidate leaves the deep tree in its directory. */
static void test_run_leaves_deep_tree(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	struct cuco_strbuf d = CUCO_STRBUF_INIT;
	char script[4096];

	(void)state;
	for (int i = 0; i < 400; i++)
		cuco_strbuf_adds(&d, i ? "/d" : "d");
	snprintf(script, sizeof(script),
	         "pwd >&2\nfor i in 1 2; do mkdir -p %s && cd -P %s || exit 1; done\n"
	         "chmod 000 . ..\necho '" HOSTILE_HONEST(0, 1) "' >&3",
	         d.buf, d.buf);
	if (hostile_run(script, NULL, &res, &err))
		fail_msg("%s\n%s", err.msg, res.log.buf);
	assert_non_null(hostile_result(&res, "cand"));
	{
		char dir[256];
		snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(res.log.buf, "\n"), res.log.buf);
		assert_contains(dir, "/cuco-run.");
		assert_false(cuco_file_exists(dir));
	}
	cuco_run_result_release(&res);
	cuco_strbuf_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deep_tree_links_closed),
	    cmocka_unit_test(test_run_leaves_deep_tree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
