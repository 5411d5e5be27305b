/*
 * test_cascade.c - unit tests of the cascade without GPUs: the compile stage
 * with real nvcc (good, broken, cached), the harness's JSON result lines, and
 * cuco_evaluate's directive precheck and compile-only path into a store, and
 * the reference program and command line it hands a (stand-in) harness.
 *
 * nvcc is slow (5-20 s a program), so the whole file runs it three times:
 * test_compile builds one good and two broken programs at once, and every
 * later compile of the good program comes from the shared cache.
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>

#include "assert_text.h"
#include "rm_tree.h"
#include "cascade/cascade.h"
#include "program/directive.h"
#include "store/store.h"
#include "util/paths.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/cascade"
#define GOOD_PROGRAM FIXTURES "/comm_only.cu" /* the fixture workload's generator too */

/* The group's temporary directory: state, compile cache and store live there. */
static char tmp_dir[64];
static char cache_dir[128];
static char state_dir[128];

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/cuco-test-cascade-XXXXXX");
	if (!mkdtemp(tmp_dir))
		return -1;
	snprintf(cache_dir, sizeof(cache_dir), "%s/cache", tmp_dir);
	snprintf(state_dir, sizeof(state_dir), "%s/state", tmp_dir);
	/* CUCO_HOME comes from ctest; a test run by hand gets the source tree. */
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	setenv("CUCO_STATE", state_dir, 1);
	setenv("CUCO_HARNESS", CUCO_BINARY_DIR "/cuco-harness", 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmp_dir[0])
		rm_tree(tmp_dir);
	return 0;
}

static void read_text(const char *path, struct cuco_strbuf *sb)
{
	cuco_strbuf_reset(sb);
	if (cuco_strbuf_read_file(sb, path))
		fail_msg("cannot read %s", path);
}

static void compile_opts(struct cuco_compile_opts *o)
{
	struct cuco_err err;

	cuco_err_clear(&err);
	if (cuco_compile_opts_default(o, &err))
		fail_msg("cuco_compile_opts_default: %s", err.msg);
	o->cache_dir = cache_dir;
	o->jobs = 3; /* the three programs of test_compile at once */
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Files in the cache directory whose name contains part. */
static int cache_files_with(const char *part)
{
	DIR *d = opendir(cache_dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += strstr(de->d_name, part) != NULL;
	closedir(d);
	return n;
}

/* ---- compile ------------------------------------------------------------ */

static void test_compile(void **state)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job jobs[3], again;
	struct cuco_strbuf good = CUCO_STRBUF_INIT, syntax = CUCO_STRBUF_INIT,
	                   undef = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char first_so[sizeof(jobs[0].so_path)];

	(void)state;
	cuco_err_clear(&err);
	compile_opts(&o);
	read_text(GOOD_PROGRAM, &good);
	read_text(FIXTURES "/bad_syntax.cu", &syntax);
	read_text(FIXTURES "/bad_undefined.cu", &undef);
	cuco_compile_job_init(&jobs[0], "comm", GOOD_PROGRAM, good.buf);
	cuco_compile_job_init(&jobs[1], "syntax", FIXTURES "/bad_syntax.cu", syntax.buf);
	cuco_compile_job_init(&jobs[2], "undefined", FIXTURES "/bad_undefined.cu", undef.buf);

	assert_int_equal(cuco_compile_many(&o, jobs, 3, &err), CUCO_OK);

	/* The good program: built, not cached, a .so in the cache named by its hash. */
	if (jobs[0].code != CUCO_OK)
		fail_msg("comm_only.cu did not compile:\n%s", jobs[0].log.buf);
	assert_int_equal(jobs[0].cached, 0);
	assert_true(jobs[0].seconds > 0);
	assert_int_equal(strlen(jobs[0].hash), 64);
	assert_true(file_exists(jobs[0].so_path));
	assert_int_equal(strncmp(jobs[0].so_path, cache_dir, strlen(cache_dir)), 0);
	assert_contains(jobs[0].log.buf, "$ ");
	assert_contains(jobs[0].log.buf, "nvcc");

	/* The broken ones: nvcc's own error text, at the program's file and line. */
	assert_int_equal(jobs[1].code, CUCO_ERR_COMPILE);
	assert_false(jobs[1].cached);
	assert_false(file_exists(jobs[1].so_path));
	assert_contains(jobs[1].log.buf, "bad_syntax.cu(7): error");
	assert_contains(jobs[1].log.buf, "expected a \";\"");
	assert_int_equal(jobs[2].code, CUCO_ERR_COMPILE);
	assert_false(file_exists(jobs[2].so_path));
	assert_contains(jobs[2].log.buf, "bad_undefined.cu(6): error");
	assert_contains(jobs[2].log.buf, "identifier \"cuco_no_such_function\" is undefined");
	assert_string_not_equal(jobs[1].hash, jobs[2].hash);
	/* Failed builds leave no partial output behind. */
	assert_int_equal(cache_files_with(".tmp"), 0);

	/* The same source again: from the cache, no nvcc. */
	snprintf(first_so, sizeof(first_so), "%s", jobs[0].so_path);
	cuco_compile_job_init(&again, "comm-again", GOOD_PROGRAM, good.buf);
	assert_int_equal(cuco_compile_many(&o, &again, 1, &err), CUCO_OK);
	assert_int_equal(again.code, CUCO_OK);
	assert_int_equal(again.cached, 1);
	assert_true(again.seconds == 0);
	assert_string_equal(again.hash, jobs[0].hash);
	assert_string_equal(again.so_path, first_so);
	assert_int_equal(again.log.len, 0);

	for (int i = 0; i < 3; i++)
		cuco_compile_job_release(&jobs[i]);
	cuco_compile_job_release(&again);
	cuco_strbuf_release(&good);
	cuco_strbuf_release(&syntax);
	cuco_strbuf_release(&undef);
}

/* A cache directory that cannot be made is the cascade's failure, not a job's. */
static void test_compile_bad_cache(void **state)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job job;
	struct cuco_err err;
	char blocker[160], bad_cache[200];

	(void)state;
	cuco_err_clear(&err);
	compile_opts(&o);
	snprintf(blocker, sizeof(blocker), "%s/not-a-dir", tmp_dir);
	assert_int_equal(cuco_write_file(blocker, "x", 1), 0);
	snprintf(bad_cache, sizeof(bad_cache), "%s/cache", blocker);
	o.cache_dir = bad_cache;
	cuco_compile_job_init(&job, "x", GOOD_PROGRAM, "int x;\n");
	assert_int_equal(cuco_compile_many(&o, &job, 1, &err), CUCO_ERR_IO);
	assert_int_equal(err.code, CUCO_ERR_IO);
	assert_contains(err.msg, bad_cache);
	cuco_compile_job_release(&job);
	unlink(blocker);
}

