/*
 * moe.cuh - building blocks of the expert-parallel MoE layer (workload
 * moe_layer): the seeded router's load profile, the row layout that every
 * program of the workload shares (who sends which rows where), and, under
 * nvcc, the kernels (routing fill, slot ranks, permute, row copies, SwiGLU,
 * weighted combine) and the grouped expert GEMM launches.
 *
 * The first half is plain C11 (no CUDA types) so that host unit tests can
 * include it: shape checks, per-expert counts, the slot list, the token
 * permutation and the plan of rows and offsets.
 *
 * Layout (R ranks, EL local experts each, E = R * EL global experts, expert e
 * on rank e / EL). Every source rank sends counts[e] (token, slot) pairs to
 * expert e; the counts are part of the shape (the load profile), the same for
 * every source, so every rank knows every rank's sizes without exchanging
 * them. Send layout on a source: one region per destination d (padded: at
 * d * P rows, P the largest region; packed: at the prefix of the region
 * sizes), inside it one block per local expert of d in order, inside a block
 * the source's tokens in token order. Expert-major layout on a receiver r
 * (the grouped GEMM's input X): slot le at le * cap rows, inside it one block
 * per source in the order r, r + 1, ... (mod R), each counts[r * EL + le]
 * rows: the receiver's own tokens come first, so they can be computed while
 * the others are in flight.
 */
