/*
 * attention_vs.cu - a shared object that exposes cuco::attention_fwd_bf16
 * (and the choice of its kernel) through a plain C entry point, so that
 * bench/attention_vs.py can time it against PyTorch's attention on the same
 * tensors. Build: nvcc -arch=sm_90a -O3 -std=c++17 -shared -Xcompiler -fPIC
 *   -Iinclude -Idevice/include -o libcuco_attention_vs.so bench/attention_vs.cu
 */
#include <cuco_dev/attention.cuh>

/* strides: q_bs, q_hs, k_bs, k_hs, v_bs, v_hs, o_bs, o_hs, lse_bs, lse_hs (elements);
 * dims: B, Hq, Hkv, Sq, Sk, D; path 0 auto, 1 simple, 2 hopper.
 * Returns the cudaError_t of the launch (0: queued on stream). */
extern "C" int cuco_attention_vs_fwd(const void *q, const void *k, const void *v, void *o,
                                     float *lse, const long long *strides, const int *dims,
                                     float scale, int causal, long long q_pos0, long long k_pos0,
                                     int path, void *stream)
{
	cuco::attention_args a;
	a.q = (const __nv_bfloat16 *)q;
	a.k = (const __nv_bfloat16 *)k;
	a.v = (const __nv_bfloat16 *)v;
	a.o = (__nv_bfloat16 *)o;
	a.lse = lse;
	a.q_bs = strides[0];
	a.q_hs = strides[1];
	a.k_bs = strides[2];
	a.k_hs = strides[3];
	a.v_bs = strides[4];
	a.v_hs = strides[5];
	a.o_bs = strides[6];
	a.o_hs = strides[7];
	a.lse_bs = strides[8];
	a.lse_hs = strides[9];
	a.B = dims[0];
	a.Hq = dims[1];
	a.Hkv = dims[2];
	a.Sq = dims[3];
	a.Sk = dims[4];
	a.D = dims[5];
	a.scale = scale;
	a.causal = causal;
	a.q_pos0 = q_pos0;
	a.k_pos0 = k_pos0;
	return (int)cuco::attention_detail::attention_fwd_bf16_path(
	    a, (cudaStream_t)stream, (cuco::attention_detail::fwd_path)path);
}
