/* store.h - the SQLite store: runs, programs and their lineage, evaluations, LLM calls. */
#ifndef CUCO_STORE_H
#define CUCO_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/*
 * Schema version this cuco reads and writes (`PRAGMA user_version`). Bump it
 * with every schema change and add a migration from the previous version; a
 * file with a newer version is refused (CUCO_ERR_SCHEMA), never rewritten.
 */
#define CUCO_STORE_SCHEMA_VERSION 7

/* `PRAGMA application_id` of a cuco store: "cuco" in ASCII. */
#define CUCO_STORE_APPLICATION_ID 0x6375636f

/* How long a connection waits for another writer before failing, in milliseconds. */
#define CUCO_STORE_BUSY_TIMEOUT_MS 10000

/* Length of a code hash as hex text (SHA-256), not counting the NUL. */
#define CUCO_STORE_HASH_LEN 64

/*
 * NULL conventions of the record structs below, used for both input and output:
 * a NULL string is SQL NULL; a row id of 0 is NULL (SQLite ids start at 1); an
 * optional integer below 0 (CUCO_STORE_NO_INT) is NULL; an optional real that is
 * NaN is NULL. The _init functions set every field to NULL in this sense.
 *
 * Input: strings are borrowed for the duration of the call only.
 * Output (the _get functions and the iteration callbacks): strings are allocated
 * by the store and owned by the record until its _release function frees them.
 */
#define CUCO_STORE_NO_INT (-1)

/* An open store. Opaque; one per thread (the connection is not shared). */
struct cuco_store;

/* One row of `runs`: a cuco command that produced programs or evaluations. */
struct cuco_run_rec {
	int64_t id;               /* output only */
	const char *created_at;   /* ISO 8601 UTC; NULL on input means now */
	const char *kind;         /* 'bench' | 'fastpath' | 'eval' | 'evolve' | ...; required */
	const char *workload;     /* workload name */
	const char *shape;        /* shape name */
	const char *config;       /* JSON text (checked to be valid JSON); an evolve run's
	                             settings, its search seed as "search_seed" */
	const char *status;       /* 'running' | 'done' | 'failed' | 'interrupted' */
	const char *finished_at;  /* ISO 8601 UTC, set by cuco_store_run_finish() */
	const char *cuco_version; /* version of the cuco that ran it */
	const char *host;         /* host name */
	const char *gpu;          /* GPU model(s) */
	const char *commit_id;    /* source commit of cuco, if known */
	const char *error;        /* why a failed run failed, or an interrupted one stopped
	                             (since schema 4; set by cuco_store_run_fail() and
	                             cuco_store_run_stop(), ignored by run_begin) */
	/* the absolute folder of the run's workload package when it is not one of cuco's
	   workloads (since schema 7; NULL: found by the workload's name) */
	const char *package;
};

/* A lineage edge: the program named by id contributed to the new program. */
struct cuco_parent {
	int64_t id;       /* programs.id of the parent */
	const char *kind; /* 'parent' | 'inspiration' | 'crossover' | ...; NULL means 'parent' */
};

/* One row of `programs`, with its rows of `program_parents`. */
struct cuco_program_rec {
	int64_t id;             /* output only */
	int64_t run_id;         /* run that produced it; 0 for none */
	const char *workload;   /* required */
	const char *name;       /* human name, e.g. 'baseline' or 'gen3-i1-c7' */
	const char *origin;     /* 'baseline' | 'peer' | 'compute' | 'comm' | 'seed' | 'candidate' |
	                           'file'; required */
	const char *hash;       /* content hash of code; NULL on input means compute it with
	                           cuco_store_hash_code() */
	const char *code;       /* the program source; required */
	const char *directive;  /* JSON text (checked to be valid JSON) */
	int64_t island;         /* CUCO_STORE_NO_INT for none */
	int64_t generation;     /* CUCO_STORE_NO_INT for none */
	const char *operator_;  /* operator that made it (column `operator`; C++ reserves it) */
	const char *flags;      /* where the code contradicts its directive, one line each (an
	                           LLM reply's code); NULL: none found or not checked */
	const char *created_at; /* ISO 8601 UTC; NULL on input means now */
	const struct cuco_parent *parents; /* lineage edges, in insertion order */
	size_t nparents;
};

