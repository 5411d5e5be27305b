/* seed.c - the seed of a lifted program (seed.h): the lift's tags become fast-path hints. */
#include "lift/seed.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath/fastpath.h"
#include "util/array.h"
#include "util/xalloc.h"

#define STEP_TAG "/*cuco:step*/"

int cuco_lift_is_lifted(const char *text)
{
	return text && strstr(text, "#include <cuco_dev/lift.cuh>") != NULL;
}

int cuco_lift_seed(const char *name, const char *text, const char *share_dir,
                   struct cuco_strbuf *out, int *nsites, struct cuco_err *err)
{
	struct cuco_fastpath_hint *hints = NULL;
	char **calls = NULL;
	size_t n = 0, alloc = 0, calls_alloc = 0, ncalls = 0;
	struct cuco_fastpath_opts opts;
	struct cuco_fastpath_report rep;
	const char *s = text;
	int line = 1, rc;

	/* every tag: the identifier right after it, at its line and column */
	for (const char *t = strstr(text, STEP_TAG); t; t = strstr(t + 1, STEP_TAG)) {
		const char *id = t + strlen(STEP_TAG), *bol;
		struct cuco_fastpath_hint *h;
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
		h = CUCO_ARRAY_PUSH(hints, n, alloc);
		*CUCO_ARRAY_PUSH(calls, ncalls, calls_alloc) = cuco_xstrndup(id, len);
		h->line = line;
		h->column = (int)(id - bol) + 1;
	}
	for (size_t i = 0; i < n; i++)
		hints[i].call = calls[i];
	if (!n) {
		rc = cuco_err_set(err, CUCO_ERR_NOT_FOUND,
		                  "%s: no NCCL call of the step is marked /*cuco:step*/ (a lifted "
		                  "program's host.cu names them)",
		                  name);
		goto out;
	}
	cuco_fastpath_opts_init(&opts);
	opts.share_dir = share_dir;
	opts.hints = hints;
	opts.nhints = (int)n;
	opts.tensors_expr = "cuco_lift_tensors()";
	cuco_fastpath_report_init(&rep);
	rc = cuco_fastpath_transform(name, text, &opts, out, &rep, err);
	if (nsites)
		*nsites = rep.nsites;
	cuco_fastpath_report_release(&rep);
out:
	for (size_t i = 0; i < ncalls; i++)
		free(calls[i]);
	free(calls);
	free(hints);
	return rc;
}
