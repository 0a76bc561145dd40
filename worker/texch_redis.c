/*
 * Exchanged tokens in Redis, the worker's side (worker/texch_redis.h;
 * the pure parts are texch_rcodec.c, the design in
 * docs/ARCHITECTURE.md, Beyond one host): the read-or-lock before an
 * exchange, polled while another node exchanges, and the write after.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "redis.h"
#include "texch.h"
#include "texch_redis.h"
#include "worker.h"

struct texch_rfetch {
	TAILQ_ENTRY(texch_rfetch) rf_entry;
	char			 rf_key[TEXCH_RKEY_MAX];
	char			 rf_lock[TEXCH_RKEY_MAX + 8];
	struct redis_cmd	*rf_cmd;
	struct event		*rf_timer;	/* the next poll */
	uint64_t		 rf_deadline;	/* monotonic ms */
	texch_rfetch_cb		 rf_cb;
	void			*rf_arg;
};

static struct {
	struct worker		*tr_w;
	int			 tr_on;
	int			 tr_closed;	/* texch_redis_free() */
	char			 tr_holder[33];	/* this worker's lock value */
	TAILQ_HEAD(, texch_rfetch) tr_fetches;
} TR = { .tr_fetches = TAILQ_HEAD_INITIALIZER(TR.tr_fetches) };

static uint64_t
texch_redis_now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
texch_redis_init(struct worker *w)
{
	uint8_t	 r[16];
	size_t	 i;

	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS ||
	    !w->w_conf->cf_sstore.css_have_seal_key ||
	    RAND_bytes(r, sizeof(r)) != 1)
		return;
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(TR.tr_holder + 2 * i, 3, "%02x", r[i]);
	TR.tr_w = w;
	TR.tr_on = 1;
	(void)redis_script_add(texch_redis_get_lua);
	(void)redis_script_add(texch_redis_done_lua);
}

int
texch_redis_on(void)
{
	return TR.tr_on;
}

static void
texch_redis_end(struct texch_rfetch *rf, enum texch_rget kind,
    const char *tok, size_t len, uint64_t ttl_ms)
{
	TAILQ_REMOVE(&TR.tr_fetches, rf, rf_entry);
	rf->rf_cb(rf->rf_arg, kind, tok, len, ttl_ms);
	event_free(rf->rf_timer);
	free(rf);
}

static void
texch_redis_on_get(void *arg, const redisReply *reply, const char *err)
{
	struct texch_rfetch	*rf = arg;
	struct timeval		 tv = { 0, TEXCH_RPOLL_MS * 1000 };
	const char		*sealed;
	char			*tok;
	size_t			 slen, n;
	uint64_t		 ttl;
	enum texch_rget		 kind;

	rf->rf_cmd = NULL;
	kind = err != NULL ? TEXCH_R_ERROR : texch_redis_answer(reply,
	    &sealed, &slen, &ttl);
	switch (kind) {
	case TEXCH_R_ERROR:
		redis_failed(REDIS_USER_TOKEN, "a token not read", reply, err);
		texch_redis_end(rf, TEXCH_R_LOCAL, NULL, 0, 0);
		return;
	case TEXCH_R_BUSY:
		if (texch_redis_now() >= rf->rf_deadline) {
			log_warnx("exchanged tokens (redis): another node's "
			    "exchange did not end in %llu s: exchanging here",
			    (unsigned long long)TEXCH_RWAIT_MS / 1000);
			texch_redis_end(rf, TEXCH_R_LOCAL, NULL, 0, 0);
		} else
			(void)evtimer_add(rf->rf_timer, &tv);
		return;
	case TEXCH_R_HIT:
		break;
	default:
		texch_redis_end(rf, kind, NULL, 0, 0);
		return;
	}
	if ((tok = malloc(slen)) == NULL) {
		texch_redis_end(rf, TEXCH_R_LOCAL, NULL, 0, 0);
		return;
	}
	if (seal_open(rf->rf_key, strlen(rf->rf_key), (const uint8_t *)sealed,
	    slen, (uint8_t *)tok, slen, &n) == -1) {
		/* another key (a node with another sealKeyFile), or
		 * damaged: never used, exchanged over */
		if (redis_log_due(REDIS_USER_TOKEN))
			log_warnx("exchanged tokens (redis): a token there "
			    "does not open with this node's "
			    "sessionStorage.sealKeyFile: exchanging here");
		free(tok);
		texch_redis_end(rf, TEXCH_R_LOCAL, NULL, 0, 0);
		return;
	}
	texch_redis_end(rf, TEXCH_R_HIT, tok, n, ttl);
	OPENSSL_cleanse(tok, slen);
	free(tok);
}

