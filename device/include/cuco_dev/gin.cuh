/*
 * gin.cuh - thin wrappers over NCCL's GPU-initiated networking (ncclGin) so a
 * cuco program can be written for the GIN (RDMA) backend.
 *
 * GIN needs an RDMA NIC (proxy or GDAKI backend). Our machines have none: the
 * code compiles, and the harness refuses a program that asks for GIN
 * contexts where the node has none. A program should also check
 * gin_supported(ctx) on the host and gin_available(dc) on the device before
 * constructing a gin_session (ncclGin on a devcomm without contexts is
 * undefined).
 *
 * Ordering (NCCL's rules): a put's signal becomes visible at the peer only
 * after that put's payload and the payloads of earlier puts on the same
 * context to the same peer. The receiver waits on the signal (acquire) before
 * reading. flush() only makes local source buffers reusable; it does not mean
 * the data has landed remotely. Read a signal's starting value before the
 * entry barrier and wait for start + expected.
 */
#ifndef CUCO_DEV_GIN_CUH
#define CUCO_DEV_GIN_CUH

#include <cuco_dev/lsa.cuh>

namespace cuco
{

/* Host: whether the harness built this program's devcomm with GIN contexts.
 * ctx->devcomm is NULL unless the program asked for a devcomm. */
static inline bool gin_supported(const cuco_ctx *ctx)
{
	return ctx != nullptr && ctx->devcomm != nullptr && ctx->devcomm->ginContextCount > 0;
}

/* Device: whether dc has any GIN context (uniform across the grid). */
CUCO_DEV bool gin_available(const ncclDevComm &dc)
{
	return dc.ginContextCount > 0;
}

/*
 * One GIN context of dc (context index is taken modulo the devcomm's context
 * count). Peers are world ranks (ncclTeamWorld). Windows are symmetric windows
 * (cuco_tensor.win / ctx->scratch_win) and offsets are window offsets. Signals
 * and counters are indices 0..gin_signal_count-1 / gin_counter_count-1 of the
 * program's cuco_requirements. The devcomm must outlive the session.
 */
struct gin_session {
	ncclGin gin;

	__device__ gin_session(const ncclDevComm &dc, int context) : gin(dc, context) {}

	/* Called by one thread: RDMA-write bytes from (src, soff) of this rank to
	 * (dst, doff) of world rank `peer`; when it lands, add `value` to the
	 * peer's signal `sig`. */
	__device__ void put_signal_add(int peer, ncclWindow_t dst, size_t doff, ncclWindow_t src,
	                               size_t soff, size_t bytes, ncclGinSignal_t sig,
	                               uint64_t value = 1) const
	{
		gin.put(ncclTeamWorld(gin.comm), peer, dst, doff, src, soff, bytes,
		        ncclGin_SignalAdd{sig, value});
	}

	/* As put_signal_add with +1, using NCCL's SignalInc (do not mix it with
	 * SignalAdd on the same signal between resets). */
	__device__ void put_signal_inc(int peer, ncclWindow_t dst, size_t doff, ncclWindow_t src,
	                               size_t soff, size_t bytes, ncclGinSignal_t sig) const
	{
		gin.put(ncclTeamWorld(gin.comm), peer, dst, doff, src, soff, bytes,
		        ncclGin_SignalInc{sig});
	}

	/* Called by one thread: a put without a signal (later signalled puts to the
	 * same peer on this context cover it). */
	__device__ void put(int peer, ncclWindow_t dst, size_t doff, ncclWindow_t src, size_t soff,
	                    size_t bytes) const
	{
		gin.put(ncclTeamWorld(gin.comm), peer, dst, doff, src, soff, bytes);
	}

	/* Called by the whole CTA: add `value` to world rank peer's signal `sig`
	 * after this context's earlier puts to that peer. */
	__device__ void signal_add_cta(int peer, ncclGinSignal_t sig, uint64_t value = 1) const
	{
		gin.signal(ncclTeamWorld(gin.comm), peer, ncclGin_SignalAdd{sig, value},
		           ncclCoopCta());
	}

	/* Current value of this rank's signal `sig` (acquire). */
	__device__ uint64_t read_signal(ncclGinSignal_t sig) const
	{
		return gin.readSignal(sig);
	}

	/* Whole CTA / one thread: wait until this rank's signal `sig` >= least
	 * (acquire; rolling 64-bit compare). */
	__device__ void wait_signal_cta(ncclGinSignal_t sig, uint64_t least) const
	{
		gin.waitSignal(ncclCoopCta(), sig, least);
	}
	__device__ void wait_signal_thread(ncclGinSignal_t sig, uint64_t least) const
	{
		gin.waitSignal(ncclCoopThread(), sig, least);
	}

	/* Whole CTA / one thread: sources of puts issued by the group may be
	 * reused. Not remote completion. */
	__device__ void flush_cta() const
	{
		gin.flush(ncclCoopCta());
	}
	__device__ void flush_thread() const
	{
		gin.flush(ncclCoopThread());
	}

	/* Set signal `sig` (and its shadow) to 0; must not race with puts that
	 * signal it. */
	__device__ void reset_signal(ncclGinSignal_t sig) const
	{
		gin.resetSignal(sig);
	}
};

} /* namespace cuco */

#endif
