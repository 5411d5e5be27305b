/* codescan.c - a small C/C++ lexer and the rules candidate sources keep (codescan.h). */
#include "util/codescan.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

enum tok_kind { T_END, T_IDENT, T_STRING, T_CHAR, T_NUMBER, T_PUNCT };

struct tok {
	enum tok_kind kind;
	const char *s; /* into the spliced text */
	size_t n;
	int line;  /* of the source, before splicing */
	int first; /* 1: the first token of its line */
};

/* The source with its line splices (backslash-newline) removed, each byte's source line kept. */
struct lexer {
	char *buf;
	int *line;
	size_t len, at;
	int last_line;
};

static void lexer_init(struct lexer *lx, const char *code)
{
	size_t n = strlen(code), k = 0;
	int line = 1;

	lx->buf = cuco_xcalloc(1, n + 1);
	lx->line = cuco_xcalloc(1, (n + 1) * sizeof(int));
	for (size_t i = 0; i < n; i++) {
		if (code[i] == '\\' &&
		    (code[i + 1] == '\n' || (code[i + 1] == '\r' && code[i + 2] == '\n'))) {
			i += code[i + 1] == '\r' ? 2 : 1;
			line++;
			continue;
		}
		lx->buf[k] = code[i];
		lx->line[k++] = line;
		if (code[i] == '\n')
			line++;
	}
	lx->buf[k] = '\0';
	lx->line[k] = line;
	lx->len = k;
	lx->at = 0;
	lx->last_line = 0;
}

