/*
 * test_attention.cu - the device library's attention forward
 * (cuco::attention_fwd_bf16, both of its kernels) and merge
 * (cuco::attention_merge_bf16) against a plain fp32 kernel, one thread per
 * query row, at many shapes: causal and not, GQA, query and key blocks at
 * odd global positions, rows and whole blocks with no visible key, head dims
 * 32/64/128, lengths that 64 does not divide, padded and unaligned strides,
 * no lse, several streams at once, and a two-block merge.
 * Prints one row per case and kernel and "N passed, N failed"; exits nonzero
 * on any failure.
 */
#include <cuco_dev/attention.cuh>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

using cuco::attention_args;
namespace ad = cuco::attention_detail;

#define CK(x)                                                                      \
	do {                                                                       \
		cudaError_t e_ = (x);                                              \
		if (e_ != cudaSuccess) {                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, \
			        cudaGetErrorString(e_));                           \
			exit(2);                                                   \
		}                                                                  \
	} while (0)

static __global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed, float amp)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ (seed * 40503u + 0x9e3779b9u);
		h ^= h >> 15;
		h *= 0x2c1b3c6du;
		h ^= h >> 12;
		p[i] = __float2bfloat16(amp * ((float)(h & 0xffff) / 32768.0f - 1.0f));
	}
}

/* fp32 reference: one thread per (b, h, row); ro dense [B, Hq, Sq, D], rl [B, Hq, Sq] */
static __global__ void reference(attention_args a, float *ro, float *rl)
{
	long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
	if (i >= (long long)a.B * a.Hq * a.Sq)
		return;
	int s = (int)(i % a.Sq), h = (int)(i / a.Sq % a.Hq),
	    b = (int)(i / ((long long)a.Sq * a.Hq));
	int hk = h / (a.Hq / a.Hkv);
	const __nv_bfloat16 *q = a.q + b * a.q_bs + h * a.q_hs + (long long)s * a.D;
	const __nv_bfloat16 *k = a.k + b * a.k_bs + hk * a.k_hs,
	                    *v = a.v + b * a.v_bs + hk * a.v_hs;
	float qf[128], acc[128], m = -INFINITY, sum = 0.f;
	for (int d = 0; d < a.D; d++) {
		qf[d] = __bfloat162float(q[d]);
		acc[d] = 0.f;
	}
	for (int j = 0; j < a.Sk; j++) {
		if (a.causal && a.k_pos0 + j > a.q_pos0 + s)
			continue;
		float x = 0.f;
		for (int d = 0; d < a.D; d++)
			x += qf[d] * __bfloat162float(k[(long long)j * a.D + d]);
		m = fmaxf(m, x * a.scale);
	}
	for (int j = 0; j < a.Sk && m != -INFINITY; j++) {
		if (a.causal && a.k_pos0 + j > a.q_pos0 + s)
			continue;
		float x = 0.f;
		for (int d = 0; d < a.D; d++)
			x += qf[d] * __bfloat162float(k[(long long)j * a.D + d]);
		float e = expf(x * a.scale - m);
		sum += e;
		for (int d = 0; d < a.D; d++)
			acc[d] += e * __bfloat162float(v[(long long)j * a.D + d]);
	}
	for (int d = 0; d < a.D; d++)
		ro[i * a.D + d] = sum > 0.f ? acc[d] / sum : 0.f;
	rl[i] = sum > 0.f ? m + logf(sum) : -INFINITY;
}

struct tcase {
	const char *name;
	int B, Hq, Hkv, Sq, Sk, D, causal;
	long long q_pos0, k_pos0;
	int pad;   /* 0: dense; 8: head stride 8 rows longer; 3: head stride 3 elements longer
	              (unaligned) */
	int flags; /* kNoLse, kMerge, kStreams */
};
enum { kNoLse = 1, kMerge = 2, kStreams = 4 };

