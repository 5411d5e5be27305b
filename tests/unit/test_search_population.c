/* test_search_population.c - islands: selection statistics, archive, migration, trim, stagnation,
 * schedule, novelty. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "search/novelty.h"
#include "search/operator.h"
#include "search/population.h"
#include "search/rng.h"

/* A member with a directive whose comm_ctas is ctas (so members differ). */
static int add(struct cuco_population *p, int64_t id, int island, double fitness, int correct,
               long long ctas)
{
	struct cuco_member m;
	struct cuco_err err;
	char json[256];

	memset(&m, 0, sizeof(m));
	snprintf(json, sizeof(json),
	         "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"grid\","
	         "\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":%lld}}",
	         ctas);
	if (cuco_directive_from_json(json, &m.d, &err))
		fail_msg("%s", err.msg);
	m.program_id = id;
	m.island = island;
	m.fitness = fitness;
	m.correct = correct;
	m.median_us = 1000.0 / (fitness > 0 ? fitness : 1);
	return cuco_population_add(p, &m);
}

/* Over many draws the fitter member is chosen more often, in rank order. */
static void test_selection_prefers_fitness(void **state)
{
	struct cuco_population p;
	struct cuco_rng rng;
	int hist[5] = {0};

	assert_int_equal(cuco_population_init(&p, 1, 40, 10), 0);
	for (int i = 0; i < 5; i++)
		add(&p, 10 + i, 0, 1.0 + 0.1 * i, 1, 8 + i); /* member 4 is the fittest */
	add(&p, 99, 0, 0, 0, 99);                            /* a failure: never a parent */
	cuco_rng_seed(&rng, 5);
	for (int i = 0; i < 20000; i++) {
		int k = cuco_island_pick_parent(&p, 0, 3.0, &rng);
		assert_true(k >= 0 && k < 5);
		hist[k]++;
	}
	for (int i = 0; i < 4; i++)
		assert_true(hist[i + 1] > hist[i]);
	/* lambda 3: the best is drawn about e^3 times as often as the worst */
	assert_true(hist[4] > 12 * hist[0] && hist[4] < 30 * hist[0]);
	/* lambda 0 is uniform */
	memset(hist, 0, sizeof(hist));
	for (int i = 0; i < 20000; i++)
		hist[cuco_island_pick_parent(&p, 0, 0.0, &rng)]++;
	for (int i = 0; i < 5; i++)
		assert_true(hist[i] > 3400 && hist[i] < 4600);
	cuco_population_release(&p);
}

/* Four members of fitness 1, 2, 3, 6 (ranked 6, 3, 2, 1): each strategy's weights, best first. */
static void test_selection_strategies(void **state)
{
	struct cuco_population p;
	struct cuco_rng rng;
	int idx[8], n, hist[4] = {0};
	double w[8];

	(void)state;
	assert_int_equal(cuco_population_init(&p, 1, 40, 10), 0);
	add(&p, 1, 0, 1.0, 1, 8);
	add(&p, 2, 0, 2.0, 1, 16);
	add(&p, 3, 0, 3.0, 1, 24);
	add(&p, 4, 0, 6.0, 1, 32);
	assert_int_equal(cuco_selection_kind("power_law"), CUCO_SELECT_POWER_LAW);
	assert_int_equal(cuco_selection_kind("tournament"), -1);
	assert_string_equal(cuco_selection_name(CUCO_SELECT_BEST_OF_N), "best_of_n");

	p.sel.kind = CUCO_SELECT_POWER_LAW; /* (r + 1)^-2 */
	n = cuco_island_parent_weights(&p, 0, 2.0, idx, w, 8);
	assert_int_equal(n, 4);
	assert_int_equal(idx[0], 3);
	assert_float_equal(w[0], 1.0, 1e-12);
	assert_float_equal(w[1], 0.25, 1e-12);
	assert_float_equal(w[3], 1.0 / 16, 1e-12);

	p.sel.kind = CUCO_SELECT_WEIGHTED; /* median 2.5, mean deviation 1.5 */
	n = cuco_island_parent_weights(&p, 0, 1.0, idx, w, 8);
	assert_float_equal(w[0], 1.0 / (1.0 + exp(-3.5 / 1.5)), 1e-12);
	assert_float_equal(w[3], 1.0 / (1.0 + exp(1.5 / 1.5)), 1e-12);
	assert_true(w[0] > w[1] && w[1] > w[2] && w[2] > w[3]);

	p.sel.kind = CUCO_SELECT_BEST_OF_N; /* the best of 2 of 4: 7/16, 5/16, 3/16, 1/16 */
	p.sel.n = 2;
	n = cuco_island_parent_weights(&p, 0, 3.0, idx, w, 8);
	for (int r = 0; r < 4; r++)
		assert_float_equal(w[r], (7.0 - 2 * r) / 16, 1e-12);
	cuco_rng_seed(&rng, 3);
	for (int i = 0; i < 16000; i++)
		hist[cuco_island_pick_parent(&p, 0, 3.0, &rng) % 4]++;
	assert_true(hist[3] > 6400 && hist[3] < 7600 && hist[0] > 700 && hist[0] < 1300);

	p.sel.kind = CUCO_SELECT_BEAM; /* the best, always, children or not */
	p.m[3].nchildren = 50;
	for (int i = 0; i < 100; i++)
		assert_int_equal(cuco_island_pick_parent(&p, 0, 0.5, &rng), 3);
	cuco_population_release(&p);
}

