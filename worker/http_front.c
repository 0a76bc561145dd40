/*
 * The HTTP front: libevent's evhttp on the inherited listener, with the
 * limits set (evhttp defaults to none), request smuggling vectors
 * refused, and stream timeouts that do not kill SSE responses
 * (c-engineering.md section 3.2).
 */
#include <sys/queue.h>
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "shared/config.h"
#include "shared/httpcheck.h"
#include "shared/log.h"
#include "worker.h"

#define FRONT_SSE_HIGH_WATER	(8 * 1024 * 1024)

static void	front_on_request(struct evhttp_request *, void *);

/*
 * evhttp_find_header() compares names a character at a time through a
 * function call each; a request looks up about ten names, so this is
 * the same first-match walk with libc's strcasecmp.
 */
const char *
front_header(struct evhttp_request *req, const char *name)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	int			 c = (unsigned char)name[0] | 0x20;

	TAILQ_FOREACH(kv, h, next) {
		if (((unsigned char)kv->key[0] | 0x20) == c &&
		    strcasecmp(kv->key, name) == 0)
			return kv->value;
	}
	return NULL;
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
front_common_headers(struct evhttp_request *req, const char *session_id)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct worker		*w;
	char			 buf[64];

	if (session_id != NULL)
		evhttp_add_header(h, "Mcp-Session-Id", session_id);
	w = worker_self();
	if (w->w_conf->cf_worker_header) {
		(void)snprintf(buf, sizeof(buf), "%d %d", w->w_slot,
		    (int)w->w_pid);
		evhttp_add_header(h, "Vmcpd-Worker", buf);
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
front_send_json(struct evhttp_request *req, int status, struct evbuffer *buf,
    int ok)
{
	if (!ok) {
		if (buf != NULL)
			evbuffer_free(buf);
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, status, NULL, buf);
	evbuffer_free(buf);
}

void
front_reply_json(struct evhttp_request *req, int status, json_t *body,
    const char *session_id)
{
	struct evbuffer	*buf;
	char		*text = NULL;
	size_t		 len = 0;

	front_common_headers(req, session_id);
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

/* an integer id as jansson writes it, without its printf machinery */
static int
front_add_integer(struct evbuffer *buf, json_int_t v)
{
	char			 num[24];
	size_t			 n = sizeof(num);
	unsigned long long	 u;

	u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		num[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		num[--n] = '-';
	return evbuffer_add(buf, num + n, sizeof(num) - n);
}

/* {"jsonrpc":"2.0","id":<id>,"<kind>":<json>} appended to buf */
static int
front_compose_into(struct evbuffer *buf, const json_t *id, const char *kind,
    const char *json, size_t len)
{
	static const char	head[] = "{\"jsonrpc\":\"2.0\",\"id\":";

	if (evbuffer_add(buf, head, sizeof(head) - 1) == -1)
		return -1;
	if (json_is_integer(id)) {
		if (front_add_integer(buf, json_integer_value(id)) == -1)
			return -1;
	} else if (json_dump_callback(id, front_dump_cb, buf, JSON_COMPACT |
	    JSON_ENCODE_ANY) == -1)
		return -1;
	if (evbuffer_add(buf, ",\"", 2) == -1 ||
	    evbuffer_add(buf, kind, strlen(kind)) == -1 ||
	    evbuffer_add(buf, "\":", 2) == -1 ||
	    evbuffer_add(buf, json, len) == -1 ||
	    evbuffer_add(buf, "}", 1) == -1)
		return -1;
	return 0;
}

/* a JSON-RPC answer whose member text the caller already has */
void
front_reply_member(struct evhttp_request *req, const json_t *id,
    const char *kind, const char *json, size_t len)
{
	struct evbuffer *buf;

	front_common_headers(req, NULL);
	buf = evbuffer_new();
	front_send_json(req, 200, buf, buf != NULL &&
	    front_compose_into(buf, id, kind, json, len) == 0);
}

void
front_reply_result(struct evhttp_request *req, const json_t *id,
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
front_reply_error(struct evhttp_request *req, int status, json_t *id,
    int code, const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(id, code, message, NULL);
	front_reply_json(req, status, e, NULL);
	json_decref(e);
}

void
front_reply_empty(struct evhttp_request *req, int status)
{
	front_common_headers(req, NULL);
	evhttp_send_reply(req, status, NULL, NULL);
}

void
front_sse_start(struct evhttp_request *req, const char *session_id)
{
	struct evkeyvalq		*h = evhttp_request_get_output_headers(req);
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct worker			*w = worker_self();
	struct timeval			 tv;

	front_common_headers(req, session_id);
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_add_header(h, "X-Accel-Buffering", "no");
	evhttp_send_reply_start(req, 200, "OK");
	/* evhttp uses one timeout for read and write: a quiet stream must
	 * not be cut, so keep only the write timeout (a stalled reader) */
	if ((evcon = evhttp_request_get_connection(req)) != NULL &&
	    (bev = evhttp_connection_get_bufferevent(evcon)) != NULL) {
		tv.tv_sec = w->w_conf->cf_http_timeout_ms / 1000;
		tv.tv_usec = (w->w_conf->cf_http_timeout_ms % 1000) * 1000;
		bufferevent_set_timeouts(bev, NULL, &tv);
	}
}

/*
 * One SSE event of serialised JSON-RPC text.  A client that does not
 * read gets no more than the high-water mark queued: the event is
 * refused (-1) rather than buffered without bound.
 */
int
front_sse_send_text(struct evhttp_request *req, const char *id,
    const char *data, size_t len)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct evbuffer			*buf;
	char				*ev;
	size_t				 elen;

	if ((evcon = evhttp_request_get_connection(req)) == NULL)
		return -1;
	bev = evhttp_connection_get_bufferevent(evcon);
	if (bev != NULL && evbuffer_get_length(bufferevent_get_output(bev)) >
	    FRONT_SSE_HIGH_WATER) {
		log_warnx("SSE client too slow; dropping an event");
		return -1;
	}
	if ((ev = sse_format_event(id, "message", data, len, &elen)) ==
	    NULL || (buf = evbuffer_new()) == NULL) {
		free(ev);
		return -1;
	}
	evbuffer_add(buf, ev, elen);
	free(ev);
	evhttp_send_reply_chunk(req, buf);
	evbuffer_free(buf);
	return 0;
}

int
front_sse_send(struct evhttp_request *req, const char *id, const json_t *msg)
{
	char	*data;
	size_t	 dlen;
	int	 rc;

	if ((data = jsonrpc_dump(msg, &dlen)) == NULL)
		return -1;
	rc = front_sse_send_text(req, id, data, dlen);
	free(data);
	return rc;
}

/* a comment line: keeps a quiet stream (and its proxies) alive */
void
front_sse_keepalive(struct evhttp_request *req)
{
	struct evbuffer *buf;

	if (req == NULL || (buf = evbuffer_new()) == NULL)
		return;
	evbuffer_add_printf(buf, ": keepalive\n\n");
	evhttp_send_reply_chunk(req, buf);
	evbuffer_free(buf);
}

void
front_sse_end(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct worker			*w = worker_self();
	struct timeval			 tv;

	/* the connection may be kept alive: idle reads time out again */
	if ((evcon = evhttp_request_get_connection(req)) != NULL) {
		tv.tv_sec = w->w_conf->cf_http_timeout_ms / 1000;
		tv.tv_usec = (w->w_conf->cf_http_timeout_ms % 1000) * 1000;
		evhttp_connection_set_timeout_tv(evcon, &tv);
	}
	evhttp_send_reply_end(req);
}

/* 0 for GET or HEAD; else a 405 is sent and -1 */
static int
front_get_only(struct evhttp_request *req)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_GET ||
	    evhttp_request_get_command(req) == EVHTTP_REQ_HEAD)
		return 0;
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
	    "GET, HEAD");
	front_reply_empty(req, 405);
	return -1;
}

