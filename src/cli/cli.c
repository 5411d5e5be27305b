/* cli.c - helpers shared by the cuco subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/sandbox.h"
#include "fastpath/fastpath.h"
#include "lift/seed.h"
#include "program/directive.h"
#include "util/paths.h"
#include "util/secret.h"

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

void cli_put_printable(FILE *f, const char *s)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	cuco_strbuf_add_printable(&sb, s);
	fputs(sb.buf, f);
	cuco_strbuf_release(&sb);
}

int cli_int(const char *cmd, const char *what, const char *v, long long lo, long long hi,
            long long *out)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		cli_usage_error(cmd, "%s %s: expected an integer in [%lld, %lld]", what, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

/* 1 when dir is a folder holding a manifest.json: a workload package. */
static int is_package(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return 0;
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	return cuco_file_exists(path);
}

int cli_load_workload(const char *name, struct cuco_manifest *m, struct cuco_err *err)
{
	const char *home;
	char dir[PATH_MAX];

	/* a package directory (./mypkg, or mypkg here) stands for its manifest.json */
	if (strchr(name, '/') || is_package(name)) {
		struct stat st;

		if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(dir, sizeof(dir), "%s/manifest.json", name);
			return cuco_manifest_load(dir, m, err);
		}
		return cuco_manifest_load(name, m, err);
	}
	home = cuco_home(err);
	if (!home)
		return err->code;
	snprintf(dir, sizeof(dir), "%s/workloads", home);
	return cuco_workload_find(dir, name, m, err);
}

const char *cli_package_of(const struct cuco_manifest *m, char *buf, size_t len)
{
	char real[PATH_MAX], own[PATH_MAX], path[PATH_MAX];
	const char *home = cuco_home(NULL);

	if (!m || !realpath(m->dir, real))
		return NULL;
	if (home) {
		snprintf(path, sizeof(path), "%s/workloads/%s", home, m->name);
		if (realpath(path, own) && !strcmp(own, real))
			return NULL; /* one of cuco's: its name finds it */
	}
	snprintf(buf, len, "%s", real);
	return buf;
}

const char *cli_template_of(const struct cuco_manifest *m, char *buf, size_t len)
{
	const char *dir = cli_share_dir("realize");

	snprintf(buf, len, "%s/template.cu.in", m->dir);
	if (cuco_file_exists(buf))
		return buf;
	if (!dir)
		return NULL;
	snprintf(buf, len, "%s/%s.cu.in", dir, m->name);
	return cuco_file_exists(buf) ? buf : NULL;
}

int cli_load_run_workload(const struct cuco_run_rec *run, struct cuco_manifest *m,
                          struct cuco_err *err)
{
	int rc;

	if (!run->package || !*run->package)
		return cli_load_workload(run->workload, m, err);
	rc = cli_load_workload(run->package, m, err);
	if (!rc && run->workload && strcmp(m->name, run->workload)) {
		/* the folder holds another workload now: not the run's */
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND, "its folder holds workload %s, not %s",
		                  m->name, run->workload);
		cuco_manifest_release(m);
	}
	if (rc)
		cuco_err_prefix(err, "run %lld's workload package %s: ", (long long)run->id,
		                run->package);
	return rc;
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

int cli_run_begin(struct cuco_store *s, const char *kind, const struct cuco_manifest *m,
                  const char *workload, const char *shape, const char *config_json, const char *gpu,
                  int64_t *id, struct cuco_err *err)
{
	struct cuco_run_rec rec;
	char host[256] = "", pkg[PATH_MAX];

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
	rec.package = cli_package_of(m, pkg, sizeof(pkg));
	return cuco_store_run_begin(s, &rec, id, err);
}

static const char *const timings[] = {"sustained", "burst", NULL};

