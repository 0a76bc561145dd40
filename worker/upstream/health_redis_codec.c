/*
 * Circuit breakers in Redis, the pure parts: the script, what it
 * answers (the key is worker/redis/redis.h's redis_key()).
 * worker/upstream/health_redis.c sends it.
 */

#include <hiredis/hiredis.h>

#include "shared/health.h"
#include "worker/upstream/health_redis.h"

/*
 * KEYS[1]; ARGV op (f, c, r), threshold, open ms, ttl ms.  A failure
 * counts and opens the breaker at the threshold, or again once it has
 * been open open ms (the half-open trial failed); a close deletes it.
 * Time is Redis's, so nodes with skewed clocks agree.  Answers
 * {failures, opened (0: closed), now}.
 */
const char health_redis_lua[] =
"local t = redis.call('TIME')\n"
"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
"local h = redis.call('HMGET', KEYS[1], 'f', 'o')\n"
"local f = tonumber(h[1]) or 0\n"
"local o = tonumber(h[2]) or 0\n"
"if ARGV[1] == 'f' then\n"
"  f = f + 1\n"
"  if f >= tonumber(ARGV[2]) and (o == 0 or now - o >= tonumber(ARGV[3]))"
" then\n"
"    o = now\n"
"  end\n"
"  redis.call('HSET', KEYS[1], 'f', f, 'o', o)\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[4])\n"
"elseif ARGV[1] == 'c' then\n"
"  redis.call('DEL', KEYS[1])\n"
"  f = 0\n"
"  o = 0\n"
"end\n"
"return {f, o, now}\n";

int
health_redis_decode(const redisReply *r, uint32_t *fails,
    uint64_t *open_age_ms)
{
	size_t i;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3)
		return -1;
	for (i = 0; i < 3; i++)
		if (r->element[i] == NULL ||
		    r->element[i]->type != REDIS_REPLY_INTEGER ||
		    r->element[i]->integer < 0)
			return -1;
	*fails = r->element[0]->integer > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)r->element[0]->integer;
	if (r->element[1]->integer == 0)
		*open_age_ms = BREAKER_SHARED_CLOSED;
	else if (r->element[2]->integer >= r->element[1]->integer)
		*open_age_ms = (uint64_t)(r->element[2]->integer -
		    r->element[1]->integer);
	else
		*open_age_ms = 0;	/* opened "later" than now: just now */
	return 0;
}
