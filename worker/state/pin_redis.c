/*
 * The fleet's pins in Redis (sessionStorage.provider redis; pin_store.h,
 * the keys and the script in shared/pin_rec.h).  The builder
 * (pin_redis_init()) hands every record pin.c wrote to the host's copy
 * to Redis through the script: a first pin only if Redis has none (the
 * first node's wins), a pending change only if Redis holds the same pin
 * and no word on that change; what Redis holds instead comes back into
 * the host's copy.  And it polls each backend's decision stamp every
 * PIN_REDIS_POLL_MS: a stamp that moved (or the first look, which also
 * sends what the host pinned before and Redis lacks) reads the
 * backend's hash into the host's copy, and a record that changed there
 * moves the host's decision stamp (pin_db_stamp()), which pin.c's watch
 * turns into a listing, so that clients get list_changed.  A decision
 * (pin_redis_decided(): the console's, any worker) is written if Redis
 * still holds that change undecided.  Asynchronous on the loop; Redis
 * down leaves each node to its own copy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/pin_db.h"
#include "shared/store.h"
#include "worker/process/process.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/state/pin_store.h"

#define PIN_REDIS_POLL_MS	2000
#define PIN_RKEY_MAX		(PIN_BACKEND_MAX + 256)
#define PIN_FIELD_MAX		(16 + PIN_NAME_MAX)

static struct {
	struct worker	*pr_w;		/* the builder; or a worker deciding */
	struct event	*pr_timer;
	uint64_t	*pr_seen;	/* per backend: its stamp, as read */
	uint64_t	*pr_want;	/* per backend: the stamp being read */
	uint8_t		*pr_synced;	/* per backend: read once */
	uint8_t		*pr_reading;	/* per backend: a read is out */
	size_t		 pr_n;
} PR;

static void	pin_redis_put(struct worker *, const struct pin_rec *);
static void	pin_redis_free(void);

static const struct pin_remote pin_remote_redis = {
	pin_redis_put,
	pin_redis_free
};

/* "<prefix>pin:<backend>" or "<prefix>pinstamp:<backend>": its length */
static size_t
pin_redis_key(char key[PIN_RKEY_MAX], const char *kind, const char *backend)
{
	return redis_key(key, PIN_RKEY_MAX,
	    PR.pr_w->w_conf->cf_sstore.css_prefix, kind, backend, NULL);
}

/* pin_db_take(), said when it fails */
static int
pin_redis_take(struct worker *w, const char *data, size_t len,
    char backend[PIN_BACKEND_MAX + 1])
{
	int	rc;

	if ((rc = pin_db_take(w->w_store, data, len, backend)) == -1 &&
	    redis_log_due(REDIS_USER_PIN))
		log_warnx("pinned definitions (redis): a record not "
		    "understood or not stored; left alone");
	return rc;
}

/* backend's records changed in the host's copy: its watch lists it */
static void
pin_redis_moved(struct worker *w, const char *backend)
{
	log_info("pins: backend %s's pins changed in Redis (another node, or "
	    "an operator's word)", backend);
	if (pin_db_stamp(w->w_store, backend) == -1)
		log_warnx("pinned definitions (redis): backend %s: cannot "
		    "move its decision stamp", backend);
}

/* the script's answer: {1, ...} written; {0, Redis's record} taken */
static void
pin_redis_on_script(void *arg, const redisReply *reply, const char *err)
{
	struct worker	*w = PR.pr_w;
	char		 backend[PIN_BACKEND_MAX + 1];
	const char	*what = arg;

	if (err != NULL || reply == NULL ||
	    reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER) {
		redis_failed(REDIS_USER_PIN, what, reply, err);
		return;
	}
	if (reply->element[0]->integer == 1 || reply->elements < 2 ||
	    reply->element[1]->type != REDIS_REPLY_STRING || w == NULL)
		return;
	/* another node's pin, or a word taken there: ours to follow */
	if (pin_redis_take(w, reply->element[1]->str,
	    reply->element[1]->len, backend) == 1)
		pin_redis_moved(w, backend);
}

