/* test_cli_progress.c - the time left on `cuco evolve`'s live line (src/cli/evolve_progress.c):
 * by the budget that ends the run first, at the rate seen so far, unknown before a rate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/evolve_progress.h"

static struct cuco_evolve_progress at(int evaluated, int generation, int generations)
{
	struct cuco_evolve_progress p;

	memset(&p, 0, sizeof(p));
	p.evaluated = evaluated;
	p.generation = generation;
	p.generations = generations;
	return p;
}

static void test_left(void **state)
{
	struct cli_evolve_clock c = {.t0 = 0, .ev0 = 0, .gen0 = 0};
	struct cuco_evolve_progress p;

	(void)state;
	/* no rate yet, no budget of time: unknown */
	p = at(0, 0, 20);
	assert_true(cli_evolve_clock_left(&c, &p, 10) < 0);
	/* 2 of 20 generations in 60 s: 18 more at 30 s each */
	p = at(16, 2, 20);
	assert_true(cli_evolve_clock_left(&c, &p, 60) == 540);
	/* --budget-evals 32: 16 more at 16 per minute ends first */
	c.budget_evals = 32;
	assert_true(cli_evolve_clock_left(&c, &p, 60) == 60);
	/* --budget-minutes 1.5 ends sooner still; past it: 0 */
	c.budget_minutes = 1.5;
	assert_true(cli_evolve_clock_left(&c, &p, 60) == 30);
	assert_true(cli_evolve_clock_left(&c, &p, 120) == 0);
	/* a resumed run counts its rate from where this process began */
	c.budget_minutes = 0;
	c.ev0 = 10;
	c.gen0 = 1;
	p = at(14, 2, 20);
	assert_true(cli_evolve_clock_left(&c, &p, 40) == 180);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_left)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
