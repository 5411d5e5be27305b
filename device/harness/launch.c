/*
 * launch.c - process groups and bootstrap. Two ways to get ranks:
 *  - fork: one process per GPU on this node, started and watched here; the
 *    NCCL unique id travels over pipes; a rank that dies or times out ends the
 *    whole group and the result names it;
 *  - env: ranks started by mpirun or srun (or anything that sets CUCO_RANK and
 *    CUCO_NRANKS); rank 0 hands the unique id to the others over TCP at
 *    CUCO_MASTER_ADDR:CUCO_MASTER_PORT, so evaluation can span nodes.
 * The parent of a fork group never touches CUDA: a process that has
 * initialised CUDA cannot fork children that use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "util/error.h"

struct child {
	pid_t pid;
	int out_fd;             /* its result pipe */
	struct cuco_strbuf out; /* what it wrote there */
	int done, status;
	double exit_time;
};

/*
 * A rank's result stream (its pipe): "#program NAME" lines, the program it
 * started, and exactly one record, a JSON object with "harness". A program
 * runs in the rank's process and holds the pipe too: a second record, or a
 * line that is neither, is its doing. 1 with the record (a line of s, which
 * is cut into lines) in *record, 0 with none; -1 for a stream out of order,
 * why saying so and culprit the program announced before the first line
 * out of place ("" for none).
 */