/* One row of `evaluations`: one program run through the cascade on one shape. */
struct cuco_eval_rec {
	int64_t id;         /* output only */
	int64_t program_id; /* required */
	int64_t run_id;     /* 0 for none */
	const char *shape;
	int64_t ranks;             /* CUCO_STORE_NO_INT for none */
	const char *stage_reached; /* 'compile' | 'run' | 'verify' | 'bench' */
	const char *status; /* cuco_result_token(): 'ok', 'compile', 'timeout', ...; required */
	int error_code;     /* enum cuco_result, CUCO_OK when it passed */
	const char *error;  /* human message */
	const char *compile_log;
	const char *run_log;
	double median_us, p10_us, p90_us, min_us, mean_us; /* NaN for none */
	const char *samples_json; /* JSON array of samples in us (checked to be valid JSON) */
	double rel_err;           /* max relative error against the reference; NaN for none */
	double fitness;           /* NaN for none */
	const char *result_json;  /* the harness's raw JSON (evolve runs over several shapes:
	                             the per-shape details), stored as given (may be truncated) */
	const char *gpu;
	const char *created_at; /* ISO 8601 UTC; NULL on input means now */
	const char *diagnosis;  /* since schema 4: a model's reading of why it failed or was
	                           slower than its parent (--llm-diagnose); set after the
	                           evaluation by cuco_store_eval_set_diagnosis(), not on insert */
};

/* One row of `llm_calls`: one request to a language model. */
struct cuco_llm_call_rec {
	int64_t id;         /* output only */
	int64_t run_id;     /* 0 for none */
	int64_t program_id; /* program the reply became; 0 for none */
	const char *model;
	const char *endpoint;
	const char *prompt;
	const char *reply;
	int64_t tokens_in;      /* CUCO_STORE_NO_INT for unknown */
	int64_t tokens_out;     /* CUCO_STORE_NO_INT for unknown */
	double latency_ms;      /* NaN for unknown */
	double cost;            /* NaN for unknown */
	const char *error;      /* why the call failed; NULL when it succeeded */
	const char *created_at; /* ISO 8601 UTC; NULL on input means now */
	/* since schema 3; CUCO_STORE_NO_INT / NULL in rows stored before */
	int64_t http_status;       /* of the last attempt; 0: no response */
	const char *finish_reason; /* choices[0].finish_reason; NULL when none came back */
	int64_t attempts;          /* requests sent (0: refused before sending) */
	int64_t sampling_seed;     /* the sampling seed sent with the request (the column
	                              was `seed` before schema 6) */
	/* since schema 4; NULL in rows stored before */
	const char *purpose; /* what the call was for: 'mutation' | 'summary' | 'diagnosis' |
	                        'fastpath' */
};

/* One row of `summaries`, as read back (strings owned by the store during a walk). */
struct cuco_summary_rec {
	int64_t id;
	int64_t run_id;
	int64_t generation; /* CUCO_STORE_NO_INT: the whole run */
	const char *kind;   /* 'statistical' | 'llm' */
	const char *text;
	const char *created_at;
};

/*
 * The store file to use: $CUCO_STORE when set and not empty, else cuco.db in
 * the state directory ($CUCO_STATE, by default ".cuco" in the current
 * directory). Returns a static or environment string; do not free it, and do
 * not keep it across calls. The caller creates the parent directory if needed.
 */
const char *cuco_store_default_path(void);

