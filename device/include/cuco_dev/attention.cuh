// cuco_dev/attention.cuh -- bf16 flash-attention forward for H100/H200
// (sm_90a), with the log-sum-exp of every query row and an online-softmax
// merge of two partial results (context parallelism: a query block against
// key blocks that arrive one at a time).
//
//   O = softmax(scale * Q K^T, masked) V     bf16 in and out, fp32 accumulation
//   lse = log sum_j exp(scale * q.k_j)       fp32, natural log, visible keys only
//
// Two kernels (see docs/attention.md for the design and measured numbers):
//   * hopper (D 32, 64, 128): 128 query rows per CTA, 384 threads. Warpgroup 0
//     is the producer (one thread issues TMA loads of the Q tile once and of
//     128-key K and V blocks into a ring of stages, full/empty mbarriers;
//     setmaxnreg.dec), warpgroups 1 and 2 consume 64 query rows each
//     (setmaxnreg.inc): S = Q K^T by wgmma with Q and K from shared memory,
//     mask and online softmax in registers, O += P V by wgmma with P from
//     registers and V from shared memory. By default each consumer issues
//     S of block j + 1 together with P V of block j and runs the softmax of
//     j + 1 while P V is on the tensor cores (intra-warpgroup overlap); a
//     pingpong mode (the two consumers take turns to issue), a serial mode
//     and 3 consumer warpgroups (D <= 64) are there for measurement
//     (attention_detail::fwd_path). D 32 runs as D 64: TMA zero-fills the
//     missing columns, only 32 are stored. Needs 16-byte aligned q/k/v/o and
//     batch/head strides that are multiples of 8 elements.
//   * simple (any D in {32, 64, 128}, any alignment): 64 query rows per CTA,
//     4 warps of mma.sync m16n8k16, K and V blocks of 64 keys staged through
//     shared memory by plain loads. The fallback where hopper does not apply.
// Both take any Sq, Sk >= 1 (rows and keys past the end are masked or
// zero-filled), any q_pos0/k_pos0, causal or not, and GQA.
//
// Static state: the driver's tensor-map encoder (one function pointer) and a
// table of kernels made ready (shared-memory attribute set), keyed by each
// loaded copy's kernel address: safe from several streams and threads at once
// and from several shared objects that each carry a copy of this header's
// kernels in one process.
//
// Requires: compile with -gencode=arch=compute_90a,code=sm_90a for the hopper
// kernel (without it, attention_fwd_bf16 takes the simple kernel).
#pragma once

#include <cuco_dev/gemm.cuh> // PTX helpers (mbarrier, TMA, wgmma descriptors), tensor-map encoder

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <atomic>

namespace cuco
{

// Element (b, h, s, d) of q/k/v/o sits at ptr[b*X_bs + h*X_hs + s*D + d]; lse (b, h, s) at
// lse[b*lse_bs + h*lse_hs + s].
struct attention_args {
	const __nv_bfloat16 *q, *k, *v;
	__nv_bfloat16 *o;
	float *lse; // may be NULL: then not written
	long long q_bs, q_hs, k_bs, k_hs, v_bs, v_hs, o_bs, o_hs, lse_bs,
	    lse_hs; // strides in elements
	int B, Hq, Hkv, Sq, Sk,
	    D;       // D in {32, 64, 128}; Hq % Hkv == 0 (GQA: q head h reads kv head h / (Hq/Hkv))
	float scale; // softmax scale, e.g. 1/sqrt(D)
	int causal;  // 1: key at global position k_pos0+j visible to query at q_pos0+i iff k_pos0+j
	             // <= q_pos0+i
	long long q_pos0, k_pos0; // global positions of query row 0 and key row 0
};

// O = softmax(scale * Q K^T (masked)) V in bf16, fp32 accumulation and statistics; lse = natural
// log of sum_j exp(scale * q.k_j) over visible keys. A query row with no visible key: O row = 0,
// lse = -INFINITY. Any Sq, Sk >= 1. Returns cudaErrorInvalidValue for a null q/k/v/o, a count < 1,
// D not in {32, 64, 128} or Hq % Hkv != 0; else the launch's error. Asynchronous on stream s.
cudaError_t attention_fwd_bf16(const attention_args &a, cudaStream_t s);

// Online-softmax merge in place: (a.o, a.lse) <- merge((a.o, a.lse), (o_part, lse_part)) over B,
// Hq, Sq, D of a, o_part and lse_part laid out with a's o/lse strides; -INFINITY on either side
// handled (the other wins). Returns cudaErrorInvalidValue for a null o, lse, o_part or lse_part or
// a bad count or D.
cudaError_t attention_merge_bf16(const attention_args &a, const __nv_bfloat16 *o_part,
                                 const float *lse_part, cudaStream_t s);

namespace attention_detail
{

using gemm_detail::make_desc_sw128;
using gemm_detail::mbar_arrive;
using gemm_detail::mbar_expect_tx;
using gemm_detail::mbar_init;
using gemm_detail::mbar_wait;
using gemm_detail::smem_u32;
using gemm_detail::wgmma_commit;
using gemm_detail::wgmma_fence;
using gemm_detail::wgmma_wait;

// Which kernel attention_fwd_bf16_path runs.
enum fwd_path {
	kPathAuto = 0,   // hopper where it applies, else simple
	kPathSimple = 1, // mma.sync kernel
	kPathHopper =
	    2, // wgmma/TMA kernel (its default mode); cudaErrorNotSupported where it does not apply
	kPathHopperSerial = 3,   // ... mode 0: one block at a time
	kPathHopperOverlap = 4,  // ... mode 1: intra-warpgroup overlap
	kPathHopperPingpong = 5, // ... mode 2: overlap and pingpong
	kPathHopper3 =
	    6, // ... mode 1 with 3 consumer warpgroups (192 query rows; D 32 and 64 only)
};
// The hopper kernel's mode where the path does not name one.
constexpr int kHopperDefaultMode = 1;

__device__ __forceinline__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&v);
}
// Index of the last key block (of `bk` keys) that a query row at or before
// global position qmax sees, plus one, capped at the blocks of Sk keys.
__host__ __device__ __forceinline__ int visible_blocks(int Sk, int bk, int causal, long long qmax,
                                                       long long k_pos0)
{
	int n = (Sk + bk - 1) / bk;
	if (causal) {
		const long long lim = qmax - k_pos0; // last visible key index
		if (lim < 0)
			return 0;
		if (lim / bk + 1 < n)
			n = (int)(lim / bk + 1);
	}
	return n;
}

