/*
 * test_moe_layer.c - the MoE layer's host logic (cuco_dev/moe_plan.h, plain
 * C): shape checks, the router's per-expert counts (including experts
 * that get no token and the cap at T), the slot list and token permutation,
 * the plan's rows and offsets on every rank, determinism; the template's
 * nvshmem realisation (its narrowed space, the shipped nvshmem variants);
 * and an evolution over the shipped moe_layer template with the fake
 * evaluator.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../device/include/cuco_dev/moe_plan.h"
#include "program/directive.h"
#include "program/realize.h"
#include "search/evolve.h"
#include "search/operator.h"
#include "store/store.h"
#include "util/strbuf.h"

#include "search_fake.h"
#include "search_workload.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define TEMPLATE CUCO_SOURCE_DIR "/share/realize/moe_layer.cu.in"

static int dims(struct cuco_moe_dims *d, int T, int EL, int topk, int experts, int zipf, int hot,
                int R)
{
	char err[256];
	int rc =
	    cuco_moe_dims_init(d, T, 7168, 2048, EL, topk, experts, zipf, hot, R, err, sizeof(err));

	if (rc)
		fprintf(stderr, "%s\n", err);
	return rc;
}

/* CUCo's four splits: top-1, expert 0 gets `hot` of each source's T, expert 1 the rest. */
static void test_counts_cuco(void **state)
{
	static const int hot[] = {2731, 3072, 3277, 3413};
	struct cuco_moe_dims d;
	int c[CUCO_MOE_MAX_EXPERTS];

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(dims(&d, 4096, 1, 1, 2, 1, hot[i], 2), 0);
		assert_int_equal(d.E, 2);
		assert_int_equal(d.k, 1);
		cuco_moe_counts(&d, c);
		assert_int_equal(c[0], hot[i]);
		assert_int_equal(c[1], 4096 - hot[i]);
	}
	/* one rank, one expert: every token to it */
	assert_int_equal(dims(&d, 4096, 1, 1, 2, 1, 3072, 1), 0);
	cuco_moe_counts(&d, c);
	assert_int_equal(d.E, 1);
	assert_int_equal(c[0], 4096);
}

/* The top-k scaled to the simulated expert count. */
static void test_topk_scaled(void **state)
{
	struct cuco_moe_dims d;

	(void)state;
	assert_int_equal(dims(&d, 4096, 4, 8, 256, 1, 4096, 2), 0);
	assert_int_equal(d.k, 1); /* 8 x 8 / 256 < 1 */
	assert_int_equal(dims(&d, 4096, 8, 8, 256, 1, 4096, 8), 0);
	assert_int_equal(d.k, 2); /* 8 x 64 / 256 */
	assert_int_equal(dims(&d, 4096, 8, 8, 16, 1, 4096, 2), 0);
	assert_int_equal(d.k, 8); /* capped at topk */
	assert_int_equal(dims(&d, 4096, 1, 8, 1, 1, 4096, 2), 0);
	assert_int_equal(d.k, 2); /* capped at E */
}

/* Sums, the cap at T, Zipf order, and an expert that gets no token. */
static void test_counts_zipf_and_empty(void **state)
{
	struct cuco_moe_dims d;
	int c[CUCO_MOE_MAX_EXPERTS], zero = 0;
	long long sum = 0;

	(void)state;
	/* 16 experts, 8 tokens, steep skew: the tail gets nothing */
	assert_int_equal(dims(&d, 8, 8, 1, 16, 300, 8, 2), 0);
	cuco_moe_counts(&d, c);
	for (int e = 0; e < d.E; e++) {
		sum += c[e];
		zero += c[e] == 0;
		assert_true(c[e] <= d.T);
		if (e)
			assert_true(c[e] <= c[e - 1]);
	}
	assert_int_equal(sum, 8);
	assert_true(zero > 0);
	assert_int_equal(c[d.E - 1], 0);
	/* k = E: every expert exactly T (the cap redistributes) */
	assert_int_equal(dims(&d, 100, 1, 2, 2, 500, 100, 2), 0);
	assert_int_equal(d.k, 2);
	cuco_moe_counts(&d, c);
	assert_int_equal(c[0], 100);
	assert_int_equal(c[1], 100);
	/* a skew that would put more than T on expert 0 is capped there */
	assert_int_equal(dims(&d, 64, 8, 4, 16, 400, 64, 2), 0);
	assert_int_equal(d.k, 4);
	cuco_moe_counts(&d, c);
	sum = 0;
	for (int e = 0; e < d.E; e++) {
		assert_true(c[e] <= 64);
		sum += c[e];
	}
	assert_int_equal(c[0], 64);
	assert_int_equal(sum, 64 * 4);
}

