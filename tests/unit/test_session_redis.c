/*
 * Legacy sessions in Redis, the pure parts (worker/state/session_redis.c):
 * the key, the put script's arguments, what the get script's answers
 * mean, and the record's version stamp through the codec.
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
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/state/session_redis.h"

static void
test_key(void **state)
{
	char	buf[64], small[10];

	(void)state;
	assert_int_equal(redis_key(buf, sizeof(buf), "thv:vmcp:session:",
	    REDIS_KIND_SESSION, "abc", NULL),
	    strlen("thv:vmcp:session:sess:abc"));
	assert_string_equal(buf, "thv:vmcp:session:sess:abc");
	assert_int_equal(redis_key(buf, sizeof(buf), "", REDIS_KIND_SESSION,
	    "x", NULL), 6);
	assert_string_equal(buf, "sess:x");
	/* too long: refused, never cut */
	assert_int_equal(redis_key(small, sizeof(small), "p:",
	    REDIS_KIND_SESSION, "0123456789", NULL), 0);
}

static void
test_put_args(void **state)
{
	struct redis_args	sa;

	(void)state;
	assert_int_equal(session_redis_put_args(&sa, "k", 1, "{}", 2, 5000,
	    1000, 0), 0);
	assert_int_equal(sa.ra_argc, 7);
	assert_string_equal(sa.ra_argv[0], "EVALSHA");
	assert_int_equal(sa.ra_lens[1], 40);
	assert_string_equal(sa.ra_argv[2], "1");	/* one key */
	assert_memory_equal(sa.ra_argv[3], "k", 1);
	assert_memory_equal(sa.ra_argv[4], "{}", 2);
	assert_string_equal(sa.ra_argv[5], "4000");	/* PEXPIRE ms */
	assert_string_equal(sa.ra_argv[6], "0");
	/* a new session; one already past its expiry lives 1 ms */
	assert_int_equal(session_redis_put_args(&sa, "k", 1, "{}", 2, 900,
	    1000, 1), 0);
	assert_string_equal(sa.ra_argv[5], "1");
	assert_string_equal(sa.ra_argv[6], "1");
	/* no key: refused */
	assert_int_equal(session_redis_put_args(&sa, "", 0, "{}", 2, 900,
	    1000, 1), -1);
}

static redisReply *
str_reply(const char *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_STRING;
	r->str = (char *)(uintptr_t)s;
	r->len = strlen(s);
	return r;
}

static void
test_verdict(void **state)
{
	redisReply	 top, *el[2];
	uint64_t	 stamp = 0;
	const char	*rec = NULL;
	size_t		 rlen = 0;

	(void)state;
	memset(&top, 0, sizeof(top));
	assert_int_equal(session_redis_verdict(NULL, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	top.type = REDIS_REPLY_INTEGER;
	top.integer = 0;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_GONE);
	top.type = REDIS_REPLY_ERROR;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);

	el[0] = str_reply("42");
	el[1] = str_reply("{\"v\":1}");
	top.type = REDIS_REPLY_ARRAY;
	top.element = el;
	top.elements = 1;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_SAME);
	assert_int_equal(stamp, 42);
	top.elements = 2;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_NEW);
	assert_int_equal(rlen, 7);
	assert_memory_equal(rec, "{\"v\":1}", 7);

	/* a stamp that is no positive number, a record that is no string */
	el[0]->str = (char *)(uintptr_t)"0";
	el[0]->len = 1;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	el[0]->str = (char *)(uintptr_t)"7x";
	el[0]->len = 2;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	el[0]->str = (char *)(uintptr_t)"99999999999999999999";
	el[0]->len = 20;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	el[0]->str = (char *)(uintptr_t)"7";
	el[0]->len = 1;
	el[1]->type = REDIS_REPLY_NIL;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	top.elements = 0;
	assert_int_equal(session_redis_verdict(&top, &stamp, &rec, &rlen),
	    SESSION_R_ERROR);
	free(el[0]);
	free(el[1]);
}

/* the copy's stamp goes through the codec; the Redis record has none */
static void
test_stamp_codec(void **state)
{
	struct session	 s, d;
	char		*buf;
	size_t		 len;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.s_version = strdup("2025-11-25");
	s.s_owner = strdup("");
	s.s_client_caps = json_object();
	s.s_max_ms = 10;
	assert_int_equal(session_encode(&s, &buf, &len), 0);
	assert_null(strstr(buf, "\"rs\""));
	assert_int_equal(session_decode(buf, len, &d), 0);
	assert_int_equal(d.s_rstamp, 0);
	session_clear(&d);
	free(buf);

	s.s_rstamp = 12345678901ULL;
	assert_int_equal(session_encode(&s, &buf, &len), 0);
	assert_int_equal(session_decode(buf, len, &d), 0);
	assert_true(d.s_rstamp == 12345678901ULL);
	session_clear(&d);
	free(buf);
	session_clear(&s);

	/* a negative stamp is a corrupt record */
	buf = strdup("{\"v\":1,\"pv\":\"x\",\"owner\":\"\",\"init\":true,"
	    "\"created\":0,\"seen\":0,\"max\":0,\"backends\":{},\"rs\":-1}");
	assert_int_equal(session_decode(buf, strlen(buf), &d), -1);
	free(buf);
}

/* the scripts are what EVALSHA names: keys and arguments as sent */
static void
test_scripts(void **state)
{
	(void)state;
	assert_non_null(strstr(session_redis_put_lua, "HINCRBY"));
	assert_non_null(strstr(session_redis_put_lua, "PEXPIRE"));
	/* a write never brings back a session ended elsewhere */
	assert_non_null(strstr(session_redis_put_lua, "ARGV[3] ~= '1'"));
	assert_non_null(strstr(session_redis_get_lua, "v == ARGV[1]"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_put_args),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_stamp_codec),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
