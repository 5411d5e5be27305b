/*
 * nvshmem.c - the NVSHMEM installation the nvshmem backend builds and runs
 * against: where it is, the version of its headers (what programs compile
 * against), the version of its host library (what they run against), and
 * the bootstrap and transport plugins it can load. `cuco doctor` prints it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "util/paths.h"

/* "3.4.5" from include/non_abi/nvshmem_version.h; "" when unreadable. */
static void header_version(const char *home, char *out, size_t len)
{
	char p[PATH_MAX];
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	static const char *const parts[] = {"MAJOR", "MINOR", "PATCH"};
	long v[3] = {-1, -1, -1};

	out[0] = 0;
	snprintf(p, sizeof(p), "%s/include/non_abi/nvshmem_version.h", home);
	if (cuco_strbuf_read_file(&sb, p))
		goto out;
	for (int i = 0; i < 3; i++) {
		char key[64];
		const char *at;
		char *end;

		snprintf(key, sizeof(key), "NVSHMEM_VENDOR_%s_VERSION ", parts[i]);
		at = strstr(sb.buf, key);
		if (!at)
			goto out;
		v[i] = strtol(at + strlen(key), &end, 10);
		if (end == at + strlen(key))
			goto out;
	}
	snprintf(out, len, "%ld.%ld.%ld", v[0], v[1], v[2]);
out:
	cuco_strbuf_release(&sb);
}

/* The host library's own version, asked of it (dlopen); "" when it does not load. */
static void library_version(const char *home, char *out, size_t len, char *why, size_t wlen)
{
	char p[PATH_MAX];
	void *dl;
	void (*get)(int *, int *, int *) = NULL;
	int ma = 0, mi = 0, pa = 0;

	out[0] = 0;
	snprintf(p, sizeof(p), "%s/lib/libnvshmem_host.so.3", home);
	dl = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		snprintf(why, wlen, "%s", dlerror());
		return;
	}
	*(void **)&get = dlsym(dl, "nvshmemx_vendor_get_version_info");
	if (get) {
		get(&ma, &mi, &pa);
		snprintf(out, len, "%d.%d.%d", ma, mi, pa);
	} else {
		snprintf(why, wlen, "%s has no nvshmemx_vendor_get_version_info", p);
	}
	dlclose(dl);
}

/* Names in lib/ that start with prefix, without it and without ".so.3", space-separated. */
static void plugins(const char *home, const char *prefix, char *out, size_t len)
{
	char dir[PATH_MAX];
	struct dirent **ents = NULL;
	int n;
	size_t used = 0, plen = strlen(prefix);

	out[0] = 0;
	snprintf(dir, sizeof(dir), "%s/lib", home);
	n = scandir(dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		const char *so = strstr(nm, ".so");

		if (!strncmp(nm, prefix, plen) && so && used < len) {
			int k = snprintf(out + used, len - used, "%s%.*s", used ? " " : "",
			                 (int)(so - nm - plen), nm + plen);
			if (k > 0)
				used += (size_t)k;
		}
		free(ents[i]);
	}
	free(ents);
}

int cuco_nvshmem_probe(struct cuco_nvshmem_info *info, int load)
{
	const char *home = cuco_nvshmem_home();

	memset(info, 0, sizeof(*info));
#ifdef CUCO_NVSHMEM_BUILD_VERSION
	snprintf(info->build_version, sizeof(info->build_version), "%s",
	         CUCO_NVSHMEM_BUILD_VERSION);
#endif
	if (!home)
		return -1;
	snprintf(info->home, sizeof(info->home), "%s", home);
	header_version(home, info->version, sizeof(info->version));
	if (load)
		library_version(home, info->lib_version, sizeof(info->lib_version), info->lib_error,
		                sizeof(info->lib_error));
	plugins(home, "nvshmem_bootstrap_", info->bootstraps, sizeof(info->bootstraps));
	plugins(home, "nvshmem_transport_", info->transports, sizeof(info->transports));
	return 0;
}
