/*
 * test_gemm_modules.cu - the device library's GEMM launched from two shared
 * objects in one process, as the harness runs programs: each object carries
 * its own copy of the kernel, and each copy must be made ready (its shared
 * memory attribute set) before its first launch, however the library caches
 * that. Loads two copies of cuco_gemm_module.so (beside this executable, or
 * the path in argv[1]) with RTLD_LOCAL, then runs a GEMM from each, twice,
 * checking C against a plain fp32 kernel.
 * Prints one line per launch and "N passed, N failed"; exits nonzero on any
 * failure.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*gemm_fn)(int M, int N, int K, float *err, char *msg, size_t msg_size);

/* Copies file `from` to `to`; 0 on success. */
static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[1 << 16];
	size_t n;
	int rc = 0;

	if (!in || !out)
		rc = -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

int main(int argc, char **argv)
{
	char module[PATH_MAX], dir[] = "/tmp/cuco-gemm-modules-XXXXXX", copy[2][PATH_MAX + 32];
	void *dl[2] = {NULL, NULL};
	gemm_fn fn[2] = {NULL, NULL};
	int passed = 0, failed = 0;

	if (argc > 1) {
		snprintf(module, sizeof(module), "%s", argv[1]);
	} else {
		ssize_t n = readlink("/proc/self/exe", module, sizeof(module) - 32);
		if (n <= 0) {
			fprintf(stderr,
			        "test_gemm_modules: cannot find this executable's folder\n");
			return 2;
		}
		module[n] = '\0';
		snprintf(strrchr(module, '/') + 1, 32, "cuco_gemm_module.so");
	}
	if (!mkdtemp(dir)) {
		perror("test_gemm_modules: mkdtemp");
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(copy[i], sizeof(copy[i]), "%s/module%d.so", dir, i);
		if (copy_file(module, copy[i])) {
			fprintf(stderr, "test_gemm_modules: cannot copy %s to %s\n", module,
			        copy[i]);
			return 2;
		}
		if (!(dl[i] = dlopen(copy[i], RTLD_NOW | RTLD_LOCAL)) ||
		    !(fn[i] = (gemm_fn)dlsym(dl[i], "cuco_module_gemm"))) {
			fprintf(stderr, "test_gemm_modules: %s: %s\n", copy[i], dlerror());
			return 2;
		}
	}
	if (fn[0] == fn[1]) {
		fprintf(stderr, "test_gemm_modules: both copies resolved to one function\n");
		return 2;
	}
	/* module 0, module 1, module 0, module 1: a cache that one copy fills
	 * must not speak for the other */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 2; i++) {
			char msg[256] = "";
			float err = -1;
			int rc = fn[i](256, 256, 128, &err, msg, sizeof(msg));
			int ok = rc == 0 && err >= 0 && err <= 0.25f;
			printf("round %d module %d: %s (rc %d, max |C - ref| %g)%s%s\n", round, i,
			       ok ? "ok" : "FAIL", rc, (double)err, msg[0] ? ": " : "", msg);
			ok ? passed++ : failed++;
		}
	for (int i = 0; i < 2; i++)
		unlink(copy[i]);
	rmdir(dir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
