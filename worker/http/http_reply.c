/*
 * The front's reply helpers (http_reply.h): JSON bodies, JSON-RPC answers
 * composed around text the caller already has, SSE streams, and the
 * request checks every edge shares (Host, GET only).  Below the edges:
 * they call these and these call nothing of theirs.
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "proto/proto.h"
#include "proto/jsonrpc.h"
#include "proto/headers.h"
#include "proto/http_req.h"
#include "proto/sse.h"
#include "proto/jsonspan.h"
#include "shared/config.h"
#include "shared/log.h"
#include "worker/http/httpd.h"
#include "worker/http/http_reply.h"
#define FRONT_SSE_HIGH_WATER	(8 * 1024 * 1024)


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

/* "slot pid" for the Vmcpd-Worker header (daemon.workerHeader), or "" */
static char	front_worker_hdr[64];

void
front_reply_init(const struct config *cf, int slot, pid_t pid)
{
	front_worker_hdr[0] = '\0';
	if (cf->cf_worker_header)
		(void)snprintf(front_worker_hdr, sizeof(front_worker_hdr),
		    "%d %d", slot, (int)pid);
}

static void
front_common_headers(struct httpd_req *req, const char *session_id)
{
	if (session_id != NULL)
		(void)httpd_add_header(req, "Mcp-Session-Id", session_id);
	if (front_worker_hdr[0] != '\0')
		(void)httpd_add_header(req, "Vmcpd-Worker", front_worker_hdr);
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

/*
 * What an answer says for the request's figures and span: a JSON-RPC
 * error and its code; with a span, a tool's result with isError true.
 */
static void
front_note_answer(struct httpd_req *req, const json_t *msg)
{
	const json_t	*e = json_object_get(msg, "error");

	if (e != NULL)
		httpd_req_tag_error(req, (int)json_integer_value(
		    json_object_get(e, "code")));
	else if (httpd_req_trace(req) != NULL && json_is_true(
	    json_object_get(json_object_get(msg, "result"), "isError")))
		httpd_req_set_tag(req, httpd_req_tag(req) |
		    HTTPD_TAG_TOOL_ERROR);
}

/* the same for a member's text (kind "result" or "error") */
static void
front_note_member(struct httpd_req *req, const char *kind, const char *json,
    size_t len)
{
	const char	*v;
	size_t		 vlen;
	long		 code = 0;

	if (strcmp(kind, "error") == 0) {
		/* the error object's "code" member (its value's text) */
		if ((v = proto_json_value(json, len, "code", &vlen)) != NULL &&
		    vlen > 0 && (*v == '-' || (*v >= '0' && *v <= '9')))
			code = strtol(v, NULL, 10);
		httpd_req_tag_error(req, code >= INT32_MIN &&
		    code <= INT32_MAX ? (int)code : 0);
	} else if (httpd_req_trace(req) != NULL &&
	    memmem(json, len, "\"isError\":true", 14) != NULL)
		httpd_req_set_tag(req, httpd_req_tag(req) |
		    HTTPD_TAG_TOOL_ERROR);
}

void
front_reply_json(struct httpd_req *req, int status, json_t *body,
    const char *session_id)
{
	struct evbuffer	*buf;
	char		*text = NULL;
	size_t		 len = 0;

	front_common_headers(req, session_id);
	front_note_answer(req, body);
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
	front_note_member(req, kind, json, len);
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
	if (json_object_get(msg, "id") != NULL)
		front_note_answer(req, msg);
	rc = front_sse_send_text(req, id, data, dlen);
	free(data);
	return rc;
}

/*
 * SEP-1699 (MCP 2025-11-25, Transports, Resumability): a priming event,
 * an event id (id NULL: none) with empty data, and the time a client
 * waits before it reconnects (retry_ms < 0: none).
 */
int
front_sse_prime(struct httpd_req *req, const char *id, long retry_ms)
{
	char	buf[256], rbuf[40];
	int	n;

	rbuf[0] = '\0';
	if (retry_ms >= 0)
		(void)snprintf(rbuf, sizeof(rbuf), "retry: %ld\n", retry_ms);
	if (id != NULL)
		n = snprintf(buf, sizeof(buf), "id: %s\n%sdata: \n\n", id,
		    rbuf);
	else
		n = snprintf(buf, sizeof(buf), "%s\n", rbuf);
	if (n <= 0 || (size_t)n >= sizeof(buf))
		return -1;
	return httpd_send_chunk(req, buf, (size_t)n);
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
front_host_ok(const struct config *cf, struct httpd_req *req)
{
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
front_host_check(const struct config *cf, struct httpd_req *req)
{
	if (front_host_ok(cf, req))
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
