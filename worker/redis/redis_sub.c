/*
 * The worker's Redis subscription (sessionStorage.provider redis;
 * docs/ARCHITECTURE.md, Beyond one host): cross-node wake-ups.  A
 * connection in subscribe mode takes no other command, so this is a
 * second connection beside worker/redis/redis.c's, on hiredis's libevent
 * adapter too, subscribed to this worker's own channel
 * "<keyPrefix>wake:<32 hex digits>" (random at start: a node has no
 * name).  A node that makes a record another node waits for names the
 * channel in the record; the node the client's answer reaches
 * publishes the record's id there.  Lost (Redis down), it is made
 * again with redis.c's backoff; what was published meanwhile is lost,
 * and the waiting reader's own timer reads the record instead.
 *
 * With client-side caching (redis_sub.h, redis_track_init()) it is also
 * the connection Redis's invalidations are redirected to: its id
 * (CLIENT ID, asked before subscribing, as a subscribed connection
 * takes no other command) goes to redis.c once "__redis__:invalidate"
 * is subscribed, and 0 when the connection is lost: what was
 * invalidated meanwhile is unknown, so nothing tracked is trusted.
 */
#include <sys/random.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libevent.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/redis/redis_sub.h"
#include "worker/process/process.h"

static struct {
	struct worker		*rs_w;
	redisAsyncContext	*rs_ac;
	struct event		*rs_retry;
	uint64_t		 rs_backoff_ms;
	int			 rs_closing;
	redis_sub_cb		 rs_cb;
	long long		 rs_id;		/* CLIENT ID */
	char			 rs_name[REDIS_SUB_NAME_LEN];	/* CLIENT SETNAME */
	char			 rs_chan[256];
} SUB;

static void	redis_sub_connect(void);

static void
redis_sub_later(void)
{
	struct timeval tv;

	SUB.rs_ac = NULL;
	SUB.rs_id = 0;
	redis_track_redirect(0, NULL);
	if (SUB.rs_closing || SUB.rs_retry == NULL)
		return;
	tv.tv_sec = (time_t)(SUB.rs_backoff_ms / 1000);
	tv.tv_usec = (suseconds_t)(SUB.rs_backoff_ms % 1000) * 1000;
	(void)evtimer_add(SUB.rs_retry, &tv);
	SUB.rs_backoff_ms *= 2;
	if (SUB.rs_backoff_ms > REDIS_BACKOFF_MAX_MS)
		SUB.rs_backoff_ms = REDIS_BACKOFF_MAX_MS;
}

static void
redis_sub_on_retry(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	redis_sub_connect();
}

/* ["subscribe", chan, n] once, then ["message", chan, payload] */
static void
redis_sub_on_message(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply *reply = r;

	(void)priv;
	if (reply == NULL || ac != SUB.rs_ac)
		return;
	if (reply->type == REDIS_REPLY_ERROR) {
		log_warnx("redis subscription: %.*s", (int)reply->len,
		    reply->str);
		redisAsyncDisconnect(ac);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[2]->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(reply->element[0]->str, "subscribe") == 0) {
		SUB.rs_backoff_ms = REDIS_BACKOFF_MIN_MS;
		/* what was published meanwhile is lost: read it again */
		SUB.rs_cb(NULL, 0);
		return;
	}
	if (strcmp(reply->element[0]->str, "message") == 0)
		SUB.rs_cb(reply->element[2]->str, reply->element[2]->len);
}

/*
 * ["subscribe", "__redis__:invalidate", n] once, then ["message",
 * "__redis__:invalidate", [key, ...]], or a nil for every key
 */
static void
redis_sub_inval_key(const char *key, size_t len, void *arg)
{
	(void)arg;
	redis_track_inval(key, len);
}

static void
redis_sub_on_inval(redisAsyncContext *ac, void *r, void *priv)
{
	(void)priv;
	if (r != NULL && ac == SUB.rs_ac &&
	    redis_inval_each(r, redis_sub_inval_key, NULL) == 1)
		redis_track_redirect(SUB.rs_id, SUB.rs_name);
}

/* CLIENT ID's answer: where the invalidations are to be redirected */
static void
redis_sub_on_id(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply *reply = r;

	(void)priv;
	if (reply != NULL && ac == SUB.rs_ac &&
	    reply->type == REDIS_REPLY_INTEGER)
		SUB.rs_id = reply->integer;
}

static void
redis_sub_on_auth(redisAsyncContext *ac, void *r, void *priv)
{
	const redisReply *reply = r;

	(void)priv;
	if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		redisAsyncDisconnect(ac);
}

