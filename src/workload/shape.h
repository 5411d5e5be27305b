/*
 * shape.h - a manifest's shapes (shape.c): looked up by name or given by
 * their values, checked against the shape rules, and the programs' command
 * line for one. manifest.h includes it for its users.
 */
#ifndef CUCO_WORKLOAD_SHAPE_H
#define CUCO_WORKLOAD_SHAPE_H

#include "util/error.h"
#include "util/strbuf.h"
#include "workload/model.h"

/*
 * Whether shape sh (one of m's) meets every shape rule on `ranks` ranks (1:
 * the whole shape on one GPU). CUCO_OK, or CUCO_ERR_INVALID with
 * `manifest:line:column: shapes[i].P: ...` naming the value, the rank count,
 * the rule and its why.
 */
int cuco_manifest_check_shape(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                              struct cuco_err *err);

/* The shape called name, or NULL. Points into m. */
const struct cuco_shape *cuco_manifest_shape(const struct cuco_manifest *m, const char *name);

/* Shapes a manifest can take by their values (cuco_manifest_shape_spec). */
#define CUCO_MANIFEST_SPEC_SHAPES 8

/*
 * The shape `text` names: one of m's by name, or one given by its values,
 * "4096x14784x8192" (every parameter, in params order) or
 * "M=4096,N=14784,K=8192" (every parameter once, any order); the values of
 * one of m's shapes give that shape. Other values are added to m (at most CUCO_MANIFEST_SPEC_SHAPES
 * of them; the same values give the same shape) under its values joined by 'x', and must meet the
 * shape rules that do not depend on the rank count. Pointers to m's shapes stay valid. NULL with
 * err naming the text, the parameters and m's shapes when it is neither.
 */
const struct cuco_shape *cuco_manifest_shape_spec(struct cuco_manifest *m, const char *text,
                                                  struct cuco_err *err);

/*
 * tmpl with every {NAME} (NAME an identifier) replaced: {ranks} by ranks, {P} by sh's parameter
 * P; any other text, braces included, is kept. Into out (appended). 0, or -1 with the first
 * NAME that is neither in bad (out then unspecified).
 */
int cuco_manifest_argv_expand(const char *tmpl, const struct cuco_shape *sh, int ranks,
                              struct cuco_strbuf *out, char *bad, size_t badlen);

/*
 * The programs' command line for shape sh (one of m's) on `ranks` ranks: sh's "argv" template,
 * else the manifest's, expanded (cuco_manifest_argv_expand) into out (reset first; "" when
 * neither is given). CUCO_OK, or CUCO_ERR_INVALID with err naming the manifest and the shape
 * when it names an unknown parameter or is longer than cuco_shape.argv holds.
 */
int cuco_manifest_argv(const struct cuco_manifest *m, const struct cuco_shape *sh, int ranks,
                       struct cuco_strbuf *out, struct cuco_err *err);

#endif
