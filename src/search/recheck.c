/*
 * recheck.c - the winner re-check: the best program of an evolve run at every
 * shape with a fresh input seed, then under compute-sanitizer, each check
 * stored as an evaluation of a run of kind 'recheck'.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/recheck.h"
#include "store/store.h"
#include "util/xalloc.h"

struct best_acc {
	int64_t id;
	double fitness, median_us;
};

static int best_row(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct best_acc *b = arg;

	(void)err;
	if (strcmp(ev->status, "ok") || isnan(ev->fitness) || ev->fitness <= 0)
		return 0;
	if (!b->id || ev->fitness > b->fitness) {
		b->id = ev->program_id;
		b->fitness = ev->fitness;
		b->median_us = ev->median_us;
	}
	return 0;
}

int cuco_recheck_best(struct cuco_store *store, int64_t run_id, int64_t *program_id,
                      double *median_us, double *fitness, struct cuco_err *err)
{
	struct best_acc b = {0, NAN, NAN};
	int rc = cuco_store_eval_each_run(store, run_id, best_row, &b, err);

	*program_id = rc ? 0 : b.id;
	if (median_us)
		*median_us = b.median_us;
	if (fitness)
		*fitness = b.fitness;
	return rc;
}

uint64_t cuco_recheck_seed(uint64_t search_seed)
{
	/* One LCG step, kept to 31 bits so it reads well in tables. */
	uint64_t s = (search_seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 33;

	return s == search_seed ? s + 1 : s;
}

/*
 * Kernels of vendor libraries. racecheck reports shared-memory hazards inside
 * cuBLAS's own Hopper kernels (nvjet_*) when it runs cuBLAS + NCCL alone, with
 * no cuco code at all (docs/report.md, "Winner re-check"); a race reported
 * only there is the library's, not the candidate's. Names as racecheck prints
 * them: plain, or C++ with an optional "void " before the namespace.
 */
static const char *const vendor_kernels[] = {"nvjet_",        "sm90_xmma_", "sm80_xmma_", "cutlass",
                                             "ncclDevKernel", "ncclKernel", NULL};

static int vendor_kernel(const char *name)
{
	if (!strncmp(name, "void ", 5))
		name += 5;
	for (int i = 0; vendor_kernels[i]; i++)
		if (!strncmp(name, vendor_kernels[i], strlen(vendor_kernels[i])))
			return 1;
	return 0;
}

/*
 * If t[0..len) is a race line ("Error: Race reported between Read access at
 * K+0x10", "and Write access at 0x2c0 in K(float*)", "Warning: Race ..."),
 * the kernel it names into name and 1 for the report's first line, 2 for its
 * "and" line; else 0. racecheck now and then prints a race without any
 * location ("... Read access at " and nothing after): then name is "".
 */
static int race_line(const char *t, size_t len, char *name, size_t cap)
{
	char line[512];
	const char *a, *k;
	size_t n;

	snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1),
	         t);
	if (!strstr(line, "Race reported") && strncmp(line, "and ", 4))
		return 0;
	if (!(a = strstr(line, " access at ")))
		return 0;
	k = a + 11;
	if (!strncmp(k, "0x", 2) && (a = strstr(k, " in ")))
		k = a + 4; /* "at 0x2c0 in kernel(args)" */
	n = strcspn(k, "+( [");
	snprintf(name, cap, "%.*s", (int)n, k);
	return strncmp(line, "and ", 4) ? 1 : 2;
}

