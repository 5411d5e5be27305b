/* test_evolve_flags.c - a `cuco evolve` command line over a run's config: a fresh run takes
 * every flag, a resumed run keeps its timing, statistic, schedule, shapes, seed and operator,
 * refuses flags that would change them, and takes the LLM endpoint flags with a note. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "search/evolve_flags.h"
#include "search/llm_operator.h"
#include "store/store.h"

/* A stored run 7 of workload gemm_allgather whose config is cfg (with llm settings when given). */
struct stored_run {
	struct cuco_run_rec rec;
	char *config;
};

static void store_run(struct stored_run *s, const struct cuco_evolve_config *cfg,
                      const char *llm_json)
{
	char *text = cuco_evolve_config_to_json(cfg);
	json_t *o = json_loads(text, 0, NULL);

	assert_non_null(o);
	if (llm_json)
		assert_int_equal(json_object_set_new(o, "llm", json_loads(llm_json, 0, NULL)), 0);
	s->config = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(text);
	memset(&s->rec, 0, sizeof(s->rec));
	s->rec.id = 7;
	s->rec.kind = "evolve";
	s->rec.workload = "gemm_allgather";
	s->rec.shape = "2048";
	s->rec.config = s->config;
}

/* A run made by `cuco evolve gemm_allgather --shape 2048 --shape 4096 --timing burst
 * --statistic mean --explore 0.25 --search-seed 9 --islands 3 --freeze tile_n`. */
static void made_run(struct cuco_evolve_config *cfg)
{
	struct cuco_evolve_flags f;
	struct cuco_err err;
	const char given[2][32] = {"2048", "4096"};

	cuco_evolve_flags_init(&f);
	f.workload = "gemm_allgather";
	f.timing = "burst";
	f.statistic = "mean";
	f.explore = 0.25;
	f.search_seed = 9;
	f.islands = 3;
	f.freeze = "tile_n";
	f.template_path = "/t/gemm_allgather.cu.in";
	f.max_connections = "32";
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, cfg, NULL, &err), CUCO_OK);
	assert_int_equal(cuco_evolve_flags_shapes(given, 2, "2048", 0, NULL, cfg, &err), CUCO_OK);
}

static void test_fresh(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_flags f;
	struct cuco_err err;

	(void)state;
	made_run(&cfg);
	assert_string_equal(cfg.timing, "burst");
	assert_string_equal(cfg.statistic, "mean");
	assert_true(cfg.explore_fraction == 0.25);
	assert_int_equal(cfg.search_seed, 9);
	assert_int_equal(cfg.islands, 3);
	assert_string_equal(cfg.freeze, "tile_n");
	assert_string_equal(cfg.max_connections, "32");
	assert_string_equal(cfg.operator_, "builtin");
	assert_true(cfg.llm_share == 0);
	assert_int_equal(cfg.nshapes, 2);
	assert_string_equal(cfg.shapes[1], "4096");

	/* nothing given: the defaults, sustained timing, the workload's default shape */
	cuco_evolve_flags_init(&f);
	f.operator_ = "mixed";
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.timing, "sustained");
	assert_string_equal(cfg.statistic, "median");
	assert_string_equal(cfg.max_connections, "");
	assert_int_equal(cfg.search_seed, 1);
	assert_true(cfg.llm_share == 0.5);
	assert_int_equal(cfg.pipeline, 1);
	assert_int_equal(cuco_evolve_flags_shapes(NULL, 0, "8192", 0, NULL, &cfg, &err), CUCO_OK);
	assert_int_equal(cfg.nshapes, 1);
	assert_string_equal(cfg.shapes[0], "8192");
}

