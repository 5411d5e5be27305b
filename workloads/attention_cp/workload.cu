// workload.cu - attention_cp: tensors, inputs and the independent reference.
//
// Flash attention forward with context parallelism. The S tokens of the
// sequence are split over the R ranks (cuco_dev/zigzag.cuh): plain (parts 1,
// rank r holds tokens [r*S/R, (r+1)*S/R)) or zigzag (parts 2, rank r holds
// chunks r and 2R-1-r of 2R). Rank r holds Q[B, H, S/R, D], K and V
// [B, Hkv, S/R, D] of its own tokens and must produce, for its queries over
// the whole sequence, O[B, H, S/R, D] (bf16) and LSE[B, H, S/R] (f32, the
// natural log of the softmax denominator), softmax scale 1/sqrt(D); q head h
// reads kv head h / (H/Hkv); mask 2 is causal by global position.
//
// Inputs: Q and K uniform in [-3, 3), V in [-4, 4). With inputs in [-1, 1)
// the scores would spread by 1/3 and O would be a near-zero average of
// thousands of values, so small against LSE in the harness's one relative
// L2 over all outputs that an O wrong by tens of percent could pass; scores
// spread by 3 give a peaked softmax, and O holds 9 % (D 32) to ~50 % (D 128)
// of the squared norm (measured), so an O off by more than ~3 % fails.
//
// The reference never communicates: it regenerates every rank's K and V from
// the seed and runs an exact two-pass softmax (pass 1: row maxima and sums;
// pass 2: O = sum_j exp(s_j - lse) v_j) in fp32 on CUDA cores, tile by tile.
// It shares no code with cuco's attention kernel (cuco_dev/attention.cuh:
// wgmma, online softmax with rescaled accumulators, merges of partial
// results), only the position arithmetic of the split (zigzag.cuh).
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>

#include <cuco/program.h>

#include <cuco_dev/random.cuh>
#include <cuco_dev/workload.cuh>
#include <cuco_dev/zigzag.cuh>

enum { T_Q, T_K, T_V, T_O, T_LSE, NT };
// Random streams: tensor X of rank r uses STREAM_X * 1000 + r.
enum { STREAM_Q = 1, STREAM_K = 2, STREAM_V = 3 };
#define AMP_QK 3.0f // Q and K uniform in [-AMP_QK, AMP_QK)
#define AMP_V 4.0f  // V uniform in [-AMP_V, AMP_V)

struct cp_dims {
	int B, H, Hkv, D, causal, parts, R;
	long long S, Sl; // whole sequence, tokens per rank
};

static int dims_get(const struct cuco_shape *s, int nranks, struct cp_dims *d, char *err, size_t len)
{
	long long mask = cuco_shape_get(s, "mask", 0);

	d->B = (int)cuco_shape_get(s, "B", 0);
	d->H = (int)cuco_shape_get(s, "H", 0);
	d->Hkv = (int)cuco_shape_get(s, "Hkv", 0);
	d->S = cuco_shape_get(s, "S", 0);
	d->D = (int)cuco_shape_get(s, "D", 0);
	d->parts = (int)cuco_shape_get(s, "parts", 0);
	d->R = nranks;
	d->causal = mask == 2;
	if (d->B < 1 || d->H < 1 || d->Hkv < 1 || d->H % d->Hkv) {
		snprintf(err, len, "shape '%s': needs B, H, Hkv >= 1 and H a multiple of Hkv", s->name);
		return 1;
	}
	if (d->D != 32 && d->D != 64 && d->D != 128) {
		snprintf(err, len, "shape '%s': D = %d; cuco's attention kernel takes 32, 64 or 128",
			 s->name, d->D);
		return 1;
	}
	if (mask != 1 && mask != 2) {
		snprintf(err, len, "shape '%s': mask = %lld; 1 (none) or 2 (causal)", s->name, mask);
		return 1;
	}
	if (d->parts != 1 && d->parts != 2) {
		snprintf(err, len, "shape '%s': parts = %d; 1 (plain split) or 2 (zigzag)", s->name,
			 d->parts);
		return 1;
	}
	if (nranks < 1 || d->S % ((long long)nranks * d->parts * 64)) {
		snprintf(err, len,
			 "shape '%s': S = %lld on %d ranks: each of the %d chunks per rank must be "
			 "whole 64-token blocks",
			 s->name, d->S, nranks, d->parts);
		return 1;
	}
	d->Sl = d->S / nranks;
	return 0;
}

