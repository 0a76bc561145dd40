/*
 * Workflow handles in Redis, the pure parts (worker/composite/handle_redis_codec.c):
 * the key, the claim script's answers, the scripts' names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/composite/handle_redis.h"

static void
test_key(void **state)
{
	char	buf[128], small[12];

	(void)state;
	assert_int_equal(redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    REDIS_KIND_HANDLE, "vmcpd-h-x", NULL),
	    strlen("thv:vmcp:session:handle:vmcpd-h-x"));
	assert_string_equal(buf, "thv:vmcp:session:handle:vmcpd-h-x");
	assert_int_equal(redis_key(buf, sizeof(buf), NULL, REDIS_KIND_HANDLE,
	    "i", NULL), 8);
	assert_string_equal(buf, "handle:i");
	/* too long: refused, never cut */
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_HANDLE,
	    "abcde", NULL), 0);
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_HANDLE,
	    "abcd", NULL), 11);
}

static void
test_verdict(void **state)
{
	redisReply	 r, el, *els[1] = { &el };
	const char	*st;
	size_t		 len;
	char		 text[] = "{\"v\":1}";
	static const enum handle_err codes[] = {
		HANDLE_UNKNOWN, HANDLE_NOT_OWNER, HANDLE_WRONG_TOOL,
		HANDLE_REPLAYED, HANDLE_STALE
	};
	int		 i;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(&el, 0, sizeof(el));
	assert_int_equal(handle_redis_verdict(NULL, &st, &len), HANDLE_ERROR);
	r.type = REDIS_REPLY_INTEGER;
	for (i = 0; i < 5; i++) {
		r.integer = i;
		assert_int_equal(handle_redis_verdict(&r, &st, &len),
		    codes[i]);
		assert_null(st);
	}
	r.integer = 5;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	r.integer = -1;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	/* {state}: taken */
	r.type = REDIS_REPLY_ARRAY;
	r.elements = 1;
	r.element = els;
	el.type = REDIS_REPLY_STRING;
	el.str = text;
	el.len = strlen(text);
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_OK);
	assert_ptr_equal(st, text);
	assert_int_equal(len, strlen(text));
	/* an empty state, a nil, two elements, an error: not understood */
	el.len = 0;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	el.len = strlen(text);
	el.type = REDIS_REPLY_NIL;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	el.type = REDIS_REPLY_STRING;
	r.elements = 2;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	r.elements = 0;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	r.type = REDIS_REPLY_ERROR;
	assert_int_equal(handle_redis_verdict(&r, &st, &len), HANDLE_ERROR);
	assert_null(st);
}

static void
test_scripts(void **state)
{
	(void)state;
	assert_int_equal(strlen(redis_script_sha(handle_redis_mint_lua)), 40);
	assert_int_equal(strlen(redis_script_sha(handle_redis_claim_lua)), 40);
	assert_string_not_equal(redis_script_sha(handle_redis_mint_lua),
	    redis_script_sha(handle_redis_claim_lua));
	/* the claim marks the handle used and drops its state */
	assert_non_null(strstr(handle_redis_claim_lua, "'u', '1'"));
	assert_non_null(strstr(handle_redis_claim_lua, "HDEL"));
	assert_non_null(strstr(handle_redis_mint_lua, "PEXPIRE"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
