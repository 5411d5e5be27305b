/*
 * zigzag.cuh - how context parallelism splits a sequence over ranks, and
 * which (query chunk, key chunk) pairs a causal mask leaves visible.
 *
 * A sequence of S tokens is cut into R * parts chunks of L = S / (R * parts)
 * tokens. parts = 1 (plain): rank r holds chunk r. parts = 2 (zigzag): rank r
 * holds chunks r and 2R-1-r, so under a causal mask every rank has the same
 * number of visible (query, key) pairs. A rank stores its chunks one after
 * the other: local row i of rank r is in its part i / L.
 *
 * Plain C (static inline, no CUDA types): the programs of attention_cp, its
 * reference and the unit tests (tests/unit/test_attention_cp.c) use the same
 * arithmetic. Under nvcc every function is also callable on the device.
 */
#ifndef CUCO_DEV_ZIGZAG_CUH
#define CUCO_DEV_ZIGZAG_CUH

#ifdef __CUDACC__
#define CUCO_CP_FN static inline __host__ __device__
#else
#define CUCO_CP_FN static inline
#endif

#define CUCO_CP_MAX_CALLS 4 /* attention calls of one ring step: 2 query parts x 2 key parts */

/* What a causal mask leaves of one (query range, key range) pair. */
enum cuco_cp_vis {
	CUCO_CP_MASKED = 0,  /* no key visible to any query: skip the pair */
	CUCO_CP_FULL = 1,    /* every key visible to every query: no mask needed */
	CUCO_CP_PARTIAL = 2, /* the diagonal crosses the pair: mask by position */
};

/* Tokens of one chunk: S / (nranks * parts). */
CUCO_CP_FN long long cuco_cp_chunk_len(long long S, int nranks, int parts)
{
	return S / ((long long)nranks * parts);
}

/* Index (0 .. nranks*parts-1) of the chunk that part `part` of rank `rank` holds. */
CUCO_CP_FN int cuco_cp_chunk_index(int nranks, int parts, int rank, int part)
{
	if (parts == 1)
		return rank;
	return part == 0 ? rank : 2 * nranks - 1 - rank;
}

/* Global position of the first token of part `part` of rank `rank`. */
CUCO_CP_FN long long cuco_cp_pos0(long long S, int nranks, int parts, int rank, int part)
{
	return cuco_cp_chunk_len(S, nranks, parts) * cuco_cp_chunk_index(nranks, parts, rank, part);
}

/* Global position of local row `row` (0 .. S/nranks - 1) of rank `rank`. */
CUCO_CP_FN long long cuco_cp_pos(long long S, int nranks, int parts, int rank, long long row)
{
	long long L = cuco_cp_chunk_len(S, nranks, parts);
	return cuco_cp_pos0(S, nranks, parts, rank, (int)(row / L)) + row % L;
}

/*
 * The causal mask over queries at positions [q0, q0 + qn) and keys at
 * [k0, k0 + kn) (key k visible to query q iff k <= q); without causal every
 * pair is FULL.
 */
CUCO_CP_FN int cuco_cp_classify(long long q0, long long qn, long long k0, long long kn, int causal)
{
	if (!causal || k0 + kn - 1 <= q0)
		return CUCO_CP_FULL;
	if (k0 > q0 + qn - 1)
		return CUCO_CP_MASKED;
	return CUCO_CP_PARTIAL;
}

/* Visible (query, key) pairs of the same ranges (the work the mask leaves). */
CUCO_CP_FN long long cuco_cp_visible_pairs(long long q0, long long qn, long long k0, long long kn,
                                           int causal)
{
	long long n = 0;

	if (!causal)
		return qn * kn;
	for (long long q = q0; q < q0 + qn; q++) {
		long long v = q - k0 + 1;
		n += v < 0 ? 0 : (v > kn ? kn : v);
	}
	return n;
}

