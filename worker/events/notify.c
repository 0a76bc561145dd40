/*
 * Notifications from backends: one listener per backend, not per
 * session.  Worker 0 holds a GET stream on each backend's scope
 * session (backend_session.c; the session the view is listed on and resource
 * subscriptions are made on) and turns what arrives into deliveries:
 *
 *  - list_changed: that backend's part of the view is invalidated and
 *    rebuilt; if the kind changed, every session gets the
 *    notification on its GET stream (stream_publish(), any worker);
 *  - resources/updated: the sessions subscribed to the URI get it (the
 *    holders subs.c records), and so do the listen streams that asked.
 *
 * A 2026-07-28 backend has no session and no GET stream: worker 0 holds
 * a subscriptions/listen stream on it instead, asking for the three
 * list_changed kinds and the URIs held of it (subs.c; reopened when
 * those change, notify_relisten()).  The resource subscriptions made on
 * a 2025-11-25 backend's scope session are subs.c's, told when the
 * listener's stream is up or down.
 *
 * A stream that ends is reopened with backoff; a session the backend
 * forgot is opened anew.  If worker 0 dies its successor takes over.
 *
 * A backend that sends list_changed in a storm is held back twice
 * (flow.h's gate): worker 0 passes its changes on to the builder at
 * most every NOTIFY_FORWARD_MS (the last one always), and the builder
 * relists it with one relist under way and one pending at most, the
 * relists at least an interval apart that grows while it storms.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "shared/http_client.h"
#include "worker/upstream/flow.h"
#include "worker/events/bstream.h"
#include "worker/events/subs.h"
#include "worker/process/wake.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/sse.h"
#include "worker/events/listen_stream.h"
#include "worker/events/notify.h"
#include "worker/events/stream.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/state/session.h"
#include "worker/upstream/backend_session.h"
#include "worker/upstream/eras.h"
#include "worker/upstream/upstream.h"
#include "worker/upstream/upstream_stream.h"
#include "worker/view/view_get.h"
#include "worker/upstream/token_exchange.h"

/* worker 0: a backend's changes go to the builder this far apart (a
 * fifth of the builder's least interval between relists, so that a
 * storm folds changes there) */
#define NOTIFY_FORWARD_MS	100

struct listener {
	struct worker			*l_w;
	const struct config_backend	*l_be;
	struct bstream			 l_bs;		/* its stream */
	struct lcgate			 l_gate;	/* its list changes */
	struct event			*l_fwd;		/* ...sent then */
};

static struct listener	*listeners;
static size_t		 nlisteners;
static int		 notify_stopped;

static void	notify_connect(void *);

/* sessions collected first: publishing writes, iteration only reads */
struct notify_sessions {
	char	**ns_ids;
	size_t	  ns_n;
	size_t	  ns_cap;
};

static void
notify_add(void *arg, const char *sid)
{
	struct notify_sessions	*ns = arg;
	char			**n;

	if (ns->ns_n == ns->ns_cap) {
		if ((n = reallocarray(ns->ns_ids, ns->ns_cap * 2 + 16,
		    sizeof(*n))) == NULL)
			return;
		ns->ns_ids = n;
		ns->ns_cap = ns->ns_cap * 2 + 16;
	}
	if ((ns->ns_ids[ns->ns_n] = strdup(sid)) != NULL)
		ns->ns_n++;
}

static int
notify_collect(void *arg, const void *key, size_t klen,
    const struct store_rec *rec)
{
	char sid[SESSION_ID_LEN + 1];

	(void)rec;
	if (klen != SESSION_ID_LEN)
		return 0;
	memcpy(sid, key, klen);
	sid[klen] = '\0';
	notify_add(arg, sid);
	return 0;
}

/* deliver msg to every live session (or those holding uri, subs.c) */
void
notify_fanout(struct worker *w, const json_t *msg, const char *uri)
{
	struct notify_sessions	ns;
	size_t			i;

	memset(&ns, 0, sizeof(ns));
	if (uri != NULL)
		subs_sessions(w, uri, notify_add, &ns);
	else
		(void)store_iter(w->w_store, STORE_SESSIONS, store_now_ms(), 0,
		    notify_collect, &ns);
	for (i = 0; i < ns.ns_n; i++) {
		if (stream_publish(w, ns.ns_ids[i], msg) == -1)
			log_warnx("cannot queue a notification for %.8s...",
			    ns.ns_ids[i]);
		free(ns.ns_ids[i]);
	}
	free(ns.ns_ids);
	log_debug("%s delivered to %zu sessions",
	    json_string_value(json_object_get(msg, "method")), ns.ns_n);
}

