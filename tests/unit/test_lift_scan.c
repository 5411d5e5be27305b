/*
 * test_lift_scan.c - the lift's front end (src/lift/) on fixture programs
 * (tests/fixtures/lift/) and on the public programs kept as test input
 * ($CUCO_SHARED_PROGRAMS): exact positions, callees, enumerators, loops,
 * launches, threads, errors. Every test skips when libclang cannot be
 * loaded (CUCO_LIBCLANG=/nonexistent shows it), and the run then exits 77.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lift/scan.h"
#include "util/paths.h"
#include "util/strbuf.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/lift/"
#define OVERLAY FIXTURES "mpi"

/* What loading libclang under CUCO_LIBCLANG=/nonexistent said, before anything loaded it. */
static int missing_rc;
static char missing_msg[2048];
static int have_clang;

#define NEED_CLANG()                                                           \
	do {                                                                   \
		if (!have_clang) {                                             \
			print_message("libclang cannot be loaded: skipped\n"); \
			skip();                                                \
		}                                                              \
	} while (0)

struct list {
	const char *v[16];
	size_t n;
};

/* Parse srcs (relative to root) with the overlay, includes and defines given. */
static void scan(struct cuco_lift_facts *f, const char *root, const struct list *srcs,
                 const struct list *incs, const struct list *defs)
{
	struct cuco_lift_scan_opts o;
	struct cuco_err err = {0};
	char paths[16][1024];
	const char *p[16];
	size_t i;
	int rc;

	memset(&o, 0, sizeof(o));
	for (i = 0; srcs && i < srcs->n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", root, srcs->v[i]);
		p[i] = paths[i];
	}
	o.root = root;
	o.sources = p;
	o.nsources = srcs ? srcs->n : 0;
	o.include_dirs = incs ? incs->v : NULL;
	o.ninclude_dirs = incs ? incs->n : 0;
	o.defines = defs ? defs->v : NULL;
	o.ndefines = defs ? defs->n : 0;
	o.overlay_dir = OVERLAY;
	cuco_lift_facts_init(f);
	rc = cuco_lift_scan(&o, f, &err);
	if (rc != CUCO_OK)
		print_message("scan: %s\n", err.msg);
	assert_int_equal(rc, CUCO_OK);
}

/* Fail with the first error's text when the program did not parse cleanly. */
static void assert_parses(const struct cuco_lift_facts *f)
{
	const struct cuco_lift_diag *d = cuco_lift_first_error(f);

	if (d) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;

		cuco_lift_diag_format(f, d, &sb);
		print_message("%s\n", sb.buf);
		cuco_strbuf_release(&sb);
	}
	assert_null(d);
}

/* The nth (from 0) call of callee; fails when there is none. */
static const struct cuco_lift_call *call_n(const struct cuco_lift_facts *f, const char *callee,
                                           int nth)
{
	size_t i;

	for (i = 0; i < f->ncalls; i++)
		if (strcmp(f->calls[i].callee, callee) == 0 && nth-- == 0)
			return &f->calls[i];
	print_message("no call %s\n", callee);
	fail();
	return NULL;
}

static size_t count_calls(const struct cuco_lift_facts *f, const char *callee)
{
	size_t i, n = 0;

	for (i = 0; i < f->ncalls; i++)
		n += strcmp(f->calls[i].callee, callee) == 0;
	return n;
}

static const struct cuco_lift_function *fn(const struct cuco_lift_facts *f, const char *name)
{
	int i = cuco_lift_function_find(f, name);

	if (i < 0)
		print_message("no function %s\n", name);
	assert_true(i >= 0);
	return &f->functions[i];
}

static const char *rel(const struct cuco_lift_facts *f, int file)
{
	assert_true(file >= 0 && (size_t)file < f->nfiles);
	return f->files[file].rel ? f->files[file].rel : f->files[file].path;
}

#define assert_pos(f, p, file_, line_, col_)                      \
	do {                                                      \
		assert_string_equal(rel((f), (p).file), (file_)); \
		assert_int_equal((p).line, (line_));              \
		assert_int_equal((p).column, (col_));             \
	} while (0)

#define assert_range(f, r, file_, line_, col_, end_line_, end_col_) \
	do {                                                        \
		assert_string_equal(rel((f), (r).file), (file_));   \
		assert_int_equal((r).line, (line_));                \
		assert_int_equal((r).column, (col_));               \
		assert_int_equal((r).end_line, (end_line_));        \
		assert_int_equal((r).end_column, (end_col_));       \
	} while (0)

