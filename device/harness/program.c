/*
 * program.c - one program on one rank, stage by stage: load its shared
 * object, its requirements (scratch window, device communicator, NVSHMEM),
 * init on decoy inputs, verification, warm-up and the timed runs (sustained
 * or burst, each from poisoned outputs) with the last of them checked, the
 * host's enqueue time, the checks on fresh inputs (back to back, one run per
 * further verification, one run not poisoned first), its result entry, fini.
 * The reference program (--reference-program) goes through the same load,
 * setup, init and teardown, and its runs give the expected outputs. Every
 * rank runs the same stages and agrees on each outcome (rank.h).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

#define HOST_RUNS 9 /* runs timed on the host for host_us */

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
static void rank_times(struct hx_state *st, const float *all, int iters, double *rank_us,
                       double *weighted, double *w)
{
	int nr = st->r->nranks;
	double wsum = 0;
	float *v = malloc(sizeof(float) * (size_t)iters);

	*weighted = NAN;
	if (!v)
		hx_die(st, CUCO_ERR_NOMEM, "out of memory");
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
	}
	free(v);
}

static void result_head(struct cuco_strbuf *sb, const char *name, const char *status)
{
	cuco_strbuf_adds(sb, "{\"name\":");
	hx_json_str(sb, name);
	cuco_strbuf_adds(sb, ",\"status\":");
	hx_json_str(sb, status);
}

/* One program loaded on this rank: what its stages share. */
struct hx_loaded {
	const char *path;
	int reference; /* 1: the reference program, whose every stage is named "reference" */
	struct hx_program p;
	struct cuco_ctx ctx;
	struct cuco_requirements req;
	struct hx_nvshmem nv;
	void *state;
	int inited;  /* init succeeded: fini is owed */
	int nv_sets; /* the tensors are on NVSHMEM's heap */
};

/* The tensor rows as they were before an NVSHMEM program's placement (one program at a time). */
static struct cuco_tensor nv_saved[HX_MAX_SETS][CUCO_MAX_TENSORS];

static void stage(const struct hx_loaded *L, const char *name)
{
	hx_stage(L->reference ? "reference" : name);
}

/* Load the shared object and ask its requirements. 0 or a code with err, agreed. */
static int open_program(struct hx_state *st, struct hx_loaded *L, char *err, size_t errlen)
{
	struct hx_program *p = &L->p;
	struct cuco_ctx *ctx = &L->ctx;
	int code = 0;

	stage(L, "load");
	p->dl = dlopen(L->path, RTLD_NOW | RTLD_LOCAL);
	if (p->dl) {
		*(void **)&p->requirements = dlsym(p->dl, "cuco_program_requirements");
		*(void **)&p->init = dlsym(p->dl, "cuco_program_init");
		*(void **)&p->run = dlsym(p->dl, "cuco_program_run");
		*(void **)&p->fini = dlsym(p->dl, "cuco_program_fini");
	}
	if (!p->dl) {
		snprintf(err, errlen, "cannot load %s: %s", L->path, dlerror());
		code = CUCO_ERR_RUN;
	} else if (!p->requirements || !p->init || !p->run || !p->fini) {
		snprintf(err, errlen, "%s does not export all four cuco_program_* functions",
		         L->path);
		code = CUCO_ERR_RUN;
	}
	ctx->abi_version = CUCO_ABI_VERSION;
	ctx->rank = st->r->rank;
	ctx->nranks = st->r->nranks;
	ctx->local_rank = st->r->local_rank;
	ctx->device = st->device;
	ctx->sm_count = st->prop.multiProcessorCount;
	ctx->shape = &st->o->shape;
	ctx->comm = st->comm;
	ctx->ntensors = st->ntensors;
	memcpy(ctx->tensors, st->sets[0], sizeof(ctx->tensors));
	if (!code && p->requirements(ctx, &L->req)) {
		snprintf(err, errlen, "requirements: %s", ctx->errbuf);
		code = CUCO_ERR_RUN;
	}
	return hx_agree_code(st, code);
}

