/*
 * result.c - what every harness file shares: the clock, and the result line's
 * state (the run's workload, shape and ranks, the program being run, the
 * results finished so far) with the JSON failure line made from it.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "util/error.h"

double hx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hx_sleep_us(double us)
{
	struct timespec ts;

	if (us <= 0)
		return;
	ts.tv_sec = (time_t)(us / 1e6);
	ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Results of finished programs, kept so a failure line can carry them. */
static pthread_mutex_t results_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cuco_strbuf results = CUCO_STRBUF_INIT;
static const char *current_program = "";
static const char *g_workload = "", *g_shape = "";
static int g_nranks;

void hx_json_str(struct cuco_strbuf *sb, const char *s)
{
	cuco_strbuf_addch(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cuco_strbuf_addf(sb, "\\%c", c);
		else if (c == '\n')
			cuco_strbuf_adds(sb, "\\n");
		else if (c == '\t')
			cuco_strbuf_adds(sb, "\\t");
		else if (c < 0x20)
			cuco_strbuf_addf(sb, "\\u%04x", c);
		else
			cuco_strbuf_addch(sb, c);
	}
	cuco_strbuf_addch(sb, '"');
}

void hx_json_num(struct cuco_strbuf *sb, double v)
{
	if (isfinite(v))
		cuco_strbuf_addf(sb, "%.6g", v);
	else
		cuco_strbuf_adds(sb, "null");
}

void hx_emit_failure(int fd, int rank, int code, const char *stage, const char *msg)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	cuco_strbuf_addf(&sb, "{\"harness\":1,\"status\":\"%s\",\"error_code\":%d,\"rank\":%d,",
	                 cuco_result_token(code), code, rank);
	cuco_strbuf_adds(&sb, "\"stage\":");
	hx_json_str(&sb, stage);
	cuco_strbuf_adds(&sb, ",\"program\":");
	hx_json_str(&sb, current_program);
	cuco_strbuf_adds(&sb, ",\"error\":");
	hx_json_str(&sb, msg);
	cuco_strbuf_adds(&sb, ",\"workload\":");
	hx_json_str(&sb, g_workload);
	cuco_strbuf_adds(&sb, ",\"shape\":");
	hx_json_str(&sb, g_shape);
	cuco_strbuf_addf(&sb, ",\"ranks\":%d,\"programs\":[", g_nranks);
	pthread_mutex_lock(&results_lock);
	cuco_strbuf_add(&sb, results.buf, results.len);
	pthread_mutex_unlock(&results_lock);
	cuco_strbuf_adds(&sb, "]}\n");
	if (write(fd, sb.buf, sb.len) < 0)
		perror("cuco-harness: writing result");
	cuco_strbuf_release(&sb);
}

void hx_set_nranks(int n)
{
	g_nranks = n;
}

void hx_set_program(const char *name)
{
	static char copy[128];

	snprintf(copy, sizeof(copy), "%s", name ? name : "");
	current_program = copy;
}

void hx_result_add(const char *entry)
{
	pthread_mutex_lock(&results_lock);
	if (results.len)
		cuco_strbuf_addch(&results, ',');
	cuco_strbuf_adds(&results, entry);
	pthread_mutex_unlock(&results_lock);
}

void hx_result_run(const char *workload, const char *shape, int nranks)
{
	g_workload = workload;
	g_shape = shape;
	g_nranks = nranks;
}

void hx_result_program(const char *name)
{
	current_program = name;
}

void hx_result_copy(struct cuco_strbuf *sb)
{
	pthread_mutex_lock(&results_lock);
	cuco_strbuf_add(sb, results.buf, results.len);
	pthread_mutex_unlock(&results_lock);
}