/* ---- harness result lines ------------------------------------------------ */

/* Parse fixture name into res; returns cuco_run_result_parse's code. */
static int parse_fixture(const char *name, struct cuco_run_result *res, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	read_text(path, &sb);
	cuco_strbuf_rtrim(&sb);
	cuco_err_clear(err);
	cuco_run_result_init(res);
	rc = cuco_run_result_parse(sb.buf, res, err);
	cuco_strbuf_release(&sb);
	return rc;
}

static void assert_timed(const struct cuco_program_result *p, double median)
{
	assert_true(p->median_us == median);
	assert_true(isfinite(p->p10_us) && isfinite(p->p90_us));
	assert_true(isfinite(p->min_us) && isfinite(p->mean_us));
}

static void assert_untimed(const struct cuco_program_result *p)
{
	assert_true(isnan(p->median_us) && isnan(p->p10_us) && isnan(p->p90_us));
	assert_true(isnan(p->min_us) && isnan(p->mean_us));
	assert_null(p->samples_json);
}

/* What a bench table compares against: the fastest verified peer, the ideal bound from the
   fastest compute alone and comm alone, and the hidden fraction. */
static void test_reference(void **state)
{
	static const struct {
		const char *name, *origin;
		int code;
		double us;
	} rows[] = {
	    {"baseline", "baseline", CUCO_OK, 1000.0},
	    {"peer_graph", "peer", CUCO_OK, 930.0},
	    {"peer", "peer", CUCO_OK, 910.0},
	    {"peer_wrong", "peer", CUCO_ERR_VERIFY, 850.0}, /* wrong: no reference */
	    {"gemm", "compute", CUCO_OK, 520.0},
	    {"gemm_lib", "compute", CUCO_OK, 468.0},
	    {"comm", "comm", CUCO_OK, 430.0},
	    {"best", "file", CUCO_OK, 689.0},
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) };
	struct cuco_eval_program progs[N + 1];
	static struct cuco_eval_shape sh; /* large: a result slot per program the harness takes */
	struct cuco_program_result *res = sh.run.results;
	struct cuco_reference ref;

	(void)state;
	memset(progs, 0, sizeof(progs));
	for (int i = 0; i < N; i++) {
		snprintf(res[i].name, sizeof(res[i].name), "%s", rows[i].name);
		res[i].code = rows[i].code;
		res[i].median_us = rows[i].code == CUCO_OK ? rows[i].us : NAN;
		progs[i].name = rows[i].name;
		progs[i].origin = rows[i].origin;
	}
	progs[N].name = "never_ran"; /* compiled out: no result */
	progs[N].origin = "peer";
	sh.run.nresults = N;
	cuco_reference_of(&sh, progs, N + 1, &ref);
	assert_non_null(ref.peer);
	assert_string_equal(ref.peer, "peer");
	assert_true(ref.peer_us == 910.0);
	assert_true(ref.bound_us == 468.0); /* max(fastest compute 468, comm 430) */
	assert_true(fabs(cuco_hidden_fraction(ref.peer_us, ref.bound_us, 689.0) - 0.5) < 1e-12);
	assert_true(cuco_hidden_fraction(910.0, 468.0, 468.0) == 1.0);
	assert_true(cuco_hidden_fraction(910.0, 468.0, 910.0) == 0.0);
	assert_true(cuco_hidden_fraction(910.0, 468.0, 1352.0) == -1.0);
	assert_true(isnan(cuco_hidden_fraction(400.0, 468.0, 300.0))); /* peer under the bound */
	assert_true(isnan(cuco_hidden_fraction(NAN, 468.0, 300.0)));
	assert_true(isnan(cuco_hidden_fraction(910.0, NAN, 300.0)));
	assert_true(cuco_ideal_bound(300.0, 430.0) == 430.0);
	assert_true(isnan(cuco_ideal_bound(300.0, NAN)));

	/* comm missing: no bound; no peer that ran: none */
	res[6].code = CUCO_ERR_RUN;
	res[6].median_us = NAN;
	res[1].code = res[2].code = CUCO_ERR_VERIFY;
	cuco_reference_of(&sh, progs, N + 1, &ref);
	assert_null(ref.peer);
	assert_true(isnan(ref.peer_us) && isnan(ref.bound_us));
}