/* Scratch window, device communicator, NVSHMEM as the requirements ask. 0 or a code, agreed. */
static int setup_program(struct hx_state *st, struct hx_loaded *L, char *err, size_t errlen)
{
	struct cuco_requirements *req = &L->req;
	struct cuco_ctx *ctx = &L->ctx;
	int code = 0;

	stage(L, "setup");
	if (req->scratch_bytes && !req->nvshmem) { /* an NVSHMEM program's is on its heap */
		size_t b = (req->scratch_bytes + 4095) & ~(size_t)4095;
		NCCL_OR_DIE(st, ncclMemAlloc(&ctx->scratch, b));
		CUDA_OR_DIE(st, cudaMemset(ctx->scratch, 0, b));
		NCCL_OR_DIE(st, ncclCommWindowRegister(st->comm, ctx->scratch, b, &ctx->scratch_win,
		                                       NCCL_WIN_COLL_SYMMETRIC));
		ctx->scratch_bytes = req->scratch_bytes;
	}
	if (req->devcomm || req->lsa_barrier_count || req->gin_context_count) {
		struct ncclDevComm *dc = NULL;
		int rc = hx_dev_devcomm_create(st->comm, req, &dc, err, errlen);
		if (rc)
			code = rc == 2 ? CUCO_ERR_UNSUPPORTED : CUCO_ERR_RUN;
		ctx->devcomm = dc;
	}
	if (!code && req->nvshmem)
		code = hx_nvshmem_open(&L->nv, L->p.dl, req, err, errlen);
	code = hx_agree_code(st, code);
	if (code || !req->nvshmem)
		return code;
	stage(L, "nvshmem");
	if (hx_nvshmem_place(
	        &L->nv, st->comm, st->stream, st->r->rank, st->r->nranks, !st->o->launch_env,
	        req->nvshmem_heap_bytes + ((req->scratch_bytes + 4095) & ~(size_t)4095),
	        st->sym_bytes, st->ntensors, st->nsets, &st->sets[0][0], CUCO_MAX_TENSORS,
	        &nv_saved[0][0], err, errlen))
		code = CUCO_ERR_RUN;
	else
		L->nv_sets = 1;
	memcpy(ctx->tensors, st->sets[0], sizeof(ctx->tensors));
	if (!code && req->scratch_bytes) { /* same size on every rank: a collective malloc */
		size_t b = (req->scratch_bytes + 4095) & ~(size_t)4095;
		if (!(ctx->scratch = hx_nvshmem_malloc(&L->nv, b)) ||
		    cudaMemset(ctx->scratch, 0, b) != cudaSuccess) {
			snprintf(err, errlen, "scratch of %zu bytes on NVSHMEM's heap failed", b);
			code = CUCO_ERR_RUN;
		}
		ctx->scratch_bytes = req->scratch_bytes;
	}
	return hx_agree_code(st, code);
}

/*
 * init sees decoy inputs, the real ones come after it: what init computes from the inputs it
 * was handed is of no use to run (docs/sandbox.md). 0 or a code with err, agreed.
 */
static int init_program(struct hx_state *st, struct hx_loaded *L, char *err, size_t errlen)
{
	int code = 0;

	stage(L, "init");
	for (int s = 0; s < st->nsets; s++)
		hx_fill_inputs(st, s, hx_decoy_seed(st, s));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	if (L->p.init(&L->ctx, &L->state)) {
		snprintf(err, errlen, "init: %s", L->ctx.errbuf);
		code = CUCO_ERR_RUN;
	} else {
		L->inited = 1;
	}
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	for (int s = 0; s < st->nsets; s++)
		hx_fill_inputs(st, s, hx_input_seed(st, s));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	return hx_agree_code(st, code);
}

/* Load, set up and init the program at L->path: 0, or a code with err (agreed); either way
 * close_program() releases what was taken. */
static int start_program(struct hx_state *st, struct hx_loaded *L, const char *path, int reference,
                         char *err, size_t errlen)
{
	int code;

	memset(L, 0, sizeof(*L));
	L->path = path;
	L->reference = reference;
	code = open_program(st, L, err, errlen);
	if (!code)
		code = setup_program(st, L, err, errlen);
	if (!code)
		code = init_program(st, L, err, errlen);
	return code;
}

