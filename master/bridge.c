/*
 * The bridge: one process per stdio or HTTP+SSE backend.  Its upstream
 * is either the MCP server command run on pipes (newline-delimited
 * JSON-RPC on stdin and stdout, stderr logged line by line) or a
 * 2024-11-05 HTTP+SSE connection to the server's URL (a GET stream
 * whose first event names the endpoint to POST messages to, every
 * server message an event on that stream).  The bridge initializes the
 * server once per process or connection, and serves it on a Unix socket
 * as a stateful Streamable HTTP endpoint (MCP 2025-11-25, mcp-wire.md
 * section 2.1) that every worker reaches with libcurl.  Both upstreams
 * sit behind struct bridge_upstream; everything else is shared.
 *
 * Sessions are routing keys only: initialize is answered from the
 * server's cached InitializeResult with a fresh random session id; one
 * server process (or connection) serves every session.
 *
 * Ids.  A request written to the server gets a bridge-unique integer
 * id, and when the caller asked for progress that same integer becomes
 * its progressToken, so callers that use the same ids or tokens never
 * see each other's answers.  A request the server sends gets a
 * bridge-unique string id ("bridge-N"); the caller answers with that id
 * and the bridge writes the answer back under the server's own id.
 *
 * What the server sends is routed thus (neither upstream carries any
 * correlation for anything but responses):
 *  - a response: to the request with its id, the caller's id restored
 *    (a response after the request timed out is dropped);
 *  - notifications/progress: to the request whose token it names;
 *  - notifications/message: to the request in flight when there is
 *    exactly one, else to every GET stream;
 *  - a request (elicitation/create, sampling/createMessage,
 *    roots/list): to the only request in flight if there is one, else
 *    to the most recent in-flight tools/call, prompts/get or
 *    resources/read; with neither the server gets -32601 "no client to
 *    ask".  The bridge answers the server's ping itself;
 *  - any other notification (list_changed, resources/updated): to every
 *    GET stream of every session.
 *
 * A caller's notifications/cancelled is forwarded under the bridge id
 * and ends that request's stream without a response.  The server is
 * restarted (reconnected to) with backoff when it exits (its stream
 * ends, a GET or POST fails); requests in flight then fail, and
 * requests arriving while it is down wait for it up to the request
 * timeout.  Subscriptions and log levels set by callers do not survive
 * a restart.
 */
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include <curl/curl.h>

#include "proto/proto.h"
#include "shared/httpcheck.h"
#include "shared/ipc.h"
#include "shared/log.h"
#include "worker/http_client.h"
#include "bridge.h"

#define BRIDGE_LINE_MAX		(16 * 1024 * 1024) /* a stdout line */
#define BRIDGE_STDIN_MAX	(32 * 1024 * 1024) /* unwritten input */
#define BRIDGE_BODY_MAX		(16 * 1024 * 1024)
#define BRIDGE_HEADERS_MAX	(64 * 1024)
#define BRIDGE_HTTP_TIMEOUT_MS	60000
#define BRIDGE_SSE_HIGH_WATER	(8 * 1024 * 1024)
#define BRIDGE_MAX_REQS		1024	/* waiting + in flight */
#define BRIDGE_MAX_STREAMS	1024	/* GET streams */
#define BRIDGE_MAX_SRVREQS	256	/* server requests unanswered */
#define BRIDGE_ERRLINE_MAX	2048	/* logged of a stderr line */
#define BRIDGE_SESSION_IDLE_MS	(60 * 60 * 1000)
#define BRIDGE_KEEPALIVE_MS	15000
#define BRIDGE_TICK_MS		5000
#define BRIDGE_KILL_GRACE_MS	2000
#define BRIDGE_HEALTHY_MS	60000	/* up this long: backoff reset */
#define BRIDGE_TIMEOUT_DEFAULT	30000
#define BRIDGE_EXIT_FLUSH_MS	100	/* let final answers leave */
#define BRIDGE_BACKLOG		128
#define BRIDGE_SID_BYTES	32
#define BRIDGE_SID_LEN		43	/* base64url of 32 bytes */
#define BRIDGE_MSG_MAX		512	/* why the server is gone */
#define BRIDGE_EVENT_MAX	BRIDGE_LINE_MAX	/* an SSE event's data */
#define BRIDGE_ENDPOINT_MAX	8192	/* the endpoint event's URI */
#define BRIDGE_POSTS_MAX	16	/* POSTs in flight at once */
#define BRIDGE_POST_QUEUE_MAX	BRIDGE_STDIN_MAX /* bytes waiting */
#define BRIDGE_POST_ERR_MAX	256	/* logged of a refusal's body */

#define BRIDGE_PROTOCOL_VERSION	MCP_VERSION_LEGACY

enum bridge_srv_state {
	SRV_DOWN,		/* no process or connection; a restart may
				 * be scheduled */
	SRV_STARTING,		/* spawned (connecting), initialize sent
				 * (once the endpoint is known) */
	SRV_READY,
	SRV_KILLING,		/* stdio: SIGTERM sent, SIGKILL after the
				 * grace */
	SRV_EXITED		/* stdio: reaped; reading what it left */
};

struct bridge;

/* where the server is: a process on pipes, or an HTTP+SSE connection */
struct bridge_upstream {
	const char	*up_junk;	/* logged with what is not JSON-RPC */
	/* 0, or -1: nothing started, try again after the backoff */
	int		(*up_start)(struct bridge *);
	/* one serialised message; 0 or -1.  Never ends the upstream: the
	 * caller may still hold requests that ending it would free */
	int		(*up_write)(struct bridge *, const char *, size_t);
	/* end it; bridge_server_lost() follows, now or once reaped */
	void		(*up_stop)(struct bridge *, const char *why);
};

/* a message for the SSE server: queued, then POSTed */
struct bpost {
	TAILQ_ENTRY(bpost)	 p_entry;
	struct bsse		*p_ss;
	struct http_call	*p_call;	/* NULL while queued */
	char			*p_body;	/* NULL once handed to p_call */
	size_t			 p_len;
	char			 p_resp[BRIDGE_POST_ERR_MAX];
	size_t			 p_resplen;
};

/* one HTTP+SSE connection: the GET stream and the POSTs it took */
struct bsse {
	struct bridge		*ss_b;
	struct http_call	*ss_get;	/* NULL once over */
	struct sse_parser	*ss_parser;
	char			*ss_endpoint;	/* absolute; NULL until told */
	TAILQ_HEAD(, bpost)	 ss_posts;	/* in flight, then queued */
	size_t			 ss_nsent;	/* in flight */
	size_t			 ss_queued;	/* bytes queued */
	int			 ss_feeding;	/* in sse_parser_feed() */
	int			 ss_dead;	/* closed while feeding */
};

struct bsession {
	TAILQ_ENTRY(bsession)	 s_entry;	/* least recent first */
	char			 s_id[BRIDGE_SID_LEN + 1];
	uint64_t		 s_seen_ms;
	unsigned int		 s_streams;	/* open GET streams */
};

/* a caller's request: waiting for the server, or in flight */
struct breq {
	TAILQ_ENTRY(breq)	 r_entry;
	struct bridge		*r_b;
	struct evhttp_request	*r_req;		/* NULL: caller gone */
	struct event		*r_timer;
	char			 r_sid[BRIDGE_SID_LEN + 1];
	int			 r_init;	/* initialize, no server yet */
	json_t			*r_msg;		/* as written */
	json_t			*r_id;		/* the caller's */
	json_t			*r_token;	/* the caller's */
	char			*r_method;
	uint64_t		 r_bid;		/* 0 until written */
};

/* a GET stream */
struct bstream {
	TAILQ_ENTRY(bstream)	 st_entry;
	struct bridge		*st_b;
	struct evhttp_request	*st_req;
	struct bsession		*st_sess;
};

/* a request of the server's, waiting for a caller's answer */
struct bsrvreq {
	TAILQ_ENTRY(bsrvreq)	 sr_entry;
	json_t			*sr_server_id;
	char			 sr_id[32];
	struct breq		*sr_owner;	/* NULL once ended */
	uint64_t		 sr_expiry_ms;
};

struct bridge {
	const struct bridge_spec	*b_spec;
	const char			*b_name;
	uint64_t			 b_timeout_ms;
	struct event_base		*b_base;
	struct evhttp			*b_http;
	struct evhttp_bound_socket	*b_bound;
	dev_t				 b_sock_dev;
	ino_t				 b_sock_ino;
	struct event			*b_chan_ev;
	struct event			*b_sig_term;
	struct event			*b_sig_quit;
	struct event			*b_sig_chld;
	struct event			*b_tick_ev;
	struct event			*b_keepalive_ev;
	struct event			*b_restart_ev;
	struct event			*b_init_ev;
	struct event			*b_kill_ev;

	const struct bridge_upstream	*b_up;
	enum bridge_srv_state		 b_state;
	uint64_t			 b_started_ms;
	unsigned int			 b_restarts;
	uint64_t			 b_init_bid;
	json_t				*b_init_result;
	char				 b_exit_msg[BRIDGE_MSG_MAX];

	/* stdio: the server process */
	pid_t				 b_pid;
	struct bufferevent		*b_in;
	struct bufferevent		*b_out;
	struct bufferevent		*b_err;
	size_t				 b_out_scanned;	/* LF-free */

