/*
 * agent.c - the LLM fast-path agent (see agent.h): prompt, call, whole-file
 * rewrite, checks, compile, run stage, feedback; twice (stage A, stage B).
 */
#include "fastpath/agent.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "llm/reply.h"
#include "program/blocks.h"
#include "util/paths.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_LOG 3000 /* bytes of a compile log or run error in a prompt */
#define MAX_ERR 1000 /* bytes of a compile log in a stored call's error */

static const char *const abi_functions[] = {"cuco_program_requirements", "cuco_program_init",
                                            "cuco_program_run", "cuco_program_fini", NULL};

/* Host collectives that must be gone after stage B. */
static const char *const host_collectives[] = {"ncclAllGather",
                                               "ncclAllReduce",
                                               "ncclReduceScatter",
                                               "ncclBroadcast",
                                               "ncclBcast",
                                               "ncclReduce",
                                               "ncclAlltoAll",
                                               "ncclAlltoAllv",
                                               "ncclGather",
                                               "ncclScatter",
                                               "ncclSend",
                                               "ncclRecv",
                                               NULL};

static const char *const stage_names[] = {"A", "B"};
static const char *const stage_prompts[] = {"fastpath_stage_a", "fastpath_stage_b"};

void cuco_fastpath_agent_config_init(struct cuco_fastpath_agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cuco_llm_config_init(&cfg->llm);
	cfg->iterations = CUCO_FASTPATH_AGENT_ITERATIONS;
	cfg->ranks = 2;
}

void cuco_fastpath_agent_result_init(struct cuco_fastpath_agent_result *r)
{
	memset(r, 0, sizeof(*r));
}

void cuco_fastpath_agent_result_release(struct cuco_fastpath_agent_result *r)
{
	if (!r)
		return;
	free(r->stage_a);
	free(r->seed);
	free(r->directive_json);
	free(r->flags);
	cuco_fastpath_agent_result_init(r);
}

static void say(const struct cuco_fastpath_agent_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const struct cuco_fastpath_agent_config *cfg, const char *fmt, ...)
{
	va_list ap;

	if (!cfg->progress)
		return;
	fputs("cuco fastpath --llm: ", cfg->progress);
	va_start(ap, fmt);
	vfprintf(cfg->progress, fmt, ap);
	va_end(ap);
	fputc('\n', cfg->progress);
	fflush(cfg->progress);
}

/* code with comments, string and character literals blanked (same length). */
static void blank_comments(const char *code, struct cuco_strbuf *out)
{
	const char *p = code;

	while (*p) {
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n') {
				cuco_strbuf_addch(out, ' ');
				p++;
			}
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			const char *end = e ? e + 2 : p + strlen(p);
			for (; p < end; p++)
				cuco_strbuf_addch(out, *p == '\n' ? '\n' : ' ');
		} else if (*p == '"' || *p == '\'') {
			char q = *p;
			cuco_strbuf_addch(out, ' ');
			for (p++; *p && *p != q && *p != '\n'; p++) {
				if (*p == '\\' && p[1])
					p++;
				cuco_strbuf_addch(out, ' ');
			}
			if (*p == q) {
				cuco_strbuf_addch(out, ' ');
				p++;
			}
		} else {
			cuco_strbuf_addch(out, *p++);
		}
	}
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* 1-based line of the first call-like use `name (` in text (comments blanked), else 0. */
static int find_call(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name))) {
		const char *q = p + n;
		if ((p == text || !ident_char(p[-1])) && !ident_char(*q)) {
			while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
				q++;
			if (*q == '(') {
				int line = 1;
				for (const char *s = text; s < p; s++)
					line += *s == '\n';
				return line;
			}
		}
		p += n;
	}
	return 0;
}

/*
 * The checks a stage's program must pass before it is compiled: the four
 * ABI functions; for stage B no host collective, EVOLVE-BLOCKs, a directive.
 * Appends the reason to why and returns 0 when it fails.
 */
static int check_program(const struct cuco_fastpath_agent_config *cfg, int stage, const char *code,
                         struct cuco_strbuf *why)
{
	struct cuco_strbuf bare = CUCO_STRBUF_INIT;
	struct cuco_block blocks[CUCO_BLOCKS_MAX];
	struct cuco_directive d;
	struct cuco_err e;
	int ok = 0, nb = 0, line;