/* fini, then everything setup_program() took; the persisting-L2 state put back. */
static void close_program(struct hx_state *st, struct hx_loaded *L)
{
	struct cuco_ctx *ctx = &L->ctx;

	stage(L, "fini");
	if (L->inited)
		L->p.fini(L->state);
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	hx_l2_restore(st);
	if (ctx->devcomm)
		hx_dev_devcomm_destroy(st->comm, (struct ncclDevComm *)ctx->devcomm);
	if (L->nv_sets && ctx->scratch) {
		hx_nvshmem_free(&L->nv, ctx->scratch);
		ctx->scratch = NULL;
	}
	if (L->nv_sets) {
		hx_nvshmem_unplace(&L->nv, st->ntensors, st->nsets, &st->sets[0][0],
		                   CUCO_MAX_TENSORS, &nv_saved[0][0]);
		/* the rows are back where they were, holding what they held then */
		for (int s = 0; s < HX_MAX_SETS; s++)
			st->set_seed[s] = HX_SEED_NONE;
	}
	if (ctx->scratch) {
		ncclCommWindowDeregister(st->comm, ctx->scratch_win);
		ncclMemFree(ctx->scratch);
	}
	/* Keep the library loaded: kernels it registered may still be referenced. */
}

/* A program's timed runs and what the result entry reports of them. */
struct hx_timing {
	int iters;
	float *samples; /* per run, the slowest rank's time (us) */
	double host_us, weighted_us;
	double *rank_us, *rank_w; /* nranks each */
};

/* What a verified program's checks came to: how many passed, and the one that failed. */
struct hx_checks {
	int passed;
	int failed; /* enum hx_check, or -1 */
};

/* Count the outcome of check `which`: code passed through. */
static int tally(struct hx_checks *c, enum hx_check which, int code)
{
	if (code)
		c->failed = (int)which;
	else
		c->passed++;
	return code;
}

/*
 * Warm up, size the timed loop from the warm-up (all ranks agree) and time it. Every run starts
 * from its set's inouts put back and its outputs poisoned (hx_before_run), enqueued before the
 * run's start event, outside the measured interval. Timed run i is on set (iters - 1 - i) %
 * nsets, so the last one is on set 0, whose expected outputs are known: a verified program's
 * last timed run is checked right behind it (hx_check_last_timed, into c). 0 or a code with
 * err, agreed; on a code nothing of the timing is kept.
 */
static int bench_program(struct hx_state *st, struct hx_loaded *L, int verify, struct hx_timing *tm,
                         struct hx_checks *c, struct hx_verdict *ver, char *err, size_t errlen)
{
	const struct hx_opts *o = st->o;
	double per_run = 0, gap_us = 0;
	cudaEvent_t *ev = NULL;
	int iters, nev, code = 0;

