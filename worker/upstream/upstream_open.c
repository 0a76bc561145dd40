/*
 * The backend edge's session step (upstream_int.h): the 2025-11-25
 * backend session a request goes over, found or opened.
 *
 * A client session's own backend session is recorded in it; a scope's
 * in the bsessions db (backend_session.h).  Opening one is an initialize, then
 * notifications/initialized, whose answer every open waits for (a
 * server may set up per-session state when it arrives); only then is
 * the session recorded and handed to the requests that wait for it.
 * One open per (client session or scope, backend) runs in a process
 * however many requests wait; a scope's also across the processes: the
 * one that takes the scope's lock opens, the others wait for its record
 * (looked for every UOPEN_POLL_MS, until the lock's time is up).  With
 * sessionStorage.provider redis a principal's is also one across the
 * nodes: the process holding the lock reads it from Redis, or opens it
 * for every node (bsession_store's bs_fetch).
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/http_client.h"
#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/headers.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/backend_session_store.h"
#include "worker/upstream/backend_session_close.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_int.h"

#define UOPEN_POLL_MS	50

/* a 2025-11-25 backend session being opened */
struct uopen {
	TAILQ_ENTRY(uopen)		 uo_entry;
	struct worker			*uo_w;
	const struct config_backend	*uo_be;
	char				 uo_sid[SESSION_ID_LEN + 1]; /* or "" */
	char				*uo_scope;	/* else the scope's */
	struct backend_call		*uo_call;	/* the initialize */
	struct http_call		*uo_note;	/* then initialized */
	char				*uo_bsid;	/* what it opened */
	char				*uo_ver;
	json_t				*uo_result;
	int				 uo_off;	/* off uopens */
	int				 uo_locked;	/* the scope's lock */
	int				 uo_remote;	/* another opens */
	int				 uo_fleet;	/* for every node */
	struct redis_flight		*uo_flight;	/* Redis asked */
	uint64_t			 uo_deadline;	/* ... until then */
	TAILQ_HEAD(, upstream)		 uo_waiters;
};

static TAILQ_HEAD(, uopen) uopens = TAILQ_HEAD_INITIALIZER(uopens);
static struct event	*uopen_tick;

static int	uopen_start(struct uopen *);

/* the open is through: recorded where the next request finds it */
static void
uopen_record(struct uopen *uo, const char *bsid, const char *version)
{
	struct worker		*w = uo->uo_w;
	struct session		 s;
	struct session_backend	*sb;
	json_t			*p;

	if (uo->uo_scope != NULL) {
		/* another's recorded meanwhile (a lock that timed out):
		 * this one serves its waiters, then is closed */
		if (bsession_save(w, uo->uo_scope, uo->uo_be, bsid,
		    version) != 0)
			bclose_unheld(w, uo->uo_be, bsid, version);
		return;
	}
	if (bsid != NULL)
		bclose_opened(w, uo->uo_be);
	/* re-read first, another worker may have written */
	if (session_load(w->w_store, uo->uo_sid, store_now_ms(), &s) != 0) {
		if (bsid == NULL)
			return;
		/* it ended while this opened: nothing else will close it */
		memset(&s, 0, sizeof(s));
		(void)session_backend_set(&s, uo->uo_be->cb_name, bsid,
		    version);
		bclose_session(w, &s);
		session_clear(&s);
		return;
	}
	if ((sb = session_backend_get(&s, uo->uo_be->cb_name)) != NULL &&
	    sb->sb_sid != NULL && (bsid == NULL || strcmp(sb->sb_sid,
	    bsid) != 0))
		bclose_replaced(w, uo->uo_be, sb->sb_sid, sb->sb_version);
	if (session_backend_set(&s, uo->uo_be->cb_name, bsid, version) ==
	    -1 || session_save(w->w_store, &s, w->w_conf->cf_session_ttl_ms,
	    store_now_ms()) == -1) {
		log_warnx("cannot record the backend session of %.8s...",
		    uo->uo_sid);
		/* unrecorded: closed once its calls are done */
		bclose_replaced(w, uo->uo_be, bsid, version);
	}
	/* the level the client asked for, not the backend's */
	if (s.s_log_level != NULL &&
	    (p = json_pack("{s:s}", "level", s.s_log_level)) != NULL) {
		(void)upstream_request_nowait(w, uo->uo_be, bsid, version,
		    "logging/setLevel", p);
		json_decref(p);
	}
	session_clear(&s);
}