static void test_parse_ok(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	const struct cuco_program_result *b, *c;
	json_t *samples;

	(void)state;
	assert_int_equal(parse_fixture("ok_two.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_OK);
	assert_null(res.error);
	assert_string_equal(res.gpu, "NVIDIA H200");
	assert_string_equal(res.max_connections, "32");
	assert_non_null(res.raw_json);
	assert_contains(res.raw_json, "\"harness\":1");
	assert_int_equal(res.nresults, 2);

	b = &res.results[0];
	assert_string_equal(b->name, "baseline");
	assert_string_equal(b->status, "ok");
	assert_int_equal(b->code, CUCO_OK);
	assert_string_equal(b->stage, "bench");
	assert_int_equal(b->verify, 1);
	assert_true(b->rel_err == 0.00125);
	assert_timed(b, 812.5);
	assert_true(b->p10_us == 800.25 && b->p90_us == 830 && b->min_us == 795.5);
	assert_true(b->mean_us == 815);
	assert_int_equal(b->iters, 40);
	assert_int_equal(b->nranks_us, 2); /* each rank's own median */
	assert_true(b->rank_us[0] == 812.5 && b->rank_us[1] == 790.25);
	assert_true(b->weighted_us == 806.9); /* the workload weighs its ranks */
	assert_null(b->error);
	assert_non_null(b->samples_json);
	samples = json_loads(b->samples_json, 0, NULL);
	assert_true(json_is_array(samples));
	assert_int_equal(json_array_size(samples), 3);
	assert_true(json_number_value(json_array_get(samples, 1)) == 800.25);
	json_decref(samples);

	c = &res.results[1];
	assert_string_equal(c->name, "comm");
	assert_int_equal(c->code, CUCO_OK);
	assert_int_equal(c->verify, 0); /* "verified": null: timing only */
	assert_true(isnan(c->rel_err));
	assert_timed(c, 120.5);
	assert_int_equal(c->iters, 100);
	assert_int_equal(c->nranks_us, 0);
	assert_true(isnan(c->weighted_us)); /* not weighed */
	cuco_run_result_release(&res);
	assert_int_equal(res.nresults, 0);
	assert_null(res.raw_json);
}

static void test_parse_wrong(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	const struct cuco_program_result *p;

	(void)state;
	assert_int_equal(parse_fixture("wrong.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_OK);
	assert_string_equal(res.max_connections, ""); /* unset: CUDA's default */
	assert_int_equal(res.nresults, 1);
	p = &res.results[0];
	assert_string_equal(p->name, "seed");
	assert_string_equal(p->status, "wrong");
	assert_int_equal(p->code, CUCO_ERR_VERIFY);
	assert_string_equal(p->stage, "verify");
	assert_int_equal(p->verify, 1);
	assert_true(p->rel_err == 0.5);
	assert_untimed(p); /* a wrong program has no speed */
	assert_int_equal(p->iters, 0);
	assert_contains(p->error, "output differs from the reference");
	cuco_run_result_release(&res);
}

static void test_parse_timeout_partial(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;
	const struct cuco_program_result *b, *s;

	(void)state;
	assert_int_equal(parse_fixture("timeout_partial.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_ERR_TIMEOUT);
	assert_contains(res.error, "made no progress for 60 s in stage 'bench'");
	assert_string_equal(res.gpu, "");
	/* The finished program keeps its result; the hung one is added after it. */
	assert_int_equal(res.nresults, 2);
	b = &res.results[0];
	assert_string_equal(b->name, "baseline");
	assert_int_equal(b->code, CUCO_OK);
	assert_timed(b, 812.5);
	s = &res.results[1];
	assert_string_equal(s->name, "seed");
	assert_string_equal(s->status, "timeout");
	assert_int_equal(s->code, CUCO_ERR_TIMEOUT);
	assert_string_equal(s->stage, "bench");
	assert_true(isnan(s->rel_err));
	assert_untimed(s);
	assert_contains(s->error, "deadlock");
	cuco_run_result_release(&res);
}

static void test_parse_run_setup(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(parse_fixture("run_setup.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_ERR_RUN);
	assert_int_equal(res.nresults, 1);
	assert_string_equal(res.results[0].name, "seed");
	assert_int_equal(res.results[0].code, CUCO_ERR_RUN);
	/* Stages before verify (load, setup, init) all count as "run". */
	assert_string_equal(res.results[0].stage, "run");
	assert_contains(res.results[0].error, "ncclMemAlloc");
	cuco_run_result_release(&res);
}

static void test_parse_crash(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(parse_fixture("crash.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_ERR_CRASH);
	assert_contains(res.error, "died with signal 11");
	/* The launcher does not know which program was running: no program result. */
	assert_int_equal(res.nresults, 0);
	cuco_run_result_release(&res);
}

static void test_parse_no_gpu(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(parse_fixture("no_gpu.json", &res, &err), CUCO_OK);
	assert_int_equal(res.code, CUCO_ERR_NO_GPU);
	assert_string_equal(res.error, "no CUDA GPU visible on this node");
	assert_int_equal(res.nresults, 0);
	assert_non_null(res.raw_json);
	cuco_run_result_release(&res);
}

static void test_parse_malformed(void **state)
{
	struct cuco_run_result res;
	struct cuco_err err;

	(void)state;
	assert_int_equal(parse_fixture("malformed.json", &res, &err), CUCO_ERR_PARSE);
	assert_int_equal(err.code, CUCO_ERR_PARSE);
	assert_contains(err.msg, "harness output:1:");
	assert_int_equal(res.nresults, 0);
	assert_null(res.raw_json);
	cuco_run_result_release(&res);

	assert_int_equal(parse_fixture("no_harness.json", &res, &err), CUCO_ERR_PARSE);
	assert_contains(err.msg, "missing \"harness\"");
	assert_int_equal(res.nresults, 0);
	cuco_run_result_release(&res);

	/* Valid JSON that is not an object. */
	cuco_err_clear(&err);
	cuco_run_result_init(&res);
	assert_int_equal(cuco_run_result_parse("[1,2]", &res, &err), CUCO_ERR_PARSE);
	assert_contains(err.msg, "not a JSON object");
	cuco_run_result_release(&res);
}

/* ---- facts: the probe's JSON as the facts directives are checked against -- */

static void parse_probe(const char *name, int ranks, struct cuco_hw_facts *f, int want)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_err err;
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	read_text(path, &sb);
	cuco_err_clear(&err);
	rc = cuco_hw_facts_parse(sb.buf, ranks, f, &err);
	if (rc != want)
		fail_msg("%s: got %d (%s), want %d", name, rc, err.msg, want);
	cuco_strbuf_release(&sb);
}

static void test_facts_parse(void **state)
{
	struct cuco_hw_facts f;
	struct cuco_err err;
	char buf[160];

	(void)state;
	/* Two H200s over NVLink, no GIN NIC: what the search used to assume. */
	parse_probe("probe_h200x2.json", 2, &f, CUCO_OK);
	assert_int_equal(f.nranks, 2);
	assert_int_equal(f.gpus, 2);
	assert_int_equal(f.sm_count, 132);
	assert_int_equal(f.cc, 90);
	assert_int_equal(f.lsa_all_reachable, 1);
	assert_int_equal(f.gin_capable, 0);
	assert_string_equal(cuco_hw_facts_describe(&f, buf, sizeof(buf)),
	                    "2 ranks, 132 SMs, sm_90, LSA: all ranks, GIN: no");

	/* PCIe, mixed GPUs, a GIN NIC: the weakest GPU's SMs and architecture. */
	parse_probe("probe_pcie_mixed.json", 2, &f, CUCO_OK);
	assert_int_equal(f.gpus, 3);
	assert_int_equal(f.sm_count, 108);
	assert_int_equal(f.cc, 80);
	assert_int_equal(f.lsa_all_reachable, 0);
	assert_int_equal(f.gin_capable, 1);

	/* One GPU: the self-test did not run; one rank reaches itself, two need two GPUs. */
	parse_probe("probe_one_gpu.json", 1, &f, CUCO_OK);
	assert_int_equal(f.lsa_all_reachable, 1);
	parse_probe("probe_one_gpu.json", 2, &f, CUCO_ERR_NO_GPU);
	assert_int_equal(f.gpus, 1);
	assert_int_equal(f.lsa_all_reachable, 0);
	parse_probe("probe_none.json", 2, &f, CUCO_ERR_NO_GPU);
	assert_int_equal(f.gpus, 0);
	assert_int_equal(f.cc, 0);

	/* Not a probe result: the field is named. */
	parse_probe("probe_bad_cc.json", 1, &f, CUCO_ERR_PARSE);
	cuco_err_clear(&err);
	assert_int_equal(cuco_hw_facts_parse("{\"gpus\":[{\"cc\":\"9.0\"}]}", 1, &f, &err),
	                 CUCO_ERR_PARSE);
	assert_contains(err.msg, "gpus[0].sm_count: expected an integer");
	assert_int_equal(cuco_hw_facts_parse("[1]", 1, &f, &err), CUCO_ERR_PARSE);
	assert_contains(err.msg, "not a JSON object");
	assert_int_equal(cuco_hw_facts_parse("{\"gpus\":[],\"lsa\":null}", 1, &f, &err),
	                 CUCO_ERR_PARSE);
	assert_contains(err.msg, "gin_contexts: expected an integer");
}

static void test_arch_for_cc(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(cuco_arch_for_cc(90, buf, sizeof(buf)), "90a"); /* wgmma, TMA */
	assert_string_equal(cuco_arch_for_cc(0, buf, sizeof(buf)), "90a");  /* unknown */
	assert_string_equal(cuco_arch_for_cc(80, buf, sizeof(buf)), "80");
	assert_string_equal(cuco_arch_for_cc(100, buf, sizeof(buf)), "100");
}

/* ---- evaluate ------------------------------------------------------------ */

struct eval_count {
	int rows, compile_rows;
	int bad_directive_rows, no_directive_rows, compiled_rows;
};

static int count_eval(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	struct eval_count *c = arg;

	(void)err;
	c->rows++;
	if (e->stage_reached && !strcmp(e->stage_reached, "compile"))
		c->compile_rows++;
	if (e->error && strstr(e->error, "bad_directive.cu:1:") &&
	    e->error_code == CUCO_ERR_INVALID && !strcmp(e->status, "invalid"))
		c->bad_directive_rows++;
	if (e->error && strstr(e->error, "no cuco-directive line") &&
	    e->error_code == CUCO_ERR_PARSE && !strcmp(e->status, "parse"))
		c->no_directive_rows++;
	/* Programs that compiled get a compile-stage row too: "ok" when the
	 * cascade stopped by request, "no_gpu" when there was nothing to run on. */
	if (e->stage_reached && !strcmp(e->stage_reached, "compile") &&
	    (!strcmp(e->status, "ok") || !strcmp(e->status, "no_gpu")))
		c->compiled_rows++;
	return 0;
}

struct eval_env {
	struct cuco_manifest m;
	struct cuco_store *store;
	struct cuco_strbuf src[3];
	struct cuco_eval_program progs[3];
	const struct cuco_shape *shapes[2];
	struct cuco_eval_request req;
	struct cuco_eval_shape out[2];
	char store_path[160];
};

/* A rejected seed, a rejected candidate and comm_only.cu, over two shapes. */
static void eval_env_init(struct eval_env *v, const char *store_name, int compile_only)
{
	struct cuco_run_rec run;
	struct cuco_err err;

	memset(v, 0, sizeof(*v));
	cuco_err_clear(&err);
	if (cuco_manifest_load(FIXTURES "/manifest.json", &v->m, &err))
		fail_msg("fixture manifest: %s", err.msg);
	assert_int_equal(v->m.nshapes, 2);
	snprintf(v->store_path, sizeof(v->store_path), "%s/%s", tmp_dir, store_name);
	if (cuco_store_open(v->store_path, &v->store, &err))
		fail_msg("store: %s", err.msg);
	cuco_run_rec_init(&run);
	run.kind = "bench";
	run.workload = v->m.name;
	run.status = "running";
	assert_int_equal(cuco_store_run_begin(v->store, &run, &v->req.run_id, &err), CUCO_OK);

	for (int i = 0; i < 3; i++)
		cuco_strbuf_init(&v->src[i], 0);
	read_text(FIXTURES "/bad_directive.cu", &v->src[0]);
	read_text(FIXTURES "/no_directive.cu", &v->src[1]);
	read_text(GOOD_PROGRAM, &v->src[2]);
	cuco_eval_program_init(&v->progs[0], "seed", "seed", FIXTURES "/bad_directive.cu",
	                       v->src[0].buf, 1);
	cuco_eval_program_init(&v->progs[1], "cand", "candidate", FIXTURES "/no_directive.cu",
	                       v->src[1].buf, 1);
	cuco_eval_program_init(&v->progs[2], "comm", "comm", GOOD_PROGRAM, v->src[2].buf, 0);

	v->shapes[0] = &v->m.shapes[0];
	v->shapes[1] = &v->m.shapes[1];
	v->req.m = &v->m;
	v->req.shapes = v->shapes;
	v->req.nshapes = 2;
	v->req.progs = v->progs;
	v->req.nprogs = 3;
	v->req.store = v->store;
	v->req.compile_only = compile_only;
	compile_opts(&v->req.compile);
	cuco_run_opts_default(&v->req.run);
}

static void eval_env_release(struct eval_env *v)
{
	for (int s = 0; s < 2; s++)
		cuco_eval_shape_release(&v->out[s]);
	for (int i = 0; i < 3; i++) {
		cuco_eval_program_release(&v->progs[i]);
		cuco_strbuf_release(&v->src[i]);
	}
	cuco_store_close(v->store);
	cuco_manifest_release(&v->m);
}

/* What every evaluation must say about the two rejected programs and the good one. */
static void assert_precheck_outcomes(struct eval_env *v)
{
	struct cuco_eval_program *seed = &v->progs[0], *cand = &v->progs[1], *comm = &v->progs[2];
	struct eval_count c = {0};
	struct cuco_err err;

	/* Rejected before nvcc: a code and a positioned message, no compile at all. */
	assert_int_equal(seed->precheck_code, CUCO_ERR_INVALID);
	assert_contains(seed->precheck_error, "bad_directive.cu:1:");
	assert_contains(seed->precheck_error, "placement");
	assert_non_null(seed->directive_json); /* parsed, then refused by the design space */
	assert_int_equal(seed->job.code, CUCO_ERR_INVALID);
	assert_int_equal(seed->job.cached, 0);
	assert_int_equal(seed->job.log.len, 0);
	assert_string_equal(seed->job.so_path, "");

	assert_int_equal(cand->precheck_code, CUCO_ERR_PARSE);
	assert_contains(cand->precheck_error, "no cuco-directive line");
	assert_null(cand->directive_json);
	assert_int_equal(cand->job.code, CUCO_ERR_PARSE);
	assert_int_equal(cand->job.log.len, 0);
	assert_string_equal(cand->job.so_path, "");

	/* The good program compiled (from the cache when test_compile ran first). */
	assert_int_equal(comm->precheck_code, 0);
	if (comm->job.code != CUCO_OK)
		fail_msg("comm did not compile:\n%s", comm->job.log.buf);
	assert_true(file_exists(comm->job.so_path));

	/* Every program is stored; each has a compile-stage row per shape. */
	for (int i = 0; i < 3; i++)
		assert_true(v->progs[i].program_id > 0);
	cuco_err_clear(&err);
	assert_int_equal(cuco_store_eval_each_run(v->store, v->req.run_id, count_eval, &c, &err),
	                 CUCO_OK);
	assert_int_equal(c.compile_rows, 6);
	assert_int_equal(c.bad_directive_rows, 2);
	assert_int_equal(c.no_directive_rows, 2);
	assert_int_equal(c.compiled_rows, 2);
	assert_int_equal(c.rows, 6);
}

static void test_evaluate_compile_only(void **state)
{
	struct eval_env v;
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	eval_env_init(&v, "compile-only.db", 1);
	if (cuco_evaluate(&v.req, v.out, &err) != CUCO_OK)
		fail_msg("cuco_evaluate: %s", err.msg);
	assert_precheck_outcomes(&v);
	for (int s = 0; s < 2; s++) {
		assert_ptr_equal(v.out[s].shape, v.shapes[s]);
		assert_int_equal(v.out[s].code, CUCO_OK);
		assert_int_equal(v.out[s].run.nresults, 0);
	}
	eval_env_release(&v);
}

/* Without compile_only on a machine without GPUs: compile results kept, then no_gpu. */
static void test_evaluate_no_gpu(void **state)
{
	struct eval_env v;
	struct cuco_err err;
	int ngpu;

	(void)state;
	cuco_err_clear(&err);
	ngpu = cuco_gpu_count(&err);
	if (ngpu < 0)
		fail_msg("cuco-harness --count-gpus: %s", err.msg);
	if (ngpu >= 2)
		skip(); /* a GPU node runs the GPU tests instead */
	eval_env_init(&v, "no-gpu.db", 0);
	assert_int_equal(cuco_evaluate(&v.req, v.out, &err), CUCO_ERR_NO_GPU);
	assert_contains(err.msg, "execution needs 2 CUDA GPUs");
	assert_precheck_outcomes(&v);
	for (int s = 0; s < 2; s++) {
		assert_int_equal(v.out[s].code, CUCO_ERR_NO_GPU);
		assert_contains(v.out[s].error, "execution needs 2 CUDA GPUs");
		assert_int_equal(v.out[s].run.nresults, 0);
	}
	eval_env_release(&v);
}

/* The node's facts refuse a valid directive before nvcc: LSA with ranks out of reach. */
static void test_evaluate_facts(void **state)
{
	struct cuco_manifest m;
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_eval_program prog;
	struct cuco_eval_request req;
	struct cuco_eval_shape out[1];
	const struct cuco_shape *shapes[1];
	struct cuco_hw_facts pcie = {.nranks = 2, .sm_count = 114, .cc = 90, .gpus = 2};
	struct cuco_err err;

	(void)state;
	cuco_err_clear(&err);
	if (cuco_manifest_load(FIXTURES "/manifest.json", &m, &err))
		fail_msg("fixture manifest: %s", err.msg);
	read_text(FIXTURES "/lsa_directive.cu", &src);
	cuco_eval_program_init(&prog, "cand", "candidate", FIXTURES "/lsa_directive.cu", src.buf,
	                       1);
	memset(&req, 0, sizeof(req));
	memset(out, 0, sizeof(out));
	shapes[0] = &m.shapes[0];
	req.m = &m;
	req.shapes = shapes;
	req.nshapes = 1;
	req.progs = &prog;
	req.nprogs = 1;
	req.compile_only = 1;
	req.facts = &pcie;
	compile_opts(&req.compile);
	cuco_run_opts_default(&req.run);
	if (cuco_evaluate(&req, out, &err) != CUCO_OK)
		fail_msg("cuco_evaluate: %s", err.msg);
	assert_int_equal(prog.precheck_code, CUCO_ERR_UNSUPPORTED);
	assert_contains(prog.precheck_error, "lsa_directive.cu:1:");
	assert_contains(prog.precheck_error, "needs every rank reachable by load/store");
	assert_int_equal(prog.job.code, CUCO_ERR_UNSUPPORTED);
	assert_int_equal(prog.job.log.len, 0); /* never reached nvcc */
	cuco_eval_shape_release(&out[0]);
	cuco_eval_program_release(&prog);
	cuco_strbuf_release(&src);
	cuco_manifest_release(&m);
}

/*
 * A manifest that names a reference program: it is compiled with the batch (once, where a
 * program of the batch has its source) and every harness run gets --reference-program and
 * the shape's --argv. A stand-in harness writes its arguments to the run's log.
 */
static void test_evaluate_reference(void **state)
{
	struct cuco_manifest m;
	struct cuco_strbuf src = CUCO_STRBUF_INIT, want = CUCO_STRBUF_INIT;
	struct cuco_eval_program prog;
	struct cuco_eval_request req;
	struct cuco_eval_shape out[2];
	const struct cuco_shape *shapes[2];
	struct cuco_err err;
	char harness[128];
	FILE *f;

	(void)state;
	cuco_err_clear(&err);
	snprintf(harness, sizeof(harness), "%s/fake-harness.sh", tmp_dir);
	f = fopen(harness, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n"
	      "if [ \"$1\" = --count-gpus ]; then echo 2; exit 0; fi\n"
	      "echo \"args: $*\" >&2\n"
	      "echo '{\"harness\":1,\"status\":\"ok\",\"gpu\":\"fake\",\"reference\":\"program\","
	      "\"programs\":[{\"name\":\"baseline\",\"status\":\"ok\",\"verified\":true,"
	      "\"rel_err\":0,\"mismatched\":0,\"median_us\":5.0}]}' >&3\n",
	      f);
	fclose(f);
	assert_int_equal(chmod(harness, 0755), 0);
	setenv("CUCO_HARNESS", harness, 1);
	setenv("CUCO_SANDBOX_RUN_JAIL", "0", 1);

	if (cuco_manifest_load(FIXTURES "/manifest_reference.json", &m, &err))
		fail_msg("fixture manifest: %s", err.msg);
	assert_string_equal(m.reference_program, "baseline");
	read_text(GOOD_PROGRAM, &src);
	cuco_eval_program_init(&prog, "baseline", "baseline", GOOD_PROGRAM, src.buf, 1);
	memset(&req, 0, sizeof(req));
	memset(out, 0, sizeof(out));
	shapes[0] = &m.shapes[0];
	shapes[1] = &m.shapes[1];
	req.m = &m;
	req.shapes = shapes;
	req.nshapes = 2;
	req.progs = &prog;
	req.nprogs = 1;
	compile_opts(&req.compile);
	cuco_run_opts_default(&req.run);
	if (cuco_evaluate(&req, out, &err) != CUCO_OK)
		fail_msg("cuco_evaluate: %s", err.msg);
	if (prog.job.code != CUCO_OK)
		fail_msg("baseline did not compile:\n%s", prog.job.log.buf);
	assert_null(req.run.reference_so); /* the caller's options are left alone */
	for (int s = 0; s < 2; s++) {
		assert_int_equal(out[s].code, CUCO_OK);
		assert_int_equal(out[s].run.nresults, 1);
		cuco_strbuf_reset(&want);
		/* the batch's own build of the same source: compiled once */
		cuco_strbuf_addf(&want, "--reference-program %s --argv %s", prog.job.so_path,
		                 s ? "--large 2" : "-M 256 -n 2");
		assert_contains(out[s].run.log.buf, want.buf);
		assert_contains(out[s].run.raw_json, "\"reference\":\"program\"");
		cuco_eval_shape_release(&out[s]);
	}
	unsetenv("CUCO_SANDBOX_RUN_JAIL");
	setenv("CUCO_HARNESS", CUCO_BINARY_DIR "/cuco-harness", 1);
	cuco_eval_program_release(&prog);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&want);
	cuco_manifest_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_compile),
	    cmocka_unit_test(test_compile_bad_cache),
	    cmocka_unit_test(test_reference),
	    cmocka_unit_test(test_parse_ok),
	    cmocka_unit_test(test_parse_wrong),
	    cmocka_unit_test(test_parse_timeout_partial),
	    cmocka_unit_test(test_parse_run_setup),
	    cmocka_unit_test(test_parse_crash),
	    cmocka_unit_test(test_parse_no_gpu),
	    cmocka_unit_test(test_parse_malformed),
	    cmocka_unit_test(test_facts_parse),
	    cmocka_unit_test(test_arch_for_cc),
	    cmocka_unit_test(test_evaluate_compile_only),
	    cmocka_unit_test(test_evaluate_no_gpu),
	    cmocka_unit_test(test_evaluate_facts),
	    cmocka_unit_test(test_evaluate_reference),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