	cuco_err_clear(&e);
	blank_comments(code, &bare);
	for (int i = 0; abi_functions[i]; i++)
		if (!find_call(bare.buf, abi_functions[i])) {
			cuco_strbuf_addf(
			    why,
			    "the program has no %s(): a cuco program defines "
			    "cuco_program_requirements, cuco_program_init, "
			    "cuco_program_run and cuco_program_fini (extern \"C\", as in "
			    "cuco/program.h); return the complete program",
			    abi_functions[i]);
			goto out;
		}
	if (stage == CUCO_FASTPATH_STAGE_A) {
		ok = 1;
		goto out;
	}
	for (int i = 0; host_collectives[i]; i++) {
		line = find_call(bare.buf, host_collectives[i]);
		if (line) {
			cuco_strbuf_addf(
			    why,
			    "line %d still calls the host collective %s; stage B "
			    "replaces every host collective with device-initiated code",
			    line, host_collectives[i]);
			goto out;
		}
	}
	if (cuco_blocks_find("seed.cu", code, blocks, CUCO_BLOCKS_MAX, &nb, &e)) {
		cuco_strbuf_addf(why, "EVOLVE-BLOCK markers: %s", e.msg);
		goto out;
	}
	if (nb == 0) {
		cuco_strbuf_adds(why,
		                 "the program has no EVOLVE-BLOCKs: mark the communication "
		                 "kernels and their launch code with lines `// EVOLVE-BLOCK-START` "
		                 "and `// EVOLVE-BLOCK-END`, each alone on its line");
		goto out;
	}
	if (cuco_directive_parse("seed.cu", code, &d, &e)) {
		cuco_strbuf_addf(why, "directive: %s", e.msg);
		goto out;
	}
	if (cfg->ds && cuco_directive_validate(&d, cfg->ds, cfg->facts, &e)) {
		cuco_strbuf_addf(why, "directive: %s", e.msg);
		cuco_directive_release(&d);
		goto out;
	}
	cuco_directive_release(&d);
	ok = 1;
out:
	cuco_strbuf_release(&bare);
	return ok;
}

/* Compile code as if it sat beside the host program; *ok 1 when nvcc built it. */
static int compile_one(const struct cuco_fastpath_agent_config *cfg, int stage, const char *code,
                       int *ok, struct cuco_strbuf *log, struct cuco_err *err)
{
	struct cuco_compile_opts co;
	struct cuco_compile_job job;
	char virt[PATH_MAX];
	const char *slash = strrchr(cfg->file, '/');
	int rc;

	*ok = 0;
	snprintf(virt, sizeof(virt), "%.*s/fastpath_stage_%c.cu",
	         slash ? (int)(slash - cfg->file) : 1, slash ? cfg->file : ".",
	         stage == CUCO_FASTPATH_STAGE_A ? 'a' : 'b');
	rc = cuco_compile_opts_default(&co, err);
	if (rc)
		return rc;
	cuco_compile_job_init(&job, stage == CUCO_FASTPATH_STAGE_A ? "stage_a" : "stage_b", virt,
	                      code);
	for (int l = 0; l < 3 && cfg->libs[l]; l++)
		job.libs[l] = cfg->libs[l];
	rc = cuco_compile_many(&co, &job, 1, err);
	if (rc == CUCO_OK) {
		*ok = job.code == CUCO_OK;
		cuco_strbuf_adds(log, job.log.buf);
	}
	cuco_compile_job_release(&job);
	return rc;
}

/* The stage prompt: the program to rewrite, the last attempt and how it did. */
static int build_prompt(const struct cuco_fastpath_agent_config *cfg, int stage,
                        const char *program, const char *abi, const char *guide,
                        const char *previous, const char *feedback, struct cuco_strbuf *user,
                        struct cuco_err *err)
{
	struct cuco_strbuf wl = CUCO_STRBUF_INIT, hw = CUCO_STRBUF_INIT, prev = CUCO_STRBUF_INIT;
	int rc;

