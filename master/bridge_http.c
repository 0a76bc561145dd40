/*
 * The bridge's Unix-socket side: a stateful Streamable HTTP endpoint
 * (MCP 2025-11-25) that every worker reaches with its HTTP client.
 * Sessions are routing keys only (bridge.c says why); a POSTed request
 * becomes a struct breq (bridge_relay.c) whose answer and server
 * messages go back on the POST's own SSE stream, other notifications
 * on the session's GET streams.
 */
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "proto/proto.h"
#include "proto/method.h"
#include "proto/jsonrpc.h"
#include "proto/sse.h"
#include "shared/httpcheck.h"
#include "shared/log.h"
#include "bridge_int.h"

/*
 * HTTP replies
 */

void
bridge_reply_json(struct evhttp_request *req, int status, const json_t *msg,
    const char *sid)
{
	struct evkeyvalq	*h;
	struct evbuffer		*buf = NULL;
	char			*s;
	size_t			 len;

	if ((s = jsonrpc_dump(msg, &len)) == NULL ||
	    (buf = evbuffer_new()) == NULL ||
	    evbuffer_add(buf, s, len) == -1) {
		free(s);
		if (buf != NULL)
			evbuffer_free(buf);
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	free(s);
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Content-Type", "application/json");
	if (sid != NULL)
		evhttp_add_header(h, "Mcp-Session-Id", sid);
	evhttp_send_reply(req, status, NULL, buf);
	evbuffer_free(buf);
}

static void
bridge_reply_error(struct evhttp_request *req, int status, json_t *id,
    int code, const char *message)
{
	json_t *e;

	if ((e = jsonrpc_error_new(id, code, message, NULL)) == NULL) {
		evhttp_send_error(req, 500, "Internal Server Error");
		return;
	}
	bridge_reply_json(req, status, e, NULL);
	json_decref(e);
}

/* a request is over for us: free it if evhttp detached it */
void
bridge_req_release(struct evhttp_request *req)
{
	/* detached (peer gone while we owned it): ending frees it;
	 * otherwise evhttp frees it with its connection */
	if (req != NULL && evhttp_request_get_connection(req) == NULL)
		evhttp_send_reply_end(req);
}

static void
bridge_http_sse_start(struct evhttp_request *req, const char *sid,
    void (*closecb)(struct evhttp_connection *, void *), void *arg)
{
	struct evkeyvalq		*h;
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct timeval			 tv;

	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	if (sid != NULL)
		evhttp_add_header(h, "Mcp-Session-Id", sid);
	evhttp_send_reply_start(req, 200, "OK");
	if ((evcon = evhttp_request_get_connection(req)) == NULL)
		return;
	evhttp_connection_set_closecb(evcon, closecb, arg);
	/* one timeout for read and write in evhttp: a quiet stream must
	 * live on, so keep only the write timeout (a stalled reader) */
	if ((bev = evhttp_connection_get_bufferevent(evcon)) != NULL) {
		bridge_tv(&tv, BRIDGE_HTTP_TIMEOUT_MS);
		(void)bufferevent_set_timeouts(bev, NULL, &tv);
	}
}

/* 0, or -1 when the reader is gone or too slow */
static int
bridge_http_sse_raw(struct evhttp_request *req, const char *data, size_t len)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct evbuffer			*buf;

	if (req == NULL || (evcon = evhttp_request_get_connection(req)) == NULL)
		return -1;
	if ((bev = evhttp_connection_get_bufferevent(evcon)) != NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) >
	    BRIDGE_SSE_HIGH_WATER)
		return -1;
	if ((buf = evbuffer_new()) == NULL)
		return -1;
	if (evbuffer_add(buf, data, len) == -1) {
		evbuffer_free(buf);
		return -1;
	}
	evhttp_send_reply_chunk(req, buf);
	evbuffer_free(buf);
	return 0;
}

