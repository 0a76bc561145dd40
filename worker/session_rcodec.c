/*
 * Legacy sessions in Redis, the pure parts (docs/ARCHITECTURE.md,
 * Beyond one host): the key, the scripts and their arguments, what an
 * answer means.  worker/session_redis.c sends them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <openssl/sha.h>

#include "session_redis.h"

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

const char *
session_redis_sha(const char *text, size_t len, char hex[41])
{
	unsigned char	md[SHA_DIGEST_LENGTH];
	size_t		i;

	if (hex[0] != '\0')
		return hex;
	(void)SHA1((const unsigned char *)text, len, md);
	for (i = 0; i < sizeof(md); i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return hex;
}

static const char *
session_redis_put_sha(void)
{
	static char hex[2 * SHA_DIGEST_LENGTH + 1];

	return session_redis_sha(session_redis_put_lua,
	    sizeof(session_redis_put_lua) - 1, hex);
}

const char *
session_redis_get_sha(void)
{
	static char hex[2 * SHA_DIGEST_LENGTH + 1];

	return session_redis_sha(session_redis_get_lua,
	    sizeof(session_redis_get_lua) - 1, hex);
}

size_t
session_redis_key(char *buf, size_t buflen, const char *prefix,
    const char *id)
{
	int n;

	n = snprintf(buf, buflen, "%ssess:%s", prefix != NULL ? prefix : "",
	    id);
	if (n < 0 || (size_t)n >= buflen)
		return 0;
	return (size_t)n;
}

int
session_redis_put_args(struct session_rargs *sa, const char *key,
    size_t klen, const char *rec, size_t rlen, uint64_t expires_ms,
    uint64_t now_ms, int create)
{
	/* expired already: a millisecond, Redis refuses 0 */
	(void)snprintf(sa->sa_pttl, sizeof(sa->sa_pttl), "%" PRIu64,
	    expires_ms > now_ms ? expires_ms - now_ms : 1);
	sa->sa_argv[0] = "EVALSHA";
	sa->sa_argv[1] = session_redis_put_sha();
	sa->sa_argv[2] = "1";
	sa->sa_argv[3] = key;
	sa->sa_argv[4] = rec;
	sa->sa_argv[5] = sa->sa_pttl;
	sa->sa_argv[6] = create ? "1" : "0";
	sa->sa_lens[0] = 7;
	sa->sa_lens[1] = 2 * SHA_DIGEST_LENGTH;
	sa->sa_lens[2] = 1;
	sa->sa_lens[3] = klen;
	sa->sa_lens[4] = rlen;
	sa->sa_lens[5] = strlen(sa->sa_pttl);
	sa->sa_lens[6] = 1;
	sa->sa_argc = 7;
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

