/*
 * test_lift_plan.c - the lift's planner and rules (src/lift/plan.c, rules.c) on
 * small fixture programs (tests/fixtures/lift/plan/): which loop or statements
 * are the step, the roles and dtypes of buffers, float reductions, one process
 * over every GPU, statements that leave the step, the refusals, and a few
 * checks of host.cu's text (cuco_lift_emit_host). Lines are found by the
 * fixtures' own comments, not by number. Every test skips when libclang cannot
 * be loaded, and the run then exits 77.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cuco/program.h>

#include "assert_text.h"
#include "lift/emit.h"
#include "lift/plan.h"
#include "lift/rules.h"
#include "lift/scan.h"
#include "util/strbuf.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/lift/"
#define OVERLAY CUCO_SOURCE_DIR "/device/include/cuco_dev/lift"

static int have_clang;

#define NEED_CLANG()                                                           \
	do {                                                                   \
		if (!have_clang) {                                             \
			print_message("libclang cannot be loaded: skipped\n"); \
			skip();                                                \
		}                                                              \
	} while (0)

/* Each fixture's facts, scanned once (a scan takes a second or two) and shared by its plans. */
static struct scanned {
	char path[256];
	struct cuco_lift_facts f;
} scans[24];
static size_t nscans;

/* One lifted fixture: its facts (the shared scan's) and plan, and what planning returned. */
struct lifted {
	struct cuco_lift_facts f;
	struct cuco_lift_plan p;
	struct cuco_err err;
	int rc;
	char root[1024];
	char name[256]; /* the fixture's file, relative to root */
};

/* Scan FIXTURES/path (parsed alone, its folder the root, cuco's MPI overlay first) and plan it
 * with --step step_at (NULL: none). The parse must succeed; the plan may refuse. */
static void lift(struct lifted *l, const char *path, const char *step_at)
{
	struct cuco_lift_scan_opts so;
	struct cuco_lift_plan_opts po = {step_at, NULL};
	struct scanned *sc = NULL;
	char src[1024];
	const char *srcs[1] = {src}, *slash = strrchr(path, '/');
	int rc;

	memset(l, 0, sizeof(*l));
	snprintf(l->root, sizeof(l->root), FIXTURES "%.*s", (int)(slash - path), path);
	snprintf(l->name, sizeof(l->name), "%s", slash + 1);
	cuco_lift_plan_init(&l->p);
	for (size_t i = 0; i < nscans && !sc; i++)
		if (!strcmp(scans[i].path, path))
			sc = &scans[i];
	if (!sc) {
		assert_true(nscans < sizeof(scans) / sizeof(scans[0]));
		sc = &scans[nscans++];
		snprintf(sc->path, sizeof(sc->path), "%s", path);
		snprintf(src, sizeof(src), FIXTURES "%s", path);
		memset(&so, 0, sizeof(so));
		so.root = l->root;
		so.sources = srcs;
		so.nsources = 1;
		so.overlay_dir = OVERLAY;
		cuco_lift_facts_init(&sc->f);
		rc = cuco_lift_scan(&so, &sc->f, &l->err);
		if (rc)
			print_message("scan %s: %s\n", path, l->err.msg);
		assert_int_equal(rc, CUCO_OK);
	}
	l->f = sc->f; /* a shallow copy: the scan keeps what it owns */
	cuco_err_clear(&l->err);
	l->rc = cuco_lift_plan_make(&l->f, &po, &l->p, &l->err);
}

/* Lift a fixture that must lift. */
static void lift_ok(struct lifted *l, const char *path, const char *step_at)
{
	lift(l, path, step_at);
	if (l->rc)
		print_message("plan %s: %s\n", path, l->err.msg);
	assert_int_equal(l->rc, CUCO_OK);
}

static void lifted_release(struct lifted *l)
{
	cuco_lift_plan_release(&l->p);
}