	stage(L, "bench");
	{
		cudaEvent_t a, b;
		float ms = 0;
		double t;

		CUDA_OR_DIE(st, cudaEventCreate(&a));
		CUDA_OR_DIE(st, cudaEventCreate(&b));
		CUDA_OR_DIE(st, cudaEventRecord(a, st->stream));
		for (int i = 0; i < o->warmup; i++) {
			hx_before_run(st, i % st->nsets);
			if (hx_run_once(st, &L->p, L->state, i % st->nsets))
				hx_die(st, CUCO_ERR_RUN, "run failed during warm-up: %s",
				       L->ctx.errbuf);
		}
		CUDA_OR_DIE(st, cudaEventRecord(b, st->stream));
		CUDA_OR_DIE(st, cudaEventSynchronize(b));
		CUDA_OR_DIE(st, cudaEventElapsedTime(&ms, a, b));
		cudaEventDestroy(a);
		cudaEventDestroy(b);
		/* a run and what comes before it: the loop below costs that much per run */
		t = ms / (o->warmup > 0 ? o->warmup : 1);
		hx_agree(st, &t, 1, ncclMax);
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
	/* Run i lies between events 2i and 2i + 1, its poison before both. */
	nev = 2 * iters;
	tm->iters = iters;
	tm->samples = calloc((size_t)iters, sizeof(*tm->samples));
	ev = calloc((size_t)nev, sizeof(*ev));
	if (!tm->samples || !ev)
		hx_die(st, CUCO_ERR_NOMEM, "out of memory");
	for (int i = 0; i < nev; i++)
		CUDA_OR_DIE(st, cudaEventCreate(&ev[i]));
	if (o->burst) {
		/* Each run alone: its poison behind the previous run, then idle long enough
		 * that the power controller never engages, line the ranks up with a
		 * one-element all-reduce, give the host time to enqueue the run behind a short
		 * spin, then time it. */
		for (int i = 0; i < iters; i++) {
			int set = (iters - 1 - i) % st->nsets;

			hx_before_run(st, set);
			CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
			hx_sleep_us(gap_us);
			NCCL_OR_DIE(st, ncclAllReduce(st->dsamples, st->dsamples, 1, ncclFloat32,
			                              ncclMax, st->comm, st->stream));
			CUDA_OR_DIE(st, hx_dev_spin(HX_BURST_SPIN_US, st->stream));
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i], st->stream));
			if (hx_run_once(st, &L->p, L->state, set))
				hx_die(st, CUCO_ERR_RUN, "run failed while timing: %s",
				       L->ctx.errbuf);
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i + 1], st->stream));
		}
	} else {
		/* Back to back: nothing but the next run's poison between one run's end event
		 * and the next one's start, and no synchronisation: the device never idles
		 * while the host enqueues ahead of it. */
		for (int i = 0; i < iters; i++) {
			int set = (iters - 1 - i) % st->nsets;

			hx_before_run(st, set);
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i], st->stream));
			if (hx_run_once(st, &L->p, L->state, set))
				hx_die(st, CUCO_ERR_RUN, "run failed while timing: %s",
				       L->ctx.errbuf);
			CUDA_OR_DIE(st, cudaEventRecord(ev[2 * i + 1], st->stream));
		}
	}
	if (verify) {
		/* nothing enqueued since the last timed run: it is judged as it ended */
		stage(L, "verify");
		code = tally(c, HX_CHECK_LAST_TIMED, hx_check_last_timed(st, ver, err, errlen));
		stage(L, "bench");
	}
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	for (int i = 0; i < iters && !code; i++) {
		float ms;
		CUDA_OR_DIE(st, cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
		tm->samples[i] = ms * 1000.0f;
	}
	for (int i = 0; i < nev; i++)
		cudaEventDestroy(ev[i]);
	free(ev);
	if (code)
		return code;
	/* Every rank's own times: the per-rank medians, a workload's weighted mean, and per
	 * run the slowest rank's time, the program's. */
	{
		int nr = st->r->nranks;
		float *dall = NULL, *all = malloc(sizeof(float) * (size_t)iters * (size_t)nr);

		if (!all)
			hx_die(st, CUCO_ERR_NOMEM, "out of memory");
		CUDA_OR_DIE(st, cudaMalloc((void **)&dall,
		                           sizeof(float) * (size_t)iters * (size_t)(nr + 1)));
		CUDA_OR_DIE(st, cudaMemcpyAsync(dall, tm->samples, sizeof(float) * (size_t)iters,
		                                cudaMemcpyHostToDevice, st->stream));
		NCCL_OR_DIE(st, ncclAllGather(dall, dall + iters, (size_t)iters, ncclFloat32,
		                              st->comm, st->stream));
		CUDA_OR_DIE(st, cudaMemcpyAsync(all, dall + iters,
		                                sizeof(float) * (size_t)iters * (size_t)nr,
		                                cudaMemcpyDeviceToHost, st->stream));
		CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
		cudaFree(dall);
		rank_times(st, all, iters, tm->rank_us, &tm->weighted_us, tm->rank_w);
		for (int i = 0; i < iters; i++)
			for (int q = 0; q < nr; q++)
				tm->samples[i] = fmaxf(tm->samples[i], all[(size_t)q * iters + i]);
		free(all);
	}

	/* Host time to enqueue one run onto an idle stream (the median of a few):
	 * near median_us, the GPU waits for the host and the run is host-bound. */
	{
		float h[HOST_RUNS];
		for (int k = 0; k < HOST_RUNS; k++) {
			double t0;

			hx_before_run(st, k % st->nsets);
			CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
			t0 = hx_now();
			if (hx_run_once(st, &L->p, L->state, k % st->nsets))
				hx_die(st, CUCO_ERR_RUN, "run failed while timing: %s",
				       L->ctx.errbuf);
			h[k] = (float)((hx_now() - t0) * 1e6);
			CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
		}
		qsort(h, HOST_RUNS, sizeof(float), cmp_float);
		tm->host_us = quantile(h, HOST_RUNS, 0.5);
		hx_agree(st, &tm->host_us, 1, ncclMax);
	}
	return 0;
}

/* The first verification, before timing: a wrong program has no speed. A timing-only program
 * runs once instead. 0 or a code with err, agreed. */
static int first_verify(struct hx_state *st, struct hx_loaded *L, int verify, struct hx_checks *c,
                        struct hx_verdict *ver, char *err, size_t errlen)
{
	int code = 0;