	/* SSE: the connection */
	char				*b_url;		/* shown: no
							 * userinfo, query */
	struct http_client		*b_client;
	struct bsse			*b_sse;		/* or NULL */
	char				 b_version[32];	/* negotiated */

	uint64_t			 b_seq;		/* bridge ids */
	TAILQ_HEAD(, breq)		 b_reqs;
	size_t				 b_nreqs;
	TAILQ_HEAD(, bstream)		 b_streams;
	size_t				 b_nstreams;
	TAILQ_HEAD(, bsrvreq)		 b_srvreqs;
	size_t				 b_nsrvreqs;
	TAILQ_HEAD(, bsession)		 b_sessions;
	void				*b_sess_root;	/* tsearch(3) */
	size_t				 b_nsessions;
	int				 b_draining;
	int				 b_stopping;
};

static struct bridge	 the_bridge;

static const uint64_t	 bridge_backoff[] = { 100, 500, 2000, 10000 };

static void	bridge_stop(struct bridge *, const char *why);
static void	bridge_breq_free(struct breq *);
static void	bridge_server_kill(struct bridge *, const char *why);
static void	bridge_server_lost(struct bridge *);

static uint64_t
bridge_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
bridge_tv(struct timeval *tv, uint64_t ms)
{
	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)((ms % 1000) * 1000);
}

static int
bridge_streq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* log up to BRIDGE_ERRLINE_MAX bytes of what a server wrote, tamed */
static void
bridge_log_text(struct bridge *b, const char *what, const char *s,
    size_t len)
{
	char	buf[BRIDGE_ERRLINE_MAX + 1];
	size_t	i;

	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == '\n'))
		len--;
	if (len > BRIDGE_ERRLINE_MAX)
		len = BRIDGE_ERRLINE_MAX;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		buf[i] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	buf[len] = '\0';
	if (what == NULL)
		log_info("%s: %s", b->b_name, buf);
	else
		log_warnx("%s: %s: %s", b->b_name, what, buf);
}

/*
 * HTTP replies
 */

static void
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
static void
bridge_req_release(struct evhttp_request *req)
{
	/* detached (peer gone while we owned it): ending frees it;
	 * otherwise evhttp frees it with its connection */
	if (req != NULL && evhttp_request_get_connection(req) == NULL)
		evhttp_send_reply_end(req);
}

static void
bridge_sse_start(struct evhttp_request *req, const char *sid,
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
bridge_sse_raw(struct evhttp_request *req, const char *data, size_t len)
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

static int
bridge_sse_send(struct evhttp_request *req, const json_t *msg)
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
	rc = bridge_sse_raw(req, ev, elen);
	free(ev);
	return rc;
}

static void
bridge_sse_end(struct evhttp_request *req)
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
	if (tsearch(s, &b->b_sess_root, bridge_session_cmp) == NULL) {
		log_warn("%s: %s", b->b_name, __func__);
		free(s);
		return NULL;
	}
	s->s_seen_ms = bridge_now_ms();
	TAILQ_INSERT_TAIL(&b->b_sessions, s, s_entry);
	b->b_nsessions++;
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
	if ((p = tfind(&key, &b->b_sess_root, bridge_session_cmp)) == NULL)
		return NULL;
	return *p;
}

static void
bridge_session_touch(struct bridge *b, struct bsession *s)
{
	s->s_seen_ms = bridge_now_ms();
	TAILQ_REMOVE(&b->b_sessions, s, s_entry);
	TAILQ_INSERT_TAIL(&b->b_sessions, s, s_entry);
}

static void
bridge_stream_free(struct bstream *st, int end)
{
	struct bridge *b = st->st_b;

	if (end && st->st_req != NULL)
		bridge_sse_end(st->st_req);
	st->st_sess->s_streams--;
	TAILQ_REMOVE(&b->b_streams, st, st_entry);
	b->b_nstreams--;
	free(st);
}

static void
bridge_session_free(struct bridge *b, struct bsession *s)
{
	struct bstream *st, *next;

	for (st = TAILQ_FIRST(&b->b_streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, st_entry);
		if (st->st_sess == s)
			bridge_stream_free(st, 1);
	}
	(void)tdelete(s, &b->b_sess_root, bridge_session_cmp);
	TAILQ_REMOVE(&b->b_sessions, s, s_entry);
	b->b_nsessions--;
	free(s);
}

static void
bridge_sessions_expire(struct bridge *b, uint64_t now)
{
	struct bsession *s;

	while ((s = TAILQ_FIRST(&b->b_sessions)) != NULL &&
	    now - s->s_seen_ms >= BRIDGE_SESSION_IDLE_MS) {
		if (s->s_streams > 0) {
			/* a session listening is not idle */
			bridge_session_touch(b, s);
			if (TAILQ_FIRST(&b->b_sessions) == s)
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

static void
bridge_broadcast(struct bridge *b, const json_t *msg)
{
	struct bstream	*st, *next;
	char		*data, *ev;
	size_t		 dlen, elen;

	if (TAILQ_EMPTY(&b->b_streams)) {
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
	for (st = TAILQ_FIRST(&b->b_streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, st_entry);
		if (bridge_sse_raw(st->st_req, ev, elen) == -1) {
			log_warnx("%s: a GET stream is too slow; closing it",
			    b->b_name);
			bridge_stream_free(st, 1);
		}
	}
	free(ev);
}

/*
 * Writing to the server
 */

static int
bridge_server_write(struct bridge *b, const json_t *msg)
{
	char	*s;
	size_t	 len;
	int	 rc;

	if (b->b_state != SRV_STARTING && b->b_state != SRV_READY)
		return -1;
	if ((s = jsonrpc_dump(msg, &len)) == NULL)
		return -1;
	rc = b->b_up->up_write(b, s, len);
	free(s);
	return rc;
}

static void
bridge_server_answer(struct bridge *b, json_t *id, json_t *result)
{
	json_t *m;

	if ((m = jsonrpc_result_new(id, result)) == NULL)
		return;
	(void)bridge_server_write(b, m);
	json_decref(m);
}

static void
bridge_server_error(struct bridge *b, json_t *id, int code, const char *msg)
{
	json_t *m;

	if ((m = jsonrpc_error_new(id, code, msg, NULL)) == NULL)
		return;
	(void)bridge_server_write(b, m);
	json_decref(m);
}

/*
 * Server requests awaiting a caller's answer
 */

static void
bridge_srvreq_free(struct bridge *b, struct bsrvreq *sr)
{
	TAILQ_REMOVE(&b->b_srvreqs, sr, sr_entry);
	b->b_nsrvreqs--;
	json_decref(sr->sr_server_id);
	free(sr);
}

/* the owner ends: forget it; if the caller is gone, answer the server */
static void
bridge_srvreqs_orphan(struct bridge *b, struct breq *owner, int answer)
{
	struct bsrvreq *sr, *next;

	for (sr = TAILQ_FIRST(&b->b_srvreqs); sr != NULL; sr = next) {
		next = TAILQ_NEXT(sr, sr_entry);
		if (sr->sr_owner != owner)
			continue;
		sr->sr_owner = NULL;
		if (answer) {
			bridge_server_error(b, sr->sr_server_id,
			    JSONRPC_INTERNAL_ERROR, "the client is gone");
			bridge_srvreq_free(b, sr);
		}
	}
}

/*
 * Callers' requests
 */

static struct breq *
bridge_breq_by_bid(struct bridge *b, json_int_t bid)
{
	struct breq *r;

	TAILQ_FOREACH(r, &b->b_reqs, r_entry)
		if (r->r_bid != 0 && (json_int_t)r->r_bid == bid)
			return r;
	return NULL;
}

/* answer (final may be NULL: no answer) and forget the request */
static void
bridge_breq_end(struct breq *r, const json_t *final)
{
	if (r->r_req != NULL) {
		if (r->r_init) {
			if (final != NULL)
				bridge_reply_json(r->r_req, 200, final, NULL);
			else
				evhttp_send_error(r->r_req, 503,
				    "Service Unavailable");
		} else {
			if (final != NULL)
				(void)bridge_sse_send(r->r_req, final);
			bridge_sse_end(r->r_req);
		}
		r->r_req = NULL;
	}
	bridge_breq_free(r);
}

static void
bridge_breq_fail(struct breq *r, int code, const char *message)
{
	json_t *e;

	e = jsonrpc_error_new(r->r_id, code, message, NULL);
	bridge_breq_end(r, e);
	json_decref(e);
}

/* the caller is gone or gave up: no answer, the server's is dropped */
static void
bridge_breq_abandon(struct breq *r)
{
	bridge_srvreqs_orphan(r->r_b, r, 1);
	bridge_breq_end(r, NULL);
}

static void
bridge_breq_free(struct breq *r)
{
	struct bridge *b = r->r_b;

	bridge_srvreqs_orphan(b, r, 0);
	if (r->r_timer != NULL)
		event_free(r->r_timer);
	json_decref(r->r_msg);
	json_decref(r->r_id);
	json_decref(r->r_token);
	free(r->r_method);
	TAILQ_REMOVE(&b->b_reqs, r, r_entry);
	b->b_nreqs--;
	free(r);
	if (b->b_draining && b->b_nreqs == 0)
		bridge_stop(b, "drained");
}

static void
bridge_breq_deliver(struct breq *r, const json_t *msg)
{
	if (bridge_sse_send(r->r_req, msg) == -1) {
		log_warnx("%s: the caller of %s is gone or too slow",
		    r->r_b->b_name, r->r_method);
		bridge_breq_abandon(r);
	}
}

static void
bridge_breq_on_close(struct evhttp_connection *evcon, void *arg)
{
	struct breq *r = arg;

	(void)evcon;
	log_debug("%s: the caller of %s went away", r->r_b->b_name,
	    r->r_method);
	bridge_req_release(r->r_req);
	r->r_req = NULL;
	bridge_breq_abandon(r);
}

static void
bridge_breq_on_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct breq	*r = arg;
	struct bridge	*b = r->r_b;
	json_t		*params, *m;
	char		 msg[BRIDGE_MSG_MAX];

	(void)fd;
	(void)ev;
	if (r->r_bid == 0) {
		if (b->b_exit_msg[0] != '\0')
			(void)snprintf(msg, sizeof(msg), "%s", b->b_exit_msg);
		else
			(void)snprintf(msg, sizeof(msg), "backend timeout: "
			    "the server was not ready within %llu ms",
			    (unsigned long long)b->b_timeout_ms);
	} else {
		(void)snprintf(msg, sizeof(msg), "backend timeout: no "
		    "response within %llu ms",
		    (unsigned long long)b->b_timeout_ms);
		/* the server may stop working on it */
		params = json_pack("{s:I, s:s}", "requestId",
		    (json_int_t)r->r_bid, "reason", "timeout");
		if ((m = jsonrpc_notification_new("notifications/cancelled",
		    params)) != NULL) {
			(void)bridge_server_write(b, m);
			json_decref(m);
		}
	}
	log_warnx("%s: %s: %s", b->b_name, r->r_method, msg);
	if (r->r_init) {
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, msg);
		return;
	}
	bridge_srvreqs_orphan(b, r, 1);
	bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, msg);
}

static struct breq *
bridge_breq_new(struct bridge *b, struct evhttp_request *req,
    const struct jsonrpc_msg *m, const char *sid)
{
	struct breq	*r;
	struct timeval	 tv;
	json_t		*meta, *tok;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->r_b = b;
	r->r_req = req;
	if (sid != NULL)
		(void)snprintf(r->r_sid, sizeof(r->r_sid), "%s", sid);
	if ((r->r_method = strdup(m->jm_method)) == NULL) {
		free(r);
		return NULL;
	}
	r->r_msg = json_incref(m->jm_root);
	r->r_id = json_incref(m->jm_id);
	meta = json_object_get(m->jm_params, "_meta");
	tok = json_object_get(meta, "progressToken");
	if (json_is_string(tok) || json_is_integer(tok))
		r->r_token = json_incref(tok);
	TAILQ_INSERT_TAIL(&b->b_reqs, r, r_entry);
	b->b_nreqs++;
	bridge_tv(&tv, b->b_timeout_ms);
	if ((r->r_timer = evtimer_new(b->b_base, bridge_breq_on_timeout,
	    r)) == NULL || evtimer_add(r->r_timer, &tv) == -1) {
		r->r_req = NULL;
		bridge_breq_free(r);
		return NULL;
	}
	return r;
}

/* write a request to the server under a bridge id */
static void
bridge_breq_send(struct bridge *b, struct breq *r)
{
	json_t *meta;

	r->r_bid = ++b->b_seq;
	if (json_object_set_new(r->r_msg, "id",
	    json_integer((json_int_t)r->r_bid)) == -1)
		goto fail;
	if (r->r_token != NULL) {
		meta = json_object_get(json_object_get(r->r_msg, "params"),
		    "_meta");
		if (json_object_set_new(meta, "progressToken",
		    json_integer((json_int_t)r->r_bid)) == -1)
			goto fail;
	}
	if (bridge_server_write(b, r->r_msg) == -1)
		goto fail;
	return;
fail:
	bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
	    "cannot write to the backend process");
}

