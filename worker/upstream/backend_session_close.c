/*
 * Closing the backend sessions of client sessions that ended.  A
 * Legacy client session holds one backend session per backend it
 * called (the record's "backends"); when the client session ends they
 * are closed with an HTTP DELETE carrying the Mcp-Session-Id (MCP
 * 2025-11-25, basic/transports, "Session Management"), which the
 * bridges of stdio and SSE backends answer by releasing what they
 * hold for it.  A client's DELETE closes them at once; a session that
 * expires is swept by the keeper, which does no network I/O: its
 * record (saved with STORE_F_CLOSE) is moved to the "closing" db, and
 * every worker takes small batches from there (store_take(): a record
 * is taken once) and sends the DELETEs on its loop, at most
 * BCLOSE_INFLIGHT at a time, each within BCLOSE_TIMEOUT_MS.
 *
 * Each backend's gauge (the store's, under the backend's name) counts
 * the backend sessions that client sessions hold open: +1 when one is
 * opened, -1 when it is closed or known lost.
 *
 * With sessionStorage redis every node's copy of a session is flagged
 * too, and a record taken from "closing" is a question first: PTTL of
 * the session's key (docs/ARCHITECTURE.md, Beyond one host).  Gone
 * (-2): its backend sessions are closed as on one host.  Alive: it was
 * used on another node (or here) after this copy was written, and the
 * node whose copy expires last closes them; unless it expires within
 * BCLOSE_NEAR_MS (Redis's PEXPIRE follows the copy's expiry by a write's
 * latency), then it is asked once more after its PTTL and
 * BCLOSE_MARGIN_MS, on an in-memory timer (a worker that crashes
 * meanwhile loses that look; one that exits puts the record back).  No
 * answer (Redis down, slow): nothing is closed, the record goes back
 * into "closing" (its expiry unchanged) and this worker takes none for
 * a while (BCLOSE_PAUSE_MIN_MS doubling to BCLOSE_PAUSE_MAX_MS), so the
 * effort is bounded and the queue's hour bounds the wait.  The gauge
 * is each node's: a node that closes backend sessions another node
 * opened counts them down on its own, clamped at zero.
 *
 * A principal's synthesized backend session (backend_session.h) that went
 * idle reaches "closing" the same way, under "scope|backend" (never a
 * client session's id), and is closed the same way; with provider
 * redis the question is bsession_redis_gone()'s, so that only the
 * first node to find it gone from Redis closes it.  One the cap evicts
 * is closed by the evicting process, once its calls are over
 * (bclose_unheld()).  Neither is in the gauge: the store counts them
 * as records.
 */
#include <sys/queue.h>
#include <sys/time.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <hiredis/hiredis.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_prefix.h"
#include "shared/store_stat.h"
#include "worker/redis/redis.h"
#include "worker/redis/redis_codec.h"
#include "worker/state/session_redis.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_hooks.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/upstream/backend_session_close.h"

#define BCLOSE_INFLIGHT		16	/* DELETEs (and questions) per worker */
#define BCLOSE_TICK_MS		1000	/* a look at the queue */
#define BCLOSE_TIMEOUT_MS	5000	/* the most one DELETE takes */
#define BCLOSE_NEAR_MS		2000	/* alive, but about to expire */
#define BCLOSE_MARGIN_MS	500	/* after its PTTL, the second look */
#define BCLOSE_PAUSE_MIN_MS	1000	/* Redis failed: no take for this */
#define BCLOSE_PAUSE_MAX_MS	30000
#define BCLOSE_KEY_MAX		128	/* session id, or scope|backend */

/* an ended session's record, with provider redis: Redis asked first */
struct bclose_check {
	TAILQ_ENTRY(bclose_check) bc_entry;
	struct worker		*bc_w;
	struct redis_cmd	*bc_cmd;	/* the PTTL in flight */
	struct event		*bc_ev;		/* the second look */
	int			 bc_again;	/* it is the second */
	uint64_t		 bc_expires_ms;	/* the queue record's */
	char			 bc_id[BCLOSE_KEY_MAX];	/* its key */
	char			 bc_backend[CONFIG_NAME_MAX + 1]; /* or none */
	char			*bc_rec;	/* the session's record */
	size_t			 bc_len;
};

