/*
 * fuzz.h - what the fuzz targets share: the input as a NUL-terminated string
 * (parsers read C strings; an embedded NUL ends the text as it would for
 * them), and as a file for the parsers that load a path.
 *
 * Built only with -DCUCO_FUZZ=ON and clang (libFuzzer, ASan, UBSan); run by
 * scripts/fuzz.sh, seeded from tests/fixtures, with every crash ever found
 * kept under tests/fuzz/regressions/<target>/ and replayed on each run.
 */
#ifndef CUCO_FUZZ_H
#define CUCO_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* data as a malloc'd C string (NULL when out of memory). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/* data written to one private file per process; its path, or NULL. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cuco-fuzz-%ld%s",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(), suffix);
	f = fopen(path, "wb");
	if (!f)
		return NULL;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
