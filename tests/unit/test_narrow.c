/* test_narrow.c - a template's cuco-realizes line: narrowing the design space, inert genes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/directive.h"
#include "program/realize.h"
#include "util/error.h"
#include "util/strbuf.h"

#define DESIGN_SPACE CUCO_SOURCE_DIR "/share/design_space.json"

static void test_narrow(void **state)
{
	static const char tmpl[] =
	    "{{DIRECTIVE}}\n"
	    "// cuco-realizes: {\"backend\": [\"lsa\", \"ce\"], \"placement\": [\"sequential\", "
	    "\"stream_overlap\"], \"knobs\": {\"tile_n\": {\"values\": [128, 256]}, \"chunks\": "
	    "{\"min\": 2, \"max\": 8}}}\n";
	static const char dir[] = "// cuco-directive: {\"backend\":\"%s\",\"placement\":\"%s\","
	                          "\"sync_scope\":\"grid\",\"issuer\":\"cta\",\"granularity\":"
	                          "\"chunk\",\"knobs\":{\"tile_n\":%d,\"chunks\":%d}}\n";
	static const struct {
		const char *line, *msg;
	} bad[] = {
	    {"// cuco-realizes: {\"backend\": [\"nvlink\"]}",
	     "t.cu.in:2: cuco-realizes: backend[0]: not a value of the design space's backend"},
	    {"// cuco-realizes: {\"knobs\": {\"tile_n\": {\"values\": [96]}}}",
	     "t.cu.in:2: cuco-realizes: knobs.tile_n.values[0]: not a value of the knob"},
	    {"// cuco-realizes: {\"knobs\": {\"threads\": {\"min\": 0, \"max\": 64}}}",
	     "t.cu.in:2: cuco-realizes: knobs.threads: min..max must lie in 32..1024 (an int "
	     "knob)"},
	    {"// cuco-realizes: {\"knobz\": {}}",
	     "t.cu.in:2: cuco-realizes: knobz: neither a dimension, \"knobs\" nor \"inert\""},
	    {"// cuco-realizes: [1]", NULL},
	};
	struct cuco_design_space n;
	struct cuco_directive d;
	struct cuco_err err;
	char buf[512];

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &n, &err), CUCO_OK);
	assert_int_equal(cuco_design_space_narrow(&n, "t.cu.in", "no line here\n", &err), CUCO_OK);
	assert_int_equal(n.dims[CUCO_DIM_BACKEND].nvalues, 4);
	assert_int_equal(cuco_design_space_narrow(&n, "t.cu.in", tmpl, &err), CUCO_OK);
	assert_int_equal(n.dims[CUCO_DIM_BACKEND].nvalues, 2);
	assert_int_equal(n.dims[CUCO_DIM_PLACEMENT].nvalues, 2);
	assert_int_equal(cuco_design_space_knob(&n, "tile_n")->nvalues, 2);
	assert_int_equal(cuco_design_space_knob(&n, "chunks")->max, 8);
	snprintf(buf, sizeof(buf), dir, "ce", "stream_overlap", 256, 8);
	assert_int_equal(cuco_directive_parse("p.cu", buf, &d, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &n, NULL, &err), CUCO_OK);
	cuco_directive_release(&d);
	snprintf(buf, sizeof(buf), dir, "gin", "stream_overlap", 256, 8);
	assert_int_equal(cuco_directive_parse("p.cu", buf, &d, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &n, NULL, &err), CUCO_ERR_INVALID);
	assert_non_null(strstr(err.msg, "expected one of lsa, ce"));
	cuco_directive_release(&d);
	snprintf(buf, sizeof(buf), dir, "lsa", "stream_overlap", 64, 8);
	assert_int_equal(cuco_directive_parse("p.cu", buf, &d, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &n, NULL, &err), CUCO_ERR_INVALID);
	cuco_directive_release(&d);
	snprintf(buf, sizeof(buf), dir, "lsa", "stream_overlap", 128, 9);
	assert_int_equal(cuco_directive_parse("p.cu", buf, &d, &err), CUCO_OK);
	assert_int_equal(cuco_directive_validate(&d, &n, NULL, &err), CUCO_ERR_INVALID);
	cuco_directive_release(&d);
	cuco_design_space_release(&n);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &n, &err), CUCO_OK);
		snprintf(buf, sizeof(buf), "{{DIRECTIVE}}\n%s\n", bad[i].line);
		assert_int_not_equal(cuco_design_space_narrow(&n, "t.cu.in", buf, &err), CUCO_OK);
		if (bad[i].msg)
			assert_string_equal(err.msg, bad[i].msg);
		else
			assert_non_null(strstr(err.msg, "t.cu.in:2: cuco-realizes"));
		/* a refused line leaves the space as it was */
		assert_int_equal(n.dims[CUCO_DIM_BACKEND].nvalues, 4);
		assert_int_equal(cuco_design_space_knob(&n, "threads")->min, 32);
		cuco_design_space_release(&n);
	}
}

