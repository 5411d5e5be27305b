// moe_gemm_probe.cu - cuco's grouped expert GEMM (moe.cuh's moe_group_build over
// gemm.cuh's gemm_bf16_group) against cuBLAS's grouped GEMM
// (cublasGemmGroupedBatchedEx) on the same buffers, launches alternating, at the MoE
// layer's expert shapes: up (gate||up) [t, H] x [H, 2I] and down [t, I] x [I, H].
// Each case: experts' token counts t_e; every expert's A in its own slot of max(t_e)
// rows. cuco runs them as one grouped launch (every problem with the largest M, its
// rows past t_e as zeros) and as the buckets the programs use (moe_group_set_build:
// experts of very different sizes in different launches); cuBLAS each with its own M.
// Prints median / p10 / p90 us, TFLOP/s of the real work (2 * sum(t_e) * N * K) and
// the largest difference between cuco's outputs (both) and cuBLAS's.
//   nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O3 -Iinclude -Idevice/include \
//        bench/probes/moe_gemm_probe.cu -lcublas -o moe_gemm_probe
//   ./moe_gemm_probe [iters]
#define CUCO_GEMM_SPLIT 0
#include <algorithm>
#include <cmath>
#include <vector>

#include <cuco_dev/moe.cuh>

#include "probe_check.h"

struct gcase {
	const char *name;
	std::vector<int> t;
};

static float pct(std::vector<float> v, double q)
{
	std::sort(v.begin(), v.end());
	return v[(size_t)(q * (double)(v.size() - 1))];
}

__global__ void max_diff(const __nv_bfloat16 *a, const __nv_bfloat16 *b, size_t n, float *out)
{
	float m = 0, s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float x = __bfloat162float(a[i]), y = __bfloat162float(b[i]);
		m = fmaxf(m, fabsf(x - y));
		s = fmaxf(s, fabsf(y));
		if (x != x)
			m = INFINITY;
	}
	atomicMax((int *)&out[0], __float_as_int(m));
	atomicMax((int *)&out[1], __float_as_int(s));
}

