/*
 * The event replay buffer in Redis, the pure parts
 * (worker/state/stream_redis_codec.c): the keys, the scripts' arguments, and what
 * the append's and the read's answers mean.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/state/session_redis.h"
#include "worker/state/stream_redis.h"

static void
test_keys(void **state)
{
	char	ev[64], seq[64], small[24];
	size_t	seqlen = 0;

	(void)state;
	assert_int_equal(stream_redis_keys(ev, seq, sizeof(ev),
	    "thv:vmcp:session:", "abc", "", &seqlen),
	    strlen("thv:vmcp:session:sess:abc:ev"));
	assert_string_equal(ev, "thv:vmcp:session:sess:abc:ev");
	assert_string_equal(seq, "thv:vmcp:session:sess:abc:ev:seq");
	assert_int_equal(seqlen, strlen(seq));
	/* a POST stream's, beside the GET stream's */
	assert_int_equal(stream_redis_keys(ev, seq, sizeof(ev), "p:", "abc",
	    "00ff", &seqlen), strlen("p:sess:abc:ev:00ff"));
	assert_string_equal(ev, "p:sess:abc:ev:00ff");
	assert_string_equal(seq, "p:sess:abc:ev:00ff:seq");
	/* the record's key fits, its events' do not: refused, never cut */
	assert_int_equal(stream_redis_keys(small, small, sizeof(small), "p:",
	    "0123456789", NULL, &seqlen), 0);
}

static void
test_append_args(void **state)
{
	struct redis_args	sa;

	(void)state;
	stream_redis_append_args(&sa, "e", 1, "s", 1, "{}", 2, 1000, 86400000);
	assert_int_equal(sa.ra_argc, 8);
	assert_string_equal(sa.ra_argv[0], "EVALSHA");
	assert_int_equal(sa.ra_lens[1], 40);
	assert_string_equal(sa.ra_argv[2], "2");	/* two keys */
	assert_memory_equal(sa.ra_argv[3], "e", 1);
	assert_memory_equal(sa.ra_argv[4], "s", 1);
	assert_memory_equal(sa.ra_argv[5], "{}", 2);
	assert_int_equal(sa.ra_lens[5], 2);
	assert_string_equal(sa.ra_argv[6], "1000");
	assert_string_equal(sa.ra_argv[7], "86400000");
	/* Redis refuses LTRIM -0 and PEXPIRE 0 as meant */
	stream_redis_append_args(&sa, "e", 1, "s", 1, "{}", 2, 0, 0);
	assert_string_equal(sa.ra_argv[6], "1");
	assert_string_equal(sa.ra_argv[7], "1");
}

static void
test_read_args(void **state)
{
	struct redis_args	sa;
	char			max[16];

	(void)state;
	stream_redis_read_args(&sa, "e", 1, "s", 1, 41);
	assert_int_equal(sa.ra_argc, 7);
	assert_string_equal(sa.ra_argv[2], "2");
	assert_string_equal(sa.ra_argv[5], "41");
	(void)snprintf(max, sizeof(max), "%d", STREAM_RREAD_MAX);
	assert_string_equal(sa.ra_argv[6], max);
	/* no Last-Event-ID: from the newest */
	stream_redis_read_args(&sa, "e", 1, "s", 1, -7);
	assert_string_equal(sa.ra_argv[5], "-1");
	/* not the same script */
	stream_redis_append_args(&sa, "e", 1, "s", 1, "{}", 2, 1, 1);
	{
		char	sha[41];

		memcpy(sha, sa.ra_argv[1], 40);
		sha[40] = '\0';
		stream_redis_read_args(&sa, "e", 1, "s", 1, 0);
		assert_memory_not_equal(sha, sa.ra_argv[1], 40);
	}
}

static redisReply *
reply_new(int type, const char *s, long long n)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = type;
	if (s != NULL) {
		r->str = (char *)(uintptr_t)s;
		r->len = strlen(s);
	}
	r->integer = n;
	return r;
}

