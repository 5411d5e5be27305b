/*
 * lift_dump.c - print the lift's facts about a program as JSON: a
 * developer's view of what src/lift/scan.c finds.
 *
 *   lift_dump [--root DIR] [--overlay DIR] [-I DIR]... [-D NAME[=V]]... [SOURCE...]
 *
 * No SOURCE: every source under --root (or its compile_commands.json).
 */
#include <stdio.h>
#include <string.h>

#include "lift/scan.h"
#include "util/strbuf.h"

#define MAX_LIST 64

int main(int argc, char **argv)
{
	const char *srcs[MAX_LIST], *incs[MAX_LIST], *defs[MAX_LIST];
	struct cuco_lift_scan_opts o;
	struct cuco_lift_facts f;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_err err = {0};
	int i, rc;

	memset(&o, 0, sizeof(o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (i + 1 < argc && !strcmp(a, "--root"))
			o.root = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "--overlay"))
			o.overlay_dir = argv[++i];
		else if (i + 1 < argc && !strcmp(a, "-I") && o.ninclude_dirs < MAX_LIST)
			incs[o.ninclude_dirs++] = argv[++i];
		else if (!strncmp(a, "-I", 2) && a[2] && o.ninclude_dirs < MAX_LIST)
			incs[o.ninclude_dirs++] = a + 2;
		else if (i + 1 < argc && !strcmp(a, "-D") && o.ndefines < MAX_LIST)
			defs[o.ndefines++] = argv[++i];
		else if (!strncmp(a, "-D", 2) && a[2] && o.ndefines < MAX_LIST)
			defs[o.ndefines++] = a + 2;
		else if (a[0] != '-' && o.nsources < MAX_LIST)
			srcs[o.nsources++] = a;
		else {
			fprintf(stderr, "usage: lift_dump [--root DIR] [--overlay DIR] [-I DIR] "
			                "[-D NAME[=V]] [SOURCE...]\n");
			return 2;
		}
	}
	o.sources = srcs;
	o.include_dirs = incs;
	o.defines = defs;
	cuco_lift_facts_init(&f);
	rc = cuco_lift_scan(&o, &f, &err);
	if (rc == 0)
		rc = cuco_lift_facts_json(&f, &out, &err);
	if (rc == 0)
		printf("%s\n", out.buf);
	else
		fprintf(stderr, "lift_dump: %s\n", err.msg);
	cuco_strbuf_release(&out);
	cuco_lift_facts_release(&f);
	return rc;
}