/* The statement at a line (the first one recorded there). */
static int stmt_at(const struct cuco_lift_facts *f, int kind, const char *file, unsigned line)
{
	size_t i;

	for (i = 0; i < f->nstmts; i++)
		if (f->stmts[i].kind == kind && f->stmts[i].extent.file >= 0 &&
		    strcmp(rel(f, f->stmts[i].extent.file), file) == 0 &&
		    f->stmts[i].extent.line == line)
			return (int)i;
	print_message("no %s statement at %s:%u\n", cuco_lift_stmt_kind_name(kind), file, line);
	fail();
	return -1;
}

static size_t children(const struct cuco_lift_facts *f, int parent)
{
	size_t i, n = 0;

	for (i = 0; i < f->nstmts; i++)
		n += f->stmts[i].parent == parent;
	return n;
}

static void test_missing_libclang(void **state)
{
	(void)state;
	/* main() tried CUCO_LIBCLANG=/nonexistent before anything loaded libclang */
	assert_int_equal(missing_rc, CUCO_ERR_UNSUPPORTED);
	assert_non_null(strstr(missing_msg, "CUCO_LIBCLANG=/nonexistent"));
	assert_non_null(strstr(missing_msg, "apt-get install libclang1-16"));
}

static void test_mpi_program(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"main.cu"}, 1};
	const struct cuco_lift_call *c;
	const struct cuco_lift_function *mainf, *scale, *halo;
	const struct cuco_lift_launch *l;
	struct cuco_strbuf json = CUCO_STRBUF_INIT;
	int main_file, halo_file, loop, body, s;
	size_t i, nlocal = 0;

	(void)state;
	NEED_CLANG();
	scan(&f, FIXTURES "mpi_allreduce", &srcs, NULL, NULL);
	assert_parses(&f);

	/* files: the unit and its header are local, the overlay's mpi.h is not */
	main_file = cuco_lift_file_find(&f, "main.cu");
	halo_file = cuco_lift_file_find(&f, "halo.h");
	assert_true(main_file >= 0 && halo_file >= 0);
	assert_true(f.files[main_file].parsed && f.files[main_file].local);
	assert_true(!f.files[halo_file].parsed && f.files[halo_file].local);
	assert_int_equal(f.files[halo_file].included_from, main_file);
	assert_int_equal(f.files[halo_file].include_line, 7);
	for (i = 0; i < f.nfiles; i++)
		nlocal += (size_t)f.files[i].local;
	assert_int_equal(nlocal, 2);
	for (i = 0; i < f.nincludes; i++) {
		const struct cuco_lift_include *in = &f.includes[i];

		if (in->file == main_file && strcmp(in->name, "halo.h") == 0) {
			assert_false(in->angled);
			assert_int_equal(in->resolved, halo_file);
			assert_range(&f, in->extent, "main.cu", 7, 1, 7, 18);
		} else if (in->file == main_file && strcmp(in->name, "mpi.h") == 0) {
			assert_true(in->angled);
			assert_int_equal(in->line, 4);
			assert_string_equal(f.files[in->resolved].path +
			                        strlen(f.files[in->resolved].path) -
			                        strlen("tests/fixtures/lift/mpi/mpi.h"),
			                    "tests/fixtures/lift/mpi/mpi.h");
			assert_false(f.files[in->resolved].local);
		}
	}

	/* functions: kinds, extents with their attributes, the kernel nvcc alone would see */
	scale = fn(&f, "scale");
	assert_int_equal(scale->kind, CUCO_LIFT_FN_KERNEL);
	assert_pos(&f, scale->name_pos, "main.cu", 21, 17);
	assert_range(&f, scale->extent, "main.cu", 21, 1, 26, 2);
	assert_int_equal(scale->nparams, 3);
	assert_string_equal(scale->params[0].name, "x");
	assert_string_equal(scale->params[0].type, "real *");
	assert_string_equal(scale->params[2].type, "real");
	assert_int_equal(fn(&f, "nvcc_only")->kind, CUCO_LIFT_FN_KERNEL);
	mainf = fn(&f, "main");
	assert_true(mainf->is_main);
	assert_range(&f, mainf->body, "main.cu", 33, 1, 70, 2);
	halo = fn(&f, "halo_exchange");
	assert_int_equal(halo->kind, CUCO_LIFT_FN_HOST);
	assert_pos(&f, halo->name_pos, "halo.h", 6, 20);

	/* ncclCommCount inside the check macro: a query, not a collective */
	c = call_n(&f, "ncclCommCount", 0);
	assert_int_equal(c->origin, CUCO_LIFT_ORIGIN_NCCL);
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_QUERY);
	assert_false(cuco_lift_call_is_host_collective(c));
	assert_pos(&f, c->name, "main.cu", 51, 12);
	assert_false(c->in_macro_body);
	assert_string_equal(f.stmts[c->stmt].macro, "NCCLCHECK");
	assert_true(f.stmts[c->stmt].opaque);
	assert_range(&f, f.stmts[c->stmt].extent, "main.cu", 51, 2, 51, 41);

	/* the all-reduce in the loop: its dtype a #define of an enumerator */
	assert_int_equal(count_calls(&f, "ncclAllReduce"), 2);
	c = call_n(&f, "ncclAllReduce", 0);
	assert_true(cuco_lift_call_is_host_collective(c));
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_COLLECTIVE);
	assert_pos(&f, c->name, "main.cu", 54, 13);
	assert_range(&f, c->extent, "main.cu", 54, 13, 54, 70);
	assert_int_equal(c->nargs, 7);
	assert_string_equal(c->args[3].text, "REAL_T");
	assert_string_equal(c->args[3].enumerator, "ncclFloat");
	assert_true(c->args[3].has_value);
	assert_int_equal(c->args[3].value, 7);
	assert_range(&f, c->args[3].extent, "main.cu", 54, 40, 54, 46);
	assert_string_equal(c->args[4].enumerator, "ncclSum");
	assert_int_equal(c->args[2].value, 1 << 20);
	assert_null(c->args[5].enumerator);
	assert_int_equal(c->caller, mainf - f.functions);
	loop = c->loop;
	assert_int_equal(loop, stmt_at(&f, CUCO_LIFT_STMT_FOR, "main.cu", 52));
	assert_string_equal(f.stmts[loop].induction, "iter");
	assert_string_equal(f.stmts[loop].cond_text, "iter < 10");
	assert_range(&f, f.stmts[loop].body, "main.cu", 52, 40, 58, 3);

	/* a #define whose body calls the collective: no rewrite in place */
	c = call_n(&f, "ncclAllReduce", 1);
	assert_true(c->in_macro_body);
	assert_string_equal(c->macro.name, "SUM_ALL");
	assert_range(&f, c->macro.site, "main.cu", 59, 12, 59, 27);
	assert_pos(&f, c->macro.definition, "main.cu", 18, 9);
	assert_pos(&f, c->name, "main.cu", 18, 25);
	assert_string_equal(c->args[3].text, "REAL_T");
	assert_string_equal(c->args[3].enumerator, "ncclFloat");
	assert_int_equal(c->loop, -1);

	/* the header's group: sends and receives in a loop of their own */
	c = call_n(&f, "ncclSend", 0);
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_P2P);
	assert_pos(&f, c->name, "halo.h", 13, 3);
	assert_string_equal(c->args[2].enumerator, "ncclFloat");
	assert_string_equal(c->args[3].text, "peers[p]");
	assert_int_equal(c->caller, halo - f.functions);
	assert_string_equal(f.stmts[c->loop].induction, "p");
	assert_int_equal(f.stmts[c->loop].parent_loop, -1);
	assert_int_equal(call_n(&f, "ncclRecv", 0)->loop, c->loop);
	assert_pos(&f, call_n(&f, "ncclRecv", 0)->name, "halo.h", 14, 3);
	assert_int_equal(call_n(&f, "ncclGroupStart", 0)->nccl, CUCO_LIFT_NCCL_GROUP);
	assert_int_equal(call_n(&f, "ncclGroupStart", 0)->loop, -1);
	assert_int_equal(call_n(&f, "halo_exchange", 0)->function, halo - f.functions);
	assert_int_equal(call_n(&f, "halo_exchange", 0)->origin, CUCO_LIFT_ORIGIN_LOCAL);

	/* MPI from the overlay; the allocation's destination */
	assert_int_equal(call_n(&f, "MPI_Bcast", 0)->origin, CUCO_LIFT_ORIGIN_MPI);
	c = call_n(&f, "cudaMalloc", 0);
	assert_int_equal(c->origin, CUCO_LIFT_ORIGIN_CUDA);
	assert_string_equal(c->args[0].text, "(void **)&buf");
	assert_string_equal(c->dest_root, "buf");
	assert_string_equal(c->dest_type, "real *");
	assert_string_equal(c->dest_pointee, "float");

	/* the launch, its braced block read as nvcc reads it, its text as written */
	assert_int_equal(f.nlaunches, 1);
	l = &f.launches[0];
	assert_string_equal(l->kernel, "scale");
	assert_int_equal(l->function, scale - f.functions);
	assert_pos(&f, l->name, "main.cu", 53, 3);
	assert_range(&f, l->extent, "main.cu", 53, 3, 53, 67);
	assert_int_equal(l->nconfig, 4);
	assert_string_equal(l->config[0], "(n + 255) / 256");
	assert_string_equal(l->config[1], "{256, 1, 1}");
	assert_string_equal(l->config[3], "stream");
	assert_int_equal(l->nargs, 3);
	assert_string_equal(l->args[2].text, "0.5f");
	assert_int_equal(l->loop, loop);
	assert_true(f.files[main_file].patched);
	assert_int_equal(f.npatches, 3);
	assert_int_equal(count_calls(&f, "dim3"), 0); /* the grid's conversion: nothing written */

	/* main's statements: the top level, continue and break with their loops */
	body = stmt_at(&f, CUCO_LIFT_STMT_COMPOUND, "main.cu", 33);
	assert_int_equal(f.stmts[body].parent, -1);
	assert_int_equal(children(&f, body), 24);
	s = stmt_at(&f, CUCO_LIFT_STMT_CONTINUE, "main.cu", 56);
	assert_int_equal(f.stmts[s].target, loop);
	s = stmt_at(&f, CUCO_LIFT_STMT_BREAK, "main.cu", 62);
	assert_int_equal(f.stmts[s].target, stmt_at(&f, CUCO_LIFT_STMT_WHILE, "main.cu", 60));
	assert_string_equal(f.stmts[f.stmts[s].target].cond_text, "count > 0");
	s = stmt_at(&f, CUCO_LIFT_STMT_RETURN, "main.cu", 69);
	assert_int_equal(f.stmts[s].target, -1);
	assert_int_equal(f.stmts[s].parent, body);
	assert_range(&f, f.stmts[s].extent, "main.cu", 69, 2, 69, 11);
	assert_int_equal(f.nundefined, 0);

	assert_int_equal(cuco_lift_facts_json(&f, &json, NULL), CUCO_OK);
	assert_non_null(strstr(json.buf, "\"enumerator\": \"ncclFloat\""));
	cuco_strbuf_release(&json);
	cuco_lift_facts_release(&f);
}

