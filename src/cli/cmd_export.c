/* cmd_export.c - `cuco export`: a stored program (or a program file) as a
 * self-contained directory for the user's own NCCL application: the
 * program, its workload, a small runtime that does what the harness does
 * (share/export/cuco_export.{h,cu}), a CMake project, an MPI example and a
 * PyTorch example that check the output against the workload's reference. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco export (run ID | program ID | FILE.cu) -o DIR [--workload W] [--store PATH]\n"
    "\n"
    "Write DIR: src/program.cu (the program), src/workload.cu and the workload's\n"
    "headers, runtime/ (cuco_export.h: init / tensor / run / fini on your\n"
    "ncclComm_t and stream; tensors in symmetric windows; the device communicator\n"
    "the program asks for), include/ (cuco's headers), CMakeLists.txt, and\n"
    "examples/ (an MPI example and a PyTorch example that run the program and check\n"
    "its outputs against the workload's reference).\n";

struct export_args {
	const char *dir, *workload, *store;
	const char *pos[2];
	int npos;
};

static const struct cli_flag export_flags[] = {
    {CLI_ARG, "run ID", .help = "the run's fastest verified program (lowest median)"},
    {CLI_ARG, "program ID", .help = "a stored program"},
    {CLI_ARG, "FILE.cu", .help = "a program file (then --workload is required)"},
    {CLI_STRING, "--workload", "W",
     "the workload: a name or a package directory (default: the stored program's workload, "
     "from the package folder its run was made from)",
     CLI_AT(struct export_args, workload)},
    CLI_STORE_FLAG(struct export_args, store),
    {CLI_STRING, "-o", "DIR", "where to write; must not exist or be empty",
     CLI_AT(struct export_args, dir)},
    {CLI_END},
};

const struct cli_spec cmd_export_spec = {
    .name = "export",
    .usage = usage,
    .flags = export_flags,
    .args_size = sizeof(struct export_args),
    .pos = offsetof(struct export_args, pos),
    .npos = offsetof(struct export_args, npos),
    .max_pos = 2,
};

/* The fastest verified program of a run, found by its evaluations. */
struct best {
	int64_t program_id;
	double median_us;
	char shape[64];
};

static int best_row(const struct cuco_eval_rec *e, void *arg, struct cuco_err *err)
{
	struct best *b = arg;

	(void)err;
	if (strcmp(e->status, "ok") || isnan(e->median_us) || isnan(e->rel_err))
		return 0;
	if (!b->program_id || e->median_us < b->median_us) {
		b->program_id = e->program_id;
		b->median_us = e->median_us;
		snprintf(b->shape, sizeof(b->shape), "%s", e->shape ? e->shape : "");
	}
	return 0;
}

static int copy_file(const char *from, const char *to, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;

	if (cuco_strbuf_read_file(&sb, from))
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: %s", from, strerror(errno));
	else if (cuco_write_file(to, sb.buf, sb.len))
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", to, strerror(errno));
	cuco_strbuf_release(&sb);
	return rc;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && !strcmp(s + n - k, suf);
}

/* Copy every regular file of `from` whose name ends in one of the suffixes into `to`. */
static int copy_dir(const char *from, const char *to, const char *const *suffixes, int nsuf,
                    const char *skip, struct cuco_err *err)
{
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = CUCO_OK;

	if (!d)
		return cuco_err_set(err, CUCO_ERR_IO, "%s: %s", from, strerror(errno));
	if (cuco_mkdir_p(to)) {
		closedir(d);
		return cuco_err_set(err, CUCO_ERR_IO, "cannot create %s: %s", to, strerror(errno));
	}
	while (!rc && (e = readdir(d)) != NULL) {
		char a[PATH_MAX], b[PATH_MAX];
		int want = 0;

		for (int i = 0; i < nsuf; i++)
			want |= has_suffix(e->d_name, suffixes[i]);
		if (!want || (skip && !strcmp(e->d_name, skip)))
			continue;
		snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", to, e->d_name);
		if (cuco_file_exists(a))
			rc = copy_file(a, b, err);
	}
	closedir(d);
	return rc;
}