/* the lists of view that differ from old's (all if no old): announced */
void
notify_lists_changed(struct worker *w, json_t *old, json_t *view,
    const char *who)
{
	static const struct {
		const char		*f;
		enum mcp_method_id	 method;
	} kinds[] = {
		{ "tools", MCP_M_N_TOOLS_LIST_CHANGED },
		{ "prompts", MCP_M_N_PROMPTS_LIST_CHANGED },
		{ "resources", MCP_M_N_RESOURCES_LIST_CHANGED },
		{ "resourceTemplates", MCP_M_N_RESOURCES_LIST_CHANGED },
	};
	json_t			*n;
	size_t			 i;
	enum mcp_method_id	 last = MCP_M_COUNT;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (old != NULL && json_equal(json_object_get(json_object_get(
		    old, "digests"), kinds[i].f), json_object_get(
		    json_object_get(view, "digests"), kinds[i].f)))
			continue;
		if (last == kinds[i].method)
			continue;	/* resources and templates: one note */
		last = kinds[i].method;
		if ((n = jsonrpc_notification_new(mcp_method_get(
		    kinds[i].method)->mm_name, NULL)) == NULL)
			continue;
		log_info("%s changed the %s list; notifying sessions", who,
		    kinds[i].f);
		notify_fanout(w, n, NULL);
		json_decref(n);
		/* and the Modern clients listening, on every worker */
		listen_broadcast(w, strcmp(kinds[i].f, "resourceTemplates") ==
		    0 ? "resources" : kinds[i].f, NULL);
	}
}

/* what a gate says: run(arg) now, or ev at due (ms), or nothing */
void
notify_gate(enum lcgate_act act, uint64_t now, uint64_t due,
    struct event *ev, void (*run)(void *), void *arg)
{
	struct timeval	tv;
	uint64_t	ms = due > now ? due - now : 0;

	if (act == LCGATE_NOW)
		run(arg);
	else if (act == LCGATE_LATER && ev != NULL) {
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		(void)evtimer_add(ev, &tv);
	}
}

/* worker 0: pass the backend's change on to the builder */
static void
notify_forward(void *arg)
{
	struct listener	*l = arg;
	uint64_t	 now = store_now_ms(), due;

	(void)lcgate_start(&l->l_gate, now);
	view_changed(l->l_w, l->l_be->cb_name);
	(void)lcgate_done(&l->l_gate, now, &due);
}

static void
notify_on_forward(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	notify_forward(arg);
}

/*
 * A list_changed: to the builder at once, or with the ones that follow
 * it at the end of NOTIFY_FORWARD_MS: the builder's wake socket is not
 * flooded, and the last change of a storm still reaches it.
 */
static void
notify_list_changed(struct listener *l)
{
	enum lcgate_act	act;
	uint64_t	now = store_now_ms(), due = 0;

	diag_count_list_changed(l->l_w, l->l_be);
	act = lcgate_change(&l->l_gate, now, &due);
	notify_gate(act, now, due, l->l_fwd, notify_forward, l);
}

static void
notify_on_message(void *arg, const struct jsonrpc_msg *m)
{
	struct listener		*l = arg;
	json_t			*reply;
	const char		*uri;
	enum mcp_method_id	 id;

	if (m->jm_kind == JSONRPC_REQUEST) {
		/* nobody to ask on this stream: only ping is answered */
		reply = MCP_METHOD_IS(m->jm_mm, MCP_M_PING) ?
		    jsonrpc_result_new(m->jm_id, json_object()) :
		    jsonrpc_error_new(m->jm_id, JSONRPC_METHOD_NOT_FOUND,
		    "vmcpd has no client to ask outside a request", NULL);
		if (reply != NULL)
			upstream_stream_reply(l->l_bs.bs_up, reply);
		json_decref(reply);
	} else if (m->jm_kind == JSONRPC_NOTIFICATION) {
		id = m->jm_mm != NULL ? m->jm_mm->mm_id : MCP_M_COUNT;
		if (id == MCP_M_N_TOOLS_LIST_CHANGED ||
		    id == MCP_M_N_PROMPTS_LIST_CHANGED ||
		    id == MCP_M_N_RESOURCES_LIST_CHANGED)
			notify_list_changed(l);
		else if (id == MCP_M_N_RESOURCES_UPDATED && (uri = json_string_value(json_object_get(
		    m->jm_params, "uri"))) != NULL) {
			notify_fanout(l->l_w, m->jm_root, uri);
			listen_broadcast(l->l_w, "updated", uri);
		}
	}
}

/* the stream is up: subs.c makes the subscriptions on its session */
static void
notify_listening(void *arg)
{
	struct listener	*l = arg;
	enum proto_era	 era = upstream_era(l->l_bs.bs_up);
	char		*sid = NULL, *ver = NULL;

	if (era == PROTO_ERA_LEGACY && bsession_load(l->l_w,
	    BSESSION_SCOPE_ANON, l->l_be, &sid, &ver) == -1)
		return;	/* none to make them on: the next connect */
	subs_listener_up(l->l_w, l->l_be, era, sid);
	free(sid);
	free(ver);
}