static void
uopen_free(struct uopen *uo)
{
	if (!uo->uo_off)
		TAILQ_REMOVE(&uopens, uo, uo_entry);
	/* an open cut short (the process exits): the others may go on */
	if (uo->uo_locked)
		bsession_unlock(uo->uo_w, uo->uo_scope, uo->uo_be);
	if (uo->uo_fleet)
		bsession_share(uo->uo_scope, uo->uo_be, NULL, NULL);
	redis_flight_cancel(uo->uo_flight);
	backend_call_cancel(uo->uo_call);
	if (uo->uo_note != NULL)
		http_call_cancel(uo->uo_note);
	free(uo->uo_scope);
	free(uo->uo_bsid);
	free(uo->uo_ver);
	json_decref(uo->uo_result);
	free(uo);
}

/* the session is open (or failed: msg): on with those who wait */
static void
uopen_dispatch(struct uopen *uo, const char *msg)
{
	struct upstream	*u;
	char		*sid, *ver;

	/* off the list first: a waiter's failure may start another open */
	TAILQ_REMOVE(&uopens, uo, uo_entry);
	uo->uo_off = 1;
	/* recorded (or failed) before the lock goes: see uopen_look() */
	if (uo->uo_locked) {
		bsession_unlock(uo->uo_w, uo->uo_scope, uo->uo_be);
		uo->uo_locked = 0;
	}
	if (uo->uo_fleet) {
		bsession_share(uo->uo_scope, uo->uo_be,
		    msg == NULL ? uo->uo_bsid : NULL, uo->uo_ver);
		uo->uo_fleet = 0;
	}
	while ((u = TAILQ_FIRST(&uo->uo_waiters)) != NULL) {
		TAILQ_REMOVE(&uo->uo_waiters, u, u_wentry);
		u->u_open = NULL;
		if (msg != NULL) {
			upstream_fail(u, "%s", msg);
			continue;
		}
		sid = uo->uo_bsid != NULL ? strdup(uo->uo_bsid) : NULL;
		if ((ver = strdup(uo->uo_ver)) == NULL ||
		    (uo->uo_bsid != NULL && sid == NULL)) {
			free(sid);
			free(ver);
			upstream_fail(u, "out of memory");
			continue;
		}
		upstream_session_take(u, sid, ver);
		u->u_onscope = uo->uo_scope != NULL;
		if (u->u_flags & UPSTREAM_F_DESCRIBE) {
			json_decref(u->u_info);
			u->u_info = uo->uo_result == NULL ? NULL :
			    json_pack("{s:O}", "result", uo->uo_result);
		}
		upstream_ready(u);
	}
	uopen_free(uo);
}

/*
 * notifications/initialized is through: only now is the session
 * recorded, where other calls of this process and the other processes
 * find it, and handed to those who wait.  A server may set up
 * per-session state when the notification arrives (server-everything
 * registers tools then), and the only sign over HTTP that it has is
 * the answer to its POST (MCP 2025-11-25, Lifecycle: initialized goes
 * before any other request).
 */
static void
uopen_opened(struct uopen *uo)
{
	uopen_record(uo, uo->uo_bsid, uo->uo_ver);
	uopen_dispatch(uo, NULL);
}

static void
uopen_on_noted(void *arg, struct http_call *hc, int result,
    const char *errmsg)
{
	struct uopen *uo = arg;

	(void)hc;
	uo->uo_note = NULL;	/* freed by the client after this */
	if (result == -1)
		log_debug("backend %s: notifications/initialized: %s",
		    uo->uo_be->cb_name, errmsg);
	uopen_opened(uo);
}

