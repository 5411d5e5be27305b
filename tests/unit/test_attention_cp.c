/*
 * test_attention_cp.c - attention_cp without a GPU: the plain and zigzag split
 * of the sequence (positions, causal balance, which query/key pairs are
 * visible), the attention calls of a ring step covering every visible pair
 * exactly once, the manifest and its shape rules, the template rendering every
 * directive it admits, and a search over that template through a fake
 * evaluator starting from the fast path's seed of the host program.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fastpath/fastpath.h"
#include "program/directive.h"
#include "search/evolve.h"
#include "search/operator.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#include "../../device/include/cuco_dev/zigzag.cuh"

#include "search_fake.h"
#include "search_workload.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define TEMPLATE CUCO_SOURCE_DIR "/share/realize/attention_cp.cu.in"
#define MANIFEST CUCO_SOURCE_DIR "/workloads/attention_cp/manifest.json"
#define HOST CUCO_SOURCE_DIR "/workloads/attention_cp/host.cu"

static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};

static char *read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, path))
		return NULL;
	return cuco_strbuf_detach(&sb, NULL);
}

/* Every global position is held by exactly one (rank, row), and parts sit where they say. */
static void test_positions(void **state)
{
	static const int cases[][3] = {{4096, 4, 2}, {4096, 4, 1}, {1024, 8, 2}, {512, 2, 2}};

	(void)state;
	/* the zigzag layout of 4 ranks: rank 1 holds chunks 1 and 6 of 8 */
	assert_int_equal(cuco_cp_chunk_len(4096, 4, 2), 512);
	assert_int_equal(cuco_cp_chunk_index(4, 2, 1, 0), 1);
	assert_int_equal(cuco_cp_chunk_index(4, 2, 1, 1), 6);
	assert_int_equal(cuco_cp_chunk_index(4, 2, 3, 1), 4);
	assert_int_equal(cuco_cp_pos0(4096, 4, 2, 1, 1), 3072);
	assert_int_equal(cuco_cp_pos(4096, 4, 2, 1, 600), 3072 + 88);
	assert_int_equal(cuco_cp_pos(4096, 4, 1, 1, 600), 1024 + 600);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		long long S = cases[c][0];
		int R = cases[c][1], parts = cases[c][2];
		char *seen = calloc((size_t)S, 1);
		assert_non_null(seen);
		for (int r = 0; r < R; r++)
			for (long long i = 0; i < S / R; i++) {
				long long p = cuco_cp_pos(S, R, parts, r, i);
				assert_true(p >= 0 && p < S);
				seen[p]++;
			}
		for (long long p = 0; p < S; p++)
			assert_int_equal(seen[p], 1);
		free(seen);
	}
}

