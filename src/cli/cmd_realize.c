/* cmd_realize.c - `cuco realize`: a complete program from a directive,
 * through the workload's template (what the built-in operator does for
 * each child), so hand-picked directives need no hand-written files. */
#define _GNU_SOURCE /* strcasestr */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "program/directive.h"
#include "program/realize.h"
#include "util/paths.h"

static const char usage[] =
    "usage: cuco realize <workload> (--directive JSON | --directive-file FILE) [-o FILE]\n"
    "\n"
    "Render the program that a directive names through the workload's template\n"
    "(a package's own template.cu.in, else <cuco home>/share/realize/<workload>.cu.in),\n"
    "after validating the directive against the design space. The workload is a name,\n"
    "or a package folder (./mywork, or mywork when that folder is here). FILE for --directive-file "
    "holds the JSON or a\n"
    "program whose first line is the directive. Writes to stdout without -o.\n";

struct realize_args {
	const char *json, *file, *out;
	const char *pos[1];
	int npos;
};

static const struct cli_flag realize_flags[] = {
    {CLI_STRING, "--directive", "JSON", "the directive, as JSON",
     CLI_AT(struct realize_args, json)},
    {CLI_STRING, "--directive-file", "FILE",
     "a file holding the directive's JSON, or a program whose first line is the directive",
     CLI_AT(struct realize_args, file)},
    {CLI_STRING, "-o", "FILE", "where to write the program (default: stdout)",
     CLI_AT(struct realize_args, out)},
    {CLI_END},
};

const struct cli_spec cmd_realize_spec = {
    .name = "realize",
    .usage = usage,
    .flags = realize_flags,
    .args_size = sizeof(struct realize_args),
    .pos = offsetof(struct realize_args, pos),
    .npos = offsetof(struct realize_args, npos),
    .max_pos = 1,
};

/* 1 when the template gives knob name a default where it uses it ({{name:VALUE}}). */
static int has_default(const char *tmpl, const char *name)
{
	char pat[CUCO_NAME_MAX + 4];

	snprintf(pat, sizeof(pat), "{{%s:", name);
	return strcasestr(tmpl, pat) != NULL;
}

/*
 * Every knob the template uses without a default of its own that d leaves
 * unset (a fast-path seed's directive sets only the seed's knobs) set from
 * the design space's default, said on stderr in one line.
 */
static int complete(struct cuco_directive *d, const struct cuco_design_space *ds, const char *tmpl,
                    struct cuco_err *err)
{
	struct cuco_directive all;
	struct cuco_genes g;
	int rc, n = 0, before = d->nknobs;

	memset(&g, 0, sizeof(g));
	cuco_directive_copy(&all, d);
	if ((rc = cuco_realize_template_knobs(tmpl, ds, &g, &all, err)))
		goto out;
	for (int k = before; k < all.nknobs; k++) { /* those it added, in order */
		const struct cuco_directive_knob *x = &all.knobs[k];
		if (has_default(tmpl, x->name))
			continue;
		if (cuco_directive_set_knob(d, x->name, x->value, x->is_bool)) {
			rc = cuco_err_set(err, CUCO_ERR_INVALID, "directive has too many knobs");
			goto out;
		}
		if (!n++)
			fprintf(stderr, "cuco realize: knobs the directive leaves unset take their "
			                "defaults:");
		fprintf(stderr, " %s=%lld", x->name, x->value);
	}
	if (n)
		fputc('\n', stderr);
out:
	cuco_directive_release(&all);
	return rc;
}

int cmd_realize(int argc, char **argv)
{
	struct cuco_err err;
	struct cuco_strbuf text = CUCO_STRBUF_INIT, tmpl = CUCO_STRBUF_INIT, out = CUCO_STRBUF_INIT;
	struct cuco_directive d;
	struct cuco_design_space ds;
	const char *workload = NULL, *json = NULL, *file = NULL, *out_path = NULL, *home;
	char path[PATH_MAX];
	struct realize_args a = {0};
	struct cuco_manifest m;
	int rc, have_d = 0, have_ds = 0, have_m = 0;

	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_realize_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	json = a.json;
	file = a.file;
	out_path = a.out;
	workload = a.npos ? a.pos[0] : NULL;
	if (!workload)
		return cli_usage_error("realize", "which workload?");
	if (!json == !file)
		return cli_usage_error("realize", "give one of --directive or --directive-file");
	home = cuco_home(&err);
	if (!home)
		return cli_fail(&err);
	if (json) {
		cuco_strbuf_addf(&text, "// cuco-directive: %s\n", json);
	} else if (cuco_strbuf_read_file(&text, file)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", file, strerror(errno));
		goto fail;
	} else if (text.len && text.buf[0] == '{') {
		/* A bare JSON file: make it a directive line for the parser. */
		struct cuco_strbuf line = CUCO_STRBUF_INIT;
		cuco_strbuf_rtrim(&text);
		cuco_strbuf_addf(&line, "// cuco-directive: %s\n", text.buf);
		cuco_strbuf_release(&text);
		text = line;
	}
	if ((rc = cuco_directive_parse(json ? "--directive" : file, text.buf, &d, &err)))
		goto fail;
	have_d = 1;
	snprintf(path, sizeof(path), "%s/share/design_space.json", home);
	if ((rc = cuco_design_space_load(path, &ds, &err)))
		goto fail;
	have_ds = 1;
	if ((rc = cli_load_workload(workload, &m, &err)))
		goto fail;
	have_m = 1;
	if (!cli_template_of(&m, path, sizeof(path))) {
		rc = cuco_err_set(&err, CUCO_ERR_NOT_FOUND,
		                  "workload %s has no template (%s/template.cu.in or "
		                  "share/realize/%s.cu.in)",
		                  m.name, m.dir, m.name);
		goto fail;
	}
	if (cuco_strbuf_read_file(&tmpl, path)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/* What the template realizes, so an unsupported value is refused here, by name. */
	if ((rc = cuco_design_space_narrow(&ds, path, tmpl.buf, &err)) ||
	    (rc = complete(&d, &ds, tmpl.buf, &err)) ||
	    (rc = cuco_directive_validate(&d, &ds, NULL, &err)))
		goto fail;
	if ((rc = cuco_realize_template(path, tmpl.buf, &d, &out, &err)))
		goto fail;
	if (!out_path) {
		fwrite(out.buf, 1, out.len, stdout);
	} else if (cuco_write_file(out_path, out.buf, out.len)) {
		rc = cuco_err_set(&err, CUCO_ERR_IO, "cannot write %s: %s", out_path,
		                  strerror(errno));
		goto fail;
	}
	goto out;
fail:
	cli_fail(&err);
out:
	if (have_d)
		cuco_directive_release(&d);
	if (have_ds)
		cuco_design_space_release(&ds);
	if (have_m)
		cuco_manifest_release(&m);
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&tmpl);
	cuco_strbuf_release(&out);
	return rc;
}
