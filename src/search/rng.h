/* rng.h - the seeded random number generator of the search (xoshiro256**). */
#ifndef CUCO_SEARCH_RNG_H
#define CUCO_SEARCH_RNG_H

#include <stdint.h>

/*
 * Generator state. Caller-owned, no allocation. The same seed gives the same
 * sequence on every machine, which is what makes an evolution run repeatable.
 */
struct cuco_rng {
	uint64_t s[4];
};

/* Seed r from one 64-bit value (expanded with splitmix64). */
void cuco_rng_seed(struct cuco_rng *r, uint64_t seed);

/*
 * Seed r from a seed and a stream number (e.g. a generation), so that each
 * stream is independent of how many numbers other streams drew.
 */
void cuco_rng_seed_stream(struct cuco_rng *r, uint64_t seed, uint64_t stream);

/* Next 64 random bits. */
uint64_t cuco_rng_next(struct cuco_rng *r);

/* Uniform integer in [0, n) without modulo bias; 0 when n is 0. */
uint64_t cuco_rng_below(struct cuco_rng *r, uint64_t n);

/* Uniform double in [0, 1). */
double cuco_rng_unit(struct cuco_rng *r);

/*
 * Index in [0, n) drawn with probability proportional to w[i] (negative and
 * non-finite weights count as 0); -1 when every weight is 0 or n is 0.
 */
int cuco_rng_weighted(struct cuco_rng *r, const double *w, int n);

#endif
