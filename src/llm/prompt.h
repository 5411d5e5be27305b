/*
 * prompt.h - prompts as versioned text files (share/prompts/<name>.txt) with
 * {{variable}} placeholders, so prompts change without recompiling and every
 * stored call can name the prompt version it used.
 *
 * A prompt file starts with one header line `cuco-prompt: <name> v<N>`, which
 * is not part of the text. A placeholder is `{{name}}` (letters, digits, _);
 * rendering fails on a placeholder without a value, so a typo never reaches a
 * model.
 */
#ifndef CUCO_LLM_PROMPT_H
#define CUCO_LLM_PROMPT_H

#include <stddef.h>

#include "program/directive.h"
#include "util/error.h"
#include "util/strbuf.h"

/* One placeholder value; strings borrowed. */
struct cuco_prompt_var {
	const char *name;
	const char *value;
};

/*
 * Render template text (header line already removed) into out, substituting
 * vars[0..nvars). Values are inserted as is (not re-scanned). name names the
 * template in messages. Returns CUCO_OK, or CUCO_ERR_INVALID naming the
 * first placeholder without a value (`name:line: {{x}} has no value`) or an
 * unclosed `{{`; out is then unchanged.
 */
int cuco_prompt_render(const char *name, const char *tmpl, const struct cuco_prompt_var *vars,
                       int nvars, struct cuco_strbuf *out, struct cuco_err *err);

/*
 * Read <share_dir>/prompts/<name>.txt, check its header and append its text
 * to out; *version (may be NULL) gets N. Returns CUCO_OK, CUCO_ERR_IO (cannot
 * read it) or CUCO_ERR_PARSE (no or a wrong header line).
 */
int cuco_prompt_load(const char *share_dir, const char *name, struct cuco_strbuf *out, int *version,
                     struct cuco_err *err);

/* cuco_prompt_load() then cuco_prompt_render() into out. Errors: theirs. */
int cuco_prompt_build(const char *share_dir, const char *name, const struct cuco_prompt_var *vars,
                      int nvars, struct cuco_strbuf *out, int *version, struct cuco_err *err);

/*
 * Append the machine facts as prompt text (ranks, SMs, LSA reach, GIN) to sb;
 * facts NULL appends a line saying they are unknown.
 */
void cuco_prompt_hardware(const struct cuco_hw_facts *facts, struct cuco_strbuf *sb);

/*
 * Append at most max bytes of s to sb (its tail when tail is 1, e.g. the end
 * of a compiler log; its head otherwise), noting how many bytes were cut.
 */
void cuco_prompt_add_clipped(struct cuco_strbuf *sb, const char *s, size_t max, int tail);

#endif
