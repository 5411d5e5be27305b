// cuco-directive: {"backend":"lsa","placement":"specialized","sync_scope":"cta","issuer":"cta","granularity":"tile","knobs":{"comm_ctas":8,"threads":1024,"chunks":1,"tile_m":128,"tile_n":256,"stages":4,"streams":1,"sm_split":8}}
// gemm_allgather.cu.in - the program template from which cuco realises any valid
// directive of gemm_allgather (C_r = A * B_r into this rank's block of C, then every
// rank's block into every rank's C; C = R blocks of [M, N/R]). The realiser replaces
// every double-braced placeholder below (list and defaults: docs/overlap.md); placement and backend pick
// a code path through the CUCO_* defines, built from cuco_dev/overlap.cuh.
#include <cuda_bf16.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuco/program.h>
#include <cuco_dev/gemm.cuh>
#include <cuco_dev/launch.cuh>
#include <cuco_dev/lsa.cuh>
#include <cuco_dev/overlap.cuh>

// Directive values as numbers, so the defines below can be compared in #if.
#define CUCO_BACKEND_lsa 1
#define CUCO_BACKEND_gin 2
#define CUCO_BACKEND_ce 3
#define CUCO_PLACEMENT_sequential 1
#define CUCO_PLACEMENT_stream_overlap 2
#define CUCO_PLACEMENT_fused_producer 3
#define CUCO_PLACEMENT_fused_consumer 4
#define CUCO_PLACEMENT_specialized 5
#define CUCO_GRANULARITY_whole 1
#define CUCO_GRANULARITY_chunk 2
#define CUCO_GRANULARITY_tile 3
#define CUCO_SYNC_SCOPE_grid 1
#define CUCO_SYNC_SCOPE_cta 2
#define CUCO_SYNC_SCOPE_warp 3
#define CUCO_SYNC_SCOPE_thread 4
#define CUCO_ISSUER_thread 1
#define CUCO_ISSUER_warp 2
#define CUCO_ISSUER_cta 3

// EVOLVE-BLOCK-START
// The directive, as defines (a realiser substitutes every placeholder).
#define CUCO_BACKEND CUCO_BACKEND_lsa
#define CUCO_PLACEMENT CUCO_PLACEMENT_specialized
#define CUCO_SYNC_SCOPE CUCO_SYNC_SCOPE_cta
#define CUCO_ISSUER CUCO_ISSUER_cta
#define CUCO_GRANULARITY CUCO_GRANULARITY_tile
#define CUCO_COMM_CTAS 8 // CTAs of the LSA comm kernel (specialized: at most sm_split)
#define CUCO_THREADS 1024     // threads per comm CTA
#define CUCO_CHUNKS 1       // row chunks (stream_overlap; specialized with chunk granularity)
#define CUCO_TILE_M 128       // must be 128: the GEMM's CTA tile height
#define CUCO_TILE_N 256       // 256 (when N/R % 256 == 0, else 128) or 128: GEMM tile width
#define CUCO_STAGES 4       // informative: the GEMM's smem pipeline is fixed (4 or 6)
#define CUCO_STREAMS 1     // comm streams of stream_overlap (chunk i on stream i % streams)
#define CUCO_SM_SPLIT 8   // SMs kept from the GEMM for comm; 0 = program decides

#if CUCO_BACKEND == CUCO_BACKEND_gin
#error "gin backend: no RDMA NIC on our NVLink nodes; gemm_allgather realises lsa and ce only"
#endif
#if CUCO_PLACEMENT == CUCO_PLACEMENT_fused_consumer
#error "fused_consumer fits allgather_gemm (the GEMM pulls A's rows), not gemm_allgather"
#endif
#if CUCO_BACKEND == CUCO_BACKEND_ce && CUCO_PLACEMENT != CUCO_PLACEMENT_sequential && \
	CUCO_PLACEMENT != CUCO_PLACEMENT_stream_overlap
#error "ce backend: copies are stream operations, so only sequential or stream_overlap"
#endif
#if CUCO_TILE_M != 128
#error "tile_m: the wgmma GEMM's CTA tile is 128 rows"
#endif
#if CUCO_TILE_N != 128 && CUCO_TILE_N != 256
#error "tile_n: the wgmma GEMM's CTA tile is 128 or 256 columns"
#endif
#if CUCO_THREADS < 32 || CUCO_THREADS > 1024 || CUCO_THREADS % 32 != 0
#error "threads: 32..1024, a multiple of 32"
#endif

