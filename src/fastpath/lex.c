/*
 * lex.c - the fast path's tokenizer: identifiers, numbers, one-character
 * punctuation and literals (raw strings included), each marked when inside a
 * preprocessor directive; and the calls found among the tokens.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fastpath/lex.h"
#include "util/array.h"

/* ---- tokens ---- */

static void toks_push(struct toks *t, int type, int pp, size_t start, size_t end, int line, int col)
{
	*CUCO_ARRAY_PUSH(t->v, t->n, t->alloc) = (struct tok){type, pp, start, end, line, col};
}

static int is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int is_ident_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Whether the identifier [s, s+n) is a raw string prefix (R, u8R, uR, UR, LR). */
static int is_raw_prefix(const char *s, size_t n)
{
	return (n == 1 && s[0] == 'R') || (n == 2 && s[1] == 'R' && strchr("uUL", s[0])) ||
	       (n == 3 && memcmp(s, "u8R", 3) == 0);
}

/* End (one past the closing quote) of the literal whose quote is at q; 0 if unterminated. */
static size_t lex_quoted(const char *s, size_t n, size_t q)
{
	size_t j = q + 1;
	while (j < n && s[j] != s[q]) {
		if (s[j] == '\n')
			return 0;
		if (s[j] == '\\')
			j++;
		j++;
	}
	return j < n ? j + 1 : 0;
}

/* Tokenise fp->src into fp->toks. Comments vanish; line splices are taken as whitespace. */
int cuco_fastpath_tokenize(struct fp *fp)
{
	const char *s = fp->src;
	size_t n = fp->len, i = 0, line_start = 0;
	int line = 1, in_pp = 0, at_line_start = 1, rc = CUCO_OK;
	int have_code = 0;

	while (i < n) {
		char c = s[i];
		int col = (int)(i - line_start) + 1;
		if (c == '\n') {
			/* A directive ends at a newline not preceded by a backslash. */
			if (in_pp && !(i > 0 && s[i - 1] == '\\'))
				in_pp = 0;
			i++;
			line++;
			line_start = i;
			at_line_start = 1;
			continue;
		}
		if (isspace((unsigned char)c) || c == '\\') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n') {
				/* a spliced // comment continues on the next line */
				if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
					i += 2;
					line++;
					line_start = i;
					continue;
				}
				i++;
			}
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			int l0 = line, c0 = col;
			i += 2;
			while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
				if (s[i] == '\n') {
					line++;
					line_start = i + 1;
				}
				i++;
			}
			if (i + 1 >= n) {
				rc = cuco_err_set(fp->err, CUCO_ERR_PARSE,
				                  "%s:%d:%d: unterminated /* comment", fp->file, l0,
				                  c0);
				goto out;
			}
			i += 2;
			continue;
		}
		if (c == '#' && at_line_start) {
			in_pp = 1;
		}
		at_line_start = 0;
		if (!in_pp && !have_code) {
			have_code = 1;
			fp->toks.first_code = line_start;
		}
		if (is_ident_start((unsigned char)c)) {
			size_t b = i;
			while (i < n && is_ident_char((unsigned char)s[i]))
				i++;
			if (i < n && s[i] == '"' && is_raw_prefix(s + b, i - b)) {
				/* raw string: R"delim( ... )delim" */
				char delim[20];
				size_t d = i + 1, dl = 0;
				while (d < n && s[d] != '(' && dl < sizeof(delim) - 2)
					delim[dl++] = s[d++];
				delim[dl] = 0;
				if (d >= n || s[d] != '(') {
					rc = cuco_err_set(fp->err, CUCO_ERR_PARSE,
					                  "%s:%d:%d: malformed raw string literal",
					                  fp->file, line, col);
					goto out;
				}
				size_t j = d + 1;
				for (;; j++) {
					if (j >= n) {
						rc = cuco_err_set(
						    fp->err, CUCO_ERR_PARSE,
						    "%s:%d:%d: unterminated raw string", fp->file,
						    line, col);
						goto out;
					}
					if (s[j] == ')' && j + 1 + dl < n &&
					    memcmp(s + j + 1, delim, dl) == 0 &&
					    s[j + 1 + dl] == '"')
						break;
				}
				toks_push(&fp->toks, TOK_STRING, in_pp, b, j + dl + 2, line, col);
				for (size_t k = i; k < j; k++)
					if (s[k] == '\n') {
						line++;
						line_start = k + 1;
					}
				i = j + dl + 2;
				continue;
			}
			if (i < n && (s[i] == '"' || s[i] == '\'') &&
			    (i - b == 1 || (i - b == 2 && s[b] == 'u' && s[b + 1] == '8')) &&
			    strchr("uUL", s[b]) != NULL) {
				/* prefixed literal (L"..", u8".."): the prefix joins it */
				size_t j = lex_quoted(s, n, i);
				if (j == 0) {
					rc = cuco_err_set(fp->err, CUCO_ERR_PARSE,
					                  "%s:%d:%d: unterminated literal",
					                  fp->file, line, col);
					goto out;
				}
				toks_push(&fp->toks, TOK_STRING, in_pp, b, j, line, col);
				i = j;
				continue;
			}
			toks_push(&fp->toks, TOK_IDENT, in_pp, b, i, line, col);
			continue;
		}
		if (isdigit((unsigned char)c) ||
		    (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
			size_t b = i;
			while (i < n &&
			       (is_ident_char((unsigned char)s[i]) || s[i] == '.' || s[i] == '\'' ||
			        ((s[i] == '+' || s[i] == '-') && strchr("eEpP", s[i - 1]) != NULL)))
				i++;
			toks_push(&fp->toks, TOK_NUMBER, in_pp, b, i, line, col);
			continue;
		}
		if (c == '"' || c == '\'') {
			size_t j = lex_quoted(s, n, i);
			if (j == 0) {
				rc = cuco_err_set(fp->err, CUCO_ERR_PARSE,
				                  "%s:%d:%d: unterminated %s literal", fp->file,
				                  line, col, c == '"' ? "string" : "character");
				goto out;
			}
			toks_push(&fp->toks, TOK_STRING, in_pp, i, j, line, col);
			i = j;
			continue;
		}
		toks_push(&fp->toks, TOK_PUNCT, in_pp, i, i + 1, line, col);
		i++;
	}
	if (!have_code)
		fp->toks.first_code = n;
