/*
 * Unit tests for worker/auth/auth.c's principal scope: what binds a session
 * to its principal (iss, sub); and auth_keys.c's JWKS refresh schedule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "worker/auth/auth.h"

static void
test_scope(void **state)
{
	char	 a[AUTH_SCOPE_LEN + 1], b[AUTH_SCOPE_LEN + 1];
	char	 c[AUTH_SCOPE_LEN + 1], d[AUTH_SCOPE_LEN + 1];

	(void)state;
	auth_scope_of("https://idp-a", "alice", a);
	auth_scope_of("https://idp-a", "alice", b);
	assert_int_equal(strlen(a), AUTH_SCOPE_LEN);
	assert_string_equal(a, b);
	assert_true(auth_scope_eq(a, b));
	/* the same sub from another issuer is another principal */
	auth_scope_of("https://idp-b", "alice", c);
	assert_false(auth_scope_eq(a, c));
	/* the separator: ("ab", "c") is not ("a", "bc") */
	auth_scope_of("ab", "c", c);
	auth_scope_of("a", "bc", d);
	assert_false(auth_scope_eq(c, d));
	/* anonymous ("") matches only anonymous */
	assert_true(auth_scope_eq("", ""));
	assert_false(auth_scope_eq(a, ""));
	assert_false(auth_scope_eq("", a));
}

/* the JWKS refresh schedule from Cache-Control, within 1 min..1 h */
static void
test_refresh(void **state)
{
	(void)state;
	assert_int_equal(auth_refresh_ms(NULL), 5 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("public, max-age=600"), 600 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=600, public"), 600 * 1000);
	assert_int_equal(auth_refresh_ms("MAX-AGE=120"), 120 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=5"), 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=0"), 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=86400"), 60 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=99999999999999999999"),
	    60 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("s-maxage=600"), 5 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("x-max-age=600"), 5 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age=600, no-cache"),
	    5 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age="), 5 * 60 * 1000);
	assert_int_equal(auth_refresh_ms("max-age"), 5 * 60 * 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_refresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
