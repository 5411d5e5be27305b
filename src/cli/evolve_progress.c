/* evolve_progress.c - the time on `cuco evolve`'s live line (evolve_progress.h). */
#include "cli/evolve_progress.h"

#include "util/proc.h"

void cli_evolve_clock_start(struct cli_evolve_clock *c, const struct cuco_evolve_config *cfg,
                            int resumed)
{
	c->t0 = cuco_now();
	c->ev0 = c->gen0 = resumed ? -1 : 0;
	c->budget_evals = cfg->budget_evals;
	c->budget_minutes = cfg->budget_minutes;
}

/* "1h02m", "3m05s" or "42s" for s seconds. */
static void fmt_duration(double s, char *buf, size_t len)
{
	long t = s > 0 ? (long)(s + 0.5) : 0;

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

double cli_evolve_clock_left(const struct cli_evolve_clock *c, const struct cuco_evolve_progress *p,
                             double elapsed)
{
	double left = -1, t;
	int ev = p->evaluated - c->ev0, gen = p->generation - c->gen0;

	if (c->budget_minutes > 0) {
		left = c->budget_minutes * 60 - elapsed;
		if (left < 0)
			left = 0;
	}
	if (c->budget_evals > 0 && ev > 0) {
		t = elapsed * (c->budget_evals - p->evaluated) / ev;
		left = left < 0 || t < left ? t : left;
	}
	if (p->generations > 0 && gen > 0) {
		t = elapsed * (p->generations - p->generation) / gen;
		left = left < 0 || t < left ? t : left;
	}
	return left;
}

void cli_evolve_clock_print(struct cli_evolve_clock *c, const struct cuco_evolve_progress *p,
                            FILE *f)
{
	double elapsed = cuco_now() - c->t0, left;
	char a[32], b[32];

	if (c->ev0 < 0) {
		c->ev0 = p->evaluated;
		c->gen0 = p->generation;
	}
	left = cli_evolve_clock_left(c, p, elapsed);
	fmt_duration(elapsed, a, sizeof(a));
	fprintf(f, " | %s elapsed", a);
	if (left >= 0) {
		fmt_duration(left, b, sizeof(b));
		fprintf(f, ", ~%s left", b);
	}
}

void cli_evolve_note(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "cuco evolve: %s\n", msg);
}
