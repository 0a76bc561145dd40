/*
 * Rate-limit buckets in Redis (sessionStorage.provider redis): the
 * reference vMCP's keys and algorithm, so that every node of a fleet
 * takes its tokens from the same buckets (docs/ARCHITECTURE.md, Beyond
 * one host).  The pure parts: the keys, the script and its arguments,
 * and what its answer means; worker/auth/ratelimit.c sends it.
 */
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "worker/auth/ratelimit.h"
#include "worker/redis/redis_codec.h"

/*
 * One script takes a token from every bucket or from none, on Redis's
 * clock (TIME, in microseconds), so nodes with skewed clocks agree.
 * Each bucket is a hash {tokens, last}; it starts full, refills
 * continuously (maxTokens per refill period) and expires after
 * ceil(2 x refill period) unused, when it would be full again.  It is
 * asked for the calls of one batch (the last ARGV, 1 when absent): it
 * grants as many as every bucket has whole tokens for, at most that,
 * and takes that many from each, as that many calls one after the
 * other would; the first bucket then without a whole token refuses the
 * rest.  With a lease divisor d (the ARGV after it; 0 or absent:
 * none), a batch granted whole takes as many more tokens as leave each
 * bucket a whole d-th of what it holds beyond the batch's (0 when it
 * holds less than d), the worker's to spend without asking (ratelimit.c,
 * leases).  The answer is {granted, 0, leased} (all of them) or
 * {granted, milliseconds until that bucket has its token back, 0}.  Numbers are
 * written with string.format: tostring() keeps 14 digits, too few for a
 * time in microseconds.
 */
const char ratelimit_lua[] =
"local t = redis.call('TIME')\n"
"local now = tonumber(t[1]) * 1000000 + tonumber(t[2])\n"
"local want = tonumber(ARGV[3 * #KEYS + 1]) or 1\n"
"local got = want\n"
"local tok = {}\n"
"for i = 1, #KEYS do\n"
"  local max = tonumber(ARGV[3 * i - 2])\n"
"  local per = tonumber(ARGV[3 * i - 1])\n"
"  local b = redis.call('HMGET', KEYS[i], 'tokens', 'last')\n"
"  local n, last = tonumber(b[1]), tonumber(b[2])\n"
"  if n == nil or last == nil or n ~= n then\n"
"    n, last = max, now\n"
"  end\n"
"  if now > last then\n"
"    n = n + (now - last) * max / per\n"
"  end\n"
"  if n > max then\n"
"    n = max\n"
"  end\n"
"  if n < got then\n"
"    got = math.floor(n)\n"
"  end\n"
"  tok[i] = n\n"
"end\n"
"if got < 0 then\n"
"  got = 0\n"
"end\n"
"local div = tonumber(ARGV[3 * #KEYS + 2]) or 0\n"
"local lease = 0\n"
"if div >= 1 and got == want then\n"
"  lease = math.huge\n"
"  for i = 1, #KEYS do\n"
"    local e = math.floor((tok[i] - got) / div)\n"
"    if e < lease then\n"
"      lease = e\n"
"    end\n"
"  end\n"
"  if lease < 0 or lease ~= lease or lease == math.huge then\n"
"    lease = 0\n"
"  end\n"
"end\n"
"if got + lease > 0 then\n"
"  for i = 1, #KEYS do\n"
"    redis.call('HSET', KEYS[i], 'tokens',\n"
"        string.format('%.17g', tok[i] - got - lease),\n"
"        'last', string.format('%.0f', now))\n"
"    redis.call('EXPIRE', KEYS[i], ARGV[3 * i])\n"
"  end\n"
"end\n"
"for i = 1, #KEYS do\n"
"  local n = tok[i] - got\n"
"  if got < want and n < 1 then\n"
"    local max = tonumber(ARGV[3 * i - 2])\n"
"    local per = tonumber(ARGV[3 * i - 1])\n"
"    return {got, math.ceil((1 - n) * per / max / 1000), 0}\n"
"  end\n"
"end\n"
"return {got, 0, lease}\n";

