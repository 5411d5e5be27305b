/* fuzz_manifest.c - a workload's manifest.json: load, and when it loads, the
 * shape lookups and the rank and shape rules over every shape. */
#include "fuzz.h"

#include "workload/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cuco_manifest m;
	struct cuco_err err;
	const char *path = fuzz_file(data, size, "-manifest.json");

	if (!path)
		return 0;
	cuco_err_clear(&err);
	if (cuco_manifest_load(path, &m, &err) == CUCO_OK) {
		for (int r = 1; r <= 8; r *= 2) {
			(void)cuco_manifest_check_ranks(&m, r, 1, &err);
			for (int i = 0; i < m.nshapes; i++)
				(void)cuco_manifest_check_shape(&m, &m.shapes[i], r, &err);
		}
		(void)cuco_manifest_check_cc(&m, 90, &err);
		(void)cuco_manifest_shape(&m, "8192");
		cuco_manifest_release(&m);
	}
	unlink(path);
	return 0;
}
