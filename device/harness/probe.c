/*
 * probe.c - the facts behind `cuco doctor`, measured rather than guessed:
 * GPUs and their peer access, NVLink links (through NVML, loaded at run time
 * so nothing here needs it to build), the NCCL library in use, and whether the
 * device API works on this node: an LSA self-test across all GPUs and an
 * attempt to create a device communicator with GIN contexts.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/error.h"

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_link_state_fn)(void *, unsigned, int *);

/* Active NVLink links of each GPU by NVML index; -1 where NVML is missing. */
static void nvlink_counts(int n, int *links)
{
	void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml_init_fn init;
	nvml_handle_fn handle;
	nvml_link_state_fn state;

	for (int i = 0; i < n; i++)
		links[i] = -1;
	if (!dl)
		return;
	*(void **)&init = dlsym(dl, "nvmlInit_v2");
	*(void **)&handle = dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&state = dlsym(dl, "nvmlDeviceGetNvLinkState");
	if (!init || !handle || !state || init() != 0)
		return;
	for (int i = 0; i < n; i++) {
		void *h;
		if (handle((unsigned)i, &h) != 0)
			continue;
		links[i] = 0;
		for (unsigned l = 0; l < 18; l++) {
			int active = 0;
			if (state(h, l, &active) == 0 && active)
				links[i]++;
		}
	}
}

int hx_probe_rank(const struct hx_opts *o, const struct hx_rank *r, ncclComm_t comm)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char lsa_err[512] = "", gin_err[512] = "";
	int lsa_ok, gin_contexts = 0, ndev = 0, nccl = 0, rt = 0, drv = 0;
	struct cuco_requirements req;
	struct ncclDevComm *dc = NULL;
	int links[64];

	(void)o;
	hx_stage("probe");
	lsa_ok = r->nranks < 2
	             ? -1
	             : hx_dev_lsa_selftest(comm, r->rank, r->nranks, lsa_err, sizeof(lsa_err)) == 0;
	memset(&req, 0, sizeof(req));
	req.devcomm = 1;
	req.gin_context_count = 1;
	if (hx_dev_devcomm_create(comm, &req, &dc, gin_err, sizeof(gin_err)) == 0) {
		gin_contexts = hx_dev_devcomm_gin_contexts(dc);
		hx_dev_devcomm_destroy(comm, dc);
	}
	if (r->rank != 0) {
		ncclCommDestroy(comm);
		return lsa_ok == 0 ? CUCO_ERR_UNSUPPORTED : 0;
	}
	cudaGetDeviceCount(&ndev);
	if (ndev > 64)
		ndev = 64;
	nvlink_counts(ndev, links);
	ncclGetVersion(&nccl);
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	cuco_strbuf_addf(&sb,
	                 "{\"harness\":1,\"status\":\"ok\",\"nccl_version\":%d,\"cuda_runtime\":%d,"
	                 "\"cuda_driver\":%d,\"ranks\":%d,\"gpus\":[",
	                 nccl, rt, drv, r->nranks);
	for (int d = 0; d < ndev; d++) {
		struct cudaDeviceProp p;
		cudaGetDeviceProperties(&p, d);
		cuco_strbuf_addf(&sb,
		                 "%s{\"index\":%d,\"name\":\"%s\",\"sm_count\":%d,\"cc\":\"%d.%d\","
		                 "\"memory_bytes\":%zu,\"l2_bytes\":%d,\"nvlinks\":%d,\"peer\":[",
		                 d ? "," : "", d, p.name, p.multiProcessorCount, p.major, p.minor,
		                 p.totalGlobalMem, p.l2CacheSize, links[d]);
		for (int e = 0; e < ndev; e++) {
			int can = e == d;
			if (e != d)
				cudaDeviceCanAccessPeer(&can, d, e);
			cuco_strbuf_addf(&sb, "%s%d", e ? "," : "", can);
		}
		cuco_strbuf_adds(&sb, "]}");
	}
	cuco_strbuf_addf(&sb, "],\"lsa\":%s,\"lsa_error\":\"%s\",\"gin_contexts\":%d}\n",
	                 lsa_ok < 0 ? "null"
	                 : lsa_ok   ? "true"
	                            : "false",
	                 lsa_err, gin_contexts);
	if (write(r->out_fd, sb.buf, sb.len) < 0)
		perror("cuco-harness: writing probe");
	cuco_strbuf_release(&sb);
	ncclCommDestroy(comm);
	return 0;
}
