/*
 * facts.c - what this node offers, measured rather than assumed: the
 * harness's probe (the facts `cuco doctor` prints) turned into the hardware
 * facts that directives are checked against before anything compiles, and
 * the nvcc target that fits the GPUs.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "program/directive.h"
#include "util/paths.h"
#include "util/proc.h"

int cuco_probe_run(struct cuco_strbuf *out, struct cuco_err *err)
{
	char *argv[] = {(char *)cuco_harness_path(), "--probe", NULL};
	char ldpath[4200], *env[3] = {"NCCL_NVLS_ENABLE=0", NULL, NULL};
	struct cuco_strbuf log = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	int rc = CUCO_OK;

	env[1] = (char *)cuco_nccl_ld_path(ldpath, sizeof(ldpath));
	cuco_strbuf_reset(out);
	if (cuco_proc_run(argv, env, out, &log, 300, &st) || !st.exited)
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot run %s --probe (%s)", argv[0],
		                  st.timed_out ? "timed out" : "not built?");
	else if (!strchr(out->buf, '{'))
		rc = cuco_err_set(err, CUCO_ERR_RUN, "the probe gave no result; its log:\n%s",
		                  log.buf);
	cuco_strbuf_release(&log);
	return rc;
}

static int int_field(json_t *obj, const char *key, const char *where, long long *out,
                     struct cuco_err *err)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	if (!json_is_integer(v))
		return cuco_err_set(err, CUCO_ERR_PARSE, "probe result: %s%s: expected an integer",
		                    where, key);
	*out = json_integer_value(v);
	return CUCO_OK;
}

int cuco_hw_facts_parse(const char *json, int ranks, struct cuco_hw_facts *f, struct cuco_err *err)
{
	json_error_t je;
	json_t *root = json ? json_loads(json, JSON_DISABLE_EOF_CHECK, &je) : NULL, *gpus, *lsa, *g;
	long long gin = 0, v = 0;
	int rc = CUCO_OK;
	size_t i;

	memset(f, 0, sizeof(*f));
	f->nranks = ranks;
	if (!root || !json_is_object(root)) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "probe result: not a JSON object (%s)",
		                  root   ? "another JSON value"
		                  : json ? je.text
		                         : "no text");
		goto out;
	}
	gpus = json_object_get(root, "gpus");
	if (!json_is_array(gpus)) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "probe result: gpus: expected an array");
		goto out;
	}
	json_array_foreach(gpus, i, g)
	{
		const char *cc = json_string_value(json_object_get(g, "cc"));
		char where[32];
		int major, minor;

		snprintf(where, sizeof(where), "gpus[%zu].", i);
		if ((rc = int_field(g, "sm_count", where, &v, err)))
			goto out;
		if (!cc || sscanf(cc, "%d.%d", &major, &minor) != 2 || major < 1 || minor < 0 ||
		    minor > 9) {
			rc = cuco_err_set(err, CUCO_ERR_PARSE,
			                  "probe result: %scc: expected \"major.minor\"", where);
			goto out;
		}
		if (v > 0 && (f->sm_count == 0 || v < f->sm_count))
			f->sm_count = (int)v;
		if (f->cc == 0 || 10 * major + minor < f->cc)
			f->cc = 10 * major + minor;
	}
	f->gpus = (int)json_array_size(gpus);
	if ((rc = int_field(root, "gin_contexts", "", &gin, err)))
		goto out;
	f->gin_capable = gin > 0;
	lsa = json_object_get(root, "lsa");
	/* null: not tested, which the probe does only with one GPU or none */
	f->lsa_all_reachable = json_is_true(lsa) || (json_is_null(lsa) && ranks < 2);
	if (f->gpus < ranks)
		rc = cuco_err_set(err, CUCO_ERR_NO_GPU,
		                  "this node has %d CUDA GPU%s; programs of %d ranks need %d",
		                  f->gpus, f->gpus == 1 ? "" : "s", ranks, ranks);
out:
	json_decref(root);
	return rc;
}

int cuco_hw_facts_probe(int ranks, struct cuco_hw_facts *f, struct cuco_err *err)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	int rc = cuco_probe_run(&out, err);

	if (rc == CUCO_OK)
		rc = cuco_hw_facts_parse(strchr(out.buf, '{'), ranks, f, err);
	else {
		memset(f, 0, sizeof(*f));
		f->nranks = ranks;
	}
	cuco_strbuf_release(&out);
	return rc;
}

const char *cuco_hw_facts_describe(const struct cuco_hw_facts *f, char *buf, size_t len)
{
	snprintf(buf, len, "%d rank%s, %d SMs, sm_%d, LSA: %s, GIN: %s", f->nranks,
	         f->nranks == 1 ? "" : "s", f->sm_count, f->cc,
	         f->lsa_all_reachable ? "all ranks" : "not all ranks",
	         f->gin_capable ? "yes" : "no");
	return buf;
}

const char *cuco_arch_for_cc(int cc, char *buf, size_t len)
{
	if (cc == 90 || cc <= 0)
		snprintf(buf, len, "90a");
	else
		snprintf(buf, len, "%d", cc);
	return buf;
}
