/*
 * Exchanged tokens in Redis, the worker's side (worker/upstream/token_exchange_redis.h;
 * the key is token_exchange_redis_codec.c's, the design in docs/ARCHITECTURE.md,
 * Beyond one host): one exchange per token across the nodes
 * (redis_flight.h), the token sealed on its way there and opened on
 * its way back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/seal.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_flight.h"
#include "worker/upstream/token_exchange.h"
#include "worker/upstream/token_exchange_redis.h"
#include "worker/process/process.h"

struct texch_rfetch {
	struct redis_flight	*tf_flight;
	char			 tf_key[TEXCH_RKEY_MAX];	/* Redis's */
	texch_rfetch_cb		 tf_cb;
	void			*tf_arg;
};

static struct texch_rfetch *texch_redis_fetch(const char *, texch_rfetch_cb,
		    void *);
static void	texch_redis_cancel(struct texch_rfetch *);
static void	texch_redis_done(const char *, const char *, size_t,
		    uint64_t);

static const struct texch_store texch_store_redis = {
	texch_redis_fetch,
	texch_redis_cancel,
	texch_redis_done
};

void
texch_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS ||
	    !w->w_conf->cf_sstore.css_have_seal_key)
		return;
	redis_flight_init(w);
	texch_store = &texch_store_redis;
}

/* the Redis key of the host's key: 0, or -1 (too long) */
static int
texch_redis_rkey(const char *key, char *rk)
{
	return texch_redis_key(rk, TEXCH_RKEY_MAX,
	    worker_self()->w_conf->cf_sstore.css_prefix, key) == 0 ? -1 : 0;
}

static void
texch_redis_on_got(void *arg, enum redis_flight_got got, const char *sealed,
    size_t slen, uint64_t ttl)
{
	struct texch_rfetch	*tf = arg;
	texch_rfetch_cb		 cb = tf->tf_cb;
	void			*cbarg = tf->tf_arg;
	char			*tok = NULL;
	size_t			 n;
	int			 rc = -1;

	if (got == REDIS_FLIGHT_HIT && (tok = malloc(slen)) != NULL &&
	    (rc = seal_open(tf->tf_key, strlen(tf->tf_key),
	    (const uint8_t *)sealed, slen, (uint8_t *)tok, slen, &n)) == -1 &&
	    redis_log_due(REDIS_USER_TOKEN))
		/* another key (a node with another sealKeyFile), or
		 * damaged: never used, exchanged over */
		log_warnx("exchanged tokens (redis): a token there does not "
		    "open with this node's sessionStorage.sealKeyFile: "
		    "exchanging here");
	free(tf);
	if (got == REDIS_FLIGHT_HIT && rc == 0)
		cb(cbarg, TEXCH_R_HIT, tok, n, ttl);
	else
		cb(cbarg, got == REDIS_FLIGHT_MINE ? TEXCH_R_MINE :
		    TEXCH_R_LOCAL, NULL, 0, 0);
	if (tok != NULL) {
		OPENSSL_cleanse(tok, slen);
		free(tok);
	}
}

static struct texch_rfetch *
texch_redis_fetch(const char *key, texch_rfetch_cb cb, void *arg)
{
	struct texch_rfetch	*tf;

	if ((tf = calloc(1, sizeof(*tf))) == NULL)
		return NULL;
	tf->tf_cb = cb;
	tf->tf_arg = arg;
	if (texch_redis_rkey(key, tf->tf_key) == -1 ||
	    (tf->tf_flight = redis_flight_fetch(tf->tf_key, TEXCH_RLOCK_MS,
	    TEXCH_RWAIT_MS, REDIS_USER_TOKEN, "a token not read",
	    texch_redis_on_got, tf)) == NULL) {
		free(tf);
		return NULL;
	}
	return tf;
}

static void
texch_redis_cancel(struct texch_rfetch *tf)
{
	if (tf == NULL)
		return;
	redis_flight_cancel(tf->tf_flight);
	free(tf);
}

static void
texch_redis_done(const char *key, const char *token, size_t len,
    uint64_t ttl_ms)
{
	char		 k[TEXCH_RKEY_MAX];
	uint8_t		*sealed = NULL;
	size_t		 slen = 0;

	if (texch_redis_rkey(key, k) == -1)
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
	redis_flight_done(k, (const char *)sealed, slen, ttl_ms,
	    REDIS_USER_TOKEN, "a token not written");
	free(sealed);
}
