#!/usr/bin/env bash
# devlib_compile.sh - compile a .cu that uses every public function of the
# device library (lsa.cuh, gin.cuh, launch.cuh, graph.cuh) for sm_90a, and link
# gemm.cuh from two -rdc translation units; fails on any error.
# Usage: bash tests/devlib_compile.sh [ignored]   (CUCO_HOME = repo root)
set -euo pipefail
root="${CUCO_HOME:-$(cd "$(dirname "$0")/.." && pwd)}"
nvcc="${NVCC:-nvcc}"
if ! command -v "$nvcc" >/dev/null 2>&1; then
	if [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; else
		echo "devlib_compile: nvcc not found (set NVCC or PATH)" >&2; exit 1; fi
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/use_all.cu" <<'CU'
#include <cuco_dev/lsa.cuh>
#include <cuco_dev/gin.cuh>
#include <cuco_dev/launch.cuh>
#include <cuco_dev/graph.cuh>

__global__ void lsa_all(ncclDevComm dc, ncclWindow_t w, size_t off, size_t bytes, size_t count,
			uint64_t *flag)
{
	cuco::cta_barrier bar(dc, blockIdx.x);
	bar.sync_relaxed();
	char *loc = (char *)cuco::lsa_local(w, off);
	char *peer = (char *)cuco::lsa_peer(w, off, (cuco::lsa_rank(dc) + 1) % cuco::lsa_size(dc));
	cuco::copy_thread(peer, loc + 1, 3);
	cuco::copy_warp(peer, loc, bytes);
	cuco::copy_cta(peer + 7, loc, bytes);
	cuco::copy_grid(peer, loc, bytes);
	const float *fs[2] = {(const float *)loc, (const float *)peer};
	cuco::reduce_sum_grid<float>((float *)loc, fs, 2, count);
	const __nv_bfloat16 *bs[2] = {(const __nv_bfloat16 *)loc, (const __nv_bfloat16 *)peer};
	cuco::reduce_sum_grid<__nv_bfloat16>((__nv_bfloat16 *)loc, bs, 2, count);
	bar.sync_release();
	bar.sync_acquire();
	bar.arrive_release();
	bar.wait_acquire();
	bar.arrive_relaxed();
	bar.wait_relaxed();
	cuco::signal_store_release(flag, 1);
	cuco::signal_add_release(flag, 1);
	uint64_t v = cuco::signal_load_acquire(flag);
	cuco::signal_wait_ge(flag, v);
	(void)cuco::signal_wait_ge_timeout(flag, v, 1000);
	cuco::signal_store_release_cta(flag, 2);
	cuco::signal_add_release_cta(flag, 1);
	cuco::signal_wait_ge_cta(flag, 3);
	bar.sync_acq_rel();
}

__global__ void gin_all(ncclDevComm dc, ncclWindow_t w, size_t bytes)
{
	if (!cuco::gin_available(dc))
		return;
	cuco::gin_session g(dc, 0);
	uint64_t s0 = g.read_signal(0);
	int peer = (dc.rank + 1) % dc.nRanks;
	if (threadIdx.x == 0) {
		g.put_signal_add(peer, w, 0, w, bytes, bytes, 0, 1);
		g.put_signal_inc(peer, w, 0, w, bytes, bytes, 1);
		g.put(peer, w, 0, w, bytes, bytes);
	}
	g.signal_add_cta(peer, 0, 1);
	g.wait_signal_cta(0, s0 + 2);
	if (threadIdx.x == 0)
		g.wait_signal_thread(0, s0 + 2);
	g.flush_cta();
	if (threadIdx.x == 0)
		g.flush_thread();
	__syncthreads();
	if (threadIdx.x == 0)
		g.reset_signal(1);
}

extern "C" int host_all(cuco_ctx *ctx, const cuco_tensor *ts, cuco_requirements *req,
			cudaStream_t st)
{
	ncclWindow_t w;
	size_t off;
	int rc = 0;
	cuco::require_lsa(req, CUCO_COMM_CTAS_DEFAULT);
	if (cuco::window_find(ctx, ts, ts[0].ptr, ts[0].bytes, &w, &off))
		return 1;
	cuco::window_of(&ts[0], &w, &off);
	const cuco_ctx *cctx = ctx;
	if (cuco::window_find(cctx, nullptr, ctx->scratch, 0, &w, &off))
		return 1;
	CUCO_CUDA_TRY(cudaStreamSynchronize(st), ctx);
	CUCO_CUDA_TRY(cudaStreamSynchronize(st), cctx);
	CUCO_NCCL_TRY(ncclCommCount(ctx->comm, &rc), ctx);
	lsa_all<<<cuco::CUCO_COMM_CTAS_DEFAULT, CUCO_COMM_THREADS_DEFAULT, 0, st>>>(
		*ctx->devcomm, w, off, 100, 25, (uint64_t *)ctx->scratch);
	CUCO_LAUNCH_TRY(ctx);
	if (cuco::gin_supported(ctx))
		gin_all<<<1, 128, 0, st>>>(*ctx->devcomm, w, 64);
	CUCO_CUDA_TRY_GOTO(cudaGetLastError(), ctx, rc, out);
	CUCO_NCCL_TRY_GOTO(ncclCommCount(ctx->comm, &rc), ctx, rc, out);
	rc = 0;
out:
	return rc;
}

/* A run replayed through a graph per tensor set, as the templates' graph knob does. */
extern "C" int graph_all(cuco_ctx *ctx, const cuco_tensor *ts, cudaStream_t st)
{
	static cuco::graph_cache graphs;
	int rc = cuco::graph_run(ctx, &graphs, ts, 3, st, [&](cudaStream_t gs) {
		lsa_all<<<1, 32, 0, gs>>>(*ctx->devcomm, ts[0].win, 0, 0, 0, nullptr);
		CUCO_LAUNCH_TRY(ctx);
		return 0;
	});
	cuco::graph_cache_release(&graphs);
	return rc;
}
CU
cd "$root"
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xcompiler -Wall,-Wextra,-Wno-unused-parameter,-Werror \
	-I include -I device/include -c "$tmp/use_all.cu" -o "$tmp/use_all.o"
# gemm.cuh in two translation units of one program, linked as relocatable
# device code: nothing it defines at namespace scope may clash (its scratch
# tile for rows past M is static per unit)
for u in 1 2; do
	cat >"$tmp/gemm$u.cu" <<CU
#include <cuco_dev/gemm.cuh>
void run$u(cuco::gemm_bf16_plan *p, cudaStream_t s) { cuco::gemm_bf16_run(p, s); }
CU
done
echo 'int main(void) { return 0; }' >>"$tmp/gemm2.cu"
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -std=c++17 -rdc=true -DCUCO_GEMM_SPLIT=0 -I device/include \
	"$tmp/gemm1.cu" "$tmp/gemm2.cu" -o "$tmp/gemm_rdc" 2>&1 | grep -v 'C7504' || true
[ -x "$tmp/gemm_rdc" ] || { echo "devlib_compile: gemm.cuh in two -rdc units does not link" >&2; exit 1; }
echo "devlib_compile: ok"
