/*
 * Unit tests for worker/auth.c's principal scope: what binds a session
 * to its principal (iss, sub).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "worker/auth.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
