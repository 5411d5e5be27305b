/* test_directive.c - cuco-directive parsing and validation; the design space file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program/directive.h"
#include "util/error.h"
#include "util/strbuf.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/directives"
#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"

static struct cuco_design_space ds;

static int setup(void **state)
{
	struct cuco_err err;

	(void)state;
	if (cuco_design_space_load(DESIGN_SPACE, &ds, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return chdir(FIXTURES);
}

static int teardown(void **state)
{
	(void)state;
	cuco_design_space_release(&ds);
	return 0;
}

static void test_design_space(void **state)
{
	const struct cuco_ds_knob *k;
	int i, j;

	(void)state;
	assert_int_equal(ds.dims[CUCO_DIM_BACKEND].nvalues, 4);
	assert_string_equal(ds.dims[CUCO_DIM_BACKEND].values[2].name, "ce");
	assert_string_equal(ds.dims[CUCO_DIM_BACKEND].values[3].name, "nvshmem");
	assert_int_equal(ds.dims[CUCO_DIM_PLACEMENT].nvalues, 5);
	assert_int_equal(ds.dims[CUCO_DIM_SYNC_SCOPE].nvalues, 4);
	assert_int_equal(ds.dims[CUCO_DIM_ISSUER].nvalues, 3);
	assert_int_equal(ds.dims[CUCO_DIM_GRANULARITY].nvalues, 3);
	for (i = 0; i < CUCO_NDIMS; i++) {
		assert_string_equal(ds.dims[i].name, cuco_dimension_name(i));
		for (j = 0; j < ds.dims[i].nvalues; j++) {
			assert_null(strstr(ds.dims[i].values[j].name, "multicast"));
			assert_true(strlen(ds.dims[i].values[j].doc) >
			            10); /* every value says what it means */
		}
	}
	assert_int_equal(ds.nknobs, 21);
	k = cuco_design_space_knob(&ds, "split");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_ENUM);
	assert_int_equal(k->searched, 0); /* held unless cuco evolve --search names it */
	assert_int_equal(k->nvalues, 6);  /* 0 (whole tiles), 2, 3, 4, 6, 8 ways */
	assert_int_equal(k->values[0], 0);
	assert_int_equal(k->values[5], 8);
	k = cuco_design_space_knob(&ds, "pull");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	assert_int_equal(k->searched, 1);
	k = cuco_design_space_knob(&ds, "tail_lsa");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	assert_int_equal(k->searched, 1);
	k = cuco_design_space_knob(&ds, "push_warps");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	assert_int_equal(k->searched, 1);
	k = cuco_design_space_knob(&ds, "tma_push");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	k = cuco_design_space_knob(&ds, "fused_sync");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	k = cuco_design_space_knob(&ds, "graph");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	k = cuco_design_space_knob(&ds, "device_signal");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_BOOL);
	k = cuco_design_space_knob(&ds, "threads");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_INT);
	assert_int_equal(k->min, 32);
	assert_int_equal(k->max, 1024);
	assert_int_equal(k->multiple_of, 32);
	k = cuco_design_space_knob(&ds, "tile_n");
	assert_non_null(k);
	assert_int_equal(k->type, CUCO_KNOB_ENUM);
	assert_int_equal(k->nvalues, 4);
	assert_int_equal(k->values[0], 0);
	assert_int_equal(k->values[3], 256);
	k = cuco_design_space_knob(&ds, "sm_split");
	assert_non_null(k);
	assert_int_equal(k->min, 0);
	assert_string_equal(k->max_fact, "sm_count");
	assert_null(cuco_design_space_knob(&ds, "multicast"));
	/* defaults: the data's "default", else the low end, the first value, false */
	k = cuco_design_space_knob(&ds, "comm_ctas");
	assert_true(k->has_default);
	assert_int_equal(cuco_design_space_knob_default(k), 32);
	assert_int_equal(cuco_design_space_knob_default(cuco_design_space_knob(&ds, "threads")),
	                 512);
	assert_int_equal(cuco_design_space_knob_default(cuco_design_space_knob(&ds, "tile_n")),
	                 256);
	assert_int_equal(cuco_design_space_knob_default(cuco_design_space_knob(&ds, "taper")), 10);
	assert_int_equal(cuco_design_space_knob_default(cuco_design_space_knob(&ds, "push_pace")),
	                 0);
	assert_int_equal(cuco_design_space_knob_default(cuco_design_space_knob(&ds, "graph")), 0);
	assert_int_equal(ds.nconstraints, 7);
	assert_int_equal(ds.constraints[0].requires, CUCO_REQ_GIN_CAPABLE_NETWORK);
	assert_int_equal(ds.constraints[1].requires, CUCO_REQ_ALL_RANKS_LSA_REACHABLE);
	assert_int_equal(ds.constraints[2].requires, CUCO_REQ_NVSHMEM_TRANSPORT);
}