static void test_single_process(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"main.cu"}, 1};
	const struct cuco_lift_call *c;
	int s, lambda = -1;
	size_t i;

	(void)state;
	NEED_CLANG();
	scan(&f, FIXTURES "single_process", &srcs, NULL, NULL);
	assert_parses(&f);
	c = call_n(&f, "ncclCommInitAll", 0);
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_SETUP);
	assert_pos(&f, c->name, "main.cu", 27, 8);
	assert_string_equal(c->args[0].text, "comms.data()");

	/* the symmetric buffer of each device */
	c = call_n(&f, "ncclMemAlloc", 0);
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_MEMORY);
	assert_string_equal(c->dest_root, "bufs[d]");
	assert_string_equal(c->dest_type, "float *");
	assert_string_equal(c->dest_pointee, "float");
	assert_string_equal(f.stmts[c->loop].induction, "d");
	/* a slot written through pointer arithmetic */
	c = call_n(&f, "cudaMalloc", 0);
	assert_string_equal(c->dest_root, "spare[d]");
	assert_string_equal(c->dest_type, "float *");

	/* the collective per device in a lambda's loop; return leaves the lambda */
	c = call_n(&f, "ncclAllReduce", 0);
	assert_pos(&f, c->name, "main.cu", 37, 4);
	assert_string_equal(f.stmts[c->loop].cond_text, "d < ndev");
	for (s = c->stmt; s >= 0 && lambda < 0; s = f.stmts[s].parent)
		if (f.stmts[s].kind == CUCO_LIFT_STMT_LAMBDA)
			lambda = s;
	assert_true(lambda >= 0);
	assert_int_equal(f.stmts[c->loop].parent_loop, -1);
	s = stmt_at(&f, CUCO_LIFT_STMT_RETURN, "main.cu", 39);
	assert_int_equal(f.stmts[f.stmts[s].parent].parent, lambda);
	assert_int_equal(f.stmts[s].target, -1);

	/* the loops: a body without braces, a range-for */
	s = stmt_at(&f, CUCO_LIFT_STMT_FOR, "main.cu", 41);
	assert_string_equal(f.stmts[s].induction, "count");
	assert_range(&f, f.stmts[s].body, "main.cu", 42, 3, 42, 13);
	s = stmt_at(&f, CUCO_LIFT_STMT_RANGE_FOR, "main.cu", 44);
	assert_string_equal(f.stmts[s].induction, "c");
	assert_string_equal(f.stmts[s].cond_text, "comms");
	assert_int_equal(call_n(&f, "ncclCommDestroy", 0)->loop, s);

	/* the thread */
	assert_int_equal(f.nthreads, 1);
	assert_int_equal(f.threads[0].kind, CUCO_LIFT_THREAD_STD);
	assert_string_equal(f.threads[0].entry, "watch");
	c = &f.calls[f.threads[0].call];
	assert_true(c->is_constructor);
	assert_range(&f, c->extent, "main.cu", 33, 14, 33, 32);
	for (i = 0; i < f.nfunctions; i++)
		assert_int_equal(f.functions[i].kind, strcmp(f.functions[i].name, "peek") == 0
		                                          ? CUCO_LIFT_FN_KERNEL
		                                          : CUCO_LIFT_FN_HOST);

	/* NCCL's device API is no host collective */
	c = call_n(&f, "ncclGetLsaPointer", 0);
	assert_int_equal(c->origin, CUCO_LIFT_ORIGIN_NCCL_DEVICE);
	assert_int_equal(c->nccl, CUCO_LIFT_NCCL_NONE);
	assert_false(cuco_lift_call_is_host_collective(c));
	assert_pos(&f, c->name, "main.cu", 53, 22);
	cuco_lift_facts_release(&f);
}

