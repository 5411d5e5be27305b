/* reply.c - a model's reply as a candidate: its directive first, then its code. */
#include "llm/reply.h"
#include "llm/reply_internal.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "program/blocks.h"

/* --- modes, outcome ------------------------------------------------------------------ */

static const char *const mode_names[] = {NULL, "diff", "rewrite", "crossover"};

const char *cuco_llm_mode_name(int mode)
{
	if (mode < CUCO_LLM_MODE_DIFF || mode > CUCO_LLM_MODE_CROSSOVER)
		return NULL;
	return mode_names[mode];
}

int cuco_llm_mode_parse(const char *name, int *mode, struct cuco_err *err)
{
	int i;

	for (i = CUCO_LLM_MODE_DIFF; i <= CUCO_LLM_MODE_CROSSOVER; i++)
		if (name && strcmp(name, mode_names[i]) == 0) {
			*mode = i;
			return CUCO_OK;
		}
	return cuco_err_set(err, CUCO_ERR_INVALID,
	                    "unknown mutation kind '%s'; use diff, rewrite or crossover",
	                    name ? name : "");
}

void cuco_llm_edit_init(struct cuco_llm_edit *e)
{
	memset(e, 0, sizeof(*e));
	cuco_directive_init(&e->directive);
}

void cuco_llm_edit_release(struct cuco_llm_edit *e)
{
	if (!e)
		return;
	free(e->code);
	cuco_directive_release(&e->directive);
	free(e->directive_json);
	free(e->notes);
	free(e->reason);
	free(e->flags);
	cuco_llm_edit_init(e);
}

/* --- the directive --------------------------------------------------------------------- */

/* Parse "// cuco-directive: <json>" built from text into d. */
static int parse_directive_text(const char *json, size_t len, struct cuco_directive *d,
                                struct cuco_err *err)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int ret;

	cuco_strbuf_adds(&sb, "// " CUCO_DIRECTIVE_TAG " ");
	cuco_strbuf_add(&sb, json, len);
	cuco_strbuf_addch(&sb, '\n');
	ret = cuco_directive_parse("reply", sb.buf, d, err);
	cuco_strbuf_release(&sb);
	return ret;
}

/* A ```json fence's object as directive JSON text (the object or its "directive"), or NULL. */
static char *fence_directive(const char *text, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr), *d;
	char *out = NULL;

	if (!json_is_object(root))
		goto out;
	d = json_object_get(root, "directive");
	if (!json_is_object(d))
		d = root;
	if (!json_object_get(d, "backend"))
		goto out;
	out = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
	json_decref(root);
	return out;
}

/*
 * Directive of an LF reply split into L: the first directive line or ```json
 * directive fence. *line_out gets its index.
 */
static int find_directive(const struct lines *L, struct cuco_directive *d, int *line_out,
                          struct cuco_err *err)
{
	const char *lang, *json;
	size_t lang_len, len;
	int i, j, ret;

	for (i = 0; i < L->n; i++) {
		json = cuco_reply_directive_json_on(&L->v[i], &len);
		if (json) {
			*line_out = i;
			return parse_directive_text(json, len, d, err);
		}
		if (cuco_reply_is_fence(&L->v[i], &lang, &lang_len) &&
		    cuco_reply_is_json_lang(lang, lang_len)) {
			const char *b;
			char *dj;

			for (j = i + 1; j < L->n && !cuco_reply_is_fence(&L->v[j], NULL, NULL); j++)
				;
			if (j >= L->n)
				break;
			b = i + 1 < j ? L->v[i + 1].p : L->v[j].p;
			dj = fence_directive(b, (size_t)(L->v[j].p - b));
			if (dj) {
				*line_out = i;
				ret = parse_directive_text(dj, strlen(dj), d, err);
				free(dj);
				return ret;
			}
			i = j;
		}
	}
	return cuco_err_set(err, CUCO_ERR_NOT_FOUND,
	                    "no directive in the reply: state it first, as a line `// "
	                    "cuco-directive: {\"backend\":...}` or a ```json block");
}

int cuco_llm_reply_directive(const char *reply, struct cuco_directive *d, size_t *pos,
                             struct cuco_err *err)
{
	struct cuco_strbuf lf = CUCO_STRBUF_INIT;
	struct lines L;
	int line = 0, ret;

	cuco_directive_init(d);
	cuco_reply_to_lf(reply, &lf);
	cuco_reply_split_lines(lf.buf, &L);
	ret = find_directive(&L, d, &line, err);
	if (ret == CUCO_OK && pos) {
		/* map back to the original text: count line starts */
		const char *p = reply;
		int k;

		for (k = 0; k < line && p; k++) {
			p = strchr(p, '\n');
			if (p)
				p++;
		}
		*pos = p ? (size_t)(p - reply) : 0;
	}
	free(L.v);
	cuco_strbuf_release(&lf);
	return ret;
}