struct bclose_later {
	TAILQ_ENTRY(bclose_later) bl_entry;
	struct event		*bl_ev;
	struct worker		*bl_w;
	char			*bl_backend;
	char			*bl_sid;
	char			*bl_version;
	int			 bl_client;	/* a client session's */
};

static struct event	*bclose_tick_ev;
static size_t		 bclose_inflight;
static int		 bclose_more;	/* the last take was full */
static int		 bclose_taking;
static TAILQ_HEAD(, bclose_later) bclose_laters =
    TAILQ_HEAD_INITIALIZER(bclose_laters);
static TAILQ_HEAD(, bclose_check) bclose_checks =
    TAILQ_HEAD_INITIALIZER(bclose_checks);
static uint64_t		 bclose_pause_until;	/* store_now_ms() */
static uint64_t		 bclose_pause_ms;

static void	bclose_pump(struct worker *);

void
bclose_opened(struct worker *w, const struct config_backend *be)
{
	if (store_gauge_add(w->w_store, be->cb_name, 1) == -1)
		log_debug("cannot count a backend session of %s",
		    be->cb_name);
}

/* a backend session no client session holds any more */
void
bclose_forget(struct worker *w, const struct config_backend *be)
{
	(void)store_gauge_add(w->w_store, be->cb_name, -1);
}

static void
bclose_on_done(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct worker *w = arg;

	if (result == -1)
		log_debug("closing a backend session: %s", errmsg);
	else if (http_call_status(hc) >= 300 && http_call_status(hc) != 404)
		log_debug("closing a backend session: HTTP %ld",
		    http_call_status(hc));
	if (bclose_inflight > 0)
		bclose_inflight--;
	/* keep the queue moving while it has more than a batch */
	if (bclose_more && bclose_inflight <= BCLOSE_INFLIGHT / 2)
		bclose_pump(w);
}

/*
 * DELETE one backend session; it counts as closed whatever the answer.
 * client: a client session's, counted in its backend's gauge (a
 * scope's is counted as its record, backend_session.c).
 */
static void
bclose_send(struct worker *w, const char *backend, const char *sid,
    const char *version, int client)
{
	static const struct http_call_cbs cbs = {
		.hc_done = bclose_on_done,
	};
	const struct config_backend	*be;
	uint64_t			 timeout;

	if ((be = config_backend_find(w->w_conf, backend)) == NULL) {
		/* gone from the config: nothing to send it to */
		if (client)
			(void)store_gauge_add(w->w_store, backend, -1);
		return;
	}
	if (client)
		bclose_forget(w, be);
	timeout = be->cb_timeout_ms > 0 && be->cb_timeout_ms <
	    BCLOSE_TIMEOUT_MS ? be->cb_timeout_ms : BCLOSE_TIMEOUT_MS;
	upstream_cred_for(w, be, sid);	/* token_exchange's, if any */
	if (backend_session_delete(w, be, sid, version, timeout, &cbs,
	    w) == 0)
		bclose_inflight++;
	upstream_cred_done();
}

/* every backend session the client session holds */
void
bclose_session(struct worker *w, const struct session *s)
{
	size_t i;

	for (i = 0; i < s->s_nbackends; i++)
		if (s->s_backends[i].sb_sid != NULL)
			bclose_send(w, s->s_backends[i].sb_name,
			    s->s_backends[i].sb_sid,
			    s->s_backends[i].sb_version, 1);
}

static void
bclose_later_free(struct bclose_later *bl)
{
	TAILQ_REMOVE(&bclose_laters, bl, bl_entry);
	event_free(bl->bl_ev);
	free(bl->bl_backend);
	free(bl->bl_sid);
	free(bl->bl_version);
	free(bl);
}

static void
bclose_on_later(evutil_socket_t fd, short ev, void *arg)
{
	struct bclose_later *bl = arg;

	(void)fd;
	(void)ev;
	bclose_send(bl->bl_w, bl->bl_backend, bl->bl_sid, bl->bl_version,
	    bl->bl_client);
	bclose_later_free(bl);
}