	cuco_strbuf_addf(&wl, "%s", cfg->workload ? cfg->workload : "(a program file)");
	if (cfg->shape)
		cuco_strbuf_addf(&wl, " at shape %s", cfg->shape);
	cuco_strbuf_addf(&wl, ": %s",
	                 cfg->workload_description && *cfg->workload_description
	                     ? cfg->workload_description
	                     : "(no description)");
	cuco_prompt_hardware(cfg->facts, &hw);
	if (previous) {
		cuco_strbuf_adds(&prev, "```cuda\n");
		cuco_strbuf_adds(&prev, previous);
		cuco_strbuf_adds(&prev, "```");
	} else {
		cuco_strbuf_adds(&prev, "None: this is the first attempt.");
	}
	{
		const struct cuco_prompt_var vars[] = {
		    {"workload", wl.buf},
		    {"hardware", hw.buf},
		    {"design_space", cfg->design_space_text ? cfg->design_space_text : "{}"},
		    {"nccl_guide", guide},
		    {"abi_header", abi},
		    {"host_program", program},
		    {"previous", prev.buf},
		    {"stage_feedback", feedback && *feedback ? feedback : "Nothing yet."},
		};
		rc = cuco_prompt_build(cfg->share_dir, stage_prompts[stage], vars,
		                       (int)(sizeof(vars) / sizeof(vars[0])), user, NULL, err);
	}
	cuco_strbuf_release(&wl);
	cuco_strbuf_release(&hw);
	cuco_strbuf_release(&prev);
	return rc;
}

/* Store res (no program) with the reason why; counts the call. */
static int store_call(const struct cuco_fastpath_agent_config *cfg,
                      struct cuco_fastpath_agent_result *out, struct cuco_llm_result *res,
                      int64_t program_id, const char *why, struct cuco_err *err)
{
	if (res->attempts > 0)
		out->calls++;
	if (!cfg->store)
		return CUCO_OK;
	res->purpose = "fastpath";
	return cuco_llm_result_store_why(cfg->store, res, cfg->run_id, program_id, why, err);
}

/* Store the seed and its evaluation; out->program_id gets its id. */
static int store_seed(const struct cuco_fastpath_agent_config *cfg,
                      struct cuco_fastpath_agent_result *out, const struct cuco_fastpath_verdict *v,
                      struct cuco_err *err)
{
	struct cuco_program_rec rec;
	struct cuco_eval_rec ev;
	int64_t id = 0;
	int rc;

	cuco_program_rec_init(&rec);
	rec.run_id = cfg->run_id;
	rec.workload = cfg->workload;
	rec.name = "seed";
	rec.origin = "seed";
	rec.code = out->seed;
	rec.directive = out->directive_json;
	rec.flags = out->flags;
	rec.operator_ = CUCO_FASTPATH_OPERATOR;
	rc = cuco_store_program_add(cfg->store, &rec, &out->program_id, err);
	if (rc)
		return rc;
	cuco_eval_rec_init(&ev);
	ev.program_id = out->program_id;
	ev.run_id = cfg->run_id;
	ev.shape = cfg->shape;
	ev.ranks = cfg->ranks;
	if (out->verified) {
		ev.stage_reached = "verify";
		ev.status = "ok";
		ev.error_code = CUCO_OK;
		ev.median_us = v->median_us;
		ev.rel_err = v->rel_err;
		if (isfinite(v->baseline_us) && v->median_us > 0)
			ev.fitness = v->baseline_us / v->median_us;
	} else {
		ev.stage_reached = "compile";
		ev.status = "no_gpu";
		ev.error_code = CUCO_ERR_NO_GPU;
		ev.error = out->note;
	}
	return cuco_store_eval_add(cfg->store, &ev, &id, err);
}

/* The verdict as feedback for the next attempt. */
static void verdict_feedback(const struct cuco_fastpath_verdict *v, struct cuco_strbuf *fb)
{
	cuco_strbuf_adds(fb, "It compiled, but the run stage failed");
	if (v->message[0]) {
		cuco_strbuf_adds(fb, ":\n```\n");
		cuco_prompt_add_clipped(fb, v->message, MAX_LOG, 1);
		cuco_strbuf_adds(fb, "\n```\n");
	} else {
		cuco_strbuf_addf(fb, " (%s).\n", cuco_strerror(v->code));
	}
	if (isfinite(v->rel_err))
		cuco_strbuf_addf(fb, "- max relative error against the reference: %.3g\n",
		                 v->rel_err);
	if (isfinite(v->median_us))
		cuco_strbuf_addf(fb, "- median latency: %.2f us\n", v->median_us);
	if (isfinite(v->baseline_us))
		cuco_strbuf_addf(fb, "- the baseline's median latency: %.2f us\n", v->baseline_us);
}

