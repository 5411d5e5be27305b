/*
 * cascade.h - the evaluation cascade: compile -> run and verify on the GPUs ->
 * benchmark -> fitness. A failure at any stage is a result (stage reached,
 * status, error text, logs), never a crash of cuco.
 */
#ifndef CUCO_CASCADE_H
#define CUCO_CASCADE_H

#include <stdatomic.h>
#include <stdint.h>

#include <cuco/program.h>

#include "util/error.h"
#include "util/proc.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#define CUCO_CASCADE_MAX_PROGRAMS 16

struct cuco_compile_inflight;
struct cuco_compile_job;
struct cuco_runner;

/*
 * How to build programs. Caller-owned; strings and pointers must outlive the
 * calls. The cache is safe to share: a .so appears under its final name only
 * once complete (nvcc writes a temporary name unique to the process and call,
 * then rename(2)), so a reader never loads a half-written one.
 */
struct cuco_compile_opts {
	const char *home;      /* cuco home (include/, device/include/) */
	const char *cache_dir; /* compiled .so files by content hash */
	const char *arch;      /* nvcc target, e.g. "90a" ($CUCO_ARCH or 90a) */
	int jobs;              /* nvcc processes at once */
	double timeout_s;      /* per nvcc process */
	/* NULL: calls do not coordinate; else shared with the threads compiling (below) */
	struct cuco_compile_inflight *inflight;
	/* NULL: nvcc runs as cuco does; else e.g. pinned and niced (background compiles) */
	const struct cuco_proc_sched *sched;
	/* NULL: none; once nonzero, start no nvcc and kill those running (CUCO_ERR_SYSTEM) */
	const atomic_int *cancel;
	/* NULL: none; else called (on the calling thread) as each job of cuco_compile_many
	 * settles, with its code, cached and seconds set: progress for people */
	void (*on_done)(void *arg, const struct cuco_compile_job *job);
	void *on_done_arg;
};

/* One program to compile: its source text and where it came from. */
struct cuco_compile_job {
	const char *name;    /* for messages and the harness */
	const char *path;    /* file name for messages; its directory is on the include path */
	const char *source;  /* the text to compile (may differ from the file's) */
	const char *libs[4]; /* extra libraries, e.g. "cublas"; NULL-terminated */
	/* 1: a workload's own file, compiled beside it (its directory on the include path);
	 * 0 (cuco_compile_job_init's default): a candidate, code a model wrote, compiled
	 * in a sandbox (cuco_compile_many) */
	int trusted;
	/* results */
	int code;               /* CUCO_OK or CUCO_ERR_COMPILE / CUCO_ERR_SYSTEM */
	int cached;             /* 1 if the .so came from the cache */
	double seconds;         /* nvcc wall time (0 when cached) */
	char hash[65];          /* content hash: source, flags, nvcc and cuco headers */
	char so_path[4096];     /* the built shared object */
	struct cuco_strbuf log; /* nvcc's output */
};

/*
 * 1 if source is an NVSHMEM program (it includes cuco_dev/nvshmem.cuh): compiled
 * with relocatable device code, linked with NVSHMEM's device and host
 * libraries; refused with "NVSHMEM not found" where cuco_nvshmem_home() is NULL.
 */
int cuco_compile_needs_nvshmem(const char *source);
/* Fill opts with defaults (home from cuco_home(), cache in <state>/cache). */
int cuco_compile_opts_default(struct cuco_compile_opts *opts, struct cuco_err *err);
void cuco_compile_job_init(struct cuco_compile_job *job, const char *name, const char *path,
                           const char *source);
void cuco_compile_job_release(struct cuco_compile_job *job);
/*
 * Compile every job (in parallel, opts->jobs at a time, cached by hash). Each
 * job gets its own code and log; returns CUCO_OK unless the cascade itself
 * could not work (then err says why). Thread-safe: concurrent calls share the
 * cache (and, through opts->inflight, each other's compiles). A cached .so is
 * read-only (0444).
 *
 * A candidate (job->trusted 0) is refused (CUCO_ERR_COMPILE, the reasons in
 * its log) when its source breaks a rule of util/codescan.h, and compiled in
 * a private directory (0700, removed afterwards) holding only its source and
 * copies of the headers beside job->path; nvcc runs there, in a network
 * namespace of its own where the kernel allows it, and sees only cuco's
 * include folders and NCCL's. Its object is refused when it uses multicast
 * all the same: a multimem instruction in its PTX or SASS (cuobjdump, where
 * installed) or a cuMulticast name in the .so.
 */
