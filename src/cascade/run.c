/*
 * run.c - the cascade's GPU stages: hand compiled programs to cuco-harness,
 * which verifies each against the workload's reference and times it, and
 * read its JSON back. A program that crashes or hangs its rank group is
 * recorded as such and the programs after it are run again without it. The
 * run options' runner (runner.h) gives the harness its ranks: forked here, a
 * launcher's, or a farm's job step elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "cascade/sandbox.h"
#include "cascade/runner.h"
#include "util/paths.h"
#include "util/array.h"
#include "util/proc.h"
#include "util/xalloc.h"

void cuco_run_opts_default(struct cuco_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ranks = 2;
	o->timeout_s = 60;
	o->warmup = 5;
	o->iters = 20;
	o->bench_seconds = 0.5;
	o->verify_runs = 3;
	o->seed = 1;
	o->samples = 1;
}

void cuco_run_result_init(struct cuco_run_result *r)
{
	memset(r, 0, sizeof(*r));
	cuco_strbuf_init(&r->log, 0);
}

static void program_result_release(struct cuco_program_result *p)
{
	free(p->samples_json);
	free(p->error);
	p->samples_json = p->error = NULL;
}

void cuco_run_result_release(struct cuco_run_result *r)
{
	for (int i = 0; i < r->nresults; i++)
		program_result_release(&r->results[i]);
	free(r->error);
	free(r->raw_json);
	cuco_strbuf_release(&r->log);
	r->nresults = 0;
	r->error = r->raw_json = NULL;
}

static int token_code(const char *t)
{
	static const struct {
		const char *tok;
		int code;
	} map[] = {{"ok", CUCO_OK},
	           {"wrong", CUCO_ERR_VERIFY},
	           {"run", CUCO_ERR_RUN},
	           {"timeout", CUCO_ERR_TIMEOUT},
	           {"crash", CUCO_ERR_CRASH},
	           {"unsupported", CUCO_ERR_UNSUPPORTED},
	           {"no_gpu", CUCO_ERR_NO_GPU},
	           {"invalid", CUCO_ERR_INVALID},
	           {"usage", CUCO_ERR_USAGE},
	           {"nomem", CUCO_ERR_NOMEM}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].tok, t))
			return map[i].code;
	return CUCO_ERR_RUN;
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void fill_program(struct cuco_program_result *p, json_t *e)
{
	const char *name = str(e, "name"), *status = str(e, "status"), *err = str(e, "error");
	json_t *ver = json_object_get(e, "verified"), *samples = json_object_get(e, "samples_us");

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "?");
	snprintf(p->status, sizeof(p->status), "%s", status ? status : "run");
	p->code = token_code(p->status);
	p->verify = !json_is_null(ver) && ver != NULL;
	p->rel_err = num(e, "rel_err");
	p->median_us = num(e, "median_us");
	p->p10_us = num(e, "p10_us");
	p->p90_us = num(e, "p90_us");
	p->min_us = num(e, "min_us");
	p->mean_us = num(e, "mean_us");
	p->host_us = num(e, "host_us");
	p->weighted_us = num(e, "weighted_us");
	{
		json_t *ru = json_object_get(e, "rank_us"), *x;
		size_t k;

		json_array_foreach(ru, k, x)
		{
			if (k < sizeof(p->rank_us) / sizeof(p->rank_us[0]) && json_is_number(x))
				p->rank_us[p->nranks_us++] = json_number_value(x);
		}
	}
	p->iters = json_is_integer(json_object_get(e, "iters"))
	               ? (int)json_integer_value(json_object_get(e, "iters"))
	               : 0;
	if (json_is_array(samples))
		p->samples_json = json_dumps(samples, JSON_COMPACT);
	p->error = cuco_xstrdup(err);
	snprintf(p->stage, sizeof(p->stage), "%s",
	         p->code == CUCO_OK           ? "bench"
	         : p->code == CUCO_ERR_VERIFY ? "verify"
	                                      : "run");
}

int cuco_run_result_parse(const char *text, struct cuco_run_result *res, struct cuco_err *err)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je), *progs;
	const char *status, *gpu;
	int rc = CUCO_OK;

	if (!root || !json_is_object(root)) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "harness output:%d:%d: %s", je.line,
		                  je.column, root ? "not a JSON object" : je.text);
		goto out;
	}
	if (!json_is_integer(json_object_get(root, "harness"))) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE,
		                  "harness output: missing \"harness\" version");
		goto out;
	}
	status = str(root, "status");
	res->code = token_code(status ? status : "run");
	if (json_is_integer(json_object_get(root, "error_code")))
		res->code = (int)json_integer_value(json_object_get(root, "error_code"));
	gpu = str(root, "gpu");
	if (gpu)
		snprintf(res->gpu, sizeof(res->gpu), "%s", gpu);
	gpu = str(root, "timing");
	snprintf(res->timing, sizeof(res->timing), "%s", gpu ? gpu : "");
	gpu = str(root, "cuda_device_max_connections");
	snprintf(res->max_connections, sizeof(res->max_connections), "%s", gpu ? gpu : "");
	free(res->raw_json);
	res->raw_json = cuco_xstrdup(text);
	if (res->code != CUCO_OK) {
		free(res->error);
		res->error = cuco_xstrdup(str(root, "error"));
	}
	progs = json_object_get(root, "programs");
	if (json_is_array(progs)) {
		size_t i;
		json_t *e;
		json_array_foreach(progs, i, e)
		{
			if (res->nresults >= CUCO_CASCADE_MAX_PROGRAMS)
				break;
			if (json_is_object(e))
				fill_program(&res->results[res->nresults++], e);
		}
	}
	/* The program that took its rank group down. */
	if (res->code != CUCO_OK && str(root, "program") && *str(root, "program") &&
	    res->nresults < CUCO_CASCADE_MAX_PROGRAMS) {
		struct cuco_program_result *p = &res->results[res->nresults++];
		const char *stage = str(root, "stage");
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", str(root, "program"));
		snprintf(p->status, sizeof(p->status), "%s", status ? status : "run");
		p->code = res->code;
		p->rel_err = p->median_us = p->p10_us = p->p90_us = p->min_us = p->mean_us =
		    p->host_us = NAN;
		snprintf(p->stage, sizeof(p->stage), "%s",
		         stage && (!strcmp(stage, "verify") || !strcmp(stage, "bench")) ? stage
		                                                                        : "run");
		p->error = cuco_xstrdup(str(root, "error"));
	}