static void test_c_threads(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"main.c"}, 1};
	const struct cuco_lift_call *c;

	(void)state;
	NEED_CLANG();
	scan(&f, FIXTURES "c_threads", &srcs, NULL, NULL);
	assert_parses(&f);
	c = call_n(&f, "ncclAllReduce", 0);
	assert_pos(&f, c->name, "main.c", 17, 2);
	assert_string_equal(c->args[3].enumerator, "ncclFloat32");
	assert_string_equal(c->args[4].enumerator, "ncclMax");
	assert_int_equal(c->args[2].value, 256);
	assert_int_equal(c->caller, fn(&f, "worker") - f.functions);
	assert_int_equal(f.nthreads, 1);
	assert_int_equal(f.threads[0].kind, CUCO_LIFT_THREAD_PTHREAD);
	assert_string_equal(f.threads[0].entry, "worker");
	c = &f.calls[f.threads[0].call];
	assert_pos(&f, c->name, "main.c", 28, 3);
	assert_null(f.stmts[c->loop].induction); /* for (i = 0; ...): nothing declared */
	assert_string_equal(f.stmts[c->loop].cond_text, "i < 2");
	cuco_lift_facts_release(&f);
}

static void test_broken_program(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"main.cpp"}, 1};
	const struct cuco_lift_diag *d;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	size_t i;
	int missing = 0, undeclared = 0;

	(void)state;
	NEED_CLANG();
	scan(&f, FIXTURES "broken", &srcs, NULL, NULL);
	d = cuco_lift_first_error(&f);
	assert_non_null(d);
	assert_pos(&f, d->pos, "bad.h", 4, 39);
	assert_string_equal(d->message, "expected ';' after return statement");
	cuco_lift_diag_format(&f, d, &sb);
	assert_string_equal(sb.buf, "bad.h:4:39: error: expected ';' after return statement\n"
	                            "  included from main.cpp:3");
	cuco_strbuf_release(&sb);
	for (i = 0; i < f.ndiags; i++) {
		if (strstr(f.diags[i].message, "missing_header.h")) {
			assert_pos(&f, f.diags[i].pos, "main.cpp", 4, 10);
			missing = 1;
		}
		if (strstr(f.diags[i].message, "undeclared_thing")) {
			assert_pos(&f, f.diags[i].pos, "main.cpp", 8, 20);
			undeclared = 1;
		}
	}
	assert_true(missing && undeclared);
	for (i = 0; i < f.nincludes; i++)
		if (strcmp(f.includes[i].name, "missing_header.h") == 0)
			assert_int_equal(f.includes[i].resolved, -1);
	assert_int_equal(fn(&f, "halve")->kind, CUCO_LIFT_FN_HOST);
	cuco_lift_facts_release(&f);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* compile_commands.json names the sources and their flags, as other clang tools read it. */
