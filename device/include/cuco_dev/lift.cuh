/*
 * lift.cuh - the runtime of a lifted program: a user's own MPI + NCCL program
 * run inside cuco's harness (docs/your-own-program.md).
 *
 * `cuco init NAME --from FILE` copies the user's sources into one file
 * (host.cu) that includes this header first, renames their main and wraps the
 * step (the loop body or statements that run the program's collectives) in
 * CUCO_LIFT_STEP_BEGIN / CUCO_LIFT_STEP_END. The program's main then runs as
 * a coroutine on a stack of its own:
 *
 *   - cuco_program_init runs main with the shape's command line until the
 *     step is first reached (its setup: MPI, communicator, allocations, the
 *     program's own data initialisation) and parks it there;
 *   - cuco_program_run binds the program's buffer variables to the harness's
 *     tensors of the run, lets the program's streams wait for the harness's
 *     stream, resumes main for one pass through the step, and joins the
 *     program's streams back;
 *   - cuco_program_fini abandons main (its teardown never runs) and frees what
 *     the setup took.
 *
 * The workload side (workload.cu includes host.cu with CUCO_LIFT_WORKLOAD)
 * runs the same setup to describe the tensors (the device buffers alive when
 * the step is reached) and to generate inputs (their contents there).
 *
 * The program's calls reach the harness's world through macros defined at the
 * end of this header: device allocations are recorded (a buffer allocated by
 * the program's own code and alive at the step is a tensor), communicator set-up
 * returns the harness's communicator, MPI runs over it (cuco_dev/lift/mpi.h),
 * exit() and cudaDeviceReset() never end the harness. Everything else is the
 * program's own code, unchanged.
 */
#ifndef CUCO_DEV_LIFT_CUH
#define CUCO_DEV_LIFT_CUH

#define CUCO_LIFT_RUNTIME 1

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <link.h>
#include <ucontext.h>

#include <exception>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cuco/program.h>
#include <cuco_dev/lift/mpi.h>

/* The program's own files (as __FILE__ names them after the #line directives of host.cu). A
 * device buffer allocated from one of them is a tensor candidate; library headers' are not. */
#ifndef CUCO_LIFT_USER_FILES
#define CUCO_LIFT_USER_FILES ""
#endif
/* Which arrival at the step the program runs (1: the first) when the shape has no "visit";
 * earlier arrivals run the step as part of the setup. */
#ifndef CUCO_LIFT_STEP_VISIT
#define CUCO_LIFT_STEP_VISIT 1
#endif
/* 1: the program drives every GPU from one process (ncclCommInitAll); each rank plays the
 * device of its index, its loops over devices run for that index only. */
#ifndef CUCO_LIFT_SINGLE_PROCESS
#define CUCO_LIFT_SINGLE_PROCESS 0
#endif
/* Entries {file, line, buffer text, dtype, role} of the allocation sites the lift read: the dtype
 * of a buffer allocated through a void ** and the role the step gives it. */
/* 1: the step reduces floating-point values (a sum, an average, atomics): float tensors are
 * compared within a tolerance, not bit for bit. */
#ifndef CUCO_LIFT_FLOAT_REDUCTION
#define CUCO_LIFT_FLOAT_REDUCTION 0
#endif

#define CUCO_LIFT_MAX_ALLOCS 4096
#define CUCO_LIFT_MAX_STREAMS 256
#define CUCO_LIFT_MAX_COMMS 64
#define CUCO_LIFT_MAX_REQUESTS 256
#define CUCO_LIFT_STACK_BYTES ((size_t)256 << 20)
#define CUCO_LIFT_PRINT_LINES 40 /* lines of the program's printf kept per mode */

/* One allocation site's static facts, written by the lift (host.cu's site table). */
struct cuco_lift_site {
	const char *file;
	int line;
	const char *text; /* the buffer expression as written ("a_new", "ls_dev[i].d_send") */
	int dtype;        /* enum cuco_dtype; 0: from the pointer's type */
	int role;         /* enum cuco_role the step gives it; 0: CUCO_ROLE_INOUT */
};

/* the step's frame has a label that a program may never jump to */
#pragma nv_diag_suppress 177
#include <cuco_dev/lift/state.cuh>
#include <cuco_dev/lift/shims.cuh>
#include <cuco_dev/lift/mpi_impl.cuh>
#include <cuco_dev/lift/observe.cuh>
#include <cuco_dev/lift/step.cuh>
#include <cuco_dev/lift/driver.cuh>
#include <cuco_dev/lift/redirect.h>

#endif
