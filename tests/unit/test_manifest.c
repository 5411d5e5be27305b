/* test_manifest.c - workload manifests: the good fixture, every bad fixture's exact error, lookup,
 * a lifted package's reference program and command-line templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert_text.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/manifests"

/* Run every test from the fixture directory so messages carry short relative names. */
static int enter_fixtures(void **state)
{
	(void)state;
	return chdir(FIXTURES);
}

static void test_good(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *s;
	const struct cuco_manifest_program *p;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good.json", &m, &err), CUCO_OK);
	assert_string_equal(err.msg, "");
	assert_string_equal(m.name, "gemm_allgather");
	assert_string_equal(m.description,
	                    "Column-parallel linear: C_r = A * B_r, then all-gather C");
	assert_string_equal(m.dir, ".");
	assert_int_equal(m.abi, 1);
	assert_string_equal(m.dtype_name, "bf16");
	assert_int_equal(m.dtype, CUCO_DTYPE_BF16);
	assert_true(m.tolerance > 0.0099 && m.tolerance < 0.0101);
	assert_int_equal(m.nranks, 3);
	assert_int_equal(m.ranks[0], 2);
	assert_int_equal(m.ranks[2], 8);
	assert_int_equal(m.nparams, 3);
	assert_string_equal(m.params[2], "K");
	assert_int_equal(m.nshapes, 2);
	assert_string_equal(m.default_shape, "8192");
	assert_string_equal(m.workload, "./workload.cu");
	assert_string_equal(m.host_program, "./host.cu");

	/* the second shape lists its keys out of order: params follow "params" */
	s = cuco_manifest_shape(&m, "8192");
	assert_non_null(s);
	assert_int_equal(s->nparams, 3);
	assert_string_equal(s->param_names[0], "M");
	assert_string_equal(s->param_names[2], "K");
	assert_int_equal(s->params[0], 8192);
	assert_int_equal(s->params[2], 4096);
	assert_int_equal(cuco_shape_get(s, "K", -1), 4096);
	assert_null(cuco_manifest_shape(&m, "4096"));

	assert_int_equal(m.nprograms, 4);
	p = cuco_manifest_program(&m, "cublas_nccl");
	assert_non_null(p);
	assert_int_equal(p->role, CUCO_PROGRAM_PEER);
	assert_string_equal(p->file, "./peer_cublas.cu");
	assert_int_equal(p->nlibs, 1);
	assert_string_equal(p->libs[0], "cublas");
	assert_int_equal(p->verify, 1);
	p = cuco_manifest_program(&m, "compute");
	assert_non_null(p);
	assert_int_equal(p->role, CUCO_PROGRAM_COMPUTE);
	assert_int_equal(p->verify, 0);
	assert_string_equal(cuco_program_role_name(cuco_manifest_program(&m, "comm")->role),
	                    "comm");
	assert_null(cuco_manifest_program(&m, "nope"));

	assert_int_equal(m.nknobs, 1);
	assert_string_equal(
	    m.knobs_json,
	    "{\"comm_ctas\":{\"default\":32,\"max\":132,\"min\":1,\"type\":\"int\"}}");

	cuco_manifest_release(&m);
	assert_null(m.name);
	cuco_manifest_release(&m); /* twice is fine */
}

/* The example error of the manifest format, spelled out. */
static void test_shape_value_error(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("bad_shape_value.json", &m, &err), CUCO_ERR_PARSE);
	assert_string_equal(err.msg, "bad_shape_value.json:11:11: shapes[1].K: expected a "
	                             "positive integer, got \"abc\"");
	assert_null(m.name); /* released on failure */
	cuco_manifest_release(&m);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/*
 * Every bad_X.json has a bad_X.expect: comment lines, then the result token,
 * then the exact message.
 */
