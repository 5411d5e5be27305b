/*
 * rank.c - what every rank does: join the communicator, allocate the
 * workload's tensors in symmetric windows, fill inputs and the references
 * (the workload's, or a reference program's through program.c), then hand
 * each program to program.c (requirements -> device communicator ->
 * init -> verify -> time -> verify again -> fini). Ranks agree on every
 * outcome through NCCL so they stay in step; each writes one JSON result
 * record. A rank whose CUDA context breaks writes a failure line (with the
 * results finished so far) and exits; the launcher ends its peers.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

static int load_workload(struct hx_state *st, char *err, size_t errlen)
{
	struct hx_workload *w = &st->wl;

	w->dl = dlopen(st->o->workload_so, RTLD_NOW | RTLD_LOCAL);
	if (!w->dl) {
		snprintf(err, errlen, "cannot load workload %s: %s", st->o->workload_so, dlerror());
		return CUCO_ERR_RUN;
	}
	*(void **)&w->describe = dlsym(w->dl, "cuco_workload_describe");
	*(void **)&w->generate = dlsym(w->dl, "cuco_workload_generate");
	*(void **)&w->reference = dlsym(w->dl, "cuco_workload_reference");
	*(void **)&w->rank_weight = dlsym(w->dl, "cuco_workload_rank_weight");
	*(void **)&w->attach = dlsym(w->dl, "cuco_workload_attach");
	if (!w->describe || !w->generate || !w->reference) {
		snprintf(err, errlen, "%s does not export the cuco_workload_* functions",
		         st->o->workload_so);
		return CUCO_ERR_RUN;
	}
	return 0;
}

/* The workload's own hold on the communicator, when it exports cuco_workload_attach. */
static int attach_workload(struct hx_state *st, char *err, size_t errlen)
{
	if (!st->wl.attach)
		return 0;
	if (st->wl.attach(st->comm, st->r->rank, st->r->nranks, st->device, err, errlen)) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", err[0] ? err : "no message");
		snprintf(err, errlen, "cuco_workload_attach of %s failed: %s", st->o->workload_so,
		         msg);
		return CUCO_ERR_RUN;
	}
	return 0;
}

/*
 * The role and comparison of tensor t, described for rank q, against rank 0's (t0): ranks
 * differ in sizes only, or the ranks would not verify alike or regenerate inouts in step.
 */
static int check_tensor(const struct cuco_tensor *t, const struct cuco_tensor *t0, int q, char *err,
                        size_t errlen)
{
	if (t->role < CUCO_ROLE_INPUT || t->role > CUCO_ROLE_INOUT) {
		snprintf(err, errlen, "workload tensor '%s': role %d is not a cuco_role", t->name,
		         t->role);
		return CUCO_ERR_INVALID;
	}
	if (t->compare != CUCO_COMPARE_CLOSE && t->compare != CUCO_COMPARE_EXACT) {
		snprintf(err, errlen, "workload tensor '%s': compare %d is not a cuco_compare",
		         t->name, t->compare);
		return CUCO_ERR_INVALID;
	}
	if (!(t->tolerance >= 0 && t->tolerance <= 1)) {
		snprintf(err, errlen,
		         "workload tensor '%s': tolerance %g; expected 0 (the run's) or a number "
		         "in (0, 1]",
		         t->name, t->tolerance);
		return CUCO_ERR_INVALID;
	}
	if (q > 0 &&
	    (t->role != t0->role || t->compare != t0->compare || t->tolerance != t0->tolerance)) {
		snprintf(err, errlen,
		         "workload tensor '%s': rank %d's role, compare or tolerance differs from "
		         "rank 0's; only sizes may differ between ranks",
		         t->name, q);
		return CUCO_ERR_INVALID;
	}
	return 0;
}

/* Describe every rank's tensors so windows get the same size everywhere. */
static int describe_tensors(struct hx_state *st, char *err, size_t errlen)
{
	const struct hx_opts *o = st->o;

	struct cuco_tensor t0[CUCO_MAX_TENSORS];

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
			if (check_tensor(&t[i], &t0[i], q, err, errlen))
				return CUCO_ERR_INVALID;
			if (b > st->sym_bytes[i])
				st->sym_bytes[i] = b;
			if (q == st->r->rank)
				st->layout[i] = t[i];
			if (q == 0)
				t0[i] = t[i];
			st->has_inout |= t[i].role == CUCO_ROLE_INOUT;
		}
	}
	return 0;
}

