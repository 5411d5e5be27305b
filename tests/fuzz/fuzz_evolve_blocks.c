/* fuzz_evolve_blocks.c - EVOLVE-BLOCK markers: find the blocks, replace each
 * one, and check the result against the source as a child would be. */
#include "fuzz.h"

#include "program/blocks.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cuco_block b[CUCO_BLOCKS_MAX];
	struct cuco_err err;
	char *src = fuzz_text(data, size);
	int n = 0;

	if (!src)
		return 0;
	cuco_err_clear(&err);
	if (cuco_blocks_find("fuzz.cu", src, b, CUCO_BLOCKS_MAX, &n, &err) == CUCO_OK) {
		for (int i = 0; i < n && i < 4; i++) {
			struct cuco_strbuf out = CUCO_STRBUF_INIT;

			if (cuco_blocks_replace(src, i, "int x = 1;", &out, &err) == CUCO_OK)
				(void)cuco_blocks_check_edit("fuzz.cu", src, out.buf, &err);
			cuco_strbuf_release(&out);
		}
	}
	free(src);
	return 0;
}