__global__ void fill_amp_bf16(__nv_bfloat16 *dst, size_t n, uint64_t seed, uint64_t stream, float amp)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __float2bfloat16(amp * cuco::uniform_pm1(seed, stream, i));
}

static void fill(__nv_bfloat16 *p, size_t n, uint64_t seed, uint64_t stream, float amp, cudaStream_t s)
{
	fill_amp_bf16<<<528, 256, 0, s>>>(p, n, seed, stream, amp);
}

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct cp_dims d;

	(void)rank;
	if (dims_get(shape, nranks, &d, err, errlen))
		return 1;
	cuco::tensor_bf16(&t[T_Q], "Q", CUCO_ROLE_INPUT, (size_t)d.B * d.H * d.Sl * d.D);
	cuco::tensor_bf16(&t[T_K], "K", CUCO_ROLE_INPUT, (size_t)d.B * d.Hkv * d.Sl * d.D);
	cuco::tensor_bf16(&t[T_V], "V", CUCO_ROLE_INPUT, (size_t)d.B * d.Hkv * d.Sl * d.D);
	cuco::tensor_bf16(&t[T_O], "O", CUCO_ROLE_OUTPUT, (size_t)d.B * d.H * d.Sl * d.D);
	snprintf(t[T_LSE].name, sizeof(t[T_LSE].name), "LSE");
	t[T_LSE].role = CUCO_ROLE_OUTPUT;
	t[T_LSE].dtype = CUCO_DTYPE_F32;
	t[T_LSE].elems = (size_t)d.B * d.H * d.Sl;
	t[T_LSE].bytes = t[T_LSE].elems * sizeof(float);
	*n = NT;
	return 0;
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	(void)shape;
	(void)nranks;
	if (nt != NT)
		return 1;
	fill((__nv_bfloat16 *)t[T_Q].ptr, t[T_Q].elems, seed, STREAM_Q * 1000 + (uint64_t)rank, AMP_QK, s);
	fill((__nv_bfloat16 *)t[T_K].ptr, t[T_K].elems, seed, STREAM_K * 1000 + (uint64_t)rank, AMP_QK, s);
	fill((__nv_bfloat16 *)t[T_V].ptr, t[T_V].elems, seed, STREAM_V * 1000 + (uint64_t)rank, AMP_V, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

// ---------------------------------------------------------------- reference

#define RT 64 // query rows and keys per tile
#define RP (RT + 1) // row pitch of the probabilities in shared memory

// Tile [RT rows][D] of bf16 rows (row pitch D) into smem transposed, dst[d * RT + r], in fp32.
template <int D> __device__ static void load_t(float *dst, const __nv_bfloat16 *src)
{
	for (int e = threadIdx.x; e < RT * (D / 8); e += blockDim.x) {
		int r = e % RT, d0 = (e / RT) * 8;
		uint4 raw = *(const uint4 *)(src + (size_t)r * D + d0);
		const __nv_bfloat16 *v = (const __nv_bfloat16 *)&raw;
#pragma unroll
		for (int u = 0; u < 8; u++)
			dst[(d0 + u) * RT + r] = __bfloat162float(v[u]);
	}
}

// Tile [RT rows][D] into smem as is, dst[r * D + d], in fp32.
template <int D> __device__ static void load_n(float *dst, const __nv_bfloat16 *src)
{
	for (int e = threadIdx.x; e < RT * (D / 8); e += blockDim.x) {
		uint4 raw = *(const uint4 *)(src + (size_t)e * 8);
		const __nv_bfloat16 *v = (const __nv_bfloat16 *)&raw;
#pragma unroll
		for (int u = 0; u < 8; u++)
			dst[e * 8 + u] = __bfloat162float(v[u]);
	}
}

/*
 * One CTA: RT query rows (local rows i0.., one chunk) of head h of batch b, 256
 * threads as 16 x 16, thread (ty, tx) the rows ty*4.. and keys tx*4.. of each
 * score tile. Keys come tile by tile from every rank's block of Kall / Vall
 * ([R][B][Hkv][Sl][D]), each tile inside one chunk, so its positions are
 * kpos0 + 0..RT-1. Pass 1: per row the maximum m and sum l of exp(s - m);
 * pass 2: O = sum exp(s - lse) v, lse = m + log l.
 */
template <int D>
__global__ void __launch_bounds__(256) ref_attention(const __nv_bfloat16 *Q, const __nv_bfloat16 *Kall,
						     const __nv_bfloat16 *Vall, __nv_bfloat16 *O, float *lse,
						     struct cp_dims d, int me, float scale)
{
	extern __shared__ float sm[];
	float *Qs = sm;          // [D][RT], transposed
	float *KVs = Qs + D * RT; // K tile [D][RT] transposed, then V tile [RT][D]
	float *Ps = KVs + D * RT; // [RT][RP]
	constexpr int DC = D / 16; // output columns per thread
	const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	const int b = blockIdx.z, h = blockIdx.y, hk = h / (d.H / d.Hkv);
	const long long i0 = (long long)blockIdx.x * RT;
	const long long rows_per_head = d.Sl * D;
	const long long qpos0 = cuco_cp_pos(d.S, d.R, d.parts, me, i0);
	const long long tiles_per_rank = d.Sl / RT;
	float m[4], l[4], lse_r[4], acc[4][DC];

	load_t<D>(Qs, Q + ((long long)b * d.H + h) * rows_per_head + i0 * D);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		m[i] = -INFINITY;
		l[i] = 0.f;
#pragma unroll
		for (int c = 0; c < DC; c++)
			acc[i][c] = 0.f;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (long long t = 0; t < (long long)d.R * tiles_per_rank; t++) {
			const int src = (int)(t / tiles_per_rank);
			const long long j0 = (t % tiles_per_rank) * RT;
			const long long kpos0 = cuco_cp_pos(d.S, d.R, d.parts, src, j0);
			if (d.causal && kpos0 > qpos0 + RT - 1)
				continue; // every key of the tile after every query
			const long long kv_off = (((long long)src * d.B + b) * d.Hkv + hk) * rows_per_head + j0 * D;
			__syncthreads();
			load_t<D>(KVs, Kall + kv_off);
			__syncthreads();
			float s[4][4];
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					s[i][j] = 0.f;
#pragma unroll 8
			for (int k = 0; k < D; k++) {
				float4 qa = *(const float4 *)&Qs[k * RT + ty * 4];
				float4 kb = *(const float4 *)&KVs[k * RT + tx * 4];
				float qv[4] = {qa.x, qa.y, qa.z, qa.w}, kv[4] = {kb.x, kb.y, kb.z, kb.w};
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < 4; j++)
						s[i][j] = fmaf(qv[i], kv[j], s[i][j]);
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++) {
					s[i][j] *= scale;
					if (d.causal && kpos0 + tx * 4 + j > qpos0 + ty * 4 + i)
						s[i][j] = -INFINITY;
				}
			if (pass == 0) {
#pragma unroll
				for (int i = 0; i < 4; i++) {
					float mt = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
					for (int o = 1; o < 16; o <<= 1)
						mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));
					// no branch on the row: both halves of the warp shuffle below
					float mn = fmaxf(m[i], mt);
					float base = mn == -INFINITY ? 0.f : mn; // nothing visible yet: sum 0
					float sum = 0.f;
#pragma unroll
					for (int j = 0; j < 4; j++)
						sum += expf(s[i][j] - base);
					for (int o = 1; o < 16; o <<= 1)
						sum += __shfl_xor_sync(0xffffffffu, sum, o);
					l[i] = (m[i] == -INFINITY ? 0.f : l[i] * expf(m[i] - mn)) + sum;
					m[i] = mn;
				}
				continue;
			}
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					Ps[(ty * 4 + i) * RP + tx * 4 + j] = expf(s[i][j] - lse_r[i]);
			__syncthreads();
			load_n<D>(KVs, Vall + kv_off);
			__syncthreads();
