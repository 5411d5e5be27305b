/*
 * rank.c - what every rank does: join the communicator, allocate the
 * workload's tensors in symmetric windows, fill inputs and the reference,
 * then for each program: requirements -> device communicator -> init ->
 * verify -> time -> verify again -> fini. Ranks agree on every outcome
 * through NCCL so they stay in step; rank 0 writes the result as one JSON
 * line. A rank whose CUDA context breaks writes a failure line (with the
 * results finished so far) and exits; the launcher ends its peers.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/error.h"

#define MAX_SETS 8
#define HOST_RUNS 9 /* runs timed on the host for host_us */

struct loaded_workload {
	void *dl;
	cuco_workload_describe_fn describe;
	cuco_workload_generate_fn generate;
	cuco_workload_reference_fn reference;
	cuco_workload_rank_weight_fn rank_weight; /* optional: NULL when not exported */
};

struct rank_state {
	const struct hx_opts *o;
	const struct hx_rank *r;
	ncclComm_t comm;
	cudaStream_t stream;
	struct cudaDeviceProp prop;
	int device;
	struct loaded_workload wl;
	int ntensors;
	size_t sym_bytes[CUCO_MAX_TENSORS]; /* max over ranks */
	struct cuco_tensor layout[CUCO_MAX_TENSORS];
	int nsets;
	struct cuco_tensor sets[MAX_SETS][CUCO_MAX_TENSORS];
	void *expected[CUCO_MAX_TENSORS];
	/* device scratch for agreement all-reduces: 2 + 2 * CUCO_MAX_TENSORS doubles */
	double *dagree;
	float *dsamples;
};

/* Fatal for this rank: the CUDA context or the communicator is unusable. */
static int die(struct rank_state *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int die(struct rank_state *st, int code, const char *fmt, ...)
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
	return code;
}

#define CUDA_OR_DIE(st, call)                                                               \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess)                                                      \
			die((st), CUCO_ERR_RUN, "%s:%d: %s: %s", __FILE__, __LINE__, #call, \
			    cudaGetErrorString(e_));                                        \
	} while (0)
#define NCCL_OR_DIE(st, call)                                                                    \
	do {                                                                                     \
		ncclResult_t r_ = (call);                                                        \
		if (r_ != ncclSuccess)                                                           \
			die((st), CUCO_ERR_RUN, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, \
			    ncclGetErrorString(r_), ncclGetLastError((st)->comm));               \
	} while (0)

/* All-reduce n doubles in place across ranks (sum or max). */
static void agree(struct rank_state *st, double *v, int n, ncclRedOp_t op)
{
	CUDA_OR_DIE(st, cudaMemcpyAsync(st->dagree, v, sizeof(double) * (size_t)n,
	                                cudaMemcpyHostToDevice, st->stream));
	NCCL_OR_DIE(st, ncclAllReduce(st->dagree, st->dagree, (size_t)n, ncclFloat64, op, st->comm,
	                              st->stream));
	CUDA_OR_DIE(st, cudaMemcpyAsync(v, st->dagree, sizeof(double) * (size_t)n,
	                                cudaMemcpyDeviceToHost, st->stream));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
}

static int agree_code(struct rank_state *st, int code)
{
	double v = code;

	agree(st, &v, 1, ncclMax);
	return (int)v;
}

static int load_workload(struct rank_state *st, char *err, size_t errlen)
{
	struct loaded_workload *w = &st->wl;

	w->dl = dlopen(st->o->workload_so, RTLD_NOW | RTLD_LOCAL);
	if (!w->dl) {
		snprintf(err, errlen, "cannot load workload %s: %s", st->o->workload_so, dlerror());
		return CUCO_ERR_RUN;
	}
	*(void **)&w->describe = dlsym(w->dl, "cuco_workload_describe");
	*(void **)&w->generate = dlsym(w->dl, "cuco_workload_generate");
	*(void **)&w->reference = dlsym(w->dl, "cuco_workload_reference");
	*(void **)&w->rank_weight = dlsym(w->dl, "cuco_workload_rank_weight");
	if (!w->describe || !w->generate || !w->reference) {
		snprintf(err, errlen, "%s does not export the cuco_workload_* functions",
		         st->o->workload_so);
		return CUCO_ERR_RUN;
	}
	return 0;
}