#ifndef CUCO_DEV_MOE_CUH
#define CUCO_DEV_MOE_CUH

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
		snprintf(err, len, "moe_layer: %d ranks x EL = %lld experts: need 1..%d ranks and 1..%d experts per rank",
			 R, EL, CUCO_MOE_MAX_RANKS, CUCO_MOE_MAX_LOCAL);
		return 1;
	}
	if (topk < 1 || topk > CUCO_MOE_MAX_TOPK || experts < 1 || zipf < 1 || zipf > 1000 ||
	    hot < 1 || hot > T) {
		snprintf(err, len,
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
				if (!fixed[e] && counts[e] < d->T && (best < 0 || frac[e] > frac[best]))
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
	int send_rows;                        /* rows of a send (or return) buffer: R * P or the sum */
	int exp_off[CUCO_MOE_MAX_EXPERTS];    /* row of expert e's block inside its region */
	int m[CUCO_MOE_MAX_LOCAL];            /* rows of local expert le: R * c_le */
	int c[CUCO_MOE_MAX_LOCAL];            /* rows each source sends to local expert le */
	int m_max, c_max, rem_max;            /* largest m, c and m - c over local experts */
	int cap;                              /* rows of one expert slot of X (same on every rank) */
	int x_rows;                           /* EL * cap */
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
static inline void cuco_moe_buckets(const int *m, int n, int tiles_n, int ctas, int *ord, int *no, int *end,
				    int *nb)
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

#ifdef __CUDACC__
/* ==================================================================== device */
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#ifndef CUCO_MOE_KERNELS_ONLY /* a workload's generator and reference need no GEMM */
#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/launch.cuh>
#endif

namespace cuco {

/* Per global expert: a row base pointer (or a row count); null skips the expert. */
struct moe_bases {
	char *p[CUCO_MOE_MAX_EXPERTS];
};

/* Most row segments one copy launch takes: (R - 1) * EL remote blocks + EL own. */
#define CUCO_MOE_MAX_SEGS 64
struct moe_seg {
	const char *src;
	char *dst;
	int rows;
};
struct moe_segs {
	int n;
	moe_seg s[CUCO_MOE_MAX_SEGS];
};

/* The router's list prefix and permutation, as one kernel argument. */
struct moe_route_args {
	int prefix[CUCO_MOE_MAX_EXPERTS + 1];
	int E, T, k;
	unsigned long long a, b, seed, stream;
};

__device__ inline float moe_uniform01(uint64_t seed, uint64_t stream, uint64_t i)
{
	uint64_t h = cuco_moe_mix64(seed ^ cuco_moe_mix64(stream * 0x632be59bd9b4e019ull + i));
	return (float)(h >> 40) * (1.0f / 16777216.0f);
}

/*
 * The seeded router of one source: idx[tok * k + j] (global expert) and
 * w[tok * k + j] (gate weight, in (0, 1], a token's k weights summing to 1)
 * for every token tok = (a t + b) mod T of list row t.
 */
__global__ void moe_route_kernel(moe_route_args r, int *idx, float *w)
{
	for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < r.T; t += gridDim.x * blockDim.x) {
		long long tok = (long long)((r.a * (unsigned long long)t + r.b) % (unsigned long long)r.T);
		float u[CUCO_MOE_MAX_TOPK], sum = 0.f;
		for (int j = 0; j < r.k; j++) {
			u[j] = 0.25f + moe_uniform01(r.seed, r.stream, (uint64_t)tok * r.k + j);
			sum += u[j];
		}
		for (int j = 0; j < r.k; j++) {
			idx[tok * r.k + j] = cuco_moe_slot_expert(r.prefix, r.E, r.T, t, j);
			w[tok * r.k + j] = u[j] / sum;
		}
	}
}

/* Fill n bf16 values with scale * uniform[-1, 1) from (seed, stream). */
__global__ void moe_fill_bf16_kernel(__nv_bfloat16 *p, size_t n, uint64_t seed, uint64_t stream,
				     float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16(scale * (2.f * moe_uniform01(seed, stream, i) - 1.f));
}

/*
 * pos[t * k + j] = the rank of token t among the tokens routed to expert
 * idx[t * k + j], in token order (the row inside the expert's block). One
 * CTA of 1024 threads per global expert; a CTA whose count differs from
 * expect[e] (the plan's) traps, so a routing that does not match the shape's
 * load profile never passes silently.
 */
__global__ void __launch_bounds__(1024) moe_rank_kernel(const int *idx, int T, int k, int *pos,
							moe_route_args expect)
{
	__shared__ int warp_sum[32];
	__shared__ int base;
	const int e = blockIdx.x, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;

	if (threadIdx.x == 0)
		base = 0;
	__syncthreads();
	for (int t0 = 0; t0 < T; t0 += 1024) {
		int t = t0 + threadIdx.x, slot = -1;
		if (t < T)
			for (int j = 0; j < k; j++)
				if (idx[t * k + j] == e)
					slot = j;
		unsigned bal = __ballot_sync(0xffffffffu, slot >= 0);
		if (lane == 0)
			warp_sum[wid] = __popc(bal);
		__syncthreads();
		int before = base;
		for (int w = 0; w < wid; w++)
			before += warp_sum[w];
		before += __popc(bal & ((1u << lane) - 1u));
		if (slot >= 0)
			pos[t * k + slot] = before;
		__syncthreads();
		if (threadIdx.x == 0)
			for (int w = 0; w < 32; w++)
				base += warp_sum[w];
		__syncthreads();
	}
	if (threadIdx.x == 0 && base != expect.prefix[e + 1] - expect.prefix[e]) {
		printf("moe_rank_kernel: expert %d got %d slots, the shape's profile says %d\n", e, base,
		       expect.prefix[e + 1] - expect.prefix[e]);
		__trap();
	}
}

/*
 * Permute: token t's row of x (row_bytes, a multiple of 16) to
 * bases.p[e] + pos * row_bytes for each of its experts e whose base is set.
 * One warp per (token, slot).
 */
__global__ void moe_permute_kernel(const char *x, const int *idx, const int *pos, int T, int k,
				   int row_bytes, moe_bases bases)
{
	const int lane = threadIdx.x & 31;
	const long long nw = (long long)gridDim.x * (blockDim.x >> 5);
	for (long long s = blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);
	     s < (long long)T * k; s += nw) {
		char *b = bases.p[idx[s]];
		if (!b)
			continue;
		const uint4 *src = (const uint4 *)(x + (s / k) * (long long)row_bytes);
		uint4 *dst = (uint4 *)(b + (long long)pos[s] * row_bytes);
		for (int v = lane; v < row_bytes / 16; v += 32)
			dst[v] = src[v];
	}
}

/* Copy every segment's rows (row_bytes each, multiple of 16): blockIdx.y = segment. */
__global__ void moe_copy_kernel(moe_segs segs, int row_bytes)
{
	const moe_seg sg = segs.s[blockIdx.y];
	const long long n = (long long)sg.rows * (row_bytes / 16);
	const uint4 *src = (const uint4 *)sg.src;
	uint4 *dst = (uint4 *)sg.dst;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

/*
 * SwiGLU over the rows of every segment: h[r, c] = silu(g[r, c]) * g[r, I + c]
 * for the gate||up rows g (2I wide) at seg.src and h (I wide) at seg.dst.
 */
__global__ void moe_swiglu_kernel(moe_segs segs, int I)
{
	const moe_seg sg = segs.s[blockIdx.y];
	const long long n = (long long)sg.rows * (I / 2);
	const __nv_bfloat162 *g = (const __nv_bfloat162 *)sg.src;
	__nv_bfloat162 *h = (__nv_bfloat162 *)sg.dst;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		long long r = i / (I / 2), c = i % (I / 2);
		float2 a = __bfloat1622float2(g[r * I + c]);
		float2 u = __bfloat1622float2(g[r * I + I / 2 + c]);
		a.x = a.x / (1.f + __expf(-a.x)) * u.x;
		a.y = a.y / (1.f + __expf(-a.y)) * u.y;
		h[r * (I / 2) + c] = __float22bfloat162_rn(a);
	}
}

/*
 * Combine: y[t] = sum_j w[t, j] * row(t, j) in fp32, row(t, j) = the expert
 * output of token t's slot j at bases.p[idx] + pos * H * 2. One CTA per token.
 */
__global__ void __launch_bounds__(256) moe_combine_kernel(__nv_bfloat16 *y, const int *idx,
							  const int *pos, const float *w, int T,
							  int k, int H, moe_bases bases)
{
	for (int t = blockIdx.x; t < T; t += gridDim.x) {
		const __nv_bfloat16 *rows[CUCO_MOE_MAX_TOPK];
		float wt[CUCO_MOE_MAX_TOPK];
		for (int j = 0; j < k; j++) {
			rows[j] = (const __nv_bfloat16 *)(bases.p[idx[t * k + j]] +
							   (long long)pos[t * k + j] * H * 2);
			wt[j] = w[t * k + j];
		}
		for (int c = threadIdx.x * 8; c < H; c += blockDim.x * 8) {
			float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int j = 0; j < k; j++) {
				uint4 v = *(const uint4 *)(rows[j] + c);
				const __nv_bfloat162 *b = (const __nv_bfloat162 *)&v;
				for (int q = 0; q < 4; q++) {
					float2 f = __bfloat1622float2(b[q]);
					acc[2 * q] += wt[j] * f.x;
					acc[2 * q + 1] += wt[j] * f.y;
				}
			}
			uint4 o;
			__nv_bfloat162 *ob = (__nv_bfloat162 *)&o;
			for (int q = 0; q < 4; q++)
				ob[q] = __floats2bfloat162_rn(acc[2 * q], acc[2 * q + 1]);
			*(uint4 *)(y + (long long)t * H + c) = o;
		}
	}
}