static void
uopen_on_done(void *arg, int rc, json_t *response, int flags,
    const char *errmsg)
{
	static const struct http_call_cbs ncbs = {
		NULL, NULL, uopen_on_noted
	};
	struct uopen	*uo = arg;
	json_t		*result, *err, *note;
	const char	*version = NULL, *sid = NULL;
	char		 msg[512];

	(void)flags;
	sid = uo->uo_call != NULL ? backend_call_session(uo->uo_call) : NULL;
	uo->uo_call = NULL;
	result = json_object_get(response, "result");
	err = json_object_get(response, "error");
	version = json_string_value(json_object_get(result,
	    "protocolVersion"));
	msg[0] = '\0';
	if (rc == -1)
		(void)snprintf(msg, sizeof(msg), "%s", errmsg);
	else if (err != NULL)
		(void)snprintf(msg, sizeof(msg), "backend %s refused "
		    "initialize: %s", uo->uo_be->cb_name,
		    json_string_value(json_object_get(err, "message")) ?
		    json_string_value(json_object_get(err, "message")) : "?");
	else if (!json_is_object(result) || version == NULL ||
	    !proto_version_known(version))
		(void)snprintf(msg, sizeof(msg), "backend %s sent an invalid "
		    "initialize result", uo->uo_be->cb_name);
	else if (sid != NULL && !proto_session_id_valid(sid))
		(void)snprintf(msg, sizeof(msg), "backend %s sent an invalid "
		    "session id", uo->uo_be->cb_name);
	if (msg[0] != '\0') {
		uopen_dispatch(uo, msg);
		return;
	}
	/* a Legacy-cached backend that negotiates 2026-07-28 flips */
	if (proto_era_of_version(version) == PROTO_ERA_MODERN)
		era_set(uo->uo_w, uo->uo_be, PROTO_ERA_MODERN,
		    "initialize negotiated " MCP_VERSION_MODERN);
	backend_info_put(uo->uo_w, uo->uo_be, version, result);
	if ((sid != NULL && (uo->uo_bsid = strdup(sid)) == NULL) ||
	    (uo->uo_ver = strdup(version)) == NULL) {
		/* recorded all the same: closed with the rest */
		uopen_record(uo, sid, version);
		uopen_dispatch(uo, "out of memory");
		return;
	}
	uo->uo_result = json_incref(result);
	/* not recorded before it is answered: see uopen_opened() */
	note = jsonrpc_notification_new("notifications/initialized", NULL);
	if (!TAILQ_EMPTY(&uo->uo_waiters))
		backend_cred_set(TAILQ_FIRST(&uo->uo_waiters)->u_authz);
	if (note != NULL)
		uo->uo_note = backend_post_start(uo->uo_w, uo->uo_be, sid,
		    version, note, &ncbs, uo);
	backend_cred_set(NULL);
	json_decref(note);
	if (uo->uo_note == NULL)
		uopen_opened(uo);
}

/* the initialize, for the first waiter (its capabilities, for a client
 * session's, and its credential): 0, or -1 (the caller fails it) */
static int
uopen_start(struct uopen *uo)
{
	static const struct backend_call_cbs cbs = {
		NULL, NULL, uopen_on_done, NULL, 0, NULL
	};
	struct upstream		*u = TAILQ_FIRST(&uo->uo_waiters);
	struct backend_req	 br;
	json_t			*params, *caps;
	char			 id[BACKEND_ID_MAX], *body;
	size_t			 len = 0;

	if (u == NULL)
		return -1;
	/* the client's capabilities: what vmcpd can relay to it */
	caps = uo->uo_sid[0] != '\0' && u->u_caps != NULL ?
	    json_incref((json_t *)u->u_caps) : json_object();
	params = json_pack("{s:s, s:o, s:o}", "protocolVersion",
	    MCP_VERSION_LEGACY, "capabilities", caps, "clientInfo",
	    upstream_client_info());
	backend_next_id(uo->uo_w, id, sizeof(id));
	body = params != NULL ? upstream_body(id, "initialize", params, NULL,
	    0, &len) : NULL;
	json_decref(params);
	memset(&br, 0, sizeof(br));
	br.br_id = id;
	br.br_body = body;
	br.br_len = len;
	/* a span under the call that opens the session (trace.h) */
	br.br_method = "initialize";
	br.br_trace = &u->u_trace;
	backend_cred_set(u->u_authz);
	uo->uo_call = body != NULL ? backend_post(uo->uo_w, uo->uo_be, &br,
	    &cbs, uo) : NULL;
	backend_cred_set(NULL);
	free(body);
	return uo->uo_call != NULL ? 0 : -1;
}

/* the initialize, or the waiters told why not */
static void
uopen_go(struct uopen *uo)
{
	char	 why[300];

	if (uopen_start(uo) == -1) {
		(void)snprintf(why, sizeof(why), "cannot reach backend %s",
		    uo->uo_be->cb_name);
		uopen_dispatch(uo, why);
	}
}

/*
 * Redis answered for a principal's session: another node's (then this
 * host's copy too), or this process opens it, for every node (MINE) or
 * for this one (Redis failed or slow).
 */
static void
uopen_on_fleet(void *arg, enum redis_flight_got got, const char *rec,
    size_t len, uint64_t ttl_ms)
{
	struct uopen	*uo = arg;
	char		*sid, *ver;

	(void)ttl_ms;
	uo->uo_flight = NULL;
	if (got == REDIS_FLIGHT_HIT &&
	    bsession_decode(rec, len, &sid, &ver) == 0) {
		log_debug("backend %s: a principal's backend session another "
		    "node opened", uo->uo_be->cb_name);
		/* this host's copy; reading it is a use for every node */
		(void)bsession_save(uo->uo_w, uo->uo_scope, uo->uo_be, sid,
		    ver);
		bsession_store->bs_touch(uo->uo_scope, uo->uo_be);
		uo->uo_bsid = sid;
		uo->uo_ver = ver;
		uopen_dispatch(uo, NULL);
		return;
	}
	uo->uo_fleet = got == REDIS_FLIGHT_MINE;
	/* nobody waits any more: the locks go, nothing is opened */
	if (TAILQ_EMPTY(&uo->uo_waiters)) {
		uopen_free(uo);
		return;
	}
	uopen_go(uo);
}

