// every5.cu - timed runs that differ from the checked ones: computes C = A B on its first
// run and on every fifth after it, and enqueues nothing on the others, so four of five timed
// runs cost nothing. Its first verification (its first run) passes. tests/gpu/guards.sh pins
// the runs (--warmup 5 --iters 21 --bench-seconds 0): the first verification is run 0, the
// warm-up runs 1-5, the timed runs 6-26, so the last timed run, which the harness checks, is
// one it skips and C holds the poison: status wrong, failed_check "last_timed". Whatever the
// counts, the back-to-back check compares two consecutive runs (on two input sets), and one
// of them is skipped.
#include "guard.cuh"

static struct gp_state g;

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	return gp_init(ctx, &g);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gp_state *st = (struct gp_state *)p;

	if (st->runs++ % 5 == 0)
		gp_gemm(st, t, (__nv_bfloat16 *)t[2].ptr, s);
	return 0;
}
