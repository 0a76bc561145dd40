/*
 * subscriptions/listen: the Modern (2026-07-28) way to hear of list
 * changes and resource updates (MCP 2026-07-28, Subscriptions).  A listen
 * request holds an SSE stream on the worker that took it: first the
 * acknowledgement naming what will be delivered, then only those
 * notifications, each tagged with the subscription id, keep-alive
 * comments in between, and on a drain a final result.
 *
 * The changes are seen by worker 0's backend listeners (notify.c),
 * which deliver to their own streams and send every other worker a
 * WAKE_LISTEN wake-up (wake.h: the kind, and the URI of an update): the
 * message carries all there is to deliver, nothing is stored.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include "httpd.h"

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "auth.h"
#include "texch.h"
#include "wake.h"
#include "worker.h"

#define MCP_META_SUBSCRIPTION_ID	"io.modelcontextprotocol/subscriptionId"

struct listener_stream {
	TAILQ_ENTRY(listener_stream)	 ls_entry;
	struct worker			*ls_w;
	struct httpd_req		*ls_req;
	struct event			*ls_tick;
	struct event			*ls_expire;	/* the token's exp */
	struct jsonrpc_msg		 ls_msg;	/* the listen request */
	int				 ls_tools;
	int				 ls_prompts;
	int				 ls_resources;
	json_t				*ls_uris;	/* honoured URIs */
	int				 ls_started;
};

static TAILQ_HEAD(, listener_stream) lstreams =
    TAILQ_HEAD_INITIALIZER(lstreams);

static void	listen_end(struct listener_stream *);

static void
listen_free(struct listener_stream *ls)
{
	TAILQ_REMOVE(&lstreams, ls, ls_entry);
	if (ls->ls_tick != NULL)
		event_free(ls->ls_tick);
	if (ls->ls_expire != NULL)
		event_free(ls->ls_expire);
	if (ls->ls_req != NULL)
		httpd_req_set_close_cb(ls->ls_req, NULL, NULL);
	view_get_cancel(ls->ls_w, ls);
	jsonrpc_msg_clear(&ls->ls_msg);
	json_decref(ls->ls_uris);
	worker_request_release(ls->ls_w, __func__);
	free(ls);
}

static void
listen_on_close(struct httpd_req *hr, void *arg)
{
	struct listener_stream *ls = arg;

	ls->ls_req = NULL;
	httpd_send_end(hr);	/* frees it */
	listen_free(ls);
}

/* a notification of this subscription, tagged with its id */
static void
listen_send(struct listener_stream *ls, const char *method, const char *uri)
{
	json_t *params, *n;

	if (ls->ls_req == NULL || !ls->ls_started)
		return;
	params = json_pack("{s:{s:O}}", "_meta", MCP_META_SUBSCRIPTION_ID,
	    ls->ls_msg.jm_id);
	if (params != NULL && uri != NULL)
		(void)json_object_set_new(params, "uri", json_string(uri));
	if (params == NULL || (n = jsonrpc_notification_new(method,
	    params)) == NULL)
		return;
	(void)front_sse_send(ls->ls_req, NULL, n);
	json_decref(n);
}

static void
listen_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct listener_stream	*ls = arg;

	(void)fd;
	(void)ev;
	front_sse_keepalive(ls->ls_req);
}

static int
listen_uri_wanted(const struct listener_stream *ls, const char *uri)
{
	size_t i;

	for (i = 0; i < json_array_size(ls->ls_uris); i++)
		if (strcmp(json_string_value(json_array_get(ls->ls_uris, i)),
		    uri) == 0)
			return 1;
	return 0;
}

/* a change, to this worker's listen streams that asked for it */
void
listen_deliver(struct worker *w, const char *kind, const char *uri)
{
	struct listener_stream *ls;

	(void)w;
	TAILQ_FOREACH(ls, &lstreams, ls_entry) {
		if (strcmp(kind, "tools") == 0 && ls->ls_tools)
			listen_send(ls, "notifications/tools/list_changed",
			    NULL);
		else if (strcmp(kind, "prompts") == 0 && ls->ls_prompts)
			listen_send(ls, "notifications/prompts/list_changed",
			    NULL);
		else if (strcmp(kind, "resources") == 0 && ls->ls_resources)
			listen_send(ls, "notifications/resources/list_changed",
			    NULL);
		else if (strcmp(kind, "updated") == 0 && uri != NULL &&
		    listen_uri_wanted(ls, uri))
			listen_send(ls, "notifications/resources/updated",
			    uri);
	}
}

/* a change, to every worker's listen streams (worker 0 calls this) */
void
listen_broadcast(struct worker *w, const char *kind, const char *uri)
{
	listen_deliver(w, kind, uri);
	wake_broadcast(WAKE_LISTEN, kind, uri);
}