static void test_compile_commands(void **state)
{
	char dir[] = "/tmp/cuco-lift-XXXXXX", path[512];
	struct cuco_strbuf db = CUCO_STRBUF_INIT;
	struct cuco_lift_scan_opts o;
	struct cuco_lift_facts f;
	struct cuco_err err = {0};
	const struct cuco_lift_call *c;

	(void)state;
	NEED_CLANG();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/inc", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/inc/extra.h", dir);
	write_file(path, "#define COUNT 64\n");
	snprintf(path, sizeof(path), "%s/app.cpp", dir);
	write_file(path, "#include <nccl.h>\n#include \"extra.h\"\n"
	                 "void step(float *b, ncclComm_t c)\n{\n#ifdef FROM_DB\n"
	                 "\tncclAllReduce(b, b, COUNT, ncclHalf, ncclSum, c, 0);\n#endif\n}\n");
	snprintf(path, sizeof(path), "%s/other.cpp", dir);
	write_file(path, "void not_in_the_database(void) {}\n");
	cuco_strbuf_addf(&db,
	                 "[{\"directory\": \"%s\", \"file\": \"app.cpp\", \"arguments\": "
	                 "[\"mpicxx\", \"-Iinc\", \"-DFROM_DB\", \"-std=c++17\", \"-c\", "
	                 "\"app.cpp\", \"-o\", \"app.o\"]}]\n",
	                 dir);
	snprintf(path, sizeof(path), "%s/compile_commands.json", dir);
	write_file(path, db.buf);
	cuco_strbuf_release(&db);

	memset(&o, 0, sizeof(o));
	o.root = dir;
	cuco_lift_facts_init(&f);
	assert_int_equal(cuco_lift_scan(&o, &f, &err), CUCO_OK);
	assert_parses(&f);
	c = call_n(&f, "ncclAllReduce", 0);
	assert_pos(&f, c->name, "app.cpp", 6, 2);
	assert_int_equal(c->args[2].value, 64);
	assert_string_equal(c->args[3].enumerator, "ncclHalf");
	assert_true(f.files[cuco_lift_file_find(&f, "inc/extra.h")].local);
	assert_int_equal(cuco_lift_function_find(&f, "not_in_the_database"), -1);
	cuco_lift_facts_release(&f);

	/* without the database: every source under the root */
	o.no_compile_commands = 1;
	cuco_lift_facts_init(&f);
	assert_int_equal(cuco_lift_scan(&o, &f, &err), CUCO_OK);
	assert_true(cuco_lift_function_find(&f, "not_in_the_database") >= 0);
	assert_int_equal(count_calls(&f, "ncclAllReduce"), 0);
	cuco_lift_facts_release(&f);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* The public programs kept as test input; NULL when they are not here. */