/* The first line of FIXTURES/path that holds needle (1-based); fails when none does. */
static unsigned line_of(const char *path, const char *needle)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char full[1024];
	const char *hit;
	unsigned line = 1;

	snprintf(full, sizeof(full), FIXTURES "%s", path);
	assert_int_equal(cuco_strbuf_read_file(&sb, full), 0);
	hit = strstr(sb.buf, needle);
	if (!hit)
		fail_msg("%s holds no '%s'", path, needle);
	for (const char *s = sb.buf; s < hit; s++)
		line += *s == '\n';
	cuco_strbuf_release(&sb);
	return line;
}

/* The line of byte offset off of the fixture file `file` of l. */
static unsigned offset_line(struct lifted *l, int file, unsigned off)
{
	const char *t = cuco_lift_plan_text(&l->p, &l->f, file);
	unsigned line = 1;

	assert_non_null(t);
	for (unsigned i = 0; i < off && t[i]; i++)
		line += t[i] == '\n';
	return line;
}

/* The lines of the edits whose text holds needle, as a count and the first few lines. */
static size_t edits_with(struct lifted *l, const char *needle, unsigned *lines, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < l->p.nedits; i++) {
		const struct cuco_lift_edit *e = &l->p.edits[i];
		if (!strstr(e->text, needle))
			continue;
		if (n < max)
			lines[n] = offset_line(l, e->file, e->begin);
		n++;
	}
	return n;
}

static int has_line(const unsigned *lines, size_t n, unsigned line)
{
	for (size_t i = 0; i < n; i++)
		if (lines[i] == line)
			return 1;
	return 0;
}

/* The note whose text holds needle, or fail. */
static const struct cuco_lift_note *note_with(const struct lifted *l, const char *needle)
{
	for (size_t i = 0; i < l->p.nnotes; i++)
		if (strstr(l->p.notes[i].text, needle))
			return &l->p.notes[i];
	for (size_t i = 0; i < l->p.nnotes; i++)
		print_message("note: %s\n", l->p.notes[i].text);
	fail_msg("no note holds '%s'", needle);
	return NULL;
}

/* The allocation site of the buffer written text, or fail. */
static const struct cuco_lift_alloc_site *site(const struct lifted *l, const char *text)
{
	for (size_t i = 0; i < l->p.nsites; i++)
		if (!strcmp(l->p.sites[i].text, text))
			return &l->p.sites[i];
	fail_msg("no allocation site of %s", text);
	return NULL;
}

/* The index of the call of callee named on `line` of the fixture, or fail. */
static int call_on(const struct lifted *l, const char *callee, unsigned line)
{
	for (size_t i = 0; i < l->f.ncalls; i++)
		if (!strcmp(l->f.calls[i].callee, callee) && l->f.calls[i].name.line == line)
			return (int)i;
	fail_msg("no call of %s on line %u", callee, line);
	return -1;
}

/* The loop the step is the body of: the line its statement starts on. */
static unsigned step_loop_line(const struct lifted *l)
{
	assert_true(l->p.step_loop >= 0);
	return l->f.stmts[l->p.step_loop].extent.line;
}

/* ---- the step ---- */

/* A warm-up loop of collectives and a solve loop that also computes: the solve loop. */
static void test_step_solve_loop(void **state)
{
	const char *fx = "plan/step_warmup.cu";
	struct lifted l;
	unsigned solve = line_of(fx, "/* solve */");

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(step_loop_line(&l), solve);
	assert_int_equal(l.p.step.line, solve); /* the body opens on the loop's line */
	assert_int_equal(l.p.step.end_line, solve + 3);
	assert_string_equal(l.f.functions[l.p.step_fn].name, "main");
	/* the step's one collective; the warm-up's is not the fast path's */
	assert_int_equal(l.p.nstep_calls, 1);
	assert_string_equal(l.f.calls[l.p.step_calls[0]].callee, "ncclAllReduce");
	assert_int_equal(l.f.calls[l.p.step_calls[0]].name.line, solve + 2);
	note_with(&l, "other loops with collectives: step_warmup.cu:");
	/* MPI ranks: no single-process rewrite */
	assert_int_equal(l.p.single_process, 0);
	assert_int_equal(edits_with(&l, "CUCO_LIFT_DEVICE_ONLY", NULL, 0), 0);
	lifted_release(&l);
}