out:
	return rc;
}

int cuco_fastpath_tok_is(const struct fp *fp, int i, const char *text)
{
	if (i < 0 || i >= fp->toks.n)
		return 0;
	const struct tok *t = &fp->toks.v[i];
	size_t l = strlen(text);
	return t->end - t->start == l && memcmp(fp->src + t->start, text, l) == 0;
}

int cuco_fastpath_tok_punct(const struct fp *fp, int i, char c)
{
	return i >= 0 && i < fp->toks.n && fp->toks.v[i].type == TOK_PUNCT &&
	       fp->src[fp->toks.v[i].start] == c;
}

/* Copy token i's text into buf (truncated). */
void cuco_fastpath_tok_text(const struct fp *fp, int i, char *buf, size_t size)
{
	const struct tok *t = &fp->toks.v[i];
	size_t l = t->end - t->start;
	if (l >= size)
		l = size - 1;
	memcpy(buf, fp->src + t->start, l);
	buf[l] = 0;
}

/* Index of the bracket matching the opening one at i, or -1. */
int cuco_fastpath_match_bracket(const struct fp *fp, int i)
{
	int depth = 0;
	for (int k = i; k < fp->toks.n; k++) {
		if (fp->toks.v[k].type != TOK_PUNCT || fp->toks.v[k].pp != fp->toks.v[i].pp)
			continue;
		char c = fp->src[fp->toks.v[k].start];
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}') {
			if (--depth == 0)
				return k;
		}
	}
	return -1;
}

/* Parse the argument list of the call whose name is token i (followed by '('). */
int cuco_fastpath_parse_call(struct fp *fp, int i, struct call *call)
{
	const struct tok *name = &fp->toks.v[i];
	int close = cuco_fastpath_match_bracket(fp, i + 1);
	if (close < 0 || !cuco_fastpath_tok_punct(fp, close, ')'))
		return cuco_err_set(fp->err, CUCO_ERR_PARSE,
		                    "%s:%d:%d: unbalanced parentheses in call", fp->file,
		                    name->line, name->col);
	memset(call, 0, sizeof(*call));
	call->name = i;
	call->open = i + 1;
	call->close = close;
	if (close == i + 2)
		return CUCO_OK; /* no arguments */
	int depth = 0, first = i + 2;
	for (int k = i + 2; k <= close; k++) {
		const struct tok *t = &fp->toks.v[k];
		char c = t->type == TOK_PUNCT ? fp->src[t->start] : 0;
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == ')' || c == ']' || c == '}') && k != close)
			depth--;
		if ((c == ',' && depth == 0) || k == close) {
			if (call->nargs == MAX_ARGS || k == first)
				return cuco_err_set(
				    fp->err, CUCO_ERR_PARSE,
				    "%s:%d:%d: cannot parse the arguments of this call", fp->file,
				    name->line, name->col);
			call->arg_start[call->nargs] = fp->toks.v[first].start;
			call->arg_end[call->nargs] = fp->toks.v[k - 1].end;
			call->nargs++;
			first = k + 1;
		}
	}
	return CUCO_OK;
}

/* Whether argument a of call is exactly one identifier; copies it into buf if so. */
int cuco_fastpath_arg_ident(const struct fp *fp, const struct call *call, int a, char *buf,
                            size_t size)
{
	size_t b = call->arg_start[a], e = call->arg_end[a];
	if (!is_ident_start((unsigned char)fp->src[b]))
		return 0;
	for (size_t k = b; k < e; k++)
		if (!is_ident_char((unsigned char)fp->src[k]))
			return 0;
	size_t l = e - b < size - 1 ? e - b : size - 1;
	memcpy(buf, fp->src + b, l);
	buf[l] = 0;
	return 1;
}

/* Find the definition of function name: token indices of its '(' and its body's { }. */
int cuco_fastpath_find_definition(const struct fp *fp, const char *name, int *open, int *close,
                                  int *lparen)
{
	for (int i = 0; i < fp->toks.n; i++) {
		if (fp->toks.v[i].pp || !cuco_fastpath_tok_is(fp, i, name) ||
		    !cuco_fastpath_tok_punct(fp, i + 1, '('))
			continue;
		int rp = cuco_fastpath_match_bracket(fp, i + 1);
		if (rp < 0 || !cuco_fastpath_tok_punct(fp, rp + 1, '{'))
			continue;
		int rb = cuco_fastpath_match_bracket(fp, rp + 1);
		if (rb < 0)
			continue;
		*lparen = i + 1;
		*open = rp + 1;
		*close = rb;
		return 1;
	}
	return 0;
}
