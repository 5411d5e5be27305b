/* novelty.c - exact-hash and token-shingle novelty filter (see novelty.h). */
#include "search/novelty.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/array.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

static uint64_t directive_key(const char *json)
{
	return fnv(FNV_OFFSET, json ? json : "", json ? strlen(json) : 0);
}

/*
 * Hash of the next token of s at *pos, skipping whitespace and comments;
 * 0 at the end. String and character literals all hash alike, so changing a
 * message does not make code new.
 */
static uint64_t next_token(const char *s, size_t *pos)
{
	size_t i = *pos, start;
	uint64_t h;

	for (;;) {
		while (s[i] && isspace((unsigned char)s[i]))
			i++;
		if (s[i] == '/' && s[i + 1] == '/') {
			while (s[i] && s[i] != '\n')
				i++;
		} else if (s[i] == '/' && s[i + 1] == '*') {
			i += 2;
			while (s[i] && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			if (s[i])
				i += 2;
		} else {
			break;
		}
	}
	if (!s[i]) {
		*pos = i;
		return 0;
	}
	start = i;
	if (isalnum((unsigned char)s[i]) || s[i] == '_') {
		while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.')
			i++;
		h = fnv(FNV_OFFSET, s + start, i - start);
	} else if (s[i] == '"' || s[i] == '\'') {
		char q = s[i++];
		while (s[i] && s[i] != q && s[i] != '\n') {
			if (s[i] == '\\' && s[i + 1])
				i++;
			i++;
		}
		if (s[i] == q)
			i++;
		h = fnv(FNV_OFFSET, "\"str\"", 5);
	} else {
		i++;
		h = fnv(FNV_OFFSET, s + start, 1);
	}
	*pos = i;
	return h | 1; /* never 0, which means "end" */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted unique 3-gram hashes of code into a malloc'd array (NULL when empty). */
static void shingles(const char *code, uint64_t **out, size_t *n)
{
	size_t pos = 0, alloc = 0, k = 0, u = 0;
	uint64_t t[3] = {0, 0, 0}, *a = NULL, tok;
	int have = 0;

	while ((tok = next_token(code, &pos))) {
		t[0] = t[1];
		t[1] = t[2];
		t[2] = tok;
		if (++have < 3)
			continue;
		*CUCO_ARRAY_PUSH(a, k, alloc) =
		    fnv(fnv(fnv(FNV_OFFSET, &t[0], 8), &t[1], 8), &t[2], 8);
	}
	if (have > 0 && have < 3) /* tiny programs: one shingle of what there is */
		*CUCO_ARRAY_PUSH(a, k, alloc) =
		    fnv(fnv(fnv(FNV_OFFSET, &t[0], 8), &t[1], 8), &t[2], 8);
	if (k > 1)
		qsort(a, k, sizeof(*a), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (u == 0 || a[i] != a[u - 1])
			a[u++] = a[i];
	*out = a;
	*n = u;
}

static double jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	size_t i = 0, j = 0, inter = 0;

	if (na == 0 && nb == 0)
		return 1.0;
	while (i < na && j < nb) {
		if (a[i] == b[j]) {
			inter++;
			i++;
			j++;
		} else if (a[i] < b[j]) {
			i++;
		} else {
			j++;
		}
	}
	return (double)inter / (double)(na + nb - inter);
}

double cuco_code_similarity(const char *a, const char *b)
{
	uint64_t *sa = NULL, *sb = NULL;
	size_t na = 0, nb = 0;
	double s = 0;

	shingles(a, &sa, &na);
	shingles(b, &sb, &nb);
	s = jaccard(sa, na, sb, nb);
	free(sa);
	free(sb);
	return s;
}

void cuco_novelty_init(struct cuco_novelty *nov, double threshold)
{
	memset(nov, 0, sizeof(*nov));
	nov->threshold = threshold;
}

void cuco_novelty_release(struct cuco_novelty *nov)
{
	for (size_t i = 0; i < nov->n; i++)
		free(nov->e[i].shingles);
	free(nov->e);
	cuco_novelty_init(nov, nov->threshold);
}

void cuco_novelty_add(struct cuco_novelty *nov, const char *code, const char *directive_json,
                      int64_t program_id)
{
	struct cuco_novelty_entry *e;

	e = CUCO_ARRAY_PUSH(nov->e, nov->n, nov->alloc);
	memset(e, 0, sizeof(*e));
	cuco_store_hash_code(code, e->hash);
	e->directive_key = directive_key(directive_json);
	e->program_id = program_id;
	shingles(code, &e->shingles, &e->nshingles);
}

enum cuco_novelty_verdict cuco_novelty_check(const struct cuco_novelty *nov, const char *code,
                                             const char *directive_json, double *similarity,
                                             int64_t *match)
{
	char hash[65];
	uint64_t key = directive_key(directive_json), *sh = NULL;
	size_t nsh = 0;
	double best = 0;
	int64_t best_id = 0;
	enum cuco_novelty_verdict v = CUCO_NOVEL;

	cuco_store_hash_code(code, hash);
	for (size_t i = 0; i < nov->n; i++)
		if (!strcmp(nov->e[i].hash, hash)) {
			best = 1.0;
			best_id = nov->e[i].program_id;
			v = CUCO_DUP_EXACT;
			goto out;
		}
	if (nov->threshold > 1.0)
		goto out;
	shingles(code, &sh, &nsh);
	for (size_t i = 0; i < nov->n; i++) {
		double s;
		if (nov->e[i].directive_key != key)
			continue;
		s = jaccard(sh, nsh, nov->e[i].shingles, nov->e[i].nshingles);
		if (s > best) {
			best = s;
			best_id = nov->e[i].program_id;
		}
	}
	if (best > 0 && best >= nov->threshold)
		v = CUCO_DUP_NEAR;
out:
	free(sh);
	if (similarity)
		*similarity = best;
	if (match)
		*match = v == CUCO_NOVEL ? 0 : best_id;
	return v;
}