int cuco_compile_many(const struct cuco_compile_opts *opts, struct cuco_compile_job *jobs, int n,
                      struct cuco_err *err);
/* The nvcc version line, or "" when nvcc cannot run. Static string. */
const char *cuco_nvcc_version(void);

/*
 * Compiles in flight in this process, shared by threads that compile with
 * the same options (a background prefetch and the evaluation that needs its
 * results). A job whose hash another call is compiling waits for that call
 * rather than racing it, then takes its outcome: the .so from the cache, or
 * its failure (code and nvcc log, kept for the next call that compiles that
 * hash; the CUCO_COMPILE_KEEP_FAILURES latest). Failures of cancelled
 * compiles are not kept. Create with _new, free with _free once no call uses
 * it; internally locked.
 */
#define CUCO_COMPILE_KEEP_FAILURES 64

#define CUCO_COMPILE_MEMORY_GB 4 /* a candidate's nvcc's address space, unless said otherwise */

/*
 * The address space a candidate's compile may take (RLIMIT_AS of nvcc and
 * each of its tools: cicc, ptxas, the host compiler), in bytes:
 * CUCO_COMPILE_MEMORY_GB (a positive number of GiB), else
 * CUCO_COMPILE_MEMORY_GB's default. A program whose compile needs more (a
 * huge __device__ array) fails to compile instead of taking the node's
 * memory.
 */
unsigned long long cuco_compile_mem_bytes(void);
int cuco_compile_inflight_new(struct cuco_compile_inflight **out, struct cuco_err *err);
void cuco_compile_inflight_free(struct cuco_compile_inflight *t);
/*
 * Keep job's failure (job->code != CUCO_OK, its log) as if a call of t had
 * found it, for the next call that compiles that hash. A job that did not
 * fail is ignored.
 */
void cuco_compile_inflight_note(struct cuco_compile_inflight *t,
                                const struct cuco_compile_job *job);

/*
 * Where background compiles run so that they do not steal CPU from the
 * harness's ranks while those time: allowed minus its first `keep` CPUs (the
 * lowest numbers) and, when siblings is not NULL, their SMT siblings
 * (siblings(cpu, out) adds cpu's hardware threads to out). Applies only when
 * allowed holds at least 2 * keep CPUs and something is left; otherwise *out
 * is empty and 0 is returned (do not pin: a 2-core machine shares). Returns
 * the number of CPUs in *out.
 */
int cuco_compile_background_cpus(const struct cuco_cpus *allowed, int keep,
                                 void (*siblings)(int cpu, struct cuco_cpus *out),
                                 struct cuco_cpus *out);
/*
 * The schedule of background compiles beside `ranks` timed ranks: pinned by
 * cuco_compile_background_cpus() over this thread's CPUs with keep = ranks +
 * 1 (the ranks and the harness's parent) and the SMT siblings from sysfs,
 * niceness 19, SCHED_IDLE.
 */
void cuco_compile_background_sched(int ranks, struct cuco_proc_sched *s);

/* How to run the harness. */
struct cuco_run_opts {
	int ranks; /* ranks per evaluation */
	const char
	    *launcher; /* NULL: fork on this node; else e.g. "mpirun -np 2 --allow-run-as-root" */
	double timeout_s; /* watchdog per stage */
	int warmup, iters;
	double bench_seconds;
	int verify_runs;
	uint64_t seed;
	int samples;         /* keep per-iteration samples */
	int burst;           /* 1: time each run alone after an idle gap (harness --timing burst) */
	int mean;            /* 1: a program's latency is the mean of its timed runs, else their
	                        median (cuco evolve --statistic); fitness = baseline / latency */
	const char *wrapper; /* NULL: none; else a command put in front of the harness in fork
	                        mode, e.g. CUCO_RECHECK_MEMCHECK; its "=========" lines and a
	                        nonzero exit code are appended to the run log */
	/* NULL: the expected outputs are the workload's reference(); else the compiled
	 * reference program's .so (harness --reference-program). cuco_evaluate() sets it from
	 * the manifest's "reference" for its own runs. */
	const char *reference_so;
	/* How the harness gets its ranks (cascade/runner.h): NULL, this node's (the launcher's
	 * when launcher is set, else the fork); a farm's runner runs it elsewhere. Borrowed. */
	const struct cuco_runner *runner;
};
void cuco_run_opts_default(struct cuco_run_opts *o);
/* "burst" or "sustained": how o times runs, the word runs store in their config. */
const char *cuco_run_timing(const struct cuco_run_opts *o);
/* The timing a run's config JSON records; "sustained" when it records none
 * (runs stored before there was a choice were all timed back to back). */
