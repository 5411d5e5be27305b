/* fuzz_shape_spec.c - the --shape argument (a name, MxNxK, or M=..,N=..)
 * against a shipped manifest. */
#include "fuzz.h"

#include "workload/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cuco_manifest m;
	static int have = -1;
	struct cuco_err err;
	char *text;

	cuco_err_clear(&err);
	if (have < 0)
		have = cuco_manifest_load(CUCO_SOURCE_DIR "/workloads/gemm_allgather/manifest.json",
		                          &m, &err) == CUCO_OK;
	if (!have || !(text = fuzz_text(data, size)))
		return 0;
	(void)cuco_manifest_shape_spec(&m, text, &err);
	free(text);
	return 0;
}
