/*
 * test_ranks.c - rank counts 2, 4 and 8 wherever no GPU is needed: each
 * workload's describe (compiled with nvcc, dlopen'ed, never run on a GPU),
 * the manifests' rank lists against their shapes, the fast-path seeds, the
 * directive checks with the hardware facts of 4 and 8 ranks, and the
 * harness's env launch (rank and size from CUCO_/OMPI_/SLURM_ variables,
 * bootstrap before any CUDA).
 *
 * nvcc runs twice for the whole file (one workload.cu each, in parallel,
 * cached under a temporary CUCO_STATE).
 */
#define _XOPEN_SOURCE 700
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "assert_text.h"
#include "rm_tree.h"
#include "cascade/cascade.h"
#include "fastpath/fastpath.h"
#include "program/directive.h"
#include "util/strbuf.h"
#include "workload/manifest.h"

#define WORKLOADS CUCO_SOURCE_DIR "/workloads"
#define HARNESS CUCO_BINARY_DIR "/cuco-harness"
#define NWL 2

/* Each workload and the dimension it splits among ranks. */
static const struct {
	const char *name;
	char split; /* 'N': B is K x N/R (gemm_allgather); 'M': A is M/R x K (allgather_gemm) */
	int kstep;  /* K a multiple of this: the GEMM's 8, or allgather_gemm's gates' 64 */
} wl_info[NWL] = {{"gemm_allgather", 'N', 8}, {"allgather_gemm", 'M', 64}};

static const int test_ranks[] = {2, 4, 8};

static char tmp_dir[64];
static struct cuco_manifest manifests[NWL];
static void *handles[NWL];
static cuco_workload_describe_fn describe[NWL];
static struct cuco_design_space ds;
static int have_ds;