/* the stream ended (or never started): reconnected later */
static int
notify_down(void *arg)
{
	struct listener *l = arg;

	subs_listener_down(l->l_w, l->l_be);
	return 1;
}

/*
 * The backend's notification stream, in the revision the upstream edge
 * picks: a GET on the scope's session, or a subscriptions/listen POST
 * (2026-07-28) asking for the three list_changed kinds and the URIs
 * sessions subscribed to.
 */
static void
notify_connect(void *arg)
{
	struct listener	*l = arg;
	json_t		*params;

	/* token_exchange: a backend opened only with a client's token has
	 * no shared listener (its lists follow cacheTtl) */
	if (texch_backend(l->l_be))
		return;
	/* the URIs held of it, unless it is known to take a GET */
	params = json_pack("{s:{s:b, s:b, s:b, s:o}}", "notifications",
	    "toolsListChanged", 1, "promptsListChanged", 1,
	    "resourcesListChanged", 1, "resourceSubscriptions",
	    era_for(l->l_w, l->l_be, ERA_LISTING) == PROTO_ERA_LEGACY ?
	    json_array() : subs_wanted(l->l_w, l->l_be));
	if (params == NULL || (l->l_bs.bs_up = upstream_stream(l->l_w,
	    l->l_be, BSESSION_SCOPE_ANON, params, &bstream_cbs,
	    &l->l_bs)) == NULL)
		bstream_retry(&l->l_bs, -1);
	json_decref(params);
}

static const struct bstream_ops notify_bs_ops = {
	notify_connect, notify_on_message, notify_listening, notify_down
};

void
notify_init(struct worker *w)
{
	size_t i;

	if (w->w_slot != 0 || w->w_conf->cf_nbackends == 0)
		return;
	if ((listeners = calloc(w->w_conf->cf_nbackends,
	    sizeof(*listeners))) == NULL) {
		log_warn("%s", __func__);
		return;
	}
	nlisteners = w->w_conf->cf_nbackends;
	for (i = 0; i < nlisteners; i++) {
		listeners[i].l_w = w;
		listeners[i].l_be = &w->w_conf->cf_backends[i];
		lcgate_init(&listeners[i].l_gate, NOTIFY_FORWARD_MS,
		    NOTIFY_FORWARD_MS, 0);
		if (bstream_init(&listeners[i].l_bs, w, listeners[i].l_be,
		    "notification stream", &notify_bs_ops,
		    &listeners[i]) == -1 ||
		    (listeners[i].l_fwd = evtimer_new(w->w_base,
		    notify_on_forward, &listeners[i])) == NULL)
			continue;
		/* let the first client's view build open the sessions */
		bstream_retry(&listeners[i].l_bs, 200);
	}
}

/* the listener's stream, if any, closed */
static void
notify_hangup(struct listener *l)
{
	bstream_hangup(&l->l_bs);
	subs_listener_down(l->l_w, l->l_be);
}

/* stop listening (drain): no stream, no timer, no reconnection */
void
notify_stop(struct worker *w)
{
	size_t i;

	(void)w;
	notify_stopped = 1;
	for (i = 0; i < nlisteners; i++) {
		struct listener *l = &listeners[i];

		notify_hangup(l);
		bstream_free(&l->l_bs);
		if (l->l_fwd != NULL)
			event_free(l->l_fwd);
		l->l_fwd = NULL;
	}
}

/* at exit, after the loop: nothing can call back any more */
void
notify_free(struct worker *w)
{
	notify_stop(w);
	free(listeners);
	listeners = NULL;
	nlisteners = 0;
}

/* worker 0: listen anew to a 2026-07-28 backend, with its URIs now */
void
notify_relisten(struct worker *w, const struct config_backend *be)
{
	struct listener	*l;
	size_t		 i;

	(void)w;
	for (i = 0; i < nlisteners; i++) {
		l = &listeners[i];
		if (l->l_be != be ||
		    upstream_era(l->l_bs.bs_up) != PROTO_ERA_MODERN ||
		    notify_stopped)
			continue;
		notify_hangup(l);
		l->l_bs.bs_status = 0;
		evtimer_del(l->l_bs.bs_timer);
		notify_connect(l);
	}
}

/* a backend's subscribed URIs changed: worker 0 looks (subs.c) */
void
notify_resubscribe(struct worker *w, const struct config_backend *be)
{
	if (w->w_slot == 0)
		subs_wake(w);
	else
		wake_broadcast(WAKE_RESUBSCRIBE, be->cb_name, NULL);
}
