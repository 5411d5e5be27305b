/*
 * watchdog.c - a rank that stops making progress ends itself. Each stage
 * (init, load, verify, bench...) gets timeout_s; a deadlocked barrier or a
 * wrong signal count shows up as a stage that never ends. The watchdog thread
 * then writes a `timeout` result naming the rank and stage and _exit()s, which
 * frees the GPU for the next program; the fork parent or mpirun ends the rest.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "util/error.h"

static _Atomic(const char *) stage_name = "start";
static _Atomic double stage_deadline;
static double stage_limit;
static int wd_rank, wd_fd;

static void *watchdog_main(void *arg)
{
	struct timespec ts = {0, 50 * 1000 * 1000};
	char msg[256];

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		if (hx_now() > atomic_load(&stage_deadline))
			break;
	}
	snprintf(msg, sizeof(msg),
	         "rank %d made no progress for %.0f s in stage '%s' (deadlock, wrong signal "
	         "count, or a kernel that never ends)",
	         wd_rank, stage_limit, atomic_load(&stage_name));
	hx_emit_failure(wd_fd, wd_rank, CUCO_ERR_TIMEOUT, atomic_load(&stage_name), msg);
	_exit(CUCO_ERR_TIMEOUT);
	return NULL;
}

void hx_watchdog_start(int rank, int out_fd, double timeout_s)
{
	pthread_t t;

	wd_rank = rank;
	wd_fd = out_fd;
	stage_limit = timeout_s;
	atomic_store(&stage_deadline, hx_now() + timeout_s);
	if (pthread_create(&t, NULL, watchdog_main, NULL) == 0)
		pthread_detach(t);
}

void hx_stage(const char *name)
{
	atomic_store(&stage_name, name);
	atomic_store(&stage_deadline, hx_now() + stage_limit);
}

const char *hx_stage_name(void)
{
	return atomic_load(&stage_name);
}
