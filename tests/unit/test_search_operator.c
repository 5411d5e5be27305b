/* test_search_operator.c - the built-in operator: mutation and crossover stay valid, realization,
 * RNG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "program/directive.h"
#include "search/operator.h"
#include "search/rng.h"
#include "util/strbuf.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/evolve"

static struct cuco_design_space ds;
static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2}; /* NVLink node, no GIN NIC */

static int setup(void **state)
{
	struct cuco_err err;

	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	cuco_design_space_release(&ds);
	return 0;
}

static void must_parse(const char *json, struct cuco_directive *d)
{
	struct cuco_err err;

	if (cuco_directive_from_json(json, d, &err))
		fail_msg("%s: %s", json, err.msg);
}

static char *read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	assert_int_equal(cuco_strbuf_read_file(&sb, path), 0);
	return cuco_strbuf_detach(&sb, NULL);
}

static const char *const parents[] = {
    "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"grid\",\"issuer\":\"cta\","
    "\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":32,\"threads\":512}}",
    "{\"backend\":\"ce\",\"placement\":\"stream_overlap\",\"sync_scope\":\"grid\",\"issuer\":"
    "\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"chunks\":8,\"streams\":2}}",
    "{\"backend\":\"lsa\",\"placement\":\"specialized\",\"sync_scope\":\"warp\",\"issuer\":"
    "\"warp\",\"granularity\":\"tile\",\"knobs\":{\"comm_ctas\":132,\"tile_m\":128,\"tile_n\":"
    "256,\"sm_split\":16}}",
    "{\"backend\":\"lsa\",\"placement\":\"fused_producer\",\"sync_scope\":\"thread\",\"issuer\":"
    "\"thread\",\"granularity\":\"tile\",\"knobs\":{\"threads\":32,\"stages\":8}}",
};

/* Thousands of mutations with 1..5 changes, with and without bias: every child valid and new. */
static void test_mutation_stays_valid(void **state)
{
	struct cuco_genes genes;
	struct cuco_bias bias;
	struct cuco_rng rng;
	struct cuco_err err;
	int changed_dims = 0, changed_knobs = 0;

	cuco_genes_all(&genes, &ds);
	memset(&bias, 0, sizeof(bias));
	bias.active = 1;
	bias.dim[CUCO_DIM_PLACEMENT][1] = 5.0; /* stream_overlap preferred */
	bias.nknobs = 1;
	snprintf(bias.knob[0].name, sizeof(bias.knob[0].name), "chunks");
	bias.knob[0].n = 2;
	bias.knob[0].values[0] = 16;
	bias.knob[0].weight[0] = 3.0;
	bias.knob[0].values[1] = 99; /* out of range: must never be used */
	bias.knob[0].weight[1] = 100.0;
	cuco_rng_seed(&rng, 42);
	for (int use_bias = 0; use_bias < 2; use_bias++) {
		struct cuco_op_ctx op = {&ds, &facts, &genes, use_bias ? &bias : NULL};
		for (size_t p = 0; p < sizeof(parents) / sizeof(parents[0]); p++) {
			struct cuco_directive parent;
			must_parse(parents[p], &parent);
			assert_int_equal(cuco_directive_validate(&parent, &ds, &facts, &err),
			                 CUCO_OK);
			for (int i = 0; i < 500; i++) {
				struct cuco_directive child;
				int n = 1 + i % 5;
				if (cuco_operator_mutate(&op, &parent, NULL, n, &rng, &child, &err))
					fail_msg("mutate %s (%d): %s", parents[p], n, err.msg);
				if (cuco_directive_validate(&child, &ds, &facts, &err))
					fail_msg("invalid child: %s", err.msg);
				assert_false(cuco_directive_equal(&child, &parent));
				assert_int_not_equal(cuco_directive_knob(&child, "chunks", 0), 99);
				assert_string_not_equal(child.dims[CUCO_DIM_BACKEND], "gin");
				for (int d = 0; d < CUCO_NDIMS; d++)
					changed_dims += strcmp(child.dims[d], parent.dims[d]) != 0;
				changed_knobs += !cuco_directive_equal(&child, &parent) &&
				                 child.nknobs != parent.nknobs;
				cuco_directive_release(&child);
			}
			cuco_directive_release(&parent);
		}
	}
	assert_true(changed_dims > 1000);
	assert_true(changed_knobs > 100);
}