/* Index of the first line of L that is code: a SEARCH marker, an EVOLVE marker, or fenced code. */
static int first_code_line(const struct lines *L)
{
	const char *lang;
	size_t lang_len, len;
	int i, in_fence = 0, json_fence = 0;

	for (i = 0; i < L->n; i++) {
		if (cuco_reply_is_fence(&L->v[i], &lang, &lang_len)) {
			in_fence = !in_fence;
			json_fence = in_fence && cuco_reply_is_json_lang(lang, lang_len);
			continue;
		}
		if (IS_SEARCH(&L->v[i]) || cuco_reply_is_evolve_marker(&L->v[i]))
			return i;
		if (in_fence && !json_fence && !cuco_reply_is_blank_line(&L->v[i]) &&
		    !cuco_reply_directive_json_on(&L->v[i], &len))
			return i;
	}
	return L->n;
}

/* --- the whole thing ----------------------------------------------------------------- */

static int reject(struct cuco_llm_edit *out, struct cuco_err *err, int code, const char *why)
{
	free(out->code);
	out->code = NULL;
	free(out->reason);
	out->reason = cuco_xstrdup(why);
	return cuco_err_set(err, code, "%s", why);
}

/*
 * The directive found at reply line dline_idx must come before the code and
 * (with ds) lie in the design space; on success its canonical JSON goes to
 * out->directive_json. Returns CUCO_OK or a rejection (reason in out and err).
 */
static int accept_directive(const struct lines *L, int dline_idx, struct cuco_llm_edit *out,
                            const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                            struct cuco_err *err)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;
	struct cuco_err e;
	int i = first_code_line(L), rc, ret = CUCO_OK;

	if (i < dline_idx) {
		cuco_strbuf_addf(
		    &why,
		    "directive: stated at reply line %d, after the code that starts at "
		    "line %d; state the directive first, then the code",
		    dline_idx + 1, i + 1);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (ds) {
		cuco_err_clear(&e);
		rc = cuco_directive_validate(&out->directive, ds, facts, &e);
		if (rc != CUCO_OK) {
			cuco_strbuf_addf(&why, "directive: %s", e.msg);
			ret = reject(out, err, rc, why.buf);
			goto out;
		}
	}
	out->directive_json = cuco_directive_to_json(&out->directive);
out:
	cuco_strbuf_release(&why);
	return ret;
}

