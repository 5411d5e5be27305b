/*
 * run.c - the cascade's GPU stages: hand compiled programs to cuco-harness,
 * which verifies each against the workload's reference and times it, and
 * read its JSON back. A program that crashes or hangs its rank group is
 * recorded as such and the programs after it are run again without it. With
 * a farm in use (farm/slurm.h) the harness runs as a job step elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "cascade/sandbox.h"
#include "farm/slurm.h"
#include "util/jail.h"
#include "util/jail_probe.h"
#include "util/paths.h"
#include "util/array.h"
#include "util/proc.h"
#include "util/xalloc.h"

void cuco_run_opts_default(struct cuco_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ranks = 2;
	o->timeout_s = 60;
	o->warmup = 5;
	o->iters = 20;
	o->bench_seconds = 0.5;
	o->verify_runs = 3;
	o->seed = 1;
	o->samples = 1;
}

void cuco_run_result_init(struct cuco_run_result *r)
{
	memset(r, 0, sizeof(*r));
	cuco_strbuf_init(&r->log, 0);
}

static void program_result_release(struct cuco_program_result *p)
{
	free(p->samples_json);
	free(p->error);
	p->samples_json = p->error = NULL;
}

void cuco_run_result_release(struct cuco_run_result *r)
{
	for (int i = 0; i < r->nresults; i++)
		program_result_release(&r->results[i]);
	free(r->error);
	free(r->raw_json);
	cuco_strbuf_release(&r->log);
	r->nresults = 0;
	r->error = r->raw_json = NULL;
}

static int token_code(const char *t)
{
	static const struct {
		const char *tok;
		int code;
	} map[] = {{"ok", CUCO_OK},
	           {"wrong", CUCO_ERR_VERIFY},
	           {"run", CUCO_ERR_RUN},
	           {"timeout", CUCO_ERR_TIMEOUT},
	           {"crash", CUCO_ERR_CRASH},
	           {"unsupported", CUCO_ERR_UNSUPPORTED},
	           {"no_gpu", CUCO_ERR_NO_GPU},
	           {"invalid", CUCO_ERR_INVALID},
	           {"usage", CUCO_ERR_USAGE},
	           {"nomem", CUCO_ERR_NOMEM}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].tok, t))
			return map[i].code;
	return CUCO_ERR_RUN;
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void fill_program(struct cuco_program_result *p, json_t *e)
{
	const char *name = str(e, "name"), *status = str(e, "status"), *err = str(e, "error");
	json_t *ver = json_object_get(e, "verified"), *samples = json_object_get(e, "samples_us");

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "?");
	snprintf(p->status, sizeof(p->status), "%s", status ? status : "run");
	p->code = token_code(p->status);
	p->verify = !json_is_null(ver) && ver != NULL;
	p->rel_err = num(e, "rel_err");
	p->median_us = num(e, "median_us");
	p->p10_us = num(e, "p10_us");
	p->p90_us = num(e, "p90_us");
	p->min_us = num(e, "min_us");
	p->mean_us = num(e, "mean_us");
	p->host_us = num(e, "host_us");
	p->weighted_us = num(e, "weighted_us");
	{
		json_t *ru = json_object_get(e, "rank_us"), *x;
		size_t k;

		json_array_foreach(ru, k, x)
		{
			if (k < sizeof(p->rank_us) / sizeof(p->rank_us[0]) && json_is_number(x))
				p->rank_us[p->nranks_us++] = json_number_value(x);
		}
	}
	p->iters = json_is_integer(json_object_get(e, "iters"))
	               ? (int)json_integer_value(json_object_get(e, "iters"))
	               : 0;
	if (json_is_array(samples))
		p->samples_json = json_dumps(samples, JSON_COMPACT);
	p->error = cuco_xstrdup(err);
	snprintf(p->stage, sizeof(p->stage), "%s",
	         p->code == CUCO_OK           ? "bench"
	         : p->code == CUCO_ERR_VERIFY ? "verify"
	                                      : "run");
}

int cuco_run_result_parse(const char *text, struct cuco_run_result *res, struct cuco_err *err)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je), *progs;
	const char *status, *gpu;
	int rc = CUCO_OK;

	if (!root || !json_is_object(root)) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE, "harness output:%d:%d: %s", je.line,
		                  je.column, root ? "not a JSON object" : je.text);
		goto out;
	}
	if (!json_is_integer(json_object_get(root, "harness"))) {
		rc = cuco_err_set(err, CUCO_ERR_PARSE,
		                  "harness output: missing \"harness\" version");
		goto out;
	}
	status = str(root, "status");
	res->code = token_code(status ? status : "run");
	if (json_is_integer(json_object_get(root, "error_code")))
		res->code = (int)json_integer_value(json_object_get(root, "error_code"));
	gpu = str(root, "gpu");
	if (gpu)
		snprintf(res->gpu, sizeof(res->gpu), "%s", gpu);
	gpu = str(root, "timing");
	snprintf(res->timing, sizeof(res->timing), "%s", gpu ? gpu : "");
	gpu = str(root, "cuda_device_max_connections");
	snprintf(res->max_connections, sizeof(res->max_connections), "%s", gpu ? gpu : "");
	free(res->raw_json);
	res->raw_json = cuco_xstrdup(text);
	if (res->code != CUCO_OK) {
		free(res->error);
		res->error = cuco_xstrdup(str(root, "error"));
	}
	progs = json_object_get(root, "programs");
	if (json_is_array(progs)) {
		size_t i;
		json_t *e;
		json_array_foreach(progs, i, e)
		{
			if (res->nresults >= CUCO_CASCADE_MAX_PROGRAMS)
				break;
			if (json_is_object(e))
				fill_program(&res->results[res->nresults++], e);
		}
	}
	/* The program that took its rank group down. */
	if (res->code != CUCO_OK && str(root, "program") && *str(root, "program") &&
	    res->nresults < CUCO_CASCADE_MAX_PROGRAMS) {
		struct cuco_program_result *p = &res->results[res->nresults++];
		const char *stage = str(root, "stage");
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", str(root, "program"));
		snprintf(p->status, sizeof(p->status), "%s", status ? status : "run");
		p->code = res->code;
		p->rel_err = p->median_us = p->p10_us = p->p90_us = p->min_us = p->mean_us =
		    p->host_us = NAN;
		snprintf(p->stage, sizeof(p->stage), "%s",
		         stage && (!strcmp(stage, "verify") || !strcmp(stage, "bench")) ? stage
		                                                                        : "run");
		p->error = cuco_xstrdup(str(root, "error"));
	}
