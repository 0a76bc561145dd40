/*
 * Unit tests for rate limits: the store's token buckets
 * (shared/store_bucket.c: all or none, refill from the stamp, retry
 * time) and the bucket keys (worker/auth/ratelimit.c: no name or scope
 * spells another bucket's key); in Redis (worker/auth/ratelimit_redis.c)
 * the reference's keys, the script's arguments and its answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/store.h"
#include "shared/store_limit.h"
#include "worker/redis/redis_codec.h"
#include "worker/auth/ratelimit.h"

static char	dir[64];

static int
setup(void **state)
{
	struct store *st;

	if (unit_store_dir_make("vmcpd-rl", dir, sizeof(dir)) == -1)
		return -1;
	if (store_open(&st, dir, 8 * 1024 * 1024, 64, 0) == -1)
		return -1;
	*state = st;
	return 0;
}

static int
teardown(void **state)
{
	store_close(*state);
	unit_store_dir_remove(dir);
	return 0;
}

static void
test_buckets_all_or_none(void **state)
{
	struct store		*st = *state;
	struct store_bucket	 b[2] = {
		/* 1 token a second */
		{ .sb_key = "big", .sb_klen = 3, .sb_max = 10,
		    .sb_period_ms = 10000 },
		/* 1 token per 30 s */
		{ .sb_key = "small", .sb_klen = 5, .sb_max = 2,
		    .sb_period_ms = 60000 },
	};
	uint64_t		 retry, now = 1000000;

	/* full when new: 2 calls pass both */
	assert_int_equal(store_buckets_take(st, b, 2, now, &retry), 0);
	assert_int_equal(store_buckets_take(st, b, 2, now, &retry), 0);
	/* small is empty: refused, and big keeps its 8 tokens */
	assert_int_equal(store_buckets_take(st, b, 2, now, &retry),
	    STORE_LIMITED);
	assert_int_equal(retry, 30000);
	/* big alone: 8 left, then empty; 1 s later one more */
	for (int i = 0; i < 8; i++)
		assert_int_equal(store_buckets_take(st, b, 1, now, &retry), 0);
	assert_int_equal(store_buckets_take(st, b, 1, now, &retry),
	    STORE_LIMITED);
	assert_int_equal(retry, 1000);
	assert_int_equal(store_buckets_take(st, b, 1, now + 1000, &retry), 0);
	assert_int_equal(store_buckets_take(st, b, 1, now + 1000, &retry),
	    STORE_LIMITED);
	/* a clock stepped back refills nothing and breaks nothing */
	assert_int_equal(store_buckets_take(st, b, 1, now, &retry),
	    STORE_LIMITED);
	/* small refills over its period: full after 60 s, capped at 2 */
	assert_int_equal(store_buckets_take(st, &b[1], 1, now + 600000,
	    &retry), 0);
	assert_int_equal(store_buckets_take(st, &b[1], 1, now + 600000,
	    &retry), 0);
	assert_int_equal(store_buckets_take(st, &b[1], 1, now + 600000,
	    &retry), STORE_LIMITED);
	/* no bucket: nothing to take */
	assert_int_equal(store_buckets_take(st, b, 0, now, &retry), 0);
}

/* a lease takes a share of what is left, at least 1, never more */
static void
test_buckets_lease(void **state)
{
	struct store		*st = *state;
	struct store_bucket	 b = { .sb_key = "lease", .sb_klen = 5,
	    .sb_max = 1000, .sb_period_ms = 1000000, .sb_lease = 64 };
	uint64_t		 retry, now = 5000000, total = 0;
	int			 calls = 0;

	assert_int_equal(store_buckets_take(st, &b, 1, now, &retry), 0);
	assert_int_equal(b.sb_taken, 15);	/* 1000 / 64 */
	total += b.sb_taken;
	/* the share shrinks to 1 as the bucket empties: all 1000 go */
	while (store_buckets_take(st, &b, 1, now, &retry) == 0) {
		assert_true(b.sb_taken >= 1);
		total += b.sb_taken;
		calls++;
	}
	assert_int_equal(total, 1000);
	assert_true(calls < 400);
	assert_int_equal(b.sb_taken, 0);
}