/* ====================================================================== host */

/* The router arguments of source src for seed (the workload's generator). */
static inline moe_route_args moe_route_of(const cuco_moe_plan *p, uint64_t seed, int src)
{
	moe_route_args r;
	uint64_t a, b;
	memset(&r, 0, sizeof(r));
	for (int e = 0; e <= p->d.E; e++)
		r.prefix[e] = p->prefix[e];
	cuco_moe_perm(seed, src, p->d.T, &a, &b);
	r.E = p->d.E;
	r.T = p->d.T;
	r.k = p->d.k;
	r.a = a;
	r.b = b;
	r.seed = seed;
	r.stream = 5000 + (uint64_t)src;
	return r;
}

#ifndef CUCO_MOE_KERNELS_ONLY
/*
 * One grouped launch of cuco's GEMM over local experts: problem i is
 * C_i[m_i, N] = A_i[m_i, K] * B_i[K, N] (row-major, lda K, ldb N, ldc N).
 * gemm_bf16_group runs every problem with the plan's M, here the largest m_i;
 * each A_i's tensor map is re-encoded with its own m_i, so the rows past it
 * load as zeros and nothing is read past a problem's rows (rows still in
 * flight, say). The rows past m_i up to the largest are still computed and
 * stored: C_i must have room for them (the plan's `cap`). Problems with no
 * rows are left out; n == 0 launches nothing.
 */
