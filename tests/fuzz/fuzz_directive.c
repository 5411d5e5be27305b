/* fuzz_directive.c - the cuco-directive line of a program: parse, and when it
 * parses, validate against the shipped design space and print it back. */
#include "fuzz.h"

#include "program/directive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cuco_design_space ds;
	static int have_ds = -1;
	struct cuco_directive d;
	struct cuco_err err;
	char *src = fuzz_text(data, size);

	if (!src)
		return 0;
	if (have_ds < 0)
		have_ds = cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds,
		                                 &err) == CUCO_OK;
	cuco_err_clear(&err);
	if (cuco_directive_parse("fuzz.cu", src, &d, &err) == CUCO_OK) {
		char *json = cuco_directive_to_json(&d), *line = cuco_directive_to_line(&d);

		if (have_ds && cuco_directive_validate(&d, &ds, NULL, &err) == CUCO_OK)
			cuco_directive_canonicalize(&d, &ds);
		free(json);
		free(line);
		cuco_directive_release(&d);
	}
	(void)cuco_directive_find_line(src);
	free(src);
	return 0;
}