static const tcase cases[] = {
    {"d64", 1, 2, 2, 128, 128, 64, 0, 0, 0, 0, 0},
    {"d128", 1, 2, 2, 128, 256, 128, 0, 0, 0, 0, 0},
    {"d32", 1, 2, 2, 128, 256, 32, 0, 0, 0, 0, 0},
    {"d64_causal", 2, 3, 3, 256, 256, 64, 1, 0, 0, 0, 0},
    {"d128_causal", 1, 4, 4, 384, 384, 128, 1, 0, 0, 0, 0},
    {"d32_causal", 1, 4, 4, 320, 320, 32, 1, 0, 0, 0, 0},
    {"gqa_d128_causal_tail", 1, 8, 2, 192, 320, 128, 1, 128, 0, 8, 0},
    {"gqa_d64", 2, 8, 4, 320, 192, 64, 0, 0, 0, 0, 0},
    {"odd_pos_causal", 1, 2, 1, 128, 192, 128, 1, 37, 101, 0, 0},
    {"odd_pos_causal_d64", 1, 2, 2, 192, 448, 64, 1, 301, 77, 0, 0},
    {"odd_pos_causal_d32", 1, 2, 2, 192, 448, 32, 1, 301, 77, 0, 0},
    {"all_masked", 1, 2, 2, 128, 256, 128, 1, 0, 1000, 0, 0},
    {"all_masked_d64", 1, 2, 2, 64, 64, 64, 1, 5, 70, 0, 0},
    {"past_block_causal", 1, 2, 2, 128, 256, 64, 1, 1000, 0, 0, 0},
    {"min_64x64", 2, 1, 1, 64, 64, 128, 0, 0, 0, 0, 0},
    {"ragged_100x77", 1, 2, 2, 100, 77, 128, 0, 0, 0, 0, 0},
    {"ragged_causal_d64", 1, 2, 2, 200, 333, 64, 1, 133, 0, 0, 0},
    {"ragged_d32", 1, 2, 1, 70, 130, 32, 1, 60, 0, 0, 0},
    {"unaligned_stride", 1, 2, 2, 128, 128, 128, 1, 0, 0, 3, 0},
    {"no_lse", 1, 2, 2, 128, 128, 64, 0, 0, 0, 0, kNoLse},
    {"long_d128", 1, 4, 2, 1024, 1024, 128, 0, 0, 0, 0, 0},
    {"long_d128_causal", 1, 4, 2, 1024, 1024, 128, 1, 0, 0, 0, 0},
    {"long_d64_causal", 1, 4, 4, 1024, 2048, 64, 1, 1024, 0, 0, 0},
    {"streams_d128", 1, 4, 4, 512, 512, 128, 1, 0, 0, 0, kStreams},
    {"merge_d128", 1, 4, 2, 256, 512, 128, 0, 0, 0, 0, kMerge},
    {"merge_causal_d64", 1, 2, 2, 256, 512, 64, 1, 256, 0, 0, kMerge},
    {"merge_causal_d32", 1, 2, 2, 256, 512, 32, 1, 100, 0, 0, kMerge},
    {"merge_one_empty_d128", 1, 2, 2, 128, 512, 128, 1, 0, 64, 8, kMerge},
};

struct bufs {
	__nv_bfloat16 *q, *k, *v, *o;
	float *lse;
	size_t nq, nk, no, nl;
};

/* a's strides for case c: [B, H, S, D] with optional head-stride padding */
static attention_args layout(const tcase &c)
{
	attention_args a;
	memset(&a, 0, sizeof(a));
	long long extra = c.pad == 8 ? 8LL * c.D : c.pad;
	a.q_hs = (long long)c.Sq * c.D + extra;
	a.k_hs = a.v_hs = (long long)c.Sk * c.D + extra;
	a.o_hs = (long long)c.Sq * c.D + extra;
	a.q_bs = a.q_hs * c.Hq + (c.pad ? 64 : 0);
	a.k_bs = a.v_bs = a.k_hs * c.Hkv + (c.pad ? 64 : 0);
	a.o_bs = a.o_hs * c.Hq + (c.pad ? 64 : 0);
	a.lse_hs = c.Sq + (c.pad ? 5 : 0);
	a.lse_bs = a.lse_hs * c.Hq;
	a.B = c.B;
	a.Hq = c.Hq;
	a.Hkv = c.Hkv;
	a.Sq = c.Sq;
	a.Sk = c.Sk;
	a.D = c.D;
	a.scale = 1.0f / sqrtf((float)c.D);
	a.causal = c.causal;
	a.q_pos0 = c.q_pos0;
	a.k_pos0 = c.k_pos0;
	return a;
}

struct errs {
	double rel_l2, max_abs, lse_abs;
	long long bad; /* non-finite O, unwritten, or lse -inf mismatch */
};