struct moe_group_launch {
	int n;
	gemm_bf16_plan plan;
	gemm_bf16_group grp;
};

static inline cudaError_t moe_group_build(moe_group_launch *L, int n, const __nv_bfloat16 *const *A,
					  const int *m, const __nv_bfloat16 *const *B,
					  __nv_bfloat16 *const *C, int N, int K, int max_ctas,
					  int tile_n)
{
	const __nv_bfloat16 *a[CUCO_MOE_MAX_LOCAL], *b[CUCO_MOE_MAX_LOCAL];
	__nv_bfloat16 *c[CUCO_MOE_MAX_LOCAL];
	int mm[CUCO_MOE_MAX_LOCAL], np = 0, M = 0;
	cudaError_t e;

	memset(L, 0, sizeof(*L));
	for (int i = 0; i < n; i++)
		if (m[i] > 0) {
			a[np] = A[i];
			b[np] = B[i];
			c[np] = C[i];
			mm[np] = m[i];
			if (m[i] > M)
				M = m[i];
			np++;
		}
	L->n = np;
	if (np == 0)
		return cudaSuccess;
	gemm_bf16_args g = {a[0], b[0], c[0], M, N, K, K, N, N};
	if ((e = gemm_bf16_plan_init(&L->plan, g, max_ctas)) != cudaSuccess)
		return e;
	int avail = max_ctas > 0 && max_ctas < L->plan.sms ? max_ctas : L->plan.sms;
	int want = tile_n > 0 ? tile_n
			      : gemm_bf16_alone_tile_n(L->plan.bn, np * L->plan.tiles_m * L->plan.tiles_n,
						       avail);
	if (want < L->plan.bn && (e = gemm_bf16_plan_narrow(&L->plan, want, max_ctas)) != cudaSuccess)
		return e;
	if ((e = gemm_bf16_group_init(&L->grp, &L->plan, np, a, b, c, nullptr, 1, 0, max_ctas)) !=
	    cudaSuccess)
		return e;
	for (int i = 0; i < np; i++)
		if (mm[i] != M &&
		    (e = gemm_detail::encode_2d(&L->grp.tmA[i], a[i], (unsigned long long)K,
						 (unsigned long long)mm[i], (unsigned long long)K, 64,
						 128)) != cudaSuccess)
			return e;
	return cudaSuccess;
}

static inline cudaError_t moe_group_run(const moe_group_launch *L, cudaStream_t s)
{
	return L->n ? gemm_bf16_run_group(&L->plan, &L->grp, s) : cudaSuccess;
}

/* The experts of one GEMM as the grouped launches cuco_moe_buckets picks (for 256-column tiles). */
struct moe_group_set {
	int nb;
	moe_group_launch b[CUCO_MOE_MAX_LOCAL];
};

static inline cudaError_t moe_group_set_build(moe_group_set *S, int n, const __nv_bfloat16 *const *A,
					      const int *m, const __nv_bfloat16 *const *B,
					      __nv_bfloat16 *const *C, int N, int K, int max_ctas,
					      int tile_n)
{
	int ord[CUCO_MOE_MAX_LOCAL], end[CUCO_MOE_MAX_LOCAL], no, nb;
	cudaError_t e;

	int dev = 0, sms = 132;
	memset(S, 0, sizeof(*S));
	if (cudaGetDevice(&dev) == cudaSuccess)
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	cuco_moe_buckets(m, n, (N + 255) / 256, max_ctas > 0 && max_ctas < sms ? max_ctas : sms, ord, &no, end, &nb);
	for (int b = 0, start = 0; b < nb; start = end[b], b++) { /* largest experts first */
		const __nv_bfloat16 *a[CUCO_MOE_MAX_LOCAL], *bb[CUCO_MOE_MAX_LOCAL];
		__nv_bfloat16 *c[CUCO_MOE_MAX_LOCAL];
		int mm[CUCO_MOE_MAX_LOCAL], k = 0;
		for (int j = start; j < end[b]; j++, k++) {
			a[k] = A[ord[j]];
			bb[k] = B[ord[j]];
			c[k] = C[ord[j]];
			mm[k] = m[ord[j]];
		}
		if ((e = moe_group_build(&S->b[S->nb], k, a, mm, bb, c, N, K, max_ctas, tile_n)) != cudaSuccess)
			return e;
		S->nb++;
	}
	return cudaSuccess;
}