	stage(L, "verify");
	if (verify)
		return tally(c, HX_CHECK_FIRST,
		             hx_verify(st, &L->p, L->state, L->ctx.errbuf, HX_CHECK_FIRST, 0, ver,
		                       err, errlen));
	hx_before_run(st, 0);
	if (hx_run_once(st, &L->p, L->state, 0)) {
		snprintf(err, errlen, "run: %s",
		         L->ctx.errbuf[0] ? L->ctx.errbuf : "launch failed");
		code = CUCO_ERR_RUN;
	}
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	return hx_agree_code(st, code);
}

/*
 * The checks after timing, each on inputs no earlier run has seen: runs back to back, one run per
 * further verification (--verify-runs), one run whose outputs were not poisoned first. A result
 * that moves is a race, one that stays is maybe a replay of an earlier run's. 0 or a code with
 * err, agreed.
 */
static int checks_after_timing(struct hx_state *st, struct hx_loaded *L, struct hx_checks *c,
                               struct hx_verdict *ver, char *err, size_t errlen)
{
	const char *run_err = L->ctx.errbuf;
	int code;

	/* each check under the stage's full time limit */
	stage(L, "verify");
	code =
	    tally(c, HX_CHECK_B2B, hx_back_to_back(st, &L->p, L->state, run_err, ver, err, errlen));
	for (int k = 0; !code && k < st->nfresh - HX_FRESH_SINGLE; k++) {
		stage(L, "verify");
		code = tally(
		    c, HX_CHECK_FRESH,
		    hx_verify(st, &L->p, L->state, run_err, HX_CHECK_FRESH, k, ver, err, errlen));
	}
	if (!code) {
		stage(L, "verify");
		code = tally(c, HX_CHECK_UNPOISONED,
		             hx_verify(st, &L->p, L->state, run_err, HX_CHECK_UNPOISONED, 0, ver,
		                       err, errlen));
	}
	return code;
}

