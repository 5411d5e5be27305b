// workload.cu - moe_layer: tensors, inputs and the independent reference.
//
// An expert-parallel MoE layer (DeepSeek-V3's routed experts): rank r holds T
// tokens x_r[T, H] and the weights of its EL experts (global experts r*EL ..
// r*EL + EL - 1); a seeded router gives every token k distinct experts and
// gate weights. Each token goes to its experts' ranks (dispatch), every
// expert computes SwiGLU(x W_gu) W_down (gate||up [H, 2I], down [I, H]), and
// the outputs return to the token's owner, which sums them with the gate
// weights (combine): y_r[t] = sum_j w[t, j] * FFN_{idx[t, j]}(x_r[t]).
//
// The reference never communicates: for rank r it regenerates every global
// expert's weights from the seed, lists r's tokens per expert from r's own
// routing and computes in fp32 on a plain SIMT kernel (no tensor cores, no
// code shared with any program's GEMM or kernels), the SwiGLU in fp32 too.
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>

#include <cuco/program.h>
#define CUCO_MOE_KERNELS_ONLY // the generator's and reference's side: no program code
#include <cuco_dev/moe.cuh>

enum { T_X, T_IDX, T_W, T_WGU, T_WDOWN, T_Y, NT };
enum { STREAM_X = 1000, STREAM_WGU = 100000, STREAM_WDOWN = 200000 };

static int dims_of(const struct cuco_shape *s, int nranks, struct cuco_moe_dims *d, char *err, size_t len)
{
	return cuco_moe_dims_init(d, cuco_shape_get(s, "T", -1), cuco_shape_get(s, "H", -1),
				  cuco_shape_get(s, "I", -1), cuco_shape_get(s, "EL", -1),
				  cuco_shape_get(s, "topk", -1), cuco_shape_get(s, "experts", -1),
				  cuco_shape_get(s, "zipf", -1), cuco_shape_get(s, "hot", -1), nranks, err,
				  len);
}

static void tensor(struct cuco_tensor *t, const char *name, int role, int dtype, size_t elems)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->role = role;
	t->dtype = dtype;
	t->elems = elems;
	t->bytes = elems * cuco_dtype_size(dtype);
}

extern "C" int cuco_workload_describe(const struct cuco_shape *shape, int rank, int nranks,
				      struct cuco_tensor *t, int *n, char *err, size_t errlen)
{
	struct cuco_moe_dims d;

	(void)rank;
	if (dims_of(shape, nranks, &d, err, errlen))
		return 1;
	tensor(&t[T_X], "x", CUCO_ROLE_INPUT, CUCO_DTYPE_BF16, (size_t)d.T * d.H);
	tensor(&t[T_IDX], "topk_idx", CUCO_ROLE_INPUT, CUCO_DTYPE_I32, (size_t)d.T * d.k);
	tensor(&t[T_W], "topk_w", CUCO_ROLE_INPUT, CUCO_DTYPE_F32, (size_t)d.T * d.k);
	tensor(&t[T_WGU], "w_gate_up", CUCO_ROLE_INPUT, CUCO_DTYPE_BF16, (size_t)d.EL * d.H * 2 * d.I);
	tensor(&t[T_WDOWN], "w_down", CUCO_ROLE_INPUT, CUCO_DTYPE_BF16, (size_t)d.EL * d.I * d.H);
	tensor(&t[T_Y], "y", CUCO_ROLE_OUTPUT, CUCO_DTYPE_BF16, (size_t)d.T * d.H);
	*n = NT;
	return 0;
}

/*
 * CUCo's token weight of a rank (not in the ABI yet; for a harness that prints the
 * token-weighted mean of per-rank times beside the slowest rank): the (token, slot)
 * rows the rank's experts compute, sum over its local experts of R * counts[e].
 * Negative for a shape the workload cannot run.
 */
extern "C" double cuco_workload_rank_weight(const struct cuco_shape *shape, int rank, int nranks)
{
	struct cuco_moe_dims d;
	struct cuco_moe_plan p;
	char err[256];
	double w = 0;

	if (dims_of(shape, nranks, &d, err, sizeof(err)) || rank < 0 || rank >= nranks)
		return -1;
	cuco_moe_plan_init(&p, &d, rank, CUCO_MOE_PACKED);
	for (int le = 0; le < d.EL; le++)
		w += p.m[le];
	return w;
}

