/*
 * state.c - one rank's state and what every stage does with it (state.h):
 * fail the rank, agree with the other ranks, the inputs' seeds and their
 * generation. The lowest file of a rank: rank.c, program.c and verify.c
 * build on it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "state.h"

void hx_die(struct hx_state *st, int code, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;

	int n = snprintf(msg, sizeof(msg), "rank %d: ", st->r->rank);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "cuco-harness: %s\n", msg);
	hx_emit_failure(st->r->out_fd, st->r->rank, code, hx_stage_name(), msg);
	_exit(code);
}

void hx_agree(struct hx_state *st, double *v, int n, ncclRedOp_t op)
{
	CUDA_OR_DIE(st, cudaMemcpyAsync(st->dagree, v, sizeof(double) * (size_t)n,
	                                cudaMemcpyHostToDevice, st->stream));
	NCCL_OR_DIE(st, ncclAllReduce(st->dagree, st->dagree, (size_t)n, ncclFloat64, op, st->comm,
	                              st->stream));
	CUDA_OR_DIE(st, cudaMemcpyAsync(v, st->dagree, sizeof(double) * (size_t)n,
	                                cudaMemcpyDeviceToHost, st->stream));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
}

int hx_agree_code(struct hx_state *st, int code)
{
	double v = code;

	hx_agree(st, &v, 1, ncclMax);
	return (int)v;
}

uint64_t hx_input_seed(const struct hx_state *st, int set)
{
	return st->o->seed + 7919u * (uint64_t)set;
}

/* after the decoys' (HX_MAX_SETS + 1 + set, set < HX_MAX_SETS) */
uint64_t hx_fresh_seed(const struct hx_state *st, int k)
{
	return st->o->seed + 7919u * (uint64_t)(2 * HX_MAX_SETS + 1 + k);
}

uint64_t hx_decoy_seed(const struct hx_state *st, int set)
{
	return st->o->seed + 7919u * (uint64_t)(HX_MAX_SETS + 1 + set);
}

void hx_fill_inputs(struct hx_state *st, int set, uint64_t seed)
{
	if (st->wl.generate(&st->o->shape, st->r->rank, st->r->nranks, seed, st->sets[set],
	                    st->ntensors, st->stream))
		hx_die(st, CUCO_ERR_RUN, "workload input generator failed: %s",
		       cudaGetErrorString(cudaGetLastError()));
	for (int i = 0; i < st->ntensors; i++)
		if (st->pristine[set][i])
			CUDA_OR_DIE(st, cudaMemcpyAsync(st->pristine[set][i], st->sets[set][i].ptr,
			                                st->sym_bytes[i], cudaMemcpyDeviceToDevice,
			                                st->stream));
	st->set_seed[set] = seed;
}

int hx_nfresh(const struct hx_state *st)
{
	int singles = st->o->verify_runs - 1;

	for (int i = 0; i < st->o->nprograms; i++)
		if (st->o->program_verify[i])
			return HX_FRESH_SINGLE + (singles < HX_MAX_FRESH - HX_FRESH_SINGLE
			                              ? singles
			                              : HX_MAX_FRESH - HX_FRESH_SINGLE);
	return 0;
}