/* Shared state of one agent run. */
struct agent {
	const struct cuco_fastpath_agent_config *cfg;
	struct cuco_llm_client *client;
	struct cuco_fastpath_agent_result *out;
	const char *abi, *guide;
	int no_run;                         /* the run stage said it cannot run here */
	struct cuco_fastpath_verdict final; /* stage B's verdict */
	struct cuco_llm_result pending;     /* stage B's accepted call, stored with the seed */
};

/*
 * One stage: up to K attempts. On success *accepted gets the program
 * (malloc'd). Returns CUCO_OK, CUCO_ERR_INVALID when no attempt was
 * acceptable, or what broke.
 */
static int run_stage(struct agent *a, int stage, const char *program, char **accepted,
                     struct cuco_err *err)
{
	const struct cuco_fastpath_agent_config *cfg = a->cfg;
	struct cuco_strbuf user = CUCO_STRBUF_INIT, fb = CUCO_STRBUF_INIT, why = CUCO_STRBUF_INIT;
	struct cuco_strbuf log = CUCO_STRBUF_INIT, last = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	struct cuco_llm_edit edit;
	struct cuco_llm_message msg;
	struct cuco_llm_call_opts co = {-1, -1, NULL};
	struct cuco_fastpath_verdict v;
	struct cuco_err e;
	char *previous = NULL, label[64];
	const char *S = stage_names[stage];
	int k = cfg->iterations > 0 ? cfg->iterations : CUCO_FASTPATH_AGENT_ITERATIONS;
	int rc = CUCO_OK, ok;