static void
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

/* the server is ready: send what waited for it */
static void
bridge_breqs_flush(struct bridge *b)
{
	struct breq *r, *next;

	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid != 0)
			continue;
		if (r->r_init) {
			bridge_answer_initialize(b, r->r_req, r->r_id);
			r->r_req = NULL;
			bridge_breq_free(r);
		} else
			bridge_breq_send(b, r);
	}
}

/*
 * Routing what the server writes
 */

static int
bridge_is_user_call(const char *method)
{
	return bridge_streq(method, "tools/call") ||
	    bridge_streq(method, "prompts/get") ||
	    bridge_streq(method, "resources/read");
}

/* the caller a server request or log message belongs to, or NULL */
static struct breq *
bridge_route(struct bridge *b, int user_calls)
{
	struct breq	*r, *only = NULL, *best = NULL;
	int		 n = 0;

	TAILQ_FOREACH(r, &b->b_reqs, r_entry) {
		if (r->r_bid == 0 || r->r_req == NULL)
			continue;
		n++;
		only = r;
		if (bridge_is_user_call(r->r_method) &&
		    (best == NULL || r->r_bid > best->r_bid))
			best = r;
	}
	if (n == 1)
		return only;
	return user_calls ? best : NULL;
}

static void
bridge_server_initialized(struct bridge *b, const struct jsonrpc_msg *m)
{
	json_t		*note, *v;
	const char	*version = NULL;

	evtimer_del(b->b_init_ev);
	if (m->jm_kind != JSONRPC_RESPONSE) {
		v = json_object_get(m->jm_error, "message");
		log_warnx("%s: the server refused initialize: %s", b->b_name,
		    json_is_string(v) ? json_string_value(v) : "?");
		b->b_up->up_stop(b, "initialize failed");
		return;
	}
	json_decref(b->b_init_result);
	b->b_init_result = json_incref(m->jm_result);
	v = json_object_get(m->jm_result, "protocolVersion");
	if (json_is_string(v))
		version = json_string_value(v);
	/* for the MCP-Protocol-Version header: a token, or nothing */
	b->b_version[0] = '\0';
	if (version != NULL && strlen(version) < sizeof(b->b_version) &&
	    strspn(version, "0123456789-") == strlen(version))
		memcpy(b->b_version, version, strlen(version) + 1);
	if ((note = jsonrpc_notification_new("notifications/initialized",
	    NULL)) == NULL || bridge_server_write(b, note) == -1) {
		json_decref(note);
		b->b_up->up_stop(b, "cannot write to it");
		return;
	}
	json_decref(note);
	b->b_state = SRV_READY;
	if (b->b_url != NULL)
		log_info("%s: server ready (%s, protocol %s)", b->b_name,
		    b->b_url, version != NULL ? version : "?");
	else
		log_info("%s: server ready (pid %d, protocol %s)", b->b_name,
		    (int)b->b_pid, version != NULL ? version : "?");
	bridge_breqs_flush(b);
}