out:
	json_decref(root);
	return rc;
}

const char *cuco_run_timing(const struct cuco_run_opts *o)
{
	return o->burst ? "burst" : "sustained";
}

/* A run config's word for key: `other` when the config says so, else `usual`
 * (also for a config that is missing, unreadable or older than the key). */
static const char *config_word(const char *config_json, const char *key, const char *other,
                               const char *usual)
{
	json_t *root = config_json ? json_loads(config_json, 0, NULL) : NULL;
	const char *t = root ? json_string_value(json_object_get(root, key)) : NULL;
	const char *out = t && !strcmp(t, other) ? other : usual;

	json_decref(root);
	return out;
}

const char *cuco_run_config_statistic(const char *config_json)
{
	return config_word(config_json, "statistic", "mean", "median");
}

const char *cuco_run_config_timing(const char *config_json)
{
	return config_word(config_json, "timing", "burst", "sustained");
}

double cuco_result_latency(const struct cuco_program_result *r, const struct cuco_run_opts *o)
{
	if (!r)
		return NAN;
	return o && o->mean ? r->mean_us : r->median_us;
}

/* A record of a shared result file, as cuco_run_records_pick reads it. */
struct shared_rec {
	const char *line; /* in the text's copy */
	int rank;
	int ok; /* status "ok" */
};