/* Two identical timing loops: the last. */
static void test_step_last_of_twins(void **state)
{
	const char *fx = "plan/step_twin.cu";
	struct lifted l;
	char other[64];

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(step_loop_line(&l), line_of(fx, "timing, second"));
	assert_int_equal(l.p.nstep_calls, 1);
	snprintf(other, sizeof(other), "other loops with collectives: step_twin.cu:%u",
	         line_of(fx, "timing, first"));
	note_with(&l, other);
	note_with(&l, "the last of the innermost loops that run collectives");
	note_with(&l, "put `// cuco: step` on the line before it or pass --step FILE:LINE");
	lifted_release(&l);
}

/* No loop: the statements from the first collective to the last, with the launches beside
 * them; the rest of the block is left out. */
static void test_step_straight_line(void **state)
{
	const char *fx = "plan/step_straight.cu";
	struct lifted l;
	unsigned first = line_of(fx, "(x, n, 2.0f)"), last = line_of(fx, "(y, n, 0.5f)");
	int found_if0 = 0;

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(l.p.step_loop, -1);
	assert_true(l.p.step_first >= 0 && l.p.step_last >= 0);
	assert_int_equal(l.p.step.line, first);
	assert_int_equal(l.p.step.end_line, last);
	assert_int_equal(l.f.stmts[l.p.step_first].extent.line, first);
	assert_int_equal(l.f.stmts[l.p.step_last].extent.line, last);
	assert_int_equal(l.p.nstep_calls, 2);
	assert_string_equal(l.f.calls[l.p.step_calls[0]].callee, "ncclAllReduce");
	assert_string_equal(l.f.calls[l.p.step_calls[1]].callee, "ncclBroadcast");
	note_with(&l, "no loop runs the collectives");
	for (size_t i = 0; i < l.p.ninserts; i++)
		if (!strncmp(l.p.inserts[i].text, "#if 0", 5)) {
			assert_int_equal(l.p.inserts[i].line, last + 1);
			found_if0 = 1;
		}
	assert_true(found_if0);
	lifted_release(&l);
}

/* `// cuco: step` takes the loop after it; --step overrides the comment. */
static void test_step_comment_and_flag(void **state)
{
	const char *fx = "plan/step_marked.cu";
	struct lifted l;
	char at[128];

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(step_loop_line(&l), line_of(fx, "/* check */"));
	note_with(&l, "step: the loop's body named by the `cuco: step` comment");
	assert_int_equal(l.p.nstep_calls, 1);
	lifted_release(&l);

	snprintf(at, sizeof(at), "step_marked.cu:%u", line_of(fx, "/* solve */"));
	lift_ok(&l, fx, at);
	assert_int_equal(step_loop_line(&l), line_of(fx, "/* solve */"));
	note_with(&l, "named by --step");
	lifted_release(&l);
}

/* The step comment as a file's first bytes, naming a line where no statement starts. */
static void test_step_comment_first_line(void **state)
{
	struct lifted l;

	(void)state;
	NEED_CLANG();
	lift(&l, "plan/step_first_line.cu", NULL);
	assert_int_equal(l.rc, CUCO_ERR_INVALID);
	assert_contains(l.err.msg, "step_first_line.cu:2: the `cuco: step` comment names no "
	                           "statement that starts on this line");
	lifted_release(&l);
}

