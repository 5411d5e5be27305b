/* clang.c - finding libclang at run time and filling the table of its functions. */
#include "lift/clang.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lift/scan.h"

#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH ""
#endif

/* The newest first: Debian's libclang1-N and the llvm-N tree of apt.llvm.org. */
#define NEWEST 20
#define OLDEST 14

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct cuco_lift_clang table;
static int loaded;
static char version[256];

static int fill(void *h, const char *path, struct cuco_err *err)
{
	struct cuco_lift_clang t;
	CXString v;
	const char *s, *digit;

	memset(&t, 0, sizeof(t));
#define CUCO_LIFT_CLANG_SYM(name)                                                            \
	t.name = (__typeof__(t.name))dlsym(h, #name);                                        \
	if (!t.name)                                                                         \
		return cuco_err_set(err, CUCO_ERR_UNSUPPORTED,                               \
		                    "%s has no %s (too old?): install libclang 14 or newer " \
		                    "(apt-get install libclang1-16)",                        \
		                    path, #name);
	CUCO_LIFT_CLANG_FUNCTIONS(CUCO_LIFT_CLANG_SYM)
#undef CUCO_LIFT_CLANG_SYM
	v = t.clang_getClangVersion();
	s = t.clang_getCString(v);
	snprintf(version, sizeof(version), "%s", s ? s : "");
	t.clang_disposeString(v);
	/* "Debian clang version 16.0.6 (15~deb12u1)": the first number after "version " */
	digit = strstr(version, "version ");
	if (digit) {
		char *end;
		long m = strtol(digit + 8, &end, 10);

		if (end != digit + 8 && m > 0 && m < 1000)
			t.major = (int)m;
	}
	table = t;
	return CUCO_OK;
}

static void *try_open(const char *path)
{
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

int cuco_lift_clang_load(struct cuco_err *err)
{
	const char *env = getenv("CUCO_LIBCLANG");
	char path[PATH_MAX];
	void *h = NULL;
	int rc = CUCO_OK, v;

	pthread_mutex_lock(&mu);
	if (loaded)
		goto out;
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
		h = try_open(path);
		if (!h) {
			rc = cuco_err_set(err, CUCO_ERR_UNSUPPORTED,
			                  "CUCO_LIBCLANG=%s cannot be loaded (%s): point it at a "
			                  "libclang.so, or unset it and install libclang "
			                  "(apt-get install libclang1-16)",
			                  env, dlerror());
			goto out;
		}
	}
	for (v = NEWEST; !h && v >= OLDEST; v--) {
		const char *forms[] = {"/usr/lib/" MULTIARCH "/libclang-%d.so.1",
		                       "/usr/lib/llvm-%d/lib/libclang-%d.so.1",
		                       "/usr/lib/llvm-%d/lib/libclang.so.1"};
		size_t i;

		for (i = 0; !h && i < sizeof(forms) / sizeof(forms[0]); i++) {
			snprintf(path, sizeof(path), forms[i], v, v);
			h = try_open(path);
		}
	}
	if (!h) {
		snprintf(path, sizeof(path), "%s", "/usr/lib/" MULTIARCH "/libclang.so.1");
		h = try_open(path);
	}
	if (!h) {
		snprintf(path, sizeof(path), "%s", "libclang.so.1");
		h = try_open(path);
	}
	if (!h) {
		rc = cuco_err_set(
		    err, CUCO_ERR_UNSUPPORTED,
		    "libclang not found (libclang-%d..%d.so.1, libclang.so.1): `cuco init "
		    "--from` needs it; install it (apt-get install libclang1-16) or set "
		    "CUCO_LIBCLANG to its path",
		    NEWEST, OLDEST);
		goto out;
	}
	rc = fill(h, path, err);
	if (rc != CUCO_OK) {
		dlclose(h);
		goto out;
	}
	/* the library stays loaded for the process: the table points into it */
	loaded = 1;
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

const struct cuco_lift_clang *cuco_lift_clang(void)
{
	const struct cuco_lift_clang *t;

	pthread_mutex_lock(&mu);
	t = loaded ? &table : NULL;
	pthread_mutex_unlock(&mu);
	return t;
}

const char *cuco_lift_clang_version(void)
{
	return cuco_lift_clang() ? version : NULL;
}