static const char *programs(void)
{
	static char dir[1024];
	const char *env = getenv("CUCO_SHARED_PROGRAMS");
	const char *const tries[] = {CUCO_SOURCE_DIR "/../shared/programs",
	                             CUCO_SOURCE_DIR "/../../shared/programs"};
	struct stat sb;
	size_t i;

	if (env && *env)
		return stat(env, &sb) == 0 ? env : NULL;
	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		if (stat(tries[i], &sb) == 0) {
			snprintf(dir, sizeof(dir), "%s", tries[i]);
			return dir;
		}
	}
	return NULL;
}

/* One public program, with the flags its SOURCE.txt gives. */
static void scan_program(struct cuco_lift_facts *f, const char *name, const struct list *srcs,
                         const struct list *incs, const struct list *defs)
{
	char root[1024], abs_incs[16][1024];
	struct list inc = {{NULL}, 0};
	const char *dir = programs();
	size_t i;

	if (!dir) {
		print_message("no public programs ($CUCO_SHARED_PROGRAMS): skipped\n");
		skip();
	}
	snprintf(root, sizeof(root), "%s/%s", dir, name);
	for (i = 0; incs && i < incs->n; i++) {
		snprintf(abs_incs[i], sizeof(abs_incs[i]), "%s/%s", root, incs->v[i]);
		inc.v[inc.n++] = abs_incs[i];
	}
	scan(f, root, srcs, &inc, defs);
	assert_parses(f);
}

static void test_programs_parse(void **state)
{
	static const struct {
		const char *name, *srcs[2], *incs[2], *defs[3];
	} progs[] = {
	    {"blinkplus-nccl-broadcast", {"time_nccl_broadcast_2gpu.cu"}, {"."}, {NULL}},
	    {"cppcheatsheet-nccl-reduce", {"main.cu"}, {"."}, {NULL}},
	    {"hpcinfo-nccl-allreduce-types", {"reduce.cu"}, {"."}, {NULL}},
	    {"learncuda-nccl-allreduce", {"nccl.cu"}, {"."}, {NULL}},
	    {"mgpm-jacobi-nccl-graphs", {"jacobi.cpp", "jacobi_kernels.cu"}, {"."}, {"HAVE_CUB"}},
	    {"mgpm-jacobi-nccl-overlap", {"jacobi.cpp", "jacobi_kernels.cu"}, {"."}, {"HAVE_CUB"}},
	    {"nccl-tests-reduce-scatter",
	     {"src/reduce_scatter.cu"},
	     {"src", "os"},
	     {"NCCL_OS_LINUX"}},
	    {"umd-nccl-allgather-bf16", {"allgather.cu"}, {"."}, {"USE_CUDA", "USE_NCCL"}},
	};
	size_t i, j;

	(void)state;
	NEED_CLANG();
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct cuco_lift_facts f;
		struct list srcs = {{NULL}, 0}, incs = {{NULL}, 0}, defs = {{NULL}, 0};
		size_t ncoll = 0;

		for (j = 0; j < 2 && progs[i].srcs[j]; j++)
			srcs.v[srcs.n++] = progs[i].srcs[j];
		for (j = 0; j < 2 && progs[i].incs[j]; j++)
			incs.v[incs.n++] = progs[i].incs[j];
		for (j = 0; j < 3 && progs[i].defs[j]; j++)
			defs.v[defs.n++] = progs[i].defs[j];
		print_message("%s\n", progs[i].name);
		scan_program(&f, progs[i].name, &srcs, &incs, &defs);
		for (j = 0; j < f.ncalls; j++)
			ncoll += (size_t)cuco_lift_call_is_host_collective(&f.calls[j]);
		assert_true(ncoll > 0);
		cuco_lift_facts_release(&f);
	}
}

