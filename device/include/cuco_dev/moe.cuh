/*
 * moe.cuh - building blocks of the expert-parallel MoE layer (workload
 * moe_layer): the seeded router's load profile, the row layout that every
 * program of the workload shares (who sends which rows where), and, under
 * nvcc, the kernels (routing fill, slot ranks, permute, row copies, SwiGLU,
 * weighted combine) and the grouped expert GEMM launches.
 *
 * The host logic (shape checks, per-expert counts, the slot list, the token
 * permutation, the plan of rows and offsets, the launch split) is plain C11 in
 * cuco_dev/moe_plan.h, which host unit tests include.
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

#include <cuco_dev/moe_plan.h>

#ifdef __CUDACC__
/* ==================================================================== device */
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#ifndef CUCO_MOE_KERNELS_ONLY /* a workload's generator and reference need no GEMM */
#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/launch.cuh>
#endif

namespace cuco
{

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
		long long tok =
		    (long long)((r.a * (unsigned long long)t + r.b) % (unsigned long long)r.T);
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
__global__ void __launch_bounds__(1024)
    moe_rank_kernel(const int *idx, int T, int k, int *pos, moe_route_args expect)
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
		printf("moe_rank_kernel: expert %d got %d slots, the shape's profile says %d\n", e,
		       base, expect.prefix[e + 1] - expect.prefix[e]);
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
__global__ void __launch_bounds__(256)
    moe_combine_kernel(__nv_bfloat16 *y, const int *idx, const int *pos, const float *w, int T,
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
	int want =
	    tile_n > 0
	        ? tile_n
	        : gemm_bf16_alone_tile_n(L->plan.bn, np * L->plan.tiles_m * L->plan.tiles_n, avail);
	if (want < L->plan.bn &&
	    (e = gemm_bf16_plan_narrow(&L->plan, want, max_ctas)) != cudaSuccess)
		return e;
	if ((e = gemm_bf16_group_init(&L->grp, &L->plan, np, a, b, c, nullptr, 1, 0, max_ctas)) !=
	    cudaSuccess)
		return e;
	for (int i = 0; i < np; i++)
		if (mm[i] != M &&
		    (e = gemm_detail::encode_2d(&L->grp.tmA[i], a[i], (unsigned long long)K,
		                                (unsigned long long)mm[i], (unsigned long long)K,
		                                64, 128)) != cudaSuccess)
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

static inline cudaError_t moe_group_set_build(moe_group_set *S, int n,
                                              const __nv_bfloat16 *const *A, const int *m,
                                              const __nv_bfloat16 *const *B,
                                              __nv_bfloat16 *const *C, int N, int K, int max_ctas,
                                              int tile_n)
{
	int ord[CUCO_MOE_MAX_LOCAL], end[CUCO_MOE_MAX_LOCAL], no, nb;
	cudaError_t e;

	int dev = 0, sms = 132;
	memset(S, 0, sizeof(*S));
	if (cudaGetDevice(&dev) == cudaSuccess)
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	cuco_moe_buckets(m, n, (N + 255) / 256, max_ctas > 0 && max_ctas < sms ? max_ctas : sms,
	                 ord, &no, end, &nb);
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
		if ((e = moe_group_build(&S->b[S->nb], k, a, mm, bb, c, N, K, max_ctas, tile_n)) !=
		    cudaSuccess)
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
	size_t row_bytes; /* H * 2 */
	char *sendb, *recvb, *X, *G, *Hb, *Y;
	int *pos;             /* [T * k] row of each slot inside its expert's block */
	int max_ctas, tile_n; /* for cuco's grouped GEMMs (0: all SMs; 0: per launch) */
	int nsets;
	moe_set sets[CUCO_MOE_MAX_SETS];
};

static inline size_t moe_align(size_t b)
{
	return (b + 255) & ~(size_t)255;
}

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
	                       cuco_shape_get(s, "zipf", -1), cuco_shape_get(s, "hot", -1),
	                       ctx->nranks, cuco::ctx_errbuf(ctx), sizeof(ctx->errbuf)))
		return 1;
	cuco_moe_plan_init(p, &d, ctx->rank, layout);
	return 0;
}

/* Requirements: the scratch above (plus extra bytes of the program's own). */
static inline int moe_requirements(const struct cuco_ctx *ctx, int layout,
                                   struct cuco_requirements *req, size_t extra)
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
		CUCO_ERRF(ctx, "moe_layer: needs a scratch window of %zu bytes",
		          moe_scratch_bytes(p));
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
	*n = which == moe_rows_all   ? p->m[le]
	     : which == moe_rows_own ? p->c[le]
	                             : p->m[le] - p->c[le];
}

/* The set of tensors t (x, topk_idx, topk_w, w_gate_up, w_down, y): its GEMM launches. */
static inline moe_set *moe_set_get(moe_prog *m, const struct cuco_tensor *t)
{
	for (int i = 0; i < m->nsets; i++)
		if (m->sets[i].x == t[0].ptr && m->sets[i].wgu == t[3].ptr &&
		    m->sets[i].wdown == t[4].ptr)
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
		const __nv_bfloat16 *a1[CUCO_MOE_MAX_LOCAL], *b1[CUCO_MOE_MAX_LOCAL],
		    *a2[CUCO_MOE_MAX_LOCAL], *b2[CUCO_MOE_MAX_LOCAL];
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
		cudaError_t e = moe_group_set_build(&st->up[which], m->EL, a1, rows, b1, c1,
		                                    2 * m->I, m->H, m->max_ctas, m->tile_n);
		if (e == cudaSuccess)
			e = moe_group_set_build(&st->down[which], m->EL, a2, rows, b2, c2, m->H,
			                        m->I, m->max_ctas, m->tile_n);
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
	moe_rank_kernel<<<m->p.d.E, 1024, 0, s>>>((const int *)t[1].ptr, m->T, m->k, m->pos,
	                                          moe_expect(m));
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
static inline int moe_permute(moe_prog *m, const struct cuco_tensor *t, const moe_bases &b,
                              int ctas, cudaStream_t s)
{
	moe_permute_kernel<<<ctas, 512, 0, s>>>((const char *)t[0].ptr, (const int *)t[1].ptr,
	                                        m->pos, m->T, m->k, (int)m->row_bytes, b);
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
				moe_segs_add(&sg, rb, moe_slot_row(m, m->X, m->H, le, r0),
				             m->p.c[le]);
			else
				moe_segs_add(&sg, moe_slot_row(m, m->Y, m->H, le, r0), rb,
				             m->p.c[le]);
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
		moe_segs_add(&sg, moe_slot_row(m, m->G, 2 * m->I, le, r0),
		             moe_slot_row(m, m->Hb, m->I, le, r0), n);
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
	const int grid = m->T < 1056 ? m->T : 1056;

	moe_combine_kernel<<<grid, 256, 0, s>>>((__nv_bfloat16 *)t[5].ptr, (const int *)t[1].ptr,
	                                        m->pos, (const float *)t[2].ptr, m->T, m->k, m->H,
	                                        moe_send_bases(m, buf));
	CUCO_LAUNCH_TRY(m->ctx);
	return 0;
}

#endif /* CUCO_MOE_KERNELS_ONLY */
} /* namespace cuco */
#endif /* __CUDACC__ */

#endif