static void
bridge_server_response(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct breq	*r;
	json_int_t	 bid;

	if (!json_is_integer(m->jm_id)) {
		log_debug("%s: dropped a response to an id the bridge did "
		    "not send", b->b_name);
		return;
	}
	bid = json_integer_value(m->jm_id);
	if (b->b_state == SRV_STARTING && bid == (json_int_t)b->b_init_bid) {
		bridge_server_initialized(b, m);
		return;
	}
	if ((r = bridge_breq_by_bid(b, bid)) == NULL) {
		log_debug("%s: dropped a late response (id %lld)", b->b_name,
		    (long long)bid);
		return;
	}
	if (json_object_set(m->jm_root, "id", r->r_id) == -1) {
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	bridge_breq_end(r, m->jm_root);
}

static void
bridge_server_request(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct bsrvreq	*sr;
	struct breq	*owner;

	if (b->b_state == SRV_EXITED)
		return;		/* nobody left to answer */
	if (strcmp(m->jm_method, "ping") == 0) {
		bridge_server_answer(b, m->jm_id, json_object());
		return;
	}
	if ((owner = bridge_route(b, 1)) == NULL) {
		log_debug("%s: no client to ask %s", b->b_name, m->jm_method);
		bridge_server_error(b, m->jm_id, JSONRPC_METHOD_NOT_FOUND,
		    "no client to ask");
		return;
	}
	if (b->b_nsrvreqs >= BRIDGE_MAX_SRVREQS) {
		log_warnx("%s: too many server requests pending", b->b_name);
		bridge_server_error(b, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "too many requests pending");
		return;
	}
	if ((sr = calloc(1, sizeof(*sr))) == NULL) {
		bridge_server_error(b, m->jm_id, JSONRPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	sr->sr_server_id = json_incref(m->jm_id);
	(void)snprintf(sr->sr_id, sizeof(sr->sr_id), "bridge-%llu",
	    (unsigned long long)++b->b_seq);
	sr->sr_owner = owner;
	sr->sr_expiry_ms = bridge_now_ms() + b->b_timeout_ms;
	TAILQ_INSERT_TAIL(&b->b_srvreqs, sr, sr_entry);
	b->b_nsrvreqs++;
	if (json_object_set_new(m->jm_root, "id",
	    json_string(sr->sr_id)) == -1) {
		bridge_server_error(b, sr->sr_server_id,
		    JSONRPC_INTERNAL_ERROR, "out of memory");
		bridge_srvreq_free(b, sr);
		return;
	}
	log_debug("%s: %s goes to the caller of %s", b->b_name, m->jm_method,
	    owner->r_method);
	bridge_breq_deliver(owner, m->jm_root);
}

static void
bridge_server_notification(struct bridge *b, const struct jsonrpc_msg *m)
{
	struct bsrvreq	*sr;
	struct breq	*r;
	json_t		*v;

	if (strcmp(m->jm_method, "notifications/progress") == 0) {
		v = json_object_get(m->jm_params, "progressToken");
		if (!json_is_integer(v) || (r = bridge_breq_by_bid(b,
		    json_integer_value(v))) == NULL || r->r_token == NULL ||
		    r->r_req == NULL) {
			log_debug("%s: dropped progress for no request",
			    b->b_name);
			return;
		}
		if (json_object_set(m->jm_params, "progressToken",
		    r->r_token) == 0)
			bridge_breq_deliver(r, m->jm_root);
		return;
	}
	if (strcmp(m->jm_method, "notifications/message") == 0) {
		if ((r = bridge_route(b, 0)) != NULL)
			bridge_breq_deliver(r, m->jm_root);
		else
			bridge_broadcast(b, m->jm_root);
		return;
	}
	if (strcmp(m->jm_method, "notifications/cancelled") == 0) {
		/* the server gave up one of its own requests */
		v = json_object_get(m->jm_params, "requestId");
		TAILQ_FOREACH(sr, &b->b_srvreqs, sr_entry)
			if (json_equal(sr->sr_server_id, v))
				break;
		if (sr == NULL)
			return;
		if (sr->sr_owner != NULL && json_object_set_new(m->jm_params,
		    "requestId", json_string(sr->sr_id)) == 0) {
			r = sr->sr_owner;
			bridge_srvreq_free(b, sr);
			bridge_breq_deliver(r, m->jm_root);
		} else
			bridge_srvreq_free(b, sr);
		return;
	}
	bridge_broadcast(b, m->jm_root);
}

static void
bridge_server_line(struct bridge *b, const char *line, size_t len)
{
	struct jsonrpc_msg	 m;
	struct jsonrpc_err	 err;
	size_t			 i;

	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return;
	if (jsonrpc_parse(line, len, &m, &err) == -1) {
		bridge_log_text(b, b->b_up->up_junk, line, len);
		return;
	}
	switch (m.jm_kind) {
	case JSONRPC_RESPONSE:
	case JSONRPC_ERROR:
		bridge_server_response(b, &m);
		break;
	case JSONRPC_REQUEST:
		bridge_server_request(b, &m);
		break;
	case JSONRPC_NOTIFICATION:
		bridge_server_notification(b, &m);
		break;
	}
	jsonrpc_msg_clear(&m);
}

/*
 * The server process
 */

static void
bridge_server_signal(pid_t pid, int sig)
{
	/* its own group, unless it has not run setsid() yet */
	if (kill(-pid, sig) == -1 && errno == ESRCH)
		(void)kill(pid, sig);
}

static void
bridge_server_kill(struct bridge *b, const char *why)
{
	struct timeval tv;

	if (b->b_pid <= 0 ||
	    (b->b_state != SRV_STARTING && b->b_state != SRV_READY))
		return;
	log_info("%s: stopping the server (pid %d): %s", b->b_name,
	    (int)b->b_pid, why);
	b->b_state = SRV_KILLING;
	evtimer_del(b->b_init_ev);
	bridge_server_signal(b->b_pid, SIGTERM);
	bridge_tv(&tv, BRIDGE_KILL_GRACE_MS);
	(void)evtimer_add(b->b_kill_ev, &tv);
}

static void
bridge_on_kill_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_pid <= 0)
		return;
	if (b->b_state != SRV_KILLING) {
		bridge_server_kill(b, "it closed its pipes but did not exit");
		return;
	}
	log_warnx("%s: the server (pid %d) ignored SIGTERM; killing it",
	    b->b_name, (int)b->b_pid);
	bridge_server_signal(b->b_pid, SIGKILL);
}

static void
bridge_on_init_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_sse != NULL && b->b_sse->ss_endpoint == NULL) {
		log_warnx("%s: no endpoint event within %llu ms", b->b_name,
		    (unsigned long long)b->b_timeout_ms);
		b->b_up->up_stop(b, "no endpoint event in time");
		return;
	}
	log_warnx("%s: no answer to initialize within %llu ms", b->b_name,
	    (unsigned long long)b->b_timeout_ms);
	b->b_up->up_stop(b, "initialize timed out");
}

/* initialize, once per server process or connection */
static int
bridge_server_hello(struct bridge *b)
{
	json_t	*params, *req, *id;
	int	 rc;

	b->b_init_bid = ++b->b_seq;
	if ((id = json_integer((json_int_t)b->b_init_bid)) == NULL)
		return -1;
	params = json_pack("{s:s, s:{s:{}, s:{}, s:{s:b}}, s:{s:s, s:s}}",
	    "protocolVersion", BRIDGE_PROTOCOL_VERSION,
	    "capabilities", "elicitation", "sampling", "roots", "listChanged",
	    1, "clientInfo", "name", "vmcpd-bridge", "version", "1.0");
	req = jsonrpc_request_new(id, "initialize", params);
	json_decref(id);
	if (params == NULL || req == NULL) {
		json_decref(req);
		return -1;
	}
	rc = bridge_server_write(b, req);
	json_decref(req);
	return rc;
}

/*
 * The next LF-terminated line (without the LF, NUL-terminated) or NULL.
 * *scanned remembers how far the buffer is known to hold no LF, so a
 * long line arriving in small reads is not searched again and again.
 */
static char *
bridge_readline(struct evbuffer *in, size_t *scanned, size_t *lenp)
{
	struct evbuffer_ptr	 start, eol;
	size_t			 eol_len, len = evbuffer_get_length(in);
	char			*line;

	if (*scanned >= len ||
	    evbuffer_ptr_set(in, &start, *scanned, EVBUFFER_PTR_SET) == -1)
		return NULL;
	eol = evbuffer_search_eol(in, &start, &eol_len, EVBUFFER_EOL_LF);
	if (eol.pos == -1) {
		*scanned = len;
		return NULL;
	}
	*scanned = 0;
	if ((line = malloc((size_t)eol.pos + 1)) == NULL)
		return NULL;
	if (evbuffer_remove(in, line, (size_t)eol.pos) != (int)eol.pos) {
		free(line);
		return NULL;
	}
	(void)evbuffer_drain(in, eol_len);
	line[eol.pos] = '\0';
	*lenp = (size_t)eol.pos;
	return line;
}

static void
bridge_server_on_stdout(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line;
	size_t		 len;

	while ((line = bridge_readline(in, &b->b_out_scanned, &len)) !=
	    NULL) {
		if (len > BRIDGE_LINE_MAX) {
			free(line);
			goto overflow;
		}
		bridge_server_line(b, line, len);
		free(line);
		if (b->b_out != bev)
			return;
	}
	if (evbuffer_get_length(in) <= BRIDGE_LINE_MAX)
		return;
overflow:
	log_warnx("%s: the server wrote a line of more than %d bytes; "
	    "restarting it", b->b_name, BRIDGE_LINE_MAX);
	bufferevent_free(b->b_out);
	b->b_out = NULL;
	bridge_server_kill(b, "line too long");
}

/* a pipe closed: the server is probably exiting; make sure it does */
static void
bridge_server_doomed(struct bridge *b)
{
	struct timeval tv;

	if (b->b_pid <= 0 || b->b_state == SRV_KILLING ||
	    evtimer_pending(b->b_kill_ev, NULL))
		return;
	bridge_tv(&tv, BRIDGE_KILL_GRACE_MS);
	(void)evtimer_add(b->b_kill_ev, &tv);
}

static void
bridge_server_on_stdout_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		bufferevent_disable(bev, EV_READ);
		bridge_server_doomed(arg);
	}
}

static void
bridge_server_on_stderr(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*line, buf[BRIDGE_ERRLINE_MAX];
	size_t		 len;
	int		 n;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		bridge_log_text(b, NULL, line, len);
		free(line);
	}
	/* a line with no end in sight: log it in pieces */
	while (evbuffer_get_length(in) >= sizeof(buf)) {
		if ((n = evbuffer_remove(in, buf, sizeof(buf))) <= 0)
			break;
		bridge_log_text(b, NULL, buf, (size_t)n);
	}
}

static void
bridge_server_on_stderr_event(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_disable(bev, EV_READ);
}

static void
bridge_server_on_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_ERROR)
		bridge_server_doomed(arg);
}

/* in the child: become the server */
static void __attribute__((noreturn))
bridge_server_exec(const struct bridge_spec *sp, pid_t parent, int in,
    int out, int err)
{
	sigset_t	 mask;
	char *const	*e;
	int		 sig, fd, maxfd;

	/* a SIGKILLed bridge must not leave its server behind */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
		_exit(127);
	(void)setsid();
	if (dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1 ||
	    dup2(err, STDERR_FILENO) == -1)
		_exit(127);
	/* nothing of the daemon's (listeners, channels) reaches it */
	if (close_range(3, ~0U, 0) == -1) {
		maxfd = (int)sysconf(_SC_OPEN_MAX);
		if (maxfd < 0 || maxfd > 65536)
			maxfd = 65536;
		for (fd = 3; fd < maxfd; fd++)
			(void)close(fd);
	}
	/* ignored signals stay ignored across exec: undo child_setup() */
	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);
	for (e = sp->bs_env; e != NULL && *e != NULL; e++)
		if (strchr(*e, '=') != NULL && **e != '=')
			(void)putenv(*e);
	if (sp->bs_cwd != NULL && chdir(sp->bs_cwd) == -1) {
		dprintf(STDERR_FILENO, "cannot change to %s: %s\n",
		    sp->bs_cwd, strerror(errno));
		_exit(127);
	}
	execvp(sp->bs_command, sp->bs_argv);
	dprintf(STDERR_FILENO, "cannot execute %s: %s\n", sp->bs_command,
	    strerror(errno));
	_exit(127);
}