const struct cli_flag cli_run_table[] = {
    {CLI_REFUSE, "--seed", .hint = "--seed names no seed: --input-seed N (the workload's inputs)"},
    {CLI_INT, "--ranks", "N",
     "ranks (GPUs) per evaluation (default 2): one of the manifest's; bench and eval also "
     "take 1 (one GPU, nothing sent: a check of the compute side, not a workload figure)",
     CLI_AT(struct cuco_run_opts, ranks), .lo = 1, .hi = 4096},
    {CLI_STRING, "--launcher", "CMD",
     "start ranks with CMD (e.g. 'mpirun -np 2 --allow-run-as-root') instead of forking one "
     "per GPU on this node",
     CLI_AT(struct cuco_run_opts, launcher)},
    {CLI_STRING, "--wrapper", "CMD",
     "fork mode: run the harness under CMD (e.g. 'compute-sanitizer --tool memcheck "
     "--target-processes all')",
     CLI_AT(struct cuco_run_opts, wrapper)},
    {CLI_DOUBLE, "--timeout", "S", "watchdog per stage, seconds (default 60)",
     CLI_AT(struct cuco_run_opts, timeout_s), .dlo = 0.1, .dhi = 86400},
    {CLI_INT, "--warmup", "N", "warm-up runs (default 5)", CLI_AT(struct cuco_run_opts, warmup),
     .lo = 0, .hi = 100000},
    {CLI_INT, "--iters", "N", "timed runs, at least (default 20)",
     CLI_AT(struct cuco_run_opts, iters), .lo = 1, .hi = 2000},
    {CLI_DOUBLE, "--bench-seconds", "S", "keep timing up to S seconds per program (default 0.5)",
     CLI_AT(struct cuco_run_opts, bench_seconds), .dlo = 0, .dhi = 3600},
    {CLI_INT, "--verify-runs", "N", "output checks per program (default 3)",
     CLI_AT(struct cuco_run_opts, verify_runs), .lo = 1, .hi = 1000},
    {CLI_INT, "--input-seed", "N", "the seed the workload's inputs are generated from (default 1)",
     CLI_AT(struct cuco_run_opts, seed), .lo = 0, .hi = (long long)1 << 62},
    {CLI_CHOICE, "--timing", "MODE",
     "sustained: runs back to back, the GPU at its power cap (default); burst: each run alone "
     "after an idle gap",
     CLI_AT(struct cuco_run_opts, burst), .values = timings},
    {CLI_END},
};

void cli_llm_flags_init(struct cli_llm_flags *f)
{
	memset(f, 0, sizeof(*f));
}

int cli_llm_sandbox(const char *cmd, const struct cli_llm_flags *f, int farm)
{
	char why[640];

	if (cuco_sandbox_ready(farm, why, sizeof(why)))
		return 0;
	if (f->unsandboxed) {
		fprintf(stderr,
		        "cuco %s: note: the model's code runs outside the sandbox's view, with "
		        "cuco's user's rights (--unsandboxed): %s\n",
		        cmd, why);
		return 0;
	}
	fprintf(stderr,
	        "cuco %s: the model's code runs only in the sandbox's view, and %s; run it "
	        "where the view can be made (cuco doctor: sandbox), or pass --unsandboxed to run "
	        "it with cuco's user's rights (docs/sandbox.md)\n",
	        cmd, why);
	return CUCO_ERR_UNSUPPORTED;
}

/* --llm-price M=IN,OUT into the flags' prices. */
static int llm_price(void *dest, const char *flag, const char *v, char *msg, size_t len)
{
	struct cli_llm_flags *f = dest;
	const char *eq = strchr(v, '='), *comma = eq ? strchr(eq, ',') : NULL;
	struct cuco_llm_price *p = &f->prices[f->nprices];
	const char *nums[2];
	double *outs[2] = {&p->in_per_mtok, &p->out_per_mtok};
	char num[64];

	if (!eq || !comma || eq == v || (size_t)(eq - v) >= sizeof(f->price_names[0]) ||
	    f->nprices == CUCO_LLM_MAX_PRICES) {
		snprintf(msg, len, "%s %s: give MODEL=IN,OUT", flag, v);
		return -1;
	}
	snprintf(num, sizeof(num), "%.*s", (int)(comma - eq - 1), eq + 1);
	nums[0] = num;
	nums[1] = comma + 1;
	for (int k = 0; k < 2; k++) {
		char *end;
		double x;

		errno = 0;
		x = strtod(nums[k], &end);
		if (errno || end == nums[k] || *end || !(x >= 0 && x <= 1e9)) {
			snprintf(msg, len, "%s %s: expected a number in [0, 1e+09]", flag, nums[k]);
			return -1;
		}
		*outs[k] = x;
	}
	snprintf(f->price_names[f->nprices], sizeof(f->price_names[0]), "%.*s", (int)(eq - v), v);
	p->model = f->price_names[f->nprices++];
	return 0;
}