static void
test_keys_unforgeable(void **state)
{
	const char	*scope = "0123456789abcdef0123456789abcdef";
	uint8_t		 k[6][RATELIMIT_KEY_MAX];
	size_t		 n[6], i, j;

	(void)state;
	/* names that would collide if the parts were joined with ':' */
	n[0] = ratelimit_key(k[0], sizeof(k[0]), 'T', NULL, "a:b", 3);
	n[1] = ratelimit_key(k[1], sizeof(k[1]), 'T', NULL, "a", 1);
	n[2] = ratelimit_key(k[2], sizeof(k[2]), 'V', scope, "a", 1);
	n[3] = ratelimit_key(k[3], sizeof(k[3]), 'V', scope, "a\0", 2);
	n[4] = ratelimit_key(k[4], sizeof(k[4]), 'U', scope, NULL, 0);
	n[5] = ratelimit_key(k[5], sizeof(k[5]), 'S', NULL, NULL, 0);
	for (i = 0; i < 6; i++) {
		assert_true(n[i] > 0);
		for (j = 0; j < i; j++)
			assert_false(n[i] == n[j] &&
			    memcmp(k[i], k[j], n[i]) == 0);
	}
	/* a tool name spelling a per-user key's bytes is still a tool's */
	n[0] = ratelimit_key(k[0], sizeof(k[0]), 'T', NULL,
	    (const char *)k[2] + 2, n[2] - 2);
	assert_false(n[0] == n[2] && memcmp(k[0], k[2], n[0]) == 0);
	/* too long: no key */
	assert_int_equal(ratelimit_key(k[0], 10, 'T', NULL, "abcdefghij",
	    10), 0);
}

static void
test_redis_keys(void **state)
{
	const char	*uid = "0123456789abcdef0123456789abcdef";
	char		 k[256];
	size_t		 n;

	(void)state;
	n = ratelimit_redis_key(k, sizeof(k), "local", "eng", 'S', NULL,
	    NULL, 0);
	assert_string_equal(k, "thv:rl:{local:eng}:shared");
	assert_int_equal(n, strlen(k));
	(void)ratelimit_redis_key(k, sizeof(k), "local", "eng", 'T', NULL,
	    "search_xyz", 6);
	assert_string_equal(k, "thv:rl:{local:eng}:shared:tool:search");
	(void)ratelimit_redis_key(k, sizeof(k), "ns", "eng", 'U', uid, NULL,
	    0);
	assert_string_equal(k, "thv:rl:{ns:eng}:user:"
	    "0123456789abcdef0123456789abcdef");
	(void)ratelimit_redis_key(k, sizeof(k), "ns", "eng", 'V', uid, "t",
	    1);
	assert_string_equal(k, "thv:rl:{ns:eng}:user-tool:t:"
	    "0123456789abcdef0123456789abcdef");
	/* too long, a NUL in a name, an unknown kind: no key */
	assert_int_equal(ratelimit_redis_key(k, 20, "local", "eng", 'S',
	    NULL, NULL, 0), 0);
	assert_int_equal(ratelimit_redis_key(k, sizeof(k), "l", "e", 'T',
	    NULL, "a\0b", 3), 0);
	assert_int_equal(ratelimit_redis_key(k, sizeof(k), "l", "e", 'X',
	    NULL, NULL, 0), 0);
}

static void
test_redis_args(void **state)
{
	struct config_bucket		 b1 = { 10, 60000 }, b2 = { 3, 1500 };
	const struct config_bucket	*cb[2] = { &b1, &b2 };
	const char			*keys[2] = { "k1", "key2" };
	size_t				 klens[2] = { 2, 4 };
	struct redis_args		 ra;
	struct config_bucket		 none = { 0, 1000 };

	(void)state;
	assert_int_equal(ratelimit_redis_args(&ra, keys, klens, cb, 2, 5, 64),
	    0);
	assert_int_equal(ra.ra_argc, 3 + 2 + 6 + 2);
	/* the script by its SHA-1, as SCRIPT LOAD names it */
	assert_string_equal(ra.ra_argv[0], "EVALSHA");
	assert_int_equal(ra.ra_lens[1], 40);
	assert_int_equal(strspn(ra.ra_argv[1], "0123456789abcdef"), 40);
	assert_string_equal(ra.ra_argv[1], redis_script_sha(ratelimit_lua));
	assert_string_equal(ra.ra_argv[2], "2");
	assert_string_equal(ra.ra_argv[3], "k1");
	assert_int_equal(ra.ra_lens[4], 4);
	/* max, refill period in microseconds, expiry ceil(2 x period) s */
	assert_string_equal(ra.ra_argv[5], "10");
	assert_string_equal(ra.ra_argv[6], "60000000");
	assert_string_equal(ra.ra_argv[7], "120");
	assert_string_equal(ra.ra_argv[8], "3");
	assert_string_equal(ra.ra_argv[9], "1500000");
	assert_string_equal(ra.ra_argv[10], "3");
	/* the tokens asked of each: a batch's calls */
	assert_string_equal(ra.ra_argv[11], "5");
	/* and the lease's divisor */
	assert_string_equal(ra.ra_argv[12], "64");
	/* Redis's clock, as many as every bucket holds, hashes with the
	 * reference's fields */
	assert_non_null(strstr(ratelimit_lua, "redis.call('TIME')"));
	assert_non_null(strstr(ratelimit_lua, "got = math.floor(n)"));
	assert_non_null(strstr(ratelimit_lua, "'EXPIRE', KEYS[i], ARGV[3 * i]"));
	assert_int_equal(ratelimit_redis_args(&ra, keys, klens, cb, 0, 1, 0),
	    -1);
	assert_int_equal(ratelimit_redis_args(&ra, keys, klens, cb, 2, 0, 0),
	    -1);
	assert_int_equal(ratelimit_redis_args(&ra, keys, klens, cb,
	    RATELIMIT_BUCKETS + 1, 1, 0), -1);
	cb[1] = &none;
	assert_int_equal(ratelimit_redis_args(&ra, keys, klens, cb, 2, 1, 0),
	    -1);
}