/* The program's result entry, kept for the result line. */
static void report_program(struct hx_state *st, int idx, int code, const char *err,
                           const struct hx_checks *c, const struct hx_verdict *ver,
                           const struct hx_timing *tm)
{
	const struct hx_opts *o = st->o;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	int iters = tm->iters;

	result_head(&sb, o->program_names[idx], code ? cuco_result_token(code) : "ok");
	cuco_strbuf_addf(&sb, ",\"verified\":%s",
	                 !o->program_verify[idx] ? "null" : (code == 0 ? "true" : "false"));
	if (o->program_verify[idx] && (code == 0 || code == CUCO_ERR_VERIFY)) {
		cuco_strbuf_adds(&sb, ",\"rel_err\":");
		hx_json_num(&sb, ver->rel_err);
		cuco_strbuf_adds(&sb, ",\"max_abs_err\":");
		hx_json_num(&sb, ver->max_abs);
		cuco_strbuf_addf(&sb, ",\"nonfinite\":%.0f,\"mismatched\":%.0f,\"checked\":%.0f",
		                 ver->nonfinite, ver->mismatched, ver->checked);
		if (ver->worst >= 0) {
			cuco_strbuf_adds(&sb, ",\"rel_err_tensor\":");
			hx_json_str(&sb, st->layout[ver->worst].name);
		}
	}
	if (o->program_verify[idx]) {
		cuco_strbuf_addf(&sb, ",\"checks\":%d", c->passed);
		if (c->failed >= 0) {
			cuco_strbuf_adds(&sb, ",\"failed_check\":");
			hx_json_str(&sb, hx_check_name((enum hx_check)c->failed));
		}
	}
	if (code == 0 && iters > 0) {
		double mean = 0;
		float *sorted = malloc(sizeof(float) * (size_t)iters);
		if (!sorted)
			hx_die(st, CUCO_ERR_NOMEM, "out of memory");
		memcpy(sorted, tm->samples, sizeof(float) * (size_t)iters);
		qsort(sorted, (size_t)iters, sizeof(float), cmp_float);
		for (int i = 0; i < iters; i++)
			mean += tm->samples[i];
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
		hx_json_num(&sb, tm->host_us);
		cuco_strbuf_adds(&sb, ",\"rank_us\":[");
		for (int q = 0; q < st->r->nranks; q++) {
			cuco_strbuf_adds(&sb, q ? "," : "");
			hx_json_num(&sb, tm->rank_us[q]);
		}
		cuco_strbuf_addch(&sb, ']');
		if (!isnan(tm->weighted_us)) {
			cuco_strbuf_adds(&sb, ",\"rank_weight\":[");
			for (int q = 0; q < st->r->nranks; q++) {
				cuco_strbuf_adds(&sb, q ? "," : "");
				hx_json_num(&sb, tm->rank_w[q]);
			}
			cuco_strbuf_adds(&sb, "],\"weighted_us\":");
			hx_json_num(&sb, tm->weighted_us);
		}
		if (o->samples) {
			cuco_strbuf_adds(&sb, ",\"samples_us\":[");
			for (int i = 0; i < iters; i++)
				cuco_strbuf_addf(&sb, "%s%.2f", i ? "," : "", tm->samples[i]);
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
}

/* A progress line for the launcher, which names the program (or the reference run) if this
 * rank dies by a signal (launch.c). */
static void announce(const struct hx_state *st, const char *what, const char *name)
{
	char line[160];
	int k = snprintf(line, sizeof(line), "#%s %s\n", what, name);

	if (st->r->out_fd != 1 && k > 0 && write(st->r->out_fd, line, (size_t)k) < 0)
		perror("cuco-harness: progress");
}

void hx_evaluate_program(struct hx_state *st, int idx)
{
	const struct hx_opts *o = st->o;
	static struct hx_loaded L; /* large (the context's tensors): off the stack */
	struct hx_verdict ver = {.ok = 1, .worst = -1, .failed = -1};
	struct hx_checks checks = {.passed = 0, .failed = -1};
	struct hx_timing tm;
	char err[1536] = "";
	int verify = o->program_verify[idx], code;

	memset(&tm, 0, sizeof(tm));
	tm.weighted_us = NAN;
	tm.rank_us = calloc((size_t)st->r->nranks, sizeof(double));
	tm.rank_w = calloc((size_t)st->r->nranks, sizeof(double));
	if (!tm.rank_us || !tm.rank_w)
		hx_die(st, CUCO_ERR_NOMEM, "out of memory");
	hx_result_program(o->program_names[idx]);
	announce(st, "program", o->program_names[idx]);
	code = start_program(st, &L, o->program_paths[idx], 0, err, sizeof(err));
	if (!code)
		code = first_verify(st, &L, verify, &checks, &ver, err, sizeof(err));
	if (!code)
		code = bench_program(st, &L, verify, &tm, &checks, &ver, err, sizeof(err));
	if (!code && verify)
		code = checks_after_timing(st, &L, &checks, &ver, err, sizeof(err));
	report_program(st, idx, code, err, &checks, &ver, &tm);
	close_program(st, &L);
	free(tm.rank_us);
	free(tm.rank_w);
	free(tm.samples);
	hx_result_program("");
}

/* One run of the reference program on set 0 holding seed's inputs; its outputs and inouts
 * copied into out[] (allocated here). Each under the stage's full time limit. */
static void reference_run(struct hx_state *st, struct hx_loaded *L, uint64_t seed, void **out)
{
	int code = 0;

	stage(L, "reference");
	hx_set_inputs(st, 0, seed);
	/* poisoned as for any verified run: an element it leaves untouched must stay so */
	hx_poison_outputs(st, st->sets[0]);
	if (hx_run_once(st, &L->p, L->state, 0))
		code = CUCO_ERR_RUN;
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	if (hx_agree_code(st, code))
		hx_die(st, CUCO_ERR_RUN, "reference program %s: run: %s", L->path,
		       !code              ? "failed on another rank"
		       : L->ctx.errbuf[0] ? L->ctx.errbuf
		                          : "launch failed");
	for (int i = 0; i < st->ntensors; i++)
		if (hx_role_verified(st->layout[i].role)) {
			CUDA_OR_DIE(st, cudaMalloc(&out[i], st->sym_bytes[i]));
			CUDA_OR_DIE(st, cudaMemcpy(out[i], st->sets[0][i].ptr, st->layout[i].bytes,
			                           cudaMemcpyDeviceToDevice));
		}
}

void hx_reference_program(struct hx_state *st)
{
	static struct hx_loaded L;
	char err[1536] = "";
	int code;

	announce(st, "reference", st->o->reference_program);
	code = start_program(st, &L, st->o->reference_program, 1, err, sizeof(err));
	if (code)
		hx_die(st, code, "reference program %s: %s", st->o->reference_program,
		       err[0] ? err : "failed on another rank");
	reference_run(st, &L, hx_input_seed(st, 0), st->expected);
	for (int k = 0; k < st->nfresh; k++)
		reference_run(st, &L, hx_fresh_seed(st, k), st->fresh[k]);
	hx_set_inputs(st, 0, hx_input_seed(st, 0));
	close_program(st, &L);
	announce(st, "reference", "done");
}