/* A parent with many children is picked less often than one with none at the same rank. */
static void test_selection_child_penalty(void **state)
{
	struct cuco_population p;
	struct cuco_rng rng;
	int idx[4], n, hist[2] = {0};
	double w[4];

	assert_int_equal(cuco_population_init(&p, 1, 40, 10), 0);
	add(&p, 1, 0, 2.0, 1, 32);
	add(&p, 2, 0, 2.0, 1, 64); /* same fitness: same rank weight but for ties */
	p.m[0].nchildren = 9;
	n = cuco_island_parent_weights(&p, 0, 0.0, idx, w, 4);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		assert_true(idx[i] == 0 ? w[i] == 0.1 : w[i] == 1.0);
	cuco_rng_seed(&rng, 9);
	for (int i = 0; i < 11000; i++)
		hist[cuco_island_pick_parent(&p, 0, 0.0, &rng)]++;
	/* expected 1:10 */
	assert_true(hist[1] > 8 * hist[0] && hist[1] < 12 * hist[0]);
	/* with only failures on an island, failures are parents (the seed may fail) */
	add(&p, 3, 1 % p.nislands, 0, 0, 16);
	cuco_population_release(&p);
	assert_int_equal(cuco_population_init(&p, 1, 40, 10), 0);
	add(&p, 5, 0, 0, 0, 16);
	assert_int_equal(cuco_island_pick_parent(&p, 0, 3.0, &rng), 0);
	cuco_population_release(&p);
}

/* Archive: best first, bounded, correct only; inspirations: top-k plus the most different. */
static void test_archive_and_inspirations(void **state)
{
	struct cuco_population p;
	struct cuco_rng rng;
	int arch[16], n, insp[8];

	assert_int_equal(cuco_population_init(&p, 1, 40, 3), 0);
	add(&p, 1, 0, 1.0, 1, 32);
	add(&p, 2, 0, 1.5, 1, 48);
	add(&p, 3, 0, 3.0, 0, 56); /* failed: not elite whatever its number */
	add(&p, 4, 0, 1.2, 1, 64);
	add(&p, 5, 0, 1.4, 1, 72);
	n = cuco_island_archive(&p, 0, arch, 16);
	assert_int_equal(n, 3);
	assert_int_equal(p.m[arch[0]].program_id, 2);
	assert_int_equal(p.m[arch[1]].program_id, 5);
	assert_int_equal(p.m[arch[2]].program_id, 4);
	/* make member 0 (id 1) differ in placement too: the most diverse one */
	snprintf(p.m[0].d.dims[CUCO_DIM_PLACEMENT], CUCO_NAME_MAX, "stream_overlap");
	snprintf(p.m[0].d.dims[CUCO_DIM_GRANULARITY], CUCO_NAME_MAX, "chunk");
	cuco_rng_seed(&rng, 1);
	n = cuco_island_inspirations(&p, 0, arch[0], 2, 1, &rng, insp, 8);
	assert_int_equal(n, 3);
	assert_int_equal(p.m[insp[0]].program_id, 5);
	assert_int_equal(p.m[insp[1]].program_id, 4);
	assert_int_equal(p.m[insp[2]].program_id, 1);
	cuco_population_release(&p);
}