static const char *const llm_apis[] = {"openai", "anthropic", NULL};

const struct cli_flag cli_llm_table[] = {
    {CLI_ENUM, "--llm-api", "API",
     "the endpoint's API: openai (default; OpenAI-compatible chat completions) or anthropic "
     "(Messages API)",
     CLI_AT(struct cli_llm_flags, api), .values = llm_apis, .hint = "give openai or anthropic"},
    {CLI_STRING, "--llm-base-url", "URL", "the endpoint (or CUCO_LLM_BASE_URL)",
     CLI_AT(struct cli_llm_flags, base_url)},
    {CLI_LIST, "--llm-model", "M",
     "model (or CUCO_LLM_MODEL); evolve: repeat for several, chosen per child by a bandit "
     "(comma-separated in the variable)",
     CLI_LIST_AT(struct cli_llm_flags, models, nmodels)},
    {CLI_STRING, "--llm-key-env", "NAME",
     "variable holding the API key (default OPENAI_API_KEY; ANTHROPIC_API_KEY with --llm-api "
     "anthropic)",
     CLI_AT(struct cli_llm_flags, key_env)},
    {CLI_INT, "--llm-budget-tokens", "N", "stop cleanly after N tokens",
     CLI_AT(struct cli_llm_flags, budget_tokens), .lo = 1, .hi = (long long)1 << 50},
    {CLI_DOUBLE, "--llm-budget-cost", "C", "stop cleanly after cost C (needs --llm-price)",
     CLI_AT(struct cli_llm_flags, budget_cost), .dlo = 1e-9, .dhi = 1e12},
    {CLI_CALL, "--llm-price", "M=IN,OUT", "model M's price per million prompt, completion tokens",
     .fn = llm_price},
    {CLI_DOUBLE, "--llm-timeout", "S", "seconds per request attempt (default 300)",
     CLI_AT(struct cli_llm_flags, timeout_s), .dlo = 0.1, .dhi = 86400},
    {CLI_BOOL, "--unsandboxed", NULL,
     "run the model's code even where this node cannot give it the sandbox's view (cuco "
     "doctor says why): it then runs with cuco's user's rights (docs/sandbox.md)",
     CLI_AT(struct cli_llm_flags, unsandboxed)},
    {CLI_INT, "--llm-max-tokens", "N",
     "completion tokens per call (default 4096); a call needs the prompt + N tokens of the "
     "server's context",
     CLI_AT(struct cli_llm_flags, max_tokens), .lo = 1, .hi = 1 << 24},
    {CLI_END},
};

#define LLM_LIST_TIMEOUT_MS 3000 /* for the endpoint's model list */

/* Note each model the endpoint does not list (when it lists its models at all). */
static void cli_llm_check_models(const char *cmd, const struct cli_llm_flags *f)
{
	struct cuco_strbuf ids = CUCO_STRBUF_INIT, listed = CUCO_STRBUF_INIT;
	struct cuco_llm_config c;
	struct cuco_err err;

	cuco_llm_config_init(&c);
	cuco_llm_config_api(&c, f->api ? cuco_llm_api_parse(f->api) : CUCO_LLM_API_OPENAI);
	c.base_url = f->base_url;
	if (f->key_env)
		c.api_key_env = f->key_env;
	c.connect_timeout_ms = LLM_LIST_TIMEOUT_MS;
	cuco_err_clear(&err);
	if (cuco_llm_list_models(&c, LLM_LIST_TIMEOUT_MS, &ids, &err) != CUCO_OK || !ids.len)
		goto out;
	for (const char *p = ids.buf; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0))
		cuco_strbuf_addf(&listed, "%s%.*s", listed.len ? ", " : "", (int)strcspn(p, "\n"),
		                 p);
	for (int i = 0; i < f->nmodels; i++) {
		size_t n = strlen(f->models[i]);
		int found = 0;

		for (const char *p = ids.buf; *p && !found;
		     p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0))
			found = strcspn(p, "\n") == n && !strncmp(p, f->models[i], n);
		if (!found)
			fprintf(
			    stderr,
			    "cuco %s: note: the endpoint does not list model '%s' (it lists: %s); "
			    "calls for it may fail with HTTP 404\n",
			    cmd, f->models[i], listed.buf);
	}
