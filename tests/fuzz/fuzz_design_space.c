/* fuzz_design_space.c - share/design_space.json as a user may edit it: load,
 * and narrow it by a template's cuco-realizes line made of the same input. */
#include "fuzz.h"

#include "program/design_space.h"
#include "program/realize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cuco_design_space ds;
	struct cuco_err err;
	const char *path = fuzz_file(data, size, "-design_space.json");
	char *text;

	if (!path)
		return 0;
	cuco_err_clear(&err);
	if (cuco_design_space_load(path, &ds, &err) == CUCO_OK)
		cuco_design_space_release(&ds);
	unlink(path);
	/* the same bytes as a template's realizes line, over the shipped space */
	if ((text = fuzz_text(data, size)) &&
	    cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds, &err) ==
	        CUCO_OK) {
		(void)cuco_design_space_narrow(&ds, "fuzz.cu.in", text, &err);
		cuco_design_space_release(&ds);
	}
	free(text);
	return 0;
}