static void expect_ds_error(const char *path, int code, const char *msg)
{
	struct cuco_design_space bad;
	struct cuco_err err;

	cuco_err_clear(&err);
	assert_int_equal(cuco_design_space_load(path, &bad, &err), code);
	assert_string_equal(err.msg, msg);
	assert_null(bad.root); /* released on failure */
}

static void test_design_space_errors(void **state)
{
	struct cuco_design_space small;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_design_space_load("ds_small.json", &small, &err), CUCO_OK);
	assert_int_equal(small.constraints[0].nwhen, 2);
	cuco_design_space_release(&small);

	expect_ds_error("ds_bad_multicast.json", CUCO_ERR_INVALID,
	                "ds_bad_multicast.json:5:79: dimensions[0].values[2].name: multicast is "
	                "never a valid choice in cuco (NVLink multicast is off on its machines); "
	                "use lsa, gin or ce");
	expect_ds_error("ds_bad_constraint.json", CUCO_ERR_INVALID,
	                "ds_bad_constraint.json:12:83: constraints[0].then.sync_scope: \"warp\" is "
	                "not a value of sync_scope");
	expect_ds_error(
	    "ds_bad_missing_dim.json", CUCO_ERR_INVALID,
	    "ds_bad_missing_dim.json:4:17: dimensions: dimension \"issuer\" is missing");
	expect_ds_error(
	    "ds_bad_requires.json", CUCO_ERR_INVALID,
	    "ds_bad_requires.json:12:72: constraints[0].requires: \"infiniband\" is not "
	    "a fact cuco knows; expected gin_capable_network, all_ranks_lsa_reachable or "
	    "nvshmem_transport");
	expect_ds_error(
	    "ds_bad_searched.json", CUCO_ERR_PARSE,
	    "ds_bad_searched.json:16:56: knobs[0].searched: expected true or false, got "
	    "\"no\"");
	expect_ds_error("ds_bad_default.json", CUCO_ERR_INVALID,
	                "ds_bad_default.json:17:70: knobs[1].default: 16 is outside the knob's "
	                "range 1 to 8");
	expect_ds_error("ds_bad_default_bool.json", CUCO_ERR_PARSE,
	                "ds_bad_default_bool.json:16:55: knobs[0].default: expected true or "
	                "false, got 1");
	expect_ds_error("ds_bad_default_enum.json", CUCO_ERR_INVALID,
	                "ds_bad_default_enum.json:17:70: knobs[1].default: 3 is not one of the "
	                "knob's values");
	expect_ds_error("no_such.json", CUCO_ERR_IO,
	                "no_such.json: cannot read the design space: No such file or directory");
}

/* Parse fields of "facts: gin_capable=0 lsa_all_reachable=1 nranks=8 sm_count=132". */
static void parse_facts(const char *line, struct cuco_hw_facts *f)
{
	static const char *const keys[] = {
	    "gin_capable=", "lsa_all_reachable=", "nranks=", "sm_count="};
	int *fields[] = {&f->gin_capable, &f->lsa_all_reachable, &f->nranks, &f->sm_count};
	int i;

	for (i = 0; i < 4; i++) {
		const char *p = strstr(line, keys[i]);
		char *end;
		long v;

		if (!p)
			fail_msg("facts line lacks %s: %s", keys[i], line);
		errno = 0;
		v = strtol(p + strlen(keys[i]), &end, 10);
		if (errno || (*end != ' ' && *end != '\0'))
			fail_msg("bad number after %s: %s", keys[i], line);
		*fields[i] = (int)v;
	}
}