/*
 * Open the store at path, creating the file and the schema when the file is
 * missing or empty. Turns on WAL mode, a busy timeout and foreign keys. On
 * success *out is a new store for cuco_store_close(). Errors: CUCO_ERR_SCHEMA
 * when the file is not an SQLite database, is corrupt, belongs to another
 * application, or has a schema version newer than CUCO_STORE_SCHEMA_VERSION
 * (the file is then left byte for byte as it was); CUCO_ERR_STORE for other
 * SQLite failures (e.g. the directory does not exist). *out is NULL on error.
 */
int cuco_store_open(const char *path, struct cuco_store **out, struct cuco_err *err);

/* Close the store (rolling back an open transaction) and free it. NULL is allowed. */
void cuco_store_close(struct cuco_store *store);

/*
 * Hold run id for this store handle: one process at a time runs or resumes a
 * run. An advisory lock on byte id of "<path>.lock" (an open file
 * description's lock: a second handle, in this process or another, is
 * refused), released when the store closes or the process dies, however.
 * CUCO_OK (also for a store in memory); CUCO_ERR_INVALID, saying so, when
 * another handle holds it; CUCO_ERR_IO when the lock file cannot be opened.
 */
int cuco_store_run_lock(struct cuco_store *store, int64_t id, struct cuco_err *err);

/* Path the store was opened with; owned by the store. */
const char *cuco_store_path(const struct cuco_store *store);

/*
 * Transactions. cuco_store_begin() starts a write transaction (BEGIN IMMEDIATE,
 * so it waits up to the busy timeout for other writers); everything until
 * cuco_store_commit() lands at once, or nothing after cuco_store_rollback().
 * Transactions do not nest: begin inside one is CUCO_ERR_INVALID, as are commit
 * and rollback outside one. Other errors: CUCO_ERR_STORE.
 */
int cuco_store_begin(struct cuco_store *store, struct cuco_err *err);
int cuco_store_commit(struct cuco_store *store, struct cuco_err *err);
int cuco_store_rollback(struct cuco_store *store, struct cuco_err *err);

/* Set every field of rec to NULL (see the conventions above). */
void cuco_run_rec_init(struct cuco_run_rec *rec);
/* Free the strings of a record filled by the store and re-init it. NULL is allowed. */
void cuco_run_rec_release(struct cuco_run_rec *rec);

/*
 * Insert a run with status 'running' (rec->status, rec->finished_at and rec->id
 * are ignored) and store its id in *id. Errors: CUCO_ERR_INVALID (kind missing,
 * config not JSON), CUCO_ERR_STORE.
 */
int cuco_store_run_begin(struct cuco_store *store, const struct cuco_run_rec *rec, int64_t *id,
                         struct cuco_err *err);

/*
 * Set the status of run id ('done', 'failed', 'interrupted', or back to 'running')
 * and its finished_at to now (NULL for 'running'). Errors: CUCO_ERR_INVALID
 * (unknown status), CUCO_ERR_NOT_FOUND (no such run), CUCO_ERR_STORE.
 */
int cuco_store_run_finish(struct cuco_store *store, int64_t id, const char *status,
                          struct cuco_err *err);

/*
 * Set the status of run id ('interrupted', 'failed' or 'done') with why it
 * ended so (may be NULL), finished now. Errors as cuco_store_run_finish().
 */
int cuco_store_run_stop(struct cuco_store *store, int64_t id, const char *status, const char *why,
                        struct cuco_err *err);

/*
 * Mark run id 'failed', finished now, and keep error (may be NULL) as why.
 * Resuming it (cuco_store_run_finish() with 'running') clears the error.
 * Errors: CUCO_ERR_NOT_FOUND (no such run), CUCO_ERR_STORE.
 */
int cuco_store_run_fail(struct cuco_store *store, int64_t id, const char *error,
                        struct cuco_err *err);

/*
 * Read run id into *out (owned strings: cuco_run_rec_release()). Errors:
 * CUCO_ERR_NOT_FOUND, CUCO_ERR_STORE; *out is then empty (init'ed).
 */