/* Causal work: equal on every rank with zigzag, growing with the rank when plain. */
static void test_balance(void **state)
{
	(void)state;
	for (int R = 2; R <= 8; R *= 2) {
		long long S = 8192, total = 0, first = cuco_cp_rank_pairs(S, R, 2, 0, 1);
		for (int r = 0; r < R; r++) {
			assert_int_equal(cuco_cp_rank_pairs(S, R, 2, r, 1), first);
			total += cuco_cp_rank_pairs(S, R, 2, r, 1);
			if (r > 0)
				assert_true(cuco_cp_rank_pairs(S, R, 1, r, 1) >
				            cuco_cp_rank_pairs(S, R, 1, r - 1, 1));
			assert_int_equal(cuco_cp_rank_pairs(S, R, 2, r, 0), S / R * S);
		}
		assert_int_equal(total, S * (S + 1) / 2);
	}
}

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(cuco_cp_classify(512, 512, 0, 512, 1), CUCO_CP_FULL);
	assert_int_equal(cuco_cp_classify(512, 512, 512, 512, 1), CUCO_CP_PARTIAL);
	assert_int_equal(cuco_cp_classify(512, 512, 1024, 512, 1), CUCO_CP_MASKED);
	assert_int_equal(cuco_cp_classify(512, 512, 1024, 512, 0), CUCO_CP_FULL);
	/* the key ending exactly at the first query is still fully visible */
	assert_int_equal(cuco_cp_classify(512, 64, 449, 64, 1), CUCO_CP_FULL);
	assert_int_equal(cuco_cp_classify(512, 64, 450, 64, 1), CUCO_CP_PARTIAL);
	assert_int_equal(cuco_cp_visible_pairs(0, 4, 0, 4, 1), 10);
	assert_int_equal(cuco_cp_visible_pairs(4, 4, 0, 4, 1), 16);
	assert_int_equal(cuco_cp_visible_pairs(0, 4, 4, 4, 1), 0);
	/* zigzag, 4 ranks, rank 1 (chunks 1 and 6): its own block gives the diagonal of part
	 * 0 (masked) and of part 1 (masked), and part 1 against key part 0 unmasked */
	{
		struct cuco_cp_call c[CUCO_CP_MAX_CALLS];
		int n = cuco_cp_step_calls(4096, 4, 2, 1, 1, 1, c);
		assert_int_equal(n, 3);
		assert_int_equal(c[0].q_row0, 0);
		assert_int_equal(c[0].k_row0, 0);
		assert_int_equal(c[0].causal, 1);
		assert_int_equal(c[1].q_row0, 512);
		assert_int_equal(c[1].k_row0, 0);
		assert_int_equal(c[1].causal, 0);
		assert_int_equal(c[2].k_row0, 512);
		assert_int_equal(c[2].causal, 1);
		/* rank 2's block (chunks 2 and 5): only part 1 (chunk 6) sees it, all of it */
		n = cuco_cp_step_calls(4096, 4, 2, 1, 2, 1, c);
		assert_int_equal(n, 1);
		assert_int_equal(c[0].q_row0, 512);
		assert_int_equal(c[0].q_rows, 512);
		assert_int_equal(c[0].k_rows, 1024);
		assert_int_equal(c[0].causal, 0);
		/* no mask: one call over everything */
		n = cuco_cp_step_calls(4096, 4, 2, 1, 2, 0, c);
		assert_int_equal(n, 1);
		assert_int_equal(c[0].q_rows, 1024);
		assert_int_equal(c[0].k_rows, 1024);
	}
}

/*
 * Over all R steps of rank me, the calls (whole blocks, or key chunks of `per` pieces
 * per part) touch every visible (query, key) pair exactly once and no masked pair.
 */
static void check_cover(long long S, int R, int parts, int me, int causal, int per)
{
	long long Sl = S / R, L = Sl / parts;
	unsigned char *hit = calloc((size_t)(Sl * S), 1);

	assert_non_null(hit);
	for (int step = 0; step < R; step++) {
		int src = (me + R - step) % R;
		int npieces = per ? parts * per : 1;
		for (int j = 0; j < npieces; j++) {
			struct cuco_cp_call c[CUCO_CP_MAX_CALLS];
			long long r0 = per ? (j / per) * L + (j % per) * (L / per) : 0;
			long long rows = per ? L / per : Sl;
			int n = cuco_cp_range_calls(S, R, parts, me, src, r0, rows, causal, c);
			assert_true(n >= 0 && n <= CUCO_CP_MAX_CALLS);
			for (int i = 0; i < n; i++) {
				assert_true(c[i].k_row0 >= r0 &&
				            c[i].k_row0 + c[i].k_rows <= r0 + rows);
				for (long long q = c[i].q_row0; q < c[i].q_row0 + c[i].q_rows; q++)
					for (long long k = c[i].k_row0;
					     k < c[i].k_row0 + c[i].k_rows; k++) {
						long long qp = cuco_cp_pos(S, R, parts, me, q);
						long long kp = cuco_cp_pos(S, R, parts, src, k);
						/* a masked call's own positions must be the true
						 * ones */
						if (c[i].causal) {
							assert_int_equal(
							    c[i].q_pos0 + q - c[i].q_row0, qp);
							assert_int_equal(
							    c[i].k_pos0 + k - c[i].k_row0, kp);
							if (kp > qp)
								continue;
						}
						hit[q * S + kp]++;
					}
			}
		}
	}
	for (long long q = 0; q < Sl; q++)
		for (long long kp = 0; kp < S; kp++) {
			int want = !causal || kp <= cuco_cp_pos(S, R, parts, me, q);
			if (hit[q * S + kp] != want)
				fail_msg("S %lld R %d parts %d me %d causal %d per %d: pair (%lld, "
				         "%lld) "
				         "attended %d times",
				         S, R, parts, me, causal, per, q, kp, hit[q * S + kp]);
		}
	free(hit);
}