int
bridge_http_sse_send(struct evhttp_request *req, const json_t *msg)
{
	char	*data, *ev;
	size_t	 dlen, elen;
	int	 rc;

	if ((data = jsonrpc_dump(msg, &dlen)) == NULL)
		return -1;
	ev = sse_format_event(NULL, "message", data, dlen, &elen);
	free(data);
	if (ev == NULL)
		return -1;
	rc = bridge_http_sse_raw(req, ev, elen);
	free(ev);
	return rc;
}

void
bridge_http_sse_end(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct timeval			 tv;

	if ((evcon = evhttp_request_get_connection(req)) != NULL) {
		evhttp_connection_set_closecb(evcon, NULL, NULL);
		/* a kept-alive connection times out idle reads again */
		bridge_tv(&tv, BRIDGE_HTTP_TIMEOUT_MS);
		evhttp_connection_set_timeout_tv(evcon, &tv);
	}
	evhttp_send_reply_end(req);
}

/*
 * Sessions: a tsearch(3) tree by id, and a list by last use for expiry
 */

static int
bridge_session_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bsession *)a)->s_id,
	    ((const struct bsession *)b)->s_id);
}

static void
bridge_b64url(char *out, const unsigned char *in, size_t len)
{
	static const char	 tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	uint32_t		 v;
	size_t			 i;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		*out++ = tab[v >> 18 & 63];
		*out++ = tab[v >> 12 & 63];
		*out++ = tab[v >> 6 & 63];
		*out++ = tab[v & 63];
	}
	if (len - i == 1) {
		v = (uint32_t)in[i] << 16;
		*out++ = tab[v >> 18 & 63];
		*out++ = tab[v >> 12 & 63];
	} else if (len - i == 2) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		*out++ = tab[v >> 18 & 63];
		*out++ = tab[v >> 12 & 63];
		*out++ = tab[v >> 6 & 63];
	}
	*out = '\0';
}

static struct bsession *
bridge_session_new(struct bridge *b)
{
	struct bsession	*s;
	unsigned char	 rnd[BRIDGE_SID_BYTES];
	size_t		 got = 0;
	ssize_t		 n;

	while (got < sizeof(rnd)) {
		if ((n = getrandom(rnd + got, sizeof(rnd) - got, 0)) == -1) {
			if (errno == EINTR)
				continue;
			log_warn("%s: getrandom", b->b_name);
			return NULL;
		}
		got += (size_t)n;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_warn("%s: %s", b->b_name, __func__);
		return NULL;
	}
	bridge_b64url(s->s_id, rnd, sizeof(rnd));
	if (tsearch(s, &b->b_front.bf_sess_root, bridge_session_cmp) == NULL) {
		log_warn("%s: %s", b->b_name, __func__);
		free(s);
		return NULL;
	}
	s->s_seen_ms = bridge_now_ms();
	TAILQ_INSERT_TAIL(&b->b_front.bf_sessions, s, s_entry);
	b->b_front.bf_nsessions++;
	return s;
}

static struct bsession *
bridge_session_find(struct bridge *b, const char *sid)
{
	struct bsession	  key;
	void		**p;

	if (sid == NULL || strlen(sid) != BRIDGE_SID_LEN)
		return NULL;
	memcpy(key.s_id, sid, BRIDGE_SID_LEN + 1);
	if ((p = tfind(&key, &b->b_front.bf_sess_root,
	    bridge_session_cmp)) == NULL)
		return NULL;
	return *p;
}

static void
bridge_session_touch(struct bridge *b, struct bsession *s)
{
	s->s_seen_ms = bridge_now_ms();
	TAILQ_REMOVE(&b->b_front.bf_sessions, s, s_entry);
	TAILQ_INSERT_TAIL(&b->b_front.bf_sessions, s, s_entry);
}

static void
bridge_stream_free(struct bstream *st, int end)
{
	struct bridge *b = st->st_b;

	if (end && st->st_req != NULL)
		bridge_http_sse_end(st->st_req);
	st->st_sess->s_streams--;
	TAILQ_REMOVE(&b->b_front.bf_streams, st, st_entry);
	b->b_front.bf_nstreams--;
	free(st);
}

