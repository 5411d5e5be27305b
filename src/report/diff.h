/*
 * diff.h - the report's text, the lowest file of src/report: a line diff and
 * HTML escaping (the report's other files build on them; report.h includes
 * this for its callers).
 */
#ifndef CUCO_REPORT_DIFF_H
#define CUCO_REPORT_DIFF_H

#include "util/strbuf.h"

/*
 * A unified diff of text a against text b, line by line (LCS), with 3 lines
 * of context and "@@ -l,n +l,n @@" hunk headers, appended to out; nothing
 * when they are equal. Lines start with ' ', '-' or '+'.
 */
void cuco_report_diff(const char *a, const char *b, struct cuco_strbuf *out);

/* Append s to sb with &, <, >, " and ' escaped for HTML text and attributes. */
void cuco_report_escape(struct cuco_strbuf *sb, const char *s);

#endif
