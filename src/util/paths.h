/* paths.h - where cuco finds its own files and tools. */
#ifndef CUCO_PATHS_H
#define CUCO_PATHS_H

#include "util/error.h"
#include "util/strbuf.h"

/*
 * cuco's home: the source tree holding workloads/, share/, include/ and
 * device/. $CUCO_HOME if set, else found upward from the running executable
 * (build/cuco -> ..). Returns a static string, or NULL with err set.
 */
const char *cuco_home(struct cuco_err *err);
/* The cuco-harness binary beside the running cuco (or $CUCO_HARNESS). Static string. */
const char *cuco_harness_path(void);
/* nvcc: $CUCO_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc. Static string. */
const char *cuco_nvcc_path(void);
/* NCCL installation to build and run against: $CUCO_NCCL_HOME, $NCCL_HOME, or NULL (toolkit's). */
const char *cuco_nccl_home(void);
/*
 * "LD_LIBRARY_PATH=<nccl home>/lib" followed by the caller's own
 * LD_LIBRARY_PATH, in buf, for the environment of a harness that must load
 * that NCCL; NULL (buf untouched) when cuco_nccl_home() is NULL.
 */
const char *cuco_nccl_ld_path(char *buf, size_t n);
/*
 * NVSHMEM installation that programs of the nvshmem backend build against
 * (include/, lib/libnvshmem_device.a, lib/libnvshmem_host.so.3):
 * $CUCO_NVSHMEM_HOME, $NVSHMEM_HOME, the one CMake found when cuco was built,
 * or ~/.cache/cuco-nvshmem/nvidia/nvshmem (scripts/setup-nvshmem.sh); the
 * first that holds lib/libnvshmem_device.a. Static string, or NULL: NVSHMEM
 * not found.
 */
const char *cuco_nvshmem_home(void);
/* State directory for caches and the default store: $CUCO_STATE or ".cuco". */
const char *cuco_state_dir(void);
/* mkdir -p; 0 or -1 with errno. */
int cuco_mkdir_p(const char *path);
/* 1 if path exists and is a regular file. */
int cuco_file_exists(const char *path);
/*
 * Write data to path atomically (a temporary name unique to this process and
 * call, then rename): a reader sees the old file or the whole new one, also
 * when threads write the same path at once. 0 or -1 with errno.
 */
int cuco_write_file(const char *path, const char *data, size_t len);

#endif
