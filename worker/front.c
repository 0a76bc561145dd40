/*
 * The HTTP front: vmcpd's HTTP/1.1 server (httpd.c) on the inherited
 * listener, with the limits set, the routes (/mcp, /healthz; /status
 * and /metrics are on the diagnostics listener, diag.c), /mcp's
 * transport checks, body scan and era classification, done once before
 * the request goes to the Legacy entry (legacy_methods.c) or the Modern
 * one (modern.c), and on to the pipeline.  The reply helpers they share
 * are in http_reply.c.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "shared/config.h"
#include "shared/log.h"
#include "worker/auth/auth.h"
#include "worker/link/link.h"
#include "worker/upstream/token_exchange.h"
#include "worker/auth/audit.h"
#include "worker/http/httpd.h"
#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "proto/classify.h"
#include "worker/front.h"
#include "worker/http/http_reply.h"
#include "worker/process/counters.h"
#include "worker/process/process.h"
#include "worker/request/legacy.h"
#include "worker/request/modern.h"
#include "worker/state/session_store.h"
#include "worker/trace/trace.h"
#include "worker/process/request.h"

static void	front_on_request(struct httpd_req *, void *);

static void
front_healthz(struct worker *w, struct httpd_req *req)
{
	json_t *body;

	if (front_get_only(req) == -1)
		return;
	body = json_pack("{s:s, s:i, s:i, s:b}", "status", "ok", "worker",
	    w->w_slot, "pid", (int)w->w_pid, "draining", w->w_draining);
	front_reply_json(req, 200, body, NULL);
	json_decref(body);
}

/*
 * Does a POST's Accept list both types (MCP transports, Sending
 * Messages)?  The value the SDKs send is known at a glance; any other
 * goes through RFC 9110's rules.
 */
static int
front_accept_ok(const char *accept)
{
	static const char	sdk[] = "application/json, text/event-stream";

	if (accept == NULL)
		return 0;
	if (strcmp(accept, sdk) == 0)
		return 1;
	return proto_accept_has(accept, "application/json") &&
	    proto_accept_has(accept, "text/event-stream");
}

/*
 * The Legacy hot path: a tools/call with a plain name and no _meta is
 * read off a scan of the body (no tree, no allocation but the id); its
 * params go on to the backend as the client's text and are parsed only
 * if the call needs them (legacy_params_load()).  -1: not that case,
 * parse.
 */
static int
front_scan_call(const char *body, size_t len, struct jsonrpc_msg *msg,
    struct request_fast *fast)
{
	struct jsonrpc_scan	 sc;
	json_t			*id;

	memset(fast, 0, sizeof(*fast));
	if (jsonrpc_scan(body, len, &sc) != 1 ||
	    sc.js_idkind == JSONRPC_SCAN_ID_NONE || sc.js_mm == NULL ||
	    sc.js_mm->mm_id != MCP_M_TOOLS_CALL ||
	    sc.js_params == NULL || sc.js_name == NULL || sc.js_meta != NULL ||
	    sc.js_task || (id = jsonrpc_scan_id(&sc)) == NULL)
		return -1;
	memset(msg, 0, sizeof(*msg));
	msg->jm_kind = JSONRPC_REQUEST;
	msg->jm_root = id;	/* the only tree: cleared with the message */
	msg->jm_id = id;
	msg->jm_method = sc.js_mm->mm_name;
	msg->jm_mm = sc.js_mm;
	fast->rf_params = sc.js_params;
	fast->rf_plen = sc.js_paramslen;
	fast->rf_name = sc.js_name;
	fast->rf_namelen = sc.js_namelen;
	return 0;
}

/*
 * A POST to /mcp: the transport checks, the body scanned (the Modern hot
 * path, then the Legacy one) or parsed, and its era classified, once
 * for both edges; the request then goes to the edge of its era.
 */