int cuco_recheck_sanitizer_verdict(const char *log, struct cuco_strbuf *summary)
{
	int counted = 0, kept = 0, own = 0, vendor = 0, unnamed = 0;
	char first_vendor[64] = "";

	for (const char *l = log ? log : ""; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		const char *es = NULL;
		int keep = 0;

		if (len > 9 && !strncmp(l, "=========", 9)) {
			const char *t = l + 9;
			char k[128];
			int race;
			while (t < l + len && *t == ' ')
				t++;
			es = strstr(t, "ERROR SUMMARY:");
			if (es && es < l + len) {
				char *end;
				long long n;
				errno = 0;
				n = strtoll(es + 14, &end, 10);
				if (!errno && end != es + 14 && n > 0)
					counted = 1;
				keep = 1;
			} else if ((race = race_line(t, (size_t)(l + len - t), k, sizeof(k)))) {
				if (!k[0])
					unnamed += race == 1;
				else if (!vendor_kernel(k))
					own++;
				else if (race == 1 && !vendor++)
					snprintf(first_vendor, sizeof(first_vendor), "%s", k);
				keep = kept < 12;
			} else if (t < l + len && strncmp(t, "COMPUTE-SANITIZER", 17)) {
				/* a finding: "Invalid __global__ read"; its "at"/"by" lines */
				if (!strncmp(t, "Invalid", 7) || !strncmp(t, "Error", 5) ||
				    !strncmp(t, "Program hit", 11) ||
				    !strncmp(t, "Uninitialized", 13))
					own++;
				keep = kept < 12;
			}
		} else if (len > 13 && !strncmp(l, "cuco: wrapper", 13)) {
			char line[96], pat[48];
			snprintf(line, sizeof(line), "%.*s", (int)(len < 95 ? len : 95), l);
			snprintf(pat, sizeof(pat), "exited with code %d",
			         CUCO_RECHECK_SANITIZER_EXIT);
			if (strstr(line, pat))
				counted = 1;
			keep = 1;
		}
		if (keep && summary) {
			cuco_strbuf_add(summary, l, len);
			cuco_strbuf_addch(summary, '\n');
			kept++;
		}
		l += len + (nl ? 1 : 0);
	}
	/* Every finding a race inside a vendor kernel: the errors counted are those.
	 * A race without a location goes with them only beside located vendor races
	 * and no located race of the candidate's (seen: 1 blank report among 191 in
	 * cuBLAS's kernel, with the same hazard count); alone it fails the check. */
	if (counted && vendor && !own) {
		if (summary) {
			cuco_strbuf_addf(
			    summary,
			    "cuco: set aside: %d race reports, all inside vendor kernels "
			    "(%s...)",
			    vendor + unnamed, first_vendor);
			if (unnamed)
				cuco_strbuf_addf(summary,
				                 " but %d racecheck printed without a location",
				                 unnamed);
			cuco_strbuf_addf(summary, ", not the candidate's code\n");
		}
		return 0;
	}
	return counted;
}

/* The note of a verdict's summary on vendor races set aside (its last line), or NULL. */
static const char *vendor_note(const char *summary)
{
	const char *n = summary ? strstr(summary, "cuco: set aside: ") : NULL;

	return n ? n + 6 : NULL;
}

int cuco_recheck_spread_note(const struct cuco_program_result *r, char *buf, size_t n)
{
	double over;

	if (!r || r->code != CUCO_OK || !isfinite(r->median_us) || !isfinite(r->mean_us) ||
	    r->median_us <= 0)
		return 0;
	over = r->mean_us - r->median_us;
	if (over < CUCO_RECHECK_SPREAD_US || over < r->median_us * CUCO_RECHECK_SPREAD_PCT / 100)
		return 0;
	snprintf(buf, n, "slow runs: mean %.1f us, p90 %.1f us against a median of %.1f us",
	         r->mean_us, r->p90_us, r->median_us);
	return 1;
}

/* Whether name is one of the ','-joined names in list. */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

int cuco_recheck_slower_note(double lat_us, double base_us, const char *shape, const char *searched,
                             char *buf, size_t n)
{
	int off;

	if (!isfinite(lat_us) || !isfinite(base_us) || lat_us <= 0 || base_us <= 0 ||
	    lat_us <= base_us)
		return 0;
	off = snprintf(buf, n, "slower than the host baseline (%.1f us)", base_us);
	if (shape && searched && *searched && !in_list(searched, shape) && off > 0 &&
	    (size_t)off < n)
		snprintf(buf + off, n - (size_t)off,
		         "; the search judged %s only: --shape %s adds this shape to the fitness",
		         searched, shape);
	return 1;
}