/* the script on rec: 0 sent, -1 not */
static int
pin_redis_script(const struct pin_rec *rec, const char *op,
    const char *change, const char *what)
{
	struct redis_args	 a;
	char			 hkey[PIN_RKEY_MAX], skey[PIN_RKEY_MAX];
	char			 field[PIN_FIELD_MAX];
	char			*data;
	size_t			 hlen, slen, len;
	int			 n, rc = -1;

	if ((hlen = pin_redis_key(hkey, PIN_REDIS_KIND, rec->pr_backend)) ==
	    0 || (slen = pin_redis_key(skey, PIN_REDIS_STAMP,
	    rec->pr_backend)) == 0 || (n = snprintf(field, sizeof(field),
	    "%s|%s", pin_kind_name(rec->pr_kind), rec->pr_name)) < 0 ||
	    (size_t)n >= sizeof(field) ||
	    (data = pin_rec_encode(rec, &len)) == NULL)
		return -1;
	redis_args_init(&a);
	redis_args_evalsha(&a, pin_redis_lua, 2);
	redis_args_pushn(&a, hkey, hlen);
	redis_args_pushn(&a, skey, slen);
	redis_args_push(&a, op);
	redis_args_pushn(&a, field, (size_t)n);
	redis_args_pushn(&a, data, len);
	redis_args_push(&a, change);
	redis_args_push(&a, pin_state_name(rec->pr_state));
	redis_args_push(&a, rec->pr_new);
	if (redis_send(&a, pin_redis_on_script, (void *)(uintptr_t)what) !=
	    NULL)
		rc = 0;
	else
		redis_failed(REDIS_USER_PIN, what, NULL, "not connected");
	free(data);
	return rc;
}

/* pin_remote's: what pin.c wrote to the host's copy */
static void
pin_redis_put(struct worker *w, const struct pin_rec *rec)
{
	(void)w;
	(void)pin_redis_script(rec, "put", rec->pr_hash, "a pin not shared");
}

int
pin_redis_decided(struct worker *w, const struct pin_rec *rec,
    const char *change)
{
	static int	loaded;

	if (w->w_conf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS)
		return 0;
	/* a worker's first decision: the script on its connection too */
	if (PR.pr_w == NULL)
		PR.pr_w = w;
	if (PR.pr_timer == NULL && !loaded) {
		(void)redis_script_add(pin_redis_lua);
		loaded = 1;
	}
	return pin_redis_script(rec, "decide", change,
	    "a decision not shared");
}

/* a host record Redis lacks (a node that pinned before it shared): sent */
static int
pin_redis_on_host(void *arg, const struct pin_rec *rec)
{
	const redisReply	*reply = arg;
	char			 field[PIN_FIELD_MAX];
	size_t			 j;
	int			 n;

	n = snprintf(field, sizeof(field), "%s|%s",
	    pin_kind_name(rec->pr_kind), rec->pr_name);
	for (j = 0; j + 1 < reply->elements; j += 2)
		if (reply->element[j]->type == REDIS_REPLY_STRING &&
		    reply->element[j]->len == (size_t)n &&
		    memcmp(reply->element[j]->str, field, (size_t)n) == 0)
			return 0;
	(void)pin_redis_script(rec, "put", rec->pr_hash, "a pin not shared");
	return 0;
}

/*
 * HGETALL of backend i: every record into the host's copy; the first
 * time, what the host pinned before and Redis lacks goes to Redis
 */
static void
pin_redis_on_hash(void *arg, const redisReply *reply, const char *err)
{
	struct worker	*w = PR.pr_w;
	char		 backend[PIN_BACKEND_MAX + 1];
	size_t		 i = (size_t)(uintptr_t)arg, j;
	int		 moved = 0;

	if (i >= PR.pr_n)
		return;
	PR.pr_reading[i] = 0;
	if (err != NULL || reply == NULL ||
	    reply->type != REDIS_REPLY_ARRAY) {
		redis_failed(REDIS_USER_PIN, "the pins not read", reply, err);
		return;
	}
	for (j = 1; j < reply->elements; j += 2)
		if (reply->element[j]->type == REDIS_REPLY_STRING &&
		    pin_redis_take(w, reply->element[j]->str,
		    reply->element[j]->len, backend) == 1)
			moved = 1;
	if (!PR.pr_synced[i] && pin_db_list(w->w_store,
	    w->w_conf->cf_backends[i].cb_name, pin_redis_on_host,
	    (void *)(uintptr_t)reply) == -1)
		log_warnx("pinned definitions (redis): backend %s: this "
		    "host's pins not read", w->w_conf->cf_backends[i].cb_name);
	PR.pr_seen[i] = PR.pr_want[i];
	PR.pr_synced[i] = 1;
	if (moved)
		pin_redis_moved(w, w->w_conf->cf_backends[i].cb_name);
}