/* The 4 sends and receives of the warm-up and the solve loop, NCCL_REAL_TYPE read through. */
static void test_program_jacobi(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"jacobi.cpp", "jacobi_kernels.cu"}, 2};
	const struct list incs = {{"."}, 1}, defs = {{"HAVE_CUB"}, 1};
	const struct cuco_lift_function *k;
	const struct cuco_lift_launch *l = NULL;
	int warm, solve;
	size_t i, nwarm = 0, nsolve = 0;

	(void)state;
	NEED_CLANG();
	scan_program(&f, "mgpm-jacobi-nccl", &srcs, &incs, &defs);
	warm = stmt_at(&f, CUCO_LIFT_STMT_FOR, "jacobi.cpp", 301);
	assert_string_equal(f.stmts[warm].cond_text, "i < 10");
	solve = stmt_at(&f, CUCO_LIFT_STMT_WHILE, "jacobi.cpp", 332);
	assert_string_equal(f.stmts[solve].cond_text, "l2_norm > tol && iter < iter_max");
	for (i = 0; i < f.ncalls; i++) {
		const struct cuco_lift_call *c = &f.calls[i];

		if (c->nccl != CUCO_LIFT_NCCL_P2P)
			continue;
		assert_string_equal(c->args[2].text, "NCCL_REAL_TYPE");
		assert_string_equal(c->args[2].enumerator, "ncclFloat");
		assert_string_equal(f.stmts[c->stmt].macro, "NCCL_CALL");
		if (c->loop == warm)
			nwarm++;
		else if (c->loop == solve)
			nsolve++;
		else
			fail();
	}
	assert_int_equal(nwarm, 4);
	assert_int_equal(nsolve, 4);
	assert_pos(&f, call_n(&f, "ncclRecv", 2)->name, "jacobi.cpp", 352, 19);
	assert_pos(&f, call_n(&f, "ncclSend", 3)->name, "jacobi.cpp", 355, 19);
	assert_int_equal(call_n(&f, "MPI_Allreduce", 0)->loop, solve);

	/* the kernels and their launches, in the other unit */
	k = fn(&f, "initialize_boundaries");
	assert_int_equal(k->kind, CUCO_LIFT_FN_KERNEL);
	assert_pos(&f, k->name_pos, "jacobi_kernels.cu", 55, 17);
	k = fn(&f, "jacobi_kernel");
	assert_int_equal(k->kind, CUCO_LIFT_FN_KERNEL);
	assert_true(k->is_template);
	assert_pos(&f, k->name_pos, "jacobi_kernels.cu", 75, 17);
	assert_int_equal(f.nlaunches, 2);
	for (i = 0; i < f.nlaunches; i++)
		if (strcmp(f.launches[i].kernel, "jacobi_kernel") == 0)
			l = &f.launches[i];
	assert_non_null(l);
	assert_int_equal(l->function, k - f.functions);
	assert_pos(&f, l->name, "jacobi_kernels.cu", 113, 5);
	assert_string_equal(l->config[1], "{dim_block_x, dim_block_y, 1}");
	assert_int_equal(l->caller, fn(&f, "launch_jacobi_kernel") - f.functions);
	assert_int_equal(call_n(&f, "launch_jacobi_kernel", 0)->function,
	                 fn(&f, "launch_jacobi_kernel") - f.functions);
	assert_pos(&f, call_n(&f, "launch_jacobi_kernel", 0)->name, "jacobi.cpp", 337, 9);
	cuco_lift_facts_release(&f);
}

