/*
 * The pure parts of the worker's Redis use (worker/redis/redis_codec.c): the
 * keys every kind of record shares, a script's SHA-1, a command's
 * arguments as they go on the wire, the invalidation messages of
 * Redis's client-side caching, read from the wire, and the read-or-lock
 * of a record one node makes for all (redis_flight.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_flight.h"

static void
test_key(void **state)
{
	char	buf[64], small[12];

	(void)state;
	/* the kind alone, a part, several parts */
	assert_int_equal(redis_key(buf, sizeof(buf), "p:", "k", NULL), 3);
	assert_string_equal(buf, "p:k");
	assert_int_equal(redis_key(buf, sizeof(buf), NULL, "sess", "id",
	    "ev", "seq", NULL), strlen("sess:id:ev:seq"));
	assert_string_equal(buf, "sess:id:ev:seq");
	/* 11 characters fit in 12 bytes, 12 do not: refused, never cut */
	assert_int_equal(redis_key(small, sizeof(small), "ab", "cd", "efghij",
	    NULL), 11);
	assert_int_equal(redis_key(small, sizeof(small), "ab", "cd",
	    "efghijk", NULL), 0);
	/* the prefix and kind alone too long; a later part too long */
	assert_int_equal(redis_key(small, sizeof(small), "0123456789", "ab",
	    NULL), 0);
	assert_int_equal(redis_key(small, sizeof(small), "", "a", "b", "c",
	    "0123456", NULL), 0);
	assert_int_equal(redis_key(small, 0, "", "a", NULL), 0);
	/* printf's format */
	assert_int_equal(redis_keyf(buf, sizeof(buf), "x:{%s}:%.*s", "n", 2,
	    "abc"), strlen("x:{n}:ab"));
	assert_string_equal(buf, "x:{n}:ab");
	assert_int_equal(redis_keyf(small, sizeof(small), "%s",
	    "0123456789ab"), 0);
}

static const char script_a[] = "return 1\n";
static const char script_b[] = "return 2\n";

static void
test_sha(void **state)
{
	const char	*a, *b;

	(void)state;
	a = redis_script_sha(script_a);
	b = redis_script_sha(script_b);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(strlen(a), REDIS_SHA_LEN);
	assert_int_equal(strspn(a, "0123456789abcdef"), REDIS_SHA_LEN);
	/* SHA-1 of "return 1\n", as SCRIPT LOAD answers it */
	assert_string_equal(a, "48df9b519ca145c867b895f740b37bd891e887af");
	assert_string_not_equal(a, b);
	assert_ptr_equal(redis_script_sha(script_a), a);
}

static void
test_args(void **state)
{
	struct redis_args	a;
	int			i;

	(void)state;
	redis_args_evalsha(&a, script_a, 2);
	redis_args_pushn(&a, "k1xx", 2);
	redis_args_push(&a, "k2");
	redis_args_push_u64(&a, 18446744073709551615ULL);
	redis_args_push_i64(&a, -1);
	assert_int_equal(a.ra_over, 0);
	assert_int_equal(a.ra_argc, 7);
	assert_string_equal(a.ra_argv[0], "EVALSHA");
	assert_int_equal(a.ra_lens[0], 7);
	assert_memory_equal(a.ra_argv[1], redis_script_sha(script_a), 40);
	assert_int_equal(a.ra_lens[1], 40);
	assert_string_equal(a.ra_argv[2], "2");
	assert_int_equal(a.ra_lens[2], 1);
	assert_memory_equal(a.ra_argv[3], "k1", 2);
	assert_int_equal(a.ra_lens[3], 2);
	assert_int_equal(a.ra_lens[4], 2);
	assert_string_equal(a.ra_argv[5], "18446744073709551615");
	assert_int_equal(a.ra_lens[5], 20);
	assert_string_equal(a.ra_argv[6], "-1");
	assert_int_equal(a.ra_lens[6], 2);
	/* past the room: marked, never sent */
	redis_args_init(&a);
	for (i = 0; i < REDIS_ARGS_MAX; i++)
		redis_args_push(&a, "x");
	assert_int_equal(a.ra_over, 0);
	redis_args_push(&a, "x");
	assert_int_equal(a.ra_over, 1);
	assert_int_equal(a.ra_argc, REDIS_ARGS_MAX);
	redis_args_init(&a);
	for (i = 0; i < REDIS_ARGS_NUMS; i++)
		redis_args_push_u64(&a, (uint64_t)i);
	assert_int_equal(a.ra_over, 0);
	assert_string_equal(a.ra_argv[REDIS_ARGS_NUMS - 1], "15");
	redis_args_push_u64(&a, 1);
	assert_int_equal(a.ra_over, 1);
	/* a NULL string is no argument */
	redis_args_init(&a);
	redis_args_push(&a, NULL);
	assert_int_equal(a.ra_over, 1);
}

/* RESP bytes as hiredis reads them */
static redisReply *
resp(const char *wire)
{
	redisReader	*rr;
	void		*r = NULL;

	assert_non_null(rr = redisReaderCreate());
	assert_int_equal(redisReaderFeed(rr, wire, strlen(wire)), REDIS_OK);
	assert_int_equal(redisReaderGetReply(rr, &r), REDIS_OK);
	assert_non_null(r);
	redisReaderFree(rr);
	return r;
}

static char	inval_seen[256];

static void
inval_each(const char *key, size_t len, void *arg)
{
	(void)arg;
	if (key == NULL)
		strcat(inval_seen, "*;");
	else
		(void)snprintf(inval_seen + strlen(inval_seen),
		    sizeof(inval_seen) - strlen(inval_seen), "%.*s;",
		    (int)len, key);
}