/*
 * The scope's session, if recorded: 1 found (dispatched), else 0.  A
 * description needs the initialize result too (cached by the opener
 * before it recorded the session): without it, it is not found.
 */
static int
uopen_found(struct uopen *uo)
{
	struct upstream	*u;
	json_t		*info = NULL;
	char		*sid, *ver;
	int		 describe = 0;

	TAILQ_FOREACH(u, &uo->uo_waiters, u_wentry)
		describe |= (u->u_flags & UPSTREAM_F_DESCRIBE) != 0;
	if (bsession_load(uo->uo_w, uo->uo_scope, uo->uo_be, &sid,
	    &ver) == -1)
		return 0;
	if (describe && (info = backend_info_get(uo->uo_w,
	    uo->uo_be)) == NULL) {
		free(sid);
		free(ver);
		return 0;
	}
	uo->uo_bsid = sid;
	uo->uo_ver = ver;
	if (info != NULL)
		uo->uo_result = json_incref(json_object_get(info, "result"));
	json_decref(info);
	uopen_dispatch(uo, NULL);
	return 1;
}

/*
 * Another process's open of the scope's session, looked at: 1 done
 * (dispatched, or opened here now), 0 still to wait.  The lock is read
 * before the record, so that a record written before the lock went is
 * seen; and once this process holds the lock, the record is looked for
 * again, in case another's open ended in between.  An open that failed
 * lets the lock go without a record: a process waiting then tries for
 * itself, once.
 */
static int
uopen_look(struct uopen *uo)
{
	char	 why[300];
	int	 busy;

	busy = bsession_locked(uo->uo_w, uo->uo_scope, uo->uo_be);
	if (uopen_found(uo))
		return 1;
	if (busy) {
		if (store_now_ms() < uo->uo_deadline)
			return 0;
		(void)snprintf(why, sizeof(why), "backend %s: the backend "
		    "session another process opens is not there after %llu s",
		    uo->uo_be->cb_name,
		    (unsigned long long)(bsession_lock_ms(uo->uo_be) / 1000));
		uopen_dispatch(uo, why);
		return 1;
	}
	/* none open, none opening: this process opens */
	if (bsession_lock(uo->uo_w, uo->uo_scope, uo->uo_be))
		return 0;
	uo->uo_locked = 1;
	uo->uo_remote = 0;
	if (uopen_found(uo))
		return 1;
	/* the nodes share it: Redis first (uopen_on_fleet()) */
	if ((uo->uo_flight = bsession_store->bs_fetch(uo->uo_scope, uo->uo_be,
	    uopen_on_fleet, uo)) != NULL)
		return 1;
	uopen_go(uo);
	return 1;
}

static void
uopen_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval	 tv = { 0, UOPEN_POLL_MS * 1000 };
	struct uopen	*uo, *next;
	int		 waiting = 0;

	(void)fd;
	(void)ev;
	(void)arg;
	for (uo = TAILQ_FIRST(&uopens); uo != NULL; uo = next) {
		next = TAILQ_NEXT(uo, uo_entry);
		if (!uo->uo_remote)
			continue;
		if (TAILQ_EMPTY(&uo->uo_waiters)) {
			/* nobody waits any more */
			uopen_free(uo);
			continue;
		}
		waiting |= !uopen_look(uo);
	}
	/* a dispatch may have started other waits: look at them all */
	TAILQ_FOREACH(uo, &uopens, uo_entry)
		waiting |= uo->uo_remote;
	if (waiting)
		(void)evtimer_add(uopen_tick, &tv);
}

/* uo waits for another process's open: looked at on the tick */
static int
uopen_wait(struct uopen *uo)
{
	struct timeval tv = { 0, UOPEN_POLL_MS * 1000 };

	if (uopen_tick == NULL && (uopen_tick = evtimer_new(uo->uo_w->w_base,
	    uopen_on_tick, NULL)) == NULL)
		return -1;
	uo->uo_remote = 1;
	uo->uo_deadline = store_now_ms() + bsession_lock_ms(uo->uo_be);
	if (!evtimer_pending(uopen_tick, NULL))
		(void)evtimer_add(uopen_tick, &tv);
	return 0;
}

