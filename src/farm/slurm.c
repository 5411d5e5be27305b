/*
 * slurm.c - candidate groups as Slurm job steps (see slurm.h): srun command
 * lines, the run directory and its result files, losses told apart from a
 * candidate's own failure, and the cancelling of a run's steps.
 */
#include "farm/slurm.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cascade/cascade.h"
#include "util/hash.h"
#include "util/paths.h"

static atomic_int interrupted;
static atomic_int gave_up;

void cuco_farm_interrupt(void)
{
	atomic_store(&interrupted, 1);
}

int cuco_farm_interrupted(void)
{
	return atomic_load(&interrupted);
}

int cuco_farm_gave_up(void)
{
	return atomic_load(&gave_up);
}

/* 1 if prog is an executable file in a directory of PATH. */
static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	for (const char *p = path; p && *p;) {
		size_t len = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, prog);
		if (len && access(buf, X_OK) == 0)
			return 1;
		p += len + (p[len] == ':');
	}
	return 0;
}

int cuco_farm_init(struct cuco_farm *f, int ranks, const char *partition, const char *args,
                   struct cuco_err *err)
{
	const char *job = getenv("SLURM_JOB_ID");

	memset(f, 0, sizeof(*f));
	f->ranks = ranks > 0 ? ranks : 1;
	f->requeues = CUCO_FARM_REQUEUES;
	snprintf(f->partition, sizeof(f->partition), "%s", partition ? partition : "");
	snprintf(f->args_text, sizeof(f->args_text), "%s", args ? args : "");
	snprintf(f->args_buf, sizeof(f->args_buf), "%s", f->args_text);
	for (char *t = f->args_buf; *t;) {
		while (*t == ' ' || *t == '\t')
			*t++ = '\0';
		if (!*t)
			break;
		if (f->nargs == CUCO_FARM_MAX_ARGS)
			return cuco_err_set(err, CUCO_ERR_USAGE,
			                    "--farm-args: more than %d words; put the rest in "
			                    "SLURM_* variables or the allocation",
			                    CUCO_FARM_MAX_ARGS);
		f->args[f->nargs++] = t;
		while (*t && *t != ' ' && *t != '\t')
			t++;
	}
	if (job && *job)
		snprintf(f->job, sizeof(f->job), "%s", job);
	if (!on_path("srun"))
		return cuco_err_set(err, CUCO_ERR_USAGE,
		                    "--farm slurm: srun is not on PATH; run cuco where the "
		                    "Slurm client commands are (a login node or an allocation)");
	return CUCO_OK;
}

int cuco_farm_set_run(struct cuco_farm *f, const char *store_path, int64_t run_id,
                      struct cuco_err *err)
{
	char real[PATH_MAX], hex[65];

	if (!store_path || !realpath(store_path, real))
		snprintf(real, sizeof(real), "%s", store_path ? store_path : "");
	cuco_hash_string(real, hex);
	snprintf(f->tag, sizeof(f->tag), "cuco-%.8s-r%lld", hex, (long long)run_id);
	snprintf(f->dir, sizeof(f->dir), "%s/farm/%s", cuco_state_dir(), f->tag);
	if (cuco_mkdir_p(f->dir))
		return cuco_err_set(err, CUCO_ERR_IO, "%s: cannot make the run directory: %s",
		                    f->dir, strerror(errno));
	return CUCO_OK;
}

/* Run argv (NULL-terminated) to its end; stdout into out. 0 when it exited 0. */
static int run_cmd(char *const argv[], struct cuco_strbuf *out, struct cuco_strbuf *errout,
                   double timeout_s)
{
	struct cuco_proc_status st;

	if (cuco_proc_run(argv, NULL, out, errout, timeout_s, &st))
		return -1;
	return st.exited && st.code == 0 ? 0 : -1;
}

/* The GPUs of a GRES string ("gpu:4", "gpu:h100:8(S:0-1)", "(null)"): 0 when none. */
static int gres_gpus(const char *gres)
{
	int best = 0;

	for (const char *p = strstr(gres, "gpu"); p; p = strstr(p + 3, "gpu")) {
		const char *end = p + strcspn(p, ",( \n");
		const char *colon = NULL;
		for (const char *q = p; q < end; q++)
			if (*q == ':')
				colon = q;
		if (colon) {
			long v = strtol(colon + 1, NULL, 10);
			if (v > best && v < 1 << 16)
				best = (int)v;
		}
	}
	return best;
}