/*
 * X.cu is a program, X.expect says what parse + validate give for it:
 * comment lines, an optional facts line, the result token and the exact
 * message (none for ok).
 */
static void check_fixture(const char *cu, int *nok, int *nbad)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT, expect = CUCO_STRBUF_INIT;
	struct cuco_strbuf path = CUCO_STRBUF_INIT;
	struct cuco_hw_facts facts, *fp = NULL;
	struct cuco_directive d;
	struct cuco_err err;
	char *line, *next, *token = NULL, *msg = NULL;
	int rc;

	cuco_strbuf_add(&path, cu, strlen(cu) - 3);
	cuco_strbuf_adds(&path, ".expect");
	if (cuco_strbuf_read_file(&src, cu) != 0 || cuco_strbuf_read_file(&expect, path.buf) != 0)
		fail_msg("%s or %s unreadable", cu, path.buf);
	for (line = expect.buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (strncmp(line, "facts:", 6) == 0) {
			memset(&facts, 0, sizeof(facts));
			parse_facts(line, &facts);
			fp = &facts;
		} else if (!token) {
			token = line;
		} else if (!msg) {
			msg = line;
		}
	}
	if (!token)
		fail_msg("%s: no result token", path.buf);
	cuco_err_clear(&err);
	rc = cuco_directive_parse(cu, src.buf, &d, &err);
	if (rc == CUCO_OK)
		rc = cuco_directive_validate(&d, &ds, fp, &err);
	if (strcmp(cuco_result_token(rc), token) != 0 || strcmp(err.msg, msg ? msg : "") != 0)
		fail_msg("%s:\n  expected %s: %s\n  got      %s: %s", cu, token, msg ? msg : "",
		         cuco_result_token(rc), err.msg);
	if (rc == CUCO_OK)
		(*nok)++;
	else
		(*nbad)++;
	cuco_directive_release(&d);
	cuco_strbuf_release(&src);
	cuco_strbuf_release(&expect);
	cuco_strbuf_release(&path);
}

static void test_fixtures(void **state)
{
	struct dirent **ents;
	int n, i, nok = 0, nbad = 0;

	(void)state;
	n = scandir(".", &ents, NULL, alphasort);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		size_t len = strlen(ents[i]->d_name);

		if (len > 3 && strcmp(ents[i]->d_name + len - 3, ".cu") == 0)
			check_fixture(ents[i]->d_name, &nok, &nbad);
		free(ents[i]);
	}
	free(ents);
	assert_true(nok >= 3);
	assert_true(nbad >= 20);
}

static const char good_src[] =
    "// SPDX-License-Identifier: MIT\n"
    "\n"
    "  //   cuco-directive: {\"issuer\":\"cta\",\"knobs\":{\"threads\":512,\"comm_ctas\":32},"
    "\"backend\":\"lsa\",\"granularity\":\"whole\",\"sync_scope\":\"grid\","
    "\"placement\":\"sequential\"}\n"
    "#include <cuda.h>\n";