static void
front_mcp_post(struct worker *w, struct httpd_req *req)
{
	struct jsonrpc_msg	 msg;
	struct jsonrpc_err	 err;
	struct request_fast	 fast;
	struct proto_reqhdrs	 hdrs;
	struct proto_verdict	 v;
	enum proto_era		 era;
	const char		*accept, *ctype;
	size_t			 len;
	const char		*body;

	accept = httpd_req_known(req, HTTP_H_ACCEPT);
	ctype = httpd_req_known(req, HTTP_H_CONTENT_TYPE);
	if (!front_accept_ok(accept)) {
		front_reply_error(req, 406, NULL, MCP_ERR_TRANSPORT,
		    "Not Acceptable: Accept must list both application/json "
		    "and text/event-stream");
		return;
	}
	if (ctype == NULL || !proto_content_type_is_json(ctype)) {
		front_reply_error(req, 415, NULL, MCP_ERR_TRANSPORT,
		    "Unsupported Media Type: Content-Type must be "
		    "application/json");
		return;
	}
	body = httpd_req_body(req, &len);
	/* counted by Mcp-Method (every Modern request has it) until the
	 * body names its method */
	diag_tag_method_header(req, httpd_req_known(req,
	    HTTP_H_MCP_METHOD));
	if (trace_enabled && httpd_req_trace(req) != NULL)
		trace_request_method(req, mcp_method_find(
		    httpd_req_known(req, HTTP_H_MCP_METHOD)));
	/* the hot paths: the gate reads what it needs off the params'
	 * text (authz_gate_text()) */
	if (modern_scan_post(w, req, body, len) == 0)
		return;
	memset(&fast, 0, sizeof(fast));
	if (front_scan_call(body, len, &msg, &fast) == 0)
		audit_note_call(w, req, msg.jm_mm, fast.rf_name,
		    fast.rf_namelen, fast.rf_params, fast.rf_plen);
	else if (jsonrpc_parse(body, len, &msg, &err) == -1) {
		diag_tag_kind(req, "invalid");
		front_reply_error(req, err.je_http, NULL, err.je_code,
		    err.je_msg);
		return;
	}
	if (msg.jm_method == NULL)
		diag_tag_kind(req, "response");
	else {
		diag_tag_method(req, msg.jm_mm);
		if (trace_enabled)
			trace_request_method(req, msg.jm_mm);
	}
	/* which era: per request, body first (MCP 2026-07-28, Versioning) */
	memset(&hdrs, 0, sizeof(hdrs));
	hdrs.rh_protocol_version = httpd_req_known(req,
	    HTTP_H_MCP_PROTOCOL_VERSION);
	hdrs.rh_method = httpd_req_known(req, HTTP_H_MCP_METHOD);
	hdrs.rh_name = httpd_req_known(req, HTTP_H_MCP_NAME);
	hdrs.rh_session = httpd_req_known(req, HTTP_H_MCP_SESSION_ID);
	hdrs.rh_param = front_param_header;
	hdrs.rh_arg = req;
	memset(&v, 0, sizeof(v));
	if (proto_classify(&msg, &hdrs, &v) == -1) {
		json_t *e = jsonrpc_error_new(msg.jm_id, v.pv_code, v.pv_msg,
		    json_incref(v.pv_data));

		front_reply_json(req, v.pv_http, e, NULL);
		json_decref(e);
		proto_verdict_clear(&v);
		request_msg_release(&msg);
		return;
	}
	era = v.pv_era;
	proto_verdict_clear(&v);
	if (msg.jm_kind == JSONRPC_REQUEST &&
	    jsonrpc_params_check(&msg, &err) == -1) {
		front_reply_error(req, err.je_http, msg.jm_id, err.je_code,
		    err.je_msg);
		request_msg_release(&msg);
		return;
	}
	/* a request that goes on takes msg; else it is released here */
	if (era == PROTO_ERA_MODERN)
		modern_handle(w, req, &msg);
	else
		legacy_post(w, req, &msg, &fast);
	request_msg_release(&msg);
}

static void	front_mcp_method(struct worker *, struct httpd_req *);
static void	front_mcp_session(struct worker *, struct httpd_req *);

/* once authenticated: the principal's exchanged tokens (token_exchange.h) */
static void
front_mcp_texch(struct worker *w, struct httpd_req *req)
{
	if (trace_enabled)	/* the key fetch's span, if it waited */
		trace_phase_end(httpd_req_trace(req), NULL);
	switch (texch_request(w, req, front_mcp_session)) {
	case TEXCH_GO:
		front_mcp_session(w, req);
		break;
	case TEXCH_LATER:
		if (trace_enabled)
			trace_phase_begin(httpd_req_trace(req),
			    "vmcpd.token_exchange");
		break;
	default:
		break;
	}
}

/* /mcp: Host/Origin first (DNS rebinding), then who is asking
 * (incomingAuth, worker/auth/auth.c), then by HTTP method */