/* A failure record of cuco's own about the channel, naming program (may be ""). */
static void channel_failure(struct cuco_strbuf *out, int code, const char *program, const char *why)
{
	json_t *j = json_pack("{s:i,s:s,s:i,s:i,s:s,s:s,s:s,s:[]}", "harness", 1, "status",
	                      cuco_result_token(code), "error_code", code, "rank", -1, "stage",
	                      "run", "program", program, "error", why, "programs");
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	cuco_strbuf_reset(out);
	cuco_strbuf_adds(out, text ? text : "");
	free(text);
	json_decref(j);
}

int cuco_run_records_pick(const char *text, struct cuco_strbuf *out)
{
	char *copy = cuco_xstrdup(text), why[256] = "", culprit[128] = "";
	struct shared_rec *recs = NULL;
	const char *program = "";
	int n = 0, nranks = -1, rc = 0, failure = -1, at_zero = -1, lineno = 0;
	size_t alloc = 0;

	for (char *line = copy; line && *line && !why[0];) {
		char *nl = strchr(line, '\n');
		json_t *j, *rank;

		if (nl)
			*nl = '\0';
		lineno++;
		if (!strncmp(line, "#program ", 9)) {
			program = line + 9;
		} else if (line[strspn(line, " \t\r")]) {
			j = json_loads(line, 0, NULL);
			rank = json_object_get(j, "rank");
			if (!json_is_object(j) || !json_is_integer(json_object_get(j, "harness")) ||
			    !json_is_integer(rank) || json_integer_value(rank) < -1 ||
			    json_integer_value(rank) >= 1 << 20) {
				snprintf(
				    why, sizeof(why),
				    "line %d of the result file is no rank's record (a program "
				    "wrote to the harness's result channel)",
				    lineno);
			} else {
				struct shared_rec *r = CUCO_ARRAY_PUSH(recs, n, alloc);
				const char *status = str(j, "status");

				r->line = line;
				r->rank = (int)json_integer_value(rank);
				r->ok = status && !strcmp(status, "ok");
				for (int i = 0; i < n - 1; i++)
					if (r->rank >= 0 && recs[i].rank == r->rank)
						snprintf(
						    why, sizeof(why),
						    "rank %d has a second record on the result "
						    "channel (a program wrote to it)",
						    r->rank);
				if (json_is_integer(json_object_get(j, "ranks")))
					nranks =
					    (int)json_integer_value(json_object_get(j, "ranks"));
				if (!r->ok && failure < 0)
					failure = n - 1;
				if (r->ok && r->rank == 0)
					at_zero = n - 1;
			}
			json_decref(j);
			if (why[0])
				snprintf(culprit, sizeof(culprit), "%s", program);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (why[0]) {
		channel_failure(out, CUCO_ERR_RUN, culprit, why);
	} else if (failure >= 0) {
		cuco_strbuf_reset(out);
		cuco_strbuf_adds(out, recs[failure].line); /* a failure beats a success */
	} else if (!n) {
		rc = -1;
	} else {
		for (int r = 0; r < nranks && !why[0]; r++) {
			int seen = 0;
			for (int i = 0; i < n; i++)
				seen |= recs[i].rank == r;
			if (!seen)
				snprintf(why, sizeof(why), "rank %d exited without a result", r);
		}
		if (!why[0] && (nranks < 1 || at_zero < 0))
			snprintf(why, sizeof(why), "no record of rank 0 on the result channel");
		if (why[0])
			channel_failure(out, CUCO_ERR_CRASH, "", why);
		else {
			cuco_strbuf_reset(out);
			cuco_strbuf_adds(out, recs[at_zero].line);
		}
	}
	free(recs);
	free(copy);
	return rc;
}

static void push(char **argv, int *n, char *s)
{
	argv[(*n)++] = s;
}

int cuco_run_jailed(void)
{
	const char *v = getenv("CUCO_SANDBOX_RUN_JAIL");

	return !(v && !strcmp(v, "0")) && cuco_jail_available();
}

/* Every existing folder of a PATH-like list ("a:b:c") into j, read-only. */
static void add_path_list(struct cuco_jail *j, const char *list)
{
	char one[PATH_MAX];

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n && n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = '\0';
			cuco_jail_add(j, one, 0);
		}
		p += n + (p[n] == ':');
	}
}