/* the read-or-lock script: 0, or -1 (not sent) */
static int
texch_redis_send(struct texch_rfetch *rf)
{
	struct redis_args a;

	redis_args_evalsha(&a, texch_redis_get_lua, 2);
	redis_args_push(&a, rf->rf_key);
	redis_args_push(&a, rf->rf_lock);
	redis_args_push(&a, TR.tr_holder);
	redis_args_push_u64(&a, TEXCH_RLOCK_MS);
	if ((rf->rf_cmd = redis_send(&a, texch_redis_on_get, rf)) == NULL) {
		redis_failed(REDIS_USER_TOKEN, "a token not read", NULL,
		    "not connected");
		return -1;
	}
	return 0;
}

static void
texch_redis_on_poll(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	if (texch_redis_send(arg) == -1)
		texch_redis_end(arg, TEXCH_R_LOCAL, NULL, 0, 0);
}

/* the key (k, TEXCH_RKEY_MAX) and its lock's (lk, 8 more): 0, or -1 */
static int
texch_redis_keys(const char *key, char *k, char *lk)
{
	if (texch_redis_key(k, TEXCH_RKEY_MAX,
	    TR.tr_w->w_conf->cf_sstore.css_prefix, key) == 0)
		return -1;
	(void)snprintf(lk, TEXCH_RKEY_MAX + 8, "%s:lock", k);
	return 0;
}

struct texch_rfetch *
texch_redis_fetch(const char *key, texch_rfetch_cb cb, void *arg)
{
	struct texch_rfetch	*rf;

	if (!TR.tr_on)
		return NULL;
	if (!redis_up()) {
		redis_failed(REDIS_USER_TOKEN, "a token not read", NULL,
		    "not connected");
		return NULL;
	}
	if ((rf = calloc(1, sizeof(*rf))) == NULL)
		return NULL;
	if (texch_redis_keys(key, rf->rf_key, rf->rf_lock) == -1 ||
	    (rf->rf_timer = evtimer_new(TR.tr_w->w_base,
	    texch_redis_on_poll, rf)) == NULL || texch_redis_send(rf) == -1) {
		if (rf->rf_timer != NULL)
			event_free(rf->rf_timer);
		free(rf);
		return NULL;
	}
	rf->rf_cb = cb;
	rf->rf_arg = arg;
	rf->rf_deadline = texch_redis_now() + TEXCH_RWAIT_MS;
	TAILQ_INSERT_TAIL(&TR.tr_fetches, rf, rf_entry);
	return rf;
}

void
texch_redis_cancel(struct texch_rfetch *rf)
{
	/* after texch_redis_free() every fetch is gone already */
	if (rf == NULL || TR.tr_closed)
		return;
	redis_cancel(rf->rf_cmd);
	TAILQ_REMOVE(&TR.tr_fetches, rf, rf_entry);
	event_free(rf->rf_timer);
	free(rf);
}

static void
texch_redis_on_done(void *arg, const redisReply *reply, const char *err)
{
	(void)arg;
	if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER)
		redis_failed(REDIS_USER_TOKEN, "a token not written", reply,
		    err);
}

void
texch_redis_done(const char *key, const char *token, size_t len,
    uint64_t ttl_ms)
{
	struct redis_args a;
	char		 k[TEXCH_RKEY_MAX], lk[TEXCH_RKEY_MAX + 8];
	uint8_t		*sealed = NULL;
	size_t		 slen = 0;

	if (!TR.tr_on || texch_redis_keys(key, k, lk) == -1)
		return;
	if (token != NULL) {
		slen = len + SEAL_OVERHEAD;
		if ((sealed = malloc(slen)) == NULL ||
		    seal_data(k, strlen(k), token, len, sealed, slen) == -1) {
			free(sealed);
			sealed = NULL;
			slen = 0;
		}
	}
	redis_args_evalsha(&a, texch_redis_done_lua, 2);
	redis_args_push(&a, k);
	redis_args_push(&a, lk);
	redis_args_pushn(&a, sealed != NULL ? (const char *)sealed : "", slen);
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	redis_args_push(&a, TR.tr_holder);
	if (redis_send(&a, texch_redis_on_done, NULL) == NULL)
		redis_failed(REDIS_USER_TOKEN, "a token not written", NULL,
		    "not connected");
	free(sealed);
}

void
texch_redis_free(void)
{
	struct texch_rfetch *rf;

	while ((rf = TAILQ_FIRST(&TR.tr_fetches)) != NULL)
		texch_redis_cancel(rf);
	TR.tr_on = 0;
	TR.tr_closed = 1;
}
