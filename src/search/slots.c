/*
 * slots.c - several candidate groups evaluated at once, one forked process
 * per GPU slot (see slots.h).
 */
#define _GNU_SOURCE
#include "search/slots.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "farm/slurm.h"
#include "util/proc.h"
#include "util/xalloc.h"

void cuco_slots_plan(int gpus, int ranks, int max_slots, const char *visible, struct cuco_slots *s)
{
	char ids[CUCO_MAX_SLOTS * 8][16];
	int n = ranks > 0 && gpus >= ranks ? gpus / ranks : 1, nids = 0;

	if (max_slots > 0 && n > max_slots)
		n = max_slots;
	if (n > CUCO_MAX_SLOTS)
		n = CUCO_MAX_SLOTS;
	/* the caller's own device list, when it has one, names the GPUs */
	for (const char *p = visible; p && *p && nids < (int)(sizeof(ids) / sizeof(ids[0]));) {
		size_t len = strcspn(p, ",");
		snprintf(ids[nids++], sizeof(ids[0]), "%.*s", (int)len, p);
		p += len + (p[len] == ',');
	}
	if (nids && nids < n * ranks)
		n = nids / ranks > 0 ? nids / ranks : 1;
	memset(s, 0, sizeof(*s));
	s->n = n;
	for (int k = 0; n > 1 && k < n; k++) {
		size_t len = 0;
		for (int g = k * ranks; g < (k + 1) * ranks; g++) {
			char num[16];
			snprintf(num, sizeof(num), "%d", g);
			len +=
			    (size_t)snprintf(s->devices[k] + len, sizeof(s->devices[k]) - len,
			                     "%s%s", g > k * ranks ? "," : "", nids ? ids[g] : num);
		}
	}
}

/* "slot 1 (GPUs 2,3)", or "slot 1" for a slot that inherits (a farm's step). */
static const char *label(const struct cuco_slots *s, int k, char *buf, size_t len)
{
	if (s->devices[k][0])
		snprintf(buf, len, "slot %d (GPUs %s)", k, s->devices[k]);
	else
		snprintf(buf, len, "slot %d", k);
	return buf;
}

/* NaN travels as null: JSON has no NaN. */
static json_t *real_or_null(double x)
{
	return isnan(x) ? json_null() : json_real(x);
}

static double real_of(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *outcome_json(const struct cuco_eval_outcome *o)
{
	return json_pack("{s:i,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:s?,s:s?,s:s,s:s?}", "code",
	                 o->code, "status", o->status, "stage", o->stage, "fitness",
	                 real_or_null(o->fitness), "median_us", real_or_null(o->median_us),
	                 "mean_us", real_or_null(o->mean_us), "p90_us", real_or_null(o->p90_us),
	                 "baseline_us", real_or_null(o->baseline_us), "rel_err",
	                 real_or_null(o->rel_err), "error", o->error, "log", o->log, "gpu", o->gpu,
	                 "result_json", o->result_json);
}

static void outcome_from_json(const json_t *j, struct cuco_eval_outcome *o)
{
	const char *s;

	o->code = (int)json_integer_value(json_object_get(j, "code"));
	if ((s = json_string_value(json_object_get(j, "status"))))
		snprintf(o->status, sizeof(o->status), "%s", s);
	if ((s = json_string_value(json_object_get(j, "stage"))))
		snprintf(o->stage, sizeof(o->stage), "%s", s);
	if ((s = json_string_value(json_object_get(j, "gpu"))))
		snprintf(o->gpu, sizeof(o->gpu), "%s", s);
	o->fitness = real_of(json_object_get(j, "fitness"));
	if (isnan(o->fitness))
		o->fitness = 0;
	o->median_us = real_of(json_object_get(j, "median_us"));
	o->mean_us = real_of(json_object_get(j, "mean_us"));
	o->p90_us = real_of(json_object_get(j, "p90_us"));
	o->baseline_us = real_of(json_object_get(j, "baseline_us"));
	o->rel_err = real_of(json_object_get(j, "rel_err"));
	free(o->error);
	free(o->log);
	free(o->result_json);
	s = json_string_value(json_object_get(j, "error"));
	o->error = cuco_xstrdup(s);
	s = json_string_value(json_object_get(j, "log"));
	o->log = cuco_xstrdup(s);
	s = json_string_value(json_object_get(j, "result_json"));
	o->result_json = cuco_xstrdup(s);
}

/*
 * In the forked process: evaluate one group, write {"rc", "error", "outcomes"}
 * to fd (a file without a name, close-on-exec: no child of the group holds it
 * and no path leads to it).
 */
static void run_group(const struct cuco_slots *s, int k, cuco_slot_batch_fn fn, void *ctx,
                      const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs, int fd)
{
	struct cuco_err e;
	json_t *doc, *arr;
	int rc;

	if (s->devices[k][0])
		setenv("CUDA_VISIBLE_DEVICES", s->devices[k], 1);
	cuco_err_clear(&e);
	rc = fn(ctx, c, n, outs, &e);
	if (!rc && (cuco_farm_interrupted() || cuco_farm_gave_up()))
		rc = cuco_err_set(&e, CUCO_ERR_SYSTEM, "%s",
		                  cuco_farm_interrupted()
		                      ? "interrupted: its steps were cancelled"
		                      : "the farm gave up on a step (lost for the node's reason "
		                        "too often); see the log above");
	doc = json_pack("{s:i,s:s}", "rc", rc, "error", rc ? e.msg : "");
	arr = json_array();
	for (int i = 0; doc && arr && !rc && i < n; i++)
		json_array_append_new(arr, outcome_json(&outs[i]));
	if (!doc || !arr || json_object_set_new(doc, "outcomes", arr) ||
	    json_dumpfd(doc, fd, JSON_COMPACT))
		_exit(3);
	_exit(0); /* no atexit handlers, no stdio flush twice, the store untouched */
}

/* Read group k's outcomes (fd, from its start) into outs; CUCO_OK or its error. */
static int collect(int fd, int k, const struct cuco_slots *s, int n, struct cuco_eval_outcome *outs,
                   struct cuco_err *err)
{
	json_error_t je;
	json_t *doc = lseek(fd, 0, SEEK_SET) == 0 ? json_loadfd(fd, 0, &je) : NULL, *arr;

	if (!doc && errno == ESPIPE)
		snprintf(je.text, sizeof(je.text), "%s", strerror(errno));
	char lab[96];
	int rc;

	if (!doc)
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "%s: unreadable outcomes: %s",
		                    label(s, k, lab, sizeof(lab)), je.text);
	rc = (int)json_integer_value(json_object_get(doc, "rc"));
	arr = json_object_get(doc, "outcomes");
	if (rc) {
		cuco_err_set(err, rc, "%s: %s", label(s, k, lab, sizeof(lab)),
		             json_string_value(json_object_get(doc, "error")));
	} else if (!json_is_array(arr) || json_array_size(arr) != (size_t)n) {
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "%s: %zu outcomes for %d",
		                  label(s, k, lab, sizeof(lab)),
		                  json_is_array(arr) ? json_array_size(arr) : 0, n);
	} else {
		for (int i = 0; i < n; i++)
			outcome_from_json(json_array_get(arr, (size_t)i), &outs[i]);
	}
	json_decref(doc);
	return rc;
}