static void alloc_sets(struct hx_state *st)
{
	size_t per_set = 0;

	for (int i = 0; i < st->ntensors; i++)
		per_set += st->sym_bytes[i];
	st->nsets = st->o->rotate;
	if (st->nsets <= 0) {
		size_t want = 3 * (size_t)st->prop.l2CacheSize;
		double n = (double)((want + per_set - 1) / per_set);

		/* At least two: the back-to-back check alternates two sets (verify.c). Not
		 * where the second would take more than a quarter of the free memory. */
		if (n < 2) {
			size_t free_b = 0, total_b = 0;

			CUDA_OR_DIE(st, cudaMemGetInfo(&free_b, &total_b));
			n = per_set <= free_b / 4 ? 2 : 1;
		}
		/* every rank registers the same windows: the fewest sets any rank can take */
		hx_agree(st, &n, 1, ncclMin);
		st->nsets = n < HX_MAX_SETS ? (int)n : HX_MAX_SETS;
	}
	if (st->nsets < 1)
		st->nsets = 1;
	if (st->nsets > HX_MAX_SETS)
		st->nsets = HX_MAX_SETS;
	for (int s = 0; s < st->nsets; s++)
		for (int i = 0; i < st->ntensors; i++) {
			struct cuco_tensor *t = &st->sets[s][i];
			size_t b = (st->sym_bytes[i] + 4095) & ~(size_t)4095;

			*t = st->layout[i];
			NCCL_OR_DIE(st, ncclMemAlloc(&t->ptr, b));
			NCCL_OR_DIE(st, ncclCommWindowRegister(st->comm, t->ptr, b, &t->win,
			                                       NCCL_WIN_COLL_SYMMETRIC));
			t->win_offset = 0;
			if (t->role == CUCO_ROLE_INOUT)
				CUDA_OR_DIE(st, cudaMalloc(&st->pristine[s][i], st->sym_bytes[i]));
		}
}

static void free_sets(struct hx_state *st)
{
	for (int s = 0; s < st->nsets; s++)
		for (int i = 0; i < st->ntensors; i++) {
			ncclCommWindowDeregister(st->comm, st->sets[s][i].win);
			ncclMemFree(st->sets[s][i].ptr);
			cudaFree(st->pristine[s][i]);
		}
}

/*
 * The expected outputs for set 0's inputs as they are now (generated from seed) into out[],
 * allocated here, with the workload's reference; it communicates nothing. An inout starts as
 * generated and the reference turns it into the expected contents in place.
 */
static void reference(struct hx_state *st, uint64_t seed, void **out)
{
	struct cuco_tensor ref[CUCO_MAX_TENSORS];

	memcpy(ref, st->sets[0], sizeof(ref));
	for (int i = 0; i < st->ntensors; i++)
		if (hx_role_verified(ref[i].role)) {
			CUDA_OR_DIE(st, cudaMalloc(&out[i], st->sym_bytes[i]));
			if (ref[i].role == CUCO_ROLE_INOUT)
				CUDA_OR_DIE(st,
				            cudaMemcpyAsync(out[i], ref[i].ptr, ref[i].bytes,
				                            cudaMemcpyDeviceToDevice, st->stream));
			ref[i].ptr = out[i];
			ref[i].win = NULL;
		}
	if (st->wl.reference(&st->o->shape, st->r->rank, st->r->nranks, seed, ref, st->ntensors,
	                     st->stream))
		hx_die(st, CUCO_ERR_RUN, "workload reference failed: %s",
		       cudaGetErrorString(cudaGetLastError()));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
}