// ---------------------------------------------------------------- simple kernel
// 64 query rows, 4 warps of 16 rows; K and V blocks of 64 keys in shared
// memory, rows padded by 8 elements (conflict-free fragment loads).
template <int D> __global__ void __launch_bounds__(128) fwd_simple_kernel(const attention_args a)
{
	constexpr int BK = 64, LD = D + 8;
	__shared__ __align__(16) __nv_bfloat16 ks[BK * LD];
	__shared__ __align__(16) __nv_bfloat16 vs[BK * LD];
	const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
	const int h = blockIdx.y, b = blockIdx.z, hk = h / (a.Hq / a.Hkv);
	const int m0 = blockIdx.x * 64;
	const int row0 = m0 + warp * 16 + g; // rows row0 and row0 + 8
	const __nv_bfloat16 *q = a.q + b * a.q_bs + h * a.q_hs;
	const __nv_bfloat16 *kp = a.k + b * a.k_bs + hk * a.k_hs;
	const __nv_bfloat16 *vp = a.v + b * a.v_bs + hk * a.v_hs;
	const float sl2 = a.scale * 1.4426950408889634f;

	// Q fragments (m16n8k16 A): rows g / g + 8, columns 2t, 2t + 1 (+ 8)
	uint32_t qf[D / 16][4];
#pragma unroll
	for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
		for (int i = 0; i < 4; ++i) {
			const int r = row0 + (i & 1) * 8, c = kk * 16 + 2 * t + (i >> 1) * 8;
			qf[kk][i] = 0;
			if (r < a.Sq) {
				const __nv_bfloat16 *e = q + (long long)r * D + c;
				qf[kk][i] = (uint32_t)__bfloat16_as_ushort(e[0]) |
				            ((uint32_t)__bfloat16_as_ushort(e[1]) << 16);
			}
		}
	float o[D / 8][4];
#pragma unroll
	for (int j = 0; j < D / 8; ++j)
		o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
	float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
	const int last = (m0 + 64 < a.Sq ? m0 + 64 : a.Sq) - 1;
	const int nkb = visible_blocks(a.Sk, BK, a.causal, a.q_pos0 + last, a.k_pos0);
	const long long qp[2] = {a.q_pos0 + row0, a.q_pos0 + row0 + 8};
	const bool vec = ((a.k_bs | a.k_hs | a.v_bs | a.v_hs) & 7) == 0 &&
	                 ((uintptr_t)a.k & 15) == 0 && ((uintptr_t)a.v & 15) == 0;

	for (int kb = 0; kb < nkb; ++kb) {
		const int j0 = kb * BK;
		__syncthreads();
		for (int i = threadIdx.x; i < BK * D / 8; i += 128) {
			const int r = i / (D / 8), c = (i % (D / 8)) * 8;
			uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
			if (j0 + r < a.Sk) {
				const __nv_bfloat16 *ke = kp + (long long)(j0 + r) * D + c,
				                    *ve = vp + (long long)(j0 + r) * D + c;
				if (vec) {
					kv = *reinterpret_cast<const uint4 *>(ke);
					vv = *reinterpret_cast<const uint4 *>(ve);
				} else {
					__nv_bfloat16 *kx = reinterpret_cast<__nv_bfloat16 *>(&kv),
					              *vx = reinterpret_cast<__nv_bfloat16 *>(&vv);
					for (int e = 0; e < 8; ++e) {
						kx[e] = ke[e];
						vx[e] = ve[e];
					}
				}
			}
			*reinterpret_cast<uint4 *>(&ks[r * LD + c]) = kv;
			*reinterpret_cast<uint4 *>(&vs[r * LD + c]) = vv;
		}
		__syncthreads();
		// S = Q K^T: 8 tiles of 8 keys
		float s[8][4];
#pragma unroll
		for (int n = 0; n < 8; ++n) {
			s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
			for (int kk = 0; kk < D / 16; ++kk) {
				const __nv_bfloat16 *kr = &ks[(n * 8 + g) * LD + kk * 16 + 2 * t];
				const uint32_t b0 = *reinterpret_cast<const uint32_t *>(kr),
				               b1 = *reinterpret_cast<const uint32_t *>(kr + 8);
				asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
				             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
				             "{%0,%1,%2,%3};"
				             : "+f"(s[n][0]), "+f"(s[n][1]), "+f"(s[n][2]),
				               "+f"(s[n][3])
				             : "r"(qf[kk][0]), "r"(qf[kk][1]), "r"(qf[kk][2]),
				               "r"(qf[kk][3]), "r"(b0), "r"(b1));
			}
		}
		// mask, online softmax
#pragma unroll
		for (int n = 0; n < 8; ++n)
#pragma unroll
			for (int e = 0; e < 4; ++e) {
				const int key = j0 + n * 8 + 2 * t + (e & 1);
				if (key >= a.Sk || (a.causal && a.k_pos0 + key > qp[e >> 1]))
					s[n][e] = -INFINITY;
			}
#pragma unroll
		for (int r = 0; r < 2; ++r) {
			float mx = -INFINITY;
#pragma unroll
			for (int n = 0; n < 8; ++n)
				mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
			const float mn = fmaxf(m[r], mx);
			const float mu = mn == -INFINITY ? 0.f : mn;
			const float alpha = ex2((m[r] - mu) * sl2);
			m[r] = mn;
			l[r] *= alpha;
#pragma unroll
			for (int j = 0; j < D / 8; ++j) {
				o[j][2 * r] *= alpha;
				o[j][2 * r + 1] *= alpha;
			}
			const float ms = mu * sl2;
#pragma unroll
			for (int n = 0; n < 8; ++n) {
				s[n][2 * r] = ex2(fmaf(s[n][2 * r], sl2, -ms));
				s[n][2 * r + 1] = ex2(fmaf(s[n][2 * r + 1], sl2, -ms));
				l[r] += s[n][2 * r] + s[n][2 * r + 1];
			}
		}
		// O += P V: 4 k-steps of 16 keys
#pragma unroll
		for (int kk = 0; kk < 4; ++kk) {
			const uint32_t p0 = pack_bf16(s[2 * kk][0], s[2 * kk][1]),
			               p1 = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
			const uint32_t p2 = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
			               p3 = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
			for (int j = 0; j < D / 8; ++j) {
				const __nv_bfloat16 *vc = &vs[(kk * 16 + 2 * t) * LD + j * 8 + g];
				const uint32_t b0 = (uint32_t)__bfloat16_as_ushort(vc[0]) |
				                    ((uint32_t)__bfloat16_as_ushort(vc[LD]) << 16);
				const uint32_t b1 =
				    (uint32_t)__bfloat16_as_ushort(vc[8 * LD]) |
				    ((uint32_t)__bfloat16_as_ushort(vc[9 * LD]) << 16);
				asm volatile(
				    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
				    "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
				    "{%0,%1,%2,%3};"
				    : "+f"(o[j][0]), "+f"(o[j][1]), "+f"(o[j][2]), "+f"(o[j][3])
				    : "r"(p0), "r"(p1), "r"(p2), "r"(p3), "r"(b0), "r"(b1));
			}
		}
	}
	// epilogue
