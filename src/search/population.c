/* population.c - islands, archive, selection, migration, stagnation, schedule (see population.h).
 */
#include "search/population.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/operator.h"
#include "util/array.h"
#include "util/xalloc.h"

int cuco_population_init(struct cuco_population *p, int nislands, int population_size,
                         int archive_size)
{
	memset(p, 0, sizeof(*p));
	if (nislands < 1 || nislands > CUCO_MAX_ISLANDS)
		return -1;
	p->nislands = nislands;
	p->population_size = population_size > 0 ? population_size : 1;
	p->archive_size = archive_size > 0 ? archive_size : 1;
	return 0;
}

void cuco_population_release(struct cuco_population *p)
{
	free(p->m);
	memset(p, 0, sizeof(*p));
}

int cuco_population_add(struct cuco_population *p, const struct cuco_member *m)
{
	CUCO_ARRAY_GROW(p->m, (size_t)p->n + 1, p->alloc);
	p->m[p->n] = *m;
	cuco_directive_copy(&p->m[p->n].d, &m->d);
	p->m[p->n].alive = 1;
	return p->n++;
}

int cuco_population_find(const struct cuco_population *p, int island, int64_t program_id)
{
	for (int i = 0; i < p->n; i++)
		if (p->m[i].island == island && p->m[i].program_id == program_id)
			return i;
	return -1;
}

/* Better first: higher fitness, then older program. */
static int better(const struct cuco_member *a, const struct cuco_member *b)
{
	if (a->fitness != b->fitness)
		return a->fitness > b->fitness;
	return a->program_id < b->program_id;
}

/* Insertion sort of member indices, best first (islands are small). */
static void sort_best_first(const struct cuco_population *p, int *idx, int n)
{
	for (int i = 1; i < n; i++) {
		int x = idx[i], j = i - 1;
		while (j >= 0 && better(&p->m[x], &p->m[idx[j]])) {
			idx[j + 1] = idx[j];
			j--;
		}
		idx[j + 1] = x;
	}
}

/* Alive members of island (correct ones only when only_correct) into a malloc'd array. */
static int *island_members(const struct cuco_population *p, int island, int only_correct, int *n)
{
	int *idx = cuco_xcalloc((size_t)p->n + 1, sizeof(*idx));

	*n = 0;
	for (int i = 0; i < p->n; i++)
		if (p->m[i].island == island && p->m[i].alive && (!only_correct || p->m[i].correct))
			idx[(*n)++] = i;
	return idx;
}

int cuco_island_archive(const struct cuco_population *p, int island, int *idx, int max)
{
	int n, k;
	int *all = island_members(p, island, 1, &n);

	sort_best_first(p, all, n);
	k = n < p->archive_size ? n : p->archive_size;
	if (k > max)
		k = max;
	memcpy(idx, all, (size_t)k * sizeof(*idx));
	free(all);
	return k;
}

static const char *const selection_names[] = {"rank", "power_law", "weighted", "beam", "best_of_n"};

int cuco_selection_kind(const char *s)
{
	for (int k = 0; k < (int)(sizeof(selection_names) / sizeof(selection_names[0])); k++)
		if (s && !strcmp(s, selection_names[k]))
			return k;
	return -1;
}

