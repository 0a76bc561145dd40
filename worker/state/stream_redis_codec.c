/*
 * The event replay buffer in Redis, the pure parts (docs/ARCHITECTURE.md,
 * Beyond one host): the keys, the scripts and their arguments, what an
 * answer means.  worker/state/stream_redis.c sends them.
 */
#include <errno.h>
#include <stdlib.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/state/stream_redis.h"

/*
 * append: KEYS[1] the list, KEYS[2] the counter, ARGV[1] the message,
 * ARGV[2] how many events the list keeps, ARGV[3] the time to live in
 * ms.  Answers the event's id.  One script, so the list is in id order
 * whatever the number of producers.
 */
const char stream_redis_append_lua[] =
"local n = redis.call('INCR', KEYS[2])\n"
"redis.call('RPUSH', KEYS[1], n .. ' ' .. ARGV[1])\n"
"redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)\n"
"redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
"redis.call('PEXPIRE', KEYS[2], ARGV[3])\n"
"return n\n";

/*
 * read: KEYS as append's, ARGV[1] the id the client has (-1: none, start
 * after the newest), ARGV[2] the most events to answer.  Answers
 * {after, event...}: after is ARGV[1] or the newest id when that is
 * smaller (a client from before an empty Redis) or when ARGV[1] is -1;
 * the events follow it, oldest first (from the oldest kept when the
 * list no longer reaches back to it).
 */
const char stream_redis_read_lua[] =
"local n = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
"local after = tonumber(ARGV[1])\n"
"if after < 0 or after > n then after = n end\n"
"if after == n then return {after} end\n"
"local first = redis.call('LINDEX', KEYS[1], 0)\n"
"if not first then return {after} end\n"
"local s = after - tonumber(string.match(first, '^(%d+) ')) + 1\n"
"if s < 0 then s = 0 end\n"
"local r = redis.call('LRANGE', KEYS[1], s, s + tonumber(ARGV[2]) - 1)\n"
"table.insert(r, 1, after)\n"
"return r\n";

size_t
stream_redis_keys(char *ev, char *seq, size_t buflen, const char *prefix,
    const char *id, const char *tag, size_t *seqlen)
{
	/* a tag is hex digits, never "seq"; the longer first: both fit,
	 * or neither is made */
	if (tag == NULL || tag[0] == '\0') {
		if ((*seqlen = redis_key(seq, buflen, prefix,
		    REDIS_KIND_SESSION, id, "ev", "seq", NULL)) == 0)
			return 0;
		return redis_key(ev, buflen, prefix, REDIS_KIND_SESSION, id,
		    "ev", NULL);
	}
	if ((*seqlen = redis_key(seq, buflen, prefix, REDIS_KIND_SESSION, id,
	    "ev", tag, "seq", NULL)) == 0)
		return 0;
	return redis_key(ev, buflen, prefix, REDIS_KIND_SESSION, id, "ev",
	    tag, NULL);
}

/* EVALSHA script 2 ev seq */
static void
stream_redis_args(struct redis_args *a, const char *script, const char *ev,
    size_t evlen, const char *seq, size_t seqlen)
{
	redis_args_evalsha(a, script, 2);
	redis_args_pushn(a, ev, evlen);
	redis_args_pushn(a, seq, seqlen);
}

void
stream_redis_append_args(struct redis_args *a, const char *ev,
    size_t evlen, const char *seq, size_t seqlen, const char *msg,
    size_t mlen, unsigned cap, uint64_t ttl_ms)
{
	stream_redis_args(a, stream_redis_append_lua, ev, evlen, seq, seqlen);
	redis_args_pushn(a, msg, mlen);
	redis_args_push_u64(a, cap > 0 ? cap : 1);
	redis_args_push_u64(a, ttl_ms > 0 ? ttl_ms : 1);
}

void
stream_redis_read_args(struct redis_args *a, const char *ev,
    size_t evlen, const char *seq, size_t seqlen, int64_t after)
{
	stream_redis_args(a, stream_redis_read_lua, ev, evlen, seq, seqlen);
	redis_args_push_i64(a, after < 0 ? -1 : after);
	redis_args_push_u64(a, STREAM_RREAD_MAX);
}

uint64_t
stream_redis_appended(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_INTEGER || r->integer <= 0)
		return 0;
	return (uint64_t)r->integer;
}

int
stream_redis_answer(const redisReply *r, uint64_t *after, size_t *count)
{
	size_t	i;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->elements > STREAM_RREAD_MAX + 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[0]->integer < 0)
		return -1;
	for (i = 1; i < r->elements; i++)
		if (r->element[i]->type != REDIS_REPLY_STRING)
			return -1;
	*after = (uint64_t)r->element[0]->integer;
	*count = r->elements - 1;
	return 0;
}

int
stream_redis_event(const redisReply *r, size_t i, uint64_t *id,
    const char **msg, size_t *mlen)
{
	const redisReply	*e;
	unsigned long long	 v;
	size_t			 n;

	if (i + 1 >= r->elements)
		return -1;
	e = r->element[i + 1];
	/* "<id> <message>": a decimal id, no sign or leading zero */
	for (n = 0; n < e->len && n < 20 && e->str[n] >= '0' &&
	    e->str[n] <= '9'; n++)
		;
	if (n == 0 || n == e->len || e->str[n] != ' ' || e->str[0] == '0')
		return -1;
	errno = 0;
	v = strtoull(e->str, NULL, 10);
	if (errno != 0)
		return -1;
	*id = v;
	*msg = e->str + n + 1;
	*mlen = e->len - n - 1;
	return 0;
}