/* A file of share/export rendered with @NAME@, @ARCH@ and @LIBS@. */
static int emit(const char *share, const char *file, const char *to, const char *name,
                const char *arch, const char *libs, struct cuco_err *err)
{
	struct cuco_strbuf in = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	char path[PATH_MAX];
	int rc = CUCO_OK;

	snprintf(path, sizeof(path), "%s/%s", share, file);
	if (cuco_strbuf_read_file(&in, path)) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "%s: %s (is CUCO_HOME right?)", path,
		                  strerror(errno));
		goto out;
	}
	for (const char *c = in.buf; *c; c++) {
		if (!strncmp(c, "@NAME@", 6)) {
			cuco_strbuf_adds(&out, name);
			c += 5;
		} else if (!strncmp(c, "@ARCH@", 6)) {
			cuco_strbuf_adds(&out, arch);
			c += 5;
		} else if (!strncmp(c, "@LIBS@", 6)) {
			cuco_strbuf_adds(&out, libs);
			c += 5;
		} else {
			cuco_strbuf_addch(&out, *c);
		}
	}
	if (cuco_write_file(to, out.buf, out.len))
		rc = cuco_err_set(err, CUCO_ERR_IO, "cannot write %s: %s", to, strerror(errno));
out:
	cuco_strbuf_release(&in);
	cuco_strbuf_release(&out);
	return rc;
}

/* runtime/shapes.h: the manifest's parameters, shapes and tolerance, as C. */
static void shapes_header(const struct cuco_manifest *m, const char *program,
                          struct cuco_strbuf *sb)
{
	cuco_strbuf_addf(sb,
	                 "/* shapes.h - workload %s as cuco export found it: parameters, named "
	                 "shapes, tolerance. */\n#ifndef CUCO_EXPORT_SHAPES_H\n#define "
	                 "CUCO_EXPORT_SHAPES_H\n\n",
	                 m->name);
	cuco_strbuf_addf(sb, "#define CUCO_EXPORT_WORKLOAD \"%s\"\n", m->name);
	cuco_strbuf_addf(sb, "#define CUCO_EXPORT_PROGRAM \"%s\"\n", program);
	cuco_strbuf_addf(sb, "#define CUCO_EXPORT_DEFAULT_SHAPE \"%s\"\n", m->default_shape);
	cuco_strbuf_addf(sb, "#define CUCO_EXPORT_TOLERANCE %.17g\n", m->tolerance);
	cuco_strbuf_addf(sb, "#define CUCO_EXPORT_NPARAMS %d\n\n", m->nparams);
	cuco_strbuf_adds(sb, "static const char *const cuco_export_params[] "
	                     "__attribute__((unused)) = {");
	for (int i = 0; i < m->nparams; i++)
		cuco_strbuf_addf(sb, "%s\"%s\"", i ? ", " : "", m->params[i]);
	cuco_strbuf_adds(sb, "};\n\nstatic const struct {\n\tconst char *name;\n\tlong long "
	                     "v[CUCO_EXPORT_NPARAMS];\n} cuco_export_shape_table[] "
	                     "__attribute__((unused)) = {\n");
	for (int s = 0; s < m->nshapes; s++) {
		cuco_strbuf_addf(sb, "    {\"%s\", {", m->shapes[s].name);
		for (int i = 0; i < m->nparams; i++)
			cuco_strbuf_addf(sb, "%s%lld", i ? ", " : "", m->shapes[s].params[i]);
		cuco_strbuf_adds(sb, "}},\n");
	}
	cuco_strbuf_adds(sb, "};\n\nstatic const char cuco_export_shapes_text[] "
	                     "__attribute__((unused)) =\n");
	for (int s = 0; s < m->nshapes; s++) {
		cuco_strbuf_addf(sb, "    \"%s", m->shapes[s].name);
		for (int i = 0; i < m->nparams; i++)
			cuco_strbuf_addf(sb, " %s=%lld", m->params[i], m->shapes[s].params[i]);
		cuco_strbuf_adds(sb, "\\n\"\n");
	}
	cuco_strbuf_adds(sb, "    \"\";\n\n#endif\n");
}

