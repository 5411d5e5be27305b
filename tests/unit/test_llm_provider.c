/*
 * test_llm_provider.c - the providers' table (src/llm/provider.h): each
 * provider found by its enum value and its name, its request body, its key's
 * header, its reply read (text, usage, stop reason, what a reply lacks) and
 * its cut-off reasons.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "llm/provider.h"

static json_t *messages(void)
{
	return json_pack("[{s:s, s:s}, {s:s, s:s}]", "role", "system", "content", "be brief",
	                 "role", "user", "content", "hi");
}

static void test_table(void **state)
{
	(void)state;
	assert_ptr_equal(cuco_llm_provider(CUCO_LLM_API_OPENAI), &cuco_llm_openai);
	assert_ptr_equal(cuco_llm_provider(CUCO_LLM_API_ANTHROPIC), &cuco_llm_anthropic);
	assert_null(cuco_llm_provider(-1));
	assert_null(cuco_llm_provider(99));
	assert_int_equal(cuco_llm_api_parse("anthropic"), CUCO_LLM_API_ANTHROPIC);
	assert_int_equal(cuco_llm_api_parse("openai"), CUCO_LLM_API_OPENAI);
	assert_int_equal(cuco_llm_api_parse("gemini"), -1);
	assert_string_equal(cuco_llm_api_name(CUCO_LLM_API_ANTHROPIC), "anthropic");
	assert_null(cuco_llm_api_name(7));
	assert_string_equal(cuco_llm_api_key_env(CUCO_LLM_API_ANTHROPIC), "ANTHROPIC_API_KEY");
	assert_string_equal(cuco_llm_api_key_env(CUCO_LLM_API_OPENAI), "OPENAI_API_KEY");
}

static void test_openai(void **state)
{
	const struct cuco_llm_provider *p = &cuco_llm_openai;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	const char *missing = NULL;
	json_t *m = messages(), *req = p->request("m1", m, 1.5, 64, 42), *root, *stop;
	int full = -1;

	(void)state;
	assert_string_equal(p->path, "/chat/completions");
	assert_true(p->folds_system);
	assert_null(p->header);
	/* the messages as they are, the temperature as asked, a seed */
	assert_int_equal(json_array_size(json_object_get(req, "messages")), 2);
	assert_true(json_real_value(json_object_get(req, "temperature")) == 1.5);
	assert_int_equal(json_integer_value(json_object_get(req, "seed")), 42);
	p->auth("K", &sb);
	assert_string_equal(sb.buf, "Authorization: Bearer K");
	cuco_strbuf_reset(&sb);
	memset(&res, 0, sizeof(res));
	root = json_loads("{\"choices\":[{\"message\":{\"content\":\"ok\"},\"finish_reason\":"
	                  "\"length\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}",
	                  0, NULL);
	assert_int_equal(p->reply(root, &sb, &res, &stop, &missing), 0);
	assert_string_equal(sb.buf, "ok");
	assert_int_equal(res.tokens_in, 3);
	assert_int_equal(res.tokens_out, 4);
	assert_true(p->cut_off(json_string_value(stop), &full));
	assert_int_equal(full, 0);
	assert_false(p->cut_off("stop", &full));
	json_decref(root);
	root = json_loads("{\"choices\":[]}", 0, NULL);
	assert_int_equal(p->reply(root, &sb, &res, &stop, &missing), -1);
	assert_string_equal(missing, "choices[0].message.content");
	json_decref(root);
	json_decref(req);
	json_decref(m);
	cuco_strbuf_release(&sb);
}

static void test_anthropic(void **state)
{
	const struct cuco_llm_provider *p = &cuco_llm_anthropic;
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	struct cuco_llm_result res;
	const char *missing = NULL;
	json_t *m = messages(), *req = p->request("m1", m, 1.5, 64, 42), *root, *stop;
	int full = -1;

	(void)state;
	assert_string_equal(p->path, "/messages");
	assert_false(p->folds_system);
	assert_string_equal(p->header, "anthropic-version: 2023-06-01");
	/* the system prompt on top, the rest as messages, temperature at most 1, no seed */
	assert_string_equal(json_string_value(json_object_get(req, "system")), "be brief");
	assert_int_equal(json_array_size(json_object_get(req, "messages")), 1);
	assert_true(json_real_value(json_object_get(req, "temperature")) == 1.0);
	assert_null(json_object_get(req, "seed"));
	p->auth("K", &sb);
	assert_string_equal(sb.buf, "x-api-key: K");
	cuco_strbuf_reset(&sb);
	memset(&res, 0, sizeof(res));
	root =
	    json_loads("{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"tool_use\"},"
	               "{\"type\":\"text\",\"text\":\"b\"}],\"stop_reason\":\"end_turn\","
	               "\"usage\":{\"input_tokens\":3,\"output_tokens\":4,"
	               "\"cache_read_input_tokens\":10}}",
	               0, NULL);
	assert_int_equal(p->reply(root, &sb, &res, &stop, &missing), 0);
	assert_string_equal(sb.buf, "ab");
	assert_int_equal(res.tokens_in, 13); /* the cache's tokens are prompt tokens */
	assert_int_equal(res.tokens_out, 4);
	assert_false(p->cut_off(json_string_value(stop), &full));
	assert_true(p->cut_off("max_tokens", &full));
	assert_int_equal(full, 0);
	assert_true(p->cut_off("model_context_window_exceeded", &full));
	assert_int_equal(full, 1);
	json_decref(root);
	root = json_loads("{\"content\":[]}", 0, NULL);
	assert_int_equal(p->reply(root, &sb, &res, &stop, &missing), -1);
	assert_string_equal(missing, "text block in content");
	json_decref(root);
	json_decref(req);
	json_decref(m);
	cuco_strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_openai),
	    cmocka_unit_test(test_anthropic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