static void test_resume_keeps(void **state)
{
	struct cuco_evolve_config made, cfg;
	struct cuco_evolve_flags f;
	struct stored_run s;
	struct cuco_err err;
	const char same[2][32] = {"2048", "4096"};

	(void)state;
	made_run(&made);
	store_run(&s, &made, NULL);
	/* flags that raise the budgets and generations apply; the rest is the run's */
	cuco_evolve_flags_init(&f);
	f.generations = 40;
	f.budget_evals = 100;
	f.no_pipeline = 1;
	f.islands = 8; /* ignored: islands are rebuilt from the store */
	f.search_seed = 3;
	f.timing = "burst";
	f.statistic = "mean";
	f.explore = 0.25;
	f.max_connections = "32";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, stderr, &err), CUCO_OK);
	assert_int_equal(cfg.generations, 40);
	assert_int_equal(cfg.budget_evals, 100);
	assert_int_equal(cfg.pipeline, 0);
	assert_int_equal(cfg.islands, 3);
	assert_int_equal(cfg.search_seed, 9);
	assert_string_equal(cfg.timing, "burst");
	assert_string_equal(cfg.statistic, "mean");
	assert_string_equal(cfg.freeze, "tile_n");
	/* the stored template, found by its name in the data folder (never where the store says) */
	assert_string_equal(cfg.template_path,
	                    CUCO_SOURCE_DIR "/share/realize/gemm_allgather.cu.in");
	assert_string_equal(cfg.operator_, "builtin");
	/* the shapes: kept, the same list given again is accepted */
	assert_int_equal(cuco_evolve_flags_shapes(NULL, 0, "8192", 7, "2048", &cfg, &err), CUCO_OK);
	assert_int_equal(cfg.nshapes, 2);
	assert_int_equal(cuco_evolve_flags_shapes(same, 2, "8192", 7, "2048", &cfg, &err), CUCO_OK);
	/* another template given on resume is taken */
	f.template_path = "/u/other.cu.in";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.template_path, "/u/other.cu.in");
	free(s.config);
}

/* The refusal for one flag: CUCO_ERR_USAGE and the message. */
static void refused(const struct cuco_evolve_flags *f, const struct cuco_run_rec *rec,
                    const char *want)
{
	struct cuco_evolve_config cfg;
	struct cuco_err err;

	cuco_err_clear(&err);
	assert_int_equal(cuco_evolve_flags_apply(f, rec, &cfg, NULL, &err), CUCO_ERR_USAGE);
	assert_string_equal(err.msg, want);
}

static void test_resume_refuses(void **state)
{
	struct cuco_evolve_config made, cfg;
	struct cuco_evolve_flags f;
	struct stored_run s;
	struct cuco_err err;
	const char fewer[1][32] = {"2048"};

	(void)state;
	made_run(&made);
	store_run(&s, &made, NULL);
	cuco_evolve_flags_init(&f);
	f.timing = "sustained";
	refused(&f, &s.rec,
	        "run 7 times candidates burst; --timing sustained would mix timings in one run "
	        "(drop it)");
	cuco_evolve_flags_init(&f);
	f.statistic = "median";
	refused(&f, &s.rec,
	        "--statistic median: run 7 ranks by the mean; a resumed run keeps it, so fitness "
	        "never mixes the two (drop it)");
	cuco_evolve_flags_init(&f);
	f.explore = 0.5;
	refused(&f, &s.rec,
	        "--explore 0.5: run 7 explores 0.25 of its generations; a resumed run keeps its "
	        "schedule (drop it)");
	cuco_evolve_flags_init(&f);
	f.workload = "gemm_reducescatter";
	refused(&f, &s.rec, "run 7 evolved gemm_allgather, not gemm_reducescatter");
	cuco_evolve_flags_init(&f);
	f.operator_ = "llm";
	refused(&f, &s.rec,
	        "--operator llm: run 7 was made with --operator builtin, which a resumed run "
	        "keeps; drop --operator");
	cuco_evolve_flags_init(&f);
	f.llm_share = 0.3;
	refused(&f, &s.rec,
	        "--llm-share 0.3: run 7 was made with --operator builtin, which takes no share; "
	        "drop --llm-share");
	/* shapes: another list changes what fitness means */
	cuco_evolve_flags_init(&f);
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_OK);
	assert_int_equal(cuco_evolve_flags_shapes(fewer, 1, "2048", 7, "2048", &cfg, &err),
	                 CUCO_ERR_USAGE);
	assert_string_equal(err.msg, "run 7 evolves for shapes 2048, 4096; --shape 2048 would "
	                             "change what its fitness means (drop --shape)");
	/* a run naming no workload, a config that does not read */
	s.rec.workload = NULL;
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "run 7 names no workload");
	s.rec.workload = "gemm_allgather";
	s.rec.config = "[1]";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_ERR_PARSE);
	free(s.config);
}