/*
 * A backend session the record no longer names (another worker's open
 * for the same client session recorded after it, or one the backend
 * lost; a principal's evicted): calls may still be running on it, so
 * it is closed once they are over, after the backend's timeout.  A
 * worker that exits first leaves it to the backend's own expiry.
 */
static void
bclose_later(struct worker *w, const struct config_backend *be,
    const char *sid, const char *version, int client)
{
	struct bclose_later	*bl;
	struct timeval		 tv;
	uint64_t		 ms = be->cb_timeout_ms + 1000;

	if (sid == NULL)
		return;
	if ((bl = calloc(1, sizeof(*bl))) == NULL ||
	    (bl->bl_backend = strdup(be->cb_name)) == NULL ||
	    (bl->bl_sid = strdup(sid)) == NULL ||
	    (version != NULL && (bl->bl_version = strdup(version)) == NULL) ||
	    (bl->bl_ev = evtimer_new(w->w_base, bclose_on_later, bl)) ==
	    NULL)
		goto fail;
	bl->bl_w = w;
	bl->bl_client = client;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if (evtimer_add(bl->bl_ev, &tv) == -1)
		goto fail;
	TAILQ_INSERT_TAIL(&bclose_laters, bl, bl_entry);
	return;
fail:
	if (bl != NULL) {
		if (bl->bl_ev != NULL)
			event_free(bl->bl_ev);
		free(bl->bl_backend);
		free(bl->bl_sid);
		free(bl->bl_version);
		free(bl);
	}
	if (client)
		bclose_forget(w, be);
}

void
bclose_replaced(struct worker *w, const struct config_backend *be,
    const char *sid, const char *version)
{
	bclose_later(w, be, sid, version, 1);
}

void
bclose_unheld(struct worker *w, const struct config_backend *be,
    const char *sid, const char *version)
{
	bclose_later(w, be, sid, version, 0);
}

/* a principal's backend session that expired idle (backend_session.c) */
static void
bclose_scope_record(struct worker *w, const char *backend, const char *rec,
    size_t len)
{
	const struct config_backend	*be;
	char				*sid, *ver;

	if ((be = config_backend_find(w->w_conf, backend)) == NULL ||
	    bsession_decode(rec, len, &sid, &ver) == -1)
		return;
	diag_count_bsession_end(w, be, 0);
	log_debug("backend %s: closing an idle principal's backend session",
	    backend);
	bclose_send(w, backend, sid, ver, 0);
	free(sid);
	free(ver);
}

/* an ended session's record: its backend sessions closed */
static void
bclose_record(struct worker *w, const char *id, const char *rec,
    size_t len)
{
	struct session s;

	if (session_decode(rec, len, &s) == -1) {
		log_warnx("an ended session's record is corrupt; its backend "
		    "sessions stay open");
		return;
	}
	log_debug("closing the backend sessions of ended session %.8s...",
	    id);
	bclose_session(w, &s);
	if (upstream_hooks.uh_session_end != NULL)
		upstream_hooks.uh_session_end(w, id);
	session_clear(&s);
}

/* the check done: its in-flight slot back, the queue moving */
static void
bclose_check_free(struct bclose_check *bc, int pump)
{
	struct worker *w = bc->bc_w;

	TAILQ_REMOVE(&bclose_checks, bc, bc_entry);
	redis_cancel(bc->bc_cmd);
	if (bc->bc_ev != NULL)
		event_free(bc->bc_ev);
	free(bc->bc_rec);
	free(bc);
	if (bclose_inflight > 0)
		bclose_inflight--;
	if (pump && bclose_more && bclose_inflight <= BCLOSE_INFLIGHT / 2)
		bclose_pump(w);
}

/* back into the queue for a later look (by any worker of this node) */
static void
bclose_check_requeue(struct bclose_check *bc)
{
	if (store_put_ext(bc->bc_w->w_store, STORE_CLOSING, bc->bc_id,
	    strlen(bc->bc_id), bc->bc_rec, bc->bc_len, bc->bc_expires_ms,
	    store_now_ms(), 0, NULL, 0) == -1)
		log_warnx("closing %.8s...: not queued again; its backend "
		    "sessions stay open", bc->bc_id);
}