static int group_setup(void **state)
{
	struct cuco_err err;
	char path[256];

	(void)state;
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/cuco-test-ranks-XXXXXX");
	if (!mkdtemp(tmp_dir))
		return -1;
	snprintf(path, sizeof(path), "%s/state", tmp_dir);
	if (!getenv("CUCO_HOME") || !*getenv("CUCO_HOME"))
		setenv("CUCO_HOME", CUCO_SOURCE_DIR, 1);
	setenv("CUCO_STATE", path, 1);
	for (int w = 0; w < NWL; w++)
		if (cuco_workload_find(WORKLOADS, wl_info[w].name, &manifests[w], &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return -1;
		}
	if (cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	have_ds = 1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (int w = 0; w < NWL; w++) {
		/* The .so files stay loaded: unloading libcudart at exit gains nothing. */
		cuco_manifest_release(&manifests[w]);
	}
	if (have_ds)
		cuco_design_space_release(&ds);
	if (tmp_dir[0])
		rm_tree(tmp_dir);
	return 0;
}

/* Compile both workload.cu files once (two nvcc runs at most, cached) and dlopen them. */
static void load_workloads(void)
{
	struct cuco_compile_opts o;
	struct cuco_compile_job jobs[NWL];
	struct cuco_strbuf src[NWL] = {CUCO_STRBUF_INIT, CUCO_STRBUF_INIT};
	struct cuco_err err;

	if (describe[0])
		return;
	cuco_err_clear(&err);
	if (cuco_compile_opts_default(&o, &err))
		fail_msg("cuco_compile_opts_default: %s", err.msg);
	o.jobs = NWL;
	for (int w = 0; w < NWL; w++) {
		if (cuco_strbuf_read_file(&src[w], manifests[w].workload))
			fail_msg("cannot read %s", manifests[w].workload);
		cuco_compile_job_init(&jobs[w], wl_info[w].name, manifests[w].workload, src[w].buf);
	}
	assert_int_equal(cuco_compile_many(&o, jobs, NWL, &err), CUCO_OK);
	for (int w = 0; w < NWL; w++) {
		if (jobs[w].code != CUCO_OK)
			fail_msg("%s did not compile:\n%s", manifests[w].workload, jobs[w].log.buf);
		handles[w] = dlopen(jobs[w].so_path, RTLD_NOW | RTLD_LOCAL);
		if (!handles[w])
			fail_msg("dlopen %s: %s", jobs[w].so_path, dlerror());
		*(void **)&describe[w] = dlsym(handles[w], "cuco_workload_describe");
		if (!describe[w])
			fail_msg("%s: no cuco_workload_describe", jobs[w].so_path);
		cuco_compile_job_release(&jobs[w]);
		cuco_strbuf_release(&src[w]);
	}
}

/* The dimension a workload splits among ranks, of shape s. */
static long long split_dim(int w, const struct cuco_shape *s)
{
	return cuco_shape_get(s, wl_info[w].split == 'N' ? "N" : "M", -1);
}

static int has_tensor(const struct cuco_tensor *t, int n, const char *name, int role, size_t elems)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return t[i].role == role && t[i].dtype == CUCO_DTYPE_BF16 &&
			       t[i].elems == elems && t[i].bytes == elems * 2;
	return 0;
}

/* ---- (1) describe gives per-rank sizes that add up, or names the shape ---- */

/* Describe shape s of workload w on every rank of nranks; checks sizes or the error. */
static void check_describe(int w, const struct cuco_shape *s, int nranks)
{
	long long M = cuco_shape_get(s, "M", -1), N = cuco_shape_get(s, "N", -1),
	          K = cuco_shape_get(s, "K", -1), whole = split_dim(w, s);
	size_t shard_sum = 0;

	for (int q = 0; q < nranks; q++) {
		struct cuco_tensor t[CUCO_MAX_TENSORS];
		char err[256] = "";
		int n = 0, rc;

		memset(t, 0, sizeof(t));
		rc = describe[w](s, q, nranks, t, &n, err, sizeof(err));
		if (whole % nranks) {
			char want[128];
			if (rc == 0)
				fail_msg(
				    "%s shape %s accepted %d ranks though %c=%lld does not divide",
				    wl_info[w].name, s->name, nranks, wl_info[w].split, whole);
			snprintf(want, sizeof(want), "shape '%s'", s->name);
			assert_contains(err, want);
			snprintf(want, sizeof(want), "not divisible by %d ranks", nranks);
			assert_contains(err, want);
			return;
		}
		if (rc)
			fail_msg("%s shape %s, rank %d of %d: %s", wl_info[w].name, s->name, q,
			         nranks, err);
		assert_int_equal(n, 3);
		if (wl_info[w].split == 'N') {
			size_t b = (size_t)(K * (N / nranks));
			if (!has_tensor(t, n, "A", CUCO_ROLE_INPUT, (size_t)(M * K)) ||
			    !has_tensor(t, n, "B", CUCO_ROLE_INPUT, b) ||
			    !has_tensor(t, n, "C", CUCO_ROLE_OUTPUT, (size_t)(M * N)))
				fail_msg(
				    "%s %s rank %d/%d: want A %lldx%lld, B %lldx%lld, C %lldx%lld",
				    wl_info[w].name, s->name, q, nranks, M, K, K, N / nranks, M, N);
			shard_sum += b;
		} else {
			size_t a = (size_t)((M / nranks) * K);
			if (!has_tensor(t, n, "A", CUCO_ROLE_INPUT, a) ||
			    !has_tensor(t, n, "B", CUCO_ROLE_INPUT, (size_t)(K * N)) ||
			    !has_tensor(t, n, "C", CUCO_ROLE_OUTPUT, (size_t)(M * N)))
				fail_msg(
				    "%s %s rank %d/%d: want A %lldx%lld, B %lldx%lld, C %lldx%lld",
				    wl_info[w].name, s->name, q, nranks, M / nranks, K, K, N, M, N);
			shard_sum += a;
		}
	}
	/* The shards of all ranks make up the whole split operand. */
	assert_int_equal(shard_sum, (size_t)(wl_info[w].split == 'N' ? K * N : M * K));
}

static void test_describe(void **state)
{
	(void)state;
	load_workloads();
	for (int w = 0; w < NWL; w++) {
		const struct cuco_manifest *m = &manifests[w];
		int rejected3 = 0;

		for (size_t r = 0; r < sizeof(test_ranks) / sizeof(test_ranks[0]); r++)
			for (int i = 0; i < m->nshapes; i++)
				check_describe(w, &m->shapes[i], test_ranks[r]);
		/* 3 ranks: every shape here is a power of two in the split dimension. */
		for (int i = 0; i < m->nshapes; i++) {
			check_describe(w, &m->shapes[i], 3);
			rejected3 += split_dim(w, &m->shapes[i]) % 3 != 0;
		}
		assert_true(rejected3 > 0);
	}
}

/* A shape made up here: N=6144 divides by 2 and 3 but not by 4 or 8. */
static void test_describe_odd_shape(void **state)
{
	struct cuco_shape s = {.name = "odd",
	                       .nparams = 3,
	                       .param_names = {"M", "N", "K"},
	                       .params = {6144, 6144, 1024}};
	struct cuco_tensor t[CUCO_MAX_TENSORS];
	char err[256];
	int n;

	(void)state;
	load_workloads();
	for (int w = 0; w < NWL; w++) {
		check_describe(w, &s, 2);
		check_describe(w, &s, 3);
		check_describe(w, &s, 4);
		check_describe(w, &s, 8);
		/* No rank count at all is an error, not a division by zero. */
		err[0] = '\0';
		assert_int_not_equal(describe[w](&s, 0, 0, t, &n, err, sizeof(err)), 0);
		assert_contains(err, "shape 'odd'");
	}
}

/* ---- (2) manifests list their rank counts, and every shape divides ---- */

static void test_manifest_ranks(void **state)
{
	struct cuco_strbuf bad = CUCO_STRBUF_INIT;

	(void)state;
	for (int w = 0; w < NWL; w++) {
		const struct cuco_manifest *m = &manifests[w];

		for (size_t r = 0; r < sizeof(test_ranks) / sizeof(test_ranks[0]); r++) {
			int listed = 0;
			for (int j = 0; j < m->nranks; j++)
				listed |= m->ranks[j] == test_ranks[r];
			if (!listed)
				cuco_strbuf_addf(&bad, "%s: ranks does not list %d\n", m->name,
				                 test_ranks[r]);
		}
		/* Every shape meets the manifest's own shape rules on every rank count it
		 * lists (what bench, eval and evolve check before compiling), and the
		 * rules hold the GEMM's: N (or the rank's share of it) at least 64 and a
		 * multiple of 8, K a multiple of 8 (allgather_gemm: of 64, its gates). */
		for (int j = 0; j < m->nranks; j++)
			for (int i = 0; i < m->nshapes; i++) {
				struct cuco_err e;
				if (cuco_manifest_check_shape(m, &m->shapes[i], m->ranks[j], &e))
					cuco_strbuf_addf(&bad, "%s\n", e.msg);
			}
		{
			int nrule = 0, krule = 0, split = 0;
			for (int k = 0; k < m->nrules; k++) {
				const struct cuco_shape_rule *r = &m->rules[k];
				const char *p = m->params[r->param];
				split |= r->per_rank && p[0] == wl_info[w].split && !p[1];
				nrule |= !strcmp(p, "N") && r->min >= 64 && r->multiple &&
				         r->multiple % 8 == 0 &&
				         r->per_rank == (wl_info[w].split == 'N');
				krule |= !strcmp(p, "K") && r->multiple &&
				         r->multiple % wl_info[w].kstep == 0;
			}
			if (!nrule || !krule || !split)
				cuco_strbuf_addf(&bad, "%s: shape_rules lack %s\n", m->name,
				                 !split   ? "a per_rank rule on the split dimension"
				                 : !nrule ? "the GEMM's rule on N"
				                          : "the GEMM's rule on K");
		}
	}
	if (bad.len)
		fail_msg("manifests vs rank counts:\n%s", bad.buf);
	cuco_strbuf_release(&bad);
}

/* ---- (3) the fast-path seeds loop over the LSA team, no literal 2 ranks ---- */

static void seed_of(int w, struct cuco_strbuf *out)
{
	struct cuco_fastpath_opts opts;
	struct cuco_strbuf src = CUCO_STRBUF_INIT;
	struct cuco_err err;

	cuco_fastpath_opts_init(&opts);
	opts.share_dir = CUCO_SOURCE_DIR "/share/fastpath";
	if (cuco_strbuf_read_file(&src, manifests[w].host_program))
		fail_msg("cannot read %s", manifests[w].host_program);
	if (cuco_fastpath_transform(manifests[w].host_program, src.buf, &opts, out, NULL, &err))
		fail_msg("fast path on %s: %s", manifests[w].host_program, err.msg);
	cuco_strbuf_release(&src);
}

static void test_seed_any_ranks(void **state)
{
	static const char *const literal[] = {
	    "(nranks|nRanks|lsaSize|size)[[:space:]]*(==|!=|<=|>=|<|>)[[:space:]]*[0-9]+",
	    "[0-9]+[[:space:]]*(==|!=|<=|>=|<|>)[[:space:]]*(nranks|nRanks|lsaSize)",
	    "[^[:alnum:]_.][0-9]+[[:space:]]*-[[:space:]]*(dc\\.)?(lsa)?[Rr]ank",
	    "[Rr]ank[[:space:]]*\\^[[:space:]]*1",
	    "(nranks|lsaSize|[Rr]ank)[[:space:]]*=[[:space:]]*[0-9]+[[:space:]]*;",
	    "for[[:space:]]*\\([^;]*;[^;]*<[[:space:]]*[0-9]+[[:space:]]*;",
	};
	struct cuco_strbuf hits = CUCO_STRBUF_INIT;
	regex_t re[sizeof(literal) / sizeof(literal[0])];
	FILE *f;
	char line[256];
	int max_peers = -1;

	(void)state;
	for (size_t i = 0; i < sizeof(literal) / sizeof(literal[0]); i++)
		assert_int_equal(regcomp(&re[i], literal[i], REG_EXTENDED | REG_NOSUB), 0);
	for (int w = 0; w < NWL; w++) {
		struct cuco_strbuf seed = CUCO_STRBUF_INIT;
		char *save = NULL, *ln;
		int lineno = 0;

		seed_of(w, &seed);
		/* Every generated comm kernel walks the whole LSA team. */
		assert_contains(seed.buf, "i < dc.lsaSize");
		assert_contains(seed.buf, "CUCO_SEED_MAX_RANKS");
		for (ln = strtok_r(seed.buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			lineno++;
			if (strstr(ln, "//") == ln + strspn(ln, " \t"))
				continue; /* a comment line */
			for (size_t i = 0; i < sizeof(literal) / sizeof(literal[0]); i++)
				if (regexec(&re[i], ln, 0, NULL, 0) == 0)
					cuco_strbuf_addf(&hits, "%s seed line %d: %s\n",
					                 wl_info[w].name, lineno, ln);
		}
		cuco_strbuf_release(&seed);
	}
	for (size_t i = 0; i < sizeof(literal) / sizeof(literal[0]); i++)
		regfree(&re[i]);
	if (hits.len)
		fail_msg("the seeds assume a rank count:\n%s", hits.buf);
	cuco_strbuf_release(&hits);

	/* The seed's fixed-size peer arrays hold an 8-rank NVLink domain. */
	f = fopen(CUCO_SOURCE_DIR "/device/include/cuco_dev/lsa.cuh", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "#define CUCO_LSA_MAX_PEERS %d", &max_peers) == 1)
			break;
	fclose(f);
	assert_true(max_peers >= 8);
}

/* ---- (4) the seed's directive and knob bounds under 4- and 8-rank facts ---- */

static void test_seed_directive_facts(void **state)
{
	(void)state;
	for (int w = 0; w < NWL; w++) {
		struct cuco_strbuf seed = CUCO_STRBUF_INIT;
		struct cuco_directive d;
		struct cuco_err err;
		long long ctas;

		seed_of(w, &seed);
		if (cuco_directive_parse("seed.cu", seed.buf, &d, &err))
			fail_msg("%s seed directive: %s", wl_info[w].name, err.msg);
		ctas = cuco_directive_knob(&d, "comm_ctas", -1);
		assert_true(ctas >= 1);
		for (int nr = 4; nr <= 8; nr += 4) {
			struct cuco_hw_facts f = {.gin_capable = 0,
			                          .lsa_all_reachable = 1,
			                          .nranks = nr,
			                          .sm_count = 132};
			char want[96];

			if (cuco_directive_validate(&d, &ds, &f, &err))
				fail_msg("%s seed, %d ranks: %s", wl_info[w].name, nr, err.msg);
			/* comm_ctas is bounded by the GPU's SMs, not by the rank count. */
			assert_int_equal(cuco_directive_set_knob(&d, "comm_ctas", 132, 0), CUCO_OK);
			assert_int_equal(cuco_directive_validate(&d, &ds, &f, &err), CUCO_OK);
			f.sm_count = 78;
			assert_int_equal(cuco_directive_set_knob(&d, "comm_ctas", 78, 0), CUCO_OK);
			assert_int_equal(cuco_directive_validate(&d, &ds, &f, &err), CUCO_OK);
			assert_int_equal(cuco_directive_set_knob(&d, "comm_ctas", 79, 0), CUCO_OK);
			assert_int_equal(cuco_directive_validate(&d, &ds, &f, &err),
			                 CUCO_ERR_UNSUPPORTED);
			assert_contains(err.msg, "comm_ctas");
			assert_contains(err.msg, "78 SMs");
			/* LSA needs every rank reachable: 8 ranks across two nodes are refused. */
			f.sm_count = 132;
			f.lsa_all_reachable = 0;
			assert_int_equal(cuco_directive_set_knob(&d, "comm_ctas", ctas, 0),
			                 CUCO_OK);
			assert_int_equal(cuco_directive_validate(&d, &ds, &f, &err),
			                 CUCO_ERR_UNSUPPORTED);
			snprintf(want, sizeof(want), "%d", nr);
			assert_contains(err.msg, want);
		}
		cuco_directive_release(&d);
		cuco_strbuf_release(&seed);
	}
}

/* ---- (5) the harness's env launch takes the rank from the environment ---- */

/* A TCP port on 127.0.0.1 that nothing listens on (bound, then closed). */
static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/*
 * Run cuco-harness --launch env with the given "NAME=VALUE" variables (every
 * other rank variable unset); its stdout into out, its exit code returned.
 */
static int run_env_harness(const char *const *vars, struct cuco_strbuf *out)
{
	static const char *const clear[] = {"CUCO_RANK",
	                                    "CUCO_NRANKS",
	                                    "CUCO_LOCAL_RANK",
	                                    "OMPI_COMM_WORLD_RANK",
	                                    "PMIX_RANK",
	                                    "PMI_RANK",
	                                    "SLURM_PROCID",
	                                    "OMPI_COMM_WORLD_SIZE",
	                                    "PMI_SIZE",
	                                    "SLURM_NTASKS",
	                                    "OMPI_COMM_WORLD_LOCAL_RANK",
	                                    "MPI_LOCALRANKID",
	                                    "SLURM_LOCALID",
	                                    "CUCO_MASTER_ADDR",
	                                    "CUCO_MASTER_PORT",
	                                    NULL};
	char port[32];
	int fds[2], status = 0;
	pid_t pid;
	char buf[4096];
	ssize_t k;

	snprintf(port, sizeof(port), "CUCO_MASTER_PORT=%d", free_port());
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		for (int i = 0; clear[i]; i++)
			unsetenv(clear[i]);
		putenv((char *)"CUCO_MASTER_ADDR=127.0.0.1");
		putenv(port);
		for (int i = 0; vars[i]; i++)
			putenv((char *)vars[i]);
		execl(HARNESS, HARNESS, "--launch", "env", "--timeout", "1", "--workload-so",
		      "/nonexistent/workload.so", "--workload", "gemm_allgather", "--shape", "2048",
		      "--param", "M=2048", "--param", "N=2048", "--param", "K=2048", "--program",
		      "p=/nonexistent/p.so", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((k = read(fds[0], buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR))
		if (k > 0)
			cuco_strbuf_add(out, buf, (size_t)k);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		fail_msg("cuco-harness did not exit normally (status %d)", status);
	return WEXITSTATUS(status);
}

/* The harness's single JSON line in out, checked for status, rank and stage. */
static void check_failure_line(const struct cuco_strbuf *out, const char *status, int rank,
                               const char *stage, const char *msg_part)
{
	json_error_t jerr;
	json_t *j = json_loads(out->buf ? out->buf : "", 0, &jerr);

	if (!j)
		fail_msg("not one JSON line: %s\n%s", jerr.text, out->buf ? out->buf : "");
	assert_int_equal(json_integer_value(json_object_get(j, "harness")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "status")), status);
	assert_int_equal(json_integer_value(json_object_get(j, "rank")), rank);
	assert_string_equal(json_string_value(json_object_get(j, "stage")), stage);
	assert_contains(json_string_value(json_object_get(j, "error")), msg_part);
	json_decref(j);
}

static void test_harness_env_bootstrap(void **state)
{
	static const char *const cuco[] = {"CUCO_RANK=5", "CUCO_NRANKS=8", NULL};
	static const char *const ompi[] = {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
	                                   NULL};
	static const char *const slurm[] = {"SLURM_PROCID=7", "SLURM_NTASKS=8", NULL};
	static const struct {
		const char *const *vars;
		int rank;
	} cases[] = {{cuco, 5}, {ompi, 3}, {slurm, 7}};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		cuco_strbuf_reset(&out);
		rc = run_env_harness(cases[i].vars, &out);
		if (rc != CUCO_ERR_TIMEOUT)
			fail_msg("rank %d: exit %d, want %d (timeout)\n%s", cases[i].rank, rc,
			         CUCO_ERR_TIMEOUT, out.buf ? out.buf : "");
		check_failure_line(&out, "timeout", cases[i].rank, "bootstrap",
		                   "cannot reach rank 0 at 127.0.0.1:");
	}
	cuco_strbuf_release(&out);
}

static void test_harness_env_bad_rank(void **state)
{
	static const char *const over[] = {"CUCO_RANK=9", "CUCO_NRANKS=8", NULL};
	static const char *const equal[] = {"CUCO_RANK=8", "CUCO_NRANKS=8", NULL};
	static const char *const none[] = {NULL};
	struct cuco_strbuf out = CUCO_STRBUF_INIT;

	(void)state;
	assert_int_equal(run_env_harness(over, &out), CUCO_ERR_USAGE);
	check_failure_line(&out, "usage", -1, "launch", "rank 9 is out of range for 8 ranks");
	cuco_strbuf_reset(&out);
	assert_int_equal(run_env_harness(equal, &out), CUCO_ERR_USAGE);
	check_failure_line(&out, "usage", -1, "launch", "rank 8 is out of range for 8 ranks");
	cuco_strbuf_reset(&out);
	assert_int_equal(run_env_harness(none, &out), CUCO_ERR_USAGE);
	check_failure_line(&out, "usage", -1, "launch", "CUCO_RANK/CUCO_NRANKS");
	cuco_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_manifest_ranks),
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_describe_odd_shape),
	    cmocka_unit_test(test_seed_any_ranks),
	    cmocka_unit_test(test_seed_directive_facts),
	    cmocka_unit_test(test_harness_env_bootstrap),
	    cmocka_unit_test(test_harness_env_bad_rank),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