const char *cuco_run_config_timing(const char *config_json);
/* The statistic a run's config JSON records; "median" when it records none (runs
 * stored before there was a choice ranked by the median). */
const char *cuco_run_config_statistic(const char *config_json);

/* One program's outcome in one harness run. */
struct cuco_program_result {
	char name[64];
	int code;        /* CUCO_OK, CUCO_ERR_VERIFY, CUCO_ERR_RUN, ... */
	char status[24]; /* token: ok, wrong, run, timeout, crash, compile, ... */
	char stage[16];  /* stage reached: compile, run, verify, bench */
	int verify;      /* 1 if the program's output is checked */
	double rel_err;  /* NaN when not checked */
	double median_us, p10_us, p90_us, min_us, mean_us; /* NaN when not timed */
	double host_us; /* host time to enqueue one run (median); NaN when not timed */
	/* each rank's own median (NaN-free, nranks of them) and, where the workload
	 * weighs ranks (cuco_workload_rank_weight), the weighted mean of the ranks'
	 * times: CUCo's MoE figure, shown beside median_us (the slowest rank's) */
	int nranks_us;
	double rank_us[8];
	double weighted_us; /* NaN when the workload does not weigh its ranks */
	int iters;
	char *samples_json; /* malloc'd JSON array or NULL */
	char *error;        /* malloc'd message or NULL */
};

/* One harness run over several programs of one shape. */
struct cuco_run_result {
	int code;               /* CUCO_OK when the harness finished */
	char *error;            /* malloc'd; harness-level failure */
	char *raw_json;         /* malloc'd; the harness's JSON line */
	struct cuco_strbuf log; /* the harness's stderr */
	char gpu[64];
	char timing[16]; /* "sustained" or "burst" (the harness's --timing); "" if unsaid */
	/* CUDA_DEVICE_MAX_CONNECTIONS the harness ran with; "" if unset (CUDA's default) */
	char max_connections[16];
	int nresults;
	struct cuco_program_result results[CUCO_CASCADE_MAX_PROGRAMS];
};
void cuco_run_result_init(struct cuco_run_result *r);
void cuco_run_result_release(struct cuco_run_result *r);

/* A compiled program to run: name, .so, checked or timing-only. */
struct cuco_run_program {
	const char *name;
	const char *so_path;
	int verify;
};

/*
 * 1 when a harness run on this node (fork mode) gets the read-only view of
 * the node (util/jail.h): the kernel allows it and CUCO_SANDBOX_RUN_JAIL is
 * not 0. docs/sandbox.md.
 */
int cuco_run_jailed(void);

/*
 * Run programs on the GPUs through cuco-harness for one shape: verify each
 * against the workload reference (or o->reference_so's outputs) and time it,
 * with the shape's command line (cuco_manifest_argv on o->ranks ranks) as
 * --argv. A program that crashes or hangs is reported and the rest are run
 * again without it. Returns CUCO_OK when results were obtained (each program
 * has its own code), else the harness-level error (e.g. CUCO_ERR_NO_GPU, or a
 * failure of the reference program) with err set.
 */
int cuco_run_programs(const struct cuco_run_opts *o, const struct cuco_manifest *m,
                      const char *workload_so, const struct cuco_shape *shape,
                      const struct cuco_run_program *progs, int n, struct cuco_run_result *res,
                      struct cuco_err *err);

/*
 * The record to read from a result file that ranks share (a launcher's, a
 * farm's): "#program NAME" lines and exactly one JSON record per rank
 * ("rank", "ranks"). A failure record (the first) beats rank 0's success. A
 * line that is no record or a rank's second record (a program wrote to the
 * channel: it runs in the rank's process) makes a failure record of cuco's
 * own naming the program announced before it; a rank without a record, one
 * saying so. The record into out (which may hold text); 0, or -1 when text
 * holds no record at all.
 */
