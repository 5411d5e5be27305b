/*
 * facts.h - what the lift's front end knows about a user's program after a
 * real C/C++/CUDA parse (src/lift/scan.h makes them): its files and includes,
 * diagnostics, functions, calls with their arguments, kernel launches,
 * statements, threads, and the local functions it calls but does not define.
 * Plain C: arrays with counts, every string and array owned by the one
 * struct cuco_lift_facts. The lift's planner reads them; nothing here
 * decides what a program's step is.
 *
 * Positions are byte offsets, lines and columns (1-based, in bytes) in the
 * file where the text is, as the user wrote it: a call written inside a
 * macro argument is where its name is spelled; a call that the body of a
 * #define produces is marked in_macro_body, with the macro's name and the
 * site it was expanded at.
 */
#ifndef CUCO_LIFT_FACTS_H
#define CUCO_LIFT_FACTS_H

#include <stddef.h>

#include "util/error.h"
#include "util/strbuf.h"

/* A point in a file: file is an index into facts->files, -1 where there is none. */
struct cuco_lift_pos {
	int file;
	unsigned offset; /* bytes from the start of the file */
	unsigned line, column;
};

/* A span of one file, [begin, end) in bytes; file -1 where there is none. */
struct cuco_lift_range {
	int file;
	unsigned begin, end;
	unsigned line, column;         /* of begin */
	unsigned end_line, end_column; /* of end: the character after the span */
};

struct cuco_lift_file {
	char *path;            /* absolute, symbolic links resolved */
	char *rel;             /* relative to the program root; NULL when outside it */
	int local;             /* under the root and not a system header */
	int parsed;            /* parsed as a translation unit of its own */
	int included_from;     /* file index of the first #include that reached it, -1 for none */
	unsigned include_line; /* line of that #include */
	int patched;           /* the parse read an adjusted copy (see struct cuco_lift_patch) */
};

/* One #include line of a local file. */
struct cuco_lift_include {
	int file; /* the including file */
	unsigned line;
	char *name;                    /* as spelled between the quotes or angle brackets */
	int angled;                    /* <name> rather than "name" */
	int resolved;                  /* file index of the header it found, -1 when not found */
	struct cuco_lift_range extent; /* the whole line, without its newline */
};

enum cuco_lift_severity {
	CUCO_LIFT_WARNING = 2,
	CUCO_LIFT_ERROR = 3,
	CUCO_LIFT_FATAL = 4,
};

struct cuco_lift_diag {
	int severity;
	struct cuco_lift_pos pos; /* file -1 for a diagnostic about no place */
	char *message;
	char *option; /* "-Wdeprecated-declarations", or NULL */
	int unit;     /* file index of the translation unit that reported it */
};

/* Where a function runs, from its CUDA attributes. */
enum cuco_lift_fn_kind {
	CUCO_LIFT_FN_HOST = 0,    /* no attribute, or __host__ alone */
	CUCO_LIFT_FN_KERNEL,      /* __global__ */
	CUCO_LIFT_FN_DEVICE,      /* __device__ alone */
	CUCO_LIFT_FN_HOST_DEVICE, /* __host__ __device__ */
};

struct cuco_lift_param {
	char *name; /* "" when unnamed */
	char *type; /* as declared: "const real *" */
};

/* A function (or method, constructor, template) defined in a local file. */
struct cuco_lift_function {
	char *name;      /* "jacobi_kernel" */
	char *qualified; /* "prk::NCCL::alltoall" */
	char *usr;       /* clang's unified symbol resolution: the same across units */
	int kind;        /* enum cuco_lift_fn_kind */
	struct cuco_lift_range extent; /* the whole definition: template<...>, static, __global__ */
	struct cuco_lift_range body;   /* its { ... } */
	struct cuco_lift_pos name_pos; /* the name token */
	struct cuco_lift_param *params;
	size_t nparams;
	int is_main;
	int is_template; /* a function template, or a member of a class template */
	int is_method;   /* a member function, constructor or destructor */
};