#if CUCO_PLACEMENT == CUCO_PLACEMENT_sequential
#define GA_CHUNKS 1
#elif CUCO_PLACEMENT == CUCO_PLACEMENT_specialized // one GEMM; chunk granularity = counter bands
#define GA_CHUNKS 1
#elif CUCO_PLACEMENT == CUCO_PLACEMENT_fused_producer
#define GA_CHUNKS 1
#else
#define GA_CHUNKS CUCO_CHUNKS
#endif
#define GA_MAX_STREAMS 4
#define GA_BARRIER_BASE CUCO_OVERLAP_BARRIERS // sequential lsa: one barrier per comm CTA from here

struct ga_state {
	struct cuco_ctx *ctx;
	int M, N, K, Nr;
	cuco::overlap_cache cache;
	int ncomm;                          // comm streams in use
	cudaStream_t comm[GA_MAX_STREAMS];  // comm streams (high priority, non-blocking)
	cudaEvent_t ev_start, ev_entry;
	cudaEvent_t ev_chunk[CUCO_OVERLAP_MAX_CHUNKS];
	cudaEvent_t ev_done[GA_MAX_STREAMS];
	uint64_t *flags; // specialized: per-tile / per-band counters (local memory, zeroed once)
	uint64_t epoch;  // runs so far; counters reach epoch * tiles_per_counter
};

// GEMM CTAs: all SMs but the ones kept for comm kernels running beside it.
static inline __attribute__((unused)) int ga_max_ctas(const struct ga_state *st)
{
	int split = CUCO_SM_SPLIT;
#if CUCO_BACKEND == CUCO_BACKEND_lsa && \
	(CUCO_PLACEMENT == CUCO_PLACEMENT_stream_overlap || CUCO_PLACEMENT == CUCO_PLACEMENT_specialized)
	if (split == 0)
		split = CUCO_COMM_CTAS;
#endif
	if (split <= 0)
		return 0;
	if (split > st->ctx->sm_count - 1)
		split = st->ctx->sm_count - 1;
	return st->ctx->sm_count - split;
}

// Push bytes [boff, boff + bytes) of this rank's block of C to every peer's C, on stream s.
static inline __attribute__((unused)) int ga_push(struct ga_state *st, const cuco::overlap_set *set, const __nv_bfloat16 *mine,
		   size_t boff, size_t bytes, cudaStream_t s)
{
	const struct cuco_ctx *ctx = st->ctx;
#if CUCO_BACKEND == CUCO_BACKEND_ce
	int me = ctx->devcomm->lsaRank;
	for (int i = 1; i < ctx->devcomm->lsaSize; i++) {
		int p = (me + i) % ctx->devcomm->lsaSize;
		CUCO_CUDA_TRY(cudaMemcpyAsync(set->peer_c[p] + boff, (const char *)mine + boff, bytes,
					      cudaMemcpyDeviceToDevice, s),
			      ctx);
	}
#else
	(void)mine;
	cuco::overlap_push_kernel<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, s>>>(*ctx->devcomm, set->cwin,
									 set->coff + boff, bytes);
	CUCO_LAUNCH_TRY(ctx);
#endif
	return 0;
}

