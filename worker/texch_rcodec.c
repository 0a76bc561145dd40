/*
 * Exchanged tokens in Redis, the pure parts (worker/texch_redis.h): the
 * key, the two scripts, what the read answers.  worker/texch_redis.c
 * sends them.
 */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redis.h"
#include "texch_redis.h"

/*
 * get: KEYS[1] the token's key, KEYS[2] its lock; ARGV[1] the lock's
 * holder, ARGV[2] the lock's life in ms.  {token, its time to live in
 * ms}; else 1, the lock taken (this node exchanges); else 0, another
 * holds it.  A key without a time to live is none of ours: exchanged
 * over.
 */
const char texch_redis_get_lua[] =
"local v = redis.call('GET', KEYS[1])\n"
"if v then\n"
"  local t = redis.call('PTTL', KEYS[1])\n"
"  if t > 0 then\n"
"    return {v, t}\n"
"  end\n"
"end\n"
"if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
"  return 1\n"
"end\n"
"return 0\n";

/*
 * done: KEYS[1] the token's key, KEYS[2] its lock; ARGV[1] the sealed
 * token ('' when the exchange failed), ARGV[2] its time to live in ms,
 * ARGV[3] the lock's holder: the token set, the lock let go if still
 * the caller's (it may have expired and been taken by another node).
 */
const char texch_redis_done_lua[] =
"if ARGV[1] ~= '' then\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"end\n"
"if redis.call('GET', KEYS[2]) == ARGV[3] then\n"
"  redis.call('DEL', KEYS[2])\n"
"end\n"
"return 1\n";

/*
 * The host's key "<scope>|<backend>|<audience>|<scopes hash>"
 * (texch_key(): an audience holding '|' is hashed, so the '|' are the
 * separators) with ':' for '|', after the prefix and "tok:".
 */
size_t
texch_redis_key(char *buf, size_t size, const char *prefix, const char *key)
{
	size_t	 n, i;

	if ((n = redis_key(buf, size, prefix, REDIS_KIND_TOKEN, key,
	    NULL)) == 0)
		return 0;
	for (i = n - strlen(key); i < n; i++)
		if (buf[i] == '|')
			buf[i] = ':';
	return n;
}

enum texch_rget
texch_redis_answer(const redisReply *r, const char **sealed, size_t *len,
    uint64_t *ttl_ms)
{
	*sealed = NULL;
	*len = 0;
	*ttl_ms = 0;
	if (r == NULL)
		return TEXCH_R_ERROR;
	if (r->type == REDIS_REPLY_INTEGER)
		return r->integer == 1 ? TEXCH_R_MINE : r->integer == 0 ?
		    TEXCH_R_BUSY : TEXCH_R_ERROR;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[0]->len == 0 ||
	    r->element[1]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->integer <= 0)
		return TEXCH_R_ERROR;
	*sealed = r->element[0]->str;
	*len = r->element[0]->len;
	*ttl_ms = (uint64_t)r->element[1]->integer;
	return TEXCH_R_HIT;
}
