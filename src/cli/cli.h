/* cli.h - what the subcommands share: flag tables, workload lookup, result tables. */
#ifndef CUCO_CLI_H
#define CUCO_CLI_H

#include <stdio.h>

#include "cascade/cascade.h"
#include "cli/flags.h"
#include "llm/client.h"
#include "store/store.h"
#include "workload/manifest.h"

/*
 * The exit status of every command: one per kind of failure, the same in
 * every command (README.md, "Exit status"; `cuco --help`). A command returns
 * a result code (util/error.h) or CLI_EXIT_INTERRUPTED; cuco's main maps it
 * with cli_exit_status(). The numbers are kept from release to release.
 */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_INTERNAL = 1,      /* out of memory, an OS call failed, a bug */
	CLI_EXIT_IO = 2,            /* a file could not be read or written */
	CLI_EXIT_BAD_INPUT = 4,     /* malformed or invalid input (manifest, directive, value) */
	CLI_EXIT_USAGE = 5,         /* command-line misuse */
	CLI_EXIT_STORE = 6,         /* the store failed or is newer than this cuco */
	CLI_EXIT_COMPILE = 8,       /* nothing compiled */
	CLI_EXIT_RUN = 9,           /* programs failed while running, hung or crashed */
	CLI_EXIT_VERIFY = 12,       /* nothing verified */
	CLI_EXIT_UNSUPPORTED = 13,  /* not possible on this machine */
	CLI_EXIT_NOT_FOUND = 14,    /* a named workload, run, program or file does not exist */
	CLI_EXIT_NO_GPU = 15,       /* fewer CUDA GPUs than the ranks need */
	CLI_EXIT_INTERRUPTED = 130, /* SIGINT or SIGTERM (128 + 2, as shells say) */
};

/* The exit status for a command's result (a cuco_result or CLI_EXIT_INTERRUPTED). */
int cli_exit_status(int result);

/* The exit status table, for `cuco --help`. */
void cli_exit_help(FILE *out);

/* Print "cuco <cmd>: <msg>" to stderr and return CUCO_ERR_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "cuco: <msg>" from err to stderr and return its code. */
int cli_fail(const struct cuco_err *err);

/* Write s (a candidate's or a model's text: a log, an error) to f made safe for a terminal
 * (cuco_strbuf_add_printable). */
void cli_put_printable(FILE *f, const char *s);

/* A bounded integer (an ID given as an argument); -1 after printing a usage error naming what. */
int cli_int(const char *cmd, const char *what, const char *v, long long lo, long long hi,
            long long *out);

/* --store PATH of a command whose args struct type holds it in member m. */
#define CLI_STORE_FLAG(type, m)                                                             \
	{                                                                                   \
		CLI_STRING, "--store", "PATH",                                              \
		    "SQLite store (default $CUCO_STORE or .cuco/cuco.db)", CLI_AT(type, m), \
		    .env = "CUCO_STORE"                                                     \
	}

/*
 * Load workload `name`: a package folder (a path, or a bare name that is a
 * folder here holding a manifest.json), a path to a manifest.json, or a
 * name under <home>/workloads.
 */
int cli_load_workload(const char *name, struct cuco_manifest *m, struct cuco_err *err);

/*
 * The absolute folder of m's package (into buf) when it is not one of
 * cuco's workloads, which their names find: what a run stores to find its
 * package again. NULL for cuco's own, or when m is NULL.
 */
const char *cli_package_of(const struct cuco_manifest *m, char *buf, size_t len);

/*
 * The program template of workload m into buf: its package's own
 * (<package>/template.cu.in, as cuco init writes it), else cuco's
 * (<home>/share/realize/<name>.cu.in); NULL when it has none.
 */
const char *cli_template_of(const struct cuco_manifest *m, char *buf, size_t len);

/* Load the workload of a stored run: its package folder when it has one, else its name. */
int cli_load_run_workload(const struct cuco_run_rec *run, struct cuco_manifest *m,
                          struct cuco_err *err);

/* Open the store at path (NULL: default), creating its directory. */
int cli_open_store(const char *path, struct cuco_store **out, struct cuco_err *err);

/* Begin a store run of kind for workload (m: its manifest, whose package folder the run
 * keeps when it has one; may be NULL); fills *id. */
int cli_run_begin(struct cuco_store *s, const char *kind, const struct cuco_manifest *m,
                  const char *workload, const char *shape, const char *config_json, const char *gpu,
                  int64_t *id, struct cuco_err *err);

/*
 * The run options (struct cuco_run_opts): --ranks --launcher --wrapper
 * --timeout --warmup --iters --bench-seconds --verify-runs --input-seed
 * --timing, and --seed refused (which seed?). Include it with CLI_TABLE at
 * the offset of the command's struct cuco_run_opts.
 */
extern const struct cli_flag cli_run_table[];

/* Print the evaluation table of one shape (# comments for people). */
void cli_print_shape_table(FILE *f, const struct cuco_manifest *m, const struct cuco_eval_shape *s,
                           const struct cuco_eval_program *progs, int nprogs, int ranks);

