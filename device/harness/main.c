/*
 * main.c - cuco-harness: build, verify and time programs of one workload
 * shape on every rank. cuco's cascade runs it; people can too:
 *
 *   cuco-harness --workload-so W.so --workload NAME --shape NAME --param M=8192 ...
 *                --program baseline=host.so --program seed=seed.so [options]
 *
 * The result is one JSON line on stdout (see docs/harness.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/error.h"

static const char usage_text[] =
    "usage: cuco-harness --workload-so PATH --workload NAME --shape NAME --param K=V...\n"
    "                    --program NAME=PATH[,noverify]... [options]\n"
    "       cuco-harness --probe [--ranks N]\n"
    "       cuco-harness --count-gpus\n"
    "options:\n"
    "  --tolerance X       relative L2 error allowed (default 1e-2)\n"
    "  --reference-program PATH\n"
    "                      the expected outputs from one run of this program, not from\n"
    "                      the workload's reference\n"
    "  --argv STRING       the programs' command line for this shape (cuco_shape.argv)\n"
    "  --ranks N           ranks to fork on this node (default: one per GPU)\n"
    "  --launch fork|env   fork ranks here, or take them from mpirun/srun (default fork)\n"
    "  --result-fd N       fork: the result record on descriptor N, not stdout\n"
    "  --timeout S         watchdog: longest any stage may take (default 60)\n"
    "  --warmup N          warm-up runs (default 5)\n"
    "  --iters N           timed runs, at least (default 20)\n"
    "  --bench-seconds S   add timed runs up to this much time (default 0.5; max 2000 runs)\n"
    "  --verify-runs N     verifications per program, one before timing (default 3)\n"
    "  --rotate N          input sets to rotate through (default: enough to defeat L2)\n"
    "  --timing MODE       sustained: runs back to back (default); burst: each run\n"
    "                      alone after an idle gap, below the power cap\n"
    "  --seed N            input seed (default 1)\n"
    "  --no-samples        leave per-run samples out of the JSON\n";

void hx_opts_defaults(struct hx_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->tolerance = 1e-2;
	o->timeout_s = 60;
	o->warmup = 5;
	o->iters = 20;
	o->bench_seconds = 0.5;
	o->verify_runs = 3;
	o->seed = 1;
	o->samples = 1;
	o->workload_name = "";
	o->result_fd = -1;
}

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "cuco-harness: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n%s", usage_text);
	return CUCO_ERR_USAGE;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct hx_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long n;

		if (!strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			exit(0);
		} else if (!strcmp(a, "--count-gpus")) {
			printf("%d\n", hx_count_gpus());
			exit(0);
		} else if (!strcmp(a, "--probe")) {
			o->probe = 1;
			continue;
		} else if (!strcmp(a, "--no-samples")) {
			o->samples = 0;
			continue;
		}
		if (!v)
			return bad("option %s needs a value%s", a, "");
		i++;
		if (!strcmp(a, "--workload-so")) {
			o->workload_so = v;
		} else if (!strcmp(a, "--reference-program")) {
			if (!*v)
				return bad("--reference-program: expected a path%s%s", "", "");
			o->reference_program = v;
		} else if (!strcmp(a, "--argv")) {
			if (strlen(v) >= sizeof(o->shape.argv))
				return bad("--argv: longer than %s characters%s", "1023", "");
			memcpy(o->shape.argv, v, strlen(v) + 1);
		} else if (!strcmp(a, "--result-file")) {
			o->result_file = v;
		} else if (!strcmp(a, "--result-fd")) {
			if (parse_ll(v, 3, 1 << 20, &n))
				return bad("--result-fd %s: expected a descriptor number >= 3%s", v,
				           "");
			o->result_fd = (int)n;
		} else if (!strcmp(a, "--workload")) {
			o->workload_name = v;
		} else if (!strcmp(a, "--shape")) {
			if (strlen(v) >= CUCO_NAME_MAX)
				return bad("--shape %s: name too long%s", v, "");
			memcpy(o->shape.name, v, strlen(v) + 1);
		} else if (!strcmp(a, "--param")) {
			const char *eq = strchr(v, '=');
			int k = o->shape.nparams;
			if (!eq || eq == v || (size_t)(eq - v) >= CUCO_NAME_MAX)
				return bad("--param %s: expected NAME=INTEGER%s", v, "");
			if (k >= CUCO_MAX_PARAMS)
				return bad("--param %s: too many parameters%s", v, "");
			if (parse_ll(eq + 1, 0, (long long)1 << 50, &o->shape.params[k]))
				return bad("--param %s: value is not a non-negative integer%s", v,
				           "");
			memcpy(o->shape.param_names[k], v, (size_t)(eq - v));
			o->shape.param_names[k][eq - v] = '\0';
			o->shape.nparams++;
		} else if (!strcmp(a, "--program")) {
			char *spec = v, *eq = strchr(spec, '='), *comma;
			int k = o->nprograms;
			if (!eq || eq == spec)
				return bad("--program %s: expected NAME=PATH[,noverify]%s", v, "");
			if (k >= HX_MAX_PROGRAMS)
				return bad("--program %s: too many programs%s", v, "");
			*eq = '\0';
			o->program_names[k] = spec;
			o->program_paths[k] = eq + 1;
			o->program_verify[k] = 1;
			comma = strrchr(eq + 1, ',');
			if (comma && !strcmp(comma, ",noverify")) {
				*comma = '\0';
				o->program_verify[k] = 0;
			}
			o->nprograms++;
		} else if (!strcmp(a, "--tolerance")) {
			if (parse_double(v, 1e-12, 1, &o->tolerance))
				return bad("--tolerance %s: expected a number in (0, 1]%s", v, "");
		} else if (!strcmp(a, "--ranks")) {
			if (parse_ll(v, 1, 4096, &n))
				return bad("--ranks %s: expected a positive integer%s", v, "");
			o->ranks = (int)n;
		} else if (!strcmp(a, "--launch")) {
			if (strcmp(v, "fork") && strcmp(v, "env"))
				return bad("--launch %s: expected fork or env%s", v, "");
			o->launch_env = !strcmp(v, "env");
		} else if (!strcmp(a, "--timeout")) {
			if (parse_double(v, 0.1, 86400, &o->timeout_s))
				return bad("--timeout %s: expected seconds in [0.1, 86400]%s", v,
				           "");
		} else if (!strcmp(a, "--warmup")) {
			if (parse_ll(v, 0, 100000, &n))
				return bad("--warmup %s: expected a non-negative integer%s", v, "");
			o->warmup = (int)n;
		} else if (!strcmp(a, "--iters")) {
			if (parse_ll(v, 1, 2000, &n))
				return bad("--iters %s: expected an integer in [1, 2000]%s", v, "");
			o->iters = (int)n;
		} else if (!strcmp(a, "--bench-seconds")) {
			if (parse_double(v, 0, 3600, &o->bench_seconds))
				return bad("--bench-seconds %s: expected seconds%s", v, "");
		} else if (!strcmp(a, "--verify-runs")) {
			if (parse_ll(v, 1, 1000, &n))
				return bad("--verify-runs %s: expected a positive integer%s", v,
				           "");
			o->verify_runs = (int)n;
		} else if (!strcmp(a, "--rotate")) {
			if (parse_ll(v, 1, 8, &n))
				return bad("--rotate %s: expected an integer in [1, 8]%s", v, "");
			o->rotate = (int)n;
		} else if (!strcmp(a, "--timing")) {
			if (strcmp(v, "sustained") && strcmp(v, "burst"))
				return bad("--timing %s: expected sustained or burst%s", v, "");
			o->burst = !strcmp(v, "burst");
		} else if (!strcmp(a, "--seed")) {
			if (parse_ll(v, 0, (long long)1 << 62, &n))
				return bad("--seed %s: expected a non-negative integer%s", v, "");
			o->seed = (uint64_t)n;
		} else {
			return bad("unknown option %s%s", a, "");
		}
	}
	if (o->probe)
		return 0;
	if (!o->workload_so)
		return bad("--workload-so is required%s%s", "", "");
	if (!o->shape.name[0])
		return bad("--shape is required%s%s", "", "");
	if (!o->nprograms)
		return bad("at least one --program is required%s%s", "", "");
	return 0;
}

/*
 * `cuco-harness --probe`: the facts of every GPU, one fork group whose ranks
 * each run hx_probe_rank; no GPU gives the record of an empty node.
 */
static int probe(const struct hx_opts *o)
{
	int n = hx_count_gpus(), v = 0;
	struct hx_opts po = *o;

	if (n < 1) {
		ncclGetVersion(&v);
		printf(
		    "{\"harness\":1,\"status\":\"ok\",\"nccl_version\":%d,\"ranks\":0,\"gpus\":[],"
		    "\"lsa\":null,\"gin_contexts\":0}\n",
		    v);
		return 0;
	}
	po.ranks = o->ranks ? o->ranks : n;
	po.nprograms = 1;
	return hx_launch_fork(&po);
}

int main(int argc, char **argv)
{
	struct hx_opts o;
	int rc;

	hx_opts_defaults(&o);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* Never let NCCL build NVLink multicast (NVLS) objects. */
	setenv("NCCL_NVLS_ENABLE", "0", 1);
	if (o.probe)
		return probe(&o);
	return o.launch_env ? hx_launch_env(&o) : hx_launch_fork(&o);
}
