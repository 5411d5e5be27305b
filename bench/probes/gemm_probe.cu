// gemm_probe.cu - how fast can a bf16 GEMM run here, and through which cuBLAS
// entry point? Times row-major C = A * B (M x N x K) on one GPU with
//   gemmex   cublasGemmEx, CUBLAS_GEMM_DEFAULT (what the workloads call)
//   lt       cublasLt, first heuristic algorithm, 32 MiB workspace
//   lt-best  cublasLt, the fastest of up to 16 heuristic algorithms
// and, with a fill argument, the effect of the input values on the clock.
// Usage: gemm_probe M N K [uniform|zero|splitk] [sets] [sustain_iters]
// splitk: uniform inputs; instead of the three lines, every cublasLt heuristic
// algorithm at split-K 1..16, the fastest of each (splitk_sweep).
// Prints one line per entry point: median and best us, TFLOP/s. With
// sustain_iters, instead times cublasGemmEx back to back that many times and
// prints the median of every window of 100 runs: how the clock holds up.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "cuco_dev/random.cuh"

#include "probe_check.h"

struct set {
	__nv_bfloat16 *a, *b, *c;
};

static int M, N, K, nsets;
static std::vector<set> sets;
static cudaStream_t st;

// Times of n single runs of f (CUDA events around each), after warm untimed
// ones, sorted, in us.
template <class F> static std::vector<float> sorted_us(F f, int warm, int n)
{
	std::vector<float> v;
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < warm; i++)
		f(sets[i % nsets]);
	for (int i = 0; i < n; i++) {
		CK(cudaEventRecord(e0, st));
		f(sets[i % nsets]);
		CK(cudaEventRecord(e1, st));
		CK(cudaEventSynchronize(e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		v.push_back(ms * 1000.0f);
	}
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
	std::sort(v.begin(), v.end());
	return v;
}

template <class F> static void time_it(const char *name, F f)
{
	std::vector<float> v = sorted_us(f, 5, 30);
	double med = v[v.size() / 2], flop = 2.0 * M * N * K;
	printf("%-10s M=%d N=%d K=%d  median %8.1f us  best %8.1f us  %6.1f TFLOP/s\n", name, M, N,
	       K, med, v[0], flop / med * 1e-6);
	fflush(stdout);
}

// Median us of 20 runs of f after 3 warm-up runs; no printing.
template <class F> static float median_us(F f)
{
	std::vector<float> v = sorted_us(f, 3, 20);
	return v[v.size() / 2];
}

// Every heuristic algorithm (up to 32) at split-K 1, 2, 3, 4, 6, 8, 16 where
// cublasLtMatmulAlgoCheck accepts it: the fastest per split-K, with its tile
// id. Tells whether a GEMM chunk smaller than one wave of tiles can run in
// less than one wave's time.
static void splitk_sweep(cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t lb,
                         cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lc, void *ws, size_t wsz,
                         cublasLtMatmulPreference_t pref)
{
	const float one = 1.0f, zero = 0.0f;
	cublasLtMatmulHeuristicResult_t hr[32];
	int nres = 0;
	CB(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 32, hr, &nres));
	const int ks[] = {1, 2, 3, 4, 6, 8, 16};
	for (int k : ks) {
		float best = 1e30f;
		int best_i = -1, best_tile = -1, tried = 0;
		for (int i = 0; i < nres; i++) {
			cublasLtMatmulAlgo_t a = hr[i].algo;
			int32_t sk = k;
			if (cublasLtMatmulAlgoConfigSetAttribute(
			        &a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof(sk)) !=
			    CUBLAS_STATUS_SUCCESS)
				continue;
			cublasLtMatmulHeuristicResult_t chk;
			if (cublasLtMatmulAlgoCheck(lt, op, lb, la, lc, lc, &a, &chk) !=
			        CUBLAS_STATUS_SUCCESS ||
			    chk.workspaceSize > wsz)
				continue;
			tried++;
			float t = median_us([&](set &s) {
				CB(cublasLtMatmul(lt, op, &one, s.b, lb, s.a, la, &zero, s.c, lc,
				                  s.c, lc, &a, ws, wsz, st));
			});
			if (t < best) {
				int32_t tile = -1;
				size_t w;
				cublasLtMatmulAlgoConfigGetAttribute(
				    &a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &w);
				best = t;
				best_i = i;
				best_tile = tile;
			}
		}
		if (best_i < 0)
			printf("splitk %2d  M=%d N=%d K=%d  no algorithm accepts it\n", k, M, N, K);
		else
			printf("splitk %2d  M=%d N=%d K=%d  best %8.1f us  %6.1f TFLOP/s  "
			       "(heuristic %d, tile id %d, %d tried)\n",
			       k, M, N, K, best, 2.0 * M * N * K / best * 1e-6, best_i, best_tile,
			       tried);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: gemm_probe M N K [uniform|zero] [sets]\n");
		return 2;
	}
	M = atoi(argv[1]);
	N = atoi(argv[2]);
	K = atoi(argv[3]);
	const char *fill = argc > 4 ? argv[4] : "uniform";
	nsets = argc > 5 ? atoi(argv[5]) : 1;
	CK(cudaStreamCreate(&st));
	for (int i = 0; i < nsets; i++) {
		set s;
		CK(cudaMalloc(&s.a, (size_t)M * K * 2));
		CK(cudaMalloc(&s.b, (size_t)K * N * 2));
		CK(cudaMalloc(&s.c, (size_t)M * N * 2));
		if (fill[0] == 'z') {
			CK(cudaMemset(s.a, 0, (size_t)M * K * 2));
			CK(cudaMemset(s.b, 0, (size_t)K * N * 2));
		} else {
			cuco::fill_uniform_bf16<<<1024, 256>>>(s.a, (size_t)M * K, 1, 2 * i);
			cuco::fill_uniform_bf16<<<1024, 256>>>(s.b, (size_t)K * N, 1, 2 * i + 1);
		}
		sets.push_back(s);
	}
	CK(cudaDeviceSynchronize());

	cublasHandle_t h;
	CB(cublasCreate(&h));
	CB(cublasSetStream(h, st));
	const float one = 1.0f, zero = 0.0f;
	if (argc > 6) {
		int n = atoi(argv[6]), w = 100;
		std::vector<cudaEvent_t> ev(n + 1);
		std::vector<float> t;
		for (auto &e : ev)
			CK(cudaEventCreate(&e));
		CK(cudaEventRecord(ev[0], st));
		for (int i = 0; i < n; i++) {
			set &s = sets[i % nsets];
			CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, s.b,
			                CUDA_R_16BF, N, s.a, CUDA_R_16BF, K, &zero, s.c,
			                CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
			CK(cudaEventRecord(ev[i + 1], st));
		}
		CK(cudaEventSynchronize(ev[n]));
		for (int i = 0; i < n; i++) {
			float ms;
			CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
			t.push_back(ms * 1000.0f);
		}
		for (int i = 0; i + w <= n; i += w) {
			std::vector<float> win(t.begin() + i, t.begin() + i + w);
			std::sort(win.begin(), win.end());
			printf("sustain runs %5d-%5d median %8.1f us\n", i, i + w - 1, win[w / 2]);
		}
		return 0;
	}
	time_it("gemmex", [&](set &s) {
		CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, s.b, CUDA_R_16BF, N,
		                s.a, CUDA_R_16BF, K, &zero, s.c, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
		                CUBLAS_GEMM_DEFAULT));
	});

	cublasLtHandle_t lt;
	CB(cublasLtCreate(&lt));
	size_t wsz = 32u << 20;
	void *ws;
	CK(cudaMalloc(&ws, wsz));
	cublasLtMatmulDesc_t op;
	CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	cublasLtMatrixLayout_t lb, la, lc;
	CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, N, K, N));
	CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, K, M, K));
	CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N));
	cublasLtMatmulPreference_t pref;
	CB(cublasLtMatmulPreferenceCreate(&pref));
	CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
	                                        &wsz, sizeof(wsz)));
	cublasLtMatmulHeuristicResult_t hr[16];
	int nres = 0;
	CB(cublasLtMatmulAlgoGetHeuristic(lt, op, lb, la, lc, lc, pref, 16, hr, &nres));
	printf("cublasLt heuristics: %d\n", nres);
	auto lt_run = [&](set &s, int i) {
		CB(cublasLtMatmul(lt, op, &one, s.b, lb, s.a, la, &zero, s.c, lc, s.c, lc,
		                  &hr[i].algo, ws, wsz, st));
	};
	if (fill[0] == 's') { // splitk: every heuristic algorithm at split-K 1..16
		splitk_sweep(lt, op, lb, la, lc, ws, wsz, pref);
		return 0;
	}
	time_it("lt", [&](set &s) { lt_run(s, 0); });
	for (int i = 1; i < nres; i++) {
		char name[32];
		snprintf(name, sizeof(name), "lt-%d", i);
		time_it(name, [&](set &s) { lt_run(s, i); });
	}
	return 0;
}