static void test_cover(void **state)
{
	(void)state;
	for (int R = 1; R <= 4; R *= 2)
		for (int parts = 1; parts <= 2; parts++)
			for (int causal = 0; causal <= 1; causal++)
				for (int me = 0; me < R; me++) {
					check_cover(128 * R * parts, R, parts, me, causal, 0);
					check_cover(128 * R * parts, R, parts, me, causal, 2);
				}
}

/* The manifest loads; its rules match the split (every chunk whole 64-row blocks). */
static void test_manifest(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *sh;

	(void)state;
	if (cuco_manifest_load(MANIFEST, &m, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(m.name, "attention_cp");
	assert_int_equal(m.nparams, 7);
	assert_int_equal(m.nrules, 2);
	assert_true(m.rules[0].per_rank);
	assert_int_equal(m.rules[0].multiple, 128);
	assert_int_equal(m.requires_cc, 90);
	assert_non_null(cuco_manifest_program(&m, "allgather_kv"));
	assert_non_null(cuco_manifest_shape(&m, "llama_128k_causal"));
	for (int i = 0; i < m.nshapes; i++)
		for (int R = 1; R <= 8; R *= 2) {
			const struct cuco_shape *s = &m.shapes[i];
			long long S = cuco_shape_get(s, "S", 0);
			int parts = (int)cuco_shape_get(s, "parts", 0);
			if (R > 1 && R != 2 && R != 4 && R != 8)
				continue;
			if (cuco_manifest_check_shape(&m, s, R, &err))
				fail_msg("%s", err.msg);
			assert_int_equal(cuco_cp_chunk_len(S, R, parts) % 64, 0);
			assert_true(parts == 1 || parts == 2);
			assert_true(cuco_shape_get(s, "H", 0) % cuco_shape_get(s, "Hkv", 1) == 0);
		}
	/* by value: S/R = 192 on 8 ranks is refused, 384 taken; D 48 refused */
	sh = cuco_manifest_shape_spec(&m, "1x32x8x1536x64x2x2", &err);
	assert_non_null(sh);
	assert_int_equal(cuco_manifest_check_shape(&m, sh, 8, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "multiple of 128"));
	assert_int_equal(cuco_manifest_check_shape(&m, sh, 4, &err), CUCO_OK);
	assert_null(cuco_manifest_shape_spec(&m, "1x32x8x4096x48x1x1", &err));
	cuco_manifest_release(&m);
}

static void set_dims(struct cuco_directive *d, const char *b, const char *p, const char *ss,
                     const char *is, const char *g)
{
	const char *v[CUCO_NDIMS];

	v[CUCO_DIM_BACKEND] = b;
	v[CUCO_DIM_PLACEMENT] = p;
	v[CUCO_DIM_SYNC_SCOPE] = ss;
	v[CUCO_DIM_ISSUER] = is;
	v[CUCO_DIM_GRANULARITY] = g;
	for (int i = 0; i < CUCO_NDIMS; i++)
		snprintf(d->dims[i], sizeof(d->dims[i]), "%s", v[i]);
}

/*
 * Every point of the template's narrowed space (dimensions, and the knobs it reads
 * at a few values) renders without a placeholder left and with its defines; points
 * outside it (fused placements, gin) are refused by validation or stay #error.
 */
static void test_template_coverage(void **state)
{
	static const char *backends[] = {"lsa", "ce"},
	                  *placements[] = {"sequential", "stream_overlap"};
	static const char *scopes[] = {"grid", "cta"}, *issuers[] = {"thread", "warp", "cta"};
	struct cuco_design_space ds;
	struct cuco_err err;
	char *tmpl = read_all(TEMPLATE);
	int rendered = 0;

	(void)state;
	assert_non_null(tmpl);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&ds, "attention_cp.cu.in", tmpl, &err))
		fail_msg("%s", err.msg);
	for (int b = 0; b < 2; b++)
		for (int p = 0; p < 2; p++)
			for (int s = 0; s < 2; s++)
				for (int i = 0; i < 3; i++)
					for (int k = 0; k < 3; k++) {
						struct cuco_directive d;
						struct cuco_strbuf out = CUCO_STRBUF_INIT;
						char want[64];
						cuco_directive_init(&d);
						set_dims(&d, backends[b], placements[p], scopes[s],
						         issuers[i], p ? "chunk" : "whole");
						assert_int_equal(
						    cuco_directive_set_knob(&d, "chunks",
						                            k ? 4 * k : 1, 0),
						    0);
						assert_int_equal(
						    cuco_directive_set_knob(&d, "stages", 1 + k, 0),
						    0);
						assert_int_equal(
						    cuco_directive_set_knob(&d, "graph", k == 2, 1),
						    0);
						assert_int_equal(cuco_directive_set_knob(
						                     &d, "streams", 1 + k % 2, 0),
						                 0);
						assert_int_equal(cuco_directive_set_knob(
						                     &d, "comm_ctas", 16 << k, 0),
						                 0);
						assert_int_equal(
						    cuco_directive_set_knob(&d, "threads",
						                            256 << (k % 2), 0),
						    0);
						if (cuco_directive_validate(&d, &ds, &facts, &err))
							fail_msg("%s/%s/%s/%s: %s", backends[b],
							         placements[p], scopes[s],
							         issuers[i], err.msg);
						if (cuco_realize_template("attention_cp.cu.in",
						                          tmpl, &d, &out, &err))
							fail_msg("%s", err.msg);
						assert_null(strstr(out.buf, "{{"));
						snprintf(want, sizeof(want),
						         "#define CUCO_PLACEMENT CUCO_PLACEMENT_%s",
						         placements[p]);
						assert_non_null(strstr(out.buf, want));
						snprintf(want, sizeof(want),
						         "#define CUCO_CHUNKS %d ", k ? 4 * k : 1);
						assert_non_null(strstr(out.buf, want));
						snprintf(want, sizeof(want),
						         "#define CUCO_GRAPH %d ", k == 2);
						assert_non_null(strstr(out.buf, want));
						rendered++;
						cuco_strbuf_release(&out);
						cuco_directive_release(&d);
					}
	assert_int_equal(rendered, 72);
	/* outside the narrowed space */
	{
		struct cuco_directive d;
		cuco_directive_init(&d);
		set_dims(&d, "lsa", "fused_consumer", "cta", "cta", "tile");
		assert_int_not_equal(cuco_directive_validate(&d, &ds, &facts, &err), CUCO_OK);
		set_dims(&d, "lsa", "specialized", "cta", "cta", "tile");
		assert_int_not_equal(cuco_directive_validate(&d, &ds, &facts, &err), CUCO_OK);
		cuco_directive_release(&d);
	}
	/* and the template says why at compile time */
	assert_non_null(strstr(tmpl, "#error \"fused_consumer is not realised for attention_cp"));
	assert_non_null(strstr(tmpl, "#error \"specialized is not realised for attention_cp"));
	cuco_design_space_release(&ds);
	free(tmpl);
}