#pragma unroll
	for (int r = 0; r < 2; ++r) {
		float lr = l[r];
		lr += __shfl_xor_sync(0xffffffffu, lr, 1);
		lr += __shfl_xor_sync(0xffffffffu, lr, 2);
		const int row = row0 + 8 * r;
		if (row >= a.Sq)
			continue;
		const float inv = lr > 0.f ? 1.f / lr : 0.f;
		__nv_bfloat16 *orow = a.o + b * a.o_bs + h * a.o_hs + (long long)row * D;
#pragma unroll
		for (int j = 0; j < D / 8; ++j) {
			orow[j * 8 + 2 * t] = __float2bfloat16(o[j][2 * r] * inv);
			orow[j * 8 + 2 * t + 1] = __float2bfloat16(o[j][2 * r + 1] * inv);
		}
		if (a.lse && t == 0)
			a.lse[b * a.lse_bs + h * a.lse_hs + row] =
			    lr > 0.f ? m[r] * a.scale + logf(lr) : -INFINITY;
	}
}

// ---------------------------------------------------------------- hopper kernel
// 4-D tiled TMA load (coordinates innermost first) into shared memory,
// completing on mbarrier bar.
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                            int c0, int c1, int c2, int c3)
{
	asm volatile(
	    "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	    " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst),
	    "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
	    : "memory");
}

// wgmma m64n64k16, A and B from shared memory, both K-major (B = rows of K:
// S = Q K^T); scale_d 0 overwrites d, 1 accumulates.
__device__ __forceinline__ void wgmma_m64n64k16_ss_kk(float (&d)[32], uint64_t da, uint64_t db,
                                                      int scale_d)
{
	asm volatile("{\n.reg .pred p;\n"
	             "setp.ne.b32 p, %34, 0;\n"
	             "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
	             "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
	             "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
	             "%32, %33, p, 1, 1, 0, 0;\n}\n"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
	               "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
	               "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
	               "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
	               "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
	               "+f"(d[30]), "+f"(d[31])
	             : "l"(da), "l"(db), "r"(scale_d));
}