/* The header that declares a callee. */
enum cuco_lift_origin {
	CUCO_LIFT_ORIGIN_UNKNOWN =
	    0,                 /* no declaration found (an error, a call through a pointer) */
	CUCO_LIFT_ORIGIN_NCCL, /* nccl.h */
	CUCO_LIFT_ORIGIN_NCCL_DEVICE, /* nccl_device.h and nccl_device/ */
	CUCO_LIFT_ORIGIN_MPI,         /* an mpi.h (the overlay's or an MPI library's) */
	CUCO_LIFT_ORIGIN_CUDA,        /* cuda_runtime_api.h, cuda_runtime.h, cuda.h */
	CUCO_LIFT_ORIGIN_TOOLKIT,     /* the rest of the CUDA toolkit: cuBLAS, cuRAND, CUB, NVTX */
	CUCO_LIFT_ORIGIN_LOCAL,       /* a local file of the program */
	CUCO_LIFT_ORIGIN_SYSTEM,      /* the C/C++ libraries and everything else */
};

/* What a call to a function declared in nccl.h does. */
enum cuco_lift_nccl {
	CUCO_LIFT_NCCL_NONE = 0,   /* not a function of nccl.h */
	CUCO_LIFT_NCCL_COLLECTIVE, /* ncclAllReduce, Broadcast, Bcast, Reduce, AllGather, ... */
	CUCO_LIFT_NCCL_P2P,        /* ncclSend, ncclRecv */
	CUCO_LIFT_NCCL_GROUP,      /* ncclGroupStart, ncclGroupEnd, ncclGroupSimulateEnd */
	CUCO_LIFT_NCCL_SETUP,      /* ncclGetUniqueId, ncclCommInitRank*, InitAll, Split, Shrink */
	CUCO_LIFT_NCCL_TEARDOWN,   /* ncclCommDestroy, Finalize, Abort, Revoke */
	CUCO_LIFT_NCCL_MEMORY,     /* ncclMemAlloc/Free, ncclComm(Window)Register/Deregister */
	CUCO_LIFT_NCCL_QUERY,      /* ncclCommCount, UserRank, CuDevice, GetVersion, errors */
	CUCO_LIFT_NCCL_REDOP,      /* ncclRedOpCreatePreMulSum, ncclRedOpDestroy */
	CUCO_LIFT_NCCL_OTHER,      /* any other function of nccl.h */
};

/* One argument of a call or a launch. */
struct cuco_lift_arg {
	char *text; /* as written (in the #define for a call a macro body writes); "" if unknown */
	struct cuco_lift_range extent; /* where that text is; file -1 when unknown */
	int has_value;                 /* clang evaluated it to an integer constant */
	long long value;               /* that constant (unsigned values above LLONG_MAX wrap) */
	char *enumerator; /* the enumerator it names, through macros and constants, or NULL */
};

/* Where a call's name comes from a #define's body. */
struct cuco_lift_macro_use {
	char *name;                      /* the macro expanded at the site */
	struct cuco_lift_range site;     /* the whole expansion: NAME(args) */
	struct cuco_lift_pos definition; /* the macro's name in its #define, file -1 if unknown */
};

struct cuco_lift_call {
	char *callee;              /* "ncclAllReduce", "cudaMalloc", "join" */
	char *callee_usr;          /* "" when the callee is unknown */
	int origin;                /* enum cuco_lift_origin of its first declaration */
	struct cuco_lift_pos decl; /* that declaration */
	int function;       /* index into functions when the callee is defined locally, else -1 */
	int nccl;           /* enum cuco_lift_nccl (only for functions of nccl.h) */
	int is_method;      /* a member call (obj.f(), p->f()) */
	int is_constructor; /* an object built with arguments: std::thread t(f, x) */
	int copies;         /* how often clang sees it: a macro that names its argument twice, 2 */
	struct cuco_lift_range extent; /* the call expression (in the #define when in_macro_body) */
	/* the callee's name where its text is; for an object built, where it starts (t(f, x)) */
	struct cuco_lift_pos name;
	int in_macro_body;                /* the call comes from a #define: no rewrite in place */
	struct cuco_lift_macro_use macro; /* set when in_macro_body */
	int caller;                       /* enclosing function index, -1 outside any function */
	int stmt;                         /* innermost enclosing statement, -1 for none */
	int loop;                         /* innermost enclosing loop statement, -1 for none */
	struct cuco_lift_arg *args;
	size_t nargs;
	/* pointer destinations: cudaMalloc(&a, n), ncclMemAlloc((void **)&buf[i], n), ... */
	char *dest_root;    /* "a", "buf[i]": the expression whose address is taken; NULL if none */
	char *dest_type;    /* its declared type: "real *" */
	char *dest_pointee; /* what it points to, canonical: "float" */
};

