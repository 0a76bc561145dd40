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
 */
#include <sys/queue.h>
#include <sys/time.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/http_client.h"
#include "shared/log.h"
#include "shared/store.h"
#include "upstream.h"
#include "worker.h"

#define BCLOSE_INFLIGHT		16	/* DELETEs in flight per worker */
#define BCLOSE_TICK_MS		1000	/* a look at the queue */
#define BCLOSE_TIMEOUT_MS	5000	/* the most one DELETE takes */

struct bclose_later {
	TAILQ_ENTRY(bclose_later) bl_entry;
	struct event		*bl_ev;
	struct worker		*bl_w;
	char			*bl_backend;
	char			*bl_sid;
	char			*bl_version;
};

static struct event	*bclose_tick_ev;
static size_t		 bclose_inflight;
static int		 bclose_more;	/* the last take was full */
static int		 bclose_taking;
static TAILQ_HEAD(, bclose_later) bclose_laters =
    TAILQ_HEAD_INITIALIZER(bclose_laters);

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

/* DELETE one backend session; it counts as closed whatever the answer */
static void
bclose_send(struct worker *w, const char *backend, const char *sid,
    const char *version)
{
	static const struct http_call_cbs cbs = {
		.hc_done = bclose_on_done,
	};
	const struct config_backend	*be;
	uint64_t			 timeout;

	if ((be = config_backend_find(w->w_conf, backend)) == NULL) {
		/* gone from the config: nothing to send it to */
		(void)store_gauge_add(w->w_store, backend, -1);
		return;
	}
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
			    s->s_backends[i].sb_version);
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
	bclose_send(bl->bl_w, bl->bl_backend, bl->bl_sid, bl->bl_version);
	bclose_later_free(bl);
}

/*
 * A backend session the record no longer names (another worker's open
 * for the same client session recorded after it, or one the backend
 * lost): calls may still be running on it, so it is closed once they
 * are over, after the backend's timeout.  A worker that exits first
 * leaves it to the backend's own expiry.
 */
void
bclose_replaced(struct worker *w, const struct config_backend *be,
    const char *sid, const char *version)
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
	bclose_forget(w, be);
}

/* a queued record: the ended session's payload */
static int
bclose_on_taken(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	struct worker	*w = arg;
	struct session	 s;

	if (session_decode(rec->sr_data, rec->sr_len, &s) == -1) {
		log_warnx("an ended session's record is corrupt; its backend "
		    "sessions stay open");
		return 0;
	}
	log_debug("closing the backend sessions of ended session %.8s...",
	    klen >= 8 ? (const char *)key : "?");
	bclose_session(w, &s);
	session_clear(&s);
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
	while (bclose_inflight < BCLOSE_INFLIGHT) {
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

	bclose_tick_ev = event_new(w->w_base, -1, EV_PERSIST, bclose_on_tick,
	    w);
	if (bclose_tick_ev == NULL || event_add(bclose_tick_ev, &tv) == -1)
		return -1;
	return 0;
}

void
bclose_free(void)
{
	struct bclose_later *bl;

	while ((bl = TAILQ_FIRST(&bclose_laters)) != NULL)
		bclose_later_free(bl);
	if (bclose_tick_ev != NULL)
		event_free(bclose_tick_ev);
	bclose_tick_ev = NULL;
}