static inline cudaError_t moe_group_set_run(const moe_group_set *S, cudaStream_t s)
{
	cudaError_t e = cudaSuccess;
	for (int i = 0; i < S->nb && e == cudaSuccess; i++)
		e = moe_group_run(&S->b[i], s);
	return e;
}

/* Enqueue moe_copy_kernel over segs on s (nothing when empty). */
static inline cudaError_t moe_copy(const moe_segs *segs, int row_bytes, int ctas, int threads,
				   cudaStream_t s)
{
	if (segs->n == 0)
		return cudaSuccess;
	int bx = ctas / segs->n;
	moe_copy_kernel<<<dim3(bx < 1 ? 1 : bx, segs->n), threads, 0, s>>>(*segs, row_bytes);
	return cudaGetLastError();
}

static inline void moe_segs_add(moe_segs *sg, const void *src, void *dst, int rows)
{
	if (rows <= 0)
		return;
	sg->s[sg->n].src = (const char *)src;
	sg->s[sg->n].dst = (char *)dst;
	sg->s[sg->n].rows = rows;
	sg->n++;
}


/* ============================================================ program state */

/* The three ways a program runs the experts over its slots of X. */
enum moe_rows {
	moe_rows_all = 0, /* every row of every slot: one launch per GEMM */
	moe_rows_own = 1, /* the rank's own tokens (rows [0, c) of each slot) */
	moe_rows_rest = 2 /* the other sources' tokens (rows [c, m)) */
};

/* The GEMM launches of one tensor set (keyed by its weights and x). */
struct moe_set {
	const void *x, *wgu, *wdown;
	moe_group_set up[3], down[3]; /* by enum moe_rows */
};

#define CUCO_MOE_MAX_SETS 16

/*
 * What every moe_layer program holds: the plan and its buffers. Scratch
 * (the harness's symmetric window, so that any of it may be a target of
 * peers' stores or copies) holds, in rows of H (or 2I, I) bf16:
 *   sendb [R * P, H]  permuted tokens by destination; later the combine's receive
 *   recvb [R * P, H]  dispatch receive by source; later the combine's send
 *   X [x_rows, H], G [x_rows, 2I], Hb [x_rows, I], Y [x_rows, H]  expert-major
 * Each receive buffer is the other phase's send buffer, so data left from a
 * previous run is never what a phase expects: a phase that did not wait for
 * its data reads the wrong rows, not stale right ones.
 */
struct moe_prog {
	struct cuco_ctx *ctx;
	cuco_moe_plan p;
	int H, I, T, k, R, me, EL;
	size_t row_bytes;                 /* H * 2 */
	char *sendb, *recvb, *X, *G, *Hb, *Y;
	int *pos;                          /* [T * k] row of each slot inside its expert's block */
	int max_ctas, tile_n;              /* for cuco's grouped GEMMs (0: all SMs; 0: per launch) */
	int nsets;
	moe_set sets[CUCO_MOE_MAX_SETS];
};

static inline size_t moe_align(size_t b) { return (b + 255) & ~(size_t)255; }

/* Scratch bytes a program with plan p asks for (the same on every rank). */
static inline size_t moe_scratch_bytes(const cuco_moe_plan *p)
{
	size_t R = (size_t)p->d.R, P = (size_t)p->P, H = (size_t)p->d.H, I = (size_t)p->d.I;
	size_t x = (size_t)p->x_rows;
	return 2 * moe_align(R * P * H * 2) + moe_align(x * H * 2) * 2 + moe_align(x * 2 * I * 2) +
	       moe_align(x * I * 2);
}