/* Describe every rank's tensors so windows get the same size everywhere. */
static int describe_tensors(struct rank_state *st, char *err, size_t errlen)
{
	const struct hx_opts *o = st->o;

	for (int q = 0; q < st->r->nranks; q++) {
		struct cuco_tensor t[CUCO_MAX_TENSORS];
		int n = CUCO_MAX_TENSORS;

		memset(t, 0, sizeof(t));
		if (st->wl.describe(&o->shape, q, st->r->nranks, t, &n, err, errlen))
			return CUCO_ERR_INVALID;
		if (n < 1 || n > CUCO_MAX_TENSORS || (q > 0 && n != st->ntensors)) {
			snprintf(err, errlen, "workload described %d tensors for rank %d", n, q);
			return CUCO_ERR_INVALID;
		}
		st->ntensors = n;
		for (int i = 0; i < n; i++) {
			size_t b = t[i].elems * cuco_dtype_size(t[i].dtype);
			if (b == 0 || b != t[i].bytes) {
				snprintf(err, errlen,
				         "workload tensor '%s': bytes %zu != elems x dtype",
				         t[i].name, t[i].bytes);
				return CUCO_ERR_INVALID;
			}
			if (b > st->sym_bytes[i])
				st->sym_bytes[i] = b;
			if (q == st->r->rank)
				st->layout[i] = t[i];
		}
	}
	return 0;
}

static void alloc_sets(struct rank_state *st)
{
	size_t per_set = 0;

	for (int i = 0; i < st->ntensors; i++)
		per_set += st->sym_bytes[i];
	st->nsets = st->o->rotate;
	if (st->nsets <= 0) {
		size_t want = 3 * (size_t)st->prop.l2CacheSize;
		st->nsets = (int)((want + per_set - 1) / per_set);
	}
	if (st->nsets < 1)
		st->nsets = 1;
	if (st->nsets > MAX_SETS)
		st->nsets = MAX_SETS;
	for (int s = 0; s < st->nsets; s++)
		for (int i = 0; i < st->ntensors; i++) {
			struct cuco_tensor *t = &st->sets[s][i];
			size_t b = (st->sym_bytes[i] + 4095) & ~(size_t)4095;

			*t = st->layout[i];
			NCCL_OR_DIE(st, ncclMemAlloc(&t->ptr, b));
			NCCL_OR_DIE(st, ncclCommWindowRegister(st->comm, t->ptr, b, &t->win,
			                                       NCCL_WIN_COLL_SYMMETRIC));
			t->win_offset = 0;
		}
}

static void free_sets(struct rank_state *st)
{
	for (int s = 0; s < st->nsets; s++)
		for (int i = 0; i < st->ntensors; i++) {
			ncclCommWindowDeregister(st->comm, st->sets[s][i].win);
			ncclMemFree(st->sets[s][i].ptr);
		}
}

static void poison_outputs(struct rank_state *st, struct cuco_tensor *set)
{
	/* All-ones bytes are NaN in bf16, f16 and f32: unwritten elements fail. */
	for (int i = 0; i < st->ntensors; i++)
		if (set[i].role == CUCO_ROLE_OUTPUT)
			CUDA_OR_DIE(
			    st, cudaMemsetAsync(set[i].ptr, 0xff, st->sym_bytes[i], st->stream));
}

struct verdict {
	int ok;
	double rel_err, max_abs, nonfinite, checked;
	int worst; /* the output tensor rel_err is of; -1 for none */
};

/*
 * Every output against the reference, over all ranks. The verdict takes each
 * output tensor alone: its relative L2 error must meet the tolerance (one L2
 * over all outputs would let a large tensor, say an LSE of magnitude 10, hide
 * a wrong small one, an attention output of magnitude 0.1). rel_err is the
 * largest of them, worst names its tensor.
 */
static struct verdict check_outputs(struct rank_state *st)
{
	double v[2 + 2 * CUCO_MAX_TENSORS] = {0}, mx = 0;
	struct verdict res;

	for (int i = 0; i < st->ntensors; i++) {
		struct hx_compare c;
		if (st->sets[0][i].role != CUCO_ROLE_OUTPUT)
			continue;
		if (hx_dev_compare(st->sets[0][i].ptr, st->expected[i], st->layout[i].elems,
		                   st->layout[i].dtype, &c, st->stream))
			die(st, CUCO_ERR_RUN, "comparing output '%s' failed: %s",
			    st->layout[i].name, cudaGetErrorString(cudaGetLastError()));
		v[2 + 2 * i] += c.diff2;
		v[3 + 2 * i] += c.ref2;
		v[0] += (double)c.nonfinite;
		v[1] += (double)c.checked;
		if (c.max_abs > mx)
			mx = c.max_abs;
	}
	agree(st, v, 2 + 2 * CUCO_MAX_TENSORS, ncclSum);
	agree(st, &mx, 1, ncclMax);
	res.rel_err = 0;
	res.worst = -1;
	for (int i = 0; i < st->ntensors; i++) {
		double d2 = v[2 + 2 * i], r2 = v[3 + 2 * i];
		double e = r2 > 0 ? sqrt(d2 / r2) : (d2 > 0 ? INFINITY : 0);

		if (st->sets[0][i].role == CUCO_ROLE_OUTPUT && (res.worst < 0 || e > res.rel_err)) {
			res.rel_err = e;
			res.worst = i;
		}
	}
	res.max_abs = mx;
	res.nonfinite = v[0];
	res.checked = v[1];
	res.ok = v[0] == 0 && res.rel_err <= st->o->tolerance;
	return res;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) by linear interpolation. */