/* Ring migration: island i's best go to island i+1, choices made before any copy lands. */
/* A migration graph: parsed from ring, all or edges (bad ones refused), and followed. */
static void test_migration_graph(void **state)
{
	struct cuco_population p;
	unsigned links[CUCO_MAX_ISLANDS];
	char why[160];

	(void)state;
	assert_int_equal(cuco_migration_parse("ring", 3, links, why, sizeof(why)), 0);
	assert_int_equal(links[0] | links[1] | links[2], 0);
	assert_int_equal(cuco_migration_parse("all", 3, links, why, sizeof(why)), 0);
	assert_int_equal(links[0], 6);
	assert_int_equal(links[2], 3);
	assert_int_equal(cuco_migration_parse("0>3", 3, links, why, sizeof(why)), -1);
	assert_string_equal(why, "edge 0>3: islands are 0..2, no island sends to itself");
	assert_int_equal(cuco_migration_parse("1>1", 3, links, why, sizeof(why)), -1);
	assert_int_equal(cuco_migration_parse("0-1", 3, links, why, sizeof(why)), -1);
	assert_string_equal(why, "\"0-1\": not ring, all or edges like 0>1,1>2");

	/* a star out of island 0: its two best reach 1 and 2; 1 and 2 send nothing */
	assert_int_equal(cuco_population_init(&p, 3, 40, 10), 0);
	assert_int_equal(cuco_migration_parse("0>1,0>2", 3, p.links, why, sizeof(why)), 0);
	for (int isl = 0; isl < 3; isl++)
		for (int k = 0; k < 10; k++)
			add(&p, isl * 100 + k, isl, 1.0 + 0.01 * k + isl, 1, 8 + k);
	assert_int_equal(cuco_population_migrate(&p, 0.15), 4);
	for (int to = 1; to < 3; to++) {
		assert_true(cuco_population_find(&p, to, 9) >= 0);
		assert_true(cuco_population_find(&p, to, 8) >= 0);
	}
	assert_int_equal(cuco_population_find(&p, 0, 109), -1);
	assert_int_equal(cuco_population_find(&p, 2, 109), -1);
	cuco_population_release(&p);
}

static void test_migration_ring(void **state)
{
	struct cuco_population p;
	int moved;

	assert_int_equal(cuco_population_init(&p, 3, 40, 10), 0);
	for (int isl = 0; isl < 3; isl++)
		for (int k = 0; k < 10; k++) /* program ids isl*100 + k; fitness grows with k */
			add(&p, isl * 100 + k, isl, 1.0 + 0.01 * k + isl, 1, 8 + k);
	add(&p, 999, 0, 0, 0, 1); /* a failure on island 0: never migrates */
	/* rate 0.15 of 10 (11 on island 0) alive: ceil -> 2 each */
	moved = cuco_population_migrate(&p, 0.15);
	assert_int_equal(moved, 6);
	for (int isl = 0; isl < 3; isl++) {
		int from = (isl + 2) % 3;
		assert_true(cuco_population_find(&p, isl, from * 100 + 9) >= 0);
		assert_true(cuco_population_find(&p, isl, from * 100 + 8) >= 0);
		assert_int_equal(cuco_population_find(&p, isl, from * 100 + 7), -1);
		/* nothing went the other way round the ring */
		assert_int_equal(cuco_population_find(&p, isl, ((isl + 1) % 3) * 100 + 9), -1);
	}
	/* island 2 received from 1, and what 2 sent to 0 were its own, not the newcomers */
	assert_true(cuco_population_find(&p, 0, 209) >= 0);
	assert_int_equal(cuco_population_find(&p, 0, 109), -1);
	{
		int k = cuco_population_find(&p, 1, 9);
		assert_true(p.m[k].migrant);
		assert_int_equal(p.m[k].nchildren, 0);
		assert_true(p.m[k].fitness == 1.09);
	}
	/* a second migration skips programs already there and sends the next best */
	moved = cuco_population_migrate(&p, 0.15);
	assert_int_equal(moved, 6);
	assert_true(cuco_population_find(&p, 1, 7) >= 0);
	assert_int_equal(cuco_population_find(&p, 1, 999), -1);
	assert_int_equal(cuco_population_find(&p, 1, 209), -1); /* migrants stay put */
	/* one island: no migration */
	cuco_population_release(&p);
	assert_int_equal(cuco_population_init(&p, 1, 40, 10), 0);
	add(&p, 1, 0, 1, 1, 8);
	assert_int_equal(cuco_population_migrate(&p, 0.5), 0);
	cuco_population_release(&p);
}

/* Trim keeps the elite and drops failures first; stagnation counts generations without a new best.
 */