/* the verdict of a RESP answer, as hiredis reads it off the wire */
static uint64_t	leased;

static enum ratelimit_verdict
verdict_of(const char *resp, unsigned int want, unsigned int *granted,
    uint64_t *retry_ms)
{
	redisReader		*rr;
	void			*reply = NULL;
	enum ratelimit_verdict	 v;

	assert_non_null(rr = redisReaderCreate());
	assert_int_equal(redisReaderFeed(rr, resp, strlen(resp)), REDIS_OK);
	assert_int_equal(redisReaderGetReply(rr, &reply), REDIS_OK);
	v = ratelimit_redis_verdict(reply, want, granted, retry_ms, &leased);
	if (reply != NULL)
		freeReplyObject(reply);
	redisReaderFree(rr);
	return v;
}

static void
test_redis_verdict(void **state)
{
	uint64_t	 retry;
	unsigned int	 g;

	(void)state;
	assert_int_equal(verdict_of("*3\r\n:1\r\n:0\r\n:0\r\n", 1, &g, &retry),
	    RATELIMIT_OK);
	assert_int_equal(g, 1);
	assert_int_equal(retry, 0);
	assert_int_equal(verdict_of("*3\r\n:0\r\n:2500\r\n:0\r\n", 1, &g,
	    &retry), RATELIMIT_LIMITED);
	assert_int_equal(g, 0);
	assert_int_equal(retry, 2500);
	/* a wait rounded to nothing still waits */
	assert_int_equal(verdict_of("*3\r\n:0\r\n:0\r\n:0\r\n", 1, &g, &retry),
	    RATELIMIT_LIMITED);
	assert_int_equal(retry, 1);
	/* a batch of 5: all granted, or the first 3 */
	assert_int_equal(verdict_of("*3\r\n:5\r\n:0\r\n:0\r\n", 5, &g, &retry),
	    RATELIMIT_OK);
	assert_int_equal(g, 5);
	assert_int_equal(verdict_of("*3\r\n:3\r\n:700\r\n:0\r\n", 5, &g,
	    &retry), RATELIMIT_LIMITED);
	assert_int_equal(g, 3);
	assert_int_equal(retry, 700);
	/* more than asked for would admit calls without a token */
	assert_int_equal(verdict_of("*3\r\n:6\r\n:0\r\n:0\r\n", 5, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(g, 0);
	/* what the script never answers: an error (the call fails open) */
	assert_int_equal(verdict_of("-NOSCRIPT x\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*1\r\n:1\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*3\r\n$1\r\n1\r\n:0\r\n:0\r\n", 1, &g,
	    &retry), RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*3\r\n:2\r\n:0\r\n:0\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*3\r\n:-1\r\n:0\r\n:0\r\n", 5, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*3\r\n:0\r\n:-5\r\n:0\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of("*-1\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
	assert_int_equal(verdict_of(":1\r\n", 1, &g, &retry), RATELIMIT_ERROR);
	assert_int_equal(ratelimit_redis_verdict(NULL, 1, &g, &retry,
	    &leased), RATELIMIT_ERROR);
	/* a lease with a batch granted whole, never with less */
	assert_int_equal(verdict_of("*3\r\n:5\r\n:0\r\n:100\r\n", 5, &g,
	    &retry), RATELIMIT_OK);
	assert_int_equal(g, 5);
	assert_int_equal(leased, 100);
	assert_int_equal(verdict_of("*3\r\n:3\r\n:700\r\n:1\r\n", 5, &g,
	    &retry), RATELIMIT_ERROR);
	assert_int_equal(leased, 0);
	assert_int_equal(verdict_of("*3\r\n:5\r\n:0\r\n:-1\r\n", 5, &g,
	    &retry), RATELIMIT_ERROR);
	/* the answer before leases (two elements): not this script's */
	assert_int_equal(verdict_of("*2\r\n:1\r\n:0\r\n", 1, &g, &retry),
	    RATELIMIT_ERROR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_buckets_all_or_none,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_buckets_lease, setup,
		    teardown),
		cmocka_unit_test(test_keys_unforgeable),
		cmocka_unit_test(test_redis_keys),
		cmocka_unit_test(test_redis_args),
		cmocka_unit_test(test_redis_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