static double quantile(const float *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;
	double f = pos - i;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] * (1 - f) + v[i + 1] * f;
}

/*
 * From every rank's samples (all: nranks rows of iters): each rank's median,
 * and where the workload weighs its ranks (cuco_workload_rank_weight, e.g. by
 * the tokens a rank computes) the median over runs of the weighted mean of the
 * ranks' times: the figure CUCo reports for its MoE layer, printed beside the
 * slowest rank's, never instead. weighted is NAN without weights.
 */
static void rank_times(struct rank_state *st, const float *all, int iters, double *rank_us,
                       double *weighted, double *w)
{
	int nr = st->r->nranks;
	double wsum = 0;
	float *v = malloc(sizeof(float) * (size_t)iters);

	*weighted = NAN;
	if (!v)
		die(st, CUCO_ERR_NOMEM, "out of memory");
	for (int q = 0; q < nr; q++) {
		memcpy(v, all + (size_t)q * iters, sizeof(float) * (size_t)iters);
		qsort(v, (size_t)iters, sizeof(float), cmp_float);
		rank_us[q] = quantile(v, iters, 0.5);
		w[q] = st->wl.rank_weight ? st->wl.rank_weight(&st->o->shape, q, nr) : -1;
		/* a rank not weighed (negative, NaN) leaves the whole mean out */
		wsum = w[q] >= 0 && wsum >= 0 ? wsum + w[q] : -1;
	}
	if (wsum > 0) {
		for (int i = 0; i < iters; i++) {
			double t = 0;
			for (int q = 0; q < nr; q++)
				t += w[q] * all[(size_t)q * iters + i];
			v[i] = (float)(t / wsum);
		}
		qsort(v, (size_t)iters, sizeof(float), cmp_float);
		*weighted = quantile(v, iters, 0.5);
	}
	free(v);
}

struct program_api {
	void *dl;
	cuco_program_requirements_fn requirements;
	cuco_program_init_fn init;
	cuco_program_run_fn run;
	cuco_program_fini_fn fini;
};

static int run_once(struct rank_state *st, struct program_api *p, void *state, int set,
                    struct cuco_ctx *ctx)
{
	int rc = p->run(state, st->sets[set], st->stream);
	if (rc)
		return rc;
	return cudaPeekAtLastError() != cudaSuccess ? -1 : 0;
}

static void result_head(struct cuco_strbuf *sb, const char *name, const char *status)
{
	cuco_strbuf_adds(sb, "{\"name\":");
	hx_json_str(sb, name);
	cuco_strbuf_adds(sb, ",\"status\":");
	hx_json_str(sb, status);
}