/* The plan of ctx's shape and rank (0, or 1 with ctx->errbuf). */
static inline int moe_plan_of(const struct cuco_ctx *ctx, int layout, cuco_moe_plan *p)
{
	struct cuco_moe_dims d;
	const struct cuco_shape *s = ctx->shape;
	if (cuco_moe_dims_init(&d, cuco_shape_get(s, "T", -1), cuco_shape_get(s, "H", -1),
			       cuco_shape_get(s, "I", -1), cuco_shape_get(s, "EL", -1),
			       cuco_shape_get(s, "topk", -1), cuco_shape_get(s, "experts", -1),
			       cuco_shape_get(s, "zipf", -1), cuco_shape_get(s, "hot", -1), ctx->nranks,
			       cuco::ctx_errbuf(ctx), sizeof(ctx->errbuf)))
		return 1;
	cuco_moe_plan_init(p, &d, ctx->rank, layout);
	return 0;
}

/* Requirements: the scratch above (plus extra bytes of the program's own). */
static inline int moe_requirements(const struct cuco_ctx *ctx, int layout, struct cuco_requirements *req,
				   size_t extra)
{
	cuco_moe_plan p;
	if (moe_plan_of(ctx, layout, &p))
		return 1;
	req->scratch_bytes = moe_scratch_bytes(&p) + moe_align(extra);
	return 0;
}

/* Init: plan, buffers carved from ctx->scratch, the slot-rank buffer. */
static inline int moe_prog_init(struct cuco_ctx *ctx, moe_prog *m, int layout)
{
	memset(m, 0, sizeof(*m));
	m->ctx = ctx;
	if (moe_plan_of(ctx, layout, &m->p))
		return 1;
	const cuco_moe_plan *p = &m->p;
	m->H = p->d.H;
	m->I = p->d.I;
	m->T = p->d.T;
	m->k = p->d.k;
	m->R = p->d.R;
	m->me = ctx->rank;
	m->EL = p->d.EL;
	m->row_bytes = (size_t)m->H * 2;
	if (!ctx->scratch || ctx->scratch_bytes < moe_scratch_bytes(p)) {
		CUCO_ERRF(ctx, "moe_layer: needs a scratch window of %zu bytes", moe_scratch_bytes(p));
		return 1;
	}
	size_t sr = (size_t)m->R * p->P, x = (size_t)p->x_rows;
	char *c = (char *)ctx->scratch;
	m->sendb = c;
	c += moe_align(sr * m->row_bytes);
	m->recvb = c;
	c += moe_align(sr * m->row_bytes);
	m->X = c;
	c += moe_align(x * m->row_bytes);
	m->G = c;
	c += moe_align(x * 2 * m->I * 2);
	m->Hb = c;
	c += moe_align(x * m->I * 2);
	m->Y = c;
	CUCO_CUDA_TRY(cudaMalloc((void **)&m->pos, sizeof(int) * (size_t)m->T * m->k), ctx);
	return 0;
}

static inline void moe_prog_release(moe_prog *m)
{
	cudaFree(m->pos);
	m->pos = nullptr;
}

/* Bytes past the plan's buffers in scratch (a program's own area). */
static inline char *moe_scratch_extra(const moe_prog *m)
{
	return (char *)m->ctx->scratch + moe_scratch_bytes(&m->p);
}

/* Row r of slot le of an expert-major buffer of width w elements. */
static inline char *moe_slot_row(const moe_prog *m, char *buf, int w, int le, int r)
{
	return buf + ((size_t)le * m->p.cap + (size_t)r) * (size_t)w * 2;
}

/* First row, in its slot, and rows of `which` rows of local expert le. */
static inline void moe_rows_of(const moe_prog *m, int which, int le, int *r0, int *n)
{
	const cuco_moe_plan *p = &m->p;
	*r0 = which == moe_rows_rest ? p->c[le] : 0;
	*n = which == moe_rows_all ? p->m[le] : which == moe_rows_own ? p->c[le] : p->m[le] - p->c[le];
}