struct cand_check {
	const struct cuco_design_space *ds;
	int n, bad, overlap, ce, chunked;
};

/* Every candidate: valid and canonical in the narrowed space, realized code, its directive. */
static int check_candidate(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct cand_check *c = arg;
	struct cuco_directive d, back;

	if (!strcmp(p->name, "seed"))
		return 0;
	c->n++;
	if (cuco_directive_from_json(p->directive, &d, err) ||
	    cuco_directive_validate(&d, c->ds, &facts, err) ||
	    cuco_directive_canonicalize(&d, c->ds)) {
		fprintf(stderr, "program %lld: not valid and canonical: %s\n", (long long)p->id,
		        p->directive);
		c->bad++;
		return 0;
	}
	if (strstr(p->code, "{{") || cuco_directive_parse("c.cu", p->code, &back, err) ||
	    !cuco_directive_equal(&d, &back)) {
		fprintf(stderr, "program %lld: code does not realize %s\n", (long long)p->id,
		        p->directive);
		c->bad++;
	} else {
		cuco_directive_release(&back);
	}
	c->overlap += !strcmp(d.dims[CUCO_DIM_PLACEMENT], "stream_overlap");
	c->ce += !strcmp(d.dims[CUCO_DIM_BACKEND], "ce");
	c->chunked += cuco_directive_knob(&d, "chunks", 1) > 1 &&
	              !strcmp(d.dims[CUCO_DIM_PLACEMENT], "stream_overlap");
	cuco_directive_release(&d);
	return 0;
}