int cuco_slots_run(const struct cuco_slots *s, cuco_slot_batch_fn fn, void *ctx,
                   const struct cuco_candidate *c, int n, struct cuco_eval_outcome *outs,
                   struct cuco_err *err)
{
	int groups = s->n < n ? s->n : n, first[CUCO_MAX_SLOTS + 1], rc = CUCO_OK, forwarded = 0;
	int fd[CUCO_MAX_SLOTS];
	pid_t pid[CUCO_MAX_SLOTS], parent = getpid();

	if (groups <= 1)
		return fn(ctx, c, n, outs, err);
	for (int k = 0; k <= groups; k++) /* sizes n / groups, the first n % groups one more */
		first[k] = k * (n / groups) + (k < n % groups ? k : n % groups);
	for (int k = 0; k < groups; k++) {
		pid[k] = -1;
		fd[k] = -1;
	}
	fflush(NULL); /* nothing buffered is written twice */
	for (int k = 0; k < groups; k++) {
		/* in memory, no name: nothing a candidate reaches by a path (a symbolic link in
		 * its place would make cuco write where the link points) */
		if ((fd[k] = memfd_create("cuco-slot", MFD_CLOEXEC)) < 0) {
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "slot %d: outcome file: %s", k,
			                  strerror(errno));
			break;
		}
		/* No other thread's half-made pipe goes with the child (util/proc.h). */
		cuco_proc_fork_lock();
		pid[k] = fork();
		cuco_proc_fork_unlock();
		if (pid[k] == 0) {
			/* a slot dies with cuco, even by kill -9 (and its harness with it) */
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(3);
		}
		if (pid[k] == 0)
			run_group(s, k, fn, ctx, c + first[k], first[k + 1] - first[k],
			          outs + first[k], fd[k]);
		if (pid[k] < 0) {
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "slot %d: fork: %s", k,
			                  strerror(errno));
			break;
		}
	}
	for (int k = 0; k < groups; k++) {
		int status = 0, krc = CUCO_OK;
		struct cuco_err e;
		char lab[96];

		cuco_err_clear(&e);
		if (pid[k] > 0) {
			while (waitpid(pid[k], &status, 0) < 0 && errno == EINTR)
				if (cuco_farm_interrupted() && !forwarded) {
					/* Each group cancels its own steps. */
					forwarded = 1;
					for (int j = k; j < groups; j++) /* not yet reaped */
						if (pid[j] > 0)
							kill(pid[j], SIGTERM);
				}
			if (WIFSIGNALED(status))
				krc = cuco_err_set(&e, CUCO_ERR_SYSTEM, "%s died: signal %d",
				                   label(s, k, lab, sizeof(lab)), WTERMSIG(status));
			else if (WEXITSTATUS(status))
				krc = cuco_err_set(&e, CUCO_ERR_SYSTEM,
				                   "%s could not write its outcomes",
				                   label(s, k, lab, sizeof(lab)));
			else
				krc = collect(fd[k], k, s, first[k + 1] - first[k], outs + first[k],
				              &e);
		}
		if (fd[k] >= 0)
			close(fd[k]);
		if (krc && !rc) {
			rc = krc;
			*err = e;
		}
	}
	return rc;
}
