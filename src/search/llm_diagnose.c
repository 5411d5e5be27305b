/*
 * llm_diagnose.c - a model's diagnosis of a failed or slower child (see
 * llm_diagnose.h): the prompt from the child's evaluation, log and code, the
 * call, and its storage beside the evaluation.
 */
#include "search/llm_diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/prompt.h"
#include "util/array.h"
#include "util/xalloc.h"

#define SIBLINGS 2 /* diagnoses of earlier children shown in a prompt */

int cuco_llm_diagnosis_due(int correct, double fitness, double parent_fitness)
{
	if (!correct)
		return 1;
	return isfinite(fitness) && isfinite(parent_fitness) && parent_fitness > 0 &&
	       fitness < parent_fitness;
}

void cuco_llm_add_blocks(struct cuco_strbuf *sb, const char *code, size_t max)
{
	struct cuco_strbuf blocks = CUCO_STRBUF_INIT;
	const char *p = code;

	while ((p = strstr(p, "EVOLVE-BLOCK-START"))) {
		const char *end = strstr(p, "EVOLVE-BLOCK-END"), *bol = p;
		while (bol > code && bol[-1] != '\n')
			bol--;
		if (!end)
			break;
		end += strlen("EVOLVE-BLOCK-END");
		cuco_strbuf_add(&blocks, bol, (size_t)(end - bol));
		cuco_strbuf_adds(&blocks, "\n");
		p = end;
	}
	cuco_prompt_add_clipped(sb, blocks.len ? blocks.buf : code, max, 0);
	cuco_strbuf_release(&blocks);
}

/* The latest evaluation of a program, copied out of the walk. */
struct latest {
	int64_t id;
	char *stage, *status, *error, *log, *diagnosis;
	double median_us, fitness, rel_err;
};

static void latest_release(struct latest *l)
{
	free(l->stage);
	free(l->status);
	free(l->error);
	free(l->log);
	free(l->diagnosis);
	memset(l, 0, sizeof(*l));
}

static char *dup_or_null(const char *s)
{
	return s ? cuco_xstrdup(s) : NULL;
}

static int latest_one(const struct cuco_eval_rec *ev, void *arg, struct cuco_err *err)
{
	struct latest *l = arg;
	const char *log = ev->compile_log && *ev->compile_log ? ev->compile_log : ev->run_log;

	(void)err;
	latest_release(l);
	l->id = ev->id;
	l->stage = dup_or_null(ev->stage_reached);
	l->status = dup_or_null(ev->status);
	l->error = dup_or_null(ev->error);
	l->log = dup_or_null(log);
	l->diagnosis = dup_or_null(ev->diagnosis);
	l->median_us = ev->median_us;
	l->fitness = ev->fitness;
	l->rel_err = ev->rel_err;
	return 0;
}

/* Head and tail of log, CUCO_LLM_DIAGNOSIS_LOG bytes at most, into sb. */
static void add_head_tail(struct cuco_strbuf *sb, const char *log)
{
	size_t n = strlen(log), half = CUCO_LLM_DIAGNOSIS_LOG / 2;

	if (n <= CUCO_LLM_DIAGNOSIS_LOG) {
		cuco_strbuf_adds(sb, log);
		return;
	}
	cuco_strbuf_add(sb, log, half);
	cuco_strbuf_addf(sb, "\n[... %zu bytes cut ...]\n", n - 2 * half);
	cuco_strbuf_adds(sb, log + n - half);
}

/* The diagnosis from a reply: trimmed, at most CUCO_LLM_DIAGNOSIS_MAX bytes. */
static char *diagnosis_text(const char *reply, int cut_off)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	size_t n;

	while (*reply == ' ' || *reply == '\n' || *reply == '\r' || *reply == '\t')
		reply++;
	n = strlen(reply);
	while (n && (reply[n - 1] == ' ' || reply[n - 1] == '\n' || reply[n - 1] == '\r' ||
	             reply[n - 1] == '\t'))
		n--;
	if (n > CUCO_LLM_DIAGNOSIS_MAX) {
		n = CUCO_LLM_DIAGNOSIS_MAX;
		cut_off = 1;
	}
	cuco_strbuf_add(&sb, reply, n);
	if (cut_off)
		cuco_strbuf_adds(&sb, " [cut off]");
	return cuco_strbuf_detach(&sb, NULL);
}

/* The prompt of a diagnosis of program p, whose latest evaluation is l, into user. */
static int build_prompt(const struct cuco_llm_diagnose_args *a, const struct cuco_program_rec *p,
                        const struct latest *l, struct cuco_strbuf *user, struct cuco_err *err)
{
	struct cuco_strbuf outcome = CUCO_STRBUF_INIT, ev = CUCO_STRBUF_INIT,
	                   log = CUCO_STRBUF_INIT, code = CUCO_STRBUF_INIT;
	char *redacted;
	int rc;

	if (a->correct)
		cuco_strbuf_addf(&outcome,
		                 "was correct but slower than its parent (fitness %.4f against "
		                 "the parent's %.4f; fitness is baseline latency / latency)",
		                 a->fitness, a->parent_fitness);
	else
		cuco_strbuf_addf(&outcome, "failed at stage %s (status %s)",
		                 l->stage ? l->stage : "?", l->status ? l->status : "?");
	cuco_strbuf_addf(&ev, "- stage reached: %s, status: %s\n", l->stage ? l->stage : "?",
	                 l->status ? l->status : "?");
	if (isfinite(l->median_us))
		cuco_strbuf_addf(&ev, "- median latency: %.2f us\n", l->median_us);
	if (isfinite(l->rel_err))
		cuco_strbuf_addf(&ev, "- max relative error against the reference: %.3g\n",
		                 l->rel_err);
	if (l->error && *l->error) {
		cuco_strbuf_adds(&ev, "- error: ");
		cuco_prompt_add_clipped(&ev, l->error, CUCO_LLM_DIAGNOSIS_LOG / 2, 0);
		cuco_strbuf_adds(&ev, "\n");
	}
	if (l->log && *l->log)
		add_head_tail(&log, l->log);
	else
		cuco_strbuf_adds(&log, "(no log was kept)");
	cuco_strbuf_addf(&code, "%s\n", p->directive ? p->directive : "(no directive)");
	cuco_llm_add_blocks(&code, p->code, CUCO_LLM_DIAGNOSIS_CODE);
	/* programs never get the key; a log is redacted all the same before it leaves */
	redacted = cuco_llm_client_redact(a->client, log.buf);
	{
		const struct cuco_prompt_var vars[] = {
		    {"workload", a->workload}, {"outcome", outcome.buf}, {"evaluation", ev.buf},
		    {"log", redacted},         {"code", code.buf},
		};
		rc = cuco_prompt_build(a->share_dir, "diagnose", vars, 5, user, NULL, err);
	}
	free(redacted);
	cuco_strbuf_release(&outcome);
	cuco_strbuf_release(&ev);
	cuco_strbuf_release(&log);
	cuco_strbuf_release(&code);
	return rc;
}