int cuco_store_run_get(struct cuco_store *store, int64_t id, struct cuco_run_rec *out,
                       struct cuco_err *err);

/*
 * Call fn for every run, oldest first. The record and its strings belong to the
 * store and live until fn returns. fn returns 0 to go on; any other value stops
 * the walk and is returned (fn sets err itself). fn may read and write the store
 * but must not close it. Errors: CUCO_ERR_STORE, or fn's value.
 */
int cuco_store_run_each(struct cuco_store *store,
                        int (*fn)(const struct cuco_run_rec *run, void *arg, struct cuco_err *err),
                        void *arg, struct cuco_err *err);

/* Set every field of rec to NULL (see the conventions above). */
void cuco_program_rec_init(struct cuco_program_rec *rec);
/* Free the strings and parent array of a record filled by the store; re-init it. */
void cuco_program_rec_release(struct cuco_program_rec *rec);

/*
 * SHA-256 of code as 64 lowercase hex digits plus NUL into out: the content hash
 * the store keeps in programs.hash when the caller gives none.
 */
void cuco_store_hash_code(const char *code, char out[CUCO_STORE_HASH_LEN + 1]);

/*
 * Insert a program and its lineage edges (rec->parents) atomically and store its
 * id in *id. The same code may be stored more than once (e.g. by two runs); use
 * cuco_store_program_find_hash() to reuse a row instead. Errors:
 * CUCO_ERR_INVALID (workload, origin or code missing, directive not JSON, a
 * parent or run id that does not exist), CUCO_ERR_STORE; nothing is inserted.
 */
int cuco_store_program_add(struct cuco_store *store, const struct cuco_program_rec *rec,
                           int64_t *id, struct cuco_err *err);

/*
 * Read program id and its parents into *out (owned: cuco_program_rec_release()).
 * Errors: CUCO_ERR_NOT_FOUND, CUCO_ERR_STORE; *out is then empty.
 */
int cuco_store_program_get(struct cuco_store *store, int64_t id, struct cuco_program_rec *out,
                           struct cuco_err *err);

/*
 * Find the oldest program of workload whose hash is hash: *id is its id, or 0
 * when there is none (which is not an error). Errors: CUCO_ERR_STORE.
 */
int cuco_store_program_find_hash(struct cuco_store *store, const char *workload, const char *hash,
                                 int64_t *id, struct cuco_err *err);

/*
 * Call fn for every program of run_id (0: every program of every run), oldest
 * first, with its parents filled in. Record lifetime and fn's contract as for
 * cuco_store_run_each().
 */
int cuco_store_program_each(struct cuco_store *store, int64_t run_id,
                            int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                      struct cuco_err *err),
                            void *arg, struct cuco_err *err);

/*
 * Call fn for every program that names program id as a parent (of any kind),
 * oldest first. Record lifetime and fn's contract as for cuco_store_run_each().
 */
int cuco_store_program_each_child(struct cuco_store *store, int64_t id,
                                  int (*fn)(const struct cuco_program_rec *prog, void *arg,
                                            struct cuco_err *err),
                                  void *arg, struct cuco_err *err);

/* Set every field of rec to NULL (see the conventions above); error_code to CUCO_OK. */
void cuco_eval_rec_init(struct cuco_eval_rec *rec);
/* Free the strings of a record filled by the store and re-init it. NULL is allowed. */
void cuco_eval_rec_release(struct cuco_eval_rec *rec);

/*
 * Insert an evaluation and store its id in *id. Errors: CUCO_ERR_INVALID
 * (program_id or status missing, unknown stage_reached, samples_json not JSON,
 * program or run does not exist), CUCO_ERR_STORE.
 */
int cuco_store_eval_add(struct cuco_store *store, const struct cuco_eval_rec *rec, int64_t *id,
                        struct cuco_err *err);

/*
 * Read evaluation id into *out (owned: cuco_eval_rec_release()). Errors:
 * CUCO_ERR_NOT_FOUND, CUCO_ERR_STORE; *out is then empty.
 */
