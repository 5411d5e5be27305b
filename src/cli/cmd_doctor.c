/* cmd_doctor.c - `cuco doctor`: what this node can run, measured by the harness. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cascade/cascade.h"
#include "cascade/sandbox.h"
#include "farm/slurm.h"
#include "program/directive.h"
#include "util/jail.h"
#include "util/jail_probe.h"
#include "util/paths.h"
#include "util/proc.h"

static const char usage[] =
    "usage: cuco doctor [--json] [--partition P]\n"
    "\n"
    "GPUs (count, name, SMs, memory), peer access and NVLink links, the NCCL\n"
    "library in use, whether the NCCL device API works here (an LSA self-test\n"
    "across all GPUs; a device communicator with GIN contexts), nvcc and the\n"
    "target architecture (from the GPUs' compute capability unless CUCO_ARCH\n"
    "says), the hardware queues CUDA gives each GPU (CUDA_DEVICE_MAX_CONNECTIONS),\n"
    "and the facts directives are checked against (evolve, bench, eval and\n"
    "fastpath --llm run the same probe). Where Slurm's srun is on PATH, the\n"
    "farm's view too (evolve --farm slurm): partitions, nodes, GPUs per node\n"
    "from GRES, the allocation, and whether a step sees the state directory\n"
    "(one short step runs to check). Exits 0 on a machine without GPUs,\n"
    "saying so. NVSHMEM (the nvshmem backend): where, its version, its\n"
    "bootstrap and transport plugins, and whether it matches the one cuco\n"
    "was built against.\n";

struct doctor_args {
	int json;
	const char *partition;
};

static const struct cli_flag doctor_flags[] = {
    {CLI_BOOL, "--json", NULL, "the probe's JSON on stdout instead of the report",
     CLI_AT(struct doctor_args, json)},
    {CLI_STRING, "--partition", "P", "the Slurm partition to show (default: all)",
     CLI_AT(struct doctor_args, partition)},
    {CLI_END},
};

const struct cli_spec cmd_doctor_spec = {
    .name = "doctor",
    .usage = usage,
    .flags = doctor_flags,
    .args_size = sizeof(struct doctor_args),
};

/* The Slurm view: what `evolve --farm slurm` would run on, and whether a step sees the state. */
static void slurm_view(const char *partition)
{
	struct cuco_farm f;
	struct cuco_err e;
	struct cuco_strbuf v = CUCO_STRBUF_INIT;
	char dir[4200];
	int gpus;

	cuco_err_clear(&e);
	if (cuco_farm_init(&f, 2, partition, NULL, &e)) {
		printf("slurm:      none here (no srun on PATH)\n");
		return;
	}
	if (cuco_farm_view(&f, &v, &gpus, &e)) {
		/* Slurm's own words (sinfo's stderr) go to stderr, not into this report */
		printf("slurm:      srun is here, but Slurm did not answer (why: on stderr)\n");
		fprintf(stderr, "cuco doctor: slurm: %s\n", e.msg);
		goto out;
	}
	printf("slurm:      the farm of evolve --farm slurm\n");
	for (const char *l = v.buf; *l;) {
		size_t n = strcspn(l, "\n");
		printf("  %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
	snprintf(dir, sizeof(dir), "%s/farm", cuco_state_dir());
	if (cuco_farm_check_shared(&f, dir, &e)) {
		/* its reason may hold srun's own words: stderr */
		printf("  state dir:      %s: NOT usable by the farm (why: on stderr)\n",
		       cuco_state_dir());
		fprintf(stderr, "cuco doctor: the state dir and the farm: %s\n", e.msg);
	} else
		printf("  state dir:      %s: shared with the farm's nodes\n", cuco_state_dir());
out:
	cuco_strbuf_release(&v);
}

/* How candidates (code a model wrote) are isolated on this node (docs/sandbox.md). */
static void sandbox_view(void)
{
	const char *run_netns = getenv("CUCO_SANDBOX_RUN_NETNS");
	int netns = cuco_proc_netns_available(), run = run_netns && !strcmp(run_netns, "1");
	char tool[4096];

	printf("sandbox:    candidates (code a model wrote), docs/sandbox.md\n");
	printf("  environment:    an allow-list: never the API key, credentials or CUCO_STORE\n");
	printf("  limits:         no core files, files up to 4 GiB; children die with cuco\n");
	printf(
	    "  directory:      a private one (0700, removed after) per compile and harness run\n");
	printf("  includes:       cuco's and NCCL's folders and the workload's headers only\n");
	if (cuco_sandbox_cuobjdump(tool, sizeof(tool)))
		printf(
		    "  multicast:      refused in the source and in the object (PTX; SASS by %s)\n",
		    tool);
	else
		printf(
		    "  multicast:      refused in the source and in the object (PTX; no cuobjdump "
		    "for the SASS)\n");
	printf("  network:        compiles: %s\n",
	       netns ? "a network namespace of their own (nothing reachable)"
	             : "the node's (this kernel refuses unprivileged user namespaces)");
	printf("                  harness runs on this node: %s\n",
	       !run    ? "the node's (CUCO_SANDBOX_RUN_NETNS=1: loopback only)"
	       : netns ? "loopback only (CUCO_SANDBOX_RUN_NETNS=1)"
	               : "the node's (CUCO_SANDBOX_RUN_NETNS=1, but the kernel refuses)");
	printf("  files:          harness runs and a candidate's compiles: %s\n",
	       cuco_run_jailed()
	           ? "a view of their own: the system's folders, the toolkit, NCCL, NVSHMEM and "
	             "what they load, read-only; their own folder, /tmp and /dev/shm; no store, "
	             "state directory, $HOME or unix socket of the node's"
	       : cuco_jail_available() ? "cuco's user's (CUCO_SANDBOX_RUN_JAIL=0)"
	                               : "cuco's user's: the view cannot be made here");
	if (!cuco_jail_available())
		printf("                  why: %s\n", cuco_jail_why());
	if (cuco_run_jailed())
		printf("  processes:      a PID namespace of their own each (all they start ends "
		       "with them); %s\n",
		       geteuid() == 0 ? "as root: nobody (CUCO_SANDBOX_UID), no capabilities"
		                      : "a user namespace mapping cuco's ids");
	printf("  compile memory: %.0f GiB of address space (CUCO_COMPILE_MEMORY_GB)\n",
	       (double)cuco_compile_mem_bytes() / (double)(1ull << 30));
	printf("  model's code:   %s\n",
	       cuco_run_jailed() ? "runs in the view"
	                         : "refused (cuco fails closed) unless --unsandboxed is given");
	if (cuco_proc_find_program("bwrap", tool, sizeof(tool)) == 0)
		printf("  bubblewrap:     %s installed, not used\n", tool);
	else
		printf("  bubblewrap:     not installed (not used)\n");
}

/* NVSHMEM for the nvshmem backend: where, which version, plugins, and whether it is the one
 * cuco was built against (programs link the device library of the headers' version and run
 * against the host library found at run time: the two must match). */
static void nvshmem_view(void)
{
	struct cuco_nvshmem_info n;

	if (cuco_nvshmem_probe(&n, 1)) {
		printf(
		    "NVSHMEM:    not found (CUCO_NVSHMEM_HOME, NVSHMEM_HOME or "
		    "scripts/setup-nvshmem.sh);\n            nvshmem programs are refused here\n");
		if (n.build_version[0])
			printf("            (cuco was built against NVSHMEM %s)\n",
			       n.build_version);
		return;
	}
	printf("NVSHMEM:    %s (%s)\n", n.version[0] ? n.version : "unknown version", n.home);
	if (n.lib_version[0] && strcmp(n.lib_version, n.version))
		printf("  MISMATCH: its host library is %s, its headers %s: programs would run "
		       "against\n            another host library than the device library they "
		       "link\n",
		       n.lib_version, n.version);
	else if (!n.lib_version[0])
		printf("  host library does not load: %s\n", n.lib_error);
	if (n.build_version[0] && n.version[0] && strcmp(n.build_version, n.version))
		printf("  MISMATCH: cuco was built against NVSHMEM %s, this is %s: set "
		       "CUCO_NVSHMEM_HOME\n            to the one it was built with, or rebuild\n",
		       n.build_version, n.version);
	printf("  bootstrap:      %s%s\n", n.bootstraps[0] ? n.bootstraps : "none",
	       strstr(n.bootstraps, "uid") ? "" : " (the harness needs uid: NVSHMEM refused)");
	printf("  transports:     %s\n                  (within a node NVLink P2P, built in; "
	       "across nodes one of these\n                  and an IB/RoCE NIC)\n",
	       n.transports[0] ? n.transports : "none");
}

static void version(char *out, size_t len, int v)
{
	snprintf(out, len, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

/* The one-line answer first: can this node verify and time programs? */
static void verdict(json_t *root)
{
	json_t *gpus = json_object_get(root, "gpus"), *lsa = json_object_get(root, "lsa");
	size_t n = json_is_array(gpus) ? json_array_size(gpus) : 0;

	if (n == 0)
		printf("verdict:    no CUDA GPU here: transform and compile only (verifying and "
		       "timing need >= 2 GPUs)\n");
	else if (n == 1)
		printf("verdict:    1 GPU: bench and eval on 1 rank (the compute side); workloads "
		       "need >= 2 GPUs\n");
	else if (json_is_true(lsa))
		printf("verdict:    ready: %zu GPUs, the LSA self-test passed\n", n);
	else if (json_is_false(lsa))
		printf(
		    "verdict:    NOT ready: %zu GPUs, but the LSA self-test FAILED (LSA below)\n",
		    n);
	else
		printf("verdict:    %zu GPUs; LSA not tested\n", n);
}

int cmd_doctor(int argc, char **argv)
{
	int as_json = 0, rc = 0;
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	struct cuco_hw_facts facts;
	struct cuco_err err;
	const char *nccl = cuco_nccl_home(), *arch = getenv("CUCO_ARCH");
	json_t *root = NULL, *gpus;
	json_error_t je;
	char ver[32], target[16], desc[160];
	const char *partition = NULL;
	struct doctor_args a = {0};

	cuco_err_clear(&err);
	if ((rc = cli_flags_parse(&cmd_doctor_spec, argc, argv, &a)))
		return rc == CLI_HELP ? 0 : rc;
	as_json = a.json;
	partition = a.partition;
	if ((rc = cuco_probe_run(&out, &err))) {
		fprintf(stderr, "cuco doctor: %s\n", err.msg);
		goto out;
	}
	root = json_loads(strchr(out.buf, '{'), JSON_DISABLE_EOF_CHECK, &je);
	if (!root) {
		fprintf(stderr, "cuco doctor: the probe's result is not JSON (%s): %s\n", je.text,
		        out.buf);
		rc = CUCO_ERR_RUN;
		goto out;
	}
	if (as_json) {
		printf("%s", out.buf);
		goto out;
	}
	gpus = json_object_get(root, "gpus");
	verdict(root);
	version(ver, sizeof(ver), (int)json_integer_value(json_object_get(root, "nccl_version")));
	{
		struct cuco_err herr;
		const char *home = cuco_home(&herr);

		printf("cuco:       %s (data: %s)\n", CUCO_VERSION, home ? home : "not found");
		printf("harness:    %s\n", cuco_harness_path());
	}
	printf("nvcc:       %s\n", cuco_nvcc_version()[0] ? cuco_nvcc_version() : "not found");
	/* the facts the search checks directives against, for its default 2 ranks */
	rc = cuco_hw_facts_parse(strchr(out.buf, '{'), 2, &facts, &err);
	if (arch && *arch)
		printf("target:     sm_%s (CUCO_ARCH)\n", arch);
	else if (facts.cc)
		printf(
		    "target:     sm_%s (from the GPUs' compute capability; CUCO_ARCH overrides)\n",
		    cuco_arch_for_cc(facts.cc, target, sizeof(target)));
	else
		printf("target:     sm_90a (no GPU to take it from; CUCO_ARCH overrides)\n");
	rc = 0;
	printf("NCCL:       %s (%s)\n", ver, nccl ? nccl : "toolkit's library");
	nvshmem_view();
	{
		/* the hardware queues change what some placements cost: time
		 * programs under the value the user's process will run with */
		const char *mc = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
		if (mc && *mc)
			printf("queues:     CUDA_DEVICE_MAX_CONNECTIONS=%s\n", mc);
		else
			printf("queues:     CUDA_DEVICE_MAX_CONNECTIONS unset: CUDA's 8 per GPU; "
			       "set it as\n            your application does before bench or "
			       "evolve (docs/harness.md)\n");
	}
	slurm_view(partition);
	sandbox_view();
	if (!json_is_array(gpus) || json_array_size(gpus) == 0) {
		printf("GPUs:       none: this machine has no CUDA GPU. cuco can transform and\n"
		       "            compile here; verifying and timing needs >= 2 GPUs.\n");
		goto out;
	}
	printf("GPUs:       %zu\n", json_array_size(gpus));
	for (size_t i = 0; i < json_array_size(gpus); i++) {
		json_t *g = json_array_get(gpus, i), *peer = json_object_get(g, "peer");
		printf(
		    "  [%lld] %s, %lld SMs, cc %s, %.1f GiB, L2 %.0f MiB, NVLink links %lld, peer:",
		    json_integer_value(json_object_get(g, "index")),
		    json_string_value(json_object_get(g, "name")),
		    json_integer_value(json_object_get(g, "sm_count")),
		    json_string_value(json_object_get(g, "cc")),
		    (double)json_integer_value(json_object_get(g, "memory_bytes")) / (1 << 30),
		    (double)json_integer_value(json_object_get(g, "l2_bytes")) / (1 << 20),
		    json_integer_value(json_object_get(g, "nvlinks")));
		for (size_t k = 0; k < json_array_size(peer); k++)
			printf(" %lld", json_integer_value(json_array_get(peer, k)));
		printf("\n");
	}
	{
		json_t *lsa = json_object_get(root, "lsa");
		long long gin = json_integer_value(json_object_get(root, "gin_contexts"));
		const char *lerr = json_string_value(json_object_get(root, "lsa_error"));
		printf("LSA:        %s\n", json_is_true(lsa)
		                               ? "works (self-test passed on all GPUs)"
		                           : json_is_null(lsa) ? "not tested (needs >= 2 GPUs)"
		                                               : "FAILED");
		if (json_is_false(lsa) && lerr)
			printf("            %s\n", lerr);
		printf("GIN:        %s\n", gin > 0 ? "available"
		                                   : "not available (no GIN-capable network); "
		                                     "GIN programs are refused here");
	}
	printf("checks:     directives for 2 ranks are checked against %s%s\n",
	       cuco_hw_facts_describe(&facts, desc, sizeof(desc)),
	       facts.gpus >= 2 ? "" : " (too few GPUs to run them here)");
out:
	json_decref(root);
	cuco_strbuf_release(&out);
	return rc;
}