out:
	cuco_strbuf_release(&ids);
	cuco_strbuf_release(&listed);
}

/* 1 when url carries credentials: scheme://user[:password]@host. */
static int url_has_userinfo(const char *url)
{
	const char *p = strstr(url, "://");

	p = p ? p + 3 : url;
	return memchr(p, '@', strcspn(p, "/?#")) != NULL;
}

int cli_llm_resolve(const char *cmd, struct cli_llm_flags *f, const char *who)
{
	const char *env = getenv("CUCO_LLM_BASE_URL");

	if (!f->base_url && env && *env)
		f->base_url = env;
	if (!f->base_url)
		return cli_usage_error(
		    cmd,
		    "%s needs an endpoint: give "
		    "--llm-base-url URL or set CUCO_LLM_BASE_URL (see docs/llm.md)",
		    who);
	if (url_has_userinfo(f->base_url))
		return cli_usage_error(
		    cmd,
		    "--llm-base-url (or CUCO_LLM_BASE_URL) holds credentials (user:password@host); "
		    "cuco stores and prints the endpoint, so give the key in the environment "
		    "variable --llm-key-env names instead");
	env = getenv("CUCO_LLM_MODEL");
	if (!f->nmodels && env && *env) {
		char *p = f->env_models;

		snprintf(f->env_models, sizeof(f->env_models), "%s", env);
		while (*p && f->nmodels < CLI_LLM_MAX_MODELS) {
			size_t n = strcspn(p, ",");
			if (n)
				f->models[f->nmodels++] = p;
			p += n;
			if (*p)
				*p++ = '\0';
		}
	}
	if (!f->nmodels)
		return cli_usage_error(
		    cmd, "%s needs a model: give --llm-model NAME or set CUCO_LLM_MODEL", who);
	/* the key read now: out of cuco's environment (and so every child's) from here on */
	(void)cuco_secret_env(f->key_env ? f->key_env
	                                 : cuco_llm_api_key_env(f->api ? cuco_llm_api_parse(f->api)
	                                                               : CUCO_LLM_API_OPENAI));
	cli_llm_check_models(cmd, f);
	return 0;
}