/* --step picks a loop the rules would not (the warm-up), and names a line precisely. */
static void test_step_flag(void **state)
{
	const char *fx = "plan/step_warmup.cu";
	struct lifted l;
	char at[128];
	unsigned warm = line_of(fx, "/* warm-up */");

	(void)state;
	NEED_CLANG();
	snprintf(at, sizeof(at), "step_warmup.cu:%u", warm);
	lift_ok(&l, fx, at);
	assert_int_equal(step_loop_line(&l), warm);
	assert_int_equal(l.p.nstep_calls, 1);
	assert_int_equal(l.f.calls[l.p.step_calls[0]].name.line, warm + 1);
	lifted_release(&l);

	/* the file as named from elsewhere (the path given to --from), not only from the root */
	snprintf(at, sizeof(at), FIXTURES "plan/../plan/step_warmup.cu:%u", warm);
	lift_ok(&l, fx, at);
	assert_int_equal(step_loop_line(&l), warm);
	lifted_release(&l);

	/* a line where no statement starts */
	lift(&l, fx, "step_warmup.cu:1");
	assert_int_equal(l.rc, CUCO_ERR_INVALID);
	assert_contains(l.err.msg, "step_warmup.cu:1: --step names no statement that starts on "
	                           "this line");
	lifted_release(&l);
	/* a file that is not the program's */
	lift(&l, fx, "other.cu:12");
	assert_int_equal(l.rc, CUCO_ERR_INVALID);
	assert_contains(l.err.msg, "--step other.cu:12: expected FILE:LINE naming a file of the "
	                           "program");
	lifted_release(&l);
	/* no line */
	lift(&l, fx, "step_warmup.cu");
	assert_int_equal(l.rc, CUCO_ERR_INVALID);
	assert_contains(l.err.msg, "--step step_warmup.cu: expected FILE:LINE");
	lifted_release(&l);
}

/* ---- buffers ---- */

static void test_roles(void **state)
{
	struct lifted l;

	(void)state;
	NEED_CLANG();
	lift_ok(&l, "plan/roles.cu", NULL);
	assert_int_equal(site(&l, "sendbuf")->role, CUCO_ROLE_INPUT);  /* only sent */
	assert_int_equal(site(&l, "recvbuf")->role, CUCO_ROLE_OUTPUT); /* only received into */
	assert_int_equal(site(&l, "field")->role, CUCO_ROLE_INOUT);    /* a kernel's argument */
	assert_int_equal(site(&l, "sum")->role, CUCO_ROLE_INOUT);      /* reduced in place */
	assert_string_equal(site(&l, "weights")->callee, "ncclMemAlloc");
	assert_string_equal(site(&l, "flags")->callee, "cudaMallocManaged");
	assert_int_equal(site(&l, "sum")->line, line_of("plan/roles.cu", "cudaMalloc(&sum"));
	lifted_release(&l);
}

static void test_dtypes(void **state)
{
	struct lifted l;

	(void)state;
	/* the rule, on canonical pointee types */
	assert_int_equal(cuco_lift_rules_dtype("float"), CUCO_DTYPE_F32);
	assert_int_equal(cuco_lift_rules_dtype("const double"), CUCO_DTYPE_F64);
	assert_int_equal(cuco_lift_rules_dtype("__nv_bfloat16"), CUCO_DTYPE_BF16);
	assert_int_equal(cuco_lift_rules_dtype("struct __half"), CUCO_DTYPE_F16);
	assert_int_equal(cuco_lift_rules_dtype("signed char"), CUCO_DTYPE_I8);
	assert_int_equal(cuco_lift_rules_dtype("unsigned long long"), CUCO_DTYPE_U64);
	assert_int_equal(cuco_lift_rules_dtype("struct job"), 0);
	assert_int_equal(cuco_lift_rules_dtype("void"), 0);
	assert_int_equal(cuco_lift_rules_dtype(NULL), 0);

	/* from the program's own declarations, through void ** casts and a typedef */
	NEED_CLANG();
	lift_ok(&l, "plan/roles.cu", NULL);
	assert_int_equal(site(&l, "field")->dtype, CUCO_DTYPE_F32);
	assert_int_equal(site(&l, "hist")->dtype, CUCO_DTYPE_F64);     /* real: a typedef */
	assert_int_equal(site(&l, "weights")->dtype, CUCO_DTYPE_BF16); /* __nv_bfloat16 */
	assert_int_equal(site(&l, "flags")->dtype, CUCO_DTYPE_I8);     /* int8_t */
	lifted_release(&l);
}