/* The router's rows: k distinct experts each, per-expert totals = counts, a bijective
 * token order. */
static void test_slots_and_perm(void **state)
{
	static const int cfg[][6] = {/* T, EL, topk, experts, zipf, R */
	                             {4096, 1, 1, 2, 1, 2},
	                             {256, 4, 8, 256, 1, 8},
	                             {64, 8, 4, 16, 150, 2},
	                             {1000, 3, 8, 24, 60, 4},
	                             {8, 8, 1, 16, 300, 2}};
	(void)state;
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct cuco_moe_dims d;
		struct cuco_moe_plan p;
		int got[CUCO_MOE_MAX_EXPERTS] = {0};
		int T = cfg[i][0];
		char *seen = calloc((size_t)T, 1);
		uint64_t a, b;

		assert_int_equal(
		    dims(&d, T, cfg[i][1], cfg[i][2], cfg[i][3], cfg[i][4], T, cfg[i][5]), 0);
		cuco_moe_plan_init(&p, &d, 0, CUCO_MOE_PACKED);
		for (int t = 0; t < T; t++) {
			int ex[CUCO_MOE_MAX_TOPK];
			for (int j = 0; j < d.k; j++) {
				ex[j] = cuco_moe_slot_expert(p.prefix, d.E, T, t, j);
				assert_true(ex[j] >= 0 && ex[j] < d.E);
				for (int q = 0; q < j; q++)
					assert_int_not_equal(ex[q], ex[j]);
				got[ex[j]]++;
			}
		}
		for (int e = 0; e < d.E; e++)
			assert_int_equal(got[e], p.counts[e]);
		cuco_moe_perm(42, 1, T, &a, &b);
		for (int t = 0; t < T; t++) {
			uint64_t tok = (a * (uint64_t)t + b) % (uint64_t)T;
			assert_int_equal(seen[tok], 0);
			seen[tok] = 1;
		}
		free(seen);
	}
}

/* Same inputs, same routing; another seed or source, another token order. */
static void test_determinism(void **state)
{
	struct cuco_moe_dims d;
	int c1[CUCO_MOE_MAX_EXPERTS], c2[CUCO_MOE_MAX_EXPERTS];
	uint64_t a1, b1, a2, b2, a3, b3;

	(void)state;
	assert_int_equal(dims(&d, 4096, 8, 8, 256, 100, 4096, 2), 0);
	cuco_moe_counts(&d, c1);
	cuco_moe_counts(&d, c2);
	assert_memory_equal(c1, c2, sizeof(int) * (size_t)d.E);
	cuco_moe_perm(7, 0, 4096, &a1, &b1);
	cuco_moe_perm(7, 0, 4096, &a2, &b2);
	assert_true(a1 == a2 && b1 == b2);
	cuco_moe_perm(8, 0, 4096, &a2, &b2);
	cuco_moe_perm(7, 1, 4096, &a3, &b3);
	assert_true(a1 != a2 || b1 != b2);
	assert_true(a1 != a3 || b1 != b3);
}

/*
 * Every rank's plan: buffer sizes alike on all ranks; send blocks tile each region in
 * expert order without overlap; the padded regions sit at d * P; every slot of X holds
 * its sources' blocks back to back (own first) and has room for the launches.
 */