void cli_llm_config(const struct cli_llm_flags *f, uint64_t seed, struct cuco_llm_config *c)
{
	cuco_llm_config_init(c);
	cuco_llm_config_api(c, f->api ? cuco_llm_api_parse(f->api) : CUCO_LLM_API_OPENAI);
	c->base_url = f->base_url;
	c->model = f->nmodels ? f->models[0] : NULL;
	if (f->key_env)
		c->api_key_env = f->key_env;
	if (f->timeout_s > 0)
		c->timeout_ms = (long)(f->timeout_s * 1000);
	if (f->max_tokens > 0)
		c->max_tokens = f->max_tokens;
	c->budget_tokens = f->budget_tokens;
	c->budget_cost = f->budget_cost;
	c->sampling_seed = seed;
	memcpy(c->prices, f->prices, sizeof(f->prices));
	c->nprices = f->nprices;
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

/* The vs_peer and hidden columns of a program (or bound) taking us. */
static void print_vs_peer(FILE *f, const struct cuco_reference *ref, double us)
{
	double h = cuco_hidden_fraction(ref->peer_us, ref->bound_us, us);

	if (isfinite(ref->peer_us) && isfinite(us))
		fprintf(f, " %7.3fx", ref->peer_us / us);
	else
		fprintf(f, " %8s", "-");
	if (isfinite(h))
		fprintf(f, " %7.2f", h);
	else
		fprintf(f, " %7s", "-");
}

/* A derived row: the ideal bound with one compute kernel, when both are measured. */
static void print_bound(FILE *f, const char *name, double us, double base,
                        const struct cuco_reference *ref)
{
	if (!isfinite(us))
		return;
	fprintf(f, "  %-16s %-9s %-8s %9s %11.1f %10s %10s %8.3fx %8s", name, "bound", "derived",
	        "n/a", us, "-", "-", isfinite(base) ? base / us : NAN, "-");
	print_vs_peer(f, ref, us);
	fputc('\n', f);
}

void cli_print_shape_table(FILE *f, const struct cuco_manifest *m, const struct cuco_eval_shape *s,
                           const struct cuco_eval_program *progs, int nprogs, int ranks)
{
	double base = median_of(s, "baseline");
	double comp = median_of(s, "compute"), comm = median_of(s, "comm");
	double compb = median_of(s, "compute_cublas");
	struct cuco_reference ref;

	cuco_reference_of(s, progs, nprogs, &ref);
	fprintf(f, "# %s, shape %s (", m->name, s->shape->name);
	for (int i = 0; i < s->shape->nparams; i++)
		fprintf(f, "%s%s=%lld", i ? " " : "", s->shape->param_names[i],
		        s->shape->params[i]);
	fprintf(f, "), %d rank%s%s%s%s%s%s", ranks, ranks == 1 ? "" : "s",
	        s->run.gpu[0] ? ", " : "", s->run.gpu, s->run.timing[0] ? ", " : "", s->run.timing,
	        s->run.timing[0] ? " timing" : "");
	if (s->run.max_connections[0])
		fprintf(f, ", CUDA_DEVICE_MAX_CONNECTIONS=%s", s->run.max_connections);
	fputc('\n', f);
	if (ranks == 1)
		fprintf(f,
		        "# one rank: nothing is sent, so this checks the compute side; its times "
		        "are not the workload's\n");
	if (m->reference_program)
		fprintf(f, "# reference: program %s (rel_err is against its outputs)\n",
		        m->reference_program);
	if (s->code && s->run.nresults == 0) {
		fputs("#   not run: ", f);
		cli_put_printable(f, s->error);
		fputc('\n', f);
		return;
	}
	if (ref.peer || isfinite(ref.bound_us)) {
		fprintf(f, "# vs_peer: against the fastest peer");
		if (ref.peer)
			fprintf(f, " (%s, %.1f us)", ref.peer, ref.peer_us);
		else
			fprintf(f, " (none ran)");
		fprintf(f, "; hidden: (peer - program) / (peer - ideal bound)");
		if (isfinite(ref.bound_us))
			fprintf(f, ", bound %.1f us = max(fastest compute alone, comm alone)",
			        ref.bound_us);
		fputc('\n', f);
	}
	fprintf(f, "# %-16s %-9s %-8s %9s %11s %10s %10s %9s %8s %8s %7s\n", "program", "role",
	        "status", "rel_err", "median_us", "p10_us", "p90_us", "vs_base", "host_us",
	        "vs_peer", "hidden");
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
			else
				fprintf(f, "%9s", "");
			if (isfinite(r->host_us))
				fprintf(f, " %8.1f", r->host_us);
			else
				fprintf(f, " %8s", "-");
			print_vs_peer(f, &ref, r->verify ? r->median_us : NAN);
		} else {
			fprintf(f, "%11s %10s %10s ", "-", "-", "-");
		}
		fputc('\n', f);
		if (r->code == CUCO_OK && isfinite(r->median_us) &&
		    (r->nranks_us > 1 || isfinite(r->weighted_us))) {
			/* the table's median is the slowest rank's; each rank's own, and where the
			 * workload weighs its ranks (moe_layer: by tokens) their weighted mean */
			fprintf(f, "#   %s per rank:", r->name);
			for (int q = 0; q < r->nranks_us; q++)
				fprintf(f, " r%d %.1f", q, r->rank_us[q]);
			fprintf(f, " us");
			if (isfinite(r->weighted_us))
				fprintf(f,
				        "; weighted mean %.1f us (CUCo's MoE figure, beside the "
				        "slowest rank's %.1f)",
				        r->weighted_us, r->median_us);
			fputc('\n', f);
		}
		if (r->code != CUCO_OK && r->error) {
			fprintf(f, "#   %s: ", r->name);
			cli_put_printable(f, r->error);
			fputc('\n', f);
		}
	}
	print_bound(f, "ideal", cuco_ideal_bound(comp, comm), base, &ref);
	print_bound(f, "ideal_cublas", cuco_ideal_bound(compb, comm), base, &ref);
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
	struct cuco_reference ref;

	cuco_strbuf_addf(sb, "{\"shape\":\"%s\",\"params\":{", s->shape->name);
	for (int i = 0; i < s->shape->nparams; i++)
		cuco_strbuf_addf(sb, "%s\"%s\":%lld", i ? "," : "", s->shape->param_names[i],
		                 s->shape->params[i]);
	cuco_strbuf_addf(sb, "},\"gpu\":\"%s\",\"status\":\"%s\"", s->run.gpu,
	                 cuco_result_token(s->code));
	jnum(sb, "ideal_us", cuco_ideal_bound(comp, comm));
	jnum(sb, "ideal_cublas_us", cuco_ideal_bound(compb, comm));
	cuco_reference_of(s, progs, nprogs, &ref);
	if (ref.peer)
		cuco_strbuf_addf(sb, ",\"peer\":\"%s\"", ref.peer);
	else
		cuco_strbuf_adds(sb, ",\"peer\":null");
	jnum(sb, "peer_us", ref.peer_us);
	jnum(sb, "bound_us", ref.bound_us);
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

