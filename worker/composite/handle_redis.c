/*
 * Workflow handles in Redis (sessionStorage.provider redis), the
 * worker's side (the pure parts are handle_redis_codec.c; the design in
 * docs/ARCHITECTURE.md, Beyond one host): the write after each mint,
 * and the claim of a retry, asynchronous on the loop.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "shared/composite.h"
#include "shared/config.h"
#include "shared/log.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/process/process.h"
#include "worker/composite/handle_redis.h"

static struct {
	struct worker	*hr_w;
} HR;

static void	handle_redis_put(const char *, const char *, const char *,
		    const char *, const char *, size_t, uint64_t);
static int	handle_redis_claim(struct store *, const char *,
		    const char *, const struct composite *, uint64_t,
		    handle_claim_cb, void *);

static const struct handle_store handle_store_redis = {
	handle_redis_put,
	handle_redis_claim
};

void
handle_redis_init(struct worker *w)
{
	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return;
	HR.hr_w = w;
	handle_store = &handle_store_redis;
	(void)redis_script_add(handle_redis_mint_lua);
	(void)redis_script_add(handle_redis_claim_lua);
}

static void
handle_redis_on_put(void *arg, const redisReply *reply, const char *err)
{
	(void)arg;
	if (err != NULL || reply == NULL || reply->type != REDIS_REPLY_INTEGER)
		redis_failed(REDIS_USER_HANDLE, "a handle not written", reply,
		    err);
}

/* a handle minted here, written to Redis (not waited for) */
static void
handle_redis_put(const char *id, const char *owner, const char *composite,
    const char *fp, const char *state, size_t slen, uint64_t ttl_ms)
{
	struct redis_args	 a;
	char			 key[HANDLE_RKEY_MAX];
	size_t			 klen;

	if ((klen = redis_key(key, sizeof(key),
	    HR.hr_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_HANDLE, id,
	    NULL)) == 0)
		return;
	redis_args_evalsha(&a, handle_redis_mint_lua, 1);
	redis_args_pushn(&a, key, klen);
	redis_args_push(&a, owner);
	redis_args_push(&a, composite);
	redis_args_push(&a, fp);
	redis_args_pushn(&a, state, slen);
	redis_args_push_u64(&a, ttl_ms > 0 ? ttl_ms : 1);
	if (redis_send(&a, handle_redis_on_put, NULL) == NULL)
		redis_failed(REDIS_USER_HANDLE, "a handle not written", NULL,
		    "not connected");
}

struct handle_rclaim {
	TAILQ_ENTRY(handle_rclaim)	 hc_entry;
	struct redis_cmd		*hc_cmd;
	handle_claim_cb			 hc_cb;
	void				*hc_arg;
};

static TAILQ_HEAD(, handle_rclaim) handle_rclaims =
    TAILQ_HEAD_INITIALIZER(handle_rclaims);

static void
handle_redis_on_claim(void *arg, const redisReply *reply, const char *err)
{
	struct handle_rclaim	*hc = arg;
	enum handle_err		 e = HANDLE_ERROR;
	const char		*state = NULL;
	size_t			 slen = 0;
	json_t			*snap = NULL;
	json_error_t		 je;

	if (err == NULL)
		e = handle_redis_verdict(reply, &state, &slen);
	if (e == HANDLE_ERROR)
		redis_failed(REDIS_USER_HANDLE, "a handle not claimed", reply,
		    err);
	if (e == HANDLE_OK && (snap = json_loadb(state, slen, 0, &je)) ==
	    NULL)
		e = HANDLE_ERROR;
	if (e == HANDLE_ERROR)
		e = HANDLE_UNAVAILABLE;
	/* off the list first: cb may cancel others */
	TAILQ_REMOVE(&handle_rclaims, hc, hc_entry);
	hc->hc_cb(hc->hc_arg, e, snap);
	free(hc);
}

/*
 * The handle claimed in Redis: cb never within this call, the host's
 * store and clock not used (Redis's record and clock are the truth).
 */
static int
handle_redis_claim(struct store *st, const char *id, const char *owner,
    const struct composite *co, uint64_t now_ms, handle_claim_cb cb,
    void *arg)
{
	struct handle_rclaim	*hc;
	struct redis_args	 a;
	char			 key[HANDLE_RKEY_MAX];
	size_t			 klen;

	(void)st;
	(void)now_ms;
	if ((klen = redis_key(key, sizeof(key),
	    HR.hr_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_HANDLE, id,
	    NULL)) == 0 || (hc = calloc(1, sizeof(*hc))) == NULL)
		return -1;
	redis_args_evalsha(&a, handle_redis_claim_lua, 1);
	redis_args_pushn(&a, key, klen);
	redis_args_push(&a, owner);
	redis_args_push(&a, co->co_name);
	redis_args_push(&a, co->co_fp);
	hc->hc_cb = cb;
	hc->hc_arg = arg;
	if ((hc->hc_cmd = redis_send(&a, handle_redis_on_claim, hc)) ==
	    NULL) {
		free(hc);
		redis_failed(REDIS_USER_HANDLE, "a handle not claimed", NULL,
		    "not connected");
		return -1;
	}
	TAILQ_INSERT_TAIL(&handle_rclaims, hc, hc_entry);
	return 0;
}

void
handle_redis_cancel(void *arg)
{
	struct handle_rclaim *hc, *next;

	for (hc = TAILQ_FIRST(&handle_rclaims); hc != NULL; hc = next) {
		next = TAILQ_NEXT(hc, hc_entry);
		if (hc->hc_arg == arg) {
			redis_cancel(hc->hc_cmd);
			TAILQ_REMOVE(&handle_rclaims, hc, hc_entry);
			free(hc);
		}
	}
}