/* Parse directive JSON (one line) into *d. */
static int parse_json(const char *json, struct cuco_directive *d)
{
	struct cuco_err err;
	char buf[1024];

	snprintf(buf, sizeof(buf), "// cuco-directive: %s\n", json);
	return cuco_directive_parse("d.cu", buf, d, &err);
}

/* "inert" in a cuco-realizes line: parsed, checked against the narrowed space, applied. */
static void test_narrow_inert(void **state)
{
	static const char head[] =
	    "{{DIRECTIVE}}\n// cuco-realizes: {\"placement\": [\"sequential\", "
	    "\"stream_overlap\"], "
	    "\"knobs\": {\"chunks\": {\"min\": 2, \"max\": 8}, \"tile_n\": {\"values\": [128, "
	    "256]}}, \"inert\": %s}\n";
	static const char good[] =
	    "{\"sequential\": {\"granularity\": \"whole\", \"sync_scope\": \"grid\", "
	    "\"chunks\": 4, \"device_signal\": false}, \"stream_overlap\": {\"issuer\": "
	    "\"cta\"}, \"backend=ce\": {\"threads\": 512}}";
	static const char where[] = "t.cu.in:2: cuco-realizes: ";
	static const struct {
		const char *inert, *msg;
	} bad[] = {
	    {"[1]", "inert: expected an object {condition: {dimension or knob: value}}"},
	    {"{\"backend=nvlink\": {}}",
	     "inert.backend=nvlink: not dimension=value with a value this template realizes"},
	    {"{\"fuel=ce\": {}}",
	     "inert.fuel=ce: fuel is neither a dimension nor a knob of the design space"},
	    {"{\"device_signal=on\": {}}",
	     "inert.device_signal=on: expected device_signal=true or device_signal=false (a bool "
	     "knob)"},
	    {"{\"device_signal=1\": {}}",
	     "inert.device_signal=1: expected device_signal=true or device_signal=false (a bool "
	     "knob)"},
	    {"{\"chunks=four\": {}}", "inert.chunks=four: expected chunks=N with N an integer"},
	    {"{\"chunks=\": {}}", "inert.chunks=: expected chunks=N with N an integer"},
	    {"{\"chunks=4x\": {}}", "inert.chunks=4x: expected chunks=N with N an integer"},
	    {"{\"chunks=16\": {}}",
	     "inert.chunks=16: 16 is not a value of the knob that this template realizes"},
	    {"{\"tile_n=64\": {}}",
	     "inert.tile_n=64: 64 is not a value of the knob that this template realizes"},
	    {"{\"tile_m=100\": {}}",
	     "inert.tile_m=100: 100 is not a value of the knob that this template realizes"},
	    {"{\"device_signal=true\": {\"device_signal\": false}}",
	     "inert.device_signal=true.device_signal: the condition's own knob cannot be inert"},
	    {"{\"device_signal=true\": {\"gemm_lib\": 0}}",
	     "inert.device_signal=true.gemm_lib: expected true or false"},
	    {"{\"backend=ce\": {\"backend\": \"lsa\"}}",
	     "inert.backend=ce.backend: the condition's own dimension cannot be inert"},
	    {"{\"specialized\": {}}", "inert.specialized: not a placement this template realizes"},
	    {"{\"warp_drive\": {}}", "inert.warp_drive: not a placement this template realizes"},
	    {"{\"sequential\": 1}",
	     "inert.sequential: expected an object {dimension or knob: value}"},
	    {"{\"sequential\": {\"placement\": \"sequential\"}}",
	     "inert.sequential.placement: the placement picks the code path, so it cannot be "
	     "inert"},
	    {"{\"sequential\": {\"issuer\": \"block\"}}",
	     "inert.sequential.issuer: expected a value of issuer that this template realizes"},
	    {"{\"sequential\": {\"backend\": \"nvlink\"}}",
	     "inert.sequential.backend: expected a value of backend that this template realizes"},
	    {"{\"sequential\": {\"chunkz\": 4}}",
	     "inert.sequential.chunkz: neither a dimension nor a knob of the design space"},
	    {"{\"sequential\": {\"device_signal\": 0}}",
	     "inert.sequential.device_signal: expected true or false"},
	    {"{\"sequential\": {\"chunks\": \"4\"}}",
	     "inert.sequential.chunks: expected an integer"},
	    {"{\"sequential\": {\"chunks\": 16}}",
	     "inert.sequential.chunks: 16 is not a value of the knob that this template realizes"},
	    {"{\"sequential\": {\"tile_n\": 64}}",
	     "inert.sequential.tile_n: 64 is not a value of the knob that this template realizes"},
	    {"{\"sequential\": {\"threads\": 100}}",
	     "inert.sequential.threads: 100 is not a value of the knob that this template "
	     "realizes"},
	};
	struct cuco_design_space n;
	struct cuco_directive d;
	struct cuco_err err;
	char buf[1024], msg[512];

	(void)state;
	assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &n, &err), CUCO_OK);
	snprintf(buf, sizeof(buf), head, good);
	if (cuco_design_space_narrow(&n, "t.cu.in", buf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n.ninert, 6);
	assert_int_equal(n.inert[0].when_dim, CUCO_DIM_PLACEMENT);
	assert_string_equal(n.inert[0].when_value, "sequential");
	assert_int_equal(n.inert[5].when_dim, CUCO_DIM_BACKEND);
	assert_string_equal(n.inert[5].when_value, "ce");
	assert_int_equal(n.inert[0].dim, CUCO_DIM_GRANULARITY);
	assert_string_equal(n.inert[0].value, "whole");
	assert_int_equal(n.inert[2].dim, -1);
	assert_string_equal(n.inert[2].name, "chunks");
	assert_int_equal(n.inert[2].knob_value, 4);
	assert_int_equal(n.inert[3].is_bool, 1);

	/* a sequential directive: its inert genes take their canonical values */
	assert_int_equal(
	    parse_json("{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":"
	               "\"cta\",\"issuer\":\"warp\",\"granularity\":\"whole\",\"knobs\":{"
	               "\"chunks\":8,\"threads\":256}}",
	               &d),
	    CUCO_OK);
	assert_int_equal(cuco_directive_canonicalize(&d, &n), 3); /* sync_scope, chunks, +signal */
	assert_string_equal(d.dims[CUCO_DIM_SYNC_SCOPE], "grid");
	assert_string_equal(d.dims[CUCO_DIM_ISSUER], "warp"); /* not inert for sequential here */
	assert_int_equal(cuco_directive_knob(&d, "chunks", -1), 4);
	assert_int_equal(cuco_directive_knob(&d, "threads", -1), 256);
	assert_int_equal(cuco_directive_knob(&d, "device_signal", -1), 0); /* added: d has knobs */
	assert_int_equal(cuco_directive_canonicalize(&d, &n), 0);          /* idempotent */
	/* another placement's entries do not apply */
	snprintf(d.dims[CUCO_DIM_PLACEMENT], CUCO_NAME_MAX, "stream_overlap");
	snprintf(d.dims[CUCO_DIM_GRANULARITY], CUCO_NAME_MAX, "chunk");
	cuco_directive_set_knob(&d, "chunks", 8, 0);
	assert_int_equal(cuco_directive_canonicalize(&d, &n), 1); /* issuer only */
	assert_string_equal(d.dims[CUCO_DIM_ISSUER], "cta");
	assert_int_equal(cuco_directive_knob(&d, "chunks", -1), 8);
	/* a condition on another dimension: threads mean nothing to the copy engine */
	snprintf(d.dims[CUCO_DIM_BACKEND], CUCO_NAME_MAX, "ce");
	assert_int_equal(cuco_directive_canonicalize(&d, &n), 1);
	assert_int_equal(cuco_directive_knob(&d, "threads", -1), 512);
	cuco_directive_release(&d);
	/* a directive without knobs stays without */
	assert_int_equal(
	    parse_json("{\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":"
	               "\"grid\",\"issuer\":\"cta\",\"granularity\":\"whole\"}",
	               &d),
	    CUCO_OK);
	assert_int_equal(cuco_directive_canonicalize(&d, &n), 0);
	assert_int_equal(d.nknobs, 0);
	cuco_directive_release(&d);
	cuco_design_space_release(&n);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &n, &err), CUCO_OK);
		snprintf(buf, sizeof(buf), head, bad[i].inert);
		assert_int_not_equal(cuco_design_space_narrow(&n, "t.cu.in", buf, &err), CUCO_OK);
		snprintf(msg, sizeof(msg), "%s%s", where, bad[i].msg);
		assert_string_equal(err.msg, msg);
		/* nothing applied: neither the narrowing nor the inert genes */
		assert_int_equal(n.dims[CUCO_DIM_PLACEMENT].nvalues, 5);
		assert_int_equal(cuco_design_space_knob(&n, "chunks")->max, 64);
		assert_int_equal(n.ninert, 0);
		assert_null(n.inert);
		cuco_design_space_release(&n);
	}
}

