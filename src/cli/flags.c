/* flags.c - the command-line tables: parsing and --help from one list (see flags.h). */
#include "cli/flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define MAX_ENTRIES 128 /* entries of one command, included tables flattened */
#define HELP_WIDTH 80   /* --help wraps its lines at this column */
#define LABEL_MAX 26    /* a longer "  --flag ARG" puts its help on the next line */

/* One entry of a flattened table: where its offsets count from, and whether it was given. */
struct entry {
	const struct cli_flag *f;
	size_t base;
	int given;
};

static int flatten(const struct cli_flag *t, size_t base, struct entry *e, int n)
{
	for (; t->kind != CLI_END && n >= 0; t++) {
		if (t->kind == CLI_TABLE) {
			n = flatten(t->table, base + t->offset, e, n);
			continue;
		}
		if (n == MAX_ENTRIES)
			return -1;
		e[n].f = t;
		e[n].base = base;
		e[n].given = 0;
		n++;
	}
	return n;
}

static int is_flag(const struct cli_flag *f)
{
	return f->kind != CLI_HEADING && f->kind != CLI_TEXT && f->kind != CLI_ARG;
}

/* The first flag entry named name (its first len characters), or NULL. */
static struct entry *find(struct entry *e, int n, const char *name, size_t len)
{
	for (int i = 0; i < n; i++)
		if (is_flag(e[i].f) && strlen(e[i].f->name) == len &&
		    !strncmp(e[i].f->name, name, len))
			return &e[i];
	return NULL;
}

/* Whether e[i] is listed: the first of its name, neither hidden nor refused. */
static int listed(struct entry *e, int i)
{
	const struct cli_flag *f = e[i].f;

	return is_flag(f) && !f->hidden && f->kind != CLI_REFUSE &&
	       find(e, i, f->name, strlen(f->name)) == NULL;
}

static __attribute__((format(printf, 3, 4))) int fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return CUCO_ERR_USAGE;
}

/* "expected a, b or c" for values. */
static void expected(const char *const *values, char *out, size_t len)
{
	size_t at = (size_t)snprintf(out, len, "expected");

	for (int i = 0; values[i] && at < len; i++) {
		int w = snprintf(out + at, len - at, "%s %s",
		                 !i              ? ""
		                 : values[i + 1] ? ","
		                                 : " or",
		                 values[i]);
		at += w > 0 ? (size_t)w : 0;
	}
}

/* Store value v of entry x (flag names it in messages) into args. */
static int store(const struct entry *x, void *args, const char *flag, const char *v, char *msg,
                 size_t len)
{
	const struct cli_flag *f = x->f;
	char *dest = (char *)args + x->base + f->offset, *end;
	long long n;
	double d;
	int k;

	switch (f->kind) {
	case CLI_BOOL:
		*(int *)dest = 1;
		return 0;
	case CLI_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno || end == v || *end || n < f->lo || n > f->hi)
			return fail(msg, len, "%s %s: expected an integer in [%lld, %lld]", flag, v,
			            f->lo, f->hi);
		if (f->size == sizeof(int)) {
			*(int *)dest = (int)n;
		} else {
			int64_t w = (int64_t)n;
			memcpy(dest, &w, sizeof(w));
		}
		return 0;
	case CLI_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !(d >= f->dlo && d <= f->dhi))
			return fail(msg, len, "%s %s: expected a number in [%g, %g]", flag, v,
			            f->dlo, f->dhi);
		*(double *)dest = d;
		return 0;
	case CLI_STRING:
		*(const char **)dest = v;
		return 0;
	case CLI_ENUM:
	case CLI_CHOICE:
		for (k = 0; f->values[k] && strcmp(f->values[k], v); k++)
			;
		if (!f->values[k]) {
			char want[256];
			expected(f->values, want, sizeof(want));
			return fail(msg, len, "%s %s: %s", flag, v, f->hint ? f->hint : want);
		}
		if (f->kind == CLI_ENUM)
			*(const char **)dest = f->values[k];
		else
			*(int *)dest = k;
		return 0;
	case CLI_LIST: {
		int *count = (int *)((char *)args + x->base + f->count);
		if (*count >= f->max)
			return fail(msg, len, "%s %s: at most %d %s flags", flag, v, f->max, flag);
		((const char **)dest)[(*count)++] = v;
		return 0;
	}
	case CLI_CALL:
		return f->fn((char *)args + x->base, flag, v, msg, len) ? CUCO_ERR_USAGE : 0;
	default:
		return fail(msg, len, "%s: refused", flag);
	}
}

/* An argument that is not a flag: the next positional one. */
static int positional(const struct cli_spec *s, void *args, const char *a, char *msg, size_t len)
{
	int *n = (int *)((char *)args + s->npos);

	if (*n >= s->max_pos)
		return fail(msg, len, "unexpected argument %s", a);
	((const char **)((char *)args + s->pos))[(*n)++] = a;
	return 0;
}

/* Entries not given take their variable, when it is set and not empty. */
static int from_env(struct entry *e, int n, void *args, char *msg, size_t len)
{
	for (int i = 0; i < n; i++) {
		const char *v = e[i].f->env ? getenv(e[i].f->env) : NULL;
		int rc;

		if (!v || !*v || e[i].given || !listed(e, i) || e[i].f->kind == CLI_LIST ||
		    e[i].f->kind == CLI_CALL || e[i].f->kind == CLI_BOOL)
			continue;
		if ((rc = store(&e[i], args, e[i].f->env, v, msg, len)))
			return rc;
	}
	return 0;
}