const struct cuco_hw_facts *cli_probe_facts(const char *cmd, const struct cuco_run_opts *o,
                                            struct cuco_hw_facts *f)
{
	struct cuco_err err;
	char desc[160], arch[16];
	int rc;

	cuco_err_clear(&err);
	memset(f, 0, sizeof(*f));
	f->nranks = o->ranks;
	if (o->launcher && *o->launcher) {
		fprintf(stderr,
		        "cuco %s: ranks start through --launcher, maybe on other nodes: "
		        "directives are checked against the design space only\n",
		        cmd);
		return NULL;
	}
	rc = cuco_hw_facts_probe(o->ranks, f, &err);
	if (f->cc)
		cuco_compile_set_default_arch(cuco_arch_for_cc(f->cc, arch, sizeof(arch)));
	if (rc) {
		fprintf(stderr,
		        "cuco %s: %s: directives are checked against the design space only\n", cmd,
		        err.msg);
		return NULL;
	}
	fprintf(stderr, "cuco %s: this node, as probed: %s\n", cmd,
	        cuco_hw_facts_describe(f, desc, sizeof(desc)));
	return f;
}

int cli_shape_arg(const char *cmd, struct cuco_manifest *m, const char *arg,
                  const struct cuco_shape **shapes, int i)
{
	struct cuco_err err;

	if (!(shapes[i] = cuco_manifest_shape_spec(m, arg, &err)))
		return cli_usage_error(cmd, "--%s", err.msg);
	for (int j = 0; j < i; j++)
		if (shapes[j] == shapes[i])
			return strcmp(arg, shapes[i]->name)
			           ? cli_usage_error(cmd, "--shape %s: shape %s is given twice",
			                             arg, shapes[i]->name)
			           : cli_usage_error(cmd, "--shape %s: given twice", arg);
	return 0;
}

int cli_node_checks(const char *cmd, const struct cuco_manifest *m, const struct cuco_run_opts *o,
                    int allow_one, int run_here, const struct cuco_shape *const *shapes,
                    int nshapes, struct cuco_hw_facts *f, const struct cuco_hw_facts **fp,
                    struct cuco_err *err)
{
	int rc;

	memset(f, 0, sizeof(*f));
	*fp = NULL;
	if ((rc = cuco_manifest_check_ranks(m, o->ranks, allow_one, err)))
		return rc;
	for (int i = 0; i < nshapes; i++)
		if ((rc = cuco_manifest_check_shape(m, shapes[i], o->ranks, err)))
			return rc;
	*fp = cli_probe_facts(cmd, o, f);
	return run_here ? cuco_manifest_check_cc(m, f->cc, err) : CUCO_OK;
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
	if (cuco_lift_is_lifted(src.buf)) {
		/* a lifted program: the step's calls the lift tagged */
		rc = cuco_lift_seed(m->host_program, src.buf, cli_share_dir("fastpath"), out,
		                    nsites, err);
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