static void evaluate_program(struct rank_state *st, int idx)
{
	const struct hx_opts *o = st->o;
	struct program_api p;
	struct cuco_ctx ctx;
	struct cuco_requirements req;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char err[1536] = "";
	void *state = NULL;
	int code = 0, inited = 0, nv_sets = 0;
	struct hx_nvshmem nv;
	static struct cuco_tensor nv_saved[MAX_SETS][CUCO_MAX_TENSORS];
	const char *status = "ok";
	struct verdict ver = {1, 0, 0, 0, 0, -1};
	float *samples = NULL;
	cudaEvent_t *ev = NULL;
	int iters = 0, nev = 0;
	double host_us = 0, per_run = 0, gap_us = 0, weighted_us = NAN;
	double *rank_us = calloc((size_t)st->r->nranks, sizeof(double));
	double *rank_w = calloc((size_t)st->r->nranks, sizeof(double));

	if (!rank_us || !rank_w)
		die(st, CUCO_ERR_NOMEM, "out of memory");
	hx_result_program(o->program_names[idx]);
	{
		/* Progress for the launcher: names the program if this rank dies by a signal. */
		char line[160];
		int k = snprintf(line, sizeof(line), "#program %s\n", o->program_names[idx]);
		if (st->r->out_fd != 1 && k > 0 && write(st->r->out_fd, line, (size_t)k) < 0)
			perror("cuco-harness: progress");
	}
	memset(&p, 0, sizeof(p));
	memset(&ctx, 0, sizeof(ctx));
	memset(&req, 0, sizeof(req));
	hx_stage("load");
	p.dl = dlopen(o->program_paths[idx], RTLD_NOW | RTLD_LOCAL);
	if (p.dl) {
		*(void **)&p.requirements = dlsym(p.dl, "cuco_program_requirements");
		*(void **)&p.init = dlsym(p.dl, "cuco_program_init");
		*(void **)&p.run = dlsym(p.dl, "cuco_program_run");
		*(void **)&p.fini = dlsym(p.dl, "cuco_program_fini");
	}
	if (!p.dl) {
		snprintf(err, sizeof(err), "cannot load %s: %s", o->program_paths[idx], dlerror());
		code = CUCO_ERR_RUN;
	} else if (!p.requirements || !p.init || !p.run || !p.fini) {
		snprintf(err, sizeof(err), "%s does not export all four cuco_program_* functions",
		         o->program_paths[idx]);
		code = CUCO_ERR_RUN;
	}
	ctx.abi_version = CUCO_ABI_VERSION;
	ctx.rank = st->r->rank;
	ctx.nranks = st->r->nranks;
	ctx.local_rank = st->r->local_rank;
	ctx.device = st->device;
	ctx.sm_count = st->prop.multiProcessorCount;
	ctx.shape = &o->shape;
	ctx.comm = st->comm;
	ctx.ntensors = st->ntensors;
	memcpy(ctx.tensors, st->sets[0], sizeof(ctx.tensors));
	if (!code && p.requirements(&ctx, &req)) {
		snprintf(err, sizeof(err), "requirements: %s", ctx.errbuf);
		code = CUCO_ERR_RUN;
	}
	if (agree_code(st, code))
		goto report;

	hx_stage("setup");
	if (req.scratch_bytes && !req.nvshmem) { /* an NVSHMEM program's is on its heap (below) */
		size_t b = (req.scratch_bytes + 4095) & ~(size_t)4095;
		NCCL_OR_DIE(st, ncclMemAlloc(&ctx.scratch, b));
		CUDA_OR_DIE(st, cudaMemset(ctx.scratch, 0, b));
		NCCL_OR_DIE(st, ncclCommWindowRegister(st->comm, ctx.scratch, b, &ctx.scratch_win,
		                                       NCCL_WIN_COLL_SYMMETRIC));
		ctx.scratch_bytes = req.scratch_bytes;
	}
	if (req.devcomm || req.lsa_barrier_count || req.gin_context_count) {
		struct ncclDevComm *dc = NULL;
		int rc = hx_dev_devcomm_create(st->comm, &req, &dc, err, sizeof(err));
		if (rc)
			code = rc == 2 ? CUCO_ERR_UNSUPPORTED : CUCO_ERR_RUN;
		ctx.devcomm = dc;
	}
	if (!code && req.nvshmem)
		code = hx_nvshmem_open(&nv, p.dl, &req, err, sizeof(err));
	if (agree_code(st, code))
		goto report;
	if (req.nvshmem) {
		hx_stage("nvshmem");
		if (hx_nvshmem_place(
		        &nv, st->comm, st->stream, st->r->rank, st->r->nranks, !st->o->launch_env,
		        req.nvshmem_heap_bytes + ((req.scratch_bytes + 4095) & ~(size_t)4095),
		        st->sym_bytes, st->ntensors, st->nsets, &st->sets[0][0], CUCO_MAX_TENSORS,
		        &nv_saved[0][0], err, sizeof(err)))
			code = CUCO_ERR_RUN;
		else
			nv_sets = 1;
		memcpy(ctx.tensors, st->sets[0], sizeof(ctx.tensors));
		if (!code && req.scratch_bytes) { /* same size on every rank: a collective malloc */
			size_t b = (req.scratch_bytes + 4095) & ~(size_t)4095;
			if (!(ctx.scratch = hx_nvshmem_malloc(&nv, b)) ||
			    cudaMemset(ctx.scratch, 0, b) != cudaSuccess) {
				snprintf(err, sizeof(err),
				         "scratch of %zu bytes on NVSHMEM's heap failed", b);
				code = CUCO_ERR_RUN;
			}
			ctx.scratch_bytes = req.scratch_bytes;
		}
		if (agree_code(st, code))
			goto report;
	}

	hx_stage("init");
	if (p.init(&ctx, &state)) {
		snprintf(err, sizeof(err), "init: %s", ctx.errbuf);
		code = CUCO_ERR_RUN;
	} else {
		inited = 1;
	}
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	if (agree_code(st, code))
		goto report;

	/* Verify before timing: a wrong program has no speed. */
	hx_stage("verify");
	poison_outputs(st, st->sets[0]);
	if (run_once(st, &p, state, 0, &ctx)) {
		snprintf(err, sizeof(err), "run: %s", ctx.errbuf[0] ? ctx.errbuf : "launch failed");
		code = CUCO_ERR_RUN;
	}
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	if (agree_code(st, code))
		goto report;
	if (o->program_verify[idx]) {
		ver = check_outputs(st);
		if (!ver.ok) {
			code = CUCO_ERR_VERIFY;
			snprintf(
			    err, sizeof(err),
			    "output differs from the reference: rel_err %.3g of '%s' (tolerance "
			    "%.3g), %.0f non-finite of %.0f elements",
			    ver.rel_err, ver.worst >= 0 ? st->layout[ver.worst].name : "-",
			    o->tolerance, ver.nonfinite, ver.checked);
			goto report;
		}
	}

	/* Warm up, then size the timed loop from the warm-up (all ranks agree). */
	hx_stage("bench");
	{
		cudaEvent_t a, b;
		float ms = 0;
		double t;

		CUDA_OR_DIE(st, cudaEventCreate(&a));
		CUDA_OR_DIE(st, cudaEventCreate(&b));
		CUDA_OR_DIE(st, cudaEventRecord(a, st->stream));
		for (int i = 0; i < o->warmup; i++)
			if (run_once(st, &p, state, i % st->nsets, &ctx))
				die(st, CUCO_ERR_RUN, "run failed during warm-up: %s", ctx.errbuf);
		CUDA_OR_DIE(st, cudaEventRecord(b, st->stream));
		CUDA_OR_DIE(st, cudaEventSynchronize(b));
		CUDA_OR_DIE(st, cudaEventElapsedTime(&ms, a, b));
		cudaEventDestroy(a);
		cudaEventDestroy(b);
		t = ms / (o->warmup > 0 ? o->warmup : 1);
		agree(st, &t, 1, ncclMax);
		/* Burst timing: each run costs the run, the idle gap and the spin. */
		per_run = o->burst ? 3 * t + HX_BURST_SPIN_US / 1000.0 : t;
		if (o->burst)
			gap_us =
			    2000.0 * t > HX_BURST_MIN_GAP_US ? 2000.0 * t : HX_BURST_MIN_GAP_US;
		iters = o->iters;
		if (per_run > 0 && o->bench_seconds * 1000.0 / per_run > iters)
			iters = (int)(o->bench_seconds * 1000.0 / per_run);
		if (iters > 2000)
			iters = 2000;
	}
	/* Run i lies between events lo and lo + 1: sustained, lo = i (each run ends
	 * where the next begins); burst, lo = 2i (a start and an end per run). */
	nev = o->burst ? 2 * iters : iters + 1;
	samples = calloc((size_t)iters, sizeof(*samples));
	ev = calloc((size_t)nev, sizeof(*ev));
	if (!samples || !ev)
		die(st, CUCO_ERR_NOMEM, "out of memory");
	for (int i = 0; i < nev; i++)
		CUDA_OR_DIE(st, cudaEventCreate(&ev[i]));
	if (o->burst) {
		/* Each run alone: idle long enough that the power controller never
		 * engages, line the ranks up with a one-element all-reduce, give the
		 * host time to enqueue the run behind a short spin, then time it. */
		for (int i = 0; i < iters; i++) {
			CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
			hx_sleep_us(gap_us);
			NCCL_OR_DIE(st, ncclAllReduce(st->dsamples, st->dsamples, 1, ncclFloat32,
			                              ncclMax, st->comm, st->stream));
			CUDA_OR_DIE(st, hx_dev_spin(HX_BURST_SPIN_US, st->stream));
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i], st->stream));
			if (run_once(st, &p, state, i % st->nsets, &ctx))
				die(st, CUCO_ERR_RUN, "run failed while timing: %s", ctx.errbuf);
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i + 1], st->stream));
		}
	} else {
		CUDA_OR_DIE(st, cudaEventRecord(ev[0], st->stream));
		for (int i = 0; i < iters; i++) {
			if (run_once(st, &p, state, i % st->nsets, &ctx))
				die(st, CUCO_ERR_RUN, "run failed while timing: %s", ctx.errbuf);
			CUDA_OR_DIE(st, cudaEventRecord(ev[i + 1], st->stream));
		}
	}
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	for (int i = 0; i < iters; i++) {
		int lo = o->burst ? 2 * i : i;
		float ms;
		CUDA_OR_DIE(st, cudaEventElapsedTime(&ms, ev[lo], ev[lo + 1]));
		samples[i] = ms * 1000.0f;
	}
	/* Every rank's own times: the per-rank medians, a workload's weighted mean, and per
	 * run the slowest rank's time, the program's. */
	{
		int nr = st->r->nranks;
		float *dall = NULL, *all = malloc(sizeof(float) * (size_t)iters * (size_t)nr);

		if (!all)
			die(st, CUCO_ERR_NOMEM, "out of memory");
		CUDA_OR_DIE(st, cudaMalloc((void **)&dall,
		                           sizeof(float) * (size_t)iters * (size_t)(nr + 1)));
		CUDA_OR_DIE(st, cudaMemcpyAsync(dall, samples, sizeof(float) * (size_t)iters,
		                                cudaMemcpyHostToDevice, st->stream));
		NCCL_OR_DIE(st, ncclAllGather(dall, dall + iters, (size_t)iters, ncclFloat32,
		                              st->comm, st->stream));
		CUDA_OR_DIE(st, cudaMemcpyAsync(all, dall + iters,
		                                sizeof(float) * (size_t)iters * (size_t)nr,
		                                cudaMemcpyDeviceToHost, st->stream));
		CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
		cudaFree(dall);
		rank_times(st, all, iters, rank_us, &weighted_us, rank_w);
		for (int i = 0; i < iters; i++)
			for (int q = 0; q < nr; q++)
				samples[i] = fmaxf(samples[i], all[(size_t)q * iters + i]);
		free(all);
	}

	/* Host time to enqueue one run onto an idle stream (the median of a few):
	 * near median_us, the GPU waits for the host and the run is host-bound. */
	{
		float h[HOST_RUNS];
		for (int k = 0; k < HOST_RUNS; k++) {
			double t0 = hx_now();
			if (run_once(st, &p, state, k % st->nsets, &ctx))
				die(st, CUCO_ERR_RUN, "run failed while timing: %s", ctx.errbuf);
			h[k] = (float)((hx_now() - t0) * 1e6);
			CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
		}
		qsort(h, HOST_RUNS, sizeof(float), cmp_float);
		host_us = quantile(h, HOST_RUNS, 0.5);
		agree(st, &host_us, 1, ncclMax);
	}

	/* Verify again after many runs: a result that moves is a race. */
	hx_stage("verify");
	for (int k = 1; k < o->verify_runs && o->program_verify[idx]; k++) {
		poison_outputs(st, st->sets[0]);
		if (run_once(st, &p, state, 0, &ctx))
			die(st, CUCO_ERR_RUN, "run failed: %s", ctx.errbuf);
		CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
		ver = check_outputs(st);
		if (!ver.ok) {
			code = CUCO_ERR_VERIFY;
			snprintf(
			    err, sizeof(err),
			    "verification %d of %d failed after passing the first (rel_err %.3g, "
			    "%.0f non-finite): the result moves between runs, probably a race",
			    k + 1, o->verify_runs, ver.rel_err, ver.nonfinite);
			break;
		}
	}

