/*
 * sandbox.c - what the cascade does around a candidate's compile (code a
 * model wrote): its source checked against util/codescan.h's rules, a
 * private directory to compile in, its object checked before it ever runs.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cascade/sandbox.h"
#include "util/codescan.h"
#include "util/jail.h"
#include "util/jail_probe.h"
#include "util/xalloc.h"
#include "util/paths.h"
#include "util/proc.h"

int cuco_sandbox_ready(int farm, char *why, size_t len)
{
	const char *off = getenv("CUCO_SANDBOX_RUN_JAIL");

	if (farm)
		snprintf(why, len, "a Slurm farm's steps run on its nodes, outside the view");
	else if (off && !strcmp(off, "0"))
		snprintf(why, len, "CUCO_SANDBOX_RUN_JAIL=0 turns the view off");
	else if (!cuco_jail_available())
		snprintf(why, len, "this node cannot make the view: %s", cuco_jail_why());
	else
		return 1;
	return 0;
}

int cuco_sandbox_is_header(const char *nm)
{
	size_t len = strlen(nm);

	return (len > 2 && !strcmp(nm + len - 2, ".h")) ||
	       (len > 4 && !strcmp(nm + len - 4, ".cuh"));
}

static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, len, ".");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

int cuco_sandbox_refused(struct cuco_compile_job *job)
{
	struct cuco_strbuf why = CUCO_STRBUF_INIT;
	int n = cuco_codescan_includes(job->source, job->path, &why);

	n += cuco_codescan_multicast(job->source, &why);
	n += cuco_codescan_timing(job->source, &why);
	if (n) {
		job->code = CUCO_ERR_COMPILE;
		cuco_strbuf_addf(&job->log, "cuco: refused before nvcc (%s):\n%s", job->path,
		                 why.buf);
	}
	cuco_strbuf_release(&why);
	return n > 0;
}

int cuco_sandbox_make(const char *cache_dir, struct cuco_compile_job *job, char *dir, size_t len)
{
	struct dirent **ents = NULL;
	char src_dir[PATH_MAX];
	int n, rc = 0;

	char work[PATH_MAX + 8], stage[PATH_MAX + 8];

	if (cuco_proc_private_dir(cache_dir, "sandbox", dir, len)) {
		cuco_strbuf_addf(&job->log, "cannot create a directory in %s: %s\n", cache_dir,
		                 strerror(errno));
		return -1;
	}
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(stage, sizeof(stage), "%s/root", dir);
	if (mkdir(work, 0700) || mkdir(stage, 0700)) {
		cuco_strbuf_addf(&job->log, "cannot create a directory in %s: %s\n", dir,
		                 strerror(errno));
		cuco_proc_remove_tree(dir);
		return -1;
	}
	dir_of(job->path, src_dir, sizeof(src_dir));
	n = scandir(src_dir, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		struct cuco_strbuf sb = CUCO_STRBUF_INIT;
		char from[PATH_MAX], to[PATH_MAX];
		if (!rc && cuco_sandbox_is_header(ents[i]->d_name)) {
			snprintf(from, sizeof(from), "%s/%s", src_dir, ents[i]->d_name);
			snprintf(to, sizeof(to), "%s/%s", work, ents[i]->d_name);
			if (cuco_strbuf_read_file(&sb, from) == 0 &&
			    cuco_write_file(to, sb.buf, sb.len)) {
				cuco_strbuf_addf(&job->log, "cannot copy %s into %s: %s\n", from,
				                 work, strerror(errno));
				rc = -1;
			}
		}
		cuco_strbuf_release(&sb);
		free(ents[i]);
	}
	free(ents);
	if (rc)
		cuco_proc_remove_tree(dir);
	return rc;
}

const char *cuco_sandbox_toolkit(char *out, size_t len)
{
	char real[PATH_MAX], *slash;

	if (!realpath(cuco_nvcc_path(), real) || !(slash = strrchr(real, '/')) || slash == real)
		return NULL;
	*slash = '\0';
	/* <toolkit>/bin/nvcc: the toolkit; nvcc elsewhere: its folder alone */
	slash = strrchr(real, '/');
	if (slash && slash != real && !strcmp(slash, "/bin"))
		*slash = '\0';
	snprintf(out, len, "%s", real);
	return out;
}

struct cuco_jail *cuco_sandbox_view(const char *dir, const char *home)
{
	static const char *const etc[] = {"/etc/ld.so.cache", "/etc/ld.so.conf",
	                                  "/etc/ld.so.conf.d", "/etc/alternatives"};
	struct cuco_jail *j = cuco_xcalloc(1, sizeof(*j));
	char p[PATH_MAX + 32];
	const char *nv;

	snprintf(p, sizeof(p), "%s/root", dir);
	cuco_jail_init(j, p);
	cuco_jail_add(j, "/usr", 0); /* the host compiler, its headers and libraries */
	cuco_jail_add(j, "/bin", 0);
	cuco_jail_add(j, "/sbin", 0);
	cuco_jail_add(j, "/lib", 0);
	cuco_jail_add(j, "/lib32", 0);
	cuco_jail_add(j, "/lib64", 0);
	cuco_jail_add(j, "/libx32", 0);
	for (size_t i = 0; i < sizeof(etc) / sizeof(etc[0]); i++)
		cuco_jail_add(j, etc[i], 0);
	if (cuco_sandbox_toolkit(p, sizeof(p)))
		cuco_jail_add(j, p, 0);
	if ((nv = cuco_nccl_home()))
		cuco_jail_add(j, nv, 0);
	if ((nv = cuco_nvshmem_home()))
		cuco_jail_add(j, nv, 0);
	snprintf(p, sizeof(p), "%s/include", home);
	cuco_jail_add(j, p, 0);
	snprintf(p, sizeof(p), "%s/device/include", home);
	cuco_jail_add(j, p, 0);
	snprintf(p, sizeof(p), "%s/work", dir);
	cuco_jail_add(j, p, 1);
	if (cuco_jail_finish(j)) {
		free(j);
		return NULL;
	}
	return j;
}

