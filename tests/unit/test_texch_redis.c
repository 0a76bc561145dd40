/*
 * Exchanged tokens in Redis, the pure parts (worker/texch_rcodec.c):
 * the key made of the host's cache key, the read-or-lock script's
 * answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <hiredis/hiredis.h>

#include "worker/redis.h"
#include "worker/texch.h"
#include "worker/texch_redis.h"

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

static void
test_answer(void **state)
{
	redisReply	 r, tok, ttl, *els[2] = { &tok, &ttl };
	const char	*s;
	size_t		 len;
	uint64_t	 ms;
	char		 sealed[] = "\x01sealed\0bytes";

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&tok, 0, sizeof(tok));
	memset(&ttl, 0, sizeof(ttl));
	assert_int_equal(texch_redis_answer(NULL, &s, &len, &ms),
	    TEXCH_R_ERROR);
	r.type = REDIS_REPLY_INTEGER;
	r.integer = 1;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms), TEXCH_R_MINE);
	r.integer = 0;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms), TEXCH_R_BUSY);
	r.integer = 2;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	r.type = REDIS_REPLY_ERROR;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	/* {sealed token, its time to live} */
	r.type = REDIS_REPLY_ARRAY;
	r.elements = 2;
	r.element = els;
	tok.type = REDIS_REPLY_STRING;
	tok.str = sealed;
	tok.len = sizeof(sealed) - 1;
	ttl.type = REDIS_REPLY_INTEGER;
	ttl.integer = 90000;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms), TEXCH_R_HIT);
	assert_ptr_equal(s, sealed);
	assert_int_equal(len, sizeof(sealed) - 1);
	assert_int_equal(ms, 90000);
	/* a time to live that is none, an empty token, other shapes */
	ttl.integer = 0;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	assert_null(s);
	ttl.integer = -1;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	ttl.integer = 1;
	tok.len = 0;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	tok.len = 3;
	ttl.type = REDIS_REPLY_STRING;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	ttl.type = REDIS_REPLY_INTEGER;
	r.elements = 1;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms),
	    TEXCH_R_ERROR);
	r.elements = 2;
	assert_int_equal(texch_redis_answer(&r, &s, &len, &ms), TEXCH_R_HIT);
}

static void
test_scripts(void **state)
{
	(void)state;
	assert_int_equal(strlen(redis_script_sha(texch_redis_get_lua)), 40);
	assert_string_not_equal(redis_script_sha(texch_redis_get_lua),
	    redis_script_sha(texch_redis_done_lua));
	/* the lock is taken only if free, with a life */
	assert_non_null(strstr(texch_redis_get_lua, "'NX', 'PX'"));
	/* and let go only by its holder */
	assert_non_null(strstr(texch_redis_done_lua,
	    "redis.call('GET', KEYS[2]) == ARGV[3]"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rkey),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