report:
	if (code)
		status = cuco_result_token(code);
	result_head(&sb, o->program_names[idx], status);
	cuco_strbuf_addf(&sb, ",\"verified\":%s",
	                 !o->program_verify[idx] ? "null" : (code == 0 ? "true" : "false"));
	if (o->program_verify[idx] && (code == 0 || code == CUCO_ERR_VERIFY)) {
		cuco_strbuf_adds(&sb, ",\"rel_err\":");
		hx_json_num(&sb, ver.rel_err);
		cuco_strbuf_adds(&sb, ",\"max_abs_err\":");
		hx_json_num(&sb, ver.max_abs);
		cuco_strbuf_addf(&sb, ",\"nonfinite\":%.0f,\"checked\":%.0f", ver.nonfinite,
		                 ver.checked);
		if (ver.worst >= 0) {
			cuco_strbuf_adds(&sb, ",\"rel_err_tensor\":");
			hx_json_str(&sb, st->layout[ver.worst].name);
		}
	}
	if (code == 0 && iters > 0) {
		double mean = 0;
		float *sorted = malloc(sizeof(float) * (size_t)iters);
		if (!sorted)
			die(st, CUCO_ERR_NOMEM, "out of memory");
		memcpy(sorted, samples, sizeof(float) * (size_t)iters);
		qsort(sorted, (size_t)iters, sizeof(float), cmp_float);
		for (int i = 0; i < iters; i++)
			mean += samples[i];
		mean /= iters;
		cuco_strbuf_addf(&sb, ",\"iters\":%d,\"sets\":%d", iters, st->nsets);
		cuco_strbuf_adds(&sb, ",\"median_us\":");
		hx_json_num(&sb, quantile(sorted, iters, 0.5));
		cuco_strbuf_adds(&sb, ",\"p10_us\":");
		hx_json_num(&sb, quantile(sorted, iters, 0.1));
		cuco_strbuf_adds(&sb, ",\"p90_us\":");
		hx_json_num(&sb, quantile(sorted, iters, 0.9));
		cuco_strbuf_adds(&sb, ",\"min_us\":");
		hx_json_num(&sb, sorted[0]);
		cuco_strbuf_adds(&sb, ",\"max_us\":");
		hx_json_num(&sb, sorted[iters - 1]);
		cuco_strbuf_adds(&sb, ",\"mean_us\":");
		hx_json_num(&sb, mean);
		cuco_strbuf_adds(&sb, ",\"host_us\":");
		hx_json_num(&sb, host_us);
		cuco_strbuf_adds(&sb, ",\"rank_us\":[");
		for (int q = 0; q < st->r->nranks; q++) {
			cuco_strbuf_adds(&sb, q ? "," : "");
			hx_json_num(&sb, rank_us[q]);
		}
		cuco_strbuf_addch(&sb, ']');
		if (!isnan(weighted_us)) {
			cuco_strbuf_adds(&sb, ",\"rank_weight\":[");
			for (int q = 0; q < st->r->nranks; q++) {
				cuco_strbuf_adds(&sb, q ? "," : "");
				hx_json_num(&sb, rank_w[q]);
			}
			cuco_strbuf_adds(&sb, "],\"weighted_us\":");
			hx_json_num(&sb, weighted_us);
		}
		if (o->samples) {
			cuco_strbuf_adds(&sb, ",\"samples_us\":[");
			for (int i = 0; i < iters; i++)
				cuco_strbuf_addf(&sb, "%s%.2f", i ? "," : "", samples[i]);
			cuco_strbuf_addch(&sb, ']');
		}
		free(sorted);
	}
	if (code) {
		cuco_strbuf_adds(&sb, ",\"error\":");
		hx_json_str(&sb, err[0] ? err : "failed on another rank");
	}
	cuco_strbuf_adds(&sb, "}");
	hx_result_add(sb.buf);
	cuco_strbuf_release(&sb);

	hx_stage("fini");
	if (inited)
		p.fini(state);
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	if (ctx.devcomm)
		hx_dev_devcomm_destroy(st->comm, (struct ncclDevComm *)ctx.devcomm);
	if (nv_sets && ctx.scratch) {
		hx_nvshmem_free(&nv, ctx.scratch);
		ctx.scratch = NULL;
	}
	if (nv_sets)
		hx_nvshmem_unplace(&nv, st->ntensors, st->nsets, &st->sets[0][0], CUCO_MAX_TENSORS,
		                   &nv_saved[0][0]);
	if (ctx.scratch) {
		ncclCommWindowDeregister(st->comm, ctx.scratch_win);
		ncclMemFree(ctx.scratch);
	}
	if (ev)
		for (int i = 0; i < nev; i++)
			cudaEventDestroy(ev[i]);
	free(ev);
	free(rank_us);
	free(rank_w);
	free(samples);
	/* Keep the library loaded: kernels it registered may still be referenced. */
	hx_result_program("");
}