static struct bufferevent *
bridge_pipe_bev(struct bridge *b, int fd, bufferevent_data_cb readcb,
    bufferevent_event_cb eventcb)
{
	struct bufferevent *bev;

	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (bev = bufferevent_socket_new(b->b_base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		return NULL;
	}
	bufferevent_setcb(bev, readcb, NULL, eventcb, b);
	if (readcb != NULL) {
		/* a little past the cap, so an endless line is seen */
		bufferevent_setwatermark(bev, EV_READ, 0,
		    BRIDGE_LINE_MAX + 65536);
		if (bufferevent_enable(bev, EV_READ) == -1) {
			bufferevent_free(bev);
			return NULL;
		}
	}
	return bev;
}

static int
bridge_stdio_write(struct bridge *b, const char *s, size_t len)
{
	struct evbuffer *out;

	if (b->b_in == NULL)
		return -1;
	out = bufferevent_get_output(b->b_in);
	if (evbuffer_get_length(out) > BRIDGE_STDIN_MAX) {
		log_warnx("%s: the server is not reading its input",
		    b->b_name);
		return -1;
	}
	/* reserve first so the message and its newline go in together */
	if (evbuffer_expand(out, len + 1) == -1 ||
	    evbuffer_add(out, s, len) == -1 || evbuffer_add(out, "\n", 1) == -1)
		return -1;
	return 0;
}

static int
bridge_server_spawn(struct bridge *b)
{
	const struct bridge_spec	*sp = b->b_spec;
	struct timeval			 tv;
	sigset_t			 all, old;
	int				 in[2] = { -1, -1 };
	int				 out[2] = { -1, -1 };
	int				 err[2] = { -1, -1 };
	pid_t				 pid, self = getpid();

	b->b_started_ms = bridge_now_ms();
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1) {
		log_warn("%s: pipe", b->b_name);
		goto fail;
	}
	/* no libevent handler may run in the child before exec */
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		bridge_server_exec(sp, self, in[0], out[1], err[1]);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		log_warn("%s: fork", b->b_name);
		goto fail;
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	b->b_pid = pid;
	b->b_state = SRV_STARTING;
	b->b_exit_msg[0] = '\0';
	log_info("%s: started %s as pid %d", b->b_name, sp->bs_command,
	    (int)pid);

	b->b_out_scanned = 0;
	b->b_in = bridge_pipe_bev(b, in[1], NULL, bridge_server_on_stdin_event);
	b->b_out = bridge_pipe_bev(b, out[0], bridge_server_on_stdout,
	    bridge_server_on_stdout_event);
	b->b_err = bridge_pipe_bev(b, err[0], bridge_server_on_stderr,
	    bridge_server_on_stderr_event);
	if (b->b_in == NULL || b->b_out == NULL || b->b_err == NULL) {
		log_warnx("%s: cannot watch the server's pipes", b->b_name);
		bridge_server_kill(b, "out of resources");
		return 0;
	}

	if (bridge_server_hello(b) == -1) {
		bridge_server_kill(b, "cannot send initialize");
		return 0;
	}
	bridge_tv(&tv, b->b_timeout_ms);
	(void)evtimer_add(b->b_init_ev, &tv);
	return 0;

fail:
	if (in[0] != -1) {
		close(in[0]);
		close(in[1]);
	}
	if (out[0] != -1) {
		close(out[0]);
		close(out[1]);
	}
	if (err[0] != -1) {
		close(err[0]);
		close(err[1]);
	}
	return -1;
}

/* no server will come (draining): what waits for one fails now */
static void
bridge_breqs_fail_waiting(struct bridge *b)
{
	struct breq *r, *next;

	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid == 0)
			bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
			    b->b_exit_msg[0] != '\0' ? b->b_exit_msg :
			    "the bridge is stopping");
	}
}

static void
bridge_server_schedule(struct bridge *b)
{
	struct timeval	tv;
	uint64_t	delay;

	if (b->b_stopping)
		return;
	if (b->b_draining) {
		bridge_breqs_fail_waiting(b);
		return;
	}
	if (bridge_now_ms() - b->b_started_ms >= BRIDGE_HEALTHY_MS)
		b->b_restarts = 0;
	delay = bridge_backoff[b->b_restarts < 3 ? b->b_restarts : 3];
	b->b_restarts++;
	if (b->b_url != NULL)
		log_info("%s: reconnecting to %s in %llu ms", b->b_name,
		    b->b_url, (unsigned long long)delay);
	else
		log_info("%s: restarting the server in %llu ms", b->b_name,
		    (unsigned long long)delay);
	bridge_tv(&tv, delay);
	(void)evtimer_add(b->b_restart_ev, &tv);
}

static void
bridge_on_restart(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge *b = arg;

	(void)fd;
	(void)ev;
	if (b->b_stopping || b->b_state != SRV_DOWN)
		return;
	if (b->b_up->up_start(b) == -1)
		bridge_server_schedule(b);
}

/* read what a dead server left in a pipe (bounded) */
static void
bridge_pipe_drain(struct bufferevent *bev)
{
	struct evbuffer	*in = bufferevent_get_input(bev);
	int		 fd = (int)bufferevent_getfd(bev);

	while (evbuffer_get_length(in) <= BRIDGE_LINE_MAX &&
	    evbuffer_read(in, fd, 65536) > 0)
		;
}

/* the server is gone, b_exit_msg says why: fail what it had, restart */
static void
bridge_server_lost(struct bridge *b)
{
	struct breq	*r, *next;
	struct bsrvreq	*sr;
	struct timeval	 tv;

	evtimer_del(b->b_init_ev);
	evtimer_del(b->b_kill_ev);
	b->b_state = SRV_DOWN;
	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_bid != 0)
			bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
			    b->b_exit_msg);
	}
	/* their ids meant something to the dead server only */
	while ((sr = TAILQ_FIRST(&b->b_srvreqs)) != NULL)
		bridge_srvreq_free(b, sr);

	if (b->b_stopping) {
		bridge_tv(&tv, BRIDGE_EXIT_FLUSH_MS);
		(void)event_base_loopexit(b->b_base, &tv);
		return;
	}
	bridge_server_schedule(b);
}

static void
bridge_server_gone(struct bridge *b, int status)
{
	pid_t		 pid = b->b_pid;
	int		 expected = b->b_state == SRV_KILLING;

	b->b_state = SRV_EXITED;
	/* what it wrote before it died still counts */
	if (b->b_out != NULL) {
		bridge_pipe_drain(b->b_out);
		bridge_server_on_stdout(b->b_out, b);
	}
	if (b->b_err != NULL) {
		bridge_pipe_drain(b->b_err);
		bridge_server_on_stderr(b->b_err, b);
		if (evbuffer_get_length(bufferevent_get_input(b->b_err)) > 0) {
			char	buf[BRIDGE_ERRLINE_MAX];
			int	n;

			n = evbuffer_remove(bufferevent_get_input(b->b_err),
			    buf, sizeof(buf));
			if (n > 0)
				bridge_log_text(b, NULL, buf, (size_t)n);
		}
	}
	/* whatever it left in its group goes with it */
	(void)kill(-pid, SIGKILL);
	if (WIFSIGNALED(status))
		(void)snprintf(b->b_exit_msg, sizeof(b->b_exit_msg),
		    "backend process exited: signal %d", WTERMSIG(status));
	else
		(void)snprintf(b->b_exit_msg, sizeof(b->b_exit_msg),
		    "backend process exited: status %d", WEXITSTATUS(status));
	if (expected)
		log_info("%s: server (pid %d): %s", b->b_name, (int)pid,
		    b->b_exit_msg);
	else
		log_warnx("%s: server (pid %d): %s", b->b_name, (int)pid,
		    b->b_exit_msg);

	if (b->b_in != NULL)
		bufferevent_free(b->b_in);
	if (b->b_out != NULL)
		bufferevent_free(b->b_out);
	if (b->b_err != NULL)
		bufferevent_free(b->b_err);
	b->b_in = b->b_out = b->b_err = NULL;
	b->b_pid = 0;
	bridge_server_lost(b);
}

static void
bridge_on_sigchld(evutil_socket_t sig, short ev, void *arg)
{
	struct bridge	*b = arg;
	pid_t		 pid;
	int		 status;

	(void)sig;
	(void)ev;
	/* the server, and (we are a subreaper) anything it orphaned */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (b->b_pid > 0 && pid == b->b_pid)
			bridge_server_gone(b, status);
}

/*
 * The HTTP+SSE server (2024-11-05).  Nothing here may end the
 * connection from inside bridge_sse_write(): a caller of
 * bridge_server_write() may hold a request that bridge_server_lost()
 * would free.  Everything else runs from libcurl's callbacks, where
 * http_call_cancel() is safe, or from timers.
 */

