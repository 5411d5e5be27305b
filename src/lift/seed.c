/* seed.c - the seed of a lifted program (seed.h): the lift's tags become fast-path hints. */
#include "lift/seed.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/xalloc.h"

#define STEP_TAG "/*cuco:step*/"

int cuco_lift_is_lifted(const char *text)
{
	return text && strstr(text, "#include <cuco_dev/lift.cuh>") != NULL;
}

void cuco_lift_hints_release(struct cuco_lift_hints *h)
{
	for (size_t i = 0; i < h->n; i++)
		free((char *)h->v[i].call);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

int cuco_lift_hints(const char *name, const char *text, struct cuco_lift_hints *h,
                    struct cuco_fastpath_opts *opts, struct cuco_err *err)
{
	const char *s = text;
	size_t alloc = 0;
	int line = 1;

	memset(h, 0, sizeof(*h));
	/* every tag: the identifier right after it, at its line and column */
	for (const char *t = strstr(text, STEP_TAG); t; t = strstr(t + 1, STEP_TAG)) {
		const char *id = t + strlen(STEP_TAG), *bol;
		struct cuco_fastpath_hint *hint;
		size_t len = 0;
		for (; s < id; s++)
			line += *s == '\n';
		bol = id;
		while (bol > text && bol[-1] != '\n')
			bol--;
		while (isalnum((unsigned char)id[len]) || id[len] == '_')
			len++;
		if (!len)
			continue;
		hint = CUCO_ARRAY_PUSH(h->v, h->n, alloc);
		hint->call = cuco_xstrndup(id, len);
		hint->line = line;
		hint->column = (int)(id - bol) + 1;
	}
	if (!h->n)
		return cuco_err_set(
		    err, CUCO_ERR_NOT_FOUND,
		    "%s: no NCCL call of the step is marked /*cuco:step*/ (a lifted "
		    "program's host.cu names them)",
		    name);
	opts->hints = h->v;
	opts->nhints = (int)h->n;
	opts->tensors_expr = "cuco_lift_tensors()";
	opts->stream_expr = "0"; /* the legacy stream, which a run joins */
	return CUCO_OK;
}

int cuco_lift_seed(const char *name, const char *text, const char *share_dir,
                   struct cuco_strbuf *out, int *nsites, struct cuco_err *err)
{
	struct cuco_lift_hints h;
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report rep;
	int rc;

	cuco_fastpath_opts_init(&opts);
	opts.share_dir = share_dir;
	if ((rc = cuco_lift_hints(name, text, &h, &opts, err)))
		return rc;
	cuco_fastpath_report_init(&rep);
	rc = cuco_fastpath_transform(name, text, &opts, out, &rep, err);
	if (nsites)
		*nsites = rep.nsites;
	cuco_fastpath_report_release(&rep);
	cuco_lift_hints_release(&h);
	return rc;
}
