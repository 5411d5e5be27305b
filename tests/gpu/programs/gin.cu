// cuco-directive: {"backend":"gin","placement":"sequential","sync_scope":"grid","issuer":"cta","granularity":"whole","knobs":{"comm_ctas":1,"threads":128}}
// gin.cu - an all-gather over GIN (put with a signal per peer, wait for the
// peers' signals). On a node without a GIN-capable network (no RDMA NIC) the
// harness must refuse it at set-up as `unsupported`. It moves data only (no
// GEMM), so where GIN exists it runs and then fails verification as `wrong`.
#include <cuco/program.h>
#include <cuco_dev/gin.cuh>
#include <cuco_dev/launch.cuh>

struct gin_state {
	struct cuco_ctx *ctx;
	uint64_t epoch;
};

// EVOLVE-BLOCK-START
__global__ void gin_allgather(ncclDevComm dc, ncclWindow_t win, size_t block_bytes, int rank,
			      int nranks, uint64_t epoch)
{
	cuco::gin_session g(dc, 0);
	for (int p = 0; p < nranks; p++)
		if (p != rank)
			g.put_signal_add(p, win, (size_t)rank * block_bytes, win,
					 (size_t)rank * block_bytes, block_bytes, 0, 1);
	g.wait_signal_cta(0, epoch * (uint64_t)(nranks - 1));
	g.flush_cta();
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	struct gin_state *st = (struct gin_state *)p;
	long long M = cuco_shape_get(st->ctx->shape, "M", 0), N = cuco_shape_get(st->ctx->shape, "N", 0);
	size_t block = (size_t)(M * (N / st->ctx->nranks)) * 2;
	st->epoch++;
	gin_allgather<<<1, 128, 0, s>>>(*st->ctx->devcomm, t[2].win, block, st->ctx->rank,
					st->ctx->nranks, st->epoch);
	return cudaPeekAtLastError() != cudaSuccess;
}
// EVOLVE-BLOCK-END

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	req->devcomm = 1;
	req->gin_context_count = 1;
	req->gin_signal_count = 1;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	static struct gin_state st;
	st.ctx = ctx;
	st.epoch = 0;
	*out = &st;
	return 0;
}

extern "C" void cuco_program_fini(void *p)
{
	(void)p;
}
