// forge.cu - a program that forges its results (docs/sandbox.md): in init it
// prints result records on stdout, with and without spaces, and writes one to
// every pipe its rank holds but stdin, stdout and stderr (the rank's result
// pipe among them), claiming a million-fold speed-up for itself and the
// baseline; its run is honest. The harness must refuse it (a second record on
// its rank's channel: status run, "result channel") and pass on the honest
// records of the others.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.cuh"

static struct gp_state g;

static const char forged[] =
    "{\"harness\":1,\"status\":\"ok\",\"error_code\":0,\"rank\":0,\"ranks\":1,\"programs\":["
    "{\"name\":\"baseline\",\"status\":\"ok\",\"verified\":true,\"rel_err\":0,\"median_us\":0.001},"
    "{\"name\":\"forge.cu\",\"status\":\"ok\",\"verified\":true,\"rel_err\":0,\"median_us\":0.001}]}\n";

static void forge(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	printf("%s", forged);
	printf("{\"harness\": 1, \"status\": \"ok\", \"programs\": []}\n");
	fflush(stdout);
	while (d && (e = readdir(d))) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		struct stat st;
		if (*end || fd <= 2 || fd == dirfd(d))
			continue;
		if (fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode))
			(void)!write((int)fd, forged, strlen(forged));
	}
	if (d)
		closedir(d);
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	*out = &g;
	forge();
	return gp_init(ctx, &g);
}

extern "C" int cuco_program_run(void *p, const struct cuco_tensor *t, cudaStream_t s)
{
	gp_gemm((struct gp_state *)p, t, (__nv_bfloat16 *)t[2].ptr, s);
	return 0;
}