out:
	json_decref(root);
	return rc;
}

const char *cuco_run_timing(const struct cuco_run_opts *o)
{
	return o->burst ? "burst" : "sustained";
}

/* A run config's word for key: `other` when the config says so, else `usual`
 * (also for a config that is missing, unreadable or older than the key). */
static const char *config_word(const char *config_json, const char *key, const char *other,
                               const char *usual)
{
	json_t *root = config_json ? json_loads(config_json, 0, NULL) : NULL;
	const char *t = root ? json_string_value(json_object_get(root, key)) : NULL;
	const char *out = t && !strcmp(t, other) ? other : usual;

	json_decref(root);
	return out;
}

const char *cuco_run_config_statistic(const char *config_json)
{
	return config_word(config_json, "statistic", "mean", "median");
}

const char *cuco_run_config_timing(const char *config_json)
{
	return config_word(config_json, "timing", "burst", "sustained");
}

double cuco_result_latency(const struct cuco_program_result *r, const struct cuco_run_opts *o)
{
	if (!r)
		return NAN;
	return o && o->mean ? r->mean_us : r->median_us;
}

/* A record of a shared result file, as cuco_run_records_pick reads it. */
struct shared_rec {
	const char *line; /* in the text's copy */
	int rank;
	int ok; /* status "ok" */
};

