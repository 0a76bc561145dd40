/*
 * The event replay buffer in Redis, the pure parts (docs/ARCHITECTURE.md,
 * Beyond one host): the keys, the scripts and their arguments, what an
 * answer means.  worker/stream_redis.c sends them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <openssl/sha.h>

#include "session_redis.h"
#include "stream_redis.h"

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

static const char *
stream_redis_append_sha(void)
{
	static char hex[2 * SHA_DIGEST_LENGTH + 1];

	return session_redis_sha(stream_redis_append_lua,
	    sizeof(stream_redis_append_lua) - 1, hex);
}

static const char *
stream_redis_read_sha(void)
{
	static char hex[2 * SHA_DIGEST_LENGTH + 1];

	return session_redis_sha(stream_redis_read_lua,
	    sizeof(stream_redis_read_lua) - 1, hex);
}

size_t
stream_redis_keys(char *ev, char *seq, size_t buflen, const char *prefix,
    const char *id, size_t *seqlen)
{
	size_t	len;

	if ((len = session_redis_key(ev, buflen, prefix, id)) == 0 ||
	    len + sizeof(":ev:seq") > buflen)
		return 0;
	memcpy(ev + len, ":ev", sizeof(":ev"));
	memcpy(seq, ev, len + 3);
	memcpy(seq + len + 3, ":seq", sizeof(":seq"));
	*seqlen = len + 7;
	return len + 3;
}

static void
stream_redis_args(struct stream_rargs *sa, const char *sha, const char *ev,
    size_t evlen, const char *seq, size_t seqlen)
{
	sa->sa_argv[0] = "EVALSHA";
	sa->sa_argv[1] = sha;
	sa->sa_argv[2] = "2";
	sa->sa_argv[3] = ev;
	sa->sa_argv[4] = seq;
	sa->sa_lens[0] = 7;
	sa->sa_lens[1] = 2 * SHA_DIGEST_LENGTH;
	sa->sa_lens[2] = 1;
	sa->sa_lens[3] = evlen;
	sa->sa_lens[4] = seqlen;
	sa->sa_argc = 5;
}

void
stream_redis_append_args(struct stream_rargs *sa, const char *ev,
    size_t evlen, const char *seq, size_t seqlen, const char *msg,
    size_t mlen, unsigned cap, uint64_t ttl_ms)
{
	stream_redis_args(sa, stream_redis_append_sha(), ev, evlen, seq,
	    seqlen);
	(void)snprintf(sa->sa_n1, sizeof(sa->sa_n1), "%u", cap > 0 ? cap : 1);
	(void)snprintf(sa->sa_n2, sizeof(sa->sa_n2), "%" PRIu64,
	    ttl_ms > 0 ? ttl_ms : 1);
	sa->sa_argv[5] = msg;
	sa->sa_lens[5] = mlen;
	sa->sa_argv[6] = sa->sa_n1;
	sa->sa_lens[6] = strlen(sa->sa_n1);
	sa->sa_argv[7] = sa->sa_n2;
	sa->sa_lens[7] = strlen(sa->sa_n2);
	sa->sa_argc = 8;
}

void
stream_redis_read_args(struct stream_rargs *sa, const char *ev,
    size_t evlen, const char *seq, size_t seqlen, int64_t after)
{
	stream_redis_args(sa, stream_redis_read_sha(), ev, evlen, seq,
	    seqlen);
	(void)snprintf(sa->sa_n1, sizeof(sa->sa_n1), "%" PRId64,
	    after < 0 ? -1 : after);
	(void)snprintf(sa->sa_n2, sizeof(sa->sa_n2), "%d", STREAM_RREAD_MAX);
	sa->sa_argv[5] = sa->sa_n1;
	sa->sa_lens[5] = strlen(sa->sa_n1);
	sa->sa_argv[6] = sa->sa_n2;
	sa->sa_lens[6] = strlen(sa->sa_n2);
	sa->sa_argc = 7;
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