/* Visible pairs of rank `rank`'s queries against the whole sequence: its attention work. */
CUCO_CP_FN long long cuco_cp_rank_pairs(long long S, int nranks, int parts, int rank, int causal)
{
	long long L = cuco_cp_chunk_len(S, nranks, parts), n = 0;

	for (int a = 0; a < parts; a++)
		n +=
		    cuco_cp_visible_pairs(cuco_cp_pos0(S, nranks, parts, rank, a), L, 0, S, causal);
	return n;
}

/*
 * One attention call of a ring step: local query rows [q_row0, q_row0 + q_rows)
 * against rows [k_row0, k_row0 + k_rows) of the key block held, at global
 * positions q_pos0 and k_pos0; causal says whether the call must mask.
 */
struct cuco_cp_call {
	long long q_row0, q_rows, k_row0, k_rows;
	long long q_pos0, k_pos0;
	int causal;
};

/*
 * The calls that attend rank me's queries to rows [k_row0, k_row0 + k_rows) of the
 * key block of rank src: the whole block (k_row0 0, k_rows S/nranks) or a range
 * inside one of its parts. Fewest first: one call over all query rows when no
 * pair needs a mask (positions then do not matter), else per query part one call
 * over the whole range when every key part of it is fully visible, else one call
 * per visible (query part, key part) pair, PARTIAL ones masked. Fully masked
 * pairs get no call. Writes at most CUCO_CP_MAX_CALLS entries of calls; returns
 * how many.
 */
CUCO_CP_FN int cuco_cp_range_calls(long long S, int nranks, int parts, int me, int src,
                                   long long k_row0, long long k_rows, int causal,
                                   struct cuco_cp_call *calls)
{
	long long L = cuco_cp_chunk_len(S, nranks, parts);
	long long kr0[2] = {0, 0}, kn[2] = {0, 0}, kp0[2] = {0, 0};
	int vis[2][2] = {{0, 0}, {0, 0}}, n = 0, nk = 0, all_full = 1;

	if (k_row0 == 0 && k_rows == L * parts) {
		for (int b = 0; b < parts; b++) {
			kr0[nk] = b * L;
			kn[nk] = L;
			kp0[nk++] = cuco_cp_pos0(S, nranks, parts, src, b);
		}
	} else {
		kr0[nk] = k_row0;
		kn[nk] = k_rows;
		kp0[nk++] = cuco_cp_pos(S, nranks, parts, src, k_row0);
	}
	for (int a = 0; a < parts; a++)
		for (int b = 0; b < nk; b++) {
			vis[a][b] = cuco_cp_classify(cuco_cp_pos0(S, nranks, parts, me, a), L,
			                             kp0[b], kn[b], causal);
			all_full &= vis[a][b] == CUCO_CP_FULL;
		}
	if (all_full) {
		struct cuco_cp_call c = {
		    0, L * parts, k_row0, k_rows, cuco_cp_pos0(S, nranks, parts, me, 0), kp0[0], 0};
		calls[n++] = c;
		return n;
	}
	for (int a = 0; a < parts; a++) {
		long long q0 = cuco_cp_pos0(S, nranks, parts, me, a);
		int row_full = 1;
		for (int b = 0; b < nk; b++)
			row_full &= vis[a][b] == CUCO_CP_FULL;
		if (row_full) {
			struct cuco_cp_call c = {a * L, L, k_row0, k_rows, q0, kp0[0], 0};
			calls[n++] = c;
			continue;
		}
		for (int b = 0; b < nk; b++) {
			if (vis[a][b] == CUCO_CP_MASKED)
				continue;
			struct cuco_cp_call c = {
			    a * L, L, kr0[b], kn[b], q0, kp0[b], vis[a][b] == CUCO_CP_PARTIAL};
			calls[n++] = c;
		}
	}
	return n;
}

/* The calls of one ring step: rank me's queries against the whole block of rank src. */
CUCO_CP_FN int cuco_cp_step_calls(long long S, int nranks, int parts, int me, int src, int causal,
                                  struct cuco_cp_call *calls)
{
	return cuco_cp_range_calls(S, nranks, parts, me, src, 0, S / nranks, causal, calls);
}

#endif