const char *cuco_selection_name(int k)
{
	return k >= 0 && k < (int)(sizeof(selection_names) / sizeof(selection_names[0]))
	           ? selection_names[k]
	           : "?";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* weighted: a sigmoid of each fitness about the median, scaled by the mean deviation. */
static void fitness_weights(const struct cuco_population *p, const int *all, int n, double lambda,
                            double *w)
{
	double *f = cuco_xcalloc((size_t)n + 1, sizeof(*f)), med, spread = 0;

	for (int r = 0; r < n; r++)
		f[r] = p->m[all[r]].fitness;
	qsort(f, (size_t)n, sizeof(*f), cmp_double);
	med = n % 2 ? f[n / 2] : 0.5 * (f[n / 2 - 1] + f[n / 2]);
	for (int r = 0; r < n; r++)
		spread += fabs(f[r] - med) / n;
	for (int r = 0; r < n; r++)
		w[r] = spread > 0
		           ? 1.0 / (1.0 + exp(-lambda * (p->m[all[r]].fitness - med) / spread))
		           : 1.0;
	free(f);
}

int cuco_island_parent_weights(const struct cuco_population *p, int island, double lambda, int *idx,
                               double *w, int max)
{
	int n, *all = island_members(p, island, 1, &n);

	if (n == 0) {
		free(all);
		all = island_members(p, island, 0, &n);
	}
	sort_best_first(p, all, n);
	if (n > max)
		n = max;
	if (p->sel.kind == CUCO_SELECT_WEIGHTED)
		fitness_weights(p, all, n, lambda, w);
	for (int r = 0; r < n; r++) {
		const struct cuco_member *m = &p->m[all[r]];
		double rank = n > 1 ? (double)r / (double)(n - 1) : 0,
		       k = p->sel.n > 1 ? p->sel.n : 2;

		idx[r] = all[r];
		switch (p->sel.kind) {
		case CUCO_SELECT_POWER_LAW:
			w[r] = pow(r + 1.0, -lambda);
			break;
		case CUCO_SELECT_WEIGHTED:
			break;
		case CUCO_SELECT_BEAM:
			w[r] = r == 0;
			continue; /* no penalty: the best, always */
		case CUCO_SELECT_BEST_OF_N:
			w[r] = pow((double)(n - r) / n, k) - pow((double)(n - r - 1) / n, k);
			break;
		default:
			w[r] = exp(-lambda * rank);
		}
		w[r] /= 1.0 + m->nchildren;
	}
	free(all);
	return n;
}

int cuco_island_pick_parent(const struct cuco_population *p, int island, double lambda,
                            struct cuco_rng *rng)
{
	int *idx = cuco_xcalloc((size_t)p->n + 1, sizeof(*idx)), n, pick, res = -1;
	double *w = cuco_xcalloc((size_t)p->n + 1, sizeof(*w));

	n = cuco_island_parent_weights(p, island, lambda, idx, w, p->n);
	pick = cuco_rng_weighted(rng, w, n);
	if (pick >= 0)
		res = idx[pick];
	free(idx);
	free(w);
	return res;
}

int cuco_island_inspirations(const struct cuco_population *p, int island, int parent, int top_k,
                             int diverse_k, struct cuco_rng *rng, int *out, int max)
{
	int n = 0, na, nc, *arch = cuco_xcalloc((size_t)p->n + 1, sizeof(*arch));
	int *cand = island_members(p, island, 1, &nc);
	const struct cuco_directive *pd = &p->m[parent].d;

	na = cuco_island_archive(p, island, arch, p->n);
	for (int i = 0; i < na && n < top_k && n < max; i++)
		if (arch[i] != parent && !cuco_directive_equal(&p->m[arch[i]].d, pd))
			out[n++] = arch[i];
	for (int k = 0; k < diverse_k && n < max; k++) {
		int best = -1, bestd = 0, ties = 0;
		for (int i = 0; i < nc; i++) {
			int c = cand[i], used = c == parent, d;
			for (int j = 0; j < n; j++)
				used |= out[j] == c;
			if (used)
				continue;
			d = cuco_directive_distance(&p->m[c].d, pd);
			if (d > bestd) {
				best = c;
				bestd = d;
				ties = 1;
			} else if (d == bestd && d > 0 &&
			           cuco_rng_below(rng, (uint64_t)++ties) == 0) {
				best = c; /* reservoir pick among equally distant members */
			}
		}
		if (best < 0)
			break;
		out[n++] = best;
	}
	free(arch);
	free(cand);
	return n;
}

int cuco_migration_parse(const char *s, int nislands, unsigned *links, char *why, size_t whylen)
{
	const char *q = s ? s : "";

	memset(links, 0, sizeof(*links) * CUCO_MAX_ISLANDS);
	if (!*q || !strcmp(q, "ring"))
		return 0;
	if (!strcmp(q, "all")) {
		for (int i = 0; i < nislands; i++)
			links[i] = ((1u << nislands) - 1) & ~(1u << i);
		return 0;
	}
	while (*q) {
		char *end;
		long a = strtol(q, &end, 10), b;

		if (end == q || *end != '>')
			goto bad;
		q = end + 1;
		b = strtol(q, &end, 10);
		if (end == q || (*end && *end != ','))
			goto bad;
		if (a < 0 || b < 0 || a >= nislands || b >= nislands || a == b) {
			snprintf(why, whylen,
			         "edge %ld>%ld: islands are 0..%d, no island sends to itself", a, b,
			         nislands - 1);
			return -1;
		}
		links[a] |= 1u << b;
		q = *end ? end + 1 : end;
	}
	return 0;
bad:
	snprintf(why, whylen, "\"%s\": not ring, all or edges like 0>1,1>2", s);
	return -1;
}

/* Whether p->links names any edge. */
static int has_links(const struct cuco_population *p)
{
	for (int i = 0; i < p->nislands; i++)
		if (p->links[i])
			return 1;
	return 0;
}

int cuco_population_migrate(struct cuco_population *p, double rate)
{
	int *moves, *dest, nmoves = 0, graph = has_links(p);
	size_t cap = (size_t)(p->n + 1) * (size_t)p->nislands;

	if (p->nislands < 2)
		return 0;
	moves = cuco_xcalloc(cap, sizeof(*moves));
	dest = cuco_xcalloc(cap, sizeof(*dest));
	for (int i = 0; i < p->nislands; i++) {
		int n, k, *all = island_members(p, i, 0, &n);
		int alive = n;
		free(all);
		all = island_members(p, i, 1, &n);
		sort_best_first(p, all, n);
		k = (int)ceil(rate * alive - 1e-9);
		if (k < 1)
			k = 1;
		for (int to = 0; to < p->nislands; to++) {
			int sent = 0;
			if (graph ? !(p->links[i] >> to & 1u) : to != (i + 1) % p->nislands)
				continue;
			for (int j = 0; j < n && sent < k; j++) {
				/* Natives only: a migrant travelling on would let one elite take
				 * every island, the collapse islands exist to prevent. */
				if (p->m[all[j]].migrant ||
				    cuco_population_find(p, to, p->m[all[j]].program_id) >= 0)
					continue;
				moves[nmoves] = all[j];
				dest[nmoves++] = to;
				sent++;
			}
		}
		free(all);
	}
	for (int j = 0; j < nmoves; j++) {
		struct cuco_member m = p->m[moves[j]];
		m.island = dest[j];
		m.migrant = 1;
		m.nchildren = 0;
		cuco_population_add(p, &m);
	}
	free(moves);
	free(dest);
	return nmoves;
}

/* Worse to keep: failures, then lower fitness, then older. */
static int worse(const struct cuco_member *a, const struct cuco_member *b)
{
	if (a->correct != b->correct)
		return !a->correct;
	if (a->fitness != b->fitness)
		return a->fitness < b->fitness;
	if (a->generation != b->generation)
		return a->generation < b->generation;
	return a->program_id < b->program_id;
}

void cuco_population_trim(struct cuco_population *p, int island)
{
	int n, na, *all = island_members(p, island, 0, &n);
	int *arch = cuco_xcalloc((size_t)p->n + 1, sizeof(*arch));

	na = cuco_island_archive(p, island, arch, p->n);
	while (n > p->population_size) {
		int victim = -1;
		for (int i = 0; i < n; i++) {
			int protect = 0;
			if (!p->m[all[i]].alive)
				continue;
			for (int j = 0; j < na; j++)
				protect |= arch[j] == all[i];
			if (protect)
				continue;
			if (victim < 0 || worse(&p->m[all[i]], &p->m[victim]))
				victim = all[i];
		}
		if (victim < 0)
			break; /* everything left is elite */
		p->m[victim].alive = 0;
		n--;
	}
	free(all);
	free(arch);
}

int cuco_population_end_generation(struct cuco_population *p, int g)
{
	int improved = 0;

	for (int i = 0; i < p->nislands; i++) {
		struct cuco_island_state *s = &p->isl[i];
		int best = -1;
		for (int j = 0; j < p->n; j++)
			if (p->m[j].island == i && p->m[j].correct &&
			    (best < 0 || better(&p->m[j], &p->m[best])))
				best = j;
		if (best >= 0 && p->m[best].fitness > s->best_fitness * (1 + 1e-9) &&
		    p->m[best].program_id != s->best_program) {
			s->best_fitness = p->m[best].fitness;
			s->best_program = p->m[best].program_id;
			s->last_improvement = g;
			improved++;
		}
		s->stagnant = g - s->last_improvement;
		cuco_population_trim(p, i);
	}
	return improved;
}

int cuco_island_stagnating(const struct cuco_population *p, int island, int k)
{
	return k > 0 && p->isl[island].stagnant >= k;
}

int cuco_schedule_horizon(int generations, int budget_evals, int per_generation)
{
	int reach;

	if (budget_evals <= 0 || per_generation <= 0)
		return generations;
	reach = (budget_evals + per_generation - 1) / per_generation;
	return reach < generations ? reach : generations;
}

int cuco_schedule_switch(const struct cuco_schedule *s)
{
	double f = s->explore_fraction < 0 ? 0 : s->explore_fraction > 1 ? 1 : s->explore_fraction;

	return 1 + (int)ceil(f * s->generations - 1e-9);
}

enum cuco_phase cuco_schedule_phase(const struct cuco_schedule *s, int g)
{
	return g < cuco_schedule_switch(s) ? CUCO_PHASE_EXPLORE : CUCO_PHASE_EXPLOIT;
}

const char *cuco_phase_name(enum cuco_phase ph)
{
	return ph == CUCO_PHASE_EXPLORE ? "explore" : "exploit";
}

void cuco_schedule_params(const struct cuco_schedule *s, int g, int stagnating,
                          struct cuco_phase_params *out)
{
	memset(out, 0, sizeof(*out));
	out->phase = cuco_schedule_phase(s, g);
	if (out->phase == CUCO_PHASE_EXPLORE) {
		/* Bold: several genes at once, more recombination, flat selection. */
		out->changes_min = 2;
		out->changes_max = 3;
		out->crossover_rate = 0.25;
		out->lambda = 1.0;
	} else {
		/* Careful: one gene (sometimes two) around the best, values by the summary. */
		out->changes_min = 1;
		out->changes_max = 2;
		out->crossover_rate = 0.1;
		out->lambda = 3.0;
		out->use_bias = 1;
	}
	if (stagnating) {
		/* Stuck: jump further and breed from the archive at large. */
		out->changes_min = 3;
		out->changes_max = 4;
		out->crossover_rate = 0.35;
		out->lambda = 0.5;
		out->use_bias = 0;
		out->reseed = 1;
	}
}
