/*
 * Pending relayed requests in Redis, the pure parts: the scripts and
 * what GETDEL answered (the key is worker/redis/redis.h's redis_key()).
 * worker/relay/pending_redis.c sends the commands.
 */

#include <hiredis/hiredis.h>

#include "worker/relay/pending_redis.h"

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

int
pend_redis_answered(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer < -1 ||
	    r->integer > 1)
		return -2;
	return (int)r->integer;
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
