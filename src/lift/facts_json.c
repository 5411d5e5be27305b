/* facts_json.c - the lift's facts as JSON, for tests, debugging and the planner's logs. */
#include <jansson.h>
#include <stdlib.h>

#include "lift/facts.h"

/* jansson's constructors return NULL only when out of memory: one check at the end. */
static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *pos(const struct cuco_lift_pos *p)
{
	if (p->file < 0)
		return json_null();
	return json_pack("{s:i, s:I, s:I, s:I}", "file", p->file, "offset", (json_int_t)p->offset,
	                 "line", (json_int_t)p->line, "column", (json_int_t)p->column);
}

static json_t *range(const struct cuco_lift_range *r)
{
	if (r->file < 0)
		return json_null();
	return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:I}", "file", r->file, "begin",
	                 (json_int_t)r->begin, "end", (json_int_t)r->end, "line",
	                 (json_int_t)r->line, "column", (json_int_t)r->column, "end_line",
	                 (json_int_t)r->end_line, "end_column", (json_int_t)r->end_column);
}

static json_t *args(const struct cuco_lift_arg *a, size_t n)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < n; i++) {
		json_t *o = json_pack("{s:o, s:o, s:o}", "text", str(a[i].text), "extent",
		                      range(&a[i].extent), "enumerator", str(a[i].enumerator));

		if (o && a[i].has_value)
			json_object_set_new(o, "value", json_integer((json_int_t)a[i].value));
		json_array_append_new(v, o);
	}
	return v;
}

static json_t *macro_use(int in_body, const struct cuco_lift_macro_use *m)
{
	if (!in_body)
		return json_null();
	return json_pack("{s:o, s:o, s:o}", "name", str(m->name), "site", range(&m->site),
	                 "definition", pos(&m->definition));
}

static json_t *files(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < f->nfiles; i++) {
		const struct cuco_lift_file *e = &f->files[i];

		json_array_append_new(
		    v, json_pack("{s:s, s:o, s:b, s:b, s:i, s:I, s:b}", "path", e->path, "rel",
		                 str(e->rel), "local", e->local, "parsed", e->parsed,
		                 "included_from", e->included_from, "include_line",
		                 (json_int_t)e->include_line, "patched", e->patched));
	}
	return v;
}

static json_t *includes(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < f->nincludes; i++) {
		const struct cuco_lift_include *e = &f->includes[i];

		json_array_append_new(v, json_pack("{s:i, s:I, s:s, s:b, s:i, s:o}", "file",
		                                   e->file, "line", (json_int_t)e->line, "name",
		                                   e->name, "angled", e->angled, "resolved",
		                                   e->resolved, "extent", range(&e->extent)));
	}
	return v;
}

static json_t *diags(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < f->ndiags; i++) {
		const struct cuco_lift_diag *d = &f->diags[i];

		json_array_append_new(v, json_pack("{s:s, s:o, s:s, s:o, s:i}", "severity",
		                                   cuco_lift_severity_name(d->severity), "pos",
		                                   pos(&d->pos), "message", d->message, "option",
		                                   str(d->option), "unit", d->unit));
	}
	return v;
}

static json_t *functions(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i, j;

	for (i = 0; v && i < f->nfunctions; i++) {
		const struct cuco_lift_function *fn = &f->functions[i];
		json_t *params = json_array();

		for (j = 0; params && j < fn->nparams; j++)
			json_array_append_new(params,
			                      json_pack("{s:s, s:s}", "name", fn->params[j].name,
			                                "type", fn->params[j].type));
		json_array_append_new(
		    v, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:b, s:b, s:b}", "name",
		                 fn->name, "qualified", fn->qualified, "usr", fn->usr, "kind",
		                 cuco_lift_fn_kind_name(fn->kind), "extent", range(&fn->extent),
		                 "body", range(&fn->body), "name_pos", pos(&fn->name_pos), "params",
		                 params, "main", fn->is_main, "template", fn->is_template, "method",
		                 fn->is_method));
	}
	return v;
}

static json_t *calls(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < f->ncalls; i++) {
		const struct cuco_lift_call *c = &f->calls[i];
		json_t *o = json_pack(
		    "{s:s, s:s, s:o, s:i, s:s, s:b, s:b, s:b, s:o, s:o, s:o, s:i, s:i, s:i, s:o}",
		    "callee", c->callee, "origin", cuco_lift_origin_name(c->origin), "decl",
		    pos(&c->decl), "function", c->function, "nccl", cuco_lift_nccl_name(c->nccl),
		    "host_collective", cuco_lift_call_is_host_collective(c), "method", c->is_method,
		    "constructor", c->is_constructor, "extent", range(&c->extent), "name",
		    pos(&c->name), "macro", macro_use(c->in_macro_body, &c->macro), "caller",
		    c->caller, "stmt", c->stmt, "loop", c->loop, "args", args(c->args, c->nargs));

		if (o && c->copies > 1)
			json_object_set_new(o, "copies", json_integer(c->copies));
		if (o && c->dest_root)
			json_object_set_new(o, "dest",
			                    json_pack("{s:s, s:o, s:o}", "root", c->dest_root,
			                              "type", str(c->dest_type), "pointee",
			                              str(c->dest_pointee)));
		json_array_append_new(v, o);
	}
	return v;
}