static int dir_empty_or_new(const char *dir, struct cuco_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int n = 0;

	if (stat(dir, &st) != 0)
		return CUCO_OK;
	if (!S_ISDIR(st.st_mode))
		return cuco_err_set(err, CUCO_ERR_INVALID, "-o %s: exists and is not a directory",
		                    dir);
	d = opendir(dir);
	if (!d)
		return cuco_err_set(err, CUCO_ERR_IO, "-o %s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	if (n)
		return cuco_err_set(err, CUCO_ERR_INVALID,
		                    "-o %s: not empty; export into a new or empty directory", dir);
	return CUCO_OK;
}

int cmd_export(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_store *store = NULL;
	struct cuco_program_rec prog;
	struct cuco_run_rec run;
	struct cuco_manifest m;
	struct cuco_strbuf code = CUCO_STRBUF_INIT, sb = CUCO_STRBUF_INIT, label = CUCO_STRBUF_INIT;
	const char *kind = NULL, *idstr = NULL, *dir = NULL, *workload = NULL, *store_path = NULL;
	const char *home, *arch, *share;
	char to[PATH_MAX], from[PATH_MAX];
	long long id = 0;
	struct export_args a = {0};
	int rc, have_prog = 0, have_m = 0;
	static const char *const headers[] = {".h", ".cuh", ".hpp"};
	static const char *const share_files[][2] = {
	    {"cuco_export.h", "runtime/cuco_export.h"},
	    {"cuco_export.cu", "runtime/cuco_export.cu"},
	    {"check.h", "examples/check.h"},
	    {"check.cu", "examples/check.cu"},
	    {"mpi_example.cu", "examples/mpi_example.cu"},
	    {"torch_example.py", "examples/torch_example.py"},
	    {"CMakeLists.txt", "CMakeLists.txt"},
	    {"../cmake/CucoFindNccl.cmake", "CucoFindNccl.cmake"},
	    {"README.md", "README.md"},
	};

	cuco_err_clear(&err);
	cuco_program_rec_init(&prog);
	cuco_run_rec_init(&run);
	if ((rc = cli_flags_parse(&cmd_export_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	kind = a.npos > 0 ? a.pos[0] : NULL;
	idstr = a.npos > 1 ? a.pos[1] : NULL;
	dir = a.dir;
	workload = a.workload;
	store_path = a.store;
	if (idstr && strcmp(kind, "run") && strcmp(kind, "program"))
		return cli_usage_error("export", "unexpected argument %s", idstr);
	if (!kind)
		return cli_usage_error("export", "export what? run ID, program ID or FILE.cu");
	if (!dir)
		return cli_usage_error("export", "where to? -o DIR");
	if (!strcmp(kind, "run") || !strcmp(kind, "program")) {
		if (!idstr)
			return cli_usage_error("export", "%s needs an ID", kind);
		if (cli_int("export", kind, idstr, 1, INT64_MAX, &id))
			return CUCO_ERR_USAGE;
	} else if (!has_suffix(kind, ".cu")) {
		return cli_usage_error(
		    "export", "%s: expected run ID, program ID or a program file (.cu)", kind);
	} else if (!workload) {
		return cli_usage_error("export", "%s: a program file needs --workload W", kind);
	}
	if ((rc = dir_empty_or_new(dir, &err)))
		goto fail;
	if (idstr) {
		if (!store_path)
			store_path = cuco_store_default_path();
		if (!cuco_file_exists(store_path)) {
			rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND,
			                  "no store at %s (set --store or CUCO_STORE)", store_path);
			goto fail;
		}
		if ((rc = cli_open_store(store_path, &store, &err)))
			goto fail;
		if (!strcmp(kind, "run")) {
			struct best b;
			memset(&b, 0, sizeof(b));
			if ((rc = cuco_store_eval_each_run(store, id, best_row, &b, &err)))
				goto fail;
			if (!b.program_id) {
				rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND,
				                  "run %lld has no verified, timed program in %s; "
				                  "export one by its ID (cuco show run %lld)",
				                  id, store_path, id);
				goto fail;
			}
			printf("run %lld: fastest verified program %lld (%.1f us at shape %s)\n",
			       id, (long long)b.program_id, b.median_us, b.shape);
			id = b.program_id;
		}
		if ((rc = cuco_store_program_get(store, id, &prog, &err)))
			goto fail;
		have_prog = 1;
		cuco_strbuf_adds(&code, prog.code);
		cuco_strbuf_addf(&label, "program %lld (%s, %s)", id, prog.name, prog.origin);
		if (!workload)
			workload = prog.workload;
		if (!a.workload && prog.run_id &&
		    !cuco_store_run_get(store, prog.run_id, &run, NULL) && run.package)
			workload = run.package; /* the package folder the run was made from */
	} else {
		if (cuco_strbuf_read_file(&code, kind)) {
			rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", kind, strerror(errno));
			goto fail;
		}
		cuco_strbuf_addf(&label, "%s", kind);
	}
	if ((rc = cli_load_workload(workload, &m, &err))) {
		if (idstr)
			cuco_err_prefix(&err,
			                "the program's workload (give --workload DIR where its "
			                "package moved): ");
		goto fail;
	}
	have_m = 1;
	home = cuco_home(&err);
	share = cli_share_dir("export");
	if (!home || !share) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND, "cuco home not found; set CUCO_HOME");
		goto fail;
	}
	arch = getenv("CUCO_ARCH");
	if (!arch || !*arch)
		arch = "90a";
	/* the program, the workload and the package's headers */
	snprintf(to, sizeof(to), "%s/src", dir);
	if ((rc = copy_dir(m.dir, to, headers, 3, NULL, &err)))
		goto fail;
	snprintf(to, sizeof(to), "%s/src/program.cu", dir);
	if (cuco_write_file(to, code.buf, code.len)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot write %s: %s", to, strerror(errno));
		goto fail;
	}
	snprintf(to, sizeof(to), "%s/src/workload.cu", dir);
	if ((rc = copy_file(m.workload, to, &err)))
		goto fail;
	/* cuco's headers */
	snprintf(from, sizeof(from), "%s/include/cuco", home);
	snprintf(to, sizeof(to), "%s/include/cuco", dir);
	if ((rc = copy_dir(from, to, headers, 3, NULL, &err)))
		goto fail;
	snprintf(from, sizeof(from), "%s/device/include/cuco_dev", home);
	snprintf(to, sizeof(to), "%s/include/cuco_dev", dir);
	if ((rc = copy_dir(from, to, headers, 3, NULL, &err)))
		goto fail;
	/* runtime, examples, build */
	snprintf(to, sizeof(to), "%s/runtime", dir);
	snprintf(from, sizeof(from), "%s/examples", dir);
	if (cuco_mkdir_p(to) || cuco_mkdir_p(from)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot create %s: %s", to, strerror(errno));
		goto fail;
	}
	for (size_t k = 0; k < sizeof(share_files) / sizeof(share_files[0]); k++) {
		snprintf(to, sizeof(to), "%s/%s", dir, share_files[k][1]);
		if ((rc = emit(share, share_files[k][0], to, m.name, arch,
		               strstr(code.buf, "cublas") ? " CUDA::cublas" : "", &err)))
			goto fail;
	}
	shapes_header(&m, label.buf, &sb);
	snprintf(to, sizeof(to), "%s/runtime/shapes.h", dir);
	if (cuco_write_file(to, sb.buf, sb.len)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot write %s: %s", to, strerror(errno));
		goto fail;
	}
	printf("exported %s of workload %s to %s\n"
	       "  build:  cmake -S %s -B %s/build && cmake --build "
	       "%s/build\n"
	       "  check:  mpirun -np N %s/build/mpi_example [SHAPE]\n"
	       "          torchrun --nproc-per-node N %s/examples/torch_example.py\n",
	       label.buf, m.name, dir, dir, dir, dir, dir, dir);
	rc = CUCO_OK;
	goto out;
fail:
	cli_fail(&err);
out:
	if (have_prog)
		cuco_program_rec_release(&prog);
	if (have_m)
		cuco_manifest_release(&m);
	cuco_run_rec_release(&run);
	if (store)
		cuco_store_close(store);
	cuco_strbuf_release(&code);
	cuco_strbuf_release(&sb);
	cuco_strbuf_release(&label);
	return rc;
}