static void	bridge_sse_lost(struct bridge *, int expected,
		    const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

/* "scheme://host[:port]/path" of a URL: for messages, no credentials */
static char *
bridge_url_shown(const char *url)
{
	CURLU	*u;
	char	*scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	char	*out = NULL;

	if ((u = curl_url()) == NULL)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		goto done;
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	if (asprintf(&out, "%s://%s%s%s%s", scheme, host, port != NULL ?
	    ":" : "", port != NULL ? port : "", path) == -1)
		out = NULL;
done:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_url_cleanup(u);
	return out;
}

/* scheme, host and port of a parsed URL, compared case-insensitively */
static int
bridge_url_origin_eq(CURLU *a, CURLU *b)
{
	static const CURLUPart	 parts[] = {
	    CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
	char			*x, *y;
	size_t			 i;
	int			 same = 1;

	for (i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		x = y = NULL;
		if (curl_url_get(a, parts[i], &x, CURLU_DEFAULT_PORT) !=
		    CURLUE_OK ||
		    curl_url_get(b, parts[i], &y, CURLU_DEFAULT_PORT) !=
		    CURLUE_OK || strcasecmp(x, y) != 0)
			same = 0;
		curl_free(x);
		curl_free(y);
	}
	return same;
}

/*
 * The endpoint event's URI resolved against the stream's URL, or NULL
 * with why filled in.  Same origin only, as the SDK's client: a server
 * must not send our POSTs (and any credentials) elsewhere.
 */
static char *
bridge_sse_resolve(const char *base, const char *ref, size_t len, char *why,
    size_t whylen)
{
	CURLU	*bu = NULL, *u = NULL;
	char	*refz = NULL, *url = NULL, *out = NULL;

	if (len == 0 || len > BRIDGE_ENDPOINT_MAX ||
	    memchr(ref, '\0', len) != NULL) {
		(void)snprintf(why, whylen, "empty or too long");
		return NULL;
	}
	if ((refz = strndup(ref, len)) == NULL ||
	    (bu = curl_url()) == NULL ||
	    curl_url_set(bu, CURLUPART_URL, base, 0) != CURLUE_OK ||
	    (u = curl_url_dup(bu)) == NULL) {
		(void)snprintf(why, whylen, "out of memory");
		goto done;
	}
	/* a relative reference is resolved against what u holds */
	if (curl_url_set(u, CURLUPART_URL, refz, 0) != CURLUE_OK) {
		(void)snprintf(why, whylen, "not a URI");
		goto done;
	}
	if (!bridge_url_origin_eq(bu, u)) {
		(void)snprintf(why, whylen, "another origin");
		goto done;
	}
	if (curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK ||
	    (out = strdup(url)) == NULL)
		(void)snprintf(why, whylen, "out of memory");
done:
	curl_free(url);
	curl_url_cleanup(u);
	curl_url_cleanup(bu);
	free(refz);
	return out;
}

static void
bridge_post_free(struct bsse *ss, struct bpost *p)
{
	TAILQ_REMOVE(&ss->ss_posts, p, p_entry);
	if (p->p_call != NULL) {
		http_call_cancel(p->p_call);
		ss->ss_nsent--;
	} else
		ss->ss_queued -= p->p_len;
	free(p->p_body);
	free(p);
}

/* end the connection: no callback of its calls runs after this */
static void
bridge_sse_close(struct bsse *ss)
{
	while (!TAILQ_EMPTY(&ss->ss_posts))
		bridge_post_free(ss, TAILQ_FIRST(&ss->ss_posts));
	http_call_cancel(ss->ss_get);
	ss->ss_get = NULL;
	if (ss->ss_feeding) {
		ss->ss_dead = 1;	/* the parser is on the stack */
		return;
	}
	sse_parser_free(ss->ss_parser);
	free(ss->ss_endpoint);
	free(ss);
}

/* the connection is over: say why, fail what it had, reconnect */
static void
bridge_sse_lost(struct bridge *b, int expected, const char *fmt, ...)
{
	struct bsse	*ss = b->b_sse;
	va_list		 ap;

	va_start(ap, fmt);
	(void)vsnprintf(b->b_exit_msg, sizeof(b->b_exit_msg), fmt, ap);
	va_end(ap);
	if (expected)
		log_info("%s: %s", b->b_name, b->b_exit_msg);
	else
		log_warnx("%s: %s", b->b_name, b->b_exit_msg);
	b->b_sse = NULL;
	if (ss != NULL)
		bridge_sse_close(ss);
	bridge_server_lost(b);
}

static void
bridge_sse_stop(struct bridge *b, const char *why)
{
	if (b->b_sse == NULL)
		return;
	bridge_sse_lost(b, 1, "backend connection to %s closed: %s", b->b_url,
	    why);
}

static int
bridge_post_on_data(void *arg, struct http_call *call, const char *buf,
    size_t len)
{
	struct bpost	*p = arg;
	size_t		 n;

	(void)call;
	/* the body says nothing, but a refusal's start is worth a log */
	n = sizeof(p->p_resp) - p->p_resplen;
	if (n > len)
		n = len;
	memcpy(p->p_resp + p->p_resplen, buf, n);
	p->p_resplen += n;
	return 0;
}

static int	bridge_sse_post(struct bridge *, struct bsse *, struct bpost *);

/* start queued POSTs while there is room */
static void
bridge_sse_pump(struct bridge *b, struct bsse *ss)
{
	struct bpost *p;

	TAILQ_FOREACH(p, &ss->ss_posts, p_entry) {
		if (ss->ss_nsent >= BRIDGE_POSTS_MAX)
			return;
		if (p->p_call != NULL)
			continue;
		if (bridge_sse_post(b, ss, p) == -1) {
			bridge_sse_lost(b, 0, "cannot POST to the endpoint of "
			    "%s: out of resources", b->b_url);
			return;
		}
		ss->ss_queued -= p->p_len;
	}
}

static void
bridge_post_on_done(void *arg, struct http_call *call, int result,
    const char *errmsg)
{
	struct bpost	*p = arg;
	struct bsse	*ss = p->p_ss;
	struct bridge	*b = ss->ss_b;
	long		 status = http_call_status(call);

	/* the call is freed once this returns */
	TAILQ_REMOVE(&ss->ss_posts, p, p_entry);
	ss->ss_nsent--;
	if (result == -1) {
		free(p);
		bridge_sse_lost(b, 0, "backend connection lost: POST to the "
		    "endpoint of %s: %s", b->b_url,
		    errmsg != NULL ? errmsg : "failed");
		return;
	}
	if (status < 200 || status > 299) {
		if (p->p_resplen > 0)
			bridge_log_text(b, "the server refused a message",
			    p->p_resp, p->p_resplen);
		free(p);
		bridge_sse_lost(b, 0, "backend refused a message: POST to the "
		    "endpoint of %s: HTTP %ld", b->b_url, status);
		return;
	}
	free(p);
	bridge_sse_pump(b, ss);
}

/* hand one queued message to libcurl; p->p_call stays NULL on failure */
static int
bridge_sse_post(struct bridge *b, struct bsse *ss, struct bpost *p)
{
	static const struct http_call_cbs	 cbs = {
		NULL, bridge_post_on_data, bridge_post_on_done
	};
	struct http_call			*call;

	if ((call = http_call_new(b->b_client, "POST",
	    ss->ss_endpoint)) == NULL)
		return -1;
	if (http_call_add_header(call, "Content-Type",
	    "application/json") == -1 ||
	    (b->b_version[0] != '\0' && http_call_add_header(call,
	    "MCP-Protocol-Version", b->b_version) == -1) ||
	    http_call_set_body(call, p->p_body, p->p_len) == -1) {
		http_call_cancel(call);
		return -1;
	}
	/* answered at once (202) by any server that is alive */
	http_call_set_timeout(call, b->b_timeout_ms);
	if (http_call_start(call, &cbs, p) == -1)
		return -1;
	p->p_call = call;
	free(p->p_body);
	p->p_body = NULL;
	ss->ss_nsent++;
	return 0;
}

/*
 * Messages are POSTed concurrently, a few at a time, as the SDK's
 * client does; the rest wait in order.
 */
static int
bridge_sse_write(struct bridge *b, const char *s, size_t len)
{
	struct bsse	*ss = b->b_sse;
	struct bpost	*p;

	if (ss == NULL || ss->ss_endpoint == NULL || ss->ss_dead)
		return -1;
	if (ss->ss_queued + len > BRIDGE_POST_QUEUE_MAX) {
		log_warnx("%s: the server is not taking messages", b->b_name);
		return -1;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	if ((p->p_body = malloc(len > 0 ? len : 1)) == NULL) {
		free(p);
		return -1;
	}
	memcpy(p->p_body, s, len);
	p->p_len = len;
	p->p_ss = ss;
	TAILQ_INSERT_TAIL(&ss->ss_posts, p, p_entry);
	ss->ss_queued += len;
	if (ss->ss_nsent < BRIDGE_POSTS_MAX) {
		if (bridge_sse_post(b, ss, p) == -1) {
			bridge_post_free(ss, p);
			return -1;
		}
		ss->ss_queued -= len;
	}
	return 0;
}

static void
bridge_sse_endpoint(struct bridge *b, struct bsse *ss, const char *data,
    size_t len)
{
	char why[64];

	if (ss->ss_endpoint != NULL) {
		log_debug("%s: ignored another endpoint event", b->b_name);
		return;
	}
	if ((ss->ss_endpoint = bridge_sse_resolve(b->b_spec->bs_url, data,
	    len, why, sizeof(why))) == NULL) {
		bridge_log_text(b, "a bad endpoint event", data, len);
		bridge_sse_lost(b, 0, "backend sent a bad endpoint on %s: %s",
		    b->b_url, why);
		return;
	}
	log_debug("%s: the endpoint is known; initializing", b->b_name);
	if (bridge_server_hello(b) == -1)
		bridge_sse_lost(b, 0, "cannot send initialize to %s",
		    b->b_url);
}

static int
bridge_sse_on_event(void *arg, const struct sse_event *ev)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;

	if (ss->ss_dead)
		return 1;
	if (strcmp(ev->se_event, "endpoint") == 0)
		bridge_sse_endpoint(b, ss, ev->se_data, ev->se_data_len);
	else if (ev->se_event[0] == '\0' ||
	    strcmp(ev->se_event, "message") == 0)
		bridge_server_line(b, ev->se_data, ev->se_data_len);
	else
		log_debug("%s: ignored an SSE event of another type",
		    b->b_name);
	return ss->ss_dead ? 1 : 0;
}

static int
bridge_sse_on_head(void *arg, struct http_call *call, long status)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;
	const char	*ct;
	size_t		 n = sizeof("text/event-stream") - 1;

	if (status < 200 || status > 299) {
		bridge_sse_lost(b, 0, "backend refused the SSE stream: GET %s: "
		    "HTTP %ld%s", b->b_url, status, status >= 300 &&
		    status < 400 ? " (redirects are not followed)" : "");
		return 1;
	}
	ct = http_call_header(call, "Content-Type");
	if (ct == NULL || strncasecmp(ct, "text/event-stream", n) != 0 ||
	    (ct[n] != '\0' && ct[n] != ';' && ct[n] != ' ')) {
		bridge_sse_lost(b, 0, "backend answered GET %s with no SSE "
		    "stream (Content-Type is not text/event-stream)", b->b_url);
		return 1;
	}
	log_debug("%s: the SSE stream is open", b->b_name);
	return 0;
}

static int
bridge_sse_on_data(void *arg, struct http_call *call, const char *buf,
    size_t len)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;
	int		 rc;

	(void)call;
	ss->ss_feeding = 1;
	rc = sse_parser_feed(ss->ss_parser, buf, len);
	ss->ss_feeding = 0;
	if (ss->ss_dead) {
		/* closed by what an event caused: its calls are cancelled */
		bridge_sse_close(ss);
		return 1;
	}
	if (rc == -1) {
		bridge_sse_lost(b, 0, "backend sent an SSE event of more than "
		    "%d bytes on %s", BRIDGE_EVENT_MAX, b->b_url);
		return 1;
	}
	return 0;
}

