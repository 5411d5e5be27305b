// attention_cp_ring.cu - the compute side of attention_cp's ring for R ranks on
// ONE GPU, without communication, and the reference against a plain host
// computation.
//
// With --ranks 1 the harness runs no ring step (no block of another rank is
// ever attended). This probe takes the attention code of one program (host.cu,
// or with -DCP_TEMPLATE=\"file.cu\" a realised stream_overlap template with its
// key chunks), gives rank `me` of R the K, V blocks of every rank straight from
// the workload's generator, runs the program's own per-step attention and
// merges in ring order (step i: the block of rank me - i), and compares O and
// LSE with the workload's reference for that rank (relative L2 of each, as the
// harness does for both together). It also checks the reference itself on a
// few query rows against a double-precision host loop over the whole sequence.
//
//   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Iinclude -Idevice/include
//        [-DCP_TEMPLATE='"/path/realised.cu"'] bench/probes/attention_cp_ring.cu -lcuda -o ring
//   ./ring [R]  (R: only that rank count, 2 or 4; prints one line per case and "ring: N cases, N
//   bad"; exit 1 on any bad)
#include <cuda_bf16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cuco/program.h>
#include <cuco_dev/random.cuh>
#include <cuco_dev/workload.cuh>
#include <cuco_dev/zigzag.cuh>

namespace wl
{
#include "../../workloads/attention_cp/workload.cu"
}

#ifdef CP_TEMPLATE
#include CP_TEMPLATE
typedef struct cp_state prog_state;
#else
#include "../../workloads/attention_cp/host.cu"
typedef struct state prog_state;
#endif

#define CK(x)                                                                      \
	do {                                                                       \
		cudaError_t e_ = (x);                                              \
		if (e_ != cudaSuccess) {                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, \
			        cudaGetErrorString(e_));                           \
			exit(2);                                                   \
		}                                                                  \
	} while (0)

static float bf(__nv_bfloat16 v)
{
	return __bfloat162float(v);
}

template <class T> static std::vector<T> host(const void *p, size_t n)
{
	std::vector<T> v(n);
	CK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
	return v;
}

// Relative L2 of a against b, and the non-finite count of a.
template <class T> static double rel(const std::vector<T> &a, const std::vector<T> &b, long *bad)
{
	double d2 = 0, r2 = 0;
	*bad = 0;
	for (size_t i = 0; i < a.size(); i++) {
		double x = (double)(float)a[i], y = (double)(float)b[i];
		if (!isfinite(x)) {
			(*bad)++;
			continue;
		}
		d2 += (x - y) * (x - y);
		r2 += y * y;
	}
	return sqrt(d2 / r2);
}

struct shape_case {
	const char *name;
	int B, H, Hkv, S, D, mask, parts;
};