/* A failure record of cuco's own about the channel, naming program (may be ""). */
static void channel_failure(struct cuco_strbuf *out, int code, const char *program, const char *why)
{
	json_t *j = json_pack("{s:i,s:s,s:i,s:i,s:s,s:s,s:s,s:[]}", "harness", 1, "status",
	                      cuco_result_token(code), "error_code", code, "rank", -1, "stage",
	                      "run", "program", program, "error", why, "programs");
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	cuco_strbuf_reset(out);
	cuco_strbuf_adds(out, text ? text : "");
	free(text);
	json_decref(j);
}

int cuco_run_records_pick(const char *text, struct cuco_strbuf *out)
{
	char *copy = cuco_xstrdup(text), why[256] = "", culprit[128] = "";
	struct shared_rec *recs = NULL;
	const char *program = "";
	int n = 0, nranks = -1, rc = 0, failure = -1, at_zero = -1, lineno = 0;
	size_t alloc = 0;

	for (char *line = copy; line && *line && !why[0];) {
		char *nl = strchr(line, '\n');
		json_t *j, *rank;

		if (nl)
			*nl = '\0';
		lineno++;
		if (!strncmp(line, "#program ", 9)) {
			program = line + 9;
		} else if (line[strspn(line, " \t\r")]) {
			j = json_loads(line, 0, NULL);
			rank = json_object_get(j, "rank");
			if (!json_is_object(j) || !json_is_integer(json_object_get(j, "harness")) ||
			    !json_is_integer(rank) || json_integer_value(rank) < -1 ||
			    json_integer_value(rank) >= 1 << 20) {
				snprintf(
				    why, sizeof(why),
				    "line %d of the result file is no rank's record (a program "
				    "wrote to the harness's result channel)",
				    lineno);
			} else {
				struct shared_rec *r = CUCO_ARRAY_PUSH(recs, n, alloc);
				const char *status = str(j, "status");

				r->line = line;
				r->rank = (int)json_integer_value(rank);
				r->ok = status && !strcmp(status, "ok");
				for (int i = 0; i < n - 1; i++)
					if (r->rank >= 0 && recs[i].rank == r->rank)
						snprintf(
						    why, sizeof(why),
						    "rank %d has a second record on the result "
						    "channel (a program wrote to it)",
						    r->rank);
				if (json_is_integer(json_object_get(j, "ranks")))
					nranks =
					    (int)json_integer_value(json_object_get(j, "ranks"));
				if (!r->ok && failure < 0)
					failure = n - 1;
				if (r->ok && r->rank == 0)
					at_zero = n - 1;
			}
			json_decref(j);
			if (why[0])
				snprintf(culprit, sizeof(culprit), "%s", program);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (why[0]) {
		channel_failure(out, CUCO_ERR_RUN, culprit, why);
	} else if (failure >= 0) {
		cuco_strbuf_reset(out);
		cuco_strbuf_adds(out, recs[failure].line); /* a failure beats a success */
	} else if (!n) {
		rc = -1;
	} else {
		for (int r = 0; r < nranks && !why[0]; r++) {
			int seen = 0;
			for (int i = 0; i < n; i++)
				seen |= recs[i].rank == r;
			if (!seen)
				snprintf(why, sizeof(why), "rank %d exited without a result", r);
		}
		if (!why[0] && (nranks < 1 || at_zero < 0))
			snprintf(why, sizeof(why), "no record of rank 0 on the result channel");
		if (why[0])
			channel_failure(out, CUCO_ERR_CRASH, "", why);
		else {
			cuco_strbuf_reset(out);
			cuco_strbuf_adds(out, recs[at_zero].line);
		}
	}
	free(recs);
	free(copy);
	return rc;
}

/*
 * path made absolute where it names an existing file (the harness starts
 * elsewhere); a command without a slash stays a PATH search. *keep owns it.
 */
static char *absolute(const char *path, int command, char **keep)
{
	char *real = !command || strchr(path, '/') ? realpath(path, NULL) : NULL;

	*keep = real;
	return real ? real : (char *)path;
}

/* The absolute form of path pushed, and kept among the files the run loads. */
static void push_file(struct cuco_run_job *job, const char *path, int command)
{
	char *keep = NULL;

	cuco_run_job_push(job, absolute(path, command, &keep));
	if (job->nfiles < CUCO_RUN_MAX_FILES)
		job->files[job->nfiles++] = job->argv[job->argc - 1];
	if (keep && job->nowned < CUCO_RUN_MAX_OWNED)
		job->owned[job->nowned++] = keep;
	else
		free(keep);
}

/* The harness command for progs at shape, the runner's words and arguments in it. */
static int build_command(const struct cuco_runner *rn, const struct cuco_run_opts *o,
                         const struct cuco_manifest *m, const char *workload_so,
                         const struct cuco_shape *shape, const struct cuco_run_program *progs,
                         int n, const struct cuco_strbuf *cmdline, struct cuco_run_job *job,
                         struct cuco_err *err)
{
	char buf[4608];
	int rc;

	push_file(job, cuco_harness_path(), 1);
	cuco_run_job_push(job, "--workload-so");
	push_file(job, workload_so, 0);
	cuco_run_job_push(job, "--workload");
	cuco_run_job_push(job, m->name);
	cuco_run_job_push(job, "--shape");
	cuco_run_job_push(job, (char *)shape->name);
	for (int i = 0; i < shape->nparams; i++) {
		cuco_run_job_push(job, "--param");
		cuco_run_job_pushf(job, "%s=%lld", shape->param_names[i], shape->params[i]);
	}
	cuco_run_job_push(job, "--tolerance");
	cuco_run_job_pushf(job, "%g", m->tolerance);
	if (o->reference_so) {
		char *keep = NULL;
		cuco_run_job_push(job, "--reference-program");
		cuco_run_job_push(job, absolute(o->reference_so, 0, &keep));
		if (keep && job->nowned < CUCO_RUN_MAX_OWNED)
			job->owned[job->nowned++] = keep;
		else
			free(keep);
	}
	if (cmdline->len) {
		cuco_run_job_push(job, "--argv");
		cuco_run_job_push(job, cmdline->buf);
	}
	if ((rc = rn->args(rn, o, job, err)))
		return rc;
	cuco_run_job_push(job, "--timeout");
	cuco_run_job_pushf(job, "%g", o->timeout_s);
	cuco_run_job_push(job, "--warmup");
	cuco_run_job_pushf(job, "%d", o->warmup);
	cuco_run_job_push(job, "--iters");
	cuco_run_job_pushf(job, "%d", o->iters);
	cuco_run_job_push(job, "--bench-seconds");
	cuco_run_job_pushf(job, "%g", o->bench_seconds);
	cuco_run_job_push(job, "--verify-runs");
	cuco_run_job_pushf(job, "%d", o->verify_runs);
	cuco_run_job_push(job, "--seed");
	cuco_run_job_pushf(job, "%llu", (unsigned long long)o->seed);
	if (!o->samples)
		cuco_run_job_push(job, "--no-samples");
	if (o->burst) {
		cuco_run_job_push(job, "--timing");
		cuco_run_job_push(job, "burst");
	}
	for (int i = 0; i < n; i++) {
		char *keep, *so = absolute(progs[i].so_path, 0, &keep);
		cuco_run_job_push(job, "--program");
		cuco_run_job_pushf(job, "%s=%s%s", progs[i].name, so,
		                   progs[i].verify ? "" : ",noverify");
		if (job->nfiles < CUCO_RUN_MAX_FILES && job->nowned < CUCO_RUN_MAX_OWNED) {
			job->owned[job->nowned] = cuco_xstrdup(so);
			job->files[job->nfiles++] = job->owned[job->nowned++];
		}
		free(keep);
	}
	job->argv[job->argc] = NULL;
	job->env[job->nenv++] = "NCCL_NVLS_ENABLE=0";
	if (cuco_nccl_ld_path(buf, sizeof(buf)) && job->nowned < CUCO_RUN_MAX_OWNED) {
		job->owned[job->nowned] = cuco_xstrdup(buf);
		job->env[job->nenv++] = job->owned[job->nowned++];
	}
	job->env[job->nenv] = NULL;
	job->timeout_s = o->timeout_s * (8 + 4 * (n + !!o->reference_so)) + 60;
	return CUCO_OK;
}

/* The harness's result from what the run gave (out, its log in res->log), parsed into res. */
static int read_result(struct cuco_run_job *job, struct cuco_strbuf *out,
                       const struct cuco_proc_status *st, struct cuco_run_result *res,
                       struct cuco_err *err)
{
	const char *line;

	if (job->result_fd >= 0) {
		/* the ranks' output is part of the log; their records are in the file */
		struct stat fs;

		cuco_strbuf_add(&res->log, out->buf, out->len);
		cuco_strbuf_reset(out);
		if (fstat(job->result_fd, &fs) == 0 && fs.st_size > CUCO_RUN_RESULT_MAX)
			channel_failure(out, CUCO_ERR_RUN, "",
			                "the result file is larger than any ranks' records (a "
			                "program wrote to the harness's result channel)");
		else if (lseek(job->result_fd, 0, SEEK_SET) == 0)
			(void)cuco_strbuf_read_fd(out, job->result_fd);
	}
	/* fork mode: the harness's one record (its ranks' stdout and stderr are the log);
	 * a shared file (a launcher's, a farm's): one record per rank */
	if (job->records && cuco_run_records_pick(out->buf, out))
		line = NULL;
	else if (!out->buf[strspn(out->buf, " \t\r\n")])
		line = NULL;
	else
		line = out->buf;
	if (!line) {
		char tail[400];
		size_t k = res->log.len > 300 ? res->log.len - 300 : 0;
		snprintf(tail, sizeof(tail), "%s", res->log.buf + k);
		if (st->timed_out)
			return cuco_err_set(err, CUCO_ERR_TIMEOUT, "harness killed after %.0f s",
			                    st->seconds);
		return cuco_err_set(
		    err, CUCO_ERR_CRASH, "harness %s %d without a result; its output ends: %s",
		    st->exited ? "exited with code" : "died with signal", st->code, tail);
	}
	return cuco_run_result_parse(line, res, err);
}

static int run_once(const struct cuco_run_opts *o, const struct cuco_manifest *m,
                    const char *workload_so, const struct cuco_shape *shape,
                    const struct cuco_run_program *progs, int n, struct cuco_run_result *res,
                    struct cuco_err *err)
{
	const struct cuco_runner *rn = cuco_runner_of(o);
	struct cuco_strbuf out = CUCO_STRBUF_INIT, cmdline = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	struct cuco_run_job *job = cuco_xcalloc(1, sizeof(*job));
	int rc;

	cuco_strbuf_init(&job->launch, 0);
	job->result_fd = -1;
	/* the shape's command line, before anything is made */
	if ((rc = cuco_manifest_argv(m, shape, rn->ranks ? rn->ranks : o->ranks, &cmdline, err)) ||
	    (rc = rn->start(rn, o, job, err)) ||
	    (rc = build_command(rn, o, m, workload_so, shape, progs, n, &cmdline, job, err)))
		goto done;
	memset(&st, 0, sizeof(st));
	rc = rn->step(rn, o, job, &out, &res->log, &st, err);
	if (rc == -1)
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot start %s: %s", job->argv[0],
		                  strerror(errno));
	else if (rc)
		rc = err->code;
	else
		rc = read_result(job, &out, &st, res, err);
done:
	for (int i = 0; i < job->nowned; i++)
		free(job->owned[i]);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&job->launch);
	cuco_strbuf_release(&cmdline);
	if (job->result_fd >= 0)
		close(job->result_fd);
	if (job->dir[0])
		cuco_proc_remove_tree(job->dir);
	free(job);
	return rc;
}

