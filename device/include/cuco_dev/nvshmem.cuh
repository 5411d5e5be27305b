/*
 * nvshmem.cuh - the nvshmem backend: device-side NVSHMEM primitives for cuco
 * programs and the host glue through which the harness bootstraps NVSHMEM in
 * the program's own module.
 *
 * NVSHMEM keeps its device state in the module that links libnvshmem_device.a
 * (relocatable device code), here the program's shared object; its init
 * (nvshmemi_init_thread, in that static library) hands the host library's
 * state to that module. So the init must run from code compiled into the
 * program: the weak extern "C" hooks at the end of this header, which the
 * harness finds with dlsym when the program asks for NVSHMEM
 * (cuco_requirements.nvshmem). The harness then allocates every tensor on
 * NVSHMEM's symmetric heap through the program's hooks: tensor.ptr is a
 * symmetric address (the same offset on every PE), tensor.win is NULL, and a
 * peer's copy is reached with the functions below, never over an NCCL
 * window. The cascade compiles a program that includes this header with
 * -rdc=true and links NVSHMEM (src/cascade/compile.c).
 *
 * Ordering (OpenSHMEM's rules): a put-with-signal updates the peer's signal
 * only after the put's data has landed there; the receiver waits for the
 * signal (signal_wait_ge) before reading. fence() orders this PE's earlier
 * puts to each PE before its later ones; quiet() completes them all (after
 * it the source may be reused and the data is visible at the peers). Never
 * multicast: the hooks set NVSHMEM_DISABLE_NVLS=1 before init and nothing
 * here calls NVSHMEM's multimem functions.
 */
#ifndef CUCO_DEV_NVSHMEM_CUH
#define CUCO_DEV_NVSHMEM_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cuco/program.h>

#ifndef CUCO_DEV
#define CUCO_DEV __device__ __forceinline__
#endif

namespace cuco
{

/* ---------------------------------------------------------------- identity */

/* This PE and the PE count (world team); the harness makes PE == rank. */
CUCO_DEV int shmem_pe()
{
	return nvshmem_my_pe();
}
CUCO_DEV int shmem_npes()
{
	return nvshmem_n_pes();
}

/*
 * A peer's copy of symmetric address p as a plain pointer, loadable and
 * storable from this GPU (NVLink P2P, or this PE's own), or NULL where the
 * peer is reachable only through a network transport.
 */
CUCO_DEV void *shmem_peer_ptr(const void *p, int pe)
{
	return nvshmem_ptr(p, pe);
}

/* ---------------------------------------------------------------- put with signal */

/*
 * Copy bytes from src (this PE) to dst (a symmetric address) on PE pe, then
 * apply sig_op (NVSHMEM_SIGNAL_ADD or NVSHMEM_SIGNAL_SET) with value to the
 * symmetric signal word sig on that PE once the data has landed. Non-blocking:
 * src may be reused only after quiet(). The issuer is named in the suffix and
 * every thread of that group calls it with the same arguments.
 */
CUCO_DEV void put_signal_thread(void *dst, const void *src, size_t bytes, uint64_t *sig,
                                uint64_t value, int sig_op, int pe)
{
	nvshmem_putmem_signal_nbi(dst, src, bytes, sig, value, sig_op, pe);
}

CUCO_DEV void put_signal_warp(void *dst, const void *src, size_t bytes, uint64_t *sig,
                              uint64_t value, int sig_op, int pe)
{
	nvshmemx_putmem_signal_nbi_warp(dst, src, bytes, sig, value, sig_op, pe);
}

CUCO_DEV void put_signal_cta(void *dst, const void *src, size_t bytes, uint64_t *sig,
                             uint64_t value, int sig_op, int pe)
{
	nvshmemx_putmem_signal_nbi_block(dst, src, bytes, sig, value, sig_op, pe);
}

/* A put without a signal (a later signalled put to the same PE, after fence(), covers it). */
CUCO_DEV void put_thread(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmem_putmem_nbi(dst, src, bytes, pe);
}

CUCO_DEV void put_warp(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmemx_putmem_nbi_warp(dst, src, bytes, pe);
}

CUCO_DEV void put_cta(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmemx_putmem_nbi_block(dst, src, bytes, pe);
}

/* ---------------------------------------------------------------- get */

/*
 * Copy bytes from src (a symmetric address) on PE pe into dst on this PE
 * (symmetric heap memory too, so that any transport may write it). Non-
 * blocking: dst holds the data after quiet() by the same issuer group.
 */
CUCO_DEV void get_thread(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmem_getmem_nbi(dst, src, bytes, pe);
}

CUCO_DEV void get_warp(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmemx_getmem_nbi_warp(dst, src, bytes, pe);
}

CUCO_DEV void get_cta(void *dst, const void *src, size_t bytes, int pe)
{
	nvshmemx_getmem_nbi_block(dst, src, bytes, pe);
}

/* One thread: add value to the signal word sig on PE pe, ordered after this thread's puts
 * to that PE by a fence. */
CUCO_DEV void signal_add(uint64_t *sig, uint64_t value, int pe)
{
	nvshmem_fence();
	nvshmemx_signal_op(sig, value, NVSHMEM_SIGNAL_ADD, pe);
}

/* ---------------------------------------------------------------- waiting */

/*
 * Wait until this PE's signal word sig is >= value, for the sync scope in
 * the suffix: thread (the calling thread alone), warp (lane 0 waits, then
 * __syncwarp), cta (thread 0 waits, then __syncthreads). Every thread of the
 * group calls it. Acquire: data put before the signal is visible after.
 */
CUCO_DEV void signal_wait_ge_thread(uint64_t *sig, uint64_t value)
{
	nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, value);
}