/* compare device o/lse (a's layout) with the dense reference */
static errs compare(const attention_args &a, const __nv_bfloat16 *o_d, const float *lse_d,
                    const std::vector<float> &ro, const std::vector<float> &rl, size_t no,
                    size_t nl)
{
	std::vector<__nv_bfloat16> o(no);
	std::vector<float> lse(nl);
	CK(cudaMemcpy(o.data(), o_d, no * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
	if (lse_d)
		CK(cudaMemcpy(lse.data(), lse_d, nl * sizeof(float), cudaMemcpyDeviceToHost));
	errs e = {0, 0, 0, 0};
	double num = 0, den = 0;
	for (int b = 0; b < a.B; b++)
		for (int h = 0; h < a.Hq; h++)
			for (int s = 0; s < a.Sq; s++) {
				long long ri = ((long long)b * a.Hq + h) * a.Sq + s;
				for (int d = 0; d < a.D; d++) {
					float x = __bfloat162float(
					    o[b * a.o_bs + h * a.o_hs + (long long)s * a.D + d]);
					float r = ro[ri * a.D + d];
					if (!isfinite(x)) {
						e.bad++;
						continue;
					}
					num += (double)(x - r) * (x - r);
					den += (double)r * r;
					if (fabs(x - r) > e.max_abs)
						e.max_abs = fabs(x - r);
				}
				if (!lse_d)
					continue;
				float l = lse[b * a.lse_bs + h * a.lse_hs + s], r = rl[ri];
				if (isinf(r) || isinf(l) || isnan(l)) {
					if (!(isinf(r) && r < 0 && isinf(l) && l < 0))
						e.bad++;
				} else if (fabs(l - r) > e.lse_abs) {
					e.lse_abs = fabs(l - r);
				}
			}
	e.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
	return e;
}

static void alloc(const attention_args &a, bufs *x, int with_lse)
{
	x->nq = (size_t)(a.q_bs * a.B);
	x->nk = (size_t)(a.k_bs * a.B);
	x->no = (size_t)(a.o_bs * a.B);
	x->nl = (size_t)(a.lse_bs * a.B);
	CK(cudaMalloc(&x->o, x->no * sizeof(__nv_bfloat16)));
	x->lse = NULL;
	if (with_lse)
		CK(cudaMalloc(&x->lse, x->nl * sizeof(float)));
}

static void poison(const bufs &x)
{
	CK(cudaMemset(x.o, 0xff, x.no * sizeof(__nv_bfloat16)));
	if (x.lse)
		CK(cudaMemset(x.lse, 0xff, x.nl * sizeof(float)));
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	int only_simple = 0,
	    quick = 0; /* --simple: the simple kernel alone; --quick: small cases (sanitizers) */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--simple")) {
			only_simple = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else {
			fprintf(stderr, "usage: test_attention [--simple] [--quick]\n");
			return 2;
		}
	}
	printf("# %-22s %2s %3s %3s %5s %5s %3s %1s %6s %6s %-6s %9s %9s %9s %4s %s\n", "case", "B",
	       "Hq", "Hkv", "Sq", "Sk", "D", "c", "qpos0", "kpos0", "kernel", "rel_l2", "max_abs",
	       "lse_abs", "bad", "verdict");
	for (const tcase &c : cases) {
		if (quick && (long long)c.Sq * c.Sk > 256 * 512)
			continue;
		attention_args a = layout(c);
		bufs in;
		in.nq = (size_t)(a.q_bs * a.B);
		in.nk = (size_t)(a.k_bs * a.B);
		CK(cudaMalloc(&in.q, in.nq * sizeof(__nv_bfloat16)));
		CK(cudaMalloc(&in.k, in.nk * sizeof(__nv_bfloat16)));
		CK(cudaMalloc(&in.v, in.nk * sizeof(__nv_bfloat16)));
		fill<<<256, 256>>>(in.q, in.nq, 1, 2.0f);
		fill<<<256, 256>>>(in.k, in.nk, 2, 1.0f);
		fill<<<256, 256>>>(in.v, in.nk, 3, 1.0f);
		a.q = in.q;
		a.k = in.k;
		a.v = in.v;
		/* reference (dense) */
		long long rows = (long long)a.B * a.Hq * a.Sq;
		float *ro_d, *rl_d;
		CK(cudaMalloc(&ro_d, rows * a.D * sizeof(float)));
		CK(cudaMalloc(&rl_d, rows * sizeof(float)));
		reference<<<(unsigned)((rows + 63) / 64), 64>>>(a, ro_d, rl_d);
		CK(cudaGetLastError());
		std::vector<float> ro(rows * a.D), rl(rows);
		CK(cudaMemcpy(ro.data(), ro_d, ro.size() * sizeof(float), cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(rl.data(), rl_d, rl.size() * sizeof(float), cudaMemcpyDeviceToHost));
		CK(cudaFree(ro_d));
		CK(cudaFree(rl_d));

		/* the simple kernel, then each mode of the hopper kernel */
		static const ad::fwd_path paths[] = {ad::kPathSimple, ad::kPathHopperSerial,
		                                     ad::kPathHopperOverlap,
		                                     ad::kPathHopperPingpong, ad::kPathHopper3};
		static const char *const names[] = {"simple", "h-ser", "h-ovl", "h-pp", "h-3wg"};
		for (int kern = 0; kern < 5; kern++) {
			ad::fwd_path path = paths[kern];
			if (kern > 0 && (only_simple || !ad::hopper_applies(a)))
				continue;
			if (path == ad::kPathHopper3 && a.D > 64)
				continue;
			const char *kname = names[kern];
			int nrun = (c.flags & kStreams) ? 3 : 1;
			bufs out[3];
			cudaStream_t st[3];
			for (int r = 0; r < nrun; r++) {
				alloc(a, &out[r], !(c.flags & kNoLse));
				poison(out[r]);
				CK(cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking));
			}
			CK(cudaDeviceSynchronize());
			cudaError_t err = cudaSuccess;
			for (int r = 0; r < nrun && err == cudaSuccess; r++) {
				attention_args x = a;
				x.o = out[r].o;
				x.lse = out[r].lse;
				if (!(c.flags & kMerge)) {
					err = ad::attention_fwd_bf16_path(x, st[r], path);
					continue;
				}
				/* two key blocks, then merged: keys [0, half) and [half, Sk) */
				int half = (c.Sk / 2 + 63) / 64 * 64;
				bufs part;
				alloc(a, &part, 1);
				poison(part);
				attention_args y = x;
				y.Sk = half;
				err = ad::attention_fwd_bf16_path(y, st[r], path);
				y.k = a.k + (long long)half * a.D;
				y.v = a.v + (long long)half * a.D;
				y.Sk = c.Sk - half;
				y.k_pos0 = a.k_pos0 + half;
				y.o = part.o;
				y.lse = part.lse;
				if (err == cudaSuccess)
					err = ad::attention_fwd_bf16_path(y, st[r], path);
				if (err == cudaSuccess)
					err =
					    cuco::attention_merge_bf16(x, part.o, part.lse, st[r]);
				CK(cudaStreamSynchronize(st[r]));
				CK(cudaFree(part.o));
				CK(cudaFree(part.lse));
			}
			cudaError_t serr = cudaDeviceSynchronize();
			for (int r = 0; r < nrun; r++) {
				errs e = {0, 0, 0, 1};
				if (err == cudaSuccess && serr == cudaSuccess)
					e = compare(a, out[r].o, out[r].lse, ro, rl, out[r].no,
					            out[r].nl);
				/* bf16 output: ~2^-9 relative per element */
				int ok = err == cudaSuccess && serr == cudaSuccess && e.bad == 0 &&
				         e.rel_l2 < 1e-2 && e.max_abs < 3e-2 && e.lse_abs < 1e-3;
				printf("  %-22s %2d %3d %3d %5d %5d %3d %1d %6lld %6lld %-6s %9.2e "
				       "%9.2e %9.2e %4lld %s%s%s\n",
				       c.name, c.B, c.Hq, c.Hkv, c.Sq, c.Sk, c.D, c.causal,
				       c.q_pos0, c.k_pos0, kname, e.rel_l2, e.max_abs, e.lse_abs,
				       e.bad, ok ? "ok" : "FAIL",
				       err != cudaSuccess    ? " launch: "
				       : serr != cudaSuccess ? " run: "
				                             : "",
				       err != cudaSuccess    ? cudaGetErrorString(err)
				       : serr != cudaSuccess ? cudaGetErrorString(serr)
				                             : "");
				if (ok)
					passed++;
				else
					failed++;
				if (serr != cudaSuccess) {
					printf("%d passed, %d failed (device error: stopping)\n",
					       passed, failed);
					return 1;
				}
				CK(cudaFree(out[r].o));
				if (out[r].lse)
					CK(cudaFree(out[r].lse));
				CK(cudaStreamDestroy(st[r]));
			}
		}
		CK(cudaFree(in.q));
		CK(cudaFree(in.k));
		CK(cudaFree(in.v));
	}
	/* argument checks */
	{
		attention_args a = layout(cases[0]);
		a.q = a.k = a.v = (const __nv_bfloat16 *)16;
		a.o = (__nv_bfloat16 *)16;
		a.D = 96;
		int ok = cuco::attention_fwd_bf16(a, 0) == cudaErrorInvalidValue;
		a.D = 64;
		a.Hkv = 3;
		a.Hq = 4;
		ok = ok && cuco::attention_fwd_bf16(a, 0) == cudaErrorInvalidValue;
		a.Hkv = 2;
		a.Sq = 0;
		ok = ok && cuco::attention_fwd_bf16(a, 0) == cudaErrorInvalidValue;
		a.Sq = 64;
		ok = ok && cuco::attention_merge_bf16(a, a.o, NULL, 0) == cudaErrorInvalidValue;
		printf("  %-22s %s\n", "invalid_arguments", ok ? "ok" : "FAIL");
		ok ? passed++ : failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
