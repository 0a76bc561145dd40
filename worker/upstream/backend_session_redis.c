/*
 * Principals' backend sessions shared by the nodes (backend_session.h, with
 * sessionStorage.provider redis; docs/ARCHITECTURE.md, Beyond one
 * host): "<keyPrefix>bs:<scope>:<backend>" holds the session's record
 * (the host's payload, {"sid", "pv"}) for sessions.backendSessionTtl
 * after its last use on any node.  A node that misses it in its own
 * store reads it there before it opens one, and one node opens for all
 * (redis_flight.h); each node's use pushes its expiry on (at most once
 * a second, as the host's copy; reading it is a use); an eviction, or
 * a session the backend lost, takes it out if it is still that
 * session.  A host's copy that went idle closes the session only once
 * Redis no longer holds it, and only the first node to find that does
 * (bsession_redis_gone(), for backend_session_close.c): "<that key>:closed:<sid>" is
 * its claim.  Redis down: each node opens its own, as without Redis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_flight.h"
#include "worker/process/process.h"
#include "shared/store.h"

/* DEL KEYS[1] if it still holds ARGV[1] (not a newer session) */
static const char bsession_redis_drop_lua[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  return redis.call('DEL', KEYS[1])\n"
"end\n"
"return 0\n";

/*
 * gone: KEYS[1] the session's key, KEYS[2] its close's claim; ARGV[1]
 * the host's record, ARGV[2] the claim's life in ms.  The record's time
 * to live if Redis still holds this session (another node uses it);
 * else -2, this caller closes it (the claim taken), or -3, another
 * node does.
 */
static const char bsession_redis_gone_lua[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  return redis.call('PTTL', KEYS[1])\n"
"end\n"
"if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then\n"
"  return -2\n"
"end\n"
"return -3\n";

static struct {
	struct worker	*br_w;
} BR;

static struct redis_flight *bsession_redis_fetch(const char *,
		    const struct config_backend *, redis_flight_cb, void *);
static void	bsession_redis_done(const char *,
		    const struct config_backend *, const char *, size_t);
static void	bsession_redis_touch(const char *,
		    const struct config_backend *);
static void	bsession_redis_drop(const char *,
		    const struct config_backend *, const char *, size_t);
static void	bsession_redis_forget(struct store *, const char *,
		    const struct config_backend *, const char *, size_t);

static const struct bsession_store bsession_store_redis = {
	bsession_redis_fetch,
	bsession_redis_done,
	bsession_redis_touch,
	bsession_redis_drop,
	bsession_redis_forget
};

void
bsession_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	redis_flight_init(w);
	(void)redis_script_add(bsession_redis_drop_lua);
	(void)redis_script_add(bsession_redis_gone_lua);
	BR.br_w = w;
	bsession_store = &bsession_store_redis;
}

/* a principal's sessions are shared, a backend's own are not */
static int
bsession_redis_on(const char *scope)
{
	return bsession_per_principal(scope);
}

size_t
bsession_redis_key(char *buf, size_t len, const char *prefix,
    const char *scope, const char *backend)
{
	return redis_key(buf, len, prefix, REDIS_KIND_BSESSION, scope, backend,
	    NULL);
}

/* the key of (scope, be): its length, 0 if too long */
static size_t
bsession_redis_key_of(char *buf, size_t len, const char *scope,
    const struct config_backend *be)
{
	return bsession_redis_key(buf, len,
	    BR.br_w->w_conf->cf_sstore.css_prefix, scope, be->cb_name);
}

static struct redis_flight *
bsession_redis_fetch(const char *scope, const struct config_backend *be,
    redis_flight_cb cb, void *arg)
{
	char	 key[BSESSION_RKEY_MAX];
	uint64_t lock = bsession_lock_ms(be);

	if (!bsession_redis_on(scope) ||
	    bsession_redis_key_of(key, sizeof(key), scope, be) == 0)
		return NULL;
	return redis_flight_fetch(key, lock, lock + 2000, REDIS_USER_BSESSION,
	    "a backend session not read", cb, arg);
}

static void
bsession_redis_done(const char *scope, const struct config_backend *be,
    const char *rec, size_t len)
{
	char	 key[BSESSION_RKEY_MAX];

	if (bsession_redis_on(scope) &&
	    bsession_redis_key_of(key, sizeof(key), scope, be) > 0)
		redis_flight_done(key, rec, len,
		    BR.br_w->w_conf->cf_bsession_ttl_ms, REDIS_USER_BSESSION,
		    "a backend session not written");
}

static void
bsession_redis_on_write(void *arg, const redisReply *reply, const char *err)
{
	const char *what = arg;

	if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER)
		redis_failed(REDIS_USER_BSESSION, what, reply, err);
}