int cuco_llm_diagnose(const struct cuco_llm_diagnose_args *a, struct cuco_llm_result *res,
                      struct cuco_err *err)
{
	struct cuco_strbuf user = CUCO_STRBUF_INIT;
	struct cuco_program_rec p;
	struct cuco_llm_message msg;
	struct cuco_llm_call_opts co = {a->temperature, a->max_tokens, a->model};
	struct latest l;
	struct cuco_err e2;
	char *text = NULL, why[96];
	int rc, call;

	memset(&l, 0, sizeof(l));
	cuco_program_rec_init(&p);
	cuco_llm_result_release(res);
	if (cuco_llm_client_budget(a->client)->exhausted)
		return CUCO_OK;
	if ((rc = cuco_store_program_get(a->store, a->program_id, &p, err)) ||
	    (rc = cuco_store_eval_each_program(a->store, a->program_id, latest_one, &l, err)))
		goto out;
	if (!l.id) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "diagnosis: program %lld has no evaluation",
		                  (long long)a->program_id);
		goto out;
	}
	if ((rc = build_prompt(a, &p, &l, &user, err)))
		goto out;
	msg.role = "user";
	msg.content = user.buf;
	cuco_err_clear(&e2);
	call = cuco_llm_chat(a->client, &msg, 1, &co, res, &e2);
	if (call == CUCO_ERR_UNSUPPORTED) /* the budget: nothing was sent; the run stops later */
		goto out;
	res->purpose = CUCO_LLM_DIAGNOSIS_PURPOSE;
	snprintf(why, sizeof(why), "diagnosis of %s", p.name ? p.name : "a child");
	if (call == CUCO_OK || (res->truncated && res->reply && *res->reply))
		text = diagnosis_text(res->reply, call != CUCO_OK);
	if (call != CUCO_OK)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), " %s",
		         text ? "cut off (kept)" : "failed");
	if ((rc = cuco_store_begin(a->store, err)))
		goto out;
	rc = cuco_llm_result_store_why(a->store, res, a->run_id, a->program_id,
	                               call != CUCO_OK ? why : NULL, err);
	if (!rc && text)
		rc = cuco_store_eval_set_diagnosis(a->store, l.id, text, err);
	if (rc)
		cuco_store_rollback(a->store, NULL);
	else
		rc = cuco_store_commit(a->store, err);
out:
	free(text);
	latest_release(&l);
	cuco_program_rec_release(&p);
	cuco_strbuf_release(&user);
	return rc;
}

/* The children of a program, oldest first. */
struct kids {
	struct kid {
		int64_t id;
		char *name;
	} * a;
	int n;
	size_t alloc;
};

static int kid_one(const struct cuco_program_rec *p, void *arg, struct cuco_err *err)
{
	struct kids *k = arg;
	struct kid *kid = CUCO_ARRAY_PUSH(k->a, k->n, k->alloc);

	(void)err;
	kid->id = p->id;
	kid->name = cuco_xstrdup(p->name ? p->name : "?");
	return 0;
}

int cuco_llm_diagnoses_of_children(struct cuco_store *store, int64_t program_id,
                                   struct cuco_strbuf *out, struct cuco_err *err)
{
	struct kids k;
	int rc, shown = 0;

	memset(&k, 0, sizeof(k));
	if ((rc = cuco_store_program_each_child(store, program_id, kid_one, &k, err)))
		goto out;
	for (int i = k.n - 1; i >= 0 && shown < SIBLINGS; i--) {
		struct latest l;

		memset(&l, 0, sizeof(l));
		if ((rc = cuco_store_eval_each_program(store, k.a[i].id, latest_one, &l, err))) {
			latest_release(&l);
			goto out;
		}
		if (l.diagnosis && *l.diagnosis) {
			if (!shown)
				cuco_strbuf_adds(out,
				                 "- what went wrong in earlier children of this "
				                 "program (a model's diagnosis of each):\n");
			cuco_strbuf_addf(out, "  - %s (%s at stage %s):\n", k.a[i].name,
			                 l.status && strcmp(l.status, "ok") ? "failed" : "slower",
			                 l.stage ? l.stage : "?");
			cuco_prompt_add_clipped(out, l.diagnosis, CUCO_LLM_DIAGNOSIS_MAX, 0);
			cuco_strbuf_adds(out, "\n");
			shown++;
		}
		latest_release(&l);
	}
out:
	for (int i = 0; i < k.n; i++)
		free(k.a[i].name);
	free(k.a);
	return rc;
}