static void
bridge_sse_on_done(void *arg, struct http_call *call, int result,
    const char *errmsg)
{
	struct bsse	*ss = arg;
	struct bridge	*b = ss->ss_b;

	ss->ss_get = NULL;	/* freed once this returns */
	if (result == 0)
		bridge_sse_lost(b, 0, "backend connection lost: the SSE stream "
		    "from %s ended", b->b_url);
	else if (http_call_status(call) == 0)
		bridge_sse_lost(b, 0, "backend unreachable: GET %s: %s",
		    b->b_url, errmsg != NULL ? errmsg : "failed");
	else
		bridge_sse_lost(b, 0, "backend connection lost: the SSE stream "
		    "from %s broke: %s", b->b_url,
		    errmsg != NULL ? errmsg : "failed");
}

static int
bridge_sse_connect(struct bridge *b)
{
	static const struct http_call_cbs	 cbs = {
		bridge_sse_on_head, bridge_sse_on_data, bridge_sse_on_done
	};
	struct bsse				*ss;
	struct http_call			*call = NULL;
	struct timeval				 tv;

	b->b_started_ms = bridge_now_ms();
	if ((ss = calloc(1, sizeof(*ss))) == NULL)
		goto fail;
	ss->ss_b = b;
	TAILQ_INIT(&ss->ss_posts);
	if ((ss->ss_parser = sse_parser_new(BRIDGE_EVENT_MAX,
	    bridge_sse_on_event, ss)) == NULL ||
	    (call = http_call_new(b->b_client, "GET",
	    b->b_spec->bs_url)) == NULL ||
	    http_call_add_header(call, "Accept", "text/event-stream") == -1 ||
	    http_call_add_header(call, "Cache-Control", "no-cache") == -1)
		goto fail;
	/* a stream has no end in sight; b_init_ev bounds its start */
	http_call_set_timeout(call, 0);
	if (http_call_start(call, &cbs, ss) == -1) {
		call = NULL;
		goto fail;
	}
	ss->ss_get = call;
	b->b_sse = ss;
	b->b_state = SRV_STARTING;
	b->b_exit_msg[0] = '\0';
	b->b_version[0] = '\0';
	log_info("%s: connecting to %s", b->b_name, b->b_url);
	bridge_tv(&tv, b->b_timeout_ms);
	(void)evtimer_add(b->b_init_ev, &tv);
	return 0;

fail:
	log_warnx("%s: cannot connect to %s: out of resources", b->b_name,
	    b->b_url);
	http_call_cancel(call);
	if (ss != NULL) {
		sse_parser_free(ss->ss_parser);
		free(ss);
	}
	return -1;
}

static const struct bridge_upstream bridge_stdio_upstream = {
	"not JSON-RPC on stdout",
	bridge_server_spawn, bridge_stdio_write, bridge_server_kill
};

static const struct bridge_upstream bridge_sse_upstream = {
	"not JSON-RPC in an SSE event",
	bridge_sse_connect, bridge_sse_write, bridge_sse_stop
};

