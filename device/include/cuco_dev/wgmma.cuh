// cuco_dev/wgmma.cuh -- the Hopper PTX the bf16 GEMM is built from (mbarriers,
// TMA loads and bulk copies, wgmma descriptors, the m64n{256,128,64}k16
// instructions) and the device pieces its kernel uses: gates, the split tail's
// fix-up, the push epilogue's sends. Included by cuco_dev/gemm.cuh (sm_90a).
#pragma once

#include "cuco_dev/gemm_plan.cuh"

namespace cuco
{
namespace gemm_detail
{

// ---------------------------------------------------------------- PTX helpers
__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
	return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
	             : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ unsigned long long globaltimer_ns()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
	uint32_t done;
	do {
		asm volatile("{\n.reg .pred p;\n"
		             "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
		             "selp.u32 %0, 1, 0, p;\n}\n"
		             : "=r"(done)
		             : "r"(bar), "r"(parity)
		             : "memory");
	} while (!done);
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                            int c0, int c1)
{
	asm volatile(
	    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	    " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
	    "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
	    : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const CUtensorMap *map)
{
	asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void wgmma_fence()
{
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit()
{
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait()
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int R> __device__ __forceinline__ void fence_regs(float (&d)[R])
{
#pragma unroll
	for (int i = 0; i < R; ++i)
		asm volatile("" : "+f"(d[i])::"memory");
}
// Bulk copy shared -> global (any global address, a peer's through NVLink too).
__device__ __forceinline__ void bulk_s2g(void *dst, uint32_t src, uint32_t bytes)
{
	asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
	             "r"(src), "r"(bytes)
	             : "memory");
}
__device__ __forceinline__ void bulk_commit()
{
	asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read_all()
{
	asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_all()
{
	asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
__device__ __forceinline__ void fence_proxy_async_smem()
{
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void named_bar_sync(int id, int nthreads)
{
	asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(nthreads) : "memory");
}

// Shared-memory matrix descriptor (sm_90 wgmma), 128-byte swizzle.
//   bits 0-13 start>>4, 16-29 LBO>>4, 32-45 SBO>>4, 62-63 layout (1 = SW128).
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
	uint64_t d = 0;
	d |= (uint64_t)((saddr & 0x3FFFF) >> 4);
	d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
	d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
	d |= (uint64_t)1 << 62;
	return d;
}

// wgmma m64nNk16, A and B from shared memory, A K-major, B N-major (tnspB=1),
// fp32 accumulators; scale_d = 0 overwrites, 1 accumulates.

template <int R> // the first 128 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n256k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db,
                                                       int scale_d)
{
	static_assert(R >= 128, "m64n256: 128 accumulators a thread");
	asm volatile(
	    "{\n.reg .pred p;\n"
	    "setp.ne.b32 p, %130, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
	    "{"
	    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
	    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
	    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
	    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
	    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
	    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
	    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
	    "%111,"
	    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, "
	    "%126, %127"
	    "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
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
	      "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]),
	      "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
	      "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),
	      "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
	      "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
	      "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
	      "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
	      "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]),
	      "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]),
	      "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
	      "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
	      "+f"(d[127])
	    : "l"(da), "l"(db), "r"(scale_d));
}

template <int R> // the first 64 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n128k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db,
                                                       int scale_d)
{
	static_assert(R >= 64, "m64n128: 64 accumulators a thread");
	asm volatile(
	    "{\n.reg .pred p;\n"
	    "setp.ne.b32 p, %66, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
	    "{"
	    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
	    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
	    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
	    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
	    "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
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

template <int R> // the first 32 of d (a half tile's accumulators may sit in a whole tile's)
__device__ __forceinline__ void wgmma_m64n64k16_ss_tb(float (&d)[R], uint64_t da, uint64_t db,
                                                      int scale_d)
{
	static_assert(R >= 32, "m64n64: 32 accumulators a thread");
	asm volatile(
	    "{\n.reg .pred p;\n"
	    "setp.ne.b32 p, %34, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
	    "{"
	    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
	    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
	    "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
	    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
	      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
	      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
	      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
	      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
	      "+f"(d[31])
	    : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ __nv_bfloat16 *grp_c(const gemm_bf16_group &g, int i)
{
	return g.C[i];
}
__device__ __forceinline__ __nv_bfloat16 *grp_c(const gemm_no_group &, int)
{
	return nullptr;
}
// The gate chunk k-block kb of a gated problem's tile waits for: K columns
// [c K / chunks, (c + 1) K / chunks) hold the block when chunks divides kblocks.
__host__ __device__ __forceinline__ int gate_chunk(int kb, int chunks, int kblocks)
{
	return kb * chunks / kblocks;
}
// Gate chunk flag f has reached v (acquire: what was written before it is visible).
__device__ __forceinline__ bool gate_open(const unsigned *f, unsigned v)
{
	unsigned x;
	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(x) : "l"(f) : "memory");
	return (int)(x - v) >= 0;
}
// A gated problem's producer, at chunk c of flags f not yet seen open: waits
// for it, takes every later chunk already open in the same go, and fences the
// async proxy once, before the TMA reads what the flags published.
__device__ __forceinline__ uint64_t gate_wait(const unsigned *f, int c, int chunks, unsigned v,
                                              uint64_t open)
{
	while (!gate_open(f + c, v))
		__nanosleep(64);
	open |= 1ull << c;
	for (int j = c + 1; j < chunks; ++j)
		if (!((open >> j) & 1u) && gate_open(f + j, v))
			open |= 1ull << j;
	asm volatile("fence.proxy.async.global;" ::: "memory");
	return open;
}

// Split tile, after a part's main loop (all 256 consumer threads, uniformly):
// a non-finisher stores its fp32 accumulators as partial-sum slot
// slot + rank - 1 (in fragment order: consumer thread c's float4 j at
// j * 256 + c, so the finisher's same thread reads the same elements) and
// releases the tile's counter once all 256 have stored; returns true (no
// epilogue). The finisher waits (acquire) for ways - 1 arrivals, resets the
// counter for the next launch and adds the partial sums; returns false.
// CTAs wait for each other here: the whole grid must be resident at once.
template <int BN>
__device__ __forceinline__ bool split_fixup(const split_params &sp, const split_unit &u,
                                            float (&d)[BN / 2])
{
	constexpr int kSlot = BM * BN / 4; // float4 per slot
	const int ct = threadIdx.x - 128;
	float4 *ws = reinterpret_cast<float4 *>(sp.ws);
	if (u.rank > 0) {
		float4 *w = ws + (size_t)(u.slot + u.rank - 1) * kSlot + ct;
#pragma unroll
		for (int j = 0; j < BN / 8; ++j)
			__stcg(w + j * 256,
			       make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]));
		named_bar_sync(1, 256);
		if (threadIdx.x == 128)
			asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sp.cnt + u.ti)
			             : "memory");
		return true;
	}
	if (threadIdx.x == 128) {
		const unsigned want = (unsigned)(u.ways - 1);
		for (;;) {
			unsigned x;
			asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
			             : "=r"(x)
			             : "l"(sp.cnt + u.ti)
			             : "memory");
			if (x >= want)
				break;
			__nanosleep(32);
		}
		sp.cnt[u.ti] = 0;
	}
	named_bar_sync(1, 256);
	for (int r = 1; r < u.ways; ++r) {
		const float4 *w = ws + (size_t)(u.slot + r - 1) * kSlot + ct;
#pragma unroll
		for (int j = 0; j < BN / 8; ++j) {
			const float4 v = __ldcg(w + j * 256);
			d[4 * j] += v.x;
			d[4 * j + 1] += v.y;
			d[4 * j + 2] += v.z;
			d[4 * j + 3] += v.w;
		}
	}
	return false;
}

// One k16 step of a 64 x W half tile (W = BN, or BN / 2 for a tile computed
// in halves) into the first W / 2 accumulators of d.
template <int W, int R>
__device__ __forceinline__ void wgmma_tile(float (&d)[R], uint64_t da, uint64_t db, int scale_d)
{
	if constexpr (W == 256)
		wgmma_m64n256k16_ss_tb(d, da, db, scale_d);
	else if constexpr (W == 128)
		wgmma_m64n128k16_ss_tb(d, da, db, scale_d);
	else
		wgmma_m64n64k16_ss_tb(d, da, db, scale_d);
}

// Where the epilogue stores a tile row that is past C's m rows (the last
// tile row of a GEMM whose M % 128 != 0): one 128 x 256 tile of scratch per
// loaded copy of this header, written by every such tile of every CTA and
// never read (static: a copy per translation unit, so that two of them
// linked with -rdc do not define it twice). Row r of the tile, lane quad q's
// first column.
static __device__ uint4 g_sink[BM * 256 / 8];
__device__ __forceinline__ __nv_bfloat16 *sink_row(long long r, int q)
{
	return reinterpret_cast<__nv_bfloat16 *>(g_sink) + r * 256 + 8 * q;
}

// Push epilogue: lanes [0, R) of a warp send its R staged rows (at swarp,
// W wide) to every copy of C: row grow0 + lane, columns [col0, col0 + W).
template <int R, int W, class Epi>
__device__ __forceinline__ void push_send(const Epi &epi, long long ldc, int m, uint32_t swarp,
                                          long long grow0, long long col0, int lane,
                                          bool wait_entered)
{
	fence_proxy_async_smem(); // the staged rows are visible to the bulk copies
	__syncwarp();
	if (lane < R && grow0 + lane < m) {
		if (wait_entered)
			epi.sync.wait_entered();
		const uint32_t src = swarp + (uint32_t)(lane * W) * 2u;
		for (int i = 0; i < epi.n; ++i)
			bulk_s2g(epi.dst[i] + (grow0 + lane) * ldc + col0, src, W * 2);
		bulk_commit();
	}
}

// Push by copying warps: 16-byte piece i of the staged tile (row i / (W / 8),
// in row order; W columns wide, tile row tm, first column col0) from shared
// memory to every destination. The
// consumers stage 16-byte chunk c of tile row r at chunk c ^ 4 (r % 2) of its
// staging row (CUCO_GEMM_STAGE_SWIZZLE): a 16-byte store is served a quarter
// warp at a time, and a quarter warp writes 64 bytes in each of two rows
// BN * 2 bytes apart, a multiple of 128, so unswizzled both halves would fall
// on the same 16 banks (two wavefronts where one does). The copying warps'
// loads read 128 aligned bytes of one row per quarter warp either way.
template <int W, class Epi>
__device__ __forceinline__ void warps_copy_piece(const Epi &epi, uint32_t stg, long long ldc,
                                                 int tm, long long col0, int i)
{
	constexpr int kRow = W / 8; // 16-byte pieces per row
	const int r = i / kRow, c = i - r * kRow;
	const int cs =
	    CUCO_GEMM_STAGE_SWIZZLE ? c ^ ((r & 1) << 2) : c; // where the consumers staged it
	uint32_t v0, v1, v2, v3;
	asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
	             : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3)
	             : "r"(stg + (uint32_t)(r * W + 8 * cs) * 2u)
	             : "memory");
	const long long off = ((long long)tm * BM + r) * ldc + col0 + 8 * c;
	for (int j = 0; j < epi.n; ++j)
		*reinterpret_cast<uint4 *>(epi.dst[j] + off) = make_uint4(v0, v1, v2, v3);
}

} // namespace gemm_detail
} // namespace cuco