static void test_plan(void **state)
{
	static const int cfg[][6] = {{4096, 1, 1, 2, 1, 2},
	                             {4096, 8, 8, 256, 100, 2},
	                             {256, 4, 8, 256, 1, 8},
	                             {8, 8, 1, 16, 300, 2},
	                             {4096, 8, 8, 256, 1, 1}};
	(void)state;
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++)
		for (int layout = 0; layout < 2; layout++) {
			struct cuco_moe_dims d;
			struct cuco_moe_plan p0, p;
			int T = cfg[i][0];

			assert_int_equal(
			    dims(&d, T, cfg[i][1], cfg[i][2], cfg[i][3], cfg[i][4], T, cfg[i][5]),
			    0);
			cuco_moe_plan_init(&p0, &d, 0, layout);
			for (int r = 0; r < d.R; r++) {
				long long total = 0;
				cuco_moe_plan_init(&p, &d, r, layout);
				assert_int_equal(p.P, p0.P);
				assert_int_equal(p.send_rows, p0.send_rows);
				assert_int_equal(p.cap, p0.cap);
				assert_int_equal(p.x_rows, p0.x_rows);
				for (int q = 0; q < d.R; q++) {
					int off = 0;
					if (layout == CUCO_MOE_PADDED)
						assert_int_equal(p.region_off[q], q * p.P);
					else
						assert_int_equal(p.region_off[q], (int)total);
					for (int le = 0; le < d.EL; le++) {
						assert_int_equal(p.exp_off[q * d.EL + le], off);
						off += p.counts[q * d.EL + le];
					}
					assert_int_equal(off, p.region_rows[q]);
					assert_true(p.region_rows[q] <= p.P);
					total += p.region_rows[q];
				}
				assert_int_equal(total, (long long)T * d.k);
				assert_true(p.region_off[d.R - 1] + p.region_rows[d.R - 1] <=
				            p.send_rows);
				for (int le = 0; le < d.EL; le++) {
					int c = p.counts[r * d.EL + le];
					assert_int_equal(p.c[le], c);
					assert_int_equal(p.m[le], d.R * c);
					assert_int_equal(cuco_moe_src_row(&p, r, r, le),
					                 0); /* own tokens first */
					for (int s = 0; s < d.R; s++) {
						int row = cuco_moe_src_row(&p, r, s, le);
						assert_true(row % (c ? c : 1) == 0 &&
						            row + c <= p.m[le]);
					}
					assert_true(p.m[le] <= p.cap);
					assert_true(c + p.rem_max <= p.cap);
				}
			}
		}
}

/* A split is a partition of the experts with rows, largest first, launch by launch. */
static void check_split(const int *m, int n, const int *ord, int no, const int *end, int nb)
{
	int seen[8] = {0};

	assert_true(nb >= (no > 0) && nb <= no);
	if (nb)
		assert_int_equal(end[nb - 1], no);
	for (int b = 1; b < nb; b++)
		assert_true(end[b] > end[b - 1]);
	for (int i = 0; i < no; i++) {
		assert_true(m[ord[i]] > 0);
		assert_int_equal(seen[ord[i]]++, 0);
		if (i)
			assert_true(m[ord[i]] <= m[ord[i - 1]]);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(seen[i], m[i] > 0);
}

/* Grouped launches: equal experts share one; launches of very different sizes are split
 * where the waves say so; empty experts are left out. 16 tile columns (the up GEMM's
 * 4096 over 256) on 132 CTAs. */
static void test_buckets(void **state)
{
	static const int equal[8] = {512, 512, 512, 512, 512, 512, 512, 512};
	static const int skew[8] = {1507, 754, 502, 377, 301, 251, 215, 189};
	static const int ragged[8] = {256, 512, 768, 1024, 1280, 1536, 1792, 2048};
	static const int holes[5] = {0, 300, 0, 1000, 290};
	int ord[8], end[8], no, nb;

	(void)state;
	cuco_moe_buckets(equal, 8, 16, 132, ord, &no, end, &nb);
	check_split(equal, 8, ord, no, end, nb);
	assert_int_equal(nb, 1);
	cuco_moe_buckets(skew, 8, 16, 132, ord, &no, end, &nb);
	check_split(skew, 8, ord, no, end, nb);
	assert_true(nb > 1);
	cuco_moe_buckets(ragged, 8, 16, 132, ord, &no, end, &nb);
	check_split(ragged, 8, ord, no, end, nb);
	assert_int_equal(ord[0], 7);
	assert_true(nb > 1 && nb < 8); /* neither one padded launch nor one per expert */
	/* 1000 alone (128 tiles: one wave), 300 and 290 together (96 tiles: one wave) */
	cuco_moe_buckets(holes, 5, 16, 132, ord, &no, end, &nb);
	check_split(holes, 5, ord, no, end, nb);
	assert_int_equal(no, 3);
	assert_int_equal(ord[0], 3);
	assert_int_equal(nb, 2);
	assert_int_equal(end[0], 1);
	cuco_moe_buckets(holes, 1, 16, 132, ord, &no, end, &nb); /* only an expert without rows */
	assert_int_equal(no, 0);
	assert_int_equal(nb, 0);
}

/* Shapes outside what the programs run are refused with the reason. */
static void test_dims_refused(void **state)
{
	struct cuco_moe_dims d;
	char err[256];

	(void)state;
	assert_int_equal(
	    cuco_moe_dims_init(&d, 4096, 7000, 2048, 1, 1, 2, 1, 3072, 2, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "multiples of 64"));
	assert_int_equal(
	    cuco_moe_dims_init(&d, 4096, 7168, 2048, 9, 1, 2, 1, 3072, 2, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "experts per rank"));
	assert_int_equal(
	    cuco_moe_dims_init(&d, 4096, 7168, 2048, 1, 1, 2, 1, 5000, 2, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "hot 1..T"));
	assert_int_equal(
	    cuco_moe_dims_init(&d, 4096, 7168, 2048, 1, 9, 2, 1, 3072, 2, err, sizeof(err)), 1);
}

/* ---- an evolution over the shipped template, judged by the fake evaluator ---- */

static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};