	cuco_llm_result_init(&res);
	cuco_llm_edit_init(&edit);
	*accepted = NULL;
	for (int it = 1; it <= k; it++) {
		a->out->attempts[stage] = it;
		cuco_strbuf_reset(&user);
		cuco_strbuf_reset(&why);
		cuco_strbuf_reset(&log);
		rc = build_prompt(cfg, stage, program, a->abi, a->guide, previous, fb.buf, &user,
		                  err);
		if (rc)
			goto out;
		snprintf(label, sizeof(label), "fastpath stage %s attempt %d/%d", S, it, k);
		say(cfg, "stage %s attempt %d/%d: asking %s", S, it, k, cfg->llm.model);
		msg.role = "user";
		msg.content = user.buf;
		cuco_err_clear(&e);
		rc = cuco_llm_chat(a->client, &msg, 1, &co, &res, &e);
		if (rc == CUCO_ERR_UNSUPPORTED) { /* budget: nothing was sent */
			rc = cuco_err_set(err, rc, "stage %s: %s", S, e.msg);
			goto out;
		}
		if (rc && res.truncated) {
			/* the endpoint works; the reply is cut off: rejected, with why as feedback
			 */
			cuco_strbuf_reset(&fb);
			cuco_strbuf_addf(&fb,
			                 "Your reply was cut off before its end (%s). Return the "
			                 "complete program, shorter: no explanations, no unchanged "
			                 "comments.\n",
			                 res.context_full ? "the server's context is full"
			                                  : "it reached max_tokens");
			cuco_strbuf_reset(&last);
			cuco_strbuf_addf(&last, "reply rejected: %s", e.msg);
			say(cfg, "stage %s attempt %d/%d: %s", S, it, k, last.buf);
			cuco_strbuf_addf(&why, "%s: reply rejected", label);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			continue;
		}
		if (rc) {
			cuco_strbuf_addf(&why, "%s: call failed", label);
			say(cfg, "stage %s attempt %d/%d: the call failed: %s", S, it, k, e.msg);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			cuco_strbuf_reset(&last);
			cuco_strbuf_addf(&last, "the call failed: %s", e.msg);
			continue; /* same prompt again */
		}
		/* The reply: a whole program, checked before nvcc sees it. */
		cuco_err_clear(&e);
		if (cuco_llm_reply_program(res.reply, stage == CUCO_FASTPATH_STAGE_B, cfg->ds,
		                           cfg->facts, &edit, &e)) {
			cuco_strbuf_reset(&fb);
			cuco_strbuf_addf(&fb, "Your reply was rejected before compiling: %s\n",
			                 edit.reason ? edit.reason : e.msg);
			cuco_strbuf_reset(&last);
			cuco_strbuf_addf(&last, "reply rejected: %s",
			                 edit.reason ? edit.reason : e.msg);
			say(cfg, "stage %s attempt %d/%d: %s", S, it, k, last.buf);
			cuco_strbuf_addf(&why, "%s: reply rejected", label);
			free(res.error);
			res.error = cuco_xstrdup(edit.reason ? edit.reason : e.msg);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			continue;
		}
		if (!check_program(cfg, stage, edit.code, &log)) {
			cuco_strbuf_reset(&fb);
			cuco_strbuf_addf(&fb, "Your program was rejected before compiling: %s\n",
			                 log.buf);
			cuco_strbuf_reset(&last);
			cuco_strbuf_addf(&last, "program rejected: %s", log.buf);
			say(cfg, "stage %s attempt %d/%d: %s", S, it, k, last.buf);
			cuco_strbuf_addf(&why, "%s: program rejected", label);
			free(res.error);
			res.error = cuco_xstrdup(log.buf);
			free(previous);
			previous = cuco_xstrdup(edit.code);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			continue;
		}
		/* Compile (real nvcc). */
		cuco_strbuf_reset(&log);
		rc = compile_one(cfg, stage, edit.code, &ok, &log, err);
		if (rc)
			goto out;
		free(previous);
		previous = cuco_xstrdup(edit.code);
		if (!ok) {
			cuco_strbuf_reset(&fb);
			cuco_strbuf_adds(&fb, "It does not compile. nvcc said:\n```\n");
			cuco_prompt_add_clipped(&fb, log.buf, MAX_LOG, 1);
			cuco_strbuf_adds(
			    &fb, "\n```\nFix every error and return the complete program.\n");
			cuco_strbuf_reset(&last);
			cuco_strbuf_adds(&last, "does not compile:\n");
			cuco_prompt_add_clipped(&last, log.buf, MAX_ERR, 1);
			say(cfg, "stage %s attempt %d/%d: nvcc failed", S, it, k);
			cuco_strbuf_addf(&why, "%s: does not compile", label);
			free(res.error);
			res.error = cuco_xstrdup(last.buf);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			continue;
		}
		say(cfg, "stage %s attempt %d/%d: compiles", S, it, k);
		/* Run and verify, unless this machine cannot. */
		memset(&v, 0, sizeof(v));
		v.code = CUCO_ERR_UNSUPPORTED;
		v.median_us = v.baseline_us = v.rel_err = NAN;
		if (!a->no_run && cfg->judge) {
			rc = cfg->judge(cfg->judge_arg, stage, cfg->file, edit.code, &v, err);
			if (rc)
				goto out;
		} else if (!cfg->judge) {
			snprintf(v.message, sizeof(v.message), "no run stage configured");
		} else {
			snprintf(v.message, sizeof(v.message), "%s", a->out->note);
		}
		if (v.code == CUCO_ERR_NO_GPU || v.code == CUCO_ERR_UNSUPPORTED) {
			if (!a->no_run) {
				snprintf(a->out->note, sizeof(a->out->note),
				         "not verified: verification needs >= %d GPUs (%s)",
				         cfg->ranks,
				         v.message[0] ? v.message : cuco_strerror(v.code));
				say(cfg, "%s; compile checks only from here", a->out->note);
			}
			a->no_run = 1;
		} else if (v.code != CUCO_OK) {
			cuco_strbuf_reset(&fb);
			verdict_feedback(&v, &fb);
			cuco_strbuf_reset(&last);
			cuco_strbuf_addf(&last, "run stage failed: %s",
			                 v.message[0] ? v.message : cuco_strerror(v.code));
			say(cfg, "stage %s attempt %d/%d: %s", S, it, k, last.buf);
			cuco_strbuf_addf(&why, "%s: run stage failed", label);
			free(res.error);
			res.error = cuco_xstrdup(last.buf);
			rc = store_call(cfg, a->out, &res, 0, why.buf, err);
			if (rc)
				goto out;
			continue;
		} else {
			say(cfg, "stage %s attempt %d/%d: verified", S, it, k);
		}
		/* Accepted. */
		*accepted = edit.code;
		edit.code = NULL;
		if (stage == CUCO_FASTPATH_STAGE_B) {
			a->final = v;
			free(a->out->directive_json);
			a->out->directive_json = edit.directive_json;
			edit.directive_json = NULL;
			free(a->out->flags);
			a->out->flags = edit.flags;
			edit.flags = NULL;
			a->pending = res; /* stored with the seed */
			cuco_llm_result_init(&res);
			a->out->calls++;
		} else {
			rc = store_call(cfg, a->out, &res, 0, NULL, err);
		}
		goto out;
	}
	rc = cuco_err_set(err, CUCO_ERR_INVALID,
	                  "stage %s: no acceptable program after %d attempts; the last: %s", S, k,
	                  last.len ? last.buf : "(none)");
out:
	cuco_llm_result_release(&res);
	cuco_llm_edit_release(&edit);
	cuco_strbuf_release(&user);
	cuco_strbuf_release(&fb);
	cuco_strbuf_release(&why);
	cuco_strbuf_release(&log);
	cuco_strbuf_release(&last);
	free(previous);
	return rc;
}

