/* cli.c - helpers shared by the cuco subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastpath/fastpath.h"
#include "util/paths.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cuco %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see 'cuco %s --help')\n", cmd);
	return CUCO_ERR_USAGE;
}

int cli_fail(const struct cuco_err *err)
{
	fprintf(stderr, "cuco: %s\n", err->msg[0] ? err->msg : cuco_strerror(err->code));
	return err->code ? err->code : CUCO_ERR_RUN;
}

const char *cli_value(const char *cmd, int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		cli_usage_error(cmd, "%s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

int cli_int(const char *cmd, const char *flag, const char *v, long long lo, long long hi,
            long long *out)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		cli_usage_error(cmd, "%s %s: expected an integer in [%lld, %lld]", flag, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

int cli_double(const char *cmd, const char *flag, const char *v, double lo, double hi, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo && x <= hi)) {
		cli_usage_error(cmd, "%s %s: expected a number in [%g, %g]", flag, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

int cli_load_workload(const char *name, struct cuco_manifest *m, struct cuco_err *err)
{
	const char *home;
	char dir[PATH_MAX];

	if (strchr(name, '/'))
		return cuco_manifest_load(name, m, err);
	home = cuco_home(err);
	if (!home)
		return err->code;
	snprintf(dir, sizeof(dir), "%s/workloads", home);
	return cuco_workload_find(dir, name, m, err);
}

int cli_open_store(const char *path, struct cuco_store **out, struct cuco_err *err)
{
	char dir[PATH_MAX];
	const char *slash;

	if (!path)
		path = cuco_store_default_path();
	slash = strrchr(path, '/');
	if (slash && slash != path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (cuco_mkdir_p(dir))
			return cuco_err_set(err, CUCO_ERR_IO, "cannot create %s: %s", dir,
			                    strerror(errno));
	}
	return cuco_store_open(path, out, err);
}

int cli_run_begin(struct cuco_store *s, const char *kind, const char *workload, const char *shape,
                  const char *config_json, const char *gpu, int64_t *id, struct cuco_err *err)
{
	struct cuco_run_rec rec;
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	cuco_run_rec_init(&rec);
	rec.kind = kind;
	rec.workload = workload;
	rec.shape = shape;
	rec.config = config_json;
	rec.status = "running";
	rec.cuco_version = CUCO_VERSION;
	rec.host = host;
	rec.gpu = gpu;
	rec.commit_id = getenv("CUCO_COMMIT");
	return cuco_store_run_begin(s, &rec, id, err);
}

const char cli_run_flags_help[] =
    "  --ranks N           ranks (GPUs) per evaluation (default 2)\n"
    "  --launcher CMD      start ranks with CMD (e.g. 'mpirun -np 2 --allow-run-as-root')\n"
    "                      instead of forking one per GPU on this node\n"
    "  --timeout S         watchdog per stage, seconds (default 60)\n"
    "  --warmup N          warm-up runs (default 5)\n"
    "  --iters N           timed runs, at least (default 20)\n"
    "  --bench-seconds S   keep timing up to S seconds per program (default 0.5)\n"
    "  --verify-runs N     output checks per program (default 3)\n"
    "  --seed N            input seed (default 1)\n";

int cli_run_flag(const char *cmd, int argc, char **argv, int *i, struct cuco_run_opts *o)
{
	const char *f = argv[*i], *v;
	long long n;
	double d;

	if (strcmp(f, "--ranks") && strcmp(f, "--launcher") && strcmp(f, "--timeout") &&
	    strcmp(f, "--iters") && strcmp(f, "--warmup") && strcmp(f, "--bench-seconds") &&
	    strcmp(f, "--verify-runs") && strcmp(f, "--seed"))
		return 0;
	v = cli_value(cmd, argc, argv, i);
	if (!v)
		return -1;
	if (!strcmp(f, "--launcher")) {
		o->launcher = v;
	} else if (!strcmp(f, "--ranks")) {
		if (cli_int(cmd, f, v, 1, 4096, &n))
			return -1;
		o->ranks = (int)n;
	} else if (!strcmp(f, "--timeout")) {
		if (cli_double(cmd, f, v, 0.1, 86400, &d))
			return -1;
		o->timeout_s = d;
	} else if (!strcmp(f, "--iters")) {
		if (cli_int(cmd, f, v, 1, 2000, &n))
			return -1;
		o->iters = (int)n;
	} else if (!strcmp(f, "--warmup")) {
		if (cli_int(cmd, f, v, 0, 100000, &n))
			return -1;
		o->warmup = (int)n;
	} else if (!strcmp(f, "--bench-seconds")) {
		if (cli_double(cmd, f, v, 0, 3600, &d))
			return -1;
		o->bench_seconds = d;
	} else if (!strcmp(f, "--verify-runs")) {
		if (cli_int(cmd, f, v, 1, 1000, &n))
			return -1;
		o->verify_runs = (int)n;
	} else {
		if (cli_int(cmd, f, v, 0, (long long)1 << 62, &n))
			return -1;
		o->seed = (uint64_t)n;
	}
	return 1;
}

static const char *role_of(const struct cuco_eval_program *progs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(progs[i].name, name))
			return progs[i].origin;
	return "";
}

static double median_of(const struct cuco_eval_shape *s, const char *name)
{
	const struct cuco_program_result *r = cuco_eval_find(s, name);

	return r && r->code == CUCO_OK ? r->median_us : NAN;
}

void cli_print_shape_table(FILE *f, const struct cuco_manifest *m, const struct cuco_eval_shape *s,
                           const struct cuco_eval_program *progs, int nprogs, int ranks)
{
	double base = median_of(s, "baseline");
	double comp = median_of(s, "compute"), comm = median_of(s, "comm");
	double compb = median_of(s, "compute_cublas");

	fprintf(f, "# %s, shape %s (", m->name, s->shape->name);
	for (int i = 0; i < s->shape->nparams; i++)
		fprintf(f, "%s%s=%lld", i ? " " : "", s->shape->param_names[i],
		        s->shape->params[i]);
	fprintf(f, "), %d ranks%s%s\n", ranks, s->run.gpu[0] ? ", " : "", s->run.gpu);
	if (s->code && s->run.nresults == 0) {
		fprintf(f, "#   not run: %s\n", s->error);
		return;
	}
	fprintf(f, "# %-16s %-9s %-8s %9s %11s %10s %10s %9s\n", "program", "role", "status",
	        "rel_err", "median_us", "p10_us", "p90_us", "vs_base");
	for (int i = 0; i < s->run.nresults; i++) {
		const struct cuco_program_result *r = &s->run.results[i];
		fprintf(f, "  %-16s %-9s %-8s ", r->name, role_of(progs, nprogs, r->name),
		        r->status);
		if (isfinite(r->rel_err))
			fprintf(f, "%9.2e ", r->rel_err);
		else
			fprintf(f, "%9s ", r->verify ? "-" : "n/a");
		if (r->code == CUCO_OK && isfinite(r->median_us)) {
			fprintf(f, "%11.1f %10.1f %10.1f ", r->median_us, r->p10_us, r->p90_us);
			if (isfinite(base) && r->verify)
				fprintf(f, "%8.3fx", base / r->median_us);
		} else {
			fprintf(f, "%11s %10s %10s ", "-", "-", "-");
		}
		fputc('\n', f);
		if (r->code != CUCO_OK && r->error)
			fprintf(f, "#   %s: %s\n", r->name, r->error);
	}
	if (isfinite(comp) && isfinite(comm))
		fprintf(f, "  %-16s %-9s %-8s %9s %11.1f %10s %10s %8.3fx\n", "ideal", "bound",
		        "derived", "n/a", fmax(comp, comm), "-", "-",
		        isfinite(base) ? base / fmax(comp, comm) : NAN);
	if (isfinite(compb) && isfinite(comm))
		fprintf(f, "  %-16s %-9s %-8s %9s %11.1f %10s %10s %8.3fx\n", "ideal_cublas",
		        "bound", "derived", "n/a", fmax(compb, comm), "-", "-",
		        isfinite(base) ? base / fmax(compb, comm) : NAN);
	for (int i = 0; i < nprogs; i++)
		if (progs[i].precheck_code || (progs[i].job.code && progs[i].job.code != -1))
			fprintf(f, "  %-16s %-9s %-8s   (%s)\n", progs[i].name, progs[i].origin,
			        progs[i].precheck_code ? "rejected" : "compile",
			        progs[i].precheck_code ? progs[i].precheck_error
			                               : "nvcc failed; see 'cuco show'");
}

static void jnum(struct cuco_strbuf *sb, const char *key, double v)
{
	if (isfinite(v))
		cuco_strbuf_addf(sb, ",\"%s\":%.6g", key, v);
	else
		cuco_strbuf_addf(sb, ",\"%s\":null", key);
}

void cli_shape_json(struct cuco_strbuf *sb, const struct cuco_eval_shape *s,
                    const struct cuco_eval_program *progs, int nprogs)
{
	double comp = median_of(s, "compute"), comm = median_of(s, "comm");
	double compb = median_of(s, "compute_cublas");

	cuco_strbuf_addf(sb, "{\"shape\":\"%s\",\"params\":{", s->shape->name);
	for (int i = 0; i < s->shape->nparams; i++)
		cuco_strbuf_addf(sb, "%s\"%s\":%lld", i ? "," : "", s->shape->param_names[i],
		                 s->shape->params[i]);
	cuco_strbuf_addf(sb, "},\"gpu\":\"%s\",\"status\":\"%s\"", s->run.gpu,
	                 cuco_result_token(s->code));
	jnum(sb, "ideal_us", isfinite(comp) && isfinite(comm) ? fmax(comp, comm) : NAN);
	jnum(sb, "ideal_cublas_us", isfinite(compb) && isfinite(comm) ? fmax(compb, comm) : NAN);
	/* One harness result line per harness run (more than one after a crash). */
	cuco_strbuf_adds(sb, ",\"harness\":[");
	for (const char *p = s->run.raw_json; p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n) {
			if (sb->buf[sb->len - 1] != '[')
				cuco_strbuf_addch(sb, ',');
			cuco_strbuf_add(sb, p, n);
		}
		p += n;
		if (*p)
			p++;
	}
	cuco_strbuf_addch(sb, ']');
	cuco_strbuf_adds(sb, ",\"compile\":[");
	for (int i = 0; i < nprogs; i++)
		cuco_strbuf_addf(
		    sb,
		    "%s{\"name\":\"%s\",\"origin\":\"%s\",\"status\":\"%s\",\"cached\":%d,"
		    "\"seconds\":%.2f}",
		    i ? "," : "", progs[i].name, progs[i].origin,
		    progs[i].precheck_code         ? "rejected"
		    : progs[i].job.code == CUCO_OK ? "ok"
		                                   : "compile",
		    progs[i].job.cached, progs[i].job.seconds);
	cuco_strbuf_adds(sb, "]}");
}

const char *cli_share_dir(const char *sub)
{
	static char buf[PATH_MAX];
	const char *home = cuco_home(NULL);

	if (!home)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/share/%s", home, sub);
	return buf;
}

int cli_make_seed(const struct cuco_manifest *m, struct cuco_strbuf *out, int *nsites,
                  struct cuco_err *err)
{
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report rep;
	int rc;

	if (cuco_strbuf_read_file(&src, m->host_program)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: %s", m->host_program, strerror(errno));
		cuco_strbuf_release(&src);
		return rc;
	}
	cuco_fastpath_opts_init(&opts);
	opts.share_dir = cli_share_dir("fastpath");
	cuco_fastpath_report_init(&rep);
	rc = cuco_fastpath_transform(m->host_program, src.buf, &opts, out, &rep, err);
	if (nsites)
		*nsites = rep.nsites;
	cuco_fastpath_report_release(&rep);
	cuco_strbuf_release(&src);
	return rc;
}