struct moe_check {
	const struct cuco_design_space *ds;
	int n, bad, placements[8];
};

static int check_program(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct moe_check *c = arg;
	struct cuco_directive d;

	if (!strcmp(p->name, "seed"))
		return 0;
	c->n++;
	if (cuco_directive_from_json(p->directive, &d, err) ||
	    cuco_directive_validate(&d, c->ds, &facts, err) ||
	    cuco_directive_canonicalize(&d, c->ds) || strstr(p->code, "{{") ||
	    !strstr(p->code, "cuco-directive:")) {
		fprintf(stderr, "program %lld: %s (%s)\n", (long long)p->id, p->directive,
		        err->msg);
		c->bad++;
	} else {
		c->placements[0] += !strcmp(d.dims[CUCO_DIM_PLACEMENT], "sequential");
		c->placements[1] += !strcmp(d.dims[CUCO_DIM_PLACEMENT], "stream_overlap");
		c->placements[2] += strcmp(d.dims[CUCO_DIM_BACKEND], "lsa") &&
		                    strcmp(d.dims[CUCO_DIM_BACKEND], "ce") &&
		                    strcmp(d.dims[CUCO_DIM_BACKEND], "nvshmem");
		/* issuer and sync_scope are the nvshmem backend's genes; inert elsewhere */
		if (strcmp(d.dims[CUCO_DIM_BACKEND], "nvshmem"))
			c->bad += strcmp(d.dims[CUCO_DIM_ISSUER], "cta") ||
			          strcmp(d.dims[CUCO_DIM_SYNC_SCOPE], "grid");
		else
			c->bad +=
			    strstr(p->code, "#define CUCO_BACKEND CUCO_BACKEND_nvshmem\n") == NULL;
	}
	cuco_directive_release(&d);
	return 0;
}

/*
 * The template over nvshmem: its cuco-realizes line admits lsa, ce and nvshmem, sequential
 * and stream_overlap, sync_scope grid and cta; every shipped nvshmem variant is valid, keeps
 * its issuer and sync_scope when canonicalised (live genes there), and realises with its issuer,
 * sync scope and backend as defines; over lsa the same genes canonicalise to cta and grid.
 */
