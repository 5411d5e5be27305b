/*
 * moe_plan.h - the MoE layer's host logic in plain C11 (workload moe_layer):
 * shape checks, the seeded router's load profile and slot list, the token
 * permutation, the plan of rows and offsets every program shares, and the
 * split of experts into grouped launches. No CUDA types: host unit tests
 * include it; cuco_dev/moe.cuh includes it for the kernels and programs.
 * The layout it plans is described in moe.cuh.
 */
#ifndef CUCO_DEV_MOE_PLAN_H
#define CUCO_DEV_MOE_PLAN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CUCO_MOE_MAX_RANKS 8    /* ranks of one expert-parallel group */
#define CUCO_MOE_MAX_LOCAL 8    /* experts per rank (a grouped GEMM launch's problems) */
#define CUCO_MOE_MAX_EXPERTS 64 /* R * EL */
#define CUCO_MOE_MAX_TOPK 8     /* experts per token */

#ifdef __CUDACC__
#define CUCO_MOE_HD __host__ __device__ /* pure helpers the kernels call too */
#else
#define CUCO_MOE_HD
#endif

/* One shape of the layer on R ranks, as the manifest gives it, and what follows. */
struct cuco_moe_dims {
	int T;       /* tokens per rank */
	int H;       /* hidden size (7168) */
	int I;       /* expert intermediate size (2048): gate||up is [H, 2I], down [I, H] */
	int EL;      /* experts per rank */
	int topk;    /* experts per token in the model */
	int experts; /* the model's expert count topk is drawn from */
	int zipf;    /* popularity of expert e ~ (e + 1)^(-zipf / 100) */
	int hot;     /* < T: every source sends exactly `hot` slots to expert 0 (CUCo's splits) */
	int R, E, k; /* ranks, global experts R * EL, experts per token here */
};

/*
 * Fill d from the shape's values on R ranks; the top-k is scaled to the
 * simulated expert count: k = clamp(topk * E / experts, 1, min(topk, E)), so
 * each expert's expected share of a source's tokens stays the model's
 * topk / experts where E allows it. Returns 0, or 1 with a message in err.
 */
static inline int cuco_moe_dims_init(struct cuco_moe_dims *d, long long T, long long H, long long I,
                                     long long EL, long long topk, long long experts,
                                     long long zipf, long long hot, int R, char *err, size_t len)
{
	long long E, k;

	memset(d, 0, sizeof(*d));
	if (T < 1 || T > (1 << 20) || H < 64 || H % 64 || H > 65536 || I < 64 || I % 64 ||
	    I > 32768) {
		snprintf(err, len,
		         "moe_layer: T = %lld, H = %lld, I = %lld: need 1 <= T <= 2^20 and H, I "
		         "multiples of 64 from 64 (H <= 65536, I <= 32768)",
		         T, H, I);
		return 1;
	}
	if (R < 1 || R > CUCO_MOE_MAX_RANKS || EL < 1 || EL > CUCO_MOE_MAX_LOCAL) {
		snprintf(err, len,
		         "moe_layer: %d ranks x EL = %lld experts: need 1..%d ranks and 1..%d "
		         "experts per rank",
		         R, EL, CUCO_MOE_MAX_RANKS, CUCO_MOE_MAX_LOCAL);
		return 1;
	}
	if (topk < 1 || topk > CUCO_MOE_MAX_TOPK || experts < 1 || zipf < 1 || zipf > 1000 ||
	    hot < 1 || hot > T) {
		snprintf(
		    err, len,
		    "moe_layer: topk = %lld, experts = %lld, zipf = %lld, hot = %lld: need topk "
		    "1..%d, experts >= 1, zipf 1..1000, hot 1..T",
		    topk, experts, zipf, hot, CUCO_MOE_MAX_TOPK);
		return 1;
	}
	E = (long long)R * EL;
	k = topk * E / experts;
	if (k < 1)
		k = 1;
	if (k > topk)
		k = topk;
	if (k > E)
		k = E;
	d->T = (int)T;
	d->H = (int)H;
	d->I = (int)I;
	d->EL = (int)EL;
	d->topk = (int)topk;
	d->experts = (int)experts;
	d->zipf = (int)zipf;
	d->hot = (int)hot;
	d->R = R;
	d->E = (int)E;
	d->k = (int)k;
	return 0;
}

/*
 * counts[e] for every global expert e: the (token, slot) pairs each source
 * sends to e, summing to T * k, none above T (a token picks an expert at most
 * once). hot < T (and E > 1): expert 0 gets exactly `hot`, the rest follow
 * the Zipf weights over experts 1..E-1; else Zipf over all E. Shares are
 * rounded by largest remainder (ties to the lower expert), so an expert may
 * get no token at all. Pure and deterministic.
 */