static void test_resume_old_config(void **state)
{
	struct cuco_evolve_config cfg;
	struct cuco_evolve_flags f;
	struct cuco_run_rec rec;
	struct cuco_err err;

	(void)state;
	/* stored before the timing, the operator and the shapes were recorded */
	memset(&rec, 0, sizeof(rec));
	rec.id = 2;
	rec.workload = "gemm_allgather";
	rec.shape = "4096";
	rec.config = "{\"search_seed\":5,\"islands\":2}";
	cuco_evolve_flags_init(&f);
	f.operator_ = "llm"; /* not checked: the caller decides as for a fresh run */
	f.timing = "sustained";
	assert_int_equal(cuco_evolve_flags_apply(&f, &rec, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.operator_, "");
	assert_string_equal(cfg.timing, "sustained");
	assert_int_equal(cfg.pipeline, 0);
	assert_int_equal(cfg.search_seed, 5);
	assert_int_equal(cuco_evolve_flags_shapes(NULL, 0, "2048", 2, rec.shape, &cfg, &err),
	                 CUCO_OK);
	assert_int_equal(cfg.nshapes, 1);
	assert_string_equal(cfg.shapes[0], "4096");
}

static void test_resume_notes(void **state)
{
	struct cuco_evolve_config made, cfg;
	struct cuco_evolve_flags f;
	struct stored_run s;
	struct cuco_err err;
	char *text = NULL;
	size_t len = 0;
	FILE *notes;

	(void)state;
	made_run(&made);
	store_run(&s, &made, NULL);
	cuco_evolve_flags_init(&f);
	notes = open_memstream(&text, &len);
	assert_non_null(notes);
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, notes, &err), CUCO_OK);
	fclose(notes);
	assert_string_equal(text, "cuco evolve: warning: run 7 started with "
	                          "CUDA_DEVICE_MAX_CONNECTIONS 32, this process has unset: "
	                          "candidates' times may not compare across the two (lsa stream "
	                          "overlap's do not)\n");
	free(text);
	free(s.config);
}

