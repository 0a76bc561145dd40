/*
 * A token endpoint's answer (shared/oauth_token.c): RFC 6749 5.1's
 * fields, 5.2's error code, and no message quoting a token.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared/oauth_token.h"

static void
test_code_answer(void **state)
{
	struct oauth_token	 t;
	char			 why[160];
	const char		*ok = "{\"access_token\":\"at-1.x\",\"token_type\":"
	    "\"bearer\",\"expires_in\":3600,\"refresh_token\":\"rt 1/+\","
	    "\"scope\":\"repo read:user\",\"id_token\":\"h.p.s\"}";
	const char		*bare = "{\"access_token\":\"at\",\"token_type\":"
	    "\"Bearer\",\"scope\":\"\"}";

	(void)state;
	assert_int_equal(oauth_token_parse(ok, strlen(ok), 0, 4096, &t, why,
	    sizeof(why)), 0);
	assert_string_equal(t.ot_access, "at-1.x");
	assert_string_equal(t.ot_refresh, "rt 1/+");
	assert_string_equal(t.ot_scope, "repo read:user");
	assert_string_equal(t.ot_id_token, "h.p.s");
	assert_int_equal(t.ot_expires_in, 3600);
	oauth_token_clear(&t);
	assert_null(t.ot_access);
	assert_int_equal(oauth_token_parse(bare, strlen(bare), 0, 4096, &t,
	    why, sizeof(why)), 0);
	assert_null(t.ot_refresh);
	assert_null(t.ot_scope);
	assert_int_equal(t.ot_expires_in, 0);
	oauth_token_clear(&t);
}

static void
test_refused(void **state)
{
	struct oauth_token	 t;
	char			 why[160];

	(void)state;
#define BAD(s, f, w) do { \
	assert_int_equal(oauth_token_parse(s, strlen(s), f, 64, &t, why, \
	    sizeof(why)), -1); \
	assert_null(t.ot_access); \
	assert_null(t.ot_refresh); \
	assert_non_null(strstr(why, w)); \
	assert_null(strstr(why, "SECRET")); \
} while (0)
	BAD("nope", 0, "not a JSON object");
	BAD("{\"token_type\":\"Bearer\"}", 0, "no usable access_token");
	/* RFC 6749 5.1 requires token_type; an exchange need not say */
	BAD("{\"access_token\":\"SECRET\"}", 0, "no token_type");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"DPoP\"}", 0,
	    "not Bearer");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"N_A\"}", 0,
	    "not Bearer");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\","
	    "\"refresh_token\":\"SECRET\\nx\"}", 0, "refresh_token");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\","
	    "\"refresh_token\":\"\"}", 0, "refresh_token");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\","
	    "\"scope\":\"a\\\"b\"}", 0, "scope");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\","
	    "\"id_token\":\"a b\"}", 0, "id_token");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\","
	    "\"expires_in\":\"60\"}", 0, "expires_in");
	/* over max bytes */
	BAD("{\"access_token\":\"SECRET90123456789012345678901234567890123456"
	    "789012345678901234567890\",\"token_type\":\"Bearer\"}", 0,
	    "no usable access_token");
	BAD("{\"access_token\":\"SECRET\",\"token_type\":\"Bearer\"}",
	    OAUTH_EXCHANGE, "issued_token_type");
#undef BAD
}

static void
test_error(void **state)
{
	char		 code[OAUTH_ERROR_MAX + 1];
	const char	*e = "{\"error\":\"invalid_grant\",\"error_description\":"
	    "\"SECRET\"}";
	const char	*bad = "{\"error\":\"in\\u0001valid\"}";

	(void)state;
	oauth_token_error(e, strlen(e), code, sizeof(code));
	assert_string_equal(code, "invalid_grant");
	oauth_token_error(bad, strlen(bad), code, sizeof(code));
	assert_string_equal(code, "");
	oauth_token_error("<html>", 6, code, sizeof(code));
	assert_string_equal(code, "");
	oauth_token_error(NULL, 0, code, sizeof(code));
	assert_string_equal(code, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_answer),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
