// common.cuh - shared body of the harness's failure-mode programs: each one
// declares a devcomm and misbehaves in run() in its own way (see the files).
#ifndef CUCO_TEST_PROGRAMS_COMMON_CUH
#define CUCO_TEST_PROGRAMS_COMMON_CUH
#include <cuco/program.h>
#include <cuco_dev/lsa.cuh>

struct tp_state {
	struct cuco_ctx *ctx;
};

extern "C" int cuco_program_requirements(const struct cuco_ctx *ctx, struct cuco_requirements *req)
{
	(void)ctx;
	req->devcomm = 1;
	req->lsa_barrier_count = 1;
	return 0;
}

extern "C" int cuco_program_init(struct cuco_ctx *ctx, void **out)
{
	static struct tp_state st;
	st.ctx = ctx;
	*out = &st;
	return 0;
}

extern "C" void cuco_program_fini(void *p)
{
	(void)p;
}
#endif