/* 1 when dir is path or a folder above it (both made canonical). */
static int holds(const char *dir, const char *path)
{
	char d[PATH_MAX], p[PATH_MAX];
	size_t n;

	if (!path || !realpath(dir, d) || !realpath(path, p))
		return 0;
	n = strlen(d);
	return !strcmp(d, "/") || (!strncmp(p, d, n) && (p[n] == '\0' || p[n] == '/'));
}

/* 1 when the view's id may enter dir (as root the run is an unprivileged id's). */
static int visible(const struct cuco_jail *j, const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return 0;
	return !j->root || (st.st_mode & 0001) || (st.st_uid == j->uid && (st.st_mode & 0100)) ||
	       (st.st_gid == j->gid && (st.st_mode & 0010));
}

/*
 * The view a harness run gets (util/jail.h): the system's folders, the
 * toolkit, NCCL, NVSHMEM and the library path read-only, the files it loads
 * (files[0..nfiles): the harness, the workload's and the programs' objects)
 * read-only one by one, work writable, the node's /dev (GPUs) with a private
 * /dev/shm, /sys read-only; with a launcher, the directory cuco was started
 * in read-only (a hostfile may be named from there; never one that holds
 * $HOME or the state directory, nor one its id may not enter) and the
 * launcher starts there, else in work. Nothing else
 * of the node: not the store, the state directory, $HOME, nor the node's
 * unix sockets. NULL (errno) when it holds too much.
 */
static struct cuco_jail *harness_view(const char *work, const char *stage, char **env,
                                      const char *const *files, int nfiles, int launcher)
{
	struct cuco_jail *j = cuco_xcalloc(1, sizeof(*j));
	char nvcc[PATH_MAX], here[PATH_MAX];

	cuco_jail_init(j, stage);
	j->node_dev = 1;
	j->sys = 1;
	cuco_jail_add_system(j);
	/* the toolkit (libcudart, compute-sanitizer) */
	if (cuco_sandbox_toolkit(nvcc, sizeof(nvcc)))
		cuco_jail_add(j, nvcc, 0);
	if (cuco_nccl_home())
		cuco_jail_add(j, cuco_nccl_home(), 0);
	if (cuco_nvshmem_home())
		cuco_jail_add(j, cuco_nvshmem_home(), 0);
	add_path_list(j, getenv("LD_LIBRARY_PATH"));
	for (int i = 0; env && env[i]; i++)
		if (!strncmp(env[i], "LD_LIBRARY_PATH=", 16))
			add_path_list(j, env[i] + 16);
	for (int i = 0; i < nfiles; i++)
		cuco_jail_add(j, files[i], 0);
	if (launcher && getcwd(here, sizeof(here)) && visible(j, here) &&
	    !holds(here, getenv("HOME")) && !holds(here, cuco_state_dir()))
		cuco_jail_add(j, here, 0);
	cuco_jail_add(j, work, 1);
	if (cuco_jail_finish(j)) {
		free(j);
		return NULL;
	}
	return j;
}

/*
 * Start the harness on this node (fork mode, or the launcher cuco starts
 * here) with env's first nenv settings and work, a private directory the
 * caller made (with stage, an empty one beside it) and removes; in fork mode
 * it starts in work, and so do the ranks it forks. Where the node allows it
 * (cuco_run_jailed) it runs in the view of harness_view, the first process
 * of a PID namespace of its own (all it starts ends with it), as root an
 * unprivileged id; work is then its TMPDIR and $HOME. In fork mode, in a
 * network namespace of its own (loopback only, shared by the ranks) when
 * CUCO_SANDBOX_RUN_NETNS is 1 and the kernel allows it. 0 when it ran (see
 * st), -1 when it could not start (errno).
 */
static int run_private(char **argv, char **env, int nenv, const char *work, const char *stage,
                       const char *const *files, int nfiles, int enter, int result_fd,
                       struct cuco_strbuf *out, struct cuco_strbuf *log, double timeout_s,
                       struct cuco_proc_status *st)
{
	struct cuco_proc_sched s;
	const char *netns = getenv("CUCO_SANDBOX_RUN_NETNS");
	char tmpdir[PATH_MAX + 8], home[PATH_MAX + 8], here[PATH_MAX], *envs[20];
	struct cuco_jail *j = NULL;
	int ofd = -1, efd = -1, n = 0, rc = -1;
	pid_t pid;