/* The set of tensors t (x, topk_idx, topk_w, w_gate_up, w_down, y): its GEMM launches. */
static inline moe_set *moe_set_get(moe_prog *m, const struct cuco_tensor *t)
{
	for (int i = 0; i < m->nsets; i++)
		if (m->sets[i].x == t[0].ptr && m->sets[i].wgu == t[3].ptr && m->sets[i].wdown == t[4].ptr)
			return &m->sets[i];
	if (m->nsets >= CUCO_MOE_MAX_SETS) {
		CUCO_ERRF(m->ctx, "moe_layer: more than %d tensor sets", CUCO_MOE_MAX_SETS);
		return nullptr;
	}
	moe_set *st = &m->sets[m->nsets];
	memset(st, 0, sizeof(*st));
	st->x = t[0].ptr;
	st->wgu = t[3].ptr;
	st->wdown = t[4].ptr;
	for (int which = 0; which < 3; which++) {
		const __nv_bfloat16 *a1[CUCO_MOE_MAX_LOCAL], *b1[CUCO_MOE_MAX_LOCAL], *a2[CUCO_MOE_MAX_LOCAL],
			*b2[CUCO_MOE_MAX_LOCAL];
		__nv_bfloat16 *c1[CUCO_MOE_MAX_LOCAL], *c2[CUCO_MOE_MAX_LOCAL];
		int rows[CUCO_MOE_MAX_LOCAL];
		for (int le = 0; le < m->EL; le++) {
			int r0;
			moe_rows_of(m, which, le, &r0, &rows[le]);
			a1[le] = (const __nv_bfloat16 *)moe_slot_row(m, m->X, m->H, le, r0);
			b1[le] = (const __nv_bfloat16 *)t[3].ptr + (size_t)le * m->H * 2 * m->I;
			c1[le] = (__nv_bfloat16 *)moe_slot_row(m, m->G, 2 * m->I, le, r0);
			a2[le] = (const __nv_bfloat16 *)moe_slot_row(m, m->Hb, m->I, le, r0);
			b2[le] = (const __nv_bfloat16 *)t[4].ptr + (size_t)le * m->I * m->H;
			c2[le] = (__nv_bfloat16 *)moe_slot_row(m, m->Y, m->H, le, r0);
		}
		cudaError_t e = moe_group_set_build(&st->up[which], m->EL, a1, rows, b1, c1, 2 * m->I, m->H,
						    m->max_ctas, m->tile_n);
		if (e == cudaSuccess)
			e = moe_group_set_build(&st->down[which], m->EL, a2, rows, b2, c2, m->H, m->I,
						m->max_ctas, m->tile_n);
		if (e != cudaSuccess) {
			CUCO_ERRF(m->ctx, "moe_layer: grouped GEMM plan (rows %d): %s", which,
				  cudaGetErrorString(e));
			return nullptr;
		}
	}
	m->nsets++;
	return st;
}

/* The router's check values (expected count per expert) as a kernel argument. */
static inline moe_route_args moe_expect(const moe_prog *m)
{
	moe_route_args r;
	memset(&r, 0, sizeof(r));
	for (int e = 0; e <= m->p.d.E; e++)
		r.prefix[e] = m->p.prefix[e];
	return r;
}

/* pos[] from this rank's routing (moe_rank_kernel). */
static inline int moe_ranks(moe_prog *m, const struct cuco_tensor *t, cudaStream_t s)
{
	moe_rank_kernel<<<m->p.d.E, 1024, 0, s>>>((const int *)t[1].ptr, m->T, m->k, m->pos, moe_expect(m));
	CUCO_LAUNCH_TRY(m->ctx);
	return 0;
}

/* Base of expert e's block in a buffer of the send layout (sendb or its like). */
static inline char *moe_send_base(const moe_prog *m, char *buf, int e)
{
	int d = e / m->EL;
	return buf + (size_t)(m->p.region_off[d] + m->p.exp_off[e]) * m->row_bytes;
}

