/* prompt.c - load versioned prompt files and fill their {{placeholders}}. */
#include "llm/prompt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "cuco-prompt:"

static const char *lookup(const struct cuco_prompt_var *vars, int nvars, const char *name,
                          size_t len)
{
	int i;

	for (i = 0; i < nvars; i++)
		if (strlen(vars[i].name) == len && strncmp(vars[i].name, name, len) == 0)
			return vars[i].value ? vars[i].value : "";
	return NULL;
}

int cuco_prompt_render(const char *name, const char *tmpl, const struct cuco_prompt_var *vars,
                       int nvars, struct cuco_strbuf *out, struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	const char *p = tmpl, *open, *q, *value;
	int line = 1, ret = CUCO_OK;

	for (;;) {
		open = strstr(p, "{{");
		if (!open)
			break;
		for (q = p; q < open; q++)
			line += *q == '\n';
		cuco_strbuf_add(&sb, p, (size_t)(open - p));
		for (q = open + 2; isalnum((unsigned char)*q) || *q == '_'; q++)
			;
		if (q[0] != '}' || q[1] != '}' || q == open + 2) {
			ret = cuco_err_set(err, CUCO_ERR_INVALID,
			                   "%s:%d: '{{' does not open a placeholder {{name}}", name,
			                   line);
			goto out;
		}
		value = lookup(vars, nvars, open + 2, (size_t)(q - open - 2));
		if (!value) {
			ret = cuco_err_set(err, CUCO_ERR_INVALID, "%s:%d: {{%.*s}} has no value",
			                   name, line, (int)(q - open - 2), open + 2);
			goto out;
		}
		cuco_strbuf_adds(&sb, value);
		p = q + 2;
	}
	cuco_strbuf_adds(&sb, p);
	cuco_strbuf_add(out, sb.buf, sb.len);
out:
	cuco_strbuf_release(&sb);
	return ret;
}

int cuco_prompt_load(const char *share_dir, const char *name, struct cuco_strbuf *out, int *version,
                     struct cuco_err *err)
{
	struct cuco_strbuf path = CUCO_STRBUF_INIT, text = CUCO_STRBUF_INIT;
	const char *p, *nl, *end;
	long v;
	int ret = CUCO_OK;

	cuco_strbuf_addf(&path, "%s/prompts/%s.txt", share_dir, name);
	if (cuco_strbuf_read_file(&text, path.buf) != 0) {
		ret = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot read prompt: %s", path.buf,
		                   strerror(errno));
		goto out;
	}
	nl = strchr(text.buf, '\n');
	p = text.buf;
	if (!nl || strncmp(p, HEADER, strlen(HEADER)) != 0)
		goto bad;
	p += strlen(HEADER);
	while (*p == ' ')
		p++;
	if (strncmp(p, name, strlen(name)) != 0 || p[strlen(name)] != ' ')
		goto bad;
	p += strlen(name) + 1;
	if (*p != 'v')
		goto bad;
	errno = 0;
	v = strtol(p + 1, (char **)&end, 10);
	if (errno || end == p + 1 || v <= 0 || v > 1000000 || (end != nl && end[0] != '\r'))
		goto bad;
	if (version)
		*version = (int)v;
	cuco_strbuf_adds(out, nl + 1);
	goto out;
bad:
	ret = cuco_err_set(err, CUCO_ERR_PARSE,
	                   "%s:1:1: prompt: the first line must be `" HEADER " %s v<N>`", path.buf,
	                   name);
out:
	cuco_strbuf_release(&path);
	cuco_strbuf_release(&text);
	return ret;
}

int cuco_prompt_build(const char *share_dir, const char *name, const struct cuco_prompt_var *vars,
                      int nvars, struct cuco_strbuf *out, int *version, struct cuco_err *err)
{
	struct cuco_strbuf tmpl = CUCO_STRBUF_INIT;
	int ret;

	ret = cuco_prompt_load(share_dir, name, &tmpl, version, err);
	if (ret == CUCO_OK)
		ret = cuco_prompt_render(name, tmpl.buf, vars, nvars, out, err);
	cuco_strbuf_release(&tmpl);
	return ret;
}

void cuco_prompt_hardware(const struct cuco_hw_facts *f, struct cuco_strbuf *sb)
{
	if (!f) {
		cuco_strbuf_adds(sb, "Unknown; assume NVLink between all ranks and no GIN.\n");
		return;
	}
	cuco_strbuf_addf(sb, "- ranks: %d, one GPU each, %d SMs per GPU\n", f->nranks, f->sm_count);
	cuco_strbuf_addf(sb, "- LSA (load/store over NVLink) reaches %s\n",
	                 f->lsa_all_reachable ? "every peer" : "only some peers");
	cuco_strbuf_addf(sb, "- GIN (network) backend: %s\n",
	                 f->gin_capable ? "available"
	                                : "not available (no RDMA NIC): never use it");
}

void cuco_prompt_add_clipped(struct cuco_strbuf *sb, const char *s, size_t max, int tail)
{
	size_t n = strlen(s);

	if (n <= max) {
		cuco_strbuf_adds(sb, s);
		return;
	}
	if (tail) {
		cuco_strbuf_addf(sb, "[... %zu bytes cut ...]\n", n - max);
		cuco_strbuf_adds(sb, s + n - max);
	} else {
		cuco_strbuf_add(sb, s, max);
		cuco_strbuf_addf(sb, "\n[... %zu bytes cut ...]", n - max);
	}
}
