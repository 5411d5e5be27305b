/*
 * kv_table.h - the paged KV cache's geometry and block table of kv_transfer,
 * shared by the workload (C++/CUDA host code), its programs and the unit
 * tests (C11). Header-only, host-side, no CUDA needed.
 *
 * The decode rank's cache pool holds kv_pool_pages() pages of `page` tokens
 * each, per layer and per K / V: a quarter more than the kv_pages() pages the
 * request needs, as other requests' pages would be. The block table maps the
 * request's token block j (tokens [j * page, (j + 1) * page)) to pool page
 * table[j]; it is the first kv_pages() entries of a permutation of the pool drawn
 * from KV_TABLE_SEED, so the transfer is a scatter and a quarter of the pool is
 * never named.
 */
#ifndef KV_TABLE_H
#define KV_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KV_HD __host__ __device__ /* usable in kernels as well */
#else
#define KV_HD
#endif

/* Token blocks of a request of S tokens: ceil(S / page). */
static inline KV_HD long long kv_pages(long long S, long long page)
{
	return page > 0 ? (S + page - 1) / page : 0;
}

/* Pages of the pool: kv_pages plus a quarter more (at least one more). */
static inline KV_HD long long kv_pool_pages(long long S, long long page)
{
	long long n = kv_pages(S, page);

	return n + (n + 3) / 4;
}

/* SplitMix64: one step of a counter-based 64-bit generator. */
static inline uint64_t kv_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * The seed of every block table: the request's page assignment is part of the shape, fixed
 * whatever the input seed, as a scheduler hands it to the transfer (whose host knows it: the
 * copy-engine programs keep a host copy from init). The input seed draws the data.
 */
#define KV_TABLE_SEED 1u

/* The stream of the block table of pair p (prefill rank 2p, decode rank 2p + 1). */
static inline uint64_t kv_table_stream(int pair)
{
	return 0x6b765f7461626c65ull + (uint64_t)pair; /* "kv_table" */
}

/*
 * perm[0..pool) = a permutation of [0, pool) drawn from (seed, stream) by a
 * Fisher-Yates shuffle: the same arguments give the same permutation on any
 * machine. The block table is its first kv_pages() entries.
 */
static inline void kv_permutation(int32_t *perm, long long pool, uint64_t seed, uint64_t stream)
{
	uint64_t state = kv_mix64(seed ^ kv_mix64(stream));

	for (long long i = 0; i < pool; i++)
		perm[i] = (int32_t)i;
	for (long long i = pool - 1; i > 0; i--) {
		uint64_t r;
		long long j;
		int32_t tmp;

		state = kv_mix64(state);
		r = state >> 11; /* 53 bits: modulo bias below 2^-20 for any pool here */
		j = (long long)(r % (uint64_t)(i + 1));
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
}

/*
 * Element offset in the cache tensor [L][2][pool][page][KV] of token t's row
 * of layer l, part kv (0: K, 1: V), for block table table.
 */
static inline KV_HD size_t kv_cache_offset(const int32_t *table, long long pool, long long page,
                                           long long KV, long long l, int kv, long long t)
{
	long long slot = t % page, p = table[t / page];

	return (size_t)((((l * 2 + kv) * pool + p) * page + slot) * KV);
}

#endif