/* 1 when the len bytes at p hold word (binary data: no strstr). */
static int holds(const char *p, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= len; i++)
		if (p[i] == word[0] && !memcmp(p + i, word, w))
			return 1;
	return 0;
}

const char *cuco_sandbox_cuobjdump(char *out, size_t len)
{
	const char *nvcc = cuco_nvcc_path();
	const char *slash = strrchr(nvcc, '/');

	snprintf(out, len, "%.*s/cuobjdump", slash ? (int)(slash - nvcc) : 0, nvcc);
	if (slash && access(out, X_OK) == 0)
		return out;
	return cuco_proc_find_program("cuobjdump", out, len) == 0 ? out : NULL;
}

/*
 * The lines of the preprocessed text ii (nvcc's kept .ii: its line markers
 * '# N "FILE" ...' say where each line came from) that came from the file
 * named path, as the preprocessor expanded them, into out.
 */
static void expanded_lines(const char *ii, const char *path, struct cuco_strbuf *out)
{
	int ours = 0;

	for (const char *l = ii; *l;) {
		size_t n = strcspn(l, "\n");

		if (l[0] == '#' && l[1] == ' ' && l[2] >= '0' && l[2] <= '9') {
			const char *q = memchr(l, '"', n);
			struct cuco_strbuf name = CUCO_STRBUF_INIT;

			for (q = q ? q + 1 : l + n; q < l + n && *q != '"'; q++) {
				if (*q == '\\' && q + 1 < l + n)
					q++;
				cuco_strbuf_addch(&name, *q);
			}
			ours = !strcmp(name.buf, path);
			cuco_strbuf_release(&name);
		} else if (ours) {
			cuco_strbuf_add(out, l, n);
			cuco_strbuf_addch(out, '\n');
		}
		l += n + (l[n] == '\n');
	}
}

int cuco_sandbox_expanded_check(const char *dir, const char *path, struct cuco_strbuf *log)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), found = 0;

	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t len = strlen(nm);
		struct cuco_strbuf ii = CUCO_STRBUF_INIT, mine = CUCO_STRBUF_INIT,
		                   why = CUCO_STRBUF_INIT;
		char p[PATH_MAX];

		if (len > 3 && !strcmp(nm + len - 3, ".ii")) {
			snprintf(p, sizeof(p), "%s/%s", dir, nm);
			if (cuco_strbuf_read_file(&ii, p) == 0) {
				expanded_lines(ii.buf, path, &mine);
				if (cuco_codescan_multicast(mine.buf, &why) +
				    cuco_codescan_timing(mine.buf, &why)) {
					cuco_strbuf_addf(
					    log,
					    "cuco: refused: %s, once its macros are "
					    "expanded (%s; token pasting, a header's "
					    "macro), breaks a rule (line numbers count "
					    "its expanded lines):\n%s",
					    path, nm, why.buf);
					found++;
				}
			}
		}
		cuco_strbuf_release(&ii);
		cuco_strbuf_release(&mine);
		cuco_strbuf_release(&why);
		free(ents[i]);
	}
	free(ents);
	return found;
}

int cuco_sandbox_object_check(const char *dir, const char *so, struct cuco_strbuf *log)
{
	struct dirent **ents = NULL;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char tool[PATH_MAX];
	int n = scandir(dir, &ents, NULL, alphasort), found = 0;

	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t len = strlen(nm);
		char p[PATH_MAX];
		if (len > 4 && !strcmp(nm + len - 4, ".ptx")) {
			snprintf(p, sizeof(p), "%s/%s", dir, nm);
			cuco_strbuf_reset(&sb);
			if (cuco_strbuf_read_file(&sb, p) == 0 &&
			    holds(sb.buf, sb.len, "multimem.")) {
				cuco_strbuf_addf(log,
				                 "cuco: refused: the PTX (%s) holds a multimem "
				                 "instruction (NVLink multicast is forbidden)\n",
				                 nm);
				found++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	cuco_strbuf_reset(&sb);
	if (cuco_strbuf_read_file(&sb, so) == 0 && holds(sb.buf, sb.len, "cuMulticast")) {
		cuco_strbuf_adds(log, "cuco: refused: the shared object names cuMulticast* (NVLink "
		                      "multicast is forbidden)\n");
		found++;
	}
	cuco_strbuf_reset(&sb);
	if (cuco_sandbox_cuobjdump(tool, sizeof(tool))) { /* else the PTX check stands alone */
		char *argv[] = {tool, "-sass", (char *)so, NULL};
		struct cuco_proc_status st;
		if (cuco_proc_run(argv, NULL, &sb, NULL, 120, &st) == 0 &&
		    holds(sb.buf, sb.len, "MULTIMEM")) {
			cuco_strbuf_adds(log,
			                 "cuco: refused: the SASS holds a multimem instruction "
			                 "(NVLink multicast is forbidden)\n");
			found++;
		}
	}
	cuco_strbuf_release(&sb);
	return found;
}