/* A search over the template from the fast path's seed of host.cu, judged by the fake. */
static void test_evolve(void **state)
{
	struct cuco_fastpath_opts fo;
	struct cuco_fastpath_report rep;
	struct cuco_strbuf seed = CUCO_STRBUF_INIT;
	struct search_workload w;
	struct cuco_err err;
	struct cand_check cc;
	char *host = read_all(HOST), *tmpl = read_all(TEMPLATE);

	(void)state;
	assert_non_null(host);
	assert_non_null(tmpl);
	cuco_fastpath_opts_init(&fo);
	fo.share_dir = CUCO_SOURCE_DIR "/share/fastpath";
	cuco_fastpath_report_init(&rep);
	if (cuco_fastpath_transform("host.cu", host, &fo, &seed, &rep, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(rep.ngroups, 1);
	assert_int_equal(rep.nsites, 6); /* group start, 2 sends, 2 receives, group end */
	search_workload_init(&w, DESIGN_SPACE, "attention_cp", "8192_d64", "attention_cp.cu.in",
	                     tmpl, seed.buf, &facts);
	w.cfg.search_seed = 11;
	w.cfg.islands = 3;
	w.cfg.generations = 4;
	w.cfg.population_size = 12;
	w.cfg.stagnation_generations = 3;
	search_workload_run(&w);
	memset(&cc, 0, sizeof(cc));
	cc.ds = &w.ds;
	assert_int_equal(cuco_store_program_each(w.store, 1, check_candidate, &cc, &err), CUCO_OK);
	assert_int_equal(cc.bad, 0);
	assert_true(cc.n > 40);
	/* the fake prefers stream overlap, the copy engine and more chunks: the search finds them
	 */
	assert_true(cc.overlap > 0);
	assert_true(cc.ce > 0);
	assert_true(cc.chunked > 0);
	assert_true(w.fin.best_fitness > 1.25);
	search_workload_release(&w);
	cuco_fastpath_report_release(&rep);
	cuco_strbuf_release(&seed);
	free(host);
	free(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_positions), cmocka_unit_test(test_balance),
	    cmocka_unit_test(test_classify),  cmocka_unit_test(test_cover),
	    cmocka_unit_test(test_manifest),  cmocka_unit_test(test_template_coverage),
	    cmocka_unit_test(test_evolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
