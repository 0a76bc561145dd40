/*
 * Exchanged tokens in Redis, the pure part (worker/upstream/token_exchange_redis_codec.c): the
 * key made of the host's cache key (the read-or-lock is
 * test_redis_codec.c's).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "worker/upstream/token_exchange.h"
#include "worker/upstream/token_exchange_redis.h"

static void
test_rkey(void **state)
{
	char	 key[TEXCH_KEY_MAX], rk[TEXCH_RKEY_MAX], small[24];

	(void)state;
	assert_int_equal(texch_key(key, sizeof(key),
	    "0123456789abcdef0123456789abcdef", "gh", "https://api|x",
	    "repo"), 0);
	assert_true(texch_redis_key(rk, sizeof(rk), "vmcp:", key) > 0);
	/* the host's key, ':' for '|', after the prefix and "tok:" (an
	 * audience with '|' is hashed, so the separators stay four) */
	assert_int_equal(strncmp(rk, "vmcp:tok:0123456789abcdef0123456789"
	    "abcdef:gh:", 45), 0);
	assert_null(strchr(rk, '|'));
	assert_int_equal(strlen(rk), strlen("vmcp:tok:") + strlen(key));
	/* no prefix */
	assert_int_equal(texch_redis_key(rk, sizeof(rk), NULL, "a|b|c|d"), 11);
	assert_string_equal(rk, "tok:a:b:c:d");
	/* what does not fit is refused, never cut */
	assert_int_equal(texch_redis_key(small, sizeof(small), "p:",
	    "0123456789|0123456789"), 0);
	assert_int_equal(texch_redis_key(small, sizeof(small), "p:",
	    "0123456789|0123"), 21);
	assert_int_equal(texch_redis_key(small, 4, "prefix", "a"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rkey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
