// wrong.cu - writes every output element, but with the wrong values (the
// inputs' first elements): verification must say `wrong`, not `ok`.
#include "common.cuh"

__global__ void wrong_kernel(__nv_bfloat16 *out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = __float2bfloat16(0.5f);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct tp_state *st = (struct tp_state *)p;
	for (int i = 0; i < st->ctx->ntensors; i++)
		if (t[i].role == CUCO_ROLE_OUTPUT)
			wrong_kernel<<<264, 256, 0, s>>>((__nv_bfloat16 *)t[i].ptr, t[i].elems);
	return 0;
}
