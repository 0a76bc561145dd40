/*
 * The pure parts of the worker's Redis use (redis_codec.h), shared by
 * every kind of record kept there: the keys, a script's SHA-1 as
 * EVALSHA names it, a command's arguments, and the read-or-lock of a
 * record one node makes for all (redis_flight.h).  worker/redis/redis.c and
 * worker/redis/redis_flight.c send them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include <hiredis/hiredis.h>

#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_flight.h"

/*
 * get: KEYS[1] the record's key, KEYS[2] its lock; ARGV[1] the lock's
 * holder, ARGV[2] the lock's life in ms.  {record, its time to live in
 * ms}; else 1, the lock taken (this process makes it); else 0, another
 * holds it.  A key without a time to live is none of ours: made over.
 */
const char redis_flight_get_lua[] =
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
 * done: KEYS[1] the record's key, KEYS[2] its lock; ARGV[1] the record
 * ('' when the making failed), ARGV[2] its time to live in ms, ARGV[3]
 * the lock's holder: the record set, the lock let go if still the
 * caller's (it may have expired and been taken by another node).
 */
const char redis_flight_done_lua[] =
"if ARGV[1] ~= '' then\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"end\n"
"if redis.call('GET', KEYS[2]) == ARGV[3] then\n"
"  redis.call('DEL', KEYS[2])\n"
"end\n"
"return 1\n";

enum redis_flight_got
redis_flight_answer(const redisReply *r, const char **val, size_t *len,
    uint64_t *ttl_ms)
{
	*val = NULL;
	*len = 0;
	*ttl_ms = 0;
	if (r == NULL)
		return REDIS_FLIGHT_ERROR;
	if (r->type == REDIS_REPLY_INTEGER)
		return r->integer == 1 ? REDIS_FLIGHT_MINE : r->integer == 0 ?
		    REDIS_FLIGHT_BUSY : REDIS_FLIGHT_ERROR;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[0]->len == 0 ||
	    r->element[1]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->integer <= 0)
		return REDIS_FLIGHT_ERROR;
	*val = r->element[0]->str;
	*len = r->element[0]->len;
	*ttl_ms = (uint64_t)r->element[1]->integer;
	return REDIS_FLIGHT_HIT;
}

const char *
redis_script_sha(const char *text)
{
	static struct {
		const char	*rs_text;
		char		 rs_hex[REDIS_SHA_LEN + 1];
	}		 shas[REDIS_SCRIPTS];
	static size_t	 nshas;
	unsigned char	 md[SHA_DIGEST_LENGTH];
	size_t		 i;

	/* the texts are constants: known by their address */
	for (i = 0; i < nshas; i++)
		if (shas[i].rs_text == text)
			return shas[i].rs_hex;
	if (nshas == REDIS_SCRIPTS)
		return NULL;
	(void)SHA1((const unsigned char *)text, strlen(text), md);
	for (i = 0; i < sizeof(md); i++)
		(void)snprintf(shas[nshas].rs_hex + 2 * i, 3, "%02x", md[i]);
	shas[nshas].rs_text = text;
	return shas[nshas++].rs_hex;
}

/* what snprintf answered, as a key's length: 0 if it did not fit */
static size_t
redis_key_fit(int n, size_t size)
{
	if (n < 0 || (size_t)n >= size)
		return 0;
	return (size_t)n;
}

size_t
redis_key(char *buf, size_t size, const char *prefix, const char *kind, ...)
{
	va_list		 ap;
	const char	*part;
	size_t		 len, n;

	if ((len = redis_key_fit(snprintf(buf, size, "%s%s",
	    prefix != NULL ? prefix : "", kind), size)) == 0)
		return 0;
	va_start(ap, kind);
	while ((part = va_arg(ap, const char *)) != NULL) {
		if ((n = redis_key_fit(snprintf(buf + len, size - len, ":%s",
		    part), size - len)) == 0) {
			len = 0;
			break;
		}
		len += n;
	}
	va_end(ap);
	return len;
}

size_t
redis_keyf(char *buf, size_t size, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return redis_key_fit(n, size);
}

void
redis_args_init(struct redis_args *a)
{
	a->ra_argc = 0;
	a->ra_nnums = 0;
	a->ra_over = 0;
}

void
redis_args_pushn(struct redis_args *a, const char *s, size_t len)
{
	if (a->ra_argc == REDIS_ARGS_MAX || s == NULL) {
		a->ra_over = 1;
		return;
	}
	a->ra_argv[a->ra_argc] = s;
	a->ra_lens[a->ra_argc++] = len;
}

void
redis_args_push(struct redis_args *a, const char *s)
{
	redis_args_pushn(a, s, s != NULL ? strlen(s) : 0);
}

/* a number's decimal text, kept in a and pushed */
static void __attribute__((__format__(__printf__, 2, 3)))
redis_args_pushf(struct redis_args *a, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	if (a->ra_nnums == REDIS_ARGS_NUMS) {
		a->ra_over = 1;
		return;
	}
	s = a->ra_nums[a->ra_nnums++];
	va_start(ap, fmt);
	(void)vsnprintf(s, sizeof(a->ra_nums[0]), fmt, ap);
	va_end(ap);
	redis_args_push(a, s);
}

void
redis_args_push_u64(struct redis_args *a, uint64_t v)
{
	redis_args_pushf(a, "%" PRIu64, v);
}

void
redis_args_push_i64(struct redis_args *a, int64_t v)
{
	redis_args_pushf(a, "%" PRId64, v);
}

void
redis_args_evalsha(struct redis_args *a, const char *script, unsigned nkeys)
{
	const char *sha;

	redis_args_init(a);
	redis_args_push(a, "EVALSHA");
	/* loaded on every connection (redis_script_add()) */
	if ((sha = redis_script_sha(script)) == NULL)
		a->ra_over = 1;
	else
		redis_args_pushn(a, sha, REDIS_SHA_LEN);
	redis_args_push_u64(a, nkeys);
}

int
redis_inval_each(const redisReply *r,
    void (*each)(const char *, size_t, void *), void *arg)
{
	const redisReply	*keys;
	size_t			 i;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING)
		return -1;
	if (strcmp(r->element[0]->str, "subscribe") == 0)
		return 1;
	if (strcmp(r->element[0]->str, "message") != 0)
		return -1;
	keys = r->element[2];
	if (keys->type != REDIS_REPLY_ARRAY) {
		/* nil: FLUSHALL, FLUSHDB; anything else: not understood */
		each(NULL, 0, arg);
		return 0;
	}
	for (i = 0; i < keys->elements; i++)
		if (keys->element[i]->type == REDIS_REPLY_STRING)
			each(keys->element[i]->str, keys->element[i]->len, arg);
		else
			each(NULL, 0, arg);
	return 0;
}

const char *
redis_config_value(const redisReply *r)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return NULL;
	return r->element[1]->str;
}

int
redis_persist_verdict(const char *aof, const char *save, char *buf,
    size_t len)
{
	if (aof == NULL || save == NULL)
		return -1;
	if (strcmp(aof, "yes") == 0)
		return 0;
	if (*save == '\0')
		(void)snprintf(buf, len, "no persistence (appendonly %.8s, "
		    "save \"\"): a Redis restart loses every session, relay, "
		    "handle, token and bucket vmcpd keeps there; run it with "
		    "appendonly yes", aof);
	else
		(void)snprintf(buf, len, "appendonly %.8s: a Redis restart "
		    "loses what vmcpd wrote since its last snapshot (save "
		    "\"%.100s\"), sessions among it; run it with appendonly "
		    "yes", aof, save);
	return 1;
}
