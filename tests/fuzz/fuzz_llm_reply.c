/* fuzz_llm_reply.c - a model's reply: as search/replace edits of a parent
 * program (every mode) and as a whole-program rewrite. */
#include "fuzz.h"

#include "llm/reply.h"
#include "program/directive.h"

static const char parent[] =
    "// cuco-directive: {\"backend\":\"lsa\",\"placement\":\"sequential\",\"sync_scope\":\"cta\","
    "\"issuer\":\"cta\",\"granularity\":\"whole\",\"knobs\":{\"comm_ctas\":32,\"threads\":512}}\n"
    "#include <cuco/program.h>\n"
    "// EVOLVE-BLOCK-START\n"
    "#define CUCO_COMM_CTAS 32\n"
    "static int step(int x) { return x + 1; }\n"
    "// EVOLVE-BLOCK-END\n"
    "int main(void) { return step(0); }\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cuco_design_space ds;
	static int have_ds = -1;
	struct cuco_llm_edit e;
	struct cuco_directive d;
	struct cuco_err err;
	char *reply = fuzz_text(data, size);
	int mode;

	if (!reply)
		return 0;
	cuco_err_clear(&err);
	if (have_ds < 0)
		have_ds = cuco_design_space_load(CUCO_SOURCE_DIR "/share/design_space.json", &ds,
		                                 &err) == CUCO_OK;
	for (int k = 0; k < 3; k++) {
		static const char *const modes[] = {"diff", "rewrite", "crossover"};

		if (cuco_llm_mode_parse(modes[k], &mode, &err) != CUCO_OK)
			continue;
		cuco_llm_edit_init(&e);
		(void)cuco_llm_reply_apply("parent.cu", parent, reply, mode, have_ds ? &ds : NULL,
		                           NULL, &e, &err);
		cuco_llm_edit_release(&e);
	}
	cuco_llm_edit_init(&e);
	(void)cuco_llm_reply_program(reply, 1, have_ds ? &ds : NULL, NULL, &e, &err);
	cuco_llm_edit_release(&e);
	if (cuco_llm_reply_directive(reply, &d, NULL, &err) == CUCO_OK)
		cuco_directive_release(&d);
	free(reply);
	return 0;
}