/* Weights of global expert e: gate||up [H, 2I] and down [I, H], scaled so activations stay near 1. */
static void fill_expert(const struct cuco_moe_dims *d, int e, uint64_t seed, __nv_bfloat16 *wgu,
			__nv_bfloat16 *wdown, cudaStream_t s)
{
	cuco::moe_fill_bf16_kernel<<<528, 256, 0, s>>>(wgu, (size_t)d->H * 2 * d->I, seed,
						       STREAM_WGU + (uint64_t)e, 3.f / sqrtf((float)d->H));
	cuco::moe_fill_bf16_kernel<<<528, 256, 0, s>>>(wdown, (size_t)d->I * d->H, seed,
						       STREAM_WDOWN + (uint64_t)e, 3.f / sqrtf((float)d->I));
}

extern "C" int cuco_workload_generate(const struct cuco_shape *shape, int rank, int nranks,
				      uint64_t seed, struct cuco_tensor *t, int nt, cudaStream_t s)
{
	struct cuco_moe_dims d;
	struct cuco_moe_plan p;
	char err[256];

	if (nt != NT || dims_of(shape, nranks, &d, err, sizeof(err)))
		return 1;
	cuco_moe_plan_init(&p, &d, rank, CUCO_MOE_PACKED);
	cuco::moe_fill_bf16_kernel<<<528, 256, 0, s>>>((__nv_bfloat16 *)t[T_X].ptr, t[T_X].elems, seed,
						       STREAM_X + (uint64_t)rank, 1.f);
	cuco::moe_route_kernel<<<(d.T + 255) / 256, 256, 0, s>>>(cuco::moe_route_of(&p, seed, rank),
								 (int *)t[T_IDX].ptr, (float *)t[T_W].ptr);
	for (int le = 0; le < d.EL; le++)
		fill_expert(&d, rank * d.EL + le, seed,
			    (__nv_bfloat16 *)t[T_WGU].ptr + (size_t)le * d.H * 2 * d.I,
			    (__nv_bfloat16 *)t[T_WDOWN].ptr + (size_t)le * d.I * d.H, s);
	return cudaPeekAtLastError() != cudaSuccess;
}

/* ---- the reference's own kernels ------------------------------------------------- */

// list[e][n] = token, lw[e][n] = its gate weight, cnt[e] = n, for every slot of the routing.
static __global__ void ref_lists(const int *idx, const float *w, int T, int k, int E, int *cnt,
				 int *list, float *lw)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < T * k; i += gridDim.x * blockDim.x) {
		int e = idx[i];
		if (e < 0 || e >= E)
			continue; /* cannot happen with this generator; keeps the reference in bounds */
		int n = atomicAdd(&cnt[e], 1);
		list[(size_t)e * T + n] = i / k;
		lw[(size_t)e * T + n] = w[i];
	}
}

__device__ inline float ref_ld(const float *p, long long i) { return p[i]; }
__device__ inline float ref_ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }

// C[M, N] = A[rows, K] B[K, N] in fp32; A's row i is arow[i] when arow is set. With crow set
// the result is added, times cw[i], to C's row crow[i] instead. 128 x 128 tiles, 8 x 8 per
// thread, 256 threads; grid (ceil(N / 128), ceil(M / 128)).
template <class TA>
static __global__ void __launch_bounds__(256)
	ref_gemm(const TA *A, const int *arow, long long lda, const __nv_bfloat16 *B, long long ldb,
		 float *C, long long ldc, int M, int N, int K, const int *crow, const float *cw)
{
	__shared__ float As[8][128], Bs[8][128 + 4];
	const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	const int r0 = blockIdx.y * 128, c0 = blockIdx.x * 128;
	float acc[8][8] = {};

	for (int k0 = 0; k0 < K; k0 += 8) {
		for (int i = threadIdx.x; i < 1024; i += 256) {
			int rr = i / 8, kk = i % 8, r = r0 + rr, kx = k0 + kk;
			As[kk][rr] = (r < M && kx < K) ? ref_ld(A, (arow ? arow[r] : r) * lda + kx) : 0.f;
			int kb = i / 128, cc = i % 128, c = c0 + cc;
			Bs[kb][cc] = (c < N && k0 + kb < K) ? __bfloat162float(B[(k0 + kb) * ldb + c]) : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < 8; kk++) {
			float a[8], b[8];
#pragma unroll
			for (int i = 0; i < 8; i++) {
				a[i] = As[kk][ty * 8 + i];
				b[i] = Bs[kk][tx * 8 + i];
			}
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 8; j++)
					acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 8; i++) {
		int r = r0 + ty * 8 + i;
		if (r >= M)
			continue;
		for (int j = 0; j < 8; j++) {
			int c = c0 + tx * 8 + j;
			if (c >= N)
				continue;
			if (crow)
				C[crow[r] * ldc + c] += cw[r] * acc[i][j];
			else
				C[r * ldc + c] = acc[i][j];
		}
	}
}