/* Append one shape's results as a JSON object to sb. */
void cli_shape_json(struct cuco_strbuf *sb, const struct cuco_eval_shape *s,
                    const struct cuco_eval_program *progs, int nprogs);

/*
 * The hardware facts of this node for programs of o->ranks ranks, measured by
 * the harness's probe, and the nvcc target they call for (when CUCO_ARCH is
 * unset). Returns f when measured, with one line to stderr naming them;
 * NULL when they are unknown (no GPU, or ranks started by a launcher on
 * other nodes): then directives are checked against the design space only,
 * which that line says, and running them tells the rest.
 */
struct cuco_hw_facts;
const struct cuco_hw_facts *cli_probe_facts(const char *cmd, const struct cuco_run_opts *o,
                                            struct cuco_hw_facts *f);

/*
 * A --shape value of cmd (a shape's name or its values,
 * cuco_manifest_shape_spec) into shapes[i], refusing one already among
 * shapes[0..i). 0, or CUCO_ERR_USAGE (printed).
 */
int cli_shape_arg(const char *cmd, struct cuco_manifest *m, const char *arg,
                  const struct cuco_shape **shapes, int i);

/*
 * What bench, eval and evolve check before they touch the store: o->ranks
 * against the manifest's rank counts (allow_one: 1 too), the nshapes shapes
 * against its shape rules on that many ranks, the node's facts
 * (cli_probe_facts into *f, *fp = its answer) and, when run_here, the GPUs'
 * compute capability against the manifest's "requires". CUCO_OK, or the
 * refusal in err (not printed).
 */
int cli_node_checks(const char *cmd, const struct cuco_manifest *m, const struct cuco_run_opts *o,
                    int allow_one, int run_here, const struct cuco_shape *const *shapes,
                    int nshapes, struct cuco_hw_facts *f, const struct cuco_hw_facts **fp,
                    struct cuco_err *err);

/* <cuco home>/share/<sub> (static string), or NULL when the home is unknown. */
const char *cli_share_dir(const char *sub);

/* Run the fast path on the workload's host program; seed text into out. */
int cli_make_seed(const struct cuco_manifest *m, struct cuco_strbuf *out, int *nsites,
                  struct cuco_err *err);

#define CLI_LLM_MAX_MODELS 8 /* --llm-model flags one command takes */

/* The --llm-* endpoint flags shared by `cuco evolve` and `cuco fastpath`. Plain data. */
struct cli_llm_flags {
	const char *base_url, *key_env;
	const char *api; /* "openai" or "anthropic" (checked); NULL: not given (openai) */
	const char *models[CLI_LLM_MAX_MODELS];
	int nmodels;
	char env_models[512]; /* CUCO_LLM_MODEL, split in place */
	long long budget_tokens;
	double budget_cost, timeout_s;
	int max_tokens; /* 0: the client's default */
	struct cuco_llm_price prices[CUCO_LLM_MAX_PRICES];
	char price_names[CUCO_LLM_MAX_PRICES][128];
	int nprices;
	int unsandboxed; /* --unsandboxed: the model's code runs even without the view */
};

/* No flags given yet. */
void cli_llm_flags_init(struct cli_llm_flags *f);

/*
 * Before code a model writes runs (farm: on a Slurm farm's nodes): 0 when it
 * will run in the sandbox's view, or outside it with --unsandboxed (a note
 * on stderr says so); else CUCO_ERR_UNSUPPORTED with the reason on stderr:
 * cuco fails closed.
 */
int cli_llm_sandbox(const char *cmd, const struct cli_llm_flags *f, int farm);

/*
 * The --llm-* endpoint flags (struct cli_llm_flags): --llm-api
 * --llm-base-url --llm-model --llm-key-env --llm-budget-tokens
 * --llm-budget-cost --llm-price --llm-timeout --llm-max-tokens.
 */
extern const struct cli_flag cli_llm_table[];

/*
 * Fill the endpoint and models from CUCO_LLM_BASE_URL / CUCO_LLM_MODEL
 * (comma-separated) where the flags gave none, and check both are known.
 * who names what needs them in the message ("--operator llm", "--llm").
 * Then asks the endpoint's /v1/models (a few seconds at most) and notes on
 * stderr each model it does not list; an endpoint that cannot list its
 * models is not an error here. Returns 0 or CUCO_ERR_USAGE after printing
 * which flag or variable to set.
 */
int cli_llm_resolve(const char *cmd, struct cli_llm_flags *f, const char *who);

/*
 * Client configuration from resolved flags: defaults, then the api and endpoint,
 * key variable (the api's when --llm-key-env is not given), timeout, max_tokens, budgets, prices,
 * seed, and models[0] as the model. Strings stay owned by f (and argv).
 */
void cli_llm_config(const struct cli_llm_flags *f, uint64_t seed, struct cuco_llm_config *c);

#endif