size_t
ratelimit_redis_key(char *buf, size_t buflen, const char *ns,
    const char *server, char kind, const char *uid, const char *tool,
    size_t toollen)
{
	size_t	 n;

	if (toollen > 0xffff)
		return 0;
	switch (kind) {
	case 'S':
		n = redis_keyf(buf, buflen, "thv:rl:{%s:%s}:shared", ns,
		    server);
		break;
	case 'T':
		n = redis_keyf(buf, buflen, "thv:rl:{%s:%s}:shared:tool:%.*s",
		    ns, server, (int)toollen, tool);
		break;
	case 'U':
		n = redis_keyf(buf, buflen, "thv:rl:{%s:%s}:user:%s", ns,
		    server, uid);
		break;
	case 'V':
		n = redis_keyf(buf, buflen,
		    "thv:rl:{%s:%s}:user-tool:%.*s:%s", ns, server,
		    (int)toollen, tool, uid);
		break;
	default:
		return 0;
	}
	if (n == 0)
		return 0;
	/* a NUL in a tool name would end the key early: refused */
	if (memchr(tool != NULL ? tool : "", '\0', tool != NULL ? toollen :
	    0) != NULL)
		return 0;
	return n;
}

int
ratelimit_redis_args(struct redis_args *a, const char *const *keys,
    const size_t *klens, const struct config_bucket *const *cb, size_t n,
    unsigned int want, unsigned int lease_div)
{
	size_t	i;

	if (n == 0 || n > RATELIMIT_BUCKETS || want == 0)
		return -1;
	redis_args_evalsha(a, ratelimit_lua, (unsigned)n);
	for (i = 0; i < n; i++)
		redis_args_pushn(a, keys[i], klens[i]);
	for (i = 0; i < n; i++) {
		if (cb[i]->cb_max == 0 || cb[i]->cb_period_ms == 0)
			return -1;
		/* max, refill period in microseconds, expiry ceil(2 x
		 * period) in seconds */
		redis_args_push_u64(a, cb[i]->cb_max);
		redis_args_push_u64(a, cb[i]->cb_period_ms * 1000);
		redis_args_push_u64(a, (2 * cb[i]->cb_period_ms + 999) / 1000);
	}
	/* the tokens asked of each: the batch's calls; then the lease's
	 * divisor */
	redis_args_push_u64(a, want);
	redis_args_push_u64(a, lease_div);
	return a->ra_over ? -1 : 0;
}

enum ratelimit_verdict
ratelimit_redis_verdict(const struct redisReply *r, unsigned int want,
    unsigned int *granted, uint64_t *retry_ms, uint64_t *leased)
{
	const redisReply *ok, *wait, *lease;

	*granted = 0;
	*retry_ms = 0;
	*leased = 0;
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element == NULL)
		return RATELIMIT_ERROR;
	ok = r->element[0];
	wait = r->element[1];
	lease = r->element[2];
	if (ok == NULL || wait == NULL || lease == NULL ||
	    ok->type != REDIS_REPLY_INTEGER ||
	    wait->type != REDIS_REPLY_INTEGER ||
	    lease->type != REDIS_REPLY_INTEGER)
		return RATELIMIT_ERROR;
	/* more than asked for would let more calls through than taken;
	 * a lease comes only with a batch granted whole */
	if (ok->integer < 0 || ok->integer > (long long)want ||
	    wait->integer < 0 || lease->integer < 0 ||
	    (lease->integer > 0 && ok->integer != (long long)want))
		return RATELIMIT_ERROR;
	*leased = (uint64_t)lease->integer;
	*granted = (unsigned int)ok->integer;
	if (*granted == want)
		return RATELIMIT_OK;
	*retry_ms = wait->integer > 0 ? (uint64_t)wait->integer : 1;
	return RATELIMIT_LIMITED;
}