static void test_nvshmem_realize(void **state)
{
	static const char *const variants[] = {
	    "sequential_nvshmem",
	    "sequential_nvshmem_thread",
	    "sequential_nvshmem_cta",
	    "sequential_nvshmem_cta_warp",
	    "stream_overlap_nvshmem_warp",
	    "stream_overlap_nvshmem_cta",
	    "stream_overlap_nvshmem_cta_thread",
	};
	struct cuco_design_space ds;
	struct cuco_strbuf tmpl = CUCO_STRBUF_INIT;
	struct cuco_err err;
	int scopes[2] = {0, 0}, issuers[3] = {0, 0, 0};

	(void)state;
	assert_int_equal(cuco_strbuf_read_file(&tmpl, TEMPLATE), 0);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&ds, "moe_layer.cu.in", tmpl.buf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ds.dims[CUCO_DIM_BACKEND].nvalues, 3);
	assert_int_equal(ds.dims[CUCO_DIM_PLACEMENT].nvalues, 2);
	assert_int_equal(ds.dims[CUCO_DIM_SYNC_SCOPE].nvalues, 2);
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		struct cuco_strbuf path = CUCO_STRBUF_INIT, json = CUCO_STRBUF_INIT,
		                   out = CUCO_STRBUF_INIT;
		struct cuco_directive d;
		char want[96];

		cuco_strbuf_addf(&path, CUCO_SOURCE_DIR "/workloads/moe_layer/variants/%s.json",
		                 variants[i]);
		assert_int_equal(cuco_strbuf_read_file(&json, path.buf), 0);
		if (cuco_directive_from_json(json.buf, &d, &err) ||
		    cuco_directive_validate(&d, &ds, &facts, &err))
			fail_msg("%s: %s", variants[i], err.msg);
		snprintf(want, sizeof(want), "%s/%s", d.dims[CUCO_DIM_ISSUER],
		         d.dims[CUCO_DIM_SYNC_SCOPE]);
		cuco_directive_canonicalize(&d, &ds); /* live over nvshmem: left as they are */
		assert_true(
		    !strncmp(want, d.dims[CUCO_DIM_ISSUER], strlen(d.dims[CUCO_DIM_ISSUER])) &&
		    !strcmp(strchr(want, '/') + 1, d.dims[CUCO_DIM_SYNC_SCOPE]));
		if (cuco_realize_template("moe_layer.cu.in", tmpl.buf, &d, &out, &err))
			fail_msg("%s: %s", variants[i], err.msg);
		assert_null(strstr(out.buf, "{{"));
		assert_non_null(strstr(out.buf, "#define CUCO_BACKEND CUCO_BACKEND_nvshmem\n"));
		snprintf(want, sizeof(want), "#define CUCO_SYNC_SCOPE CUCO_SYNC_SCOPE_%s ",
		         d.dims[CUCO_DIM_SYNC_SCOPE]);
		assert_non_null(strstr(out.buf, want));
		snprintf(want, sizeof(want), "#define CUCO_ISSUER CUCO_ISSUER_%s ",
		         d.dims[CUCO_DIM_ISSUER]);
		assert_non_null(strstr(out.buf, want));
		scopes[!strcmp(d.dims[CUCO_DIM_SYNC_SCOPE], "cta")]++;
		issuers[!strcmp(d.dims[CUCO_DIM_ISSUER], "warp") +
		        2 * !strcmp(d.dims[CUCO_DIM_ISSUER], "cta")]++;
		/* the same genes over lsa: inert, canonical cta and grid */
		snprintf(d.dims[CUCO_DIM_BACKEND], CUCO_NAME_MAX, "lsa");
		cuco_directive_canonicalize(&d, &ds);
		assert_string_equal(d.dims[CUCO_DIM_ISSUER], "cta");
		assert_string_equal(d.dims[CUCO_DIM_SYNC_SCOPE], "grid");
		cuco_directive_release(&d);
		cuco_strbuf_release(&path);
		cuco_strbuf_release(&json);
		cuco_strbuf_release(&out);
	}
	/* the variants cover both scopes and every issuer */
	assert_true(scopes[0] > 0 && scopes[1] > 0);
	assert_true(issuers[0] > 0 && issuers[1] > 0 && issuers[2] > 0);
	cuco_design_space_release(&ds);
	cuco_strbuf_release(&tmpl);
}

static void test_evolve_template(void **state)
{
	struct search_workload w;
	struct cuco_err err;
	struct moe_check mc;
	struct cuco_strbuf tmpl = CUCO_STRBUF_INIT;
	const char *seed = "// cuco-directive: {\"backend\":\"lsa\",\"placement\":\"sequential\","
	                   "\"sync_scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\","
	                   "\"knobs\":{\"comm_ctas\":32,\"threads\":512}}\n// the seed\n";

	(void)state;
	assert_int_equal(cuco_strbuf_read_file(&tmpl, TEMPLATE), 0);
	search_workload_init(&w, DESIGN_SPACE, "moe_layer", "cuco_3to1", "moe_layer.cu.in",
	                     tmpl.buf, seed, &facts);
	w.cfg.search_seed = 3;
	w.cfg.islands = 2;
	w.cfg.generations = 4;
	w.cfg.population_size = 8;
	search_workload_run(&w);
	memset(&mc, 0, sizeof(mc));
	mc.ds = &w.ds;
	assert_int_equal(cuco_store_program_each(w.store, 1, check_program, &mc, &err), CUCO_OK);
	assert_int_equal(mc.bad, 0);
	assert_true(mc.n > 10);
	assert_true(mc.placements[0] > 0); /* both realized placements bred */
	assert_true(mc.placements[1] > 0);
	assert_int_equal(mc.placements[2], 0); /* never a backend the template does not realize */
	search_workload_release(&w);
	cuco_strbuf_release(&tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts_cuco),           cmocka_unit_test(test_topk_scaled),
	    cmocka_unit_test(test_counts_zipf_and_empty), cmocka_unit_test(test_slots_and_perm),
	    cmocka_unit_test(test_determinism),           cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_dims_refused),          cmocka_unit_test(test_buckets),
	    cmocka_unit_test(test_nvshmem_realize),       cmocka_unit_test(test_evolve_template),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