static void lexer_release(struct lexer *lx)
{
	free(lx->buf);
	free(lx->line);
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Skip a quoted literal starting at lx->at (the quote); a newline ends an unterminated one. */
static void skip_quoted(struct lexer *lx, char q)
{
	const char *b = lx->buf;

	lx->at++;
	while (lx->at < lx->len && b[lx->at] != q && b[lx->at] != '\n') {
		if (b[lx->at] == '\\' && lx->at + 1 < lx->len)
			lx->at++;
		lx->at++;
	}
	if (lx->at < lx->len && b[lx->at] == q)
		lx->at++;
}

/* Skip a raw string R"delim( ... )delim" starting at lx->at (the quote). */
static void skip_raw(struct lexer *lx)
{
	const char *b = lx->buf, *open, *close;
	char end[24];
	size_t d;

	open = strchr(b + lx->at + 1, '(');
	d = open ? (size_t)(open - (b + lx->at + 1)) : 0;
	if (!open || d > 16 || memchr(b + lx->at + 1, '\n', d)) {
		skip_quoted(lx, '"');
		return;
	}
	end[0] = ')';
	memcpy(end + 1, b + lx->at + 1, d);
	end[d + 1] = '"';
	end[d + 2] = '\0';
	close = strstr(open + 1, end);
	lx->at = close ? (size_t)(close - b) + d + 2 : lx->len;
}

static int is_prefix(const char *s, size_t n, int raw_ok)
{
	static const char *const plain[] = {"L", "u", "U", "u8"};
	static const char *const raw[] = {"R", "LR", "uR", "UR", "u8R"};

	for (size_t i = 0; i < 4; i++)
		if (strlen(plain[i]) == n && !strncmp(s, plain[i], n))
			return 1;
	for (size_t i = 0; raw_ok && i < 5; i++)
		if (strlen(raw[i]) == n && !strncmp(s, raw[i], n))
			return 2;
	return 0;
}

static void next_token(struct lexer *lx, struct tok *t)
{
	const char *b = lx->buf;
	size_t start;
	int pre;

	for (;;) {
		while (lx->at < lx->len && isspace((unsigned char)b[lx->at]))
			lx->at++;
		if (b[lx->at] == '/' && b[lx->at + 1] == '/') {
			while (lx->at < lx->len && b[lx->at] != '\n')
				lx->at++;
		} else if (b[lx->at] == '/' && b[lx->at + 1] == '*') {
			const char *e = strstr(b + lx->at + 2, "*/");
			lx->at = e ? (size_t)(e - b) + 2 : lx->len;
		} else {
			break;
		}
	}
	start = lx->at;
	t->s = b + start;
	t->line = lx->line[start];
	t->first = t->line != lx->last_line;
	if (start >= lx->len) {
		t->kind = T_END;
		t->n = 0;
		return;
	}
	if (ident_char((unsigned char)b[start]) && !isdigit((unsigned char)b[start])) {
		while (lx->at < lx->len && ident_char((unsigned char)b[lx->at]))
			lx->at++;
		t->kind = T_IDENT;
		pre = is_prefix(b + start, lx->at - start, 1);
		if (pre && b[lx->at] == '"') {
			t->kind = T_STRING;
			if (pre == 2)
				skip_raw(lx);
			else
				skip_quoted(lx, '"');
		} else if (pre == 1 && b[lx->at] == '\'') {
			t->kind = T_CHAR;
			skip_quoted(lx, '\'');
		}
	} else if (isdigit((unsigned char)b[start]) ||
	           (b[start] == '.' && isdigit((unsigned char)b[start + 1]))) {
		/* a pp-number, digit separators (1'000) included */
		lx->at++;
		while (lx->at < lx->len) {
			char c = b[lx->at];
			if (strchr("eEpP", c) && (b[lx->at + 1] == '+' || b[lx->at + 1] == '-'))
				lx->at += 2;
			else if (ident_char((unsigned char)c) || c == '.' ||
			         (c == '\'' && ident_char((unsigned char)b[lx->at + 1])))
				lx->at++;
			else
				break;
		}
		t->kind = T_NUMBER;
	} else if (b[start] == '"') {
		t->kind = T_STRING;
		skip_quoted(lx, '"');
	} else if (b[start] == '\'') {
		t->kind = T_CHAR;
		skip_quoted(lx, '\'');
	} else {
		t->kind = T_PUNCT;
		lx->at += b[start] == '%' && b[start + 1] == ':' ? 2 : 1; /* %: is # */
	}
	t->n = lx->at - start;
	lx->last_line = lx->line[lx->at > start ? lx->at - 1 : start];
}

static int punct_is(const struct tok *t, const char *p)
{
	return t->kind == T_PUNCT && t->n == strlen(p) && !strncmp(t->s, p, t->n);
}

static int is_hash(const struct tok *t)
{
	return punct_is(t, "#") || punct_is(t, "%:");
}

static int ident_is(const struct tok *t, const char *name)
{
	return t->kind == T_IDENT && t->n == strlen(name) && !strncmp(t->s, name, t->n);
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* The characters of literal t (string or character), escapes decoded, appended to out. */
static void literal_body(const struct tok *t, struct cuco_strbuf *out)
{
	const char *s = t->s, *e = t->s + t->n;
	char q;

	while (s < e && *s != '"' && *s != '\'')
		s++;
	if (s >= e)
		return;
	q = *s++;
	if (s - 1 > t->s && s[-2] == 'R') { /* raw: between "delim( and )delim" */
		const char *open = memchr(s, '(', (size_t)(e - s));
		if (open) {
			size_t d = (size_t)(open - s);
			const char *end = e - d - 2;
			if (end > open)
				cuco_strbuf_add(out, open + 1, (size_t)(end - open - 1));
		}
		return;
	}
	if (e > s && e[-1] == q)
		e--;
	while (s < e) {
		if (*s != '\\' || s + 1 >= e) {
			cuco_strbuf_addch(out, *s++);
			continue;
		}
		s++;
		if (*s == 'x' && s + 1 < e && isxdigit((unsigned char)s[1])) {
			int v = 0;
			for (s++; s < e && isxdigit((unsigned char)*s); s++)
				v = (v * 16 + hexval((unsigned char)*s)) & 0xff;
			cuco_strbuf_addch(out, v);
		} else if (*s >= '0' && *s <= '7') {
			int v = 0;
			for (int k = 0; k < 3 && s < e && *s >= '0' && *s <= '7'; k++, s++)
				v = v * 8 + (*s - '0');
			cuco_strbuf_addch(out, v & 0xff);
		} else if ((*s == 'u' || *s == 'U') && s + 1 < e) {
			/* \uXXXX: ASCII letters only matter here */
			long v = 0;
			int k = *s == 'u' ? 4 : 8;
			for (s++; k-- > 0 && s < e && isxdigit((unsigned char)*s); s++)
				v = v * 16 + hexval((unsigned char)*s);
			cuco_strbuf_addch(out, v < 0x80 ? (int)v : '?');
		} else {
			static const char from[] = "ntrabfv", to[] = "\n\t\r\a\b\f\v";
			const char *f = strchr(from, *s);
			cuco_strbuf_addch(out, f && *s ? to[f - from] : *s);
			s++;
		}
	}
}

/* 1 and the word when the lowercase of text holds one of words. */
static const char *holds_word(const char *text, size_t len, const char *const *words)
{
	char *low = cuco_xcalloc(1, len + 1);
	const char *hit = NULL;

	for (size_t i = 0; i < len; i++)
		low[i] = text[i] ? (char)tolower((unsigned char)text[i]) : ' ';
	low[len] = '\0';
	for (; *words && !hit; words++)
		if (strstr(low, *words))
			hit = *words;
	free(low);
	return hit;
}

static const char *const multicast_words[] = {"multimem", "multicast", "nvls", NULL};
static const char *const asm_include_words[] = {".include", ".incbin", NULL};

/* A run of adjacent literals, joined. */
struct group {
	struct cuco_strbuf text;
	int line; /* of its first literal; 0: empty */
	const char *what;
};

static int group_flush(struct group *g, const char *const *words, const char *path,
                       struct cuco_strbuf *why)
{
	const char *w;
	int hit = 0;

	if (g->line && (w = holds_word(g->text.buf, g->text.len, words))) {
		if (why && path)
			cuco_strbuf_addf(why, "%s:%d: %s holds \"%s\"\n", path, g->line, g->what,
			                 w);
		else if (why)
			cuco_strbuf_addf(why, "line %d: %s holds \"%s\"\n", g->line, g->what, w);
		hit = 1;
	}
	cuco_strbuf_reset(&g->text);
	g->line = 0;
	return hit;
}

static void group_add(struct group *g, const struct tok *t)
{
	if (!g->line)
		g->line = t->line;
	literal_body(t, &g->text);
}

int cuco_codescan_multicast(const char *code, struct cuco_strbuf *why)
{
	static const char *const banned[] = {"setenv", "putenv", "unsetenv", "clearenv",
	                                     "dlopen", "dlsym",  "dlvsym",   NULL};
	struct lexer lx;
	struct tok t, prev = {T_END, "", 0, 0, 0};
	struct group str = {CUCO_STRBUF_INIT, 0, "a string literal (adjacent ones joined)"},
	             chr = {CUCO_STRBUF_INIT, 0, "a run of character literals"};
	int n = 0;

	lexer_init(&lx, code);
	for (next_token(&lx, &t);; prev = t, next_token(&lx, &t)) {
		const char *w;

		if (t.kind != T_STRING)
			n += group_flush(&str, multicast_words, NULL, why);
		if (t.kind != T_CHAR && !punct_is(&t, ","))
			n += group_flush(&chr, multicast_words, NULL, why);
		if (t.kind == T_END)
			break;
		if (t.kind == T_STRING) {
			group_add(&str, &t);
		} else if (t.kind == T_CHAR) {
			group_add(&chr, &t);
		} else if (t.kind == T_IDENT) {
			if ((w = holds_word(t.s, t.n, multicast_words))) {
				if (why)
					cuco_strbuf_addf(why, "line %d: identifier %.*s names %s\n",
					                 t.line, (int)t.n, t.s, w);
				n++;
			}
			for (int i = 0; banned[i]; i++)
				if (ident_is(&t, banned[i]) && !punct_is(&prev, ".")) {
					if (why)
						cuco_strbuf_addf(
						    why,
						    "line %d: %s is not for candidates (the "
						    "harness sets the environment and loads "
						    "what runs)\n",
						    t.line, banned[i]);
					n++;
				}
			if ((t.n >= 16 && !strncmp(t.s, "cuGetProcAddress", 16)) ||
			    (t.n >= 23 && !strncmp(t.s, "cudaGetDriverEntryPoint", 23))) {
				struct lexer peek = lx;
				struct tok a, b;
				next_token(&peek, &a);
				next_token(&peek, &b);
				if (punct_is(&a, "(") && b.kind != T_STRING) {
					if (why)
						cuco_strbuf_addf(
						    why,
						    "line %d: %.*s must name its driver "
						    "function by a string literal\n",
						    t.line, (int)t.n, t.s);
					n++;
				}
			}
		}
	}
	cuco_strbuf_release(&str.text);
	cuco_strbuf_release(&chr.text);
	lexer_release(&lx);
	return n;
}

int cuco_codescan_timing(const char *code, struct cuco_strbuf *why)
{
	static const char *const words[] = {"accesspolicywindow", "persistingl2", "persisting_l2",
	                                    NULL};
	struct lexer lx;
	struct tok t;
	int n = 0;

	lexer_init(&lx, code);
	for (next_token(&lx, &t); t.kind != T_END; next_token(&lx, &t)) {
		const char *w;
		if (t.kind == T_IDENT && (w = holds_word(t.s, t.n, words))) {
			if (why)
				cuco_strbuf_addf(
				    why,
				    "line %d: %.*s keeps lines in L2 across the harness's "
				    "runs (timing on warm data)\n",
				    t.line, (int)t.n, t.s);
			n++;
		}
	}
	lexer_release(&lx);
	return n;
}

/* Why a header name may not be included, or NULL when it may. */
static const char *bad_header(const char *name, size_t n)
{
	size_t i = 0;

	if (n && (name[0] == '/' || name[0] == '\\' || name[0] == '~'))
		return "an absolute path";
	while (i < n) {
		size_t j = i;
		while (j < n && name[j] != '/' && name[j] != '\\')
			j++;
		if (j - i == 2 && name[i] == '.' && name[i + 1] == '.')
			return "a path with a \"..\" part";
		i = j + 1;
	}
	return NULL;
}

int cuco_codescan_includes(const char *code, const char *path, struct cuco_strbuf *why)
{
	struct lexer lx;
	struct tok t;
	struct group str = {CUCO_STRBUF_INIT, 0, "a string literal (an assembler directive)"};
	int n = 0;

	if (!path)
		path = "<source>";
	lexer_init(&lx, code);
	for (next_token(&lx, &t);; next_token(&lx, &t)) {
		if (t.kind != T_STRING)
			n += group_flush(&str, asm_include_words, path, why);
		if (t.kind == T_END)
			break;
		if (t.kind == T_STRING) {
			group_add(&str, &t);
			continue;
		}
		if (!t.first || !is_hash(&t))
			continue;
		next_token(&lx, &t);
		if (t.kind == T_END)
			break;
		if (t.first || !(ident_is(&t, "include") || ident_is(&t, "include_next") ||
		                 ident_is(&t, "import")))
			continue;
		{
			int line = t.line;
			const char *name = NULL, *bad;
			size_t len = 0;
			struct tok h;

			next_token(&lx, &h);
			if (!h.first && h.kind == T_STRING && h.s[0] == '"') {
				name = h.s + 1;
				len = h.n >= 2 && h.s[h.n - 1] == '"' ? h.n - 2 : h.n - 1;
			} else if (!h.first && punct_is(&h, "<")) {
				const char *e = h.s + 1;
				while (*e && *e != '>' && *e != '\n')
					e++;
				name = h.s + 1;
				len = (size_t)(e - name);
				lx.at = (size_t)(e - lx.buf) + (*e == '>');
				lx.last_line = line;
			}
			if (!name) {
				if (why)
					cuco_strbuf_addf(
					    why,
					    "%s:%d: #include of a computed name; name the "
					    "header in quotes or angle brackets\n",
					    path, line);
				n++;
				if (h.kind == T_END)
					break;
				continue;
			}
			bad = bad_header(name, len);
			if (bad) {
				if (why)
					cuco_strbuf_addf(
					    why,
					    "%s:%d: #include \"%.*s\" names %s; a candidate "
					    "includes only cuco's headers and the "
					    "workload's own\n",
					    path, line, (int)len, name, bad);
				n++;
			}
		}
	}
	cuco_strbuf_release(&str.text);
	lexer_release(&lx);
	return n;
}