static void test_trim_and_stagnation(void **state)
{
	struct cuco_population p;
	int alive = 0;

	assert_int_equal(cuco_population_init(&p, 1, 4, 2), 0);
	add(&p, 1, 0, 1.0, 1, 8);
	add(&p, 2, 0, 0, 0, 9);
	add(&p, 3, 0, 2.0, 1, 10);
	add(&p, 4, 0, 0.5, 1, 11);
	add(&p, 5, 0, 0, 0, 12);
	add(&p, 6, 0, 1.5, 1, 13);
	assert_int_equal(cuco_population_end_generation(&p, 1), 1);
	for (int i = 0; i < p.n; i++)
		alive += p.m[i].alive;
	assert_int_equal(alive, 4);
	assert_false(p.m[1].alive); /* failures went first */
	assert_false(p.m[4].alive);
	assert_true(p.m[2].alive && p.m[5].alive); /* the elite stay */
	assert_int_equal(p.isl[0].best_program, 3);
	for (int g = 2; g <= 4; g++)
		assert_int_equal(cuco_population_end_generation(&p, g), 0);
	assert_int_equal(p.isl[0].stagnant, 3);
	assert_false(cuco_island_stagnating(&p, 0, 4));
	assert_int_equal(cuco_population_end_generation(&p, 5), 0);
	assert_true(cuco_island_stagnating(&p, 0, 4));
	assert_false(cuco_island_stagnating(&p, 0, 0));
	add(&p, 7, 0, 2.5, 1, 14); /* a new best ends the stagnation */
	assert_int_equal(cuco_population_end_generation(&p, 6), 1);
	assert_int_equal(p.isl[0].stagnant, 0);
	assert_false(cuco_island_stagnating(&p, 0, 4));
	cuco_population_release(&p);
}

/* Explore for ceil(fraction * generations) generations, then exploit; stagnation is bolder. */
static void test_schedule_switch(void **state)
{
	struct cuco_schedule s = {10, 0.4};
	struct cuco_phase_params pp;

	assert_int_equal(cuco_schedule_switch(&s), 5);
	for (int g = 1; g <= 4; g++)
		assert_int_equal(cuco_schedule_phase(&s, g), CUCO_PHASE_EXPLORE);
	for (int g = 5; g <= 10; g++)
		assert_int_equal(cuco_schedule_phase(&s, g), CUCO_PHASE_EXPLOIT);
	s.generations = 25; /* 10 explore generations */
	assert_int_equal(cuco_schedule_switch(&s), 11);
	assert_int_equal(cuco_schedule_phase(&s, 10), CUCO_PHASE_EXPLORE);
	assert_int_equal(cuco_schedule_phase(&s, 11), CUCO_PHASE_EXPLOIT);
	s.explore_fraction = 0;
	assert_int_equal(cuco_schedule_phase(&s, 1), CUCO_PHASE_EXPLOIT);
	s.explore_fraction = 1;
	assert_int_equal(cuco_schedule_phase(&s, 25), CUCO_PHASE_EXPLORE);
	s.explore_fraction = 0.4;
	cuco_schedule_params(&s, 3, 0, &pp);
	assert_int_equal(pp.phase, CUCO_PHASE_EXPLORE);
	assert_true(pp.changes_min >= 2 && !pp.use_bias);
	{
		struct cuco_phase_params ex;
		cuco_schedule_params(&s, 20, 0, &ex);
		assert_int_equal(ex.phase, CUCO_PHASE_EXPLOIT);
		assert_int_equal(ex.changes_min, 1);
		assert_true(ex.use_bias);
		assert_true(ex.crossover_rate < pp.crossover_rate);
		assert_true(ex.lambda > pp.lambda);
		cuco_schedule_params(&s, 20, 1, &ex);
		assert_true(ex.reseed && ex.changes_min > pp.changes_min);
	}
	assert_string_equal(cuco_phase_name(CUCO_PHASE_EXPLOIT), "exploit");
}

/* The fraction counts the generations an evaluation budget lets the run reach. */
static void test_schedule_horizon(void **state)
{
	struct cuco_schedule s = {0, 0.4};

	assert_int_equal(cuco_schedule_horizon(50, 0, 8), 50);   /* no budget */
	assert_int_equal(cuco_schedule_horizon(50, 200, 8), 25); /* 200 / 8 */
	assert_int_equal(cuco_schedule_horizon(50, 201, 8), 26); /* a partial generation counts */
	assert_int_equal(cuco_schedule_horizon(20, 200, 8), 20); /* --generations ends it first */
	assert_int_equal(cuco_schedule_horizon(20, 5, 8), 1);
	assert_int_equal(cuco_schedule_horizon(20, 200, 0), 20);
	s.generations = cuco_schedule_horizon(50, 200, 8);
	assert_int_equal(cuco_schedule_switch(&s), 11); /* 10 generations, 80 evaluations explore */
	(void)state;
}

