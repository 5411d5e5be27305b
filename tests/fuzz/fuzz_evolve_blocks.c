/* fuzz_evolve_blocks.c - EVOLVE-BLOCK markers: find the blocks, replace each
 * one, and check the result against the source as a child would be. */
#include "fuzz.h"

#include "program/evolve.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cuco_evolve_block b[CUCO_EVOLVE_MAX_BLOCKS];
	struct cuco_err err;
	char *src = fuzz_text(data, size);
	int n = 0;

	if (!src)
		return 0;
	cuco_err_clear(&err);
	if (cuco_evolve_blocks_find("fuzz.cu", src, b, CUCO_EVOLVE_MAX_BLOCKS, &n, &err) ==
	    CUCO_OK) {
		for (int i = 0; i < n && i < 4; i++) {
			struct cuco_strbuf out = CUCO_STRBUF_INIT;

			if (cuco_evolve_replace(src, i, "int x = 1;", &out, &err) == CUCO_OK)
				(void)cuco_evolve_check_edit("fuzz.cu", src, out.buf, &err);
			cuco_strbuf_release(&out);
		}
	}
	free(src);
	return 0;
}
