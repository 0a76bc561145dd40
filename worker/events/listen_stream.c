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
 *
 * The resources a listen names are refused or held before its stream
 * starts, so that a refusal is an ordinary answer: at most
 * sessions.maxSubscriptions of them, each authorized as a
 * resources/read of it would be (authz_gate_uri(): one forbidden, and
 * the listen is a 403 like that read's), routed, then held (subs.c)
 * under the principal's sessions.maxSubscriptionsPerPrincipal.  That
 * work goes LISTEN_STEP URIs a loop turn, so a listen of many never
 * holds the worker; the backend subscriptions are worker 0's to make,
 * a few at a time (subs.c), and end when the last holder goes.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include "worker/http/httpd.h"

#include "shared/config.h"
#include "shared/log.h"
#include "shared/store.h"
#include "shared/store_stat.h"
#include "worker/auth/auth.h"
#include "worker/auth/authz.h"
#include "worker/auth/authz_rule.h"
#include "worker/events/listen_tasks.h"
#include "worker/events/subs.h"
#include "worker/upstream/token_exchange.h"
#include "worker/process/wake.h"
#include "proto/classify.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "worker/events/listen_stream.h"
#include "worker/http/http_reply.h"
#include "worker/process/process.h"
#include "worker/view/core.h"
#include "worker/view/view_get.h"
#include "worker/process/request.h"

#define MCP_META_SUBSCRIPTION_ID	"io.modelcontextprotocol/subscriptionId"
#define LISTEN_STEP	128	/* URIs authorized and routed a turn */
#define LISTEN_HOLD	256	/* held per write txn (and turn) */

struct listener_stream {
	TAILQ_ENTRY(listener_stream)	 ls_entry;
	struct worker			*ls_w;
	struct httpd_req		*ls_req;
	struct event			*ls_tick;
	struct event			*ls_expire;	/* the token's exp */
	struct event			*ls_step;	/* the URIs' next turn */
	struct jsonrpc_msg		 ls_msg;	/* the listen request */
	int				 ls_tools;
	int				 ls_prompts;
	int				 ls_resources;
	json_t				*ls_asked;	/* distinct URIs asked */
	size_t				 ls_next;	/* the next to look at */
	json_t				*ls_view;	/* while it looks */
	struct subs_want		*ls_wants;	/* routed, authorized */
	size_t				 ls_nwants;
	size_t				 ls_held;	/* of those */
	json_t				*ls_uris;	/* honoured: uri -> true */
	struct listen_tasks		*ls_tasks;	/* its taskIds */
	json_t				*ls_tview;	/* ... looked up on */
	int				 ls_tasked;	/* ... once */
	char				 ls_holder[SUBS_HOLDER_MAX + 1];
	char				 ls_group[SUBS_GROUP_MAX + 1];
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
	if (ls->ls_step != NULL)
		event_free(ls->ls_step);
	if (ls->ls_req != NULL)
		httpd_req_set_close_cb(ls->ls_req, NULL, NULL);
	view_get_cancel(ls->ls_w, ls);
	/* its subscriptions go with it (the last holder's, at the backend) */
	if (ls->ls_held > 0)
		subs_release(ls->ls_w, ls->ls_holder, NULL);
	request_msg_release(&ls->ls_msg);
	json_decref(ls->ls_asked);
	json_decref(ls->ls_view);
	free(ls->ls_wants);
	json_decref(ls->ls_uris);
	listen_tasks_free(ls->ls_tasks);
	json_decref(ls->ls_tview);
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

/* a notification of this subscription with params (taken), tagged
 * with its id */
static void
listen_send_params(struct listener_stream *ls, const char *method,
    json_t *params)
{
	json_t *meta, *n;

	if (params == NULL || ls->ls_req == NULL || !ls->ls_started) {
		json_decref(params);
		return;
	}
	if (!json_is_object(meta = json_object_get(params, "_meta")) &&
	    json_object_set_new(params, "_meta", meta = json_object()) == -1) {
		json_decref(params);
		return;
	}
	if (json_object_set(meta, MCP_META_SUBSCRIPTION_ID,
	    ls->ls_msg.jm_id) == -1) {
		json_decref(params);
		return;
	}
	if ((n = jsonrpc_notification_new(method, params)) == NULL)
		return;	/* params taken */
	(void)front_sse_send(ls->ls_req, NULL, n);
	json_decref(n);
}

static void
listen_send(struct listener_stream *ls, const char *method, const char *uri)
{
	json_t *params;

	params = json_object();
	if (params != NULL && uri != NULL)
		(void)json_object_set_new(params, "uri", json_string(uri));
	listen_send_params(ls, method, params);
}

/* a backend's notifications/tasks, its id vmcpd's (listen_tasks.c) */
static void
listen_send_task(void *arg, json_t *params)
{
	listen_send_params(arg, mcp_method_get(MCP_M_N_TASKS)->mm_name,
	    params);
}

static void
listen_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct listener_stream	*ls = arg;

	(void)fd;
	(void)ev;
	if (ls->ls_started)
		front_sse_keepalive(ls->ls_req);
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
		    json_object_get(ls->ls_uris, uri) != NULL)
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

/* refused before its stream started: an ordinary answer (data taken) */
static void
listen_refuse(struct listener_stream *ls, int status, int code,
    const char *message, json_t *data)
{
	json_t *e;

	if (ls->ls_req == NULL)
		json_decref(data);
	else {
		e = jsonrpc_error_new(ls->ls_msg.jm_id, code, message, data);
		httpd_req_set_close_cb(ls->ls_req, NULL, NULL);
		front_reply_json(ls->ls_req, status, e, NULL);
		json_decref(e);
		ls->ls_req = NULL;
	}
	listen_free(ls);
}

static void
listen_refuse_cap(struct listener_stream *ls, enum subs_cap cap, size_t n)
{
	char	 msg[300];
	json_t	*data;
	int	 code;

	data = subs_refusal(ls->ls_w, cap, n, &code, msg, sizeof(msg));
	listen_refuse(ls, 200, code, msg, data);	/* data taken */
}

/* all held: the stream starts with its acknowledgement */
static void
listen_ack(struct listener_stream *ls)
{
	json_t	*honoured, *uris, *ack;
	size_t	 i;

	json_decref(ls->ls_view);
	ls->ls_view = NULL;
	honoured = json_object();
	uris = json_array();
	ls->ls_uris = json_object();
	if (honoured == NULL || uris == NULL || ls->ls_uris == NULL)
		goto fail;
	if (ls->ls_tools)
		(void)json_object_set_new(honoured, "toolsListChanged",
		    json_true());
	if (ls->ls_prompts)
		(void)json_object_set_new(honoured, "promptsListChanged",
		    json_true());
	if (ls->ls_resources)
		(void)json_object_set_new(honoured, "resourcesListChanged",
		    json_true());
	for (i = 0; i < ls->ls_nwants; i++) {
		(void)json_array_append_new(uris,
		    json_string(ls->ls_wants[i].sw_uri));
		(void)json_object_set_new(ls->ls_uris, ls->ls_wants[i].sw_uri,
		    json_true());
	}
	if (json_array_size(uris) > 0)
		(void)json_object_set(honoured, "resourceSubscriptions", uris);
	/* the task ids it will hear of: the others are left out, as the
	 * tasks extension's Task Status Notifications has it */
	if (ls->ls_tasks != NULL &&
	    json_array_size(listen_tasks_ids(ls->ls_tasks)) > 0)
		(void)json_object_set(honoured, "taskIds",
		    (json_t *)listen_tasks_ids(ls->ls_tasks));
	ack = jsonrpc_notification_new("notifications/subscriptions/acknowledged",
	    json_pack("{s:O, s:{s:O}}", "notifications", honoured, "_meta",
	    MCP_META_SUBSCRIPTION_ID, ls->ls_msg.jm_id));
	if (ack == NULL)
		goto fail;
	/* the acknowledgement is the first message, nothing before */
	front_sse_start(ls->ls_req, NULL);
	ls->ls_started = 1;
	(void)front_sse_send(ls->ls_req, NULL, ack);
	json_decref(ack);
	json_decref(honoured);
	json_decref(uris);
	/* after the acknowledgement: the backends' streams */
	if (ls->ls_tasks != NULL)
		listen_tasks_open(ls->ls_tasks, listen_send_task, ls);
	return;
fail:
	json_decref(honoured);
	json_decref(uris);
	listen_refuse(ls, 500, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory", NULL);
}

/* the next step after the loop has polled (a timer due now, not an
 * event made active, which would run in this very pass) */
static void
listen_again(struct listener_stream *ls)
{
	struct timeval tv = { 0, 0 };

	(void)evtimer_add(ls->ls_step, &tv);
}

/* its task ids looked up: refused, or acknowledged */
static void
listen_on_tasks(void *arg, int rc, struct ltask_err *e)
{
	struct listener_stream *ls = arg;

	if (rc == -1)
		listen_refuse(ls, e->le_status, e->le_code, e->le_msg,
		    e->le_data);	/* data taken */
	else
		listen_ack(ls);
}

/*
 * A turn's share of the URIs: first each authorized and routed
 * (LISTEN_STEP a turn), then held (LISTEN_HOLD a turn), then the
 * acknowledgement.
 */
static void
listen_on_step(evutil_socket_t fd, short ev, void *arg)
{
	struct listener_stream		*ls = arg;
	struct worker			*w = ls->ls_w;
	const struct config_backend	*be;
	struct core_err			 cerr;
	json_t				*p, *bp;
	const char			*uri;
	size_t				 end, n;

	(void)fd;
	(void)ev;
	end = ls->ls_next + LISTEN_STEP;
	for (; ls->ls_next < json_array_size(ls->ls_asked) &&
	    ls->ls_next < end; ls->ls_next++) {
		uri = json_string_value(json_array_get(ls->ls_asked,
		    ls->ls_next));
		/* as a resources/read of it: one denied denies the listen */
		if (authz_gate_uri(w, ls->ls_req, uri) == -1) {
			listen_refuse(ls, AUTHZ_HTTP, AUTHZ_CODE,
			    authz_message(mcp_method_get(MCP_M_RESOURCES_READ),
			    NULL), NULL);
			return;
		}
		/* subscribed on the scope session worker 0 listens to; a
		 * token_exchange backend has none */
		bp = NULL;
		if (ls->ls_view == NULL ||
		    (p = json_pack("{s:s}", "uri", uri)) == NULL)
			continue;
		if (core_route(ls->ls_view, w->w_conf, "resources/subscribe", p,
		    &be, &bp, &cerr) == 0 && !texch_backend(be)) {
			ls->ls_wants[ls->ls_nwants].sw_be = be;
			ls->ls_wants[ls->ls_nwants].sw_uri = uri;
			ls->ls_nwants++;
		}
		json_decref(bp);
		json_decref(p);
	}
	if (ls->ls_next < json_array_size(ls->ls_asked)) {
		listen_again(ls);
		return;
	}
	if (ls->ls_held < ls->ls_nwants) {
		if (ls->ls_held == 0 && subs_listen_holder(w, ls->ls_holder,
		    sizeof(ls->ls_holder)) == -1) {
			listen_refuse(ls, 500, JSONRPC_INTERNAL_ERROR,
			    "Internal error: cannot record the subscriptions",
			    NULL);
			return;
		}
		n = ls->ls_nwants - ls->ls_held;
		if (n > LISTEN_HOLD)
			n = LISTEN_HOLD;
		switch (subs_hold(w, ls->ls_holder, ls->ls_group,
		    ls->ls_wants + ls->ls_held, n, 0)) {
		case 0:
			/* counted before it is done: a refusal releases */
			ls->ls_held += n;
			break;
		case SUBS_LIMITED:
			ls->ls_held += n;	/* the rest released */
			listen_refuse_cap(ls, SUBS_CAP_PRINCIPAL,
			    ls->ls_nwants);
			return;
		default:
			ls->ls_held += n;
			listen_refuse(ls, 500, JSONRPC_INTERNAL_ERROR,
			    "Internal error: cannot record the subscriptions",
			    NULL);
			return;
		}
		if (ls->ls_held < ls->ls_nwants) {
			listen_again(ls);
			return;
		}
	}
	if (ls->ls_tasks != NULL && !ls->ls_tasked) {
		/* then its task ids, each looked up (listen_tasks.c) */
		ls->ls_tasked = 1;
		listen_tasks_resolve(ls->ls_tasks, ls->ls_req, ls->ls_tview,
		    listen_on_tasks, ls);
		return;
	}
	listen_ack(ls);
}

static void
listen_on_view(void *arg, json_t *view, const char *err)
{
	struct listener_stream	*ls = arg;
	char			 msg[600];

	if (view == NULL) {
		(void)snprintf(msg, sizeof(msg), "Internal error: %s", err);
		listen_refuse(ls, 200, JSONRPC_INTERNAL_ERROR, msg, NULL);
		return;
	}
	/* task ids are authorized on it */
	if (ls->ls_tasks != NULL)
		ls->ls_tview = json_incref(view);
	/* URIs are honoured where a backend takes subscriptions */
	if (json_is_true(json_object_get(json_object_get(json_object_get(view,
	    "capabilities"), "resources"), "subscribe")))
		ls->ls_view = json_incref(view);
	listen_on_step(-1, 0, ls);
}

/*
 * params.notifications.resourceSubscriptions: the distinct URIs, into
 * ls_asked.  0, or -1 with the refusal's message.
 */
static int
listen_asked(struct listener_stream *ls, const json_t *want, char *msg,
    size_t msglen)
{
	const json_t	*rs = json_object_get(want, "resourceSubscriptions");
	json_t		*seen, *u;
	size_t		 i;

	if ((ls->ls_asked = json_array()) == NULL ||
	    (seen = json_object()) == NULL) {
		(void)snprintf(msg, msglen, "Internal error: out of memory");
		return -1;
	}
	if (rs != NULL && !json_is_array(rs)) {
		(void)snprintf(msg, msglen, "Invalid params: "
		    "notifications.resourceSubscriptions must be an array of "
		    "URIs");
		json_decref(seen);
		return -1;
	}
	json_array_foreach(rs, i, u) {
		if (!json_is_string(u) || json_string_length(u) == 0 ||
		    strlen(json_string_value(u)) != json_string_length(u)) {
			(void)snprintf(msg, msglen, "Invalid params: "
			    "notifications.resourceSubscriptions[%zu] is not a "
			    "URI", i);
			json_decref(seen);
			return -1;
		}
		if (json_object_get(seen, json_string_value(u)) != NULL)
			continue;
		(void)json_object_set_new(seen, json_string_value(u),
		    json_true());
		(void)json_array_append(ls->ls_asked, u);
	}
	json_decref(seen);
	return 0;
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
	const json_t		*want;
	uint64_t		 now = store_now_ms(), left;
	struct listener_stream	*ls;
	struct timeval		 tv;
	struct ltask_err	 te;
	char			 emsg[300];
	size_t			 held = 0;

	want = json_object_get(msg->jm_params, "notifications");
	if (!json_is_object(want)) {
		front_reply_error(req, 200, msg->jm_id, JSONRPC_INVALID_PARAMS,
		    "Invalid params: subscriptions/listen needs "
		    "params.notifications (an object)");
		return;
	}
	if ((ls = calloc(1, sizeof(*ls))) == NULL) {
		front_reply_error(req, 500, msg->jm_id, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory");
		return;
	}
	worker_request_hold(w);
	ls->ls_w = w;
	ls->ls_req = req;
	ls->ls_msg = *msg;
	memset(msg, 0, sizeof(*msg));	/* taken: the front's is empty */
	TAILQ_INSERT_TAIL(&lstreams, ls, ls_entry);
	httpd_req_set_close_cb(req, listen_on_close, ls);
	ls->ls_tools = json_is_true(json_object_get(want, "toolsListChanged"));
	ls->ls_prompts = json_is_true(json_object_get(want,
	    "promptsListChanged"));
	ls->ls_resources = json_is_true(json_object_get(want,
	    "resourcesListChanged"));
	if (listen_asked(ls, want, emsg, sizeof(emsg)) == -1) {
		listen_refuse(ls, 200, JSONRPC_INVALID_PARAMS, emsg, NULL);
		return;
	}
	/* its task ids (the tasks extension): their caps and declaration */
	if (listen_tasks_new(w, want, json_object_get(json_object_get(
	    ls->ls_msg.jm_params, "_meta"), MCP_META_CLIENT_CAPABILITIES),
	    &ls->ls_tasks, &te) == -1) {
		listen_refuse(ls, te.le_status, te.le_code, te.le_msg,
		    te.le_data);	/* data taken */
		return;
	}
	/* the caps first, before any work: the principal's is checked
	 * again where the holdings are written */
	if (json_array_size(ls->ls_asked) > w->w_conf->cf_subs_cap) {
		listen_refuse_cap(ls, SUBS_CAP_LISTEN,
		    json_array_size(ls->ls_asked));
		return;
	}
	if (subs_group(req, ls->ls_group, sizeof(ls->ls_group)) == -1)
		(void)snprintf(ls->ls_group, sizeof(ls->ls_group), "a");
	if (json_array_size(ls->ls_asked) > 0 &&
	    store_group_count(w->w_store, STORE_SUBS, ls->ls_group,
	    strlen(ls->ls_group), &held) == 0 && held +
	    json_array_size(ls->ls_asked) > w->w_conf->cf_subs_cap_principal) {
		listen_refuse_cap(ls, SUBS_CAP_PRINCIPAL,
		    json_array_size(ls->ls_asked));
		return;
	}
	if ((ls->ls_wants = calloc(json_array_size(ls->ls_asked) + 1,
	    sizeof(*ls->ls_wants))) == NULL ||
	    (ls->ls_step = event_new(w->w_base, -1, 0, listen_on_step,
	    ls)) == NULL) {
		listen_refuse(ls, 500, JSONRPC_INTERNAL_ERROR,
		    "Internal error: out of memory", NULL);
		return;
	}
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
		httpd_req_set_close_cb(ls->ls_req, NULL, NULL);
		if (!ls->ls_started) {
			/* not acknowledged yet: the result is the answer */
			front_reply_json(ls->ls_req, 200, resp, NULL);
			json_decref(resp);
			ls->ls_req = NULL;
			listen_free(ls);
			return;
		}
		if (resp != NULL)
			(void)front_sse_send(ls->ls_req, NULL, resp);
		json_decref(resp);
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
