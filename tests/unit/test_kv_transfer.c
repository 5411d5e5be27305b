/*
 * test_kv_transfer.c - the kv_transfer workload's host-side pieces: the paged
 * cache's geometry and seeded block table (workloads/kv_transfer/kv_table.h),
 * its manifest and shape rules through the manifest loader, the directive
 * coverage of its template (every directive of the narrowed design space
 * realizes, with no placeholder left and the code path it names), and an
 * evolution over the template with the fake evaluator.
 */
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
#include <sqlite3.h>

#include "program/directive.h"
#include "search/evolve.h"
#include "search/operator.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#include "../../workloads/kv_transfer/kv_table.h"
#include "search_fake.h"
#include "search_workload.h"
#include "store_query.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"
#define TEMPLATE CUCO_SOURCE_DIR "/share/realize/kv_transfer.cu.in"
#define MANIFEST CUCO_SOURCE_DIR "/workloads/kv_transfer/manifest.json"

static const struct cuco_hw_facts facts = {0, 1, 2, 132, 90, 2};

static char *read_all(const char *path)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (cuco_strbuf_read_file(&sb, path))
		return NULL;
	return cuco_strbuf_detach(&sb, NULL);
}

/* 1 when p[0..n) holds every value of [0, n) once. */
static int is_permutation(const int32_t *p, long long n)
{
	char *seen = calloc((size_t)n, 1);
	int ok = seen != NULL;

	for (long long i = 0; ok && i < n; i++) {
		if (p[i] < 0 || p[i] >= n || seen[p[i]])
			ok = 0;
		else
			seen[p[i]] = 1;
	}
	free(seen);
	return ok;
}

static void test_geometry(void **state)
{
	int32_t table[4] = {7, 2, 5, 0};

	(void)state;
	assert_int_equal(kv_pages(2048, 16), 128);
	assert_int_equal(kv_pages(1000, 16), 63); /* the last page holds 8 tokens */
	assert_int_equal(kv_pages(1, 16), 1);
	assert_int_equal(kv_pool_pages(2048, 16), 160); /* a quarter more */
	assert_int_equal(kv_pool_pages(1000, 16), 63 + 16);
	assert_int_equal(kv_pool_pages(1, 16), 2); /* at least one page more */
	/* layer 1, V, token 37 of pages of 16 tokens, KV 8, pool 8: page table[2] = 5, slot 5 */
	assert_int_equal(kv_cache_offset(table, 8, 16, 8, 1, 1, 37),
	                 (size_t)((((1 * 2 + 1) * 8 + 5) * 16 + 5) * 8));
	assert_int_equal(kv_cache_offset(table, 8, 16, 8, 0, 0, 0), (size_t)(7 * 16 * 8));
}

static void test_block_table(void **state)
{
	const long long pools[] = {1, 2, 7, 160, 2560, 10240};
	int32_t *a, *b;
	long long same = 0, fixed = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(pools) / sizeof(pools[0]); k++) {
		long long n = pools[k];
		a = malloc((size_t)n * sizeof(int32_t));
		b = malloc((size_t)n * sizeof(int32_t));
		assert_non_null(a);
		assert_non_null(b);
		kv_permutation(a, n, 1, kv_table_stream(0));
		assert_true(is_permutation(a, n));
		kv_permutation(b, n, 1, kv_table_stream(0)); /* deterministic */
		assert_memory_equal(a, b, (size_t)n * sizeof(int32_t));
		if (n >= 160) {
			/* another seed or pair: another table; a shuffle, not the identity */
			kv_permutation(b, n, 2, kv_table_stream(0));
			assert_true(is_permutation(b, n));
			assert_memory_not_equal(a, b, (size_t)n * sizeof(int32_t));
			kv_permutation(b, n, 1, kv_table_stream(1));
			assert_memory_not_equal(a, b, (size_t)n * sizeof(int32_t));
			for (long long i = 0; i < n; i++) {
				same += a[i] == b[i];
				fixed += a[i] == i;
			}
			assert_true(fixed < n / 10);
			assert_true(same < n / 10);
		}
		free(a);
		free(b);
	}
}

