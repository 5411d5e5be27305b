/*
 * assert_text.h - text assertions for cmocka tests (include after cmocka.h).
 */
#ifndef CUCO_TEST_ASSERT_TEXT_H
#define CUCO_TEST_ASSERT_TEXT_H

#include <string.h>

/* Fail unless needle occurs in hay (long texts are shown cut at 3000 bytes). */
static inline void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("expected to find\n  %s\nin\n%.3000s", needle, hay ? hay : "(null)");
}

#endif