static void
front_healthz(struct worker *w, struct evhttp_request *req)
{
	json_t *body;

	if (front_get_only(req) == -1)
		return;
	body = json_pack("{s:s, s:i, s:i, s:b}", "status", "ok", "worker",
	    w->w_slot, "pid", (int)w->w_pid, "draining", w->w_draining);
	front_reply_json(req, 200, body, NULL);
	json_decref(body);
}

/* /status: the backends and the era each is spoken to in */
static void
front_status(struct worker *w, struct evhttp_request *req)
{
	const struct config_backend	*be;
	json_t				*body, *bes, *b;
	size_t				 i;

	if (front_get_only(req) == -1)
		return;
	if ((bes = json_array()) == NULL)
		goto fail;
	for (i = 0; i < w->w_conf->cf_nbackends; i++) {
		be = &w->w_conf->cf_backends[i];
		b = json_pack("{s:s, s:s, s:s, s:s}", "name", be->cb_name,
		    "transport", config_transport_name(be->cb_transport),
		    "eraSetting", config_era_name(be->cb_era),
		    "mcpRevision", era_name(era_get(w, be)));
		if (b == NULL || json_array_append_new(bes, b) == -1) {
			json_decref(bes);
			goto fail;
		}
	}
	body = json_pack("{s:s, s:s, s:i, s:i, s:o}", "name", w->w_conf->cf_name,
	    "version", VMCPD_VERSION, "worker", w->w_slot, "pid",
	    (int)w->w_pid, "backends", bes);
	if (body == NULL)
		goto fail;
	front_reply_json(req, 200, body, NULL);
	json_decref(body);
	return;
fail:
	front_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
	    "Internal error: out of memory");
}