/* Set a knob of d, failing the test if it cannot. */
static void set_knob(struct cuco_directive *d, const char *name, long long v, int is_bool)
{
	assert_int_equal(cuco_directive_set_knob(d, name, v, is_bool), CUCO_OK);
}

/*
 * An inert condition on a knob ("device_signal=true"): parsed, fires only when
 * the directive sets the knob to that value, and applied after the placement
 * and dimension conditions whatever the order of the JSON keys.
 */
static void test_narrow_inert_knob(void **state)
{
	static const char head[] =
	    "{{DIRECTIVE}}\n// cuco-realizes: {\"placement\": [\"sequential\", "
	    "\"stream_overlap\"], \"knobs\": {\"chunks\": {\"min\": 2, \"max\": 8}}, "
	    "\"inert\": %s}\n";
	/* the knob rules before and after a placement rule that sets device_signal */
	static const char *const orders[] = {
	    "{\"device_signal=true\": {\"gemm_lib\": false, \"issuer\": \"cta\"}, "
	    "\"chunks=8\": {\"streams\": 1}, \"sequential\": {\"device_signal\": false}}",
	    "{\"sequential\": {\"device_signal\": false}, \"chunks=8\": {\"streams\": 1}, "
	    "\"device_signal=true\": {\"gemm_lib\": false, \"issuer\": \"cta\"}}",
	};
	static const char so[] =
	    "{\"backend\":\"lsa\",\"placement\":\"stream_overlap\",\"sync_scope\":\"grid\","
	    "\"issuer\":\"warp\",\"granularity\":\"chunk\"}";

	(void)state;
	for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
		struct cuco_design_space n;
		struct cuco_directive d;
		struct cuco_err err;
		char buf[1024];
		int found = 0;

		assert_int_equal(cuco_design_space_load(DESIGN_SPACE, &n, &err), CUCO_OK);
		snprintf(buf, sizeof(buf), head, orders[o]);
		if (cuco_design_space_narrow(&n, "t.cu.in", buf, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(n.ninert, 4);
		for (int i = 0; i < n.ninert; i++) {
			const struct cuco_ds_inert *in = &n.inert[i];
			if (!strcmp(in->name, "gemm_lib")) {
				found++;
				assert_int_equal(in->when_dim, -1);
				assert_string_equal(in->when_knob, "device_signal");
				assert_int_equal(in->when_knob_value, 1);
				assert_string_equal(in->when_value, "");
				assert_int_equal(in->dim, -1);
				assert_int_equal(in->knob_value, 0);
				assert_int_equal(in->is_bool, 1);
			} else if (!strcmp(in->name, "streams")) {
				found++;
				assert_int_equal(in->when_dim, -1);
				assert_string_equal(in->when_knob, "chunks");
				assert_int_equal(in->when_knob_value, 8);
			} else if (!strcmp(in->name, "device_signal")) {
				found++;
				assert_int_equal(in->when_dim, CUCO_DIM_PLACEMENT);
				assert_string_equal(in->when_knob, "");
			}
		}
		assert_int_equal(found, 3);

		/* fires: stream_overlap with device_signal on */
		assert_int_equal(parse_json(so, &d), CUCO_OK);
		set_knob(&d, "device_signal", 1, 1);
		set_knob(&d, "gemm_lib", 1, 1);
		set_knob(&d, "chunks", 8, 0);
		set_knob(&d, "streams", 2, 0);
		assert_int_equal(cuco_directive_canonicalize(&d, &n),
		                 3); /* gemm_lib, issuer, streams */
		assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 0);
		assert_string_equal(d.dims[CUCO_DIM_ISSUER], "cta");
		assert_int_equal(cuco_directive_knob(&d, "streams", -1), 1);
		assert_int_equal(cuco_directive_knob(&d, "device_signal", -1), 1);
		assert_int_equal(cuco_directive_canonicalize(&d, &n), 0); /* idempotent */
		/* does not fire: the knobs at other values */
		set_knob(&d, "device_signal", 0, 1);
		set_knob(&d, "gemm_lib", 1, 1);
		set_knob(&d, "chunks", 4, 0);
		set_knob(&d, "streams", 2, 0);
		snprintf(d.dims[CUCO_DIM_ISSUER], CUCO_NAME_MAX, "warp");
		assert_int_equal(cuco_directive_canonicalize(&d, &n), 0);
		assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
		assert_string_equal(d.dims[CUCO_DIM_ISSUER], "warp");
		cuco_directive_release(&d);
		/* does not fire: a directive lacking the condition's knob (though it has others) */
		assert_int_equal(parse_json(so, &d), CUCO_OK);
		set_knob(&d, "gemm_lib", 1, 1);
		set_knob(&d, "streams", 2, 0);
		assert_int_equal(cuco_directive_canonicalize(&d, &n), 0);
		assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
		assert_int_equal(d.nknobs, 2);
		cuco_directive_release(&d);
		/*
		 * Order: sequential holds device_signal at false first, so the knob rule no
		 * longer fires and gemm_lib stays, whichever key comes first in the line.
		 */
		assert_int_equal(parse_json(so, &d), CUCO_OK);
		snprintf(d.dims[CUCO_DIM_PLACEMENT], CUCO_NAME_MAX, "sequential");
		set_knob(&d, "device_signal", 1, 1);
		set_knob(&d, "gemm_lib", 1, 1);
		assert_int_equal(cuco_directive_canonicalize(&d, &n), 1);
		assert_int_equal(cuco_directive_knob(&d, "device_signal", -1), 0);
		assert_int_equal(cuco_directive_knob(&d, "gemm_lib", -1), 1);
		assert_string_equal(d.dims[CUCO_DIM_ISSUER], "warp");
		cuco_directive_release(&d);
		cuco_design_space_release(&n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_narrow),
	    cmocka_unit_test(test_narrow_inert),
	    cmocka_unit_test(test_narrow_inert_knob),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