// wgmma m64n64k16, A from registers (each warp's 16 rows as the m16n8k16
// A fragment), B from shared memory N-major (rows of V: O += P V); accumulates.
__device__ __forceinline__ void wgmma_m64n64k16_rs_tb(float (&d)[32], const uint32_t (&a)[4],
                                                      uint64_t db)
{
	asm volatile("{\n.reg .pred p;\n"
	             "setp.ne.b32 p, %37, 0;\n"
	             "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
	             "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
	             "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
	             "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
	               "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
	               "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
	               "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
	               "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
	               "+f"(d[30]), "+f"(d[31])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

// wgmma m64n128k16, A and B from shared memory, both K-major (B = rows of K:
// S = Q K^T); scale_d 0 overwrites d, 1 accumulates.
__device__ __forceinline__ void wgmma_m64n128k16_ss_kk(float (&d)[64], uint64_t da, uint64_t db,
                                                       int scale_d)
{
	asm volatile(
	    "{\n.reg .pred p;\n"
	    "setp.ne.b32 p, %66, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
	    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
	    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
	    "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
	    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
	      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
	      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
	      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
	      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
	      "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
	      "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
	      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
	      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
	      "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
	      "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
	    : "l"(da), "l"(db), "r"(scale_d));
}

// wgmma m64n128k16, A from registers (each warp's 16 rows as the m16n8k16
// A fragment), B from shared memory N-major (rows of V: O += P V); accumulates.
__device__ __forceinline__ void wgmma_m64n128k16_rs_tb(float (&d)[64], const uint32_t (&a)[4],
                                                       uint64_t db)
{
	asm volatile("{\n.reg .pred p;\n"
	             "setp.ne.b32 p, %69, 0;\n"
	             "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
	             "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
	             "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
	             "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, "
	             "%47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
	             "%62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
	               "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
	               "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
	               "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
	               "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
	               "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
	               "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
	               "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
	               "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
	               "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
	               "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

template <int N, int R>
__device__ __forceinline__ void wgmma_s(float (&d)[R], uint64_t da, uint64_t db, int sc)
{
	if constexpr (N == 128)
		wgmma_m64n128k16_ss_kk(d, da, db, sc);
	else
		wgmma_m64n64k16_ss_kk(d, da, db, sc);
}
template <int N, int R>
__device__ __forceinline__ void wgmma_o(float (&d)[R], const uint32_t (&a)[4], uint64_t db)
{
	if constexpr (N == 128)
		wgmma_m64n128k16_rs_tb(d, a, db);
	else
		wgmma_m64n64k16_rs_tb(d, a, db);
}

// What the hopper kernel needs beside its tensor maps.
struct hopper_params {
	__nv_bfloat16 *o;
	float *lse;
	long long o_bs, o_hs, lse_bs, lse_hs;
	int Hq, Hkv, Sq, Sk;
	float scale, sl2; // sl2 = scale * log2(e)
	int causal;
	long long q_pos0, k_pos0;
};

// Shared-memory plan: Q tile (64 rows per consumer warpgroup), then ST stages
// of a K block and ST of a V block (128 keys each), each as D / 64 boxes of
// rows x 64 columns (128-byte rows, 128-byte swizzle), then the mbarriers.
template <int D, int ST, int NC> struct hopper_cfg {
	static constexpr int BM = 64 * NC, BN = 128, NB = D / 64;
	static constexpr int kQBox = BM * 128; // bytes of one Q box
	static constexpr int kQTile = NB * kQBox;
	static constexpr int kBox = BN * 128;   // bytes of one K or V box
	static constexpr int kTile = NB * kBox; // a K or a V block
	static constexpr int kThreads = 128 * (NC + 1);
	static constexpr int kBars = 1 + 4 * ST;
	static constexpr int kSmem = 1024 + kQTile + 2 * ST * kTile + kBars * 8;
	static_assert(kSmem <= 232448, "more shared memory than an H100/H200 CTA may have");
};

// D: head dim of the tiles (64 or 128); DS: columns stored (D, or 32 for a
// head dim of 32 run as 64 with zero-filled columns); ST: stages; MODE: 0 one
// block at a time, 1 intra-warpgroup overlap (S of block j + 1 and P V of
// block j issued together, softmax beside P V), 2 as 1 with the two consumer
// warpgroups taking turns to issue (pingpong); NC: consumer warpgroups (2, or
// 3 for D 64: 192 query rows a CTA, less register room, no pingpong).
template <int D, int DS, int ST, int MODE, int NC>
__global__ void __launch_bounds__(128 * (NC + 1), 1)
    fwd_hopper_kernel(const __grid_constant__ CUtensorMap tq,
                      const __grid_constant__ CUtensorMap tk,
                      const __grid_constant__ CUtensorMap tv, const hopper_params p)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
	using CF = hopper_cfg<D, ST, NC>;
	static_assert(NC == 2 || (NC == 3 && D == 64 && MODE != 2),
	              "3 consumer warpgroups: D 64, no pingpong");
	constexpr int BN = CF::BN, NB = CF::NB;
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
	const uint32_t sQ = base, sK = base + CF::kQTile, sV = sK + ST * CF::kTile,
	               bars = sV + ST * CF::kTile;
	const uint32_t qfull = bars;
	auto kfull = [&](int s) { return bars + 8u * (1 + s); };
	auto kempty = [&](int s) { return bars + 8u * (1 + ST + s); };
	auto vfull = [&](int s) { return bars + 8u * (1 + 2 * ST + s); };
	auto vempty = [&](int s) { return bars + 8u * (1 + 3 * ST + s); };

	// causal: the heaviest query blocks (most visible keys) first
	const int mb = p.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
	const int h = blockIdx.y, b = blockIdx.z, hk = h / (p.Hq / p.Hkv);
	const int m0 = mb * CF::BM;
	const int last = (m0 + CF::BM < p.Sq ? m0 + CF::BM : p.Sq) - 1;
	const int nkb = visible_blocks(p.Sk, BN, p.causal, p.q_pos0 + last, p.k_pos0);
	const int wg = threadIdx.x / 128;

	if (threadIdx.x == 0) {
		mbar_init(qfull, 1);
#pragma unroll
		for (int s = 0; s < ST; ++s) {
			mbar_init(kfull(s), 1);
			mbar_init(kempty(s), 4 * NC); // lane 0 of each consumer warp
			mbar_init(vfull(s), 1);
			mbar_init(vempty(s), 4 * NC);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		gemm_detail::tma_prefetch_desc(&tq);
		gemm_detail::tma_prefetch_desc(&tk);
		gemm_detail::tma_prefetch_desc(&tv);
	}
	__syncthreads();

	if (wg == 0) {
		// ------------------------------------------------------------ producer
		if constexpr (NC == 2)
			asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
		else
			asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
		if (threadIdx.x == 0 && nkb > 0) {
			mbar_expect_tx(qfull, CF::kQTile);
#pragma unroll
			for (int i = 0; i < NB; ++i)
				tma_load_4d(sQ + i * CF::kQBox, &tq, qfull, 64 * i, m0, h, b);
			int stage = 0;
			uint32_t phase = 0;
			for (int kb = 0; kb < nkb; ++kb) {
				mbar_wait(kempty(stage), phase ^ 1u);
				mbar_expect_tx(kfull(stage), CF::kTile);
#pragma unroll
				for (int i = 0; i < NB; ++i)
					tma_load_4d(sK + stage * CF::kTile + i * CF::kBox, &tk,
					            kfull(stage), 64 * i, kb * BN, hk, b);
				mbar_wait(vempty(stage), phase ^ 1u);
				mbar_expect_tx(vfull(stage), CF::kTile);
#pragma unroll
				for (int i = 0; i < NB; ++i)
					tma_load_4d(sV + stage * CF::kTile + i * CF::kBox, &tv,
					            vfull(stage), 64 * i, kb * BN, hk, b);
				if (++stage == ST) {
					stage = 0;
					phase ^= 1u;
				}
			}
		}
	} else {
		// ------------------------------------------------------------ consumers
		if constexpr (NC == 2)
			asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
		else
			asm volatile("setmaxnreg.inc.sync.aligned.u32 160;\n" ::: "memory");
		const int cw = wg - 1, warp = (threadIdx.x / 32) & 3, lane = threadIdx.x & 31,
		          g = lane >> 2, t = lane & 3;
		const int row0 = m0 + cw * 64 + warp * 16 + g; // this thread's rows: row0, row0 + 8
		const long long qp0 = p.q_pos0 + row0, qp1 = qp0 + 8;
		const long long wg_first =
		    p.q_pos0 + m0 + cw * 64; // the warpgroup's first query position
		float o[D / 2];
#pragma unroll
		for (int i = 0; i < D / 2; ++i)
			o[i] = 0.f;
		float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, alpha[2] = {1.f, 1.f};
		float s[BN / 2];
		uint32_t pf[BN / 16][4];
		// S = Q K^T of the block in stage st (issued, not waited for)
		auto issue_s = [&](int st) {
#pragma unroll
			for (int kk = 0; kk < D / 16; ++kk) {
				// Q and K both K-major, SW128: 128-byte rows, 8-row groups 1024 B
				// apart; k16 step = 32 B inside the row; a 64-column box per 4
				// steps
				const uint64_t da = make_desc_sw128(
				    sQ + (kk >> 2) * CF::kQBox + cw * 64 * 128 + (kk & 3) * 32, 16,
				    1024);
				const uint64_t db = make_desc_sw128(
				    sK + st * CF::kTile + (kk >> 2) * CF::kBox + (kk & 3) * 32, 16,
				    1024);
				wgmma_s<BN>(s, da, db, kk > 0 ? 1 : 0);
			}
			wgmma_commit();
		};
		// O += P V of the block in stage st (issued, not waited for)
		auto issue_pv = [&](int st) {
#pragma unroll
			for (int kk = 0; kk < BN / 16; ++kk) {
				// V N-major, SW128: boxes of 64 columns x 128 keys side by side
				// along D (LBO = one box), 8-key groups 1024 B apart; k16 step =
				// 2048 B
				const uint64_t db = make_desc_sw128(sV + st * CF::kTile + kk * 2048,
				                                    CF::kBox, 1024);
				wgmma_o<D>(o, pf[kk], db);
			}
			wgmma_commit();
		};
		// mask block kb of s, fold it into (m, l), leave its probabilities in s
		// and the factor the rows' O must be rescaled by in alpha
		auto softmax = [&](int kb) {
			const int j0 = kb * BN;
			if (j0 + BN > p.Sk || (p.causal && p.k_pos0 + j0 + BN - 1 > wg_first)) {
#pragma unroll
				for (int n = 0; n < BN / 8; ++n)
#pragma unroll
					for (int e = 0; e < 4; ++e) {
						const int key = j0 + n * 8 + 2 * t + (e & 1);
						if (key >= p.Sk ||
						    (p.causal &&
						     p.k_pos0 + key > ((e & 2) ? qp1 : qp0)))
							s[4 * n + e] = -INFINITY;
					}
			}
#pragma unroll
			for (int r = 0; r < 2; ++r) {
				float mx = -INFINITY;
#pragma unroll
				for (int n = 0; n < BN / 8; ++n)
					mx = fmaxf(mx,
					           fmaxf(s[4 * n + 2 * r], s[4 * n + 2 * r + 1]));
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
				const float mn = fmaxf(m[r], mx);
				const float mu = mn == -INFINITY ? 0.f : mn;
				alpha[r] = ex2((m[r] - mu) * p.sl2);
				m[r] = mn;
				const float ms = mu * p.sl2;
				float sum = 0.f;
#pragma unroll
				for (int n = 0; n < BN / 8; ++n) {
					s[4 * n + 2 * r] = ex2(fmaf(s[4 * n + 2 * r], p.sl2, -ms));
					s[4 * n + 2 * r + 1] =
					    ex2(fmaf(s[4 * n + 2 * r + 1], p.sl2, -ms));
					sum += s[4 * n + 2 * r] + s[4 * n + 2 * r + 1];
				}
				l[r] = l[r] * alpha[r] + sum;
			}
		};
		auto rescale_o = [&]() {
#pragma unroll
			for (int j = 0; j < D / 8; ++j) {
				o[4 * j] *= alpha[0];
				o[4 * j + 1] *= alpha[0];
				o[4 * j + 2] *= alpha[1];
				o[4 * j + 3] *= alpha[1];
			}
		};
		auto convert_p = [&]() {
#pragma unroll
			for (int kk = 0; kk < BN / 16; ++kk) {
				pf[kk][0] = pack_bf16(s[8 * kk + 0], s[8 * kk + 1]);
				pf[kk][1] = pack_bf16(s[8 * kk + 2], s[8 * kk + 3]);
				pf[kk][2] = pack_bf16(s[8 * kk + 4], s[8 * kk + 5]);
				pf[kk][3] = pack_bf16(s[8 * kk + 6], s[8 * kk + 7]);
			}
		};
		// P's registers stay untouched (and allocated) until the wgmma reading them is done
		auto fence_p = [&]() {
#pragma unroll
			for (int kk = 0; kk < BN / 16; ++kk)
				asm volatile(""
				             : "+r"(pf[kk][0]), "+r"(pf[kk][1]), "+r"(pf[kk][2]),
				               "+r"(pf[kk][3])::"memory");
		};
		// pingpong: the two consumer warpgroups take turns issuing their GEMMs
		// (named barriers 2 and 3), so one's softmax runs beside the other's GEMMs
		auto turn_wait = [&]() {
			if constexpr (MODE == 2)
				gemm_detail::named_bar_sync(2 + cw, 256);
		};
		auto turn_pass = [&]() {
			if constexpr (MODE == 2)
				asm volatile("bar.arrive %0, %1;" ::"r"(2 + (cw ^ 1)), "r"(256)
				             : "memory");
		};
		if (nkb > 0) {
			mbar_wait(qfull, 0);
			if constexpr (MODE == 2) {
				if (cw == 0)
					asm volatile("bar.arrive %0, %1;" ::"r"(2), "r"(256)
					             : "memory"); // first turn: warpgroup 1
			}
		}
		int stage = 0;
		uint32_t phase = 0;
		if constexpr (MODE == 0) {
			// one block at a time: S, softmax, P V
			for (int kb = 0; kb < nkb; ++kb) {
				mbar_wait(kfull(stage), phase);
				wgmma_fence();
				issue_s(stage);
				wgmma_wait<0>();
				gemm_detail::fence_regs(s);
				if (lane == 0)
					mbar_arrive(kempty(stage));
				softmax(kb);
				rescale_o();
				convert_p();
				mbar_wait(vfull(stage), phase);
				gemm_detail::fence_regs(o);
				wgmma_fence();
				issue_pv(stage);
				wgmma_wait<0>();
				gemm_detail::fence_regs(o);
				fence_p();
				if (lane == 0)
					mbar_arrive(vempty(stage));
				if (++stage == ST) {
					stage = 0;
					phase ^= 1u;
				}
			}
		} else if (nkb > 0) {
			// S of block kb + 1 and P V of block kb issued together; the softmax of
			// kb + 1 runs while P V of kb is on the tensor cores
			mbar_wait(kfull(stage), phase);
			turn_wait();
			wgmma_fence();
			issue_s(stage);
			turn_pass();
			wgmma_wait<0>();
			gemm_detail::fence_regs(s);
			if (lane == 0)
				mbar_arrive(kempty(stage));
			softmax(0);
			convert_p();
			int pst = stage; // the stage whose V goes with pf
			uint32_t pph = phase;
			if (++stage == ST) {
				stage = 0;
				phase ^= 1u;
			}
			for (int kb = 1; kb < nkb; ++kb) {
				mbar_wait(kfull(stage), phase);
				mbar_wait(vfull(pst), pph);
				turn_wait();
				gemm_detail::fence_regs(o);
				wgmma_fence();
				issue_s(stage);
				issue_pv(pst);
				turn_pass();
				wgmma_wait<1>();
				gemm_detail::fence_regs(s);
				if (lane == 0)
					mbar_arrive(kempty(stage));
				softmax(kb);
				wgmma_wait<0>();
				gemm_detail::fence_regs(o);
				fence_p();
				if (lane == 0)
					mbar_arrive(vempty(pst));
				rescale_o();
				convert_p();
				pst = stage;
				pph = phase;
				if (++stage == ST) {
					stage = 0;
					phase ^= 1u;
				}
			}
			mbar_wait(vfull(pst), pph);
			gemm_detail::fence_regs(o);
			wgmma_fence();
			issue_pv(pst);
			wgmma_wait<0>();
			gemm_detail::fence_regs(o);
			fence_p();
			if (lane == 0)
				mbar_arrive(vempty(pst));
		}
		// epilogue: O / l in bf16 straight from registers (the first DS columns)
#pragma unroll
		for (int r = 0; r < 2; ++r) {
			float lr = l[r];
			lr += __shfl_xor_sync(0xffffffffu, lr, 1);
			lr += __shfl_xor_sync(0xffffffffu, lr, 2);
			const int row = row0 + 8 * r;
			if (row >= p.Sq)
				continue;
			const float inv = lr > 0.f ? 1.f / lr : 0.f;
			__nv_bfloat16 *orow = p.o + b * p.o_bs + h * p.o_hs + (long long)row * DS;
#pragma unroll
			for (int j = 0; j < DS / 8; ++j)
				*reinterpret_cast<uint32_t *>(orow + j * 8 + 2 * t) =
				    pack_bf16(o[4 * j + 2 * r] * inv, o[4 * j + 2 * r + 1] * inv);
			if (p.lse && t == 0)
				p.lse[b * p.lse_bs + h * p.lse_hs + row] =
				    lr > 0.f ? m[r] * p.scale + logf(lr) : -INFINITY;
		}
	}
#else
	__trap(); // built without sm_90a: attention_fwd_bf16 does not pick this kernel there
#endif
}

// ---------------------------------------------------------------- merge kernel
// One thread per query row: in place, so a row's lse is read and written by
// the thread that rescales the row.
template <int D>
__global__ void merge_kernel(const attention_args a, const __nv_bfloat16 *op, const float *lp,
                             long long rows)
{
	const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= rows)
		return;
	const int s = (int)(i % a.Sq), h = (int)(i / a.Sq % a.Hq),
	          b = (int)(i / ((long long)a.Sq * a.Hq));
	const long long lo = b * a.lse_bs + h * a.lse_hs + s,
	                oo = b * a.o_bs + h * a.o_hs + (long long)s * D;
	const float l1 = a.lse[lo], l2 = lp[lo];
	const float mx = fmaxf(l1, l2);
	float w1 = 0.f, w2 = 0.f, lse = -INFINITY;
	if (mx != -INFINITY) {
		w1 = expf(l1 - mx);
		w2 = expf(l2 - mx);
		const float sum = w1 + w2;
		lse = mx + logf(sum);
		w1 /= sum;
		w2 /= sum;
	}
	__nv_bfloat16 *o1 = a.o + oo;
	const __nv_bfloat16 *o2 = op + oo;
	if (((a.o_bs | a.o_hs) & 7) == 0 && (((uintptr_t)a.o | (uintptr_t)op) & 15) == 0) {
#pragma unroll 4
		for (int c = 0; c < D; c += 8) {
			uint4 x = *reinterpret_cast<const uint4 *>(o1 + c),
			      y = *reinterpret_cast<const uint4 *>(o2 + c), z;
			const __nv_bfloat162 *xp = reinterpret_cast<const __nv_bfloat162 *>(&x),
			                     *yp = reinterpret_cast<const __nv_bfloat162 *>(&y);
			__nv_bfloat162 *zp = reinterpret_cast<__nv_bfloat162 *>(&z);
#pragma unroll
			for (int e = 0; e < 4; ++e) {
				// a side with weight 0 may hold anything (never written): never
				// multiply it
				const float2 fx = __bfloat1622float2(xp[e]),
				             fy = __bfloat1622float2(yp[e]);
				const float rx =
				    (w1 > 0.f ? w1 * fx.x : 0.f) + (w2 > 0.f ? w2 * fy.x : 0.f);
				const float ry =
				    (w1 > 0.f ? w1 * fx.y : 0.f) + (w2 > 0.f ? w2 * fy.y : 0.f);
				zp[e] = __floats2bfloat162_rn(rx, ry);
			}
			*reinterpret_cast<uint4 *>(o1 + c) = z;
		}
	} else {
		for (int c = 0; c < D; ++c) {
			const float x = __bfloat162float(o1[c]), y = __bfloat162float(o2[c]);
			o1[c] =
			    __float2bfloat16((w1 > 0.f ? w1 * x : 0.f) + (w2 > 0.f ? w2 * y : 0.f));
		}
	}
	a.lse[lo] = lse;
}

// ---------------------------------------------------------------- host side
inline bool args_ok(const attention_args &a)
{
	return a.q && a.k && a.v && a.o && a.B >= 1 && a.Hq >= 1 && a.Hkv >= 1 &&
	       a.Hq % a.Hkv == 0 && a.Sq >= 1 && a.Sk >= 1 &&
	       (a.D == 32 || a.D == 64 || a.D == 128);
}

// Whether the hopper kernel takes these arguments on the current device.
inline bool hopper_applies(const attention_args &a)
{
	if (((uintptr_t)a.q | (uintptr_t)a.k | (uintptr_t)a.v | (uintptr_t)a.o) & 15)
		return false;
	if ((a.q_bs | a.q_hs | a.k_bs | a.k_hs | a.v_bs | a.v_hs | a.o_bs | a.o_hs) & 7)
		return false;
	int dev = 0, major = 0, minor = 0;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
	    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev))
		return false;
	return major == 9 && minor == 0;
}

// A hopper kernel made ready on the current device once: refused
// (cudaErrorNotSupported) when this translation unit did not compile it for
// sm_90 (its body only traps), else its shared-memory attribute set. Cached
// per kernel address, not per template instantiation: a process may load
// several shared objects that each carry their own copy of the kernel, while
// a static in this header is shared by all of them (GNU unique symbols), and
// each copy needs the attribute (the scheme of gemm.cuh's kernel_ready).
struct ready_slot {
	std::atomic<const void *> fn{nullptr};
	std::atomic<unsigned long long> devices{0}; // bit d: ready on device d
};
inline cudaError_t kernel_ready(const void *fn, int smem)
{
	static ready_slot slots[64];
	int dev = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e != cudaSuccess)
		return e;
	const unsigned long long bit = dev < 64 ? 1ull << dev : 0;
	ready_slot *slot = nullptr;
	for (int i = 0; i < 64 && !slot; ++i) {
		const void *want = nullptr;
		if (slots[i].fn.load(std::memory_order_acquire) == fn ||
		    slots[i].fn.compare_exchange_strong(want, fn, std::memory_order_acq_rel) ||
		    want == fn)
			slot = &slots[i];
	}
	if (slot && (bit & slot->devices.load(std::memory_order_acquire)))
		return cudaSuccess;
	cudaFuncAttributes fa;
	if ((e = cudaFuncGetAttributes(&fa, fn)) != cudaSuccess)
		return e;
	if (fa.binaryVersion != 90 && fa.ptxVersion < 90)
		return cudaErrorNotSupported;
	if ((e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) ==
	        cudaSuccess &&
	    slot)
		slot->devices.fetch_or(bit, std::memory_order_release);
	return e;
}