/* The all-to-all in a header's template. */
static void test_program_prk(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"transpose-a2a-mpi-nccl.cu"}, 1}, incs = {{"."}, 1};
	const struct cuco_lift_call *c;

	(void)state;
	NEED_CLANG();
	scan_program(&f, "prk-transpose-a2a-nccl", &srcs, &incs, NULL);
	c = call_n(&f, "ncclSend", 0);
	assert_true(cuco_lift_call_is_host_collective(c));
	assert_pos(&f, c->name, "prk_nccl.h", 59, 29);
	assert_string_equal(f.functions[c->caller].qualified, "prk::NCCL::alltoall");
	assert_true(f.functions[c->caller].is_template);
	assert_string_equal(f.stmts[c->loop].induction, "r");
	assert_pos(&f, call_n(&f, "ncclRecv", 0)->name, "prk_nccl.h", 60, 29);
	assert_int_equal(fn(&f, "transposeNoBankConflictBulk")->kind, CUCO_LIFT_FN_KERNEL);
	assert_int_equal(f.nlaunches, 8);
	cuco_lift_facts_release(&f);
}

/* The symmetric-memory all-reduce, the driver in common/. */
static void test_program_symmem(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"main.cc", "common/src/utils.cc"}, 2};
	const struct list incs = {{"common/include"}, 1}, defs = {{"MPI_SUPPORT"}, 1};
	const struct cuco_lift_call *c;

	(void)state;
	NEED_CLANG();
	scan_program(&f, "nccl-example-symmem-allreduce", &srcs, &incs, &defs);
	c = call_n(&f, "ncclAllReduce", 0);
	assert_pos(&f, c->name, "main.cc", 135, 13);
	assert_string_equal(c->args[3].enumerator, "ncclFloat");
	assert_string_equal(f.functions[c->caller].name, "allReduce");
	assert_int_equal(call_n(&f, "ncclCommWindowRegister", 0)->nccl, CUCO_LIFT_NCCL_MEMORY);
	assert_int_equal(call_n(&f, "MPI_Init", 0)->origin, CUCO_LIFT_ORIGIN_MPI);
	assert_true(f.files[cuco_lift_file_find(&f, "common/include/utils.h")].local);
	cuco_lift_facts_release(&f);
}

/* A plug-in without its driver: the functions it calls and nobody defines. */
static void test_program_nccl_tests(void **state)
{
	struct cuco_lift_facts f;
	const struct list srcs = {{"src/sendrecv.cu"}, 1}, incs = {{"src", "os"}, 2};
	const struct list defs = {{"NCCL_OS_LINUX"}, 1};
	size_t i;
	int init_data = 0;

	(void)state;
	NEED_CLANG();
	scan_program(&f, "nccl-tests-sendrecv", &srcs, &incs, &defs);
	assert_pos(&f, call_n(&f, "ncclSend", 0)->name, "src/sendrecv.cu", 58, 15);
	assert_int_equal(call_n(&f, "ncclSend", 0)->nccl, CUCO_LIFT_NCCL_P2P);
	for (i = 0; i < f.nundefined; i++) {
		if (strcmp(f.undefined[i].name, "InitData") == 0) {
			assert_pos(&f, f.undefined[i].decl, "src/common.h", 191, 21);
			init_data = 1;
		}
	}
	assert_true(init_data);
	cuco_lift_facts_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_libclang),   cmocka_unit_test(test_mpi_program),
	    cmocka_unit_test(test_single_process),     cmocka_unit_test(test_c_threads),
	    cmocka_unit_test(test_broken_program),     cmocka_unit_test(test_compile_commands),
	    cmocka_unit_test(test_programs_parse),     cmocka_unit_test(test_program_jacobi),
	    cmocka_unit_test(test_program_prk),        cmocka_unit_test(test_program_symmem),
	    cmocka_unit_test(test_program_nccl_tests),
	};
	const char *env = getenv("CUCO_LIBCLANG");
	char *saved = env ? strdup(env) : NULL;
	struct cuco_err err = {0};
	int failed;

	/* the error a machine without libclang gives, while nothing has loaded it yet */
	setenv("CUCO_LIBCLANG", "/nonexistent", 1);
	missing_rc = cuco_lift_clang_load(&err);
	snprintf(missing_msg, sizeof(missing_msg), "%s", err.msg);
	if (saved)
		setenv("CUCO_LIBCLANG", saved, 1);
	else
		unsetenv("CUCO_LIBCLANG");
	free(saved);
	have_clang = cuco_lift_clang_load(&err) == CUCO_OK;
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	/* ctest's "skipped" (SKIP_RETURN_CODE) when libclang was not there to test */
	return failed ? failed : have_clang ? 0 : 77;
}
