/*
 * The HTTP front: vmcpd's HTTP/1.1 server (httpd.c) on the inherited
 * listener, with the limits set, the routes (/mcp, /healthz; /status
 * and /metrics are on the diagnostics listener, diag.c), /mcp's
 * transport checks, body scan and era classification, done once before
 * the request goes to the Legacy edge (legacy.c) or the Modern edge
 * (modern.c), and the reply helpers the edges share: JSON bodies,
 * JSON-RPC answers composed around text the caller already has, and SSE
 * streams.
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
#include "auth.h"
#include "texch.h"
#include "audit.h"
#include "httpd.h"
#include "worker.h"
#include "request.h"
#include "session_redis.h"

#define FRONT_SSE_HIGH_WATER	(8 * 1024 * 1024)

static void	front_on_request(struct httpd_req *, void *);

const char *
front_header(struct httpd_req *req, const char *name)
{
	return httpd_req_header(req, name);
}

/* the text of the JSON-RPC body's "params", or NULL */
const char *
front_params_text(struct httpd_req *req, size_t *len)
{
	const char	*body;
	size_t		 blen;

	body = httpd_req_body(req, &blen);
	return proto_json_value(body, blen, "params", len);
}

/* Mcp-Param-<name> of a request (arg): for proto_reqhdrs.rh_param */
const char *
front_param_header(void *arg, const char *name)
{
	char hdr[128];

	if (snprintf(hdr, sizeof(hdr), "Mcp-Param-%s", name) >=
	    (int)sizeof(hdr))
		return NULL;
	return front_header(arg, hdr);
}

static void
front_common_headers(struct httpd_req *req, const char *session_id)
{
	struct worker	*w;
	char		 buf[64];

	if (session_id != NULL)
		(void)httpd_add_header(req, "Mcp-Session-Id", session_id);
	w = worker_self();
	if (w->w_conf->cf_worker_header) {
		(void)snprintf(buf, sizeof(buf), "%d %d", w->w_slot,
		    (int)w->w_pid);
		(void)httpd_add_header(req, "Vmcpd-Worker", buf);
	}
}

static int
front_dump_cb(const char *buf, size_t len, void *arg)
{
	return evbuffer_add(arg, buf, len);
}

