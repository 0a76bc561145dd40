/*
 * Pending relayed requests in Redis, the pure parts
 * (worker/relay/pending_redis_codec.c): the key, what GETDEL's and the take
 * script's answers mean, the answer script's verdicts, the scripts'
 * names (SHA-1) as EVALSHA sends them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/relay/pending_redis.h"

static void
test_key(void **state)
{
	char	buf[128], small[16];

	(void)state;
	assert_int_equal(redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    REDIS_KIND_PEND, "S1", "vmcpd-r-00", NULL),
	    strlen("thv:vmcp:session:pend:S1:vmcpd-r-00"));
	assert_string_equal(buf, "thv:vmcp:session:pend:S1:vmcpd-r-00");
	assert_int_equal(redis_key(buf, sizeof(buf), NULL, REDIS_KIND_PEND,
	    "s", "i", NULL), 8);
	assert_string_equal(buf, "pend:s:i");
	/* too long: refused, never cut */
	assert_int_equal(redis_key(small, sizeof(small), "p:", REDIS_KIND_PEND,
	    "session", "vmcpd-r-0123", NULL), 0);
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_PEND,
	    "s", "012345678", NULL), 0);	/* 16 and its NUL */
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_PEND,
	    "s", "01234567", NULL), 15);
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

static void
test_answered(void **state)
{
	redisReply	r;
	char		text[] = "1";

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pend_redis_answered(NULL), -2);
	r.type = REDIS_REPLY_INTEGER;
	r.integer = 1;
	assert_int_equal(pend_redis_answered(&r), 1);	/* published */
	r.integer = 0;
	assert_int_equal(pend_redis_answered(&r), 0);	/* no such ask */
	r.integer = -1;
	assert_int_equal(pend_redis_answered(&r), -1);	/* answered before */
	r.integer = 2;
	assert_int_equal(pend_redis_answered(&r), -2);
	r.integer = -3;
	assert_int_equal(pend_redis_answered(&r), -2);
	r.type = REDIS_REPLY_STRING;
	r.str = text;
	r.len = 1;
	assert_int_equal(pend_redis_answered(&r), -2);
	r.type = REDIS_REPLY_ERROR;
	assert_int_equal(pend_redis_answered(&r), -2);
}

static void
test_scripts(void **state)
{
	const char	*sha[PEND_NSCRIPTS];
	int		 i, j;
	size_t		 k;

	(void)state;
	for (i = 0; i < PEND_NSCRIPTS; i++) {
		sha[i] = redis_script_sha(pend_redis_lua[i]);
		assert_int_equal(strlen(sha[i]), 40);
		for (k = 0; k < 40; k++)
			assert_non_null(strchr("0123456789abcdef", sha[i][k]));
		/* the same name each time */
		assert_string_equal(sha[i],
		    redis_script_sha(pend_redis_lua[i]));
		for (j = 0; j < i; j++)
			assert_string_not_equal(sha[i], sha[j]);
	}
	/* the answer is taken once: HSETNX, and the id published */
	assert_non_null(strstr(pend_redis_lua[PEND_ANSWER], "HSETNX"));
	assert_non_null(strstr(pend_redis_lua[PEND_ANSWER], "PUBLISH"));
	assert_non_null(strstr(pend_redis_lua[PEND_ASK], "PEXPIRE"));
	assert_non_null(strstr(pend_redis_lua[PEND_TAKE], "DEL"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_answered),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