static void
bsession_redis_touch(const char *scope, const struct config_backend *be)
{
	static const char	 what[] = "a backend session's use not written";
	struct redis_args	 a;
	char			 key[BSESSION_RKEY_MAX];
	size_t			 n;

	if (!bsession_redis_on(scope) ||
	    (n = bsession_redis_key_of(key, sizeof(key), scope, be)) == 0)
		return;
	redis_args_init(&a);
	redis_args_push(&a, "PEXPIRE");
	redis_args_pushn(&a, key, n);
	redis_args_push_u64(&a, BR.br_w->w_conf->cf_bsession_ttl_ms);
	if (redis_send(&a, bsession_redis_on_write, (void *)what) == NULL)
		redis_failed(REDIS_USER_BSESSION, what, NULL, "not connected");
}

static void
bsession_redis_drop(const char *scope, const struct config_backend *be,
    const char *rec, size_t len)
{
	static const char	 what[] = "a backend session not taken out";
	struct redis_args	 a;
	char			 key[BSESSION_RKEY_MAX];

	if (!bsession_redis_on(scope) ||
	    bsession_redis_key_of(key, sizeof(key), scope, be) == 0)
		return;
	redis_args_evalsha(&a, bsession_redis_drop_lua, 1);
	redis_args_push(&a, key);
	redis_args_pushn(&a, rec, len);
	if (redis_send(&a, bsession_redis_on_write, (void *)what) == NULL)
		redis_failed(REDIS_USER_BSESSION, what, NULL, "not connected");
}

/* the nodes share it: out of Redis too, if it is still this one */
static void
bsession_redis_forget(struct store *st, const char *scope,
    const struct config_backend *be, const char *key, size_t klen)
{
	struct store_rec rec;

	memset(&rec, 0, sizeof(rec));
	if (bsession_redis_on(scope) && store_get(st, STORE_BSESSIONS, key,
	    klen, store_now_ms(), &rec) == 0)
		bsession_redis_drop(scope, be, rec.sr_data, rec.sr_len);
	store_rec_clear(&rec);
}

struct redis_cmd *
bsession_redis_gone(const char *closing_key, size_t klen, const char *rec,
    size_t len, redis_cb cb, void *arg)
{
	struct redis_args	 a;
	const char		*bar;
	char			 scope[BSESSION_RKEY_MAX];
	char			 backend[CONFIG_NAME_MAX + 1];
	char			 key[BSESSION_RKEY_MAX];
	char			 claim[BSESSION_RKEY_MAX + 256];
	char			*sid = NULL, *ver = NULL;
	size_t			 n;
	int			 c = -1;

	if ((bar = memchr(closing_key, '|', klen)) == NULL ||
	    (size_t)(bar - closing_key) >= sizeof(scope) ||
	    !bsession_closing_key(closing_key, klen, backend,
	    sizeof(backend)))
		return NULL;
	(void)snprintf(scope, sizeof(scope), "%.*s",
	    (int)(bar - closing_key), closing_key);
	if ((n = bsession_redis_key(key, sizeof(key),
	    BR.br_w->w_conf->cf_sstore.css_prefix, scope, backend)) > 0 &&
	    bsession_decode(rec, len, &sid, &ver) == 0)
		c = snprintf(claim, sizeof(claim), "%s:closed:%s", key,
		    sid != NULL ? sid : "");
	free(sid);
	free(ver);
	if (c < 0 || (size_t)c >= sizeof(claim))
		return NULL;
	redis_args_evalsha(&a, bsession_redis_gone_lua, 2);
	redis_args_pushn(&a, key, n);
	redis_args_push(&a, claim);
	redis_args_pushn(&a, rec, len);
	redis_args_push_u64(&a, BSESSION_CLAIM_MS);
	return redis_send(&a, cb, arg);
}
