/* test_search_slots.c - GPU slots: the plan, groups run at once in forked processes on
 * disjoint GPUs, outcomes back in order, failures named. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "search/slots.h"

static void test_plan(void **state)
{
	struct cuco_slots s;

	(void)state;
	cuco_slots_plan(2, 2, 0, NULL, &s); /* the lent 2-GPU machine: one slot, environment kept */
	assert_int_equal(s.n, 1);
	assert_string_equal(s.devices[0], "");
	cuco_slots_plan(4, 2, 0, NULL, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.devices[0], "0,1");
	assert_string_equal(s.devices[1], "2,3");
	cuco_slots_plan(8, 2, 0, NULL, &s);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.devices[3], "6,7");
	cuco_slots_plan(8, 4, 0, NULL, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.devices[1], "4,5,6,7");
	cuco_slots_plan(8, 2, 3, NULL, &s); /* capped */
	assert_int_equal(s.n, 3);
	cuco_slots_plan(3, 2, 0, NULL, &s); /* the odd GPU stays idle */
	assert_int_equal(s.n, 1);
	cuco_slots_plan(0, 2, 0, NULL, &s);
	assert_int_equal(s.n, 1);
	cuco_slots_plan(1, 2, 0, NULL, &s);
	assert_int_equal(s.n, 1);
	/* the caller's CUDA_VISIBLE_DEVICES names the GPUs */
	cuco_slots_plan(4, 2, 0, "4,5,6,7", &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.devices[0], "4,5");
	assert_string_equal(s.devices[1], "6,7");
	cuco_slots_plan(4, 2, 0, "GPU-a1,GPU-b2,GPU-c3", &s); /* fewer listed than counted */
	assert_int_equal(s.n, 1);
}

struct fake {
	char dir[64];
	int fail_devices; /* the group on GPUs "2,3" fails (1) or dies (2) */
};