/* A kernel launch k<<<grid, block, smem, stream>>>(args). */
struct cuco_lift_launch {
	char *kernel; /* "jacobi_kernel" */
	char *kernel_usr;
	int function;                  /* index into functions when defined locally, else -1 */
	struct cuco_lift_range extent; /* from the kernel's name to the ')' (in the #define when
	                                * in_macro_body) */
	struct cuco_lift_pos name;
	int in_macro_body;
	struct cuco_lift_macro_use macro;
	char *config[4]; /* grid, block, shared memory, stream as written; NULL when absent */
	struct cuco_lift_range config_extent[4];
	size_t nconfig;
	struct cuco_lift_arg *args;
	size_t nargs;
	int caller, stmt, loop;
};

enum cuco_lift_stmt_kind {
	CUCO_LIFT_STMT_OTHER = 0, /* labels, case, goto, try, null statements, ... */
	CUCO_LIFT_STMT_COMPOUND,  /* { ... } */
	CUCO_LIFT_STMT_EXPR,      /* an expression statement: f(x); */
	CUCO_LIFT_STMT_DECL,      /* a declaration: int x = 0; */
	CUCO_LIFT_STMT_IF,
	CUCO_LIFT_STMT_SWITCH,
	CUCO_LIFT_STMT_FOR,
	CUCO_LIFT_STMT_WHILE,
	CUCO_LIFT_STMT_DO,
	CUCO_LIFT_STMT_RANGE_FOR, /* for (x : range) */
	CUCO_LIFT_STMT_BREAK,
	CUCO_LIFT_STMT_CONTINUE,
	CUCO_LIFT_STMT_RETURN,
	CUCO_LIFT_STMT_LAMBDA, /* a lambda expression: its body's statements hang below it */
};

/*
 * A statement of a local function's body, a small tree through parent: the
 * children of a compound statement are the statements whose parent it is,
 * in source order.
 */
struct cuco_lift_stmt {
	int kind;                      /* enum cuco_lift_stmt_kind */
	struct cuco_lift_range extent; /* with the trailing ';' of simple statements */
	int parent;                    /* enclosing statement, -1 for a function's body */
	int function;                  /* index into functions */
	char *macro; /* the macro the statement starts with (NCCLCHECK(...);), or NULL */
	int opaque;  /* wholly inside one macro expansion: its kind is what the macro expands
	              * to (a check macro's do-while), its inner statements are not listed */
	/* loops */
	struct cuco_lift_range body; /* the loop's body; file -1 for other statements */
	struct cuco_lift_range cond; /* condition (for the range-for: the range) */
	char *cond_text;             /* NULL when absent (for (;;)) */
	char *induction;             /* for (int i = ...; ...): "i"; the range-for's variable */
	int parent_loop;             /* innermost enclosing loop, -1 for none */
	/* break, continue: the loop or switch left; return: -1 (the function or lambda) */
	int target;
};

enum cuco_lift_thread_kind {
	CUCO_LIFT_THREAD_PTHREAD = 1, /* pthread_create */
	CUCO_LIFT_THREAD_STD,         /* std::thread built with a function */
	CUCO_LIFT_THREAD_JTHREAD,     /* std::jthread */
	CUCO_LIFT_THREAD_ASYNC,       /* std::async */
	CUCO_LIFT_THREAD_EMPLACE,     /* emplace_back/emplace into a container of std::thread */
};

/* A call that starts a thread. */
struct cuco_lift_thread {
	int kind;    /* enum cuco_lift_thread_kind */
	int call;    /* index into calls */
	char *entry; /* the thread's function as written ("worker", a lambda's text) or NULL */
};