static void
test_appended(void **state)
{
	redisReply	*r;

	(void)state;
	assert_int_equal(stream_redis_appended(NULL), 0);
	r = reply_new(REDIS_REPLY_INTEGER, NULL, 12);
	assert_int_equal(stream_redis_appended(r), 12);
	r->integer = 0;
	assert_int_equal(stream_redis_appended(r), 0);
	r->type = REDIS_REPLY_ERROR;
	r->integer = 12;
	assert_int_equal(stream_redis_appended(r), 0);
	free(r);
}

static void
test_answer(void **state)
{
	redisReply	 top, *el[4];
	const char	*msg;
	uint64_t	 after = 0, id = 0;
	size_t		 count = 0, mlen = 0, i;

	(void)state;
	memset(&top, 0, sizeof(top));
	assert_int_equal(stream_redis_answer(NULL, &after, &count), -1);
	top.type = REDIS_REPLY_ERROR;
	assert_int_equal(stream_redis_answer(&top, &after, &count), -1);

	el[0] = reply_new(REDIS_REPLY_INTEGER, NULL, 4);
	el[1] = reply_new(REDIS_REPLY_STRING, "5 {\"a\":1}", 0);
	el[2] = reply_new(REDIS_REPLY_STRING, "6 ", 0);
	el[3] = reply_new(REDIS_REPLY_STRING, "07 x", 0);
	top.type = REDIS_REPLY_ARRAY;
	top.element = el;
	top.elements = 1;
	assert_int_equal(stream_redis_answer(&top, &after, &count), 0);
	assert_int_equal(after, 4);
	assert_int_equal(count, 0);
	top.elements = 4;
	assert_int_equal(stream_redis_answer(&top, &after, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(stream_redis_event(&top, 0, &id, &msg, &mlen), 0);
	assert_int_equal(id, 5);
	assert_int_equal(mlen, 7);
	assert_memory_equal(msg, "{\"a\":1}", 7);
	assert_int_equal(stream_redis_event(&top, 1, &id, &msg, &mlen), 0);
	assert_int_equal(id, 6);
	assert_int_equal(mlen, 0);
	/* a leading zero, no space, no id, past the end: not an event */
	assert_int_equal(stream_redis_event(&top, 2, &id, &msg, &mlen), -1);
	el[3]->str = (char *)(uintptr_t)"7";
	el[3]->len = 1;
	assert_int_equal(stream_redis_event(&top, 2, &id, &msg, &mlen), -1);
	el[3]->str = (char *)(uintptr_t)" x";
	el[3]->len = 2;
	assert_int_equal(stream_redis_event(&top, 2, &id, &msg, &mlen), -1);
	el[3]->str = (char *)(uintptr_t)"99999999999999999999 x";
	el[3]->len = strlen(el[3]->str);
	assert_int_equal(stream_redis_event(&top, 2, &id, &msg, &mlen), -1);
	assert_int_equal(stream_redis_event(&top, 3, &id, &msg, &mlen), -1);
	/* an event that is no string, a negative id: not understood */
	el[3]->type = REDIS_REPLY_NIL;
	assert_int_equal(stream_redis_answer(&top, &after, &count), -1);
	el[3]->type = REDIS_REPLY_STRING;
	el[0]->integer = -1;
	assert_int_equal(stream_redis_answer(&top, &after, &count), -1);
	el[0]->type = REDIS_REPLY_STRING;
	el[0]->integer = 4;
	assert_int_equal(stream_redis_answer(&top, &after, &count), -1);
	top.elements = 0;
	assert_int_equal(stream_redis_answer(&top, &after, &count), -1);
	for (i = 0; i < 4; i++)
		free(el[i]);
}

/* the append is one script: the list stays in id order */
static void
test_scripts(void **state)
{
	(void)state;
	assert_non_null(strstr(stream_redis_append_lua, "INCR"));
	assert_non_null(strstr(stream_redis_append_lua, "RPUSH"));
	assert_non_null(strstr(stream_redis_append_lua, "LTRIM"));
	assert_non_null(strstr(stream_redis_append_lua, "PEXPIRE"));
	assert_non_null(strstr(stream_redis_read_lua, "LRANGE"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_append_args),
		cmocka_unit_test(test_read_args),
		cmocka_unit_test(test_appended),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