/* Redis did not answer: nothing closed; this worker pauses its takes */
static void
bclose_check_failed(struct bclose_check *bc, const redisReply *reply,
    const char *err)
{
	uint64_t now = store_now_ms();

	session_redis_failed("an ended session not looked up", reply, err);
	/* the questions of one batch fail together: one step each time */
	if (now >= bclose_pause_until) {
		bclose_pause_ms = bclose_pause_ms == 0 ?
		    BCLOSE_PAUSE_MIN_MS : bclose_pause_ms * 2;
		if (bclose_pause_ms > BCLOSE_PAUSE_MAX_MS)
			bclose_pause_ms = BCLOSE_PAUSE_MAX_MS;
		bclose_pause_until = now + bclose_pause_ms;
	}
	bclose_check_requeue(bc);
	bclose_check_free(bc, 0);
}

static void
bclose_on_pttl(void *arg, const redisReply *reply, const char *err)
{
	struct bclose_check	*bc = arg;
	struct timeval		 tv;
	long long		 ttl;
	uint64_t		 ms;

	bc->bc_cmd = NULL;
	if (err != NULL || reply == NULL ||
	    reply->type != REDIS_REPLY_INTEGER) {
		bclose_check_failed(bc, reply, err);
		return;
	}
	bclose_pause_ms = 0;
	ttl = reply->integer;
	if (ttl == -3) {
		/* a principal's session another node found gone first */
		bclose_check_free(bc, 1);
		return;
	}
	if (ttl == -2) {
		/* gone everywhere: closed as on one host */
		if (bc->bc_backend[0] != '\0')
			bclose_scope_record(bc->bc_w, bc->bc_backend,
			    bc->bc_rec, bc->bc_len);
		else
			bclose_record(bc->bc_w, bc->bc_id, bc->bc_rec,
			    bc->bc_len);
		bclose_check_free(bc, 1);
		return;
	}
	if (ttl >= 0 && ttl <= BCLOSE_NEAR_MS && !bc->bc_again) {
		/* this copy's own write, most likely: look again after it */
		ms = (uint64_t)ttl + BCLOSE_MARGIN_MS;
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		bc->bc_again = 1;
		if (evtimer_add(bc->bc_ev, &tv) == 0)
			return;
		bclose_check_requeue(bc);
		bclose_check_free(bc, 1);
		return;
	}
	/* used since: the node whose copy expires last closes them */
	log_debug("%s %.8s... lives on in redis (%lld ms): its backend "
	    "sessions stay open", bc->bc_backend[0] != '\0' ? "a principal's "
	    "idle backend session" : "ended session", bc->bc_id, ttl);
	bclose_check_free(bc, 1);
}

/* PTTL <keyPrefix>sess:<id>; a principal's session: bsession_redis_gone() */
static void
bclose_check_ask(struct bclose_check *bc)
{
	struct redis_args	a;
	char			key[SESSION_RKEY_MAX];
	size_t			klen;

	if (bc->bc_backend[0] != '\0') {
		if ((bc->bc_cmd = bsession_redis_gone(bc->bc_id,
		    strlen(bc->bc_id), bc->bc_rec, bc->bc_len, bclose_on_pttl,
		    bc)) == NULL)
			bclose_check_failed(bc, NULL, "not sent");
		return;
	}
	klen = redis_key(key, sizeof(key),
	    bc->bc_w->w_conf->cf_sstore.css_prefix, REDIS_KIND_SESSION,
	    bc->bc_id, NULL);
	redis_args_init(&a);
	redis_args_push(&a, "PTTL");
	redis_args_pushn(&a, key, klen);
	if (klen == 0 ||
	    (bc->bc_cmd = redis_send(&a, bclose_on_pttl, bc)) == NULL)
		bclose_check_failed(bc, NULL, klen == 0 ? "key too long" :
		    "not connected");
}

static void
bclose_on_again(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	bclose_check_ask(arg);
}