/* Sums of floats differ in their last bits; maxima and integer sums do not; atomics do. */
static void test_float_reduction(void **state)
{
	const char *fx = "plan/reduce_ops.cu";
	struct lifted l;
	int c;

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(l.p.nstep_calls, 2);
	assert_int_equal(l.p.float_reduction, 0); /* the float sum is after the step */
	c = call_on(&l, "ncclAllReduce", line_of(fx, "float max"));
	assert_int_equal(cuco_lift_rules_float_reduction(&l.f, &l.p.step, &c, 1), 0);
	c = call_on(&l, "ncclAllReduce", line_of(fx, "int sum"));
	assert_int_equal(cuco_lift_rules_float_reduction(&l.f, &l.p.step, &c, 1), 0);
	c = call_on(&l, "ncclAllReduce", line_of(fx, "float sum"));
	assert_int_equal(cuco_lift_rules_float_reduction(&l.f, &l.p.step, &c, 1), 1);
	lifted_release(&l);

	lift_ok(&l, "plan/roles.cu", NULL); /* ncclSum of ncclFloat in the step */
	assert_int_equal(l.p.float_reduction, 1);
	lifted_release(&l);

	lift_ok(&l, "plan/atomic.cu", NULL); /* ints through NCCL, floats by atomicAdd */
	assert_int_equal(l.p.float_reduction, 1);
	c = call_on(&l, "ncclAllReduce", line_of("plan/atomic.cu", "ncclAllReduce(count"));
	assert_int_equal(l.p.nstep_calls, 1);
	assert_int_equal(l.p.step_calls[0], c);
	lifted_release(&l);
}

/* ---- one process over every GPU ---- */

static void test_single_process(void **state)
{
	const char *fx = "plan/devices.cu";
	struct lifted l;
	unsigned lines[8];
	struct cuco_strbuf host = CUCO_STRBUF_INIT;
	struct cuco_lift_emit_opts eo;

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(l.p.single_process, 1);
	note_with(&l, "one process drives every GPU here");
	/* the step: the iterations, not a loop over devices nor the one inside the group */
	assert_int_equal(step_loop_line(&l), line_of(fx, "/* iterations */"));
	assert_int_equal(l.p.nstep_calls, 3); /* group start, the all-reduce, group end */
	/* every loop over the devices runs for the rank's own device only */
	assert_int_equal(edits_with(&l, "CUCO_LIFT_DEVICE_ONLY(i);", lines, 8), 3);
	assert_true(has_line(lines, 3, line_of(fx, "devices: set up")));
	/* a body of one statement is braced where the statement starts, the line after */
	assert_true(has_line(lines, 3, line_of(fx, "devices: reduce") + 1));
	assert_true(has_line(lines, 3, line_of(fx, "devices: tear down") + 1));
	assert_int_equal(edits_with(&l, "CUCO_LIFT_DEVICE_ONLY(d);", lines, 8), 1);
	assert_int_equal(lines[0], line_of(fx, "devices: synchronise"));
	assert_int_equal(edits_with(&l, "CUCO_LIFT_DEVICE_ONLY", NULL, 0), 4);
	assert_int_equal(edits_with(&l, "CUCO_LIFT_DEVICE_ONLY(iter)", NULL, 0), 0);

	memset(&eo, 0, sizeof(eo));
	eo.name = "devices";
	eo.argv = "";
	eo.from = fx;
	assert_int_equal(cuco_lift_emit_host(&l.f, &l.p, &eo, &host, &l.err), CUCO_OK);
	assert_contains(host.buf, "#define CUCO_LIFT_SINGLE_PROCESS 1\n");
	/* a loop body of one statement is braced around the marker and the statement */
	assert_contains(host.buf, "{ CUCO_LIFT_DEVICE_ONLY(i); /*cuco:step*/ncclAllReduce(buf[i]");
	cuco_strbuf_release(&host);
	lifted_release(&l);
}

/* ---- statements that leave the step ---- */

static void test_leave(void **state)
{
	const char *fx = "plan/leave.cu";
	struct lifted l;
	unsigned lines[4];

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	assert_int_equal(step_loop_line(&l), line_of(fx, "for (int it"));
	/* the break of the step's own loop ends the pass; the inner loop's break stays */
	assert_int_equal(edits_with(&l, "CUCO_LIFT_STEP_LEAVE;", lines, 4), 1);
	assert_int_equal(lines[0], line_of(fx, "/* converged */"));
	note_with(&l, "this break ends the run's pass through the step");
	for (size_t i = 0; i < l.p.nedits; i++)
		assert_int_not_equal(offset_line(&l, l.p.edits[i].file, l.p.edits[i].begin),
		                     line_of(fx, "/* inner */"));
	lifted_release(&l);
}