static json_t *launches(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i, j;

	for (i = 0; v && i < f->nlaunches; i++) {
		const struct cuco_lift_launch *l = &f->launches[i];
		json_t *cfg = json_array();

		for (j = 0; cfg && j < l->nconfig; j++)
			json_array_append_new(cfg,
			                      json_pack("{s:o, s:o}", "text", str(l->config[j]),
			                                "extent", range(&l->config_extent[j])));
		json_array_append_new(
		    v, json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:i}", "kernel",
		                 l->kernel, "function", l->function, "extent", range(&l->extent),
		                 "name", pos(&l->name), "macro",
		                 macro_use(l->in_macro_body, &l->macro), "config", cfg, "args",
		                 args(l->args, l->nargs), "caller", l->caller, "stmt", l->stmt,
		                 "loop", l->loop));
	}
	return v;
}

static json_t *stmts(const struct cuco_lift_facts *f)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; v && i < f->nstmts; i++) {
		const struct cuco_lift_stmt *s = &f->stmts[i];
		json_t *o = json_pack("{s:s, s:o, s:i, s:i, s:o, s:b}", "kind",
		                      cuco_lift_stmt_kind_name(s->kind), "extent",
		                      range(&s->extent), "parent", s->parent, "function",
		                      s->function, "macro", str(s->macro), "opaque", s->opaque);

		if (o && s->body.file >= 0)
			json_object_set_new(o, "body", range(&s->body));
		if (o && s->cond_text)
			json_object_set_new(o, "cond",
			                    json_pack("{s:s, s:o}", "text", s->cond_text, "extent",
			                              range(&s->cond)));
		if (o && s->induction)
			json_object_set_new(o, "induction", json_string(s->induction));
		if (o)
			json_object_set_new(o, "parent_loop", json_integer(s->parent_loop));
		if (o && (s->kind == CUCO_LIFT_STMT_BREAK || s->kind == CUCO_LIFT_STMT_CONTINUE ||
		          s->kind == CUCO_LIFT_STMT_RETURN))
			json_object_set_new(o, "target", json_integer(s->target));
		json_array_append_new(v, o);
	}
	return v;
}

static json_t *rest(const struct cuco_lift_facts *f, json_t **undefined, json_t **macros,
                    json_t **patches)
{
	json_t *threads = json_array();
	size_t i;

	*undefined = json_array();
	*macros = json_array();
	*patches = json_array();
	for (i = 0; threads && i < f->nthreads; i++)
		json_array_append_new(
		    threads, json_pack("{s:s, s:i, s:o}", "kind",
		                       cuco_lift_thread_kind_name(f->threads[i].kind), "call",
		                       f->threads[i].call, "entry", str(f->threads[i].entry)));
	for (i = 0; *undefined && i < f->nundefined; i++)
		json_array_append_new(*undefined,
		                      json_pack("{s:s, s:o, s:I}", "name", f->undefined[i].name,
		                                "decl", pos(&f->undefined[i].decl), "calls",
		                                (json_int_t)f->undefined[i].ncalls));
	for (i = 0; *macros && i < f->nmacros; i++)
		json_array_append_new(*macros,
		                      json_pack("{s:s, s:o, s:b}", "name", f->macros[i].name,
		                                "extent", range(&f->macros[i].extent),
		                                "function_like", f->macros[i].function_like));
	for (i = 0; *patches && i < f->npatches; i++)
		json_array_append_new(
		    *patches, json_pack("{s:o, s:s}", "extent", range(&f->patches[i].extent),
		                        "replacement", f->patches[i].replacement));
	return threads;
}

int cuco_lift_facts_json(const struct cuco_lift_facts *f, struct cuco_strbuf *out,
                         struct cuco_err *err)
{
	json_t *undefined = NULL, *macros = NULL, *patches = NULL, *threads, *o;
	char *s;

	threads = rest(f, &undefined, &macros, &patches);
	o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	              "root", str(f->root), "clang", str(f->clang_version), "files", files(f),
	              "includes", includes(f), "diagnostics", diags(f), "functions", functions(f),
	              "calls", calls(f), "launches", launches(f), "statements", stmts(f), "threads",
	              threads, "undefined", undefined, "macros", macros, "patches", patches,
	              "first_error", json_null());
	if (o) {
		const struct cuco_lift_diag *d = cuco_lift_first_error(f);

		if (d)
			json_object_set_new(o, "first_error",
			                    json_integer((json_int_t)(d - f->diags)));
	}
	s = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (!s)
		return cuco_err_set(err, CUCO_ERR_NOMEM, "out of memory writing the lift's facts");
	cuco_strbuf_adds(out, s);
	free(s);
	return CUCO_OK;
}
