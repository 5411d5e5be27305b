// program.cu - the programs of tests/gpu/reference.sh, one source built once
// per REFTEST_MODE_<mode> (CMakeLists.txt): good (also the reference
// program), ulp (one element of e one ulp off), nonfinite (+Inf in e where
// the reference is finite), class (NaN in e where the reference is +Inf),
// stale (acc not updated), i8 (one element of q off by one), f64 (y 10 %
// off), tol (c 0.5 % off: within the run's tolerance, not c's own) and fail
// (run returns an error).
#include <stdio.h>

#include <cuco/program.h>

enum { T_X, T_ACC, T_Y, T_Q, T_E, T_C };

struct reftest_state {
	struct cuco_ctx *ctx;
};

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	(void)req;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **state)
{
	static struct reftest_state st;

	st.ctx = ctx;
	*state = &st;
	return 0;
}

__global__ void reftest_run(const float *x, float *acc, double *y, signed char *q, float *e,
                            float *c, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float xv = x[i], a = acc[i];
		float ev = __fadd_rn(__fmul_rn(xv, 3.0f), a);

		y[i] = (double)xv * 0.5 + (double)a;
		q[i] = (signed char)(int)(xv * 100.0f);
		c[i] = __fadd_rn(xv, 1.0f);
		if (i == 0)
			ev = __int_as_float(0x7fc00000); /* NaN */
		if (i == 1)
			ev = __int_as_float(0x7f800000); /* +Inf */
		if (i == 2)
			ev = __int_as_float(0xff800000); /* -Inf */
#if defined(REFTEST_MODE_ulp)
		if (i == 5)
			ev = nextafterf(ev, 1e30f);
#elif defined(REFTEST_MODE_nonfinite)
		if (i == 3)
			ev = __int_as_float(0x7f800000);
#elif defined(REFTEST_MODE_class)
		if (i == 1)
			ev = __int_as_float(0x7fc00000);
#elif defined(REFTEST_MODE_i8)
		if (i == 7)
			q[i] = (signed char)(q[i] + 1);
#elif defined(REFTEST_MODE_f64)
		y[i] *= 1.1;
#elif defined(REFTEST_MODE_tol)
		c[i] *= 1.005f;
#endif
		e[i] = ev;
#if !defined(REFTEST_MODE_stale)
		acc[i] = __fadd_rn(a, xv);
#endif
	}
}

extern "C" int cuco_program_run(void *state, const struct cuco_tensor *t, cudaStream_t stream)
{
#if defined(REFTEST_MODE_fail)
	struct cuco_ctx *ctx = ((struct reftest_state *)state)->ctx;

	(void)t;
	(void)stream;
	snprintf(ctx->errbuf, sizeof(ctx->errbuf), "reftest: this program always fails");
	return 1;
#else
	(void)state;
	reftest_run<<<64, 256, 0, stream>>>((const float *)t[T_X].ptr, (float *)t[T_ACC].ptr,
	                                    (double *)t[T_Y].ptr, (signed char *)t[T_Q].ptr,
	                                    (float *)t[T_E].ptr, (float *)t[T_C].ptr, t[T_X].elems);
	return cudaPeekAtLastError() != cudaSuccess;
#endif
}

extern "C" void cuco_program_fini(void *state)
{
	(void)state;
}