int cuco_run_records_pick(const char *text, struct cuco_strbuf *out);

#define CUCO_RUN_RESULT_MAX ((long long)64 << 20) /* a larger result file is a program's doing */

/* Parse one harness JSON record into res (exposed for tests). */
int cuco_run_result_parse(const char *json, struct cuco_run_result *res, struct cuco_err *err);

/* GPUs on this node as the harness sees them (0 when none); -1 when the harness cannot run. */
int cuco_gpu_count(struct cuco_err *err);

/* ---- facts: what this node offers, measured by the harness's probe ---- */

struct cuco_hw_facts;
/*
 * Run `cuco-harness --probe` over every GPU of this node (GPUs, compute
 * capability, SMs, peer access, NVLink links, NCCL, an LSA self-test across
 * the GPUs, a device communicator with GIN contexts) and put its JSON result
 * line in out: the facts `cuco doctor` prints. Returns CUCO_OK, or
 * CUCO_ERR_SYSTEM / CUCO_ERR_RUN with err set (its log in err's message).
 */
int cuco_probe_run(struct cuco_strbuf *out, struct cuco_err *err);
/*
 * The facts a directive for programs of `ranks` ranks is checked against,
 * from a probe's JSON: SMs and compute capability of the weakest GPU, LSA
 * reachable when the self-test passed (or ranks < 2), GIN when the probe made
 * a GIN context. Returns CUCO_OK; CUCO_ERR_NO_GPU when the probe found no
 * GPU or fewer than `ranks` (*f then holds what it found, e.g. gpus 0);
 * CUCO_ERR_PARSE for JSON that is not a probe result (err names the field).
 */
int cuco_hw_facts_parse(const char *json, int ranks, struct cuco_hw_facts *f, struct cuco_err *err);
/* Probe, then parse (both above). */
int cuco_hw_facts_probe(int ranks, struct cuco_hw_facts *f, struct cuco_err *err);
/* "2 ranks, 132 SMs, sm_90, LSA: all ranks, GIN: no" into buf; returns buf. */
const char *cuco_hw_facts_describe(const struct cuco_hw_facts *f, char *buf, size_t len);
/*
 * The nvcc target for GPUs of compute capability cc (x 10): "90a" for 90
 * (cuco's own GEMM needs the architecture-specific wgmma and TMA of sm_90a),
 * else the plain number ("80", "100"); "90a" when cc is 0 (unknown).
 */
const char *cuco_arch_for_cc(int cc, char *buf, size_t len);
/*
 * The target compiles use when CUCO_ARCH is unset: set it from the probed
 * facts once, before the first cuco_compile_opts_default(); "90a" otherwise.
 */
void cuco_compile_set_default_arch(const char *arch);

/* ---- evaluate: compile -> run/verify -> bench -> store, over shapes ---- */

struct cuco_store;

/* One program of an evaluation. Caller fills the inputs; the cascade the rest. */
struct cuco_eval_program {
	const char *name;   /* label in tables, JSON and the harness */
	const char *origin; /* store origin: baseline, peer, compute, comm, seed, candidate, file */
	const char *path;   /* source file (its directory is on the include path) */
	const char *source; /* text to compile */
	const char *libs[4]; /* extra libraries, NULL-terminated */
	int verify;          /* 0: timing only */
	/* filled */
	int64_t program_id;   /* store id, 0 without a store */
	char *directive_json; /* canonical directive, NULL when none */
	int precheck_code;    /* directive rejected before compiling */
	char precheck_error[1024];
	struct cuco_compile_job job;
};

/* Results of one shape. */
struct cuco_eval_shape {
	const struct cuco_shape *shape;
	int code; /* CUCO_OK when the GPUs ran; else why not */
	char error[1024];
	struct cuco_run_result run; /* per-program results, in progs order of those that compiled */
};

struct cuco_eval_request {
	const struct cuco_manifest *m;
	const struct cuco_shape *const *shapes;
	int nshapes;
	struct cuco_eval_program *progs;
	int nprogs;
	struct cuco_compile_opts compile;
	struct cuco_run_opts run;
	struct cuco_store *store; /* NULL: keep nothing */
	int64_t run_id;           /* store run the evaluations belong to */
	int compile_only;         /* stop after compiling */
	/* NULL: directives are checked against the design space only; else also
	 * against these facts of the node (cuco_hw_facts_probe) */
	const struct cuco_hw_facts *facts;
	/* NULL: none; else called before each shape's harness run (done 0) and after it
	 * (done 1, s's results filled): progress for people. Once compile.cancel is set,
	 * no further shape runs. */
	void (*on_shape)(void *arg, const struct cuco_eval_shape *s, int done);
	void *on_shape_arg;
};