int main(int argc, char **argv)
{
	static const shape_case cases[] = {
	    {"2048_d32", 1, 32, 32, 2048, 32, 1, 1},
	    {"4096_d32_causal", 1, 32, 32, 4096, 32, 2, 2},
	    {"gqa_d128_causal", 1, 8, 2, 4096, 128, 2, 2},
	    {"gqa_d128_plain_causal", 1, 8, 2, 4096, 128, 2, 1},
	    {"gqa_d64", 2, 8, 4, 2048, 64, 1, 2},
	};
	int ncase = 0, nbad = 0;

	for (const shape_case &c : cases)
		for (int R = 2; R <= 4; R *= 2)
			for (int me = 0; me < R; me += R - 1) {
				if (argc > 1 && atoi(argv[1]) != R)
					continue; // ./ring 4: only 4 ranks
				struct cuco_shape sh;
				memset(&sh, 0, sizeof(sh));
				snprintf(sh.name, sizeof(sh.name), "%s", c.name);
				const char *pn[] = {"B", "H", "Hkv", "S", "D", "mask", "parts"};
				long long pv[] = {c.B, c.H, c.Hkv, c.S, c.D, c.mask, c.parts};
				sh.nparams = 7;
				for (int i = 0; i < 7; i++) {
					snprintf(sh.param_names[i], CUCO_NAME_MAX, "%s", pn[i]);
					sh.params[i] = pv[i];
				}
				struct cuco_tensor t[CUCO_MAX_TENSORS], ref[CUCO_MAX_TENSORS];
				int nt = 0;
				char err[256];
				memset(t, 0, sizeof(t));
				if (wl::cuco_workload_describe(&sh, me, R, t, &nt, err,
				                               sizeof(err))) {
					printf("%s R %d: describe: %s\n", c.name, R, err);
					return 2;
				}
				for (int i = 0; i < nt; i++)
					CK(cudaMalloc(&t[i].ptr, t[i].bytes));
				memcpy(ref, t, sizeof(t));
				CK(cudaMalloc(&ref[3].ptr, t[3].bytes));
				CK(cudaMalloc(&ref[4].ptr, t[4].bytes));
				const uint64_t seed = 1;
				// every rank's K and V, as each rank's generator makes them
				std::vector<void *> kq(R), vq(R);
				for (int q = 0; q < R; q++) {
					struct cuco_tensor g[CUCO_MAX_TENSORS];
					memcpy(g, t, sizeof(t));
					CK(cudaMalloc(&g[0].ptr, t[0].bytes));
					CK(cudaMalloc(&g[1].ptr, t[1].bytes));
					CK(cudaMalloc(&g[2].ptr, t[2].bytes));
					wl::cuco_workload_generate(&sh, q, R, seed, g, nt, 0);
					if (q == me)
						CK(cudaMemcpy(t[0].ptr, g[0].ptr, t[0].bytes,
						              cudaMemcpyDeviceToDevice));
					kq[q] = g[1].ptr;
					vq[q] = g[2].ptr;
					CK(cudaFree(g[0].ptr));
				}
				CK(cudaMemcpy(t[1].ptr, kq[me], t[1].bytes,
				              cudaMemcpyDeviceToDevice));
				CK(cudaMemcpy(t[2].ptr, vq[me], t[2].bytes,
				              cudaMemcpyDeviceToDevice));
				cudaEvent_t e0, e1;
				CK(cudaEventCreate(&e0));
				CK(cudaEventCreate(&e1));
				CK(cudaEventRecord(e0, 0));
				if (wl::cuco_workload_reference(&sh, me, R, seed, ref, nt, 0)) {
					printf("%s: reference failed\n", c.name);
					return 2;
				}
				CK(cudaEventRecord(e1, 0));
				CK(cudaDeviceSynchronize());
				float ref_ms = 0;
				CK(cudaEventElapsedTime(&ref_ms, e0, e1));

				// the program's state, as its init would make it (no communicator
				// here)
				struct cuco_ctx ctx;
				memset(&ctx, 0, sizeof(ctx));
				ctx.rank = me;
				ctx.nranks = R;
				ctx.shape = &sh;
				prog_state st;
				memset(&st, 0, sizeof(st));
				st.ctx = &ctx;
				st.B = c.B;
				st.H = c.H;
				st.Hkv = c.Hkv;
				st.S = c.S;
				st.D = c.D;
				st.causal = c.mask == 2;
				st.parts = c.parts;
				st.R = R;
				st.me = me;
				st.Sl = c.S / R;
				st.kv_elems = t[1].elems;
				CK(cudaMalloc(&st.o_part, t[3].bytes));
				CK(cudaMalloc(&st.lse_part, t[4].bytes));
				CK(cudaMemset(t[3].ptr, 0xff, t[3].bytes)); // the harness's poison
				CK(cudaMemset(t[4].ptr, 0xff, t[4].bytes));
				int written[2] = {0, 0}, fail = 0, pieces = 1;
				for (int step = 0; step < R && !fail; step++) {
					int src = (me + R - step) % R;
					const __nv_bfloat16 *Kb = (const __nv_bfloat16 *)kq[src],
					                    *Vb = (const __nv_bfloat16 *)vq[src];
#ifdef CP_TEMPLATE
					// step 0 whole, later steps in the template's key chunks
					long long L = st.Sl / st.parts, tiles = L / 64;
					int per = CUCO_CHUNKS / st.parts;
					if (per < 1)
						per = 1;
					while (per > 1 && tiles % per)
						per--;
					pieces = step == 0 || CUCO_CHUNKS <= 1 ? 1 : st.parts * per;
					for (int j = 0; j < pieces && !fail; j++) {
						long long r0 =
						    pieces == 1
						        ? 0
						        : (j / per) * L + (j % per) * (L / per);
						long long rows = pieces == 1 ? st.Sl : L / per;
						fail = cp_attend(&st, t, Kb, Vb, src, r0, rows,
						                 written, 0);
					}
#else
					fail = attend(&st, t, Kb, Vb, src, written, 0);
#endif
				}
				CK(cudaDeviceSynchronize());
				if (fail) {
					printf("%s R %d me %d: %s\n", c.name, R, me, ctx.errbuf);
					nbad++;
					ncase++;
					continue;
				}
				long nf_o, nf_l;
				auto o = host<__nv_bfloat16>(t[3].ptr, t[3].elems),
				     ro = host<__nv_bfloat16>(ref[3].ptr, t[3].elems);
				auto l = host<float>(t[4].ptr, t[4].elems),
				     rl = host<float>(ref[4].ptr, t[4].elems);
				double eo = rel(o, ro, &nf_o), el = rel(l, rl, &nf_l);
				// harness's verdict: one relative L2 over both outputs
				double d2 = 0, r2 = 0;
				for (size_t i = 0; i < o.size(); i++) {
					double x = bf(o[i]), y = bf(ro[i]);
					d2 += (x - y) * (x - y);
					r2 += y * y;
				}
				double ro2 = r2;
				for (size_t i = 0; i < l.size(); i++) {
					d2 += ((double)l[i] - rl[i]) * ((double)l[i] - rl[i]);
					r2 += (double)rl[i] * rl[i];
				}
				double eall = sqrt(d2 / r2);

				// the reference itself: a few rows in double precision over the
				// whole sequence
				auto qh = host<__nv_bfloat16>(t[0].ptr, t[0].elems);
				std::vector<std::vector<__nv_bfloat16>> kh(R), vh(R);
				for (int q = 0; q < R; q++) {
					kh[q] = host<__nv_bfloat16>(kq[q], t[1].elems);
					vh[q] = host<__nv_bfloat16>(vq[q], t[1].elems);
				}
				double ref_err = 0;
				const long long Sl = st.Sl, D = c.D;
				for (int k = 0; k < 6; k++) {
					int b = k % c.B, h = (k * 7) % c.H, hk = h / (c.H / c.Hkv);
					long long i = (k * 977 + 5) % Sl,
					          qp = cuco_cp_pos(c.S, R, c.parts, me, i);
					const __nv_bfloat16 *qr =
					    &qh[(((long long)b * c.H + h) * Sl + i) * D];
					std::vector<double> acc(D, 0.0);
					double mx = -INFINITY, sum = 0;
					std::vector<double> sc;
					std::vector<const __nv_bfloat16 *> vr;
					for (int q = 0; q < R; q++)
						for (long long j = 0; j < Sl; j++) {
							if (c.mask == 2 &&
							    cuco_cp_pos(c.S, R, c.parts, q, j) > qp)
								continue;
							long long off =
							    (((long long)b * c.Hkv + hk) * Sl + j) *
							    D;
							double s = 0;
							for (int d = 0; d < D; d++)
								s += (double)bf(qr[d]) *
								     bf(kh[q][off + d]);
							s /= sqrt((double)D);
							sc.push_back(s);
							vr.push_back(&vh[q][off]);
							mx = fmax(mx, s);
						}
					for (size_t j = 0; j < sc.size(); j++) {
						double p = exp(sc[j] - mx);
						sum += p;
						for (int d = 0; d < D; d++)
							acc[d] += p * bf(vr[j][d]);
					}
					long long row = ((long long)b * c.H + h) * Sl + i;
					double lse = mx + log(sum),
					       e = fabs(lse - rl[row]) / fabs(lse);
					for (int d = 0; d < D; d++)
						e = fmax(e,
						         fabs(acc[d] / sum - bf(ro[row * D + d])) /
						             (fabs(acc[d] / sum) + 0.05));
					ref_err = fmax(ref_err, e);
				}
				int ok = nf_o == 0 && nf_l == 0 && eall <= 1e-2 && eo <= 2e-2 &&
				         ref_err <= 2e-2;
				printf("%-22s R %d me %d pieces %2d  rel_err O %.2e LSE %.2e both "
				       "%.2e (|O|^2 share %.2f)  "
				       "nonfinite %ld  reference vs host rows %.2e  reference %.1f "
				       "ms  %s\n",
				       c.name, R, me, pieces, eo, el, eall, ro2 / r2, nf_o + nf_l,
				       ref_err, ref_ms, ok ? "ok" : "BAD");
				nbad += !ok;
				ncase++;
				for (int q = 0; q < R; q++) {
					CK(cudaFree(kq[q]));
					CK(cudaFree(vq[q]));
				}
				for (int i = 0; i < nt; i++)
					CK(cudaFree(t[i].ptr));
				CK(cudaFree(ref[3].ptr));
				CK(cudaFree(ref[4].ptr));
				CK(cudaFree(st.o_part));
				CK(cudaFree(st.lse_part));
			}
	printf("ring: %d cases, %d bad\n", ncase, nbad);
	return nbad ? 1 : 0;
}