/* A mixed run with two models: the models and share stay, the endpoint flags replace. */
static void test_resume_llm(void **state)
{
	struct cuco_llm_operator_config lc;
	struct cuco_evolve_config made, cfg;
	struct cuco_evolve_flags f;
	struct cuco_evolve_llm_flags lf;
	struct cuco_llm_stored st;
	struct stored_run s;
	struct cuco_err err;
	const char *two[] = {"m1", "m2"}, *one[] = {"m2"};
	char *llm_json, *text = NULL;
	size_t len = 0;
	int have = -1;
	FILE *notes;

	(void)state;
	cuco_evolve_flags_init(&f);
	f.workload = "gemm_allgather";
	f.operator_ = "mixed";
	f.llm_share = 0.25;
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &made, NULL, &err), CUCO_OK);
	cuco_llm_operator_config_init(&lc);
	lc.llm.base_url = "http://127.0.0.1:1";
	lc.llm.budget_tokens = 1000;
	lc.models[0] = "m1";
	lc.models[1] = "m2";
	lc.nmodels = 2;
	llm_json = cuco_llm_operator_config_to_json(&lc);
	assert_non_null(llm_json);
	store_run(&s, &made, llm_json);
	free(llm_json);

	/* --llm-share must equal the stored one */
	cuco_evolve_flags_init(&f);
	f.llm_share = 0.5;
	refused(&f, &s.rec,
	        "--llm-share 0.5: run 7 was made with --llm-share 0.25, which a resumed run "
	        "keeps; drop --llm-share");
	f.llm_share = 0.25;
	f.operator_ = "mixed";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.operator_, "mixed");

	/* other models: refused */
	memset(&lf, 0, sizeof(lf));
	memset(&st, 0, sizeof(st));
	lf.models = one;
	lf.nmodels = 1;
	assert_int_equal(cuco_evolve_llm_resume(&lf, &cfg, s.config, 7, &st, &have, NULL, &err),
	                 CUCO_ERR_USAGE);
	assert_string_equal(err.msg, "--llm-model m2: run 7 was made with --llm-model m1 "
	                             "--llm-model m2, which a resumed run keeps (the bandit's "
	                             "arms); drop --llm-model");
	cuco_llm_stored_release(&st);

	/* the same models, another endpoint and budget: taken with a note each */
	memset(&st, 0, sizeof(st));
	lf.models = two;
	lf.nmodels = 2;
	lf.base_url = "http://127.0.0.1:2";
	lf.budget_tokens = 5000;
	notes = open_memstream(&text, &len);
	assert_non_null(notes);
	assert_int_equal(cuco_evolve_llm_resume(&lf, &cfg, s.config, 7, &st, &have, notes, &err),
	                 CUCO_OK);
	fclose(notes);
	assert_int_equal(have, 1);
	assert_int_equal(st.cfg.nmodels, 2);
	assert_string_equal(st.cfg.models[1], "m2");
	assert_string_equal(st.cfg.llm.base_url, "http://127.0.0.1:2");
	assert_int_equal(st.cfg.llm.budget_tokens, 5000);
	assert_non_null(strstr(text, "cuco evolve: run 7: --llm-base-url http://127.0.0.1:2 "
	                             "replaces the stored http://127.0.0.1:1 for this resume"));
	assert_non_null(strstr(text, "--llm-budget-tokens 5000 replaces the stored 1000"));
	free(text);
	cuco_llm_stored_release(&st);

	/* a config that says mixed but holds no settings */
	memset(&st, 0, sizeof(st));
	memset(&lf, 0, sizeof(lf));
	assert_int_equal(cuco_evolve_llm_resume(&lf, &cfg, "{\"operator\":\"mixed\"}", 7, &st,
	                                        &have, NULL, &err),
	                 CUCO_ERR_PARSE);
	assert_string_equal(err.msg,
	                    "run 7: its config says operator mixed but holds no \"llm\" settings");
	cuco_llm_stored_release(&st);
	free(s.config);
}

/* The stored config of a run 7 made with template path, resumed: the code and the message. */
static int resume_with_template(const char *path, struct cuco_err *err)
{
	struct cuco_evolve_config made, cfg;
	struct cuco_evolve_flags f;
	struct stored_run s;
	int rc;

	made_run(&made);
	snprintf(made.template_path, sizeof(made.template_path), "%s", path);
	store_run(&s, &made, NULL);
	cuco_evolve_flags_init(&f);
	cuco_err_clear(err);
	rc = cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, err);
	free(s.config);
	return rc;
}