/* Prepare progs[i] (directive check, compile job). Call before cuco_evaluate. */
void cuco_eval_program_init(struct cuco_eval_program *p, const char *name, const char *origin,
                            const char *path, const char *source, int verify);
void cuco_eval_program_release(struct cuco_eval_program *p);

/*
 * Run the cascade: check directives, compile every program and the
 * workload's generator/reference (in parallel, cached), and the manifest's
 * reference program when it names one (a program of req->progs with the same
 * source is compiled once), then per shape run
 * all compiled programs on the GPUs, verify and time them, and store every
 * outcome (compile failures too) with fitness = baseline / program latency.
 * shapes_out has req->nshapes entries. Returns CUCO_OK, CUCO_ERR_NO_GPU when
 * the node has too few GPUs (compile results are still stored), or another
 * code when the cascade itself failed.
 */
int cuco_evaluate(struct cuco_eval_request *req, struct cuco_eval_shape *shapes_out,
                  struct cuco_err *err);
void cuco_eval_shape_release(struct cuco_eval_shape *s);

/* Result of program `name` in a shape, or NULL. */
const struct cuco_program_result *cuco_eval_find(const struct cuco_eval_shape *s, const char *name);
/* r's latency by o's statistic (median or mean); NaN when r is NULL or not timed. */
double cuco_result_latency(const struct cuco_program_result *r, const struct cuco_run_opts *o);

struct cuco_eval_rec;
/*
 * Copy r's timings (median, p10, p90, min, mean, samples) and rel_err into an
 * evaluation row, and when fit is set and base_us finite, its fitness: base_us
 * / r's latency by o's statistic. The row points into r: store it while r lives.
 */
void cuco_eval_rec_timings(struct cuco_eval_rec *ev, const struct cuco_program_result *r,
                           const struct cuco_run_opts *o, double base_us, int fit);

/*
 * What a bench table measures a program against (docs/harness.md, "Reading a
 * bench table"): the fastest peer that ran and verified (what users run
 * today), and the ideal bound, max(fastest compute alone, fastest comm
 * alone): compute and communication perfectly overlapped, each at its best.
 * Latencies are medians. peer is NULL and a latency NaN when missing.
 */
struct cuco_reference {
	const char *peer; /* program name, or NULL */
	double peer_us;
	double bound_us;
};
void cuco_reference_of(const struct cuco_eval_shape *s, const struct cuco_eval_program *progs,
                       int nprogs, struct cuco_reference *ref);
/* max(compute_us, comm_us), NaN unless both are finite. */
double cuco_ideal_bound(double compute_us, double comm_us);
/* The hidden fraction of a program taking us: (peer - us) / (peer - bound),
 * the share of the peer's excess over the ideal bound that the program
 * removes (1: reaches the bound; 0: as slow as the peer; negative: slower).
 * NaN unless all three are finite and peer > bound. */
double cuco_hidden_fraction(double peer_us, double bound_us, double us);

/* The NVSHMEM installation the nvshmem backend uses (src/cascade/nvshmem.c). */
struct cuco_nvshmem_info {
	char home[4096];        /* cuco_nvshmem_home() */
	char version[32];       /* its headers' version: what programs compile against */
	char lib_version[32];   /* its host library's, asked of the library; "" when not loaded */
	char lib_error[512];    /* why the host library did not load */
	char build_version[32]; /* the version CMake found when cuco was built; "" for none */
	char bootstraps[256];   /* bootstrap plugins in lib/ ("uid mpi pmi ..."), space-separated */
	char transports[256];   /* transport plugins in lib/ ("ibrc ibgda ucx ...") */
};
/*
 * Fill *info for the installation cuco_nvshmem_home() names; load: also
 * dlopen its host library for its version. 0, or -1 when NVSHMEM is not
 * found (info->build_version still set).
 */
int cuco_nvshmem_probe(struct cuco_nvshmem_info *info, int load);

#endif