/* The manifest loads; its shapes meet their rules; shapes that break one are refused. */
static void test_manifest(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *sh;

	(void)state;
	if (cuco_manifest_load(MANIFEST, &m, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(m.name, "kv_transfer");
	assert_int_equal(m.nparams, 6);
	assert_true(m.nshapes >= 9);
	assert_int_equal(m.nrules, 5);
	assert_non_null(cuco_manifest_program(&m, "baseline"));
	assert_non_null(cuco_manifest_program(&m, "ce_layer"));
	assert_non_null(cuco_manifest_program(&m, "ce_bulk"));
	assert_int_equal(cuco_manifest_program(&m, "compute")->role, CUCO_PROGRAM_COMPUTE);
	assert_int_equal(cuco_manifest_program(&m, "comm")->role, CUCO_PROGRAM_COMM);
	for (int i = 0; i < m.nshapes; i++)
		for (int r = 1; r <= 8; r *= 2)
			if (cuco_manifest_check_shape(&m, &m.shapes[i], r, &err))
				fail_msg("%s", err.msg);
	/* CUCo's first configuration and Llama-3-8B at 32768 tokens */
	sh = cuco_manifest_shape(&m, "cuco_2048_512");
	assert_non_null(sh);
	assert_int_equal(cuco_shape_get(sh, "S", 0), 2048);
	assert_int_equal(cuco_shape_get(sh, "KV", 0), 512);
	sh = cuco_manifest_shape(&m, "llama3_8b_32768");
	assert_non_null(sh);
	assert_int_equal(cuco_shape_get(sh, "L", 0), 32);
	/* a shape by its values that meets the rules: taken */
	sh = cuco_manifest_shape_spec(&m, "S=777,L=2,H=4096,I=14336,KV=256,page=32", &err);
	if (!sh)
		fail_msg("%s", err.msg);
	/* KV not a multiple of 8, H below 64, page 0: each refused, naming its rule */
	assert_null(cuco_manifest_shape_spec(&m, "S=512,L=2,H=4096,I=14336,KV=100,page=16", &err));
	assert_non_null(strstr(err.msg, "KV = 100"));
	assert_non_null(strstr(err.msg, "16-byte pieces"));
	assert_null(cuco_manifest_shape_spec(&m, "S=512,L=2,H=32,I=14336,KV=128,page=16", &err));
	assert_non_null(strstr(err.msg, "H = 32"));
	assert_null(cuco_manifest_shape_spec(&m, "S=512,L=2,H=4096,I=14336,KV=128,page=0", &err));
	cuco_manifest_release(&m);
}

/* The template's narrowed space: what it realizes, and every valid directive of it. */
static void test_template_coverage(void **state)
{
	struct cuco_design_space ds;
	struct cuco_err err;
	char *tmpl = read_all(TEMPLATE);
	const struct cuco_ds_dimension *dm;
	int idx[CUCO_NDIMS] = {0}, valid = 0, placements[4] = {0};
	static const char *const realized[] = {"sequential", "stream_overlap", "fused_producer",
	                                       "fused_consumer"};

	(void)state;
	assert_non_null(tmpl);
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &ds, &err), CUCO_OK);
	if (cuco_design_space_narrow(&ds, "kv_transfer.cu.in", tmpl, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ds.dims[CUCO_DIM_BACKEND].nvalues, 2);
	assert_int_equal(ds.dims[CUCO_DIM_PLACEMENT].nvalues, 4);
	assert_int_equal(ds.dims[CUCO_DIM_SYNC_SCOPE].nvalues, 1);
	/* every combination of dimension values that the narrowed space admits */
	for (;;) {
		struct cuco_directive d;
		struct cuco_strbuf out = CUCO_STRBUF_INIT;
		char want[96];

		cuco_directive_init(&d);
		for (int k = 0; k < CUCO_NDIMS; k++)
			snprintf(d.dims[k], sizeof(d.dims[k]), "%s",
			         ds.dims[k].values[idx[k]].name);
		if (cuco_directive_validate(&d, &ds, &facts, &err) == CUCO_OK) {
			valid++;
			if (cuco_realize_template("kv_transfer.cu.in", tmpl, &d, &out, &err))
				fail_msg("%s/%s/%s: %s", d.dims[0], d.dims[1], d.dims[4], err.msg);
			assert_null(strstr(out.buf, "{{"));
			snprintf(want, sizeof(want), "#define CUCO_PLACEMENT CUCO_PLACEMENT_%s\n",
			         d.dims[CUCO_DIM_PLACEMENT]);
			assert_non_null(strstr(out.buf, want));
			snprintf(want, sizeof(want), "#define CUCO_BACKEND CUCO_BACKEND_%s\n",
			         d.dims[CUCO_DIM_BACKEND]);
			assert_non_null(strstr(out.buf, want));
			/* the copy engine never meets the fused producer (a design-space
			 * constraint) */
			assert_false(!strcmp(d.dims[CUCO_DIM_BACKEND], "ce") &&
			             !strcmp(d.dims[CUCO_DIM_PLACEMENT], "fused_producer"));
			for (int p = 0; p < 4; p++)
				placements[p] += !strcmp(d.dims[CUCO_DIM_PLACEMENT], realized[p]);
		}
		cuco_strbuf_release(&out);
		cuco_directive_release(&d);
		int k = CUCO_NDIMS - 1;
		while (k >= 0 && ++idx[k] == ds.dims[k].nvalues)
			idx[k--] = 0;
		if (k < 0)
			break;
	}
	/* 2 backends x 4 placements x 3 issuers x 3 granularities, less the invalid ones */
	assert_true(valid >= 20);
	for (int p = 0; p < 4; p++)
		assert_true(placements[p] > 0);
	/* outside the line: refused by the narrowed space */
	dm = &ds.dims[CUCO_DIM_PLACEMENT];
	for (int v = 0; v < dm->nvalues; v++) {
		assert_string_not_equal(dm->values[v].name, "specialized");
	}
	cuco_design_space_release(&ds);
	free(tmpl);
}

/* ---- an evolution over the template with the fake evaluator ---- */

struct canon_check {
	const struct cuco_design_space *ds;
	int bad, n;
};

/* Every candidate: a valid directive, canonical for the template, realized as named. */
static int check_candidate(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct canon_check *c = arg;
	struct cuco_directive d, back;

	if (!strcmp(p->name, "seed"))
		return 0;
	c->n++;
	if (cuco_directive_from_json(p->directive, &d, err) ||
	    cuco_directive_validate(&d, c->ds, &facts, err) ||
	    cuco_directive_canonicalize(&d, c->ds)) {
		fprintf(stderr, "program %lld not valid and canonical: %s\n", (long long)p->id,
		        p->directive);
		c->bad++;
	} else if (cuco_directive_parse("c.cu", p->code, &back, err) ||
	           !cuco_directive_equal(&d, &back)) {
		c->bad++;
	} else {
		cuco_directive_release(&back);
	}
	cuco_directive_release(&d);
	return 0;
}

static void test_evolve_template(void **state)
{
	struct search_workload w;
	struct cuco_directive sd;
	struct cuco_strbuf seed = CUCO_STRBUF_INIT;
	struct cuco_err err;
	struct canon_check cc;
	char *tmpl = read_all(TEMPLATE);

	(void)state;
	assert_non_null(tmpl);
	/* the seed: the template's sequential LSA program, one transfer per layer */
	assert_int_equal(
	    cuco_directive_parse("seed",
	                         "// cuco-directive: {\"backend\":\"lsa\",\"placement\":"
	                         "\"sequential\",\"sync_scope\":\"grid\",\"issuer\":"
	                         "\"cta\",\"granularity\":\"chunk\",\"knobs\":{"
	                         "\"comm_ctas\":32,\"threads\":512}}\n",
	                         &sd, &err),
	    CUCO_OK);
	if (cuco_realize_template("kv_transfer.cu.in", tmpl, &sd, &seed, &err))
		fail_msg("%s", err.msg);
	search_workload_init(&w, DESIGN_SPACE, "kv_transfer", "cuco_3072_1024", "kv_transfer.cu.in",
	                     tmpl, seed.buf, &facts);
	w.cfg.search_seed = 11;
	w.cfg.islands = 3;
	w.cfg.generations = 5;
	w.cfg.population_size = 12;
	w.cfg.stagnation_generations = 3;
	search_workload_run(&w);
	memset(&cc, 0, sizeof(cc));
	cc.ds = &w.ds;
	assert_int_equal(cuco_store_program_each(w.store, 1, check_candidate, &cc, &err), CUCO_OK);
	cuco_store_close(w.store);
	w.store = NULL;
	assert_int_equal(cc.bad, 0);
	assert_true(cc.n > 20);
	/* no placeholder left; the search left the sequential seed for the other placements */
	assert_int_equal(sql_int(w.path, "SELECT COUNT(*) FROM programs WHERE code LIKE '%{{%'"),
	                 0);
	assert_true(sql_int(w.path, "SELECT COUNT(DISTINCT directive) FROM programs") > 10);
	assert_true(sql_int(w.path, "SELECT COUNT(*) FROM programs WHERE directive LIKE "
	                            "'%\"placement\":\"stream_overlap\"%'") > 0);
	assert_int_equal(sql_int(w.path, "SELECT COUNT(*) FROM programs WHERE directive LIKE "
	                                 "'%\"placement\":\"specialized\"%' OR directive LIKE "
	                                 "'%\"backend\":\"gin\"%'"),
	                 0);
	search_workload_release(&w);
	cuco_directive_release(&sd);
	cuco_strbuf_release(&seed);
	free(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_geometry),        cmocka_unit_test(test_block_table),
	    cmocka_unit_test(test_manifest),        cmocka_unit_test(test_template_coverage),
	    cmocka_unit_test(test_evolve_template),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