/* ---- refusals ---- */

struct refusal {
	const char *path;
	int rc;
	const char *words[3];
	const char *line_of; /* the fixture's text on the line the message names, or NULL */
};

static void test_refusals(void **state)
{
	static const struct refusal cases[] = {
	    {"plan/refuse_threads.cu",
	     CUCO_ERR_UNSUPPORTED,
	     {"the program starts threads", "cuco runs one rank per process", "-D MPI_SUPPORT"},
	     "pool.push_back"},
	    {"plan/refuse_graph.cu",
	     CUCO_ERR_UNSUPPORTED,
	     {"the program captures its work into a CUDA graph", "cudaStreamBeginCapture",
	      "Lift the program's form that launches"},
	     "cudaStreamBeginCapture("},
	    {"plan/refuse_no_main.cu",
	     CUCO_ERR_NOT_FOUND,
	     {"no main() in the files given", "--entry", NULL},
	     NULL},
	    {"plan/refuse_no_nccl.cu",
	     CUCO_ERR_NOT_FOUND,
	     {"refuse_no_nccl.cu: no NCCL collective or send/receive in the program", NULL, NULL},
	     NULL},
	    {"plan/refuse_undefined.cu",
	     CUCO_ERR_NOT_FOUND,
	     {"main calls exchange (declared at refuse_undefined.cu:",
	      "which no file given defines", "--from DIR"},
	     "exchange(buf"},
	    {"broken/main.cpp",
	     CUCO_ERR_COMPILE,
	     {"error:", "the program does not compile as given", "--include-dir DIR"},
	     NULL},
	};

	(void)state;
	NEED_CLANG();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct refusal *c = &cases[i];
		struct lifted l;

		lift(&l, c->path, NULL);
		print_message("%s: %s\n", c->path, l.err.msg);
		assert_int_equal(l.rc, c->rc);
		for (int k = 0; k < 3 && c->words[k]; k++)
			assert_contains(l.err.msg, c->words[k]);
		if (c->line_of) {
			char where[256];
			snprintf(where, sizeof(where), "%s:%u: ", l.name,
			         line_of(c->path, c->line_of));
			assert_true(!strncmp(l.err.msg, where, strlen(where)));
		}
		lifted_release(&l);
	}
}

/* ---- host.cu ---- */