// h[r, c] = silu(g[r, c]) * g[r, I + c], fp32.
static __global__ void ref_swiglu(const float *g, float *h, long long rows, int I)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * I;
	     i += (long long)gridDim.x * blockDim.x) {
		long long r = i / I, c = i % I;
		float a = g[r * 2 * I + c];
		h[i] = a / (1.f + expf(-a)) * g[r * 2 * I + I + c];
	}
}

static __global__ void ref_to_bf16(const float *src, __nv_bfloat16 *dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __float2bfloat16(src[i]);
}

extern "C" int cuco_workload_reference(const struct cuco_shape *shape, int rank, int nranks,
				       uint64_t seed, struct cuco_tensor *t, int nt,
				       cudaStream_t s)
{
	struct cuco_moe_dims d;
	char err[256];
	int rc = 1, cnt[CUCO_MOE_MAX_EXPERTS];
	int *dcnt = NULL, *list = NULL;
	float *lw = NULL, *g = NULL, *h = NULL, *acc = NULL;
	__nv_bfloat16 *wgu = NULL, *wdown = NULL;

	(void)rank;
	if (nt != NT || dims_of(shape, nranks, &d, err, sizeof(err)))
		return 1;
	if (cudaMalloc((void **)&dcnt, sizeof(int) * d.E) != cudaSuccess ||
	    cudaMalloc((void **)&list, sizeof(int) * (size_t)d.E * d.T) != cudaSuccess ||
	    cudaMalloc((void **)&lw, sizeof(float) * (size_t)d.E * d.T) != cudaSuccess ||
	    cudaMalloc((void **)&g, sizeof(float) * (size_t)d.T * 2 * d.I) != cudaSuccess ||
	    cudaMalloc((void **)&h, sizeof(float) * (size_t)d.T * d.I) != cudaSuccess ||
	    cudaMalloc((void **)&acc, sizeof(float) * (size_t)d.T * d.H) != cudaSuccess ||
	    cudaMalloc((void **)&wgu, 2 * (size_t)d.H * 2 * d.I) != cudaSuccess ||
	    cudaMalloc((void **)&wdown, 2 * (size_t)d.I * d.H) != cudaSuccess)
		goto out;
	cudaMemsetAsync(dcnt, 0, sizeof(int) * d.E, s);
	cudaMemsetAsync(acc, 0, sizeof(float) * (size_t)d.T * d.H, s);
	ref_lists<<<(d.T * d.k + 255) / 256, 256, 0, s>>>((const int *)t[T_IDX].ptr, (const float *)t[T_W].ptr,
							  d.T, d.k, d.E, dcnt, list, lw);
	if (cudaMemcpyAsync(cnt, dcnt, sizeof(int) * d.E, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
	    cudaStreamSynchronize(s) != cudaSuccess)
		goto out;
	for (int e = 0; e < d.E; e++) {
		int n = cnt[e];
		if (n == 0)
			continue;
		fill_expert(&d, e, seed, wgu, wdown, s);
		dim3 g1((2 * d.I + 127) / 128, (n + 127) / 128), g2((d.H + 127) / 128, (n + 127) / 128);
		ref_gemm<__nv_bfloat16><<<g1, 256, 0, s>>>((const __nv_bfloat16 *)t[T_X].ptr, list + (size_t)e * d.T,
							   d.H, wgu, 2 * d.I, g, 2 * d.I, n, 2 * d.I, d.H,
							   NULL, NULL);
		ref_swiglu<<<1024, 256, 0, s>>>(g, h, n, d.I);
		ref_gemm<float><<<g2, 256, 0, s>>>(h, NULL, d.I, wdown, d.H, acc, d.H, n, d.H, d.I,
						   list + (size_t)e * d.T, lw + (size_t)e * d.T);
	}
	ref_to_bf16<<<1024, 256, 0, s>>>(acc, (__nv_bfloat16 *)t[T_Y].ptr, (size_t)d.T * d.H);
	rc = cudaStreamSynchronize(s) != cudaSuccess || cudaPeekAtLastError() != cudaSuccess;
out:
	cudaFree(dcnt);
	cudaFree(list);
	cudaFree(lw);
	cudaFree(g);
	cudaFree(h);
	cudaFree(acc);
	cudaFree(wgu);
	cudaFree(wdown);
	return rc;
}