/* A check's evaluation row, and its entry in the meta JSON. */
static int store_check(const struct cuco_recheck_opts *o, struct cuco_recheck_result *res,
                       json_t *checks, const char *pass, const char *gpu,
                       const struct cuco_shape *shape, const char *stage, const char *status,
                       int code, const char *error, const struct cuco_program_result *r,
                       const char *log, double base_us, int timed, struct cuco_err *err)
{
	struct cuco_eval_rec ev;
	int64_t id = 0;
	int rc;

	cuco_eval_rec_init(&ev);
	ev.program_id = res->program_id;
	ev.run_id = res->recheck_run;
	ev.shape = shape->name;
	ev.ranks = o->run.ranks;
	ev.stage_reached = stage;
	ev.status = status;
	ev.error_code = code;
	ev.error = error;
	ev.run_log = log && *log ? log : NULL;
	ev.gpu = gpu && *gpu ? gpu : NULL;
	if (r && timed)
		cuco_eval_rec_timings(&ev, r, &o->run, base_us, code == CUCO_OK);
	else if (r)
		ev.rel_err = r->rel_err;
	if ((rc = cuco_store_eval_add(o->store, &ev, &id, err)))
		return rc;
	json_array_append_new(checks,
	                      json_pack("{s:s,s:s,s:I,s:s}", "check", pass, "shape", shape->name,
	                                "evaluation", (json_int_t)id, "status", status));
	res->nchecks++;
	if (code == CUCO_OK)
		res->npassed++;
	return CUCO_OK;
}

static double shape_volume(const struct cuco_shape *s)
{
	double v = 1;
	for (int i = 0; i < s->nparams; i++)
		v *= (double)s->params[i];
	return v;
}

/* One cascade call: the best program (and the baseline when given) at shapes. */
static int check_pass(const struct cuco_recheck_opts *o, struct cuco_recheck_result *res,
                      json_t *checks, const char *pass, const struct cuco_shape *const *shapes,
                      int nshapes, const struct cuco_run_opts *run, const char *code_text,
                      const char *base_text, const char *searched, struct cuco_err *err)
{
	struct cuco_eval_program progs[2];
	struct cuco_eval_request req;
	struct cuco_eval_shape *out = cuco_xcalloc((size_t)nshapes, sizeof(*out));
	const struct cuco_manifest_program *bp = NULL;
	char path[PATH_MAX];
	int np = 0, rc, sanit = run->wrapper != NULL;

	for (int i = 0; i < o->m->nprograms; i++)
		if (o->m->programs[i].role == CUCO_PROGRAM_BASELINE)
			bp = &o->m->programs[i];
	snprintf(path, sizeof(path), "%s/best.cu", o->m->dir);
	memset(&req, 0, sizeof(req));
	if (base_text && bp) {
		cuco_eval_program_init(&progs[np], "baseline", "baseline", bp->file, base_text, 1);
		for (int l = 0; l < bp->nlibs && l < 3; l++)
			progs[np].libs[l] = bp->libs[l];
		np++;
	}
	cuco_eval_program_init(&progs[np++], "best", "candidate", path, code_text, 1);
	req.m = o->m;
	req.shapes = shapes;
	req.nshapes = nshapes;
	req.progs = progs;
	req.nprogs = np;
	req.run = *run;
	if ((rc = cuco_compile_opts_default(&req.compile, err)))
		goto out;
	rc = cuco_evaluate(&req, out, err);
	if (rc && rc != CUCO_ERR_NO_GPU)
		goto out;
	if (rc == CUCO_ERR_NO_GPU)
		goto out;
	for (int s = 0; s < nshapes; s++) {
		struct cuco_eval_program *bestp = &progs[np - 1];
		const struct cuco_program_result *r = cuco_eval_find(&out[s], "best");
		const struct cuco_program_result *b = cuco_eval_find(&out[s], "baseline");
		double base_us = b && b->code == CUCO_OK ? cuco_result_latency(b, run) : NAN;
		const char *log = out[s].run.log.buf;

		if (bestp->precheck_code || bestp->job.code != CUCO_OK) {
			rc = store_check(
			    o, res, checks, pass, out[s].run.gpu, shapes[s], "compile", "compile",
			    bestp->precheck_code ? bestp->precheck_code : bestp->job.code,
			    bestp->precheck_code ? bestp->precheck_error : "nvcc failed", NULL,
			    bestp->job.log.buf, NAN, 0, err);
		} else if (!r) {
			rc = store_check(
			    o, res, checks, pass, out[s].run.gpu, shapes[s], "run",
			    cuco_result_token(out[s].code ? out[s].code : CUCO_ERR_RUN),
			    out[s].code ? out[s].code : CUCO_ERR_RUN,
			    out[s].error[0] ? out[s].error : "no result", NULL, log, NAN, 0, err);
		} else if (sanit) {
			struct cuco_strbuf sum = CUCO_STRBUF_INIT;
			if (cuco_recheck_sanitizer_verdict(log, &sum))
				rc = store_check(o, res, checks, pass, out[s].run.gpu, shapes[s],
				                 "verify", "sanitizer", CUCO_ERR_VERIFY, sum.buf, r,
				                 log, NAN, 0, err);
			else /* passed; the note on vendor races set aside, if any */
				rc = store_check(o, res, checks, pass, out[s].run.gpu, shapes[s],
				                 r->stage, r->status, r->code,
				                 r->error ? r->error : vendor_note(sum.buf), r, log,
				                 NAN, 0, err);
			cuco_strbuf_release(&sum);
		} else {
			char note[320] = "", part[160];
			const char *msg = r->error;
			if (!msg) { /* a passed check's notes, joined by "; " */
				size_t len = 0;
				if (cuco_recheck_slower_note(cuco_result_latency(r, run), base_us,
				                             shapes[s]->name, searched, note,
				                             sizeof(note)))
					len = strlen(note);
				if (cuco_recheck_spread_note(r, part, sizeof(part)))
					snprintf(note + len, sizeof(note) - len, "%s%s",
					         len ? "; " : "", part);
				msg = note[0] ? note : NULL;
			}
			rc = store_check(o, res, checks, pass, out[s].run.gpu, shapes[s], r->stage,
			                 r->status, r->code, msg, r, log, base_us, 1, err);
		}
		if (rc)
			goto out;
	}
out:
	for (int s = 0; s < nshapes; s++)
		cuco_eval_shape_release(&out[s]);
	free(out);
	for (int i = 0; i < np; i++)
		cuco_eval_program_release(&progs[i]);
	return rc;
}

