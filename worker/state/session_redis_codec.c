/*
 * Legacy sessions in Redis, the pure parts (docs/ARCHITECTURE.md,
 * Beyond one host): the scripts and their arguments, what an answer
 * means (the key is worker/redis/redis.h's redis_key()).
 * worker/state/session_redis.c sends them.
 */
#include <errno.h>
#include <stdlib.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/state/session_redis.h"

/*
 * put: KEYS[1] the session's key, ARGV[1] the record, ARGV[2] its time
 * to live in ms, ARGV[3] "1" for a new session.  Bumps the stamp and
 * answers it, or 0 when the session is gone (a write after a DELETE or
 * the expiry elsewhere never brings it back).
 */
const char session_redis_put_lua[] =
"if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[1]) == 0 then\n"
"  return 0\n"
"end\n"
"local v = redis.call('HINCRBY', KEYS[1], 'v', 1)\n"
"redis.call('HSET', KEYS[1], 'r', ARGV[1])\n"
"redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"return v\n";

/*
 * get: KEYS[1] the session's key, ARGV[1] the stamp of this host's
 * copy.  0 when there is no such session, {stamp} when the copy is
 * Redis's, {stamp, record} when it is not.
 */
const char session_redis_get_lua[] =
"local v = redis.call('HGET', KEYS[1], 'v')\n"
"if not v then\n"
"  return 0\n"
"end\n"
"if v == ARGV[1] then\n"
"  return {v}\n"
"end\n"
"return {v, redis.call('HGET', KEYS[1], 'r')}\n";

int
session_redis_put_args(struct redis_args *a, const char *key, size_t klen,
    const char *rec, size_t rlen, uint64_t expires_ms, uint64_t now_ms,
    int create)
{
	redis_args_evalsha(a, session_redis_put_lua, 1);
	redis_args_pushn(a, key, klen);
	redis_args_pushn(a, rec, rlen);
	/* expired already: a millisecond, Redis refuses 0 */
	redis_args_push_u64(a, expires_ms > now_ms ? expires_ms - now_ms : 1);
	redis_args_push(a, create ? "1" : "0");
	return klen == 0 ? -1 : 0;
}

static int
session_redis_stamp(const redisReply *r, uint64_t *stamp)
{
	char			*end;
	unsigned long long	 v;

	if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 20 ||
	    r->str[0] < '1' || r->str[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(r->str, &end, 10);
	if (errno != 0 || end != r->str + r->len)
		return -1;
	*stamp = v;
	return 0;
}

enum session_rverdict
session_redis_verdict(const redisReply *r, uint64_t *stamp,
    const char **rec, size_t *rlen)
{
	if (r == NULL)
		return SESSION_R_ERROR;
	if (r->type == REDIS_REPLY_INTEGER && r->integer == 0)
		return SESSION_R_GONE;
	if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->elements > 2 || session_redis_stamp(r->element[0], stamp) == -1)
		return SESSION_R_ERROR;
	if (r->elements == 1)
		return SESSION_R_SAME;
	if (r->element[1]->type != REDIS_REPLY_STRING)
		return SESSION_R_ERROR;
	*rec = r->element[1]->str;
	*rlen = r->element[1]->len;
	return SESSION_R_NEW;
}

