/*
 * Exchanged tokens in Redis, the pure part (worker/upstream/token_exchange_redis.h): the
 * key.  The read-or-lock and its answers are redis_flight.h's.
 */
#include <stdio.h>
#include <string.h>

#include "worker/redis/redis_codec.h"
#include "worker/upstream/token_exchange_redis.h"

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
