/*
 * The bridge's insides (bridge.h), shared by master/bridge*.c alone:
 * its limits, the upstream's ops (a process on pipes, or an HTTP+SSE
 * connection), the callers' requests, sessions and streams, and the
 * functions one of its files calls in another.
 */
#ifndef VMCPD_BRIDGE_INT_H
#define VMCPD_BRIDGE_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>
#include <jansson.h>

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
struct bufferevent;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_connection;
struct evhttp_request;
struct http_call;
struct http_client;
struct jsonrpc_msg;
struct sse_parser;

/* where the server is: a process on pipes, or an HTTP+SSE connection */
struct bridge_upstream {
	const char	*up_junk;	/* logged with what is not JSON-RPC */
	/* once, before the loop: check the spec, make what it needs
	 * (fatal on failure) */
	void		(*up_init)(struct bridge *);
	/* 0, or -1: nothing started, try again after the backoff */
	int		(*up_start)(struct bridge *);
	/* one serialised message; 0 or -1.  Never ends the upstream: the
	 * caller may still hold requests that ending it would free */
	int		(*up_write)(struct bridge *, const char *, size_t);
	/* end it; bridge_server_lost() follows, now or once reaped */
	void		(*up_stop)(struct bridge *, const char *why);
	/* at exit: end it at once, free what up_init made */
	void		(*up_cleanup)(struct bridge *);
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

/* stdio: the server process */
struct bridge_proc {
	pid_t				 bp_pid;
	struct bufferevent		*bp_in;
	struct bufferevent		*bp_out;
	struct bufferevent		*bp_err;
	size_t				 bp_out_scanned; /* LF-free */
	struct event			*bp_kill_ev;
};

/* SSE: the connection */
struct bridge_conn {
	char				*bc_url;	/* shown: no
							 * userinfo, query */
	struct http_client		*bc_client;
	struct bsse			*bc_sse;	/* or NULL */
	char				 bc_version[32]; /* negotiated */
};

/* the Unix-socket HTTP side */
struct bridge_front {
	struct evhttp			*bf_http;
	struct evhttp_bound_socket	*bf_bound;
	dev_t				 bf_sock_dev;
	ino_t				 bf_sock_ino;
	struct event			*bf_keepalive_ev;
	TAILQ_HEAD(, bstream)		 bf_streams;
	size_t				 bf_nstreams;
	TAILQ_HEAD(, bsession)		 bf_sessions;
	void				*bf_sess_root;	/* tsearch(3) */
	size_t				 bf_nsessions;
};

struct bridge {
	const struct bridge_spec	*b_spec;
	const char			*b_name;
	uint64_t			 b_timeout_ms;
	struct event_base		*b_base;
	struct event			*b_chan_ev;
	struct event			*b_sig_term;
	struct event			*b_sig_quit;
	struct event			*b_sig_chld;
	struct event			*b_tick_ev;
	struct event			*b_restart_ev;
	struct event			*b_init_ev;

	const struct bridge_upstream	*b_up;
	enum bridge_srv_state		 b_state;
	uint64_t			 b_started_ms;
	unsigned int			 b_restarts;
	uint64_t			 b_init_bid;
	json_t				*b_init_result;
	char				 b_exit_msg[BRIDGE_MSG_MAX];
	struct bridge_proc		 b_proc;	/* stdio */
	struct bridge_conn		 b_conn;	/* SSE */

	uint64_t			 b_seq;		/* bridge ids */
	TAILQ_HEAD(, breq)		 b_reqs;
	size_t				 b_nreqs;
	TAILQ_HEAD(, bsrvreq)		 b_srvreqs;
	size_t				 b_nsrvreqs;
	struct bridge_front		 b_front;
	int				 b_draining;
	int				 b_stopping;
};

/* bridge.c */
uint64_t	bridge_now_ms(void);
void		bridge_tv(struct timeval *, uint64_t ms);
int		bridge_streq(const char *, const char *);
void		bridge_log_text(struct bridge *, const char *what, const char *,
		    size_t);
int		bridge_server_hello(struct bridge *);
void		bridge_server_lost(struct bridge *);
void		bridge_stop(struct bridge *, const char *why);

/* bridge_relay.c */
int		bridge_server_write(struct bridge *, const json_t *);
void		bridge_server_error(struct bridge *, json_t *id, int code,
		    const char *);
void		bridge_server_line(struct bridge *, const char *, size_t);
void		bridge_srvreq_free(struct bridge *, struct bsrvreq *);
struct breq	*bridge_breq_new(struct bridge *, struct evhttp_request *,
		    const struct jsonrpc_msg *, const char *sid);
void		bridge_breq_send(struct bridge *, struct breq *);
void		bridge_breq_fail(struct breq *, int code, const char *);
void		bridge_breq_abandon(struct breq *);
void		bridge_breq_on_close(struct evhttp_connection *, void *);

/* bridge_http.c */
void		bridge_http_init(struct bridge *);
void		bridge_http_cleanup(struct bridge *);
void		bridge_unlisten(struct bridge *);
void		bridge_reply_json(struct evhttp_request *, int status,
		    const json_t *, const char *sid);
void		bridge_req_release(struct evhttp_request *);
int		bridge_http_sse_send(struct evhttp_request *, const json_t *);
void		bridge_http_sse_end(struct evhttp_request *);
void		bridge_answer_initialize(struct bridge *,
		    struct evhttp_request *, json_t *id);
void		bridge_broadcast(struct bridge *, const json_t *);
void		bridge_streams_end(struct bridge *);
void		bridge_sessions_expire(struct bridge *, uint64_t now);

/* bridge_stdio.c */
extern const struct bridge_upstream bridge_stdio_upstream;
void		bridge_stdio_gone(struct bridge *, int status);

/* bridge_sse.c */
extern const struct bridge_upstream bridge_sse_upstream;

#endif /* VMCPD_BRIDGE_INT_H */