static void
bridge_session_free(struct bridge *b, struct bsession *s)
{
	struct bstream *st, *next;

	for (st = TAILQ_FIRST(&b->b_front.bf_streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, st_entry);
		if (st->st_sess == s)
			bridge_stream_free(st, 1);
	}
	(void)tdelete(s, &b->b_front.bf_sess_root, bridge_session_cmp);
	TAILQ_REMOVE(&b->b_front.bf_sessions, s, s_entry);
	b->b_front.bf_nsessions--;
	free(s);
}

void
bridge_sessions_expire(struct bridge *b, uint64_t now)
{
	struct bsession *s;

	while ((s = TAILQ_FIRST(&b->b_front.bf_sessions)) != NULL &&
	    now - s->s_seen_ms >= BRIDGE_SESSION_IDLE_MS) {
		if (s->s_streams > 0) {
			/* a session listening is not idle */
			bridge_session_touch(b, s);
			if (TAILQ_FIRST(&b->b_front.bf_sessions) == s)
				break;
			continue;
		}
		log_debug("%s: session %.8s... expired", b->b_name, s->s_id);
		bridge_session_free(b, s);
	}
}

/*
 * GET streams
 */

static void
bridge_stream_on_close(struct evhttp_connection *evcon, void *arg)
{
	struct bstream *st = arg;

	(void)evcon;
	bridge_req_release(st->st_req);
	st->st_req = NULL;
	bridge_stream_free(st, 0);
}

void
bridge_broadcast(struct bridge *b, const json_t *msg)
{
	struct bstream	*st, *next;
	char		*data, *ev;
	size_t		 dlen, elen;

	if (TAILQ_EMPTY(&b->b_front.bf_streams)) {
		log_debug("%s: no GET stream for a notification",
		    b->b_name);
		return;
	}
	if ((data = jsonrpc_dump(msg, &dlen)) == NULL)
		return;
	ev = sse_format_event(NULL, "message", data, dlen, &elen);
	free(data);
	if (ev == NULL)
		return;
	for (st = TAILQ_FIRST(&b->b_front.bf_streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, st_entry);
		if (bridge_http_sse_raw(st->st_req, ev, elen) == -1) {
			log_warnx("%s: a GET stream is too slow; closing it",
			    b->b_name);
			bridge_stream_free(st, 1);
		}
	}
	free(ev);
}

