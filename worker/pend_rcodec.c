/*
 * Pending relayed requests in Redis, the pure parts: the key and what
 * GETDEL answered.  worker/pend_redis.c sends the commands.
 */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "pend_redis.h"
#include "session_redis.h"

static const char pend_ask_lua[] =
"redis.call('HSET', KEYS[1], 'c', ARGV[1])\n"
"redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"return 1\n";

/* once: a second answer (another node, a replay) is refused */
static const char pend_answer_lua[] =
"local c = redis.call('HGET', KEYS[1], 'c')\n"
"if not c then\n"
"  return 0\n"
"end\n"
"if redis.call('HSETNX', KEYS[1], 'a', ARGV[1]) == 0 then\n"
"  return -1\n"
"end\n"
"redis.call('PUBLISH', c, ARGV[2])\n"
"return 1\n";

static const char pend_take_lua[] =
"local a = redis.call('HGET', KEYS[1], 'a')\n"
"if a then\n"
"  redis.call('DEL', KEYS[1])\n"
"end\n"
"return a\n";

const char *const pend_redis_lua[PEND_NSCRIPTS] = {
	pend_ask_lua, pend_answer_lua, pend_take_lua
};

const char *
pend_redis_sha(enum pend_script which)
{
	static char	hex[PEND_NSCRIPTS][41];

	return session_redis_sha(pend_redis_lua[which],
	    strlen(pend_redis_lua[which]), hex[which]);
}

int
pend_redis_answered(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < -1 ||
	    r->integer > 1)
		return -2;
	return (int)r->integer;
}

size_t
pend_redis_key(char *buf, size_t size, const char *prefix, const char *sid,
    const char *id)
{
	int n;

	n = snprintf(buf, size, "%spend:%s:%s", prefix != NULL ? prefix : "",
	    sid, id);
	if (n < 0 || (size_t)n >= size)
		return 0;
	return (size_t)n;
}

int
pend_redis_record(const redisReply *r, const char **rec, size_t *len)
{
	*rec = NULL;
	*len = 0;
	if (r == NULL)
		return -1;
	if (r->type == REDIS_REPLY_NIL)
		return 0;
	if (r->type != REDIS_REPLY_STRING || r->str == NULL || r->len == 0)
		return -1;
	*rec = r->str;
	*len = r->len;
	return 1;
}
