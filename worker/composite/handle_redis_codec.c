/*
 * Workflow handles in Redis, the pure parts: the two scripts, what the
 * claim answers (the key is worker/redis/redis.h's redis_key()).
 * worker/composite/handle_redis.c sends them.
 */

#include <hiredis/hiredis.h>

#include "worker/composite/handle_redis.h"

/* KEYS[1]; ARGV owner, composite, fingerprint, state, ttl in ms */
const char handle_redis_mint_lua[] =
"redis.call('HSET', KEYS[1], 'o', ARGV[1], 'c', ARGV[2], 'f', ARGV[3], "
"'s', ARGV[4])\n"
"redis.call('PEXPIRE', KEYS[1], ARGV[5])\n"
"return 1\n";

/*
 * KEYS[1]; ARGV owner, composite, fingerprint.  0 unknown (or
 * expired: gone), 1 not the owner, 2 another composite, 3 used
 * before, 4 the definition changed; else {state}, the handle used.
 */
const char handle_redis_claim_lua[] =
"local h = redis.call('HMGET', KEYS[1], 'o', 'c', 'f', 'u', 's')\n"
"if not h[2] then\n"
"  return 0\n"
"end\n"
"if h[1] ~= ARGV[1] then\n"
"  return 1\n"
"end\n"
"if h[2] ~= ARGV[2] then\n"
"  return 2\n"
"end\n"
"if h[4] or not h[5] then\n"
"  return 3\n"
"end\n"
"if h[3] ~= ARGV[3] then\n"
"  return 4\n"
"end\n"
"redis.call('HSET', KEYS[1], 'u', '1')\n"
"redis.call('HDEL', KEYS[1], 's')\n"
"return {h[5]}\n";

enum handle_err
handle_redis_verdict(const redisReply *r, const char **state, size_t *slen)
{
	static const enum handle_err codes[] = {
		HANDLE_UNKNOWN, HANDLE_NOT_OWNER, HANDLE_WRONG_TOOL,
		HANDLE_REPLAYED, HANDLE_STALE
	};

	*state = NULL;
	*slen = 0;
	if (r == NULL)
		return HANDLE_ERROR;
	if (r->type == REDIS_REPLY_INTEGER)
		return r->integer >= 0 && r->integer <
		    (long long)(sizeof(codes) / sizeof(codes[0])) ?
		    codes[r->integer] : HANDLE_ERROR;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[0]->len == 0)
		return HANDLE_ERROR;
	*state = r->element[0]->str;
	*slen = r->element[0]->len;
	return HANDLE_OK;
}