	memset(&s, 0, sizeof(s));
	s.pidns = 1; /* without the view too: what it starts ends with it */
	s.cwd = enter ? work : NULL;
	s.channel = enter; /* fork mode: the result on descriptor 3, stdout and stderr a log */
	s.netns =
	    enter && netns && !strcmp(netns, "1"); /* never a launcher's: it may leave the node */
	for (; n < nenv && n < 16; n++)
		envs[n] = env[n];
	envs[n] = NULL;
	if (cuco_run_jailed()) {
		j = harness_view(work, stage, envs, files, nfiles, !enter);
		if (!j)
			return -1;
		/* as root the run is an unprivileged id's: its folder (and result file) its */
		if (j->root && (chown(work, j->uid, j->gid) ||
		                (result_fd >= 0 && fchown(result_fd, j->uid, j->gid))))
			goto out;
		s.jail = j;
		if (!enter) {
			/* the launcher starts where cuco was started, where the view holds it */
			s.cwd = work;
			if (getcwd(here, sizeof(here)))
				for (int i = 0; i < j->n; i++)
					if (!strcmp(j->e[i].dst, here))
						s.cwd = here;
		}
		snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", work);
		snprintf(home, sizeof(home), "HOME=%s", work);
		envs[n++] = tmpdir;
		envs[n++] = home;
		envs[n] = NULL;
	}
	pid = cuco_proc_start_sched(argv, envs, &s, &ofd, &efd);
	if (pid >= 0)
		rc = cuco_proc_wait(pid, ofd, efd, out, log, timeout_s, st);
out:
	free(j);
	return rc;
}

/*
 * path made absolute where it names an existing file (the harness starts
 * elsewhere); a command without a slash stays a PATH search. *keep owns it.
 */
static char *absolute(const char *path, int command, char **keep)
{
	char *real = !command || strchr(path, '/') ? realpath(path, NULL) : NULL;

	*keep = real;
	return real ? real : (char *)path;
}

static int run_once(const struct cuco_run_opts *o, const struct cuco_manifest *m,
                    const char *workload_so, const struct cuco_shape *shape,
                    const struct cuco_run_program *progs, int n, struct cuco_run_result *res,
                    struct cuco_err *err)
{
	char *argv[256], *env[4], *owned[128];
	int argc = 0, nowned = 0, nenv = 0, rc;
	char buf[4608];
	struct cuco_strbuf out = CUCO_STRBUF_INIT, launcher = CUCO_STRBUF_INIT;
	struct cuco_strbuf cmdline = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	const char *line;
	char result_file[4096] = "", dir[PATH_MAX] = "", work[PATH_MAX + 8] = "",
	     stage[PATH_MAX + 8] = "";
	const char *files[CUCO_CASCADE_MAX_PROGRAMS + 2];
	int result_fd = -1, nfiles = 0;
	const struct cuco_farm *farm = cuco_farm_current();
	const char *tmp = getenv("TMPDIR");
	int launched = !farm && o->launcher && *o->launcher;

	/* the shape's command line, before anything is made */
	if (cuco_manifest_argv(m, shape, farm ? farm->ranks : o->ranks, &cmdline, err)) {
		cuco_strbuf_release(&cmdline);
		return err->code;
	}
	/* on this node: the run's private directory (run_private), removed at the end; a
	 * launcher's in the state directory, where its ranks' result file always was (shared
	 * with other nodes, as a rule, when ranks start there) */
	if (launched)
		cuco_mkdir_p(cuco_state_dir());
	if (!farm && cuco_proc_private_dir(launched      ? cuco_state_dir()
	                                   : tmp && *tmp ? tmp
	                                                 : "/tmp",
	                                   "cuco-run", dir, sizeof(dir)))
		return cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot make the run's directory: %s",
		                    strerror(errno));
	if (dir[0]) {
		/* work: what the harness sees and writes; root: where its view is built */
		snprintf(work, sizeof(work), "%s/work", dir);
		snprintf(stage, sizeof(stage), "%s/root", dir);
		if (mkdir(work, 0700) || mkdir(stage, 0700)) {
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM,
			                  "cannot make the run's directory: %s", strerror(errno));
			cuco_proc_remove_tree(dir);
			return rc;
		}
	}