static void check_bad_fixture(const char *json)
{
	struct cuco_strbuf expect = CUCO_STRBUF_INIT, path = CUCO_STRBUF_INIT;
	struct cuco_manifest m;
	struct cuco_err err;
	char *line, *next, *token = NULL, *msg = NULL;
	int rc;

	cuco_strbuf_add(&path, json, strlen(json) - strlen(".json"));
	cuco_strbuf_adds(&path, ".expect");
	if (cuco_strbuf_read_file(&expect, path.buf) != 0)
		fail_msg("%s: missing (every bad fixture needs its expected error)", path.buf);
	for (line = expect.buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (!token)
			token = line;
		else if (!msg)
			msg = line;
	}
	if (!token || !msg)
		fail_msg("%s: needs a result token line and a message line", path.buf);
	cuco_err_clear(&err);
	rc = cuco_manifest_load(json, &m, &err);
	if (rc == CUCO_OK)
		fail_msg("%s loaded, expected: %s", json, msg);
	if (strcmp(cuco_result_token(rc), token) != 0 || strcmp(err.msg, msg) != 0)
		fail_msg("%s:\n  expected %s: %s\n  got      %s: %s", json, token, msg,
		         cuco_result_token(rc), err.msg);
	assert_int_equal(err.code, rc);
	cuco_strbuf_release(&expect);
	cuco_strbuf_release(&path);
}

static void test_bad_fixtures(void **state)
{
	struct dirent **ents;
	int n, i, checked = 0;

	(void)state;
	n = scandir(".", &ents, NULL, alphasort);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		if (strncmp(ents[i]->d_name, "bad_", 4) == 0 &&
		    ends_with(ents[i]->d_name, ".json")) {
			check_bad_fixture(ents[i]->d_name);
			checked++;
		}
		free(ents[i]);
	}
	free(ents);
	assert_true(checked >= 20);
}