static void
front_mcp(struct worker *w, struct httpd_req *req)
{
	if (!front_host_check(w->w_conf, req))
		return;
	switch (auth_request(w, req, front_mcp_texch)) {
	case AUTH_GO:
		front_mcp_texch(w, req);
		break;
	case AUTH_LATER:	/* a JWKS or an introspection fetch */
		if (trace_enabled)
			trace_phase_begin(httpd_req_trace(req),
			    "vmcpd.authenticate");
		break;
	default:
		break;
	}
}

/* the session's host copy made current first (shared: from Redis) */
static void
front_mcp_session(struct worker *w, struct httpd_req *req)
{
	if (trace_enabled)	/* the token exchange's, if it waited */
		trace_phase_end(httpd_req_trace(req), NULL);
	if (session_store->ss_sync(w, req, front_mcp_method) ==
	    SESSION_SYNC_GO)
		front_mcp_method(w, req);
}

static void
front_mcp_method(struct worker *w, struct httpd_req *req)
{
	const char	*accept;

	switch (httpd_req_method(req)) {
	case HTTP_M_POST:
		front_mcp_post(w, req);
		break;
	case HTTP_M_GET:
		accept = httpd_req_known(req, HTTP_H_ACCEPT);
		if (accept == NULL ||
		    !proto_accept_has(accept, "text/event-stream")) {
			front_reply_error(req, 406, NULL, MCP_ERR_TRANSPORT,
			    "Not Acceptable: Accept must list "
			    "text/event-stream");
			break;
		}
		diag_tag_kind(req, "stream");
		legacy_get(w, req);
		break;
	case HTTP_M_DELETE:
		diag_tag_kind(req, "delete");
		legacy_delete(w, req);
		break;
	default:
		(void)httpd_add_header(req, "Allow", "GET, POST, DELETE");
		front_reply_error(req, 405, NULL, MCP_ERR_TRANSPORT,
		    "Method Not Allowed: use POST, GET or DELETE");
		break;
	}
}

/* the reply is written (or cannot be): a draining worker may exit */
static void
front_on_complete(struct httpd_req *req, void *arg)
{
	diag_count_mcp(arg, req);
	if (trace_enabled)
		trace_request_end(req);
	worker_reply_flushed(arg);
}

static void
front_on_request(struct httpd_req *req, void *arg)
{
	struct worker	*w = arg;
	const char	*path = httpd_req_path(req);
	int		 mcp = strcmp(path, "/mcp") == 0;

	diag_count_request(w, mcp);
	if (mcp) {
		worker_request_hold(w);
		w->w_unflushed++;
		if (trace_enabled && httpd_req_method(req) == HTTP_M_POST)
			trace_request_begin(req);
		/* front_on_complete(), with audit on after its line */
		audit_begin(w, req, front_on_complete);
		front_mcp(w, req);
		/* what carries the request on holds it itself */
		worker_request_release(w, __func__);
		return;
	}
	if (strcmp(path, "/healthz") == 0) {
		front_healthz(w, req);
		return;
	}
	if (auth_well_known(w, req, path))
		return;
	/* a person's browser linking an account (worker/link) */
	if (strncmp(path, "/oauth/", 7) == 0 && link_web(w, req, path))
		return;
	front_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
	    "Not Found: the MCP endpoint is /mcp");
}

int
front_init(struct worker *w)
{
	struct httpd_limits	 lim;

	w->w_nconns = front_nconns;
	front_limits(w->w_conf, &lim);
	if ((w->w_httpd = httpd_new(w->w_base, w->w_listen_fd, &lim,
	    front_on_request, w)) == NULL)
		return -1;
	return 0;
}

static void
front_on_idle(void *arg)
{
	worker_exit_if_idle(arg);
}

/*
 * Stop accepting (the master keeps the listener open for the others);
 * the connections open are served until they close, the idle ones
 * closed now on a stop.
 */
void
front_drain(struct worker *w, int stop)
{
	if (w->w_httpd == NULL)
		return;
	httpd_drain(w->w_httpd, front_on_idle, w);
	if (stop)
		httpd_close_idle(w->w_httpd);
}

size_t
front_nconns(struct worker *w)
{
	return w->w_httpd != NULL ? httpd_nconns(w->w_httpd) : 0;
}

void
front_free(struct worker *w)
{
	httpd_free(w->w_httpd);
	w->w_httpd = NULL;
}