int cuco_store_eval_get(struct cuco_store *store, int64_t id, struct cuco_eval_rec *out,
                        struct cuco_err *err);

/*
 * Store text as the diagnosis of evaluation id (replacing any). Errors:
 * CUCO_ERR_NOT_FOUND (no such evaluation), CUCO_ERR_STORE.
 */
int cuco_store_eval_set_diagnosis(struct cuco_store *store, int64_t id, const char *text,
                                  struct cuco_err *err);

/*
 * Call fn for every evaluation of program_id, oldest first. Record lifetime and
 * fn's contract as for cuco_store_run_each().
 */
int cuco_store_eval_each_program(struct cuco_store *store, int64_t program_id,
                                 int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err);

/*
 * Call fn for every evaluation of run_id (0: every evaluation), oldest first.
 * Record lifetime and fn's contract as for cuco_store_run_each().
 */
int cuco_store_eval_each_run(struct cuco_store *store, int64_t run_id,
                             int (*fn)(const struct cuco_eval_rec *ev, void *arg,
                                       struct cuco_err *err),
                             void *arg, struct cuco_err *err);

/* Set every field of rec to NULL (see the conventions above). */
void cuco_llm_call_rec_init(struct cuco_llm_call_rec *rec);
/* Free the strings of a record filled by the store and re-init it. NULL is allowed. */
void cuco_llm_call_rec_release(struct cuco_llm_call_rec *rec);

/*
 * Insert an LLM call and store its id in *id. Errors: CUCO_ERR_INVALID (run or
 * program does not exist), CUCO_ERR_STORE.
 */
int cuco_store_llm_call_add(struct cuco_store *store, const struct cuco_llm_call_rec *rec,
                            int64_t *id, struct cuco_err *err);

/*
 * Read LLM call id into *out (owned: cuco_llm_call_rec_release()). Errors:
 * CUCO_ERR_NOT_FOUND, CUCO_ERR_STORE; *out is then empty.
 */
int cuco_store_llm_call_get(struct cuco_store *store, int64_t id, struct cuco_llm_call_rec *out,
                            struct cuco_err *err);

/*
 * Call fn for every LLM call of run_id, oldest first. Record lifetime and fn's
 * contract as for cuco_store_run_each().
 */
int cuco_store_llm_call_each_run(struct cuco_store *store, int64_t run_id,
                                 int (*fn)(const struct cuco_llm_call_rec *call, void *arg,
                                           struct cuco_err *err),
                                 void *arg, struct cuco_err *err);

/*
 * Call fn for every summary of run_id, oldest first. Record lifetime and fn's
 * contract as for cuco_store_run_each().
 */
int cuco_store_summary_each_run(struct cuco_store *store, int64_t run_id,
                                int (*fn)(const struct cuco_summary_rec *sum, void *arg,
                                          struct cuco_err *err),
                                void *arg, struct cuco_err *err);

/*
 * Insert a summary of a run's generation (generation CUCO_STORE_NO_INT: the whole
 * run); kind is 'statistical' or 'llm'. *id (may be NULL) gets its id. Errors:
 * CUCO_ERR_INVALID (missing kind or text, no such run), CUCO_ERR_STORE.
 */
int cuco_store_summary_add(struct cuco_store *store, int64_t run_id, int64_t generation,
                           const char *kind, const char *text, int64_t *id, struct cuco_err *err);

/*
 * Read meta key into *value: a malloc'ed string the caller frees, or NULL when
 * the key is not set (not an error). Errors: CUCO_ERR_STORE.
 */
int cuco_store_meta_get(struct cuco_store *store, const char *key, char **value,
                        struct cuco_err *err);

/* Set meta key to value (NULL deletes the key). Errors: CUCO_ERR_STORE. */
int cuco_store_meta_set(struct cuco_store *store, const char *key, const char *value,
                        struct cuco_err *err);

#endif