/* A stored template path is never trusted: the data folder's share/realize only. */
static void test_resume_template(void **state)
{
	struct cuco_err err;
	char dir[64], path[128], out[256];
	FILE *fp;

	(void)state;
	setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	assert_int_equal(resume_with_template("/etc/passwd", &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg,
	                    "run 7: its stored template /etc/passwd is not a template of the data "
	                    "folder (" CUCO_SOURCE_DIR "/share/realize/NAME.cu.in); a resumed run "
	                    "takes its template from there only, or from --template FILE");
	assert_int_equal(resume_with_template("/tmp/../etc/nothing_here.cu.in", &err),
	                 CUCO_ERR_INVALID);
	assert_true(strstr(err.msg, "run 7: its stored template /tmp/../etc/nothing_here.cu.in: no "
	                            "template nothing_here.cu.in in the data folder's ") != NULL);
	assert_int_equal(resume_with_template("/elsewhere/moe_layer.cu.in", &err), CUCO_OK);
	/* inside the folder but no marker line, or a link out of it: refused */
	snprintf(dir, sizeof(dir), "/tmp/cuco-test-flags-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/plain.cu.in", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{{DIRECTIVE}}\nint x;\n", fp);
	fclose(fp);
	assert_int_equal(
	    cuco_evolve_flags_template("/a/plain.cu.in", dir, 3, out, sizeof(out), &err),
	    CUCO_ERR_INVALID);
	assert_true(
	    strstr(err.msg, "has no '// cuco-realizes:' line: it is not a program template") !=
	    NULL);
	assert_string_equal(out, "");
	unlink(path);
	assert_int_equal(symlink(CUCO_SOURCE_DIR "/share/realize/moe_layer.cu.in", path), 0);
	assert_int_equal(cuco_evolve_flags_template("plain.cu.in", dir, 3, out, sizeof(out), &err),
	                 CUCO_ERR_INVALID);
	assert_true(strstr(err.msg, "no template plain.cu.in in the data folder's") != NULL);
	unlink(path);
	rmdir(dir);
	assert_int_equal(cuco_evolve_flags_template("x/kv_transfer.cu.in",
	                                            CUCO_SOURCE_DIR "/share/realize", 3, out,
	                                            sizeof(out), &err),
	                 CUCO_OK);
	assert_string_equal(out, CUCO_SOURCE_DIR "/share/realize/kv_transfer.cu.in");
}

/* --selection: a fresh run takes it (--best-of only with best_of_n), the config keeps it, a
 * resumed run refuses another; a config without one selects by rank. */
static void test_selection(void **state)
{
	struct cuco_evolve_flags f;
	struct cuco_evolve_config cfg, back;
	struct stored_run s;
	struct cuco_err err;
	char *json;

	(void)state;
	cuco_evolve_flags_init(&f);
	f.workload = "gemm_allgather";
	f.best_of = 4;
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &cfg, NULL, &err), CUCO_ERR_USAGE);
	assert_string_equal(err.msg, "--best-of is for --selection best_of_n");
	f.selection = "best_of_n";
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.selection, "best_of_n");
	assert_int_equal(cfg.selection_n, 4);
	json = cuco_evolve_config_to_json(&cfg);
	assert_int_equal(cuco_evolve_config_from_json(json, &back, &err), CUCO_OK);
	assert_string_equal(back.selection, "best_of_n");
	assert_int_equal(back.selection_n, 4);
	free(json);
	assert_int_equal(
	    cuco_evolve_config_from_json("{\"selection\":\"tournament\"}", &back, &err),
	    CUCO_ERR_PARSE);
	assert_int_equal(cuco_evolve_config_from_json("{}", &back, &err), CUCO_OK);
	assert_string_equal(back.selection, "rank");

	store_run(&s, &cfg, NULL);
	cuco_evolve_flags_init(&f);
	f.selection = "beam";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_ERR_USAGE);
	assert_non_null(strstr(err.msg, "run 7 selects parents by best_of_n"));
	f.selection = "best_of_n";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_OK);
	assert_string_equal(cfg.migration, "ring");
	f.migration = "all";
	assert_int_equal(cuco_evolve_flags_apply(&f, &s.rec, &cfg, NULL, &err), CUCO_ERR_USAGE);
	assert_non_null(strstr(err.msg, "--migration all: run 7 migrates along ring"));
	free(s.config);

	/* --migration: a graph over the run's islands, stored */
	cuco_evolve_flags_init(&f);
	f.islands = 2;
	f.migration = "0>2";
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &cfg, NULL, &err), CUCO_ERR_USAGE);
	assert_string_equal(err.msg,
	                    "--migration: edge 0>2: islands are 0..1, no island sends to itself");
	f.migration = "1>0";
	assert_int_equal(cuco_evolve_flags_apply(&f, NULL, &cfg, NULL, &err), CUCO_OK);
	json = cuco_evolve_config_to_json(&cfg);
	assert_int_equal(cuco_evolve_config_from_json(json, &back, &err), CUCO_OK);
	assert_string_equal(back.migration, "1>0");
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fresh),           cmocka_unit_test(test_resume_keeps),
	    cmocka_unit_test(test_resume_refuses),  cmocka_unit_test(test_resume_old_config),
	    cmocka_unit_test(test_resume_notes),    cmocka_unit_test(test_resume_llm),
	    cmocka_unit_test(test_resume_template), cmocka_unit_test(test_selection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
