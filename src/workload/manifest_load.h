/*
 * manifest_load.h - what manifest.c and shape.c share while a manifest loads
 * (private to src/workload/): the text for positions in errors, the field
 * helpers (manifest_load.c), and the shape sections' parsers (shape.c, knobs.c).
 */
#ifndef CUCO_WORKLOAD_MANIFEST_LOAD_H
#define CUCO_WORKLOAD_MANIFEST_LOAD_H

#include <jansson.h>

#include "util/jsonpos.h"
#include "workload/model.h"

/* A manifest being loaded. */
struct mload {
	struct cuco_json_src src; /* the manifest's text, for errors */
	struct cuco_manifest *m;
};

/* A C identifier: parameter and knob names. */
int cuco_manifest_is_ident(const char *s);

/* Workload, program and shape names: letters, digits, '_', '-', '.'; not starting with '.'. */
int cuco_manifest_is_name(const char *s, int allow_dot);

/* Required (or optional, *out = NULL when absent) string member. */
int cuco_manifest_get_string(struct mload *L, const json_t *obj, const char *key, const char *field,
                             int required, const char **out);

/* A member of obj not in known: an error naming it (a misspelt field is never ignored). */
int cuco_manifest_check_unknown(struct mload *L, const json_t *obj, const char *prefix,
                                const char *const *known, int nknown, const char *what);

/* Line and column of the value at field (a path such as "shapes[1].K"). */
void cuco_manifest_position(struct mload *L, const char *field, int *line, int *col);

/* The manifest's "knobs" (optional section) into L->m: knobs_json and nknobs. */
int cuco_manifest_parse_knobs(struct mload *L, const json_t *root);

/* The manifest's "shape_rules" into L->m (optional section). */
int cuco_manifest_parse_rules(struct mload *L, const json_t *root);

/* The manifest's "params" (the shape parameters' names) into L->m. */
int cuco_manifest_parse_params(struct mload *L, const json_t *root);

/* The manifest's "shapes" and "default_shape" into L->m (after its params); a shape's own
 * "argv" kept unchecked. */
int cuco_manifest_parse_shapes(struct mload *L, const json_t *root);

/* The manifest's "argv" into L->m, and every shape's template checked (after its shapes and
 * ranks). */
int cuco_manifest_parse_argv(struct mload *L, const json_t *root);

#endif
