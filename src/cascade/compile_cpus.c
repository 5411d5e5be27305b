/*
 * compile_cpus.c - where background compiles run (cascade.h): the CPUs the
 * harness's ranks do not need, hardware threads kept together, at the
 * lowest priority; and the memory one nvcc may take.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cascade/cascade.h"
#include "util/proc.h"
#include "util/strbuf.h"

int cuco_compile_background_cpus(const struct cuco_cpus *allowed, int keep,
                                 void (*siblings)(int cpu, struct cuco_cpus *out),
                                 struct cuco_cpus *out)
{
	struct cuco_cpus kept;
	int skipped = 0, left = 0;

	memset(out, 0, sizeof(*out));
	memset(&kept, 0, sizeof(kept));
	if (keep <= 0 || cuco_cpus_count(allowed) < 2 * keep)
		return 0;
	for (int c = 0; c < CUCO_CPUS_MAX && skipped < keep; c++)
		if (cuco_cpus_has(allowed, c)) {
			cuco_cpus_add(&kept, c);
			if (siblings)
				siblings(c, &kept);
			skipped++;
		}
	for (int c = 0; c < CUCO_CPUS_MAX; c++)
		if (cuco_cpus_has(allowed, c) && !cuco_cpus_has(&kept, c)) {
			cuco_cpus_add(out, c);
			left++;
		}
	return left;
}

/* cpu's hardware threads from sysfs ("0,64" or "0-1"); nothing when unreadable. */
static void sysfs_siblings(int cpu, struct cuco_cpus *out)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	char path[128];
	const char *p;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
	         cpu);
	if (cuco_strbuf_read_file(&sb, path) == 0) {
		for (p = sb.buf; *p;) {
			char *end;
			long lo, hi;
			errno = 0;
			lo = strtol(p, &end, 10);
			if (end == p || errno)
				break;
			hi = lo;
			if (*end == '-') {
				p = end + 1;
				hi = strtol(p, &end, 10);
				if (end == p || errno)
					break;
			}
			for (long c = lo; c <= hi && c < CUCO_CPUS_MAX; c++)
				cuco_cpus_add(out, (int)c);
			p = *end == ',' ? end + 1 : end;
			if (*end != ',')
				break;
		}
	}
	cuco_strbuf_release(&sb);
}

void cuco_compile_background_sched(int ranks, struct cuco_proc_sched *s)
{
	struct cuco_cpus allowed;

	memset(s, 0, sizeof(*s));
	cuco_cpus_allowed(&allowed);
	s->pin = cuco_compile_background_cpus(&allowed, (ranks > 0 ? ranks : 1) + 1, sysfs_siblings,
	                                      &s->cpus) > 0;
	s->nice = 19;
	s->idle = 1;
}

unsigned long long cuco_compile_mem_bytes(void)
{
	const char *v = getenv("CUCO_COMPILE_MEMORY_GB");
	double gb = CUCO_COMPILE_MEMORY_GB;

	if (v && *v) {
		char *end;
		double x;
		errno = 0;
		x = strtod(v, &end);
		if (!errno && !*end && x > 0 && x < 1 << 20)
			gb = x;
	}
	return (unsigned long long)(gb * (double)(1ull << 30));
}
