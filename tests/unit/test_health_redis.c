/*
 * Circuit breakers in Redis, the pure parts: the key and the script's
 * answer (worker/upstream/health_redis_codec.c), and the fleet's breaker taken into
 * the host's copy (shared/health.c breaker_adopt_step()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/health.h"
#include "worker/redis/redis_codec.h"
#include "worker/upstream/health_redis.h"

static void
test_key(void **state)
{
	char	buf[128], small[16];

	(void)state;
	assert_int_equal(redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    REDIS_KIND_HEALTH, "b1", NULL),
	    strlen("thv:vmcp:session:health:b1"));
	assert_string_equal(buf, "thv:vmcp:session:health:b1");
	assert_int_equal(redis_key(buf, sizeof(buf), NULL, REDIS_KIND_HEALTH,
	    "b", NULL), 8);
	assert_string_equal(buf, "health:b");
	/* 15 characters fit in 16 bytes, 16 do not */
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_HEALTH,
	    "abcdefgh", NULL), 15);
	assert_int_equal(redis_key(small, sizeof(small), "", REDIS_KIND_HEALTH,
	    "abcdefghi", NULL), 0);
	assert_non_null(strstr(health_redis_lua, "TIME"));
	assert_int_equal(strlen(redis_script_sha(health_redis_lua)), 40);
}

static void
test_decode(void **state)
{
	redisReply	 r, e[3], *els[3] = { &e[0], &e[1], &e[2] };
	uint32_t	 f;
	uint64_t	 age;

	(void)state;
	memset(&r, 0, sizeof(r));
	memset(e, 0, sizeof(e));
	assert_int_equal(health_redis_decode(NULL, &f, &age), -1);
	r.type = REDIS_REPLY_INTEGER;
	assert_int_equal(health_redis_decode(&r, &f, &age), -1);
	r.type = REDIS_REPLY_ARRAY;
	r.element = els;
	r.elements = 2;
	e[0].type = e[1].type = e[2].type = REDIS_REPLY_INTEGER;
	assert_int_equal(health_redis_decode(&r, &f, &age), -1);
	r.elements = 3;
	/* closed */
	e[0].integer = 2;
	e[1].integer = 0;
	e[2].integer = 1000000;
	assert_int_equal(health_redis_decode(&r, &f, &age), 0);
	assert_int_equal(f, 2);
	assert_true(age == BREAKER_SHARED_CLOSED);
	/* open for 1500 ms */
	e[1].integer = 998500;
	assert_int_equal(health_redis_decode(&r, &f, &age), 0);
	assert_int_equal(age, 1500);
	/* opened "after" now: just now */
	e[1].integer = 1000001;
	assert_int_equal(health_redis_decode(&r, &f, &age), 0);
	assert_int_equal(age, 0);
	/* negative, or not an integer: not understood */
	e[0].integer = -1;
	assert_int_equal(health_redis_decode(&r, &f, &age), -1);
	e[0].integer = 1;
	e[2].type = REDIS_REPLY_STRING;
	assert_int_equal(health_redis_decode(&r, &f, &age), -1);
	e[2].type = REDIS_REPLY_INTEGER;
	els[1] = NULL;
	assert_int_equal(health_redis_decode(&r, &f, &age), -1);
	/* a count past 32 bits is capped */
	els[1] = &e[1];
	e[0].integer = (long long)UINT32_MAX + 5;
	assert_int_equal(health_redis_decode(&r, &f, &age), 0);
	assert_int_equal(f, UINT32_MAX);
}

static void
test_adopt(void **state)
{
	struct breaker	b;

	(void)state;
	memset(&b, 0, sizeof(b));
	/* closed everywhere: nothing */
	assert_int_equal(breaker_adopt_step(&b, 0, BREAKER_SHARED_CLOSED,
	    10000, 0), 0);
	/* open on the fleet for 2 s: open here since then */
	assert_int_equal(breaker_adopt_step(&b, 4, 2000, 10000, 0), 1);
	assert_int_equal(b.bk_state, BREAKER_OPEN);
	assert_int_equal(b.bk_fails, 4);
	assert_int_equal(b.bk_opened_ms, 8000);
	/* the same open read again: no change */
	assert_int_equal(breaker_adopt_step(&b, 4, 2500, 10500, 0), 0);
	/* read again a little later on another clock: the same opening,
	 * a half-open trial under way kept */
	b.bk_state = BREAKER_HALF_OPEN;
	b.bk_lease_ms = 12345;
	assert_int_equal(breaker_adopt_step(&b, 4, 2000, 10000 +
	    BREAKER_ADOPT_SLACK_MS - 1, 0), 0);
	assert_int_equal(b.bk_state, BREAKER_HALF_OPEN);
	assert_int_equal(b.bk_lease_ms, 12345);
	/* half-open here, opened again on the fleet later: open again */
	b.bk_state = BREAKER_HALF_OPEN;
	b.bk_lease_ms = 99999;
	assert_int_equal(breaker_adopt_step(&b, 5, 100, 20000, 0), 1);
	assert_int_equal(b.bk_state, BREAKER_OPEN);
	assert_int_equal(b.bk_opened_ms, 19900);
	assert_int_equal(b.bk_lease_ms, 0);
	/* opened here later than on the fleet: kept */
	b.bk_opened_ms = 30000;
	assert_int_equal(breaker_adopt_step(&b, 5, 100, 30050, 0), 0);
	assert_int_equal(b.bk_opened_ms, 30000);
	/* closed on the fleet as read before this host opened it (the
	 * read left at 29 s): kept */
	assert_int_equal(breaker_adopt_step(&b, 0, BREAKER_SHARED_CLOSED,
	    31000, 29000), 0);
	assert_int_equal(b.bk_state, BREAKER_OPEN);
	/* closed on the fleet, read since: closes here */
	assert_int_equal(breaker_adopt_step(&b, 0, BREAKER_SHARED_CLOSED,
	    31000, 30500), 1);
	assert_int_equal(b.bk_state, BREAKER_CLOSED);
	assert_int_equal(b.bk_fails, 0);
	/* an age past the clock: opened at 0 */
	assert_int_equal(breaker_adopt_step(&b, 3, 50000, 1000, 0), 1);
	assert_int_equal(b.bk_opened_ms, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_adopt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
