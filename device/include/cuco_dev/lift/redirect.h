/*
 * redirect.h - the program's calls redirected to the runtime, and the step's frame.
 * Defined after every header the runtime includes, so only the program's own code (and
 * the headers it includes later) is redirected.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_REDIRECT_H
#define CUCO_DEV_LIFT_REDIRECT_H

/* ---- the program's calls, redirected (after every header this one includes) ---- */

#define cudaMalloc(p, ...) cuco_lift_cudaMalloc((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaMallocManaged(p, ...) \
	cuco_lift_cudaMallocManaged((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaMallocAsync(p, ...) cuco_lift_cudaMallocAsync((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaMallocHost(p, ...) cuco_lift_cudaMallocHost((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaHostAlloc(p, ...) cuco_lift_cudaMallocHost((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaMallocPitch(p, ...) cuco_lift_cudaMallocPitch((p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define ncclMemAlloc(p, ...) \
	cuco_lift_ncclMemAlloc((void **)(p), #p, __FILE__, __LINE__, __VA_ARGS__)
#define cudaFree(p) cuco_lift_cudaFree((void *)(p))
#define cudaFreeAsync(p, s) cuco_lift_cudaFreeAsync((void *)(p), (s))
#define cudaFreeHost(p) cuco_lift_cudaFreeHost((void *)(p))
#define ncclMemFree(p) cuco_lift_ncclMemFree((void *)(p))
#define cudaSetDevice(...) cuco_lift_cudaSetDevice(__VA_ARGS__)
#define cudaGetDevice(...) cuco_lift_cudaGetDevice(__VA_ARGS__)
#define cudaGetDeviceCount(...) cuco_lift_cudaGetDeviceCount(__VA_ARGS__)
#define cudaGetDeviceProperties(...) cuco_lift_cudaGetDeviceProperties(__VA_ARGS__)
#define cudaDeviceReset(...) cuco_lift_cudaDeviceReset(__VA_ARGS__)
#define cudaSetDeviceFlags(...) cuco_lift_cudaSetDeviceFlags(__VA_ARGS__)
#define cudaDeviceEnablePeerAccess(...) cuco_lift_cudaDeviceEnablePeerAccess(__VA_ARGS__)
#define cudaStreamCreate(...) cuco_lift_cudaStreamCreate(__VA_ARGS__)
#define cudaStreamCreateWithFlags(...) cuco_lift_cudaStreamCreateWithFlags(__VA_ARGS__)
#define cudaStreamCreateWithPriority(...) cuco_lift_cudaStreamCreateWithPriority(__VA_ARGS__)
#define cudaStreamDestroy(...) cuco_lift_cudaStreamDestroy(__VA_ARGS__)
#define cudaEventCreate(...) cuco_lift_cudaEventCreate(__VA_ARGS__)
#define cudaEventCreateWithFlags(...) cuco_lift_cudaEventCreateWithFlags(__VA_ARGS__)
#define cudaEventDestroy(...) cuco_lift_cudaEventDestroy(__VA_ARGS__)
#define ncclGetUniqueId(...) cuco_lift_ncclGetUniqueId(__VA_ARGS__)
#define ncclCommInitRank(...) cuco_lift_ncclCommInitRank(__VA_ARGS__)
#define ncclCommInitRankConfig(...) cuco_lift_ncclCommInitRankConfig(__VA_ARGS__)
#define ncclCommInitRankScalable(...) cuco_lift_ncclCommInitRankScalable(__VA_ARGS__)
#define ncclCommInitAll(...) cuco_lift_ncclCommInitAll(__VA_ARGS__)
#define ncclCommSplit(...) cuco_lift_ncclCommSplit(__VA_ARGS__)
#define ncclCommDestroy(...) cuco_lift_ncclCommDestroy(__VA_ARGS__)
#define ncclCommFinalize(...) cuco_lift_ncclCommFinalize(__VA_ARGS__)
#define ncclCommAbort(...) cuco_lift_ncclCommAbort(__VA_ARGS__)
#define ncclCommCount(...) cuco_lift_ncclCommCount(__VA_ARGS__)
#define ncclCommUserRank(...) cuco_lift_ncclCommUserRank(__VA_ARGS__)
#define ncclCommCuDevice(...) cuco_lift_ncclCommCuDevice(__VA_ARGS__)
#define ncclCommGetAsyncError(...) cuco_lift_ncclCommGetAsyncError(__VA_ARGS__)
#define ncclGetLastError(...) cuco_lift_ncclGetLastError(__VA_ARGS__)
#define ncclCommRegister(...) cuco_lift_ncclCommRegister(__VA_ARGS__)
#define ncclCommDeregister(...) cuco_lift_ncclCommDeregister(__VA_ARGS__)
#define ncclCommWindowRegister(...) cuco_lift_ncclCommWindowRegister(__VA_ARGS__)
#define ncclCommWindowDeregister(...) cuco_lift_ncclCommWindowDeregister(__VA_ARGS__)
#define ncclGroupStart(...) cuco_lift_ncclGroupStart(__VA_ARGS__)
#define ncclGroupEnd(...) cuco_lift_ncclGroupEnd(__VA_ARGS__)
#define ncclAllReduce(...) cuco_lift_ncclAllReduce(__VA_ARGS__)
#define ncclBroadcast(...) cuco_lift_ncclBroadcast(__VA_ARGS__)
#define ncclBcast(...) cuco_lift_ncclBcast(__VA_ARGS__)
#define ncclReduce(...) cuco_lift_ncclReduce(__VA_ARGS__)
#define ncclAllGather(...) cuco_lift_ncclAllGather(__VA_ARGS__)
#define ncclReduceScatter(...) cuco_lift_ncclReduceScatter(__VA_ARGS__)
#define ncclAlltoAll(...) cuco_lift_ncclAlltoAll(__VA_ARGS__)
#define ncclGather(...) cuco_lift_ncclGather(__VA_ARGS__)
#define ncclScatter(...) cuco_lift_ncclScatter(__VA_ARGS__)
#define ncclSend(...) cuco_lift_ncclSend(__VA_ARGS__)
#define ncclRecv(...) cuco_lift_ncclRecv(__VA_ARGS__)
namespace std
{
using ::cuco_lift_abort;
using ::cuco_lift_exit;
using ::cuco_lift_printf;
} // namespace std
#if !defined(__CUDA_ARCH__)
#define printf(...) cuco_lift_printf(__VA_ARGS__)
#endif

/* The step's frame: the loop runs the step once per run (docs/your-own-program.md). The lift
 * turns a `break`, `continue` or `return` that leaves the step into CUCO_LIFT_STEP_LEAVE. */
#define CUCO_LIFT_STEP_BEGIN                                                                \
	for (bool cuco_lift_go_ = cuco_lift::step_enter(__FILE__, __LINE__); cuco_lift_go_; \
	     cuco_lift_go_ = cuco_lift::step_next()) {                                      \
		cuco_lift::step_gate();                                                     \
		{
#define CUCO_LIFT_STEP_END       \
	}                        \
	cuco_lift_leave_:        \
	__attribute__((unused)); \
	}
#define CUCO_LIFT_STEP_LEAVE goto cuco_lift_leave_
/* A loop over the devices of a single-process program: this rank's device only. */
#define CUCO_LIFT_DEVICE_ONLY(i)                                       \
	if (CUCO_LIFT_SINGLE_PROCESS && (int)(i) != cuco_lift::R.rank) \
	continue

#endif