void cuco_recheck_searched(const char *config, const char *shape, char *buf, size_t n)
{
	json_t *cfg = config ? json_loads(config, 0, NULL) : NULL;
	json_t *list = json_object_get(cfg, "shapes"), *v;
	size_t i, off = 0;

	buf[0] = 0;
	json_array_foreach(list, i, v)
	{
		int w = json_is_string(v) ? snprintf(buf + off, n - off, "%s%s", off ? "," : "",
		                                     json_string_value(v))
		                          : -1;
		if (w < 0 || (size_t)w >= n - off) {
			buf[0] = 0; /* too long, or not a name: say nothing rather than half */
			break;
		}
		off += (size_t)w;
	}
	if (!json_array_size(list) && shape)
		snprintf(buf, n, "%s", shape);
	json_decref(cfg);
}

int cuco_recheck_run(const struct cuco_recheck_opts *o, struct cuco_recheck_result *res,
                     struct cuco_err *err)
{
	struct cuco_run_rec run, rr;
	struct cuco_program_rec prog;
	struct cuco_strbuf base = CUCO_STRBUF_INIT;
	struct cuco_run_opts ro;
	const struct cuco_shape **shapes = NULL;
	const struct cuco_shape *small;
	json_t *checks = json_array(), *meta = NULL;
	char key[64], cfg[160], idtext[32], searched[160], *text = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	cuco_run_rec_init(&run);
	cuco_program_rec_init(&prog);
	if ((rc = cuco_store_run_get(o->store, o->run_id, &run, err)))
		goto out;
	if ((rc = cuco_recheck_best(o->store, o->run_id, &res->program_id, NULL, NULL, err)) ||
	    !res->program_id)
		goto out;
	if ((rc = cuco_store_program_get(o->store, res->program_id, &prog, err)))
		goto out;
	shapes = cuco_xcalloc((size_t)o->m->nshapes + 1, sizeof(*shapes));
	if (!checks) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < o->m->nshapes; i++)
		shapes[i] = &o->m->shapes[i];
	/* The sanitizers run at the smallest shape (product of its parameters):
	 * racecheck at 4096^3 takes minutes, and a program's synchronisation does
	 * not change with the shape. */
	small = shapes[0];
	for (int i = 1; i < o->m->nshapes; i++)
		if (shape_volume(shapes[i]) < shape_volume(small))
			small = shapes[i];
	for (int i = 0; i < o->m->nprograms; i++)
		if (o->m->programs[i].role == CUCO_PROGRAM_BASELINE &&
		    cuco_strbuf_read_file(&base, o->m->programs[i].file)) {
			rc = cuco_err_set(err, CUCO_ERR_IO, "%s: %s", o->m->programs[i].file,
			                  strerror(errno));
			goto out;
		}
	res->input_seed = cuco_recheck_seed(o->run.seed);
	snprintf(cfg, sizeof(cfg), "{\"of_run\":%lld,\"program\":%lld,\"seed\":%llu}",
	         (long long)o->run_id, (long long)res->program_id,
	         (unsigned long long)res->input_seed);
	cuco_run_rec_init(&rr);
	rr.kind = "recheck";
	rr.workload = run.workload;
	rr.shape = run.shape;
	rr.config = cfg;
	if ((rc = cuco_store_run_begin(o->store, &rr, &res->recheck_run, err)))
		goto out;

	ro = o->run;
	ro.seed = res->input_seed;
	ro.wrapper = NULL;
	cuco_recheck_searched(run.config, run.shape, searched, sizeof(searched));
	rc = check_pass(o, res, checks, "fresh-seed", shapes, o->m->nshapes, &ro, prog.code,
	                base.len ? base.buf : NULL, searched, err);
	if (!rc && o->sanitize) {
		/* Slow under the sanitizer: one short timed run, a long watchdog. */
		ro.warmup = 1;
		ro.iters = 1;
		ro.bench_seconds = 0.01;
		ro.verify_runs = 1;
		ro.timeout_s = o->run.timeout_s * 20;
		ro.samples = 0;
		ro.wrapper = o->memcheck ? o->memcheck : CUCO_RECHECK_MEMCHECK;
		rc = check_pass(o, res, checks, "memcheck", &small, 1, &ro, prog.code, NULL, NULL,
		                err);
		ro.wrapper = o->racecheck ? o->racecheck : CUCO_RECHECK_RACECHECK;
		if (!rc)
			rc = check_pass(o, res, checks, "racecheck", &small, 1, &ro, prog.code,
			                NULL, NULL, err);
	}
	cuco_store_run_finish(o->store, res->recheck_run, rc ? "failed" : "done", NULL);
	if (rc)
		goto out;
	res->passed = res->nchecks > 0 && res->npassed == res->nchecks;
	meta =
	    json_pack("{s:I,s:I,s:I,s:b,s:b,s:O}", "recheck_run", (json_int_t)res->recheck_run,
	              "program", (json_int_t)res->program_id, "seed", (json_int_t)res->input_seed,
	              "sanitized", o->sanitize, "passed", res->passed, "checks", checks);
	text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
	if (!text) {
		rc = cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory");
		goto out;
	}
	snprintf(key, sizeof(key), "run.%lld.recheck", (long long)o->run_id);
	if ((rc = cuco_store_meta_set(o->store, key, text, err)))
		goto out;
	snprintf(key, sizeof(key), "run.%lld.best_checked", (long long)o->run_id);
	snprintf(idtext, sizeof(idtext), "%lld", (long long)res->program_id);
	rc = cuco_store_meta_set(o->store, key, res->passed ? idtext : NULL, err);