/* Wait up to 10 s for path to exist. */
static int wait_for(const char *path)
{
	struct stat st;
	for (int i = 0; i < 1000; i++) {
		if (stat(path, &st) == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/*
 * Each group announces itself in dir and then waits for every other group's
 * announcement: it can only succeed when all groups run at once. Outcomes
 * carry the group's CUDA_VISIBLE_DEVICES and the candidate's position.
 */
static int fake_batch(void *ctx, const struct cuco_candidate *c, int n,
                      struct cuco_eval_outcome *outs, struct cuco_err *err)
{
	struct fake *f = ctx;
	const char *dev = getenv("CUDA_VISIBLE_DEVICES");
	char mine[128], other[128];
	FILE *fp;

	if (!dev)
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "no CUDA_VISIBLE_DEVICES");
	snprintf(mine, sizeof(mine), "%s/%s", f->dir, dev);
	if (!(fp = fopen(mine, "w")))
		return cuco_err_set(err, CUCO_ERR_IO, "%s", mine);
	fclose(fp);
	if (f->fail_devices == 1 && !strcmp(dev, "2,3"))
		return cuco_err_set(err, CUCO_ERR_NO_GPU, "no GPU answered");
	if (f->fail_devices == 2 && !strcmp(dev, "2,3"))
		abort();
	snprintf(other, sizeof(other), "%s/%s", f->dir, strcmp(dev, "0,1") ? "0,1" : "2,3");
	if (!wait_for(other))
		return cuco_err_set(err, CUCO_ERR_TIMEOUT, "group %s ran alone", dev);
	for (int i = 0; i < n; i++) {
		outs[i].code = CUCO_OK;
		outs[i].fitness = atof(c[i].name);
		outs[i].median_us = 100.0 / outs[i].fitness;
		snprintf(outs[i].gpu, sizeof(outs[i].gpu), "%s", dev);
		outs[i].error = i == 0 ? strdup("first of its group") : NULL;
	}
	return CUCO_OK;
}

static void setup_fake(struct fake *f, int fail)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/cuco-slots-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->fail_devices = fail;
}

static void cleanup_fake(struct fake *f)
{
	char p[160];
	snprintf(p, sizeof(p), "%s/0,1", f->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/2,3", f->dir);
	unlink(p);
	rmdir(f->dir);
}

static void test_run_two_slots(void **state)
{
	static const char *const names[] = {"1", "2", "3", "4", "5"};
	struct cuco_candidate c[5];
	struct cuco_eval_outcome outs[5];
	struct cuco_slots s;
	struct cuco_err err;
	struct fake f;

	(void)state;
	setup_fake(&f, 0);
	cuco_slots_plan(4, 2, 0, NULL, &s);
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 5; i++) {
		c[i].name = names[i];
		cuco_eval_outcome_init(&outs[i]);
	}
	if (cuco_slots_run(&s, fake_batch, &f, c, 5, outs, &err) != CUCO_OK)
		fail_msg("%s", err.msg);
	for (int i = 0; i < 5; i++) {
		/* in order; the first group (3 candidates) on GPUs 0,1, the rest on 2,3 */
		assert_int_equal(outs[i].code, CUCO_OK);
		assert_true(outs[i].fitness == (double)(i + 1));
		assert_true(outs[i].median_us == 100.0 / (i + 1));
		assert_string_equal(outs[i].gpu, i < 3 ? "0,1" : "2,3");
		assert_true(isnan(outs[i].rel_err)); /* NaN survives the trip */
		if (i == 0 || i == 3)
			assert_string_equal(outs[i].error, "first of its group");
		else
			assert_null(outs[i].error);
		cuco_eval_outcome_release(&outs[i]);
	}
	cleanup_fake(&f);
}

static void test_run_failures(void **state)
{
	static const char *const names[] = {"1", "2", "3", "4"};
	struct cuco_candidate c[4];
	struct cuco_eval_outcome outs[4];
	struct cuco_slots s;
	struct cuco_err err;
	struct fake f;

	(void)state;
	cuco_slots_plan(4, 2, 0, NULL, &s);
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 4; i++)
		c[i].name = names[i];
	for (int mode = 1; mode <= 2; mode++) {
		setup_fake(&f, mode);
		for (int i = 0; i < 4; i++)
			cuco_eval_outcome_init(&outs[i]);
		/* the healthy group succeeds; the other group's failure is the result */
		int rc = cuco_slots_run(&s, fake_batch, &f, c, 4, outs, &err);
		if (mode == 1) {
			assert_int_equal(rc, CUCO_ERR_NO_GPU);
			assert_string_equal(err.msg, "slot 1 (GPUs 2,3): no GPU answered");
		} else {
			assert_int_equal(rc, CUCO_ERR_SYSTEM);
			assert_string_equal(err.msg, "slot 1 (GPUs 2,3) died: signal 6");
		}
		for (int i = 0; i < 4; i++)
			cuco_eval_outcome_release(&outs[i]);
		cleanup_fake(&f);
	}
}

/* One slot or one candidate: no fork, the environment as it is. */
static void test_run_direct(void **state)
{
	struct cuco_candidate c = {.name = "7"};
	struct cuco_eval_outcome out;
	struct cuco_slots s;
	struct cuco_err err;
	struct fake f;

	(void)state;
	setup_fake(&f, 0);
	cuco_slots_plan(2, 2, 0, NULL, &s);
	cuco_eval_outcome_init(&out);
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_int_equal(cuco_slots_run(&s, fake_batch, &f, &c, 1, &out, &err), CUCO_ERR_SYSTEM);
	assert_string_equal(err.msg, "no CUDA_VISIBLE_DEVICES");
	cuco_eval_outcome_release(&out);
	cleanup_fake(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_run_two_slots),
	    cmocka_unit_test(test_run_failures),
	    cmocka_unit_test(test_run_direct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
