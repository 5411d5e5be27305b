/*
 * fastpath_fixture.h - what the fast path's unit tests share: the templates of
 * this tree, fixtures read from tests/fixtures/fastpath, code with comments and
 * literals blanked, counting, and one nvcc run over the seeds a test wrote.
 * Include after cmocka.h.
 */
#ifndef CUCO_TEST_FASTPATH_FIXTURE_H
#define CUCO_TEST_FASTPATH_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastpath/fastpath.h"
#include "util/strbuf.h"

#define FIXTURES CUCO_SOURCE_DIR "/tests/fixtures/fastpath/"

/* Default options with this tree's templates. */
static inline void opts_default(struct cuco_fastpath_opts *opts)
{
	cuco_fastpath_opts_init(opts);
	opts->share_dir = CUCO_SOURCE_DIR "/share/fastpath";
}

/* Read fixture `name` into src. */
static inline void read_fixture(const char *name, struct cuco_strbuf *src)
{
	struct cuco_strbuf path = CUCO_STRBUF_INIT;
	cuco_strbuf_addf(&path, FIXTURES "%s", name);
	assert_int_equal(cuco_strbuf_read_file(src, path.buf), 0);
	cuco_strbuf_release(&path);
}

/* Copy of s with comments, string and character literals blanked (kept: newlines). */
static inline char *strip_comments_and_literals(const char *s)
{
	size_t n = strlen(s);
	char *d = malloc(n + 1);
	assert_non_null(d);
	memcpy(d, s, n + 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				d[i++] = ' ';
		} else if (s[i] == '/' && s[i + 1] == '*') {
			while (i < n && !(s[i] == '*' && s[i + 1] == '/'))
				d[i] = s[i] == '\n' ? '\n' : ' ', i++;
			d[i] = ' ';
			d[i + 1] = ' ';
			i++;
		} else if (s[i] == '"' || s[i] == '\'') {
			char q = s[i];
			d[i++] = ' ';
			while (i < n && s[i] != q) {
				if (s[i] == '\\')
					d[i++] = ' ';
				d[i++] = ' ';
			}
			d[i] = ' ';
		}
	}
	return d;
}

static inline int count_substr(const char *hay, const char *needle)
{
	int c = 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		c++;
	return c;
}

/* Write text to dir/name. */
static inline void write_seed(const char *dir, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/*
 * Compile dir/seeds[0..n) in one nvcc run (nvcc is slow here) for sm_90a with every warning
 * an error, against this tree's headers; each must give its object. Skips without nvcc, and
 * where CUCO_TEST_NO_NVCC is set: scripts/test.sh's sanitizer pass, whose seeds (the same text)
 * the first pass already compiled; nvcc is another process, so ASan has nothing to check there.
 */
static inline void nvcc_seeds(const char *dir, const char *const *seeds, size_t n)
{
	struct cuco_strbuf cmd = CUCO_STRBUF_INIT;
	const char *nvcc = "/usr/local/cuda/bin/nvcc";
	const char *no_nvcc = getenv("CUCO_TEST_NO_NVCC");
	if (no_nvcc && *no_nvcc)
		skip();
	if (system("command -v nvcc >/dev/null 2>&1") == 0)
		nvcc = "nvcc";
	else if (access(nvcc, X_OK) != 0)
		skip();
	cuco_strbuf_addf(&cmd,
	                 "cd %s && %s -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Xcompiler "
	                 "-fPIC -Werror all-warnings -I%s/include -I%s/device/include -c",
	                 dir, nvcc, CUCO_SOURCE_DIR, CUCO_SOURCE_DIR);
	for (size_t k = 0; k < n; k++) {
		char path[512];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, seeds[k]);
		if (stat(path, &st) != 0)
			fail_msg("%s was not written (its transform test failed)", seeds[k]);
		cuco_strbuf_addf(&cmd, " %s", seeds[k]);
	}
	cuco_strbuf_adds(&cmd, " 2>&1");
	int status = system(cmd.buf);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("nvcc rejected a seed: %s", cmd.buf);
	for (size_t k = 0; k < n; k++) {
		char path[512];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%.*s.o", dir, (int)(strlen(seeds[k]) - 3),
		         seeds[k]);
		assert_int_equal(stat(path, &st), 0);
	}
	cuco_strbuf_release(&cmd);
}

/* A fresh directory under $TMPDIR for a test binary's seeds (kept with CUCO_KEEP_TMP). */
static inline int seed_dir_make(char *dir, size_t size)
{
	snprintf(dir, size, "%s/fastpath-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static inline int seed_dir_remove(const char *dir)
{
	if (getenv("CUCO_KEEP_TMP") != NULL) {
		fprintf(stderr, "# seeds kept in %s\n", dir);
		return 0;
	}
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