#pragma unroll 4
			for (int k = 0; k < RT; k++) {
				float v[DC];
#pragma unroll
				for (int c = 0; c < DC; c++)
					v[c] = KVs[k * D + tx * DC + c];
#pragma unroll
				for (int i = 0; i < 4; i++) {
					float p = Ps[(ty * 4 + i) * RP + k];
#pragma unroll
					for (int c = 0; c < DC; c++)
						acc[i][c] = fmaf(p, v[c], acc[i][c]);
				}
			}
		}
		if (pass == 0)
#pragma unroll
			for (int i = 0; i < 4; i++)
				lse_r[i] = m[i] + logf(l[i]);
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		long long row = ((long long)b * d.H + h) * d.Sl + i0 + ty * 4 + i;
#pragma unroll
		for (int c = 0; c < DC; c++)
			O[row * D + tx * DC + c] = __float2bfloat16(acc[i][c]);
		if (tx == 0)
			lse[row] = lse_r[i];
	}
}

template <int D>
static int ref_launch(const struct cp_dims &d, int rank, const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
		      const __nv_bfloat16 *V, __nv_bfloat16 *O, float *lse, cudaStream_t s)
{
	size_t smem = (size_t)(2 * D * RT + RT * RP) * sizeof(float);
	dim3 grid((unsigned)(d.Sl / RT), (unsigned)d.H, (unsigned)d.B);

	if (cudaFuncSetAttribute(ref_attention<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) !=
	    cudaSuccess)
		return 1;
	ref_attention<D><<<grid, 256, smem, s>>>(Q, K, V, O, lse, d, rank, 1.0f / sqrtf((float)d.D));
	return cudaPeekAtLastError() != cudaSuccess;
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct cp_dims d;
	char err[256];
	__nv_bfloat16 *K = NULL, *V = NULL;
	size_t block;
	int rc = 1;

	if (nt != NT || dims_get(shape, nranks, &d, err, sizeof(err)))
		return 1;
	block = (size_t)d.B * d.Hkv * d.Sl * d.D; // one rank's K (or V)
	if (cudaMallocAsync((void **)&K, block * nranks * sizeof(__nv_bfloat16), s) != cudaSuccess ||
	    cudaMallocAsync((void **)&V, block * nranks * sizeof(__nv_bfloat16), s) != cudaSuccess)
		goto out;
	// Every rank's K and V from the seed, as generate() makes them on that rank.
	for (int q = 0; q < nranks; q++) {
		fill(K + (size_t)q * block, block, seed, STREAM_K * 1000 + (uint64_t)q, AMP_QK, s);
		fill(V + (size_t)q * block, block, seed, STREAM_V * 1000 + (uint64_t)q, AMP_V, s);
	}
	{
		const __nv_bfloat16 *Q = (const __nv_bfloat16 *)t[T_Q].ptr;
		__nv_bfloat16 *O = (__nv_bfloat16 *)t[T_O].ptr;
		float *L = (float *)t[T_LSE].ptr;
		if (d.D == 32)
			rc = ref_launch<32>(d, rank, Q, K, V, O, L, s);
		else if (d.D == 64)
			rc = ref_launch<64>(d, rank, Q, K, V, O, L, s);
		else
			rc = ref_launch<128>(d, rank, Q, K, V, O, L, s);
	}
out:
	if (K)
		cudaFreeAsync(K, s);
	if (V)
		cudaFreeAsync(V, s);
	return rc || cudaPeekAtLastError() != cudaSuccess;
}
