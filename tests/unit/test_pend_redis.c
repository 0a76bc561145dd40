/*
 * Pending relayed requests in Redis, the pure parts
 * (worker/pend_rcodec.c): the key, and what GETDEL's answers mean.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/pend_redis.h"

static void
test_key(void **state)
{
	char	buf[128], small[16];

	(void)state;
	assert_int_equal(pend_redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    "S1", "vmcpd-r-00"), strlen("thv:vmcp:session:pend:S1:vmcpd-r-00"));
	assert_string_equal(buf, "thv:vmcp:session:pend:S1:vmcpd-r-00");
	assert_int_equal(pend_redis_key(buf, sizeof(buf), NULL, "s", "i"), 8);
	assert_string_equal(buf, "pend:s:i");
	/* too long: refused, never cut */
	assert_int_equal(pend_redis_key(small, sizeof(small), "p:", "session",
	    "vmcpd-r-0123"), 0);
	assert_int_equal(pend_redis_key(small, sizeof(small), "", "s",
	    "012345678"), 0);	/* 16 and its NUL */
	assert_int_equal(pend_redis_key(small, sizeof(small), "", "s",
	    "01234567"), 15);
}

static void
test_record(void **state)
{
	redisReply	 r;
	const char	*rec;
	size_t		 len;
	char		 text[] = "{\"sid\":\"s\"}";

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pend_redis_record(NULL, &rec, &len), -1);
	r.type = REDIS_REPLY_NIL;
	assert_int_equal(pend_redis_record(&r, &rec, &len), 0);
	assert_null(rec);
	assert_int_equal(len, 0);
	r.type = REDIS_REPLY_STRING;
	r.str = text;
	r.len = strlen(text);
	assert_int_equal(pend_redis_record(&r, &rec, &len), 1);
	assert_ptr_equal(rec, text);
	assert_int_equal(len, strlen(text));
	/* an empty record is none of ours */
	r.len = 0;
	assert_int_equal(pend_redis_record(&r, &rec, &len), -1);
	r.len = strlen(text);
	/* an error (GETDEL unknown: a Redis older than 6.2), or a number */
	r.type = REDIS_REPLY_ERROR;
	assert_int_equal(pend_redis_record(&r, &rec, &len), -1);
	assert_null(rec);
	r.type = REDIS_REPLY_INTEGER;
	assert_int_equal(pend_redis_record(&r, &rec, &len), -1);
	r.type = REDIS_REPLY_STATUS;
	assert_int_equal(pend_redis_record(&r, &rec, &len), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
