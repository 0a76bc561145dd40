/*
 * Circuit breakers shared through Redis (sessionStorage.provider
 * redis), the worker's and the builder's side (the pure parts are
 * health_redis_codec.c; the design in docs/ARCHITECTURE.md, Beyond one
 * host).  Nothing here is waited for on the hot path: a failure is
 * sent and forgotten, and the builder's reads land in the host's copy.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/health.h"
#include "shared/health_probe.h"
#include "shared/log.h"
#include "shared/store.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/process/process.h"
#include "worker/view/view_get.h"
#include "worker/upstream/health_redis.h"
#include "worker/upstream/health_store.h"

static struct {
	struct worker	*hh_w;
	int		 hh_on;
	size_t		 hh_pulling;	/* reads out */
	uint64_t	 hh_sent;	/* records sent by this process */
	uint64_t	 hh_round;	/* hh_sent when the reads out were */
	uint64_t	 hh_read_ms;	/* and when they left */
} HH;

/* the probes' verdicts for the other nodes: verdict_redis_put(), which
 * the builder, the one process that probes, sets (health_redis_verdicts()) */
static void	(*health_redis_verdict_fn)(const struct config_backend *,
		    const struct probe_rec *, enum probe_outcome);

static void
health_redis_verdict(const struct config_backend *be,
    const struct probe_rec *pr, enum probe_outcome o)
{
	if (health_redis_verdict_fn != NULL)
		health_redis_verdict_fn(be, pr, o);
}

void
health_redis_verdicts(void (*fn)(const struct config_backend *,
    const struct probe_rec *, enum probe_outcome))
{
	health_redis_verdict_fn = fn;
}

/* each part stays out while its own config is off (hh_on, vr_on) */
static const struct health_store health_store_redis = {
	health_redis_record,
	health_redis_pull,
	health_redis_verdict
};

void
health_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	health_store = &health_store_redis;
	if (!w->w_conf->cf_health.ch_cb_enabled)
		return;
	HH.hh_w = w;
	HH.hh_on = 1;
	(void)redis_script_add(health_redis_lua);
}

static struct redis_cmd *
health_redis_send(const char *backend, const char *op, redis_cb cb,
    void *arg)
{
	const struct config_health	*ch = &HH.hh_w->w_conf->cf_health;
	struct redis_args		 a;
	char				 key[HEALTH_RKEY_MAX];
	size_t				 klen;
	uint64_t			 t;

	if ((klen = redis_key(key, sizeof(key),
	    HH.hh_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_HEALTH, backend,
	    NULL)) == 0)
		return NULL;
	/* failures older than this are forgotten: twice the open time,
	 * 10 s at least */
	t = ch->ch_cb_timeout_ms * 2;
	if (t < 10000)
		t = 10000;
	redis_args_evalsha(&a, health_redis_lua, 1);
	redis_args_pushn(&a, key, klen);
	redis_args_push(&a, op);
	redis_args_push_u64(&a, ch->ch_cb_threshold);
	redis_args_push_u64(&a, ch->ch_cb_timeout_ms);
	redis_args_push_u64(&a, t);
	return redis_send(&a, cb, arg);
}

static void
health_redis_on_record(void *arg, const redisReply *reply, const char *err)
{
	uint32_t	f;
	uint64_t	age;

	(void)arg;
	if (err != NULL || health_redis_decode(reply, &f, &age) == -1)
		redis_failed(REDIS_USER_HEALTH, NULL, reply, err);
}

void
health_redis_record(const char *backend, int failed)
{
	if (!HH.hh_on)
		return;
	HH.hh_sent++;
	if (health_redis_send(backend, failed ? HEALTH_ROP_FAIL :
	    HEALTH_ROP_CLOSE, health_redis_on_record, NULL) == NULL)
		redis_failed(REDIS_USER_HEALTH, NULL, NULL, "not connected");
}

static void
health_redis_on_pull(void *arg, const redisReply *reply, const char *err)
{
	struct worker			*w = HH.hh_w;
	const struct config_backend	*be;
	size_t				 i = (size_t)(uintptr_t)arg;
	uint32_t			 f;
	uint64_t			 age;
	int				 st;

	if (HH.hh_pulling > 0)
		HH.hh_pulling--;
	if (i >= w->w_conf->cf_nbackends)
		return;
	be = &w->w_conf->cf_backends[i];
	if (err != NULL || health_redis_decode(reply, &f, &age) == -1) {
		redis_failed(REDIS_USER_HEALTH, NULL, reply, err);
		return;
	}
	/*
	 * A record this process sent after the read (the builder's probe
	 * closing the breaker) reaches Redis after it on the one
	 * connection: the read is older than our copy, and adopting it
	 * would open again the breaker just closed.  The next round reads
	 * after the record.
	 */
	if (HH.hh_sent != HH.hh_round)
		return;
	st = health_breaker_adopt(w->w_store, be->cb_name,
	    &w->w_conf->cf_health, f, age, store_now_ms(), HH.hh_read_ms);
	/* the backend's part of the view goes or comes back */
	if (st == BREAKER_OPEN || st == BREAKER_CLOSED)
		view_changed_soon(w, be);
}

void
health_redis_pull(void)
{
	const struct config	*cf;
	size_t			 i;

	if (!HH.hh_on || HH.hh_pulling > 0)
		return;		/* the last round is still out */
	if (!redis_up()) {
		redis_failed(REDIS_USER_HEALTH, NULL, NULL, "not connected");
		return;
	}
	cf = HH.hh_w->w_conf;
	HH.hh_round = HH.hh_sent;
	HH.hh_read_ms = store_now_ms();
	for (i = 0; i < cf->cf_nbackends; i++) {
		if (health_redis_send(cf->cf_backends[i].cb_name,
		    HEALTH_ROP_READ, health_redis_on_pull,
		    (void *)(uintptr_t)i) == NULL) {
			redis_failed(REDIS_USER_HEALTH, NULL, NULL,
			    "not connected");
			break;
		}
		HH.hh_pulling++;
	}
}