static void
redis_sub_on_connect(const redisAsyncContext *cac, int status)
{
	redisAsyncContext		*ac = (redisAsyncContext *)cac;
	const struct config_sstore	*ss = &SUB.rs_w->w_conf->cf_sstore;

	if (ac != SUB.rs_ac)
		return;
	if (status != REDIS_OK) {
		redis_sub_later();	/* hiredis frees the context */
		return;
	}
	if (ss->css_password != NULL)
		(void)redisAsyncCommand(ac, redis_sub_on_auth, NULL,
		    "AUTH %s", ss->css_password);
	if (redis_track_wanted()) {
		(void)redisAsyncCommand(ac, NULL, NULL, "CLIENT SETNAME %s",
		    SUB.rs_name);
		(void)redisAsyncCommand(ac, redis_sub_on_id, NULL,
		    "CLIENT ID");
	}
	(void)redisAsyncCommand(ac, redis_sub_on_message, NULL,
	    "SUBSCRIBE %s", SUB.rs_chan);
	if (redis_track_wanted())
		(void)redisAsyncCommand(ac, redis_sub_on_inval, NULL,
		    "SUBSCRIBE __redis__:invalidate");
}

static void
redis_sub_on_disconnect(const redisAsyncContext *ac, int status)
{
	(void)status;
	if (ac == SUB.rs_ac)
		redis_sub_later();
}

static void
redis_sub_connect(void)
{
	redisAsyncContext	*ac;
	const char		*ip;
	int			 port;

	if (SUB.rs_ac != NULL || SUB.rs_closing ||
	    redis_address(&ip, &port) == -1)
		return;
	if ((ac = redisAsyncConnect(ip, port)) == NULL || ac->err ||
	    redisLibeventAttach(ac, SUB.rs_w->w_base) != REDIS_OK) {
		if (ac != NULL)
			redisAsyncFree(ac);
		redis_sub_later();
		return;
	}
	SUB.rs_ac = ac;
	(void)redisAsyncSetConnectCallback(ac, redis_sub_on_connect);
	(void)redisAsyncSetDisconnectCallback(ac, redis_sub_on_disconnect);
}

/* drop the connection now, and make it again after the backoff */
void
redis_sub_reset(void)
{
	redisAsyncContext *ac = SUB.rs_ac;

	if (ac == NULL)
		return;
	redis_sub_later();	/* SUB.rs_ac NULL: its callbacks are past */
	redisAsyncFree(ac);
}

int
redis_sub_init(struct worker *w, redis_sub_cb cb)
{
	const char	*prefix = w->w_conf->cf_sstore.css_prefix;
	char		 chan[sizeof(SUB.rs_chan)];
	unsigned char	 r[16];
	size_t		 i;
	int		 n;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	n = snprintf(chan, sizeof(chan), "%swake:",
	    prefix != NULL ? prefix : "");
	if (n < 0 || (size_t)n + 2 * sizeof(r) >= sizeof(chan))
		return -1;
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(chan + n + 2 * i, 3, "%02x", r[i]);
	return redis_sub_init_channel(w, chan, cb);
}

int
redis_sub_init_channel(struct worker *w, const char *chan, redis_sub_cb cb)
{
	const char	*ip;
	unsigned char	 r[16];
	size_t		 i;
	int		 n, port;

	if (redis_address(&ip, &port) == -1)
		return -1;
	n = snprintf(SUB.rs_chan, sizeof(SUB.rs_chan), "%s", chan);
	if (n < 0 || (size_t)n >= sizeof(SUB.rs_chan))
		return -1;
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	(void)snprintf(SUB.rs_name, sizeof(SUB.rs_name), "vmcpd-");
	for (i = 0; i < sizeof(r); i++)
		(void)snprintf(SUB.rs_name + 6 + 2 * i, 3, "%02x", r[i]);
	SUB.rs_w = w;
	SUB.rs_cb = cb;
	SUB.rs_backoff_ms = REDIS_BACKOFF_MIN_MS;
	if ((SUB.rs_retry = evtimer_new(w->w_base, redis_sub_on_retry,
	    NULL)) == NULL)
		return -1;
	redis_sub_connect();
	return 0;
}

void
redis_sub_free(void)
{
	redisAsyncContext *ac = SUB.rs_ac;

	SUB.rs_closing = 1;
	SUB.rs_ac = NULL;
	if (ac != NULL)
		redisAsyncFree(ac);
	if (SUB.rs_retry != NULL)
		event_free(SUB.rs_retry);
	SUB.rs_retry = NULL;
}

const char *
redis_sub_channel(void)
{
	return SUB.rs_w != NULL ? SUB.rs_chan : NULL;
}