static inline void cuco_moe_counts(const struct cuco_moe_dims *d, int *counts)
{
	double w[CUCO_MOE_MAX_EXPERTS], frac[CUCO_MOE_MAX_EXPERTS];
	int fixed[CUCO_MOE_MAX_EXPERTS];
	long long left = (long long)d->T * d->k;
	int e0 = 0;

	for (int e = 0; e < d->E; e++) {
		counts[e] = 0;
		fixed[e] = 0;
		w[e] = pow((double)(e + 1), -(double)d->zipf / 100.0);
	}
	if (d->E == 1) {
		counts[0] = d->T;
		return;
	}
	if (d->hot < d->T) {
		counts[0] = d->hot;
		fixed[0] = 1;
		left -= d->hot;
		e0 = 1;
	}
	/* experts whose share would pass T take T; the rest share what is left */
	for (;;) {
		double sum = 0;
		int capped = 0;
		for (int e = e0; e < d->E; e++)
			if (!fixed[e])
				sum += w[e];
		for (int e = e0; e < d->E; e++)
			if (!fixed[e] && (double)left * w[e] / sum > (double)d->T) {
				counts[e] = d->T;
				fixed[e] = 1;
				left -= d->T;
				capped = 1;
			}
		if (capped)
			continue;
		long long given = 0;
		for (int e = e0; e < d->E; e++)
			if (!fixed[e]) {
				double q = (double)left * w[e] / sum;
				counts[e] = (int)floor(q);
				frac[e] = q - floor(q);
				given += counts[e];
			}
		while (given < left) {
			int best = -1;
			for (int e = e0; e < d->E; e++)
				if (!fixed[e] && counts[e] < d->T &&
				    (best < 0 || frac[e] > frac[best]))
					best = e;
			if (best < 0)
				break;
			counts[best]++;
			frac[best] = -1.0;
			given++;
		}
		return;
	}
}

/* SplitMix64's finaliser (the same mix as cuco_dev/random.cuh's). */
CUCO_MOE_HD static inline uint64_t cuco_moe_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t cuco_moe_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * The router's token order on source `src` for seed: row t of the slot list
 * goes to token (a * t + b) mod T, a bijection (a coprime with T).
 */
static inline void cuco_moe_perm(uint64_t seed, int src, int T, uint64_t *a, uint64_t *b)
{
	uint64_t h = cuco_moe_mix64(seed ^ cuco_moe_mix64(0x6d6f65ull + (uint64_t)src));

	*a = (uint64_t)T > 1 ? 1 + (h % (uint64_t)T) : 1;
	while (cuco_moe_gcd(*a, (uint64_t)T) != 1)
		(*a)++;
	*b = cuco_moe_mix64(h) % (uint64_t)T;
}

/*
 * The expert of slot j of list row t: the slot list is every expert e
 * repeated counts[e] times in expert order (prefix[e] = first place), and row
 * t takes places t, T + t, ..., (k - 1) T + t; since no count exceeds T, the
 * k experts of a row are distinct.
 */