static void
test_inval(void **state)
{
	static const struct {
		const char	*wire;
		int		 rc;
		const char	*seen;
	} cases[] = {
		{ "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n"
		    ":2\r\n", 1, "" },
		{ "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
		    "*2\r\n$6\r\nsess:a\r\n$6\r\nsess:b\r\n", 0,
		    "sess:a;sess:b;" },
		/* FLUSHALL: every key */
		{ "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
		    "$-1\r\n", 0, "*;" },
		/* a key not understood counts as every key */
		{ "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
		    "*2\r\n:1\r\n$1\r\nk\r\n", 0, "*;k;" },
		{ "*2\r\n$7\r\nmessage\r\n$1\r\nx\r\n", -1, "" },
		{ "*3\r\n$4\r\npong\r\n$0\r\n\r\n$0\r\n\r\n", -1, "" },
		{ ":1\r\n", -1, "" },
	};
	redisReply	*r;
	size_t		 i;

	(void)state;
	assert_int_equal(redis_inval_each(NULL, inval_each, NULL), -1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		inval_seen[0] = '\0';
		r = resp(cases[i].wire);
		assert_int_equal(redis_inval_each(r, inval_each, NULL),
		    cases[i].rc);
		assert_string_equal(inval_seen, cases[i].seen);
		freeReplyObject(r);
	}
}

static void
test_flight_answer(void **state)
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
	assert_int_equal(redis_flight_answer(NULL, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	r.type = REDIS_REPLY_INTEGER;
	r.integer = 1;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms), REDIS_FLIGHT_MINE);
	r.integer = 0;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms), REDIS_FLIGHT_BUSY);
	r.integer = 2;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	r.type = REDIS_REPLY_ERROR;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	/* {record, its time to live} */
	r.type = REDIS_REPLY_ARRAY;
	r.elements = 2;
	r.element = els;
	tok.type = REDIS_REPLY_STRING;
	tok.str = sealed;
	tok.len = sizeof(sealed) - 1;
	ttl.type = REDIS_REPLY_INTEGER;
	ttl.integer = 90000;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms), REDIS_FLIGHT_HIT);
	assert_ptr_equal(s, sealed);
	assert_int_equal(len, sizeof(sealed) - 1);
	assert_int_equal(ms, 90000);
	/* a time to live that is none, an empty record, other shapes */
	ttl.integer = 0;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	assert_null(s);
	ttl.integer = -1;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	ttl.integer = 1;
	tok.len = 0;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	tok.len = 3;
	ttl.type = REDIS_REPLY_STRING;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	ttl.type = REDIS_REPLY_INTEGER;
	r.elements = 1;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms),
	    REDIS_FLIGHT_ERROR);
	r.elements = 2;
	assert_int_equal(redis_flight_answer(&r, &s, &len, &ms), REDIS_FLIGHT_HIT);
}

static void
test_flight_scripts(void **state)
{
	(void)state;
	assert_int_equal(strlen(redis_script_sha(redis_flight_get_lua)), 40);
	assert_string_not_equal(redis_script_sha(redis_flight_get_lua),
	    redis_script_sha(redis_flight_done_lua));
	/* the lock is taken only if free, with a life */
	assert_non_null(strstr(redis_flight_get_lua, "'NX', 'PX'"));
	/* and let go only by its holder */
	assert_non_null(strstr(redis_flight_done_lua,
	    "redis.call('GET', KEYS[2]) == ARGV[3]"));
}

/* whether Redis persists: CONFIG GET's answers, and what is said */
static void
test_persist(void **state)
{
	static const struct {
		const char	*aof;	/* wire */
		const char	*save;
		int		 rc;
		const char	*said;
	} cases[] = {
		{ "*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n",
		    "*2\r\n$4\r\nsave\r\n$0\r\n\r\n", 0, "" },
		{ "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n",
		    "*2\r\n$4\r\nsave\r\n$0\r\n\r\n", 1,
		    "no persistence (appendonly no, save \"\"): a Redis restart "
		    "loses every session, relay, handle, token and bucket vmcpd "
		    "keeps there; run it with appendonly yes" },
		{ "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n",
		    "*2\r\n$4\r\nsave\r\n$9\r\n3600 1 60\r\n", 1,
		    "appendonly no: a Redis restart loses what vmcpd wrote "
		    "since its last snapshot (save \"3600 1 60\"), sessions "
		    "among it; run it with appendonly yes" },
		/* CONFIG refused or renamed: nothing known, nothing said */
		{ "-NOPERM this user has no permissions\r\n",
		    "*2\r\n$4\r\nsave\r\n$0\r\n\r\n", -1, "" },
		{ "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n",
		    "-ERR unknown command 'CONFIG'\r\n", -1, "" },
		{ "*0\r\n", "*0\r\n", -1, "" },
	};
	redisReply	*a, *b;
	char		 buf[320];
	size_t		 i;

	(void)state;
	assert_null(redis_config_value(NULL));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a = resp(cases[i].aof);
		b = resp(cases[i].save);
		buf[0] = '\0';
		assert_int_equal(redis_persist_verdict(redis_config_value(a),
		    redis_config_value(b), buf, sizeof(buf)), cases[i].rc);
		assert_string_equal(buf, cases[i].said);
		freeReplyObject(a);
		freeReplyObject(b);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_persist),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_sha),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_inval),
		cmocka_unit_test(test_flight_answer),
		cmocka_unit_test(test_flight_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