/* The row, in a receive buffer of the plan's layout, where source s's block of local
 * expert le starts (padded: region s * P; packed: s * region_rows[me]). */
static inline size_t moe_recv_row(const moe_prog *m, int s, int le)
{
	const cuco_moe_plan *p = &m->p;
	size_t region = p->layout == CUCO_MOE_PADDED ? (size_t)p->P : (size_t)p->region_rows[m->me];
	return (size_t)s * region + (size_t)p->exp_off[m->me * m->EL + le];
}

/* Permute this rank's tokens into buf (send layout); only experts with keep(e). */
static inline int moe_permute(moe_prog *m, const struct cuco_tensor *t, const moe_bases &b, int ctas,
			      cudaStream_t s)
{
	moe_permute_kernel<<<ctas, 512, 0, s>>>((const char *)t[0].ptr, (const int *)t[1].ptr, m->pos, m->T,
						 m->k, (int)m->row_bytes, b);
	CUCO_LAUNCH_TRY(m->ctx);
	return 0;
}

/* Send-layout bases of buf for every expert (all of them). */
static inline moe_bases moe_send_bases(const moe_prog *m, char *buf)
{
	moe_bases b;
	memset(&b, 0, sizeof(b));
	for (int e = 0; e < m->p.d.E; e++)
		b.p[e] = moe_send_base(m, buf, e);
	return b;
}

/* recvb (by source) <-> X (expert-major): to_x 1 gathers, 0 scatters Y back into recvb. */
static inline int moe_shuffle(moe_prog *m, int to_x, cudaStream_t s)
{
	moe_segs sg;
	sg.n = 0;
	for (int q = 0; q < m->R; q++)
		for (int le = 0; le < m->EL; le++) {
			char *rb = m->recvb + moe_recv_row(m, q, le) * m->row_bytes;
			int r0 = cuco_moe_src_row(&m->p, m->me, q, le);
			if (to_x)
				moe_segs_add(&sg, rb, moe_slot_row(m, m->X, m->H, le, r0), m->p.c[le]);
			else
				moe_segs_add(&sg, moe_slot_row(m, m->Y, m->H, le, r0), rb, m->p.c[le]);
		}
	CUCO_CUDA_TRY(moe_copy(&sg, (int)m->row_bytes, 264, 512, s), m->ctx);
	return 0;
}

/* Up GEMM, SwiGLU and down GEMM over `which` rows of every local expert (cuco's GEMM). */
static inline int moe_experts(moe_prog *m, const moe_set *st, int which, cudaStream_t s)
{
	moe_segs sg;
	sg.n = 0;
	for (int le = 0; le < m->EL; le++) {
		int r0, n;
		moe_rows_of(m, which, le, &r0, &n);
		moe_segs_add(&sg, moe_slot_row(m, m->G, 2 * m->I, le, r0), moe_slot_row(m, m->Hb, m->I, le, r0), n);
	}
	CUCO_CUDA_TRY(moe_group_set_run(&st->up[which], s), m->ctx);
	if (sg.n) {
		moe_swiglu_kernel<<<dim3(264 / sg.n + 1, sg.n), 512, 0, s>>>(sg, m->I);
		CUCO_LAUNCH_TRY(m->ctx);
	}
	CUCO_CUDA_TRY(moe_group_set_run(&st->down[which], s), m->ctx);
	return 0;
}

/* y = the gate-weighted sum of every slot's expert output, read from buf (send layout). */
static inline int moe_combine(moe_prog *m, const struct cuco_tensor *t, char *buf, cudaStream_t s)
{
	moe_combine_kernel<<<m->T < 1056 ? m->T : 1056, 256, 0, s>>>(
		(__nv_bfloat16 *)t[5].ptr, (const int *)t[1].ptr, m->pos, (const float *)t[2].ptr, m->T, m->k,
		m->H, moe_send_bases(m, buf));
	CUCO_LAUNCH_TRY(m->ctx);
	return 0;
}

#endif /* CUCO_MOE_KERNELS_ONLY */
} /* namespace cuco */
#endif /* __CUDACC__ */

#endif