/* "requires": the GPUs a workload's programs need, checked against the probed ones. */
static void test_requires(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good.json", &m, &err), CUCO_OK);
	assert_int_equal(m.requires_cc, 0); /* none: any GPU */
	assert_int_equal(cuco_manifest_check_cc(&m, 80, &err), CUCO_OK);
	cuco_manifest_release(&m);

	assert_int_equal(cuco_manifest_load("good_requires.json", &m, &err), CUCO_OK);
	assert_int_equal(m.requires_cc, 90);
	assert_string_equal(m.requires_why, "cuco's own GEMM");
	assert_int_equal(cuco_manifest_check_cc(&m, 90, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_cc(&m, 0, &err), CUCO_OK); /* no GPU to ask */
	assert_int_equal(cuco_manifest_check_cc(&m, 80, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg, "workload gemm_allgather needs GPUs of compute capability 9.0 "
	                             "(cuco's own GEMM), and this node's have 8.0");
	assert_int_equal(cuco_manifest_check_cc(&m, 100, &err), CUCO_ERR_UNSUPPORTED);
	cuco_manifest_release(&m);
}

static void test_check_ranks(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good_requires.json", &m, &err), CUCO_OK);
	assert_int_equal(m.nranks, 3); /* 2, 4, 8 */
	assert_int_equal(cuco_manifest_check_ranks(&m, 4, 0, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_ranks(&m, 1, 1, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_ranks(&m, 1, 0, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "good_requires.json: ranks: workload gemm_allgather runs on 2, 4 "
	                    "or 8 ranks, not 1");
	assert_int_equal(cuco_manifest_check_ranks(&m, 3, 1, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "good_requires.json: ranks: workload gemm_allgather runs on 2, 4 "
	                    "or 8 ranks, not 3 (or on 1, to check its compute side on one "
	                    "GPU)");
	cuco_manifest_release(&m);
}

/* "shape_rules": checked per shape and rank count, naming where the value is. */
static void test_shape_rules(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *narrow, *big;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good_rules.json", &m, &err), CUCO_OK);
	assert_int_equal(m.nrules, 2);
	assert_int_equal(m.rules[0].param, 1); /* N */
	assert_true(m.rules[0].per_rank);
	assert_int_equal(m.rules[0].min, 64);
	assert_int_equal(m.rules[0].multiple, 8);
	assert_string_equal(m.rules[1].why, "");
	narrow = cuco_manifest_shape(&m, "narrow");
	big = cuco_manifest_shape(&m, "8192");
	assert_non_null(narrow);
	for (int r = 1; r <= 8; r *= 2)
		assert_int_equal(cuco_manifest_check_shape(&m, big, r, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_shape(&m, narrow, 1, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_shape(&m, narrow, 2, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg,
	                    "good_rules.json:12:39: shapes[2].N: shape narrow: N = 200 on 2 "
	                    "ranks: each rank's 100 is not a multiple of 8 (shape_rules[0], "
	                    "line 25: 16-byte rows)");
	assert_int_equal(cuco_manifest_check_shape(&m, narrow, 4, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "N = 200 on 4 ranks: each rank's 50 is under 64");
	assert_int_equal(cuco_manifest_check_shape(&m, narrow, 3, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "N = 200 does not divide among 3 ranks");
	cuco_manifest_release(&m);
	assert_null(m.rules);
}

/* Shapes given by their values: parsed, named, checked and kept in the manifest. */
static void test_shape_spec(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *a, *b, *c;
	int n0;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good_rules.json", &m, &err), CUCO_OK);
	n0 = m.nshapes;
	assert_ptr_equal(cuco_manifest_shape_spec(&m, "narrow", &err), &m.shapes[2]);
	a = cuco_manifest_shape_spec(&m, "4096x14784x8192", &err);
	assert_non_null(a);
	assert_string_equal(a->name, "4096x14784x8192");
	assert_int_equal(a->params[1], 14784);
	assert_string_equal(a->param_names[2], "K");
	b = cuco_manifest_shape_spec(&m, "K=8192,M=4096,N=14784", &err);
	assert_ptr_equal(a, b); /* the same values: the same shape */
	assert_int_equal(m.nshapes, n0 + 1);
	assert_ptr_equal(cuco_manifest_shape(&m, "4096x14784x8192"), a);
	/* the per-rank rule waits for the rank count; the others hold now */
	assert_int_equal(cuco_manifest_check_shape(&m, a, 2, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_shape(&m, a, 8, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_shape(&m, a, 16, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "shape 4096x14784x8192: N = 14784 on 16 ranks: each rank's "
	                             "924 is not a multiple of 8 (good_rules.json: shape_rules[0], "
	                             "line 25: 16-byte rows)");
	assert_null(cuco_manifest_shape_spec(&m, "128x256x100", &err));
	assert_int_equal(err.code, CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "shape 128x256x100: K = 100 is not a multiple of 8 "
	                             "(good_rules.json: shape_rules[1], line 26)");
	assert_int_equal(m.nshapes, n0 + 1); /* refused: not kept */
	/* malformed */
	static const char *const bad[][2] = {
	    {"M=1,N=64", "shape M=1,N=64: K is not given"},
	    {"M=1,N=64,K=8,M=2", "shape M=1,N=64,K=8,M=2: M is given twice"},
	    {"Q=1,N=64,K=8", "shape Q=1,N=64,K=8: Q is not a parameter of workload gemm_allgather"},
	    {"12x13", "shape 12x13: workload gemm_allgather has no such shape (2048, 8192, narrow) "
	              "and this is no shape given by its values (MxNxK, or M=...,...)"},
	    {"1x2x", NULL},
	    {"0x64x64", NULL},
	    {"1x64x8x9", NULL},
	    {"M=1,N=64,K=", NULL},
	    {"M=1;N=64;K=8", NULL},
	    {"99999999999x64x8", NULL},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_null(cuco_manifest_shape_spec(&m, bad[i][0], &err));
		assert_int_equal(err.code, CUCO_ERR_USAGE);
		if (bad[i][1])
			assert_string_equal(err.msg, bad[i][1]);
		else
			assert_contains(err.msg, "no such shape");
	}
	/* the values of a manifest shape give that shape, under its name */
	assert_ptr_equal(cuco_manifest_shape_spec(&m, "M=2048,N=2048,K=2048", &err),
	                 cuco_manifest_shape(&m, "2048"));
	assert_ptr_equal(cuco_manifest_shape_spec(&m, "8192x8192x4096", &err),
	                 cuco_manifest_shape(&m, "8192"));
	/* the manifest's shape "8192" is not 8192x8192x8192 (its K is 4096) */
	c = cuco_manifest_shape_spec(&m, "8192x8192x8192", &err);
	assert_non_null(c);
	assert_ptr_not_equal(c, cuco_manifest_shape(&m, "8192"));
	assert_int_equal(c->params[2], 8192);
	/* at most CUCO_MANIFEST_SPEC_SHAPES of them, and names that fit */
	for (int i = 2; i < CUCO_MANIFEST_SPEC_SHAPES; i++) {
		char t[32];
		snprintf(t, sizeof(t), "%dx64x8", i);
		assert_non_null(cuco_manifest_shape_spec(&m, t, &err));
	}
	assert_null(cuco_manifest_shape_spec(&m, "9999x64x8", &err));
	assert_contains(err.msg, "more than 8 shapes given by their values");
	assert_ptr_equal(cuco_manifest_shape(&m, "4096x14784x8192"), a); /* still where it was */
	cuco_manifest_release(&m);
}

static void test_unreadable(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_manifest_load("no_such_manifest.json", &m, &err), CUCO_ERR_IO);
	assert_string_equal(err.msg, "no_such_manifest.json: cannot read the manifest: No such "
	                             "file or directory");
}

static void test_list_and_find(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	char **names;
	int n;

	(void)state;
	assert_int_equal(cuco_workloads_list("workloads", &names, &n, &err), CUCO_OK);
	assert_int_equal(n, 2); /* nomanifest/ has no manifest.json */
	assert_string_equal(names[0], "ga");
	assert_string_equal(names[1], "misnamed");
	cuco_workloads_list_free(names, n);

	assert_int_equal(cuco_workloads_list("no_such_dir", &names, &n, &err), CUCO_ERR_NOT_FOUND);
	assert_int_equal(n, 0);

	assert_int_equal(cuco_workload_find("workloads", "ga", &m, &err), CUCO_OK);
	assert_string_equal(m.name, "ga");
	assert_string_equal(m.dir, "workloads/ga");
	assert_string_equal(m.workload, "workloads/ga/workload.cu");
	cuco_manifest_release(&m);

	assert_int_equal(cuco_workload_find("workloads", "misnamed", &m, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "workloads/misnamed/manifest.json:2:11: name: "
	                             "\"something_else\" differs from its directory \"misnamed\"; "
	                             "they must match");

	assert_int_equal(cuco_workload_find("workloads", "gemm", &m, &err), CUCO_ERR_NOT_FOUND);
	assert_string_equal(err.msg, "no workload \"gemm\" in workloads (available: ga, "
	                             "misnamed); `cuco workloads` lists them");
	assert_int_equal(cuco_workload_find("workloads", "../x", &m, &err), CUCO_ERR_USAGE);
}

static void test_locate(void **state)
{
	static const char text[] = "{\n  \"a\": [1, {\"b\": \"x\\\"y\"}, [3, 4]],\n"
	                           "  \"c.d\": {\"e\": true}\n}";
	const char *p;
	int line, col;

	(void)state;
	p = cuco_json_locate(text, strlen(text), "", 0);
	assert_ptr_equal(p, text);
	p = cuco_json_locate(text, strlen(text), "a[1].b", 0);
	assert_non_null(p);
	assert_int_equal(strncmp(p, "\"x\\\"y\"", 6), 0);
	cuco_json_linecol(text, p, &line, &col);
	assert_int_equal(line, 2);
	assert_int_equal(col, 18);
	p = cuco_json_locate(text, strlen(text), "a[2][1]", 0);
	assert_non_null(p);
	assert_int_equal(*p, '4');
	p = cuco_json_locate(text, strlen(text), "a", 1);
	assert_non_null(p);
	assert_int_equal(strncmp(p, "\"a\"", 3), 0);
	p = cuco_json_locate(text, strlen(text), "c.d.e", 0);
	assert_non_null(p);
	assert_int_equal(*p, 't');
	assert_null(cuco_json_locate(text, strlen(text), "a[3]", 0));
	assert_null(cuco_json_locate(text, strlen(text), "z", 0));
}

static void test_suggest(void **state)
{
	static const char *const words[] = {"shapes", "params", "programs"};

	(void)state;
	assert_string_equal(cuco_suggest("shape", words, 3), "shapes");
	assert_string_equal(cuco_suggest("Params", words, 3), "params");
	assert_string_equal(cuco_suggest("programmes", words, 3), "programs");
	assert_null(cuco_suggest("tolerance", words, 3));
}

/* A scratch package: a directory under /tmp holding host.cu; its path in dir. */
static void scratch_package(char *dir, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(dir, n, "/tmp/cuco-test-manifest-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/host.cu", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("// host\n", f);
	fclose(f);
}

/* A manifest in dir with the given shapes text and file fields. */
static void write_manifest(const char *dir, const char *shapes, const char *default_shape,
                           const char *workload)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(
	    f,
	    "{\n  \"name\": \"big\",\n  \"abi\": 1,\n  \"dtype\": \"bf16\",\n"
	    "  \"tolerance\": 0.01,\n  \"ranks\": [2],\n  \"params\": [\"M\", \"N\", \"K\"],\n"
	    "  \"shapes\": [\n%s  ],\n  \"default_shape\": \"%s\",\n"
	    "  \"workload\": \"%s\",\n  \"host_program\": \"host.cu\",\n"
	    "  \"programs\": [{\"name\": \"baseline\", \"role\": \"baseline\", "
	    "\"file\": \"host.cu\"}],\n"
	    "  \"shape_rules\": [{\"param\": \"N\", \"per_rank\": true, \"multiple_of\": 8}]\n}\n",
	    shapes, default_shape, workload);
	fclose(f);
}

static void remove_package(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/host.cu", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/outside.cu", dir);
	unlink(path);
	rmdir(dir);
}

/* A file field that is a link out of the package is refused as a "../" path is. */
/* A lifted package: the baseline is the reference; "argv" templates, one per shape overriding. */
static void test_reference_program(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good_lifted.json", &m, &err), CUCO_OK);
	assert_string_equal(m.reference_program, "baseline");
	assert_string_equal(m.argv, "-nx {nx} -ny {ny} -niter 10 {not a name} {ranks}");
	assert_null(m.shape_argv[0]);
	assert_string_equal(m.shape_argv[1], "-nx {nx} -ny {ny} -niter 2 -np {ranks}");
	assert_string_equal(m.shapes[1].argv, ""); /* expanded only when a run starts */
	cuco_manifest_release(&m);
	assert_null(m.reference_program);

	/* without the field: the workload's own reference, no command line */
	assert_int_equal(cuco_manifest_load("good.json", &m, &err), CUCO_OK);
	assert_null(m.reference_program);
	assert_null(m.argv);
	cuco_manifest_release(&m);

	assert_int_equal(cuco_manifest_load("bad_reference_noverify.json", &m, &err),
	                 CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "bad_reference_noverify.json:20:28: reference.program: "
	                             "program \"compute\" is timing only (\"verify\": false); the "
	                             "reference is a verified program, as a rule the baseline");
	assert_int_equal(cuco_manifest_load("bad_argv_shape.json", &m, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "bad_argv_shape.json:11:53: shapes[1].argv: {nranks} names no "
	                             "parameter (the template may use {nx}, {ny} and {ranks}, the "
	                             "rank count)");
}

/* {P} is the shape's parameter P, {ranks} the rank count; other braces stay as they are. */
static void test_argv_expand(void **state)
{
	struct cuco_manifest m;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;
	const struct cuco_shape *small, *big, *spec;
	char bad[40] = "";

	(void)state;
	cuco_err_clear(&err);
	assert_int_equal(cuco_manifest_load("good_lifted.json", &m, &err), CUCO_OK);
	small = cuco_manifest_shape(&m, "small");
	big = cuco_manifest_shape(&m, "big");

	assert_int_equal(cuco_manifest_argv(&m, small, 4, &sb, &err), CUCO_OK);
	assert_string_equal(sb.buf, "-nx 512 -ny 256 -niter 10 {not a name} 4");
	assert_int_equal(cuco_manifest_argv(&m, big, 2, &sb, &err), CUCO_OK);
	assert_string_equal(sb.buf, "-nx 4096 -ny 4096 -niter 2 -np 2"); /* the shape's own */

	/* a shape given by its values takes the manifest's template */
	spec = cuco_manifest_shape_spec(&m, "nx=8,ny=16", &err);
	assert_non_null(spec);
	assert_int_equal(cuco_manifest_argv(&m, spec, 1, &sb, &err), CUCO_OK);
	assert_string_equal(sb.buf, "-nx 8 -ny 16 -niter 10 {not a name} 1");

	cuco_strbuf_reset(&sb);
	assert_int_equal(cuco_manifest_argv_expand("{{nx}} {} {1x} {nx {ny}x{ny}{ranks}", small, 8,
	                                           &sb, bad, sizeof(bad)),
	                 0);
	assert_string_equal(sb.buf, "{512} {} {1x} {nx 256x2568");
	assert_int_equal(cuco_manifest_argv_expand("-n {nz}", small, 8, &sb, bad, sizeof(bad)), -1);
	assert_string_equal(bad, "nz");

	/* longer than cuco_shape.argv holds once expanded */
	free(m.argv);
	m.argv = malloc(1100);
	assert_non_null(m.argv);
	memset(m.argv, 'x', 1019);
	memcpy(m.argv + 1019, "{nx}", 5); /* 1019 + "512" = 1022 characters: fits */
	assert_int_equal(cuco_manifest_argv(&m, small, 2, &sb, &err), CUCO_OK);
	assert_int_equal(sb.len, 1022);
	memcpy(m.argv + 1019, "{ny}{nx}", 9);
	assert_int_equal(cuco_manifest_argv(&m, small, 2, &sb, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "good_lifted.json: argv of shape small on 2 ranks is 1025 "
	                             "characters long; at most 1023 fit");

	/* without any template: "" */
	free(m.argv);
	m.argv = NULL;
	assert_int_equal(cuco_manifest_argv(&m, small, 2, &sb, &err), CUCO_OK);
	assert_string_equal(sb.buf, "");
	cuco_strbuf_release(&sb);
	cuco_manifest_release(&m);
}

static void test_link_out(void **state)
{
	struct cuco_manifest m;
	struct cuco_err err;
	char dir[64], link[128], path[128];

	(void)state;
	scratch_package(dir, sizeof(dir));
	snprintf(link, sizeof(link), "%s/outside.cu", dir);
	assert_int_equal(symlink(FIXTURES "/workload.cu", link), 0);
	write_manifest(dir, "    {\"name\": \"a\", \"M\": 8, \"N\": 16, \"K\": 8}\n", "a",
	               "outside.cu");
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	assert_int_equal(cuco_manifest_load(path, &m, &err), CUCO_ERR_INVALID);
	assert_contains(err.msg, "manifest.json:12:15: workload: \"outside.cu\" links out of the "
	                         "workload's folder");
	/* a link that stays inside is a file of the package */
	write_manifest(dir, "    {\"name\": \"a\", \"M\": 8, \"N\": 16, \"K\": 8}\n", "a",
	               "./sub/../host.cu");
	assert_int_equal(cuco_manifest_load(path, &m, &err), CUCO_ERR_INVALID); /* no sub/ */
	write_manifest(dir, "    {\"name\": \"a\", \"M\": 8, \"N\": 16, \"K\": 8}\n", "a",
	               "./host.cu");
	assert_int_equal(cuco_manifest_load(path, &m, &err), CUCO_OK);
	cuco_manifest_release(&m);
	remove_package(dir);
}

/* A manifest of many shapes loads whole, each shape's values and positions right. */
static void test_many_shapes(void **state)
{
	enum { N = 20000 };
	struct cuco_strbuf shapes = CUCO_STRBUF_INIT;
	struct cuco_manifest m;
	struct cuco_err err;
	const struct cuco_shape *sh;
	char dir[64], path[128], want[160];

	(void)state;
	scratch_package(dir, sizeof(dir));
	for (int i = 0; i < N; i++) /* the last one's N divides among 2 ranks but not into 8s */
		cuco_strbuf_addf(
		    &shapes, "    {\"name\": \"shape%d\", \"M\": %d, \"N\": %d, \"K\": 64}%s\n", i,
		    i + 1, i == N - 1 ? 20 : 16 * (i % 50 + 1), i == N - 1 ? "" : ",");
	write_manifest(dir, shapes.buf, "shape19999", "host.cu");
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if (cuco_manifest_load(path, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m.nshapes, N);
	assert_string_equal(m.default_shape, "shape19999");
	sh = cuco_manifest_shape(&m, "shape12345");
	assert_non_null(sh);
	assert_int_equal(sh->params[0], 12346);
	assert_int_equal(sh->params[1], 16 * (12345 % 50 + 1));
	assert_ptr_equal(cuco_manifest_shape(&m, "shape19999"), &m.shapes[N - 1]);
	/* the rule's error points at the last shape's N: line 9 + its index, column 45 */
	assert_int_equal(cuco_manifest_check_shape(&m, &m.shapes[0], 2, &err), CUCO_OK);
	assert_int_equal(cuco_manifest_check_shape(&m, &m.shapes[N - 1], 2, &err),
	                 CUCO_ERR_INVALID);
	snprintf(want, sizeof(want), "%s:%d:45: shapes[%d].N: shape shape19999: N = 20 on 2 ranks",
	         path, 9 + N - 1, N - 1);
	assert_contains(err.msg, want);
	cuco_manifest_release(&m);
	/* a name given twice is still found, with both places */
	cuco_strbuf_reset(&shapes);
	for (int i = 0; i < N; i++)
		cuco_strbuf_addf(&shapes,
		                 "    {\"name\": \"shape%d\", \"M\": 8, \"N\": 16, \"K\": 8}%s\n",
		                 i == N - 1 ? 7 : i, i == N - 1 ? "" : ",");
	write_manifest(dir, shapes.buf, "shape0", "host.cu");
	assert_int_equal(cuco_manifest_load(path, &m, &err), CUCO_ERR_INVALID);
	snprintf(want, sizeof(want),
	         "shapes[%d].name: shape \"shape7\" is defined twice (also shapes[7])", N - 1);
	assert_contains(err.msg, want);
	cuco_strbuf_release(&shapes);
	remove_package(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),          cmocka_unit_test(test_shape_value_error),
	    cmocka_unit_test(test_bad_fixtures),  cmocka_unit_test(test_unreadable),
	    cmocka_unit_test(test_list_and_find), cmocka_unit_test(test_locate),
	    cmocka_unit_test(test_suggest),       cmocka_unit_test(test_requires),
	    cmocka_unit_test(test_check_ranks),   cmocka_unit_test(test_shape_rules),
	    cmocka_unit_test(test_shape_spec),    cmocka_unit_test(test_link_out),
	    cmocka_unit_test(test_many_shapes),   cmocka_unit_test(test_reference_program),
	    cmocka_unit_test(test_argv_expand),
	};

	return cmocka_run_group_tests(tests, enter_fixtures, NULL);
}