CUCO_DEV void signal_wait_ge_warp(uint64_t *sig, uint64_t value)
{
	if ((threadIdx.x & 31) == 0)
		nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, value);
	__syncwarp();
}

CUCO_DEV void signal_wait_ge_cta(uint64_t *sig, uint64_t value)
{
	if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
		nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, value);
	__syncthreads();
}

/* ---------------------------------------------------------------- completion */

/* Order this thread's earlier puts to each PE before its later ones (no completion). */
CUCO_DEV void fence()
{
	nvshmem_fence();
}

/* Complete every put this thread issued (source reusable, data visible at the peers). */
CUCO_DEV void quiet_thread()
{
	nvshmem_quiet();
}
/* The same for the warp's (every lane calls it) and the CTA's (every thread calls it) puts:
 * NVSHMEM has no group quiet; each thread completes its own, then the group meets. */
CUCO_DEV void quiet_warp()
{
	nvshmem_quiet();
	__syncwarp();
}
CUCO_DEV void quiet_cta()
{
	nvshmem_quiet();
	__syncthreads();
}

/*
 * Grid scope: every PE's puts issued before it complete and are visible to
 * every PE after it. Host side, on a stream, between kernels (a kernel
 * boundary is the grid-wide wait).
 */
static inline void barrier_all_on_stream(cudaStream_t s)
{
	nvshmemx_barrier_all_on_stream(s);
}

} // namespace cuco

/* ---------------------------------------------------------------- host glue */

/*
 * The hooks the harness calls (device/harness/rank.c), in this order, on
 * every rank: uniqueid (rank 0 only; the harness broadcasts the id over its
 * own communicator), init, malloc for every tensor of every input set (and
 * free at the end, collective, in the same order on every rank), fini. Weak,
 * so a program of several translation units may include this header in more
 * than one. Each returns 0 on success or nonzero with a message in err.
 */
extern "C" __attribute__((weak, visibility("default"))) int
cuco_program_nvshmem_uniqueid(void *uid, size_t len, char *err, size_t errlen)
{
	nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;

	if (len != sizeof(id)) {
		snprintf(err, errlen, "NVSHMEM unique id is %zu bytes, the harness has %zu",
		         sizeof(id), len);
		return 1;
	}
	if (nvshmemx_get_uniqueid(&id)) {
		snprintf(err, errlen, "nvshmemx_get_uniqueid failed");
		return 1;
	}
	memcpy(uid, &id, sizeof(id));
	return 0;
}

/*
 * Bootstrap NVSHMEM with the unique id: rank of nranks, heap_bytes of
 * symmetric heap (NVSHMEM_SYMMETRIC_SIZE unless the user set it larger),
 * never NVLS, no NCCL inside NVSHMEM (the harness owns NCCL), and no network
 * transport where one_node says all ranks share this node.
 */
extern "C" __attribute__((weak, visibility("default"))) int
cuco_program_nvshmem_init(const void *uid, size_t len, int rank, int nranks, size_t heap_bytes,
                          int one_node, char *err, size_t errlen)
{
	nvshmemx_uniqueid_t id;
	nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
	nvshmemi_version_t ver = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
	                          NVSHMEM_VENDOR_PATCH_VERSION};
	char size[32];
	int provided = 0;

	if (len != sizeof(id)) {
		snprintf(err, errlen, "NVSHMEM unique id is %zu bytes, the harness sent %zu",
		         sizeof(id), len);
		return 1;
	}
	memcpy(&id, uid, sizeof(id));
	setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
	setenv("NVSHMEM_DISABLE_NCCL", "1", 1);
	if (one_node)
		setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);
	snprintf(size, sizeof(size), "%zu", heap_bytes);
	setenv("NVSHMEM_SYMMETRIC_SIZE", size, 1);
	if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr)) {
		snprintf(err, errlen, "nvshmemx_set_attr_uniqueid_args failed");
		return 1;
	}
	nvshmemx_init_init_attr_ver_only(attr);
	if (nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, NVSHMEMX_INIT_WITH_UNIQUEID,
	                         &attr, ver)) {
		snprintf(err, errlen, "NVSHMEM init failed (unique-id bootstrap, %d PEs)", nranks);
		return 1;
	}
	if (nvshmem_my_pe() != rank || nvshmem_n_pes() != nranks) {
		snprintf(err, errlen, "NVSHMEM made this rank %d PE %d of %d, not %d of %d", rank,
		         nvshmem_my_pe(), nvshmem_n_pes(), rank, nranks);
		return 1;
	}
	return 0;
}

/* nvshmem_malloc: collective, same size on every PE; NULL when the heap is full. */
extern "C" __attribute__((weak, visibility("default"))) void *
cuco_program_nvshmem_malloc(size_t bytes)
{
	return nvshmem_malloc(bytes);
}

/* nvshmem_free: collective. */
extern "C" __attribute__((weak, visibility("default"))) void cuco_program_nvshmem_free(void *p)
{
	nvshmem_free(p);
}

/* nvshmem_finalize: after every free. */
extern "C" __attribute__((weak, visibility("default"))) void cuco_program_nvshmem_fini(void)
{
	nvshmem_finalize();
}

#endif