/* The text of line n (1-based) of s, without its newline, into out. */
static void nth_line(const char *s, unsigned n, char *out, size_t len)
{
	for (unsigned k = 1; k < n && s; k++) {
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	if (!s) {
		snprintf(out, len, "(past the end)");
		return;
	}
	snprintf(out, len, "%.*s", (int)strcspn(s, "\n"), s);
}

/* Lines the lift itself puts into host.cu, each followed by a #line that resumes the count. */
static int lift_line(const char *line)
{
	return !strncmp(line, "// EVOLVE-BLOCK-", 16) || !strncmp(line, "#if 0", 5) ||
	       !strcmp(line, "#endif") || !strcmp(line, "CUCO_LIFT_STEP_BEGIN") ||
	       !strcmp(line, "CUCO_LIFT_STEP_END");
}

/*
 * Every `#line N "file"` of host (up to the harness's own "host.cu" part) precedes the text of
 * line N of file, and the lines after it follow the file's: each is the original line, or
 * carries an edit of the lift (cuco's names), or is a line the lift inserts, or is what is left
 * of a local #include after the header it names was inlined above, or the start of a line an
 * inserted line cuts (and the #line after it names the same line again). Returns the number
 * of lines that equal the original.
 */
static size_t check_line_directives(const char *host, const char *root)
{
	struct cuco_strbuf orig = CUCO_STRBUF_INIT;
	char name[256] = "", got[1024], want[1024];
	const char *s = host;
	unsigned line = 0;
	size_t same = 0, total = 0;

	while (s && *s) {
		size_t n = strcspn(s, "\n");
		unsigned dl;
		char dn[256];
		snprintf(got, sizeof(got), "%.*s", (int)n, s);
		s = s[n] ? s + n + 1 : NULL;
		if (sscanf(got, "#line %u \"%255[^\"]\"", &dl, dn) == 2) {
			char path[1024];
			if (!strcmp(dn, "host.cu"))
				break;
			line = dl;
			if (strcmp(dn, name)) {
				snprintf(name, sizeof(name), "%s", dn);
				snprintf(path, sizeof(path), "%s/%s", root, name);
				cuco_strbuf_reset(&orig);
				assert_int_equal(cuco_strbuf_read_file(&orig, path), 0);
			}
			continue;
		}
		if (!line)
			continue; /* the lift's preamble */
		nth_line(orig.buf, line, want, sizeof(want));
		total++;
		if (!strcmp(got, want))
			same++;
		else if (!got[0] && !strncmp(want, "#include \"", 10))
			; /* the rest of the line of a header inlined above */
		else if (!strncmp(want, got, strlen(got)))
			continue; /* cut by an edit of lines: the #line after it restates it */
		else if (!strstr(got, "cuco") && !strstr(got, "CUCO") && !lift_line(got))
			fail_msg("%s:%u: host.cu has\n  %s\nwhere the file has\n  %s", name, line,
			         got, want);
		if (!lift_line(got))
			line++;
	}
	cuco_strbuf_release(&orig);
	assert_true(total > 0);
	return same;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void test_emit_host(void **state)
{
	const char *fx = "plan/roles.cu";
	struct lifted l;
	struct cuco_strbuf host = CUCO_STRBUF_INIT;
	struct cuco_lift_emit_opts eo;
	char want[256];
	size_t lines = 0;

	(void)state;
	NEED_CLANG();
	lift_ok(&l, fx, NULL);
	memset(&eo, 0, sizeof(eo));
	eo.name = "roles";
	eo.argv = "";
	eo.from = fx;
	assert_int_equal(cuco_lift_emit_host(&l.f, &l.p, &eo, &host, &l.err), CUCO_OK);
	assert_contains(host.buf, "#include <cuco_dev/lift.cuh>\n");
	assert_contains(host.buf, "#include <cuco_dev/lift/mpi.h>");
	assert_contains(host.buf, "int cuco_lift_user_main(int argc, char **argv)");
	assert_contains(host.buf, "#define CUCO_LIFT_FLOAT_REDUCTION 1\n");
	assert_int_equal(count(host.buf, "CUCO_LIFT_STEP_BEGIN"), 1);
	assert_int_equal(count(host.buf, "CUCO_LIFT_STEP_END"), 1);
	/* the step's NCCL calls carry the fast path's tag, and only they */
	assert_int_equal(count(host.buf, "/*cuco:step*/"), l.p.nstep_calls);
	assert_int_equal(l.p.nstep_calls, 5);
	assert_contains(host.buf, "/*cuco:step*/ncclSend(sendbuf");
	assert_contains(host.buf, "/*cuco:step*/ncclAllReduce(sum, sum");
	assert_int_equal(count(host.buf, "ncclCommInitRank"), 1); /* set-up: untagged */
	/* the local header is inlined, numbered as its own file, and the unit resumes after it */
	snprintf(want, sizeof(want), "#line %u \"roles_kernels.cuh\"\n__global__ void relax",
	         line_of("plan/roles_kernels.cuh", "__global__"));
	assert_contains(host.buf, want);
	snprintf(want, sizeof(want), "#line %u \"roles.cu\"\n\n",
	         line_of(fx, "#include \"roles_kernels.cuh\""));
	assert_contains(host.buf, want);
	assert_null(strstr(host.buf, "#include \"roles_kernels.cuh\""));
	lines = check_line_directives(host.buf, l.root);
	assert_true(lines > 40);
	cuco_strbuf_release(&host);
	lifted_release(&l);

	/* a one-statement loop body as the step, and a break that leaves it */
	lift_ok(&l, "plan/leave.cu", NULL);
	eo.name = "leave";
	eo.from = "plan/leave.cu";
	assert_int_equal(cuco_lift_emit_host(&l.f, &l.p, &eo, &host, &l.err), CUCO_OK);
	assert_contains(host.buf, "CUCO_LIFT_STEP_LEAVE; /* converged */");
	assert_contains(host.buf, "break; /* inner */");
	check_line_directives(host.buf, l.root);
	cuco_strbuf_release(&host);
	lifted_release(&l);

	lift_ok(&l, "plan/step_straight.cu", NULL);
	eo.name = "straight";
	eo.from = "plan/step_straight.cu";
	assert_int_equal(cuco_lift_emit_host(&l.f, &l.p, &eo, &host, &l.err), CUCO_OK);
	assert_contains(host.buf, "CUCO_LIFT_STEP_BEGIN\n");
	assert_contains(host.buf, "CUCO_LIFT_STEP_END\n");
	assert_contains(host.buf, "#if 0 /* the rest of the block: it never runs */\n");
	check_line_directives(host.buf, l.root);
	cuco_strbuf_release(&host);
	lifted_release(&l);

	snprintf(want, sizeof(want), "step_warmup.cu:%u",
	         line_of("plan/step_warmup.cu", "/* warm-up */"));
	lift_ok(&l, "plan/step_warmup.cu", want);
	eo.name = "warmup";
	eo.from = "plan/step_warmup.cu";
	assert_int_equal(cuco_lift_emit_host(&l.f, &l.p, &eo, &host, &l.err), CUCO_OK);
	/* the warm-up's body is one statement: braced, with the markers inside */
	assert_contains(host.buf, "\t\t{ CUCO_LIFT_STEP_BEGIN /*cuco:step*/ncclAllReduce(x, x");
	check_line_directives(host.buf, l.root);
	cuco_strbuf_release(&host);
	lifted_release(&l);
}

static void test_rules_small(void **state)
{
	(void)state;
	assert_true(cuco_lift_rules_step_call("ncclAllReduce"));
	assert_true(cuco_lift_rules_step_call("ncclGroupEnd"));
	assert_true(cuco_lift_rules_step_call("ncclRecv"));
	assert_false(cuco_lift_rules_step_call("ncclCommInitRank"));
	assert_false(cuco_lift_rules_step_call("MPI_Allreduce"));
	assert_true(cuco_lift_rules_alloc_call("ncclMemAlloc"));
	assert_false(cuco_lift_rules_alloc_call("malloc"));
	assert_true(cuco_lift_rules_own_lines("a;\n  f(x);\nb;\n", 5, 9));
	assert_false(cuco_lift_rules_own_lines("a; f(x); b;\n", 3, 7));
	assert_true(cuco_lift_rules_mpi_runs("MPI_Allreduce"));
	assert_false(cuco_lift_rules_mpi_runs("MPI_Win_create"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_step_solve_loop),
	    cmocka_unit_test(test_step_last_of_twins),
	    cmocka_unit_test(test_step_straight_line),
	    cmocka_unit_test(test_step_comment_and_flag),
	    cmocka_unit_test(test_step_comment_first_line),
	    cmocka_unit_test(test_step_flag),
	    cmocka_unit_test(test_roles),
	    cmocka_unit_test(test_dtypes),
	    cmocka_unit_test(test_float_reduction),
	    cmocka_unit_test(test_single_process),
	    cmocka_unit_test(test_leave),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_emit_host),
	    cmocka_unit_test(test_rules_small),
	};
	struct cuco_err err = {0};
	int failed;

	have_clang = cuco_lift_clang_load(&err) == CUCO_OK;
	if (!have_clang)
		print_message("%s\n", err.msg);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	for (size_t i = 0; i < nscans; i++)
		cuco_lift_facts_release(&scans[i].f);
	/* ctest's "skipped" (SKIP_RETURN_CODE) when libclang was not there to test */
	return failed ? failed : have_clang ? 0 : 77;
}