static void
front_free_text(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

/* send buf (taken) as a JSON reply, or a 500 if it could not be made */
static void
front_send_json(struct httpd_req *req, int status, struct evbuffer *buf,
    int ok)
{
	if (!ok) {
		if (buf != NULL)
			evbuffer_free(buf);
		httpd_send_reply(req, 500, NULL);
		return;
	}
	/* a body goes as application/json by default (conn_head()) */
	if (evbuffer_get_length(buf) == 0)
		(void)httpd_add_header(req, "Content-Type",
		    "application/json");
	httpd_send_reply(req, status, buf);
	evbuffer_free(buf);
}

void
front_reply_json(struct httpd_req *req, int status, json_t *body,
    const char *session_id)
{
	struct evbuffer	*buf;
	char		*text = NULL;
	size_t		 len = 0;

	front_common_headers(req, session_id);
	if (json_object_get(body, "error") != NULL)
		diag_tag_error(req);
	/* dumped whole, then handed over: a callback per token into an
	 * evbuffer costs several times the dump itself */
	if ((buf = evbuffer_new()) == NULL || (body != NULL &&
	    ((text = jsonrpc_dump(body, &len)) == NULL ||
	    evbuffer_add_reference(buf, text, len, front_free_text, NULL) ==
	    -1))) {
		free(text);
		front_send_json(req, status, buf, 0);
		return;
	}
	front_send_json(req, status, buf, 1);
}

#define FRONT_HEAD_MAX	128	/* an envelope's head, id written in place */

/*
 * {"jsonrpc":"2.0","id":<id>,"<kind>": as jansson would write it, into
 * head: an integer id, or a short string one with nothing to escape.
 * 0, or -1 for an id to dump.
 */
static int
front_head(char *head, const json_t *id, const char *kind, size_t *len)
{
	static const char	 pre[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	char			 num[24], *s, *p = head;
	const char		*v;
	size_t			 n, klen = strlen(kind), i;
	json_int_t		 iv;

	memcpy(p, pre, sizeof(pre) - 1);
	p += sizeof(pre) - 1;
	if (json_is_integer(id)) {
		iv = json_integer_value(id);
		s = proto_utoa(num + sizeof(num), iv < 0 ?
		    0ULL - (uint64_t)iv : (uint64_t)iv, 10);
		if (iv < 0)
			*--s = '-';
		n = (size_t)(num + sizeof(num) - s);
		memcpy(p, s, n);
		p += n;
	} else if (json_is_string(id)) {
		v = json_string_value(id);
		n = json_string_length(id);
		if (n > 48)
			return -1;
		for (i = 0; i < n; i++)
			if ((unsigned char)v[i] < 0x20 || v[i] == '"' ||
			    v[i] == '\\' || (unsigned char)v[i] >= 0x7f)
				return -1;
		*p++ = '"';
		memcpy(p, v, n);
		p += n;
		*p++ = '"';
	} else
		return -1;
	if (klen > 16)
		return -1;
	*p++ = ',';
	*p++ = '"';
	memcpy(p, kind, klen);
	p += klen;
	*p++ = '"';
	*p++ = ':';
	*len = (size_t)(p - head);
	return 0;
}

/* {"jsonrpc":"2.0","id":<id>,"<kind>":<json>} appended to buf */
static int
front_compose_into(struct evbuffer *buf, const json_t *id, const char *kind,
    const char *json, size_t len)
{
	static const char	pre[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	char			head[FRONT_HEAD_MAX];
	size_t			hlen;

	if (front_head(head, id, kind, &hlen) == 0) {
		if (evbuffer_add(buf, head, hlen) == -1)
			return -1;
	} else if (evbuffer_add(buf, pre, sizeof(pre) - 1) == -1 ||
	    json_dump_callback(id, front_dump_cb, buf, JSON_COMPACT |
	    JSON_ENCODE_ANY) == -1 ||
	    evbuffer_add(buf, ",\"", 2) == -1 ||
	    evbuffer_add(buf, kind, strlen(kind)) == -1 ||
	    evbuffer_add(buf, "\":", 2) == -1)
		return -1;
	if (evbuffer_add(buf, json, len) == -1 ||
	    evbuffer_add(buf, "}", 1) == -1)
		return -1;
	return 0;
}

/*
 * A JSON-RPC answer whose member text the caller already has: the
 * common ids' envelope written in place, the text copied once, into
 * the connection's output.
 */
void
front_reply_member(struct httpd_req *req, const json_t *id,
    const char *kind, const char *json, size_t len)
{
	struct evbuffer	*buf;
	struct iovec	 iov[3];
	char		 head[FRONT_HEAD_MAX];
	size_t		 hlen;

	front_common_headers(req, NULL);
	if (strcmp(kind, "error") == 0)
		diag_tag_error(req);
	if (front_head(head, id, kind, &hlen) == 0) {
		iov[0].iov_base = head;
		iov[0].iov_len = hlen;
		iov[1].iov_base = (void *)(uintptr_t)json;
		iov[1].iov_len = len;
		iov[2].iov_base = (void *)(uintptr_t)"}";
		iov[2].iov_len = 1;
		httpd_send_reply_iov(req, 200, iov, 3);
		return;
	}
	buf = evbuffer_new();
	front_send_json(req, 200, buf, buf != NULL &&
	    front_compose_into(buf, id, kind, json, len) == 0);
}

void
front_reply_result(struct httpd_req *req, const json_t *id,
    const char *result, size_t len)
{
	front_reply_member(req, id, "result", result, len);
}

char *
front_compose(const json_t *id, const char *kind, const char *json,
    size_t len, size_t *outlen)
{
	struct evbuffer	*buf;
	char		*out = NULL;
	size_t		 n;

	if ((buf = evbuffer_new()) == NULL)
		return NULL;
	if (front_compose_into(buf, id, kind, json, len) == 0 &&
	    (out = malloc((n = evbuffer_get_length(buf)) + 1)) != NULL) {
		evbuffer_remove(buf, out, n);
		out[n] = '\0';
		*outlen = n;
	}
	evbuffer_free(buf);
	return out;
}

void
front_reply_error(struct httpd_req *req, int status, json_t *id,
    int code, const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(id, code, message, NULL);
	diag_tag_error(req);
	front_reply_json(req, status, e, NULL);
	json_decref(e);
}

void
front_reply_empty(struct httpd_req *req, int status)
{
	front_common_headers(req, NULL);
	httpd_send_reply(req, status, NULL);
}

/* a stream has no read timeout: only a stalled reader is cut */
void
front_sse_start(struct httpd_req *req, const char *session_id)
{
	front_common_headers(req, session_id);
	(void)httpd_add_header(req, "Content-Type", "text/event-stream");
	(void)httpd_add_header(req, "Cache-Control", "no-cache");
	(void)httpd_add_header(req, "X-Accel-Buffering", "no");
	httpd_send_start(req, 200);
}

/*
 * One SSE event of serialised JSON-RPC text.  A client that does not
 * read gets no more than the high-water mark queued: the event is
 * refused (-1) rather than buffered without bound.
 */
int
front_sse_send_text(struct httpd_req *req, const char *id,
    const char *data, size_t len)
{
	char	*ev;
	size_t	 elen;
	int	 rc;

	if (httpd_req_gone(req))
		return -1;
	if (httpd_req_unsent(req) > FRONT_SSE_HIGH_WATER) {
		log_warnx("SSE client too slow; dropping an event");
		return -1;
	}
	if ((ev = sse_format_event(id, "message", data, len, &elen)) == NULL)
		return -1;
	rc = httpd_send_chunk(req, ev, elen);
	free(ev);
	return rc;
}

int
front_sse_send(struct httpd_req *req, const char *id, const json_t *msg)
{
	char	*data;
	size_t	 dlen;
	int	 rc;

	if ((data = jsonrpc_dump(msg, &dlen)) == NULL)
		return -1;
	if (json_object_get(msg, "error") != NULL &&
	    json_object_get(msg, "id") != NULL)
		diag_tag_error(req);
	rc = front_sse_send_text(req, id, data, dlen);
	free(data);
	return rc;
}

/* a comment line: keeps a quiet stream (and its proxies) alive */
void
front_sse_keepalive(struct httpd_req *req)
{
	static const char	ka[] = ": keepalive\n\n";

	if (req != NULL)
		(void)httpd_send_chunk(req, ka, sizeof(ka) - 1);
}

void
front_sse_end(struct httpd_req *req)
{
	httpd_send_end(req);
}

/*
 * The host of an authority, "name[:port]" or "[v6][:port]", without
 * the port or brackets.
 */
static void
front_host_part(const char *a, const char **h, size_t *hlen)
{
	const char	*p;

	*h = a;
	if (a[0] == '[' && (p = strchr(a, ']')) != NULL) {
		*h = a + 1;
		*hlen = (size_t)(p - a) - 1;
	} else if ((p = strchr(a, ':')) != NULL && strchr(p + 1, ':') == NULL)
		*hlen = (size_t)(p - a);
	else
		*hlen = strlen(a);
}

/* s[0, len) is in list (hosts without brackets), or list has "*" */
static int
front_listed(char *const *list, const char *s, size_t len, int hosts)
{
	const char	*e;
	size_t		 elen;

	for (; list != NULL && *list != NULL; list++) {
		e = *list;
		elen = strlen(e);
		if (strcmp(e, "*") == 0)
			return 1;
		if (hosts && elen >= 2 && e[0] == '[' && e[elen - 1] == ']') {
			e++;
			elen -= 2;
		}
		if (elen == len && strncasecmp(e, s, len) == 0)
			return 1;
	}
	return 0;
}

/*
 * DNS rebinding (MCP transports, "Security Warning"): the authority a
 * request is for (an absolute-form target's, else Host: RFC 9112 3.2.2)
 * must be a loopback name or in http.allowedHosts; an Origin, when
 * present, must be a loopback origin, in http.allowedOrigins, or the
 * request's own authority.  A rebinding page's Host is its own name.
 */
int
front_host_ok(struct worker *w, struct httpd_req *req)
{
	const struct config	*cf = w->w_conf;
	const char		*host = httpd_req_host(req), *h, *oa;
	const char		*origin = httpd_req_known(req, HTTP_H_ORIGIN);
	size_t			 hlen;

	if (host != NULL) {
		front_host_part(host, &h, &hlen);
		if (!config_host_loopback(h, hlen) &&
		    !front_listed(cf->cf_allowed_hosts, h, hlen, 1))
			return 0;
	}
	if (origin == NULL || front_listed(cf->cf_allowed_origins, origin,
	    strlen(origin), 0))
		return 1;
	/* "scheme://authority", nothing after it ("null" is refused) */
	if ((oa = strstr(origin, "://")) == NULL || oa == origin ||
	    strpbrk(oa + 3, "/?#@") != NULL)
		return 0;
	oa += 3;
	front_host_part(oa, &h, &hlen);
	return config_host_loopback(h, hlen) || (host != NULL &&
	    strcasecmp(oa, host) == 0);
}

/* front_host_ok(), or 0 once a 403 is sent */
int
front_host_check(struct worker *w, struct httpd_req *req)
{
	if (front_host_ok(w, req))
		return 1;
	front_reply_error(req, 403, NULL, MCP_ERR_TRANSPORT, "Forbidden: Host "
	    "or Origin not allowed (DNS rebinding protection)");
	return 0;
}

/* 0 for GET or HEAD; else a 405 is sent and -1 */
int
front_get_only(struct httpd_req *req)
{
	if (httpd_req_method(req) == HTTP_M_GET ||
	    httpd_req_method(req) == HTTP_M_HEAD)
		return 0;
	(void)httpd_add_header(req, "Allow", "GET, HEAD");
	front_reply_empty(req, 405);
	return -1;
}

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
    struct legacy_fast *fast)
{
	struct jsonrpc_scan	 sc;
	json_t			*id;

	memset(fast, 0, sizeof(*fast));
	if (jsonrpc_scan(body, len, &sc) != 1 ||
	    sc.js_idkind == JSONRPC_SCAN_ID_NONE || sc.js_mm == NULL ||
	    sc.js_mm->mm_id != MCP_M_TOOLS_CALL ||
	    sc.js_params == NULL || sc.js_name == NULL || sc.js_meta != NULL ||
	    (id = jsonrpc_scan_id(&sc)) == NULL)
		return -1;
	memset(msg, 0, sizeof(*msg));
	msg->jm_kind = JSONRPC_REQUEST;
	msg->jm_root = id;	/* the only tree: cleared with the message */
	msg->jm_id = id;
	msg->jm_method = sc.js_mm->mm_name;
	msg->jm_mm = sc.js_mm;
	fast->lf_params = sc.js_params;
	fast->lf_plen = sc.js_paramslen;
	fast->lf_name = sc.js_name;
	fast->lf_namelen = sc.js_namelen;
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
	struct legacy_fast	 fast;
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
	/* the hot paths: the gate reads what it needs off the params'
	 * text (authz_gate_text()) */
	if (modern_scan_post(w, req, body, len) == 0)
		return;
	memset(&fast, 0, sizeof(fast));
	if (front_scan_call(body, len, &msg, &fast) == 0)
		audit_note_call(w, req, msg.jm_mm, fast.lf_name,
		    fast.lf_namelen, fast.lf_params, fast.lf_plen);
	else if (jsonrpc_parse(body, len, &msg, &err) == -1) {
		diag_tag_kind(req, "invalid");
		front_reply_error(req, err.je_http, NULL, err.je_code,
		    err.je_msg);
		return;
	}
	if (msg.jm_method == NULL)
		diag_tag_kind(req, "response");
	else
		diag_tag_method(req, msg.jm_mm);
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

/* once authenticated: the principal's exchanged tokens (texch.h) */
static void
front_mcp_texch(struct worker *w, struct httpd_req *req)
{
	if (texch_request(w, req, front_mcp_session) == TEXCH_GO)
		front_mcp_session(w, req);
}

/* /mcp: Host/Origin first (DNS rebinding), then who is asking
 * (incomingAuth, worker/auth.c), then by HTTP method */
static void
front_mcp(struct worker *w, struct httpd_req *req)
{
	if (!front_host_check(w, req))
		return;
	if (auth_request(w, req, front_mcp_texch) == AUTH_GO)
		front_mcp_texch(w, req);
}

/* with sessionStorage redis, the session's copy checked first */
static void
front_mcp_session(struct worker *w, struct httpd_req *req)
{
	if (session_redis_sync(w, req, front_mcp_method) == SESSION_SYNC_GO)
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
	front_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
	    "Not Found: the MCP endpoint is /mcp");
}

/* the http.* limits, whole: every listener of the worker takes them */
void
front_limits(const struct config *conf, struct httpd_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->hl_max_head = conf->cf_max_header_size;
	lim->hl_max_body = conf->cf_max_body_size;
	lim->hl_timeout_ms = conf->cf_http_timeout_ms;
	lim->hl_head_ms = conf->cf_header_timeout_ms > INT_MAX ? INT_MAX :
	    (int)conf->cf_header_timeout_ms;
	lim->hl_request_ms = conf->cf_request_timeout_ms > INT_MAX ? INT_MAX :
	    (int)conf->cf_request_timeout_ms;
	lim->hl_max_conns = conf->cf_max_conns;
	lim->hl_max_conns_client = conf->cf_max_conns_client;
}

int
front_init(struct worker *w)
{
	struct httpd_limits	 lim;

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