static void
listen_on_view(void *arg, json_t *view, const char *err)
{
	struct listener_stream	*ls = arg;
	struct worker		*w = ls->ls_w;
	const struct config_backend *be;
	struct core_err		 cerr;
	json_t			*want, *honoured, *uris, *p, *bp, *ack;
	char			*bsid, *bver;
	size_t			 i;
	int			 subscribe;

	(void)err;
	want = json_object_get(ls->ls_msg.jm_params, "notifications");
	subscribe = json_is_true(json_object_get(json_object_get(
	    json_object_get(view, "capabilities"), "resources"), "subscribe"));
	honoured = json_object();
	uris = json_array();
	if (honoured == NULL || uris == NULL)
		goto done;
	ls->ls_tools = json_is_true(json_object_get(want, "toolsListChanged"));
	ls->ls_prompts = json_is_true(json_object_get(want,
	    "promptsListChanged"));
	ls->ls_resources = json_is_true(json_object_get(want,
	    "resourcesListChanged"));
	if (ls->ls_tools)
		(void)json_object_set_new(honoured, "toolsListChanged",
		    json_true());
	if (ls->ls_prompts)
		(void)json_object_set_new(honoured, "promptsListChanged",
		    json_true());
	if (ls->ls_resources)
		(void)json_object_set_new(honoured, "resourcesListChanged",
		    json_true());
	/* resources: subscribed on the backend's scope session, whose
	 * stream worker 0 listens to */
	for (i = 0; view != NULL && subscribe && i < json_array_size(
	    json_object_get(want, "resourceSubscriptions")); i++) {
		json_t *u = json_array_get(json_object_get(want,
		    "resourceSubscriptions"), i);

		if (!json_is_string(u) || (p = json_pack("{s:O}", "uri", u)) ==
		    NULL)
			continue;
		if (core_route(view, w->w_conf, "resources/subscribe", p, &be,
		    &bp, &cerr) == 0 && bsession_load(w, BSESSION_SCOPE_ANON,
		    be, &bsid, &bver) == 0) {
			(void)upstream_request_nowait(w, be, bsid, bver,
			    "resources/subscribe", bp);
			(void)json_array_append(uris, u);
			free(bsid);
			free(bver);
		}
		json_decref(bp);
		bp = NULL;
		json_decref(p);
	}
	if (json_array_size(uris) > 0)
		(void)json_object_set(honoured, "resourceSubscriptions", uris);
	ls->ls_uris = json_incref(uris);
	ack = jsonrpc_notification_new("notifications/subscriptions/acknowledged",
	    json_pack("{s:O, s:{s:O}}", "notifications", honoured, "_meta",
	    MCP_META_SUBSCRIPTION_ID, ls->ls_msg.jm_id));
	if (ack != NULL && ls->ls_req != NULL) {
		/* the acknowledgement is the first message, nothing before */
		(void)front_sse_send(ls->ls_req, NULL, ack);
		ls->ls_started = 1;
	}
	json_decref(ack);
done:
	json_decref(honoured);
	json_decref(uris);
}

/* the access token it was opened with expired: it ends, and the
 * client listens again with a new one */
static void
listen_on_expire(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	listen_end(arg);
}

void
listen_start(struct worker *w, struct httpd_req *req,
    struct jsonrpc_msg *msg)
{
	const struct principal	*p = auth_principal(req);
	uint64_t		 now = store_now_ms(), left;
	struct listener_stream	*ls;
	struct timeval		 tv;

	if (!json_is_object(json_object_get(msg->jm_params, "notifications"))) {
		front_reply_error(req, 200, msg->jm_id, JSONRPC_INVALID_PARAMS,
		    "Invalid params: subscriptions/listen needs "
		    "params.notifications (an object)");
		jsonrpc_msg_clear(msg);
		return;
	}
	if ((ls = calloc(1, sizeof(*ls))) == NULL) {
		front_reply_error(req, 500, msg->jm_id, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		jsonrpc_msg_clear(msg);
		return;
	}
	worker_request_hold(w);
	ls->ls_w = w;
	ls->ls_req = req;
	ls->ls_msg = *msg;
	TAILQ_INSERT_TAIL(&lstreams, ls, ls_entry);
	front_sse_start(req, NULL);
	httpd_req_set_close_cb(req, listen_on_close, ls);
	tv.tv_sec = w->w_conf->cf_keepalive_ms / 1000;
	tv.tv_usec = (w->w_conf->cf_keepalive_ms % 1000) * 1000;
	if ((ls->ls_tick = event_new(w->w_base, -1, EV_PERSIST,
	    listen_on_tick, ls)) != NULL)
		(void)event_add(ls->ls_tick, &tv);
	if (p != NULL && p->p_exp > 0) {
		left = (uint64_t)p->p_exp * 1000 > now ?
		    (uint64_t)p->p_exp * 1000 - now : 0;
		tv.tv_sec = (time_t)(left / 1000);
		tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
		if ((ls->ls_expire = evtimer_new(w->w_base, listen_on_expire,
		    ls)) != NULL)
			(void)evtimer_add(ls->ls_expire, &tv);
	}
	if (view_get_scope(w, texch_view_scope(req), listen_on_view, ls) == -1)
		listen_on_view(ls, NULL, "out of memory");
}

/* a subscription ends gracefully, with its final result */
static void
listen_end(struct listener_stream *ls)
{
	json_t	*r, *resp;

	if (ls->ls_req != NULL) {
		r = json_pack("{s:s, s:{s:O}}", "resultType", "complete",
		    "_meta", MCP_META_SUBSCRIPTION_ID, ls->ls_msg.jm_id);
		resp = jsonrpc_result_new(ls->ls_msg.jm_id, r);
		if (resp != NULL)
			(void)front_sse_send(ls->ls_req, NULL, resp);
		json_decref(resp);
		httpd_req_set_close_cb(ls->ls_req, NULL, NULL);
		front_sse_end(ls->ls_req);
		ls->ls_req = NULL;
	}
	listen_free(ls);
}

/* drain: each subscription ends gracefully */
void
listen_drain(struct worker *w)
{
	struct listener_stream	*ls;

	(void)w;
	while ((ls = TAILQ_FIRST(&lstreams)) != NULL)
		listen_end(ls);
}