int hx_rank_main(const struct hx_opts *o, const struct hx_rank *r, const ncclUniqueId *id)
{
	struct hx_state st;
	char err[1024] = "";
	int ndev = 0, code;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	memset(&st, 0, sizeof(st));
	for (int s = 0; s < HX_MAX_SETS; s++)
		st.set_seed[s] = HX_SEED_NONE;
	st.o = o;
	st.r = r;
	hx_result_run(o->workload_name, o->shape.name, r->nranks);
	hx_watchdog_start(r->rank, r->out_fd, o->timeout_s);
	hx_stage("init");
	CUDA_OR_DIE(&st, cudaGetDeviceCount(&ndev));
	if (ndev < 1)
		hx_die(&st, CUCO_ERR_NO_GPU, "no CUDA GPU visible to rank %d", r->rank);
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
			hx_die(
			    &st, CUCO_ERR_UNSUPPORTED,
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
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dagree, HX_AGREE_MAX * sizeof(double)));
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dcmp,
	                            2 * HX_MAX_TARGETS * CUCO_MAX_TENSORS * sizeof(*st.dcmp)));
	CUDA_OR_DIE(&st, cudaDeviceGetLimit(&st.l2_persist_limit, cudaLimitPersistingL2CacheSize));
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dsamples, 2048 * sizeof(float)));

	hx_stage("load");
	code = load_workload(&st, err, sizeof(err));
	if (hx_agree_code(&st, code))
		hx_die(&st, code ? code : CUCO_ERR_RUN, "%s",
		       err[0] ? err : "failed on another rank");
	/* attach before describe: the workload may size its tensors with what it learns */
	code = attach_workload(&st, err, sizeof(err));
	if (!code)
		code = describe_tensors(&st, err, sizeof(err));
	if (hx_agree_code(&st, code))
		hx_die(&st, code ? code : CUCO_ERR_RUN, "%s",
		       err[0] ? err : "failed on another rank");

	hx_stage("inputs");
	alloc_sets(&st);
	for (int s = 0; s < st.nsets; s++)
		hx_fill_inputs(&st, s, hx_input_seed(&st, s));
	hx_stage("reference");
	st.nfresh = hx_nfresh(&st);
	if (o->reference_program) {
		hx_reference_program(&st);
	} else {
		/* Each check after timing runs on inputs no earlier run has seen (a program that
		 * replays an earlier result, or reads what an earlier run left, fails it): a
		 * reference per check, each under the stage's full time limit. */
		for (int k = 0; k < st.nfresh; k++) {
			hx_stage("reference");
			hx_set_inputs(&st, 0, hx_fresh_seed(&st, k));
			reference(&st, hx_fresh_seed(&st, k), st.fresh[k]);
		}
		hx_stage("reference");
		hx_set_inputs(&st, 0, hx_input_seed(&st, 0));
		reference(&st, hx_input_seed(&st, 0), st.expected);
	}

	for (int i = 0; i < o->nprograms; i++)
		hx_evaluate_program(&st, i);

	hx_stage("finish");
	cuco_strbuf_adds(&out, "{\"harness\":1,\"status\":\"ok\",\"error_code\":0,\"workload\":");
	hx_json_str(&out, o->workload_name);
	cuco_strbuf_adds(&out, ",\"shape\":");
	hx_json_str(&out, o->shape.name);
	cuco_strbuf_addf(&out, ",\"rank\":%d,\"ranks\":%d,\"gpu\":", r->rank, r->nranks);
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
	cuco_strbuf_addf(&out, ",\"seed\":%llu,\"tolerance\":%g,\"reference\":\"%s\"",
	                 (unsigned long long)o->seed, o->tolerance,
	                 o->reference_program ? "program" : "workload");
	cuco_strbuf_adds(&out, ",\"programs\":[");
	hx_result_copy(&out);
	cuco_strbuf_adds(&out, "]}\n");
	if (write(r->out_fd, out.buf, out.len) < 0) /* every rank's: exactly one record each */
		perror("cuco-harness: writing result");
	cuco_strbuf_release(&out);

	for (int i = 0; i < st.ntensors; i++) {
		cudaFree(st.expected[i]);
		for (int k = 0; k < st.nfresh; k++)
			cudaFree(st.fresh[k][i]);
	}
	free_sets(&st);
	cudaFree(st.dagree);
	cudaFree(st.dcmp);
	cudaFree(st.dsamples);
	ncclCommDestroy(st.comm);
	return 0;
}