/* One change at a time changes exactly one gene (dimension or knob). */
static void test_mutation_one_change(void **state)
{
	struct cuco_genes genes;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent;
	struct cuco_op_ctx op = {&ds, &facts, &genes, NULL};
	int more = 0;

	cuco_genes_all(&genes, &ds);
	cuco_rng_seed(&rng, 7);
	must_parse(parents[1], &parent);
	for (int i = 0; i < 300; i++) {
		struct cuco_directive child;
		int diff = 0;
		assert_int_equal(cuco_operator_mutate(&op, &parent, NULL, 1, &rng, &child, &err),
		                 CUCO_OK);
		for (int d = 0; d < CUCO_NDIMS; d++)
			diff += strcmp(child.dims[d], parent.dims[d]) != 0;
		for (int k = 0; k < ds.nknobs; k++)
			diff += cuco_directive_knob(&child, ds.knobs[k].name, -1) !=
			        cuco_directive_knob(&parent, ds.knobs[k].name, -1);
		/* the constraints may force a retry but never a second change */
		assert_int_equal(diff, 1);
		more += diff;
		cuco_directive_release(&child);
	}
	assert_int_equal(more, 300);
	cuco_directive_release(&parent);
}

/* Knob-only genes: dimensions never move; unknown knobs are ignored. */
static void test_mutation_knobs_only(void **state)
{
	static const char *const knobs[] = {"comm_ctas", "threads", "not_a_knob"};
	struct cuco_genes genes;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent, child;
	struct cuco_op_ctx op = {&ds, &facts, &genes, NULL};

	cuco_genes_knobs_only(&genes, knobs, 3);
	cuco_rng_seed(&rng, 3);
	must_parse(parents[0], &parent);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(cuco_operator_mutate(&op, &parent, NULL, 2, &rng, &child, &err),
		                 CUCO_OK);
		for (int d = 0; d < CUCO_NDIMS; d++)
			assert_string_equal(child.dims[d], parent.dims[d]);
		assert_int_equal(cuco_directive_knob(&child, "threads", 0) % 32, 0);
		assert_true(cuco_directive_knob(&child, "comm_ctas", 0) <= 132);
		cuco_directive_release(&child);
	}
	/* nothing may change: no child */
	memset(&genes, 0, sizeof(genes));
	assert_int_equal(cuco_operator_mutate(&op, &parent, NULL, 1, &rng, &child, &err),
	                 CUCO_ERR_NOT_FOUND);
	cuco_directive_release(&parent);
}

/* Crossover children are valid, differ from both parents, and take genes only from them. */
static void test_crossover_stays_valid(void **state)
{
	struct cuco_genes genes;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_op_ctx op = {&ds, &facts, &genes, NULL};
	int made = 0;

	cuco_genes_all(&genes, &ds);
	cuco_rng_seed(&rng, 11);
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 4; b++) {
			struct cuco_directive pa, pb;
			if (a == b)
				continue;
			must_parse(parents[a], &pa);
			must_parse(parents[b], &pb);
			for (int i = 0; i < 100; i++) {
				struct cuco_directive c;
				if (cuco_operator_crossover(&op, &pa, &pb, &rng, &c, &err))
					break; /* some pairs have no valid mix; that is an answer */
				made++;
				assert_int_equal(cuco_directive_validate(&c, &ds, &facts, &err),
				                 CUCO_OK);
				assert_false(cuco_directive_equal(&c, &pa));
				assert_false(cuco_directive_equal(&c, &pb));
				for (int d = 0; d < CUCO_NDIMS; d++)
					assert_true(!strcmp(c.dims[d], pa.dims[d]) ||
					            !strcmp(c.dims[d], pb.dims[d]));
				for (int k = 0; k < c.nknobs; k++) {
					long long v = c.knobs[k].value;
					assert_true(
					    v == cuco_directive_knob(&pa, c.knobs[k].name, -1) ||
					    v == cuco_directive_knob(&pb, c.knobs[k].name, -1));
				}
				cuco_directive_release(&c);
			}
			cuco_directive_release(&pa);
			cuco_directive_release(&pb);
		}
	assert_true(made > 500);
}