CUCO_MOE_HD static inline int cuco_moe_slot_expert(const int *prefix, int E, int T, int t, int j)
{
	long long pos = (long long)j * T + t;
	int lo = 0, hi = E - 1;

	while (lo < hi) { /* the last e with prefix[e] <= pos */
		int mid = (lo + hi + 1) / 2;
		if (prefix[mid] <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

enum cuco_moe_layout {
	CUCO_MOE_PADDED = 0, /* every send region P rows (ncclAlltoAll) */
	CUCO_MOE_PACKED = 1  /* regions back to back, exact sizes (ncclSend / ncclRecv) */
};

/* Every row count and offset one rank's programs need. */
struct cuco_moe_plan {
	struct cuco_moe_dims d;
	int rank, layout;
	int counts[CUCO_MOE_MAX_EXPERTS];     /* per source, per global expert */
	int prefix[CUCO_MOE_MAX_EXPERTS + 1]; /* of the slot list */
	int region_rows[CUCO_MOE_MAX_RANKS];  /* rows any source sends to rank d */
	int region_off[CUCO_MOE_MAX_RANKS];   /* first row of the region for d (padded: d * P) */
	int P;                                /* the largest region */
	int send_rows;                     /* rows of a send (or return) buffer: R * P or the sum */
	int exp_off[CUCO_MOE_MAX_EXPERTS]; /* row of expert e's block inside its region */
	int m[CUCO_MOE_MAX_LOCAL];         /* rows of local expert le: R * c_le */
	int c[CUCO_MOE_MAX_LOCAL];         /* rows each source sends to local expert le */
	int m_max, c_max, rem_max;         /* largest m, c and m - c over local experts */
	int cap;                           /* rows of one expert slot of X (same on every rank) */
	int x_rows;                        /* EL * cap */
};

/* Rows source s's block of local expert le starts at inside slot le of rank r's X. */
static inline int cuco_moe_src_row(const struct cuco_moe_plan *p, int r, int s, int le)
{
	int R = p->d.R;

	return ((s - r + R) % R) * p->counts[r * p->d.EL + le];
}

/*
 * Build rank's plan for layout. Every quantity that sizes a buffer (P,
 * send_rows, cap, x_rows) is the same on every rank, so windows are alike.
 */
static inline void cuco_moe_plan_init(struct cuco_moe_plan *p, const struct cuco_moe_dims *d,
                                      int rank, int layout)
{
	int R = d->R, EL = d->EL;

	memset(p, 0, sizeof(*p));
	p->d = *d;
	p->rank = rank;
	p->layout = layout;
	cuco_moe_counts(d, p->counts);
	for (int e = 0; e < d->E; e++)
		p->prefix[e + 1] = p->prefix[e] + p->counts[e];
	for (int q = 0; q < R; q++) {
		int off = 0;
		for (int le = 0; le < EL; le++) {
			p->exp_off[q * EL + le] = off;
			off += p->counts[q * EL + le];
		}
		p->region_rows[q] = off;
		if (off > p->P)
			p->P = off;
	}
	for (int q = 0, acc = 0; q < R; q++) {
		p->region_off[q] = layout == CUCO_MOE_PADDED ? q * p->P : acc;
		acc += p->region_rows[q];
		p->send_rows = layout == CUCO_MOE_PADDED ? R * p->P : acc;
	}
	/* cap: the slot must hold every rank's whole-slot launch (m_max rows) and the
	 * remote-rows launch that starts after the own block (c + rem_max rows) */
	for (int q = 0; q < R; q++)
		for (int le = 0; le < EL; le++) {
			int cq = p->counts[q * EL + le];
			if (R * cq > p->m_max)
				p->m_max = R * cq;
			if (cq > p->c_max)
				p->c_max = cq;
			if ((R - 1) * cq > p->rem_max)
				p->rem_max = (R - 1) * cq;
		}
	for (int le = 0; le < EL; le++) {
		p->c[le] = p->counts[rank * EL + le];
		p->m[le] = R * p->c[le];
	}
	for (int q = 0; q < R; q++)
		for (int le = 0; le < EL; le++) {
			int need = p->counts[q * EL + le] + p->rem_max;
			if (need > p->cap)
				p->cap = need;
		}
	if (p->m_max > p->cap)
		p->cap = p->m_max;
	if (p->cap < 1)
		p->cap = 1;
	p->x_rows = EL * p->cap;
}

/*
 * Split n experts of m[i] rows into grouped launches: a launch computes every
 * problem with its largest M, so experts of very different sizes belong in
 * different launches, but launches run one after the other, each with its own last
 * wave. Experts with rows, largest first, go to ord[0..*no); launch b takes
 * ord[start_b .. end[b]) (start_0 = 0, start_b = end[b - 1]); *nb launches. The
 * split minimises the waves the launches take on `ctas` CTAs, counting 128-row
 * tiles times tiles_n tile columns, plus an eighth of a wave per launch, by
 * dynamic programming over the sorted order: equal experts share one launch.
 */
static inline void cuco_moe_buckets(const int *m, int n, int tiles_n, int ctas, int *ord, int *no,
                                    int *end, int *nb)
{
	long long best[CUCO_MOE_MAX_LOCAL + 1];
	int cut[CUCO_MOE_MAX_LOCAL + 1], k = 0, tmp[CUCO_MOE_MAX_LOCAL];

	if (ctas < 1)
		ctas = 1;
	*no = 0;
	for (int i = 0; i < n; i++)
		if (m[i] > 0)
			ord[(*no)++] = i;
	for (int i = 1; i < *no; i++) /* by rows, largest first (stable) */
		for (int j = i; j > 0 && m[ord[j]] > m[ord[j - 1]]; j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	best[0] = 0;
	cut[0] = 0;
	for (int i = 1; i <= *no; i++) { /* the first i experts; the last launch starts at cut[i] */
		best[i] = -1;
		cut[i] = 0;
		for (int j = 0; j < i; j++) {
			long long tiles = (long long)(i - j) * ((m[ord[j]] + 127) / 128) * tiles_n;
			long long c = best[j] + (tiles + ctas - 1) / ctas * ctas + ctas / 8;
			if (best[i] < 0 || c < best[i]) {
				best[i] = c;
				cut[i] = j;
			}
		}
	}
	for (int i = *no; i > 0; i = cut[i])
		tmp[k++] = i;
	for (int b = 0; b < k; b++)
		end[b] = tmp[k - 1 - b];
	*nb = k;
}

#endif