static const char prog_a[] = "// cuco-directive: {}\n"
                             "__global__ void k(float *x, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) x[i] = x[i] * 2.0f + 1.0f;\n"
                             "}\n"
                             "int launch(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); "
                             "return 0; }\n"
                             "static int helper(int a, int b) { return a * b + a - b; }\n";

/* Exact and near duplicates are rejected; different code, or another design point, is not. */
static void test_novelty_filter(void **state)
{
	struct cuco_novelty nov;
	double sim;
	int64_t match;
	const char *dirA = "{\"placement\":\"sequential\"}",
	           *dirB = "{\"placement\":\"specialized\"}";
	/* whitespace and comments changed, one constant changed: near */
	const char near[] = "// cuco-directive: {}\n"
	                    "// a comment that was not there\n"
	                    "__global__ void k(float *x, int n)\n{\n"
	                    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	                    "    if (i < n) x[i] = x[i] * 2.0f + 1.0f;\n"
	                    "}\n"
	                    "int launch(float *x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); "
	                    "return 0; }\n"
	                    "static int helper(int a, int b) { return a * b + a - b; }\n";
	const char other[] =
	    "// cuco-directive: {}\n"
	    "#include <nccl.h>\n"
	    "int run(ncclComm_t c, void *buf, size_t bytes, cudaStream_t s) {\n"
	    "  for (int r = 0; r < 8; r++) ncclSend(buf, bytes, ncclChar, r, c, s);\n"
	    "  return cudaStreamSynchronize(s);\n"
	    "}\n";

	cuco_novelty_init(&nov, 0.9);
	assert_int_equal(cuco_novelty_check(&nov, prog_a, dirA, &sim, &match), CUCO_NOVEL);
	cuco_novelty_add(&nov, prog_a, dirA, 7);
	assert_int_equal(cuco_novelty_check(&nov, prog_a, dirA, &sim, &match), CUCO_DUP_EXACT);
	assert_true(sim == 1.0);
	assert_int_equal(match, 7);
	/* exact is exact whatever the directive says */
	assert_int_equal(cuco_novelty_check(&nov, prog_a, dirB, NULL, NULL), CUCO_DUP_EXACT);
	assert_true(cuco_code_similarity(prog_a, near) == 1.0); /* tokens identical */
	assert_int_equal(cuco_novelty_check(&nov, near, dirA, &sim, &match), CUCO_DUP_NEAR);
	assert_int_equal(match, 7);
	/* a renamed variable in one place: still near */
	{
		char renamed[sizeof(prog_a) + 8];
		const char *at = strstr(prog_a, "a * b + a - b");
		snprintf(renamed, sizeof(renamed), "%.*sa * c + a - b%s", (int)(at - prog_a),
		         prog_a, at + strlen("a * b + a - b"));
		sim = cuco_code_similarity(prog_a, renamed);
		assert_true(sim > 0.9 && sim < 1.0);
		assert_int_equal(cuco_novelty_check(&nov, renamed, dirA, NULL, NULL),
		                 CUCO_DUP_NEAR);
	}
	/* the same near code at another design point is a different program */
	assert_int_equal(cuco_novelty_check(&nov, near, dirB, &sim, &match), CUCO_NOVEL);
	assert_int_equal(match, 0);
	/* different code at the same point is new */
	assert_true(cuco_code_similarity(prog_a, other) < 0.2);
	assert_int_equal(cuco_novelty_check(&nov, other, dirA, &sim, NULL), CUCO_NOVEL);
	assert_true(sim < 0.2);
	/* a threshold above 1 keeps only the exact test */
	cuco_novelty_release(&nov);
	cuco_novelty_init(&nov, 1.01);
	cuco_novelty_add(&nov, prog_a, dirA, 1);
	assert_int_equal(cuco_novelty_check(&nov, near, dirA, NULL, NULL), CUCO_NOVEL);
	cuco_novelty_release(&nov);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_selection_prefers_fitness),
	    cmocka_unit_test(test_selection_child_penalty),
	    cmocka_unit_test(test_selection_strategies),
	    cmocka_unit_test(test_archive_and_inspirations),
	    cmocka_unit_test(test_migration_ring),
	    cmocka_unit_test(test_migration_graph),
	    cmocka_unit_test(test_trim_and_stagnation),
	    cmocka_unit_test(test_schedule_switch),
	    cmocka_unit_test(test_schedule_horizon),
	    cmocka_unit_test(test_novelty_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