int hx_rank_main(const struct hx_opts *o, const struct hx_rank *r, const ncclUniqueId *id)
{
	struct rank_state st;
	char err[1024] = "";
	int ndev = 0, code;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	memset(&st, 0, sizeof(st));
	st.o = o;
	st.r = r;
	hx_result_run(o->workload_name, o->shape.name, r->nranks);
	hx_watchdog_start(r->rank, r->out_fd, o->timeout_s);
	hx_stage("init");
	CUDA_OR_DIE(&st, cudaGetDeviceCount(&ndev));
	if (ndev < 1)
		die(&st, CUCO_ERR_NO_GPU, "no CUDA GPU visible to rank %d", r->rank);
	st.device = r->local_rank % ndev;
	CUDA_OR_DIE(&st, cudaSetDevice(st.device));
	CUDA_OR_DIE(&st, cudaGetDeviceProperties(&st.prop, st.device));
	CUDA_OR_DIE(&st, cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
	{
		/* The device API's structs (ncclDevComm, windows) change between NCCL
		 * releases: a library other than the headers' corrupts them silently. */
		int v = 0;
		ncclGetVersion(&v);
		if (v != NCCL_VERSION_CODE)
			die(&st, CUCO_ERR_UNSUPPORTED,
			    "libnccl at run time is %d.%d.%d, but cuco-harness was built with the "
			    "headers of NCCL %d.%d.%d; their device-API structs differ. Put the "
			    "matching libnccl first on LD_LIBRARY_PATH (with the NCCL wheel: "
			    ". scripts/gpu-env.sh)",
			    v / 10000, v % 10000 / 100, v % 100, NCCL_VERSION_CODE / 10000,
			    NCCL_VERSION_CODE % 10000 / 100, NCCL_VERSION_CODE % 100);
	}
	NCCL_OR_DIE(&st, ncclCommInitRank(&st.comm, r->nranks, *id, r->rank));
	if (o->probe)
		return hx_probe_rank(o, r, st.comm);
	CUDA_OR_DIE(&st,
	            cudaMalloc((void **)&st.dagree, (2 + 2 * CUCO_MAX_TENSORS) * sizeof(double)));
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dsamples, 2048 * sizeof(float)));

	hx_stage("load");
	code = load_workload(&st, err, sizeof(err));
	if (!code)
		code = describe_tensors(&st, err, sizeof(err));
	if (agree_code(&st, code))
		die(&st, code ? code : CUCO_ERR_RUN, "%s", err[0] ? err : "failed on another rank");

	hx_stage("inputs");
	alloc_sets(&st);
	for (int s = 0; s < st.nsets; s++)
		if (st.wl.generate(&o->shape, r->rank, r->nranks, o->seed + 7919u * (uint64_t)s,
		                   st.sets[s], st.ntensors, st.stream))
			die(&st, CUCO_ERR_RUN, "workload input generator failed: %s",
			    cudaGetErrorString(cudaGetLastError()));
	hx_stage("reference");
	{
		struct cuco_tensor ref[CUCO_MAX_TENSORS];
		memcpy(ref, st.sets[0], sizeof(ref));
		for (int i = 0; i < st.ntensors; i++)
			if (ref[i].role == CUCO_ROLE_OUTPUT) {
				CUDA_OR_DIE(&st, cudaMalloc(&st.expected[i], st.sym_bytes[i]));
				ref[i].ptr = st.expected[i];
				ref[i].win = NULL;
			}
		if (st.wl.reference(&o->shape, r->rank, r->nranks, o->seed, ref, st.ntensors,
		                    st.stream))
			die(&st, CUCO_ERR_RUN, "workload reference failed: %s",
			    cudaGetErrorString(cudaGetLastError()));
		CUDA_OR_DIE(&st, cudaStreamSynchronize(st.stream));
	}

	for (int i = 0; i < o->nprograms; i++)
		evaluate_program(&st, i);

	hx_stage("finish");
	cuco_strbuf_adds(&out, "{\"harness\":1,\"status\":\"ok\",\"error_code\":0,\"workload\":");
	hx_json_str(&out, o->workload_name);
	cuco_strbuf_adds(&out, ",\"shape\":");
	hx_json_str(&out, o->shape.name);
	cuco_strbuf_addf(&out, ",\"ranks\":%d,\"gpu\":", r->nranks);
	hx_json_str(&out, st.prop.name);
	{
		int v = 0;
		ncclGetVersion(&v);
		cuco_strbuf_addf(&out, ",\"nccl_version\":%d,\"sm_count\":%d,\"sets\":%d", v,
		                 st.prop.multiProcessorCount, st.nsets);
		cuco_strbuf_addf(&out, ",\"timing\":\"%s\"", o->burst ? "burst" : "sustained");
	}
	{
		/* CUDA's hardware queues per device, when the environment sets them:
		 * some placements' times depend on them (docs/harness.md) */
		const char *mc = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
		if (mc && *mc) {
			cuco_strbuf_adds(&out, ",\"cuda_device_max_connections\":");
			hx_json_str(&out, mc);
		}
	}
	cuco_strbuf_addf(&out, ",\"seed\":%llu,\"tolerance\":%g,\"programs\":[",
	                 (unsigned long long)o->seed, o->tolerance);
	hx_result_copy(&out);
	cuco_strbuf_adds(&out, "]}\n");
	if (r->rank == 0 && write(r->out_fd, out.buf, out.len) < 0)
		perror("cuco-harness: writing result");
	cuco_strbuf_release(&out);

	for (int i = 0; i < st.ntensors; i++)
		if (st.expected[i])
			cudaFree(st.expected[i]);
	free_sets(&st);
	cudaFree(st.dagree);
	cudaFree(st.dsamples);
	ncclCommDestroy(st.comm);
	return 0;
}