/* Edit distance of a and b, a swap of two neighbours counting one (each cut at 63 characters). */
static int edit_distance(const char *a, const char *b)
{
	int d[64][64], la = (int)strnlen(a, 63), lb = (int)strnlen(b, 63);

	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++)
		for (int j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *cli_did_you_mean(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	int best_d = 0, ties = 0;
	size_t wl = strlen(word);

	for (size_t i = 0; i < n; i++) {
		int d = edit_distance(word, names[i]);
		size_t nl = strlen(names[i]);
		/* a prefix of a longer name (--budget for --budget-evals) counts as close */
		if (wl >= 3 && wl < nl && !strncmp(word, names[i], wl))
			d = 1;
		if (!best || d < best_d) {
			best = names[i];
			best_d = d;
			ties = 0;
		} else if (d == best_d) {
			ties++;
		}
	}
	/* close means at most a third of the word wrong, as git's suggestions are */
	if (!best || ties || best_d > 2 || (size_t)best_d * 3 > wl)
		return NULL;
	return best;
}

/* "unknown option FLAG", with the nearest listed flag of e[0..n) when one is close. */
static int unknown_flag(struct entry *e, int n, const char *flag, char *msg, size_t len)
{
	const char *names[MAX_ENTRIES], *near;
	size_t k = 0;

	for (int i = 0; i < n; i++)
		if (listed(e, i))
			names[k++] = e[i].f->name;
	near = cli_did_you_mean(flag, names, k);
	if (near)
		return fail(msg, len, "unknown option %s; did you mean %s?", flag, near);
	return fail(msg, len, "unknown option %s", flag);
}

int cli_flags_scan(const struct cli_spec *s, int argc, char **argv, void *args, char *msg,
                   size_t len)
{
	struct entry e[MAX_ENTRIES];
	int n = flatten(s->flags, 0, e, 0), rc, only_pos = 0;

	msg[0] = '\0';
	if (n < 0)
		return fail(msg, len, "more than %d flags in one table (a cuco bug)", MAX_ENTRIES);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = NULL, *v = NULL;
		size_t nlen = strlen(a);
		struct entry *x;
		char flag[128];

		if (only_pos || a[0] != '-') {
			if ((rc = positional(s, args, a, msg, len)))
				return rc;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return CLI_HELP;
		if (a[1] == '-' && (eq = strchr(a, '=')))
			nlen = (size_t)(eq - a);
		snprintf(flag, sizeof(flag), "%.*s", (int)nlen, a);
		x = find(e, n, a, nlen);
		if (!x)
			return unknown_flag(e, n, flag, msg, len);
		if (x->f->kind == CLI_REFUSE)
			return fail(msg, len, "%s", x->f->hint);
		if (x->f->arg && eq) {
			v = eq + 1;
		} else if (x->f->arg) {
			if (i + 1 >= argc)
				return fail(msg, len, "%s needs a value", flag);
			v = argv[++i];
		} else if (eq) {
			return fail(msg, len, "%s takes no value", flag);
		}
		if ((rc = store(x, args, flag, v, msg, len)))
			return rc;
		x->given = 1;
	}
	return from_env(e, n, args, msg, len);
}

int cli_flags_parse(const struct cli_spec *s, int argc, char **argv, void *args)
{
	char msg[1024];
	int rc = cli_flags_scan(s, argc, argv, args, msg, sizeof(msg));

	if (rc == CLI_HELP)
		cli_flags_help(s, stdout);
	else if (rc)
		fprintf(stderr, "cuco %s: %s\n(see 'cuco %s --help')\n", s->name, msg, s->name);
	return rc;
}

/* Write text from column col, wrapped at HELP_WIDTH; the first line starts at column at. */
static void wrap(FILE *out, const char *text, int col, int at)
{
	const char *p = text;

	while (*p) {
		size_t w = strcspn(p, " ");

		if (at > col && at + 1 + (int)w > HELP_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', out);
			at++;
		}
		fprintf(out, "%.*s", (int)w, p);
		at += (int)w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

/* "  --flag ARG" of f. */
static int label(const struct cli_flag *f, char *out, size_t len)
{
	return snprintf(out, len, "  %s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
}

void cli_flags_help(const struct cli_spec *s, FILE *out)
{
	struct entry e[MAX_ENTRIES];
	int n = flatten(s->flags, 0, e, 0), col = 0;
	char lab[160];

	fputs(s->usage, out);
	for (int i = 0; i < n; i++) {
		int w =
		    listed(e, i) || e[i].f->kind == CLI_ARG ? label(e[i].f, lab, sizeof(lab)) : 0;
		if (w <= LABEL_MAX && w + 2 > col)
			col = w + 2;
	}
	fputc('\n', out);
	for (int i = 0; i < n; i++) {
		const struct cli_flag *f = e[i].f;
		int w;

		if (f->kind == CLI_HEADING) {
			fprintf(out, "%s%s\n", i ? "\n" : "", f->help);
			continue;
		}
		if (f->kind == CLI_TEXT) {
			fprintf(out, "%s%s", i ? "\n" : "", f->help);
			continue;
		}
		if (!listed(e, i) && f->kind != CLI_ARG)
			continue;
		w = label(f, lab, sizeof(lab));
		fputs(lab, out);
		if (w + 2 > col) {
			fprintf(out, "\n%*s", col, "");
			w = col;
		} else {
			fprintf(out, "%*s", col - w, "");
			w = col;
		}
		wrap(out, f->help ? f->help : "", col, w);
	}
}

int cli_flags_each(const struct cli_spec *s,
                   int (*fn)(const struct cli_flag *f, int listed, void *arg), void *arg)
{
	struct entry e[MAX_ENTRIES];
	int n = flatten(s->flags, 0, e, 0), rc;

	for (int i = 0; i < n; i++)
		if (is_flag(e[i].f) && (rc = fn(e[i].f, listed(e, i), arg)))
			return rc;
	return 0;
}