/* Template realization: every placeholder filled, defaults, upper case, errors with line. */
static void test_realize_template(void **state)
{
	char *tmpl = read_all(FIXTURES "/mini.cu.in"),
	     *bad = read_all(FIXTURES "/bad_placeholder.cu.in");
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_directive d, back;
	struct cuco_genes genes;
	struct cuco_err err;

	must_parse(parents[1], &d); /* ce stream_overlap chunk; knobs chunks, streams */
	/* threads is used by the template but not set: an error until completed */
	assert_int_equal(cuco_realize_template("mini.cu.in", tmpl, &d, &out, &err),
	                 CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "mini.cu.in:"));
	assert_non_null(strstr(err.msg, "comm_ctas"));
	assert_int_equal(out.len, 0);
	memset(&genes, 0, sizeof(genes));
	assert_int_equal(cuco_realize_template_knobs(tmpl, &ds, &genes, &d, &err), CUCO_OK);
	assert_int_equal(genes.nknobs, 3); /* comm_ctas, chunks, threads */
	assert_int_equal(cuco_directive_knob(&d, "comm_ctas", -1), 32);
	assert_int_equal(cuco_directive_knob(&d, "threads", -1), 512);
	assert_int_equal(cuco_directive_knob(&d, "chunks", -1), 8); /* kept, not the default */
	assert_int_equal(cuco_realize_template("mini.cu.in", tmpl, &d, &out, &err), CUCO_OK);
	assert_null(strstr(out.buf, "{{"));
	assert_non_null(strstr(out.buf, "#define MINI_BACKEND_CE 1"));
	assert_non_null(strstr(out.buf, "#define MINI_PLACEMENT \"stream_overlap\""));
	assert_non_null(strstr(out.buf, "#define MINI_CHUNKS 8"));
	assert_non_null(strstr(out.buf, "#define MINI_THREADS 512"));
	/* the realized program carries the directive on its first line */
	assert_int_equal(cuco_directive_parse("child.cu", out.buf, &back, &err), CUCO_OK);
	assert_true(cuco_directive_equal(&back, &d));
	assert_int_equal(cuco_directive_find_line(out.buf), 1);
	cuco_directive_release(&back);
	/* a placeholder default fills in when the directive lacks the knob */
	cuco_strbuf_reset(&out);
	{
		struct cuco_directive e;
		must_parse(parents[0], &e); /* comm_ctas, threads; no chunks */
		assert_int_equal(cuco_realize_template("mini.cu.in", tmpl, &e, &out, &err),
		                 CUCO_OK);
		assert_non_null(strstr(out.buf, "#define MINI_CHUNKS 4"));
		cuco_directive_release(&e);
	}
	/* an unknown placeholder is refused, naming its line */
	cuco_strbuf_reset(&out);
	assert_int_equal(cuco_realize_template("bad.cu.in", bad, &d, &out, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "bad.cu.in:3"));
	assert_non_null(strstr(err.msg, "no_such_knob"));
	assert_int_equal(cuco_realize_template_knobs(bad, &ds, &genes, NULL, &err),
	                 CUCO_ERR_INVALID);
	cuco_directive_release(&d);
	cuco_strbuf_release(&out);
	free(tmpl);
	free(bad);
}

/* The real template from share/realize, when present, realizes the seed directive completely. */
static void test_realize_shipped_template(void **state)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	struct cuco_directive d;
	struct cuco_genes genes;
	struct cuco_err err;

	if (cuco_strbuf_read_file(&sb, CUCO_SOURCE_DIR "/share/realize/gemm_allgather.cu.in")) {
		cuco_strbuf_release(&sb);
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	}
	must_parse(parents[0], &d);
	memset(&genes, 0, sizeof(genes));
	assert_int_equal(cuco_realize_template_knobs(sb.buf, &ds, &genes, &d, &err), CUCO_OK);
	assert_int_equal(cuco_realize_template("gemm_allgather.cu.in", sb.buf, &d, &out, &err),
	                 CUCO_OK);
	assert_null(strstr(out.buf, "{{"));
	assert_int_equal(cuco_directive_find_line(out.buf), 1);
	cuco_directive_release(&d);
	cuco_strbuf_release(&sb);
	cuco_strbuf_release(&out);
}

/* Seed realization rewrites the directive line and the CUCO_SEED_ defines only. */
static void test_realize_seed(void **state)
{
	char *seed = read_all(FIXTURES "/seed.cu");
	char names[CUCO_DIRECTIVE_MAX_KNOBS][CUCO_NAME_MAX];
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_directive d, back;
	struct cuco_err err;
	int n;

	cuco_realize_seed_knobs(seed, &ds, names, CUCO_DIRECTIVE_MAX_KNOBS, &n);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "comm_ctas");
	assert_string_equal(names[1], "threads");
	must_parse(parents[0], &d);
	cuco_directive_set_knob(&d, "comm_ctas", 64, 0);
	assert_int_equal(cuco_realize_seed(seed, &d, &out, &err), CUCO_OK);
	assert_non_null(strstr(out.buf, "#define CUCO_SEED_COMM_CTAS 64\n"));
	assert_non_null(strstr(out.buf, "#define CUCO_SEED_THREADS 512\n"));
	assert_non_null(strstr(out.buf, "int main(void)"));
	assert_int_equal(cuco_directive_parse("child.cu", out.buf, &back, &err), CUCO_OK);
	assert_int_equal(cuco_directive_knob(&back, "comm_ctas", 0), 64);
	assert_int_equal(strlen(out.buf), strlen(seed)); /* 32 -> 64: same length, nothing lost */
	cuco_directive_release(&back);
	cuco_directive_release(&d);
	cuco_strbuf_release(&out);
	free(seed);
}

