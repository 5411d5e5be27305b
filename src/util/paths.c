/* paths.c - locating cuco's home, tools and state. */
#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char home_buf[PATH_MAX], harness_buf[PATH_MAX], nvcc_buf[PATH_MAX];

static int is_home(const char *dir)
{
	char p[PATH_MAX];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/include/cuco/program.h", dir);
	return stat(p, &sb) == 0;
}

static int exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

const char *cuco_home(struct cuco_err *err)
{
	const char *env = getenv("CUCO_HOME");
	char dir[PATH_MAX];

	if (home_buf[0])
		return home_buf;
	if (env && *env) {
		if (!is_home(env)) {
			cuco_err_set(
			    err, CUCO_ERR_NOT_FOUND,
			    "CUCO_HOME=%s does not hold cuco's files (include/cuco/program.h)",
			    env);
			return NULL;
		}
		snprintf(home_buf, sizeof(home_buf), "%s", env);
		return home_buf;
	}
	if (exe_dir(dir, sizeof(dir)) == 0) {
		char installed[PATH_MAX];

		/* installed: PREFIX/bin/cuco with its data in PREFIX/share/cuco */
		if (snprintf(installed, sizeof(installed), "%s/../share/cuco", dir) <
		        (int)sizeof(installed) &&
		    is_home(installed) && realpath(installed, home_buf))
			return home_buf;
		/* a build tree: the source tree is the build folder's parent, or above */
		for (int up = 0; up < 4; up++) {
			char *slash;
			if (is_home(dir)) {
				snprintf(home_buf, sizeof(home_buf), "%s", dir);
				return home_buf;
			}
			slash = strrchr(dir, '/');
			if (!slash || slash == dir)
				break;
			*slash = '\0';
		}
	}
	cuco_err_set(
	    err, CUCO_ERR_NOT_FOUND,
	    "cannot find cuco's home (workloads/, include/); set CUCO_HOME to the source tree");
	return NULL;
}

const char *cuco_harness_path(void)
{
	const char *env = getenv("CUCO_HARNESS");
	char dir[PATH_MAX];

	if (env && *env)
		return env;
	/* beside cuco (a build tree), else PREFIX/libexec/cuco/cuco-harness (installed) */
	if (!harness_buf[0] && exe_dir(dir, sizeof(dir) - 40) == 0) {
		size_t n = strlen(dir);
		memcpy(harness_buf, dir, n);
		memcpy(harness_buf + n, "/cuco-harness", sizeof("/cuco-harness"));
		if (access(harness_buf, X_OK) != 0) {
			char real[PATH_MAX];

			memcpy(harness_buf + n, "/../libexec/cuco/cuco-harness",
			       sizeof("/../libexec/cuco/cuco-harness"));
			if (access(harness_buf, X_OK) == 0 && realpath(harness_buf, real))
				snprintf(harness_buf, sizeof(harness_buf), "%s", real);
			else
				memcpy(harness_buf + n, "/cuco-harness", sizeof("/cuco-harness"));
		}
	}
	return harness_buf;
}

const char *cuco_nvcc_path(void)
{
	const char *env = getenv("CUCO_NVCC"), *path = getenv("PATH");

	if (env && *env)
		return env;
	if (nvcc_buf[0])
		return nvcc_buf;
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		if (n && n < sizeof(nvcc_buf) - 6) {
			memcpy(nvcc_buf, path, n);
			memcpy(nvcc_buf + n, "/nvcc", 6);
		}
		if (n && n < sizeof(nvcc_buf) - 6 && access(nvcc_buf, X_OK) == 0)
			return nvcc_buf;
		path = colon ? colon + 1 : NULL;
	}
	snprintf(nvcc_buf, sizeof(nvcc_buf), "/usr/local/cuda/bin/nvcc");
	return nvcc_buf;
}

const char *cuco_nccl_home(void)
{
	const char *v = getenv("CUCO_NCCL_HOME");

	if (v && *v)
		return v;
	v = getenv("NCCL_HOME");
	return v && *v ? v : NULL;
}

const char *cuco_nccl_ld_path(char *buf, size_t n)
{
	const char *nccl = cuco_nccl_home(), *old = getenv("LD_LIBRARY_PATH");

	if (!nccl)
		return NULL;
	/* no empty entry when there was none: the loader would read it as "." */
	snprintf(buf, n, "LD_LIBRARY_PATH=%s/lib%s%s", nccl, old && *old ? ":" : "",
	         old && *old ? old : "");
	return buf;
}

static int nvshmem_at(const char *home)
{
	char p[PATH_MAX];

	if (!home || !*home)
		return 0;
	snprintf(p, sizeof(p), "%s/lib/libnvshmem_device.a", home);
	return cuco_file_exists(p);
}

const char *cuco_nvshmem_home(void)
{
	static char cache[PATH_MAX];
	const char *v = getenv("CUCO_NVSHMEM_HOME"), *h = getenv("HOME");

	if (nvshmem_at(v))
		return v;
	v = getenv("NVSHMEM_HOME");
	if (nvshmem_at(v))
		return v;
#ifdef CUCO_NVSHMEM_BUILD_HOME
	if (nvshmem_at(CUCO_NVSHMEM_BUILD_HOME))
		return CUCO_NVSHMEM_BUILD_HOME;
#endif
	if (h && *h) {
		snprintf(cache, sizeof(cache), "%s/.cache/cuco-nvshmem/nvidia/nvshmem", h);
		if (nvshmem_at(cache))
			return cache;
	}
	return NULL;
}

const char *cuco_state_dir(void)
{
	const char *v = getenv("CUCO_STATE");

	return v && *v ? v : ".cuco";
}

int cuco_mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

int cuco_file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int cuco_write_file(const char *path, const char *data, size_t len)
{
	static atomic_uint seq; /* threads of one process never share a temporary name */
	char tmp[PATH_MAX];
	int fd, saved;
	size_t off = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", path, (int)getpid(),
	             atomic_fetch_add(&seq, 1)) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t k = write(fd, data + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			goto fail;
		off += (size_t)k;
	}
	if (close(fd))
		goto fail_closed;
	if (rename(tmp, path))
		goto fail_closed;
	return 0;
fail:
	saved = errno;
	close(fd);
	errno = saved;
fail_closed:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return -1;
}
