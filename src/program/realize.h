/*
 * realize.h - realise a directive as a complete program: narrow the design
 * space to what a template realises (its cuco-realizes line), fill the
 * template's {{...}} placeholders from the directive, or rewrite the
 * fast-path seed's directive line and CUCO_SEED_<KNOB> defines.
 */
#ifndef CUCO_REALIZE_H
#define CUCO_REALIZE_H

#include "program/design_space.h"
#include "program/directive.h"
#include "util/error.h"
#include "util/strbuf.h"

/*
 * Narrow ds to what a realiser supports. text (a program template, shown as
 * name in messages) may hold one line "// cuco-realizes: {...}" whose JSON
 * object maps a dimension to the array of its values the template realises
 * and "knobs" to {knob: {"values": [...]}} (enum knobs: the values kept) or
 * {knob: {"min": a, "max": b}} (int knobs: the range kept), and "inert" to
 * {condition: {dimension or knob: value}}, the condition a placement
 * ("stream_overlap"), "dimension=value" ("backend=ce") or "knob=value"
 * ("device_signal=true"; a bool knob takes true or false, an int or enum knob
 * an integer it allows): the genes the template ignores there, each with its
 * canonical value (kept in ds->inert; see cuco_directive_canonicalize()).
 * Neither the placement nor the condition's own dimension or knob can be inert.
 * Everything named must be allowed by ds and by the line's own narrowing.
 * No such line: ds is unchanged. Returns
 * CUCO_OK or CUCO_ERR_PARSE / CUCO_ERR_INVALID with `name:line: cuco-realizes:
 * field: message` in err; ds is then unchanged.
 */
int cuco_design_space_narrow(struct cuco_design_space *ds, const char *name, const char *text,
                             struct cuco_err *err);

/*
 * Realise directive d through a template: replace every {{NAME}} or
 * {{NAME:default}} with
 *   DIRECTIVE       the directive line ("// cuco-directive: {...}")
 *   DIRECTIVE_JSON  the canonical directive JSON
 *   a dimension     its value, e.g. {{placement}} -> stream_overlap, and
 *                   upper-cased when the name is, {{PLACEMENT}} -> STREAM_OVERLAP
 *   a knob          its integer value (true/false as 1/0); names match in any case
 * A template without {{DIRECTIVE}} gets the directive line prepended. Appends
 * to out. Returns CUCO_OK, or CUCO_ERR_INVALID naming template_name:line for
 * an unknown placeholder, a knob the directive does not set and that has no
 * default, or an unterminated "{{"; out is then unchanged.
 */
int cuco_realize_template(const char *template_name, const char *template_text,
                          const struct cuco_directive *d, struct cuco_strbuf *out,
                          struct cuco_err *err);

/*
 * Knobs the template refers to, added to g (which keeps its dimensions); with
 * d non-NULL also sets in d every such knob that d lacks, from the
 * placeholder's default or else the knob's default in ds
 * (cuco_design_space_knob_default()). Returns
 * CUCO_OK or CUCO_ERR_INVALID (a placeholder that is not a knob of ds, too many knobs).
 */
int cuco_realize_template_knobs(const char *template_text, const struct cuco_design_space *ds,
                                struct cuco_genes *g, struct cuco_directive *d,
                                struct cuco_err *err);

/*
 * Realise d from the fast-path seed: its directive line replaced by d's and
 * each line "#define CUCO_SEED_<KNOB> <value>" set to d's value of that knob.
 * Appends to out. Returns CUCO_OK, or CUCO_ERR_PARSE when the seed has no
 * directive line.
 */
int cuco_realize_seed(const char *seed_code, const struct cuco_directive *d,
                      struct cuco_strbuf *out, struct cuco_err *err);

/*
 * Knobs the seed exposes as "#define CUCO_SEED_<KNOB>" lines that are knobs of
 * ds, into names[0..*n) (at most max).
 */
void cuco_realize_seed_knobs(const char *seed_code, const struct cuco_design_space *ds,
                             char names[][CUCO_NAME_MAX], int max, int *n);

#endif
