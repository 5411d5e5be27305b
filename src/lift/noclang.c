/* noclang.c - the lift's front end when cuco was built without clang-c/Index.h. */
#include "lift/scan.h"

static int missing(struct cuco_err *err)
{
	return cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
	                    "this cuco was built without libclang's header: install "
	                    "libclang-16-dev and rebuild to use `cuco init --from`");
}

int cuco_lift_scan(const struct cuco_lift_scan_opts *opts, struct cuco_lift_facts *facts,
                   struct cuco_err *err)
{
	(void)opts;
	(void)facts;
	return missing(err);
}

int cuco_lift_clang_load(struct cuco_err *err)
{
	return missing(err);
}

const char *cuco_lift_clang_version(void)
{
	return NULL;
}