/*
 * HTTP
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

	if (strcmp(m->jm_method, "ping") == 0) {
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
	bridge_sse_start(req, s->s_id, bridge_breq_on_close, r);
	if (b->b_state == SRV_READY)
		bridge_breq_send(b, r);
}

static void
bridge_post_notification(struct bridge *b, const struct jsonrpc_msg *m,
    const struct bsession *s)
{
	struct breq	*r;
	json_t		*v;

	if (strcmp(m->jm_method, "notifications/initialized") == 0)
		return;		/* the bridge initialized the server */
	if (strcmp(m->jm_method, "notifications/cancelled") == 0) {
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
	    strcmp(m.jm_method, "initialize") == 0) {
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
	if (b->b_nstreams >= BRIDGE_MAX_STREAMS) {
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
	TAILQ_INSERT_TAIL(&b->b_streams, st, st_entry);
	b->b_nstreams++;
	bridge_sse_start(req, s->s_id, bridge_stream_on_close, st);
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
	b->b_sock_dev = st.st_dev;
	b->b_sock_ino = st.st_ino;
	if ((lev = evconnlistener_new(b->b_base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, BRIDGE_BACKLOG,
	    fd)) == NULL) {
		log_warn("%s: listen %s", b->b_name, path);
		close(fd);
		(void)unlink(path);
		return -1;
	}
	if ((b->b_bound = evhttp_bind_listener(b->b_http, lev)) == NULL) {
		log_warnx("%s: cannot serve %s", b->b_name, path);
		evconnlistener_free(lev);
		(void)unlink(path);
		return -1;
	}
	return 0;
}

static void
bridge_unlisten(struct bridge *b)
{
	struct stat st;

	if (b->b_bound == NULL)
		return;
	evhttp_del_accept_socket(b->b_http, b->b_bound);
	b->b_bound = NULL;
	/* only ours: a successor may already listen on the path */
	if (stat(b->b_spec->bs_socket, &st) == 0 &&
	    st.st_dev == b->b_sock_dev && st.st_ino == b->b_sock_ino)
		(void)unlink(b->b_spec->bs_socket);
}

/*
 * Lifecycle
 */

static void
bridge_stop(struct bridge *b, const char *why)
{
	struct breq	*r;
	struct bstream	*st;
	struct timeval	 tv;

	if (b->b_stopping)
		return;
	b->b_stopping = 1;
	log_debug("%s: stopping: %s", b->b_name, why);
	bridge_unlisten(b);
	evtimer_del(b->b_restart_ev);
	while ((r = TAILQ_FIRST(&b->b_reqs)) != NULL)
		bridge_breq_fail(r, JSONRPC_INTERNAL_ERROR,
		    "the bridge is stopping");
	while ((st = TAILQ_FIRST(&b->b_streams)) != NULL)
		bridge_stream_free(st, 1);
	if (b->b_state != SRV_DOWN) {
		/* the loop ends once it is gone (reaped) */
		b->b_up->up_stop(b, why);
		return;
	}
	bridge_tv(&tv, BRIDGE_EXIT_FLUSH_MS);
	(void)event_base_loopexit(b->b_base, &tv);
}

static void
bridge_drain(struct bridge *b)
{
	struct bstream *st;

	if (b->b_draining || b->b_stopping)
		return;
	b->b_draining = 1;
	log_debug("%s: draining", b->b_name);
	bridge_unlisten(b);
	evtimer_del(b->b_restart_ev);
	while ((st = TAILQ_FIRST(&b->b_streams)) != NULL)
		bridge_stream_free(st, 1);
	if (b->b_state == SRV_DOWN)
		bridge_breqs_fail_waiting(b);
	if (b->b_nreqs == 0 && !b->b_stopping)
		bridge_stop(b, "drained");
}

static void
bridge_on_signal(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	bridge_stop(arg, sig == SIGTERM ? "SIGTERM" : "SIGQUIT");
}

static void
bridge_on_channel(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge	*b = arg;
	struct ipc_msg	 m;
	int		 rc;

	(void)ev;
	while ((rc = ipc_recv(fd, &m)) == 1) {
		switch (m.im_type) {
		case IPC_DRAIN:
			bridge_drain(b);
			break;
		case IPC_STOP:
			bridge_stop(b, "told to stop");
			break;
		case IPC_REOPEN:
			if (log_reopen() == -1)
				log_warn("reopening the log file");
			break;
		default:
			break;
		}
	}
	if (rc == -1) {
		event_del(b->b_chan_ev);
		bridge_stop(b, "the master is gone");
	}
}

static void
bridge_on_tick(evutil_socket_t fd, short ev, void *arg)
{
	struct bridge	*b = arg;
	struct bsrvreq	*sr, *next;
	uint64_t	 now = bridge_now_ms();

	(void)fd;
	(void)ev;
	bridge_sessions_expire(b, now);
	for (sr = TAILQ_FIRST(&b->b_srvreqs); sr != NULL; sr = next) {
		next = TAILQ_NEXT(sr, sr_entry);
		if (now < sr->sr_expiry_ms)
			continue;
		bridge_server_error(b, sr->sr_server_id,
		    JSONRPC_INTERNAL_ERROR, "no answer from the client");
		bridge_srvreq_free(b, sr);
	}
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
	for (st = TAILQ_FIRST(&b->b_streams); st != NULL; st = snext) {
		snext = TAILQ_NEXT(st, st_entry);
		if (bridge_sse_raw(st->st_req, ka, sizeof(ka) - 1) == -1)
			bridge_stream_free(st, 1);
	}
	for (r = TAILQ_FIRST(&b->b_reqs); r != NULL; r = rnext) {
		rnext = TAILQ_NEXT(r, r_entry);
		if (!r->r_init && r->r_req != NULL &&
		    bridge_sse_raw(r->r_req, ka, sizeof(ka) - 1) == -1)
			bridge_breq_abandon(r);
	}
}

/* the server's pipes must not land on fds 0-2 */
static void
bridge_fix_stdio(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) != -1 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

static void
bridge_cleanup(struct bridge *b)
{
	struct bsrvreq	*sr;
	struct bsession	*s;
	pid_t		 pid;

	b->b_stopping = 1;
	if (b->b_pid > 0) {
		bridge_server_signal(b->b_pid, SIGKILL);
		(void)waitpid(b->b_pid, NULL, 0);
		b->b_pid = 0;
	}
	if (b->b_sse != NULL) {
		bridge_sse_close(b->b_sse);
		b->b_sse = NULL;
		b->b_state = SRV_DOWN;	/* nothing more to write to */
	}
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	while (!TAILQ_EMPTY(&b->b_reqs))
		bridge_breq_fail(TAILQ_FIRST(&b->b_reqs),
		    JSONRPC_INTERNAL_ERROR, "the bridge is stopping");
	while (!TAILQ_EMPTY(&b->b_streams))
		bridge_stream_free(TAILQ_FIRST(&b->b_streams), 1);
	while ((sr = TAILQ_FIRST(&b->b_srvreqs)) != NULL)
		bridge_srvreq_free(b, sr);
	while ((s = TAILQ_FIRST(&b->b_sessions)) != NULL)
		bridge_session_free(b, s);
	json_decref(b->b_init_result);
	bridge_unlisten(b);
	if (b->b_in != NULL)
		bufferevent_free(b->b_in);
	if (b->b_out != NULL)
		bufferevent_free(b->b_out);
	if (b->b_err != NULL)
		bufferevent_free(b->b_err);
	evhttp_free(b->b_http);
	http_client_free(b->b_client);
	free(b->b_url);
	event_free(b->b_chan_ev);
	event_free(b->b_sig_term);
	event_free(b->b_sig_quit);
	event_free(b->b_sig_chld);
	event_free(b->b_tick_ev);
	event_free(b->b_keepalive_ev);
	event_free(b->b_restart_ev);
	event_free(b->b_init_ev);
	event_free(b->b_kill_ev);
	event_base_free(b->b_base);
}

void
bridge_main(const struct bridge_spec *sp, int chan_fd)
{
	struct bridge	*b = &the_bridge;
	struct timeval	 tv;
	sigset_t	 mask;

	memset(b, 0, sizeof(*b));
	b->b_spec = sp;
	b->b_name = sp->bs_name != NULL ? sp->bs_name : "bridge";
	b->b_timeout_ms = sp->bs_timeout_ms > 0 ? sp->bs_timeout_ms :
	    BRIDGE_TIMEOUT_DEFAULT;
	TAILQ_INIT(&b->b_reqs);
	TAILQ_INIT(&b->b_streams);
	TAILQ_INIT(&b->b_srvreqs);
	TAILQ_INIT(&b->b_sessions);
	if (sp->bs_url != NULL) {
		b->b_up = &bridge_sse_upstream;
		if ((b->b_url = bridge_url_shown(sp->bs_url)) == NULL)
			fatalx("%s: not an http(s) URL", b->b_name);
	} else {
		b->b_up = &bridge_stdio_upstream;
		if (sp->bs_command == NULL || sp->bs_argv == NULL ||
		    sp->bs_argv[0] == NULL)
			fatalx("%s: no command", b->b_name);
	}
	bridge_fix_stdio();
	/* what the server orphans is reparented to us and reaped */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);

	if ((b->b_base = event_base_new()) == NULL)
		fatalx("%s: event_base_new failed", b->b_name);
	if (b->b_url != NULL &&
	    (b->b_client = http_client_new(b->b_base)) == NULL)
		fatalx("%s: cannot create an HTTP client", b->b_name);
	if ((b->b_sig_term = evsignal_new(b->b_base, SIGTERM,
	    bridge_on_signal, b)) == NULL ||
	    evsignal_add(b->b_sig_term, NULL) == -1 ||
	    (b->b_sig_quit = evsignal_new(b->b_base, SIGQUIT,
	    bridge_on_signal, b)) == NULL ||
	    evsignal_add(b->b_sig_quit, NULL) == -1 ||
	    (b->b_sig_chld = evsignal_new(b->b_base, SIGCHLD,
	    bridge_on_sigchld, b)) == NULL ||
	    evsignal_add(b->b_sig_chld, NULL) == -1)
		fatalx("%s: cannot handle signals", b->b_name);
	sigemptyset(&mask);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);

	if ((b->b_http = evhttp_new(b->b_base)) == NULL)
		fatalx("%s: evhttp_new failed", b->b_name);
	evhttp_set_max_headers_size(b->b_http, BRIDGE_HEADERS_MAX);
	evhttp_set_max_body_size(b->b_http, BRIDGE_BODY_MAX);
	bridge_tv(&tv, BRIDGE_HTTP_TIMEOUT_MS);
	evhttp_set_timeout_tv(b->b_http, &tv);
	evhttp_set_allowed_methods(b->b_http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_POST | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
	evhttp_set_default_content_type(b->b_http, "application/json");
	evhttp_set_gencb(b->b_http, bridge_on_request, b);
	if (bridge_listen(b) == -1)
		fatalx("%s: cannot listen on %s", b->b_name, sp->bs_socket);

	if ((b->b_tick_ev = event_new(b->b_base, -1, EV_PERSIST,
	    bridge_on_tick, b)) == NULL ||
	    (b->b_keepalive_ev = event_new(b->b_base, -1, EV_PERSIST,
	    bridge_on_keepalive, b)) == NULL ||
	    (b->b_restart_ev = evtimer_new(b->b_base, bridge_on_restart,
	    b)) == NULL ||
	    (b->b_init_ev = evtimer_new(b->b_base, bridge_on_init_timeout,
	    b)) == NULL ||
	    (b->b_kill_ev = evtimer_new(b->b_base, bridge_on_kill_deadline,
	    b)) == NULL)
		fatalx("%s: cannot create timers", b->b_name);
	bridge_tv(&tv, BRIDGE_TICK_MS);
	(void)evtimer_add(b->b_tick_ev, &tv);
	bridge_tv(&tv, BRIDGE_KEEPALIVE_MS);
	(void)evtimer_add(b->b_keepalive_ev, &tv);
	if ((b->b_chan_ev = event_new(b->b_base, chan_fd, EV_READ | EV_PERSIST,
	    bridge_on_channel, b)) == NULL ||
	    event_add(b->b_chan_ev, NULL) == -1)
		fatalx("%s: cannot watch the master channel", b->b_name);

	if (b->b_up->up_start(b) == -1)
		bridge_server_schedule(b);
	(void)ipc_send(chan_fd, IPC_READY, NULL, 0);
	log_debug("%s: serving on %s", b->b_name, sp->bs_socket);

	(void)event_base_dispatch(b->b_base);

	log_debug("%s: exiting", b->b_name);
	bridge_cleanup(b);
	exit(0);
}