int cuco_llm_reply_apply(const char *file, const char *parent, const char *reply, int mode,
                         const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                         struct cuco_llm_edit *out, struct cuco_err *err)
{
	struct cuco_strbuf rlf = CUCO_STRBUF_INIT, plf = CUCO_STRBUF_INIT, text = CUCO_STRBUF_INIT;
	struct cuco_strbuf why = CUCO_STRBUF_INIT, notes = CUCO_STRBUF_INIT;
	struct cuco_strbuf flags = CUCO_STRBUF_INIT, final = CUCO_STRBUF_INIT,
	                   mc = CUCO_STRBUF_INIT;
	struct cuco_directive check;
	struct cuco_err e;
	struct lines L = {NULL, 0};
	char *dline = NULL;
	int ret = CUCO_OK, dline_idx = -1, nedits = 0, rc;

	cuco_llm_edit_release(out);
	cuco_directive_init(&check);
	if (!file)
		file = "<parent>";
	if (!cuco_llm_mode_name(mode)) {
		ret = reject(out, err, CUCO_ERR_INVALID, "unknown mutation kind");
		goto out;
	}
	cuco_reply_to_lf(reply ? reply : "", &rlf);
	cuco_reply_to_lf(parent, &plf);
	cuco_reply_split_lines(rlf.buf, &L);

	/* 1. the directive, first */
	cuco_err_clear(&e);
	rc = find_directive(&L, &out->directive, &dline_idx, &e);
	if (rc != CUCO_OK) {
		cuco_strbuf_addf(&why, "directive: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	ret = accept_directive(&L, dline_idx, out, ds, facts, err);
	if (ret)
		goto out;

	/* 2. the code */
	if (mode == CUCO_LLM_MODE_DIFF) {
		int nfuzzy = 0;

		cuco_strbuf_add(&text, plf.buf, plf.len);
		rc = cuco_reply_diff(file, &L, &text, &nedits, &nfuzzy, &notes, &why);
		if (rc != CUCO_OK) {
			ret = reject(out, err, rc, why.buf);
			goto out;
		}
		out->nfuzzy = nfuzzy;
	} else {
		if (cuco_reply_rewrite(file, plf.buf, &L, &text, &nedits, &why)) {
			/* unterminated fences and missing code are a malformed reply */
			ret = reject(out, err,
			             strstr(why.buf, "never closed") ||
			                     strstr(why.buf, "no code blocks")
			                 ? CUCO_ERR_PARSE
			                 : CUCO_ERR_INVALID,
			             why.buf);
			goto out;
		}
	}
	out->nedits = nedits;

	/* 3. belt and braces: nothing outside the blocks moved, markers intact */
	if (cuco_blocks_check_edit(file, plf.buf, text.buf, &e) != CUCO_OK) {
		cuco_strbuf_addf(&why, "the edit changes text outside the EVOLVE-BLOCKs: %s",
		                 e.msg);
		ret = reject(out, err, CUCO_ERR_INVALID, why.buf);
		goto out;
	}
	if (cuco_reply_uses_multicast(text.buf, &mc)) {
		ret = reject(out, err, CUCO_ERR_INVALID, mc.buf);
		goto out;
	}

	/* 4. the stated directive replaces the parent's */
	dline = cuco_directive_to_line(&out->directive);
	cuco_reply_set_directive_line(&text, dline);
	rc = cuco_directive_parse(file, text.buf, &check, &e);
	if (rc != CUCO_OK) {
		cuco_strbuf_addf(&why, "the candidate's directive line: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (cuco_llm_directive_check_code(&out->directive, text.buf, &flags) > 0)
		out->flags = cuco_strbuf_detach(&flags, NULL);
	if (cuco_reply_uses_crlf(parent))
		cuco_reply_to_crlf(text.buf, &final);
	else
		cuco_strbuf_add(&final, text.buf, text.len);
	out->code = cuco_strbuf_detach(&final, NULL);
	out->notes = cuco_strbuf_detach(&notes, NULL);
	cuco_err_clear(err);
out:
	free(L.v);
	free(dline);
	cuco_directive_release(&check);
	cuco_strbuf_release(&rlf);
	cuco_strbuf_release(&plf);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&why);
	cuco_strbuf_release(&notes);
	cuco_strbuf_release(&flags);
	cuco_strbuf_release(&final);
	cuco_strbuf_release(&mc);
	return ret;
}

int cuco_llm_reply_program(const char *reply, int need_directive,
                           const struct cuco_design_space *ds, const struct cuco_hw_facts *facts,
                           struct cuco_llm_edit *out, struct cuco_err *err)
{
	struct cuco_strbuf rlf = CUCO_STRBUF_INIT, text = CUCO_STRBUF_INIT, why = CUCO_STRBUF_INIT;
	struct cuco_strbuf flags = CUCO_STRBUF_INIT, notes = CUCO_STRBUF_INIT,
	                   mc = CUCO_STRBUF_INIT;
	struct lines L = {NULL, 0};
	struct fence *f = NULL;
	struct cuco_err e;
	char *dline = NULL;
	int ret = CUCO_OK, dline_idx = -1, nf = 0, best = 0, have_directive = 0, i, rc;

	cuco_llm_edit_release(out);
	cuco_reply_to_lf(reply ? reply : "", &rlf);
	cuco_reply_split_lines(rlf.buf, &L);

	/* 1. the directive, first (stage A may leave it out) */
	cuco_err_clear(&e);
	rc = find_directive(&L, &out->directive, &dline_idx, &e);
	if (rc == CUCO_OK) {
		have_directive = 1;
	} else if (rc != CUCO_ERR_NOT_FOUND || need_directive) {
		cuco_strbuf_addf(&why, "directive: %s", e.msg);
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (have_directive) {
		ret = accept_directive(&L, dline_idx, out, ds, facts, err);
		if (ret)
			goto out;
	}

	/* 2. the program: one fenced block (the longest when there are several) */
	if (cuco_reply_collect_fences(&L, &f, &nf, &why)) {
		ret = reject(out, err, CUCO_ERR_PARSE, why.buf);
		goto out;
	}
	if (nf == 0) {
		ret = reject(out, err, CUCO_ERR_PARSE,
		             "no code block in the reply; give the complete program in one "
		             "```cuda fenced block");
		goto out;
	}
	for (i = 1; i < nf; i++)
		if (f[i].body.n > f[best].body.n)
			best = i;
	if (nf > 1)
		cuco_strbuf_addf(&notes,
		                 "the reply has %d code blocks; took the longest (reply line %d)\n",
		                 nf, f[best].open + 1);
	cuco_reply_add_lines(&text, &f[best].body);
	if (cuco_reply_uses_multicast(text.buf, &mc)) {
		ret = reject(out, err, CUCO_ERR_INVALID, mc.buf);
		goto out;
	}

	/* 3. the stated directive is the program's */
	if (have_directive) {
		dline = cuco_directive_to_line(&out->directive);
		cuco_reply_set_directive_line(&text, dline);
		if (cuco_llm_directive_check_code(&out->directive, text.buf, &flags) > 0)
			out->flags = cuco_strbuf_detach(&flags, NULL);
	}
	out->nedits = 1;
	out->code = cuco_strbuf_detach(&text, NULL);
	out->notes = cuco_strbuf_detach(&notes, NULL);
	cuco_err_clear(err);
out:
	free(L.v);
	free(f);
	free(dline);
	cuco_strbuf_release(&rlf);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&why);
	cuco_strbuf_release(&flags);
	cuco_strbuf_release(&notes);
	cuco_strbuf_release(&mc);
	return ret;
}