int main(int argc, char **argv)
{
	const int H = 7168, I = 2048, iters = argc > 1 ? atoi(argv[1]) : 30;
	std::vector<gcase> cases = {
	    {"cuco_3to1_heavy_1x6144", {6144}},
	    {"cuco_3to1_light_1x2048", {2048}},
	    {"uniform_8x1024", {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}},
	    {"ragged_8_2048to256", {2048, 1792, 1536, 1280, 1024, 768, 512, 256}},
	    {"ep4_prefill_2r_4x1024", {1024, 1024, 1024, 1024}},
	    {"decode_8x32", {32, 32, 32, 32, 32, 32, 32, 32}},
	    {"ep8_skew_1rank", {1507, 754, 502, 377, 301, 251, 215, 189}},
	};
	cublasHandle_t blas;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CB(cublasCreate(&blas));
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CB(cublasSetStream(blas, s));
	printf("# case gemm experts tokens | cuco one launch med p10 p90 us TFLOP/s | cuco buckets "
	       "(launches) med p10 p90 us TFLOP/s | cublas med p10 p90 us TFLOP/s | buckets/cublas "
	       "| maxdiff maxabs\n");
	for (const gcase &c : cases) {
		int n = (int)c.t.size(), M = *std::max_element(c.t.begin(), c.t.end()), tot = 0;
		for (int x : c.t)
			tot += x;
		for (int g = 0; g < 2; g++) { // 0: up [t, H] x [H, 2I]; 1: down [t, I] x [I, H]
			int K = g ? I : H, N = g ? H : 2 * I;
			__nv_bfloat16 *A, *B, *C1, *C2;
			CK(cudaMalloc(&A, (size_t)n * M * K * 2));
			CK(cudaMalloc(&B, (size_t)n * K * N * 2));
			CK(cudaMalloc(&C1, (size_t)n * M * N * 2));
			CK(cudaMalloc(&C2, (size_t)n * M * N * 2));
			cuco::moe_fill_bf16_kernel<<<528, 256, 0, s>>>(A, (size_t)n * M * K, 1,
			                                               1 + g, 1.f);
			cuco::moe_fill_bf16_kernel<<<528, 256, 0, s>>>(
			    B, (size_t)n * K * N, 1, 3 + g, 3.f / sqrtf((float)K));
			CK(cudaMemsetAsync(C1, 0, (size_t)n * M * N * 2, s));
			CK(cudaMemsetAsync(C2, 0, (size_t)n * M * N * 2, s));
			const __nv_bfloat16 *a[8], *b[8];
			__nv_bfloat16 *c1[8], *c2[8];
			void *hp[24];
			int mm[8], nn[8], kk[8], one[8];
			float al[8], be[8];
			cublasOperation_t op[8];
			for (int i = 0; i < n; i++) {
				a[i] = A + (size_t)i * M * K;
				b[i] = B + (size_t)i * K * N;
				c1[i] = C1 + (size_t)i * M * N;
				c2[i] = C2 + (size_t)i * M * N;
				hp[i] = (void *)b[i];
				hp[8 + i] = (void *)a[i];
				hp[16 + i] = c2[i];
				mm[i] = c.t[i];
				nn[i] = N;
				kk[i] = K;
				one[i] = 1;
				al[i] = 1.f;
				be[i] = 0.f;
				op[i] = CUBLAS_OP_N;
			}
			void **dp;
			CK(cudaMalloc(&dp, sizeof(hp)));
			CK(cudaMemcpy(dp, hp, sizeof(hp), cudaMemcpyHostToDevice));
			cuco::moe_group_launch L;
			cuco::moe_group_set S;
			CK(cuco::moe_group_build(&L, n, a, mm, b, c1, N, K, 0, 0));
			CK(cuco::moe_group_set_build(&S, n, a, mm, b, c1, N, K, 0, 0));
			auto run_cuco = [&]() { CK(cuco::moe_group_run(&L, s)); };
			auto run_set = [&]() { CK(cuco::moe_group_set_run(&S, s)); };
			auto run_blas = [&]() {
				CB(cublasGemmGroupedBatchedEx(
				    blas, op, op, nn, mm, kk, al, (const void *const *)dp,
				    CUDA_R_16BF, nn, (const void *const *)(dp + 8), CUDA_R_16BF, kk,
				    be, dp + 16, CUDA_R_16BF, nn, n, one, CUBLAS_COMPUTE_32F));
			};
			std::vector<float> tc, ts, tb;
			for (int it = -5; it < iters; it++) {
				float ms;
				CK(cudaEventRecord(e0, s));
				run_cuco();
				CK(cudaEventRecord(e1, s));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (it >= 0)
					tc.push_back(ms * 1000);
				CK(cudaEventRecord(e0, s));
				run_set();
				CK(cudaEventRecord(e1, s));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (it >= 0)
					ts.push_back(ms * 1000);
				CK(cudaEventRecord(e0, s));
				run_blas();
				CK(cudaEventRecord(e1, s));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&ms, e0, e1));
				if (it >= 0)
					tb.push_back(ms * 1000);
			}
			float *d, h[2];
			CK(cudaMalloc(&d, 8));
			CK(cudaMemset(d, 0, 8));
			float md = 0, ma = 0;
			for (int pass = 0; pass < 2; pass++) { // one launch, then the buckets: the
				                               // real rows of each problem
				CK(cudaMemsetAsync(C1, 0xFF, (size_t)n * M * N * 2, s));
				if (pass)
					run_set();
				else
					run_cuco();
				for (int i = 0; i < n; i++) {
					CK(cudaMemsetAsync(d, 0, 8, s));
					max_diff<<<264, 256, 0, s>>>(c1[i], c2[i],
					                             (size_t)c.t[i] * N, d);
					CK(cudaMemcpyAsync(h, d, 8, cudaMemcpyDeviceToHost, s));
					CK(cudaStreamSynchronize(s));
					md = std::max(md, h[0]);
					ma = std::max(ma, h[1]);
				}
			}
			double fl = 2.0 * tot * N * K;
			float mc = pct(tc, 0.5), msb = pct(ts, 0.5), mb = pct(tb, 0.5);
			printf("%s %s %d %d | %.1f %.1f %.1f %.0f | (%d) %.1f %.1f %.1f %.0f | "
			       "%.1f %.1f %.1f %.0f | %.3f | %.3g %.3g\n",
			       c.name, g ? "down" : "up", n, tot, mc, pct(tc, 0.1), pct(tc, 0.9),
			       fl / mc * 1e-6, S.nb, msb, pct(ts, 0.1), pct(ts, 0.9),
			       fl / msb * 1e-6, mb, pct(tb, 0.1), pct(tb, 0.9), fl / mb * 1e-6,
			       msb / mb, md, ma);
			fflush(stdout);
			CK(cudaFree(A));
			CK(cudaFree(B));
			CK(cudaFree(C1));
			CK(cudaFree(C2));
			CK(cudaFree(dp));
			CK(cudaFree(d));
		}
	}
	return 0;
}