/* A shipped template's narrowed space (with its inert genes) and its genes. */
struct tmpl_space {
	struct cuco_design_space ds;
	struct cuco_genes genes;
	char *text;
};

static int tmpl_load(const char *name, struct tmpl_space *t)
{
	char path[512];
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;

	snprintf(path, sizeof(path), CUCO_SOURCE_DIR "/share/realize/%s", name);
	if (cuco_strbuf_read_file(&sb, path)) {
		cuco_strbuf_release(&sb);
		return -1;
	}
	t->text = cuco_strbuf_detach(&sb, NULL);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &t->ds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&t->ds, name, t->text, &err))
		fail_msg("%s", err.msg);
	assert_true(t->ds.ninert > 0);
	memset(&t->genes, 0, sizeof(t->genes));
	for (int d = 0; d < CUCO_NDIMS; d++)
		t->genes.dims[d] = 1;
	if (cuco_realize_template_knobs(t->text, &t->ds, &t->genes, NULL, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static void tmpl_release(struct tmpl_space *t)
{
	cuco_design_space_release(&t->ds);
	free(t->text);
}

/* parent, completed with the template's knobs (defaults where it lacks them). */
static void tmpl_parse(const struct tmpl_space *t, const char *json, struct cuco_directive *d)
{
	struct cuco_genes g;
	struct cuco_err err;

	must_parse(json, d);
	memset(&g, 0, sizeof(g));
	assert_int_equal(cuco_realize_template_knobs(t->text, &t->ds, &g, d, &err), CUCO_OK);
	if (cuco_directive_validate(d, &t->ds, &facts, &err))
		fail_msg("%s: %s", json, err.msg);
}

/* Every valid directive of each shipped template stays valid when canonicalized. */
static void test_inert_canonical_valid(void **state)
{
	static const char *const names[] = {"gemm_allgather.cu.in", "allgather_gemm.cu.in"};

	for (size_t t = 0; t < 2; t++) {
		struct tmpl_space ts;
		const struct cuco_ds_dimension *dm = ts.ds.dims;
		int idx[CUCO_NDIMS] = {0}, nvalid = 0, nchanged = 0;
		if (tmpl_load(names[t], &ts))
			fail_msg("the shipped template %s cannot be read", names[t]);
		for (;;) {
			struct cuco_directive d, c;
			struct cuco_err err;
			int k;
			tmpl_parse(&ts, parents[0], &d);
			for (int i = 0; i < CUCO_NDIMS; i++)
				snprintf(d.dims[i], CUCO_NAME_MAX, "%s", dm[i].values[idx[i]].name);
			/* every inert knob off its canonical value where the knob allows */
			for (int i = 0; i < ts.ds.ninert; i++) {
				const struct cuco_ds_inert *in = &ts.ds.inert[i];
				const struct cuco_ds_knob *spec =
				    cuco_design_space_knob(&ts.ds, in->name);
				long long v = in->knob_value;
				if (!spec)
					continue; /* a dimension */
				v = in->is_bool ? !v : v * 2 <= spec->max ? v * 2 : v / 2;
				cuco_directive_set_knob(&d, in->name, v, in->is_bool);
			}
			if (cuco_directive_validate(&d, &ts.ds, &facts, &err) == CUCO_OK) {
				nvalid++;
				cuco_directive_copy(&c, &d);
				nchanged += cuco_directive_canonicalize(&c, &ts.ds) > 0;
				if (cuco_directive_validate(&c, &ts.ds, &facts, &err))
					fail_msg("%s: canonical form of a valid directive: %s",
					         names[t], err.msg);
				assert_int_equal(cuco_directive_canonicalize(&c, &ts.ds), 0);
			}
			cuco_directive_release(&d);
			for (k = 0; k < CUCO_NDIMS && ++idx[k] == dm[k].nvalues; k++)
				idx[k] = 0;
			if (k == CUCO_NDIMS)
				break;
		}
		assert_true(nvalid > 20);
		assert_true(nchanged > nvalid * 9 / 10); /* few are canonical already */
		tmpl_release(&ts);
	}
}

/* 1 when a and b differ only in genes inert for their (common) placement. */
static int differ_only_inert(const struct cuco_design_space *space, const struct cuco_directive *a,
                             const struct cuco_directive *b)
{
	struct cuco_directive ca, cb;

	cuco_directive_copy(&ca, a);
	cuco_directive_copy(&cb, b);
	cuco_directive_canonicalize(&ca, space);
	cuco_directive_canonicalize(&cb, space);
	return cuco_directive_equal(&ca, &cb);
}

/* child is valid and canonical for the template. */
static void check_child(const struct tmpl_space *t, const struct cuco_directive *child)
{
	struct cuco_directive canon;
	struct cuco_err err;

	if (cuco_directive_validate(child, &t->ds, &facts, &err))
		fail_msg("invalid child: %s", err.msg);
	cuco_directive_copy(&canon, child);
	assert_int_equal(cuco_directive_canonicalize(&canon, &t->ds), 0);
}

static const char *const tmpl_parents[] = {
    /* sequential with every inert gene off its canonical value (sync_scope and
     * issuer are live for sequential lsa) */
    "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"cta\",\"issuer\":"
    "\"warp\",\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":32,\"threads\":512,"
    "\"chunks\":8,\"streams\":2,\"device_signal\":true,\"tile_n\":256,\"sm_split\":0}}",
    "{\"backend\":\"ce\",\"placement\":\"sequential\",\"sync_scope\":\"grid\",\"issuer\":"
    "\"cta\",\"granularity\":\"whole\",\"knobs\":{\"chunks\":4,\"streams\":1}}",
    "{\"backend\":\"ce\",\"placement\":\"stream_overlap\",\"sync_scope\":\"grid\",\"issuer\":"
    "\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"chunks\":8,\"streams\":2}}",
    "{\"backend\":\"lsa\",\"placement\":\"fused_producer\",\"sync_scope\":\"cta\",\"issuer\":"
    "\"thread\",\"granularity\":\"tile\",\"knobs\":{\"comm_ctas\":1,\"threads\":256}}",
    "{\"backend\":\"lsa\",\"placement\":\"specialized\",\"sync_scope\":\"cta\",\"issuer\":"
    "\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"comm_ctas\":8,\"sm_split\":8,"
    "\"chunks\":8}}",
};

/*
 * Through the real gemm_allgather template: no mutation returns its parent's
 * program (the canonical parent) or differs from it only in inert genes; every
 * child is canonical and valid.
 */
static void test_mutation_inert(void **state)
{
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	int same_placement = 0;

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	cuco_rng_seed(&rng, 2024);
	for (size_t p = 0; p < sizeof(tmpl_parents) / sizeof(tmpl_parents[0]); p++) {
		struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
		struct cuco_directive parent, insp;
		tmpl_parse(&ts, tmpl_parents[p], &parent);
		tmpl_parse(&ts, tmpl_parents[(p + 1) % 5], &insp);
		for (int i = 0; i < 600; i++) {
			struct cuco_directive child;
			int n = 1 + i % 4;
			if (cuco_operator_mutate(&op, &parent, i % 3 ? NULL : &insp, n, &rng,
			                         &child, &err))
				fail_msg("mutate %s (%d): %s", tmpl_parents[p], n, err.msg);
			check_child(&ts, &child);
			assert_false(cuco_directive_equal(&child, &parent));
			assert_false(differ_only_inert(&ts.ds, &child, &parent));
			same_placement += !strcmp(child.dims[CUCO_DIM_PLACEMENT],
			                          parent.dims[CUCO_DIM_PLACEMENT]);
			cuco_directive_release(&child);
		}
		cuco_directive_release(&parent);
		cuco_directive_release(&insp);
	}
	assert_true(same_placement > 500);
	tmpl_release(&ts);
}

/*
 * Genes a change makes live are woken: from a canonical sequential parent, one
 * change that moves to fused_producer gives tma_push true about half the time
 * (it was only the canonical false), and fused_sync - live once tma_push is
 * true - true in some of those; children stay canonical and valid.
 */
static void test_mutation_wakes(void **state)
{
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent;
	int fused = 0, tma = 0, sync = 0;

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
	cuco_rng_seed(&rng, 99);
	tmpl_parse(&ts, tmpl_parents[0], &parent); /* lsa, sequential */
	cuco_directive_canonicalize(&parent, &ts.ds);
	assert_int_equal(cuco_directive_knob(&parent, "tma_push", -1), 0);
	for (int i = 0; i < 4000; i++) {
		struct cuco_directive child;
		if (cuco_operator_mutate(&op, &parent, NULL, 1, &rng, &child, &err))
			fail_msg("mutate: %s", err.msg);
		check_child(&ts, &child);
		if (!strcmp(child.dims[CUCO_DIM_PLACEMENT], "fused_producer")) {
			fused++;
			tma += cuco_directive_knob(&child, "tma_push", 0) == 1;
			sync += cuco_directive_knob(&child, "fused_sync", 0) == 1;
		} else {
			assert_int_equal(cuco_directive_knob(&child, "tma_push", -1), 0);
		}
		cuco_directive_release(&child);
	}
	assert_true(fused > 100);
	assert_true(tma > fused / 4 && tma < fused * 3 / 4);
	assert_true(sync > tma / 5 && sync < tma * 4 / 5);
	cuco_directive_release(&parent);
	tmpl_release(&ts);
}

/* Crossover through the real template: children canonical, valid, new programs. */
static void test_crossover_inert(void **state)
{
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	int made = 0;

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	cuco_rng_seed(&rng, 99);
	for (size_t a = 0; a < 5; a++)
		for (size_t b = 0; b < 5; b++) {
			struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
			struct cuco_directive pa, pb;
			if (a == b)
				continue;
			tmpl_parse(&ts, tmpl_parents[a], &pa);
			tmpl_parse(&ts, tmpl_parents[b], &pb);
			for (int i = 0; i < 100; i++) {
				struct cuco_directive c;
				if (cuco_operator_crossover(&op, &pa, &pb, &rng, &c, &err))
					break;
				made++;
				check_child(&ts, &c);
				assert_false(differ_only_inert(&ts.ds, &c, &pa));
				assert_false(differ_only_inert(&ts.ds, &c, &pb));
				cuco_directive_release(&c);
			}
			cuco_directive_release(&pa);
			cuco_directive_release(&pb);
		}
	assert_true(made > 500);
	tmpl_release(&ts);
}

/* Frozen genes are never canonicalized; the free inert genes still are. */
static void test_inert_frozen(void **state)
{
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent;
	int k;

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	/* freeze sync_scope and streams */
	ts.genes.dims[CUCO_DIM_SYNC_SCOPE] = 0;
	for (k = 0; k < ts.genes.nknobs && strcmp(ts.genes.knobs[k], "streams"); k++)
		;
	assert_true(k < ts.genes.nknobs);
	memmove(ts.genes.knobs[k], ts.genes.knobs[k + 1],
	        (size_t)(ts.genes.nknobs - k - 1) * sizeof(ts.genes.knobs[0]));
	ts.genes.nknobs--;
	tmpl_parse(&ts, tmpl_parents[0], &parent); /* sync_scope warp, streams 2, chunks 8 */
	/* a frozen gene at a value that no canonical child can have (issuer cta needs
	 * sync_scope grid or cta) would leave no valid child: freeze it at cta */
	snprintf(parent.dims[CUCO_DIM_SYNC_SCOPE], CUCO_NAME_MAX, "cta");
	cuco_rng_seed(&rng, 5);
	int issuers = 0;
	for (int i = 0; i < 400; i++) {
		struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
		struct cuco_directive child;
		if (cuco_operator_mutate(&op, &parent, NULL, 1 + i % 3, &rng, &child, &err))
			fail_msg("%s", err.msg);
		assert_string_equal(child.dims[CUCO_DIM_SYNC_SCOPE], "cta");
		assert_int_equal(cuco_directive_knob(&child, "streams", -1), 2);
		/* issuer: live only where a comm kernel copies (sequential and
		 * stream_overlap over lsa or nvshmem), inert (cta) everywhere else */
		if ((!strcmp(child.dims[CUCO_DIM_BACKEND], "lsa") ||
		     !strcmp(child.dims[CUCO_DIM_BACKEND], "nvshmem")) &&
		    (!strcmp(child.dims[CUCO_DIM_PLACEMENT], "sequential") ||
		     !strcmp(child.dims[CUCO_DIM_PLACEMENT], "stream_overlap")))
			issuers += strcmp(child.dims[CUCO_DIM_ISSUER], "cta") != 0;
		else
			assert_string_equal(child.dims[CUCO_DIM_ISSUER], "cta");
		if (!strcmp(child.dims[CUCO_DIM_PLACEMENT], "sequential")) {
			assert_int_equal(cuco_directive_knob(&child, "chunks", -1), 4);
			assert_int_equal(cuco_directive_knob(&child, "device_signal", -1), 0);
		}
		cuco_directive_release(&child);
	}
	assert_true(issuers > 0); /* ...and there the operator does change it */
	cuco_directive_release(&parent);
	tmpl_release(&ts);
}

/* sync_scope is live only for sequential lsa and nvshmem (per-CTA barriers or
 * signals in the copy kernel, or barriers around it), grid everywhere else; the
 * operator moves it there. */
static void test_sync_scope_live(void **state)
{
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent;
	int grid = 0, cta = 0;

	(void)state;
	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	tmpl_parse(&ts, tmpl_parents[0], &parent); /* sequential lsa, sync_scope cta */
	cuco_rng_seed(&rng, 11);
	for (int i = 0; i < 400; i++) {
		struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
		struct cuco_directive child;
		if (cuco_operator_mutate(&op, &parent, NULL, 1 + i % 3, &rng, &child, &err))
			fail_msg("%s", err.msg);
		if ((!strcmp(child.dims[CUCO_DIM_BACKEND], "lsa") ||
		     !strcmp(child.dims[CUCO_DIM_BACKEND], "nvshmem")) &&
		    !strcmp(child.dims[CUCO_DIM_PLACEMENT], "sequential")) {
			grid += !strcmp(child.dims[CUCO_DIM_SYNC_SCOPE], "grid");
			cta += !strcmp(child.dims[CUCO_DIM_SYNC_SCOPE], "cta");
		} else {
			assert_string_equal(child.dims[CUCO_DIM_SYNC_SCOPE], "grid");
		}
		cuco_directive_release(&child);
	}
	assert_true(grid > 0 && cta > 0);
	cuco_directive_release(&parent);
	tmpl_release(&ts);
}

/* Remove knob name from t's free genes (freeze it). */
static void freeze_knob(struct tmpl_space *t, const char *name)
{
	int k;

	for (k = 0; k < t->genes.nknobs && strcmp(t->genes.knobs[k], name); k++)
		;
	assert_true(k < t->genes.nknobs);
	memmove(t->genes.knobs[k], t->genes.knobs[k + 1],
	        (size_t)(t->genes.nknobs - k - 1) * sizeof(t->genes.knobs[0]));
	t->genes.nknobs--;
}

/*
 * gemm_allgather's "device_signal=true": {"gemm_lib": false} (the template
 * #errors on the pair): a stream_overlap child with device_signal on comes
 * out with gemm_lib off, unless gemm_lib is frozen.
 */
static void test_inert_knob_condition(void **state)
{
	static const char so[] =
	    "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_scope\":\"grid\","
	    "\"issuer\":\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"comm_ctas\":32,"
	    "\"chunks\":8,\"device_signal\":true,\"gemm_lib\":false}}";
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent, d;
	int signalled = 0;

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
	tmpl_parse(&ts, so, &parent);

	/* the child as an operator may draw it: both on */
	cuco_directive_copy(&d, &parent);
	cuco_directive_set_knob(&d, "gemm_lib", 1, 1);
	assert_int_equal(cuco_operator_canonicalize(&op, &d), 1);
	assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 0);
	assert_int_equal(cuco_directive_knob(&d, "device_signal", -1), 1);
	assert_true(cuco_directive_equal(&d, &parent));
	/* device_signal off: gemm_lib is a real choice */
	cuco_directive_set_knob(&d, "device_signal", 0, 1);
	cuco_directive_set_knob(&d, "gemm_lib", 1, 1);
	assert_int_equal(cuco_operator_canonicalize(&op, &d), 0);
	assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
	/*
	 * sequential holds device_signal at false first, so gemm_lib stays; also
	 * with the knob rule moved to the front of the list (key order must not matter)
	 */
	for (int front = 0; front < 2; front++) {
		if (front) {
			struct cuco_ds_inert last = ts.ds.inert[ts.ds.ninert - 1];
			assert_int_equal(last.when_dim, -1); /* the line's last key */
			memmove(&ts.ds.inert[1], &ts.ds.inert[0],
			        (size_t)(ts.ds.ninert - 1) * sizeof(ts.ds.inert[0]));
			ts.ds.inert[0] = last;
		}
		snprintf(d.dims[CUCO_DIM_PLACEMENT], CUCO_NAME_MAX, "sequential");
		snprintf(d.dims[CUCO_DIM_GRANULARITY], CUCO_NAME_MAX, "whole");
		cuco_directive_set_knob(&d, "device_signal", 1, 1);
		cuco_directive_set_knob(&d, "gemm_lib", 1, 1);
		cuco_operator_canonicalize(&op, &d);
		assert_int_equal(cuco_directive_knob(&d, "device_signal", -1), 0);
		assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
	}
	cuco_directive_release(&d);

	/* mutation never yields the pair the template refuses */
	cuco_rng_seed(&rng, 77);
	for (int i = 0; i < 400; i++) {
		struct cuco_directive child;
		if (cuco_operator_mutate(&op, &parent, NULL, 1 + i % 3, &rng, &child, &err))
			fail_msg("%s", err.msg);
		check_child(&ts, &child);
		if (cuco_directive_knob(&child, "device_signal", 0)) {
			signalled++;
			assert_int_equal(cuco_directive_knob(&child, "gemm_lib", -1), 0);
		}
		cuco_directive_release(&child);
	}
	assert_true(signalled > 50);

	/* frozen gemm_lib stays, even where the condition holds */
	freeze_knob(&ts, "gemm_lib");
	cuco_directive_copy(&d, &parent);
	cuco_directive_set_knob(&d, "gemm_lib", 1, 1);
	assert_int_equal(cuco_operator_canonicalize(&op, &d), 0);
	assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
	assert_int_equal(cuco_directive_canonicalize(&d, &ts.ds), 1); /* unfiltered: it would */
	cuco_directive_release(&d);
	cuco_directive_release(&parent);
	tmpl_release(&ts);
}

/*
 * gemm_allgather's split knob (our GEMM's split tail): a live gene the operator
 * draws from its values, and inert with cuBLAS computing ("gemm_lib=true":
 * {"split": 0}), so a cuBLAS child never differs from its parent in it alone.
 */
static void test_split_knob(void **state)
{
	static const char sig[] =
	    "{\"backend\":\"ce\",\"placement\":\"stream_overlap\",\"sync_scope\":\"grid\","
	    "\"issuer\":\"cta\",\"granularity\":\"chunk\",\"knobs\":{\"chunks\":16,"
	    "\"device_signal\":true,\"split\":2}}";
	struct tmpl_space ts;
	struct cuco_rng rng;
	struct cuco_err err;
	struct cuco_directive parent, d;
	int seen[9] = {0};

	if (tmpl_load("gemm_allgather.cu.in", &ts))
		fail_msg("the shipped template gemm_allgather.cu.in cannot be read");
	struct cuco_op_ctx op = {&ts.ds, &facts, &ts.genes, NULL};
	tmpl_parse(&ts, sig, &parent);
	assert_int_equal(cuco_operator_canonicalize(&op, &parent), 0);
	assert_int_equal(cuco_directive_knob(&parent, "split", -1), 2);
	/* cuBLAS computes: the split is inert, held at 0 */
	cuco_directive_copy(&d, &parent);
	cuco_directive_set_knob(&d, "device_signal", 0, 1);
	cuco_directive_set_knob(&d, "gemm_lib", 1, 1);
	assert_int_equal(cuco_operator_canonicalize(&op, &d), 1);
	assert_int_equal(cuco_directive_knob(&d, "split", -1), 0);
	cuco_directive_release(&d);
	/* our GEMM: mutation draws it from its values */
	cuco_rng_seed(&rng, 5);
	for (int i = 0; i < 600; i++) {
		struct cuco_directive child;
		if (cuco_operator_mutate(&op, &parent, NULL, 1 + i % 3, &rng, &child, &err))
			fail_msg("%s", err.msg);
		check_child(&ts, &child);
		long long v = cuco_directive_knob(&child, "split", 0);
		assert_true(v == 0 || v == 2 || v == 3 || v == 4 || v == 6 || v == 8);
		if (!cuco_directive_knob(&child, "gemm_lib", 0))
			seen[v]++;
		else
			assert_int_equal(v, 0);
		cuco_directive_release(&child);
	}
	for (int v = 0; v <= 8; v++)
		if (v == 0 || v == 2 || v == 3 || v == 4 || v == 6 || v == 8)
			assert_true(seen[v] > 0);
	cuco_directive_release(&parent);
	tmpl_release(&ts);
}

/* Same seed, same numbers; weighted draws follow the weights; below() stays in range. */
static void test_rng(void **state)
{
	struct cuco_rng a, b, c;
	double w[4] = {1, 0, 3, -2};
	int hist[4] = {0};

	cuco_rng_seed(&a, 123);
	cuco_rng_seed(&b, 123);
	cuco_rng_seed_stream(&c, 123, 1);
	for (int i = 0; i < 100; i++) {
		uint64_t x = cuco_rng_next(&a);
		assert_true(x == cuco_rng_next(&b));
		assert_true(cuco_rng_below(&c, 7) < 7);
		assert_true(cuco_rng_unit(&c) < 1.0);
	}
	for (int i = 0; i < 40000; i++)
		hist[cuco_rng_weighted(&a, w, 4)]++;
	assert_int_equal(hist[1], 0);
	assert_int_equal(hist[3], 0);
	assert_true(hist[2] > 2.7 * hist[0] && hist[2] < 3.3 * hist[0]);
	w[0] = w[2] = 0;
	assert_int_equal(cuco_rng_weighted(&a, w, 4), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mutation_stays_valid),
	    cmocka_unit_test(test_mutation_one_change),
	    cmocka_unit_test(test_mutation_knobs_only),
	    cmocka_unit_test(test_crossover_stays_valid),
	    cmocka_unit_test(test_inert_canonical_valid),
	    cmocka_unit_test(test_mutation_inert),
	    cmocka_unit_test(test_mutation_wakes),
	    cmocka_unit_test(test_crossover_inert),
	    cmocka_unit_test(test_inert_frozen),
	    cmocka_unit_test(test_sync_scope_live),
	    cmocka_unit_test(test_inert_knob_condition),
	    cmocka_unit_test(test_split_knob),
	    cmocka_unit_test(test_realize_template),
	    cmocka_unit_test(test_realize_shipped_template),
	    cmocka_unit_test(test_realize_seed),
	    cmocka_unit_test(test_rng),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