static void test_parse_fields(void **state)
{
	struct cuco_directive d;
	struct cuco_err err;
	char *json, *line;

	(void)state;
	assert_int_equal(cuco_directive_find_line(good_src), 3);
	assert_int_equal(cuco_directive_parse("p.cu", good_src, &d, &err), CUCO_OK);
	assert_string_equal(d.file, "p.cu");
	assert_int_equal(d.line, 3);
	assert_string_equal(d.dims[CUCO_DIM_BACKEND], "lsa");
	assert_string_equal(d.dims[CUCO_DIM_ISSUER], "cta");
	assert_int_equal(d.dim_col[CUCO_DIM_ISSUER], 34); /* the "cta" after "issuer": */
	assert_int_equal(d.nknobs, 2);
	assert_int_equal(cuco_directive_knob(&d, "threads", 0), 512);
	assert_int_equal(cuco_directive_knob(&d, "stages", -7), -7);
	assert_int_equal(cuco_directive_validate(&d, &ds, NULL, &err), CUCO_OK);

	/* canonical: dimensions in enum order, knobs sorted */
	json = cuco_directive_to_json(&d);
	assert_string_equal(json,
	                    "{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":"
	                    "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":"
	                    "{\"comm_ctas\":32,\"threads\":512}}");
	free(json);

	/* set_knob replaces and adds; bools print as true/false */
	assert_int_equal(cuco_directive_set_knob(&d, "threads", 256, 0), CUCO_OK);
	assert_int_equal(cuco_directive_set_knob(&d, "chunks", 4, 0), CUCO_OK);
	assert_int_equal(cuco_directive_set_knob(&d, "persistent", 7, 1), CUCO_OK);
	assert_int_equal(cuco_directive_set_knob(&d, "a_name_much_longer_than_32_characters", 1, 0),
	                 CUCO_ERR_INVALID);
	line = cuco_directive_to_line(&d);
	assert_string_equal(line,
	                    "// cuco-directive: {\"backend\":\"lsa\",\"placement\":"
	                    "\"sequential\",\"sync_scope\":\"grid\",\"issuer\":\"cta\","
	                    "\"granularity\":\"whole\",\"knobs\":{\"chunks\":4,\"comm_ctas\":32,"
	                    "\"persistent\":true,\"threads\":256}}");
	free(line);
	/* persistent is not a knob of the design space */
	assert_int_equal(cuco_directive_validate(&d, &ds, NULL, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "knobs.persistent: unknown knob"));
	cuco_directive_release(&d);
	assert_null(d.file);
}

/* The canonical line parses back to the same directive (the store relies on it). */
static void test_round_trip(void **state)
{
	struct cuco_directive d, again;
	struct cuco_err err;
	char *line, *json1, *json2;

	(void)state;
	assert_int_equal(cuco_directive_parse("p.cu", good_src, &d, &err), CUCO_OK);
	line = cuco_directive_to_line(&d);
	assert_int_equal(cuco_directive_parse("q.cu", line, &again, &err), CUCO_OK);
	json1 = cuco_directive_to_json(&d);
	json2 = cuco_directive_to_json(&again);
	assert_string_equal(json1, json2);
	free(line);
	free(json1);
	free(json2);
	cuco_directive_release(&d);
	cuco_directive_release(&again);
}

static void test_facts(void **state)
{
	static const char gin[] = "// cuco-directive: {\"backend\":\"gin\",\"placement\":"
	                          "\"specialized\",\"sync_scope\":\"cta\",\"issuer\":\"thread\","
	                          "\"granularity\":\"chunk\",\"knobs\":{\"sm_split\":16}}\n";
	struct cuco_hw_facts facts = {
	    .gin_capable = 1, .lsa_all_reachable = 1, .nranks = 8, .sm_count = 132};
	struct cuco_directive d;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_directive_parse("g.cu", gin, &d, &err), CUCO_OK);
	/* no facts: hardware checks are skipped */
	assert_int_equal(cuco_directive_validate(&d, &ds, NULL, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &ds, &facts, &err), CUCO_OK);
	facts.gin_capable = 0;
	assert_int_equal(cuco_directive_validate(&d, &ds, &facts, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "g.cu:1:31: backend: \"gin\" needs a GIN-capable network, "
	                    "and this machine has none (GIN posts RDMA operations from the "
	                    "GPU and needs a GIN-capable NIC and transport)");
	facts.gin_capable = 1;
	facts.sm_count = 8;
	assert_int_equal(cuco_directive_validate(&d, &ds, &facts, &err), CUCO_ERR_UNSUPPORTED);
	assert_string_equal(err.msg,
	                    "g.cu:1:142: knobs.sm_split: 16 exceeds the 8 SMs of this GPU");
	cuco_directive_release(&d);
}