out:
	free(text);
	json_decref(meta);
	json_decref(checks);
	free(shapes);
	cuco_strbuf_release(&base);
	cuco_program_rec_release(&prog);
	cuco_run_rec_release(&run);
	return rc;
}

int cuco_recheck_print(FILE *f, struct cuco_store *store, int64_t run_id, struct cuco_err *err)
{
	char key[64], *text = NULL;
	json_t *root = NULL, *c;
	size_t i;
	int rc;

	snprintf(key, sizeof(key), "run.%lld.recheck", (long long)run_id);
	if ((rc = cuco_store_meta_get(store, key, &text, err)))
		return rc;
	if (!text) {
		fprintf(f, "# recheck: run %lld has not been re-checked\n", (long long)run_id);
		return CUCO_OK;
	}
	root = json_loads(text, 0, NULL);
	fprintf(f, "# recheck of run %lld: program %lld, seed %lld, %s\n", (long long)run_id,
	        (long long)json_integer_value(json_object_get(root, "program")),
	        (long long)json_integer_value(json_object_get(root, "seed")),
	        json_is_true(json_object_get(root, "passed")) ? "PASSED" : "FAILED");
	json_array_foreach(json_object_get(root, "checks"), i, c)
	{
		struct cuco_eval_rec ev;
		struct cuco_err e;
		cuco_eval_rec_init(&ev);
		if (cuco_store_eval_get(store, json_integer_value(json_object_get(c, "evaluation")),
		                        &ev, &e))
			continue;
		fprintf(f, "#   %-10s %-10s %-9s", json_string_value(json_object_get(c, "check")),
		        ev.shape ? ev.shape : "-", ev.status);
		if (isfinite(ev.median_us))
			fprintf(f, " %9.1f us", ev.median_us);
		if (isfinite(ev.p90_us) && isfinite(ev.mean_us))
			fprintf(f, " (p90 %.1f, mean %.1f)", ev.p90_us, ev.mean_us);
		if (isfinite(ev.fitness))
			fprintf(f, " %.3fx", ev.fitness);
		if (ev.error) {
			const char *nl = strchr(ev.error, '\n');
			fprintf(f, "  %.*s", nl ? (int)(nl - ev.error) : (int)strlen(ev.error),
			        ev.error);
		}
		fputc('\n', f);
		cuco_eval_rec_release(&ev);
	}
	json_decref(root);
	free(text);
	return CUCO_OK;
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int cuco_recheck_json(struct cuco_store *store, int64_t run_id, json_t **out, struct cuco_err *err)
{
	char key[64], *text = NULL;
	json_t *root, *c, *checks;
	size_t i;
	int rc;

	*out = NULL;
	snprintf(key, sizeof(key), "run.%lld.recheck", (long long)run_id);
	if ((rc = cuco_store_meta_get(store, key, &text, err)))
		return rc;
	root = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		*out = json_pack("{s:I, s:b}", "run", (json_int_t)run_id, "rechecked", 0);
		return CUCO_OK;
	}
	json_object_set_new(root, "run", json_integer(run_id));
	json_object_set_new(root, "rechecked", json_true());
	checks = json_object_get(root, "checks");
	json_array_foreach(checks, i, c)
	{
		struct cuco_eval_rec ev;
		struct cuco_err e;

		if (!json_is_object(c))
			continue;
		cuco_eval_rec_init(&ev);
		if (cuco_store_eval_get(store, json_integer_value(json_object_get(c, "evaluation")),
		                        &ev, &e) == CUCO_OK) {
			json_object_set_new(c, "shape",
			                    ev.shape ? json_string(ev.shape) : json_null());
			json_object_set_new(c, "status", json_string(ev.status));
			json_object_set_new(c, "median_us", real_or_null(ev.median_us));
			json_object_set_new(c, "p90_us", real_or_null(ev.p90_us));
			json_object_set_new(c, "mean_us", real_or_null(ev.mean_us));
			json_object_set_new(c, "fitness", real_or_null(ev.fitness));
			json_object_set_new(c, "error",
			                    ev.error ? json_string(ev.error) : json_null());
		}
		cuco_eval_rec_release(&ev);
	}
	*out = root;
	return CUCO_OK;
}