/* backend i's decision stamp: read its hash if it moved */
static void
pin_redis_on_stamp(void *arg, const redisReply *reply, const char *err)
{
	struct redis_args	 a;
	char			 key[PIN_RKEY_MAX];
	size_t			 i = (size_t)(uintptr_t)arg, klen;
	uint64_t		 stamp = 0;

	if (i >= PR.pr_n)
		return;
	PR.pr_reading[i] = 0;
	if (err != NULL || reply == NULL || (reply->type != REDIS_REPLY_NIL &&
	    reply->type != REDIS_REPLY_STRING)) {
		redis_failed(REDIS_USER_PIN, "a decision stamp not read", reply,
		    err);
		return;
	}
	if (reply->type == REDIS_REPLY_STRING)
		stamp = strtoull(reply->str, NULL, 10);
	if (PR.pr_synced[i] && stamp == PR.pr_seen[i])
		return;
	if ((klen = pin_redis_key(key, PIN_REDIS_KIND,
	    PR.pr_w->w_conf->cf_backends[i].cb_name)) == 0)
		return;
	PR.pr_want[i] = stamp;
	redis_args_init(&a);
	redis_args_push(&a, "HGETALL");
	redis_args_pushn(&a, key, klen);
	if (redis_send(&a, pin_redis_on_hash, (void *)(uintptr_t)i) == NULL)
		redis_failed(REDIS_USER_PIN, "the pins not read", NULL,
		    "not connected");
	else
		PR.pr_reading[i] = 1;
}

static void
pin_redis_on_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct redis_args	 a;
	char			 key[PIN_RKEY_MAX];
	size_t			 i, klen;

	(void)fd;
	(void)ev;
	(void)arg;
	if (!redis_up())
		return;
	for (i = 0; i < PR.pr_n; i++) {
		if (PR.pr_reading[i] || (klen = pin_redis_key(key,
		    PIN_REDIS_STAMP,
		    PR.pr_w->w_conf->cf_backends[i].cb_name)) == 0)
			continue;
		redis_args_init(&a);
		redis_args_push(&a, "GET");
		redis_args_pushn(&a, key, klen);
		if (redis_send(&a, pin_redis_on_stamp,
		    (void *)(uintptr_t)i) == NULL)
			return;
		PR.pr_reading[i] = 1;
	}
}

void
pin_redis_init(struct worker *w)
{
	const struct config	*cf = w->w_conf;
	struct timeval		 tv = { PIN_REDIS_POLL_MS / 1000,
				    (PIN_REDIS_POLL_MS % 1000) * 1000 };

	if (cf->cf_sstore.css_provider != CONFIG_SSTORE_REDIS ||
	    cf->cf_agg.ca_pin_mode == CONFIG_PIN_OFF || cf->cf_nbackends == 0)
		return;
	PR.pr_w = w;
	PR.pr_n = cf->cf_nbackends;
	if ((PR.pr_seen = calloc(PR.pr_n, sizeof(*PR.pr_seen))) == NULL ||
	    (PR.pr_want = calloc(PR.pr_n, sizeof(*PR.pr_want))) == NULL ||
	    (PR.pr_synced = calloc(PR.pr_n, 1)) == NULL ||
	    (PR.pr_reading = calloc(PR.pr_n, 1)) == NULL ||
	    (PR.pr_timer = event_new(w->w_base, -1, EV_PERSIST,
	    pin_redis_on_timer, NULL)) == NULL ||
	    event_add(PR.pr_timer, &tv) == -1) {
		log_warnx("pinned definitions (redis): cannot set up; this "
		    "node pins on its own");
		pin_redis_free();
		return;
	}
	(void)redis_script_add(pin_redis_lua);
	pin_remote = &pin_remote_redis;
}

static void
pin_redis_free(void)
{
	if (PR.pr_timer != NULL)
		event_free(PR.pr_timer);
	free(PR.pr_seen);
	free(PR.pr_want);
	free(PR.pr_synced);
	free(PR.pr_reading);
	memset(&PR, 0, sizeof(PR));
}