#define OWN(...)                                         \
	do {                                             \
		snprintf(buf, sizeof(buf), __VA_ARGS__); \
		owned[nowned] = cuco_xstrdup(buf);       \
		push(argv, &argc, owned[nowned++]);      \
	} while (0)
	if (farm) {
		/* srun is the farm's; a wrapper (compute-sanitizer) goes in front of the harness.
		 */
		if (o->wrapper && *o->wrapper)
			cuco_strbuf_adds(&launcher, o->wrapper);
	} else if ((o->launcher && *o->launcher) || (o->wrapper && *o->wrapper)) {
		/* A launcher (mpirun) or, in fork mode, a wrapper (compute-sanitizer). */
		cuco_strbuf_adds(&launcher, o->launcher && *o->launcher ? o->launcher : o->wrapper);
	}
	if (launcher.len) {
		for (char *tok = launcher.buf; *tok && argc < 32;) {
			while (*tok == ' ')
				*tok++ = '\0';
			if (!*tok)
				break;
			push(argv, &argc, tok);
			while (*tok && *tok != ' ')
				tok++;
		}
	}
	push(argv, &argc, absolute(cuco_harness_path(), 1, &owned[nowned]));
	files[nfiles++] = argv[argc - 1];
	nowned += owned[nowned] != NULL;
	push(argv, &argc, "--workload-so");
	push(argv, &argc, absolute(workload_so, 0, &owned[nowned]));
	files[nfiles++] = argv[argc - 1];
	nowned += owned[nowned] != NULL;
	push(argv, &argc, "--workload");
	push(argv, &argc, m->name);
	push(argv, &argc, "--shape");
	push(argv, &argc, (char *)shape->name);
	for (int i = 0; i < shape->nparams; i++) {
		push(argv, &argc, "--param");
		OWN("%s=%lld", shape->param_names[i], shape->params[i]);
	}
	push(argv, &argc, "--tolerance");
	OWN("%g", m->tolerance);
	if (o->reference_so) {
		push(argv, &argc, "--reference-program");
		push(argv, &argc, absolute(o->reference_so, 0, &owned[nowned]));
		nowned += owned[nowned] != NULL;
	}
	if (cmdline.len) {
		push(argv, &argc, "--argv");
		push(argv, &argc, cmdline.buf);
	}
	if (farm) {
		/* Ranks from srun; the farm names the result file (in the run directory). */
		push(argv, &argc, "--launch");
		push(argv, &argc, "env");
	} else if (o->launcher && *o->launcher) {
		/* made here and read through cuco's own descriptor: a program that renames or
		 * replaces the file in the run's directory changes nothing cuco reads */
		snprintf(result_file, sizeof(result_file), "%s/result.jsonl", work);
		result_fd =
		    open(result_file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (result_fd < 0) {
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot make %s: %s", result_file,
			                  strerror(errno));
			goto done;
		}
		push(argv, &argc, "--launch");
		push(argv, &argc, "env");
		push(argv, &argc, "--result-file");
		push(argv, &argc, result_file);
	} else {
		push(argv, &argc, "--ranks");
		OWN("%d", o->ranks);
		push(argv, &argc, "--result-fd");
		push(argv, &argc, "3");
	}
	push(argv, &argc, "--timeout");
	OWN("%g", o->timeout_s);
	push(argv, &argc, "--warmup");
	OWN("%d", o->warmup);
	push(argv, &argc, "--iters");
	OWN("%d", o->iters);
	push(argv, &argc, "--bench-seconds");
	OWN("%g", o->bench_seconds);
	push(argv, &argc, "--verify-runs");
	OWN("%d", o->verify_runs);
	push(argv, &argc, "--seed");
	OWN("%llu", (unsigned long long)o->seed);
	if (!o->samples)
		push(argv, &argc, "--no-samples");
	if (o->burst) {
		push(argv, &argc, "--timing");
		push(argv, &argc, "burst");
	}
	for (int i = 0; i < n; i++) {
		char *keep, *so = absolute(progs[i].so_path, 0, &keep);
		push(argv, &argc, "--program");
		OWN("%s=%s%s", progs[i].name, so, progs[i].verify ? "" : ",noverify");
		if (nfiles < CUCO_CASCADE_MAX_PROGRAMS + 2 && nowned < 128) {
			owned[nowned] = cuco_xstrdup(so);
			files[nfiles++] = owned[nowned++];
		}
		free(keep);
	}
	push(argv, &argc, NULL);