int cuco_fastpath_agent_run(const struct cuco_fastpath_agent_config *cfg,
                            struct cuco_fastpath_agent_result *out, struct cuco_err *err)
{
	struct cuco_strbuf abi = CUCO_STRBUF_INIT, guide = CUCO_STRBUF_INIT;
	struct agent a;
	int rc;

	cuco_fastpath_agent_result_release(out);
	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.out = out;
	cuco_llm_result_init(&a.pending);
	if (!cfg->file || !cfg->host_code || !cfg->share_dir || (cfg->store && !cfg->workload)) {
		rc = cuco_err_set(err, CUCO_ERR_USAGE,
		                  "fastpath agent: the host program, its text, the share folder "
		                  "and (with a store) the workload name are required");
		goto out;
	}
	if (cfg->abi_header) {
		cuco_strbuf_adds(&abi, cfg->abi_header);
	} else {
		const char *home = cuco_home(err);
		char path[PATH_MAX];

		if (!home) {
			rc = err->code ? err->code : CUCO_ERR_NOT_FOUND;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/include/cuco/program.h", home);
		if (cuco_strbuf_read_file(&abi, path)) {
			rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read the ABI header", path);
			goto out;
		}
	}
	rc = cuco_prompt_load(cfg->share_dir, "nccl_guide", &guide, NULL, err);
	if (rc)
		goto out;
	a.abi = abi.buf;
	a.guide = guide.buf;
	rc = cuco_llm_client_new(&cfg->llm, &a.client, err);
	if (rc)
		goto out;
	rc = run_stage(&a, CUCO_FASTPATH_STAGE_A, cfg->host_code, &out->stage_a, err);
	if (rc)
		goto out;
	rc = run_stage(&a, CUCO_FASTPATH_STAGE_B, out->stage_a, &out->seed, err);
	if (rc)
		goto out;
	out->verified = !a.no_run;
	if (out->verified)
		out->note[0] = '\0';
	if (cfg->store) {
		rc = store_seed(cfg, out, &a.final, err);
		if (rc)
			goto out;
		a.pending.purpose = "fastpath";
		rc = cuco_llm_result_store(cfg->store, &a.pending, cfg->run_id, out->program_id,
		                           NULL, err);
	}
	say(cfg, "seed ready (%s)", out->verified ? "verified" : out->note);
out:
	cuco_llm_result_release(&a.pending);
	cuco_llm_client_free(a.client);
	cuco_strbuf_release(&abi);
	cuco_strbuf_release(&guide);
	return rc;
}

/* ---- the run stage through the cascade ---- */

int cuco_fastpath_judge_cascade(void *arg, int stage, const char *path, const char *code,
                                struct cuco_fastpath_verdict *v, struct cuco_err *err)
{
	struct cuco_fastpath_cascade *c = arg;
	struct cuco_eval_program progs[2];
	struct cuco_eval_request req;
	struct cuco_eval_shape sh;
	struct cuco_strbuf base_src = CUCO_STRBUF_INIT;
	const struct cuco_manifest_program *b;
	const struct cuco_program_result *r;
	const struct cuco_shape *shapes[1];
	struct cuco_err e;
	int ngpu, rc = CUCO_OK, nprogs = 0;