/* u waits for the session of (its client session or scope, backend):
 * one initialize, however many wait */
void
upstream_open(struct upstream *u, const char *sid, const char *scope)
{
	struct uopen	*uo;

	TAILQ_FOREACH(uo, &uopens, uo_entry)
		if (uo->uo_be == u->u_be && (sid != NULL ?
		    strcmp(uo->uo_sid, sid) == 0 : (uo->uo_scope != NULL &&
		    strcmp(uo->uo_scope, scope) == 0)))
			break;
	if (uo != NULL) {
		TAILQ_INSERT_TAIL(&uo->uo_waiters, u, u_wentry);
		u->u_open = uo;
		u->u_state = US_OPENING;
		return;
	}
	if ((uo = calloc(1, sizeof(*uo))) == NULL ||
	    (scope != NULL && (uo->uo_scope = strdup(scope)) == NULL)) {
		free(uo);
		upstream_fail(u, "out of memory");
		return;
	}
	uo->uo_w = u->u_w;
	uo->uo_be = u->u_be;
	if (sid != NULL)
		(void)snprintf(uo->uo_sid, sizeof(uo->uo_sid), "%s", sid);
	TAILQ_INIT(&uo->uo_waiters);
	TAILQ_INSERT_TAIL(&uo->uo_waiters, u, u_wentry);
	u->u_open = uo;
	u->u_state = US_OPENING;
	TAILQ_INSERT_TAIL(&uopens, uo, uo_entry);
	if (scope == NULL) {
		uopen_go(uo);
		return;
	}
	/* a scope's: opened here if no process has one or opens one */
	if (uopen_wait(uo) == -1) {
		uopen_dispatch(uo, "out of memory");
		return;
	}
	(void)uopen_look(uo);
}

void
upstream_open_leave(struct upstream *u)
{
	/* the open goes on: its session is recorded for others */
	if (u->u_open != NULL)
		TAILQ_REMOVE(&u->u_open->uo_waiters, u, u_wentry);
	u->u_open = NULL;
}

/* the session the call goes over, its strings taken */
void
upstream_session_take(struct upstream *u, char *sid, char *ver)
{
	free(u->u_own[0]);
	free(u->u_own[1]);
	u->u_bsid = u->u_own[0] = sid;
	u->u_bver = u->u_own[1] = ver;
}

/*
 * The 2025-11-25 session the request goes over: the client session's
 * own (recorded in it), or the scope's (backend_session.c); opened when there
 * is none, or when it was lost.  A description needs the initialize
 * result too: cached, or the open's.
 */
void
upstream_acquire(struct upstream *u)
{
	struct session_backend	*sb;
	json_t			*info;
	char			*sid, *ver;

	u->u_onscope = 0;
	if ((u->u_sess == NULL || (u->u_flags & UPSTREAM_F_SUBSCRIPTION)) &&
	    !u->u_reopen && bsession_load(u->u_w, u->u_scope, u->u_be, &sid,
	    &ver) == 0) {
		info = (u->u_flags & UPSTREAM_F_DESCRIBE) ?
		    backend_info_get(u->u_w, u->u_be) : NULL;
		if (!(u->u_flags & UPSTREAM_F_DESCRIBE) || info != NULL) {
			u->u_onscope = 1;
			if (info != NULL)
				u->u_info = json_pack("{s:O}", "result",
				    json_object_get(info, "result"));
			json_decref(info);
			upstream_session_take(u, sid, ver);
			upstream_ready(u);
			return;
		}
		free(sid);
		free(ver);
	}
	if (u->u_sess == NULL) {
		upstream_open(u, NULL, u->u_scope);
		return;
	}
	sb = session_backend_get(u->u_sess, u->u_be->cb_name);
	if (sb != NULL && !u->u_reopen) {
		upstream_session_take(u, NULL, NULL);
		u->u_bsid = sb->sb_sid;
		u->u_bver = sb->sb_version;
		upstream_ready(u);
		return;
	}
	upstream_open(u, u->u_sess->s_id, NULL);
}

/* at exit: what is still waiting goes without a callback */
void
upstream_open_free_all(void)
{
	struct upstream	*u;
	struct uopen	*uo;

	while ((uo = TAILQ_FIRST(&uopens)) != NULL) {
		while ((u = TAILQ_FIRST(&uo->uo_waiters)) != NULL) {
			TAILQ_REMOVE(&uo->uo_waiters, u, u_wentry);
			u->u_open = NULL;
			u->u_state = US_DONE;
		}
		uopen_free(uo);
	}
	if (uopen_tick != NULL)
		event_free(uopen_tick);
	uopen_tick = NULL;
}
