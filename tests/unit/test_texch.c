/*
 * token_exchange's pure parts (worker/upstream/token_exchange.c): the cache key, the
 * expiry with its margin, the RFC 8693 2.2.1 answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "worker/upstream/token_exchange.h"

static void
test_key(void **state)
{
	char	 a[TEXCH_KEY_MAX], b[TEXCH_KEY_MAX], big[200];

	(void)state;
	assert_int_equal(texch_key(a, sizeof(a), "p1", "gh", "github",
	    "repo read:org"), 0);
	assert_non_null(strstr(a, "p1|gh|github|"));
	/* no scopes in clear: a hash */
	assert_null(strstr(a, "repo"));
	/* each part tells keys apart */
	assert_int_equal(texch_key(b, sizeof(b), "p2", "gh", "github",
	    "repo read:org"), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(texch_key(b, sizeof(b), "p1", "gh", "github",
	    "repo"), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(texch_key(b, sizeof(b), "p1", "gh", "gitlab",
	    "repo read:org"), 0);
	assert_string_not_equal(a, b);
	/* no audience, no scopes */
	assert_int_equal(texch_key(b, sizeof(b), "p1", "gh", NULL, NULL), 0);
	assert_non_null(strstr(b, "p1|gh|-|"));
	/* an audience with the separator, or long, is hashed */
	assert_int_equal(texch_key(b, sizeof(b), "p1", "gh", "a|b", NULL), 0);
	assert_null(strstr(b, "a|b"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(texch_key(b, sizeof(b), "p1", "gh", big, NULL), 0);
	assert_true(strlen(b) < 100);
	assert_int_equal(texch_key(b, 8, "p1", "gh", "x", NULL), -1);
}

static void
test_expiry(void **state)
{
	uint64_t	 now = 1000000000000ULL;

	(void)state;
	/* an hour: renewed 30 s early */
	assert_int_equal(texch_expiry(now, 3600, 0),
	    now + 3600 * 1000 - TEXCH_MARGIN_MS);
	/* no expires_in: the default */
	assert_int_equal(texch_expiry(now, 0, 0),
	    now + TEXCH_DEFAULT_TTL_S * 1000 - TEXCH_MARGIN_MS);
	/* short: a quarter of its life */
	assert_int_equal(texch_expiry(now, 40, 0), now + 30 * 1000);
	/* never past the client's own token */
	assert_int_equal(texch_expiry(now, 3600, (int64_t)(now / 1000) + 600),
	    now + 600 * 1000 - TEXCH_MARGIN_MS);
	assert_int_equal(texch_expiry(now, 3600, (int64_t)(now / 1000) - 1),
	    0);
}

/* sessions.maxPrincipals' slot: renewed once a minute, not per request */
static void
test_principal_stale(void **state)
{
	uint64_t now = 1700000000000ULL;

	(void)state;
	assert_false(texch_principal_stale(now + TEXCH_PRINCIPAL_MS, now));
	assert_false(texch_principal_stale(now + TEXCH_PRINCIPAL_MS -
	    TEXCH_TOUCH_MS, now));
	assert_true(texch_principal_stale(now + TEXCH_PRINCIPAL_MS -
	    TEXCH_TOUCH_MS - 1, now));
	assert_true(texch_principal_stale(now, now));
	assert_true(texch_principal_stale(0, now));
}

static void
test_parse(void **state)
{
	char		 why[160], *tok;
	int64_t		 ein;
	const char	*ok = "{\"access_token\":\"abc.def-_\",\"issued_token_"
	    "type\":\"urn:ietf:params:oauth:token-type:access_token\","
	    "\"token_type\":\"Bearer\",\"expires_in\":60}";

	(void)state;
	assert_int_equal(texch_parse(ok, strlen(ok), &tok, &ein, why,
	    sizeof(why)), 0);
	assert_string_equal(tok, "abc.def-_");
	assert_int_equal(ein, 60);
	free(tok);
#define BAD(s, w) do { \
	assert_int_equal(texch_parse(s, strlen(s), &tok, &ein, why, \
	    sizeof(why)), -1); \
	assert_null(tok); \
	assert_non_null(strstr(why, w)); \
	assert_null(strstr(why, "SECRET")); \
} while (0)
	BAD("[]", "not a JSON object");
	BAD("{\"issued_token_type\":\"x\"}", "no usable access_token");
	BAD("{\"access_token\":\"SECRET\"}", "no issued_token_type");
	BAD("{\"access_token\":\"SECRET\\r\\nX: y\",\"issued_token_type\":"
	    "\"x\"}", "not a bearer token");
	BAD("{\"access_token\":\"SECRET\",\"issued_token_type\":\"x\","
	    "\"token_type\":\"DPoP\"}", "not Bearer");
	BAD("{\"access_token\":\"SECRET\",\"issued_token_type\":\"x\","
	    "\"expires_in\":-5}", "expires_in");
	BAD("{\"access_token\":\"SECRET\",\"access_token\":\"SECRET\","
	    "\"issued_token_type\":\"x\"}", "not a JSON object");
#undef BAD
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_principal_stale),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