static int rank_record(struct cuco_strbuf *s, int rank, const char **record, char *why,
                       size_t whylen, char *culprit, size_t clen)
{
	const char *program = "";
	int n = 0;

	*record = NULL;
	culprit[0] = '\0';
	for (char *line = s->buf; line && *line;) {
		char *nl = strchr(line, '\n');
		json_t *j;
		int ok;

		if (nl)
			*nl = '\0';
		if (!strncmp(line, "#program ", 9)) {
			program = line + 9;
		} else if (line[strspn(line, " \t\r")]) {
			j = json_loads(line, 0, NULL);
			ok = json_is_object(j) && json_is_integer(json_object_get(j, "harness"));
			json_decref(j);
			if (!ok || n++) {
				snprintf(
				    why, whylen,
				    "rank %d: %s on its result channel (a program wrote to it)",
				    rank,
				    ok ? "a second result record" : "a line that is no record");
				snprintf(culprit, clen, "%s", program);
				return -1;
			}
			*record = line;
		}
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/* The program a rank last announced ("#program NAME" lines), or "". */
static const char *last_program(struct cuco_strbuf *s)
{
	static char name[128];
	const char *p = s->buf, *hit = NULL;

	while ((p = strstr(p, "#program ")) != NULL) {
		hit = p + 9;
		p = hit;
	}
	name[0] = '\0';
	if (hit) {
		size_t n = strcspn(hit, "\n");
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, hit, n);
		name[n] = '\0';
	}
	return name;
}

/* 1 when the rank's last progress line says it was running the reference program
 * ("#reference PATH" with no "#reference done" or "#program" after it). */
static int in_reference(const struct cuco_strbuf *s)
{
	const char *p = s->buf, *hit = NULL;

	while ((p = strstr(p, "#reference ")) != NULL) {
		hit = p + 11;
		p = hit;
	}
	return hit && strncmp(hit, "done\n", 5) && !strstr(hit, "#program ");
}

/* Write record (a line without its newline) and a newline to fd. */
static void put_record(int fd, const char *record)
{
	if (hx_write_all(fd, record, strlen(record)) || hx_write_all(fd, "\n", 1))
		perror("cuco-harness: writing result");
}

static void kill_all(struct child *ch, int n)
{
	for (int i = 0; i < n; i++)
		if (!ch[i].done && ch[i].pid > 0)
			kill(ch[i].pid, SIGKILL);
}

int hx_launch_fork(const struct hx_opts *o)
{
	int have = hx_count_gpus(), n = o->ranks ? o->ranks : have;
	int up[2], (*down)[2] = NULL, rc = CUCO_ERR_SYSTEM;
	struct child *ch = NULL;
	ncclUniqueId id;
	double backstop;
	int failed = -1, res_fd = o->result_fd >= 0 ? o->result_fd : 1;
	const char *record = NULL;
	char why[256], culprit[128];

	if (n < 1) {
		hx_emit_failure(res_fd, -1, CUCO_ERR_NO_GPU, "launch",
		                "no CUDA GPU visible on this node");
		return CUCO_ERR_NO_GPU;
	}
	if (n > have) {
		char msg[160];
		snprintf(msg, sizeof(msg), "%d ranks need %d CUDA GPUs on this node; %d visible", n,
		         n, have);
		hx_emit_failure(res_fd, -1, CUCO_ERR_NO_GPU, "launch", msg);
		return CUCO_ERR_NO_GPU;
	}
	hx_set_nranks(n);
	ch = calloc((size_t)n, sizeof(*ch));
	down = calloc((size_t)n, sizeof(*down));
	if (!ch || !down || pipe(up))
		goto out;
	signal(SIGPIPE, SIG_IGN);
	/* no rank opens this process's descriptors through /proc/PID/fd, nor traces it */
	(void)prctl(PR_SET_DUMPABLE, 0);
	for (int r = 0; r < n; r++) {
		int res[2];

		if (pipe(down[r]) || pipe(res))
			goto out;
		cuco_strbuf_init(&ch[r].out, 0);
		ch[r].pid = fork();
		if (ch[r].pid < 0)
			goto out;
		if (ch[r].pid == 0) {
			struct hx_rank me = {r, n, r, res[1]};
			int code;

			/* a rank dies with the harness (and so with cuco), even by kill -9 */
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			/* before any program loads: the result channel is the parent's alone,
			 * and the other ranks' pipes are theirs */
			if (o->result_fd >= 0)
				close(o->result_fd);
			for (int q = 0; q < r; q++) {
				close(ch[q].out_fd);
				close(down[q][1]);
			}
			/* the parent is not dumpable (its descriptors stay its own); a rank is,
			 * as any process (NCCL's peers may need to reach it) */
			(void)prctl(PR_SET_DUMPABLE, 1);
			close(res[0]);
			close(up[0]);
			if (r == 0) {
				ncclResult_t nr = ncclGetUniqueId(&id);
				if (nr != ncclSuccess || hx_write_all(up[1], &id, sizeof(id))) {
					hx_emit_failure(res[1], 0, CUCO_ERR_RUN, "init",
					                "ncclGetUniqueId failed");
					_exit(CUCO_ERR_RUN);
				}
			} else if (hx_read_all(down[r][0], &id, sizeof(id), o->timeout_s)) {
				hx_emit_failure(res[1], r, CUCO_ERR_TIMEOUT, "init",
				                "no NCCL unique id from rank 0");
				_exit(CUCO_ERR_TIMEOUT);
			}
			code = hx_rank_main(o, &me, &id);
			_exit(code);
		}
		close(res[1]);
		close(down[r][0]);
		ch[r].out_fd = res[0];
	}
	close(up[1]);
	if (hx_read_all(up[0], &id, sizeof(id), o->timeout_s) == 0)
		for (int r = 1; r < n; r++)
			hx_write_all(down[r][1], &id, sizeof(id));

	/* Collect results; end the group when one rank fails. */
	backstop = hx_now() + o->timeout_s * (6 + 4 * (o->nprograms + !!o->reference_program));
	for (;;) {
		struct pollfd pfd[64];
		int np = 0, alive = 0;

		for (int r = 0; r < n && np < 64; r++)
			if (ch[r].out_fd >= 0) {
				pfd[np].fd = ch[r].out_fd;
				pfd[np].events = POLLIN;
				np++;
			}
		if (np)
			poll(pfd, (nfds_t)np, 100);
		else
			usleep(100 * 1000);
		for (int r = 0; r < n; r++) {
			if (ch[r].out_fd >= 0) {
				struct pollfd one = {ch[r].out_fd, POLLIN, 0};
				if (poll(&one, 1, 0) > 0) {
					char buf[4096];
					ssize_t k = read(ch[r].out_fd, buf, sizeof(buf));
					if (k > 0)
						cuco_strbuf_add(&ch[r].out, buf, (size_t)k);
					else if (k == 0) {
						close(ch[r].out_fd);
						ch[r].out_fd = -1;
					}
				}
			}
			if (!ch[r].done &&
			    waitpid(ch[r].pid, &ch[r].status, WNOHANG) == ch[r].pid) {
				ch[r].done = 1;
				ch[r].exit_time = hx_now();
				if (failed < 0 &&
				    !(WIFEXITED(ch[r].status) && WEXITSTATUS(ch[r].status) == 0))
					failed = r;
			}
			alive += !ch[r].done;
		}
		if (!alive) {
			int open = 0;
			for (int r = 0; r < n; r++)
				open += ch[r].out_fd >= 0;
			if (!open)
				break;
		}
		/* Peers of a failed rank usually hang in NCCL: give them 3 s to notice. */
		if (failed >= 0 && alive && hx_now() > ch[failed].exit_time + 3.0)
			kill_all(ch, n);
		if (hx_now() > backstop && alive) {
			kill_all(ch, n);
			if (failed < 0) {
				hx_emit_failure(
				    res_fd, -1, CUCO_ERR_TIMEOUT, "launch",
				    "rank group exceeded the harness's overall time limit");
				rc = CUCO_ERR_TIMEOUT;
				goto out;
			}
		}
	}

	/* Exactly one record per rank that reports (every rank; the probe's rank 0),
	 * the failed rank's or rank 0's passed on. */
	if (failed >= 0)
		hx_set_program(in_reference(&ch[failed].out) ? "" : last_program(&ch[failed].out));
	for (int r = 0; r < n; r++) {
		const char *rec;
		int k =
		    rank_record(&ch[r].out, r, &rec, why, sizeof(why), culprit, sizeof(culprit));

		if (k < 0) {
			hx_set_program(culprit);
			hx_emit_failure(res_fd, r, CUCO_ERR_RUN, "run", why);
			rc = CUCO_ERR_RUN;
			goto out;
		}
		if (r == (failed >= 0 ? failed : 0))
			record = rec;
		if (failed < 0 && !k && (r == 0 || !o->probe)) {
			snprintf(why, sizeof(why), "rank %d exited without a result", r);
			hx_emit_failure(res_fd, r, CUCO_ERR_CRASH, "finish", why);
			rc = CUCO_ERR_CRASH;
			goto out;
		}
	}
	if (failed < 0) {
		put_record(res_fd, record);
		rc = 0;
	} else {
		int st = ch[failed].status;
		if (record && strstr(record, "\"status\"")) {
			put_record(res_fd, record);
			rc = WIFEXITED(st) ? WEXITSTATUS(st) : CUCO_ERR_CRASH;
		} else {
			int ref = in_reference(&ch[failed].out);
			size_t k;

			hx_set_program(ref ? "" : last_program(&ch[failed].out));
			if (WIFSIGNALED(st))
				k = (size_t)snprintf(why, sizeof(why),
				                     "rank %d died with signal %d (%s)", failed,
				                     WTERMSIG(st), strsignal(WTERMSIG(st)));
			else
				k = (size_t)snprintf(why, sizeof(why),
				                     "rank %d exited with code %d and no result",
				                     failed, WEXITSTATUS(st));
			if (ref && k < sizeof(why))
				snprintf(why + k, sizeof(why) - k,
				         " while running the reference program %.120s",
				         o->reference_program);
			hx_emit_failure(res_fd, failed, CUCO_ERR_CRASH, ref ? "reference" : "run",
			                why);
			rc = CUCO_ERR_CRASH;
		}
	}
out:
	fflush(stdout);
	if (ch) {
		kill_all(ch, n);
		for (int r = 0; r < n; r++) {
			if (ch[r].pid > 0 && !ch[r].done)
				waitpid(ch[r].pid, NULL, 0);
			cuco_strbuf_release(&ch[r].out);
		}
	}
	free(ch);
	free(down);
	return rc;
}

/* First set variable of names[], parsed as a non-negative int; -1 if none. */
static int env_int(const char *const *names)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		char *end;
		long x;

		if (!v || !*v)
			continue;
		errno = 0;
		x = strtol(v, &end, 10);
		if (errno || *end || x < 0 || x > 1 << 20)
			return -1;
		return (int)x;
	}
	return -1;
}

