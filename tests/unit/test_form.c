/*
 * proto/form.c: application/x-www-form-urlencoded as RFC 6749 appendix
 * B has it, and a form built pair by pair.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "proto/form.h"

static void
test_form_escape(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;
	} c[] = {
		{ "", "" },
		{ "azAZ09-._~", "azAZ09-._~" },
		/* RFC 6749 appendix B's example, but for '~', left as
		 * RFC 3986 2.3 has it (the same once decoded) */
		{ " %+~", "+%25%2B~" },
		{ "a&b=c", "a%26b%3Dc" },
		{ "/?#:@", "%2F%3F%23%3A%40" },
		{ "\xc3\xa9\x01\x7f\xff", "%C3%A9%01%7F%FF" },
	};
	char	*o;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		o = proto_form_escape(c[i].in);
		assert_non_null(o);
		assert_string_equal(o, c[i].out);
		free(o);
	}
}

static void
test_form_add(void **state)
{
	char	*b = NULL;
	size_t	 len = 0;

	(void)state;
	assert_int_equal(proto_form_add(&b, &len, "grant_type",
	    "urn:ietf:params:oauth:grant-type:token-exchange"), 0);
	assert_string_equal(b, "grant_type="
	    "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange");
	assert_int_equal(len, strlen(b));
	assert_int_equal(proto_form_add(&b, &len, "scope", "a b"), 0);
	assert_int_equal(proto_form_add(&b, &len, "empty", ""), 0);
	assert_string_equal(strchr(b, '&'), "&scope=a+b&empty=");
	assert_int_equal(len, strlen(b));
	free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_form_escape),
		cmocka_unit_test(test_form_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