int cuco_farm_view(const struct cuco_farm *f, struct cuco_strbuf *out, int *max_gpus,
                   struct cuco_err *err)
{
	char *argv[8];
	int n = 0, rc = CUCO_OK, nodes = 0;
	struct cuco_strbuf so = CUCO_STRBUF_INIT, se = CUCO_STRBUF_INIT;
	char part[128];

	*max_gpus = -1;
	argv[n++] = "sinfo";
	argv[n++] = "-h";
	if (f->partition[0]) {
		snprintf(part, sizeof(part), "--partition=%s", f->partition);
		argv[n++] = part;
	}
	argv[n++] = "-o";
	argv[n++] = "%P|%D|%G|%t|%N";
	argv[n] = NULL;
	if (run_cmd(argv, &so, &se, 30)) {
		cuco_strbuf_rtrim(&se);
		rc = cuco_err_set(err, CUCO_ERR_SYSTEM, "sinfo failed: %s",
		                  se.len ? se.buf : "cannot run it");
		goto out;
	}
	*max_gpus = 0;
	for (char *line = so.buf; line && *line;) {
		char *nl = strchr(line, '\n'), *fld[5] = {0};
		int k = 0;
		if (nl)
			*nl = '\0';
		for (char *p = line; k < 5 && p; k++) {
			fld[k] = p;
			p = strchr(p, '|');
			if (p)
				*p++ = '\0';
		}
		if (k == 5) {
			int g = gres_gpus(fld[2]);
			long d = strtol(fld[1], NULL, 10);
			if (g > *max_gpus)
				*max_gpus = g;
			nodes += (int)d;
			cuco_strbuf_addf(out,
			                 "partition:      %s: %ld node%s %s (%s), GPUs per node %d "
			                 "(GRES %s)\n",
			                 fld[0], d, d == 1 ? "" : "s", fld[3], fld[4], g, fld[2]);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!nodes)
		cuco_strbuf_addf(out, "partition:      %s: no nodes\n",
		                 f->partition[0] ? f->partition : "(default)");
	if (f->job[0])
		cuco_strbuf_addf(
		    out, "allocation:     job %s (steps run inside it, side by side)\n", f->job);
	else
		cuco_strbuf_adds(out, "allocation:     none (each step is a job of its own)\n");
out:
	cuco_strbuf_release(&so);
	cuco_strbuf_release(&se);
	return rc;
}

int cuco_farm_total_gpus(const struct cuco_farm *f)
{
	struct cuco_strbuf so = CUCO_STRBUF_INIT;
	char part[128];
	long total = 0;

	if (f->job[0]) {
		char *argv[] = {"scontrol", "show", "job", (char *)f->job, NULL};
		const char *p;
		/* gres/gpu in the TRES when accounting tracks it, else GRES per node x nodes */
		if (run_cmd(argv, &so, NULL, 30) == 0) {
			if ((p = strstr(so.buf, "gres/gpu=")))
				total = strtol(p + 9, NULL, 10);
			else if ((p = strstr(so.buf, "TresPerNode=")) &&
			         snprintf(part, sizeof(part), "%.*s", (int)strcspn(p, " \n"), p))
				total = gres_gpus(part) * ((p = strstr(so.buf, "NumNodes="))
				                               ? strtol(p + 9, NULL, 10)
				                               : 1);
		}
	} else {
		char *argv[] = {"sinfo", "-h", "-o", "%D %G", NULL, NULL};
		if (f->partition[0]) {
			snprintf(part, sizeof(part), "--partition=%s", f->partition);
			argv[4] = part;
		}
		if (run_cmd(argv, &so, NULL, 30) == 0)
			for (char *l = so.buf; l && *l;) {
				char *nl = strchr(l, '\n');
				if (nl)
					*nl = '\0';
				total += strtol(l, NULL, 10) * gres_gpus(l);
				l = nl ? nl + 1 : NULL;
			}
	}
	cuco_strbuf_release(&so);
	return total > 0 && total < 1 << 20 ? (int)total : 0;
}

/* srun's argv into a (NULL-terminated): the common part, then the command. */
static int srun_argv(const struct cuco_farm *f, char **a, int max, char (*own)[160], int nodes,
                     int tasks, int gpus, const char *name)
{
	int n = 0;

	a[n++] = "srun";
	a[n++] = "--exact";
	snprintf(own[0], sizeof(own[0]), "--nodes=%d", nodes);
	a[n++] = own[0];
	if (nodes > 1) {
		a[n++] = "--ntasks-per-node=1";
	} else {
		snprintf(own[1], sizeof(own[1]), "--ntasks=%d", tasks);
		a[n++] = own[1];
	}
	/* A step that names no GRES gets all of its allocation's: say none. */
	snprintf(own[2], sizeof(own[2]), gpus > 0 ? "--gres=gpu:%d" : "--gres=none", gpus);
	a[n++] = own[2];
	a[n++] = "--kill-on-bad-exit=1";
	snprintf(own[3], sizeof(own[3]), "--job-name=%s", name);
	a[n++] = own[3];
	if (f->partition[0]) {
		snprintf(own[4], sizeof(own[4]), "--partition=%s", f->partition);
		a[n++] = own[4];
	}
	for (int i = 0; i < f->nargs && n < max - 1; i++)
		a[n++] = f->args[i];
	a[n] = NULL;
	return n;
}

int cuco_farm_check_shared(const struct cuco_farm *f, const char *dir, struct cuco_err *err)
{
	char path[4200], token[96], own[5][160], name[160], *a[64];
	struct cuco_strbuf so = CUCO_STRBUF_INIT, se = CUCO_STRBUF_INIT;
	const char *nn = getenv("SLURM_JOB_NUM_NODES");
	long nodes = f->job[0] && nn ? strtol(nn, NULL, 10) : 1;
	int n, rc = CUCO_OK, seen = 0;

	if (!dir || !*dir)
		dir = f->dir;
	if (nodes < 1 || nodes > 100000)
		nodes = 1;
	snprintf(token, sizeof(token), "cuco-shared-%ld-%ld", (long)getpid(), (long)time(NULL));
	snprintf(path, sizeof(path), "%s/%s", dir, token);
	if (cuco_mkdir_p(dir) || cuco_write_file(path, token, strlen(token))) {
		rc = cuco_err_set(err, CUCO_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	snprintf(name, sizeof(name), "%s-check", f->tag[0] ? f->tag : "cuco");
	n = srun_argv(f, a, 60, own, (int)nodes, 1, 0, name);
	a[n++] = "cat";
	a[n++] = path;
	a[n] = NULL;
	(void)run_cmd(a, &so, &se, 300);
	for (const char *p = so.buf; (p = strstr(p, token)); p += strlen(token))
		seen++;
	if (seen < nodes) {
		cuco_strbuf_rtrim(&se);
		if (strstr(se.buf, "No such file") || (so.len == 0 && strstr(se.buf, "cat:")))
			rc = cuco_err_set(err, CUCO_ERR_INVALID,
			                  "the run directory %s is not on a filesystem the compute "
			                  "nodes see (%ld of %ld node%s read back what the head "
			                  "wrote): set CUCO_STATE to a shared directory (NFS, "
			                  "Lustre, GPFS, your home); srun said: %s",
			                  dir, (long)seen, nodes, nodes == 1 ? "" : "s", se.buf);
		else
			rc = cuco_err_set(err, CUCO_ERR_SYSTEM,
			                  "a step to check the run directory %s did not run: %s",
			                  dir, se.len ? se.buf : "no output");
	}
	unlink(path);
out:
	cuco_strbuf_release(&so);
	cuco_strbuf_release(&se);
	return rc;
}

int cuco_farm_probe(const struct cuco_farm *f, struct cuco_strbuf *out, struct cuco_err *err)
{
	char own[5][160], name[160], ranks[32], *a[64];
	struct cuco_strbuf so = CUCO_STRBUF_INIT, se = CUCO_STRBUF_INIT;
	const char *line = NULL;
	int n, rc = CUCO_OK;

	snprintf(name, sizeof(name), "%s-probe", f->tag[0] ? f->tag : "cuco");
	n = srun_argv(f, a, 60, own, 1, 1, f->ranks, name);
	a[n++] = (char *)cuco_harness_path();
	a[n++] = "--probe";
	a[n++] = "--ranks";
	snprintf(ranks, sizeof(ranks), "%d", f->ranks);
	a[n++] = ranks;
	a[n] = NULL;
	(void)run_cmd(a, &so, &se, 300);
	for (char *l = so.buf; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (*l == '{')
			line = l;
		l = nl ? nl + 1 : NULL;
	}
	if (line) {
		cuco_strbuf_adds(out, line);
	} else {
		cuco_strbuf_rtrim(&se);
		rc = cuco_err_set(err, CUCO_ERR_RUN, "the probe step gave no result: %s",
		                  se.len ? se.buf : "no output");
	}
	cuco_strbuf_release(&so);
	cuco_strbuf_release(&se);
	return rc;
}

/* Ids ("123" or "123.4") of this user's jobs and steps whose name starts with prefix. */
static int named(const char *prefix, int steps, struct cuco_strbuf *ids, int *n)
{
	char *argv[] = {"squeue", "-h", "--me", steps ? "--steps" : "--jobs", "-o", "%i %j", NULL};
	struct cuco_strbuf so = CUCO_STRBUF_INIT;
	int rc = run_cmd(argv, &so, NULL, 60);

	for (char *l = so.buf; !rc && l && *l;) {
		char *nl = strchr(l, '\n'), *sp;
		if (nl)
			*nl = '\0';
		while (*l == ' ')
			l++;
		sp = strchr(l, ' ');
		if (sp && !strncmp(sp + 1, prefix, strlen(prefix))) {
			*sp = '\0';
			cuco_strbuf_addf(ids, "%s\n", l);
			(*n)++;
		}
		l = nl ? nl + 1 : NULL;
	}
	cuco_strbuf_release(&so);
	return rc;
}

/* scancel every id of the newline-separated list. */
static void cancel_ids(struct cuco_strbuf *ids)
{
	char *argv[66];
	int n = 0;

	argv[n++] = "scancel";
	for (char *l = ids->buf; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (*l)
			argv[n++] = l;
		l = nl ? nl + 1 : NULL;
		if (n == 65 || !l || !*l) {
			argv[n] = NULL;
			if (n > 1)
				(void)run_cmd(argv, NULL, NULL, 60);
			n = 1;
		}
	}
}

/*
 * Cancel what is named prefix* (steps in allocations and jobs of their own),
 * until two listings in a row find none: a step whose srun was killed while
 * it was being made appears a moment later. *count gets how many there were.
 */
static int cancel_named(const char *prefix, int *count)
{
	int rc = 0, empty = 0, total = 0;

	for (int round = 0; round < 40 && empty < 2; round++) {
		struct cuco_strbuf ids = CUCO_STRBUF_INIT;
		int n = 0;

		if (round)
			usleep(250 * 1000);
		rc = named(prefix, 0, &ids, &n);
		if (!rc)
			rc = named(prefix, 1, &ids, &n);
		if (!rc && n) {
			cancel_ids(&ids);
			if (!total)
				total = n;
			empty = 0;
		} else {
			empty++;
		}
		cuco_strbuf_release(&ids);
		if (rc)
			break;
	}
	if (count)
		*count = total;
	return rc;
}

int cuco_farm_cancel_run(const struct cuco_farm *f, int *n, struct cuco_err *err)
{
	char prefix[128];

	snprintf(prefix, sizeof(prefix), "%s-", f->tag);
	if (cancel_named(prefix, n))
		return cuco_err_set(err, CUCO_ERR_SYSTEM,
		                    "squeue failed: cannot list the steps of %s", f->tag);
	return CUCO_OK;
}

int cuco_farm_lost(const char *log, char *why, size_t len)
{
	static const char *const marks[] = {"CANCELLED AT",
	                                    "DUE TO TIME LIMIT",
	                                    "DUE TO PREEMPTION",
	                                    "DUE TO NODE FAIL",
	                                    "DUE TO JOB REQUEUE",
	                                    "Node failure",
	                                    "NODE_FAIL",
	                                    "Unable to create step",
	                                    "already completing or completed",
	                                    "has been revoked",
	                                    NULL};

	for (const char *l = log; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		for (int k = 0; marks[k]; k++) {
			const char *m = marks[k];
			size_t mlen = strlen(m);
			for (const char *p = l; p + mlen <= l + n; p++)
				if (!memcmp(p, m, mlen)) {
					if (why && len)
						snprintf(why, len, "%.*s", (int)(n < 300 ? n : 300),
						         l);
					return 1;
				}
		}
		l = nl ? nl + 1 : NULL;
	}
	return 0;
}

int cuco_farm_never_started(const char *log)
{
	int waited = strstr(log, "queued and waiting for resources") ||
	             strstr(log, "step creation temporarily disabled");
	int started = strstr(log, "has been allocated resources") || strstr(log, "Step created");

	return waited && !started;
}

int cuco_farm_result_lines(const char *text)
{
	int n = 0;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len && l[0] == '{') {
			const char *h = strstr(l, "\"harness\"");
			if (h && h < l + len)
				n++;
		}
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

/* srun's own failure before any task ran (a bad partition, GRES or argument): its line. */
static int srun_refused(const char *log, char *why, size_t len)
{
	static const char *const marks[] = {"srun: error: Unable to allocate resources",
	                                    "srun: fatal:", "srun: unrecognized option",
	                                    "srun: error: Invalid", NULL};

	for (int k = 0; marks[k]; k++) {
		const char *p = strstr(log, marks[k]);
		if (p) {
			snprintf(why, len, "%.*s", (int)strcspn(p, "\n"), p);
			return 1;
		}
	}
	return 0;
}

/* A harness line that failed before the program ran: ranks never met (port, node). */
static int bootstrap_failed(const char *text)
{
	return strstr(text, "\"stage\":\"bootstrap\"") != NULL;
}

/* The step's key: its command and size, hashed. */
static void step_key(const struct cuco_farm *f, char *const argv[], char key[17])
{
	struct cuco_sha256 c;
	char hex[65], r[16];

	cuco_sha256_init(&c);
	cuco_sha256_update(&c, "cuco-farm-1", 12);
	snprintf(r, sizeof(r), "%d", f->ranks);
	cuco_sha256_update(&c, r, strlen(r) + 1);
	for (int i = 0; argv[i]; i++)
		cuco_sha256_update(&c, argv[i], strlen(argv[i]) + 1);
	cuco_sha256_hex(&c, hex);
	memcpy(key, hex, 16);
	key[16] = '\0';
}

/* A finished step's record: "status EXITED CODE TIMED_OUT\n" then its log. */
static void write_done(const char *path, const struct cuco_proc_status *st, const char *log)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	cuco_strbuf_addf(&sb, "status %d %d %d\n%s", st->exited, st->code, st->timed_out,
	                 log ? log : "");
	(void)cuco_write_file(path, sb.buf, sb.len);
	cuco_strbuf_release(&sb);
}

/* Take an earlier result of this step from the run directory; 1 if there was one. */
static int take_earlier(const struct cuco_farm *f, const char *res, const char *done,
                        const char *key, struct cuco_strbuf *out, struct cuco_strbuf *log,
                        struct cuco_proc_status *st)
{
	struct cuco_strbuf text = CUCO_STRBUF_INIT, rec = CUCO_STRBUF_INIT;
	int have_done = cuco_strbuf_read_file(&rec, done) == 0, ok = 0;

	if (cuco_strbuf_read_file(&text, res) == 0 || have_done) {
		if (have_done || cuco_farm_result_lines(text.buf) >= f->ranks) {
			memset(st, 0, sizeof(*st));
			st->exited = 1;
			if (have_done) {
				const char *nl = strchr(rec.buf, '\n');
				if (sscanf(rec.buf, "status %d %d %d", &st->exited, &st->code,
				           &st->timed_out) != 3)
					st->exited = 1;
				if (nl)
					cuco_strbuf_adds(log, nl + 1);
			}
			cuco_strbuf_addf(
			    log,
			    "cuco: farm: step %s-%s finished before; its result is taken "
			    "from %s\n",
			    f->tag, key, res);
			fprintf(
			    stderr,
			    "cuco: farm: step %s-%s finished for an earlier process of the run; "
			    "its result is taken from the run directory\n",
			    f->tag, key);
			cuco_strbuf_add(out, text.buf, text.len);
			ok = 1;
		}
	}
	cuco_strbuf_release(&text);
	cuco_strbuf_release(&rec);
	return ok;
}

int cuco_farm_step(const struct cuco_farm *f, char *const argv[], char *const env[],
                   double timeout_s, struct cuco_strbuf *out, struct cuco_strbuf *log,
                   struct cuco_proc_status *st, struct cuco_err *err)
{
	char key[17], res[4200], done[4200], name[160], own[5][160], port[48], why[320];
	char *a[320], *e[64];
	int ne = 0, rc = -1;

	step_key(f, argv, key);
	snprintf(res, sizeof(res), "%s/%s.jsonl", f->dir, key);
	snprintf(done, sizeof(done), "%s/%s.done", f->dir, key);
	snprintf(name, sizeof(name), "%s-%s", f->tag, key);
	if (take_earlier(f, res, done, key, out, log, st))
		return 0;
	for (int i = 0; env && env[i] && ne < 60; i++)
		e[ne++] = env[i];
	/* All ranks of a step are on one node: rank 0 listens there, on a port of its own. */
	e[ne++] = "CUCO_MASTER_ADDR=127.0.0.1";
	e[ne++] = port;
	e[ne] = NULL;
	for (int attempt = 0;; attempt++) {
		struct cuco_strbuf so = CUCO_STRBUF_INIT, se = CUCO_STRBUF_INIT;
		int n, ofd = -1, efd = -1, lost;
		pid_t pid;

		if (cuco_farm_interrupted()) {
			cuco_err_set(err, CUCO_ERR_SYSTEM, "interrupted: step %s not started",
			             name);
			break;
		}
		unlink(res);
		snprintf(port, sizeof(port), "CUCO_MASTER_PORT=%lu",
		         20000 + (strtoul(key + 10, NULL, 16) + 7919ul * (unsigned long)attempt) %
		                     30000);
		n = srun_argv(f, a, 300, own, 1, f->ranks, f->ranks, name);
		for (int i = 0; argv[i] && n < 316; i++)
			a[n++] = argv[i];
		a[n++] = "--result-file";
		a[n++] = res;
		a[n] = NULL;
		pid = cuco_proc_start(a, e, &ofd, &efd);
		if (pid < 0) {
			cuco_err_set(err, CUCO_ERR_SYSTEM, "cannot start srun: %s",
			             strerror(errno));
			break;
		}
		cuco_proc_wait_cancel(pid, ofd, efd, &so, &se, timeout_s, &interrupted, st);
		cuco_strbuf_add(log, so.buf, so.len);
		cuco_strbuf_add(log, se.buf, se.len);
		if (st->cancelled || st->timed_out) {
			/* srun is gone; its step may not be: cancel it by name. */
			(void)cancel_named(name, NULL);
		}
		if (st->cancelled) {
			cuco_err_set(err, CUCO_ERR_SYSTEM, "interrupted: step %s cancelled", name);
			cuco_strbuf_release(&so);
			cuco_strbuf_release(&se);
			break;
		}
		cuco_strbuf_reset(out);
		cuco_strbuf_read_file(out, res);
		why[0] = '\0';
		lost = !st->timed_out ? cuco_farm_lost(se.buf, why, sizeof(why)) ||
		                            (bootstrap_failed(out->buf) &&
		                             snprintf(why, sizeof(why), "ranks never met") > 0)
		                      : cuco_farm_never_started(se.buf) &&
		                            snprintf(why, sizeof(why),
		                                     "it waited for resources past the time "
		                                     "limit and never started") > 0;
		if (!lost && cuco_farm_result_lines(out->buf) == 0 &&
		    srun_refused(se.buf, why, sizeof(why))) {
			cuco_err_set(err, CUCO_ERR_SYSTEM, "the farm cannot run steps: %s", why);
			cuco_strbuf_release(&so);
			cuco_strbuf_release(&se);
			break;
		}
		cuco_strbuf_release(&so);
		cuco_strbuf_release(&se);
		if (!lost) {
			write_done(done, st, NULL);
			rc = 0;
			break;
		}
		if (attempt >= f->requeues) {
			atomic_store(&gave_up, 1);
			cuco_err_set(err, CUCO_ERR_SYSTEM,
			             "the farm lost step %s %d times (last: %s); not the program's "
			             "failure: nothing of it is stored",
			             name, attempt + 1, why);
			break;
		}
		cuco_strbuf_addf(log, "cuco: farm: step %s lost (%s): queued again (%d of %d)\n",
		                 name, why, attempt + 1, f->requeues);
		fprintf(stderr, "cuco: farm: step %s lost (%s): queued again (%d of %d)\n", name,
		        why, attempt + 1, f->requeues);
		sleep(1);
	}
	return rc;
}

void cuco_farm_clean_run(const struct cuco_farm *f)
{
	DIR *d = f->dir[0] ? opendir(f->dir) : NULL;
	struct dirent *de;
	char path[4400];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", f->dir, de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(f->dir);
}

int cuco_farm_prepare(struct cuco_farm *f, const char *cmd, int ranks, const char *partition,
                      const char *args, const char *store_path, int64_t run_id, int resume,
                      struct cuco_hw_facts *facts, int *have_facts, struct cuco_err *err)
{
	struct cuco_strbuf view = CUCO_STRBUF_INIT, probe = CUCO_STRBUF_INIT;
	int rc, gpus = -1, left = 0;
	char desc[160], arch[16];

	memset(facts, 0, sizeof(*facts));
	*have_facts = 0;
	if ((rc = cuco_farm_init(f, ranks, partition, args, err)) ||
	    (rc = cuco_farm_view(f, &view, &gpus, err)))
		goto out;
	fprintf(stderr, "cuco %s: the farm, as Slurm sees it:\n%s", cmd, view.buf);
	if (gpus < ranks) {
		rc = cuco_err_set(err, CUCO_ERR_NO_GPU,
		                  "--farm slurm: the nodes of partition %s have at most %d GPU%s "
		                  "(GRES); programs of %d ranks need %d on one node",
		                  f->partition[0] ? f->partition : "(default)", gpus,
		                  gpus == 1 ? "" : "s", ranks, ranks);
		goto out;
	}
	if ((rc = cuco_farm_set_run(f, store_path, run_id, err)) ||
	    (rc = cuco_farm_check_shared(f, NULL, err)))
		goto out;
	fprintf(stderr, "cuco %s: the run directory %s is shared with the farm's nodes\n", cmd,
	        f->dir);
	if (resume && (rc = cuco_farm_cancel_run(f, &left, err)))
		goto out;
	if (left)
		fprintf(stderr,
		        "cuco %s: cancelled %d step%s an earlier process of run %lld left "
		        "running\n",
		        cmd, left, left == 1 ? "" : "s", (long long)run_id);
	if (cuco_farm_probe(f, &probe, err) || cuco_hw_facts_parse(probe.buf, ranks, facts, err)) {
		fprintf(stderr,
		        "cuco %s: the farm's probe: %s: directives are checked against the design "
		        "space only\n",
		        cmd, err->msg);
		cuco_err_clear(err);
	} else {
		*have_facts = 1;
		if (facts->cc)
			cuco_compile_set_default_arch(
			    cuco_arch_for_cc(facts->cc, arch, sizeof(arch)));
		fprintf(stderr, "cuco %s: a farm node, as probed: %s\n", cmd,
		        cuco_hw_facts_describe(facts, desc, sizeof(desc)));
	}
out:
	cuco_strbuf_release(&view);
	cuco_strbuf_release(&probe);
	return rc;
}