#undef OWN
	env[nenv++] = "NCCL_NVLS_ENABLE=0";
	if (cuco_nccl_ld_path(buf, sizeof(buf))) {
		owned[nowned] = cuco_xstrdup(buf);
		env[nenv++] = owned[nowned++];
	}
	env[nenv] = NULL;

	if (farm) {
		if (cuco_farm_step(farm, argv, env,
		                   o->timeout_s * (8 + 4 * (n + !!o->reference_so)) + 60, &out,
		                   &res->log, &st, err)) {
			rc = err->code;
			goto done;
		}
		rc = 0;
	} else {
		/* a launcher starts where cuco was started (its hostfile may be named from
		 * there); the harness's result file is in the private directory */
		rc = run_private(argv, env, nenv, work, stage, files, nfiles,
		                 !(o->launcher && *o->launcher), result_fd, &out, &res->log,
		                 o->timeout_s * (8 + 4 * (n + !!o->reference_so)) + 60, &st);
	}
	if (rc) {
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot start %s: %s", argv[0],
		                  strerror(errno));
		goto done;
	}
	if (o->wrapper && *o->wrapper && !result_file[0] && !farm && (!st.exited || st.code))
		cuco_strbuf_addf(&res->log, "cuco: wrapper %s %d\n",
		                 st.exited ? "exited with code" : "died with signal", st.code);
	if (result_fd >= 0) {
		/* the ranks' output is part of the log; their records are in the file */
		struct stat fs;

		cuco_strbuf_add(&res->log, out.buf, out.len);
		cuco_strbuf_reset(&out);
		if (fstat(result_fd, &fs) == 0 && fs.st_size > CUCO_RUN_RESULT_MAX)
			channel_failure(&out, CUCO_ERR_RUN, "",
			                "the result file is larger than any ranks' records (a "
			                "program wrote to the harness's result channel)");
		else if (lseek(result_fd, 0, SEEK_SET) == 0)
			(void)cuco_strbuf_read_fd(&out, result_fd);
	}
	/* fork mode: the harness's one record (its ranks' stdout and stderr are the log);
	 * a shared file (a launcher's, a farm's): one record per rank */
	line = out.buf;
	if ((result_fd >= 0 || farm) && cuco_run_records_pick(out.buf, &out))
		line = NULL;
	else if (!out.buf[strspn(out.buf, " \t\r\n")])
		line = NULL;
	else
		line = out.buf;
	if (!line) {
		char tail[400];
		size_t k = res->log.len > 300 ? res->log.len - 300 : 0;
		snprintf(tail, sizeof(tail), "%s", res->log.buf + k);
		if (st.timed_out)
			rc = cuco_err_set(err, CUCO_ERR_TIMEOUT, "harness killed after %.0f s",
			                  st.seconds);
		else
			rc = cuco_err_set(err, CUCO_ERR_CRASH,
			                  "harness %s %d without a result; its output ends: %s",
			                  st.exited ? "exited with code" : "died with signal",
			                  st.code, tail);
		goto done;
	}
	rc = cuco_run_result_parse(line, res, err);