static int has_result(const struct cuco_run_result *r, const char *name)
{
	for (int i = 0; i < r->nresults; i++)
		if (!strcmp(r->results[i].name, name))
			return 1;
	return 0;
}

int cuco_run_programs(const struct cuco_run_opts *o, const struct cuco_manifest *m,
                      const char *workload_so, const struct cuco_shape *shape,
                      const struct cuco_run_program *progs, int n, struct cuco_run_result *res,
                      struct cuco_err *err)
{
	struct cuco_run_program pending[CUCO_CASCADE_MAX_PROGRAMS];
	int npending = n < CUCO_CASCADE_MAX_PROGRAMS ? n : CUCO_CASCADE_MAX_PROGRAMS;

	memcpy(pending, progs, sizeof(pending[0]) * (size_t)npending);
	/*
	 * A program that takes its rank group down is recorded; the programs that
	 * had no result yet get a fresh group. Results are matched by name, so a
	 * rank that died without reporting what had finished costs a re-run, never
	 * a misattributed result.
	 */
	while (npending) {
		struct cuco_run_result more;
		int k, before = res->nresults, left = 0;

		cuco_run_result_init(&more);
		k = run_once(o, m, workload_so, shape, pending, npending, &more, err);
		if (k == CUCO_OK && more.code != CUCO_OK && more.nresults == 0)
			k = cuco_err_set(err, more.code, "%s",
			                 more.error ? more.error : cuco_strerror(more.code));
		if (k) {
			cuco_strbuf_add(&res->log, more.log.buf, more.log.len); /* why, in full */
			cuco_run_result_release(&more);
			return k;
		}
		if (!res->gpu[0])
			memcpy(res->gpu, more.gpu, sizeof(res->gpu));
		if (!res->timing[0])
			memcpy(res->timing, more.timing, sizeof(res->timing));
		if (!res->max_connections[0])
			memcpy(res->max_connections, more.max_connections,
			       sizeof(res->max_connections));
		if (more.raw_json) {
			/* One line per harness run, in order. */
			struct cuco_strbuf all = CUCO_STRBUF_INIT;
			if (res->raw_json)
				cuco_strbuf_addf(&all, "%s\n", res->raw_json);
			cuco_strbuf_adds(&all, more.raw_json);
			free(res->raw_json);
			res->raw_json = cuco_strbuf_detach(&all, NULL);
		}
		cuco_strbuf_add(&res->log, more.log.buf, more.log.len);
		for (int i = 0; i < more.nresults && res->nresults < CUCO_CASCADE_MAX_PROGRAMS;
		     i++) {
			if (has_result(res, more.results[i].name))
				continue;
			res->results[res->nresults++] = more.results[i];
			memset(&more.results[i], 0, sizeof(more.results[i]));
		}
		cuco_run_result_release(&more);
		for (int i = 0; i < npending; i++)
			if (!has_result(res, pending[i].name))
				pending[left++] = pending[i];
		if (res->nresults == before)
			return cuco_err_set(err, CUCO_ERR_RUN,
			                    "the harness failed without naming a program");
		npending = left;
	}
	res->code = CUCO_OK;
	return CUCO_OK;
}

int cuco_gpu_count(struct cuco_err *err)
{
	char *argv[] = {(char *)cuco_harness_path(), "--count-gpus", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	long n = -1;

	if (cuco_proc_run(argv, NULL, &out, NULL, 120, &st) == 0 && st.exited && st.code == 0) {
		char *end;
		errno = 0;
		n = strtol(out.buf, &end, 10);
		if (errno || end == out.buf)
			n = -1;
	}
	if (n < 0)
		cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot run %s --count-gpus", argv[0]);
	cuco_strbuf_release(&out);
	return (int)n;
}
