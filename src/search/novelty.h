/*
 * novelty.h - novelty rejection: a candidate whose code was already tried, or
 * that is nearly the same code as a program at the same design point, is not
 * worth an evaluation.
 *
 * Two tests, in order: the exact content hash of the code; then the Jaccard
 * similarity of the sets of normalized-token 3-grams (comments and
 * whitespace dropped, string literals folded) over a threshold, measured
 * against programs that carry the same directive. Programs at different
 * design points are different by construction (the built-in operator's code
 * is a function of its directive), so near-duplicate checks only compare
 * programs that claim the same point, e.g. two hand or LLM edits of one
 * program that differ by a renamed variable.
 */
#ifndef CUCO_SEARCH_NOVELTY_H
#define CUCO_SEARCH_NOVELTY_H

#include <stddef.h>
#include <stdint.h>

/* Verdicts of cuco_novelty_check(). */
enum cuco_novelty_verdict {
	CUCO_NOVEL = 0,
	CUCO_DUP_EXACT = 1, /* same code hash as a known program */
	CUCO_DUP_NEAR = 2,  /* token similarity to a known program at or over the threshold */
};

/* One known program: code hash, directive key, and its sorted unique shingles. */
struct cuco_novelty_entry {
	char hash[65];
	uint64_t directive_key; /* FNV-1a of the canonical directive JSON ("" when none) */
	uint64_t *shingles;
	size_t nshingles;
	int64_t program_id;
};

/* The programs seen so far. Caller-owned: _init, then _release. */
struct cuco_novelty {
	double threshold; /* near-duplicate when similarity >= threshold; > 1 disables */
	struct cuco_novelty_entry *e;
	size_t n, alloc;
};

/* Empty filter with a similarity threshold (e.g. 0.95). */
void cuco_novelty_init(struct cuco_novelty *nov, double threshold);
/* Free every entry. */
void cuco_novelty_release(struct cuco_novelty *nov);

/*
 * Remember a program (code and its canonical directive JSON, which may be
 * NULL). The filter copies what it needs.
 */
void cuco_novelty_add(struct cuco_novelty *nov, const char *code, const char *directive_json,
                      int64_t program_id);

/*
 * Judge code against the known programs. *similarity (may be NULL) gets the
 * highest similarity seen among same-directive programs (1 for an exact
 * duplicate), *match (may be NULL) the program id it matched (0 when novel).
 */
enum cuco_novelty_verdict cuco_novelty_check(const struct cuco_novelty *nov, const char *code,
                                             const char *directive_json, double *similarity,
                                             int64_t *match);

/* Jaccard similarity of the normalized-token 3-gram sets of two programs, in [0, 1]. */
double cuco_code_similarity(const char *a, const char *b);

#endif
