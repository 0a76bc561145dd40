/*
 * Pending relayed requests in Redis, the pure parts: the key and what
 * GETDEL answered.  worker/pend_redis.c sends the commands.
 */
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "pend_redis.h"

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
