/* rng.c - xoshiro256** seeded through splitmix64: small, fast, portable, repeatable. */
#include "search/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void cuco_rng_seed(struct cuco_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

void cuco_rng_seed_stream(struct cuco_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = stream ^ 0x5851f42d4c957f2dULL;

	cuco_rng_seed(r, seed ^ splitmix64(&x));
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t cuco_rng_next(struct cuco_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t cuco_rng_below(struct cuco_rng *r, uint64_t n)
{
	uint64_t x, limit;

	if (n == 0)
		return 0;
	/* Reject the top sliver so every residue is equally likely. */
	limit = UINT64_MAX - UINT64_MAX % n;
	do
		x = cuco_rng_next(r);
	while (x >= limit);
	return x % n;
}

double cuco_rng_unit(struct cuco_rng *r)
{
	return (double)(cuco_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

int cuco_rng_weighted(struct cuco_rng *r, const double *w, int n)
{
	double total = 0, x;
	int last = -1;

	for (int i = 0; i < n; i++)
		if (isfinite(w[i]) && w[i] > 0)
			total += w[i];
	if (!(total > 0))
		return -1;
	x = cuco_rng_unit(r) * total;
	for (int i = 0; i < n; i++) {
		if (!(isfinite(w[i]) && w[i] > 0))
			continue;
		last = i;
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return last; /* rounding left x a hair above the last weight */
}