/* A function declared in a local file, called, and defined in no parsed file. */
struct cuco_lift_undefined {
	char *name;
	char *usr;
	struct cuco_lift_pos decl;
	size_t ncalls;
};

/* A #define in a local file. */
struct cuco_lift_macro {
	char *name;
	struct cuco_lift_range extent; /* from the name to the end of the body */
	int function_like;
};

/*
 * Where the parse read an adjusted copy of a local file, so that clang
 * accepts what nvcc does; positions in facts are always the original file's.
 * The adjustments: `__NVCC__` in preprocessor lines of CUDA units reads as
 * defined (nvcc defines it; clang cannot without taking the toolkit's nvcc
 * paths), and a braced launch configuration <<<g, {x, y, z}>>> reads as
 * dim3(x, y, z) (clang's parser takes no braced lists there).
 */
struct cuco_lift_patch {
	struct cuco_lift_range extent; /* the original text replaced */
	char *replacement;
};

/* Everything the scan found; one caller-owned struct. */
struct cuco_lift_facts {
	char *root; /* the program root, absolute */
	struct cuco_lift_file *files;
	size_t nfiles, files_alloc;
	struct cuco_lift_include *includes;
	size_t nincludes, includes_alloc;
	struct cuco_lift_diag *diags;
	size_t ndiags, diags_alloc;
	struct cuco_lift_function *functions;
	size_t nfunctions, functions_alloc;
	struct cuco_lift_call *calls;
	size_t ncalls, calls_alloc;
	struct cuco_lift_launch *launches;
	size_t nlaunches, launches_alloc;
	struct cuco_lift_stmt *stmts;
	size_t nstmts, stmts_alloc;
	struct cuco_lift_thread *threads;
	size_t nthreads, threads_alloc;
	struct cuco_lift_undefined *undefined;
	size_t nundefined, undefined_alloc;
	struct cuco_lift_macro *macros;
	size_t nmacros, macros_alloc;
	struct cuco_lift_patch *patches;
	size_t npatches, patches_alloc;
	char *clang_version; /* the libclang that parsed it */
};

/* Empty facts; release with cuco_lift_facts_release(). */
void cuco_lift_facts_init(struct cuco_lift_facts *f);

/* Free everything f owns and leave it empty (reusable after _init). */
void cuco_lift_facts_release(struct cuco_lift_facts *f);

/*
 * The first error (or fatal error) in a local file, or failing that the
 * first anywhere; NULL when the program parsed without errors. Points into f.
 */
const struct cuco_lift_diag *cuco_lift_first_error(const struct cuco_lift_facts *f);

/*
 * Append d to out as "path:line:column: error: message", paths relative to
 * the root where they are under it, then one "  included from path:line"
 * line per #include that led to its file.
 */
void cuco_lift_diag_format(const struct cuco_lift_facts *f, const struct cuco_lift_diag *d,
                           struct cuco_strbuf *out);

/* Index of the local function named name (plain or qualified), -1 if none. */
int cuco_lift_function_find(const struct cuco_lift_facts *f, const char *name);

/* Index of the file whose path or root-relative path is path, -1 if none. */
int cuco_lift_file_find(const struct cuco_lift_facts *f, const char *path);

/* Whether a call is a NCCL host collective or point-to-point call. */
int cuco_lift_call_is_host_collective(const struct cuco_lift_call *c);

/* Stable lower-case names of the enums, for JSON and messages; never NULL. */
const char *cuco_lift_origin_name(int origin);
const char *cuco_lift_nccl_name(int nccl);
const char *cuco_lift_fn_kind_name(int kind);
const char *cuco_lift_stmt_kind_name(int kind);
const char *cuco_lift_thread_kind_name(int kind);
const char *cuco_lift_severity_name(int severity);

/*
 * The facts as one JSON object (positions as {"file", "offset", "line",
 * "column"}), pretty-printed, appended to out. CUCO_ERR_NOMEM when jansson
 * runs out of memory.
 */
int cuco_lift_facts_json(const struct cuco_lift_facts *f, struct cuco_strbuf *out,
                         struct cuco_err *err);

#endif