static int tcp_bootstrap(int rank, int nranks, ncclUniqueId *id, double timeout_s, char *err,
                         size_t errlen)
{
	const char *addr = getenv("CUCO_MASTER_ADDR");
	const char *port = getenv("CUCO_MASTER_PORT");
	struct addrinfo hints, *ai = NULL;
	int fd = -1, rc = -1;
	double end = hx_now() + timeout_s;

	if (!addr || !*addr)
		addr = "127.0.0.1";
	if (!port || !*port)
		port = "29517";
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (rank == 0)
		hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(rank == 0 ? NULL : addr, port, &hints, &ai)) {
		snprintf(err, errlen, "cannot resolve CUCO_MASTER_ADDR=%s port %s", addr, port);
		return -1;
	}
	if (rank == 0) {
		int one = 1;
		if (ncclGetUniqueId(id) != ncclSuccess) {
			snprintf(err, errlen, "ncclGetUniqueId failed");
			goto out;
		}
		fd = socket(ai->ai_family, ai->ai_socktype, 0);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, nranks)) {
			snprintf(err, errlen, "rank 0 cannot listen on port %s: %s", port,
			         strerror(errno));
			goto out;
		}
		for (int i = 1; i < nranks; i++) {
			struct pollfd pfd = {fd, POLLIN, 0};
			int c, left = (int)((end - hx_now()) * 1000);
			if (left <= 0 || poll(&pfd, 1, left) <= 0) {
				snprintf(err, errlen, "only %d of %d ranks connected to rank 0", i,
				         nranks);
				goto out;
			}
			c = accept(fd, NULL, NULL);
			if (c < 0 || hx_write_all(c, id, sizeof(*id))) {
				snprintf(err, errlen, "bootstrap send failed: %s", strerror(errno));
				if (c >= 0)
					close(c);
				goto out;
			}
			close(c);
		}
		rc = 0;
	} else {
		for (;;) {
			fd = socket(ai->ai_family, ai->ai_socktype, 0);
			if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
			if (hx_now() > end) {
				snprintf(err, errlen, "cannot reach rank 0 at %s:%s", addr, port);
				goto out;
			}
			usleep(100 * 1000);
		}
		if (hx_read_all(fd, id, sizeof(*id), end - hx_now())) {
			snprintf(err, errlen, "no NCCL unique id from rank 0 at %s:%s", addr, port);
			goto out;
		}
		rc = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

int hx_launch_env(const struct hx_opts *o)
{
	static const char *const rank_vars[] = {"CUCO_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
	                                        "PMI_RANK",  "SLURM_PROCID",         NULL};
	static const char *const size_vars[] = {"CUCO_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
	                                        "SLURM_NTASKS", NULL};
	static const char *const local_vars[] = {"CUCO_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
	                                         "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
	struct hx_rank me;
	ncclUniqueId id;
	char err[512];

	me.rank = env_int(rank_vars);
	me.nranks = env_int(size_vars);
	me.local_rank = env_int(local_vars);
	me.out_fd = 1;
	if (o->result_file) {
		me.out_fd = open(o->result_file,
		                 O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (me.out_fd < 0) {
			fprintf(stderr, "cuco-harness: cannot open %s: %s\n", o->result_file,
			        strerror(errno));
			return CUCO_ERR_IO;
		}
	}
	if (me.rank < 0 || me.nranks < 1) {
		hx_emit_failure(me.out_fd, -1, CUCO_ERR_USAGE, "launch",
		                "--launch env needs the rank and size from mpirun, srun, or "
		                "CUCO_RANK/CUCO_NRANKS");
		return CUCO_ERR_USAGE;
	}
	if (me.rank >= me.nranks) {
		snprintf(err, sizeof(err), "rank %d is out of range for %d ranks", me.rank,
		         me.nranks);
		hx_emit_failure(me.out_fd, -1, CUCO_ERR_USAGE, "launch", err);
		return CUCO_ERR_USAGE;
	}
	hx_set_nranks(me.nranks);
	if (me.local_rank < 0)
		me.local_rank = me.rank;
	if (tcp_bootstrap(me.rank, me.nranks, &id, o->timeout_s, err, sizeof(err))) {
		hx_emit_failure(me.out_fd, me.rank, CUCO_ERR_TIMEOUT, "bootstrap", err);
		return CUCO_ERR_TIMEOUT;
	}
	return hx_rank_main(o, &me, &id);
}