/* evhttp wrote the whole reply: a draining worker may now exit */
static void
front_on_complete(struct evhttp_request *req, void *arg)
{
	(void)req;
	worker_reply_flushed(arg);
}

static void
front_on_request(struct evhttp_request *req, void *arg)
{
	struct worker		*w = arg;
	const struct evhttp_uri	*uri;
	const char		*path;

	uri = evhttp_request_get_evhttp_uri(req);
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (path == NULL)
		path = "";
	if (!httpcheck_framing(req)) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		front_reply_error(req, 400, NULL, JSONRPC_INVALID_REQUEST,
		    "Bad Request: conflicting Content-Length/Transfer-Encoding");
		return;
	}
	if (strcmp(path, "/mcp") == 0) {
		w->w_inflight++;
		w->w_unflushed++;
		evhttp_request_set_on_complete_cb(req, front_on_complete, w);
		legacy_handle(w, req);
		return;
	}
	if (strcmp(path, "/healthz") == 0) {
		front_healthz(w, req);
		return;
	}
	if (strcmp(path, "/status") == 0) {
		front_status(w, req);
		return;
	}
	front_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
	    "Not Found: the MCP endpoint is /mcp");
}

int
front_init(struct worker *w)
{
	const struct config	*conf = w->w_conf;
	struct timeval		 tv;

	if ((w->w_http = evhttp_new(w->w_base)) == NULL)
		return -1;
	evhttp_set_max_headers_size(w->w_http, conf->cf_max_header_size);
	evhttp_set_max_body_size(w->w_http, conf->cf_max_body_size);
	tv.tv_sec = conf->cf_http_timeout_ms / 1000;
	tv.tv_usec = (conf->cf_http_timeout_ms % 1000) * 1000;
	evhttp_set_timeout_tv(w->w_http, &tv);
	evhttp_set_allowed_methods(w->w_http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_POST | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(w->w_http, "application/json");
	evhttp_set_gencb(w->w_http, front_on_request, w);
	if ((w->w_bound = evhttp_accept_socket_with_handle(w->w_http,
	    w->w_listen_fd)) == NULL)
		return -1;
	return 0;
}

/* stop accepting; the master keeps the listener open for the others */
void
front_drain(struct worker *w)
{
	if (w->w_bound != NULL) {
		evhttp_del_accept_socket(w->w_http, w->w_bound);
		w->w_bound = NULL;
	}
}

void
front_free(struct worker *w)
{
	if (w->w_http != NULL)
		evhttp_free(w->w_http);
	w->w_http = NULL;
}