done:
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	cuco_strbuf_release(&out);
	cuco_strbuf_release(&launcher);
	cuco_strbuf_release(&cmdline);
	if (result_fd >= 0)
		close(result_fd);
	if (dir[0])
		cuco_proc_remove_tree(dir);
	return rc;
}

static int has_result(const struct cuco_run_result *r, const char *name)
{
	for (int i = 0; i < r->nresults; i++)
		if (!strcmp(r->results[i].name, name))
			return 1;
	return 0;
}

int cuco_run_programs(const struct cuco_run_opts *o, const struct cuco_manifest *m,
                      const char *workload_so, const struct cuco_shape *shape,
                      const struct cuco_run_program *progs, int n, struct cuco_run_result *res,
                      struct cuco_err *err)
{
	struct cuco_run_program pending[CUCO_CASCADE_MAX_PROGRAMS];
	int npending = n < CUCO_CASCADE_MAX_PROGRAMS ? n : CUCO_CASCADE_MAX_PROGRAMS;

	memcpy(pending, progs, sizeof(pending[0]) * (size_t)npending);
	/*
	 * A program that takes its rank group down is recorded; the programs that
	 * had no result yet get a fresh group. Results are matched by name, so a
	 * rank that died without reporting what had finished costs a re-run, never
	 * a misattributed result.
	 */
	while (npending) {
		struct cuco_run_result more;
		int k, before = res->nresults, left = 0;

		cuco_run_result_init(&more);
		k = run_once(o, m, workload_so, shape, pending, npending, &more, err);
		if (k == CUCO_OK && more.code != CUCO_OK && more.nresults == 0)
			k = cuco_err_set(err, more.code, "%s",
			                 more.error ? more.error : cuco_strerror(more.code));
		if (k) {
			cuco_strbuf_add(&res->log, more.log.buf, more.log.len); /* why, in full */
			cuco_run_result_release(&more);
			return k;
		}
		if (!res->gpu[0])
			memcpy(res->gpu, more.gpu, sizeof(res->gpu));
		if (!res->timing[0])
			memcpy(res->timing, more.timing, sizeof(res->timing));
		if (!res->max_connections[0])
			memcpy(res->max_connections, more.max_connections,
			       sizeof(res->max_connections));
		if (more.raw_json) {
			/* One line per harness run, in order. */
			struct cuco_strbuf all = CUCO_STRBUF_INIT;
			if (res->raw_json)
				cuco_strbuf_addf(&all, "%s\n", res->raw_json);
			cuco_strbuf_adds(&all, more.raw_json);
			free(res->raw_json);
			res->raw_json = cuco_strbuf_detach(&all, NULL);
		}
		cuco_strbuf_add(&res->log, more.log.buf, more.log.len);
		for (int i = 0; i < more.nresults && res->nresults < CUCO_CASCADE_MAX_PROGRAMS;
		     i++) {
			if (has_result(res, more.results[i].name))
				continue;
			res->results[res->nresults++] = more.results[i];
			memset(&more.results[i], 0, sizeof(more.results[i]));
		}
		cuco_run_result_release(&more);
		for (int i = 0; i < npending; i++)
			if (!has_result(res, pending[i].name))
				pending[left++] = pending[i];
		if (res->nresults == before)
			return cuco_err_set(err, CUCO_ERR_RUN,
			                    "the harness failed without naming a program");
		npending = left;
	}
	res->code = CUCO_OK;
	return CUCO_OK;
}

int cuco_gpu_count(struct cuco_err *err)
{
	char *argv[] = {(char *)cuco_harness_path(), "--count-gpus", NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_proc_status st;
	long n = -1;

	/* With a farm the GPUs are its nodes' (checked against its GRES when it was set up). */
	if (cuco_farm_current())
		return cuco_farm_current()->ranks;
	if (cuco_proc_run(argv, NULL, &out, NULL, 120, &st) == 0 && st.exited && st.code == 0) {
		char *end;
		errno = 0;
		n = strtol(out.buf, &end, 10);
		if (errno || end == out.buf)
			n = -1;
	}
	if (n < 0)
		cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot run %s --count-gpus", argv[0]);
	cuco_strbuf_release(&out);
	return (int)n;
}