// 4-D tensor map over {D, S, H, B} of bf16 rows, boxes of 64 columns x `rows`
// rows, 128-byte swizzle; rows past S and columns past D read as zero.
inline cudaError_t encode_4d(CUtensorMap *map, const void *ptr, int D, int S, int H, int B,
                             long long hs, long long bs, unsigned rows)
{
	gemm_detail::encode_tiled_fn enc = gemm_detail::get_encode_tiled();
	if (!enc)
		return cudaErrorNotSupported;
	// a dimension of one never steps: give it a stride TMA accepts
	if (H == 1)
		hs = (long long)S * D;
	if (B == 1)
		bs = hs * H;
	cuuint64_t dims[4] = {(cuuint64_t)D, (cuuint64_t)S, (cuuint64_t)H, (cuuint64_t)B};
	cuuint64_t strides[3] = {(cuuint64_t)D * 2, (cuuint64_t)hs * 2, (cuuint64_t)bs * 2};
	cuuint32_t box[4] = {64, rows, 1, 1};
	cuuint32_t estr[4] = {1, 1, 1, 1};
	CUresult r =
	    enc(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void *>(ptr), dims, strides,
	        box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
	        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

template <int D, int DS, int ST, int MODE, int NC>
inline cudaError_t launch_hopper(const attention_args &a, cudaStream_t s)
{
	using CF = hopper_cfg<D, ST, NC>;
	CUtensorMap tq, tk, tv;
	cudaError_t e;
	if ((e = encode_4d(&tq, a.q, DS, a.Sq, a.Hq, a.B, a.q_hs, a.q_bs, CF::BM)) != cudaSuccess ||
	    (e = encode_4d(&tk, a.k, DS, a.Sk, a.Hkv, a.B, a.k_hs, a.k_bs, CF::BN)) !=
	        cudaSuccess ||
	    (e = encode_4d(&tv, a.v, DS, a.Sk, a.Hkv, a.B, a.v_hs, a.v_bs, CF::BN)) != cudaSuccess)
		return e;
	hopper_params p;
	p.o = a.o;
	p.lse = a.lse;
	p.o_bs = a.o_bs;
	p.o_hs = a.o_hs;
	p.lse_bs = a.lse_bs;
	p.lse_hs = a.lse_hs;
	p.Hq = a.Hq;
	p.Hkv = a.Hkv;
	p.Sq = a.Sq;
	p.Sk = a.Sk;
	p.scale = a.scale;
	p.sl2 = a.scale * 1.4426950408889634f;
	p.causal = a.causal;
	p.q_pos0 = a.q_pos0;
	p.k_pos0 = a.k_pos0;
	auto kern = fwd_hopper_kernel<D, DS, ST, MODE, NC>;
	if ((e = kernel_ready(reinterpret_cast<const void *>(kern), CF::kSmem)) != cudaSuccess)
		return e;
	dim3 grid((a.Sq + CF::BM - 1) / CF::BM, a.Hq, a.B);
	kern<<<grid, CF::kThreads, CF::kSmem, s>>>(tq, tk, tv, p);
	return cudaGetLastError();
}

template <int D> inline cudaError_t launch_simple(const attention_args &a, cudaStream_t s)
{
	dim3 grid((a.Sq + 63) / 64, a.Hq, a.B);
	fwd_simple_kernel<D><<<grid, 128, 0, s>>>(a);
	return cudaGetLastError();
}

// attention_fwd_bf16 with the kernel chosen by `path` (tests and benchmarks).
inline cudaError_t attention_fwd_bf16_path(const attention_args &a, cudaStream_t s, fwd_path path)
{
	if (!args_ok(a) || a.B > 65535 || a.Hq > 65535)
		return cudaErrorInvalidValue;
	const bool hop = path != kPathSimple && hopper_applies(a);
	if (path >= kPathHopper && !hop)
		return cudaErrorNotSupported;
	if (hop) {
		const int mode =
		    path >= kPathHopperSerial ? path - kPathHopperSerial : kHopperDefaultMode;
		cudaError_t e = cudaErrorInvalidValue;
		switch (a.D * 8 + mode) {
		case 128 * 8 + 0:
			e = launch_hopper<128, 128, 2, 0, 2>(a, s);
			break;
		case 128 * 8 + 1:
			e = launch_hopper<128, 128, 2, 1, 2>(a, s);
			break;
		case 128 * 8 + 2:
			e = launch_hopper<128, 128, 2, 2, 2>(a, s);
			break;
		case 64 * 8 + 0:
			e = launch_hopper<64, 64, 3, 0, 2>(a, s);
			break;
		case 64 * 8 + 1:
			e = launch_hopper<64, 64, 3, 1, 2>(a, s);
			break;
		case 64 * 8 + 2:
			e = launch_hopper<64, 64, 3, 2, 2>(a, s);
			break;
		case 64 * 8 + 3:
			e = launch_hopper<64, 64, 3, 1, 3>(a, s);
			break;
		case 32 * 8 + 0:
			e = launch_hopper<64, 32, 3, 0, 2>(a, s);
			break;
		case 32 * 8 + 1:
			e = launch_hopper<64, 32, 3, 1, 2>(a, s);
			break;
		case 32 * 8 + 2:
			e = launch_hopper<64, 32, 3, 2, 2>(a, s);
			break;
		case 32 * 8 + 3:
			e = launch_hopper<64, 32, 3, 1, 3>(a, s);
			break;
		default:
			return cudaErrorNotSupported;
		}
		if (e == cudaSuccess || path != kPathAuto)
			return e;
		(void)
		    cudaGetLastError(); // auto: the simple kernel where the hopper one was refused
	}
	switch (a.D) {
	case 32:
		return launch_simple<32>(a, s);
	case 64:
		return launch_simple<64>(a, s);
	default:
		return launch_simple<128>(a, s);
	}
}

} // namespace attention_detail

inline cudaError_t attention_fwd_bf16(const attention_args &a, cudaStream_t s)
{
	return attention_detail::attention_fwd_bf16_path(a, s, attention_detail::kPathAuto);
}

inline cudaError_t attention_merge_bf16(const attention_args &a, const __nv_bfloat16 *o_part,
                                        const float *lse_part, cudaStream_t s)
{
	if (!a.o || !a.lse || !o_part || !lse_part || a.B < 1 || a.Hq < 1 || a.Sq < 1 ||
	    (a.D != 32 && a.D != 64 && a.D != 128))
		return cudaErrorInvalidValue;
	const long long rows = (long long)a.B * a.Hq * a.Sq;
	const unsigned blocks = (unsigned)((rows + 127) / 128);
	switch (a.D) {
	case 32:
		attention_detail::merge_kernel<32>
		    <<<blocks, 128, 0, s>>>(a, o_part, lse_part, rows);
		break;
	case 64:
		attention_detail::merge_kernel<64>
		    <<<blocks, 128, 0, s>>>(a, o_part, lse_part, rows);
		break;
	default:
		attention_detail::merge_kernel<128>
		    <<<blocks, 128, 0, s>>>(a, o_part, lse_part, rows);
		break;
	}
	return cudaGetLastError();
}

} // namespace cuco
