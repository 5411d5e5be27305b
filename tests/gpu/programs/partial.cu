// partial.cu - the baseline's result, except that the last output element is
// never written: poisoning must catch it (`wrong`, 1 non-finite element).
#include "../../../workloads/gemm_allgather/common.cuh"

GA_PROGRAM(0, int rc = ga_gemm_cuco(st, t, s) || ga_allgather_nccl(st, t, s);
	   cudaMemsetAsync((char *)t[2].ptr + t[2].bytes - 2, 0xff, 2, s); return rc)
