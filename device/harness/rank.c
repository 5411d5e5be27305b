/*
 * rank.c - what every rank does: join the communicator, allocate the
 * workload's tensors in symmetric windows, fill inputs and the references,
 * then hand each program to program.c (requirements -> device communicator ->
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

#include "rank.h"

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
	if (!w->describe || !w->generate || !w->reference) {
		snprintf(err, errlen, "%s does not export the cuco_workload_* functions",
		         st->o->workload_so);
		return CUCO_ERR_RUN;
	}
	return 0;
}

/* Describe every rank's tensors so windows get the same size everywhere. */
static int describe_tensors(struct hx_state *st, char *err, size_t errlen)
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

static void alloc_sets(struct hx_state *st)
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
		}
}

static void free_sets(struct hx_state *st)
{
	for (int s = 0; s < st->nsets; s++)
		for (int i = 0; i < st->ntensors; i++) {
			ncclCommWindowDeregister(st->comm, st->sets[s][i].win);
			ncclMemFree(st->sets[s][i].ptr);
		}
}

uint64_t hx_input_seed(const struct hx_state *st, int set)
{
	return st->o->seed + 7919u * (uint64_t)set;
}

uint64_t hx_fresh_seed(const struct hx_state *st)
{
	return st->o->seed + 7919u * (uint64_t)HX_MAX_SETS;
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
}

/*
 * The expected outputs for set 0's inputs as they are now (generated from seed) into out[],
 * allocated here, with the workload's reference; it communicates nothing.
 */
static void reference(struct hx_state *st, uint64_t seed, void **out)
{
	struct cuco_tensor ref[CUCO_MAX_TENSORS];

	memcpy(ref, st->sets[0], sizeof(ref));
	for (int i = 0; i < st->ntensors; i++)
		if (ref[i].role == CUCO_ROLE_OUTPUT) {
			CUDA_OR_DIE(st, cudaMalloc(&out[i], st->sym_bytes[i]));
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
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dcmp, 2 * CUCO_MAX_TENSORS * sizeof(*st.dcmp)));
	CUDA_OR_DIE(&st, cudaDeviceGetLimit(&st.l2_persist_limit, cudaLimitPersistingL2CacheSize));
	CUDA_OR_DIE(&st, cudaMalloc((void **)&st.dsamples, 2048 * sizeof(float)));

	hx_stage("load");
	code = load_workload(&st, err, sizeof(err));
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
	/* The verifications after timing run on inputs no earlier run has seen (a program that
	 * replays an earlier result fails them): their reference too, when any program is verified.
	 */
	for (int i = 0; i < o->nprograms; i++)
		if (o->program_verify[i] && o->verify_runs > 1) {
			hx_fill_inputs(&st, 0, hx_fresh_seed(&st));
			reference(&st, hx_fresh_seed(&st), st.fresh);
			hx_fill_inputs(&st, 0, hx_input_seed(&st, 0));
			break;
		}
	reference(&st, hx_input_seed(&st, 0), st.expected);

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
	cuco_strbuf_addf(&out, ",\"seed\":%llu,\"tolerance\":%g,\"programs\":[",
	                 (unsigned long long)o->seed, o->tolerance);
	hx_result_copy(&out);
	cuco_strbuf_adds(&out, "]}\n");
	if (write(r->out_fd, out.buf, out.len) < 0) /* every rank's: exactly one record each */
		perror("cuco-harness: writing result");
	cuco_strbuf_release(&out);

	for (int i = 0; i < st.ntensors; i++) {
		cudaFree(st.expected[i]);
		cudaFree(st.fresh[i]);
	}
	free_sets(&st);
	cudaFree(st.dagree);
	cudaFree(st.dcmp);
	cudaFree(st.dsamples);
	ncclCommDestroy(st.comm);
	return 0;
}