void
bridge_answer_initialize(struct bridge *b, struct evhttp_request *req,
    json_t *id)
{
	struct bsession	*s;
	json_t		*resp;

	if ((s = bridge_session_new(b)) == NULL) {
		bridge_reply_error(req, 500, id, JSONRPC_INTERNAL_ERROR,
		    "cannot create a session");
		return;
	}
	if ((resp = jsonrpc_result_new(id,
	    json_incref(b->b_init_result))) == NULL) {
		bridge_session_free(b, s);
		bridge_reply_error(req, 500, id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	bridge_reply_json(req, 200, resp, s->s_id);
	json_decref(resp);
}

/*
 * POST, GET and DELETE on /mcp
 */

static struct bsession *
bridge_session_of(struct bridge *b, struct evhttp_request *req)
{
	struct bsession	*s;
	const char	*sid;

	sid = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Mcp-Session-Id");
	if (sid == NULL) {
		bridge_reply_error(req, 400, NULL, MCP_ERR_TRANSPORT,
		    "Bad Request: Mcp-Session-Id header is required");
		return NULL;
	}
	if ((s = bridge_session_find(b, sid)) == NULL) {
		bridge_reply_error(req, 404, NULL, MCP_ERR_SESSION_NOT_FOUND,
		    "Session not found");
		return NULL;
	}
	bridge_session_touch(b, s);
	return s;
}

static void
bridge_post_initialize(struct bridge *b, struct evhttp_request *req,
    const struct jsonrpc_msg *m)
{
	struct breq *r;

	if (b->b_init_result != NULL) {
		/* sessions outlive server restarts: any result will do */
		bridge_answer_initialize(b, req, m->jm_id);
		return;
	}
	if (b->b_nreqs >= BRIDGE_MAX_REQS) {
		bridge_reply_error(req, 503, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "too many requests in flight");
		return;
	}
	if ((r = bridge_breq_new(b, req, m, NULL)) == NULL) {
		bridge_reply_error(req, 500, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	r->r_init = 1;
}

static void
bridge_post_request(struct bridge *b, struct evhttp_request *req,
    const struct jsonrpc_msg *m, struct bsession *s)
{
	struct breq	*r;
	json_t		*resp;

	if (MCP_METHOD_IS(m->jm_mm, MCP_M_PING)) {
		resp = jsonrpc_result_new(m->jm_id, json_object());
		if (resp == NULL)
			evhttp_send_error(req, 500, "Internal Server Error");
		else
			bridge_reply_json(req, 200, resp, NULL);
		json_decref(resp);
		return;
	}
	if (b->b_nreqs >= BRIDGE_MAX_REQS) {
		log_warnx("%s: too many requests in flight", b->b_name);
		bridge_reply_error(req, 503, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "too many requests in flight");
		return;
	}
	if ((r = bridge_breq_new(b, req, m, s->s_id)) == NULL) {
		bridge_reply_error(req, 500, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	bridge_http_sse_start(req, s->s_id, bridge_breq_on_close, r);
	if (b->b_state == SRV_READY)
		bridge_breq_send(b, r);
}

static void
bridge_post_notification(struct bridge *b, const struct jsonrpc_msg *m,
    const struct bsession *s)
{
	struct breq	*r;
	json_t		*v;

	if (MCP_METHOD_IS(m->jm_mm, MCP_M_N_INITIALIZED))
		return;		/* the bridge initialized the server */
	if (MCP_METHOD_IS(m->jm_mm, MCP_M_N_CANCELLED)) {
		v = json_object_get(m->jm_params, "requestId");
		TAILQ_FOREACH(r, &b->b_reqs, r_entry)
			if (!r->r_init && strcmp(r->r_sid, s->s_id) == 0 &&
			    json_equal(r->r_id, v))
				break;
		if (r == NULL)
			return;
		if (r->r_bid != 0 && json_object_set_new(m->jm_params,
		    "requestId", json_integer((json_int_t)r->r_bid)) == 0)
			(void)bridge_server_write(b, m->jm_root);
		log_debug("%s: %s cancelled by its caller", b->b_name,
		    r->r_method);
		bridge_breq_abandon(r);
		return;
	}
	if (b->b_state == SRV_READY)
		(void)bridge_server_write(b, m->jm_root);
}

/* a caller's answer to a request of the server's */
static void
bridge_post_response(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct bsrvreq *sr;

	if (!json_is_string(m->jm_id))
		return;
	TAILQ_FOREACH(sr, &b->b_srvreqs, sr_entry)
		if (strcmp(sr->sr_id, json_string_value(m->jm_id)) == 0)
			break;
	if (sr == NULL) {
		log_debug("%s: dropped an answer to no pending request",
		    b->b_name);
		return;
	}
	if (json_object_set(m->jm_root, "id", sr->sr_server_id) == 0)
		(void)bridge_server_write(b, m->jm_root);
	bridge_srvreq_free(b, sr);
}

static void
bridge_post(struct bridge *b, struct evhttp_request *req)
{
	struct evbuffer		*body;
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;
	struct bsession		*s;
	unsigned char		*data;
	size_t			 len;

	body = evhttp_request_get_input_buffer(req);
	len = evbuffer_get_length(body);
	if (len == 0 || (data = evbuffer_pullup(body, -1)) == NULL) {
		bridge_reply_error(req, 400, NULL, JSONRPC_PARSE_ERROR,
		    "Parse error: empty body");
		return;
	}
	if (jsonrpc_parse((const char *)data, len, &m, &err) == -1) {
		bridge_reply_error(req, err.je_http, NULL, err.je_code,
		    err.je_msg);
		return;
	}
	if (m.jm_kind == JSONRPC_REQUEST &&
	    MCP_METHOD_IS(m.jm_mm, MCP_M_INITIALIZE)) {
		bridge_post_initialize(b, req, &m);
		goto done;
	}
	if ((s = bridge_session_of(b, req)) == NULL)
		goto done;
	switch (m.jm_kind) {
	case JSONRPC_REQUEST:
		bridge_post_request(b, req, &m, s);
		break;
	case JSONRPC_NOTIFICATION:
		bridge_post_notification(b, &m, s);
		evhttp_send_reply(req, 202, "Accepted", NULL);
		break;
	case JSONRPC_RESPONSE:
	case JSONRPC_ERROR:
		bridge_post_response(b, &m);
		evhttp_send_reply(req, 202, "Accepted", NULL);
		break;
	}
done:
	jsonrpc_msg_clear(&m);
}

static void
bridge_get(struct bridge *b, struct evhttp_request *req)
{
	struct bsession	*s;
	struct bstream	*st;

	if ((s = bridge_session_of(b, req)) == NULL)
		return;
	if (b->b_front.bf_nstreams >= BRIDGE_MAX_STREAMS) {
		log_warnx("%s: too many GET streams", b->b_name);
		bridge_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
		    "too many streams");
		return;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		bridge_reply_error(req, 500, NULL, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	st->st_b = b;
	st->st_req = req;
	st->st_sess = s;
	s->s_streams++;
	TAILQ_INSERT_TAIL(&b->b_front.bf_streams, st, st_entry);
	b->b_front.bf_nstreams++;
	bridge_http_sse_start(req, s->s_id, bridge_stream_on_close, st);
}

static void
bridge_delete(struct bridge *b, struct evhttp_request *req)
{
	struct bsession *s;

	if ((s = bridge_session_of(b, req)) == NULL)
		return;
	bridge_session_free(b, s);
	evhttp_send_reply(req, 200, "OK", NULL);
}

static void
bridge_on_request(struct evhttp_request *req, void *arg)
{
	struct bridge		*b = arg;
	const struct evhttp_uri	*uri;
	const char		*path = NULL;

	if ((uri = evhttp_request_get_evhttp_uri(req)) != NULL)
		path = evhttp_uri_get_path(uri);
	if (!httpcheck_framing(req)) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		bridge_reply_error(req, 400, NULL, JSONRPC_INVALID_REQUEST,
		    "Bad Request: conflicting Content-Length/"
		    "Transfer-Encoding");
		return;
	}
	if (!bridge_streq(path, "/mcp")) {
		bridge_reply_error(req, 404, NULL, JSONRPC_INVALID_REQUEST,
		    "Not Found: the MCP endpoint is /mcp");
		return;
	}
	if (b->b_stopping || b->b_draining) {
		bridge_reply_error(req, 503, NULL, MCP_ERR_TRANSPORT,
		    "the bridge is stopping");
		return;
	}
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_POST:
		bridge_post(b, req);
		break;
	case EVHTTP_REQ_GET:
		bridge_get(b, req);
		break;
	case EVHTTP_REQ_DELETE:
		bridge_delete(b, req);
		break;
	default:
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, POST, DELETE");
		bridge_reply_error(req, 405, NULL, JSONRPC_INVALID_REQUEST,
		    "Method Not Allowed");
		break;
	}
}

static int
bridge_listen(struct bridge *b)
{
	struct bridge_front	*f = &b->b_front;
	const char		*path = b->b_spec->bs_socket;
	struct sockaddr_un	 sun;
	struct evconnlistener	*lev;
	struct stat		 st;
	mode_t			 old;
	int			 fd, rc;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (path == NULL || strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("%s: bad socket path", b->b_name);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	/* a stale socket from an earlier run; never anything else */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s: %s exists and is not a socket",
			    b->b_name, path);
			return -1;
		}
		if (unlink(path) == -1) {
			log_warn("%s: unlink %s", b->b_name, path);
			return -1;
		}
	} else if (errno != ENOENT) {
		log_warn("%s: %s", b->b_name, path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		log_warn("%s: socket", b->b_name);
		return -1;
	}
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	(void)umask(old);
	if (rc == -1 || chmod(path, 0600) == -1 || stat(path, &st) == -1) {
		log_warn("%s: bind %s", b->b_name, path);
		close(fd);
		return -1;
	}
	f->bf_sock_dev = st.st_dev;
	f->bf_sock_ino = st.st_ino;
	if ((lev = evconnlistener_new(b->b_base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, BRIDGE_BACKLOG,
	    fd)) == NULL) {
		log_warn("%s: listen %s", b->b_name, path);
		close(fd);
		(void)unlink(path);
		return -1;
	}
	if ((f->bf_bound = evhttp_bind_listener(f->bf_http, lev)) == NULL) {
		log_warnx("%s: cannot serve %s", b->b_name, path);
		evconnlistener_free(lev);
		(void)unlink(path);
		return -1;
	}
	return 0;
}

void
bridge_unlisten(struct bridge *b)
{
	struct bridge_front	*f = &b->b_front;
	struct stat		 st;

	if (f->bf_bound == NULL)
		return;
	evhttp_del_accept_socket(f->bf_http, f->bf_bound);
	f->bf_bound = NULL;
	/* only ours: a successor may already listen on the path */
	if (stat(b->b_spec->bs_socket, &st) == 0 &&
	    st.st_dev == f->bf_sock_dev && st.st_ino == f->bf_sock_ino)
		(void)unlink(b->b_spec->bs_socket);
}

static void
bridge_on_keepalive(evutil_socket_t fd, short ev, void *arg)
{
	static const char	 ka[] = ": keep-alive\n\n";
	struct bridge		*b = arg;
	struct bstream		*st, *snext;
	struct breq		*r, *rnext;

	(void)fd;
	(void)ev;
	for (st = TAILQ_FIRST(&b->b_front.bf_streams); st != NULL; st = snext) {
		snext = TAILQ_NEXT(st, st_entry);
		if (bridge_http_sse_raw(st->st_req, ka, sizeof(ka) - 1) == -1)
			bridge_stream_free(st, 1);
	}
	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = rnext) {
		rnext = TAILQ_NEXT(r, r_entry);
		if (!r->r_init && r->r_req != NULL &&
		    bridge_http_sse_raw(r->r_req, ka, sizeof(ka) - 1) == -1)
			bridge_breq_abandon(r);
	}
}

/* every GET stream ends (the bridge stops or drains) */
void
bridge_streams_end(struct bridge *b)
{
	struct bstream *st;

	while ((st = TAILQ_FIRST(&b->b_front.bf_streams)) != NULL)
		bridge_stream_free(st, 1);
}

void
bridge_http_init(struct bridge *b)
{
	struct bridge_front	*f = &b->b_front;
	struct timeval		 tv;

	TAILQ_INIT(&f->bf_streams);
	TAILQ_INIT(&f->bf_sessions);
	if ((f->bf_http = evhttp_new(b->b_base)) == NULL)
		fatalx("%s: evhttp_new failed", b->b_name);
	evhttp_set_max_headers_size(f->bf_http, BRIDGE_HEADERS_MAX);
	evhttp_set_max_body_size(f->bf_http, BRIDGE_BODY_MAX);
	bridge_tv(&tv, BRIDGE_HTTP_TIMEOUT_MS);
	evhttp_set_timeout_tv(f->bf_http, &tv);
	evhttp_set_allowed_methods(f->bf_http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_POST | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(f->bf_http, "application/json");
	evhttp_set_gencb(f->bf_http, bridge_on_request, b);
	if (bridge_listen(b) == -1)
		fatalx("%s: cannot listen on %s", b->b_name,
		    b->b_spec->bs_socket);
	if ((f->bf_keepalive_ev = event_new(b->b_base, -1, EV_PERSIST,
	    bridge_on_keepalive, b)) == NULL)
		fatalx("%s: cannot create timers", b->b_name);
	bridge_tv(&tv, BRIDGE_KEEPALIVE_MS);
	(void)evtimer_add(f->bf_keepalive_ev, &tv);
}

void
bridge_http_cleanup(struct bridge *b)
{
	struct bsession *s;

	bridge_streams_end(b);
	while ((s = TAILQ_FIRST(&b->b_front.bf_sessions)) != NULL)
		bridge_session_free(b, s);
	bridge_unlisten(b);
	evhttp_free(b->b_front.bf_http);
	event_free(b->b_front.bf_keepalive_ev);
}
