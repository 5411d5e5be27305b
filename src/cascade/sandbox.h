/*
 * sandbox.h - the cascade's steps around a candidate's compile (inside the
 * cascade: compile.c uses them; cascade.h's cuco_compile_many says what they
 * add up to).
 */
#ifndef CUCO_CASCADE_SANDBOX_H
#define CUCO_CASCADE_SANDBOX_H

#include <stddef.h>

#include "cascade/cascade.h"
#include "util/jail.h"

/*
 * 1 when code a model wrote runs in the sandbox's view here: harness runs on
 * this node (farm 0: not a Slurm farm's steps, which run on its nodes), the
 * kernel lets cuco build the view and CUCO_SANDBOX_RUN_JAIL is not 0. Else 0
 * with the reason in why. Candidates of a model run only where this holds,
 * unless the user passes --unsandboxed (docs/sandbox.md).
 */
int cuco_sandbox_ready(int farm, char *why, size_t len);

/* 1 when a file name is a header's (.h, .cuh): what programs include from beside them. */
int cuco_sandbox_is_header(const char *name);
/*
 * 1 when job's source breaks a rule of util/codescan.h: job->code becomes
 * CUCO_ERR_COMPILE, the reasons (file:line) go into its log. 0 otherwise.
 */
int cuco_sandbox_refused(struct cuco_compile_job *job);
/*
 * A private directory for job under cache_dir (the same file system, so the
 * .so moves into the cache by rename): mode 0700, its absolute path in dir;
 * in it work/, holding copies of the headers beside job->path (where nvcc
 * runs and writes), and root/, empty (where its view is built). 0, or -1
 * with the reason in the job's log. Remove it with cuco_proc_remove_tree.
 */
int cuco_sandbox_make(const char *cache_dir, struct cuco_compile_job *job, char *dir, size_t len);
/*
 * The view a candidate's compile is given (util/jail.h), built on dir/root
 * (dir from cuco_sandbox_make): /usr, /bin, /lib*, /sbin (the host compiler,
 * its headers and libraries), the dynamic linker's files of /etc, the
 * toolkit, NCCL's and NVSHMEM's folders and cuco's headers (home/include,
 * home/device/include) read-only, dir/work writable; a minimal /dev, no
 * /sys. No other file of the node exists in it: $HOME, the store, the
 * state directory, the workload's folder (its headers are copied into
 * work). Malloc'd; NULL when it holds too much.
 */
struct cuco_jail *cuco_sandbox_view(const char *dir, const char *home);

/*
 * The toolkit's folder in out: nvcc's folder's parent where nvcc lies in a
 * bin/ (TOOLKIT/bin/nvcc), else nvcc's folder. NULL when nvcc is not found.
 */
const char *cuco_sandbox_toolkit(char *out, size_t len);

/* cuobjdump beside nvcc, else on PATH, in out; NULL when neither has one. */
const char *cuco_sandbox_cuobjdump(char *out, size_t len);
/*
 * The candidate's source as the preprocessor expanded it (the .ii files nvcc
 * kept in dir; path: the name its #line gives, job->path), checked against
 * the same rules as the source (util/codescan.h): a banned name made by
 * token pasting (a##b in the candidate, or a header's pasting macro such as
 * __CONCAT) or by a macro is caught here. The number of findings, each in
 * log.
 */
int cuco_sandbox_expanded_check(const char *dir, const char *path, struct cuco_strbuf *log);

/*
 * The candidate's object so, before it ever runs: no multimem instruction in
 * the PTX nvcc kept in dir ("multimem." opens one) nor in the SASS of so
 * (cuobjdump beside nvcc or on PATH, where installed: "MULTIMEM"), no
 * cuMulticast name in so. Case matters: NCCL's type names
 * (ncclMultimemHandle) reach mangled names. The number of findings, each a
 * line in log.
 */
int cuco_sandbox_object_check(const char *dir, const char *so, struct cuco_strbuf *log);

#endif