	cuco_err_clear(&e);
	memset(&sh, 0, sizeof(sh));
	cuco_run_result_init(&sh.run);
	ngpu = cuco_gpu_count(&e);
	if (ngpu < c->run.ranks && !(c->run.launcher && *c->run.launcher)) {
		v->code = CUCO_ERR_NO_GPU;
		snprintf(v->message, sizeof(v->message),
		         "execution needs %d CUDA GPUs on this node; %s", c->run.ranks,
		         ngpu <= 0 ? "this machine has none" : "there are fewer");
		return CUCO_OK;
	}
	if (!c->m || !c->shape) {
		v->code = CUCO_ERR_UNSUPPORTED;
		snprintf(v->message, sizeof(v->message),
		         "a program file has no reference to verify against; give a workload "
		         "name instead of a file");
		return CUCO_OK;
	}
	b = cuco_manifest_program(c->m, "baseline");
	if (!b || cuco_strbuf_read_file(&base_src, b->file)) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "workload %s: cannot read its baseline",
		                  c->m->name);
		goto out;
	}
	cuco_eval_program_init(&progs[nprogs], "baseline", "baseline", b->file, base_src.buf, 1);
	for (int l = 0; l < b->nlibs && l < 3; l++)
		progs[nprogs].libs[l] = b->libs[l];
	nprogs++;
	cuco_eval_program_init(&progs[nprogs], "candidate",
	                       stage == CUCO_FASTPATH_STAGE_B ? "seed" : "file", path, code, 1);
	progs[nprogs++].job.trusted = 0; /* the model's code */
	memset(&req, 0, sizeof(req));
	shapes[0] = c->shape;
	req.m = c->m;
	req.shapes = shapes;
	req.nshapes = 1;
	req.progs = progs;
	req.nprogs = nprogs;
	req.run = c->run;
	rc = cuco_compile_opts_default(&req.compile, err);
	if (rc)
		goto out;
	rc = cuco_evaluate(&req, &sh, &e);
	if (rc == CUCO_ERR_NO_GPU) {
		v->code = CUCO_ERR_NO_GPU;
		snprintf(v->message, sizeof(v->message), "%s", e.msg);
		rc = CUCO_OK;
		goto out;
	}
	if (rc) {
		cuco_err_set(err, rc, "%s", e.msg);
		goto out;
	}
	r = cuco_eval_find(&sh, "baseline");
	if (r && r->code == CUCO_OK)
		v->baseline_us = r->median_us;
	if (progs[1].precheck_code) {
		v->code = progs[1].precheck_code;
		snprintf(v->message, sizeof(v->message), "%s", progs[1].precheck_error);
		goto out;
	}
	r = cuco_eval_find(&sh, "candidate");
	if (!r) {
		v->code = sh.code ? sh.code : CUCO_ERR_RUN;
		snprintf(v->message, sizeof(v->message), "%s\n%s",
		         sh.error[0] ? sh.error : "no result",
		         sh.run.log.len ? sh.run.log.buf : "");
		goto out;
	}
	v->code = r->code;
	v->median_us = r->median_us;
	v->rel_err = r->rel_err;
	if (r->code != CUCO_OK)
		snprintf(v->message, sizeof(v->message), "%s: %s\n%s", r->status,
		         r->error ? r->error : "", sh.run.log.len ? sh.run.log.buf : "");
out:
	for (int i = 0; i < nprogs; i++)
		cuco_eval_program_release(&progs[i]);
	cuco_eval_shape_release(&sh);
	cuco_strbuf_release(&base_src);
	return rc;
}