static void test_small_space(void **state)
{
	static const char src[] = "// cuco-directive: {\"backend\":\"gin\",\"placement\":"
	                          "\"specialized\",\"sync_scope\":\"cta\",\"issuer\":\"cta\","
	                          "\"granularity\":\"chunk\",\"knobs\":{\"persistent\":%s}}\n";
	struct cuco_design_space small;
	struct cuco_directive d;
	struct cuco_err err;
	char buf[512];

	(void)state;
	assert_int_equal(cuco_design_space_load("ds_small.json", &small, &err), CUCO_OK);
	snprintf(buf, sizeof(buf), src, "true");
	assert_int_equal(cuco_directive_parse("s.cu", buf, &d, &err), CUCO_OK);
	/* both clauses of the two-clause constraint hold: sync_scope must be grid */
	assert_int_equal(cuco_directive_validate(&d, &small, NULL, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg,
	                    "s.cu:1:76: sync_scope: \"cta\" is not allowed with backend "
	                    "\"gin\" and placement \"specialized\" (allowed: grid): test rule");
	snprintf(d.dims[CUCO_DIM_PLACEMENT], CUCO_NAME_MAX, "sequential");
	assert_int_equal(cuco_directive_validate(&d, &small, NULL, &err), CUCO_OK);
	cuco_directive_release(&d);

	snprintf(buf, sizeof(buf), src, "1");
	assert_int_equal(cuco_directive_parse("s.cu", buf, &d, &err), CUCO_OK);
	snprintf(d.dims[CUCO_DIM_SYNC_SCOPE], CUCO_NAME_MAX, "grid");
	assert_int_equal(cuco_directive_validate(&d, &small, NULL, &err), CUCO_ERR_INVALID);
	assert_string_equal(err.msg, "s.cu:1:141: knobs.persistent: expected true or false, got 1");
	cuco_directive_release(&d);
	cuco_design_space_release(&small);
}

/* A template's "cuco-realizes" line narrows the space; bad lines say where and what. */
static void test_find_line(void **state)
{
	(void)state;
	assert_int_equal(cuco_directive_find_line(""), 0);
	assert_int_equal(cuco_directive_find_line("int x;\n"), 0);
	/* inside a block comment it is not a directive line */
	assert_int_equal(cuco_directive_find_line("/*\n// cuco-directive: {}\n*/\n"), 0);
	assert_int_equal(cuco_directive_find_line("/* a */\n\n//cuco-directive: {}\n"), 3);
	/* not at the start of the line: a trailing comment of code */
	assert_int_equal(cuco_directive_find_line("int x; // cuco-directive: {}\n"), 0);
}

static void test_parse_errors_inline(void **state)
{
	struct cuco_directive d;
	struct cuco_err err;

	(void)state;
	assert_int_equal(cuco_directive_parse("e.cu", "// cuco-directive:   \n", &d, &err),
	                 CUCO_ERR_PARSE);
	assert_string_equal(err.msg, "e.cu:1:22: directive: expected a JSON object after "
	                             "cuco-directive:");
	assert_int_equal(cuco_directive_parse(NULL, "", &d, &err), CUCO_ERR_PARSE);
	assert_string_equal(err.msg, "<program>:1:1: directive: no cuco-directive line; a "
	                             "device-side program begins with `// cuco-directive: "
	                             "{\"backend\":...}` (see docs/formats.md)");
	/* a directive after a multi-line block comment is fine; code inside it is not code */
	assert_int_equal(
	    cuco_directive_parse("f.cu",
	                         "/* int x;\n   more */ // c\n"
	                         "// cuco-directive: {\"backend\":\"ce\",\"placement\":"
	                         "\"stream_overlap\",\"sync_scope\":\"grid\",\"issuer\":"
	                         "\"thread\",\"granularity\":\"chunk\"}\nint y;\n",
	                         &d, &err),
	    CUCO_OK);
	assert_int_equal(d.line, 3);
	assert_int_equal(d.nknobs, 0);
	assert_int_equal(cuco_directive_validate(&d, &ds, NULL, &err), CUCO_OK);
	cuco_directive_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_design_space),
	    cmocka_unit_test(test_design_space_errors),
	    cmocka_unit_test(test_fixtures),
	    cmocka_unit_test(test_parse_fields),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_facts),
	    cmocka_unit_test(test_small_space),
	    cmocka_unit_test(test_find_line),
	    cmocka_unit_test(test_parse_errors_inline),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