/* a record taken with provider redis: 0, or -1 */
static int
bclose_check_new(struct worker *w, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct bclose_check *bc;

	if (klen == 0 || klen >= sizeof(bc->bc_id) ||
	    (bc = calloc(1, sizeof(*bc))) == NULL)
		return -1;
	memcpy(bc->bc_id, key, klen);
	(void)bsession_closing_key(key, klen, bc->bc_backend,
	    sizeof(bc->bc_backend));
	bc->bc_w = w;
	bc->bc_expires_ms = rec->sr_expires_ms;
	bc->bc_len = rec->sr_len;
	if ((bc->bc_rec = malloc(rec->sr_len + 1)) == NULL ||
	    (bc->bc_ev = evtimer_new(w->w_base, bclose_on_again, bc)) ==
	    NULL) {
		free(bc->bc_rec);
		free(bc);
		return -1;
	}
	memcpy(bc->bc_rec, rec->sr_data, rec->sr_len + 1);
	TAILQ_INSERT_TAIL(&bclose_checks, bc, bc_entry);
	bclose_inflight++;
	bclose_check_ask(bc);
	return 0;
}

/*
 * One host: an ended session's backend sessions, or a principal's
 * backend session (its key scope|backend), closed here.
 */
static void
bclose_ended_here(struct worker *w, const void *key, size_t klen,
    const struct store_rec *rec)
{
	char	id[SESSION_ID_LEN + 1], be[CONFIG_NAME_MAX + 1];

	if (bsession_closing_key(key, klen, be, sizeof(be))) {
		bclose_scope_record(w, be, rec->sr_data, rec->sr_len);
		return;
	}
	(void)snprintf(id, sizeof(id), "%.*s", (int)(klen < sizeof(id) ?
	    klen : sizeof(id) - 1), (const char *)key);
	bclose_record(w, id, rec->sr_data, rec->sr_len);
}

/* shared sessions: never closed unasked, they may live on elsewhere */
static void
bclose_ended_shared(struct worker *w, const void *key, size_t klen,
    const struct store_rec *rec)
{
	if (bclose_check_new(w, key, klen, rec) == -1)
		log_warnx("an ended session not looked up in redis; its "
		    "backend sessions stay open");
}

/* which of the two, chosen by bclose_init() */
static void	(*bclose_ended)(struct worker *, const void *, size_t,
		    const struct store_rec *) = bclose_ended_here;

/* a queued record: the ended session's payload */
static int
bclose_on_taken(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct worker	*w = arg;

	/* a session's subscription that expired with it (subs.c) */
	if (upstream_hooks.uh_closing != NULL &&
	    upstream_hooks.uh_closing(w, key, klen, rec) == 0)
		return 0;
	bclose_ended(w, key, klen, rec);
	return 0;
}

static void
bclose_pump(struct worker *w)
{
	size_t	room;
	int	n;

	if (bclose_taking || w->w_draining)
		return;
	bclose_taking = 1;
	while (bclose_inflight < BCLOSE_INFLIGHT &&
	    store_now_ms() >= bclose_pause_until) {
		room = BCLOSE_INFLIGHT - bclose_inflight;
		n = store_take(w->w_store, STORE_CLOSING, room, store_now_ms(),
		    bclose_on_taken, w);
		bclose_more = n > 0 && (size_t)n == room;
		if (!bclose_more)
			break;
	}
	bclose_taking = 0;
}

static void
bclose_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	bclose_pump(arg);
}

int
bclose_init(struct worker *w)
{
	struct timeval tv = { BCLOSE_TICK_MS / 1000,
	    (BCLOSE_TICK_MS % 1000) * 1000 };

	/* after session_redis_init(): shared sessions (provider redis,
	 * principals' too) are looked up first */
	bclose_ended = session_redis_on() ? bclose_ended_shared :
	    bclose_ended_here;
	bclose_tick_ev = event_new(w->w_base, -1, EV_PERSIST, bclose_on_tick,
	    w);
	if (bclose_tick_ev == NULL || event_add(bclose_tick_ev, &tv) == -1)
		return -1;
	return 0;
}

void
bclose_free(void)
{
	struct bclose_later	*bl;
	struct bclose_check	*bc;

	while ((bl = TAILQ_FIRST(&bclose_laters)) != NULL)
		bclose_later_free(bl);
	/* the looks not done yet: back for another worker */
	while ((bc = TAILQ_FIRST(&bclose_checks)) != NULL) {
		bclose_check_requeue(bc);
		bclose_check_free(bc, 0);
	}
	if (bclose_tick_ev != NULL)
		event_free(bclose_tick_ev);
	bclose_tick_ev = NULL;
}
