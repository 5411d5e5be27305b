/*
 * model.c - the run as the report loaded it (internal.h): a program by id,
 * the seed, a number of a JSON object. The lowest file of src/report: the
 * sections, the lineage and the charts read the run through these.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "report/internal.h"

/* The program of id, or NULL (ids come oldest first, so ascending). */
struct prog *cuco_report_find_prog(struct report *r, int64_t id)
{
	int lo = 0, hi = r->nprogs - 1;

	while (lo <= hi) { /* ids come oldest first, so ascending */
		int mid = (lo + hi) / 2;
		if (r->progs[mid].id == id)
			return &r->progs[mid];
		if (r->progs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* The seed program, else the first one; NULL when there are none. */
struct prog *cuco_report_seed_prog(struct report *r)
{
	for (int i = 0; i < r->nprogs; i++)
		if (r->progs[i].name && !strcmp(r->progs[i].name, "seed"))
			return &r->progs[i];
	return r->nprogs ? &r->progs[0] : NULL;
}

/* A number of a JSON object, NaN when absent or null. */
double cuco_report_num_of(const json_t *o, const char *key)
{
	const json_t *x = json_object_get(o, key);

	return json_is_number(x) ? json_number_value(x) : NAN;
}