static inline __attribute__((unused)) int ga_gemm(struct ga_state *st, const cuco::gemm_bf16_plan *p, cudaStream_t s)
{
	cudaError_t e = cuco::gemm_bf16_run(p, s);
	if (e != cudaSuccess) {
		CUCO_ERRF(st->ctx, "gemm_bf16_run: %s", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}

// Fork the comm streams off s: they start after everything already on s.
static inline __attribute__((unused)) int ga_fork(struct ga_state *st, cudaStream_t s)
{
	CUCO_CUDA_TRY(cudaEventRecord(st->ev_start, s), st->ctx);
	for (int j = 0; j < st->ncomm; j++)
		CUCO_CUDA_TRY(cudaStreamWaitEvent(st->comm[j], st->ev_start, 0), st->ctx);
	// Peers may push into our C only after our earlier stream work (the harness
	// poisoning C, the previous run's readers) is done: a relaxed rendezvous.
	if (cuco::overlap_barrier(st->ctx, CUCO_OVERLAP_BARRIER_ENTRY, 0, st->comm[0]))
		return 1;
	CUCO_CUDA_TRY(cudaEventRecord(st->ev_entry, st->comm[0]), st->ctx);
	for (int j = 1; j < st->ncomm; j++)
		CUCO_CUDA_TRY(cudaStreamWaitEvent(st->comm[j], st->ev_entry, 0), st->ctx);
	return 0;
}

// Join the comm streams back into s, then the exit barrier: when it returns on
// every rank, every peer's pushes into our C are complete and visible.
static inline __attribute__((unused)) int ga_join(struct ga_state *st, cudaStream_t s)
{
	for (int j = 0; j < st->ncomm; j++) {
		CUCO_CUDA_TRY(cudaEventRecord(st->ev_done[j], st->comm[j]), st->ctx);
		CUCO_CUDA_TRY(cudaStreamWaitEvent(s, st->ev_done[j], 0), st->ctx);
	}
	return cuco::overlap_barrier(st->ctx, CUCO_OVERLAP_BARRIER_EXIT, 1, s);
}

static int ga_run(struct ga_state *st, const struct cuco_tensor *t, cudaStream_t s)
{
	const struct cuco_ctx *ctx = st->ctx;
	const __nv_bfloat16 *A = (const __nv_bfloat16 *)t[0].ptr;
	const __nv_bfloat16 *B = (const __nv_bfloat16 *)t[1].ptr;
	__nv_bfloat16 *mine = (__nv_bfloat16 *)t[2].ptr + (size_t)ctx->rank * st->M * st->Nr;
	const size_t row_bytes = (size_t)st->Nr * sizeof(__nv_bfloat16);
	const cuco::overlap_set *set =
		cuco::overlap_cache_get(ctx, &st->cache, t, A, B, mine, st->M, st->Nr, st->K, GA_CHUNKS,
					ga_max_ctas(st), CUCO_BACKEND == CUCO_BACKEND_ce, CUCO_TILE_N);
	if (!set)
		return 1;
	const int chunks = st->cache.chunks;
	(void)row_bytes;
	(void)chunks;
	st->epoch++;

#if CUCO_PLACEMENT == CUCO_PLACEMENT_sequential
	// GEMM, then the whole block to every peer, all on s.
	if (ga_gemm(st, &set->plan[0], s))
		return 1;
#if CUCO_BACKEND == CUCO_BACKEND_ce
	if (cuco::overlap_barrier(ctx, CUCO_OVERLAP_BARRIER_ENTRY, 0, s))
		return 1;
	if (ga_push(st, set, mine, 0, (size_t)st->M * row_bytes, s))
		return 1;
	return cuco::overlap_barrier(ctx, CUCO_OVERLAP_BARRIER_EXIT, 1, s);
#else
	cuco::overlap_allgather_kernel<<<CUCO_COMM_CTAS, CUCO_THREADS, 0, s>>>(
		*ctx->devcomm, set->cwin, set->coff, (size_t)st->M * row_bytes, GA_BARRIER_BASE);
	CUCO_LAUNCH_TRY(ctx);
	return 0;
#endif

#elif CUCO_PLACEMENT == CUCO_PLACEMENT_stream_overlap
	// GEMM chunk i on s, event; comm stream i % streams waits for it and pushes chunk i.
	(void)chunks;
	if (ga_fork(st, s))
		return 1;
	for (int i = 0; i < chunks; i++) {
		cudaStream_t c = st->comm[i % st->ncomm];
		if (ga_gemm(st, &set->plan[i], s))
			return 1;
		CUCO_CUDA_TRY(cudaEventRecord(st->ev_chunk[i], s), ctx);
		CUCO_CUDA_TRY(cudaStreamWaitEvent(c, st->ev_chunk[i], 0), ctx);
		size_t boff = (size_t)set->chunk_row0[i] * row_bytes;
		size_t bytes = (size_t)(set->chunk_row0[i + 1] - set->chunk_row0[i]) * row_bytes;
		if (ga_push(st, set, mine, boff, bytes, c))
			return 1;
	}
	return ga_join(st, s);

#elif CUCO_PLACEMENT == CUCO_PLACEMENT_fused_producer
	// The GEMM's epilogue stores every finished tile into every peer's C.
	(void)chunks;
	if (cuco::overlap_barrier(ctx, CUCO_OVERLAP_BARRIER_ENTRY, 0, s))
		return 1;
	cuco::overlap_push_epilogue epi;
	epi.c_local = (const char *)mine;
	epi.win = set->cwin;
	epi.c_off = set->coff;
	epi.ldc = st->Nr;
	epi.lsa_rank = ctx->devcomm->lsaRank;
	epi.lsa_size = ctx->devcomm->lsaSize;
	cudaError_t e = cuco::gemm_bf16_run_epilogue(&set->plan[0], s, epi);
	if (e != cudaSuccess) {
		CUCO_ERRF(ctx, "gemm_bf16_run_epilogue: %s", cudaGetErrorString(e));
		return 1;
	}
	return cuco::overlap_barrier(ctx, CUCO_OVERLAP_BARRIER_EXIT, 1, s);

#elif CUCO_PLACEMENT == CUCO_PLACEMENT_specialized
	// GEMM on the SMs left over, publishing tiles through counters; a comm kernel on
	// the kept SMs (another stream) waits for them and pushes finished tiles / bands.
	const cuco::gemm_bf16_plan *p = &set->plan[0];
	cuco::gemm_bf16_tile_info ti = cuco::gemm_bf16_tiles(p);
	cuco::overlap_tile_order o;
	o.tiles_m = ti.tiles_m;
	o.tiles_n = ti.tiles_n;
	o.tiles = ti.tiles;
	o.group_m = p->group_m < 1 ? 1 : p->group_m;
	o.start_tile = p->start_tile;
	o.tile_rows = ti.tile_m;
	o.tile_cols = ti.tile_n;
#if CUCO_GRANULARITY == CUCO_GRANULARITY_chunk
	int bands = CUCO_CHUNKS < 1 ? 1 : (CUCO_CHUNKS > ti.tiles_m ? ti.tiles_m : CUCO_CHUNKS);
	o.unit_rows_tiles = (ti.tiles_m + bands - 1) / bands;
	o.units = (ti.tiles_m + o.unit_rows_tiles - 1) / o.unit_rows_tiles;
#else
	(void)chunks;
	o.unit_rows_tiles = 0;
	o.units = ti.tiles;
#endif
	int kept = ctx->sm_count - (p->ctas < ctx->sm_count ? p->ctas : ctx->sm_count - 1);
	int grid = CUCO_COMM_CTAS < kept ? CUCO_COMM_CTAS : kept;
	if (ga_fork(st, s))
		return 1;
	// The GEMM first: if it cannot be launched, nothing is left spinning for it.
	cuco::overlap_signal_epilogue epi;
	epi.flags = st->flags;
	epi.tiles_n = ti.tiles_n;
	epi.unit_rows_tiles = o.unit_rows_tiles;
	cudaError_t e = cuco::gemm_bf16_run_epilogue(p, s, epi);
	if (e != cudaSuccess) {
		CUCO_ERRF(ctx, "gemm_bf16_run_epilogue: %s", cudaGetErrorString(e));
		return 1;
	}
	cuco::overlap_tile_comm_kernel<<<grid, CUCO_THREADS, 0, st->comm[0]>>>(
		*ctx->devcomm, (const char *)mine, set->cwin, set->coff, st->Nr, o, st->flags, st->epoch);
	CUCO_LAUNCH_TRY(ctx);
	return ga_join(st, s);
#else
#error "unknown placement"
#endif
}
// EVOLVE-BLOCK-END

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	cuco::require_lsa(req, GA_BARRIER_BASE + CUCO_COMM_CTAS);
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	struct ga_state *st = (struct ga_state *)calloc(1, sizeof(*st));
	int least, greatest;

	if (!st) {
		CUCO_ERRF(ctx, "out of memory");
		return 1;
	}
	*out = st;
	st->ctx = ctx;
	st->M = (int)cuco_shape_get(ctx->shape, "M", 0);
	st->N = (int)cuco_shape_get(ctx->shape, "N", 0);
	st->K = (int)cuco_shape_get(ctx->shape, "K", 0);
	st->Nr = st->N / ctx->nranks;
	if (ctx->devcomm == NULL || ctx->devcomm->lsaSize != ctx->nranks ||
	    ctx->nranks > CUCO_LSA_MAX_PEERS) {
		CUCO_ERRF(ctx, "needs a devcomm whose LSA team is all %d ranks (at most %d)",
			  ctx->nranks, CUCO_LSA_MAX_PEERS);
		return 1;
	}
	if (st->M % 128 || st->Nr % 128 || st->K % 64) {
		CUCO_ERRF(ctx, "shape M=%d N/R=%d K=%d: the GEMM needs M %% 128, N/R %% 128, K %% 64 == 0",
			  st->M, st->Nr, st->K);
		return 1;
	}
	if (cuco::overlap_cache_init(ctx, &st->cache))
		return 1;
#if CUCO_PLACEMENT == CUCO_PLACEMENT_specialized
	if (cuco::overlap_preload<cuco::overlap_signal_epilogue>(ctx))
		return 1;
#elif CUCO_PLACEMENT == CUCO_PLACEMENT_fused_producer
	if (cuco::overlap_preload<cuco::overlap_push_epilogue>(ctx))
		return 1;
#else
	if (cuco::overlap_preload<cuco::gemm_no_epilogue>(ctx))
		return 1;
#endif
	st->ncomm = CUCO_STREAMS < 1 ? 1 : (CUCO_STREAMS > GA_MAX_STREAMS ? GA_MAX_STREAMS : CUCO_STREAMS);
	CUCO_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest), ctx);
	for (int j = 0; j < st->ncomm; j++)
		CUCO_CUDA_TRY(cudaStreamCreateWithPriority(&st->comm[j], cudaStreamNonBlocking, greatest),
			      ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_start, cudaEventDisableTiming), ctx);
	CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_entry, cudaEventDisableTiming), ctx);
	for (int i = 0; i < CUCO_OVERLAP_MAX_CHUNKS; i++)
		CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_chunk[i], cudaEventDisableTiming), ctx);
	for (int j = 0; j < GA_MAX_STREAMS; j++)
		CUCO_CUDA_TRY(cudaEventCreateWithFlags(&st->ev_done[j], cudaEventDisableTiming), ctx);
	{
		size_t n = (size_t)(st->M / 128) * (st->Nr / 128) + 1;
		CUCO_CUDA_TRY(cudaMalloc((void **)&st->flags, n * sizeof(uint64_t)), ctx);
		CUCO_CUDA_TRY(cudaMemset(st->flags, 0, n * sizeof(uint64_t)), ctx);
	}
	// Plans (and, for ce, peer addresses) of input set 0 now, outside any timed run.
	{
		const struct cuco_tensor *t = ctx->tensors;
		__nv_bfloat16 *mine = (__nv_bfloat16 *)t[2].ptr + (size_t)ctx->rank * st->M * st->Nr;
		if (!cuco::overlap_cache_get(ctx, &st->cache, t, (const __nv_bfloat16 *)t[0].ptr,
					     (const __nv_bfloat16 *)t[1].ptr, mine, st->M, st->Nr, st->K,
					     GA_CHUNKS, ga_max_ctas(st), CUCO_BACKEND == CUCO_BACKEND_ce,
					     CUCO_TILE_N))
			return 1;
	}
	return 0;
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *tensors, cudaStream_t stream)
{
	return ga_run((struct ga_state *)p, tensors, stream);
}

extern "C" void cuco_program_fini(void *p)
{
	struct ga_state *st = (struct ga_state *)p;

	if (!st)
		return;
	cudaDeviceSynchronize();
	for (int j = 0; j < GA_MAX_STREAMS; j++) {
		if (st->comm[j])
			cudaStreamDestroy(st->comm[j]);
		if (st->ev_done[j])
			cudaEventDestroy(st->ev_done[j]);
	}
	for (int i = 0; i < CUCO_OVERLAP_MAX_CHUNKS; i++)
		if (st->ev_chunk[i])
			cudaEventDestroy(st->ev_chunk[i]);
	if (st->ev_start)
		cudaEventDestroy(st->ev_start);
	if (st->ev_entry)
		cudaEventDestroy(st->ev_entry);
	if (st->flags)
		cudaFree(st->flags);
	cuco::overlap_cache_release(&st->cache);
	free(st);
}
